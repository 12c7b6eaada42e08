/*
 * OSU-style point-to-point latency (bench/osu, issue 24): two ranks
 * ping-pong one message of each size with blocking MPI_Send / MPI_Recv;
 * the latency is half the round trip, averaged over the iterations.
 *
 *   mpiexec -n 2 ./osu_latency [-m [MIN:]MAX] [-i ITERS] [-x WARMUP]
 */
#include "osu_common.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    osu_opts_t o = {.min = 0,
                    .max = 1 << 22,
                    .iters = 10000,
                    .iters_large = 1000,
                    .warmup = 100,
                    .warmup_large = 10};
    int rank, size, rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if ((rc = osu_parse(argc, argv, &o)) != 0) {
        MPI_Finalize();
        return rc == 1 ? 0 : rc;
    }
    osu_require(size == 2, rank, "osu_latency: needs exactly 2 ranks");
    char *sbuf = osu_alloc(o.max), *rbuf = osu_alloc(o.max);
    int peer = 1 - rank;

    osu_header(rank, "OSU-style MPI Latency Test (tern bench/osu)", NULL,
               "Size          Latency (us)");
    for (size_t s = o.min; s <= o.max; s = osu_next_size(s)) {
        long iters = osu_iters(&o, s), warmup = osu_warmup(&o, s);
        double t0 = 0.0;

        MPI_Barrier(MPI_COMM_WORLD);
        for (long i = 0; i < warmup + iters; i++) {
            if (i == warmup)
                t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(sbuf, (int)s, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)s, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, (int)s, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)s, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
            }
        }
        double us = (MPI_Wtime() - t0) * 1e6 / (2.0 * (double)iters);
        if (rank == 0) {
            printf("%-10zu%18.2f\n", s, us);
            fflush(stdout);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
