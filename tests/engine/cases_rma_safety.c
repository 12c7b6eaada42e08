/*
 * The one-sided cases about safety (include/tern/rma.h): every error
 * refused before anything moves, a region destroyed under another thread's
 * puts, keys that must not map, a refused accumulate's payload, a dead
 * target, and the barrier the other cases rely on.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/engine/cases_rma.h"

/* The errors: at the origin before anything moves, and at the target for
 * a destroyed region (reported by get / fetch / flush; nothing touched). */
int case_rma_errors(th_t *t)
{
    win_t w, ro, gone;
    if (win_open(t, &w, 4096, TERN_REGION_READ | TERN_REGION_WRITE, 0) ||
        win_open(t, &ro, 4096, TERN_REGION_READ, 7) ||
        win_open(t, &gone, 4096, TERN_REGION_READ | TERN_REGION_WRITE, 0x5A))
        return -1;
    int peer = (t->rank + 1) % t->size;
    uint64_t b = base_of(&w, peer);
    uint8_t buf[64] = {0};
    uint64_t v = 0;
    tern_request_t *r = NULL;
    /* out of the region: before its start, past its end, wrapping */
    CHECK_ST(t, tern_put(t->w, buf, 8, w.keys[peer], b - 1, NULL, &r), TERN_ERR_INVALID_PARAM);
    CHECK(t, strstr(tern_last_error(), "leave") != NULL, "message: %s", tern_last_error());
    CHECK_ST(t, tern_put(t->w, buf, 8, w.keys[peer], b + 4092, NULL, &r), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_get(t->w, buf, 16, w.keys[peer], UINT64_MAX - 7, NULL, &r),
             TERN_ERR_INVALID_PARAM);
    /* misaligned and unknown atomics, undefined accumulates */
    CHECK_ST(t, tern_atomic(t->w, TERN_AMO_ADD, 8, 1, 0, NULL, w.keys[peer], b + 4, NULL, &r),
             TERN_ERR_INVALID_PARAM);
    CHECK(t, strstr(tern_last_error(), "misaligned") != NULL, "message: %s", tern_last_error());
    CHECK_ST(t, tern_atomic(t->w, TERN_AMO_ADD, 3, 1, 0, NULL, w.keys[peer], b, NULL, &r),
             TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_atomic(t->w, TERN_AMO_NOPS, 8, 1, 0, NULL, w.keys[peer], b, NULL, &r),
             TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_accumulate(t->w, TERN_ACC_MAX, TERN_DT_DOUBLE_COMPLEX, buf, 1, NULL,
                                w.keys[peer], b, NULL, &r),
             TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_accumulate(t->w, TERN_ACC_BAND, TERN_DT_FLOAT, buf, 1, NULL, w.keys[peer], b,
                                NULL, &r),
             TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_accumulate(t->w, TERN_ACC_MAXLOC, TERN_DT_INT32, buf, 1, NULL, w.keys[peer], b,
                                NULL, &r),
             TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_accumulate(t->w, TERN_ACC_SUM, TERN_DT_2INT, buf, 1, NULL, w.keys[peer], b,
                                NULL, &r),
             TERN_ERR_INVALID_PARAM);
    /* a read-only region refuses writes at the origin */
    uint64_t rb = base_of(&ro, peer);
    CHECK_ST(t, tern_put(t->w, buf, 8, ro.keys[peer], rb, NULL, &r), TERN_ERR_REMOTE_ACCESS);
    CHECK_ST(t, tern_atomic(t->w, TERN_AMO_ADD, 8, 1, 0, NULL, ro.keys[peer], rb, NULL, &r),
             TERN_ERR_REMOTE_ACCESS);
    done(t, tern_get(t->w, buf, 8, ro.keys[peer], rb, NULL, &r), &r, "get from read-only");
    CHECK(t, buf[0] == 7, "get from read-only: %u", buf[0]);
    /* keys that are no keys */
    uint8_t key[TERN_KEY_MAX];
    size_t klen = sizeof(key);
    tern_key_t *k = NULL;
    CHECK_ST(t, tern_region_pack(w.reg, NULL, &klen), TERN_ERR_TRUNCATED);
    CHECK_ST(t, tern_region_pack(w.reg, key, &klen), TERN_OK);
    CHECK_ST(t, tern_key_unpack(t->ctx, t->rank, key, klen - 1, &k), TERN_ERR_MALFORMED);
    if (t->size > 1)
        CHECK_ST(t, tern_key_unpack(t->ctx, peer, key, klen, &k), TERN_ERR_MALFORMED);
    CHECK_ST(t, tern_key_unpack(t->ctx, t->size + 1000, key, klen, &k), TERN_ERR_INVALID_RANK);
    key[0] ^= 1;
    CHECK_ST(t, tern_key_unpack(t->ctx, t->rank, key, klen, &k), TERN_ERR_MALFORMED);
    /* the target destroys a region: every operation on it is refused
     * there, and its memory stays as it was */
    th_barrier(t);
    CHECK_ST(t, tern_region_destroy(gone.reg), TERN_OK);
    gone.reg = NULL;
    th_barrier(t);
    uint64_t gb = base_of(&gone, peer);
    memset(buf, 1, sizeof(buf));
    /* refused at once when the memory is reached directly (oneself), else
     * at the target, and then reported by the flush */
    tern_status_t st = tern_put(t->w, buf, sizeof(buf), gone.keys[peer], gb, NULL, &r);
    CHECK(t, st >= 0 || st == TERN_ERR_REMOTE_ACCESS, "put: %s", tern_strerror(st));
    int deferred = st >= 0;
    if (st == TERN_INPROGRESS)
        tern_wait(t->w, r, NULL);
    st = tern_flush(t->w, peer, NULL, &r);
    st = st == TERN_INPROGRESS ? tern_wait(t->w, r, NULL) : st;
    CHECK_ST(t, st, deferred ? TERN_ERR_REMOTE_ACCESS : TERN_OK);
    /* reported once: the next flush is clean */
    flush(t, peer);
    st = tern_get(t->w, buf, 8, gone.keys[peer], gb, NULL, &r);
    CHECK_ST(t, st == TERN_INPROGRESS ? tern_wait(t->w, r, NULL) : st, TERN_ERR_REMOTE_ACCESS);
    st = tern_atomic(t->w, TERN_AMO_ADD, 8, 1, 0, &v, gone.keys[peer], gb, NULL, &r);
    CHECK_ST(t, st == TERN_INPROGRESS ? tern_wait(t->w, r, NULL) : st, TERN_ERR_REMOTE_ACCESS);
    CHECK(t, buf[0] == 1 && v == 0, "a refused get / atomic wrote its result");
    int32_t one = 1;
    st = tern_accumulate(t->w, TERN_ACC_SUM, TERN_DT_INT32, &one, 1, NULL, gone.keys[peer], gb,
                         NULL, &r);
    CHECK(t, st >= 0 || st == TERN_ERR_REMOTE_ACCESS, "accumulate: %s", tern_strerror(st));
    deferred = st >= 0;
    if (st == TERN_INPROGRESS)
        tern_wait(t->w, r, NULL);
    st = tern_atomic(t->w, TERN_AMO_ADD, 8, 1, 0, NULL, gone.keys[peer], gb, NULL, &r);
    CHECK(t, st >= 0 || st == TERN_ERR_REMOTE_ACCESS, "atomic: %s", tern_strerror(st));
    st = tern_flush(t->w, TERN_ANY_SOURCE, NULL, &r);
    CHECK_ST(t, st == TERN_INPROGRESS ? tern_wait(t->w, r, NULL) : st,
             deferred ? TERN_ERR_REMOTE_ACCESS : TERN_OK);
    th_barrier(t);
    for (size_t i = 0; i < gone.len; i++)
        if (gone.mem[i] != 0x5A) {
            CHECK(t, 0, "byte %zu of a destroyed region changed to %#x", i, gone.mem[i]);
            break;
        }
    win_close(t, &gone);
    win_close(t, &ro);
    win_close(t, &w);
    return 0;
}

