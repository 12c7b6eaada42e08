/*
 * Netmod behaviour seen through the public API (run alone, never in "all":
 * "all" connects every pair).
 *
 * lazy_connect: connections are made on first use, not all-to-all at
 * tern_init.  Only rank 0 and the last rank exchange a message; a netmod
 * that counts its connections (a "<netmod>.connections" counter in
 * tern_worker_counters: verbs counts its RC queue pairs) must then have made
 * exactly one on each of those two ranks and none on the others.  A netmod
 * that counts none passes, saying so.
 *
 * link_down: a ping-pong between ranks 0 and 1 while a fault injected into
 * rank 0 only takes its link down (verbs on tests/ibloop:
 * IBLOOP_FAULT_LINK_DOWN_AFTER).  Rank 0's send or receive must fail with
 * TERN_ERR_PEER_FAILED and a message naming rank 1 and the failed work
 * request; rank 1 stops waiting when no ping came for 5 s.  Without the
 * fault the 2000 rounds simply pass.
 *
 * fanout: rank 0 sends one message to every other rank (connecting them
 * all), stays idle (polling) for 1.5 s, then sends 6 small messages to
 * each at once, all in flight together; every rank gets its own.  Over
 * verbs with a small send queue (tests/engine/verbs.sh: 40 ranks,
 * TERN_VERBS_TX_DEPTH=16, TERN_VERBS_SIGNAL_EVERY=8) every peer's
 * unsignaled tail together fills the send CQ's budget: posting must go on
 * all the same.
 *
 * stream_in: ranks 1 .. size-1 in turn, one after the other, send 3000
 * 8-byte messages one way to rank 0, which never answers: a netmod with
 * credits must send them back in messages of their own.  Rank 0 prints
 * its "<netmod>.grants_grown" counter after each sender ("stream_in: rank
 * 0: after rank R: grants_grown G"); tests/engine/verbs.sh checks that the
 * first stream grew its grant and that the growth left the later ranks
 * their full shares.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/engine/cases.h"

/* The value of the counter whose name ends in suffix (".connections"). */
static int counter(th_t *t, const char *suffix, uint64_t *out)
{
    tern_counter_t c[64];
    int n = tern_worker_counters(t->w, c, 64);
    for (int i = 0; i < n && i < 64; i++) {
        const char *dot = strrchr(c[i].name, '.');
        if (dot != NULL && strcmp(dot, suffix) == 0) {
            *out = c[i].value;
            return 1;
        }
    }
    return 0;
}

