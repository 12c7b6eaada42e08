/*
 * OSU-style MPI_Allreduce latency (bench/osu, issue 24): MPI_SUM over
 * size / 4 MPI_FLOATs, back to back with no barrier between calls; each
 * rank times its own calls, and the average over the ranks is printed
 * (with -f also the fastest and slowest rank's, and the iterations).
 *
 *   mpiexec -n N ./osu_allreduce [-m [MIN:]MAX] [-i ITERS] [-x WARMUP] [-f]
 */
#include "osu_common.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    osu_opts_t o = {.min = 4,
                    .max = 1 << 20,
                    .iters = 1000,
                    .iters_large = 100,
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
    if (o.min < sizeof(float))
        o.min = sizeof(float); /* one float at least */
    osu_require(o.min <= o.max, rank, "osu_allreduce: sizes start at 4 bytes (one MPI_FLOAT)");
    float *sbuf = osu_alloc(o.max), *rbuf = osu_alloc(o.max);

    osu_header(rank, "OSU-style MPI Allreduce Latency Test (tern bench/osu)", NULL,
               o.full ? "Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations"
                      : "Size       Avg Latency(us)");
    for (size_t s = o.min; s <= o.max; s = osu_next_size(s)) {
        long iters = osu_iters(&o, s), warmup = osu_warmup(&o, s);
        int count = (int)(s / sizeof(float));
        double t0 = 0.0, mine, sum, lo, hi;

        MPI_Barrier(MPI_COMM_WORLD);
        for (long i = 0; i < warmup + iters; i++) {
            if (i == warmup)
                t0 = MPI_Wtime();
            MPI_Allreduce(sbuf, rbuf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
        mine = (MPI_Wtime() - t0) * 1e6 / (double)iters;
        MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(&mine, &lo, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        MPI_Reduce(&mine, &hi, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            if (o.full)
                printf("%-10zu%18.2f%18.2f%18.2f%12ld\n", s, sum / size, lo, hi, iters);
            else
                printf("%-10zu%18.2f\n", s, sum / size);
            fflush(stdout);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
