/*
 * tern_bench — private interface between the driver (tern_bench.c: start-up
 * and the loop over tests and sizes) and the point-to-point loops
 * (tern_bench_p2p.c).  Options, tables and JSON are in bench_p2p.
 */
#ifndef TERN_BENCH_INTERNAL_H
#define TERN_BENCH_INTERNAL_H

#include "bench/bench_p2p_internal.h"

#include <stdbool.h>
#include <stddef.h>

#include <tern/tern.h>

/** Everything a measurement loop needs. */
typedef struct tb_env {
    tern_context_t *ctx;
    tern_worker_t *w;
    int rank;   /* 0 or 1 */
    int peer;   /* 1 - rank */
    void *sbuf; /* page-aligned, touched, max size bytes */
    void *rbuf; /* page-aligned, touched, max size bytes */
} tb_env_t;

/** Abort the job if st is an error: prints what, tern_strerror and
 *  tern_last_error, then tern_abort. */
void tb_check(const tb_env_t *env, tern_status_t st, const char *what);

/**
 * Run iters timed rounds of test at size bytes after warmup untimed ones.
 * Both ranks call it.  Returns on rank 0 the figure (bp_value: one-way
 * latency in us, MB/s with MB = 1e6 bytes, or messages/s); 0 on the other
 * rank.
 */
double tb_run(const tb_env_t *env, bp_test_t test, size_t size, long iters, long warmup);

/* --counters (tern_bench_counters.c) */
#define TB_MAX_COUNTERS 64
typedef struct tb_counts {
    int n;
    tern_counter_t before[TB_MAX_COUNTERS], after[TB_MAX_COUNTERS];
} tb_counts_t;
/** The worker's netmod counters into out (at most TB_MAX_COUNTERS). */
int tb_counters_take(tern_worker_t *w, tern_counter_t *out);
/** Messages rank 0 sends or receives in one round of test t. */
double tb_messages_per_round(bp_test_t t);
/** Rank 0: a table of counter deltas per message for each size. */
void tb_counters_print(bp_test_t t, const tb_counts_t *c, const bp_result_t *res, size_t nsizes);

#endif
