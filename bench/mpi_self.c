/*
 * mpi_self — one rank sends 8 bytes to itself, N times (MPI_Irecv,
 * MPI_Send, MPI_Wait), and prints the time per message.  No transport and
 * no peer: what is left is the software of the MPI library and whatever
 * it runs on, the same work on every host.  bench/ofi_cost.sh runs it
 * under callgrind, built for Open MPI (over tern's libfabric provider) and
 * for tern's MPI layer, and counts the instructions per message in each
 * library.
 *
 *   mpi_self [messages [window]]    (default 100000, no window)
 *
 * With a window W, the messages go as a message rate test sends them:
 * W MPI_Irecv, then W MPI_Isend, then MPI_Waitall of each (messages is
 * rounded up to whole windows; 16 bytes each).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WINDOW_MAX 256

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
    int w = argc > 2 ? atoi(argv[2]) : 0;
    if (n <= 0 || w < 0 || w > WINDOW_MAX) {
        fprintf(stderr, "usage: mpi_self [messages > 0 [window 0..%d]]\n", WINDOW_MAX);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char sb[8] = "8 bytes", rb[8];
    double t0 = now_s();
    if (w > 0) {
        static char wsb[WINDOW_MAX][16], wrb[WINDOW_MAX][16];
        MPI_Request rr[WINDOW_MAX], sr[WINDOW_MAX];
        long windows = (n + w - 1) / w;
        for (long i = 0; i < windows; i++) {
            int e = MPI_SUCCESS;
            for (int k = 0; k < w && e == MPI_SUCCESS; k++)
                e = MPI_Irecv(wrb[k], 16, MPI_BYTE, 0, 1, MPI_COMM_SELF, &rr[k]);
            for (int k = 0; k < w && e == MPI_SUCCESS; k++)
                e = MPI_Isend(wsb[k], 16, MPI_BYTE, 0, 1, MPI_COMM_SELF, &sr[k]);
            if (e != MPI_SUCCESS || MPI_Waitall(w, sr, MPI_STATUSES_IGNORE) != MPI_SUCCESS ||
                MPI_Waitall(w, rr, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
                fprintf(stderr, "mpi_self: window %ld failed\n", i);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        n = windows * w;
    }
    for (long i = 0; w == 0 && i < n; i++) {
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
