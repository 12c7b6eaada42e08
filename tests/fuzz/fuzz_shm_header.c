/*
 * libFuzzer harness of the shm segment header check
 * (tern_shm_segment_validate, netmods/shm/segment.c).  An input is
 *   4 bytes   nlocal (host order; the ranks the attaching process expects)
 *   8 bytes   mapped: the bytes the mapping has
 *   128 bytes the segment header
 * Whenever the check accepts a header, everything the netmod then derives
 * from it must lie inside the mapping: the doorbells of every worker and
 * rank (tern_shm_use_segment), and for every worker and every pair (reader,
 * writer) the region tern_shm_chan_bind computes, with its fastbox slots,
 * cells, chunk headers and chunk data (the unit and chunk headers at
 * offsets their atomics may use).  Offsets are computed exactly (128-bit),
 * so a layout whose 64-bit arithmetic wraps is caught, not mirrored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "netmods/shm/shm_internal.h"
#include "tests/fuzz/seeds.h"

typedef unsigned __int128 u128;

#define PAIRS_WALKED (1u << 12) /* above: the first and last pair of each worker */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const tern_shm_seg_hdr_t *hdr;
static uint64_t mapped;

/* what: the region, how: what is wrong with it. */
static void broken(const char *what, const char *how, u128 off, u128 len)
{
    fprintf(stderr,
            "fuzz_shm_header: header accepted, but %s %s (offset %#llx%016llx, %llu bytes; "
            "mapping of %llu bytes, nlocal %u, workers %u)\n",
            what, how, (unsigned long long)(off >> 64), (unsigned long long)off,
            (unsigned long long)len, (unsigned long long)mapped, hdr->nlocal, hdr->num_workers);
    abort();
}

/* [off, off + len) must lie in the mapping, and off be aligned to align. */
static void inside(const char *what, u128 off, u128 len, unsigned align)
{
    if (off + len > mapped)
        broken(what, "lies outside the mapping", off, len);
    if (off % align != 0)
        broken(what, "is misaligned", off, len);
}

/* Everything of the pair region at off (chan_bind's view). */
static void walk_pair(u128 pair)
{
    const tern_shm_seg_hdr_t *h = hdr;
    inside("a pair region", pair, h->pair_size, TERN_CACHE_LINE);
    inside("a consumer control block", pair, sizeof(tern_shm_cons_ctl_t), TERN_CACHE_LINE);
    for (u128 i = 0; i < h->num_fbox; i += h->num_fbox - 1 ? h->num_fbox - 1 : 1)
        inside("a fastbox slot", pair + h->pair_off_fbox + i * h->fbox_size, h->fbox_size,
               _Alignof(tern_shm_unit_hdr_t));
    for (u128 i = 0; i < h->num_cells; i += h->num_cells - 1 ? h->num_cells - 1 : 1)
        inside("a cell", pair + h->pair_off_cells + i * h->cell_size, h->cell_size,
               _Alignof(tern_shm_unit_hdr_t));
    inside("the chunk header array", pair + h->pair_off_copy,
           (u128)h->num_chunks * sizeof(tern_shm_chunk_hdr_t), TERN_CACHE_LINE);
    u128 cdata = (h->pair_off_copy + (u128)h->num_chunks * sizeof(tern_shm_chunk_hdr_t) + 4095) /
                 4096 * 4096;
    inside("the chunk data", pair + cdata, (u128)h->num_chunks * h->chunk_size, 4096);
    /* the regions of one pair must not overlap either */
    if (h->pair_off_fbox + (u128)h->num_fbox * h->fbox_size > h->pair_off_cells ||
        h->pair_off_cells + (u128)h->num_cells * h->cell_size > h->pair_off_copy ||
        cdata + (u128)h->num_chunks * h->chunk_size > h->pair_size)
        broken("the regions of a pair", "overlap", pair, h->pair_size);
    if (h->chunk_size == 0)
        broken("the copy chunks", "hold 0 bytes: no rendezvous could move data", pair + cdata, 0);
}

/* Seeds: headers the real segment code writes (a segment made in /dev/shm
 * and removed at once), for a few geometries. */
