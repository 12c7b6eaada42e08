/*
 * Engine cases for include/tern/rma.h: regions and keys, put / get
 * (contiguous and iovec, eager and long sizes, to oneself too), atomics
 * from every rank on one counter, accumulate, flush, from several workers;
 * the case table.  The safety cases are in cases_rma_safety.c, the soak and
 * the paths in cases_rma_paths.c.  Every rank takes part; run over every
 * netmod by the engine suite.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/engine/cases_rma.h"

int rma_alloc_mode;

/* Open a window of len bytes (filled with fill) with access flags; every
 * rank calls it.  0, or -1 (said why). */
int win_open(th_t *t, win_t *w, size_t len, unsigned flags, uint8_t fill)
{
    memset(w, 0, sizeof(*w));
    w->len = len;
    w->alloc = rma_alloc_mode;
    w->keys = calloc((size_t)t->size, sizeof(*w->keys));
    if (w->alloc) {
        void *a = NULL;
        CHECK_ST(t, tern_region_alloc(t->ctx, len, flags, &a, &w->reg), TERN_OK);
        w->mem = a;
    } else {
        w->mem = aligned_alloc(64, (len + 63) / 64 * 64);
    }
    CHECK(t, w->mem != NULL && w->keys != NULL, "allocation of %zu bytes", len);
    if (w->mem == NULL || w->keys == NULL)
        return -1;
    memset(w->mem, fill, len);
    if (!w->alloc)
        CHECK_ST(t, tern_region_create(t->ctx, w->mem, len, flags, &w->reg), TERN_OK);
    uint8_t key[TERN_KEY_MAX];
    size_t klen = sizeof(key);
    CHECK_ST(t, tern_region_pack(w->reg, key, &klen), TERN_OK);
    /* everyone's key to everyone (oneself too, through the self VC) */
    uint8_t (*in)[TERN_KEY_MAX] = calloc((size_t)t->size, TERN_KEY_MAX);
    tern_request_t **rq = calloc(2 * (size_t)t->size, sizeof(*rq));
    tern_recv_info_t *info = calloc(2 * (size_t)t->size, sizeof(*info));
    for (int r = 0; r < t->size; r++) {
        /* info: filled here when it completes at once, else by the waitall */
        tern_status_t st = tern_irecv(t->w, in[r], TERN_KEY_MAX, r, KEY_TAG, KEY_SPACE, &info[r],
                                      &rq[r]);
        CHECK(t, st >= 0, "key receive: %s", tern_strerror(st));
        st = tern_isend(t->w, key, klen, r, KEY_TAG, KEY_SPACE, &rq[t->size + r]);
        CHECK(t, st >= 0, "key send: %s", tern_strerror(st));
    }
    tern_recv_info_t *winfo = calloc(2 * (size_t)t->size, sizeof(*winfo));
    int *pending = calloc((size_t)t->size, sizeof(*pending));
    for (int r = 0; r < t->size; r++)
        pending[r] = rq[r] != NULL;
    CHECK_ST(t, tern_waitall(t->w, rq, 2 * (size_t)t->size, winfo), TERN_OK);
    for (int r = 0; r < t->size; r++)
        if (pending[r])
            info[r] = winfo[r];
    free(pending);
    free(winfo);
    for (int r = 0; r < t->size; r++)
        CHECK_ST(t, tern_key_unpack(t->ctx, r, in[r], info[r].length, &w->keys[r]), TERN_OK);
    free(in);
    free(rq);
    free(info);
    th_barrier(t);
    return 0;
}

void win_free(th_t *t, win_t *w)
{
    for (int r = 0; w->keys != NULL && r < t->size; r++)
        tern_key_destroy(w->keys[r]);
    if (w->reg != NULL)
        CHECK_ST(t, tern_region_destroy(w->reg), TERN_OK);
    free(w->keys);
    if (!w->alloc)
        free(w->mem); /* an allocated region's went with it */
}

void win_close(th_t *t, win_t *w)
{
    th_barrier(t); /* nobody targets the region any more */
    win_free(t, w);
}

uint64_t base_of(const win_t *w, int rank)
{
    return tern_key_base(w->keys[rank]);
}

/* Wait for the request (*r) of an operation that returned st. */
void done(th_t *t, tern_status_t st, tern_request_t **r, const char *what)
{
    if (st == TERN_INPROGRESS)
        st = tern_wait(t->w, *r, NULL);
    CHECK(t, st == TERN_OK, "%s: %s", what, tern_strerror(st));
}

void flush(th_t *t, int peer)
{
    tern_request_t *r = NULL;
    done(t, tern_flush(t->w, peer, NULL, &r), &r, "flush");
}

static const size_t sizes[] = {1, 8, 100, 4096, 20000, 200000};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define AREA (256u << 10) /* room of each size's area */

