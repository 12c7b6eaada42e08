/*
 * Placement of the receive structures: each rank's inbox (every pair region
 * it reads: fastbox slots, cells, copy buffers) goes to the NUMA node of
 * the cores the rank is bound to.  hwloc says which node that is (from the
 * process's CPU binding, as ternrun or another launcher set it); libnuma's
 * mbind moves the pages there (MPOL_MF_MOVE: the creator's posix_fallocate
 * may have placed them on its own node).  An unbound rank spans all nodes
 * and keeps the kernel's default placement.  Failures only cost locality:
 * they are reported under TERN_LOG, never fatal.
 */
#include <errno.h>
#include <hwloc.h>
#include <numaif.h>
#include <string.h>

#include "netmods/shm/shm_internal.h"

/* The single NUMA node the process is bound to, or -1. */
static int bound_numa_node(void)
{
    hwloc_topology_t topo;
    int node = -1;
    if (hwloc_topology_init(&topo) != 0)
        return -1;
    /* CPUs and NUMA nodes only: no PCI discovery (slow, and not needed) */
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(topo) == 0) {
        hwloc_cpuset_t cpus = hwloc_bitmap_alloc();
        hwloc_nodeset_t nodes = hwloc_bitmap_alloc();
        if (cpus && nodes && hwloc_get_cpubind(topo, cpus, HWLOC_CPUBIND_PROCESS) == 0) {
            hwloc_cpuset_to_nodeset(topo, cpus, nodes);
            if (hwloc_bitmap_weight(nodes) == 1)
                node = hwloc_bitmap_first(nodes);
        }
        hwloc_bitmap_free(cpus);
        hwloc_bitmap_free(nodes);
    }
    hwloc_topology_destroy(topo);
    return node;
}

void tern_shm_place_inbox(tern_shm_t *s)
{
    int node = bound_numa_node();
    if (node < 0 || node >= (int)(sizeof(unsigned long) * 8))
        return;
    const tern_shm_seg_hdr_t *h = s->hdr;
    uint64_t reader = (uint64_t)s->widx * s->nlocal + (uint64_t)s->my_idx;
    uint8_t *inbox = s->base + h->off_pairs + reader * s->nlocal * h->pair_size;
    unsigned long mask = 1ul << node;
    if (mbind(inbox, (unsigned long)s->nlocal * h->pair_size, MPOL_PREFERRED, &mask,
              sizeof(mask) * 8, MPOL_MF_MOVE) != 0)
        tern_debug("mbind of the shm inbox to NUMA node %d: %s", node, strerror(errno));
    s->numa_node = node;
}
