/*
 * raw_pingpong — the physical limit of intra-node messaging on this machine.
 *
 * Two processes (fork), pinned to cores A and B, share one anonymous
 * MAP_SHARED page and bounce one 64-byte cache line between them with C11
 * atomics.  No library, no queue, no payload copy: whatever tern or UCX
 * spend above this figure is software.  Prints one-way latency = round trip
 * / 2, in microseconds.
 *
 * With --rings the two sides exchange the same rounds through two rings of
 * stamped 512-byte slots, one per direction, as shm's fastbox does: A
 * fills its next slot of ring A->B (8 bytes of payload) and store-releases
 * the slot's stamp i + 1 [R3], B load-acquires it [A3], answers in ring
 * B->A [R4], A load-acquires that [A4].  Each line has one writer and one
 * reader, so a message needs the writer to take the line back from the
 * polling reader first: the floor of tern's own small-message latency, to
 * read tern's figure against (raw: one line both ways).
 *
 * With --memcpy it instead measures single-thread memcpy bandwidth (GB/s,
 * 1e9 bytes) on core A, the ceiling of any copy-based large-message
 * protocol: for 1 MiB and 4 MiB, or for the powers of two of -m MIN:MAX
 * (compare.sh --sweep: a reference at every rendezvous size).
 *
 * Memory ordering.  The line holds one sequence word `seq`; A (the parent)
 * writes odd values, B (the child) even ones:
 *
 *   A: store(seq, 2i+1, release)  [R0]     B: wait load(seq, acquire) == 2i+1 [A0]
 *   A: wait load(seq, acquire) == 2i+2 [A1] B: store(seq, 2i+2, release)  [R1]
 *
 * R0 pairs with A0 and R1 with A1, so the payload bytes written before a
 * release store are visible after the matching acquire load.  The payload
 * (the rest of the same line) is written by whoever holds the turn, to make
 * the line really travel as data, not as a flag only.  Start-up uses a
 * second line, `ready` (R2 in B pairs with A2 in A).
 */
#include "config.h"

#include "bench/bench_util_internal.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define RAW_LINE 64

/* The shared page.  `seq` and its payload share the ping-pong line; `ready`
 * lives on its own line so start-up traffic does not touch the measured one. */
#define RAW_RING_SLOTS 64 /* shm's default fastbox ring */
#define RAW_SLOT 512
struct raw_shared {
    alignas(RAW_LINE) _Atomic uint64_t seq;
    uint8_t payload[RAW_LINE - sizeof(uint64_t)];
    alignas(RAW_LINE) _Atomic uint32_t ready;
    _Atomic int32_t child_error; /* errno of a failed pin in B, 0 if none */
    /* --rings: [0] A -> B, [1] B -> A; a slot's first word is its stamp */
    alignas(4096) uint8_t ring[2][RAW_RING_SLOTS][RAW_SLOT];
};

_Static_assert(sizeof(_Atomic uint64_t) == 8, "seq must be one 64-bit word");
_Static_assert(offsetof(struct raw_shared, ready) == RAW_LINE,
               "ping-pong line and start-up line must not share a cache line");

struct raw_opts {
    int core_a;
    int core_b;
    uint64_t iters;
    uint64_t warmup;
    const char *json;
    bool memcpy_mode;
    bool rings;
    bool quiet;
    size_t mc_min, mc_max; /* --memcpy -m: powers of two from mc_min to mc_max (0: none) */
};

static void raw_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [-a CORE] [-b CORE] [-n ITERS] [-w WARMUP] [--rings] [--json FILE] [-q]\n"
            "       %s --memcpy [-a CORE] [-m MIN:MAX] [--json FILE] [-q]\n"
            "  -a CORE      core of process A (parent, timing side), default 0\n"
            "  -b CORE      core of process B (child), default 1\n"
            "  -n ITERS     timed round trips, default 1000000\n"
            "  -w WARMUP    untimed round trips first, default 10000\n"
            "  --rings      a ring of stamped 512-byte slots per direction (shm's\n"
            "               fastbox pattern) instead of one line both ways\n"
            "  --json FILE  also write the result as JSON\n"
            "  --memcpy     measure memcpy bandwidth of 1 MiB and 4 MiB on core A\n"
            "  -m MIN:MAX   --memcpy: the powers of two from MIN to MAX instead (k/m\n"
            "               suffixes; 64 .. 1g)\n"
            "  -q           print only the figure\n",
            prog, prog);
}

