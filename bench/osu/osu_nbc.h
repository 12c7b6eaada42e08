/*
 * The driver of the OSU-style non-blocking collective benchmarks
 * (osu_ialltoall, osu_iallreduce; bench/osu, issue 24), after OSU 5.x's
 * method for overlap:
 *
 *   pure     the operation started and waited at once: its latency, each
 *            rank's average per call;
 *   overall  started, then about `pure` (the slowest rank's) of compute
 *            with an MPI_Test every microsecond or so, then waited;
 *   compute  the compute part of overall, timed by itself;
 *   overlap  100 * (1 - (overall - compute) / pure), within 0 .. 100: the
 *            share of the communication hidden behind the compute.
 *
 * Columns are averages over the ranks; with -f also the fastest and the
 * slowest rank's overall and the iterations.
 */
#ifndef TERN_BENCH_OSU_NBC_H
#define TERN_BENCH_OSU_NBC_H

#include "osu_common.h"

typedef struct osu_nbc {
    const char *prog;  /* for messages */
    const char *title; /* the header's first line */
    size_t min, max;   /* default sizes (bytes per rank pair, or per vector) */
    size_t unit;       /* the smallest size: one element */
    /* bytes of each of the send and the receive buffer for size bytes */
    size_t (*buf_bytes)(size_t size, int nranks);
    /* start the operation on size bytes */
    void (*start)(void *sbuf, void *rbuf, size_t size, MPI_Request *req);
} osu_nbc_t;

/* the whole program after MPI_Init: options, header, sweep, MPI_Finalize;
 * returns main's exit status */
int osu_nbc_main(int argc, char **argv, const osu_nbc_t *b);

#endif
