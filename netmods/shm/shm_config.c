/* shm netmod settings: the TERN_SHM_* variables, validated by the engine's
 * loader and listed by tern_info. */
#include <inttypes.h>
#include <stdio.h>

#include "netmods/shm/shm_internal.h"

#define KiB 1024ull
#define MiB (1024ull * 1024ull)
#define T tern_shm_config_t

static const tern_config_entry_t shm_entries[] = {
    TERN_CFG_ENTRY_POW2("TERN_SHM_FBOX_SIZE", T, fbox_size, 512, 128, 64 * KiB,
                        "shm fastbox slot bytes (16-byte header included)"),
    TERN_CFG_ENTRY_POW2("TERN_SHM_NUM_FBOX", T, num_fbox, 64, 1, 4096,
                        "shm fastbox slots per peer pair"),
    TERN_CFG_ENTRY_POW2("TERN_SHM_CELL_SIZE", T, cell_size, 16 * KiB, 256, 1 * MiB,
                        "shm cell bytes (header included)"),
    TERN_CFG_ENTRY_POW2("TERN_SHM_NUM_CELLS", T, num_cells, 16, 2, 4096,
                        "shm cells per peer pair"),
    TERN_CFG_ENTRY_POW2("TERN_SHM_COPY_CHUNK", T, chunk_size, 0, 0, 16 * MiB,
                        "shm cooperative LMT chunk bytes (>= 4096); 0: from the L2 cache per "
                        "core (tern_info says what it is here)"),
    TERN_CFG_ENTRY_POW2("TERN_SHM_COPY_CHUNKS", T, num_chunks, 4, 2, 256,
                        "shm cooperative LMT chunks per peer pair"),
};
#undef T

/* Cross-field rules: the eager path must fit the cells it is cut into; a
 * chunk holds at least a page. */
static tern_status_t shm_config_validate(const void *config)
{
    const tern_shm_config_t *c = config;
    if (c->fbox_size > c->cell_size)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "TERN_SHM_FBOX_SIZE (%" PRIu64 ") exceeds TERN_SHM_CELL_SIZE (%" PRIu64 ")",
                          c->fbox_size, c->cell_size);
    if (c->chunk_size != 0 && c->chunk_size < 4 * KiB)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "TERN_SHM_COPY_CHUNK=%" PRIu64 ": 0 (by cache size) or 4096 .. %llu",
                          c->chunk_size, 16 * MiB);
    return TERN_OK;
}

/* tern_info: what an unset TERN_SHM_COPY_CHUNK becomes on this machine. */
static void shm_config_explain(const void *config, char *buf, size_t len)
{
    const tern_shm_config_t *c = config;
    buf[0] = '\0';
    if (c->chunk_size != 0)
        return;
    tern_shm_chunk_choice_t ch;
    tern_shm_chunk_auto(&ch, 0, c->num_chunks);
    snprintf(buf, len, "TERN_SHM_COPY_CHUNK=0 here: %" PRIu64 " bytes: %s", ch.bytes, ch.why);
}

const tern_config_table_t tern_shm_config_table = {
    .owner = "shm",
    .entries = shm_entries,
    .num_entries = sizeof(shm_entries) / sizeof(shm_entries[0]),
    .struct_size = sizeof(tern_shm_config_t),
    .validate = shm_config_validate,
    .explain = shm_config_explain,
};
