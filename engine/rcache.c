/*
 * The memory-registration cache (engine/rcache.h): a sorted array of
 * non-overlapping regions, an LRU list of unused ones, and the monitor's
 * ring drained on every get / put.
 *
 * A region is in one of three states:
 *   cached, unused   in the array (R_CACHED), on rc->lru, refcount 0
 *   cached, held     in the array (R_CACHED), on no list, refcount > 0
 *   detached, held   not in the array, on rc->detached, refcount > 0
 *                    (invalidated, absorbed by a merge, or never cached)
 * and is deregistered and freed when it would be detached with refcount 0.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/log.h"
#include "engine/rcache.h"
#include "engine/rcache_monitor.h"

enum {
    R_CACHED = 1u << 0,    /* in the sorted array */
    R_ABANDONED = 1u << 1, /* fork child: the parent's registration, never deregistered here */
};

struct tern_rcache {
    /* the lookup: starts[i] == regs[i]->start, ascending, regions disjoint */
    uintptr_t *starts;
    tern_rcache_region_t **regs;
    size_t n, cap;
    bool caching;
    uint64_t cursor; /* monitor events seen */
    uintptr_t pgmask;
    tern_list_t lru;      /* cached, unused: least recently used first */
    tern_list_t detached; /* held, not cached */
    tern_rcache_params_t p;
    tern_rcache_stats_t st;
};

typedef struct tern_rcache_config {
    uint64_t enable;
} tern_rcache_config_t;

static const tern_config_entry_t rcache_entries[] = {
    TERN_CFG_ENTRY_UINT("TERN_RCACHE", tern_rcache_config_t, enable, 1, 0, 1,
                        "memory-registration cache: 1 caches registrations (needs the "
                        "userfaultfd memory monitor, else as 0); 0 registers at every get "
                        "and deregisters at every last put"),
};

const tern_config_table_t tern_rcache_config_table = {
    .owner = "rcache",
    .entries = rcache_entries,
    .num_entries = sizeof(rcache_entries) / sizeof(rcache_entries[0]),
    .struct_size = sizeof(tern_rcache_config_t),
};
TERN_CONFIG_REGISTER(tern_rcache_config_table)

static atomic_bool warned;

static void warn_once(const char *name, const char *why)
{
    if (!atomic_exchange(&warned, true))
        tern_warn("rcache %s: not caching memory registrations (%s): every get registers, "
                  "every last put deregisters",
                  name, why);
}

/* Index of the first region starting above a (n when none); branch-free. */
static inline size_t upper(const tern_rcache_t *rc, uintptr_t a)
{
    const uintptr_t *base = rc->starts;
    size_t n = rc->n;
    if (n == 0)
        return 0;
    while (n > 1) {
        size_t half = n / 2;
        base = base[half] <= a ? base + half : base;
        n -= half;
    }
    return (size_t)(base - rc->starts) + (*base <= a);
}

/* Cached regions overlapping [s, e): indices [*first, *last). */
static void overlapping(const tern_rcache_t *rc, uintptr_t s, uintptr_t e, size_t *first,
                        size_t *last)
{
    size_t k = upper(rc, s);
    *first = k > 0 && rc->regs[k - 1]->end > s ? k - 1 : k;
    while (k < rc->n && rc->starts[k] < e)
        k++;
    *last = k;
}

static bool over_limits(const tern_rcache_t *rc)
{
    return (rc->p.max_regions != 0 && rc->st.regions > rc->p.max_regions) ||
           (rc->p.max_bytes != 0 && rc->st.bytes > rc->p.max_bytes);
}

static void region_free(tern_rcache_t *rc, tern_rcache_region_t *r)
{
    if (!(r->flags & R_ABANDONED)) {
        rc->p.dereg(rc->p.arg, r->handle);
        rc->st.deregs++;
    }
    rc->st.regions--;
    rc->st.bytes -= r->end - r->start;
    free(r);
}

/* Take regions [first, last) out of the array: unused ones are
 * deregistered (or abandoned), held ones detached. */
static void uncache(tern_rcache_t *rc, size_t first, size_t last, uint32_t flags)
{
    if (first == last)
        return;
    for (size_t i = first; i < last; i++) {
        tern_rcache_region_t *r = rc->regs[i];
        r->flags = (r->flags & ~R_CACHED) | flags;
        if (r->refcount == 0) {
            tern_list_del(&r->link);
            region_free(rc, r);
        } else {
            tern_list_push_tail(&rc->detached, &r->link);
        }
    }
    memmove(&rc->starts[first], &rc->starts[last], (rc->n - last) * sizeof(rc->starts[0]));
    memmove(&rc->regs[first], &rc->regs[last], (rc->n - last) * sizeof(rc->regs[0]));
    rc->n -= last - first;
}

static void invalidate_range(tern_rcache_t *rc, uintptr_t s, uintptr_t e)
{
    size_t first, last;
    overlapping(rc, s, e, &first, &last);
    rc->st.invalidated += last - first;
    uncache(rc, first, last, 0);
}

