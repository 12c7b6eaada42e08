/*
 * OSU-style multiple bandwidth / message rate (bench/osu, issue 24): the
 * first half of the ranks each send to their partner in the second half
 * (rank r to r + n/2), in windows of OSU_WINDOW non-blocking sends closed
 * by a small acknowledgement, as osu_bw; all pairs at once.  The aggregate
 * over the pairs, timed by the slowest sender: MB/s (1e6 bytes) and
 * messages per second.
 *
 *   mpiexec -n 2 ./osu_mbw_mr [-m [MIN:]MAX] [-i ITERS] [-x WARMUP]
 */
#include "osu_common.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    osu_opts_t o = {
        .min = 1, .max = 1 << 22, .iters = 100, .iters_large = 20, .warmup = 10, .warmup_large = 2};
    MPI_Request req[OSU_WINDOW];
    MPI_Status st[OSU_WINDOW];
    int rank, size, rc;
    char ack[4] = {0};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if ((rc = osu_parse(argc, argv, &o)) != 0) {
        MPI_Finalize();
        return rc == 1 ? 0 : rc;
    }
    osu_require(size >= 2 && size % 2 == 0, rank, "osu_mbw_mr: needs an even number of ranks");
    int pairs = size / 2, sender = rank < pairs;
    int peer = sender ? rank + pairs : rank - pairs;
    char *buf = osu_alloc(o.max);

    char pairs_line[64];
    snprintf(pairs_line, sizeof(pairs_line), "[ pairs: %d ] [ window size: %d ]", pairs,
             OSU_WINDOW);
    osu_header(rank, "OSU-style MPI Multiple Bandwidth / Message Rate Test (tern bench/osu)",
               pairs_line, "Size                  MB/s        Messages/s");
    for (size_t s = o.min; s <= o.max; s = osu_next_size(s)) {
        long iters = osu_iters(&o, s), warmup = osu_warmup(&o, s);
        int n = (int)s;
        double t0 = 0.0, t = 0.0, tmax = 0.0;

        MPI_Barrier(MPI_COMM_WORLD);
        for (long i = 0; i < warmup + iters; i++) {
            if (i == warmup)
                t0 = MPI_Wtime();
            if (sender) {
                for (int w = 0; w < OSU_WINDOW; w++)
                    MPI_Isend(buf, n, MPI_CHAR, peer, 20, MPI_COMM_WORLD, &req[w]);
                MPI_Waitall(OSU_WINDOW, req, st);
                MPI_Recv(ack, 4, MPI_CHAR, peer, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                for (int w = 0; w < OSU_WINDOW; w++)
                    MPI_Irecv(buf, n, MPI_CHAR, peer, 20, MPI_COMM_WORLD, &req[w]);
                MPI_Waitall(OSU_WINDOW, req, st);
                MPI_Send(ack, 4, MPI_CHAR, peer, 21, MPI_COMM_WORLD);
            }
        }
        if (sender)
            t = MPI_Wtime() - t0;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double msgs = (double)pairs * OSU_WINDOW * (double)iters;
            printf("%-10zu%18.2f%18.2f\n", s, msgs * (double)s / 1e6 / tmax, msgs / tmax);
            fflush(stdout);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
