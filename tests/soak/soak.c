/*
 * soak — every rank sends to every other rank at once, random sizes, tags
 * and spaces from a seed, and checks each message for loss, corruption and
 * reordering (the design is in soak.h).  Run under a launcher:
 *
 *   ternrun -n 2 tests/soak/soak -n 1000000 -s 8M --seed 42
 *
 * Options: -n/--messages N (per rank, default 10000), -s/--max-size BYTES
 * (K/M/G suffixes, default 8M), --seed S (default: rank 0 picks one),
 * --timeout SECS (data phase, default 600), --window W (operations per peer
 * and direction, default 32), --spaces K (default 8), --inflight BYTES (per
 * peer and direction, default max(4 x max-size, 16M)), --progress SECS (each
 * rank prints its counts that often; default 0, never).  Test hooks:
 * --inject-corrupt K (rank 0 damages its K-th completed receive before
 * checking it), --inject-drop K (the last rank skips its K-th message to
 * rank 0).
 *
 * Each rank prints one line; rank 0 then prints the summary
 *   soak: netmod=shm ranks=2 messages=M bytes=B lost=0 corrupt=0 reordered=0
 *         errors=0 time=Ts rate=R/s bw=XMB/s seed=S
 * and the exit status is non-zero when any count but messages and bytes is.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/soak/soak.h"

#define SEED_TAG 1
#define MIB (1024ull * 1024)

static soak_t soak; /* static: what stays pending in the engine stays reachable */
static char watchdog_msg[128];

/* A tern call that never returns is beyond the data phase's timeout: the
 * alarm ends the rank, saying so, rather than letting the job hang. */
static void watchdog(int sig)
{
    (void)sig;
    ssize_t rc = write(STDERR_FILENO, watchdog_msg, strlen(watchdog_msg));
    (void)rc;
    _exit(124);
}

static int parse_u64(const char *arg, bool suffix, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 0);
    if (errno || end == arg || arg[0] == '-')
        return -1;
    unsigned shift = 0;
    if (suffix && *end) {
        const char *units = "KMG", *u = strchr(units, *end & ~0x20);
        if (u == NULL)
            return -1;
        shift = 10 * (unsigned)(u - units + 1);
        end++;
        if (*end == 'i' && end[1] == 'B')
            end += 2;
    }
    if (*end || (shift && v > (UINT64_MAX >> shift)))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: soak [-n MESSAGES] [-s MAX_SIZE] [--seed S] [--timeout SECS]\n"
               "            [--window W] [--spaces K] [--inflight BYTES] [--progress SECS]\n"
               "            [--counters]\n");
}

/* v parsed from arg within [lo, hi]; a message naming the option if not. */
static int value(const char *opt, const char *arg, bool suffix, uint64_t lo, uint64_t hi,
                 uint64_t *v)
{
    if (parse_u64(arg, suffix, v) == 0 && *v >= lo && *v <= hi)
        return 0;
    fprintf(stderr, "soak: %s: bad value \"%s\" (%" PRIu64 "..%" PRIu64 ")\n", opt, arg, lo, hi);
    return -1;
}