/* A second worker's thread putting into the right-hand neighbour's region
 * until the neighbour has destroyed it, progressing its worker meanwhile. */
struct race_thread {
    tern_worker_t *w;
    const win_t *win;
    int right;
    _Atomic int done, stop;
    int puts;
    tern_status_t flushed;
};

#define RACE_LEN (64u << 10)

static void *race_main(void *arg)
{
    struct race_thread *a = arg;
    uint8_t *src = malloc(RACE_LEN);
    tern_status_t flushed = TERN_OK;
    /* until a flush reports the region gone (bounded) */
    for (int i = 0; i < 4000 && flushed == TERN_OK; i++) {
        memset(src, (uint8_t)(i % 200 + 1), RACE_LEN); /* 1 .. 200: never 0xEE */
        tern_request_t *r = NULL;
        tern_status_t st = tern_put(a->w, src, RACE_LEN, a->win->keys[a->right],
                                    base_of(a->win, a->right), NULL, &r);
        if (st == TERN_INPROGRESS)
            st = tern_wait(a->w, r, NULL);
        a->puts++;
        if (st != TERN_OK) { /* refused at once: the memory is reached directly */
            flushed = st;
            break;
        }
        if (i % 8 == 7) {
            st = tern_flush(a->w, a->right, NULL, &r);
            flushed = st == TERN_INPROGRESS ? tern_wait(a->w, r, NULL) : st;
        }
    }
    a->flushed = flushed;
    free(src);
    atomic_store(&a->done, 1);
    while (!atomic_load(&a->stop))
        tern_progress(a->w);
    return NULL;
}

