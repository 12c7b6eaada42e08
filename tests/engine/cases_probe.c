/*
 * Engine cases for probes, matched probes, cancel and synchronous sends
 * (the core calls the MPI layer needs: MPI_Iprobe, MPI_Improbe / MPI_Imrecv,
 * MPI_Cancel of a receive, MPI_Issend).  Ranks 0 and 1 take part; the
 * others only join the barriers.
 */
#include "tests/engine/cases.h"

#define SPACE 5

static const size_t probe_sizes[] = {0, 1, 100, 16384, 16385, 100000, 3u << 20};
#define NPROBE (sizeof(probe_sizes) / sizeof(probe_sizes[0]))

/* Rank 1 sends one message of each size (tags 10 + i); rank 0 probes each
 * (by source and tag, then any), checks what the probe says, then receives
 * it and checks the bytes. */
static int case_probe(th_t *t)
{
    if (t->size < 2 || t->rank > 1) {
        th_barrier(t);
        return 0;
    }
    uint8_t *buf = malloc(3u << 20);
    CHECK(t, buf != NULL, "allocation");
    if (t->rank == 1) {
        tern_request_t *r[NPROBE];
        for (size_t i = 0; i < NPROBE; i++) {
            th_fill(buf, probe_sizes[i], 700 + i);
            tern_status_t st = tern_isend(t->w, buf, probe_sizes[i], 0, 10 + (int)i, SPACE, &r[i]);
            CHECK(t, st == TERN_OK || st == TERN_INPROGRESS, "isend %zu", probe_sizes[i]);
            if (st == TERN_INPROGRESS) /* a rendezvous: the buffer is in use until done */
                CHECK_ST(t, tern_wait(t->w, r[i], NULL), TERN_OK);
        }
    } else {
        tern_recv_info_t info;
        int flag = 1;
        /* nothing with tag 9 ever comes */
        CHECK_ST(t, tern_iprobe(t->w, 1, 9, SPACE, &flag, &info), TERN_OK);
        CHECK(t, flag == 0, "iprobe found a message that was never sent");
        for (size_t i = 0; i < NPROBE; i++) {
            int tag = 10 + (int)i;
            memset(&info, 0, sizeof(info));
            CHECK_ST(t, tern_probe(t->w, 1, tag, SPACE, &info), TERN_OK);
            CHECK(t, info.source == 1 && info.tag == tag && info.length == probe_sizes[i],
                  "probe: source %d tag %d length %zu, expected 1 %d %zu", info.source, info.tag,
                  info.length, tag, probe_sizes[i]);
            /* probing again finds the same message: a probe leaves it */
            flag = 0;
            CHECK_ST(t, tern_iprobe(t->w, TERN_ANY_SOURCE, TERN_ANY_TAG, SPACE, &flag, &info),
                     TERN_OK);
            CHECK(t, flag == 1 && info.tag == tag, "iprobe(any) after probe: flag %d tag %d",
                  flag, info.tag);
            /* another space never matches it */
            CHECK_ST(t, tern_iprobe(t->w, 1, tag, SPACE + 1, &flag, &info), TERN_OK);
            CHECK(t, flag == 0, "iprobe in another space matched");
            memset(buf, 0, probe_sizes[i]);
            CHECK_ST(t, tern_recv(t->w, buf, probe_sizes[i], 1, tag, SPACE, &info), TERN_OK);
            CHECK(t, th_verify(buf, probe_sizes[i], 700 + i) == (size_t)-1, "size %zu differs",
                  probe_sizes[i]);
        }
        CHECK_ST(t, tern_iprobe(t->w, 99999, 0, SPACE, &flag, &info), TERN_ERR_INVALID_RANK);
        CHECK_ST(t, tern_iprobe(t->w, 1, -5, SPACE, &flag, &info), TERN_ERR_INVALID_TAG);
    }
    free(buf);
    th_barrier(t);
    return 0;
}

/* Matched probes: rank 1 sends, for each size, two messages with one tag;
 * rank 0 takes the first with a matched probe, then receives the second
 * with an ordinary receive (it must be the second: the probe took the
 * first), then receives the first into its own buffer (contiguous for some,
 * an iovec for others; one of them truncated). */
