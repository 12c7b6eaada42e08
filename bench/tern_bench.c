/*
 * tern_bench — OSU-style point-to-point benchmarks between rank 0 and rank 1.
 *
 *   ternrun -n 2 --bind-to core ./tern_bench [-t lat|bw|bibw|all] [-m MIN:MAX]
 *                                           [-i ITERS] [-w WARMUP] [--json FILE] [-q]
 *
 * Sizes are MIN, then the powers of two above it up to MAX (0 included when
 * MIN is 0).  Without -i/-w the counts follow OSU: fewer iterations above
 * TB_LARGE_MSG bytes; -i/-w apply as given to every size.  Rank 0 prints a
 * table per test and, with --json, writes every figure with the run's
 * metadata.  A benchmark prints figures; it asserts nothing about speed.
 */
#include "config.h"

#include "bench/bench_util_internal.h"
#include "bench/tern_bench_internal.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TB_MAX_SIZES 64

typedef struct tb_opts {
    bool run[TB_TEST_COUNT];
    size_t min, max;
    long iters;  /* -1: by test and size */
    long warmup; /* -1: by test and size */
    const char *json;
    bool quiet;
} tb_opts_t;

typedef struct tb_result {
    size_t size;
    long iters;
    long warmup;
    double value;
} tb_result_t;

typedef struct tb_test_info {
    const char *name;   /* -t name and JSON "benchmark" */
    const char *title;  /* table title */
    const char *column; /* table value column */
    const char *unit;
    long iters_small, warmup_small, iters_large, warmup_large;
} tb_test_info_t;

/* Counts as in the OSU micro-benchmarks (latency 10000/1000 iterations,
 * bandwidth 100/20 windows), with a longer warm-up for the small sizes. */
static const tb_test_info_t tb_tests[TB_TEST_COUNT] = {
    [TB_TEST_LAT] = {"lat", "# tern latency", "Latency (us)", "us", 10000, 1000, 1000, 10},
    [TB_TEST_BW] = {"bw", "# tern bandwidth", "Bandwidth (MB/s)", "MB/s", 100, 10, 20, 2},
    [TB_TEST_BIBW] = {"bibw", "# tern bi-directional bandwidth", "Bandwidth (MB/s)", "MB/s", 100,
                      10, 20, 2},
};

static void tb_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: ternrun -n 2 --bind-to core %s [options]\n"
            "  -t lat|bw|bibw|all  test to run (default all = lat then bw)\n"
            "  -m MIN:MAX          message sizes in bytes, powers of two (default 0:4194304;\n"
            "                      k/m suffixes accepted; one size N means N:N)\n"
            "  -i ITERS            timed iterations (rounds) for every size\n"
            "  -w WARMUP           untimed warm-up iterations for every size\n"
            "  --json FILE         write the results as JSON (rank 0)\n"
            "  -q                  quiet: only a title line per test and the data rows\n",
            prog);
}

static int tb_parse_count(const char *arg, long min, long *out)
{
    char *end = NULL;
    long v;

    errno = 0;
    v = strtol(arg, &end, 10);
    if (errno != 0 || end == arg || *end != '\0' || v < min) {
        return -1;
    }
    *out = v;
    return 0;
}

static int tb_test_by_name(const char *name, tb_opts_t *o)
{
    for (int t = 0; t < TB_TEST_COUNT; t++) {
        if (strcmp(name, tb_tests[t].name) == 0) {
            o->run[t] = true;
            return 0;
        }
    }
    return -1;
}

