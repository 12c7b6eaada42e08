/*
 * The non-blocking collectives' driver (osu_nbc.h).
 */
#include "osu_nbc.h"

#include <stdio.h>
#include <stdlib.h>

/* seconds per call of start + wait, this rank's */
static double time_pure(const osu_nbc_t *b, void *sbuf, void *rbuf, size_t s, long warmup,
                        long iters)
{
    MPI_Request req;
    double t0 = 0.0;

    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < warmup + iters; i++) {
        if (i == warmup)
            t0 = MPI_Wtime();
        b->start(sbuf, rbuf, s, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    return (MPI_Wtime() - t0) / (double)iters;
}

/* seconds per call of start + compute(target) + wait, and of the compute
 * alone in *compute */
static double time_overlap(const osu_nbc_t *b, void *sbuf, void *rbuf, size_t s, long warmup,
                           long iters, double target, double *compute)
{
    MPI_Request req;
    double t0 = 0.0, c = 0.0;

    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < warmup + iters; i++) {
        if (i == warmup) {
            t0 = MPI_Wtime();
            c = 0.0;
        }
        b->start(sbuf, rbuf, s, &req);
        c += osu_compute(target, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    *compute = c / (double)iters;
    return (MPI_Wtime() - t0) / (double)iters;
}

int osu_nbc_main(int argc, char **argv, const osu_nbc_t *b)
{
    osu_opts_t o = {.min = b->min,
                    .max = b->max,
                    .iters = 200,
                    .iters_large = 50,
                    .warmup = 20,
                    .warmup_large = 5};
    int rank, size, rc;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if ((rc = osu_parse(argc, argv, &o)) != 0) {
        MPI_Finalize();
        return rc == 1 ? 0 : rc;
    }
    if (o.min < b->unit)
        o.min = b->unit;
    char msg[128];
    snprintf(msg, sizeof(msg), "%s: the sizes are smaller than one element (%zu bytes)", b->prog,
             b->unit);
    osu_require(o.min <= o.max, rank, msg);
    void *sbuf = osu_alloc(b->buf_bytes(o.max, size)), *rbuf = osu_alloc(b->buf_bytes(o.max, size));

    osu_header(rank, b->title, NULL,
               o.full ? "Size           Overall(us)       Compute(us)    Pure Comm.(us)        "
                        "Overlap(%)   Min Overall(us)   Max Overall(us)  Iterations"
                      : "Size           Overall(us)       Compute(us)    Pure Comm.(us)        "
                        "Overlap(%)");
    for (size_t s = o.min; s <= o.max; s = osu_next_size(s)) {
        long iters = osu_iters(&o, s), warmup = osu_warmup(&o, s);
        double pure = time_pure(b, sbuf, rbuf, s, warmup, iters), target, compute, overall;
        double v[3], sum[3], lo, hi;

        /* every rank computes as long as the slowest one communicates */
        MPI_Allreduce(&pure, &target, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        overall = time_overlap(b, sbuf, rbuf, s, warmup, iters, target, &compute);
        v[0] = overall * 1e6;
        v[1] = compute * 1e6;
        v[2] = pure * 1e6;
        MPI_Reduce(v, sum, 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(&v[0], &lo, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        MPI_Reduce(&v[0], &hi, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double ov = sum[0] / size, cp = sum[1] / size, pc = sum[2] / size;
            double overlap = pc > 0.0 ? 100.0 * (1.0 - (ov - cp) / pc) : 0.0;

            if (overlap < 0.0)
                overlap = 0.0;
            if (overlap > 100.0)
                overlap = 100.0;
            printf("%-10zu%18.2f%18.2f%18.2f%18.2f", s, ov, cp, pc, overlap);
            if (o.full)
                printf("%18.2f%18.2f%12ld", lo, hi, iters);
            printf("\n");
            fflush(stdout);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
