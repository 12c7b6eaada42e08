/*
 * The one-sided cases about paths (include/tern/rma.h): a random soak of
 * puts, gets and atomics checked against a shadow copy, direct access to
 * allocated regions on one host and the same-host copy into created ones
 * (counted), and completion through the CQ.
 */
#include <stdio.h>
#include <unistd.h>

#include "tests/engine/cases_rma.h"

/* xorshift64* */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

#define LANE 8192 /* each rank's lane in every rank's region */

/* Random puts, gets and atomics (TERN_TEST_RMA_OPS per rank, 4000 by
 * default; TERN_TEST_RMA_SEED varies them) into every rank's region, each rank in a lane of its own there,
 * checked against a shadow copy of its lanes: a get reads what the shadow
 * says (after a flush: puts and gets are not ordered), a fetching atomic
 * fetches it; at the end every lane is read back.  Reports the counts. */
static int soak(th_t *t, unsigned extra);

int case_rma_soak(th_t *t)
{
    return soak(t, 0);
}

/* The same on regions whose atomics go through the device
 * (TERN_REGION_ATOMIC_DEVICE: the soak's atomics are 8-byte fetch-adds). */
int case_rma_soak_device(th_t *t)
{
    return soak(t, TERN_REGION_ATOMIC_DEVICE);
}

static int soak(th_t *t, unsigned extra)
{
    const char *e = getenv("TERN_TEST_RMA_OPS");
    long ops = e != NULL ? atol(e) : 4000;
    win_t w;
    if (win_open(t, &w, (size_t)t->size * LANE, TERN_REGION_READ | TERN_REGION_WRITE | extra, 0))
        return -1;
    uint8_t *shadow = calloc((size_t)t->size, LANE); /* my lane at rank r: shadow + r * LANE */
    uint8_t *buf = malloc(LANE), *got = malloc(LANE);
    const char *sd = getenv("TERN_TEST_RMA_SEED");
    uint64_t seed = 0x9E3779B97F4A7C15ull * (uint64_t)(t->rank + 1) +
                    (sd != NULL ? strtoull(sd, NULL, 10) * 0xBF58476D1CE4E5B9ull : 0);
    if (seed == 0)
        seed = 1; /* xorshift's one fixed point */
    long corrupt = 0, lost = 0, n_put = 0, n_get = 0, n_amo = 0;
    for (long i = 0; i < ops; i++) {
        int peer = (int)(rnd(&seed) % (uint64_t)t->size);
        uint8_t *sh = shadow + (size_t)peer * LANE;
        uint64_t lane = base_of(&w, peer) + (uint64_t)t->rank * LANE;
        unsigned kind = (unsigned)(rnd(&seed) % 8);
        tern_request_t *r = NULL;
        tern_status_t st;
        if (kind < 4) { /* put */
            size_t len = 1 + rnd(&seed) % (kind == 0 ? LANE : 256);
            size_t off = rnd(&seed) % (LANE - len + 1);
            for (size_t j = 0; j < len; j++)
                buf[j] = (uint8_t)rnd(&seed);
            st = tern_put(t->w, buf, len, w.keys[peer], lane + off, NULL, &r);
            if (st == TERN_INPROGRESS)
                st = tern_wait(t->w, r, NULL);
            memcpy(sh + off, buf, len);
            n_put++;
        } else if (kind < 6) { /* get, after a flush */
            size_t len = 1 + rnd(&seed) % 512;
            size_t off = rnd(&seed) % (LANE - len + 1);
            flush(t, peer);
            st = tern_get(t->w, got, len, w.keys[peer], lane + off, NULL, &r);
            if (st == TERN_INPROGRESS)
                st = tern_wait(t->w, r, NULL);
            if (st == TERN_OK && memcmp(got, sh + off, len) != 0)
                corrupt++;
            n_get++;
        } else { /* a fetching add on an aligned word of the lane */
            size_t off = (rnd(&seed) % (LANE / 8)) * 8;
            uint64_t add = rnd(&seed), old = 0, want;
            memcpy(&want, sh + off, 8);
            st = tern_atomic(t->w, TERN_AMO_ADD, 8, add, 0, &old, w.keys[peer], lane + off, NULL,
                             &r);
            if (st == TERN_INPROGRESS)
                st = tern_wait(t->w, r, NULL);
            if (st == TERN_OK && old != want)
                corrupt++;
            want += add;
            memcpy(sh + off, &want, 8);
            n_amo++;
        }
        if (st != TERN_OK) {
            lost++;
            CHECK(t, 0, "operation %ld: %s", i, tern_strerror(st));
        }
    }
    flush(t, TERN_ANY_SOURCE);
    for (int p = 0; p < t->size; p++) {
        tern_request_t *r = NULL;
        uint64_t lane = base_of(&w, p) + (uint64_t)t->rank * LANE;
        done(t, tern_get(t->w, got, LANE, w.keys[p], lane, NULL, &r), &r, "final get");
        if (memcmp(got, shadow + (size_t)p * LANE, LANE) != 0)
            corrupt++;
    }
    CHECK(t, corrupt == 0 && lost == 0, "%ld corrupt, %ld lost", corrupt, lost);
    printf("rma_soak: rank %d: %ld operations (%ld put, %ld get, %ld atomic): %ld lost, %ld "
           "corrupt\n",
           t->rank, ops, n_put, n_get, n_amo, lost, corrupt);
    /* a fault shim's work, when one is on (dpdk's TERN_DPDK_FAULTS), and
     * how the operations went (the netmod's own path: rma.native) */
    tern_counter_t c[128];
    int nc = tern_worker_counters(t->w, c, 128);
    for (int i = 0; i < nc && i < 128; i++)
        if (strstr(c[i].name, ".fault_") != NULL || strcmp(c[i].name, "rma.native") == 0 ||
            strcmp(c[i].name, "rma.sent") == 0 || strcmp(c[i].name, "rma.cma") == 0 ||
            strcmp(c[i].name, "verbs.amo_posts") == 0)
            printf("rma_soak: rank %d: %s=%llu\n", t->rank, c[i].name,
                   (unsigned long long)c[i].value);
    fflush(stdout);
    free(shadow);
    free(buf);
    free(got);
    win_close(t, &w);
    return 0;
}