/* Side A: rounds [first, first+count), returns elapsed ns. */
static uint64_t raw_side_a(struct raw_shared *sh, uint64_t first, uint64_t count)
{
    uint64_t t0 = bench_now_ns();

    for (uint64_t i = first; i < first + count; i++) {
        sh->payload[0] = (uint8_t)i;
        atomic_store_explicit(&sh->seq, 2 * i + 1, memory_order_release);           /* R0 */
        while (atomic_load_explicit(&sh->seq, memory_order_acquire) != 2 * i + 2) { /* A1 */
        }
    }
    return bench_now_ns() - t0;
}

/* --rings: the stamp of round i's slot in direction dir (0: A -> B). */
static inline _Atomic uint32_t *raw_stamp(struct raw_shared *sh, int dir, uint64_t i)
{
    return (_Atomic uint32_t *)(void *)sh->ring[dir][i % RAW_RING_SLOTS];
}

static uint64_t raw_rings_a(struct raw_shared *sh, uint64_t first, uint64_t count)
{
    uint64_t t0 = bench_now_ns();

    for (uint64_t i = first; i < first + count; i++) {
        memcpy(sh->ring[0][i % RAW_RING_SLOTS] + 16, &i, sizeof(i));
        atomic_store_explicit(raw_stamp(sh, 0, i), (uint32_t)(i + 1),
                              memory_order_release); /* R3 */
        while (atomic_load_explicit(raw_stamp(sh, 1, i), memory_order_acquire) !=
               (uint32_t)(i + 1)) { /* A4 */
        }
    }
    return bench_now_ns() - t0;
}

static void raw_rings_b(struct raw_shared *sh, uint64_t total)
{
    for (uint64_t i = 0; i < total; i++) {
        while (atomic_load_explicit(raw_stamp(sh, 0, i), memory_order_acquire) !=
               (uint32_t)(i + 1)) { /* A3 */
        }
        memcpy(sh->ring[1][i % RAW_RING_SLOTS] + 16, sh->ring[0][i % RAW_RING_SLOTS] + 16, 8);
        atomic_store_explicit(raw_stamp(sh, 1, i), (uint32_t)(i + 1),
                              memory_order_release); /* R4 */
    }
}

/* Side B: answers every round until A sends the stop value. */
static void raw_side_b(struct raw_shared *sh, uint64_t total)
{
    for (uint64_t i = 0; i < total; i++) {
        while (atomic_load_explicit(&sh->seq, memory_order_acquire) != 2 * i + 1) { /* A0 */
        }
        sh->payload[1] = sh->payload[0];
        atomic_store_explicit(&sh->seq, 2 * i + 2, memory_order_release); /* R1 */
    }
}

