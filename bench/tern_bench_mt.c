/*
 * tern_bench_mt — aggregate message rate with several worker threads per
 * rank (per-thread workers, the MPICH VCI model):
 *
 *   TERN_NUM_WORKERS=2 ternrun -n 2 --bind-to none ./tern_bench_mt [-T 1,2]
 *       [-s SIZE] [-n WINDOWS] [-r ROUNDS] [--json FILE]
 *
 * For each thread count T, each rank runs T threads; thread t drives worker
 * t (worker 0 is the context's, the others come from tern_worker_create)
 * and runs the osu_mbw_mr loop with thread t of the other rank: rank 0
 * posts a window of 64 isends of SIZE bytes, rank 1 a window of irecvs,
 * one ack per window.  Rank 0 times all its threads from a common start
 * (ranks meet at tern_barrier, threads at a pthread barrier) to the last
 * join and prints messages/s for all threads together.  Rounds alternate
 * the thread counts (1, 2, 1, 2, ...) and the table gives each round and
 * the median.  A benchmark: it prints figures and asserts nothing.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tern/tern.h>

#include "bench/bench_util_internal.h"

enum { WINDOW = 64, TAG = 9, ACK = 10, MAXT = 16, MAXR = 64 };

typedef struct mt_thread {
    tern_context_t *ctx;
    tern_worker_t *w;
    pthread_barrier_t *start;
    int rank, peer;
    size_t size;
    long windows;
    char buf[1 << 16];
    tern_status_t st;
    char err[256];            /* tern_last_error() of the thread that failed */
} mt_thread_t;

/* The window's ack, one way or the other. */
static tern_status_t ack(mt_thread_t *t)
{
    char b = 0;
    tern_request_t *r = NULL;
    tern_status_t st = t->rank == 0 ? tern_irecv(t->w, &b, 1, t->peer, ACK, 0, NULL, &r)
                                    : tern_isend(t->w, &b, 1, t->peer, ACK, 0, &r);
    return st == TERN_INPROGRESS ? tern_wait(t->w, r, NULL) : st;
}

static void *mt_main(void *arg)
{
    mt_thread_t *t = arg;
    tern_request_t *reqs[WINDOW];
    pthread_barrier_wait(t->start);
    for (long i = 0; i < t->windows && t->st == TERN_OK; i++) {
        for (int j = 0; j < WINDOW && t->st == TERN_OK; j++) {
            reqs[j] = NULL;
            tern_status_t st = t->rank == 0
                                   ? tern_isend(t->w, t->buf, t->size, t->peer, TAG, 0, &reqs[j])
                                   : tern_irecv(t->w, t->buf, t->size, t->peer, TAG, 0, NULL,
                                                &reqs[j]);
            if (st < 0)
                t->st = st;
        }
        if (t->st == TERN_OK)
            t->st = tern_waitall(t->w, reqs, WINDOW, NULL);
        if (t->st == TERN_OK)
            t->st = ack(t);
    }
    if (t->st != TERN_OK)
        snprintf(t->err, sizeof(t->err), "%s", tern_last_error());
    return NULL;
}