static int parse(int argc, char **argv, soak_opts_t *o)
{
    static const struct option longs[] = {
        {"messages", required_argument, NULL, 'n'},
        {"max-size", required_argument, NULL, 's'},
        {"seed", required_argument, NULL, 'S'},
        {"timeout", required_argument, NULL, 'T'},
        {"window", required_argument, NULL, 'w'},
        {"spaces", required_argument, NULL, 'k'},
        {"inflight", required_argument, NULL, 'b'},
        {"progress", required_argument, NULL, 'P'},
        {"inject-corrupt", required_argument, NULL, 'C'},
        {"inject-drop", required_argument, NULL, 'D'},
        {"counters", no_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (soak_opts_t){
        .messages = 10000, .max_size = 8 * MIB, .timeout = 600, .window = 32, .spaces = 8};
    uint64_t v = 0, inflight = 0;
    int c, rc = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, "n:s:h", longs, NULL)) != -1) {
        switch (c) {
        case 'n':
            rc = value("-n", optarg, false, 0, UINT64_MAX >> 8, &o->messages);
            break;
        case 's':
            rc = value("-s", optarg, true, 0, 1ull << 40, &v);
            o->max_size = (size_t)v;
            break;
        case 'S':
            rc = value("--seed", optarg, false, 0, UINT64_MAX, &o->seed);
            o->seed_given = true;
            break;
        case 'T':
            rc = value("--timeout", optarg, false, 1, 1u << 30, &v);
            o->timeout = (double)v;
            break;
        case 'w':
            rc = value("--window", optarg, false, 1, 4096, &v);
            o->window = (unsigned)v;
            break;
        case 'k':
            rc = value("--spaces", optarg, false, 1, SOAK_SPACES_MAX, &v);
            o->spaces = (unsigned)v;
            break;
        case 'b':
            rc = value("--inflight", optarg, true, 1, 1ull << 40, &inflight);
            break;
        case 'P':
            rc = value("--progress", optarg, false, 0, 1u << 30, &v);
            o->progress = (double)v;
            break;
        case 'C':
            rc = value("--inject-corrupt", optarg, false, 1, UINT64_MAX, &o->inject_corrupt);
            break;
        case 'D':
            rc = value("--inject-drop", optarg, false, 1, UINT64_MAX, &o->inject_drop);
            break;
        case 'c':
            o->counters = true; /* "soak: rank R: NAME=VALUE" per netmod counter */
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            return -1;
        }
    }
    if (rc != 0 || optind < argc) {
        if (rc == 0)
            usage(stderr);
        return -1;
    }
    size_t dflt = 4 * o->max_size > 16 * MIB ? 4 * o->max_size : 16 * MIB;
    o->inflight = inflight ? (size_t)inflight : dflt;
    return 0;
}

/* Rank 0's seed to everyone (rank 0 picks one unless --seed gave it). */
static tern_status_t share_seed(soak_t *s)
{
    if (s->rank != 0)
        return tern_recv(s->w, &s->o.seed, sizeof(s->o.seed), 0, SEED_TAG, SOAK_CTL_SPACE, NULL);
    if (!s->o.seed_given) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        s->o.seed = ((uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 20 ^ (uint64_t)getpid()) &
                    0xffffffffffffull;
    }
    for (int p = 1; p < s->size; p++) {
        tern_status_t st =
            tern_send(s->w, &s->o.seed, sizeof(s->o.seed), p, SEED_TAG, SOAK_CTL_SPACE);
        if (st != TERN_OK)
            return st;
    }
    return TERN_OK;
}

/* The summary on rank 0 from every rank's published counts; 0 when clean. */
static int summary(soak_t *s)
{
    soak_counts_t t = {0};
    double secs = 0;
    int missing = 0;
    for (int r = 0; r < s->size; r++) {
        char key[64], *val = NULL;
        snprintf(key, sizeof(key), "tern-soak-%" PRIu64 "-%d", s->o.seed, r);
        soak_counts_t c;
        double e;
        if (tern_lookup(s->ctx, key, &val) != TERN_OK ||
            sscanf(val,
                   "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                   " %" SCNu64 " %lf",
                   &c.sent, &c.received, &c.bytes, &c.lost, &c.corrupt, &c.reordered, &c.errors,
                   &e) != 8) {
            fprintf(stderr, "soak: no counts from rank %d: %s\n", r, tern_last_error());
            missing++;
        } else {
            t.received += c.received, t.bytes += c.bytes, t.lost += c.lost;
            t.corrupt += c.corrupt, t.reordered += c.reordered, t.errors += c.errors;
            secs = e > secs ? e : secs;
        }
        free(val);
    }
    const char *nm = tern_peer_netmod(s->ctx, 1);
    printf("soak: netmod=%s ranks=%d messages=%" PRIu64 " bytes=%" PRIu64 " lost=%" PRIu64
           " corrupt=%" PRIu64 " reordered=%" PRIu64 " errors=%" PRIu64
           " time=%.2fs rate=%.0f/s bw=%.1fMB/s seed=%" PRIu64 "\n",
           nm ? nm : "none", s->size, t.received, t.bytes, t.lost, t.corrupt, t.reordered,
           t.errors + (uint64_t)missing, secs, secs > 0 ? (double)t.received / secs : 0,
           secs > 0 ? (double)t.bytes / secs / 1e6 : 0, s->o.seed);
    uint64_t want = s->o.messages * (uint64_t)s->size;
    int bad = t.lost || t.corrupt || t.reordered || t.errors || missing || t.received != want;
    if (bad)
        printf("soak: FAILED (%" PRIu64 " of %" PRIu64
               " messages intact); re-run with --seed %" PRIu64 "\n",
               t.received, want, s->o.seed);
    fflush(stdout);
    return bad;
}