static void write_seeds(void)
{
    static const struct {
        uint32_t nlocal, workers, wait, fbox, chunk;
    } geo[] = {{1, 1, TERN_WAIT_SPIN, 0, 0}, {2, 1, TERN_WAIT_BLOCK, 0, 0},
               {3, 2, TERN_WAIT_YIELD, 8, 4096}, {2, 4, TERN_WAIT_BLOCK, 1, 8192}};
    for (size_t i = 0; i < sizeof(geo) / sizeof(geo[0]); i++) {
        tern_shm_config_t cfg;
        static tern_context_t ctx;
        if (tern_config_load_table(&tern_shm_config_table, &cfg, NULL) != TERN_OK)
            abort();
        cfg.num_fbox = geo[i].fbox ? geo[i].fbox : cfg.num_fbox;
        cfg.chunk_size = geo[i].chunk;
        snprintf(ctx.pmix.nspace, sizeof(ctx.pmix.nspace), "fuzzseed%d", (int)getpid());
        ctx.num_workers = (int)geo[i].workers;
        ctx.cfg.wait_mode = geo[i].wait;
        tern_shm_t s = {.ctx = &ctx, .cfg = &cfg, .nlocal = (int)geo[i].nlocal};
        tern_shm_segment_name(&s, s.seg_name, sizeof(s.seg_name));
        if (tern_shm_segment_create(&s) != TERN_OK) {
            fprintf(stderr, "fuzz_shm_header: seed %zu: %s\n", i, tern_last_error());
            exit(1);
        }
        uint8_t in[4 + 8 + sizeof(tern_shm_seg_hdr_t)];
        uint64_t mapped_size = s.size;
        memcpy(in, &geo[i].nlocal, 4);
        memcpy(in + 4, &mapped_size, 8);
        memcpy(in + 12, s.base, sizeof(tern_shm_seg_hdr_t));
        tern_shm_segment_detach(&s);
        char name[64];
        snprintf(name, sizeof(name), "nlocal%u_workers%u_wait%u", geo[i].nlocal, geo[i].workers,
                 geo[i].wait);
        seed_write(name, in, sizeof(in));
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    seeds_maybe_write(write_seeds);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t nlocal;
    tern_shm_seg_hdr_t h;
    if (size != 4 + 8 + sizeof(h))
        return 0;
    memcpy(&nlocal, data, 4);
    memcpy(&mapped, data + 4, 8);
    memcpy(&h, data + 12, sizeof(h)); /* aligned, as the mapping's base is */
    if (tern_shm_segment_validate(&h, (size_t)mapped, nlocal, "(fuzz)") != TERN_OK)
        return 0;
    hdr = &h;
    inside("the header", 0, sizeof(h), 1);
    u128 nw = h.num_workers, nl = h.nlocal;
    if (h.off_doorbells < sizeof(h))
        broken("the doorbell array", "overlaps the header", h.off_doorbells, 0);
    inside("the doorbell array", h.off_doorbells, nw * nl * sizeof(tern_shm_doorbell_t),
           TERN_CACHE_LINE);
    if (h.off_doorbells + nw * nl * sizeof(tern_shm_doorbell_t) > h.off_pairs)
        broken("the doorbell array", "overlaps the pairs", h.off_doorbells, h.off_pairs);
    /* chan_bind: worker w's pair (reader r, writer s) at
     * off_pairs + ((w * nlocal + r) * nlocal + s) * pair_size */
    for (u128 w = 0; w < nw; w++) {
        if (nw * nl * nl <= PAIRS_WALKED) {
            for (u128 r = 0; r < nl; r++)
                for (u128 s = 0; s < nl; s++)
                    walk_pair(h.off_pairs + ((w * nl + r) * nl + s) * h.pair_size);
        } else { /* offsets grow with the index: the ends bound the rest */
            walk_pair(h.off_pairs + (w * nl * nl) * h.pair_size);
            walk_pair(h.off_pairs + ((w * nl + nl - 1) * nl + nl - 1) * h.pair_size);
        }
    }
    return 0;
}
