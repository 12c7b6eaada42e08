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
#include "pmix/client/client.h"

/*
 * What p's launcher and this node say about the job's load (p initialised:
 * PMIx or singleton), in one line for people into what[len]: ranks, CPUs,
 * the source, the verdict.  On an oversubscribed node, its defaults into
 * cfg: TERN_WAIT_MODE=block and TERN_SPIN_COUNT=1, each unless the
 * environment set it (cfg->env_set).  True when cfg changed.  tern_init
 * (tern_context_idle_defaults) and tern_info both ask here.
 */
bool tern_node_idle_defaults(tern_pmix_t *p, tern_config_t *cfg, char *what, size_t len);

#endif
