/*
 * Unit test of the memory-registration cache (engine/rcache.h) over a fake
 * netmod that records every register / deregister and refuses to
 * deregister a registration the test still holds.
 *
 * Cache behaviour: hits and misses, overlapping and spanning requests
 * merged into one registration (page-touching regions kept apart), held
 * regions absorbed by a merge deregistered at their last put, refcounts,
 * LRU eviction under max_regions and max_bytes (never a held region), a
 * registration refused for lack of resources retried after eviction, an
 * explicit invalidate of a region in use (deregistered at its last put,
 * not before), TERN_RCACHE=0 and an invalid TERN_RCACHE.
 *
 * The memory monitor: free() of an 8 MiB malloc'd buffer (glibc mmaps it),
 * munmap, mremap moving or shrinking a region, madvise(MADV_DONTNEED), mmap
 * MAP_FIXED over a region, munmap of a region in use, and munmap by another
 * thread: each time the cache deregisters within 2 s, and a get right after
 * the unmap (no waiting) registers the new memory at the same address
 * afresh.  A fork child stops caching and never deregisters the parent's
 * registrations.  A child whose seccomp filter refuses userfaultfd checks
 * that the cache degrades to registering at every get.  Figures (hit / miss
 * cost, munmap of watched memory) are printed, never asserted.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <malloc.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/rcache.h"

#include "tests/unit/expect.h"

#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* ---- the fake netmod ------------------------------------------------------ */

/* Registrations live in a pool and are never reused, so a test can ask
 * after the fact whether one was deregistered. */
typedef struct fake {
    int live;
    int held; /* gets of it the test has not put */
    uintptr_t addr;
    size_t len;
} fake_t;

#define POOL 8192
static fake_t pool[POOL];
static long n_reg, n_dereg;
static long capacity = -1; /* live registrations the fake "NIC" takes; -1: any */

static tern_status_t fake_reg(void *arg, void *addr, size_t len, void **handle)
{
    (void)arg;
    if ((capacity >= 0 && n_reg - n_dereg >= capacity) || n_reg == POOL)
        return TERN_ERR_NO_RESOURCE;
    fake_t *f = &pool[n_reg++];
    *f = (fake_t){.live = 1, .addr = (uintptr_t)addr, .len = len};
    *handle = f;
    return TERN_OK;
}

static void fake_dereg(void *arg, void *handle)
{
    fake_t *f = handle;
    (void)arg;
    EXPECT(f->live, "deregistering %#lx+%zu twice", (unsigned long)f->addr, f->len);
    EXPECT(f->held == 0, "deregistered %#lx+%zu while the test holds it %d times",
           (unsigned long)f->addr, f->len, f->held);
    f->live = 0;
    n_dereg++;
}

/* Is registration h (a region's handle, kept: the region itself may be
 * freed by then) still registered? */
static int alive(const void *h)
{
    return ((const fake_t *)h)->live;
}

static size_t P; /* page size */

static tern_rcache_t *mk(size_t max_regions, size_t max_bytes)
{
    tern_rcache_params_t p = {.name = "test",
                              .reg = fake_reg,
                              .dereg = fake_dereg,
                              .max_regions = max_regions,
                              .max_bytes = max_bytes};
    tern_rcache_t *rc = NULL;
    tern_status_t st = tern_rcache_create(&p, &rc);
    EXPECT(st == TERN_OK && rc != NULL, "create: %s", tern_last_error());
    if (rc == NULL)
        exit(1);
    return rc;
}

static tern_rcache_region_t *get(tern_rcache_t *rc, const void *addr, size_t len)
{
    tern_rcache_region_t *r = NULL;
    tern_status_t st = tern_rcache_get(rc, addr, len, &r);
    EXPECT(st == TERN_OK, "get %p+%zu: %s", addr, len, tern_last_error());
    if (st != TERN_OK)
        exit(1);
    fake_t *f = r->handle;
    EXPECT(f->live && f->addr == r->start && f->len == r->end - r->start,
           "region %#lx-%#lx has a stale or mismatched handle", (unsigned long)r->start,
           (unsigned long)r->end);
    EXPECT(r->start <= (uintptr_t)addr && (uintptr_t)addr + len <= r->end && r->start % P == 0 &&
               r->end % P == 0,
           "region %#lx-%#lx does not cover %p+%zu page-aligned", (unsigned long)r->start,
           (unsigned long)r->end, addr, len);
    f->held++;
    return r;
}

