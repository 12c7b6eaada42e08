/*
 * iofwd test client (tests/iofwd/ scripts): writes COUNT records of SIZE bytes
 * through the node's daemon and checks the file byte for byte afterwards.
 *
 *   io_client [options] ARGS SIZE COUNT
 *     ARGS            tern_io_init's args (dir=... or shared=...,region=...)
 *     --tern          tern_init first (under a launcher: rank and size from
 *                     it, and iofwd uses that context); else rank 0 of 1
 *     --iwrite        all records in flight at once (tern_io_iwrite)
 *     --poll          polling session (blocking by default)
 *     --kill-daemon K after K records, start the next and SIGKILL the
 *                     daemon (pid from $XDG_RUNTIME_DIR/tern-iofwd/port):
 *                     the write must fail, naming the daemon
 *     --expect-fail S the first failing write must fail with S in its message
 * First, tern_io_init with a length past SSIZE_MAX (SIZE_MAX, SSIZE_MAX + 1)
 * must be refused (TERN_ERR_INVALID_PARAM naming the length) and open no
 * session.
 * Prints "ok rank R ..." or "FAIL: ...".
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tern/iofwd.h>
#include <tern/tern.h>

#include "tests/launcher/tern_check.h"

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* record k of rank r: 8-byte words of a hash, the tail bytes of the last */
static void fill(unsigned char *p, size_t len, int r, uint64_t k)
{
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v = mix(((uint64_t)r << 48) ^ (k << 32) ^ i);
        memcpy(p + i, &v, len - i < 8 ? len - i : 8);
    }
}