/* This process's host as the engine tells hosts apart (kernel boot id,
 * pid and network namespaces): network namespaces stand for hosts in the
 * multi-node tests. */
static void host_of(char *out, size_t len)
{
    char boot[64] = "", net[64] = "", pid[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f != NULL) {
        if (fgets(boot, sizeof(boot), f) == NULL)
            boot[0] = '\0';
        fclose(f);
    }
    ssize_t n = readlink("/proc/self/ns/net", net, sizeof(net) - 1);
    net[n > 0 ? n : 0] = '\0';
    n = readlink("/proc/self/ns/pid", pid, sizeof(pid) - 1);
    pid[n > 0 ? n : 0] = '\0';
    snprintf(out, len, "%s/%s/%s", boot, net, pid);
}

/* Allocated regions on one host: every key maps its region (unless
 * TERN_RMA_MAP=0), and operations on it are direct (counted so, no message
 * sent), visible through the mapping at the target and here. */
/* Which ranks share this host (same[p]: 1), every rank calling; the
 * count. */
static int same_host(th_t *t, char *same)
{
    char mine_host[256], *hosts = calloc((size_t)t->size, 256);
    host_of(mine_host, sizeof(mine_host));
    for (int p = 0; p < t->size; p++) {
        tern_request_t *r = NULL;
        tern_recv_info_t info;
        tern_status_t st = tern_irecv(t->w, hosts + 256 * p, 256, p, KEY_TAG + 2, KEY_SPACE,
                                      &info, &r);
        CHECK_ST(t, tern_send(t->w, mine_host, strlen(mine_host) + 1, p, KEY_TAG + 2, KEY_SPACE),
                 TERN_OK);
        if (st == TERN_INPROGRESS)
            tern_wait(t->w, r, NULL);
    }
    int nsame = 0;
    for (int p = 0; p < t->size; p++)
        nsame += same[p] = strcmp(hosts + 256 * p, mine_host) == 0;
    free(hosts);
    return nsame;
}

/* Does TERN_CMA serve the VCs of this job's ranks (engine/cma.h)? */
static int cma_serves_ranks(void)
{
    const char *c = getenv("TERN_CMA");
    return c == NULL || c[0] == '\0' || strcmp(c, "all") == 0;
}

/* The smallest put or get the same-host copy takes: TERN_RMA_CMA_THRESHOLD
 * (plain bytes in the tests), else the netmod's own (shm: 8 KiB, the
 * others: every one; engine/netmod.h, rma_cma_threshold). */