static void put(tern_rcache_t *rc, tern_rcache_region_t *r)
{
    ((fake_t *)r->handle)->held--;
    tern_rcache_put(rc, r);
}

static tern_rcache_stats_t stats(tern_rcache_t *rc)
{
    tern_rcache_stats_t s;
    tern_rcache_get_stats(rc, &s);
    return s;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Poll the cache (bounded: 2 s) until the fake has seen `want` deregs. */
static int wait_deregs(tern_rcache_t *rc, long want)
{
    int polls = 0;
    for (uint64_t t0 = now_ns(); n_dereg < want && now_ns() - t0 < 2000000000ull; polls++) {
        tern_rcache_progress(rc);
        if (n_dereg < want)
            usleep(1000);
    }
    return polls;
}

/* An anonymous mapping (at `at` exactly when not NULL), touched unless
 * `quick` (a test re-mapping an address races the monitor: no delay). */
static char *map_at(void *at, size_t len, int quick)
{
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED_NOREPLACE : 0);
    char *m = mmap(at, len, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (m == MAP_FAILED || (at != NULL && m != at)) {
        fprintf(stderr, "mmap %p+%zu: %s\n", at, len, strerror(errno));
        exit(1);
    }
    if (!quick)
        memset(m, 1, len);
    return m;
}

static char *map(void *at, size_t len)
{
    return map_at(at, len, 0);
}

/* ---- the cache ------------------------------------------------------------ */

static void test_hit_miss_merge(void)
{
    tern_rcache_t *rc = mk(0, 0);
    char *m = map(NULL, 16 * P);
    long r0 = n_reg, d0 = n_dereg;

    tern_rcache_region_t *a = get(rc, m + 10, 100);
    EXPECT(n_reg == r0 + 1 && a->start == (uintptr_t)m && a->end == (uintptr_t)m + P,
           "first get: %ld regs, region %#lx-%#lx", n_reg - r0, (unsigned long)a->start,
           (unsigned long)a->end);
    tern_rcache_region_t *b = get(rc, m + 200, 300); /* same page: a hit */
    EXPECT(b == a && a->refcount == 2 && n_reg == r0 + 1, "same page: not a hit");
    put(rc, b);
    put(rc, a);
    EXPECT(n_dereg == d0, "put of a cached region deregistered it");

    /* crossing into page 1: one registration [0, 2P), the old one absorbed */
    a = get(rc, m + P - 10, 20);
    EXPECT(a->start == (uintptr_t)m && a->end == (uintptr_t)m + 2 * P && n_reg == r0 + 2 &&
               n_dereg == d0 + 1,
           "overlap: region %#lx-%#lx, %ld regs %ld deregs", (unsigned long)a->start,
           (unsigned long)a->end, n_reg - r0, n_dereg - d0);
    put(rc, a);

    /* held region absorbed by a merge: deregistered at its last put only */
    tern_rcache_region_t *h = get(rc, m, 2 * P);
    a = get(rc, m + P, 2 * P); /* [P, 3P) overlaps the held [0, 2P) */
    EXPECT(a != h && a->start == (uintptr_t)m && a->end == (uintptr_t)m + 3 * P,
           "merge with a held region: %#lx-%#lx", (unsigned long)a->start, (unsigned long)a->end);
    EXPECT(n_dereg == d0 + 1, "held region deregistered by the merge");
    put(rc, h);
    EXPECT(n_dereg == d0 + 2, "absorbed held region not deregistered at its last put");
    put(rc, a);
    b = get(rc, m + 2 * P, 10);
    EXPECT(b == a, "the merged region does not serve its last page");
    put(rc, b);

    /* regions touching at a page boundary stay apart... */
    a = get(rc, m + 8 * P, P);
    b = get(rc, m + 9 * P, P);
    EXPECT(a != b && a->end == b->start, "page-touching regions merged");
    put(rc, a);
    put(rc, b);
    /* ...until one request spans both: one registration of the three pages */
    long r1 = n_reg, d1 = n_dereg;
    tern_rcache_stats_t s0 = stats(rc);
    a = get(rc, m + 9 * P - 10, P);
    tern_rcache_stats_t s1 = stats(rc);
    EXPECT(a->start == (uintptr_t)m + 8 * P && a->end == (uintptr_t)m + 10 * P && n_reg == r1 + 1 &&
               n_dereg == d1 + 2 && s1.merged == s0.merged + 2,
           "spanning request: %#lx-%#lx, %ld regs %ld deregs, %lu merged", (unsigned long)a->start,
           (unsigned long)a->end, n_reg - r1, n_dereg - d1, (unsigned long)(s1.merged - s0.merged));
    put(rc, a);

    tern_rcache_stats_t s = stats(rc);
    EXPECT(s.hits == 3 && s.misses == 6 && s.regions == 2, "stats: %lu hits %lu misses %zu regions",
           (unsigned long)s.hits, (unsigned long)s.misses, s.regions);
    tern_rcache_region_t *bad;
    EXPECT(tern_rcache_get(rc, m, 0, &bad) == TERN_ERR_INVALID_PARAM, "len 0 accepted");
    EXPECT(tern_rcache_get(rc, (void *)(UINTPTR_MAX - 10), 20, &bad) == TERN_ERR_INVALID_PARAM,
           "wrapping range accepted");
    tern_rcache_destroy(rc);
    EXPECT(n_reg - n_dereg == 0, "destroy left %ld registrations", n_reg - n_dereg);
    munmap(m, 16 * P);
}

static void test_lru(void)
{
    char *m = map(NULL, 32 * P);
    tern_rcache_region_t *r[16];
    void *f[16];

    /* max_regions 3: disjoint pages 0, 2, 4, 6, 8, each put at once */
    tern_rcache_t *rc = mk(3, 0);
    for (int i = 0; i < 5; i++) {
        r[i] = get(rc, m + 2 * i * P, P);
        f[i] = r[i]->handle;
        put(rc, r[i]);
    }
    EXPECT(!alive(f[0]) && !alive(f[1]) && alive(f[2]) && alive(f[3]) && alive(f[4]) &&
               stats(rc).regions == 3 && stats(rc).evicted == 2,
           "max_regions 3 after 5: %zu regions, %lu evicted", stats(rc).regions,
           (unsigned long)stats(rc).evicted);
    /* a hit makes page 4 the most recent: page 10 then evicts page 6 */
    tern_rcache_region_t *h = get(rc, m + 4 * P, 10);
    EXPECT(h == r[2], "page 4 not a hit");
    put(rc, h);
    r[5] = get(rc, m + 10 * P, P);
    f[5] = r[5]->handle;
    put(rc, r[5]);
    EXPECT(alive(f[2]) && !alive(f[3]) && alive(f[4]) && alive(f[5]),
           "LRU order: the hit region or the wrong one was evicted");
    /* held regions are never evicted: 4 held with room for 3 */
    for (int i = 6; i < 10; i++) {
        r[i] = get(rc, m + 2 * i * P, P);
        f[i] = r[i]->handle;
    }
    EXPECT(alive(f[6]) && alive(f[7]) && alive(f[8]) && alive(f[9]) && !alive(f[2]) &&
               !alive(f[4]) && !alive(f[5]) && stats(rc).regions == 4,
           "held: %zu regions live, the unused ones should have gone", stats(rc).regions);
    for (int i = 6; i < 10; i++)
        put(rc, r[i]);
    EXPECT(!alive(f[6]) && alive(f[7]) && alive(f[8]) && alive(f[9]) && stats(rc).regions == 3,
           "after the puts: %zu regions (want the 3 most recent)", stats(rc).regions);
    tern_rcache_destroy(rc);

    /* max_bytes 4 pages: two-page regions, the third evicts the first */
    rc = mk(0, 4 * P);
    for (int i = 0; i < 3; i++) {
        r[i] = get(rc, m + 3 * i * P, 2 * P);
        f[i] = r[i]->handle;
        put(rc, r[i]);
    }
    EXPECT(!alive(f[0]) && alive(f[1]) && alive(f[2]) && stats(rc).bytes == 4 * P,
           "max_bytes: %zu bytes cached", stats(rc).bytes);
    /* one region larger than the limit: registered, and dropped at its put */
    h = get(rc, m + 16 * P, 8 * P);
    void *fh = h->handle;
    EXPECT(alive(fh) && !alive(f[1]) && !alive(f[2]),
           "a held region over max_bytes: the unused ones should make room");
    put(rc, h);
    EXPECT(!alive(fh) && stats(rc).bytes <= 4 * P, "over max_bytes after the put: %zu",
           stats(rc).bytes);
    tern_rcache_destroy(rc);
    EXPECT(n_reg == n_dereg, "destroy left %ld registrations", n_reg - n_dereg);
    munmap(m, 32 * P);
}

static void test_refcount_invalidate(void)
{
    tern_rcache_t *rc = mk(0, 0);
    char *m = map(NULL, 8 * P);

    tern_rcache_region_t *a = get(rc, m, 2 * P);
    tern_rcache_region_t *b = get(rc, m + P, 100);
    EXPECT(a == b && a->refcount == 2, "refcount %u after two gets", a->refcount);
    void *fa = a->handle;
    long d0 = n_dereg;
    tern_rcache_invalidate(rc, m + P + 5, 1); /* one byte of it */
    EXPECT(alive(fa) && n_dereg == d0, "invalidate deregistered a region in use");
    /* invalidated: the next get registers afresh, the old one stays */
    tern_rcache_region_t *c = get(rc, m, 2 * P);
    void *fc = c->handle;
    EXPECT(c != a && alive(fa), "get after invalidate reused the invalidated region");
    put(rc, a);
    EXPECT(alive(fa) && n_dereg == d0, "deregistered before the last put");
    put(rc, b);
    EXPECT(!alive(fa) && n_dereg == d0 + 1, "not deregistered at the last put");
    put(rc, c);
    EXPECT(alive(fc), "the fresh region was not cached");
    /* an unused region goes at once; a range beside it is left alone */
    tern_rcache_region_t *d = get(rc, m + 4 * P, P);
    void *fd = d->handle;
    put(rc, d);
    tern_rcache_invalidate(rc, m + 2 * P, 2 * P); /* [2P, 4P): touches neither */
    EXPECT(alive(fc) && alive(fd), "invalidate of a neighbouring range dropped a region");
    tern_rcache_invalidate(rc, m, 8 * P);
    EXPECT(!alive(fc) && !alive(fd) && stats(rc).regions == 0, "unused regions survived");
    tern_rcache_destroy(rc);
    munmap(m, 8 * P);
}

/* The fake NIC takes 2 registrations: the third get evicts the unused ones. */
static void test_resource_retry(void)
{
    tern_rcache_t *rc = mk(0, 0);
    char *m = map(NULL, 8 * P);
    capacity = 2;
    tern_rcache_region_t *r0 = get(rc, m, P), *r1 = get(rc, m + 2 * P, P);
    void *f0 = r0->handle, *f1 = r1->handle;
    put(rc, r0);
    put(rc, r1);
    tern_rcache_region_t *r2 = get(rc, m + 4 * P, P);
    EXPECT(!alive(f0) && !alive(f1) && alive(r2->handle) && stats(rc).evicted == 2,
           "NO_RESOURCE: the unused regions were not evicted for a retry");
    tern_rcache_region_t *r3 = get(rc, m + 6 * P, P), *r4 = NULL;
    EXPECT(tern_rcache_get(rc, m, P, &r4) == TERN_ERR_NO_RESOURCE,
           "a third registration with two held");
    capacity = -1;
    put(rc, r2);
    put(rc, r3);
    tern_rcache_destroy(rc);
    munmap(m, 8 * P);
}

/* TERN_RCACHE=0: every get registers, every last put deregisters. */
static void test_disabled(void)
{
    setenv("TERN_RCACHE", "0", 1);
    tern_rcache_t *rc = mk(0, 0);
    setenv("TERN_RCACHE", "2", 1);
    tern_rcache_t *bad = NULL;
    tern_rcache_params_t p = {.name = "bad", .reg = fake_reg, .dereg = fake_dereg};
    EXPECT(tern_rcache_create(&p, &bad) == TERN_ERR_INVALID_PARAM && bad == NULL,
           "TERN_RCACHE=2 accepted");
    unsetenv("TERN_RCACHE");
    char *m = map(NULL, 2 * P);
    EXPECT(!tern_rcache_caching(rc), "TERN_RCACHE=0 caches");
    long r0 = n_reg, d0 = n_dereg;
    tern_rcache_region_t *a = get(rc, m, 100), *b = get(rc, m, 100);
    EXPECT(a != b && n_reg == r0 + 2, "TERN_RCACHE=0: second get did not register");
    put(rc, a);
    put(rc, b);
    EXPECT(n_dereg == d0 + 2, "TERN_RCACHE=0: puts did not deregister");
    tern_rcache_destroy(rc);
    munmap(m, 2 * P);
}

/* ---- the memory monitor ---------------------------------------------------- */

/* h (of a region put, cached) must be deregistered once its memory went away; polls
 * the cache for at most 2 s.  Returns the polls it took. */
static int expect_dropped(tern_rcache_t *rc, void *h, const char *what)
{
    long want = n_dereg + alive(h);
    int polls = wait_deregs(rc, want);
    EXPECT(!alive(h), "%s: the registration outlived its memory (2 s)", what);
    return polls;
}

/* Get and put [addr, addr + len): cached, unused; returns its handle. */
static void *get_put(tern_rcache_t *rc, void *addr, size_t len)
{
    tern_rcache_region_t *r = get(rc, addr, len);
    void *h = r->handle;
    put(rc, r);
    return h;
}

/* A fresh get at addr must register again (no stale hit). */
static void expect_miss(tern_rcache_t *rc, void *addr, size_t len, const char *what)
{
    long r0 = n_reg;
    tern_rcache_region_t *r = get(rc, addr, len);
    EXPECT(n_reg == r0 + 1, "%s: a new buffer at %p got a stale registration", what, addr);
    put(rc, r);
}

static void test_free(tern_rcache_t *rc)
{
#ifdef UNDER_ASAN
    /* ASan's allocator keeps freed chunks in quarantine, still mapped: only
     * without one does free() unmap for the monitor to see */
    const char *o = getenv("ASAN_OPTIONS");
    if (o == NULL || strstr(o, "quarantine_size_mb=0") == NULL) {
        printf("rcache_test: free() under ASan skipped: the quarantine keeps the chunk "
               "mapped (ASAN_OPTIONS=quarantine_size_mb=0 runs it)\n");
        return;
    }
#endif
    const size_t len = 8u << 20;
    mallopt(M_MMAP_THRESHOLD, 1 << 20); /* fixed: glibc mmaps every 8 MiB chunk */
    char *b = malloc(len);
    EXPECT(b != NULL, "malloc");
    memset(b, 2, len);
    tern_rcache_region_t *r = get(rc, b, len);
    void *h = r->handle;
    put(rc, r);
    free(b);
    /* no waiting: the first get after free() must not hit */
    char *b2 = malloc(len);
    memset(b2, 3, len);
    printf("rcache_test: free(): new buffer %s\n", b2 == b ? "at the same address" : "elsewhere");
    expect_miss(rc, b2, len, "free()");
    EXPECT(!alive(h), "free(): old registration still alive after the next get");
    free(b2);
    tern_rcache_progress(rc);
}

static void test_munmap(tern_rcache_t *rc)
{
    const size_t len = 1u << 20;
    char *m = map(NULL, len);
    void *h = get_put(rc, m + 100, len - 200);
    munmap(m, len);
    map_at(m, len, 1); /* at once: the next get must not wait to be right */
    expect_miss(rc, m + 100, len - 200, "munmap");
    EXPECT(!alive(h), "munmap: the old registration survived the next get");
    /* the idle path alone drops it too, at its first poll */
    h = get_put(rc, m, len);
    munmap(m, len);
    int polls = expect_dropped(rc, h, "munmap");
    EXPECT(polls <= 1, "munmap: the drop took %d polls (the munmap should be visible at once)",
           polls);
}

static void test_mremap(tern_rcache_t *rc)
{
    const size_t len = 1u << 20;
    char *m = map(NULL, len);
    char *dst = mmap(NULL, 2 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *h = get_put(rc, m, len);
    char *moved = mremap(m, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
    EXPECT(moved == dst, "mremap: %s", strerror(errno));
    map_at(m, len, 1);
    expect_miss(rc, m, len, "mremap (move)");
    EXPECT(!alive(h), "mremap (move): the old registration survived the next get");
    /* shrinking unmaps the tail */
    h = get_put(rc, m, len);
    EXPECT(mremap(m, len, len / 2, 0) == m, "mremap shrink: %s", strerror(errno));
    expect_dropped(rc, h, "mremap (shrink)");
    munmap(m, len / 2);
    munmap(dst, 2 * len);
    tern_rcache_progress(rc);
}

static void test_madvise(tern_rcache_t *rc)
{
    const size_t len = 1u << 20;
    char *m = map(NULL, len);
    void *h = get_put(rc, m, len);
    EXPECT(madvise(m + len / 2, P, MADV_DONTNEED) == 0, "madvise: %s", strerror(errno));
    expect_dropped(rc, h, "madvise(MADV_DONTNEED)");
    m[len / 2] = 4; /* the dropped page comes back as a normal fault, no hang */
    expect_miss(rc, m, len, "madvise(MADV_DONTNEED)");

    h = get_put(rc, m, len);
    EXPECT(mmap(m, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == m,
           "mmap MAP_FIXED: %s", strerror(errno));
    expect_dropped(rc, h, "mmap(MAP_FIXED) over it");
    munmap(m, len);
    tern_rcache_progress(rc);
}

/* Unmapped while held: dropped from the cache, deregistered at the put. */
static void test_unmap_in_use(tern_rcache_t *rc)
{
    const size_t len = 1u << 20;
    char *m = map(NULL, len);
    tern_rcache_region_t *r = get(rc, m, len);
    void *h = r->handle;
    munmap(m, len);
    tern_rcache_progress(rc);
    EXPECT(alive(h), "munmap of a held region deregistered it before its put");
    map(m, len);
    tern_rcache_region_t *r2 = get(rc, m, len);
    EXPECT(r2 != r, "a held, unmapped region served the new memory");
    void *h2 = r2->handle;
    put(rc, r);
    EXPECT(!alive(h), "unmapped region not deregistered at its last put");
    put(rc, r2);
    EXPECT(alive(h2), "the new region was not cached");
    munmap(m, len);
    tern_rcache_progress(rc);
}

/* A fork child has no monitor: its cache stops caching and abandons the
 * parent's registrations (never deregistered by the child). */
static void test_fork(tern_rcache_t *rc)
{
    char *m = map(NULL, 4 * P);
    void *unused = get_put(rc, m, P);
    tern_rcache_region_t *held = get(rc, m + 2 * P, P);
    void *fheld = held->handle;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20);
        long r0 = n_reg, d0 = n_dereg;
        tern_rcache_region_t *r = get(rc, m, P);
        EXPECT(!tern_rcache_caching(rc) && n_reg == r0 + 1 && r->handle != unused,
               "fork child: the parent's cached registration served a get");
        put(rc, r);
        put(rc, held);
        EXPECT(n_dereg == d0 + 1 && alive(unused) && alive(fheld),
               "fork child: deregistered the parent's registrations (%ld deregs)", n_dereg - d0);
        tern_rcache_destroy(rc);
        _exit(failures ? 1 : 0);
    }
    int status = 0;
    EXPECT(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
               WEXITSTATUS(status) == 0,
           "the fork child failed (status %#x)", status);
    EXPECT(tern_rcache_caching(rc), "the parent stopped caching after a fork");
    long r0 = n_reg;
    put(rc, get(rc, m, P));
    EXPECT(n_reg == r0, "the parent lost its cached region to the child's fork");
    put(rc, held);
    munmap(m, 4 * P);
    tern_rcache_progress(rc);
}

/* Another thread unmaps the region and maps new memory at the same address
 * at once (in the same thread: a thread's exit may itself map memory, which
 * under ThreadSanitizer took the hole when the owner remapped it after the
 * join).  Returns NULL when something else still took the address. */
static void *unmapper(void *arg)
{
    munmap(arg, 1u << 16);
    void *m = mmap(arg, 1u << 16, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (m != MAP_FAILED && m != arg) { /* a kernel without MAP_FIXED_NOREPLACE */
        munmap(m, 1u << 16);
        m = MAP_FAILED;
    }
    return m == MAP_FAILED ? NULL : m;
}

/* Another thread unmaps and remaps; the owner's next get must miss. */
static void test_other_thread(tern_rcache_t *rc)
{
    int stale = 0, ran = 0;
    for (int i = 0; i < 50; i++) {
        char *m = map(NULL, 1u << 16);
        get_put(rc, m, 1u << 16);
        pthread_t t;
        void *again = NULL;
        if (pthread_create(&t, NULL, unmapper, m) != 0 || pthread_join(t, &again) != 0)
            exit(1);
        if (again == NULL) { /* the address was taken in between: not this test's case */
            tern_rcache_progress(rc);
            continue;
        }
        ran++;
        long r0 = n_reg;
        tern_rcache_region_t *r2 = get(rc, m, 1u << 16);
        stale += n_reg == r0;
        put(rc, r2);
        munmap(m, 1u << 16);
    }
    printf("rcache_test: munmap by another thread: %d of 50 remapped at the same address\n", ran);
    EXPECT(ran >= 10, "munmap by another thread: only %d of 50 rounds could remap the address", ran);
    EXPECT(stale == 0, "munmap by another thread: %d of %d stale hits", stale, ran);
    tern_rcache_progress(rc);
}

/* ---- no userfaultfd: a child whose seccomp filter refuses it ----------- */

#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

static void test_no_userfaultfd(void)
{
#ifndef TEST_AUDIT_ARCH
    printf("rcache_test: no seccomp test on this architecture\n");
#else
    printf("rcache_test: a child whose seccomp filter refuses userfaultfd "
           "(its warning is expected)\n");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20); /* bound the child */
        /* EPERM for userfaultfd(2) and for /dev/userfaultfd's USERFAULTFD_IOC_NEW */
        struct sock_filter f[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_userfaultfd, 3, 0),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 3),
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, USERFAULTFD_IOC_NEW, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
            fprintf(stderr, "seccomp: %s\n", strerror(errno));
            _exit(1);
        }
        tern_rcache_t *rc = mk(0, 0);
        char *m = map(NULL, 2 * P);
        EXPECT(!tern_rcache_caching(rc), "caching without userfaultfd");
        tern_rcache_region_t *a = get(rc, m, P), *b = get(rc, m, P);
        EXPECT(a != b && n_reg == 2, "no monitor: the second get did not register");
        put(rc, a);
        put(rc, b);
        EXPECT(n_dereg == 2, "no monitor: the puts did not deregister");
        tern_rcache_destroy(rc);
        _exit(failures ? 1 : 0);
    }
    int status = 0;
    EXPECT(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
               WEXITSTATUS(status) == 0,
           "the child without userfaultfd failed (status %#x)", status);