static int case_mprobe(th_t *t)
{
    if (t->size < 2 || t->rank > 1) {
        th_barrier(t);
        return 0;
    }
    size_t max = 3u << 20;
    uint8_t *a = malloc(max), *b = malloc(max);
    CHECK(t, a != NULL && b != NULL, "allocation");
    if (t->rank == 1) {
        /* both at once: the first is matched (by the probe) before the
         * second is received, and received after it */
        for (size_t i = 0; i < NPROBE; i++) {
            tern_request_t *r[2];
            for (int k = 0; k < 2; k++) {
                uint8_t *p = k ? b : a;
                th_fill(p, probe_sizes[i], 800 + 2 * i + (size_t)k);
                tern_status_t st = tern_isend(t->w, p, probe_sizes[i], 0, 20, SPACE, &r[k]);
                CHECK(t, st == TERN_OK || st == TERN_INPROGRESS, "isend: %s", tern_strerror(st));
                if (st != TERN_INPROGRESS)
                    r[k] = NULL;
            }
            for (int k = 0; k < 2; k++)
                if (r[k] != NULL)
                    CHECK_ST(t, tern_wait(t->w, r[k], NULL), TERN_OK);
        }
    } else {
        for (size_t i = 0; i < NPROBE; i++) {
            size_t n = probe_sizes[i];
            tern_message_t *msg = NULL;
            tern_recv_info_t info;
            int flag = 0;
            if (i & 1) {
                while (!flag) /* bounded: rank 1 sends it */
                    CHECK_ST(t, tern_improbe(t->w, TERN_ANY_SOURCE, 20, SPACE, &flag, &msg, &info),
                             TERN_OK);
            } else {
                CHECK_ST(t, tern_mprobe(t->w, 1, TERN_ANY_TAG, SPACE, &msg, &info), TERN_OK);
            }
            CHECK(t, msg != NULL && info.source == 1 && info.tag == 20 && info.length == n,
                  "mprobe: message %p source %d tag %d length %zu (expected %zu)", (void *)msg,
                  info.source, info.tag, info.length, n);
            /* the second message, by an ordinary receive */
            memset(b, 0, n);
            CHECK_ST(t, tern_recv(t->w, b, n, 1, 20, SPACE, &info), TERN_OK);
            CHECK(t, th_verify(b, n, 800 + 2 * i + 1) == (size_t)-1,
                  "size %zu: the receive got the probed message", n);
            /* the first, by its message handle */
            memset(a, 0, n);
            tern_request_t *r = NULL;
            tern_status_t st;
            bool cut = i == NPROBE - 1; /* the largest, into a buffer 1 byte short */
            size_t room = cut ? n - 1 : n;
            if (i % 3 == 2) {
                struct iovec iov[3] = {{a, room / 3}, {a + room / 3, room / 3},
                                       {a + 2 * (room / 3), room - 2 * (room / 3)}};
                st = tern_imrecvv(t->w, iov, 3, msg, &info, &r);
            } else {
                st = tern_imrecv(t->w, a, room, msg, &info, &r);
            }
            if (st == TERN_INPROGRESS)
                st = tern_wait(t->w, r, &info);
            CHECK_ST(t, st, cut ? TERN_ERR_TRUNCATED : TERN_OK);
            CHECK(t, info.length == n, "imrecv length %zu, expected %zu", info.length, n);
            if (n > 0)
                CHECK(t, th_verify(a, room, 800 + 2 * i) == (size_t)-1, "size %zu: imrecv differs",
                      n);
            /* a handle is good once */
            CHECK_ST(t, tern_imrecv(t->w, a, n, msg, &info, &r), TERN_ERR_INVALID_PARAM);
        }
    }
    free(a);
    free(b);
    th_barrier(t);
    return 0;
}

/* Cancel: a receive nobody sends to completes TERN_ERR_CANCELED; a receive
 * that has matched completes normally, with its data; a send cannot be
 * cancelled. */
static int case_cancel(th_t *t)
{
    if (t->size < 2 || t->rank > 1) {
        th_barrier(t);
        return 0;
    }
    int peer = 1 - t->rank;
    int v = -1;
    tern_request_t *r;
    tern_recv_info_t info;
    CHECK_ST(t, tern_irecv(t->w, &v, sizeof(v), peer, 31, SPACE, NULL, &r), TERN_INPROGRESS);
    CHECK_ST(t, tern_cancel(t->w, r), TERN_OK);
    CHECK_ST(t, tern_wait(t->w, r, &info), TERN_ERR_CANCELED);
    CHECK(t, strstr(tern_last_error(), "cancelled") != NULL, "message: %s", tern_last_error());
    CHECK_ST(t, tern_irecv(t->w, &v, sizeof(v), TERN_ANY_SOURCE, 31, SPACE, NULL, &r),
             TERN_INPROGRESS);
    CHECK_ST(t, tern_cancel(t->w, r), TERN_OK);
    CHECK_ST(t, tern_wait(t->w, r, NULL), TERN_ERR_CANCELED);
    size_t n = 1u << 20;
    uint8_t *big = malloc(n);
    CHECK(t, big != NULL, "allocation");
    if (t->rank == 1) {
        /* a rendezvous, then a word behind its RTS on the same stream */
        th_fill(big, n, 950);
        CHECK_ST(t, tern_isend(t->w, big, n, peer, 32, SPACE, &r), TERN_INPROGRESS);
        v = 1;
        CHECK_ST(t, tern_send(t->w, &v, sizeof(v), peer, 34, SPACE), TERN_OK);
        CHECK_ST(t, tern_wait(t->w, r, NULL), TERN_OK);
        /* a send: not cancellable */
        CHECK_ST(t, tern_isend(t->w, big, n, peer, 33, SPACE, &r), TERN_INPROGRESS);
        CHECK_ST(t, tern_cancel(t->w, r), TERN_ERR_UNSUPPORTED);
        CHECK_ST(t, tern_wait(t->w, r, NULL), TERN_OK);
    } else {
        memset(big, 0, n);
        CHECK_ST(t, tern_irecv(t->w, big, n, peer, 32, SPACE, NULL, &r), TERN_INPROGRESS);
        /* the word arrives after the RTS: the receive has matched by then */
        CHECK_ST(t, tern_recv(t->w, &v, sizeof(v), peer, 34, SPACE, NULL), TERN_OK);
        CHECK_ST(t, tern_cancel(t->w, r), TERN_OK);
        CHECK_ST(t, tern_wait(t->w, r, NULL), TERN_OK);
        CHECK(t, th_verify(big, n, 950) == (size_t)-1, "the matched receive's data differs");
        CHECK_ST(t, tern_recv(t->w, big, n, peer, 33, SPACE, NULL), TERN_OK);
    }
    free(big);
    th_barrier(t);
    return 0;
}

