/*
 * bench_p2p — options, sizes, counts, tables and JSON shared by tern_bench
 * and mpi_bench (see bench_p2p_internal.h).
 */
#include "config.h"

#include "bench/bench_p2p_internal.h"
#include "bench/bench_util_internal.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

typedef struct bp_test_info {
    const char *name;   /* -t name and JSON "benchmark" */
    const char *title;  /* table title after the tool name */
    const char *column; /* table value column */
    const char *unit;
    long iters_small, warmup_small, iters_large, warmup_large;
} bp_test_info_t;

/* Counts as in the OSU micro-benchmarks (latency 10000/1000 iterations,
 * bandwidth 100/20 windows), with a longer warm-up for the small sizes.
 * The message rate runs 10x the windows of bandwidth for small messages:
 * 64 x 100 messages of 8 B take well under a millisecond. */
static const bp_test_info_t bp_tests[BP_TEST_COUNT] = {
    [BP_TEST_LAT] = {"lat", "latency", "Latency (us)", "us", 10000, 1000, 1000, 10},
    [BP_TEST_BW] = {"bw", "bandwidth", "Bandwidth (MB/s)", "MB/s", 100, 10, 20, 2},
    [BP_TEST_BIBW] = {"bibw", "bi-directional bandwidth", "Bandwidth (MB/s)", "MB/s", 100, 10, 20,
                      2},
    [BP_TEST_MR] = {"mr", "message rate", "Messages/s", "msg/s", 1000, 100, 20, 2},
    /* the windows of mr, streamed without their acks */
    [BP_TEST_STREAM] = {"stream", "streaming message rate", "Messages/s", "msg/s", 1000, 100, 20,
                        2},
    /* as osu_allreduce: 1000 / 100 calls, more warm-up for the small sizes */
    [BP_TEST_ALLREDUCE] = {"allreduce", "allreduce latency", "Latency (us)", "us", 1000, 200, 100,
                           10},
};

static void bp_usage(FILE *f, const char *prog, const char *launcher, unsigned tests)
{
    char names[128] = "";

    for (int t = 0; t < BP_TEST_COUNT; t++) {
        if (tests & BP_TEST_BIT(t)) {
            size_t len = strlen(names);

            snprintf(names + len, sizeof(names) - len, "%s%s", len ? "," : "", bp_tests[t].name);
        }
    }
    fprintf(f,
            "usage: %s %s [options]\n"
            "  -t TESTS            comma list of tests, or all (the default: %s)\n"
            "  -m MIN:MAX          message sizes in bytes, powers of two (default 0:4194304;\n"
            "                      k/m suffixes accepted; one size N means N:N)\n"
            "  -f FACTOR           sizes after MIN: the powers of FACTOR up to MAX (default 2)\n"
            "  -i ITERS            timed iterations (rounds) for every size\n"
            "  -w WARMUP           untimed warm-up iterations for every size\n"
            "  -b BYTES            bw, bibw, mr: more windows where needed to move at least\n"
            "                      BYTES per size (k/m/g suffixes; short runs are noisy)\n"
            "  --json FILE         write the results as JSON (rank 0)\n"
            "  -q                  quiet: only a title line per test and the data rows\n"
            "  -v                  verbose: each rank prints where it runs (CPU affinity)\n"
            "  --counters          tern_bench: after each table, the netmod's calls per message\n"
            "                      handled by rank 0 (verbs: ibv_post_send, ibv_poll_cq ...)\n",
            launcher, prog, names);
}

static int bp_parse_count(const char *arg, long min, long *out)
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

/* "lat,mr" or "all" (the tests the tool has); 0 or -1 on an unknown name. */
static int bp_parse_tests(const char *prog, const char *arg, unsigned tests, bp_opts_t *o)
{
    char buf[128];
    char *save = NULL;

    if (strlen(arg) >= sizeof(buf)) {
        fprintf(stderr, "%s: test list too long\n", prog);
        return -1;
    }
    strcpy(buf, arg);
    for (char *name = strtok_r(buf, ",", &save); name != NULL; name = strtok_r(NULL, ",", &save)) {
        int t;

        if (strcmp(name, "all") == 0) {
            for (t = 0; t < BP_TEST_COUNT; t++) {
                o->run[t] = (tests & BP_TEST_BIT(t)) != 0;
            }
            continue;
        }
        for (t = 0; t < BP_TEST_COUNT; t++) {
            if ((tests & BP_TEST_BIT(t)) && strcmp(name, bp_tests[t].name) == 0) {
                o->run[t] = true;
                break;
            }
        }
        if (t == BP_TEST_COUNT) {
            fprintf(stderr, "%s: unknown test '%s'\n", prog, name);
            return -1;
        }
    }
    return 0;
}

