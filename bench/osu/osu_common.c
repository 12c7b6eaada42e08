/*
 * bench/osu's shared helpers (osu_common.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "osu_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "123", "64k", "4m": bytes; -1 when it is not a size */
static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v;

    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0)
        return -1;
    if (*end == 'k' || *end == 'K') {
        v <<= 10;
        end++;
    } else if (*end == 'm' || *end == 'M') {
        v <<= 20;
        end++;
    }
    /* MPI counts are ints: the benchmarks send size bytes as one count */
    if (*end != '\0' || v > 0x40000000ull)
        return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_count(const char *s, long *out, long lo)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > 100000000L)
        return -1;
    *out = v;
    return 0;
}

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [-m [MIN:]MAX] [-i ITERS] [-x WARMUP] [-f] [-h]\n"
            "  -m [MIN:]MAX  message sizes in bytes (k, m suffixes), powers of two\n"
            "  -i ITERS      timed iterations per size\n"
            "  -x WARMUP     untimed iterations before them\n"
            "  -f            collectives: min and max latency and iterations too\n",
            prog);
}

int osu_parse(int argc, char **argv, osu_opts_t *o)
{
    int rank = 0, bad = 0;
    const char *prog = argc > 0 ? argv[0] : "osu";
    const char *why = NULL;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 1; i < argc && !bad; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n = 0;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (rank == 0)
                usage(stdout, prog);
            return 1;
        } else if (strcmp(a, "-f") == 0) {
            o->full = 1;
        } else if (strcmp(a, "-m") == 0 && v != NULL) {
            const char *colon = strchr(v, ':');
            char lo[32];

            i++;
            if (colon == NULL) {
                bad = parse_size(v, &o->max) != 0;
            } else if ((size_t)(colon - v) < sizeof(lo)) {
                memcpy(lo, v, (size_t)(colon - v));
                lo[colon - v] = '\0';
                bad = parse_size(lo, &o->min) != 0 || parse_size(colon + 1, &o->max) != 0;
            } else {
                bad = 1;
            }
            if (!bad && o->min > o->max)
                bad = 1;
            why = "-m wants [MIN:]MAX, sizes up to 1g with MIN <= MAX";
        } else if (strcmp(a, "-i") == 0 && v != NULL) {
            i++;
            bad = parse_count(v, &n, 1) != 0;
            o->iters = o->iters_large = n;
            why = "-i wants a count >= 1";
        } else if (strcmp(a, "-x") == 0 && v != NULL) {
            i++;
            bad = parse_count(v, &n, 0) != 0;
            o->warmup = o->warmup_large = n;
            why = "-x wants a count >= 0";
        } else {
            bad = 1;
            why =
                v == NULL && (strcmp(a, "-m") == 0 || strcmp(a, "-i") == 0 || strcmp(a, "-x") == 0)
                    ? "needs a value"
                    : "unknown option";
        }
        if (bad && rank == 0) {
            fprintf(stderr, "%s: %s: %s\n", prog, a, why);
            usage(stderr, prog);
        }
    }
    return bad ? 2 : 0;
}

long osu_iters(const osu_opts_t *o, size_t size)
{
    return size > OSU_LARGE ? o->iters_large : o->iters;
}

long osu_warmup(const osu_opts_t *o, size_t size)
{
    return size > OSU_LARGE ? o->warmup_large : o->warmup;
}

size_t osu_next_size(size_t size)
{
    return size == 0 ? 1 : size * 2;
}

void osu_header(int rank, const char *title, const char *extra, const char *columns)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;

    if (rank != 0)
        return;
    MPI_Get_library_version(version, &len);
    version[strcspn(version, "\n")] = '\0';
    for (char *p = version; *p != '\0'; p++)
        if (*p == '\t')
            *p = ' ';
    printf("# %s\n# Library: %s\n", title, version);
    if (extra != NULL)
        printf("# %s\n", extra);
    printf("# %s\n", columns);
    fflush(stdout);
}

void *osu_alloc(size_t len)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t align = page > 0 ? (size_t)page : 4096;
    size_t n = (len + align - 1) / align * align;
    void *p = NULL;

    if (n == 0)
        n = align;
    if (posix_memalign(&p, align, n) != 0) {
        fprintf(stderr, "osu: cannot allocate %zu bytes\n", n);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return NULL;
    }
    memset(p, 'a', n);
    return p;
}

void osu_require(int cond, int rank, const char *msg)
{
    if (cond)
        return;
    if (rank == 0)
        fprintf(stderr, "%s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* where the compute loop's result goes, so that it is not optimised away */
static volatile double compute_sink;

double osu_compute(double seconds, MPI_Request *req)
{
    double a[16], t0 = MPI_Wtime(), t;
    int done = 0;

    for (int i = 0; i < 16; i++)
        a[i] = 1.0 + i * 1e-3;
    do {
        /* a few hundred flops between clock reads: about a microsecond */
        for (int k = 0; k < 32; k++)
            for (int i = 0; i < 16; i++)
                a[i] = a[i] * 0.999999 + 1e-6;
        if (req != NULL && !done)
            MPI_Test(req, &done, MPI_STATUS_IGNORE);
        t = MPI_Wtime() - t0;
    } while (t < seconds);
    compute_sink = a[0] + a[15];
    return t;
}
