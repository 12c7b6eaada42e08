/* Engine cases: invalid arguments, overflowing and empty iovecs, lengths
 * past SSIZE_MAX, NULL handles, truncation, wakeup, PMIx name service, a
 * peer killed mid-transfer and a peer that exits without a word. */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
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

/*
 * iovec lengths that add up past SIZE_MAX or past SSIZE_MAX are refused with
 * TERN_ERR_INVALID_PARAM, a message naming the entry that goes past, and
 * nothing sent, posted or written to *req: the peer receives only the message
 * sent after them, and the channel still works both ways.  (Two entries of
 * SIZE_MAX/2 + 10 wrapped to 18 bytes: a wrong 18-byte message went out as a
 * success over shm, and the tcp connection failed.)
 */
static int case_iov_overflow(th_t *t)
{
    uint8_t small[32] = {0};
    char mark;
    tern_request_t *const untouched = (tern_request_t *)(void *)&mark;
    const size_t huge = SIZE_MAX / 2 + 10;
    const struct iovec halves[2] = {{small, huge}, {small, huge}};    /* sum wraps to 18 */
    const struct iovec wrap[2] = {{small, SSIZE_MAX}, {small, huge}}; /* wraps at entry 1 */
    const struct iovec over[2] = {{small, 16}, {small, SSIZE_MAX}};   /* no wrap, > SSIZE_MAX */
    const struct iovec *bad[3] = {halves, wrap, over};
    const char *entry[3] = {"entry 0", "entry 1", "entry 1"};
    tern_request_t *r;
    tern_status_t st;

    for (int k = 0; k < 3; k++) {
        /* to self: the send and the receive are refused alike */
        r = untouched;
        CHECK_ST(t, tern_isendv(t->w, bad[k], 2, t->rank, 30 + 2 * k, 0, &r),
                 TERN_ERR_INVALID_PARAM);
        CHECK(t, strstr(tern_last_error(), entry[k]) != NULL, "message names %s: %s", entry[k],
              tern_last_error());
        CHECK(t, r == untouched, "*req written by a refused send");
        r = untouched;
        st = tern_irecvv(t->w, bad[k], 2, t->rank, 31 + 2 * k, 0, NULL, &r);
        CHECK_ST(t, st, TERN_ERR_INVALID_PARAM);
        CHECK(t, strstr(tern_last_error(), entry[k]) != NULL, "message names %s: %s", entry[k],
              tern_last_error());
        if (st == TERN_INPROGRESS) {
            /* posted after all: satisfy it so the case ends */
            CHECK_ST(t, tern_send(t->w, small, 4, t->rank, 31 + 2 * k, 0), TERN_OK);
            tern_wait(t->w, r, NULL);
        } else {
            CHECK(t, r == untouched, "*req written by a refused receive");
        }
        /* nothing was posted: a message of that tag reaches the next receive */
        int v = 1234 + k, got = 0;
        tern_recv_info_t info = {0};
        CHECK_ST(t, tern_send(t->w, &v, sizeof(v), t->rank, 31 + 2 * k, 0), TERN_OK);
        CHECK_ST(t, tern_recv(t->w, &got, sizeof(got), t->rank, 31 + 2 * k, 0, &info), TERN_OK);
        CHECK(t, got == v && info.length == sizeof(v), "self got %d (%zu bytes)", got, info.length);
    }
    if (t->size < 2 || t->rank > 1)
        return 0;
    int peer = 1 - t->rank, v = 0x600d, got = 0;
    if (t->rank == 0) {
        for (int k = 0; k < 3; k++) {
            r = untouched;
            CHECK_ST(t, tern_isendv(t->w, bad[k], 2, peer, 34 + k, 0, &r), TERN_ERR_INVALID_PARAM);
            CHECK(t, r == untouched, "*req written by a refused send");
        }
        CHECK_ST(t, tern_send(t->w, &v, sizeof(v), peer, 34, 0), TERN_OK);
        CHECK_ST(t, tern_recv(t->w, &got, sizeof(got), peer, 37, 0, NULL), TERN_OK);
        CHECK(t, got == v + 1, "reply %#x", (unsigned)got);
    } else {
        uint8_t buf[64];
        tern_recv_info_t info = {0};
        CHECK_ST(t, tern_recv(t->w, buf, sizeof(buf), peer, 34, 0, &info), TERN_OK);
        memcpy(&got, buf, sizeof(got));
        CHECK(t, info.length == sizeof(v) && got == v,
              "received %zu bytes (%#x), expected the %zu-byte one sent after the refused ones",
              info.length, (unsigned)got, sizeof(v));
        got = v + 1;
        CHECK_ST(t, tern_send(t->w, &got, sizeof(got), peer, 37, 0), TERN_OK);
    }
    return 0;
}

