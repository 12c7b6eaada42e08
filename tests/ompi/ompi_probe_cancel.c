/*
 * Matched probes and cancelled receives, the MPI calls that reach a
 * libfabric provider as FI_PEEK, FI_PEEK | FI_CLAIM, FI_CLAIM and
 * fi_cancel under Open MPI's mtl ofi (tests/ompi/ompi_local.sh and
 * ompi_hosts.sh run it there over tern's provider).  tests/mpi covers the
 * small cases; this adds what a provider gets wrong most easily:
 *
 *  1. every rank sends every rank messages of 0 B .. 1 MiB (eager and
 *     rendezvous sizes), two per size in order; each is taken by an
 *     ANY_SOURCE / ANY_TAG MPI_Mprobe or MPI_Improbe and received by
 *     MPI_Mrecv / MPI_Imrecv into a buffer of exactly the probed size, and
 *     the two of a (sender, size) arrive in the order sent;
 *  2. MPI_Iprobe (a peek) leaves the message: MPI_Improbe then claims it,
 *     and a plain receive posted after the claim does not get it;
 *  3. a cancelled receive takes nothing: a message sent after the cancel
 *     (small and rendezvous-sized) reaches the next receive;
 *  4. a receive already matched (the sender's MPI_Ssend returned) is not
 *     cancelled: MPI_Test_cancelled says false and the data is there;
 *  5. of eight posted receives every other one is cancelled; the other four
 *     get their messages, and the messages meant for the cancelled ones
 *     reach receives posted afterwards.
 *
 * Plain MPI (it passes under Open MPI's ob1 and tern's own MPI layer).
 * Prints "ok rank R of N" or "FAIL rank R line L: ..." lines; exits
 * non-zero on a failure.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mpi/mpi_check.h"

enum { NSIZES = 6, TAG_SZ = 100, TAG_PEEK = 200, TAG_CANCEL = 300, TAG_SSEND = 400, TAG_EO = 500 };
static const int sizes[NSIZES] = {0, 8, 4096, 65536, 300000, 1 << 20};

static unsigned char byte_of(int from, int to, int seq, int i)
{
    return (unsigned char)(from * 31 + to * 17 + seq * 7 + i * 13 + (i >> 8));
}

static void fill(unsigned char *b, int n, int from, int to, int seq)
{
    for (int i = 0; i < n; i++)
        b[i] = byte_of(from, to, seq, i);
}

static int wrong(const unsigned char *b, int n, int from, int to, int seq)
{
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += b[i] != byte_of(from, to, seq, i);
    return bad;
}

/* 1: matched probes of every size, from every rank, in order per sender */
static void mprobe_sizes(void)
{
    int nmsg = 2 * NSIZES * size;
    MPI_Request *sr = malloc(sizeof(MPI_Request) * (size_t)nmsg);
    unsigned char **out = malloc(sizeof(unsigned char *) * (size_t)nmsg);
    int *next = calloc((size_t)(size * NSIZES), sizeof(int)); /* per (sender, size) */
    for (int p = 0, k = 0; p < size; p++)
        for (int s = 0; s < NSIZES; s++)
            for (int seq = 0; seq < 2; seq++, k++) {
                out[k] = malloc((size_t)sizes[s] + 1);
                fill(out[k], sizes[s], rank, p, s * 2 + seq);
                MPI_Isend(out[k], sizes[s], MPI_BYTE, p, TAG_SZ + s, MPI_COMM_WORLD, &sr[k]);
            }
    for (int got = 0; got < nmsg; got++) {
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        int n = -1, flag = 0;
        if (got % 2 == 0) {
            MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st);
        } else {
            while (!flag)
                MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
        }
        MPI_Get_count(&st, MPI_BYTE, &n);
        int src = st.MPI_SOURCE, s = st.MPI_TAG - TAG_SZ;
        unsigned char *in = malloc((size_t)(n > 0 ? n : 0) + 1);
        if (src < 0 || src >= size || s < 0 || s >= NSIZES || n != sizes[s]) {
            CHECK(0, "probed a message from %d tag %d of %d bytes", src, st.MPI_TAG, n);
            MPI_Mrecv(in, n, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
            free(in);
            continue;
        }
        if (got % 2 == 0) {
            MPI_Mrecv(in, n, MPI_BYTE, &msg, &st);
        } else {
            MPI_Request rr;
            MPI_Imrecv(in, n, MPI_BYTE, &msg, &rr);
            MPI_Wait(&rr, &st);
        }
        int cnt = -1;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        int seq = next[src * NSIZES + s]++;
        CHECK(msg == MPI_MESSAGE_NULL, "message handle not reset");
        CHECK(cnt == n && st.MPI_SOURCE == src, "%d bytes from %d: received %d from %d", n, src,
              cnt, st.MPI_SOURCE);
        CHECK(seq < 2 && wrong(in, n, src, rank, s * 2 + seq) == 0,
              "message %d of %d bytes from %d: %d wrong bytes (out of order?)", seq, n, src,
              seq < 2 ? wrong(in, n, src, rank, s * 2 + seq) : -1);
        free(in);
    }
    MPI_Waitall(nmsg, sr, MPI_STATUSES_IGNORE);
    for (int k = 0; k < nmsg; k++)
        free(out[k]);
    free(out);
    free(sr);
    free(next);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* 2: a peek leaves the message, a claim takes it (ranks 0 -> 1) */
static void peek_claim(void)
{
    if (rank == 0) {
        int v[2] = {11, 12};
        MPI_Send(&v[0], 1, MPI_INT, 1, TAG_PEEK, MPI_COMM_WORLD);
        MPI_Send(&v[1], 1, MPI_INT, 1, TAG_PEEK, MPI_COMM_WORLD);
    } else if (rank == 1) {
        int flag = 0, x = -1, y = -1;
        MPI_Status st;
        while (!flag)
            MPI_Iprobe(0, TAG_PEEK, MPI_COMM_WORLD, &flag, &st);
        flag = 0;
        MPI_Iprobe(0, TAG_PEEK, MPI_COMM_WORLD, &flag, &st); /* peek twice: still there */
        CHECK(flag, "a second MPI_Iprobe no longer sees the message");
        MPI_Message msg;
        flag = 0;
        while (!flag)
            MPI_Improbe(0, TAG_PEEK, MPI_COMM_WORLD, &flag, &msg, &st);
        /* claimed: a receive posted now must get the second message */
        MPI_Recv(&y, 1, MPI_INT, 0, TAG_PEEK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Mrecv(&x, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
        CHECK(x == 11 && y == 12, "claimed %d, received %d (want 11, 12)", x, y);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* 3: a cancelled receive takes nothing (ranks 0 -> 1) */
static void cancel_then_send(void)
{
    enum { BIG = 300000 };
    unsigned char *b = malloc(BIG);
    for (int i = 0; i < 2; i++) {
        int n = i ? BIG : 4;
        if (rank == 1) {
            MPI_Request r;
            MPI_Status st;
            int flag = 0;
            MPI_Irecv(b, n, MPI_BYTE, MPI_ANY_SOURCE, TAG_CANCEL + i, MPI_COMM_WORLD, &r);
            CHECK(MPI_Cancel(&r) == MPI_SUCCESS, "cancel");
            MPI_Wait(&r, &st);
            MPI_Test_cancelled(&st, &flag);
            CHECK(flag, "a receive nothing matched was not cancelled (%d bytes)", n);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* the message leaves after the cancel */
        if (rank == 0) {
            fill(b, n, 0, 1, 40 + i);
            MPI_Send(b, n, MPI_BYTE, 1, TAG_CANCEL + i, MPI_COMM_WORLD);
        } else if (rank == 1) {
            memset(b, 0, n);
            MPI_Status st;
            int cnt = -1;
            MPI_Recv(b, n, MPI_BYTE, 0, TAG_CANCEL + i, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            CHECK(cnt == n && wrong(b, n, 0, 1, 40 + i) == 0,
                  "the message after a cancel (%d bytes): got %d, %d wrong", n, cnt,
                  wrong(b, n, 0, 1, 40 + i));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(b);
}

/* 4: a matched receive cannot be cancelled (ranks 0 -> 1) */
static void cancel_matched(void)
{
    int v = -1;
    MPI_Request r = MPI_REQUEST_NULL;
    if (rank == 1)
        MPI_Irecv(&v, 1, MPI_INT, 0, TAG_SSEND, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD); /* the receive is posted */
    if (rank == 0) {
        int x = 77;
        MPI_Ssend(&x, 1, MPI_INT, 1, TAG_SSEND, MPI_COMM_WORLD); /* returns once matched */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        MPI_Status st;
        int flag = 1;
        MPI_Cancel(&r);
        MPI_Wait(&r, &st);
        MPI_Test_cancelled(&st, &flag);
        CHECK(!flag && v == 77, "a matched receive: cancelled %d, value %d", flag, v);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* 5: cancel every other one of eight posted receives (ranks 0 -> 1) */
static void cancel_every_other(void)
{
    enum { N = 8 };
    int in[N], late[N];
    if (rank == 1) {
        MPI_Request r[N];
        for (int i = 0; i < N; i++) {
            in[i] = -1;
            MPI_Irecv(&in[i], 1, MPI_INT, 0, TAG_EO + i, MPI_COMM_WORLD, &r[i]);
        }
        for (int i = 0; i < N; i += 2)
            MPI_Cancel(&r[i]);
        MPI_Barrier(MPI_COMM_WORLD); /* sends go out after the cancels */
        for (int i = 0; i < N; i++) {
            MPI_Status st;
            int flag = -1;
            MPI_Wait(&r[i], &st);
            MPI_Test_cancelled(&st, &flag);
            CHECK(flag == (i % 2 == 0), "receive %d: cancelled %d", i, flag);
            CHECK(i % 2 == 0 || in[i] == 1000 + i, "receive %d: %d", i, in[i]);
        }
        for (int i = 0; i < N; i += 2) {
            late[i] = -1;
            MPI_Recv(&late[i], 1, MPI_INT, 0, TAG_EO + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(late[i] == 1000 + i && in[i] == -1, "after the cancel of %d: %d (cancelled one %d)",
                  i, late[i], in[i]);
        }
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            for (int i = 0; i < N; i++) {
                int x = 1000 + i;
                MPI_Send(&x, 1, MPI_INT, 1, TAG_EO + i, MPI_COMM_WORLD);
            }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mprobe_sizes();
    if (size >= 2) {
        peek_claim();
        cancel_then_send();
        cancel_matched();
        cancel_every_other();
    }
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
