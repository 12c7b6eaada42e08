/*
 * Is the node oversubscribed (more of the job's ranks than CPUs for them)?
 * Then idle waits default to block after one empty poll (engine/oversub.c
 * says why and how the CPUs are counted).
 */
#ifndef TERN_ENGINE_OVERSUB_H
#define TERN_ENGINE_OVERSUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/config.h"
#include "pmix-shim/client.h"

typedef struct tern_node_load {
    uint32_t ranks;      /* of the job on this node (PMIX_LOCAL_SIZE) */
    int cpus;            /* CPUs the job may use here; -1 when not counted */
    bool oversubscribed; /* ranks > cpus, or the launcher says so */
    const char *how;     /* static text: what decided it */
} tern_node_load_t;

/* What p's launcher and this node say (p initialised: PMIx or singleton). */
void tern_node_load(tern_pmix_t *p, tern_node_load_t *out);

/* An oversubscribed node's defaults into cfg: TERN_WAIT_MODE=block and
 * TERN_SPIN_COUNT=1, each unless the environment set it (cfg->env_set).
 * True when cfg changed. */
bool tern_idle_defaults(tern_config_t *cfg, const tern_node_load_t *load);

/* One line for people: ranks, CPUs, the source, the verdict. */
void tern_node_load_describe(const tern_node_load_t *load, char *buf, size_t len);

#endif