/* Synchronous send: rank 0's issend of every size stays pending until rank
 * 1 has posted its receive, which it does only after rank 0 said so by an
 * ordinary message sent once rank 0 saw its issend still pending. */
static int case_ssend(th_t *t)
{
    if (t->size < 2 || t->rank > 1) {
        th_barrier(t);
        return 0;
    }
    int peer = 1 - t->rank;
    uint8_t *buf = malloc(3u << 20);
    CHECK(t, buf != NULL, "allocation");
    for (size_t i = 0; i < NPROBE; i++) {
        size_t n = probe_sizes[i];
        int go = 1;
        if (t->rank == 0) {
            th_fill(buf, n, 900 + i);
            tern_request_t *r;
            tern_status_t st = tern_issend(t->w, buf, n, peer, 40, SPACE, &r);
            CHECK_ST(t, st, TERN_INPROGRESS);
            if (st != TERN_INPROGRESS)
                break;
            for (int k = 0; k < 2000; k++) /* rank 1 has not posted: it cannot complete */
                CHECK_ST(t, tern_test(t->w, r, NULL), TERN_INPROGRESS);
            CHECK_ST(t, tern_send(t->w, &go, sizeof(go), peer, 41, SPACE), TERN_OK);
            CHECK_ST(t, tern_wait(t->w, r, NULL), TERN_OK);
        } else {
            CHECK_ST(t, tern_recv(t->w, &go, sizeof(go), peer, 41, SPACE, NULL), TERN_OK);
            memset(buf, 0, n);
            CHECK_ST(t, tern_recv(t->w, buf, n, peer, 40, SPACE, NULL), TERN_OK);
            CHECK(t, th_verify(buf, n, 900 + i) == (size_t)-1, "ssend of %zu bytes differs", n);
        }
    }
    /* the blocking form and an iovec, both ways at once: each side posts its
     * receive first, so neither waits for the other */
    tern_request_t *rr;
    int in = 0, out = 7 + t->rank;
    CHECK_ST(t, tern_irecv(t->w, &in, sizeof(in), peer, 42, SPACE, NULL, &rr), TERN_INPROGRESS);
    struct iovec iov[2] = {{&out, 2}, {(char *)&out + 2, sizeof(out) - 2}};
    tern_request_t *sr;
    CHECK_ST(t, tern_issendv(t->w, iov, 2, peer, 42, SPACE, &sr), TERN_INPROGRESS);
    CHECK_ST(t, tern_wait(t->w, sr, NULL), TERN_OK);
    CHECK_ST(t, tern_wait(t->w, rr, NULL), TERN_OK);
    CHECK(t, in == 7 + peer, "issendv got %d", in);
    CHECK_ST(t, tern_irecv(t->w, &in, sizeof(in), peer, 43, SPACE, NULL, &rr), TERN_INPROGRESS);
    CHECK_ST(t, tern_ssend(t->w, &out, sizeof(out), peer, 43, SPACE), TERN_OK);
    CHECK_ST(t, tern_wait(t->w, rr, NULL), TERN_OK);
    /* to oneself (the self netmod), small and large */
    for (size_t n = 4; n <= (1u << 20); n <<= 18) {
        th_fill(buf, n, 960);
        uint8_t *self_in = malloc(n);
        CHECK_ST(t, tern_irecv(t->w, self_in, n, t->rank, 44, SPACE, NULL, &rr), TERN_INPROGRESS);
        tern_status_t st = tern_issend(t->w, buf, n, t->rank, 44, SPACE, &sr);
        CHECK(t, st == TERN_OK || st == TERN_INPROGRESS, "issend to self: %s", tern_strerror(st));
        if (st == TERN_INPROGRESS) /* (the self netmod may finish it at once) */
            CHECK_ST(t, tern_wait(t->w, sr, NULL), TERN_OK);
        CHECK_ST(t, tern_wait(t->w, rr, NULL), TERN_OK);
        CHECK(t, th_verify(self_in, n, 960) == (size_t)-1, "issend to self of %zu bytes", n);
        free(self_in);
    }
    free(buf);
    th_barrier(t);
    return 0;
}

const th_case_t th_probe_cases[] = {
    {"probe", case_probe},
    {"mprobe", case_mprobe},
    {"cancel", case_cancel},
    {"ssend", case_ssend},
    {NULL, NULL},
};
