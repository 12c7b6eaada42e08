/*
 * bench_p2p — the part of an OSU-style two-rank benchmark that does not
 * depend on the communication library: tests and their counts, options,
 * message sizes, the figure from an elapsed time, the tables and the JSON.
 *
 * tern_bench (on libtern) and mpi_bench (on MPI, built with MPICH's or
 * Open MPI's mpicc, or tern's ternmpicc) both use it, so their output is
 * the same byte for byte in format and compare.sh and mpi_compare.sh read
 * both with one parser.  Only rank 0 prints.
 *
 * Not part of libtern and not installed.
 */
#ifndef TERN_BENCH_P2P_INTERNAL_H
#define TERN_BENCH_P2P_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** Window of the bandwidth and message-rate tests: sends in flight before
 *  the receiver's ack (OSU's window size). */
#define BP_WINDOW 64

/** Messages above this many bytes count as large (fewer iterations). */
#define BP_LARGE_MSG 8192

#define BP_MAX_SIZES 64

typedef enum bp_test {
    BP_TEST_LAT,       /* ping-pong, one-way latency in us */
    BP_TEST_BW,        /* window of sends, ack; MB/s */
    BP_TEST_BIBW,      /* windows both ways at once; MB/s, both directions */
    BP_TEST_MR,        /* as bw, counted in messages/s (osu_mbw_mr, one pair) */
    BP_TEST_ALLREDUCE, /* mpi_bench only: MPI_Allreduce, us per call (mean of the ranks) */
    BP_TEST_STREAM,    /* tern_bench only: one-way, no ack per window (ucx_perftest's
                        * tag_bw), messages/s */
    BP_TEST_COUNT
} bp_test_t;

/** Bit of test t in bp_parse's set of the tests a tool has. */
#define BP_TEST_BIT(t) (1u << (t))
/** The point-to-point tests: what tern_bench has. */
#define BP_TESTS_P2P                                                                               \
    (BP_TEST_BIT(BP_TEST_LAT) | BP_TEST_BIT(BP_TEST_BW) | BP_TEST_BIT(BP_TEST_BIBW) |              \
     BP_TEST_BIT(BP_TEST_MR))

typedef struct bp_opts {
    bool run[BP_TEST_COUNT];
    size_t min, max;
    long factor;      /* sizes after min: the powers of factor (-f, default 2) */
    long iters;       /* -1: by test and size */
    long warmup;      /* -1: by test and size */
    size_t min_bytes; /* bw, bibw, mr: at least this many bytes per size (0: off) */
    const char *json;
    bool quiet;
    bool verbose;
    bool counters;    /* tern_bench: netmod calls per message after each table */
} bp_opts_t;

typedef struct bp_result {
    size_t size;
    long iters;
    long warmup;
    double value; /* us (lat, allreduce), MB/s (bw, bibw) or messages/s (mr, stream) */
} bp_result_t;

/** Parse the common options.  prog names the tool in messages and usage;
 *  launcher is how the usage line starts ("ternrun -n 2 --bind-to core");
 *  tests is the set (BP_TEST_BIT) of the tests the tool has: -t all and no
 *  -t mean all of them, another name is an error.  Returns 0, 1 when --help
 *  was printed (exit 0), -1 on a usage error (message printed; exit 2). */
int bp_parse(int argc, char **argv, const char *prog, const char *launcher, unsigned tests,
             bp_opts_t *o);

/** MIN, then the powers of FACTOR (-f, default 2) in (MIN, MAX]; returns
 *  the count. */
size_t bp_sizes(const bp_opts_t *o, size_t sizes[BP_MAX_SIZES]);

/** Iterations and warm-up for test at size (the OSU-like defaults unless
 *  -i / -w were given; -b raises the windows of bw, bibw and mr until they
 *  move at least that many bytes, with a warm-up of a tenth). */
void bp_counts(const bp_opts_t *o, bp_test_t t, size_t size, long *iters, long *warmup);

/** The figure of test t: iters timed rounds of size bytes took ns on rank 0
 *  (allreduce: on the rank whose time it is). */
double bp_value(bp_test_t t, size_t size, long iters, uint64_t ns);

/** Print the table of test t.  tool is "tern" or "mpi"; transport names
 *  what carried the bytes (tern's netmod, the MPI library). */
void bp_print_table(const bp_opts_t *o, bp_test_t t, const char *tool, const char *transport,
                    const bp_result_t *res, size_t n);

/** Write the whole JSON document: tool, transport, run metadata and every
 *  test that ran.  0, or -1 with errno set when writing failed (f is
 *  closed either way). */
int bp_write_json(FILE *f, const bp_opts_t *o, const char *tool, const char *transport, int argc,
                  char **argv, bp_result_t res[BP_TEST_COUNT][BP_MAX_SIZES], size_t n);

#endif