/*
 * A contiguous length past SSIZE_MAX (SIZE_MAX, SSIZE_MAX + 1, on a 64-byte
 * buffer) is refused by every call that takes one, as tern_isendv refuses
 * such an iovec: TERN_ERR_INVALID_PARAM with a message naming the length,
 * *req untouched, nothing sent or posted.  To self and to the paired rank;
 * the pair then receives only the message sent after the refused ones, and
 * the channel works both ways.  (tern_isend of SIZE_MAX bytes killed the tcp
 * connection with writev's EINVAL, and over shm the receiver got
 * TERN_ERR_TRUNCATED with a length of 18446744073709551615.)  The blocking
 * calls are tried only once their non-blocking core refused: without the
 * check they would wait forever for a receiver.
 */
static int case_len_overflow(th_t *t)
{
    uint8_t buf[64] = {0};
    char mark, name[32];
    tern_request_t *const untouched = (tern_request_t *)(void *)&mark;
    const size_t bad[2] = {SIZE_MAX, (size_t)SSIZE_MAX + 1};
    const int me = t->rank, pair = (t->rank ^ 1) < t->size ? t->rank ^ 1 : t->rank;
    const int dests[2] = {me, pair};
    tern_request_t *r;
    tern_status_t st;

#define REFUSED(call, what)                                                                        \
    do {                                                                                           \
        r = untouched;                                                                             \
        st = (call);                                                                               \
        CHECK_ST(t, st, TERN_ERR_INVALID_PARAM);                                                   \
        CHECK(t, strstr(tern_last_error(), name) != NULL, "%s: message does not name %s: %s",      \
              what, name, tern_last_error());                                                      \
        CHECK(t, r == untouched, "%s: *req written by a refused call", what);                      \
    } while (0)

    for (int k = 0; k < 2; k++) {
        snprintf(name, sizeof(name), "%zu", bad[k]);
        for (int d = 0; d < 2; d++) {
            REFUSED(tern_isend(t->w, buf, bad[k], dests[d], 60, 0, &r), "tern_isend");
            bool isend_refused = st == TERN_ERR_INVALID_PARAM;
            REFUSED(tern_issend(t->w, buf, bad[k], dests[d], 60, 0, &r), "tern_issend");
            bool issend_refused = st == TERN_ERR_INVALID_PARAM;
            if (isend_refused)
                REFUSED(tern_send(t->w, buf, bad[k], dests[d], 60, 0), "tern_send");
            if (issend_refused)
                REFUSED(tern_ssend(t->w, buf, bad[k], dests[d], 60, 0), "tern_ssend");
        }
        /* receives: posting one is refused; with a message waiting too */
        REFUSED(tern_irecv(t->w, buf, bad[k], pair, 61, 0, NULL, &r), "tern_irecv");
        if (st == TERN_INPROGRESS) { /* posted after all: take it back */
            tern_cancel(t->w, r);
            tern_wait(t->w, r, NULL);
        }
        int v = 4321 + k, got = 0;
        tern_recv_info_t info = {0};
        CHECK_ST(t, tern_send(t->w, &v, sizeof(v), me, 62, 0), TERN_OK);
        REFUSED(tern_recv(t->w, buf, bad[k], me, 62, 0, &info), "tern_recv");
        int flag = 0;
        tern_message_t *msg = NULL;
        CHECK_ST(t, tern_improbe(t->w, me, 62, 0, &flag, &msg, &info), TERN_OK);
        CHECK(t, flag == 1, "the self message was taken by the refused tern_recv");
        if (flag == 1) {
            REFUSED(tern_imrecv(t->w, buf, bad[k], msg, &info, &r), "tern_imrecv");
            if (st == TERN_ERR_INVALID_PARAM) { /* the message is still there to receive */
                st = tern_imrecv(t->w, &got, sizeof(got), msg, &info, &r);
                if (st == TERN_INPROGRESS)
                    st = tern_wait(t->w, r, &info);
                CHECK(t, st == TERN_OK && got == v && info.length == sizeof(v),
                      "self message after the refusals: %s, %d (%zu bytes)", tern_strerror(st), got,
                      info.length);
            }
        }
    }
#undef REFUSED
    if (pair == me)
        return 0;
    /* nothing of the refused sends reached the pair: its first tag-60
     * message is this one, and the channel works both ways */
    int v = 0x5eed + me, got = 0;
    tern_recv_info_t info = {0};
    CHECK_ST(t, tern_send(t->w, &v, sizeof(v), pair, 60, 0), TERN_OK);
    memset(buf, 0, sizeof(buf));
    st = tern_recv(t->w, buf, sizeof(buf), pair, 60, 0, &info);
    memcpy(&got, buf, sizeof(got));
    CHECK(t, st == TERN_OK && info.length == sizeof(got) && got == 0x5eed + pair,
          "from rank %d: %s, %zu bytes (%#x), expected the %zu-byte one sent after the refused "
          "ones",
          pair, tern_strerror(st), info.length, (unsigned)got, sizeof(got));
    return 0;
}