/* Every rank puts a pattern per size (and an iovec) into its right-hand
 * neighbour, flushes, and checks what its left-hand one put; then gets
 * back what it put, contiguous and scattered.  At 1 rank: itself. */
static int case_rma_put_get(th_t *t)
{
    win_t w;
    if (win_open(t, &w, (NSIZES + 1) * (size_t)AREA, TERN_REGION_READ | TERN_REGION_WRITE, 0))
        return -1;
    int right = (t->rank + 1) % t->size, left = (t->rank + t->size - 1) % t->size;
    uint8_t *src = malloc((NSIZES + 1) * (size_t)AREA);
    tern_request_t *rq[NSIZES + 1] = {0};
    for (size_t i = 0; i < NSIZES; i++) {
        th_fill(src + i * AREA, sizes[i], (uint64_t)t->rank * 100 + i);
        tern_status_t st = tern_put(t->w, src + i * AREA, sizes[i], w.keys[right],
                                    base_of(&w, right) + i * AREA, NULL, &rq[i]);
        CHECK(t, st == TERN_OK || st == TERN_INPROGRESS, "put %zu: %s", sizes[i],
              tern_strerror(st));
    }
    /* an iovec of three pieces into the last area */
    uint8_t *v = src + NSIZES * AREA;
    th_fill(v, 30000, (uint64_t)t->rank * 100 + 99);
    struct iovec iov[3] = {{v, 7}, {v + 7, 20000}, {v + 20007, 9993}};
    tern_status_t st = tern_putv(t->w, iov, 3, w.keys[right], base_of(&w, right) + NSIZES * AREA,
                                 NULL, &rq[NSIZES]);
    CHECK(t, st == TERN_OK || st == TERN_INPROGRESS, "putv: %s", tern_strerror(st));
    for (size_t i = 0; i <= NSIZES; i++)
        if (rq[i] != NULL)
            done(t, tern_wait(t->w, rq[i], NULL), NULL, "put");
    flush(t, right);
    th_barrier(t);
    for (size_t i = 0; i < NSIZES; i++) {
        size_t bad = th_verify(w.mem + i * AREA, sizes[i], (uint64_t)left * 100 + i);
        CHECK(t, bad == (size_t)-1, "put of %zu bytes from rank %d: byte %zu wrong", sizes[i],
              left, bad);
        CHECK(t, w.mem[i * AREA + sizes[i]] == 0, "put of %zu bytes wrote past its end",
              sizes[i]);
    }
    size_t bad = th_verify(w.mem + NSIZES * AREA, 30000, (uint64_t)left * 100 + 99);
    CHECK(t, bad == (size_t)-1, "putv from rank %d: byte %zu wrong", left, bad);
    th_barrier(t);
    /* get back what this rank put */
    uint8_t *back = calloc(1, (NSIZES + 1) * (size_t)AREA);
    for (size_t i = 0; i < NSIZES; i++) {
        tern_request_t *r = NULL;
        done(t, tern_get(t->w, back + i * AREA, sizes[i], w.keys[right],
                         base_of(&w, right) + i * AREA, NULL, &r),
             &r, "get");
        bad = th_verify(back + i * AREA, sizes[i], (uint64_t)t->rank * 100 + i);
        CHECK(t, bad == (size_t)-1, "get of %zu bytes: byte %zu wrong", sizes[i], bad);
    }
    uint8_t *g = back + NSIZES * AREA;
    struct iovec giov[3] = {{g + 20007, 9993}, {g, 7}, {g + 7, 20000}};
    tern_request_t *r = NULL;
    /* the remote bytes in order fill the pieces in order */
    done(t, tern_getv(t->w, giov, 3, w.keys[right], base_of(&w, right) + NSIZES * AREA, NULL, &r),
         &r, "getv");
    CHECK(t, memcmp(g + 20007, v, 9993) == 0 && memcmp(g, v + 9993, 7) == 0 &&
                 memcmp(g + 7, v + 10000, 20000) == 0,
          "getv scattered the bytes wrongly");
    flush(t, TERN_ANY_SOURCE);
    free(back);
    free(src);
    win_close(t, &w);
    return 0;
}

/* Counters in rank 0's region, updated by every rank at once. */
enum { C64 = 0, C32 = 8, C16 = 12, CAS = 16, BITS = 64 };
#define ROUNDS 300

