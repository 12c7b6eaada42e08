/*
 * tern_rma — OSU-style one-sided benchmarks on the engine (<tern/rma.h>):
 * rank 0 is the origin, rank 1 the passive target (it only progresses).
 *
 *   ternrun -n 2 --bind-to core ./tern_rma [-t put_lat,get_lat,fadd_lat,acc_lat,put_bw|all]
 *                                          [--region alloc|create] [--amo device]
 *                                          [-m MIN:MAX] [-i ITERS] [-w WARMUP] [--json FILE]
 *
 *   put_lat   tern_put of SIZE bytes, then tern_flush, per iteration (osu_put_latency
 *             with MPI_Win_flush): the time of one put made remotely complete
 *   get_lat   tern_get of SIZE bytes, waited for (osu_get_latency)
 *   fadd_lat  a fetching 8-byte add, waited for (osu_fop_latency)
 *   acc_lat   tern_accumulate of SIZE / 8 doubles (SUM), then a flush (osu_acc_latency)
 *   put_bw    64 puts of SIZE bytes, then one flush (osu_put_bw's window); MB/s, 1e6 B
 *
 * --amo device makes the region with TERN_REGION_ATOMIC_DEVICE: its atomics
 * go through the device where the netmod has them (verbs: one RDMA
 * fetch-and-add each); acc_lat is skipped then (no accumulate on such a
 * region).
 *
 * --region alloc (default) exposes tern_region_alloc memory: on one host
 * the origin maps it and every operation is direct (no message); create
 * exposes the target's malloc'd memory through tern_region_create: on one
 * host a put or get is one CMA copy (TERN_CMA=off: not), else every
 * operation travels to the target over the VC's netmod: as packets its
 * progress applies, or posted by the netmod itself (verbs: an RDMA write
 * or read).  The counters say which path ran, per iteration: rma.direct,
 * rma.sent, rma.native, rma.cma ("copied"), and the netmod's calls to its
 * device where it counts them (verbs.post_send: ibv_post_send of every
 * kind).  Rank 0 prints a
 * table and, with --json, every figure.  A benchmark prints figures; it
 * asserts nothing about speed.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tern/tern.h>

#include "bench/bench_util_internal.h"

enum { T_PUT_LAT, T_GET_LAT, T_FADD_LAT, T_ACC_LAT, T_PUT_BW, T_COUNT };
static const char *const test_names[T_COUNT] = {"put_lat", "get_lat", "fadd_lat", "acc_lat",
                                                "put_bw"};
#define WINDOW 64
#define SPACE 77
#define TAG_KEY 1
#define TAG_DONE 2

typedef struct env {
    tern_context_t *ctx;
    tern_worker_t *w;
    int rank;
    tern_key_t *key; /* rank 0: the target's */
    uint64_t base;
    uint8_t *src, *dst;
} env_t;

static void die(env_t *e, const char *what, tern_status_t st)
{
    fprintf(stderr, "tern_rma rank %d: %s: %s (%s)\n", e->rank, what, tern_strerror(st),
            tern_last_error());
    tern_abort(e->ctx, 1, what);
    exit(1);
}

/* (r by address: the call that sets it is an argument beside it) */
static void finish(env_t *e, tern_status_t st, tern_request_t **r, const char *what)
{
    if (st == TERN_INPROGRESS)
        st = tern_wait(e->w, *r, NULL);
    if (st != TERN_OK)
        die(e, what, st);
}

static void flush(env_t *e)
{
    tern_request_t *r = NULL;
    finish(e, tern_flush(e->w, 1, NULL, &r), &r, "flush");
}

/* One iteration of test t with size bytes. */
static void step(env_t *e, int t, size_t size)
{
    tern_request_t *r = NULL;
    switch (t) {
    case T_PUT_LAT:
        finish(e, tern_put(e->w, e->src, size, e->key, e->base, NULL, &r), &r, "put");
        flush(e);
        break;
    case T_GET_LAT:
        finish(e, tern_get(e->w, e->dst, size, e->key, e->base, NULL, &r), &r, "get");
        break;
    case T_FADD_LAT: {
        uint64_t old;
        finish(e, tern_atomic(e->w, TERN_AMO_ADD, 8, 1, 0, &old, e->key, e->base, NULL, &r), &r,
               "fetch-and-add");
        break;
    }
    case T_ACC_LAT:
        finish(e, tern_accumulate(e->w, TERN_ACC_SUM, TERN_DT_DOUBLE, e->src,
                                  size < 8 ? 1 : size / 8, NULL, e->key, e->base, NULL, &r),
               &r, "accumulate");
        flush(e);
        break;
    default: {
        tern_request_t *q[WINDOW];
        int n = 0;
        for (int i = 0; i < WINDOW; i++) {
            tern_status_t st = tern_put(e->w, e->src, size, e->key, e->base, NULL, &q[n]);
            if (st == TERN_INPROGRESS)
                n++;
            else if (st != TERN_OK)
                die(e, "put", st);
        }
        tern_status_t st = n > 0 ? tern_waitall(e->w, q, (size_t)n, NULL) : TERN_OK;
        if (st != TERN_OK)
            die(e, "put window", st);
        flush(e);
        break;
    }
    }
}

