/*
 * The memory-registration cache.  A netmod that must register memory
 * before moving it (verbs: ibv_reg_mr; DPDK: rte_extmem_register + DMA map;
 * shm: records (pid, address, length) for CMA) gives the cache its
 * register / deregister functions; tern_rcache_get returns a registration
 * covering a buffer, a cached one when it can, and tern_rcache_put gives it
 * back.  A registration must never outlive its memory: a region whose pages
 * are unmapped is dropped from the cache (deregistered at once when unused,
 * at its last put when in use), so a later buffer at the same address gets
 * a registration of its own.
 *
 * Lookup.  The cached regions never overlap, so one order sorts both their
 * starts and their ends: a sorted array of starts (and a parallel array of
 * region pointers) answers a lookup with one binary search over contiguous
 * memory, O(log n), then one end check.  Insertion and removal move the tail
 * of the arrays (O(n) pointer moves), which happens only on a miss, an
 * eviction or an invalidation, each of which already costs a registration
 * or deregistration system call worth far more than moving a few thousand
 * pointers; a balanced tree would make the hit slower (a pointer chase per
 * level) to speed up what the syscall dominates anyway.
 *
 * Merging (as UCX's rcache does): a miss registers the page-aligned request
 * together with every cached region overlapping it as one registration;
 * the regions it absorbs leave the cache (deregistered now if unused, at
 * their last put if in use).  Regions that merely touch at a page boundary
 * are not merged (a slab of adjacent buffers would otherwise re-register a
 * growing range at every miss), except when one request spans them.
 * Unused regions sit on an LRU list; beyond max_regions live registrations
 * or max_bytes registered, the least recently used unused ones are
 * deregistered.  A registration that fails for lack of resources is retried
 * once after dropping every unused region.
 *
 * Threading.  A cache belongs to one thread (its worker): get, put,
 * invalidate, progress and destroy are called by that thread only, and
 * take no lock.  The other source of invalidations is the memory monitor
 * (engine/rcache_monitor.h), a process-wide thread that publishes unmapped
 * ranges in a lock-free broadcast ring; every get and put first checks it
 * (two loads of one cache line written only when watched memory is
 * unmapped) and on news drains the ring into the cache.  The acquire /
 * release pairs are labelled in rcache_monitor.h.
 *
 * Invalidation on munmap / free: userfaultfd, write-protect mode.  The
 * monitor opens a userfaultfd with UFFD_FEATURE_EVENT_UNMAP, _REMOVE and
 * _REMAP (and WP_ASYNC where the kernel has it, Linux 6.7+) and registers
 * every range the cache registers (UFFDIO_REGISTER_MODE_WP).  The kernel then
 * reports, for any registered page:
 *   munmap, and so free() of a chunk glibc mmapped (>= M_MMAP_THRESHOLD),
 *     brk shrinking (free() trimming the heap), mmap MAP_FIXED over it,
 *     mremap shrinking it                                   (UNMAP);
 *   madvise MADV_DONTNEED / MADV_FREE / MADV_REMOVE (glibc frees arena
 *     memory so)                                            (REMOVE);
 *   mremap moving it                                        (REMAP).
 * It catches what glibc does inside free() and any other library's direct
 * system calls, which symbol interposition (UCX's ucm "reloc" mode) misses;
 * glibc no longer has malloc hooks.  The thread that unmaps waits in the
 * kernel until the monitor has read the event, hence the monitor thread,
 * and the monitor marks itself busy before reading so that a get that
 * follows the munmap waits for the event to be published: no stale hit.
 * Why write-protect mode: UFFDIO_REGISTER needs a mode, and MISSING mode
 * would make every fault on a not-present page of the range (a page never
 * touched, or dropped by MADV_DONTNEED and touched again, in user or kernel
 * mode: read(), process_vm_readv, get_user_pages for ibv_reg_mr) wait for the
 * monitor to supply it (UFFDIO_ZEROPAGE / _COPY), a hang if it ever fails or
 * is the faulting thread; libfabric's uffd monitor does this and leaves read
 * faults hanging.  In WP mode a fault waits only on a page someone
 * write-protected with UFFDIO_WRITEPROTECT on our fd, which nobody does (and
 * with WP_ASYNC the kernel resolves even that itself), so faults and
 * populating behave as without the monitor.  Side effects: the registered
 * range is split into VMAs of its own (watch vm.max_map_count with very many
 * scattered regions), khugepaged does not collapse it, MAP_SHARED pages take
 * a kernel-resolved minor fault on their first write, and munmap of watched
 * memory costs a round trip through the monitor thread (measured by
 * tests/unit/rcache_test).  Ranges stay watched until unmapped (no
 * unregistering: several caches may watch the same pages).
 * What it misses, and so never caches (the region is registered for that
 * get only and deregistered at its last put): ranges userfaultfd refuses,
 * i.e. device (VM_PFNMAP / VM_IO) memory, hugetlbfs ranges not aligned to
 * the huge page size, file-backed memory without WP_ASYNC, ranges another
 * userfaultfd owns.  Not reported at all: mprotect (the pages stay), a
 * mapping's pages changing without an unmap (e.g. a file truncated under a
 * MAP_SHARED mapping), unmapping by a vfork child sharing the address space.
 * Without a monitor (userfaultfd denied by seccomp or a too old kernel, or
 * TERN_RCACHE=0) the cache does not cache: every get registers, every last
 * put deregisters, with a one-time warning when the monitor failed.
 *
 * fork().  The monitor asks for no UFFD_FEATURE_EVENT_FORK, so the child's
 * mappings are not watched and no monitor thread runs there; a cache used in
 * a child stops caching and abandons (never deregisters) the parent's
 * regions, whose registrations belong to the parent's device contexts.
 * Registered pages themselves: before Linux 5.12 a parent writing to a
 * pinned page after fork got a copy-on-write copy while the NIC kept
 * using the old page (now the child's), so verbs users called
 * ibv_fork_init, which marks registered ranges MADV_DONTFORK (the child
 * then has no mapping there).  Since 5.12 the kernel copies pages pinned
 * with FOLL_PIN / FOLL_LONGTERM into the child at fork, so the parent keeps
 * its pinned pages (ibv_is_fork_initialized says IBV_FORK_UNNEEDED).  This
 * cache does nothing at fork; the verbs netmod decides (ibv_fork_init when
 * the kernel needs it).  MADV_DONTFORK is not in the monitor's events and
 * unmaps nothing in the parent.  CMA (shm) pins nothing.
 */