static int case_rma_atomic(th_t *t)
{
    win_t w;
    if (win_open(t, &w, 4096, TERN_REGION_READ | TERN_REGION_WRITE, 0))
        return -1;
    uint64_t b = base_of(&w, 0);
    uint64_t prev = 0;
    int increasing = 1;
    for (int i = 0; i < ROUNDS; i++) {
        uint64_t old = ~0ull;
        tern_request_t *r = NULL;
        done(t, tern_atomic(t->w, TERN_AMO_ADD, 8, 1, 0, &old, w.keys[0], b + C64, NULL, &r), &r,
             "fetch-and-add");
        if (i > 0 && old <= prev)
            increasing = 0;
        prev = old;
        CHECK(t, old < (uint64_t)t->size * ROUNDS, "fetched %llu", (unsigned long long)old);
        done(t, tern_atomic(t->w, TERN_AMO_ADD, 4, 1, 0, NULL, w.keys[0], b + C32, NULL, &r), &r,
             "add");
        done(t, tern_atomic(t->w, TERN_AMO_ADD, 2, 3, 0, NULL, w.keys[0], b + C16, NULL, &r), &r,
             "add");
    }
    CHECK(t, increasing, "fetched values of one rank did not increase");
    /* one compare-and-swap wins */
    uint32_t old32 = 0;
    tern_request_t *r = NULL;
    done(t, tern_atomic(t->w, TERN_AMO_CSWAP, 4, (uint64_t)t->rank + 1, 0, &old32, w.keys[0],
                        b + CAS, NULL, &r),
         &r, "compare-and-swap");
    int won = old32 == 0, winners = 0;
    /* swap / and / or / xor on this rank's own word */
    uint64_t mine = b + BITS + 8 * (uint64_t)t->rank, o[4];
    done(t, tern_atomic(t->w, TERN_AMO_SWAP, 8, 0xF0F0, 0, &o[0], w.keys[0], mine, NULL, &r), &r,
         "swap");
    done(t, tern_atomic(t->w, TERN_AMO_AND, 8, 0xFF00, 0, &o[1], w.keys[0], mine, NULL, &r), &r,
         "and");
    done(t, tern_atomic(t->w, TERN_AMO_OR, 8, 0x000F, 0, &o[2], w.keys[0], mine, NULL, &r), &r,
         "or");
    done(t, tern_atomic(t->w, TERN_AMO_XOR, 8, 0xFFFF, 0, &o[3], w.keys[0], mine, NULL, &r), &r,
         "xor");
    CHECK(t, o[0] == 0 && o[1] == 0xF0F0 && o[2] == 0xF000 && o[3] == 0xF00F,
          "swap/and/or/xor fetched %llx %llx %llx %llx", (unsigned long long)o[0],
          (unsigned long long)o[1], (unsigned long long)o[2], (unsigned long long)o[3]);
    flush(t, 0);
    /* the winners to rank 0 */
    if (t->rank != 0) {
        CHECK_ST(t, tern_send(t->w, &won, sizeof(won), 0, 5, KEY_SPACE), TERN_OK);
    } else {
        winners = won;
        for (int k = 1; k < t->size; k++) {
            int x = 0;
            CHECK_ST(t, tern_recv(t->w, &x, sizeof(x), k, 5, KEY_SPACE, NULL), TERN_OK);
            winners += x;
        }
    }
    th_barrier(t);
    if (t->rank == 0) {
        uint64_t c64;
        uint32_t c32, cas;
        uint16_t c16;
        memcpy(&c64, w.mem + C64, 8);
        memcpy(&c32, w.mem + C32, 4);
        memcpy(&c16, w.mem + C16, 2);
        memcpy(&cas, w.mem + CAS, 4);
        uint64_t n = (uint64_t)t->size * ROUNDS;
        CHECK(t, c64 == n, "64-bit counter %llu, expected %llu", (unsigned long long)c64,
              (unsigned long long)n);
        CHECK(t, c32 == n, "32-bit counter %u, expected %llu", c32, (unsigned long long)n);
        CHECK(t, c16 == (uint16_t)(3 * n), "16-bit counter %u, expected %u", c16,
              (unsigned)(uint16_t)(3 * n));
        CHECK(t, winners == 1 && cas >= 1 && cas <= (uint32_t)t->size,
              "compare-and-swap: %d winners, word %u", winners, cas);
        for (int k = 0; k < t->size; k++) {
            uint64_t x;
            memcpy(&x, w.mem + BITS + 8 * k, 8);
            CHECK(t, x == 0x0FF0, "rank %d's word is %llx", k, (unsigned long long)x);
        }
    }
    win_close(t, &w);
    return 0;
}

#define NEL 64
enum { A_I32 = 0, A_DBL = 512, A_LD = 1024, A_MAX = 2048, A_REP = 2304, A_ODD = 2561,
       A_2INT = 3072, A_DINT = 3328 };
#define NLOC 16
typedef struct { int v, i; } loc_2int_t;
typedef struct { double v; int i; } loc_dint_t;

/* MAXLOC's value of element k from rank r, and the expected winner */
static int loc_value(int r, int k)
{
    return (r * 7 + k) % 5;
}

/* Accumulate from every rank into rank 0's arrays: sums (int, double,
 * long double by the lock path, and misaligned ints), max, and
 * get-accumulate / fetch-and-op results. */