/* One timed run with nthreads threads; returns messages/s (rank 0). */
static double run(tern_context_t *ctx, mt_thread_t *th, int nthreads, size_t size, long windows)
{
    pthread_t tid[MAXT];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1);
    for (int k = 0; k < nthreads; k++) {
        th[k].start = &start;
        th[k].size = size;
        th[k].windows = windows;
        th[k].st = TERN_OK;
        pthread_create(&tid[k], NULL, mt_main, &th[k]);
    }
    tern_barrier(ctx);
    pthread_barrier_wait(&start);
    uint64_t t0 = bench_now_ns();
    for (int k = 0; k < nthreads; k++)
        pthread_join(tid[k], NULL);
    uint64_t ns = bench_now_ns() - t0;
    pthread_barrier_destroy(&start);
    for (int k = 0; k < nthreads; k++)
        if (th[k].st != TERN_OK) {
            fprintf(stderr, "tern_bench_mt: thread %d: %s (%s)\n", k, tern_strerror(th[k].st),
                    th[k].err);
            tern_abort(ctx, 1, "tern_bench_mt: an operation failed");
        }
    return (double)nthreads * (double)windows * WINDOW / ((double)ns / 1e9);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int counts[MAXT], ncounts = 0, rounds = 5;
    size_t size = 8;
    long windows = 2000;
    const char *json = NULL;
    char tlist[64] = "1,2";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-T") == 0 && i + 1 < argc)
            snprintf(tlist, sizeof(tlist), "%s", argv[++i]);
        else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
            size = strtoul(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            windows = strtol(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json = argv[++i];
        else {
            fprintf(stderr, "usage: TERN_NUM_WORKERS=N ternrun -n 2 --bind-to none %s [-T 1,2] "
                    "[-s SIZE] [-n WINDOWS] [-r ROUNDS] [--json FILE]\n", argv[0]);
            return 2;
        }
    }
    for (char *save = NULL, *tok = strtok_r(tlist, ",", &save); tok && ncounts < MAXT;
         tok = strtok_r(NULL, ",", &save))
        counts[ncounts++] = atoi(tok);
    if (size > sizeof(((mt_thread_t *)0)->buf) || windows < 1 || rounds < 1 || rounds > MAXR ||
        ncounts == 0) {
        fprintf(stderr, "tern_bench_mt: size <= 65536, windows >= 1, 1 <= rounds <= %d\n", MAXR);
        return 2;
    }
    tern_context_t *ctx;
    if (tern_init(&ctx) != TERN_OK) {
        fprintf(stderr, "tern_bench_mt: tern_init: %s\n", tern_last_error());
        return 1;
    }
    int rank = tern_rank(ctx), maxt = 0;
    for (int c = 0; c < ncounts; c++)
        maxt = counts[c] > maxt ? counts[c] : maxt;
    static mt_thread_t th[MAXT];
    if (tern_size(ctx) != 2 || maxt < 1 || maxt > MAXT) {
        fprintf(stderr, "tern_bench_mt: 2 ranks and 1..%d threads\n", MAXT);
        tern_abort(ctx, 2, "tern_bench_mt: bad job or options");
    }
    for (int k = 0; k < maxt; k++) {
        th[k].ctx = ctx;
        th[k].rank = rank;
        th[k].peer = 1 - rank;
        if (k == 0)
            th[k].w = tern_context_worker(ctx);
        else if (tern_worker_create(ctx, &th[k].w) != TERN_OK) {
            fprintf(stderr, "tern_bench_mt: %s\n", tern_last_error());
            tern_abort(ctx, 2, "tern_bench_mt: not enough workers");
        }
    }
    double v[MAXT][MAXR];
    run(ctx, th, maxt, size, windows / 10 + 1); /* warm-up: pools, connections */
    for (int r = 0; r < rounds; r++)
        for (int c = 0; c < ncounts; c++)
            v[c][r] = run(ctx, th, counts[c], size, windows);
    if (rank == 0) {
        printf("# tern_bench_mt: aggregate message rate, %zu B, window %d, %ld windows per "
               "thread, netmod %s\n# threads  median msg/s   rounds...\n",
               size, WINDOW, windows, tern_peer_netmod(ctx, 1));
        FILE *jf = json ? fopen(json, "w") : NULL;
        if (jf)
            fprintf(jf, "{\"tool\": \"tern_bench_mt\", \"size\": %zu, \"window\": %d, "
                    "\"netmod\": \"%s\", \"results\": [", size, WINDOW, tern_peer_netmod(ctx, 1));
        for (int c = 0; c < ncounts; c++) {
            double sorted[MAXR];
            memcpy(sorted, v[c], sizeof(double) * (size_t)rounds);
            qsort(sorted, (size_t)rounds, sizeof(double), cmp_double);
            double med = rounds % 2 ? sorted[rounds / 2]
                                    : (sorted[rounds / 2 - 1] + sorted[rounds / 2]) / 2;
            printf("  %-7d  %12.4g  ", counts[c], med);
            for (int r = 0; r < rounds; r++)
                printf(" %.4g", v[c][r]);
            printf("\n");
            if (jf)
                fprintf(jf, "%s{\"threads\": %d, \"median\": %.6g}", c ? ", " : "", counts[c], med);
        }
        if (jf) {
            fprintf(jf, "]}\n");
            fclose(jf);
        }
    }
    for (int k = 1; k < maxt; k++)
        tern_worker_destroy(th[k].w);
    return tern_finalize(ctx) == TERN_OK ? 0 : 1;
}
