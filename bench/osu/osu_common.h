/*
 * What the OSU-style benchmarks of bench/osu share (issue 24): options,
 * the size sweep, buffers, the header lines and the compute loop of the
 * overlap tests.  The programs are written for tern, in the manner of the
 * OSU micro-benchmarks 5.x (their output format and method as documented,
 * not their code), in plain MPI-3, so that one source builds with MPICH's
 * mpicc.mpich and with tern's ternmpicc; bench/osu_abi.sh runs the MPICH
 * build under MPICH and, through tern's libmpich.so.12, under tern.
 *
 * Common options (every rank parses the same argv, so all agree):
 *   -m [MIN:]MAX  message sizes in bytes, powers of two from MIN (0 is a
 *                 size of its own, then 1, 2, 4 ...); k / m suffixes
 *   -i ITERS      timed iterations per size (default: the program's, fewer
 *                 above OSU_LARGE bytes)
 *   -x WARMUP     untimed iterations before them
 *   -f            collectives: also min / max latency and the iterations
 *   -h            this help
 * Figures are printed by rank 0 only; a benchmark asserts nothing about
 * speed.
 */
#ifndef TERN_BENCH_OSU_COMMON_H
#define TERN_BENCH_OSU_COMMON_H

#include <mpi.h>
#include <stddef.h>

#define OSU_LARGE 8192 /* sizes above this run the "large" counts */
#define OSU_WINDOW 64  /* messages in flight in bw, bibw, mbw_mr (OSU's default) */

typedef struct osu_opts {
    size_t min, max;
    long iters, iters_large;
    long warmup, warmup_large;
    int full;
} osu_opts_t;

/* The program's defaults in *o, then argv over them.  0: run; 1: -h
 * (printed); 2: bad option (printed, by rank 0).  Either way the caller
 * ends with MPI_Finalize and returns the value (1 -> 0). */
int osu_parse(int argc, char **argv, osu_opts_t *o);

/* this size's iterations and warm-up */
long osu_iters(const osu_opts_t *o, size_t size);
long osu_warmup(const osu_opts_t *o, size_t size);

/* the next size of the sweep: 0, 1, 2, 4 ... */
size_t osu_next_size(size_t size);

/* rank 0: "# <title>", "# Library: " and the first line of
 * MPI_Get_library_version (which MPI ran), "# <extra>" when not NULL, and
 * the column line ("# Size ...") */
void osu_header(int rank, const char *title, const char *extra, const char *columns);

/* a page-aligned buffer of len bytes (at least one page), every byte
 * written; MPI_Abort when there is no memory */
void *osu_alloc(size_t len);

/* Stop the job with a message when a condition the benchmark needs does not
 * hold (rank 0 prints it). */
void osu_require(int cond, int rank, const char *msg);

/* Compute for about `seconds` (a floating-point loop that touches no MPI
 * buffer), calling MPI_Test on *req every few microseconds when req is not
 * NULL (the progress an application's compute loop would offer); returns
 * the seconds it took. */
double osu_compute(double seconds, MPI_Request *req);

#endif