static int case_lazy_connect(th_t *t)
{
    uint64_t before = 0, after = 0;
    if (!counter(t, ".connections", &before)) {
        printf("lazy_connect: rank %d: the netmod counts no connections (nothing to check)\n",
               t->rank);
        return 0;
    }
    CHECK(t, before == 0, "%llu connections made by tern_init", (unsigned long long)before);
    int last = t->size - 1;
    if (t->size >= 2 && (t->rank == 0 || t->rank == last)) {
        int v = 7, got = 0;
        if (t->rank == 0)
            CHECK_ST(t, tern_send(t->w, &v, sizeof(v), last, 5, 0), TERN_OK);
        else
            CHECK_ST(t, tern_recv(t->w, &got, sizeof(got), 0, 5, 0, NULL), TERN_OK);
    }
    th_barrier(t);
    counter(t, ".connections", &after);
    uint64_t want = t->size >= 2 && (t->rank == 0 || t->rank == last) ? 1 : 0;
    CHECK(t, after == want, "%llu connections after one message between ranks 0 and %d, want "
          "%llu", (unsigned long long)after, last, (unsigned long long)want);
    printf("lazy_connect: rank %d: %llu connection(s)\n", t->rank, (unsigned long long)after);
    fflush(stdout);
    return 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int case_link_down(th_t *t)
{
    if (t->size < 2 || t->rank > 1)
        return 0;
    int peer = 1 - t->rank, v = 0;
    tern_status_t st = TERN_OK;
    int i;
    for (i = 0; i < 2000 && st == TERN_OK; i++) {
        if (t->rank == 0) {
            st = tern_send(t->w, &i, sizeof(i), peer, 9, 0);
            if (st == TERN_OK)
                st = tern_recv(t->w, &v, sizeof(v), peer, 9, 0, NULL);
            continue;
        }
        tern_request_t *r;
        st = tern_irecv(t->w, &v, sizeof(v), peer, 9, 0, NULL, &r);
        double give_up = now_ms() + 5000;
        while (st == TERN_INPROGRESS && now_ms() < give_up) {
            tern_worker_wait(t->w, 100);
            st = tern_test(t->w, r, NULL);
        }
        if (st == TERN_INPROGRESS) {
            printf("link_down: rank 1: no ping %d within 5 s (rank 0's link is down)\n", i);
            fflush(stdout);
            return 0; /* the receive stays posted: finalize does not wait for it */
        }
        if (st == TERN_OK)
            st = tern_send(t->w, &v, sizeof(v), peer, 9, 0);
    }
    if (st == TERN_OK) {
        printf("link_down: rank %d: %d rounds, no failure (no fault injected?)\n", t->rank, i);
        return 0;
    }
    printf("link_down: rank %d: %s after %d rounds: %s\n", t->rank, tern_strerror(st), i,
           tern_last_error());
    fflush(stdout);
    if (t->rank == 0) {
        CHECK_ST(t, st, TERN_ERR_PEER_FAILED);
        CHECK(t, strstr(tern_last_error(), "rank 1") != NULL, "the message names rank 1");
    }
    return 0;
}

static int case_fanout(th_t *t)
{
    enum { K = 6 };
    if (t->rank == 0) {
        tern_request_t **r = calloc((size_t)t->size * K, sizeof(*r));
        long v = 1;
        CHECK(t, r != NULL, "allocation");
        if (r == NULL)
            return 1;
        for (int round = 0; round < 2; round++) {
            int k_max = round == 0 ? 1 : K;
            for (int p = 1; p < t->size; p++)
                for (int k = 0; k < k_max; k++) {
                    tern_status_t st = tern_isend(t->w, &v, sizeof(v), p, 13, 0, &r[p * K + k]);
                    CHECK(t, st == TERN_OK || st == TERN_INPROGRESS, "isend to %d: %s", p,
                          tern_strerror(st));
                    if (st != TERN_INPROGRESS)
                        r[p * K + k] = NULL;
                }
            CHECK_ST(t, tern_waitall(t->w, r, (size_t)t->size * K, NULL), TERN_OK);
            for (double end = now_ms() + 1500; round == 0 && now_ms() < end;)
                tern_progress(t->w); /* idle: background work of the netmod runs */
        }
        free(r);
    } else {
        long v = 0;
        for (int k = 0; k < 1 + K; k++)
            CHECK_ST(t, tern_recv(t->w, &v, sizeof(v), 0, 13, 0, NULL), TERN_OK);
    }
    return 0;
}

static int case_stream_in(th_t *t)
{
    enum { N = 3000, WIN = 64 };
    long v[WIN];
    tern_request_t *r[WIN];
    for (int from = 1; from < t->size; from++) {
        if (t->rank == from || t->rank == 0) {
            for (int i = 0; i < N; i += WIN) {
                int k = N - i < WIN ? N - i : WIN;
                for (int j = 0; j < k; j++) {
                    v[j] = t->rank == 0 ? -1 : (long)(i + j);
                    tern_status_t st = t->rank == 0
                        ? tern_irecv(t->w, &v[j], sizeof(v[j]), from, 17, 0, NULL, &r[j])
                        : tern_isend(t->w, &v[j], sizeof(v[j]), 0, 17, 0, &r[j]);
                    CHECK(t, st == TERN_OK || st == TERN_INPROGRESS, "post %d: %s", i + j,
                          tern_strerror(st));
                    if (st != TERN_INPROGRESS)
                        r[j] = NULL;
                }
                CHECK_ST(t, tern_waitall(t->w, r, (size_t)k, NULL), TERN_OK);
                for (int j = 0; t->rank == 0 && j < k; j++)
                    CHECK(t, v[j] == (long)(i + j), "message %d from rank %d: %ld", i + j, from,
                          v[j]);
            }
        }
        if (t->rank == 0) {
            uint64_t g = 0;
            if (counter(t, ".grants_grown", &g))
                printf("stream_in: rank 0: after rank %d: grants_grown %llu\n", from,
                       (unsigned long long)g);
            fflush(stdout);
        }
        th_barrier(t);
    }
    return 0;
}

const th_case_t th_netmod_cases[] = {
    {"fanout", case_fanout},
    {"lazy_connect", case_lazy_connect},
    {"link_down", case_link_down},
    {"stream_in", case_stream_in},
    {NULL, NULL},
};
