/*
 * Per-thread workers (TERN_NUM_WORKERS > 1; with one worker the case only
 * checks that tern_worker_create says so).  Each rank drives worker 0 from
 * the main thread and worker 1 from a second thread at the same time, with
 * the same tags and spaces on both: worker i talks only to worker i of the
 * peer, so every message must arrive on the worker it was sent from, in
 * order, byte-exact, eager and rendezvous sizes alike.
 */
#include <pthread.h>

#include "tests/engine/cases.h"

enum { NMSG = 300 };

struct lane {
    th_t *t;
    tern_worker_t *w;
    int failures;
};

/* Ring exchange on one worker: send to rank+1, receive from rank-1. */
static void *lane_main(void *arg)
{
    struct lane *l = arg;
    th_t *t = l->t;
    int idx = tern_worker_index(l->w);
    int to = (t->rank + 1) % t->size, from = (t->rank + t->size - 1) % t->size;
    size_t cap = 70000;
    uint8_t *sb = malloc(cap), *rb = malloc(cap);
    for (int i = 0; i < NMSG && sb && rb; i++) {
        size_t len = (i % 10 == 9) ? 65536 + (size_t)i : (size_t)(i * 7 % 2000);
        uint64_t seed = (uint64_t)idx * 1000003u + (uint64_t)t->rank * 7919u + (uint64_t)i;
        th_fill(sb, len, seed);
        tern_request_t *rr, *sr;
        tern_recv_info_t info;
        tern_status_t rs = tern_irecv(l->w, rb, cap, from, 5, 2, &info, &rr);
        tern_status_t ss = tern_isend(l->w, sb, len, to, 5, 2, &sr);
        if (ss == TERN_INPROGRESS)
            ss = tern_wait(l->w, sr, NULL);
        if (rs == TERN_INPROGRESS)
            rs = tern_wait(l->w, rr, &info);
        size_t want = (i % 10 == 9) ? 65536 + (size_t)i : (size_t)(i * 7 % 2000);
        uint64_t rseed = (uint64_t)idx * 1000003u + (uint64_t)from * 7919u + (uint64_t)i;
        if (ss != TERN_OK || rs != TERN_OK || info.length != want ||
            th_verify(rb, want, rseed) != (size_t)-1) {
            fprintf(stderr, "FAIL [workers] rank %d worker %d message %d: send %s recv %s "
                    "length %zu (want %zu)\n", t->rank, idx, i, tern_strerror(ss),
                    tern_strerror(rs), info.length, want);
            l->failures++;
            break;
        }
    }
    free(sb);
    free(rb);
    return NULL;
}

static int case_workers(th_t *t)
{
    tern_worker_t *w1 = NULL;
    tern_status_t st = tern_worker_create(t->ctx, &w1);
    if (st != TERN_OK) {
        CHECK_ST(t, st, TERN_ERR_NO_RESOURCE);
        CHECK(t, strstr(tern_last_error(), "TERN_NUM_WORKERS") != NULL, "message: %s",
              tern_last_error());
    }
    CHECK_ST(t, tern_worker_destroy(t->w), TERN_ERR_INVALID_PARAM); /* worker 0 */
    if (st != TERN_OK)
        return 0;
    CHECK(t, tern_worker_index(w1) >= 1, "worker index %d", tern_worker_index(w1));
    if (t->size < 2) {
        CHECK_ST(t, tern_worker_destroy(w1), TERN_OK);
        return 0;
    }
    struct lane l0 = {t, t->w, 0}, l1 = {t, w1, 0};
    pthread_t th;
    CHECK(t, pthread_create(&th, NULL, lane_main, &l1) == 0, "pthread_create");
    lane_main(&l0);
    pthread_join(th, NULL);
    CHECK(t, l0.failures == 0 && l1.failures == 0, "worker 0: %d, worker %d: %d failures",
          l0.failures, tern_worker_index(w1), l1.failures);
    CHECK_ST(t, tern_worker_destroy(w1), TERN_OK);
    CHECK_ST(t, tern_worker_destroy(w1), TERN_ERR_INVALID_PARAM);
    /* handed out again after destroy */
    tern_worker_t *again = NULL;
    CHECK_ST(t, tern_worker_create(t->ctx, &again), TERN_OK);
    CHECK(t, again == w1, "the freed worker is handed out again");
    if (again != NULL)
        tern_worker_destroy(again);
    return 0;
}

const th_case_t th_worker_cases[] = {
    {"workers", case_workers},
    {NULL, NULL},
};