static void on_unmapped(void *arg, uintptr_t s, uintptr_t e)
{
    invalidate_range(arg, s, e);
}

/* Deregister unused regions, least recently used first, while over the
 * limits (all of them when `all`). */
static void evict(tern_rcache_t *rc, bool all)
{
    while (!tern_list_empty(&rc->lru) && (all || over_limits(rc))) {
        tern_rcache_region_t *r = TERN_CONTAINER_OF(rc->lru.next, tern_rcache_region_t, link);
        size_t i = upper(rc, r->start) - 1; /* regs[i] == r: starts are unique */
        rc->st.evicted++;
        uncache(rc, i, i + 1, 0);
    }
}

/* The monitor has news (or is gone): apply it. */
static void rcache_sync(tern_rcache_t *rc)
{
    switch (tern_memmon_drain(&rc->cursor, on_unmapped, rc)) {
    case TERN_MEMMON_DRAINED:
        return;
    case TERN_MEMMON_OVERFLOW:
        invalidate_range(rc, 0, UINTPTR_MAX);
        return;
    case TERN_MEMMON_STOPPED:
        invalidate_range(rc, 0, UINTPTR_MAX);
        rc->caching = false;
        warn_once(rc->p.name, "the memory monitor stopped");
        return;
    case TERN_MEMMON_FORKED: /* the parent's registrations: drop, never deregister */
        for (tern_list_t *e = rc->detached.next; e != &rc->detached; e = e->next) {
            tern_rcache_region_t *r = TERN_CONTAINER_OF(e, tern_rcache_region_t, link);
            r->flags |= R_ABANDONED;
        }
        uncache(rc, 0, rc->n, R_ABANDONED);
        rc->caching = false;
        return;
    }
}

static bool insert(tern_rcache_t *rc, size_t i, tern_rcache_region_t *r)
{
    if (rc->n == rc->cap) {
        size_t cap = rc->cap ? 2 * rc->cap : 64;
        uintptr_t *starts = realloc(rc->starts, cap * sizeof(*starts));
        if (starts == NULL)
            return false;
        rc->starts = starts;
        tern_rcache_region_t **regs = realloc(rc->regs, cap * sizeof(*regs));
        if (regs == NULL)
            return false;
        rc->regs = regs;
        rc->cap = cap;
    }
    memmove(&rc->starts[i + 1], &rc->starts[i], (rc->n - i) * sizeof(rc->starts[0]));
    memmove(&rc->regs[i + 1], &rc->regs[i], (rc->n - i) * sizeof(rc->regs[0]));
    rc->starts[i] = r->start;
    rc->regs[i] = r;
    rc->n++;
    r->flags |= R_CACHED;
    return true;
}

/* A new registration of [s, e), held once; retried once after dropping
 * every unused region when the netmod ran short. */
static tern_status_t region_new(tern_rcache_t *rc, uintptr_t s, uintptr_t e,
                                tern_rcache_region_t **out)
{
    tern_rcache_region_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "rcache %s: no memory for a region", rc->p.name);
    tern_status_t st = rc->p.reg(rc->p.arg, (void *)s, e - s, &r->handle);
    if (st != TERN_OK && tern_status_is_resource_error(st) && !tern_list_empty(&rc->lru)) {
        evict(rc, true);
        st = rc->p.reg(rc->p.arg, (void *)s, e - s, &r->handle);
    }
    if (st != TERN_OK) {
        free(r);
        return st;
    }
    rc->st.regs++;
    rc->st.regions++;
    rc->st.bytes += e - s;
    r->start = s;
    r->end = e;
    r->refcount = 1;
    tern_list_init(&r->link);
    *out = r;
    return TERN_OK;
}

/* Registered for this get only: deregistered at its last put. */
static tern_status_t get_uncached(tern_rcache_t *rc, uintptr_t s, uintptr_t e,
                                  tern_rcache_region_t **out)
{
    tern_status_t st = region_new(rc, s, e, out);
    if (st != TERN_OK)
        return st;
    rc->st.uncached++;
    tern_list_push_tail(&rc->detached, &(*out)->link);
    return TERN_OK;
}

static tern_status_t rcache_miss(tern_rcache_t *rc, uintptr_t a, size_t len,
                                 tern_rcache_region_t **out)
{
    uintptr_t s = a & ~rc->pgmask, last_byte = a + len - 1;
    if (last_byte > UINTPTR_MAX - rc->pgmask)
        return tern_error(TERN_ERR_INVALID_PARAM, "rcache %s: range %#lx+%zu wraps", rc->p.name,
                          (unsigned long)a, len);
    uintptr_t e = (last_byte | rc->pgmask) + 1;
    rc->st.misses++;
    if (!rc->caching)
        return get_uncached(rc, s, e, out);

    /* one registration for the request and every cached region it overlaps */
    size_t first, last;
    overlapping(rc, s, e, &first, &last);
    uintptr_t ms = s, me = e;
    if (last > first) {
        ms = rc->regs[first]->start < s ? rc->regs[first]->start : s;
        me = rc->regs[last - 1]->end > e ? rc->regs[last - 1]->end : e;
    }
    if (!tern_memmon_watch(ms, me))
        return get_uncached(rc, s, e, out); /* its unmapping would go unseen */
    tern_rcache_region_t *r;
    tern_status_t st = region_new(rc, ms, me, &r);
    if (st != TERN_OK)
        return last > first ? get_uncached(rc, s, e, out) : st;
    /* region_new may have evicted some of them: the rest are still inside [ms, me) */
    overlapping(rc, s, e, &first, &last);
    rc->st.merged += last - first;
    uncache(rc, first, last, 0);
    if (!insert(rc, first, r)) {
        tern_list_push_tail(&rc->detached, &r->link); /* still valid, just not cached */
        rc->st.uncached++;
    }
    evict(rc, false);
    *out = r;
    return TERN_OK;
}