#ifndef TERN_ENGINE_RCACHE_H
#define TERN_ENGINE_RCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tern/status.h>

#include "engine/config.h"
#include "engine/list.h"

typedef struct tern_rcache tern_rcache_t;

/* A registration as a lookup returns it; refcounted (get / put). */
typedef struct tern_rcache_region {
    uintptr_t start, end; /* page-aligned [start, end) registered */
    void *handle;         /* the netmod's registration */
    /* the cache's own */
    uint32_t refcount; /* holders (gets not yet put) */
    uint32_t flags;    /* R_* (rcache.c) */
    tern_list_t link;  /* LRU while cached and unused; else the detached list */
} tern_rcache_region_t;

typedef struct tern_rcache_params {
    const char *name; /* for messages: "verbs mlx5_0" */
    /* Register [addr, addr + len) (page-aligned); set *handle.  A status from
     * the resource range (TERN_ERR_NO_RESOURCE, _NO_MEMORY) makes the cache
     * drop its unused regions and try once more; any other error is the
     * get's.  Record the error with tern_error where it is decided. */
    tern_status_t (*reg)(void *arg, void *addr, size_t len, void **handle);
    void (*dereg)(void *arg, void *handle);
    void *arg;
    size_t max_regions; /* live registrations beyond which unused ones go (LRU); 0: no limit */
    size_t max_bytes;   /* the same for bytes registered; 0: no limit */
} tern_rcache_params_t;

typedef struct tern_rcache_stats {
    uint64_t hits, misses;
    uint64_t merged;       /* cached regions absorbed into a larger registration */
    uint64_t evicted;      /* unused regions dropped for the limits or a failed reg */
    uint64_t invalidated;  /* regions dropped because their memory went away */
    uint64_t uncached;     /* gets served by a registration of their own (no caching) */
    uint64_t regs, deregs; /* calls of the netmod's functions */
    size_t regions, bytes; /* live registrations (cached or held) and their bytes */
} tern_rcache_stats_t;

/* TERN_RCACHE: 1 (default) caches, 0 registers at every get. */
extern const tern_config_table_t tern_rcache_config_table;

/* A cache over p's functions (p is copied; p->name must outlive the cache).
 * TERN_ERR_INVALID_PARAM (no reg / dereg, bad TERN_RCACHE), _NO_MEMORY.
 * Without a memory monitor it still works, without caching. */
tern_status_t tern_rcache_create(const tern_rcache_params_t *p, tern_rcache_t **out);

/* A registration covering [addr, addr + len): a cached one (refcount + 1)
 * or a new one.  *region is valid until its tern_rcache_put.
 * TERN_ERR_INVALID_PARAM (len 0, wrapping), _NO_MEMORY, or reg's error. */
tern_status_t tern_rcache_get(tern_rcache_t *rc, const void *addr, size_t len,
                              tern_rcache_region_t **region);

/* Give back a region from tern_rcache_get. */
void tern_rcache_put(tern_rcache_t *rc, tern_rcache_region_t *region);

/* Drop every registration overlapping [addr, addr + len) (memory going
 * away): unused ones are deregistered now, those in use at their last put. */
void tern_rcache_invalidate(tern_rcache_t *rc, const void *addr, size_t len);

/* Apply the monitor's news now (get and put do it anyway): for the idle
 * path, so memory given back to the system is deregistered promptly.
 * Returns the regions dropped. */
size_t tern_rcache_progress(tern_rcache_t *rc);

/* Whether rc caches (a memory monitor runs and TERN_RCACHE is 1). */
bool tern_rcache_caching(const tern_rcache_t *rc);

void tern_rcache_get_stats(const tern_rcache_t *rc, tern_rcache_stats_t *stats);

/* Deregister everything and free rc.  Regions still held are a caller bug:
 * reported with a warning and deregistered too. */
void tern_rcache_destroy(tern_rcache_t *rc);

#endif