#endif
}

/* ---- costs: printed, never asserted --------------------------------------- */

static void costs(void)
{
    const int hits = 1000000, misses = 1000, unmaps = 200;
    tern_rcache_region_t *r;
    char *m = map(NULL, 2 * misses * P);
    double ns[2] = {0, 0}, hit_ns;

    tern_rcache_t *rc = mk(0, 0);
    put(rc, get(rc, m, 4096));
    uint64_t t0 = now_ns();
    for (int i = 0; i < hits; i++) {
        if (tern_rcache_get(rc, m + 64, 1024, &r) != TERN_OK)
            exit(1);
        tern_rcache_put(rc, r);
    }
    hit_ns = (double)(now_ns() - t0) / hits;
    tern_rcache_destroy(rc);

    /* a miss: watch (UFFDIO_REGISTER) + the fake reg + insert; then without
     * the monitor (TERN_RCACHE=0: the fake reg only) */
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 1)
            setenv("TERN_RCACHE", "0", 1);
        rc = mk(0, 0);
        unsetenv("TERN_RCACHE");
        t0 = now_ns();
        for (int i = 0; i < misses; i++) {
            if (tern_rcache_get(rc, m + 2 * (size_t)i * P, P, &r) != TERN_OK)
                exit(1);
            tern_rcache_put(rc, r);
        }
        ns[mode] = (double)(now_ns() - t0) / misses;
        tern_rcache_destroy(rc);
    }
    munmap(m, 2 * misses * P);

    /* munmap of 256 KiB, watched (a round trip through the monitor) or not */
    double un[2] = {0, 0};
    rc = mk(0, 0);
    for (int watched = 0; watched < 2; watched++) {
        uint64_t sum = 0;
        for (int i = 0; i < unmaps; i++) {
            char *u = map(NULL, 1u << 18);
            if (watched)
                put(rc, get(rc, u, 1u << 18));
            t0 = now_ns();
            munmap(u, 1u << 18);
            sum += now_ns() - t0;
            tern_rcache_progress(rc);
        }
        un[watched] = (double)sum / unmaps / 1000.0;
    }
    tern_rcache_destroy(rc);
    printf("rcache_test: get+put hit %.1f ns; miss (watch + reg + put) %.0f ns, "
           "without monitor %.0f ns; munmap 256 KiB %.1f us, watched %.1f us\n",
           hit_ns, ns[0], ns[1], un[0], un[1]);
}