/*
 * Empty vectors: iovcnt 0 with iov NULL (or only zero-length entries with
 * NULL bases) sends and receives a zero-byte message, to self and to a
 * peer, with the receive posted before the message or matched after it
 * arrived; an empty vector receives an empty contiguous message and the
 * reverse, and a non-empty message into an empty vector is truncated.
 */
static int case_iov_empty(th_t *t)
{
    const struct iovec zeros[2] = {{NULL, 0}, {NULL, 0}};
    tern_request_t *r;
    tern_recv_info_t info;
    tern_status_t st;

    st = tern_isendv(t->w, NULL, 0, t->rank, 40, 0, &r);
    CHECK_ST(t, th_finish(t, st, r, NULL), TERN_OK);
    memset(&info, 0xff, sizeof(info));
    st = tern_irecvv(t->w, NULL, 0, t->rank, 40, 0, &info, &r);
    CHECK_ST(t, th_finish(t, st, r, &info), TERN_OK);
    CHECK(t, info.length == 0 && info.source == t->rank && info.tag == 40,
          "self: %zu bytes from %d tag %d", info.length, info.source, info.tag);
    if (t->size < 2 || t->rank > 1)
        return 0;
    int peer = 1 - t->rank, ready = 1;
    if (t->rank == 0) {
        /* 41: posted first (rank 1 says when); 43: already arrived */
        CHECK_ST(t, tern_recv(t->w, &ready, sizeof(ready), peer, 42, 0, NULL), TERN_OK);
        st = tern_isendv(t->w, NULL, 0, peer, 41, 0, &r);
        CHECK_ST(t, th_finish(t, st, r, NULL), TERN_OK);
        st = tern_isendv(t->w, NULL, 0, peer, 43, 0, &r);
        CHECK_ST(t, th_finish(t, st, r, NULL), TERN_OK);
        CHECK_ST(t, tern_send(t->w, &ready, sizeof(ready), peer, 44, 0), TERN_OK);
        /* 45: empty into a buffer; 46: 5 bytes into an empty vector; 47: zero entries */
        st = tern_isendv(t->w, NULL, 0, peer, 45, 0, &r);
        CHECK_ST(t, th_finish(t, st, r, NULL), TERN_OK);
        CHECK_ST(t, tern_send(t->w, "hello", 5, peer, 46, 0), TERN_OK);
        st = tern_isendv(t->w, zeros, 2, peer, 47, 0, &r);
        CHECK_ST(t, th_finish(t, st, r, NULL), TERN_OK);
        return 0;
    }
    tern_request_t *posted;
    memset(&info, 0xff, sizeof(info));
    st = tern_irecvv(t->w, NULL, 0, peer, 41, 0, &info, &posted);
    CHECK_ST(t, tern_send(t->w, &ready, sizeof(ready), peer, 42, 0), TERN_OK);
    CHECK_ST(t, th_finish(t, st, posted, &info), TERN_OK);
    CHECK(t, info.length == 0 && info.source == peer && info.tag == 41,
          "posted: %zu bytes from %d tag %d", info.length, info.source, info.tag);
    /* 44 follows 43 from the same sender: 43 is here once 44 is */
    CHECK_ST(t, tern_recv(t->w, &ready, sizeof(ready), peer, 44, 0, NULL), TERN_OK);
    memset(&info, 0xff, sizeof(info));
    st = tern_irecvv(t->w, NULL, 0, peer, 43, 0, &info, &r);
    CHECK_ST(t, th_finish(t, st, r, &info), TERN_OK);
    CHECK(t, info.length == 0 && info.tag == 43, "arrived: %zu bytes tag %d", info.length,
          info.tag);
    char buf[8] = "xxxxxxx";
    memset(&info, 0xff, sizeof(info));
    st = tern_irecv(t->w, buf, sizeof(buf), peer, 45, 0, &info, &r);
    CHECK_ST(t, th_finish(t, st, r, &info), TERN_OK);
    CHECK(t, info.length == 0 && strcmp(buf, "xxxxxxx") == 0, "empty into a buffer: %zu bytes",
          info.length);
    memset(&info, 0xff, sizeof(info));
    st = tern_irecvv(t->w, NULL, 0, peer, 46, 0, &info, &r);
    CHECK_ST(t, th_finish(t, st, r, &info), TERN_ERR_TRUNCATED);
    CHECK(t, info.length == 5, "truncated message: info.length %zu", info.length);
    memset(&info, 0xff, sizeof(info));
    st = tern_irecvv(t->w, zeros, 2, peer, 47, 0, &info, &r);
    CHECK_ST(t, th_finish(t, st, r, &info), TERN_OK);
    CHECK(t, info.length == 0, "zero-length entries: %zu bytes", info.length);
    return 0;
}

