/*
 * tern_bench — the measurement loops between rank 0 and rank 1 (OSU method).
 *
 *  lat   ping-pong: 0 sends, 1 receives and sends back; one-way latency is
 *        the round trip / 2.
 *  bw    0 posts a window of BP_WINDOW isends, 1 a window of irecvs; after
 *        both complete, 1 sends a 1-byte ack.  MB/s = bytes moved / time.
 *  bibw  both ranks post BP_WINDOW irecvs and BP_WINDOW isends at once and
 *        wait for all of them; bytes in both directions count.
 *  mr    the bw loop (osu_mbw_mr with one pair: 1 pre-posts the window of
 *        irecvs, 0 posts the window of isends, ack per window), counted in
 *        messages per second.
 *  stream  one-way without an ack per window, as ucx_perftest's tag_bw:
 *        0 keeps up to BP_WINDOW isends in flight, waiting only for the
 *        oldest when all are; 1 keeps BP_WINDOW irecvs posted, reposting
 *        each as it completes.  An iteration is BP_WINDOW messages; 1 acks
 *        once after the warm-up (both start the timed part together) and
 *        once at the end (the time covers every message's arrival).
 *        Messages per second.
 *
 * Time is taken on rank 0 with CLOCK_MONOTONIC from the end of the warm-up
 * to the end of the last round.
 */
#include "config.h"

#include "bench/bench_util_internal.h"
#include "bench/tern_bench_internal.h"

#include <stdio.h>
#include <stdlib.h>

enum {
    TB_TAG_LAT = 1,
    TB_TAG_BW = 2,
    TB_TAG_ACK = 3,
    TB_TAG_BIBW = 4,
    TB_TAG_MR = 5,
    TB_TAG_STREAM = 6,
};

void tb_check(const tb_env_t *env, tern_status_t st, const char *what)
{
    char msg[512];

    if (st >= 0) {
        return;
    }
    snprintf(msg, sizeof(msg), "tern_bench rank %d: %s failed: %s (%s)", env->rank, what,
             tern_strerror(st), tern_last_error());
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
    tern_abort(env->ctx, 1, msg);
    exit(1); /* tern_abort should not return; never carry on if it does */
}

/* Blocking send/receive through the nonblocking calls: wait only when the
 * operation did not complete at once. */
static void tb_send(const tb_env_t *env, const void *buf, size_t len, int tag)
{
    tern_request_t *req = NULL;
    tern_status_t st = tern_isend(env->w, buf, len, env->peer, tag, 0, &req);

    tb_check(env, st, "tern_isend");
    if (st == TERN_INPROGRESS) {
        tb_check(env, tern_wait(env->w, req, NULL), "tern_wait(send)");
    }
}

static void tb_recv(const tb_env_t *env, void *buf, size_t len, int tag)
{
    tern_request_t *req = NULL;
    tern_status_t st = tern_irecv(env->w, buf, len, env->peer, tag, 0, NULL, &req);

    tb_check(env, st, "tern_irecv");
    if (st == TERN_INPROGRESS) {
        tb_check(env, tern_wait(env->w, req, NULL), "tern_wait(recv)");
    }
}

static void tb_post_sends(const tb_env_t *env, size_t size, int tag, tern_request_t **reqs)
{
    for (int j = 0; j < BP_WINDOW; j++) {
        reqs[j] = NULL;
        tb_check(env, tern_isend(env->w, env->sbuf, size, env->peer, tag, 0, &reqs[j]),
                 "tern_isend");
    }
}

static void tb_post_recvs(const tb_env_t *env, size_t size, int tag, tern_request_t **reqs)
{
    for (int j = 0; j < BP_WINDOW; j++) {
        reqs[j] = NULL;
        tb_check(env, tern_irecv(env->w, env->rbuf, size, env->peer, tag, 0, NULL, &reqs[j]),
                 "tern_irecv");
    }
}

static void tb_lat_round(const tb_env_t *env, size_t size)
{
    if (env->rank == 0) {
        tb_send(env, env->sbuf, size, TB_TAG_LAT);
        tb_recv(env, env->rbuf, size, TB_TAG_LAT);
    } else {
        tb_recv(env, env->rbuf, size, TB_TAG_LAT);
        tb_send(env, env->sbuf, size, TB_TAG_LAT);
    }
}

