/*
 * MPI point-to-point test for tern's MPI layer (tests/mpi/mpi.sh builds it
 * with ternmpicc and runs it at 1, 2 and 4 ranks over shm and tcp).  Plain
 * MPI: it builds with MPICH's or Open MPI's mpicc too.  Prints "ok rank R"
 * or "FAIL: ..." lines; exits non-zero on a failure.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mpi/mpi_check.h"

static unsigned char pat(int seed, size_t i) { return (unsigned char)(seed * 31 + i * 7 + (i >> 8)); }

/* every size class, to the right and from the left neighbour, blocking */
static void ring_sizes(void)
{
    static const int counts[] = {0, 1, 7, 4096, 16385, 100000, 1 << 20};
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        int n = counts[k];
        unsigned char *out = malloc((size_t)n + 1), *in = malloc((size_t)n + 1);
        for (int i = 0; i < n; i++)
            out[i] = pat(rank + (int)k, (size_t)i);
        MPI_Status st;
        int e = MPI_Sendrecv(out, n, MPI_BYTE, right, 5, in, n, MPI_BYTE, left, 5, MPI_COMM_WORLD,
                             &st);
        CHECK(e == MPI_SUCCESS, "sendrecv %d: %d", n, e);
        int got = -1;
        MPI_Get_count(&st, MPI_BYTE, &got);
        CHECK(got == n && st.MPI_SOURCE == left && st.MPI_TAG == 5,
              "sendrecv %d: count %d source %d tag %d", n, got, st.MPI_SOURCE, st.MPI_TAG);
        for (int i = 0; i < n; i++)
            if (in[i] != pat(left + (int)k, (size_t)i)) {
                CHECK(0, "sendrecv %d: byte %d differs", n, i);
                break;
            }
        free(out);
        free(in);
    }
}