/*
 * NULL handles: every call given a NULL worker or request returns
 * TERN_ERR_INVALID_PARAM and touches nothing (a pending request given with
 * a NULL worker is neither completed nor freed); tern_progress(NULL) is 0,
 * tern_worker_signal(NULL) does nothing.
 */
static int case_null_handles(th_t *t)
{
    char b[8] = {0}, mark;
    tern_request_t *const untouched = (tern_request_t *)(void *)&mark;
    tern_request_t *r = untouched;
    struct iovec iov = {b, sizeof(b)};
    tern_recv_info_t info;
    const int me = t->rank;

    CHECK_ST(t, tern_isend(NULL, b, 8, me, 50, 0, &r), TERN_ERR_INVALID_PARAM);
    CHECK(t, strstr(tern_last_error(), "worker") != NULL, "message names the worker: %s",
          tern_last_error());
    CHECK_ST(t, tern_isendv(NULL, &iov, 1, me, 50, 0, &r), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_irecv(NULL, b, 8, me, 50, 0, NULL, &r), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_irecvv(NULL, &iov, 1, me, 50, 0, NULL, &r), TERN_ERR_INVALID_PARAM);
    CHECK(t, r == untouched, "*req written by a call with a NULL worker");
    CHECK_ST(t, tern_send(NULL, b, 8, me, 50, 0), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_recv(NULL, b, 8, me, 50, 0, NULL), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_isendv(t->w, &iov, 1, me, 50, 0, NULL), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_irecvv(t->w, &iov, 1, me, 50, 0, NULL, NULL), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_test(t->w, NULL, &info), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_wait(t->w, NULL, &info), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_worker_wait(NULL, 0), TERN_ERR_INVALID_PARAM);
    CHECK(t, tern_progress(NULL) == 0, "tern_progress(NULL) is not 0");
    tern_worker_signal(NULL); /* returns, nothing to wake */

    tern_request_t *reqs[2] = {NULL, NULL};
    CHECK_ST(t, tern_waitall(NULL, reqs, 2, NULL), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_waitall(t->w, NULL, 2, NULL), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_waitall(t->w, NULL, 0, NULL), TERN_OK);
    CHECK_ST(t, tern_waitall(t->w, reqs, 2, NULL), TERN_OK);

    /* a pending request offered with a NULL worker stays pending and usable */
    tern_status_t st = tern_irecv(t->w, b, sizeof(b), me, 51, 0, NULL, &r);
    CHECK_ST(t, st, TERN_INPROGRESS);
    if (st != TERN_INPROGRESS)
        return 0;
    CHECK_ST(t, tern_test(NULL, r, &info), TERN_ERR_INVALID_PARAM);
    CHECK_ST(t, tern_wait(NULL, r, &info), TERN_ERR_INVALID_PARAM);
    reqs[0] = r;
    CHECK_ST(t, tern_waitall(NULL, reqs, 1, NULL), TERN_ERR_INVALID_PARAM);
    CHECK(t, reqs[0] == r, "tern_waitall with a NULL worker cleared the array");
    CHECK_ST(t, tern_send(t->w, "abc", 4, me, 51, 0), TERN_OK);
    CHECK_ST(t, tern_wait(t->w, r, &info), TERN_OK);
    CHECK(t, info.length == 4 && strcmp(b, "abc") == 0, "pending receive got %zu bytes",
          info.length);
    return 0;
}