static void tb_bw_round(const tb_env_t *env, size_t size, int tag)
{
    tern_request_t *reqs[BP_WINDOW];
    char ack = 0;

    if (env->rank == 0) {
        tb_post_sends(env, size, tag, reqs);
        tb_check(env, tern_waitall(env->w, reqs, BP_WINDOW, NULL), "tern_waitall(send)");
        tb_recv(env, &ack, 1, TB_TAG_ACK);
    } else {
        tb_post_recvs(env, size, tag, reqs);
        tb_check(env, tern_waitall(env->w, reqs, BP_WINDOW, NULL), "tern_waitall(recv)");
        tb_send(env, &ack, 1, TB_TAG_ACK);
    }
}

static void tb_bibw_round(const tb_env_t *env, size_t size)
{
    tern_request_t *reqs[2 * BP_WINDOW];

    /* Receives first, so no message of the window lands unexpected. */
    tb_post_recvs(env, size, TB_TAG_BIBW, reqs);
    tb_post_sends(env, size, TB_TAG_BIBW, reqs + BP_WINDOW);
    tb_check(env, tern_waitall(env->w, reqs, 2 * BP_WINDOW, NULL), "tern_waitall(bibw)");
}

static void tb_round(const tb_env_t *env, bp_test_t test, size_t size)
{
    switch (test) {
    case BP_TEST_LAT:
        tb_lat_round(env, size);
        break;
    case BP_TEST_BW:
        tb_bw_round(env, size, TB_TAG_BW);
        break;
    case BP_TEST_BIBW:
        tb_bibw_round(env, size);
        break;
    case BP_TEST_MR:
        tb_bw_round(env, size, TB_TAG_MR);
        break;
    case BP_TEST_ALLREDUCE: /* mpi_bench only: bp_parse never selects it here */
    case BP_TEST_STREAM:    /* tb_stream_run: no rounds of its own */
    case BP_TEST_COUNT:
        break;
    }
}

/* n messages of the stream through the ring of requests reqs (BP_WINDOW,
 * NULL where free); then every one complete and, from 1, the ack. */
static void tb_stream_part(const tb_env_t *env, size_t size, long n, tern_request_t **reqs)
{
    char ack = 0;

    for (long k = 0; k < n; k++) {
        tern_request_t **r = &reqs[k % BP_WINDOW];

        if (*r != NULL) {
            tb_check(env, tern_wait(env->w, *r, NULL), "tern_wait(stream)");
        }
        *r = NULL;
        if (env->rank == 0) {
            tb_check(env, tern_isend(env->w, env->sbuf, size, env->peer, TB_TAG_STREAM, 0, r),
                     "tern_isend");
        } else {
            tb_check(env, tern_irecv(env->w, env->rbuf, size, env->peer, TB_TAG_STREAM, 0, NULL,
                                     r),
                     "tern_irecv");
        }
    }
    tb_check(env, tern_waitall(env->w, reqs, BP_WINDOW, NULL), "tern_waitall(stream)");
    for (int j = 0; j < BP_WINDOW; j++) {
        reqs[j] = NULL;
    }
    if (env->rank == 0) {
        tb_recv(env, &ack, 1, TB_TAG_ACK);
    } else {
        tb_send(env, &ack, 1, TB_TAG_ACK);
    }
}

static double tb_stream_run(const tb_env_t *env, size_t size, long iters, long warmup)
{
    tern_request_t *reqs[BP_WINDOW] = {NULL};
    uint64_t t0;

    if (warmup > 0) {
        tb_stream_part(env, size, warmup * BP_WINDOW, reqs);
    }
    t0 = bench_now_ns();
    tb_stream_part(env, size, iters * BP_WINDOW, reqs);
    return env->rank == 0 ? bp_value(BP_TEST_STREAM, size, iters, bench_now_ns() - t0) : 0.0;
}

double tb_run(const tb_env_t *env, bp_test_t test, size_t size, long iters, long warmup)
{
    uint64_t t0 = 0, ns;

    if (test == BP_TEST_STREAM) {
        return tb_stream_run(env, size, iters, warmup);
    }

    for (long i = 0; i < warmup + iters; i++) {
        if (i == warmup) {
            t0 = bench_now_ns();
        }
        tb_round(env, test, size);
    }
    ns = bench_now_ns() - t0;
    return env->rank == 0 ? bp_value(test, size, iters, ns) : 0.0;
}
