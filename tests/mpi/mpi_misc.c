/*
 * Small calls of several chapters: MPI_Reduce_local (a predefined and a
 * user operation, a pair type), MPI_Op_commutative, MPI_Alloc_mem /
 * MPI_Free_mem, MPI_Request_get_status (the request stays for its wait),
 * MPI_Pcontrol, MPI_Aint_add / _diff, MPI_Type_match_size, and the MPI-1
 * names (MPI_Address, MPI_Type_extent / _lb / _ub, MPI_Type_hindexed,
 * MPI_Type_struct, MPI_Errhandler_create / _get / _set).
 */
#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include "tests/mpi/mpi_check.h"

static void max_abs(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        int x = a[i] < 0 ? -a[i] : a[i], y = b[i] < 0 ? -b[i] : b[i];
        b[i] = x > y ? a[i] : b[i];
    }
}

static int handled;
static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
    handled++;
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int in[3] = {1, -5, 3}, io[3] = {4, 2, -9};
    MPI_Reduce_local(in, io, 3, MPI_INT, MPI_SUM);
    CHECK(io[0] == 5 && io[1] == -3 && io[2] == -6, "reduce_local sum: %d %d %d", io[0], io[1],
          io[2]);
    MPI_Op op;
    MPI_Op_create(max_abs, 0, &op);
    int c1 = -1, c2 = -1;
    MPI_Op_commutative(op, &c1);
    MPI_Op_commutative(MPI_SUM, &c2);
    CHECK(c1 == 0 && c2 == 1, "op_commutative: %d %d", c1, c2);
    int a[2] = {-7, 1}, b[2] = {3, -2};
    MPI_Reduce_local(a, b, 2, MPI_INT, op);
    CHECK(b[0] == -7 && b[1] == -2, "reduce_local user op: %d %d", b[0], b[1]);
    MPI_Op_free(&op);
    struct { double v; int i; } p[1] = {{2.5, 7}}, q[1] = {{1.5, 3}};
    MPI_Reduce_local(p, q, 1, MPI_DOUBLE_INT, MPI_MAXLOC);
    CHECK(q[0].v == 2.5 && q[0].i == 7, "reduce_local maxloc: %g %d", q[0].v, q[0].i);

    double *mem = NULL;
    CHECK(MPI_Alloc_mem(1000 * sizeof(double), MPI_INFO_NULL, &mem) == MPI_SUCCESS &&
              mem != NULL && ((uintptr_t)mem % sizeof(double)) == 0,
          "alloc_mem");
    mem[999] = 1.0;
    MPI_Free_mem(mem);

    /* get_status leaves the request to its wait */
    int x = rank, y = -1, flag = 0;
    MPI_Request r, s;
    MPI_Irecv(&y, 1, MPI_INT, (rank - 1 + size) % size, 4, MPI_COMM_WORLD, &r);
    MPI_Isend(&x, 1, MPI_INT, (rank + 1) % size, 4, MPI_COMM_WORLD, &s);
    MPI_Status st;
    for (int i = 0; i < 10000000 && !flag; i++)
        MPI_Request_get_status(r, &flag, &st);
    CHECK(flag && r != MPI_REQUEST_NULL && st.MPI_SOURCE == (rank - 1 + size) % size,
          "request_get_status: flag %d", flag);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    CHECK(y == (rank - 1 + size) % size, "the message: %d", y);

    MPI_Pcontrol(1);
    MPI_Fint fs[sizeof(MPI_Status) / sizeof(MPI_Fint)];
    MPI_Status back;
    MPI_Status_c2f(&st, fs);
    MPI_Status_f2c(fs, &back);
    CHECK(back.MPI_SOURCE == st.MPI_SOURCE && back.MPI_TAG == st.MPI_TAG &&
              MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD &&
              MPI_Type_f2c(MPI_Type_c2f(MPI_INT)) == MPI_INT,
          "c2f / f2c");
    MPI_Aint base, at;
    int arr[4];
    MPI_Get_address(&arr[0], &base);
    MPI_Get_address(&arr[3], &at);
    CHECK(MPI_Aint_diff(at, base) == 3 * (MPI_Aint)sizeof(int) &&
              MPI_Aint_add(base, 3 * (MPI_Aint)sizeof(int)) == at,
          "aint_add / aint_diff");
    MPI_Datatype m8 = MPI_DATATYPE_NULL, r8 = MPI_DATATYPE_NULL;
    MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &m8);
    MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &r8);
    int s8 = 0, sr = 0;
    MPI_Type_size(m8, &s8);
    MPI_Type_size(r8, &sr);
    CHECK(s8 == 8 && sr == 8, "type_match_size: %d %d", s8, sr);

    /* MPI-1 names */
    MPI_Aint ad = 0, ext = 0, lb = 0, ub = 0;
    MPI_Address(&arr[1], &ad);
    CHECK(ad == base + (MPI_Aint)sizeof(int), "MPI_Address");
    int lens[2] = {1, 1};
    MPI_Aint disps[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, t1, t2;
    MPI_Type_struct(2, lens, disps, types, &t1);
    MPI_Type_extent(t1, &ext);
    MPI_Type_lb(t1, &lb);
    MPI_Type_ub(t1, &ub);
    CHECK(ext == 16 && lb == 0 && ub == 16, "type_extent %ld lb %ld ub %ld", (long)ext, (long)lb,
          (long)ub);
    MPI_Type_hindexed(2, lens, disps, MPI_INT, &t2);
    int ts = 0;
    MPI_Type_size(t2, &ts);
    CHECK(ts == 8, "type_hindexed size %d", ts);
    MPI_Type_free(&t1);
    MPI_Type_free(&t2);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Errhandler eh, got;
    MPI_Errhandler_create(handler, &eh);
    MPI_Errhandler_set(dup, eh);
    MPI_Errhandler_get(dup, &got);
    CHECK(got == eh, "errhandler_get");
    MPI_Send(&x, 1, MPI_INT, size, 0, dup); /* a bad rank: the handler */
    CHECK(handled == 1, "MPI-1 errhandler called %d times", handled);
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&dup);

    MPI_Barrier(MPI_COMM_WORLD);
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