int main(int argc, char **argv)
{
    soak_t *s = &soak;
    if (parse(argc, argv, &s->o) != 0)
        return 2;
    tern_status_t st = tern_init(&s->ctx);
    if (st != TERN_OK) {
        fprintf(stderr, "soak: tern_init: %s: %s\n", tern_strerror(st), tern_last_error());
        return 1;
    }
    s->w = tern_context_worker(s->ctx);
    s->rank = tern_rank(s->ctx);
    s->size = tern_size(s->ctx);
    unsigned limit = (unsigned)s->o.timeout + SOAK_DONE_GRACE + 120;
    snprintf(watchdog_msg, sizeof(watchdog_msg),
             "soak: rank %d: watchdog: still running after %u s, a tern call is stuck\n", s->rank,
             limit);
    signal(SIGALRM, watchdog);
    alarm(limit);
    if (s->size < 2) {
        fprintf(stderr, "soak: needs at least 2 ranks\n");
        tern_finalize(s->ctx);
        return 2;
    }
    if ((st = share_seed(s)) != TERN_OK || soak_pattern_init(s) != 0) {
        fprintf(stderr, "soak: rank %d: setup: %s\n", s->rank,
                st != TERN_OK ? tern_last_error() : "no memory for the pattern");
        tern_abort(s->ctx, 1, "soak: setup failed");
    }
    if (s->rank == 0)
        printf("soak: seed=%" PRIu64 " ranks=%d messages=%" PRIu64 "/rank max-size=%zu "
               "spaces=%u window=%u inflight=%zu timeout=%.0fs\n",
               s->o.seed, s->size, s->o.messages, s->o.max_size, s->o.spaces, s->o.window,
               s->o.inflight, s->o.timeout);
    fflush(stdout);
    int fail = tern_barrier(s->ctx) != TERN_OK;
    if (soak_run(s) != 0) {
        fprintf(stderr, "soak: rank %d: out of memory for the windows\n", s->rank);
        tern_abort(s->ctx, 1, "soak: setup failed");
    }
    const soak_counts_t *c = &s->c;
    const char *nm = tern_peer_netmod(s->ctx, (s->rank + 1) % s->size);
    printf("soak: rank %d: netmod=%s sent=%" PRIu64 " received=%" PRIu64 " bytes=%" PRIu64
           " lost=%" PRIu64 " corrupt=%" PRIu64 " reordered=%" PRIu64 " errors=%" PRIu64
           " time=%.2fs\n",
           s->rank, nm ? nm : "none", c->sent, c->received, c->bytes, c->lost, c->corrupt,
           c->reordered, c->errors, s->elapsed);
    if (s->o.counters) {
        tern_counter_t cnt[64];
        int n = tern_worker_counters(s->w, cnt, 64);
        for (int i = 0; i < n && i < 64; i++)
            printf("soak: rank %d: %s=%" PRIu64 "\n", s->rank, cnt[i].name, cnt[i].value);
    }
    fflush(stdout);
    fail |= c->lost || c->corrupt || c->reordered || c->errors;
    char key[64], val[256];
    snprintf(key, sizeof(key), "tern-soak-%" PRIu64 "-%d", s->o.seed, s->rank);
    snprintf(
        val, sizeof(val),
        "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %.6f",
        c->sent, c->received, c->bytes, c->lost, c->corrupt, c->reordered, c->errors, s->elapsed);
    if (tern_publish(s->ctx, key, val) != TERN_OK || tern_barrier(s->ctx) != TERN_OK) {
        fprintf(stderr, "soak: rank %d: publishing the counts: %s\n", s->rank, tern_last_error());
        fail = 1;
    } else if (s->rank == 0) {
        fail |= summary(s);
    }
    if (tern_barrier(s->ctx) != TERN_OK) /* nobody unpublishes before rank 0 looked */
        fail = 1;
    tern_unpublish(s->ctx, key);
    if ((st = tern_finalize(s->ctx)) != TERN_OK) {
        fprintf(stderr, "soak: rank %d: tern_finalize: %s\n", s->rank, tern_last_error());
        fail = 1;
    }
    soak_free(s);
    return fail ? 1 : 0;
}