/* A region destroyed while a peer's puts into it are being applied by
 * another thread of the target: after tern_region_destroy returns, not a
 * byte of it changes, and the origin's flush reports the refusal.  Needs
 * two workers (the matrix's np2 entries); skipped with one. */
int case_rma_destroy_race(th_t *t)
{
    win_t w;
    if (win_open(t, &w, RACE_LEN, TERN_REGION_READ | TERN_REGION_WRITE, 0))
        return -1;
    struct race_thread a = {.win = &w, .right = (t->rank + 1) % t->size};
    pthread_t th;
    int threads = tern_worker_create(t->ctx, &a.w) == TERN_OK;
    if (threads && pthread_create(&th, NULL, race_main, &a) != 0) {
        tern_worker_destroy(a.w);
        threads = 0;
    }
    if (threads) {
        /* let some puts land, then destroy under them */
        for (int i = 0; i < 20000; i++)
            tern_progress(t->w);
        usleep(2000);
        CHECK_ST(t, tern_region_destroy(w.reg), TERN_OK);
        w.reg = NULL;
        /* the memory is the caller's again: a byte no put writes (0xEE),
         * so a copy still landing after the destroy shows */
        memset(w.mem, 0xEE, RACE_LEN);
        while (!atomic_load(&a.done))
            tern_progress(t->w);
        th_barrier(t); /* every origin has stopped */
        size_t changed = 0;
        for (size_t i = 0; i < RACE_LEN; i++)
            changed += w.mem[i] != 0xEE;
        CHECK(t, changed == 0, "%zu bytes of the region changed after tern_region_destroy returned",
              changed);
        CHECK(t, a.flushed == TERN_ERR_REMOTE_ACCESS,
              "the origin's flush after the destroy: %s (%d puts)", tern_strerror(a.flushed),
              a.puts);
        atomic_store(&a.stop, 1);
        pthread_join(th, NULL);
        tern_worker_destroy(a.w);
    }
    win_close(t, &w);
    return 0;
}

