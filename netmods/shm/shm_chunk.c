/*
 * The cooperative LMT copy chunk when TERN_SHM_COPY_CHUNK is unset (0),
 * from the cache hierarchy hwloc reports.  Local rank 0 decides it when it
 * creates the segment and writes it into the header, so every rank uses
 * the same; tern_info prints the choice and its reason.
 *
 * The rule: a quarter of the L2 cache per core (the smallest on the
 * machine, an L2 shared by several cores divided among them), rounded down
 * to a power of two, within 64 KiB .. 1 MiB.  Then halved while the node's
 * copy buffers (workers x nlocal^2 pairs x TERN_SHM_COPY_CHUNKS chunks)
 * would take more than 256 MiB of /dev/shm, never below 64 KiB.  An L2 that
 * hwloc does not report gives 64 KiB.
 *
 * Why a quarter.  While a message streams through the copy buffer, the
 * sender's L2 holds the chunk it is filling, the source lines it reads and
 * the chunk just filled, which the receiver is copying out of it; the
 * receiver's L2 holds that chunk and the destination lines.  A chunk of a
 * quarter of L2 leaves room for all of it, so the receiver reads each chunk
 * from the sender's cache.  Much larger, the chunk just filled is pushed
 * out to L3 (or memory) before the receiver reads it; much smaller, the
 * per-chunk handshake (a cache-line round trip) and the copy start-up are
 * paid more often.  Measured (bench/RESULTS.md) on AMD EPYC (Zen 5) guests
 * with 1 MiB L2 per core: 1 MiB chunks 10 GB/s at 4 MiB, or bimodal (24-26
 * or 5-6 GB/s); 256 KiB 22.9-24.7 GB/s in 6 of 6 runs where 64 KiB gave
 * 15-17 (issue 22), 28-29 GB/s on another host where 64 KiB gave 24-29
 * (issue 8).  The bounds: 64 KiB was the best fixed default measured, and
 * above 1 MiB a chunk outgrows the benefit of a larger copy.
 */
#include <hwloc.h>
#include <inttypes.h>
#include <stdio.h>

#include "netmods/shm/shm_internal.h"

#define KiB UINT64_C(1024)
#define MiB (KiB * 1024)
#define CHUNK_MIN (64 * KiB)
#define CHUNK_MAX (1 * MiB)
#define COPY_BUDGET (256 * MiB) /* the node's copy buffers, all pairs */

static uint64_t pow2_floor(uint64_t v)
{
    uint64_t p = 1;
    while (p <= v / 2)
        p *= 2;
    return p;
}

uint64_t tern_shm_chunk_rule(uint64_t l2_per_core, uint64_t pairs, uint64_t num_chunks)
{
    uint64_t c = l2_per_core == 0 ? CHUNK_MIN : pow2_floor(l2_per_core / 4);
    c = c < CHUNK_MIN ? CHUNK_MIN : c > CHUNK_MAX ? CHUNK_MAX : c;
    while (c > CHUNK_MIN && pairs != 0 && pairs * num_chunks * c > COPY_BUDGET)
        c /= 2;
    return c;
}

uint64_t tern_shm_l2_per_core(void)
{
    hwloc_topology_t topo;
    uint64_t best = 0;
    if (hwloc_topology_init(&topo) != 0)
        return 0;
    /* no PCI discovery (slow, and not needed: see placement.c) */
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(topo) == 0) {
        hwloc_obj_t l2 = NULL;
        while ((l2 = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_L2CACHE, l2)) != NULL) {
            int cores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, l2->cpuset, HWLOC_OBJ_CORE);
            uint64_t per = l2->attr->cache.size / (uint64_t)(cores > 0 ? cores : 1);
            if (per != 0 && (best == 0 || per < best))
                best = per;
        }
    }
    hwloc_topology_destroy(topo);
    return best;
}

static void size_str(uint64_t v, char *buf, size_t len)
{
    if (v >= MiB && v % MiB == 0)
        snprintf(buf, len, "%" PRIu64 " MiB", v / MiB);
    else if (v >= KiB && v % KiB == 0)
        snprintf(buf, len, "%" PRIu64 " KiB", v / KiB);
    else
        snprintf(buf, len, "%" PRIu64 " B", v);
}

void tern_shm_chunk_auto(tern_shm_chunk_choice_t *out, uint64_t pairs, uint64_t num_chunks)
{
    uint64_t l2 = tern_shm_l2_per_core();
    uint64_t by_cache = tern_shm_chunk_rule(l2, 0, num_chunks);
    char l2s[32], cs[32];
    out->bytes = tern_shm_chunk_rule(l2, pairs, num_chunks);
    size_str(l2, l2s, sizeof(l2s));
    size_str(by_cache, cs, sizeof(cs));
    int n;
    if (l2 == 0)
        n = snprintf(out->why, sizeof(out->why), "hwloc reports no L2 cache: the fixed 64 KiB");
    else
        n = snprintf(out->why, sizeof(out->why),
                     "%s, a quarter of the %s L2 cache per core hwloc reports (a power of two "
                     "within 64 KiB..1 MiB)", cs, l2s);
    if (n < 0 || (size_t)n >= sizeof(out->why))
        return;
    if (pairs == 0 && by_cache > CHUNK_MIN)
        snprintf(out->why + n, sizeof(out->why) - (size_t)n,
                 "; halved, down to 64 KiB, for as many local ranks as would take the node's "
                 "copy buffers (workers x ranks^2 x %" PRIu64 " chunks) past 256 MiB",
                 num_chunks);
    else if (out->bytes != by_cache)
        snprintf(out->why + n, sizeof(out->why) - (size_t)n,
                 "; lowered to %" PRIu64 " KiB so the copy buffers of %" PRIu64 " pairs x %" PRIu64
                 " chunks stay within 256 MiB", out->bytes / KiB, pairs, num_chunks);
}