/* 0 on success, 1 to exit 0 (help), -1 on a usage error. */
static int tb_parse(int argc, char **argv, tb_opts_t *o)
{
    static const struct option longopts[] = {
        {"json", required_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool any = false;
    int c;

    *o = (tb_opts_t){.min = 0, .max = 4194304, .iters = -1, .warmup = -1};
    while ((c = getopt_long(argc, argv, "t:m:i:w:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            any = true;
            if (strcmp(optarg, "all") == 0) {
                o->run[TB_TEST_LAT] = o->run[TB_TEST_BW] = true;
                break;
            }
            if (tb_test_by_name(optarg, o) != 0) {
                fprintf(stderr, "tern_bench: unknown test '%s'\n", optarg);
                return -1;
            }
            break;
        case 'm':
            if (bench_parse_range(optarg, &o->min, &o->max) != 0) {
                fprintf(stderr, "tern_bench: bad size range '%s' (want MIN:MAX)\n", optarg);
                return -1;
            }
            break;
        case 'i':
            if (tb_parse_count(optarg, 1, &o->iters) != 0) {
                fprintf(stderr, "tern_bench: bad iteration count '%s'\n", optarg);
                return -1;
            }
            break;
        case 'w':
            if (tb_parse_count(optarg, 0, &o->warmup) != 0) {
                fprintf(stderr, "tern_bench: bad warm-up count '%s'\n", optarg);
                return -1;
            }
            break;
        case 'j':
            o->json = optarg;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'h':
            tb_usage(stdout, argv[0]);
            return 1;
        default:
            tb_usage(stderr, argv[0]);
            return -1;
        }
    }
    if (optind != argc) {
        tb_usage(stderr, argv[0]);
        return -1;
    }
    if (!any) {
        o->run[TB_TEST_LAT] = o->run[TB_TEST_BW] = true;
    }
    return 0;
}

/* MIN, then the powers of two in (MIN, MAX]. */
static size_t tb_sizes(const tb_opts_t *o, size_t *sizes)
{
    size_t n = 0;
    size_t s;

    sizes[n++] = o->min;
    for (s = 1; s <= o->max && n < TB_MAX_SIZES; s <<= 1) {
        if (s > o->min) {
            sizes[n++] = s;
        }
        if (s > (SIZE_MAX >> 1)) {
            break;
        }
    }
    return n;
}

static void tb_print_table(const tb_opts_t *o, tb_test_t t, const char *netmod,
                           const tb_result_t *res, size_t n)
{
    const tb_test_info_t *ti = &tb_tests[t];
    bool lat = (t == TB_TEST_LAT);

    if (o->quiet) {
        printf("%s\n", ti->title); /* only the title: tells -t all's tables apart */
    } else {
        printf("%s (netmod %s, ranks 0 <-> 1%s)\n", ti->title, netmod, lat ? "" : ", window 64");
        printf("# %-10s%18s\n", "Size", ti->column);
    }
    for (size_t i = 0; i < n; i++) {
        printf("%-12zu%18.*f\n", res[i].size, lat ? 3 : 2, res[i].value);
    }
    fflush(stdout);
}

static void tb_json_test(FILE *f, tb_test_t t, const tb_result_t *res, size_t n, bool first)
{
    const tb_test_info_t *ti = &tb_tests[t];

    fprintf(f, "%s\n    {\n      \"benchmark\": \"%s\",\n      \"unit\": \"%s\",\n",
            first ? "" : ",", ti->name, ti->unit);
    if (t != TB_TEST_LAT) {
        fprintf(f, "      \"window\": %d,\n      \"megabyte\": 1000000,\n", TB_WINDOW);
    }
    fprintf(f, "      \"results\": [");
    for (size_t i = 0; i < n; i++) {
        fprintf(f,
                "%s\n        {\"size\": %zu, \"value\": %.4f, \"iterations\": %ld, "
                "\"warmup\": %ld}",
                i ? "," : "", res[i].size, res[i].value, res[i].iters, res[i].warmup);
    }
    fprintf(f, "\n      ]\n    }");
}

static void tb_counts(const tb_opts_t *o, tb_test_t t, size_t size, long *iters, long *warmup)
{
    bool large = size > TB_LARGE_MSG;

    *iters = o->iters >= 0 ? o->iters : (large ? tb_tests[t].iters_large : tb_tests[t].iters_small);
    *warmup =
        o->warmup >= 0 ? o->warmup : (large ? tb_tests[t].warmup_large : tb_tests[t].warmup_small);
}

int main(int argc, char **argv)
{
    static tb_result_t res[TB_TEST_COUNT][TB_MAX_SIZES];
    size_t sizes[TB_MAX_SIZES];
    size_t nsizes;
    tb_opts_t o;
    tb_env_t env = {0};
    const char *netmod;
    FILE *jf = NULL;
    tern_status_t st;
    int rc;

    rc = tb_parse(argc, argv, &o);
    if (rc != 0) {
        return rc > 0 ? 0 : 2;
    }
    nsizes = tb_sizes(&o, sizes);

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

    for (int t = 0; t < TB_TEST_COUNT; t++) {
        if (!o.run[t]) {
            continue;
        }
        for (size_t i = 0; i < nsizes; i++) {
            tb_result_t *r = &res[t][i];

            r->size = sizes[i];
            tb_counts(&o, (tb_test_t)t, r->size, &r->iters, &r->warmup);
            tb_check(&env, tern_barrier(env.ctx), "tern_barrier");
            r->value = tb_run(&env, (tb_test_t)t, r->size, r->iters, r->warmup);
        }
        tb_check(&env, tern_barrier(env.ctx), "tern_barrier");
        if (env.rank == 0) {
            tb_print_table(&o, (tb_test_t)t, netmod, res[t], nsizes);
        }
    }

    if (jf != NULL) {
        bool first = true;

        fprintf(jf, "{\n  \"tool\": \"tern_bench\",\n  \"netmod\": ");
        bench_json_str(jf, netmod);
        fprintf(jf, ",\n  \"ranks\": [0, 1],\n  \"hostname\": ");
        bench_json_str(jf, bench_hostname());
        fprintf(jf, ",\n  \"date\": ");
        bench_json_str(jf, bench_date());
        fprintf(jf, ",\n  \"command_line\": ");
        bench_json_argv(jf, argc, argv);
        fprintf(jf, ",\n  \"tests\": [");
        for (int t = 0; t < TB_TEST_COUNT; t++) {
            if (o.run[t]) {
                tb_json_test(jf, (tb_test_t)t, res[t], nsizes, first);
                first = false;
            }
        }
        fprintf(jf, "\n  ]\n}\n");
        if (fclose(jf) != 0) {
            fprintf(stderr, "tern_bench: %s: %s\n", o.json, strerror(errno));
            tern_abort(env.ctx, 1, "tern_bench: cannot write the JSON file");
            return 1;
        }
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