static int exact = 1; /* per-rank file: nothing after the records */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static pid_t daemon_pid(void)
{
    char path[512];
    const char *rt = getenv("XDG_RUNTIME_DIR");
    snprintf(path, sizeof(path), "%s/tern-iofwd/port", rt ? rt : "/nonexistent");
    FILE *f = fopen(path, "r");
    long pid = 0;
    if (f != NULL) {
        if (fscanf(f, "%ld", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    return (pid_t)pid;
}

/* the file's bytes of record k, as written */
static int verify(const char *args, int rank, size_t size, uint64_t count, unsigned char *tmp)
{
    char path[1100];
    unsigned long long region = 0;
    const char *d = strstr(args, "dir="), *s = strstr(args, "shared=");
    const char *rg = strstr(args, "region=");
    if (rg != NULL)
        region = strtoull(rg + 7, NULL, 0);
    if (d != NULL) {
        snprintf(path, sizeof(path), "%.*s/rank.%d", (int)strcspn(d + 4, ","), d + 4, rank);
    } else {
        snprintf(path, sizeof(path), "%.*s", (int)strcspn(s + 7, ","), s + 7);
    }
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "rank %d: open %s: %s", rank, path, strerror(errno));
    if (f == NULL)
        return 1;
    unsigned char *want = malloc(size ? size : 1);
    int bad = 0;
    if (fseeko(f, (off_t)(region * (unsigned long long)rank), SEEK_SET) != 0)
        bad = 1;
    for (uint64_t k = 0; k < count && !bad; k++) {
        fill(want, size, rank, k);
        size_t got = fread(tmp, 1, size, f);
        if (got != size || memcmp(tmp, want, size) != 0) {
            CHECK(0, "rank %d: record %llu of %s differs (%zu of %zu bytes read)", rank,
                  (unsigned long long)k, path, got, size);
            bad = 1;
        }
    }
    if (!bad && d != NULL && exact) { /* nothing after the last record */
        CHECK(fgetc(f) == EOF, "rank %d: %s is longer than its %llu records", rank, path,
              (unsigned long long)count);
    }
    free(want);
    fclose(f);
    return bad;
}

int main(int argc, char **argv)
{
    int use_tern = 0, iwrite = 0, blocking = 1, kill_after = -1;
    const char *expect = NULL;
    int a = 1;
    for (; a < argc && strncmp(argv[a], "--", 2) == 0; a++) {
        if (strcmp(argv[a], "--tern") == 0)
            use_tern = 1;
        else if (strcmp(argv[a], "--iwrite") == 0)
            iwrite = 1;
        else if (strcmp(argv[a], "--poll") == 0)
            blocking = 0;
        else if (strcmp(argv[a], "--kill-daemon") == 0 && a + 1 < argc)
            kill_after = atoi(argv[++a]);
        else if (strcmp(argv[a], "--expect-fail") == 0 && a + 1 < argc)
            expect = argv[++a];
        else
            break;
    }
    if (argc - a != 3) {
        fprintf(stderr, "usage: io_client [--tern] [--iwrite] [--poll] [--kill-daemon K] "
                        "[--expect-fail S] ARGS SIZE COUNT\n");
        return 2;
    }
    const char *args = argv[a];
    size_t size = strtoull(argv[a + 1], NULL, 0);
    uint64_t count = strtoull(argv[a + 2], NULL, 0);
    tern_context_t *ctx = NULL;
    int rank = 0, ranks = 1;
    if (use_tern) {
        tern_status_t st = tern_init(&ctx);
        CHECK(st == TERN_OK, "tern_init");
        if (st != TERN_OK)
            return 1;
        rank = tern_rank(ctx);
        ranks = tern_size(ctx);
    }
    size_t blen = iwrite ? size * count : size;
    unsigned char *buf = aligned_alloc(4096, ((blen ? blen : 1) + 4095) / 4096 * 4096);
    const size_t huge[2] = {SIZE_MAX, (size_t)SSIZE_MAX + 1};
    tern_status_t st;
    for (int k = 0; k < 2; k++) {
        char name[32];
        snprintf(name, sizeof(name), "%zu", huge[k]);
        st = tern_io_init(buf, huge[k], rank, ranks, args, blocking);
        CHECK(st == TERN_ERR_INVALID_PARAM && strstr(tern_last_error(), name) != NULL,
              "rank %d: tern_io_init of %s bytes: %s: %s", rank, name, tern_strerror(st),
              tern_last_error());
        if (st == TERN_OK) /* accepted after all: the real session cannot open */
            return 1;
    }
    st = tern_io_init(buf, blen ? blen : 1, rank, ranks, args, blocking);
    CHECK(st == TERN_OK, "rank %d: tern_io_init(%s)", rank, args);
    if (st != TERN_OK)
        return 1;
    pid_t dpid = daemon_pid();
    uint64_t ok = 0;
    tern_status_t fail = TERN_OK;
    char why[1024] = "";
    double t_kill = 0, t_fail = 0;
    if (iwrite) {
        tern_io_request_t **r = calloc(count ? count : 1, sizeof(*r));
        for (uint64_t k = 0; k < count; k++) {
            fill(buf + k * size, size, rank, k);
            st = tern_io_iwrite(k * size, size, &r[k]);
            CHECK(st == TERN_OK, "rank %d: iwrite %llu", rank, (unsigned long long)k);
        }
        for (uint64_t k = 0; k < count; k++)
            if (r[k] != NULL && (st = tern_io_wait(r[k])) == TERN_OK)
                ok++;
            else if (fail == TERN_OK) {
                fail = st;
                snprintf(why, sizeof(why), "%s", tern_last_error());
            }
        free(r);
    } else {
        for (uint64_t k = 0; k < count && fail == TERN_OK; k++) {
            fill(buf, size, rank, k);
            if ((int64_t)k == kill_after) {
                tern_io_request_t *r;
                st = tern_io_iwrite(0, size, &r);
                if (st == TERN_OK) {
                    t_kill = now();
                    kill(dpid, SIGKILL);
                    st = tern_io_wait(r);
                }
                t_fail = now();
            } else {
                st = tern_io_write(size);
            }
            if (st == TERN_OK) {
                ok++;
            } else {
                fail = st;
                snprintf(why, sizeof(why), "%s", tern_last_error());
            }
        }
    }
    if (expect != NULL && kill_after < 0 && fail != TERN_OK) {
        /* a refused write fails alone: the session goes on */
        tern_status_t more = tern_io_write(size / 4);
        CHECK(more == TERN_OK, "rank %d: a write of %zu bytes after the refused one", rank,
              size / 4);
        if (more == TERN_OK)
            printf("rank %d: then a write of %zu bytes: ok\n", rank, size / 4);
    }
    tern_status_t fst = tern_io_finalize();
    if (expect != NULL && kill_after < 0 && fail != TERN_OK)
        CHECK(fst == TERN_OK, "rank %d: tern_io_finalize after a refused write", rank);
    if (fail == TERN_OK && fst != TERN_OK) {
        fail = fst;
        snprintf(why, sizeof(why), "%s", tern_last_error());
    }
    if (kill_after >= 0) {
        exact = 0;
        CHECK(fail == TERN_ERR_PEER_FAILED && strstr(why, "daemon") != NULL,
              "rank %d: the write pending when the daemon was killed: %s: %s", rank,
              tern_strerror(fail), why);
        printf("rank %d: daemon killed: the pending write failed after %.0f ms: %s\n", rank,
               (t_fail - t_kill) * 1e3, why);
        CHECK(t_fail - t_kill < 5.0, "rank %d: the failure took %.1f s", rank, t_fail - t_kill);
    } else if (expect != NULL) {
        CHECK(fail != TERN_OK && strstr(why, expect) != NULL,
              "rank %d: expected a failure naming \"%s\", got %s: %s", rank, expect,
              tern_strerror(fail), why);
        printf("rank %d: failed as expected after %llu records: %s\n", rank,
               (unsigned long long)ok, why);
    } else {
        CHECK(fail == TERN_OK, "rank %d: %llu of %llu records written, then %s: %s", rank,
              (unsigned long long)ok, (unsigned long long)count, tern_strerror(fail), why);
    }
    /* what was acknowledged is there, byte for byte (a killed daemon's
     * held-but-unwritten writes are named lost: only the first `ok` minus
     * those are checked, by the script) */
    unsigned long long check = ok;
    const char *lost = strstr(why, "writes ");
    if (lost != NULL && strstr(why, "lost") != NULL)
        check = strtoull(lost + 7, NULL, 10);
    unsigned char *tmp = malloc(size ? size : 1);
    if (expect == NULL || kill_after >= 0)
        verify(args, rank, size, check, tmp);
    free(tmp);
    if (failures == 0)
        printf("ok rank %d: %llu records of %zu bytes (%llu verified), daemon pid %d\n", rank,
               (unsigned long long)ok, size, check, (int)dpid);
    fflush(stdout);
    if (ctx != NULL)
        tern_finalize(ctx);
    free(buf);
    return failures ? 1 : 0;
}