static size_t rma_cma_threshold(void)
{
    const char *v = getenv("TERN_RMA_CMA_THRESHOLD"), *nm = getenv("TERN_TEST_NETMOD");
    if (v != NULL && v[0] != '\0' && strcmp(v, "auto") != 0)
        return (size_t)strtoull(v, NULL, 0);
    return nm == NULL || strcmp(nm, "shm") == 0 ? 8192 : 0;
}

int case_rma_direct(th_t *t)
{
    const char *m = getenv("TERN_RMA_MAP");
    int map = m == NULL || strcmp(m, "0") != 0;
    /* which ranks share this host: they map each other's regions */
    char *same = calloc((size_t)t->size, 1);
    int nsame = same_host(t, same);
    rma_alloc_mode = 1;
    win_t w;
    int rc = win_open(t, &w, 4096, TERN_REGION_READ | TERN_REGION_WRITE, 0);
    rma_alloc_mode = 0;
    if (rc)
        return -1;
    for (int p = 0; p < t->size; p++) {
        uint8_t *local = tern_key_local(w.keys[p]);
        int want = p == t->rank || (map && same[p]);
        CHECK(t, (local != NULL) == want, "rank %d's key: mapped %p, expected %s", p,
              (void *)local, want ? "mapped" : "not mapped");
    }
    int ndirect = map ? nsame : 1;
    /* not mapped, on this host: puts and gets by the same-host copy */
    int ncma = !map && cma_serves_ranks() && rma_cma_threshold() <= 8 ? nsame - 1 : 0;
    free(same);
    int64_t direct = rma_counter(t->w, "rma.direct"), sent = rma_counter(t->w, "rma.sent");
    int64_t native = rma_counter(t->w, "rma.native"), cma = rma_counter(t->w, "rma.cma");
    uint64_t mine = 8 * (uint64_t)t->rank;
    for (int p = 0; p < t->size; p++) {
        uint64_t v = 0x1000 + (uint64_t)t->rank, got = 0, old = 0;
        int64_t one = 1;
        tern_request_t *r = NULL;
        done(t, tern_put(t->w, &v, 8, w.keys[p], base_of(&w, p) + mine, NULL, &r), &r, "put");
        done(t, tern_get(t->w, &got, 8, w.keys[p], base_of(&w, p) + mine, NULL, &r), &r, "get");
        CHECK(t, got == v, "rank %d: got %llx", p, (unsigned long long)got);
        done(t, tern_atomic(t->w, TERN_AMO_ADD, 8, 1, 0, &old, w.keys[p], base_of(&w, p) + 1024,
                            NULL, &r),
             &r, "atomic");
        done(t, tern_accumulate(t->w, TERN_ACC_SUM, TERN_DT_INT64, &one, 1, NULL, w.keys[p],
                                base_of(&w, p) + 1032, NULL, &r),
             &r, "accumulate");
    }
    flush(t, TERN_ANY_SOURCE);
    /* the others: sent as packets, or posted by the netmod (verbs: put, get) */
    int64_t d = rma_counter(t->w, "rma.direct") - direct, s = rma_counter(t->w, "rma.sent") - sent;
    s += rma_counter(t->w, "rma.native") - native;
    int64_t cp = rma_counter(t->w, "rma.cma") - cma;
    CHECK(t, d == 4 * (int64_t)ndirect && cp == 2 * (int64_t)ncma &&
                 s + cp == 4 * (int64_t)(t->size - ndirect),
          "%lld direct, %lld copied, %lld sent or posted operations (%d ranks reached directly, "
          "%d by the copy)",
          (long long)d, (long long)cp, (long long)s, ndirect, ncma);
    th_barrier(t);
    for (int p = 0; p < t->size; p++) {
        uint64_t v;
        memcpy(&v, w.mem + 8 * p, 8);
        CHECK(t, v == 0x1000 + (uint64_t)p, "rank %d's put: %llx", p, (unsigned long long)v);
    }
    uint64_t a, c;
    memcpy(&a, w.mem + 1024, 8);
    memcpy(&c, w.mem + 1032, 8);
    CHECK(t, a == (uint64_t)t->size && c == (uint64_t)t->size, "atomics %llu, accumulates %llu",
          (unsigned long long)a, (unsigned long long)c);
    win_close(t, &w);
    return 0;
}

/* Created regions of the peers on this host: puts and gets go by the
 * same-host copy (rma.cma) where TERN_CMA serves the VC; the data is right
 * both ways, contiguous and iovec, 1 B .. 1 MiB; atomics still go to the
 * target; a destroyed region's key is refused and its memory unchanged.
 * TERN_TEST_RMA_CMA=1: every same-host peer's puts and gets from the
 * threshold up must have been copied (the others not); 0: none may have
 * been (the copy off or refused). */