static int case_rma_accumulate(th_t *t)
{
    win_t w;
    if (win_open(t, &w, 4096, TERN_REGION_READ | TERN_REGION_WRITE, 0))
        return -1;
    uint64_t b = base_of(&w, 0);
    int32_t iv[NEL];
    double dv[NEL];
    long double lv[8];
    for (int i = 0; i < NEL; i++) {
        iv[i] = i + t->rank;
        dv[i] = 0.5 * i + t->rank;
    }
    for (int i = 0; i < 8; i++)
        lv[i] = (long double)i + t->rank;
    tern_request_t *r = NULL;
    done(t, tern_accumulate(t->w, TERN_ACC_SUM, TERN_DT_INT32, iv, NEL, NULL, w.keys[0], b + A_I32,
                            NULL, &r),
         &r, "int sum");
    done(t, tern_accumulate(t->w, TERN_ACC_SUM, TERN_DT_DOUBLE, dv, NEL, NULL, w.keys[0],
                            b + A_DBL, NULL, &r),
         &r, "double sum");
    done(t, tern_accumulate(t->w, TERN_ACC_SUM, TERN_DT_LONG_DOUBLE, lv, 8, NULL, w.keys[0],
                            b + A_LD, NULL, &r),
         &r, "long double sum");
    done(t, tern_accumulate(t->w, TERN_ACC_MAX, TERN_DT_INT32, iv, NEL, NULL, w.keys[0],
                            b + A_MAX, NULL, &r),
         &r, "int max");
    done(t, tern_accumulate(t->w, TERN_ACC_SUM, TERN_DT_INT32, iv, 4, NULL, w.keys[0], b + A_ODD,
                            NULL, &r),
         &r, "misaligned int sum");
    /* MAXLOC on the pairs (8-byte ones by CAS, 16-byte ones by the lock) */
    loc_2int_t l2[NLOC];
    loc_dint_t ld[NLOC];
    for (int k = 0; k < NLOC; k++) {
        l2[k] = (loc_2int_t){loc_value(t->rank, k), t->rank};
        ld[k] = (loc_dint_t){loc_value(t->rank, k) + 0.5, t->rank};
    }
    done(t, tern_accumulate(t->w, TERN_ACC_MAXLOC, TERN_DT_2INT, l2, NLOC, NULL, w.keys[0],
                            b + A_2INT, NULL, &r),
         &r, "maxloc 2int");
    done(t, tern_accumulate(t->w, TERN_ACC_MINLOC, TERN_DT_DOUBLE_INT, ld, NLOC, NULL, w.keys[0],
                            b + A_DINT, NULL, &r),
         &r, "minloc double-int");
    /* get-accumulate on this rank's own slot: REPLACE fetches the old */
    int64_t mine = 1000 + t->rank, old = -1, now = -1;
    uint64_t slot = b + A_REP + 8 * (uint64_t)t->rank;
    done(t, tern_accumulate(t->w, TERN_ACC_REPLACE, TERN_DT_INT64, &mine, 1, &old, w.keys[0], slot,
                            NULL, &r),
         &r, "replace");
    CHECK(t, old == 0, "replace fetched %lld", (long long)old);
    int64_t add = 5;
    done(t, tern_accumulate(t->w, TERN_ACC_SUM, TERN_DT_INT64, &add, 1, &old, w.keys[0], slot,
                            NULL, &r),
         &r, "fetch-and-op");
    CHECK(t, old == mine, "fetch-and-op fetched %lld, expected %lld", (long long)old,
          (long long)mine);
    done(t, tern_accumulate(t->w, TERN_ACC_NO_OP, TERN_DT_INT64, NULL, 1, &now, w.keys[0], slot,
                            NULL, &r),
         &r, "no-op fetch");
    CHECK(t, now == mine + 5, "no-op fetched %lld", (long long)now);
    flush(t, 0);
    th_barrier(t);
    if (t->rank == 0) {
        int n = t->size, tri = n * (n - 1) / 2;
        for (int i = 0; i < NEL; i++) {
            int32_t x, m;
            double d;
            memcpy(&x, w.mem + A_I32 + 4 * i, 4);
            memcpy(&d, w.mem + A_DBL + 8 * i, 8);
            memcpy(&m, w.mem + A_MAX + 4 * i, 4);
            CHECK(t, x == n * i + tri, "int sum [%d] = %d, expected %d", i, x, n * i + tri);
            CHECK(t, d == 0.5 * i * n + tri, "double sum [%d] = %g", i, d);
            CHECK(t, m == i + n - 1, "int max [%d] = %d", i, m);
        }
        for (int i = 0; i < 8; i++) {
            long double x;
            memcpy(&x, w.mem + A_LD + sizeof(long double) * i, sizeof(x));
            CHECK(t, x == (long double)(n * i + tri), "long double sum [%d] = %Lg", i, x);
        }
        for (int i = 0; i < 4; i++) {
            int32_t x;
            memcpy(&x, w.mem + A_ODD + 4 * i, 4);
            CHECK(t, x == n * i + tri, "misaligned sum [%d] = %d", i, x);
        }
        /* the region starts zeroed: (0, 0) takes part in both */
        for (int k = 0; k < NLOC; k++) {
            loc_2int_t mx = {0, 0};
            loc_dint_t mn = {0.0, 0};
            for (int q = 0; q < n; q++) {
                int v = loc_value(q, k);
                if (v > mx.v || (v == mx.v && q < mx.i))
                    mx = (loc_2int_t){v, q};
                if (v + 0.5 < mn.v || (v + 0.5 == mn.v && q < mn.i))
                    mn = (loc_dint_t){v + 0.5, q};
            }
            loc_2int_t g2;
            loc_dint_t gd;
            memcpy(&g2, w.mem + A_2INT + sizeof(g2) * k, sizeof(g2));
            memcpy(&gd, w.mem + A_DINT + sizeof(gd) * k, sizeof(gd));
            CHECK(t, g2.v == mx.v && g2.i == mx.i, "maxloc [%d] = (%d, %d), expected (%d, %d)", k,
                  g2.v, g2.i, mx.v, mx.i);
            CHECK(t, gd.v == mn.v && gd.i == mn.i, "minloc [%d] = (%g, %d), expected (%g, %d)",
                  k, gd.v, gd.i, mn.v, mn.i);
        }
    }
    win_close(t, &w);
    return 0;
}

