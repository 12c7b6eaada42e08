/*
 * tern_bench — private interface between the driver (tern_bench.c: options,
 * tables, JSON) and the point-to-point loops (tern_bench_p2p.c).
 */
#ifndef TERN_BENCH_INTERNAL_H
#define TERN_BENCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <tern/tern.h>

/** Window of the bandwidth tests: isends in flight before the ack. */
#define TB_WINDOW 64

/** Messages above this many bytes count as large (fewer iterations). */
#define TB_LARGE_MSG 8192

typedef enum tb_test { TB_TEST_LAT, TB_TEST_BW, TB_TEST_BIBW, TB_TEST_COUNT } tb_test_t;

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
 * Both ranks call it.  Returns on rank 0 the figure (one-way latency in us,
 * or bandwidth in MB/s with MB = 1e6 bytes); 0 on the other rank.
 */
double tb_run(const tb_env_t *env, tb_test_t test, size_t size, long iters, long warmup);

#endif
