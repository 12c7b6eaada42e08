/* Engine cases: invalid arguments, truncation, wakeup, PMIx name service,
 * and a peer killed mid-transfer. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/engine/cases.h"

static int case_invalid_args(th_t *t)
{
    char b[8] = {0};
    tern_request_t *r = NULL;
    CHECK_ST(t, tern_isend(t->w, b, 8, t->size, 0, 0, &r), TERN_ERR_INVALID_RANK);
    CHECK(t, strstr(tern_last_error(), "rank") != NULL, "message names the rank: %s",
          tern_last_error());
    CHECK_ST(t, tern_isend(t->w, b, 8, -2, 0, 0, &r), TERN_ERR_INVALID_RANK);
    CHECK_ST(t, tern_isend(t->w, b, 8, TERN_ANY_SOURCE, 0, 0, &r), TERN_ERR_INVALID_RANK);
    CHECK_ST(t, tern_isend(t->w, b, 8, 0, -5, 0, &r), TERN_ERR_INVALID_TAG);
    CHECK_ST(t, tern_isend(t->w, b, 8, 0, TERN_ANY_TAG, 0, &r), TERN_ERR_INVALID_TAG);
    CHECK_ST(t, tern_isend(t->w, NULL, 8, 0, 0, 0, &r), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_isend(t->w, b, 8, 0, 0, 0, NULL), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_irecv(t->w, b, 8, t->size + 3, 0, 0, NULL, &r), TERN_ERR_INVALID_RANK);
    CHECK_ST(t, tern_irecv(t->w, b, 8, 0, -7, 0, NULL, &r), TERN_ERR_INVALID_TAG);
    CHECK_ST(t, tern_irecv(t->w, NULL, 1, 0, 0, 0, NULL, &r), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_isendv(t->w, NULL, 2, 0, 0, 0, &r), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_wait(t->w, NULL, NULL), TERN_ERR_INVALID_PARAM);
    /* a NULL buffer of length 0 is a valid empty message */
    tern_status_t st = tern_isend(t->w, NULL, 0, t->rank, 0, 0, &r);
    CHECK(t, st == TERN_OK, "empty self send: %s", tern_strerror(st));
    CHECK_ST(t, tern_recv(t->w, NULL, 0, t->rank, 0, 0, NULL), TERN_OK);
    for (int s = TERN_INPROGRESS; s > TERN_ERR_LAST; s--)
        CHECK(t, strcmp(tern_strerror((tern_status_t)s), "unknown status") != 0,
              "status %d has a text", s);
    return 0;
}

/* Truncation, eager (posted and unexpected) and rendezvous: the status is
 * TERN_ERR_TRUNCATED, exactly the buffer's bytes are written, no more. */
static int case_truncate(th_t *t)
{
    if (t->size < 2)
        return 0;
    const size_t sent[] = {100, 100, 300000};
    const size_t cap[] = {50, 50, 70001};
    if (t->rank == 0) {
        for (int k = 0; k < 3; k++) {
            uint8_t *b = malloc(sent[k]);
            th_fill(b, sent[k], 40 + (uint64_t)k);
            CHECK_ST(t, tern_send(t->w, b, sent[k], 1, k, 0), TERN_OK);
            free(b);
        }
        th_barrier(t);
    } else if (t->rank == 1) {
        for (int k = 0; k < 3; k++) {
            uint8_t *b = malloc(cap[k] + 128);
            memset(b, 0xEE, cap[k] + 128);
            tern_recv_info_t info;
            tern_status_t st = tern_recv(t->w, b, cap[k], 0, k, 0, &info);
            CHECK_ST(t, st, TERN_ERR_TRUNCATED);
            CHECK(t, strstr(tern_last_error(), "truncated") != NULL, "message: %s",
                  tern_last_error());
            CHECK(t, info.length == sent[k], "info.length %zu, sent %zu", info.length, sent[k]);
            CHECK(t, th_verify(b, cap[k], 40 + (uint64_t)k) == (size_t)-1, "prefix differs");
            for (size_t i = 0; i < 128; i++)
                if (b[cap[k] + i] != 0xEE) {
                    CHECK(t, 0, "byte %zu past the %zu-byte buffer written", i, cap[k]);
                    break;
                }
            free(b);
        }
        th_barrier(t);
        /* the channel still works after truncations */
        int v = 0;
        CHECK_ST(t, tern_recv(t->w, &v, sizeof(v), 0, 9, 0, NULL), TERN_OK);
        CHECK(t, v == 4242, "after truncation got %d", v);
        return 0;
    } else {
        th_barrier(t);
        return 0;
    }
    int v = 4242;
    CHECK_ST(t, tern_send(t->w, &v, sizeof(v), 1, 9, 0), TERN_OK);
    return 0;
}