/* A second worker's thread: fetch-and-adds on rank 0's counter, a flush,
 * then progress (the peers' operations on this worker need it) until told
 * to stop. */
struct rma_thread {
    th_t *t;
    tern_worker_t *w;
    const win_t *win;
    _Atomic int done, stop;
    int bad;
};

static void *rma_thread_main(void *arg)
{
    struct rma_thread *a = arg;
    uint64_t b = base_of(a->win, 0), prev = 0;
    for (int i = 0; i < ROUNDS; i++) {
        uint64_t old = 0;
        tern_request_t *r = NULL;
        tern_status_t st = tern_atomic(a->w, TERN_AMO_ADD, 8, 1, 0, &old, a->win->keys[0], b,
                                       NULL, &r);
        if (st == TERN_INPROGRESS)
            st = tern_wait(a->w, r, NULL);
        if (st != TERN_OK || (i > 0 && old <= prev))
            a->bad++;
        prev = old;
    }
    tern_request_t *r = NULL;
    tern_status_t st = tern_flush(a->w, TERN_ANY_SOURCE, NULL, &r);
    if ((st == TERN_INPROGRESS ? tern_wait(a->w, r, NULL) : st) != TERN_OK)
        a->bad++;
    atomic_store(&a->done, 1);
    while (!atomic_load(&a->stop))
        tern_progress(a->w);
    return NULL;
}

/* Two workers of every rank (when the job has them) add to one counter at
 * once: the target applies from both of its workers' threads. */
static int case_rma_workers(th_t *t)
{
    win_t w;
    if (win_open(t, &w, 64, TERN_REGION_READ | TERN_REGION_WRITE, 0))
        return -1;
    struct rma_thread a = {.t = t, .win = &w};
    pthread_t th;
    int threads = 0;
    if (tern_worker_create(t->ctx, &a.w) == TERN_OK) {
        if (pthread_create(&th, NULL, rma_thread_main, &a) == 0)
            threads = 1;
        else
            tern_worker_destroy(a.w);
    }
    for (int i = 0; i < ROUNDS; i++) {
        tern_request_t *r = NULL;
        done(t, tern_atomic(t->w, TERN_AMO_ADD, 8, 1, 0, NULL, w.keys[0], base_of(&w, 0), NULL,
                            &r),
             &r, "add");
    }
    flush(t, TERN_ANY_SOURCE);
    while (threads && !atomic_load(&a.done))
        tern_progress(t->w);
    /* every rank's workers are done: one of the counts is the thread's */
    int nthreads = threads, all = nthreads;
    if (t->rank != 0) {
        CHECK_ST(t, tern_send(t->w, &nthreads, sizeof(nthreads), 0, 6, KEY_SPACE), TERN_OK);
    } else {
        for (int k = 1; k < t->size; k++) {
            int x = 0;
            CHECK_ST(t, tern_recv(t->w, &x, sizeof(x), k, 6, KEY_SPACE, NULL), TERN_OK);
            all += x;
        }
    }
    th_barrier(t);
    if (threads) {
        atomic_store(&a.stop, 1);
        pthread_join(th, NULL);
        tern_worker_destroy(a.w);
        CHECK(t, a.bad == 0, "the second worker's operations: %d failed", a.bad);
    }
    if (t->rank == 0) {
        uint64_t c, want = (uint64_t)(t->size + all) * ROUNDS;
        memcpy(&c, w.mem, 8);
        CHECK(t, c == want, "counter %llu, expected %llu (%d second workers)",
              (unsigned long long)c, (unsigned long long)want, all);
    }
    win_close(t, &w);
    return 0;
}

