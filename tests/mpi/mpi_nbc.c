/*
 * Non-blocking collectives test for tern's MPI layer (tests/mpi/mpi.sh):
 * several MPI_Iallreduce / Ibcast / Ireduce / Ibarrier outstanding at once
 * on one communicator (and on a dup), completed in reverse order, by Test
 * loops and by Waitall; Ibcasts from every root whose messages would mix
 * without their own tags; interleaved with blocking collectives and with
 * point-to-point traffic (a receive from any source must not take a
 * collective's message); a barrier and a test loop that must move a
 * schedule on; short
 * and long (rendezvous) sizes, a non-commutative user operation,
 * MPI_IN_PLACE, and (tern only: erroneous MPI) freed requests left to
 * MPI_Finalize.  Results against a serial reference.  Plain MPI: passes
 * under MPICH too.  Prints "ok rank R" or "FAIL ..." lines.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mpi/mpi_check.h"

static int64_t val(int r, int i) { return (int64_t)((r + 1) * 7 + i * 13 % 101) - 50; }

static int64_t sum_of(int i)
{
    int64_t s = 0;
    for (int r = 0; r < size; r++)
        s += val(r, i);
    return s;
}

/* 2x2 integer matrices mod P: associative, not commutative */
#define P 1000003
static void matmul(void *in, void *io, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int64_t *a = in, *b = io;
    for (int m = 0; m < *len / 4; m++, a += 4, b += 4) {
        int64_t r[4] = {(a[0] * b[0] + a[1] * b[2]) % P, (a[0] * b[1] + a[1] * b[3]) % P,
                        (a[2] * b[0] + a[3] * b[2]) % P, (a[2] * b[1] + a[3] * b[3]) % P};
        memcpy(b, r, sizeof(r));
    }
}
static void mat_of(int r, int64_t m[4]) { m[0] = r + 1; m[1] = 2; m[2] = r % 3; m[3] = 1; }

static int is_tern(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(v, &len);
    return strncmp(v, "tern", 4) == 0;
}

static void check_sum(const int64_t *got, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        if (got[i] != sum_of(i)) {
            CHECK(0, "%s n=%d i=%d: %lld vs %lld", what, n, i, (long long)got[i],
                  (long long)sum_of(i));
            return;
        }
}

static void check_bcast(const int *got, int n, int root, const char *what)
{
    for (int i = 0; i < n; i++)
        if (got[i] != (int)val(root, i)) {
            CHECK(0, "%s root %d n=%d i=%d", what, root, n, i);
            return;
        }
}

/* several of each kind at once, short and long, completed in reverse order */
static void overlapping(MPI_Comm comm)
{
    enum { NA = 3, NB = 3 };
    static const int ns[NA] = {1, 1001, 40000};
    int64_t *in[NA], *out[NA];
    int *b[NB], bn[NB] = {3, 777, 50000}, broot[NB];
    int64_t red[4] = {0};
    MPI_Request rq[NA + NB + 2];
    int nr = 0;
    for (int a = 0; a < NA; a++) {
        in[a] = malloc(sizeof(int64_t) * (size_t)ns[a]);
        out[a] = malloc(sizeof(int64_t) * (size_t)ns[a]);
        for (int i = 0; i < ns[a]; i++)
            in[a][i] = val(rank, i);
        MPI_Iallreduce(in[a], out[a], ns[a], MPI_INT64_T, MPI_SUM, comm, &rq[nr++]);
        if (a == 0)
            MPI_Ibarrier(comm, &rq[nr++]);
    }
    for (int j = 0; j < NB; j++) {
        broot[j] = j % size;
        b[j] = malloc(sizeof(int) * (size_t)bn[j]);
        for (int i = 0; i < bn[j]; i++)
            b[j][i] = rank == broot[j] ? (int)val(broot[j], i) : -1;
        MPI_Ibcast(b[j], bn[j], MPI_INT, broot[j], comm, &rq[nr++]);
    }
    int64_t mine[4];
    for (int i = 0; i < 4; i++)
        mine[i] = val(rank, i);
    MPI_Ireduce(mine, red, 4, MPI_INT64_T, MPI_SUM, size - 1, comm, &rq[nr++]);
    for (int i = nr - 1; i >= 0; i--) /* reverse order */
        MPI_Wait(&rq[i], MPI_STATUS_IGNORE);
    for (int i = 0; i < nr; i++)
        CHECK(rq[i] == MPI_REQUEST_NULL, "request %d not reset", i);
    for (int a = 0; a < NA; a++) {
        check_sum(out[a], ns[a], "overlapping iallreduce");
        free(in[a]);
        free(out[a]);
    }
    for (int j = 0; j < NB; j++) {
        check_bcast(b[j], bn[j], broot[j], "overlapping ibcast");
        free(b[j]);
    }
    if (rank == size - 1)
        check_sum(red, 4, "ireduce");
}