#define CMA_LEN (1u << 20)
int case_rma_cma(th_t *t)
{
    const char *e = getenv("TERN_TEST_RMA_CMA");
    int expect = e != NULL ? atoi(e) : -1;
    char *same = calloc((size_t)t->size, 1);
    same_host(t, same);
    win_t w, gone;
    if (win_open(t, &w, CMA_LEN, TERN_REGION_READ | TERN_REGION_WRITE, 0) ||
        win_open(t, &gone, 4096, TERN_REGION_READ | TERN_REGION_WRITE, 0x5A))
        return -1;
    /* each rank writes its slice of every peer's region: sizes 1 .. 1 MiB / size */
    size_t slice = CMA_LEN / (size_t)t->size, nops = 0, ncopy = 0, thr = rma_cma_threshold();
    uint8_t *src = malloc(slice), *back = malloc(slice);
    int64_t cma0 = rma_counter(t->w, "rma.cma");
    for (int p = 0; p < t->size; p++) {
        uint64_t at = base_of(&w, p) + slice * (size_t)t->rank;
        for (size_t len = 1; len <= slice; len = len * 8 + 3) {
            for (size_t i = 0; i < len; i++)
                src[i] = (uint8_t)(i * 7 + len + (size_t)p * 31 + (size_t)t->rank);
            tern_request_t *r = NULL;
            done(t, tern_put(t->w, src, len, w.keys[p], at, NULL, &r), &r, "put");
            memset(back, 0, len);
            done(t, tern_get(t->w, back, len, w.keys[p], at, NULL, &r), &r, "get");
            CHECK(t, memcmp(src, back, len) == 0, "rank %d: %zu bytes read back differ", p, len);
            nops += 2;
            ncopy += p != t->rank && same[p] && len >= thr ? 2 : 0;
        }
        /* iovecs on the local side: three pieces, read back as two */
        struct iovec v[3] = {{src, 5}, {src + 100, 4000}, {src + 9000, 11}};
        struct iovec b[2] = {{back, 4000}, {back + 8000, 16}};
        tern_request_t *r = NULL;
        done(t, tern_putv(t->w, v, 3, w.keys[p], at, NULL, &r), &r, "putv");
        done(t, tern_getv(t->w, b, 2, w.keys[p], at, NULL, &r), &r, "getv");
        CHECK(t, memcmp(back, src, 5) == 0 && memcmp(back + 5, src + 100, 3995) == 0 &&
                     memcmp(back + 8000, src + 4095, 5) == 0 &&
                     memcmp(back + 8005, src + 9000, 11) == 0,
              "rank %d: the iovec put and get differ", p);
        /* an atomic: never by the copy */
        uint64_t old = 1;
        done(t, tern_atomic(t->w, TERN_AMO_ADD, 8, 0, 0, &old, w.keys[p], at, NULL, &r), &r,
             "atomic");
        uint8_t want[8];
        memcpy(want, src, 5);
        memcpy(want + 5, src + 100, 3);
        CHECK(t, memcmp(&old, want, 8) == 0, "rank %d: the atomic read %llx", p,
              (unsigned long long)old);
        nops += 2;
        ncopy += p != t->rank && same[p] && 4016 >= thr ? 2 : 0;
    }
    flush(t, TERN_ANY_SOURCE);
    int64_t copied = rma_counter(t->w, "rma.cma") - cma0;
    if (expect == 1)
        CHECK(t, copied == (int64_t)ncopy, "%lld of %zu puts and gets copied, %zu expected",
              (long long)copied, nops, ncopy);
    else if (expect == 0)
        CHECK(t, copied == 0, "%lld puts and gets copied: the copy should not serve",
              (long long)copied);
    printf("rma_cma: rank %d: %lld of %zu puts and gets copied, %lld copies refused\n", t->rank,
           (long long)copied, nops, (long long)rma_counter(t->w, "cma.refused"));
    fflush(stdout);
    th_barrier(t);
    /* at the target: each rank q's last put (the iovec one, from its
     * buffer as the largest size left it) is in q's slice here */
    size_t last = 1;
    while (last * 8 + 3 <= slice)
        last = last * 8 + 3;
    for (int q = 0; q < t->size; q++) {
        const uint8_t *m = w.mem + slice * (size_t)q;
        int bad = 0;
        for (size_t i = 0; i < 4016 && !bad; i++) {
            size_t from = i < 5 ? i : i < 4005 ? i + 95 : i + 4995; /* src index */
            bad = m[i] != (uint8_t)(from * 7 + last + (size_t)t->rank * 31 + (size_t)q);
        }
        CHECK(t, !bad, "rank %d's puts are not in its slice of this region", q);
    }
    /* a destroyed region: refused (at the call when copied, else by the
     * target), its memory unchanged */
    CHECK_ST(t, tern_region_destroy(gone.reg), TERN_OK);
    gone.reg = NULL;
    th_barrier(t);
    int peer = (t->rank + 1) % t->size;
    tern_request_t *r = NULL;
    tern_status_t st = tern_put(t->w, src, 64, gone.keys[peer], base_of(&gone, peer), NULL, &r);
    if (st == TERN_INPROGRESS)
        st = tern_wait(t->w, r, NULL);
    if (st == TERN_OK) {
        st = tern_flush(t->w, peer, NULL, &r);
        st = st == TERN_INPROGRESS ? tern_wait(t->w, r, NULL) : st;
    }
    CHECK_ST(t, st, TERN_ERR_REMOTE_ACCESS);
    st = tern_get(t->w, back, 64, gone.keys[peer], base_of(&gone, peer), NULL, &r);
    CHECK_ST(t, st == TERN_INPROGRESS ? tern_wait(t->w, r, NULL) : st, TERN_ERR_REMOTE_ACCESS);
    th_barrier(t);
    for (size_t i = 0; i < gone.len; i++)
        if (gone.mem[i] != 0x5A) {
            CHECK(t, 0, "byte %zu of a destroyed region changed to %#x", i, gone.mem[i]);
            break;
        }
    free(same);
    free(src);
    free(back);
    win_close(t, &gone);
    win_close(t, &w);
    return 0;
}

