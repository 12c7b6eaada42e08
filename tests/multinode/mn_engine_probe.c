/*
 * mn_engine_probe: tern ranks in a multi-host job (tests/multinode).  Ranks
 * are expected in blocks of PPN per host: rank r is on host r / PPN.
 *
 *   mn_engine_probe vcs PPN
 *       every VC to a rank of this host uses shm, every other one the
 *       inter-node netmod (TERN_TEST_NETMOD "shm,NETMOD"; tcp unset); then
 *       each rank sends an eager (64 B) and a rendezvous (1 MiB) message to
 *       every other rank and checks what it receives from each
 *   mn_engine_probe hang SECS PPN
 *       every pair of ranks exchanges a message (so every VC is connected),
 *       a barrier, "ready RANK PID"; then the ranks of host 1 post a receive
 *       from every rank of the other hosts and a 64 MiB send to the first of
 *       them, say "posted RANK", and wait (at most SECS s) for them to fail with
 *       TERN_ERR_PEER_FAILED once those ranks are killed, report, and wait
 *       (bounded) for the other ranks of host 1 to have reported too before
 *       they leave; the other ranks sleep (bounded).  Host 1's ranks let a
 *       SIGTERM wait until they have reported: mpirun tears the job down
 *       (SIGTERM, then SIGKILL odls_base_sigkill_timeout s later) as soon as
 *       it sees the first death, and a loaded machine may not have let them
 *       find out by then (tests/multinode/host_killed.sh raises that timeout)
 *
 * Failed checks print "FAIL: rank R: ..." and make the exit status 1.
 */
#define _GNU_SOURCE 1

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tern/tern.h>

static int me = -1, failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    va_list ap;
    char line[512];

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    printf("FAIL: rank %d: %s\n", me, line);
    fflush(stdout);
    failures++;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned char pattern(int from, int to, size_t i)
{
    return (unsigned char)(from * 31 + to * 7 + (int)(i % 251));
}

/* wait for req, progressing, at most secs seconds */
static tern_status_t wait_bounded(tern_worker_t *w, tern_request_t *req, double secs)
{
    double deadline = now_s() + secs;
    tern_status_t st;

    while ((st = tern_test(w, req, NULL)) == TERN_INPROGRESS && now_s() < deadline) {
        if (tern_progress(w) == 0) {
            tern_worker_wait(w, 10);
        }
    }
    return st;
}

/* every rank sends LEN bytes to every other one and checks what it gets */
static void exchange(tern_worker_t *w, int n, size_t len, int tag)
{
    unsigned char **in = calloc((size_t)n, sizeof(*in)), **out = calloc((size_t)n, sizeof(*out));
    tern_request_t **rr = calloc((size_t)n, sizeof(*rr)), **sr = calloc((size_t)n, sizeof(*sr));

    if (in == NULL || out == NULL || rr == NULL || sr == NULL) {
        fail("out of memory");
        return;
    }
    for (int p = 0; p < n; p++) {
        tern_status_t st;

        if (p == me) {
            continue;
        }
        in[p] = malloc(len);
        out[p] = malloc(len);
        for (size_t i = 0; out[p] != NULL && i < len; i++) {
            out[p][i] = pattern(me, p, i);
        }
        st = tern_irecv(w, in[p], len, p, tag, 0, NULL, &rr[p]);
        if (st != TERN_INPROGRESS) {
            rr[p] = NULL;
            if (st != TERN_OK) {
                fail("irecv from %d: %s: %s", p, tern_strerror(st), tern_last_error());
            }
        }
        st = tern_isend(w, out[p], len, p, tag, 0, &sr[p]);
        if (st != TERN_INPROGRESS) {
            sr[p] = NULL;
            if (st != TERN_OK) {
                fail("isend to %d: %s: %s", p, tern_strerror(st), tern_last_error());
            }
        }
    }
    for (int p = 0; p < n; p++) {
        tern_status_t st;

        if (p == me) {
            continue;
        }
        if (sr[p] != NULL && (st = wait_bounded(w, sr[p], 30)) != TERN_OK) {
            fail("send of %zu B to %d: %s: %s", len, p, tern_strerror(st), tern_last_error());
        }
        if (rr[p] != NULL && (st = wait_bounded(w, rr[p], 30)) != TERN_OK) {
            fail("receive of %zu B from %d: %s: %s", len, p, tern_strerror(st),
                 tern_last_error());
        }
        for (size_t i = 0; in[p] != NULL && i < len; i++) {
            if (in[p][i] != pattern(p, me, i)) {
                fail("byte %zu of %zu from rank %d is wrong", i, len, p);
                break;
            }
        }
        free(in[p]);
        free(out[p]);
    }
    free(in);
    free(out);
    free(rr);
    free(sr);
}