/* one Ibcast from every root, the last root first: a rank may then send
 * for a later schedule before it forwards for an earlier one (at 4 ranks,
 * rank 0 sends root 0's data to rank 1 before it passes root 2's on to
 * it), which only the schedules' own tags keep apart */
static void ladder(MPI_Comm comm)
{
    int *b[64];
    MPI_Request rq[64];
    MPI_Status sts[64];
    int nr = size < 64 ? size : 64;
    for (int j = 0; j < nr; j++) {
        int root = nr - 1 - j, n = 10 + 7 * root;
        b[j] = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
            b[j][i] = rank == root ? (int)val(root, i) : -1;
        MPI_Ibcast(b[j], n, MPI_INT, root, comm, &rq[j]);
    }
    MPI_Waitall(nr, rq, sts);
    for (int j = 0; j < nr; j++) {
        check_bcast(b[j], 10 + 7 * (nr - 1 - j), nr - 1 - j, "ibcast ladder");
        free(b[j]);
    }
}

/* half the ranks enter a blocking barrier before they wait for an
 * Iallreduce whose later rounds the other half waits for: the barrier
 * must move the schedule on (MPI's progress rule), else both wait forever */
static void progress_in_blocking(MPI_Comm comm)
{
    int64_t in[3], out[3];
    for (int i = 0; i < 3; i++)
        in[i] = val(rank, i);
    MPI_Request rq;
    MPI_Iallreduce(in, out, 3, MPI_INT64_T, MPI_SUM, comm, &rq);
    if (rank % 4 < 2) {
        MPI_Barrier(comm);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Barrier(comm);
    }
    check_sum(out, 3, "iallreduce completed around a barrier");
}

/* the same with a test loop: rank 0 waits for an Iallreduce, then sends to
 * every other rank; they test a receive from it (MPI_Test, or MPI_Iprobe
 * on odd ranks) before they wait: the tests must move the schedule on */
