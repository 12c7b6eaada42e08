#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/log.h"

#define KiB 1024ull
#define MiB (1024ull * 1024ull)
#define OFF(f) offsetof(tern_config_t, f)

const tern_config_entry_t tern_config_table[] = {
    {"TERN_EAGER_LIMIT", "largest payload sent eagerly; larger messages use rendezvous (LMT)",
     OFF(eager_limit), 16 * KiB, 0, 1 * MiB, 0},
    {"TERN_SHM_FBOX_SIZE", "shm fastbox slot bytes (16-byte header included)",
     OFF(shm_fbox_size), 512, 128, 64 * KiB, TERN_CFG_POW2},
    {"TERN_SHM_NUM_FBOX", "shm fastbox slots per peer pair",
     OFF(shm_num_fbox), 64, 1, 4096, TERN_CFG_POW2},
    {"TERN_SHM_CELL_SIZE", "shm cell bytes (header included)",
     OFF(shm_cell_size), 16 * KiB, 256, 1 * MiB, TERN_CFG_POW2},
    {"TERN_SHM_NUM_CELLS", "shm cells per peer pair",
     OFF(shm_num_cells), 16, 2, 4096, TERN_CFG_POW2},
    {"TERN_SHM_COPY_CHUNK", "shm cooperative LMT chunk bytes; unset: 1 MiB up to 4 local ranks, 256 KiB up to 16, 64 KiB beyond",
     OFF(shm_chunk_size), 1 * MiB, 4 * KiB, 16 * MiB, TERN_CFG_POW2},
    {"TERN_SHM_COPY_CHUNKS", "shm cooperative LMT chunks per peer pair",
     OFF(shm_num_chunks), 4, 2, 256, TERN_CFG_POW2},
    {"TERN_SHM_CMA", "1: messages >= TERN_SHM_CMA_THRESHOLD use the single-copy CMA get (process_vm_readv); 0: cooperative copy only",
     OFF(shm_cma), 1, 0, 1, 0},
    {"TERN_SHM_CMA_THRESHOLD", "smallest rendezvous message that uses CMA (smaller: the copy buffer)",
     OFF(shm_cma_threshold), 256 * MiB, 0, 1024 * MiB, 0},
    {"TERN_FAULT_CMA_EPERM_AFTER", "test hook: CMA reads fail with EPERM after this many bytes of a message (0: off)",
     OFF(fault_cma_after), 0, 0, 1024 * MiB, 0},
    {"TERN_WAIT_MODE", "how an idle wait waits: spin, yield (spin then sched_yield), block (spin then futex)",
     OFF(wait_mode), TERN_WAIT_YIELD, TERN_WAIT_SPIN, TERN_WAIT_BLOCK, TERN_CFG_WAITMODE},
    {"TERN_SPIN_COUNT", "idle polls before an idle wait yields or blocks",
     OFF(spin_count), 2000, 1, 100000000, 0},
    {"TERN_HEALTH_MS", "period of the dead-peer check while a wait is idle (ms)",
     OFF(health_ms), 100, 1, 60000, 0},
};
const size_t tern_config_table_len = sizeof(tern_config_table) / sizeof(tern_config_table[0]);

static const char *const wait_names[] = {"spin", "yield", "block"};

static tern_status_t parse_one(const tern_config_entry_t *e, const char *s, uint64_t *out)
{
    if (e->flags & TERN_CFG_WAITMODE) {
        for (uint64_t i = 0; i <= TERN_WAIT_BLOCK; i++)
            if (strcasecmp(s, wait_names[i]) == 0) {
                *out = i;
                return TERN_OK;
            }
        return tern_error(TERN_ERR_INVALID_PARAM, "%s=\"%s\": expected spin, yield or block",
                          e->env, s);
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    uint64_t mult = 1;
    if (end != s && (*end == 'k' || *end == 'K'))
        mult = KiB, end++;
    else if (end != s && (*end == 'm' || *end == 'M'))
        mult = MiB, end++;
    if (errno || end == s || *end != '\0' || s[0] == '-')
        return tern_error(TERN_ERR_INVALID_PARAM, "%s=\"%s\": not a non-negative number",
                          e->env, s);
    if (v > e->max / mult + 1)
        v = e->max + 1; /* out of range below; avoids overflow */
    else
        v *= mult;
    if (v < e->min || v > e->max)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "%s=%s out of range: allowed %" PRIu64 " .. %" PRIu64, e->env, s,
                          e->min, e->max);
    if ((e->flags & TERN_CFG_POW2) && (v & (v - 1)))
        return tern_error(TERN_ERR_INVALID_PARAM, "%s=%s must be a power of two", e->env, s);
    *out = v;
    return TERN_OK;
}

tern_status_t tern_config_load(tern_config_t *cfg)
{
    cfg->env_set = 0;
    for (size_t i = 0; i < tern_config_table_len; i++) {
        const tern_config_entry_t *e = &tern_config_table[i];
        uint64_t *slot = (uint64_t *)((char *)cfg + e->offset);
        const char *s = getenv(e->env);
        *slot = e->def;
        if (s != NULL && *s != '\0') {
            tern_status_t st = parse_one(e, s, slot);
            if (st != TERN_OK)
                return st;
            cfg->env_set |= 1ull << i;
        }
    }
    /* Cross-field rule: the eager path must fit the cells it is cut into. */
    if (cfg->shm_fbox_size > cfg->shm_cell_size)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "TERN_SHM_FBOX_SIZE (%" PRIu64 ") exceeds TERN_SHM_CELL_SIZE (%" PRIu64 ")",
                          cfg->shm_fbox_size, cfg->shm_cell_size);
    return TERN_OK;
}

int tern_config_is_set(const tern_config_t *cfg, size_t field)
{
    for (size_t i = 0; i < tern_config_table_len; i++)
        if (tern_config_table[i].offset == field)
            return (cfg->env_set >> i) & 1;
    return 0;
}

void tern_config_format(const tern_config_entry_t *e, uint64_t v, char *buf, size_t len)
{
    if ((e->flags & TERN_CFG_WAITMODE) && v <= TERN_WAIT_BLOCK)
        snprintf(buf, len, "%s", wait_names[v]);
    else
        snprintf(buf, len, "%" PRIu64, v);
}