static int64_t counter(tern_worker_t *w, const char *name)
{
    tern_counter_t c[128];
    int n = tern_worker_counters(w, c, 128);
    for (int i = 0; i < n && i < 128; i++)
        if (strcmp(c[i].name, name) == 0)
            return (int64_t)c[i].value;
    return -1;
}

static void usage(void)
{
    fprintf(stderr, "usage: ternrun -n 2 --bind-to core ./tern_rma [-t put_lat,get_lat,fadd_lat,"
                    "acc_lat,put_bw|all] [--region alloc|create] [--amo device] [-m MIN:MAX] "
                    "[-i ITERS] [-w WARMUP] [--json FILE]\n");
}

int main(int argc, char **argv)
{
    bool want[T_COUNT] = {0};
    size_t min = 8, max = 4u << 20;
    long iters = 0, warmup = -1;
    const char *json = NULL, *region = "alloc";
    unsigned amo_flag = 0; /* --amo device: TERN_REGION_ATOMIC_DEVICE */
    int any = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-t") == 0 && v != NULL) {
            char list[256];
            snprintf(list, sizeof(list), "%s", v);
            for (char *s = NULL, *tok = strtok_r(list, ",", &s); tok; tok = strtok_r(NULL, ",", &s)) {
                bool found = false;
                for (int k = 0; k < T_COUNT; k++)
                    if (strcmp(tok, "all") == 0 || strcmp(tok, test_names[k]) == 0)
                        want[k] = found = true;
                if (!found) {
                    fprintf(stderr, "tern_rma: unknown test %s\n", tok);
                    return 2;
                }
                any = 1;
            }
            i++;
        } else if (strcmp(a, "-m") == 0 && v != NULL) {
            if (bench_parse_range(v, &min, &max) != 0) {
                usage();
                return 2;
            }
            i++;
        } else if (strcmp(a, "-i") == 0 && v != NULL) {
            iters = atol(v);
            i++;
        } else if (strcmp(a, "-w") == 0 && v != NULL) {
            warmup = atol(v);
            i++;
        } else if (strcmp(a, "--json") == 0 && v != NULL) {
            json = v;
            i++;
        } else if (strcmp(a, "--amo") == 0 && v != NULL && strcmp(v, "device") == 0) {
            amo_flag = TERN_REGION_ATOMIC_DEVICE;
            i++;
        } else if (strcmp(a, "--region") == 0 && v != NULL &&
                   (strcmp(v, "alloc") == 0 || strcmp(v, "create") == 0)) {
            region = v;
            i++;
        } else {
            usage();
            return 2;
        }
    }
    if (!any)
        for (int k = 0; k < T_COUNT; k++)
            want[k] = 1;
    if (amo_flag != 0)
        want[T_ACC_LAT] = 0; /* refused on a device-atomics region */
    if (min == 0)
        min = 1;

    env_t e = {0};
    tern_status_t st = tern_init(&e.ctx);
    if (st != TERN_OK) {
        fprintf(stderr, "tern_rma: tern_init: %s (%s)\n", tern_strerror(st), tern_last_error());
        return 1;
    }
    e.rank = tern_rank(e.ctx);
    e.w = tern_context_worker(e.ctx);
    if (tern_size(e.ctx) != 2) {
        if (e.rank == 0)
            fprintf(stderr, "tern_rma: needs exactly 2 ranks\n");
        tern_abort(e.ctx, 2, "tern_rma needs exactly 2 ranks");
        return 2;
    }
    e.src = bench_alloc(max);
    e.dst = bench_alloc(max);
    memset(e.src, 1, max);

    /* the target's region, its key to the origin */
    tern_region_t *reg = NULL;
    void *mem = NULL;
    if (e.rank == 1) {
        unsigned fl = TERN_REGION_READ | TERN_REGION_WRITE | amo_flag;
        if (strcmp(region, "alloc") == 0) {
            st = tern_region_alloc(e.ctx, max, fl, &mem, &reg);
        } else {
            mem = bench_alloc(max);
            st = tern_region_create(e.ctx, mem, max, fl, &reg);
        }
        if (st != TERN_OK)
            die(&e, "region", st);
        memset(mem, 0, max);
        uint8_t key[TERN_KEY_MAX];
        size_t klen = sizeof(key);
        if ((st = tern_region_pack(reg, key, &klen)) != TERN_OK ||
            (st = tern_send(e.w, key, klen, 0, TAG_KEY, SPACE)) != TERN_OK)
            die(&e, "key to the origin", st);
        /* passive target: progress until the origin is done */
        int done = 0;
        tern_request_t *r = NULL;
        if ((st = tern_irecv(e.w, &done, sizeof(done), 0, TAG_DONE, SPACE, NULL, &r)) < 0)
            die(&e, "done receive", st);
        if (st == TERN_INPROGRESS && (st = tern_wait(e.w, r, NULL)) != TERN_OK)
            die(&e, "done", st);
    } else {
        uint8_t key[TERN_KEY_MAX];
        tern_recv_info_t info;
        if ((st = tern_recv(e.w, key, sizeof(key), 1, TAG_KEY, SPACE, &info)) != TERN_OK ||
            (st = tern_key_unpack(e.ctx, 1, key, info.length, &e.key)) != TERN_OK)
            die(&e, "the target's key", st);
        e.base = tern_key_base(e.key);
        FILE *jf = json != NULL ? fopen(json, "w") : NULL;
        if (jf != NULL) {
            fprintf(jf, "{\"tool\":\"tern_rma\",\"host\":");
            bench_json_str(jf, bench_hostname());
            fprintf(jf, ",\"date\":");
            bench_json_str(jf, bench_date());
            fprintf(jf, ",\"region\":\"%s\",\"netmod\":", region);
            bench_json_str(jf, tern_peer_netmod(e.ctx, 1));
            fprintf(jf, ",\"argv\":");
            bench_json_argv(jf, argc, argv);
            fprintf(jf, ",\"results\":[");
        }
        int nres = 0;
        printf("# tern_rma: region %s, netmod %s, key %s\n", region, tern_peer_netmod(e.ctx, 1),
               tern_key_local(e.key) != NULL ? "mapped (direct)" : "not mapped");
        for (int t = 0; t < T_COUNT; t++) {
            if (!want[t])
                continue;
            bool bw = t == T_PUT_BW;
            printf("# %s\n# %10s %14s %10s %10s %10s %10s %10s\n", test_names[t], "size",
                   bw ? "MB/s" : "latency(us)", "direct", "sent", "native", "posts", "copied");
            for (size_t size = min; size <= max; size *= 2) {
                if ((t == T_FADD_LAT && size != min) || (t == T_ACC_LAT && size < 8))
                    continue;
                long it = iters > 0 ? iters : size > 65536 ? (bw ? 20 : 200) : (bw ? 200 : 10000);
                long wu = warmup >= 0 ? warmup : it / 10;
                for (long i = 0; i < wu; i++)
                    step(&e, t, size);
                int64_t d0 = counter(e.w, "rma.direct"), s0 = counter(e.w, "rma.sent");
                int64_t n0 = counter(e.w, "rma.native"), p0 = counter(e.w, "verbs.post_send");
                int64_t c0 = counter(e.w, "rma.cma");
                uint64_t t0 = bench_now_ns();
                for (long i = 0; i < it; i++)
                    step(&e, t, size);
                double ns = (double)(bench_now_ns() - t0);
                double per_iter = ns / (double)it;
                double value = bw ? (double)size * WINDOW * (double)it / (ns / 1e9) / 1e6
                                  : per_iter / 1e3;
                int64_t dd = counter(e.w, "rma.direct") - d0, ds = counter(e.w, "rma.sent") - s0;
                int64_t dn = counter(e.w, "rma.native") - n0, dc = counter(e.w, "rma.cma") - c0;
                /* -1 per iteration: the netmod counts no device calls */
                double posts = p0 < 0 ? -1.0
                                      : (double)(counter(e.w, "verbs.post_send") - p0) / (double)it;
                size_t shown = t == T_FADD_LAT ? 8 : size;
                /* latency to the nanosecond: the direct path's are tens of them */
                printf(bw ? "  %10zu %14.2f %10.1f %10.1f %10.1f %10.1f %10.1f\n"
                          : "  %10zu %14.3f %10.1f %10.1f %10.1f %10.1f %10.1f\n",
                       shown, value, (double)dd / (double)it, (double)ds / (double)it,
                       (double)dn / (double)it, posts, (double)dc / (double)it);
                if (jf != NULL)
                    fprintf(jf, "%s{\"test\":\"%s\",\"size\":%zu,\"%s\":%.4f,\"iters\":%ld,"
                                "\"direct_per_iter\":%.2f,\"sent_per_iter\":%.2f,"
                                "\"native_per_iter\":%.2f,\"posts_per_iter\":%.2f,"
                                "\"copied_per_iter\":%.2f}",
                            nres++ ? "," : "", test_names[t], shown, bw ? "mbps" : "lat_us",
                            value, it, (double)dd / (double)it, (double)ds / (double)it,
                            (double)dn / (double)it, posts, (double)dc / (double)it);
            }
            fflush(stdout);
        }
        if (jf != NULL) {
            fprintf(jf, "]}\n");
            fclose(jf);
        }
        int done = 1;
        if ((st = tern_send(e.w, &done, sizeof(done), 1, TAG_DONE, SPACE)) != TERN_OK)
            die(&e, "done to the target", st);
        tern_key_destroy(e.key);
    }
    if (tern_barrier(e.ctx) != TERN_OK)
        die(&e, "barrier", TERN_ERR_PEER_FAILED);
    if (reg != NULL)
        tern_region_destroy(reg);
    if (mem != NULL && strcmp(region, "create") == 0)
        bench_free(mem);
    bench_free(e.src);
    bench_free(e.dst);
    return tern_finalize(e.ctx) == TERN_OK ? 0 : 1;
}