/* typed messages, non-blocking, completed by each completion call */
static void typed_nonblocking(void)
{
    if (size < 2)
        return;
    int peer = rank ^ 1;
    if (peer >= size)
        return;
    double d[100], dr[100];
    int64_t l[50], lr[50];
    for (int i = 0; i < 100; i++)
        d[i] = rank * 1000.0 + i + 0.5;
    for (int i = 0; i < 50; i++)
        l[i] = (int64_t)rank << 40 | i;
    MPI_Request r[4];
    MPI_Irecv(dr, 100, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(lr, 50, MPI_INT64_T, peer, 2, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(l, 50, MPI_INT64_T, peer, 2, MPI_COMM_WORLD, &r[2]);
    MPI_Issend(d, 100, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &r[3]);
    int done = 0, idx, flag;
    MPI_Status st;
    /* testany until one, then waitany, then testall until all */
    while (1) {
        CHECK(MPI_Testany(4, r, &idx, &flag, &st) == MPI_SUCCESS, "testany");
        if (flag)
            break;
    }
    done++;
    CHECK(r[idx] == MPI_REQUEST_NULL, "testany left request %d", idx);
    CHECK(MPI_Waitany(4, r, &idx, &st) == MPI_SUCCESS, "waitany");
    done++;
    MPI_Status sts[4];
    flag = 0;
    while (!flag)
        CHECK(MPI_Testall(4, r, &flag, sts) == MPI_SUCCESS, "testall");
    for (int i = 0; i < 4; i++)
        CHECK(r[i] == MPI_REQUEST_NULL, "request %d after testall", i);
    for (int i = 0; i < 100; i++)
        CHECK(dr[i] == peer * 1000.0 + i + 0.5, "double %d: %g", i, dr[i]);
    for (int i = 0; i < 50; i++)
        CHECK(lr[i] == ((int64_t)peer << 40 | i), "int64 %d", i);
    /* waitall with MPI_STATUSES_IGNORE and a null request */
    int x = rank, y = -1;
    MPI_Request q[3];
    q[0] = MPI_REQUEST_NULL;
    MPI_Irecv(&y, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &q[1]);
    MPI_Send(&x, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
    MPI_Isend(&x, 0, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &q[2]);
    CHECK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall");
    CHECK(y == peer, "waitall int %d", y);
}

/* probe, then a receive of exactly the probed size; cancel of a receive */
static void probe_cancel(void)
{
    if (size < 2 || rank > 1)
        return;
    int peer = 1 - rank;
    if (rank == 0) {
        int v[77];
        for (int i = 0; i < 77; i++)
            v[i] = i;
        MPI_Send(v, 77, MPI_INT, peer, 9, MPI_COMM_WORLD);
        MPI_Ssend(v, 3, MPI_INT, peer, 10, MPI_COMM_WORLD);
    } else {
        MPI_Status st;
        int flag = 0, n = 0;
        CHECK(MPI_Iprobe(peer, 11, MPI_COMM_WORLD, &flag, &st) == MPI_SUCCESS && !flag,
              "iprobe of a tag never sent");
        CHECK(MPI_Probe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st) == MPI_SUCCESS, "probe");
        MPI_Get_count(&st, MPI_INT, &n);
        CHECK(n == 77 && st.MPI_SOURCE == peer, "probe: %d ints from %d", n, st.MPI_SOURCE);
        int *v = malloc(sizeof(int) * (size_t)n);
        MPI_Recv(v, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
        CHECK(v[76] == 76, "probed message");
        free(v);
        MPI_Request r;
        int w;
        MPI_Irecv(&w, 1, MPI_INT, peer, 12, MPI_COMM_WORLD, &r);
        CHECK(MPI_Cancel(&r) == MPI_SUCCESS, "cancel");
        CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS, "wait after cancel");
        MPI_Test_cancelled(&st, &flag);
        CHECK(flag, "the receive was not cancelled");
        int three[3];
        MPI_Recv(three, 3, MPI_INT, peer, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(three[2] == 2, "ssend data");
    }
}

/* errors with MPI_ERRORS_RETURN: each names its class */
static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int v = 0, e, cls;
    e = MPI_Send(&v, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_RANK, "send to rank %d: class %d", size + 3, cls);
    e = MPI_Send(&v, 1, MPI_INT, 0, -7, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_TAG, "tag -7: class %d", cls);
    e = MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_COUNT, "count -1: class %d", cls);
    e = MPI_Send(&v, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_TYPE, "MPI_DATATYPE_NULL: class %d", cls);
    e = MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_COMM, "MPI_COMM_NULL: class %d", cls);
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(MPI_ERR_COMM, msg, &len);
    CHECK(len > 0 && strstr(msg, "communicator") != NULL, "error string: %s", msg);
    /* truncation: 8 ints into room for 4 */
    if (size >= 2 && rank < 2) {
        int peer = 1 - rank, big[8] = {1, 2, 3, 4, 5, 6, 7, 8}, small[4];
        if (rank == 0) {
            MPI_Send(big, 8, MPI_INT, peer, 20, MPI_COMM_WORLD);
        } else {
            MPI_Status st;
            e = MPI_Recv(small, 4, MPI_INT, peer, 20, MPI_COMM_WORLD, &st);
            MPI_Error_class(e, &cls);
            CHECK(cls == MPI_ERR_TRUNCATE, "truncated receive: class %d", cls);
        }
    }
#ifdef TERN_MPI_H
    /* a failure MPI_Wait reports: its message names the call once, then
     * the cause (it is built from the operation's own message) */
    {
        int two[2] = {1, 2}, one = 0;
        MPI_Request q;
        MPI_Irecv(&one, 1, MPI_INT, rank, 21, MPI_COMM_WORLD, &q);
        MPI_Send(two, 2, MPI_INT, rank, 21, MPI_COMM_WORLD);
        e = MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Error_string(e, msg, &len);
        const char *at = strstr(msg, "MPI_Wait: ");
        CHECK(e == MPI_ERR_TRUNCATE && at != NULL && strstr(at + 1, "MPI_Wait") == NULL &&
              strstr(msg, "truncated") != NULL, "the truncation MPI_Wait reports: \"%s\"", msg);
    }
#endif
    /* MPI_PROC_NULL */
    MPI_Status st;
    e = MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    int n = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(e == MPI_SUCCESS && st.MPI_SOURCE == MPI_PROC_NULL && n == 0, "recv from PROC_NULL");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void environment(void)
{
    int flag = 0, prov = -1, v, sv, len, main_flag = 0;
    MPI_Initialized(&flag);
    CHECK(flag == 1, "MPI_Initialized");
    MPI_Query_thread(&prov);
    CHECK(prov >= MPI_THREAD_SINGLE && prov <= MPI_THREAD_MULTIPLE, "query thread %d", prov);
    MPI_Is_thread_main(&main_flag);
    CHECK(main_flag, "MPI_Is_thread_main");
    MPI_Get_version(&v, &sv);
    CHECK(v >= 3, "version %d.%d", v, sv);
    char name[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_processor_name(name, &len);
    CHECK(len > 0, "processor name");
    MPI_Get_library_version(lib, &len);
    CHECK(len > 0, "library version");
    double t0 = MPI_Wtime();
    CHECK(MPI_Wtick() > 0 && MPI_Wtime() >= t0, "clocks");
    int self_rank = -1, self_size = -1, cmp = -1;
    MPI_Comm_rank(MPI_COMM_SELF, &self_rank);
    MPI_Comm_size(MPI_COMM_SELF, &self_size);
    CHECK(self_rank == 0 && self_size == 1, "MPI_COMM_SELF %d of %d", self_rank, self_size);
    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &cmp);
    CHECK(cmp == MPI_IDENT, "compare world world %d", cmp);
    /* a message to oneself on MPI_COMM_SELF */
    int a = 42, b = 0;
    MPI_Sendrecv(&a, 1, MPI_INT, 0, 1, &b, 1, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    CHECK(b == 42, "self sendrecv %d", b);
    /* a request freed before it completes still delivers */
    MPI_Request r;
    int c = 0;
    MPI_Irecv(&c, 1, MPI_INT, 0, 2, MPI_COMM_SELF, &r);
    MPI_Request_free(&r);
    CHECK(r == MPI_REQUEST_NULL, "request_free");
    MPI_Send(&a, 1, MPI_INT, 0, 2, MPI_COMM_SELF);
}

int main(int argc, char **argv)
{
    int prov;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &prov) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    environment();
    ring_sizes();
    MPI_Barrier(MPI_COMM_WORLD);
    typed_nonblocking();
    probe_cancel();
    MPI_Barrier(MPI_COMM_WORLD);
    errors();
    for (int i = 0; i < 20; i++) /* back-to-back barriers cannot mix */
        MPI_Barrier(MPI_COMM_WORLD);
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    fflush(stdout);
    MPI_Finalize();
    int fin = 0;
    MPI_Finalized(&fin);
    return failures || !fin ? 1 : 0;
}