tern_status_t tern_rcache_get(tern_rcache_t *rc, const void *addr, size_t len,
                              tern_rcache_region_t **region)
{
    uintptr_t a = (uintptr_t)addr;
    if (TERN_UNLIKELY(len == 0 || a + len < a))
        return tern_error(TERN_ERR_INVALID_PARAM, "rcache %s: bad range %p+%zu", rc->p.name, addr,
                          len);
    if (TERN_LIKELY(rc->caching)) {
        if (TERN_UNLIKELY(tern_memmon_pending(rc->cursor)))
            rcache_sync(rc);
        size_t i = upper(rc, a);
        if (TERN_LIKELY(i > 0)) {
            tern_rcache_region_t *r = rc->regs[i - 1];
            if (a + len <= r->end) {
                if (r->refcount++ == 0)
                    tern_list_del(&r->link);
                rc->st.hits++;
                *region = r;
                return TERN_OK;
            }
        }
    }
    return rcache_miss(rc, a, len, region);
}

void tern_rcache_put(tern_rcache_t *rc, tern_rcache_region_t *r)
{
    if (rc->caching && TERN_UNLIKELY(tern_memmon_pending(rc->cursor)))
        rcache_sync(rc);
    if (--r->refcount != 0)
        return;
    if (r->flags & R_CACHED) {
        tern_list_push_tail(&rc->lru, &r->link);
        if (TERN_UNLIKELY(over_limits(rc)))
            evict(rc, false);
    } else {
        tern_list_del(&r->link);
        region_free(rc, r);
    }
}

void tern_rcache_invalidate(tern_rcache_t *rc, const void *addr, size_t len)
{
    uintptr_t a = (uintptr_t)addr;
    if (len == 0)
        return;
    invalidate_range(rc, a, a + len < a ? UINTPTR_MAX : a + len);
}

size_t tern_rcache_progress(tern_rcache_t *rc)
{
    uint64_t before = rc->st.invalidated;
    if (rc->caching && tern_memmon_pending(rc->cursor))
        rcache_sync(rc);
    return (size_t)(rc->st.invalidated - before);
}

bool tern_rcache_caching(const tern_rcache_t *rc)
{
    return rc->caching;
}

void tern_rcache_get_stats(const tern_rcache_t *rc, tern_rcache_stats_t *stats)
{
    *stats = rc->st;
}

tern_status_t tern_rcache_create(const tern_rcache_params_t *p, tern_rcache_t **out)
{
    if (p == NULL || p->reg == NULL || p->dereg == NULL || out == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "rcache: a register and a deregister function are required");
    tern_rcache_config_t cfg;
    tern_status_t st = tern_config_load_table(&tern_rcache_config_table, &cfg, NULL);
    if (st != TERN_OK)
        return st;
    tern_rcache_t *rc = calloc(1, sizeof(*rc));
    if (rc == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "rcache %s: no memory", p->name ? p->name : "");
    rc->p = *p;
    if (rc->p.name == NULL)
        rc->p.name = "(unnamed)";
    rc->pgmask = (uintptr_t)sysconf(_SC_PAGESIZE) - 1;
    tern_list_init(&rc->lru);
    tern_list_init(&rc->detached);
    if (cfg.enable) {
        if (tern_memmon_start() == TERN_OK) {
            rc->caching = true;
            rc->cursor = tern_memmon_cursor();
        } else {
            warn_once(rc->p.name, tern_last_error());
        }
    }
    *out = rc;
    return TERN_OK;
}

void tern_rcache_destroy(tern_rcache_t *rc)
{
    if (rc == NULL)
        return;
    size_t held = 0;
    for (size_t i = 0; i < rc->n; i++)
        held += rc->regs[i]->refcount != 0;
    for (tern_list_t *e = rc->detached.next; e != &rc->detached; e = e->next)
        held++;
    if (held != 0)
        tern_warn("rcache %s: destroyed with %zu regions still held", rc->p.name, held);
    uncache(rc, 0, rc->n, 0);
    tern_list_t *e;
    while ((e = tern_list_pop_head(&rc->detached)) != NULL)
        region_free(rc, TERN_CONTAINER_OF(e, tern_rcache_region_t, link));
    free(rc->starts);
    free(rc->regs);
    free(rc);
}