int bp_parse(int argc, char **argv, const char *prog, const char *launcher, unsigned tests,
             bp_opts_t *o)
{
    static const struct option longopts[] = {
        {"json", required_argument, NULL, 'j'},
        {"counters", no_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool any = false;
    int c;

    *o = (bp_opts_t){.min = 0, .max = 4194304, .factor = 2, .iters = -1, .warmup = -1};
    while ((c = getopt_long(argc, argv, "t:m:f:i:w:b:qvh", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            any = true;
            if (bp_parse_tests(prog, optarg, tests, o) != 0) {
                return -1;
            }
            break;
        case 'm':
            if (bench_parse_range(optarg, &o->min, &o->max) != 0) {
                fprintf(stderr, "%s: bad size range '%s' (want MIN:MAX)\n", prog, optarg);
                return -1;
            }
            break;
        case 'f':
            if (bp_parse_count(optarg, 2, &o->factor) != 0 || o->factor > 1024) {
                fprintf(stderr, "%s: bad size factor '%s' (want 2 .. 1024)\n", prog, optarg);
                return -1;
            }
            break;
        case 'i':
            if (bp_parse_count(optarg, 1, &o->iters) != 0) {
                fprintf(stderr, "%s: bad iteration count '%s'\n", prog, optarg);
                return -1;
            }
            break;
        case 'w':
            if (bp_parse_count(optarg, 0, &o->warmup) != 0) {
                fprintf(stderr, "%s: bad warm-up count '%s'\n", prog, optarg);
                return -1;
            }
            break;
        case 'b':
            if (bench_parse_size(optarg, &o->min_bytes) != 0) {
                fprintf(stderr, "%s: bad byte count '%s'\n", prog, optarg);
                return -1;
            }
            break;
        case 'j':
            o->json = optarg;
            break;
        case 'c':
            o->counters = true;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'v':
            o->verbose = true;
            break;
        case 'h':
            bp_usage(stdout, argv[0], launcher, tests);
            return 1;
        default:
            bp_usage(stderr, argv[0], launcher, tests);
            return -1;
        }
    }
    if (optind != argc) {
        bp_usage(stderr, argv[0], launcher, tests);
        return -1;
    }
    if (!any) {
        for (int t = 0; t < BP_TEST_COUNT; t++) {
            o->run[t] = (tests & BP_TEST_BIT(t)) != 0;
        }
    }
    return 0;
}

size_t bp_sizes(const bp_opts_t *o, size_t sizes[BP_MAX_SIZES])
{
    size_t n = 0;

    sizes[n++] = o->min;
    for (size_t s = 1; s <= o->max && n < BP_MAX_SIZES; s *= (size_t)o->factor) {
        if (s > o->min) {
            sizes[n++] = s;
        }
        if (s > SIZE_MAX / (size_t)o->factor) {
            break;
        }
    }
    return n;
}

void bp_counts(const bp_opts_t *o, bp_test_t t, size_t size, long *iters, long *warmup)
{
    const bp_test_info_t *ti = &bp_tests[t];
    bool large = size > BP_LARGE_MSG;

    *iters = o->iters >= 0 ? o->iters : (large ? ti->iters_large : ti->iters_small);
    *warmup = o->warmup >= 0 ? o->warmup : (large ? ti->warmup_large : ti->warmup_small);
    if (t != BP_TEST_LAT && t != BP_TEST_ALLREDUCE && o->min_bytes > 0 && size > 0) {
        size_t per_window = (size_t)BP_WINDOW * size;
        size_t need = (o->min_bytes + per_window - 1) / per_window;

        if (need > (size_t)*iters) {
            *iters = need > 1000000 ? 1000000 : (long)need;
            if (*warmup < *iters / 10) {
                *warmup = *iters / 10;
            }
        }
    }
}

double bp_value(bp_test_t t, size_t size, long iters, uint64_t ns)
{
    double sec = (double)ns / 1e9;
    double msgs = (double)BP_WINDOW * (double)iters;

    if (ns == 0) {
        return 0.0;
    }
    switch (t) {
    case BP_TEST_LAT:
        return (double)ns / 1e3 / (double)iters / 2.0;
    case BP_TEST_BW:
        return (double)size * msgs / 1e6 / sec;
    case BP_TEST_BIBW:
        return 2.0 * (double)size * msgs / 1e6 / sec;
    case BP_TEST_MR:
    case BP_TEST_STREAM:
        return msgs / sec;
    case BP_TEST_ALLREDUCE:
        return (double)ns / 1e3 / (double)iters;
    case BP_TEST_COUNT:
        break;
    }
    return 0.0;
}

void bp_print_table(const bp_opts_t *o, bp_test_t t, const char *tool, const char *transport,
                    const bp_result_t *res, size_t n)
{
    const bp_test_info_t *ti = &bp_tests[t];
    bool lat = (t == BP_TEST_LAT || t == BP_TEST_ALLREDUCE);
    bool mr = (t == BP_TEST_MR || t == BP_TEST_STREAM);

    if (o->quiet) {
        printf("# %s %s\n", tool, ti->title); /* only the title: tells -t all's tables apart */
    } else {
        printf("# %s %s (%s, ranks 0 <-> 1%s)\n", tool, ti->title, transport,
               t == BP_TEST_ALLREDUCE ? ", MPI_SUM, mean of the ranks"
               : lat                  ? ""
                                      : ", window 64");
        if (mr) {
            printf("# %-10s%18s%18s\n", "Size", ti->column, "MB/s");
        } else {
            printf("# %-10s%18s\n", "Size", ti->column);
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (mr) {
            printf("%-12zu%18.0f%18.2f\n", res[i].size, res[i].value,
                   res[i].value * (double)res[i].size / 1e6);
        } else {
            printf("%-12zu%18.*f\n", res[i].size, lat ? 3 : 2, res[i].value);
        }
    }
    fflush(stdout);
}

static void bp_json_test(FILE *f, bp_test_t t, const bp_result_t *res, size_t n, bool first)
{
    const bp_test_info_t *ti = &bp_tests[t];

    fprintf(f, "%s\n    {\n      \"benchmark\": \"%s\",\n      \"unit\": \"%s\",\n",
            first ? "" : ",", ti->name, ti->unit);
    if (t != BP_TEST_LAT && t != BP_TEST_ALLREDUCE) {
        fprintf(f, "      \"window\": %d,\n      \"megabyte\": 1000000,\n", BP_WINDOW);
    }
    fprintf(f, "      \"results\": [");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s\n        {\"size\": %zu, \"value\": %.4f, ", i ? "," : "", res[i].size,
                res[i].value);
        if (t == BP_TEST_MR || t == BP_TEST_STREAM) {
            fprintf(f, "\"mbps\": %.4f, ", res[i].value * (double)res[i].size / 1e6);
        }
        fprintf(f, "\"iterations\": %ld, \"warmup\": %ld}", res[i].iters, res[i].warmup);
    }
    fprintf(f, "\n      ]\n    }");
}

int bp_write_json(FILE *f, const bp_opts_t *o, const char *tool, const char *transport, int argc,
                  char **argv, bp_result_t res[BP_TEST_COUNT][BP_MAX_SIZES], size_t n)
{
    bool first = true;
    int err;

    fprintf(f, "{\n  \"tool\": ");
    bench_json_str(f, tool);
    fprintf(f, ",\n  \"netmod\": ");
    bench_json_str(f, transport);
    fprintf(f, ",\n  \"ranks\": [0, 1],\n  \"hostname\": ");
    bench_json_str(f, bench_hostname());
    fprintf(f, ",\n  \"date\": ");
    bench_json_str(f, bench_date());
    fprintf(f, ",\n  \"command_line\": ");
    bench_json_argv(f, argc, argv);
    fprintf(f, ",\n  \"tests\": [");
    for (int t = 0; t < BP_TEST_COUNT; t++) {
        if (o->run[t]) {
            bp_json_test(f, (bp_test_t)t, res[t], n, first);
            first = false;
        }
    }
    fprintf(f, "\n  ]\n}\n");
    err = ferror(f) ? EIO : 0;
    if (fclose(f) != 0 && err == 0) {
        err = errno;
    }
    if (err != 0) {
        errno = err;
        return -1;
    }
    return 0;
}