/* A target killed while operations to it are outstanding: they and the
 * flush fail with TERN_ERR_PEER_FAILED, and a get whose answer was
 * streaming in when the connection failed gives exactly one CQ entry (by
 * the same-host copy the get is done or refused within its call; run
 * alone: rank 1 dies). */
int case_peer_rma(th_t *t)
{
    win_t w;
    if (t->size < 2 || win_open(t, &w, 64u << 20, TERN_REGION_READ | TERN_REGION_WRITE, 0))
        return 0;
    if (t->rank == 1) {
        for (int i = 0; i < 100; i++)
            tern_progress(t->w);
        kill(getpid(), SIGKILL);
        return 1;
    }
    if (t->rank != 0) {
        win_free(t, &w);
        return 0;
    }
    static uint8_t big[1u << 20];
    tern_request_t *g = NULL, *f = NULL;
    /* the whole region, its answer long on the wire when rank 1 dies */
    uint8_t *all = malloc(64u << 20);
    int cq_ctx;
    tern_op_t cop = {.flags = TERN_OP_CQ, .context = &cq_ctx};
    /* by the same-host copy, done within the call: then it may already
     * see the death, and no CQ entry comes */
    tern_status_t st = tern_get(t->w, all, 64u << 20, w.keys[1], base_of(&w, 1), &cop, NULL);
    CHECK(t, st == TERN_OK || st == TERN_ERR_PEER_FAILED, "the CQ get: %s", tern_strerror(st));
    char why[256] = "";
    if (st < 0)
        snprintf(why, sizeof(why), "%s", tern_last_error());
    int want_cq = st == TERN_OK;
    st = TERN_OK;
    /* operations until the death is seen: gets answer nothing then */
    for (int i = 0; i < 100000 && st >= 0; i++) {
        st = tern_get(t->w, big, sizeof(big), w.keys[1], base_of(&w, 1), NULL, &g);
        if (st == TERN_INPROGRESS)
            st = tern_wait(t->w, g, NULL);
    }
    CHECK_ST(t, st, TERN_ERR_PEER_FAILED);
    if (why[0] == '\0')
        snprintf(why, sizeof(why), "%s", tern_last_error());
    st = tern_flush(t->w, 1, NULL, &f);
    CHECK_ST(t, st == TERN_INPROGRESS ? tern_wait(t->w, f, NULL) : st, TERN_ERR_PEER_FAILED);
    st = tern_put(t->w, big, 8, w.keys[1], base_of(&w, 1), NULL, &g);
    CHECK_ST(t, st, TERN_ERR_PEER_FAILED);
    tern_cq_entry_t e[4];
    int n = 0;
    for (int i = 0; i < 100; i++) {
        int k = tern_cq_read(t->w, e + n, 4 - n);
        n += k > 0 ? k : 0;
    }
    CHECK(t, n == want_cq && (n == 0 || e[0].context == &cq_ctx),
          "%d CQ entries for the one CQ get, %d expected (first: %p, %s)", n, want_cq,
          n > 0 ? e[0].context : NULL, n > 0 ? tern_strerror(e[0].status) : "-");
    free(all);
    printf("peer_rma: rank 0 saw %s (%s); rma.cma=%lld\n", tern_strerror(TERN_ERR_PEER_FAILED),
           why, (long long)rma_counter(t->w, "rma.cma"));
    fflush(stdout);
    win_free(t, &w);
    return 0;
}

/* Exchange one key with the neighbours: send mine to the left-hand one,
 * receive the right-hand one's (the key of the region this rank targets). */