/* Take n entries from the CQ (progressing), bounded by the suite's timeout. */
static void cq_take(th_t *t, tern_cq_entry_t *e, int n)
{
    for (int have = 0; have < n;) {
        int k = tern_cq_read(t->w, e + have, n - have);
        CHECK(t, k >= 0, "tern_cq_read: %d", k);
        if (k < 0)
            return;
        have += k;
    }
}

/* One-sided operations with TERN_OP_CQ: one entry each, with the caller's
 * context and the right flags, none for successes with TERN_OP_CQ_ERRORS,
 * and a put's immediate data in the target's CQ (TERN_CQ_REMOTE_WRITE).
 * Each rank targets its right-hand neighbour; at 1 rank, itself. */
int case_rma_cq(th_t *t)
{
    win_t w;
    if (win_open(t, &w, 65536, TERN_REGION_READ | TERN_REGION_WRITE, 0))
        return -1;
    int right = (t->rank + 1) % t->size, left = (t->rank + t->size - 1) % t->size;
    uint64_t b = base_of(&w, right);
    static uint8_t big[40000];
    uint64_t v = 7, got = 0, old = 0;
    int64_t one = 1, fetched = -1;
    enum { N = 7 };
    char ctx[N];
    tern_op_t op = {.flags = TERN_OP_CQ};
    op.context = &ctx[0];
    CHECK_ST(t, tern_put(t->w, &v, 8, w.keys[right], b, &op, NULL), TERN_OK);
    op.context = &ctx[1];
    CHECK_ST(t, tern_put(t->w, big, sizeof(big), w.keys[right], b + 8192, &op, NULL), TERN_OK);
    op.context = &ctx[2];
    CHECK_ST(t, tern_get(t->w, &got, 8, w.keys[right], b, &op, NULL), TERN_OK);
    op.context = &ctx[3];
    CHECK_ST(t, tern_atomic(t->w, TERN_AMO_ADD, 8, 1, 0, &old, w.keys[right], b + 64, &op, NULL),
             TERN_OK);
    op.context = &ctx[4];
    CHECK_ST(t, tern_accumulate(t->w, TERN_ACC_SUM, TERN_DT_INT64, &one, 1, NULL, w.keys[right],
                                b + 72, &op, NULL),
             TERN_OK);
    op.context = &ctx[5];
    CHECK_ST(t, tern_accumulate(t->w, TERN_ACC_SUM, TERN_DT_INT64, &one, 1, &fetched,
                                w.keys[right], b + 72, &op, NULL),
             TERN_OK);
    op.context = &ctx[6];
    CHECK_ST(t, tern_flush(t->w, TERN_ANY_SOURCE, &op, NULL), TERN_OK);
    tern_cq_entry_t e[N];
    cq_take(t, e, N);
    const uint32_t want[N] = {TERN_CQ_WRITE, TERN_CQ_WRITE, TERN_CQ_READ,
                              TERN_CQ_ATOMIC | TERN_CQ_READ, TERN_CQ_ATOMIC | TERN_CQ_WRITE,
                              TERN_CQ_ATOMIC | TERN_CQ_READ, TERN_CQ_FLUSH};
    int seen[N] = {0};
    for (int i = 0; i < N; i++) {
        int k = (int)((char *)e[i].context - ctx);
        CHECK(t, k >= 0 && k < N, "entry %d: context %p", i, e[i].context);
        if (k < 0 || k >= N)
            continue;
        seen[k]++;
        CHECK(t, e[i].status == TERN_OK && e[i].flags == want[k],
              "operation %d: status %s, flags %#x (expected %#x)", k, tern_strerror(e[i].status),
              e[i].flags, want[k]);
    }
    for (int k = 0; k < N; k++)
        CHECK(t, seen[k] == 1, "operation %d: %d entries", k, seen[k]);
    /* the flush's entry came after the get's: every result is in */
    CHECK(t, got == 7 && old == 0 && fetched == 1, "results %llu %llu %lld",
          (unsigned long long)got, (unsigned long long)old, (long long)fetched);
    /* an iovec's entry counts its bytes */
    struct iovec pv[2] = {{big, 10}, {big + 10, 6}};
    op.context = &ctx[0];
    CHECK_ST(t, tern_putv(t->w, pv, 2, w.keys[right], b + 4096, &op, NULL), TERN_OK);
    op.context = &ctx[1];
    CHECK_ST(t, tern_getv(t->w, pv, 2, w.keys[right], b + 4096, &op, NULL), TERN_OK);
    cq_take(t, e, 2);
    CHECK(t, e[0].length == 16 && e[1].length == 16, "putv / getv entries: %zu and %zu bytes",
          e[0].length, e[1].length);
    /* CQ_ERRORS: no entry for a success */
    tern_op_t eop = {.flags = TERN_OP_CQ | TERN_OP_CQ_ERRORS, .context = &ctx[0]};
    CHECK_ST(t, tern_get(t->w, &got, 8, w.keys[right], b, &eop, NULL), TERN_OK);
    CHECK_ST(t, tern_flush(t->w, right, &eop, NULL), TERN_OK);
    for (int i = 0; i < 1000; i++)
        tern_progress(t->w);
    CHECK(t, tern_cq_count(t->w) == 0, "%zu entries after operations that succeeded",
          tern_cq_count(t->w));
    /* flags the operations do not take */
    tern_op_t bad = {.flags = TERN_OP_DATA, .data = 1};
    tern_request_t *r = NULL;
    CHECK_ST(t, tern_get(t->w, &got, 8, w.keys[right], b, &bad, &r), TERN_ERR_INVALID_PARAM);
    bad.flags = TERN_OP_CQ_ERRORS;
    CHECK_ST(t, tern_put(t->w, &v, 8, w.keys[right], b, &bad, &r), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_put(t->w, &v, 8, w.keys[right], b, NULL, NULL), TERN_ERR_INVALID_PARAM);
    th_barrier(t);
    /* immediate data: the left-hand neighbour's put reaches this rank's CQ */
    tern_op_t dop = {.flags = TERN_OP_DATA, .data = 0xD47A0000u + (uint64_t)t->rank};
    done(t, tern_put(t->w, big, 1000, w.keys[right], b + 16384, &dop, &r), &r, "put with data");
    tern_cq_entry_t d;
    cq_take(t, &d, 1);
    CHECK(t, d.flags == (TERN_CQ_REMOTE_WRITE | TERN_CQ_DATA) && d.peer == left &&
                 d.data == 0xD47A0000u + (uint64_t)left && d.length == 1000,
          "remote entry: flags %#x peer %d data %llx length %zu", d.flags, d.peer,
          (unsigned long long)d.data, d.length);
    flush(t, TERN_ANY_SOURCE);
    win_close(t, &w);
    return 0;
}

