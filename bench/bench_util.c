/*
 * bench_util — helpers shared by the benchmark programs (see bench_util_internal.h).
 */
#include "config.h"

#include "bench/bench_util_internal.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

uint64_t bench_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static size_t bench_page_round(size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    if (len == 0) {
        len = 1;
    }
    return (len + page - 1) / page * page;
}

/*
 * Buffers of 64 KiB and more get 2 MiB aligned, 2 MiB rounded memory asked
 * to be transparent huge pages (madvise), as ucx_perftest's are (UCX keeps
 * its buffers and pools in huge-page mappings: 64 MiB of them at any
 * message size here): the copies, registrations and process_vm_* calls of
 * every tool then walk the same kind of pages, and comparisons at large
 * sizes measure the libraries, not the page size (tern over ibloop at
 * 4 MiB: 340 us on huge pages, 480-510 on small ones).  BENCH_THP=0 keeps
 * small pages.
 */
#define BENCH_HUGE (2u << 20)
#define BENCH_HUGE_FROM (64u << 10)

void *bench_alloc(size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t alloc = bench_page_round(len);
    const char *thp = getenv("BENCH_THP");
    bool huge = alloc >= BENCH_HUGE_FROM && !(thp != NULL && strcmp(thp, "0") == 0);
    void *buf = NULL;

    if (huge) {
        alloc = (alloc + BENCH_HUGE - 1) / BENCH_HUGE * BENCH_HUGE;
    }
    if (posix_memalign(&buf, huge ? BENCH_HUGE : page, alloc) != 0) {
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    if (huge) {
        (void)madvise(buf, alloc, MADV_HUGEPAGE); /* a hint: small pages if refused */
    }
#endif
    /* Touch every page so no page fault lands inside a timed loop.
     * BENCH_FILL=0 leaves them untouched, as ucx_perftest leaves its send
     * buffer: a copy out of a never-written page reads the kernel's zero
     * page, always in cache (for comparing with it, not a real workload). */
    const char *fill = getenv("BENCH_FILL");
    if (!(fill != NULL && strcmp(fill, "0") == 0)) {
        memset(buf, 0xa5, alloc);
    }
    return buf;
}

void bench_free(void *buf)
{
    free(buf);
}

int bench_pin(int cpu)
{
    cpu_set_t set;

    if (cpu < 0 || cpu >= CPU_SETSIZE) {
        errno = EINVAL;
        return -1;
    }
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof(set), &set);
}

void bench_affinity(char *buf, size_t len)
{
    cpu_set_t set;
    size_t used = 0;

    if (len == 0) {
        return;
    }
    buf[0] = '\0';
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        snprintf(buf, len, "unknown (%s)", strerror(errno));
        return;
    }
    for (int c = 0; c < CPU_SETSIZE; c++) {
        int n;

        if (!CPU_ISSET(c, &set)) {
            continue;
        }
        n = snprintf(buf + used, len - used, "%s%d", used ? "," : "", c);
        if (n < 0 || (size_t)n >= len - used) {
            break; /* truncated: buf still ends in '\0' */
        }
        used += (size_t)n;
    }
}

int bench_parse_size(const char *arg, size_t *out)
{
    char *end = NULL;
    unsigned long long v;

    if (arg == NULL || !isdigit((unsigned char)arg[0])) {
        return -1;
    }
    errno = 0;
    v = strtoull(arg, &end, 10);
    if (errno != 0) {
        return -1;
    }
    switch (*end) {
    case 'k':
    case 'K':
        v <<= 10;
        end++;
        break;
    case 'm':
    case 'M':
        v <<= 20;
        end++;
        break;
    case 'g':
    case 'G':
        v <<= 30;
        end++;
        break;
    default:
        break;
    }
    if (*end != '\0') {
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

int bench_parse_range(const char *arg, size_t *min, size_t *max)
{
    char buf[64];
    char *colon;
    size_t lo, hi;

    if (strlen(arg) >= sizeof(buf)) {
        return -1;
    }
    strcpy(buf, arg);
    colon = strchr(buf, ':');
    if (colon == NULL) {
        /* A single size means MIN = MAX. */
        if (bench_parse_size(buf, &lo) != 0) {
            return -1;
        }
        hi = lo;
    } else {
        *colon = '\0';
        if (bench_parse_size(buf, &lo) != 0 || bench_parse_size(colon + 1, &hi) != 0) {
            return -1;
        }
    }
    if (lo > hi) {
        return -1;
    }
    *min = lo;
    *max = hi;
    return 0;
}

const char *bench_hostname(void)
{
    static char name[256];

    if (name[0] == '\0' && gethostname(name, sizeof(name) - 1) != 0) {
        strcpy(name, "unknown");
    }
    return name;
}

const char *bench_date(void)
{
    static char buf[64];
    time_t now = time(NULL);
    struct tm tm;

    if (localtime_r(&now, &tm) == NULL ||
        strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S%z", &tm) == 0) {
        strcpy(buf, "unknown");
    }
    return buf;
}

static void bench_json_chars(FILE *f, const char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\') {
            fprintf(f, "\\%c", c);
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
        } else {
            fputc(c, f);
        }
    }
}

void bench_json_str(FILE *f, const char *s)
{
    if (s == NULL) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    bench_json_chars(f, s);
    fputc('"', f);
}

void bench_json_argv(FILE *f, int argc, char **argv)
{
    fputc('"', f);
    for (int i = 0; i < argc; i++) {
        if (i > 0) {
            fputc(' ', f);
        }
        bench_json_chars(f, argv[i]);
    }
    fputc('"', f);
}