static void progress_in_tests(MPI_Comm comm)
{
    int64_t in[3], out[3];
    for (int i = 0; i < 3; i++)
        in[i] = val(rank, i);
    MPI_Request rq;
    MPI_Iallreduce(in, out, 3, MPI_INT64_T, MPI_SUM, comm, &rq);
    int v = 7, flag = 0;
    if (rank == 0) {
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        for (int r = 1; r < size; r++)
            MPI_Send(&v, 1, MPI_INT, r, 21, comm);
    } else if (rank % 2) {
        while (!flag)
            MPI_Iprobe(0, 21, comm, &flag, MPI_STATUS_IGNORE);
        MPI_Recv(&v, 1, MPI_INT, 0, 21, comm, MPI_STATUS_IGNORE);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else {
        MPI_Request r;
        MPI_Irecv(&v, 1, MPI_INT, 0, 21, comm, &r);
        while (!flag)
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
    check_sum(out, 3, "iallreduce completed around a test loop");
}

/* started, then blocking collectives and point-to-point, then completed */
static void interleaved(MPI_Comm comm)
{
    int n = 30000;
    int64_t *in = malloc(sizeof(int64_t) * (size_t)n), *out = malloc(sizeof(int64_t) * (size_t)n);
    int64_t *bin = malloc(sizeof(int64_t) * (size_t)n), *bout = malloc(sizeof(int64_t) * (size_t)n);
    int *bc = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) {
        in[i] = bin[i] = val(rank, i);
        bc[i] = rank == size - 1 ? (int)val(size - 1, i) : -1;
    }
    MPI_Request rq[3];
    MPI_Iallreduce(in, out, n, MPI_INT64_T, MPI_SUM, comm, &rq[0]);
    MPI_Ibcast(bc, n, MPI_INT, size - 1, comm, &rq[1]);
    MPI_Ibarrier(comm, &rq[2]);
    /* blocking ones meanwhile: they must not take the others' messages */
    MPI_Allreduce(bin, bout, n, MPI_INT64_T, MPI_SUM, comm);
    check_sum(bout, n, "blocking allreduce among non-blocking ones");
    int x = rank == 0 ? 42 : 0;
    MPI_Bcast(&x, 1, MPI_INT, 0, comm);
    CHECK(x == 42, "blocking bcast among non-blocking ones: %d", x);
    MPI_Barrier(comm);
    /* point to point, received from any source */
    int token = rank * 10, got = -1;
    MPI_Status st;
    MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 5, &got, 1, MPI_INT, MPI_ANY_SOURCE,
                 MPI_ANY_TAG, comm, &st);
    CHECK(got == ((rank - 1 + size) % size) * 10 && st.MPI_TAG == 5, "p2p among collectives: "
          "%d tag %d", got, st.MPI_TAG);
    /* completed by a Test loop, then Waitall */
    int flag = 0;
    while (!flag)
        MPI_Test(&rq[2], &flag, MPI_STATUS_IGNORE);
    CHECK(rq[2] == MPI_REQUEST_NULL, "ibarrier request after test");
    MPI_Status sts[2];
    MPI_Waitall(2, rq, sts);
    check_sum(out, n, "interleaved iallreduce");
    check_bcast(bc, n, size - 1, "interleaved ibcast");
    free(in);
    free(out);
    free(bin);
    free(bout);
    free(bc);
}

/* a non-commutative op, in place, Testall loops, two communicators */
static void variants(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    int64_t m[8], r[8], want[4] = {1, 0, 0, 1}, mw[8], rw[8];
    mat_of(rank, m);
    mat_of(rank, m + 4);
    memcpy(mw, m, sizeof(m));
    for (int q = 0; q < size; q++) {
        int64_t x[4];
        mat_of(q, x);
        matmul(want, x, (int[]){4}, NULL); /* x = want * x */
        memcpy(want, x, sizeof(x));
    }
    int64_t ip[5];
    for (int i = 0; i < 5; i++)
        ip[i] = val(rank, i);
    MPI_Request rq[4];
    MPI_Iallreduce(m, r, 8, MPI_INT64_T, op, dup, &rq[0]);
    MPI_Iallreduce(MPI_IN_PLACE, ip, 5, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &rq[1]);
    MPI_Ireduce(mw, rw, 8, MPI_INT64_T, op, 0, MPI_COMM_WORLD, &rq[2]);
    MPI_Ibarrier(dup, &rq[3]);
    int flag = 0;
    MPI_Status sts[4];
    while (!flag)
        MPI_Testall(4, rq, &flag, sts);
    CHECK(memcmp(r, want, sizeof(want)) == 0 && memcmp(r + 4, want, sizeof(want)) == 0,
          "non-commutative iallreduce");
    if (rank == 0)
        CHECK(memcmp(rw, want, sizeof(want)) == 0, "non-commutative ireduce");
    check_sum(ip, 5, "in-place iallreduce");
    /* freeing one is erroneous MPI (MPICH refuses it); tern lets it run to
     * its end in the background (MPI_Finalize at the latest) */
    if (is_tern()) {
        MPI_Request fr;
        MPI_Ibarrier(dup, &fr);
        MPI_Request_free(&fr);
        CHECK(fr == MPI_REQUEST_NULL, "request_free");
    }
    MPI_Op_free(&op);
    MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int rep = 0; rep < 3; rep++) {
        ladder(MPI_COMM_WORLD);
        overlapping(MPI_COMM_WORLD);
    }
    interleaved(MPI_COMM_WORLD);
    progress_in_blocking(MPI_COMM_WORLD);
    progress_in_tests(MPI_COMM_WORLD);
    variants();
    if (is_tern()) { /* left to MPI_Finalize */
        MPI_Request last;
        MPI_Ibarrier(MPI_COMM_WORLD, &last);
        MPI_Request_free(&last);
    }
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