/* Operations the VC's netmod posts itself (its rma table; verbs: one RDMA
 * write or read each): every rank puts and gets sizes from 1 byte to
 * 64 KiB into its right-hand neighbour's created region, checked, and
 * counts what it took: rma.native (operations the netmod posted) and, with
 * verbs, verbs.post_send (ibv_post_send calls of every kind, however many
 * the stream also made meanwhile) and verbs.rma_posts.  Every operation
 * must be posted natively and cost one post: the posts counted, less the
 * stream's (credit returns and keepalives: at most 8 while this runs), are
 * the operations.  TERN_TEST_RMA_NATIVE=0 (TERN_VERBS_RMA=0): none may be
 * native.  Over a netmod without an rma table it checks the data only. */
int case_rma_native(th_t *t)
{
    const char *e = getenv("TERN_TEST_RMA_NATIVE");
    int expect = e != NULL ? atoi(e) : -1; /* -1: whatever the netmod does */
    enum { LEN = 1 << 16, OPS = 64 };
    win_t w;
    if (win_open(t, &w, LEN, TERN_REGION_READ | TERN_REGION_WRITE, 0))
        return -1;
    int right = (t->rank + 1) % t->size;
    uint8_t *src = malloc(LEN), *dst = malloc(LEN);
    for (int i = 0; i < LEN; i++)
        src[i] = (uint8_t)(i * 7 + t->rank);
    int64_t n0 = rma_counter(t->w, "rma.native"), p0 = rma_counter(t->w, "verbs.post_send");
    int64_t r0 = rma_counter(t->w, "verbs.rma_posts");
    for (int k = 0; k < OPS; k++) {
        size_t len = (size_t)1 << (k % 17), off = (size_t)(k * 977) % (LEN - len + 1);
        tern_request_t *r = NULL;
        done(t, tern_put(t->w, src + off, len, w.keys[right], base_of(&w, right) + off, NULL, &r),
             &r, "put");
        flush(t, right);
        memset(dst, 0, len);
        done(t, tern_get(t->w, dst, len, w.keys[right], base_of(&w, right) + off, NULL, &r), &r,
             "get");
        CHECK(t, memcmp(dst, src + off, len) == 0, "%zu bytes at %zu: the get read back "
              "something else", len, off);
    }
    int64_t n = rma_counter(t->w, "rma.native") - n0, p = rma_counter(t->w, "verbs.post_send") - p0;
    int64_t rp = rma_counter(t->w, "verbs.rma_posts") - r0;
    printf("rma_native: rank %d: %d operations, %lld posted by the netmod", t->rank, 2 * OPS,
           (long long)n);
    if (p0 >= 0)
        printf(", %lld ibv_post_send (%lld one-sided)", (long long)p, (long long)rp);
    printf("\n");
    if (expect == 1 && right != t->rank) {
        CHECK(t, n == 2 * OPS, "%lld of %d operations posted by the netmod", (long long)n,
              2 * OPS);
        CHECK(t, p0 < 0 || (rp == 2 * OPS && p >= rp && p <= rp + 8),
              "%lld posts for %d operations (%lld one-sided)", (long long)p, 2 * OPS,
              (long long)rp);
    }
    if (expect == 0)
        CHECK(t, n == 0, "%lld operations posted by the netmod, none expected", (long long)n);
    th_barrier(t);
    free(src);
    free(dst);
    win_close(t, &w);
    return 0;
}

