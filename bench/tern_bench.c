/*
 * tern_bench — OSU-style point-to-point benchmarks between rank 0 and rank 1.
 *
 *   ternrun -n 2 --bind-to core ./tern_bench [-t lat,bw,bibw,mr,stream|all] [-m MIN:MAX]
 *                                 [-i ITERS] [-w WARMUP] [--json FILE] [-q] [-v]
 *                                 [--counters]
 *
 * Sizes are MIN, then the powers of two above it up to MAX (0 included when
 * MIN is 0).  Without -i/-w the counts follow OSU: fewer iterations above
 * BP_LARGE_MSG bytes; -i/-w apply as given to every size.  Rank 0 prints a
 * table per test and, with --json, writes every figure with the run's
 * metadata (bench_p2p: the same format as mpi_bench).  A benchmark prints
 * figures; it asserts nothing about speed.
 */
#include "config.h"

#include "bench/bench_p2p_internal.h"
#include "bench/bench_util_internal.h"
#include "bench/tern_bench_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* -v: where this rank runs, as the launcher pinned it. */
static void tb_print_affinity(const tb_env_t *env, const char *netmod)
{
    char cpus[256];

    bench_affinity(cpus, sizeof(cpus));
    printf("# tern_bench rank %d pid %d: cpus allowed %s, running on cpu %d, netmod %s\n",
           env->rank, (int)getpid(), cpus, sched_getcpu(), netmod);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    static bp_result_t res[BP_TEST_COUNT][BP_MAX_SIZES];
    static tb_counts_t counts[BP_MAX_SIZES];
    size_t sizes[BP_MAX_SIZES];
    size_t nsizes;
    bp_opts_t o;
    tb_env_t env = {0};
    const char *netmod;
    FILE *jf = NULL;
    tern_status_t st;
    int rc;

    rc = bp_parse(argc, argv, "tern_bench", "ternrun -n 2 --bind-to core",
                  BP_TESTS_P2P | BP_TEST_BIT(BP_TEST_STREAM), &o);
    if (rc != 0) {
        return rc > 0 ? 0 : 2;
    }
    nsizes = bp_sizes(&o, sizes);

    st = tern_init(&env.ctx);
    if (st != TERN_OK) {
        /* No context, so nothing to abort through: report and leave. */
        fprintf(stderr, "tern_bench: tern_init failed: %s (%s)\n", tern_strerror(st),
                tern_last_error());
        return 1;
    }
    env.rank = tern_rank(env.ctx);
    env.peer = 1 - env.rank;
    env.w = tern_context_worker(env.ctx);
    if (tern_size(env.ctx) != 2) {
        if (env.rank == 0) {
            fprintf(stderr, "tern_bench: needs exactly 2 ranks, job has %d\n", tern_size(env.ctx));
        }
        tern_abort(env.ctx, 2, "tern_bench needs exactly 2 ranks");
        return 2;
    }
    env.sbuf = bench_alloc(o.max);
    env.rbuf = bench_alloc(o.max);
    if (env.sbuf == NULL || env.rbuf == NULL) {
        fprintf(stderr, "tern_bench rank %d: cannot allocate 2 x %zu bytes\n", env.rank, o.max);
        tern_abort(env.ctx, 1, "tern_bench: out of memory");
        return 1;
    }
    netmod = tern_peer_netmod(env.ctx, env.peer);
    if (netmod == NULL) {
        netmod = "unknown";
    }
    if (env.rank == 0 && o.json != NULL) {
        jf = fopen(o.json, "w");
        if (jf == NULL) {
            fprintf(stderr, "tern_bench: %s: %s\n", o.json, strerror(errno));
            tern_abort(env.ctx, 1, "tern_bench: cannot open the JSON file");
            return 1;
        }
    }

    if (o.verbose) {
        /* One rank after the other, so the lines do not interleave. */
        for (int r = 0; r < 2; r++) {
            if (r == env.rank) {
                tb_print_affinity(&env, netmod);
            }
            tb_check(&env, tern_barrier(env.ctx), "tern_barrier");
        }
    }

    for (int t = 0; t < BP_TEST_COUNT; t++) {
        if (!o.run[t]) {
            continue;
        }
        for (size_t i = 0; i < nsizes; i++) {
            bp_result_t *r = &res[t][i];

            r->size = sizes[i];
            bp_counts(&o, (bp_test_t)t, r->size, &r->iters, &r->warmup);
            tb_check(&env, tern_barrier(env.ctx), "tern_barrier");
            if (o.counters)
                counts[i].n = tb_counters_take(env.w, counts[i].before);
            r->value = tb_run(&env, (bp_test_t)t, r->size, r->iters, r->warmup);
            if (o.counters)
                tb_counters_take(env.w, counts[i].after);
        }
        tb_check(&env, tern_barrier(env.ctx), "tern_barrier");
        if (env.rank == 0) {
            char transport[64];

            snprintf(transport, sizeof(transport), "netmod %s", netmod);
            bp_print_table(&o, (bp_test_t)t, "tern", transport, res[t], nsizes);
            if (o.counters)
                tb_counters_print((bp_test_t)t, counts, res[t], nsizes);
        }
    }

    if (jf != NULL && bp_write_json(jf, &o, "tern_bench", netmod, argc, argv, res, nsizes) != 0) {
        fprintf(stderr, "tern_bench: %s: %s\n", o.json, strerror(errno));
        tern_abort(env.ctx, 1, "tern_bench: cannot write the JSON file");
        return 1;
    }

    bench_free(env.sbuf);
    bench_free(env.rbuf);
    st = tern_finalize(env.ctx);
    if (st != TERN_OK) {
        /* The context is gone either way: nothing left to abort through. */
        fprintf(stderr, "tern_bench rank %d: tern_finalize failed: %s (%s)\n", env.rank,
                tern_strerror(st), tern_last_error());
        return 1;
    }
    return 0;
}
