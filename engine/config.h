/*
 * Run-time configuration: every tunable is a TERN_* environment variable
 * with a default, a minimum and a maximum, described in one table
 * (config.c) that tern_info prints.  Invalid values are rejected with a
 * message naming the variable and its allowed range.
 */
#ifndef TERN_ENGINE_CONFIG_H
#define TERN_ENGINE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include <tern/status.h>

enum tern_wait_mode { TERN_WAIT_SPIN = 0, TERN_WAIT_YIELD = 1, TERN_WAIT_BLOCK = 2 };

typedef struct tern_config {
    uint64_t eager_limit;      /* TERN_EAGER_LIMIT: largest eager payload */
    uint64_t shm_fbox_size;    /* TERN_SHM_FBOX_SIZE: bytes per fastbox slot */
    uint64_t shm_num_fbox;     /* TERN_SHM_NUM_FBOX: fastbox slots per peer (power of 2) */
    uint64_t shm_cell_size;    /* TERN_SHM_CELL_SIZE: cell bytes */
    uint64_t shm_num_cells;    /* TERN_SHM_NUM_CELLS: cells per peer (power of 2) */
    uint64_t shm_chunk_size;   /* TERN_SHM_COPY_CHUNK: cooperative LMT chunk */
    uint64_t shm_num_chunks;   /* TERN_SHM_COPY_CHUNKS: chunks per peer */
    uint64_t shm_cma;          /* TERN_SHM_CMA: 1 = single-copy LMT through CMA allowed */
    uint64_t shm_cma_threshold;/* TERN_SHM_CMA_THRESHOLD: smallest message using CMA */
    uint64_t fault_cma_after;  /* TERN_FAULT_CMA_EPERM_AFTER: test hook, 0 = off */
    uint64_t wait_mode;        /* TERN_WAIT_MODE: spin | yield | block */
    uint64_t spin_count;       /* TERN_SPIN_COUNT: idle polls before yield/block */
    uint64_t health_ms;        /* TERN_HEALTH_MS: dead-peer check period when idle */
    uint64_t env_set;          /* bit i: tern_config_table[i] came from the environment */
} tern_config_t;

typedef struct tern_config_entry {
    const char *env;
    const char *desc;
    size_t offset;             /* into tern_config_t */
    uint64_t def, min, max;
    int flags;                 /* TERN_CFG_POW2, TERN_CFG_ENUM_WAIT */
} tern_config_entry_t;

#define TERN_CFG_POW2 1
#define TERN_CFG_WAITMODE 2

extern const tern_config_entry_t tern_config_table[];
extern const size_t tern_config_table_len;

/* Fill cfg from the environment; TERN_ERR_INVALID_PARAM names the bad one. */
tern_status_t tern_config_load(tern_config_t *cfg);

/* True when the setting at offset `field` was given in the environment. */
int tern_config_is_set(const tern_config_t *cfg, size_t field);

/* Format a value of entry e for display (wait mode by name). */
void tern_config_format(const tern_config_entry_t *e, uint64_t v, char *buf, size_t len);

#endif
