/*
 * mpi_self — one rank sends 8 bytes to itself, N times (MPI_Irecv,
 * MPI_Send, MPI_Wait), and prints the time per message.  No transport and
 * no peer: what is left is the software of the MPI library and whatever
 * it runs on, the same work on every host.  bench/ofi_cost.sh runs it
 * under callgrind, built for Open MPI (over tern's libfabric provider) and
 * for tern's MPI layer, and counts the instructions per message in each
 * library.
 *
 *   mpi_self [messages]    (default 100000)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long n = argc > 1 ? atol(argv[1]) : 100000;
    if (n <= 0) {
        fprintf(stderr, "usage: mpi_self [messages > 0]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char sb[8] = "8 bytes", rb[8];
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        MPI_Request r;
        if (MPI_Irecv(rb, 8, MPI_BYTE, 0, 1, MPI_COMM_SELF, &r) != MPI_SUCCESS ||
            MPI_Send(sb, 8, MPI_BYTE, 0, 1, MPI_COMM_SELF) != MPI_SUCCESS ||
            MPI_Wait(&r, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            fprintf(stderr, "mpi_self: message %ld failed\n", i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    double t = now_s() - t0;
    printf("mpi_self %ld messages %.1f ns per message\n", n, t * 1e9 / (double)n);
    MPI_Finalize();
    return 0;
}