/* A case on allocated regions (peers on this host reach them directly). */
#define ALLOC_CASE(name_)                                                                          \
    static int case_##name_##_alloc(th_t *t)                                                       \
    {                                                                                              \
        rma_alloc_mode = 1;                                                                            \
        int rc = case_##name_(t);                                                                  \
        rma_alloc_mode = 0;                                                                            \
        return rc;                                                                                 \
    }
ALLOC_CASE(rma_put_get)
ALLOC_CASE(rma_atomic)
ALLOC_CASE(rma_accumulate)
ALLOC_CASE(rma_workers)
ALLOC_CASE(rma_soak)
ALLOC_CASE(rma_cq)

/* A second worker's first traffic to its right-hand neighbour: fetch-adds
 * issued back to back on a VC that connects only now (they wait for the
 * connection, then go by the QP or as packets, never out of order). */
struct amo_thread {
    tern_worker_t *w;
    const win_t *win;
    int right;
    _Atomic int done, stop;
    int bad;
};

#define AMO_FIRST 200

static void *amo_first(void *arg)
{
    struct amo_thread *a = arg;
    uint64_t olds[AMO_FIRST];
    tern_request_t *req[AMO_FIRST];
    tern_status_t st[AMO_FIRST];
    for (int i = 0; i < AMO_FIRST; i++)
        st[i] = tern_atomic(a->w, TERN_AMO_ADD, 8, 1, 0, &olds[i], a->win->keys[a->right],
                            base_of(a->win, a->right) + 40, NULL, &req[i]);
    for (int i = 0; i < AMO_FIRST; i++) {
        if (st[i] == TERN_INPROGRESS)
            st[i] = tern_wait(a->w, req[i], NULL);
        if (st[i] != TERN_OK || olds[i] != (uint64_t)i) {
            fprintf(stderr, "second worker's atomic %d: %s, fetched %llu\n", i,
                    tern_strerror(st[i]), (unsigned long long)olds[i]);
            a->bad++;
            break;
        }
    }
    atomic_store(&a->done, 1);
    while (!atomic_load(&a->stop))
        tern_progress(a->w);
    return NULL;
}

/* TERN_REGION_ATOMIC_DEVICE (created, or allocated: alloc): every rank,
 * the owner too, fetch-adds a counter in every rank's region (exact
 * totals), compare-and-swaps a word there (one winner each), and is
 * refused what the device lacks.  TERN_TEST_AMO_DEVICE=1: each atomic on
 * another rank's region was one RDMA atomic (verbs.amo_posts) and each on
 * its own one through the loopback QP (verbs.amo_local); 0: none was. */