int main(void)
{
    P = (size_t)sysconf(_SC_PAGESIZE);
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_no_userfaultfd(); /* first: forks before this process starts a monitor */
    test_disabled();

    tern_rcache_t *rc = mk(0, 0);
    if (!tern_rcache_caching(rc)) {
        printf("rcache_test: SKIP: no memory monitor here: %s\n", tern_last_error());
        tern_rcache_destroy(rc);
        return failures ? 1 : 77;
    }
    test_hit_miss_merge();
    test_lru();
    test_refcount_invalidate();
    test_resource_retry();

    test_free(rc);
    test_munmap(rc);
    test_mremap(rc);
    test_madvise(rc);
    test_unmap_in_use(rc);
    test_fork(rc);
    test_other_thread(rc);
    tern_rcache_stats_t s = stats(rc);
    printf("rcache_test: monitor cases: %lu invalidated, %lu uncached\n",
           (unsigned long)s.invalidated, (unsigned long)s.uncached);
    EXPECT(s.uncached == 0, "%lu gets were not cached (unwatchable memory?)",
           (unsigned long)s.uncached);
    tern_rcache_destroy(rc);

    costs();
    EXPECT(n_reg == n_dereg, "%ld registrations left at the end", n_reg - n_dereg);
    if (failures == 0)
        printf("rcache_test: ok\n");
    return failures ? 1 : 0;
}
