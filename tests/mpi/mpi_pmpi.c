/*
 * The profiling interface: this program is its own profiling tool.  It
 * defines MPI_Send, MPI_Irecv, MPI_Wait and MPI_Allreduce, counts the calls
 * and forwards them to the library through their PMPI_ names; if the
 * library had no PMPI_ twins this would not link, and if the twins were not
 * the library's own functions the messages would not arrive; and the
 * library's calls among its own functions must not reach the wrappers.
 * Runs under any MPI.
 */
#include <mpi.h>
#include <stdio.h>

static int n_send, n_irecv, n_wait, n_allreduce;

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    n_send++;
    return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    n_irecv++;
    return PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    n_wait++;
    return PMPI_Wait(request, status);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
    n_allreduce++;
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int main(int argc, char **argv)
{
    int rank, size, failures = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    enum { ROUNDS = 10 };
    for (int i = 0; i < ROUNDS; i++) {
        int out = rank * 1000 + i, in = -1;
        MPI_Request r;
        MPI_Irecv(&in, 1, MPI_INT, left, i, MPI_COMM_WORLD, &r);
        MPI_Send(&out, 1, MPI_INT, right, i, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (in != left * 1000 + i) {
            printf("FAIL rank %d: round %d got %d\n", rank, i, in);
            failures++;
        }
    }
    /* the library's own calls are not the application's: MPI_Sendrecv
     * (tern's is made of Irecv, Isend and Waitall) is counted by none of
     * the wrappers */
    int a = rank, b = -1;
    MPI_Sendrecv(&a, 1, MPI_INT, right, 50, &b, 1, MPI_INT, left, 50, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (b != left) {
        printf("FAIL rank %d: sendrecv got %d\n", rank, b);
        failures++;
    }
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int calls[4] = {n_send, n_irecv, n_wait, n_allreduce};
    int want[4] = {ROUNDS, ROUNDS, ROUNDS, 1};
    for (int k = 0; k < 4; k++)
        if (calls[k] != want[k]) {
            printf("FAIL rank %d: wrapper %d counted %d calls, want %d\n", rank, k, calls[k],
                   want[k]);
            failures++;
        }
    if (sum != size) {
        printf("FAIL rank %d: allreduce through PMPI_Allreduce gave %d\n", rank, sum);
        failures++;
    }
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