static int amo_device(th_t *t, int alloc)
{
    win_t w;
    rma_alloc_mode = alloc;
    int rc = win_open(t, &w, 4096, TERN_REGION_READ | TERN_REGION_WRITE | TERN_REGION_ATOMIC_DEVICE,
                      0);
    rma_alloc_mode = 0;
    if (rc)
        return -1;
    const char *e = getenv("TERN_TEST_AMO_DEVICE");
    int expect = e != NULL ? atoi(e) : -1;
    int64_t posts0 = rma_counter(t->w, "verbs.amo_posts"), local0 = rma_counter(t->w, "verbs.amo_local");
    int64_t all0 = rma_counter(t->w, "verbs.post_send");
    int64_t remote = 0, own = 0;
    const int n = 100;
    tern_request_t *r = NULL;
    for (int i = 0; i < n; i++)
        for (int p = 0; p < t->size; p++) {
            uint64_t old = 0;
            done(t, tern_atomic(t->w, TERN_AMO_ADD, 8, 1, 0, i % 2 ? &old : NULL, w.keys[p],
                                base_of(&w, p), NULL, &r),
                 &r, "device fetch-and-add");
            CHECK(t, i % 2 == 0 || old < (uint64_t)(n * t->size), "fetched %llu", (unsigned long long)old);
            *(p == t->rank ? &own : &remote) += 1;
        }
    for (int p = 0; p < t->size; p++) {
        uint64_t old = 1;
        done(t, tern_atomic(t->w, TERN_AMO_CSWAP, 8, (uint64_t)t->rank + 1, 0, &old, w.keys[p],
                            base_of(&w, p) + 8, NULL, &r),
             &r, "device compare-and-swap");
        *(p == t->rank ? &own : &remote) += 1;
        if (old == 0) { /* won: say so where the others can count it */
            done(t, tern_atomic(t->w, TERN_AMO_ADD, 8, 1, 0, NULL, w.keys[p], base_of(&w, p) + 16,
                                NULL, &r),
                 &r, "winner's add");
            *(p == t->rank ? &own : &remote) += 1;
        }
    }
    /* a burst past any send queue, nothing waited for: on the right-hand
     * rank's word 32 (only this rank adds there), each fetches its turn */
    int peer = (t->rank + 1) % t->size;
    enum { BURST = 600 };
    uint64_t *olds = calloc(BURST, 8);
    tern_request_t **reqs = calloc(BURST, sizeof(*reqs));
    tern_status_t *sts = calloc(BURST, sizeof(*sts));
    for (int i = 0; i < BURST; i++) {
        sts[i] = tern_atomic(t->w, TERN_AMO_ADD, 8, 1, 0, &olds[i], w.keys[peer],
                             base_of(&w, peer) + 32, NULL, &reqs[i]);
        *(peer == t->rank ? &own : &remote) += 1;
    }
    for (int i = 0; i < BURST; i++) {
        if (sts[i] == TERN_INPROGRESS)
            sts[i] = tern_wait(t->w, reqs[i], NULL);
        CHECK(t, sts[i] == TERN_OK && olds[i] == (uint64_t)i, "burst %d: %s, fetched %llu", i,
              tern_strerror(sts[i]), (unsigned long long)olds[i]);
    }
    free(olds);
    free(reqs);
    free(sts);
    /* a second worker (two per rank: the matrix's np2, verbs.sh): its VCs
     * connect with its first atomics */
    struct amo_thread at = {.win = &w, .right = peer};
    pthread_t th;
    int threads = tern_worker_create(t->ctx, &at.w) == TERN_OK;
    if (threads && pthread_create(&th, NULL, amo_first, &at) != 0) {
        tern_worker_destroy(at.w);
        threads = 0;
    }
    if (threads) {
        while (!atomic_load(&at.done))
            tern_progress(t->w);
        CHECK(t, at.bad == 0, "%s", "the second worker's first atomics came out of order");
    }
    /* what the device has not: refused, nothing touched */
    uint32_t four = 0;
    int64_t one = 1;
    CHECK_ST(t, tern_atomic(t->w, TERN_AMO_ADD, 4, 1, 0, &four, w.keys[peer], base_of(&w, peer) + 24,
                            NULL, &r),
             TERN_ERR_UNSUPPORTED);
    CHECK_ST(t, tern_atomic(t->w, TERN_AMO_SWAP, 8, 1, 0, NULL, w.keys[peer], base_of(&w, peer) + 24,
                            NULL, &r),
             TERN_ERR_UNSUPPORTED);
    CHECK_ST(t, tern_accumulate(t->w, TERN_ACC_SUM, TERN_DT_INT64, &one, 1, NULL, w.keys[peer],
                                base_of(&w, peer) + 24, NULL, &r),
             TERN_ERR_UNSUPPORTED);
    flush(t, TERN_ANY_SOURCE);
    /* every ibv_post_send of this worker meanwhile (the stream's credit
     * returns and keepalives may add a few) */
    int64_t all = rma_counter(t->w, "verbs.post_send") - all0;
    th_barrier(t);
    if (threads) { /* every rank's second worker has finished: let them go */
        atomic_store(&at.stop, 1);
        pthread_join(th, NULL);
        tern_worker_destroy(at.w);
    }
    uint64_t total, swapped, winners, untouched, second;
    memcpy(&second, w.mem + 40, 8);
    CHECK(t, !threads || second == AMO_FIRST, "the second workers' counter: %llu",
          (unsigned long long)second);
    memcpy(&total, w.mem, 8);
    memcpy(&swapped, w.mem + 8, 8);
    memcpy(&winners, w.mem + 16, 8);
    memcpy(&untouched, w.mem + 24, 8);
    CHECK(t, total == (uint64_t)(n * t->size), "counter %llu, %d expected",
          (unsigned long long)total, n * t->size);
    CHECK(t, swapped >= 1 && swapped <= (uint64_t)t->size && winners == 1 && untouched == 0,
          "compare-and-swap: word %llu, %llu winners, refused ones wrote %llu",
          (unsigned long long)swapped, (unsigned long long)winners, (unsigned long long)untouched);
    int64_t posts = rma_counter(t->w, "verbs.amo_posts") - posts0;
    int64_t local = rma_counter(t->w, "verbs.amo_local") - local0;
    if (expect == 1)
        CHECK(t, posts == remote && local == own && all >= remote + own && all <= remote + own + 8,
              "%lld RDMA atomics for %lld on peers' regions, %lld loopback ones for %lld own, "
              "%lld posts in all",
              (long long)posts, (long long)remote, (long long)local, (long long)own,
              (long long)all);
    else if (expect == 0)
        CHECK(t, posts <= 0 && local <= 0, "%lld RDMA atomics, %lld loopback ones: none expected",
              (long long)posts, (long long)local);
    printf("rma_amo_device: rank %d: %lld atomics on peers' regions, %lld RDMA atomics posted; "
           "%lld own, %lld through the loopback QP; %lld ibv_post_send in all\n",
           t->rank, (long long)remote, (long long)posts, (long long)own, (long long)local,
           (long long)all);
    fflush(stdout);
    win_close(t, &w);
    return 0;
}