/* A refused operation among others in flight: each rank posts, without
 * waiting, puts into its right-hand neighbour's live region, one put into
 * a region the neighbour has destroyed, then more puts and gets to the
 * live one, then a flush.  The refused put alone fails
 * (TERN_ERR_REMOTE_ACCESS); every other lands or reads what it should and
 * the flush succeeds.  Over verbs the refusal fails the one-sided QP: what
 * was posted behind it comes back and goes as packets (rma.replayed), and
 * a second round, after it, goes by packets only. */
int case_rma_replay(th_t *t)
{
    enum { N = 48, SZ = 256 };
    win_t live, gone, ctr;
    if (win_open(t, &ctr, 64, TERN_REGION_READ | TERN_REGION_WRITE | TERN_REGION_ATOMIC_DEVICE, 0))
        return -1;
    if (win_open(t, &live, N * SZ, TERN_REGION_READ | TERN_REGION_WRITE, 0))
        return -1;
    if (win_open(t, &gone, 4096, TERN_REGION_READ | TERN_REGION_WRITE, 0)) {
        win_close(t, &live);
        return -1;
    }
    int right = (t->rank + 1) % t->size;
    CHECK_ST(t, tern_region_destroy(gone.reg), TERN_OK);
    gone.reg = NULL;
    th_barrier(t); /* every neighbour's is gone */
    int64_t replayed0 = rma_counter(t->w, "rma.replayed");
    for (int round = 0; round < 2; round++) {
        uint8_t src[N][SZ], got[N][SZ];
        tern_request_t *req[2 * N + 1] = {NULL};
        tern_status_t st[2 * N + 1];
        uint64_t b = base_of(&live, right);
        for (int k = 0; k < N; k++)
            memset(src[k], (uint8_t)(k + 16 * round + t->rank), SZ);
        int n = 0;
        /* a device fetch-and-add behind each put, on the right-hand rank's
         * counter (only this rank adds to it): those handed back by the
         * failed QP go as packets, and each must still fetch its turn.
         * From 3 ranks only: with 2, each QP pair also carries the peer's
         * refused put the other way, whose failure at this end leaves this
         * rank's atomics in flight with an unknown outcome (TERN_ERR_IO,
         * by design) */
        int amo = t->size >= 3;
        uint64_t olds[N];
        tern_request_t *areq[N] = {NULL};
        tern_status_t ast[N];
        for (int k = 0; k < N; k++) {
            if (k == N / 4) { /* the refused one */
                st[n] = tern_put(t->w, src[k], 8, gone.keys[right], base_of(&gone, right), NULL,
                                 &req[n]);
                n++;
            }
            st[n] = tern_put(t->w, src[k], SZ, live.keys[right], b + (uint64_t)k * SZ, NULL,
                             &req[n]);
            n++;
            ast[k] = amo ? tern_atomic(t->w, TERN_AMO_ADD, 8, 1, 0, &olds[k], ctr.keys[right],
                                       base_of(&ctr, right), NULL, &areq[k])
                         : TERN_OK;
            if (!amo)
                olds[k] = (uint64_t)(round * N + k);
        }
        for (int k = 0; k < N; k++) {
            if (ast[k] == TERN_INPROGRESS)
                ast[k] = tern_wait(t->w, areq[k], NULL);
            CHECK(t, ast[k] == TERN_OK && olds[k] == (uint64_t)(round * N + k),
                  "round %d, atomic %d: %s, fetched %llu (%d expected: in order)", round, k,
                  tern_strerror(ast[k]), (unsigned long long)olds[k], round * N + k);
        }
        for (int i = 0; i < n; i++) {
            if (st[i] == TERN_INPROGRESS)
                st[i] = tern_wait(t->w, req[i], NULL);
            tern_status_t want = i == N / 4 && right != t->rank ? TERN_ERR_REMOTE_ACCESS : TERN_OK;
            if (i == N / 4 && right != t->rank && st[i] == TERN_OK) {
                /* sent as a packet: the flush reports the refusal */
                tern_request_t *f = NULL;
                st[i] = tern_flush(t->w, right, NULL, &f);
                st[i] = st[i] == TERN_INPROGRESS ? tern_wait(t->w, f, NULL) : st[i];
            }
            if (i == N / 4 && right == t->rank)
                want = st[i]; /* oneself: refused at once, whichever error */
            CHECK(t, st[i] == want, "round %d, operation %d: %s, expected %s", round, i,
                  tern_strerror(st[i]), tern_strerror(want));
        }
        n = 0;
        for (int k = 0; k < N; k++) {
            st[n] = tern_get(t->w, got[k], SZ, live.keys[right], b + (uint64_t)k * SZ, NULL,
                             &req[n]);
            n++;
        }
        for (int i = 0; i < n; i++) {
            if (st[i] == TERN_INPROGRESS)
                st[i] = tern_wait(t->w, req[i], NULL);
            CHECK_ST(t, st[i], TERN_OK);
        }
        flush(t, right);
        for (int k = 0; k < N; k++)
            CHECK(t, memcmp(got[k], src[k], SZ) == 0, "round %d: block %d read back wrong", round,
                  k);
        th_barrier(t);
    }
    printf("rma_replay: rank %d: %lld operations replayed as packets\n", t->rank,
           (long long)(rma_counter(t->w, "rma.replayed") - replayed0));
    uint64_t count;
    memcpy(&count, ctr.mem, 8);
    CHECK(t, count == (t->size >= 3 ? 2 * N : 0), "the counter: %llu", (unsigned long long)count);
    win_close(t, &gone);
    win_close(t, &live);
    win_close(t, &ctr);
    return 0;
}