static int cmd_vcs(tern_context_t *ctx, int ppn)
{
    tern_worker_t *w = tern_context_worker(ctx);
    int n = tern_size(ctx);
    char shm[256] = "", far[256] = "", inter[32] = "tcp";
    const char *tn = getenv("TERN_TEST_NETMOD");
    const char *comma = tn ? strchr(tn, ',') : NULL;

    if (comma != NULL && comma[1] != '\0') {
        snprintf(inter, sizeof(inter), "%s", comma + 1);
    }
    for (int r = 0; r < n; r++) {
        const char *nm = tern_peer_netmod(ctx, r);
        const char *want = r == me ? "self" : r / ppn == me / ppn ? "shm" : inter;
        char *list = strcmp(want, "shm") == 0 ? shm : far;

        if (nm == NULL || strcmp(nm, want) != 0) {
            fail("VC to rank %d (host %d, mine %d) uses %s, expected %s", r, r / ppn, me / ppn,
                 nm ? nm : "none", want);
        }
        if (r != me) {
            snprintf(list + strlen(list), 256 - strlen(list), "%s%d", *list ? "," : "", r);
        }
    }
    exchange(w, n, 64, 11);
    exchange(w, n, 1u << 20, 12);
    if (tern_barrier(ctx) != TERN_OK) {
        fail("barrier: %s", tern_last_error());
    }
    if (failures == 0) {
        printf("ok vcs rank %d host %d: shm to %s, %s to %s; 64 B and 1 MiB with all\n", me,
               me / ppn, shm, inter, far);
    }
    return failures ? 1 : 0;
}

/* a SIGTERM that came before this rank reported: it leaves right after */
static volatile sig_atomic_t terminated;
static void on_term(int sig)
{
    (void)sig;
    terminated = 1;
}

