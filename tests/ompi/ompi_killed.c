/*
 * The victim program of tests/ompi/ompi_killed.sh and ompi_hosts.sh: a job
 * whose first half of ranks waits on the second half, which the test then
 * kills (SIGKILL).
 *
 *   ompi_killed
 *
 * Every rank says "ready RANK PID" once MPI_Init and a barrier are done
 * (every rank wired up, connections made).  A rank of the first half then
 * posts, towards every rank of the second half, a receive that is never
 * sent and a 4 MiB send that is never received (a rendezvous in flight),
 * says "posted RANK" and waits for them all; a rank of the second half
 * waits in a receive nobody sends.  Errors are returned, not fatal: should
 * the wait end (a provider or MPI reporting the dead peer), the rank says
 * "rank R: wait ended: CLASS" and exits 1; a wait that succeeded would be a
 * lie (its peers never sent), so it says "FAIL rank R: ..." and exits 2.
 * The job must be ended by the launcher or by those errors, with a
 * non-zero status, and nothing may be left running (the test checks).
 * Plain MPI.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { TAG = 9, BIG = 4 << 20 };

int main(int argc, char **argv)
{
    int rank, size;
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("ready %d %ld\n", rank, (long)getpid());
    fflush(stdout);
    int half = size / 2, e, v = 0;
    if (rank < half) {
        int n = 2 * (size - half), k = 0;
        MPI_Request *r = malloc(sizeof(MPI_Request) * (size_t)n);
        char *big = calloc(1, BIG);
        int *in = calloc((size_t)size, sizeof(int));
        for (int p = half; p < size; p++) {
            MPI_Irecv(&in[p], 1, MPI_INT, p, TAG, MPI_COMM_WORLD, &r[k++]);
            MPI_Isend(big, BIG, MPI_BYTE, p, TAG, MPI_COMM_WORLD, &r[k++]);
        }
        printf("posted %d\n", rank);
        fflush(stdout);
        e = MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
    } else {
        e = MPI_Recv(&v, 1, MPI_INT, 0, TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (e == MPI_SUCCESS) {
        printf("FAIL rank %d: a wait on ranks that never sent succeeded\n", rank);
        fflush(stdout);
        return 2;
    }
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, cls = -1;
    MPI_Error_class(e, &cls);
    MPI_Error_string(cls, msg, &len);
    printf("rank %d: wait ended: %s\n", rank, msg);
    fflush(stdout);
    return 1; /* no MPI_Finalize: a peer is dead */
}