static size_t key_from_right(th_t *t, const void *mine, size_t len, void *out)
{
    int right = (t->rank + 1) % t->size, left = (t->rank + t->size - 1) % t->size;
    tern_request_t *r = NULL;
    tern_recv_info_t info = {0};
    tern_status_t st = tern_irecv(t->w, out, TERN_KEY_MAX, right, KEY_TAG + 1, KEY_SPACE, &info, &r);
    CHECK(t, st >= 0, "key receive: %s", tern_strerror(st));
    CHECK_ST(t, tern_send(t->w, mine, len, left, KEY_TAG + 1, KEY_SPACE), TERN_OK);
    if (st == TERN_INPROGRESS)
        CHECK_ST(t, tern_wait(t->w, r, &info), TERN_OK);
    return info.length;
}

/* Keys that must not map: a destroyed allocated region's, after its slot
 * and its memfd number went to other regions (the review's stale key), and
 * a forged one naming a file that is no region memfd.  Neither maps, an
 * operation with the stale one is refused, the regions now there are
 * untouched. */
int case_rma_stale_key(th_t *t)
{
    int right = (t->rank + 1) % t->size;
    void *a = NULL, *b = NULL, *c = malloc(4096);
    tern_region_t *ra, *rb, *rc;
    uint8_t key[TERN_KEY_MAX], theirs[TERN_KEY_MAX];
    size_t klen = sizeof(key);
    CHECK_ST(t, tern_region_alloc(t->ctx, 4096, TERN_REGION_READ | TERN_REGION_WRITE, &a, &ra),
             TERN_OK);
    CHECK_ST(t, tern_region_pack(ra, key, &klen), TERN_OK);
    /* A goes, C takes its slot, B its memfd number */
    CHECK_ST(t, tern_region_destroy(ra), TERN_OK);
    CHECK_ST(t, tern_region_create(t->ctx, c, 4096, TERN_REGION_READ | TERN_REGION_WRITE, &rc),
             TERN_OK);
    CHECK_ST(t, tern_region_alloc(t->ctx, 4096, TERN_REGION_READ | TERN_REGION_WRITE, &b, &rb),
             TERN_OK);
    memset(b, 0x3C, 4096);
    memset(c, 0x3C, 4096);
    size_t tlen = key_from_right(t, key, klen, theirs);
    th_barrier(t);
    tern_key_t *k = NULL;
    CHECK_ST(t, tern_key_unpack(t->ctx, right, theirs, tlen, &k), TERN_OK);
    if (k != NULL) {
        CHECK(t, right == t->rank || tern_key_local(k) == NULL,
              "a destroyed region's key mapped memory at %p", tern_key_local(k));
        uint64_t v = 0x5757575757575757ull;
        tern_request_t *r = NULL;
        tern_status_t st = tern_put(t->w, &v, 8, k, tern_key_base(k), NULL, &r);
        if (st == TERN_INPROGRESS)
            st = tern_wait(t->w, r, NULL);
        if (st == TERN_OK) { /* sent: the flush reports the refusal */
            st = tern_flush(t->w, right, NULL, &r);
            st = st == TERN_INPROGRESS ? tern_wait(t->w, r, NULL) : st;
        }
        CHECK_ST(t, st, TERN_ERR_REMOTE_ACCESS);
        tern_key_destroy(k);
    }
    /* a forged section: the fd names something else (this rank's stdin) */
    if (tlen >= 96 && right != t->rank) {
        int32_t fd0 = 0;
        memcpy(theirs + 48 + 8 + 36, &fd0, sizeof(fd0)); /* tern_key_shm_t.fd */
        CHECK_ST(t, tern_key_unpack(t->ctx, right, theirs, tlen, &k), TERN_OK);
        CHECK(t, k == NULL || tern_key_local(k) == NULL, "a forged key mapped %p",
              k != NULL ? tern_key_local(k) : NULL);
        tern_key_destroy(k);
    }
    th_barrier(t);
    for (int i = 0; i < 4096; i++)
        if (((uint8_t *)b)[i] != 0x3C || ((uint8_t *)c)[i] != 0x3C) {
            CHECK(t, 0, "byte %d of a live region changed", i);
            break;
        }
    CHECK_ST(t, tern_region_destroy(rb), TERN_OK);
    CHECK_ST(t, tern_region_destroy(rc), TERN_OK);
    free(c);
    return 0;
}