static int cmd_hang(tern_context_t *ctx, int secs, int ppn)
{
    tern_worker_t *w = tern_context_worker(ctx);
    int n = tern_size(ctx), victims = n - ppn, seen = 0;
    const size_t big = 64u << 20;

    exchange(w, n, 8, 21); /* connect every VC */
    if (tern_barrier(ctx) != TERN_OK) {
        fail("barrier: %s", tern_last_error());
        return 1;
    }
    printf("ready %d %ld\n", me, (long)getpid());
    fflush(stdout);
    if (me >= ppn) {
        for (int i = 0; i < secs * 10; i++) {
            usleep(100 * 1000);
        }
        printf("FAIL: rank %d (host %d) was not killed within %d s\n", me, me / ppn, secs);
        return 1;
    }

    /* host 1: depend on every rank of the other hosts; a SIGTERM from here
     * on waits for the report (bounded: secs, then the wait below) */
    struct sigaction sa = {.sa_handler = on_term};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    tern_request_t **rr = calloc((size_t)n, sizeof(*rr)), *sreq = NULL;
    int *vals = calloc((size_t)n, sizeof(*vals));
    unsigned char *b = malloc(big);
    double t0 = now_s();

    if (rr == NULL || vals == NULL || b == NULL) {
        fail("out of memory");
        return 1;
    }
    memset(b, 1, big);
    for (int p = ppn; p < n; p++) {
        if (tern_irecv(w, &vals[p], sizeof(vals[p]), p, 22, 0, NULL, &rr[p]) != TERN_INPROGRESS) {
            fail("irecv from %d completed before its sender sent anything", p);
            rr[p] = NULL;
        }
    }
    if (tern_isend(w, b, big, ppn, 23, 0, &sreq) != TERN_INPROGRESS) {
        fail("a 64 MiB send to rank %d completed with nobody receiving", ppn);
        sreq = NULL;
    }
    /* the test kills the other hosts' ranks once every rank of host 1 has
     * said this: the requests are then waiting on them, not yet to come */
    printf("posted %d\n", me);
    fflush(stdout);
    for (int p = ppn; p <= n; p++) {
        tern_request_t *req = p < n ? rr[p] : sreq;
        const char *what = p < n ? "receive from" : "64 MiB send to";
        int peer = p < n ? p : ppn;
        tern_status_t st;

        if (req == NULL) {
            continue;
        }
        st = wait_bounded(w, req, secs - (now_s() - t0));
        if (st == TERN_ERR_PEER_FAILED) {
            printf("rank %d: %s rank %d: TERN_ERR_PEER_FAILED after %.0f ms (%s)\n", me, what,
                   peer, (now_s() - t0) * 1e3, tern_last_error());
            seen++;
        } else {
            fail("%s rank %d ended with %s, not TERN_ERR_PEER_FAILED", what, peer,
                 st == TERN_INPROGRESS ? "nothing (timed out)" : tern_strerror(st));
        }
        fflush(stdout);
    }
    printf("rank %d: %d of %d requests on host-2 ranks failed with TERN_ERR_PEER_FAILED\n", me,
           seen, victims + 1);
    if (terminated)
        printf("rank %d: (mpirun's SIGTERM came before the report)\n", me);
    fflush(stdout);
    /* The first rank to leave makes mpirun kill the others: the ranks of
     * host 1 (shm between them) wait for each other, bounded, so each one
     * that saw the failures gets to say so even when they saw them at
     * different times (verbs: each probes on its own keepalive clock). */
    for (int q = 0; q < ppn; q++) {
        if (q != me && tern_isend(w, &me, sizeof(me), q, 24, 0, &sreq) == TERN_INPROGRESS) {
            wait_bounded(w, sreq, 10);
        }
    }
    for (int q = 0; q < ppn; q++) {
        int v;
        tern_request_t *r;
        if (q != me && tern_irecv(w, &v, sizeof(v), q, 24, 0, NULL, &r) == TERN_INPROGRESS) {
            wait_bounded(w, r, 10);
        }
    }
    /* no tern_finalize: it is collective, and half of the job is gone */
    _exit(failures ? 1 : 0);
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    tern_context_t *ctx;
    tern_status_t st;
    int rc;

    setvbuf(stdout, NULL, _IOLBF, 0);
    st = tern_init(&ctx);
    if (st != TERN_OK) {
        fprintf(stderr, "FAIL: tern_init: %s: %s\n", tern_strerror(st), tern_last_error());
        return 1;
    }
    me = tern_rank(ctx);
    if (strcmp(cmd, "vcs") == 0 && argc > 2 && atoi(argv[2]) > 0) {
        rc = cmd_vcs(ctx, atoi(argv[2]));
    } else if (strcmp(cmd, "hang") == 0 && argc > 3 && atoi(argv[3]) > 0) {
        rc = cmd_hang(ctx, atoi(argv[2]), atoi(argv[3]));
    } else {
        fprintf(stderr, "usage: mn_engine_probe vcs PPN | hang SECS PPN\n");
        rc = 2;
    }
    st = tern_finalize(ctx);
    if (st != TERN_OK) {
        fprintf(stderr, "FAIL: rank %d: tern_finalize: %s\n", me, tern_last_error());
        rc = 1;
    }
    return rc;
}