static int raw_pingpong(const struct raw_opts *o, int argc, char **argv)
{
    struct raw_shared *sh;
    pid_t pid;
    int status = 0;
    uint64_t ns;
    double lat_us;

    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        fprintf(stderr, "raw_pingpong: mmap: %s\n", strerror(errno));
        return 1;
    }
    atomic_init(&sh->seq, 0);
    atomic_init(&sh->ready, 0);
    atomic_init(&sh->child_error, 0);

    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "raw_pingpong: fork: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        if (bench_pin(o->core_b) != 0) {
            atomic_store_explicit(&sh->child_error, errno, memory_order_relaxed);
        }
        atomic_store_explicit(&sh->ready, 1, memory_order_release); /* R2 */
        if (atomic_load_explicit(&sh->child_error, memory_order_relaxed) != 0) {
            _exit(1);
        }
        if (o->rings) {
            raw_rings_b(sh, o->warmup + o->iters);
        } else {
            raw_side_b(sh, o->warmup + o->iters);
        }
        _exit(0);
    }

    if (bench_pin(o->core_a) != 0) {
        fprintf(stderr, "raw_pingpong: cannot pin to core %d: %s\n", o->core_a, strerror(errno));
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return 1;
    }
    while (atomic_load_explicit(&sh->ready, memory_order_acquire) == 0) { /* A2 */
    }
    if (atomic_load_explicit(&sh->child_error, memory_order_relaxed) != 0) {
        fprintf(stderr, "raw_pingpong: cannot pin to core %d: %s\n", o->core_b,
                strerror(atomic_load_explicit(&sh->child_error, memory_order_relaxed)));
        waitpid(pid, NULL, 0);
        return 1;
    }

    uint64_t (*side_a)(struct raw_shared *, uint64_t, uint64_t) =
        o->rings ? raw_rings_a : raw_side_a;
    side_a(sh, 0, o->warmup);
    ns = side_a(sh, o->warmup, o->iters);

    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "raw_pingpong: side B failed (status 0x%x)\n", status);
        return 1;
    }
    munmap(sh, sizeof(*sh));

    lat_us = (double)ns / 1e3 / (double)o->iters / 2.0;
    if (o->quiet) {
        printf("%.4f\n", lat_us);
    } else {
        printf("# raw %s ping-pong, cores %d <-> %d\n",
               o->rings ? "two-ring (a line per direction)" : "cache-line", o->core_a, o->core_b);
        printf("# %-10s %-12s %s\n", "Size", "Iterations", "Latency (us)");
        printf("%-12d %-12llu %.4f\n", RAW_LINE, (unsigned long long)o->iters, lat_us);
    }

    if (o->json != NULL) {
        FILE *f = fopen(o->json, "w");

        if (f == NULL) {
            fprintf(stderr, "raw_pingpong: %s: %s\n", o->json, strerror(errno));
            return 1;
        }
        fprintf(f, "{\n  \"benchmark\": \"raw_pingpong\",\n  \"unit\": \"us\",\n");
        fprintf(f, "  \"pattern\": \"%s\",\n", o->rings ? "rings" : "line");
        fprintf(f, "  \"core_a\": %d,\n  \"core_b\": %d,\n", o->core_a, o->core_b);
        fprintf(f, "  \"size\": %d,\n  \"iterations\": %llu,\n  \"warmup\": %llu,\n", RAW_LINE,
                (unsigned long long)o->iters, (unsigned long long)o->warmup);
        fprintf(f, "  \"latency_us\": %.4f,\n  \"hostname\": ", lat_us);
        bench_json_str(f, bench_hostname());
        fprintf(f, ",\n  \"date\": ");
        bench_json_str(f, bench_date());
        fprintf(f, ",\n  \"command_line\": ");
        bench_json_argv(f, argc, argv);
        fprintf(f, "\n}\n");
        if (fclose(f) != 0) {
            fprintf(stderr, "raw_pingpong: %s: %s\n", o->json, strerror(errno));
            return 1;
        }
    }
    return 0;
}

/* Copies len bytes repeatedly for at least ~0.2 s; returns GB/s. */
static double raw_memcpy_rate(uint8_t *dst, const uint8_t *src, size_t len)
{
    uint64_t reps = 0, t0, ns;

    for (int i = 0; i < 4; i++) { /* warm caches and TLB */
        memcpy(dst, src, len);
    }
    t0 = bench_now_ns();
    do {
        for (int i = 0; i < 16; i++) {
            memcpy(dst, src, len);
            /* Keep the compiler from merging or dropping the copies. */
            __asm__ volatile("" : : "r"(dst) : "memory");
        }
        reps += 16;
        ns = bench_now_ns() - t0;
    } while (ns < 200000000ull);
    return (double)len * (double)reps / (double)ns; /* bytes/ns = GB/s */
}

#define RAW_MC_MAX_SIZES 32