/* An accumulate with a result into a region destroyed before it arrives:
 * the refusal comes back only once its payload has left the origin's
 * buffer, which the origin may then unmap (it crashed the origin when the
 * target answered at the header). */
int case_rma_acc_refused(th_t *t)
{
    const size_t n = 1u << 20, len = n * sizeof(double);
    int right = (t->rank + 1) % t->size;
    void *mem = malloc(len);
    tern_region_t *reg;
    uint8_t key[TERN_KEY_MAX], theirs[TERN_KEY_MAX];
    size_t klen = sizeof(key);
    CHECK_ST(t, tern_region_create(t->ctx, mem, len, TERN_REGION_READ | TERN_REGION_WRITE, &reg),
             TERN_OK);
    CHECK_ST(t, tern_region_pack(reg, key, &klen), TERN_OK);
    size_t tlen = key_from_right(t, key, klen, theirs);
    tern_key_t *k = NULL;
    CHECK_ST(t, tern_key_unpack(t->ctx, right, theirs, tlen, &k), TERN_OK);
    th_barrier(t);
    CHECK_ST(t, tern_region_destroy(reg), TERN_OK);
    th_barrier(t);
    double *src = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    double *res = malloc(len);
    CHECK(t, src != MAP_FAILED && res != NULL, "buffers");
    for (size_t i = 0; i < n; i++)
        src[i] = 1.0;
    tern_request_t *r = NULL;
    tern_status_t st = tern_accumulate(t->w, TERN_ACC_SUM, TERN_DT_DOUBLE, src, n, res, k,
                                       tern_key_base(k), NULL, &r);
    if (st == TERN_INPROGRESS)
        st = tern_wait(t->w, r, NULL);
    CHECK_ST(t, st, TERN_ERR_REMOTE_ACCESS);
    munmap(src, len); /* the origin's buffer is its own again */
    tern_key_destroy(k);
    th_barrier(t); /* progress after the unmap: nothing reads it */
    free(res);
    free(mem);
    return 0;
}

/* tern_barrier waits for every rank, on every node: each rank in turn
 * enters it late (after 50 ms); the others, once out of it, send the late
 * rank a token, and the late rank, just before it enters, probes for one:
 * a token already there means a rank left the barrier before this one
 * entered it.  No time is measured (the sleep only widens the window in
 * which a broken barrier is caught).  Under Slurm across two nodes a PMIx
 * fence without data collection did that (the one-sided cases then saw
 * regions destroyed under them). */
#define TOKEN_TAG 0x544f4b
int case_barrier_waits(th_t *t)
{
    for (int late = 0; late < t->size && late < 4; late++) {
        if (t->rank == late) {
            usleep(50000);
            int flag = 0;
            tern_recv_info_t info;
            for (int i = 0; i < 2000 && !flag; i++)
                CHECK_ST(t, tern_iprobe(t->w, TERN_ANY_SOURCE, TOKEN_TAG, KEY_SPACE, &flag, &info),
                         TERN_OK);
            CHECK(t, !flag, "rank %d left the barrier before this rank entered it",
                  flag ? info.source : -1);
        }
        th_barrier(t);
        int token = late;
        if (t->rank != late) {
            CHECK_ST(t, tern_send(t->w, &token, sizeof(token), late, TOKEN_TAG, KEY_SPACE),
                     TERN_OK);
        } else {
            for (int k = 0; k < t->size - 1; k++)
                CHECK_ST(t, tern_recv(t->w, &token, sizeof(token), TERN_ANY_SOURCE, TOKEN_TAG,
                                      KEY_SPACE, NULL),
                         TERN_OK);
        }
        th_barrier(t);
    }
    return 0;
}