static int case_rma_amo_device(th_t *t)
{
    return amo_device(t, 0);
}

/* A destroyed TERN_REGION_ATOMIC_DEVICE region's key: an atomic on it is
 * refused (by the owner's device, which takes that VC's RMA QP down for
 * good: run it after the counting cases), nothing touched. */
static int case_rma_amo_device_gone(th_t *t)
{
    win_t gone;
    if (win_open(t, &gone, 64, TERN_REGION_READ | TERN_REGION_WRITE | TERN_REGION_ATOMIC_DEVICE,
                 0x5A))
        return -1;
    int peer = (t->rank + 1) % t->size;
    CHECK_ST(t, tern_region_destroy(gone.reg), TERN_OK);
    gone.reg = NULL;
    th_barrier(t);
    /* one rank at a time.  A refusal at a rank's end of a QP pair takes
     * that end down too: an atomic the rank then posts before it learns so
     * comes back flushed, its outcome unknown to the device's rules
     * (TERN_ERR_IO, by design: never applied twice).  Rank 0 goes first:
     * its QP is intact, the refusal is the device's */
    for (int turn = 0; turn < t->size; turn++) {
        if (turn == t->rank) {
            uint64_t old = 7;
            tern_request_t *r = NULL;
            tern_status_t st = tern_atomic(t->w, TERN_AMO_ADD, 8, 1, 0, &old, gone.keys[peer],
                                           base_of(&gone, peer), NULL, &r);
            st = st == TERN_INPROGRESS ? tern_wait(t->w, r, NULL) : st;
            if (t->rank == 0 || st != TERN_ERR_IO ||
                strstr(tern_last_error(), "outcome is unknown") == NULL)
                CHECK_ST(t, st, TERN_ERR_REMOTE_ACCESS);
            CHECK(t, old == 7, "a refused atomic wrote its result");
            st = tern_atomic(t->w, TERN_AMO_ADD, 8, 1, 0, NULL, gone.keys[peer],
                             base_of(&gone, peer), NULL, &r);
            if (st == TERN_INPROGRESS)
                st = tern_wait(t->w, r, NULL);
            if (st == TERN_OK) { /* no result: the flush reports it */
                st = tern_flush(t->w, peer, NULL, &r);
                st = st == TERN_INPROGRESS ? tern_wait(t->w, r, NULL) : st;
            }
            CHECK_ST(t, st, TERN_ERR_REMOTE_ACCESS);
        }
        th_barrier(t);
    }
    CHECK(t, gone.mem[0] == 0x5A && gone.mem[8] == 0x5A, "a destroyed region changed");
    win_close(t, &gone);
    return 0;
}

static int case_rma_amo_device_alloc(th_t *t)
{
    return amo_device(t, 1);
}

int64_t rma_counter(tern_worker_t *w, const char *name)
{
    tern_counter_t c[128];
    int n = tern_worker_counters(w, c, 128);
    for (int i = 0; i < n && i < 128; i++)
        if (strcmp(c[i].name, name) == 0)
            return (int64_t)c[i].value;
    return -1;
}

const th_case_t th_rma_cases[] = {
    {"barrier_waits", case_barrier_waits},
    {"rma_put_get", case_rma_put_get},
    {"rma_atomic", case_rma_atomic},
    {"rma_accumulate", case_rma_accumulate},
    {"rma_errors", case_rma_errors},
    {"rma_workers", case_rma_workers},
    {"rma_destroy_race", case_rma_destroy_race},
    {"rma_soak", case_rma_soak},
    {"rma_direct", case_rma_direct},
    {"rma_cma", case_rma_cma},
    {"rma_stale_key", case_rma_stale_key},
    {"rma_acc_refused", case_rma_acc_refused},
    {"rma_cq", case_rma_cq},
    {"rma_native", case_rma_native},
    {"rma_replay", case_rma_replay},
    {"rma_cq_alloc", case_rma_cq_alloc},
    {"rma_put_get_alloc", case_rma_put_get_alloc},
    {"rma_atomic_alloc", case_rma_atomic_alloc},
    {"rma_accumulate_alloc", case_rma_accumulate_alloc},
    {"rma_workers_alloc", case_rma_workers_alloc},
    {"rma_soak_alloc", case_rma_soak_alloc},
    {"rma_amo_device", case_rma_amo_device},
    {"rma_amo_device_alloc", case_rma_amo_device_alloc},
    {"rma_soak_device", case_rma_soak_device},
    /* last: a refused device atomic takes its VC's RMA QP down for good */
    {"rma_amo_device_gone", case_rma_amo_device_gone},
    {"peer_rma", case_peer_rma}, /* never in "all": rank 1 dies */
    {NULL, NULL},
};