/* tern_waitall hands back each request's own status and completion info:
 * a receive that succeeded, one truncated, a NULL entry and a cancelled
 * receive, waited for together; the call returns the first error. */
static int case_waitall_status(th_t *t)
{
    const bool on = t->size >= 2 && t->rank <= 1;
    const int peer = 1 - t->rank;
    char a[8] = {0}, b[8] = {0}, c[8] = {0};
    tern_request_t *reqs[4] = {NULL, NULL, NULL, NULL};
    if (on && t->rank == 0) {
        CHECK_ST(t, tern_irecv(t->w, a, sizeof(a), TERN_ANY_SOURCE, 70, 0, NULL, &reqs[0]),
                 TERN_INPROGRESS);
        CHECK_ST(t, tern_irecv(t->w, b, sizeof(b), peer, 71, 0, NULL, &reqs[1]), TERN_INPROGRESS);
        CHECK_ST(t, tern_irecv(t->w, c, sizeof(c), peer, 72, 0, NULL, &reqs[3]), TERN_INPROGRESS);
        if (reqs[3] != NULL)
            CHECK_ST(t, tern_cancel(t->w, reqs[3]), TERN_OK);
    }
    th_barrier(t); /* the receives are posted before anything is sent */
    if (on && t->rank == 1) {
        CHECK_ST(t, tern_send(t->w, "abc", 4, peer, 70, 0), TERN_OK);
        CHECK_ST(t, tern_send(t->w, "0123456789abcdef", 16, peer, 71, 0), TERN_OK);
    }
    if (on && t->rank == 0) {
        tern_recv_info_t in[4];
        memset(in, 0x5a, sizeof(in));
        CHECK_ST(t, tern_waitall(t->w, reqs, 4, in), TERN_ERR_TRUNCATED);
        CHECK(t, !reqs[0] && !reqs[1] && !reqs[2] && !reqs[3], "entries not cleared");
        CHECK(t,
              in[0].status == TERN_OK && in[0].source == 1 && in[0].tag == 70 &&
                  in[0].length == 4 && strcmp(a, "abc") == 0,
              "entry 0: status %s, source %d, tag %d, %zu bytes", tern_strerror(in[0].status),
              in[0].source, in[0].tag, in[0].length);
        CHECK(t,
              in[1].status == TERN_ERR_TRUNCATED && in[1].source == 1 && in[1].tag == 71 &&
                  in[1].length == 16 && memcmp(b, "01234567", 8) == 0,
              "entry 1: status %s, source %d, tag %d, %zu bytes", tern_strerror(in[1].status),
              in[1].source, in[1].tag, in[1].length);
        CHECK(t,
              in[2].status == TERN_OK && in[2].source == TERN_ANY_SOURCE &&
                  in[2].tag == TERN_ANY_TAG && in[2].length == 0,
              "NULL entry: status %s, source %d, tag %d, %zu bytes", tern_strerror(in[2].status),
              in[2].source, in[2].tag, in[2].length);
        CHECK(t, in[3].status == TERN_ERR_CANCELED, "entry 3: status %s",
              tern_strerror(in[3].status));
    }
    th_barrier(t);
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

/* A thread blocked in tern_worker_wait is woken by another thread.  A wait
 * with nothing to do ends with TIMED_OUT; a netmod's own background work
 * (verbs: keepalive completions, returned credits) may end one early with
 * TERN_OK ("something may have happened"), so it gets a few tries. */
static int case_wakeup(th_t *t)
{
    tern_status_t idle = TERN_OK;
    for (int i = 0; i < 50 && idle == TERN_OK; i++)
        idle = tern_worker_wait(t->w, 20);
    CHECK_ST(t, idle, TERN_ERR_TIMED_OUT);
    struct waker k = {t->w, 100};
    pthread_t th;
    pthread_create(&th, NULL, waker_main, &k);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    tern_status_t st;
    do /* background activity (TERN_OK) is not the wake-up we wait for */
        st = tern_worker_wait(t->w, 20000);
    while (st == TERN_OK);
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

/* TERN_TEST_NO_NAME_SERVICE=1: the launcher has no PMIx name service
 * (Slurm's srun --mpi=pmix, tests/slurm): every call must be refused with
 * TERN_ERR_UNSUPPORTED naming the launcher's answer, and nothing returned. */
static int pubsub_refused(th_t *t)
{
    char *v = NULL;
    CHECK_ST(t, tern_publish(t->ctx, "tern-test-svc", "port-4711"), TERN_ERR_UNSUPPORTED);
    CHECK(t, strstr(tern_last_error(), "NOT-SUPPORTED") != NULL, "message: %s", tern_last_error());
    CHECK_ST(t, tern_lookup(t->ctx, "tern-test-svc", &v), TERN_ERR_UNSUPPORTED);
    CHECK(t, v == NULL, "lookup refused but returned \"%s\"", v);
    free(v);
    CHECK_ST(t, tern_unpublish(t->ctx, "tern-test-svc"), TERN_ERR_UNSUPPORTED);
    return 0;
}

static int case_pubsub(th_t *t)
{
    char *v = NULL;
    if (t->by_address) { /* no launcher at all: refused, naming that */
        CHECK_ST(t, tern_publish(t->ctx, "tern-test-svc", "port-4711"), TERN_ERR_UNSUPPORTED);
        CHECK(t, strstr(tern_last_error(), "no launcher") != NULL, "message: %s",
              tern_last_error());
        CHECK_ST(t, tern_lookup(t->ctx, "tern-test-svc", &v), TERN_ERR_UNSUPPORTED);
        CHECK(t, v == NULL, "lookup refused but returned \"%s\"", v);
        CHECK_ST(t, tern_unpublish(t->ctx, "tern-test-svc"), TERN_ERR_UNSUPPORTED);
        CHECK(t, strstr(tern_last_error(), "no launcher") != NULL, "message: %s",
              tern_last_error());
        const char *argv[] = {"true", NULL};
        char job[TERN_JOB_NAME_MAX] = "untouched";
        CHECK_ST(t, tern_spawn(t->ctx, argv, 1, NULL, NULL, job), TERN_ERR_UNSUPPORTED);
        CHECK(t, strstr(tern_last_error(), "no launcher") != NULL, "message: %s",
              tern_last_error());
        return 0;
    }
    if (getenv("TERN_TEST_NO_NAME_SERVICE") != NULL)
        return pubsub_refused(t);
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

/* A blocking receive from rank 1 on one worker, timed. */
struct exit_wait {
    tern_worker_t *w;
    tern_status_t st;
    double ms;
    char msg[256];
};

static void *exit_wait_main(void *arg)
{
    struct exit_wait *e = arg;
    struct timespec a, z;
    int v = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    e->st = tern_recv(e->w, &v, sizeof(v), 1, 3, 0, NULL);
    clock_gettime(CLOCK_MONOTONIC, &z);
    e->ms = (double)(z.tv_sec - a.tv_sec) * 1e3 + (double)(z.tv_nsec - a.tv_nsec) / 1e6;
    snprintf(e->msg, sizeof(e->msg), "%s", tern_last_error()); /* per thread */
    return NULL;
}

/*
 * Peer exit (run alone, not in "all"): rank 1 exits with status 0 without
 * tern_finalize, having sent nothing, so rank 0 holds no connection to it
 * (tcp connects on the first send).  Rank 0's blocking receive from rank 1
 * must return TERN_ERR_PEER_FAILED within seconds, whatever the netmod: only
 * the launcher knows of the exit (shm also has the peer's pidfd).  With
 * TERN_NUM_WORKERS > 1 a second thread waits the same way on worker 1 at
 * the same time: each worker learns of the death for its own VCs.
 */
static int case_peer_exit(th_t *t)
{
    if (t->size < 2)
        return 0;
    if (t->rank == 1) {
        fflush(NULL);
        _exit(0); /* no atexit handlers: a sanitizer's must not change the status */
    }
    if (t->rank != 0)
        return 0;
    struct exit_wait e[2] = {{.w = t->w}, {.w = NULL}};
    pthread_t th;
    int nw = 1;
    if (tern_worker_create(t->ctx, &e[1].w) == TERN_OK) {
        if (pthread_create(&th, NULL, exit_wait_main, &e[1]) == 0)
            nw = 2;
        else
            tern_worker_destroy(e[1].w);
    }
    exit_wait_main(&e[0]);
    if (nw == 2) {
        pthread_join(th, NULL);
        tern_worker_destroy(e[1].w);
    }
    for (int i = 0; i < nw; i++) {
        CHECK(t, e[i].st == TERN_ERR_PEER_FAILED, "worker %d: status %s, expected %s", i,
              tern_strerror(e[i].st), tern_strerror(TERN_ERR_PEER_FAILED));
        CHECK(t, strstr(e[i].msg, "rank 1") != NULL, "worker %d: message names rank 1: %s", i,
              e[i].msg);
        CHECK(t, e[i].ms < 5000, "worker %d noticed the exit only after %.0f ms", i, e[i].ms);
        printf("peer_exit: rank 0 worker %d saw %s after %.0f ms: %s\n", i,
               tern_strerror(e[i].st), e[i].ms, e[i].msg);
    }
    /* the VC stays failed: a send to rank 1 fails at once */
    int v = 0;
    CHECK_ST(t, tern_send(t->w, &v, sizeof(v), 1, 4, 0), TERN_ERR_PEER_FAILED);
    fflush(stdout);
    return 0;
}

/*
 * Peer exit after sending (run alone): once a message from rank 0 has gone
 * through (a tcp connection exists), rank 1 sends two eager messages and
 * exits with status 0 without tern_finalize; rank 0 starts receiving only
 * after the launcher has had time to report the exit.  Both messages arrive
 * intact and in order, then a receive from rank 1 fails with
 * TERN_ERR_PEER_FAILED.
 */
static int case_peer_exit_sent(th_t *t)
{
    enum { MID = 8000 }; /* eager at the default TERN_EAGER_LIMIT */
    int v = 0;
    if (t->size < 2)
        return 0;
    if (t->rank == 1) {
        uint8_t *b = malloc(MID);
        th_fill(b, MID, 77);
        CHECK_ST(t, tern_recv(t->w, &v, sizeof(v), 0, 4, 0, NULL), TERN_OK);
        v = 4711;
        CHECK_ST(t, tern_send(t->w, &v, sizeof(v), 0, 5, 0), TERN_OK);
        CHECK_ST(t, tern_send(t->w, b, MID, 0, 6, 0), TERN_OK);
        fflush(NULL);
        _exit(t->failures ? 1 : 0);
    }
    if (t->rank != 0)
        return 0;
    CHECK_ST(t, tern_send(t->w, &v, sizeof(v), 1, 4, 0), TERN_OK);
    usleep(500 * 1000); /* rank 1 has exited, the launcher has told us */
    /* Both posted before any progress: a receive posted once the VC has
     * failed is refused even if its message is already queued here. */
    uint8_t *b = malloc(MID);
    tern_request_t *r[2] = {NULL, NULL};
    tern_status_t s0 = tern_irecv(t->w, &v, sizeof(v), 1, 5, 0, NULL, &r[0]);
    tern_status_t s1 = tern_irecv(t->w, b, MID, 1, 6, 0, NULL, &r[1]);
    CHECK_ST(t, th_finish(t, s0, r[0], NULL), TERN_OK);
    CHECK(t, v == 4711, "got %d", v);
    tern_status_t st = th_finish(t, s1, r[1], NULL);
    CHECK_ST(t, st, TERN_OK);
    CHECK(t, st != TERN_OK || th_verify(b, MID, 77) == (size_t)-1, "second message differs");
    free(b);
    st = tern_recv(t->w, &v, sizeof(v), 1, 7, 0, NULL);
    CHECK_ST(t, st, TERN_ERR_PEER_FAILED);
    printf("peer_exit_sent: rank 0 got both messages, then %s\n", tern_strerror(st));
    fflush(stdout);
    return 0;
}

/*
 * A fault (run alone, not in "all"): rank 0 writes through a bad pointer.
 * tests/engine/backtrace.sh checks the backtrace tern writes on stderr and
 * that the process still dies of SIGSEGV.
 */
static int case_peer_crash(th_t *t)
{
    if (t->rank != 0)
        return 0;
    fflush(NULL);
    static volatile uintptr_t where = 16; /* not a constant the compiler can judge */
    volatile int *bad = (volatile int *)where;
    *bad = 1;
    return 1;
}

const th_case_t th_error_cases[] = {
    {"invalid_args", case_invalid_args},
    {"iov_overflow", case_iov_overflow},
    {"len_overflow", case_len_overflow},
    {"iov_empty", case_iov_empty},
    {"null_handles", case_null_handles},
    {"truncate", case_truncate},
    {"waitall_status", case_waitall_status},
    {"wakeup", case_wakeup},
    {"pubsub", case_pubsub},
    {"peer_killed", case_peer_killed},
    {"peer_exit", case_peer_exit},
    {"peer_exit_sent", case_peer_exit_sent},
    {"peer_crash", case_peer_crash},
    {NULL, NULL},
};
