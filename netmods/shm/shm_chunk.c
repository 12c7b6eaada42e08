/*
 * The cooperative LMT copy chunk when TERN_SHM_COPY_CHUNK is unset (0),
 * from the cache hierarchy hwloc reports.  Local rank 0 decides it when it
 * creates the segment and writes it into the header, so every rank uses
 * the same; tern_info prints the choice and its reason.
 *
 * The rule: the largest power of two such that the pair's whole copy ring
 * (TERN_SHM_COPY_CHUNKS chunks, 4 by default) fills at most half of the L2
 * cache per core (the smallest on the machine; an L2 shared by several
 * cores divided among them), within 64 KiB .. 1 MiB: an eighth of the L2
 * with 4 chunks, 128 KiB on a 1 MiB L2.  Then halved while the node's copy
 * buffers (workers x nlocal^2 pairs x chunks) would take more than 256 MiB
 * of /dev/shm, never below 64 KiB.  An L2 hwloc does not report: 64 KiB.
 *
 * Why.  The copy pipeline runs out of the two cores' L2 caches: the sender
 * fills a chunk while the receiver copies the previous one out of the
 * sender's cache.  A ring that fits half of L2 stays there with the source
 * lines the sender streams through and the destination lines the receiver
 * writes; a larger ring spills to L3, which the other cores (and on a VM
 * other guests) share, and the pipeline then falls with their traffic.
 * Within that bound the chunk is as large as it can be, since each chunk
 * costs a handshake (a cache-line round trip) and a copy start-up.
 * Measured on this AMD EPYC (Zen 5) guest, 1 MiB L2 per core, 4 MiB messages
 * against a one-core memcpy in the same rounds (bench/RESULTS.md, issue 22),
 * 69 quiet rounds pooled: 64, 128 and 256 KiB chunks all 0.85 at the
 * median, but 256 KiB (a 1 MiB ring) fell below 0.6 in 17 of them (tenth
 * percentile 0.42) against 8 for 64 KiB (0.55) and 6 of 46 for 128 KiB
 * (0.58); 512 KiB and 1 MiB reached 0.91-0.95 at the median and fell to
 * 0.38 and 0.18 at the tenth percentile (the "1 MiB bimodal").
 * Another day the same guest gave 256 KiB 1.5x the 64 KiB bandwidth: the
 * rule takes the larger chunk that keeps the ring in L2.
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
    uint64_t ring = l2_per_core / 2; /* the most of L2 the ring may fill */
    uint64_t c = l2_per_core == 0 || num_chunks == 0 || ring / num_chunks == 0
                     ? CHUNK_MIN
                     : pow2_floor(ring / num_chunks);
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
                     "%s, so the %" PRIu64 "-chunk ring fills at most half of the %s L2 cache "
                     "per core hwloc reports (a power of two within 64 KiB..1 MiB)",
                     cs, num_chunks, l2s);
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
                 " chunks stay within 256 MiB",
                 out->bytes / KiB, pairs, num_chunks);
}
