/*
 * Unit test of the shm copy chunk chosen when TERN_SHM_COPY_CHUNK is unset
 * (netmods/shm/shm_chunk.c): the rule on L2 sizes of known CPUs and on
 * node sizes past the copy-buffer budget, the piece of a chunk the sender
 * fills per message size (shm_lmt.c), what tern_info is told, and the
 * chunk a segment created with the setting unset really gets on this
 * machine (a ring of half hwloc's L2 per core, not a fixed 64 KiB).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "netmods/shm/shm_internal.h"

#include "tests/unit/expect.h"

#define KiB UINT64_C(1024)
#define MiB (KiB * 1024)

static void rule_by_cache(void)
{
    /* 4 chunks: the ring within half of L2, so an eighth of L2 per chunk */
    static const struct {
        uint64_t l2, chunks, want;
        const char *cpu;
    } c[] = {
        {1 * MiB, 4, 128 * KiB, "Zen 4/5, Skylake-SP: 1 MiB L2 per core"},
        {512 * KiB, 4, 64 * KiB, "Zen 2/3: 512 KiB"},
        {1280 * KiB, 4, 128 * KiB, "Ice Lake-SP: 1.25 MiB, rounded down to a power of two"},
        {2 * MiB, 4, 256 * KiB, "Sapphire Rapids: 2 MiB"},
        {256 * KiB, 4, 64 * KiB, "Haswell/Broadwell: 256 KiB, never below 64 KiB"},
        {32 * MiB, 4, 1 * MiB, "an L3 reported as L2: never above 1 MiB"},
        {0, 4, 64 * KiB, "no L2 reported: 64 KiB"},
        {1 * MiB, 8, 64 * KiB, "8 chunks: half the chunk"},
        {2 * MiB, 2, 512 * KiB, "2 chunks: twice the chunk"},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        uint64_t got = tern_shm_chunk_rule(c[i].l2, 0, c[i].chunks);
        EXPECT(got == c[i].want, "%s: got %" PRIu64 ", want %" PRIu64, c[i].cpu, got, c[i].want);
    }
}

static void rule_by_budget(void)
{
    /* 1 MiB L2 (128 KiB by cache), 4 chunks, 1 worker: 22 local ranks fit
     * 256 MiB, 23 do not; 64 ranks stop at the 64 KiB floor */
    EXPECT(tern_shm_chunk_rule(MiB, 22 * 22, 4) == 128 * KiB, "22 ranks keep 128 KiB");
    EXPECT(tern_shm_chunk_rule(MiB, 23 * 23, 4) == 64 * KiB, "23 ranks: 64 KiB");
    EXPECT(tern_shm_chunk_rule(MiB, 64 * 64, 4) == 64 * KiB, "64 ranks: the floor");
    EXPECT(tern_shm_chunk_rule(2 * MiB, 2 * 16 * 16, 4) == 128 * KiB, "2 workers x 16 ranks");
    EXPECT(tern_shm_chunk_rule(0, 64 * 64, 4) == 64 * KiB, "unknown L2, many ranks");
}

/* The sender's piece per chunk: four pieces per message where the chunk
 * allows, so both copies overlap for messages up to a few chunks. */
static void pieces(void)
{
    static const struct {
        uint32_t chunk;
        uint64_t len, want;
    } c[] = {
        {256 * KiB, 16 * KiB + 1, 16 * KiB}, /* just past the eager limit: at least 16 KiB */
        {256 * KiB, 64 * KiB, 16 * KiB},     {256 * KiB, 128 * KiB, 32 * KiB},
        {256 * KiB, 256 * KiB, 64 * KiB},    {256 * KiB, 1 * MiB, 256 * KiB},
        {256 * KiB, 4 * MiB, 256 * KiB}, /* large: whole chunks */
        {64 * KiB, 128 * KiB, 32 * KiB},     {64 * KiB, 4 * MiB, 64 * KiB},
        {4 * KiB, 1 * MiB, 4 * KiB}, /* a chunk below 16 KiB bounds it */
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        size_t got = tern_shm_coop_piece(c[i].chunk, c[i].len);
        EXPECT(got == c[i].want, "chunk %u, message %" PRIu64 ": piece %zu, want %" PRIu64,
               c[i].chunk, c[i].len, got, c[i].want);
    }
}

/* What tern_info prints comes from the same choice, with its reason. */
static void explained(void)
{
    tern_shm_chunk_choice_t ch;
    uint64_t l2 = tern_shm_l2_per_core();
    tern_shm_chunk_auto(&ch, 0, 4);
    EXPECT(ch.bytes == tern_shm_chunk_rule(l2, 0, 4), "auto %" PRIu64 " vs rule", ch.bytes);
    EXPECT(strstr(ch.why, l2 ? "L2 cache per core hwloc reports" : "no L2") != NULL, "reason: %s",
           ch.why);
}

/* A segment created with the chunk unset (what tern_init does on local rank
 * 0) carries the chunk of the rule (on a host with a 1 MiB L2 per core:
 * 128 KiB, where the old default was a fixed 64 KiB). */
static void segment_gets_it(void)
{
    static tern_context_t ctx;
    static tern_shm_config_t cfg = {.fbox_size = 512,
                                    .num_fbox = 64,
                                    .cell_size = 16384,
                                    .num_cells = 16,
                                    .chunk_size = 0,
                                    .num_chunks = 4};
    tern_shm_t s;
    memset(&s, 0, sizeof(s));
    snprintf(ctx.pmix.nspace, sizeof(ctx.pmix.nspace), "shm_chunk_test.%d", (int)getpid());
    ctx.num_workers = 1;
    ctx.cfg.wait_mode = TERN_WAIT_YIELD;
    s.ctx = &ctx;
    s.cfg = &cfg;
    s.nlocal = 2;
    tern_shm_segment_name(&s, s.seg_name, sizeof(s.seg_name));
    tern_status_t st = tern_shm_segment_create(&s);
    EXPECT(st == TERN_OK, "segment: %s", tern_last_error());
    if (st != TERN_OK)
        return;
    uint64_t want = tern_shm_chunk_rule(tern_shm_l2_per_core(), 4, 4);
    EXPECT(s.hdr->chunk_size == want, "segment chunk %u, rule %" PRIu64, s.hdr->chunk_size, want);
    EXPECT(tern_shm_segment_validate(s.hdr, s.size, 2, s.seg_name) == TERN_OK, "%s",
           tern_last_error());
    printf("this machine: L2 per core %" PRIu64 " bytes, copy chunk %u\n", tern_shm_l2_per_core(),
           s.hdr->chunk_size);
    tern_shm_segment_detach(&s);
}

int main(void)
{
    rule_by_cache();
    rule_by_budget();
    pieces();
    explained();
    segment_gets_it();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