static int raw_memcpy(const struct raw_opts *o, int argc, char **argv)
{
    size_t sizes[RAW_MC_MAX_SIZES];
    double gbps[RAW_MC_MAX_SIZES];
    int n = 0;
    uint8_t *src, *dst;

    if (o->mc_max == 0) { /* no -m: the two sizes compare.sh's main rounds use */
        sizes[n++] = 1u << 20;
        sizes[n++] = 4u << 20;
    }
    for (size_t s = o->mc_min; o->mc_max != 0 && s <= o->mc_max && n < RAW_MC_MAX_SIZES; s *= 2) {
        sizes[n++] = s;
    }

    if (bench_pin(o->core_a) != 0) {
        fprintf(stderr, "raw_pingpong: cannot pin to core %d: %s\n", o->core_a, strerror(errno));
        return 1;
    }
    src = bench_alloc(sizes[n - 1]);
    dst = bench_alloc(sizes[n - 1]);
    if (src == NULL || dst == NULL) {
        fprintf(stderr, "raw_pingpong: out of memory\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        gbps[i] = raw_memcpy_rate(dst, src, sizes[i]);
    }
    bench_free(src);
    bench_free(dst);

    if (!o->quiet) {
        printf("# memcpy bandwidth, one thread on core %d (GB/s = 1e9 B/s)\n", o->core_a);
        printf("# %-10s %s\n", "Size", "Bandwidth (GB/s)");
    }
    for (int i = 0; i < n; i++) {
        printf("%-12zu %.2f\n", sizes[i], gbps[i]);
    }
    if (o->json != NULL) {
        FILE *f = fopen(o->json, "w");

        if (f == NULL) {
            fprintf(stderr, "raw_pingpong: %s: %s\n", o->json, strerror(errno));
            return 1;
        }
        fprintf(f, "{\n  \"benchmark\": \"memcpy\",\n  \"unit\": \"GB/s\",\n");
        fprintf(f, "  \"core\": %d,\n  \"results\": [", o->core_a);
        for (int i = 0; i < n; i++) {
            fprintf(f, "%s\n    {\"size\": %zu, \"value\": %.3f}", i ? "," : "", sizes[i], gbps[i]);
        }
        fprintf(f, "\n  ],\n  \"hostname\": ");
        bench_json_str(f, bench_hostname());
        fprintf(f, ",\n  \"date\": ");
        bench_json_str(f, bench_date());
        fprintf(f, ",\n  \"command_line\": ");
        bench_json_argv(f, argc, argv);
        fprintf(f, "\n}\n");
        if (fclose(f) != 0) {
            fprintf(stderr, "raw_pingpong: %s: %s\n", o->json, strerror(errno));
            return 1;
        }
    }
    return 0;
}

static int raw_parse_u64(const char *arg, uint64_t *out)
{
    char *end = NULL;
    unsigned long long v;

    errno = 0;
    v = strtoull(arg, &end, 10);
    if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-') {
        return -1;
    }
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", required_argument, NULL, 'j'},
        {"memcpy", no_argument, NULL, 'M'},
        {"rings", no_argument, NULL, 'R'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct raw_opts o = {
        .core_a = 0,
        .core_b = 1,
        .iters = 1000000,
        .warmup = 10000,
    };
    size_t lo, hi;
    uint64_t v;
    int c;

    while ((c = getopt_long(argc, argv, "a:b:n:w:m:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'a':
        case 'b':
            if (raw_parse_u64(optarg, &v) != 0 || v >= CPU_SETSIZE) {
                fprintf(stderr, "raw_pingpong: bad core '%s'\n", optarg);
                return 2;
            }
            *(c == 'a' ? &o.core_a : &o.core_b) = (int)v;
            break;
        case 'n':
        case 'w':
            if (raw_parse_u64(optarg, &v) != 0 || (c == 'n' && v == 0)) {
                fprintf(stderr, "raw_pingpong: bad count '%s'\n", optarg);
                return 2;
            }
            *(c == 'n' ? &o.iters : &o.warmup) = v;
            break;
        case 'm':
            if (bench_parse_range(optarg, &lo, &hi) != 0 || lo < 64 || hi > (1u << 30) ||
                (lo & (lo - 1)) != 0) {
                fprintf(stderr,
                        "raw_pingpong: bad size range '%s' (want MIN:MAX, MIN a power "
                        "of two, 64 .. 1g)\n",
                        optarg);
                return 2;
            }
            o.mc_min = lo;
            o.mc_max = hi;
            break;
        case 'j':
            o.json = optarg;
            break;
        case 'M':
            o.memcpy_mode = true;
            break;
        case 'R':
            o.rings = true;
            break;
        case 'q':
            o.quiet = true;
            break;
        case 'h':
            raw_usage(stdout, argv[0]);
            return 0;
        default:
            raw_usage(stderr, argv[0]);
            return 2;
        }
    }
    if (optind != argc) {
        raw_usage(stderr, argv[0]);
        return 2;
    }
    if (!o.memcpy_mode && o.core_a == o.core_b) {
        fprintf(stderr,
                "raw_pingpong: cores A and B must differ (both %d): a spinning "
                "pair on one core never hands over\n",
                o.core_a);
        return 2;
    }
    return o.memcpy_mode ? raw_memcpy(&o, argc, argv) : raw_pingpong(&o, argc, argv);
}