struct waker {
    tern_worker_t *w;
    int delay_ms;
};

static void *waker_main(void *arg)
{
    struct waker *k = arg;
    struct timespec ts = {.tv_sec = 0, .tv_nsec = k->delay_ms * 1000000L};
    nanosleep(&ts, NULL);
    tern_worker_signal(k->w);
    return NULL;
}

/* A thread blocked in tern_worker_wait is woken by another thread. */
static int case_wakeup(th_t *t)
{
    CHECK_ST(t, tern_worker_wait(t->w, 20), TERN_ERR_TIMED_OUT);
    struct waker k = {t->w, 100};
    pthread_t th;
    pthread_create(&th, NULL, waker_main, &k);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    tern_status_t st = tern_worker_wait(t->w, 20000);
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(th, NULL);
    double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
    CHECK_ST(t, st, TERN_ERR_INTERRUPTED);
    CHECK(t, ms < 15000, "woken only after %.0f ms", ms);
    /* a signal before the wait is not lost */
    tern_worker_signal(t->w);
    CHECK_ST(t, tern_worker_wait(t->w, 20000), TERN_ERR_INTERRUPTED);
    return 0;
}

static int case_pubsub(th_t *t)
{
    char *v = NULL;
    if (t->rank == 0) {
        CHECK_ST(t, tern_publish(t->ctx, "tern-test-svc", "port-4711"), TERN_OK);
    }
    th_barrier(t);
    CHECK_ST(t, tern_lookup(t->ctx, "tern-test-svc", &v), TERN_OK);
    CHECK(t, v != NULL && strcmp(v, "port-4711") == 0, "looked up \"%s\"", v ? v : "(null)");
    free(v);
    v = NULL;
    th_barrier(t);
    if (t->rank == 0)
        CHECK_ST(t, tern_unpublish(t->ctx, "tern-test-svc"), TERN_OK);
    th_barrier(t);
    CHECK_ST(t, tern_lookup(t->ctx, "tern-test-svc", &v), TERN_ERR_NOT_FOUND);
    CHECK_ST(t, tern_lookup(t->ctx, "tern-never-published", &v), TERN_ERR_NOT_FOUND);
    return 0;
}

/*
 * Peer death (run alone, not in "all"): rank 1 receives part of a 64 MiB
 * rendezvous message from rank 0 and SIGKILLs itself.  Rank 0's wait must
 * return TERN_ERR_PEER_FAILED, and so must a later receive from rank 1.
 */
static int case_peer_killed(th_t *t)
{
    const size_t n = 64u << 20;
    if (t->size < 2)
        return 0;
    if (t->rank == 1) {
        uint8_t *b = malloc(n);
        tern_request_t *r;
        tern_status_t st = tern_irecv(t->w, b, n, 0, 1, 0, NULL, &r);
        for (int i = 0; i < 200 && st == TERN_INPROGRESS; i++)
            tern_progress(t->w);
        kill(getpid(), SIGKILL);
        return 1;
    }
    if (t->rank != 0)
        return 0;
    uint8_t *b = malloc(n);
    memset(b, 1, n);
    struct timespec a, z;
    clock_gettime(CLOCK_MONOTONIC, &a);
    tern_status_t st = tern_send(t->w, b, n, 1, 1, 0);
    clock_gettime(CLOCK_MONOTONIC, &z);
    double ms = (double)(z.tv_sec - a.tv_sec) * 1e3 + (double)(z.tv_nsec - a.tv_nsec) / 1e6;
    CHECK_ST(t, st, TERN_ERR_PEER_FAILED);
    CHECK(t, strstr(tern_last_error(), "rank 1") != NULL, "message names rank 1: %s",
          tern_last_error());
    int v;
    CHECK_ST(t, tern_recv(t->w, &v, sizeof(v), 1, 2, 0, NULL), TERN_ERR_PEER_FAILED);
    printf("peer_killed: rank 0 saw %s after %.0f ms\n", tern_strerror(st), ms);
    fflush(stdout);
    free(b);
    return 0;
}

const th_case_t th_error_cases[] = {
    {"invalid_args", case_invalid_args},
    {"truncate", case_truncate},
    {"wakeup", case_wakeup},
    {"pubsub", case_pubsub},
    {"peer_killed", case_peer_killed},
    {NULL, NULL},
};
