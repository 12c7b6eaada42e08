/*
 * tern_connect: two tern jobs wired to each other.
 *
 *   tern_connect server M [die]
 *       The first job ("server" side, N ranks under ternrun).  Rank 0
 *       checks the refusals (an unknown job: TERN_ERR_NOT_FOUND; its own
 *       job: TERN_ERR_INVALID_PARAM), spawns M ranks of this program
 *       ("client SERVERJOB [die]") and sends the new job's name to the
 *       other ranks.  Every rank then connects to it and, with every
 *       client rank c: sends a word (tag 1) and 1 MiB (tag 2, a rendezvous),
 *       receives a word (tag 3) and 1 MiB back (tag 4), checking values
 *       and sources.  Prints "ok server R" and "server R cma.get_bytes=B"
 *       (what its same-host copy read: the clients' 1 MiB messages).
 *       die: client rank M-1 exits with status 5 right after connecting,
 *       before any VC to it carries a byte: the servers exchange with the
 *       others only; server rank 0 must see a receive from it fail with
 *       TERN_ERR_PEER_FAILED, told by the launcher's PMIx event ("ok dead
 *       client: ...") and still make a round trip with client 0 ("ok
 *       client 0 still answers"); nobody disconnects (a rank is dead).
 *       Otherwise both jobs disconnect.
 *   tern_connect client SERVERJOB [die]
 *       The spawned job: connects to SERVERJOB and answers.
 *   tern_connect ended PROGRAM [ARG]
 *       Rank 0 spawns 2 ranks of PROGRAM [ARG] (not a tern program: it
 *       never connects, and ends by itself) and sends the job's name to the
 *       other ranks; every rank then connects to it twice.  Both must fail
 *       with TERN_ERR_PEER_FAILED and a message naming the job and saying
 *       it ended, the first at once if the job has ended already, else as
 *       soon as it ends (PROGRAM "/bin/sleep 2": it ends while the connect
 *       waits), the second at once.  Prints "ok ended R: MESSAGE" for each.
 *
 * Every failed check prints "FAIL: ..." and makes the exit status 1.
 */
#define _GNU_SOURCE 1

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tern/tern.h>

#include "tests/launcher/tern_check.h"

#define BIG (1u << 20)

static int me;


static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 11));
}

static int check_fill(const unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char)(seed * 131u + i * 7u + (i >> 11)))
            return (int)i;
    return -1;
}

/* send a word and BIG bytes to peer (tags t, t+1) */
static void send_pair(tern_worker_t *w, int peer, int t, uint32_t word, unsigned seed,
                      unsigned char *big)
{
    fill(big, BIG, seed);
    tern_status_t st = tern_send(w, &word, sizeof(word), peer, t, 0);
    CHECK(st == TERN_OK, "send word to peer %d: %s", peer, tern_strerror(st));
    st = tern_send(w, big, BIG, peer, t + 1, 0);
    CHECK(st == TERN_OK, "send 1 MiB to peer %d: %s", peer, tern_strerror(st));
}

/* receive a word and BIG bytes from peer (tags t, t+1) and check them */
static void recv_pair(tern_worker_t *w, int peer, int t, uint32_t want, unsigned seed,
                      unsigned char *big)
{
    uint32_t word = 0;
    tern_recv_info_t info;
    tern_status_t st = tern_recv(w, &word, sizeof(word), peer, t, 0, &info);
    CHECK(st == TERN_OK && word == want && info.source == peer,
          "word from peer %d: %s, %u (want %u), source %d", peer, tern_strerror(st), word, want,
          info.source);
    memset(big, 0, BIG);
    st = tern_recv(w, big, BIG, peer, t + 1, 0, &info);
    int bad = st == TERN_OK ? check_fill(big, BIG, seed) : 0;
    CHECK(st == TERN_OK && bad < 0 && info.length == BIG, "1 MiB from peer %d: %s, byte %d",
          peer, tern_strerror(st), bad);
}

static void server(tern_context_t *ctx, int m, bool die, const char *self)
{
    tern_worker_t *w = tern_context_worker(ctx);
    int n = tern_size(ctx);
    char child[TERN_JOB_NAME_MAX] = "";
    unsigned char *big = malloc(BIG);
    tern_job_t *job = NULL;
    tern_status_t st;

    if (me == 0) {
        st = tern_connect(ctx, "tern-no-such-job", &job);
        CHECK(st == TERN_ERR_NOT_FOUND, "connect to an unknown job: %s", tern_strerror(st));
        st = tern_connect(ctx, tern_job_name(ctx), &job);
        CHECK(st == TERN_ERR_INVALID_PARAM, "connect to itself: %s", tern_strerror(st));
        char ldpath[4096] = "";
        const char *lp = getenv("LD_LIBRARY_PATH");
        if (lp != NULL)
            snprintf(ldpath, sizeof(ldpath), "LD_LIBRARY_PATH=%s", lp);
        const char *env[] = {lp ? ldpath : NULL, NULL};
        const char *argv[] = {self, "client", tern_job_name(ctx), die ? "die" : NULL, NULL};
        st = tern_spawn(ctx, argv, m, env, NULL, child);
        CHECK(st == TERN_OK, "tern_spawn: %s", tern_strerror(st));
        for (int r = 1; r < n; r++)
            tern_send(w, child, sizeof(child), r, 99, 0);
    } else {
        st = tern_recv(w, child, sizeof(child), 0, 99, 0, NULL);
        CHECK(st == TERN_OK, "job name from rank 0: %s", tern_strerror(st));
    }
    st = tern_connect(ctx, child, &job);
    CHECK(st == TERN_OK && tern_job_size(job) == m, "tern_connect %s: %s, %d ranks", child,
          tern_strerror(st), tern_job_size(job));
    if (st != TERN_OK) {
        free(big);
        return;
    }
    printf("server %d: client peers %d..%d via %s\n", me, tern_job_peer(job, 0),
           tern_job_peer(job, m - 1), tern_peer_netmod(ctx, tern_job_peer(job, 0)));
    for (int c = 0; c < (die ? m - 1 : m); c++) {
        int peer = tern_job_peer(job, c);
        send_pair(w, peer, 1, (uint32_t)(me * 1000 + c), (unsigned)(me * 10 + c), big);
        recv_pair(w, peer, 3, (uint32_t)(c * 1000 + me), (unsigned)(c * 10 + me + 5), big);
    }
    if (die) {
        if (me == 0) {
            int dead = tern_job_peer(job, m - 1);
            uint32_t x;
            st = tern_recv(w, &x, sizeof(x), dead, 9, 0, NULL);
            CHECK(st == TERN_ERR_PEER_FAILED, "receive from the dead client: %s",
                  tern_strerror(st));
            if (st == TERN_ERR_PEER_FAILED)
                printf("ok dead client: %s\n", tern_last_error());
            uint32_t ping = 4242, pong = 0;
            st = tern_send(w, &ping, sizeof(ping), tern_job_peer(job, 0), 10, 0);
            if (st == TERN_OK)
                st = tern_recv(w, &pong, sizeof(pong), tern_job_peer(job, 0), 11, 0, NULL);
            CHECK(st == TERN_OK && pong == ping + 1, "round trip with client 0 after the death: "
                  "%s, %u", tern_strerror(st), pong);
            if (st == TERN_OK && pong == ping + 1)
                printf("ok client 0 still answers\n");
        }
    } else {
        st = tern_disconnect(job);
        CHECK(st == TERN_OK, "tern_disconnect: %s", tern_strerror(st));
        int peer = tern_job_peer(job, 0);
        uint32_t x = 0;
        st = tern_send(w, &x, sizeof(x), tern_size(ctx) + 0, 1, 0);
        CHECK(peer == -1 && st == TERN_ERR_INVALID_RANK, "after disconnect: peer %d, send %s",
              peer, tern_strerror(st));
    }
    printf("ok server %d\n", me);
    tern_counter_t c[64];
    int nc = tern_worker_counters(w, c, 64);
    for (int i = 0; i < nc && i < 64; i++)
        if (strcmp(c[i].name, "cma.get_bytes") == 0)
            printf("server %d cma.get_bytes=%llu\n", me, (unsigned long long)c[i].value);
    free(big);
}

/* connect to a job that ends without ever connecting: refused, never a hang */
static void ended(tern_context_t *ctx, const char *prog, const char *arg)
{
    tern_worker_t *w = tern_context_worker(ctx);
    char child[TERN_JOB_NAME_MAX] = "";
    tern_status_t st;

    if (me == 0) {
        const char *argv[] = {prog, arg, NULL};
        st = tern_spawn(ctx, argv, 2, NULL, NULL, child);
        CHECK(st == TERN_OK, "tern_spawn of %s: %s", prog, tern_strerror(st));
        for (int r = 1; r < tern_size(ctx); r++)
            tern_send(w, child, sizeof(child), r, 98, 0);
    } else {
        st = tern_recv(w, child, sizeof(child), 0, 98, 0, NULL);
        CHECK(st == TERN_OK, "job name from rank 0: %s", tern_strerror(st));
    }
    if (st != TERN_OK)
        return;
    for (int k = 0; k < 2; k++) {
        tern_job_t *job = NULL;
        st = tern_connect(ctx, child, &job);
        const char *msg = tern_last_error();
        CHECK(st == TERN_ERR_PEER_FAILED && job == NULL,
              "connect %d to %s, whose ranks end without connecting: %s: %s", k + 1, child,
              tern_strerror(st), msg);
        CHECK(strstr(msg, child) != NULL && strstr(msg, "ended") != NULL,
              "connect %d: the message does not name job %s and its end: %s", k + 1, child, msg);
        if (st == TERN_ERR_PEER_FAILED)
            printf("ok ended %d: %s\n", me, msg);
    }
}

static void client(tern_context_t *ctx, const char *server_job, bool die)
{
    tern_worker_t *w = tern_context_worker(ctx);
    int m = tern_size(ctx);
    unsigned char *big = malloc(BIG);
    tern_job_t *job = NULL;
    tern_status_t st = tern_connect(ctx, server_job, &job);
    CHECK(st == TERN_OK, "tern_connect %s: %s", server_job, tern_strerror(st));
    if (st != TERN_OK) {
        free(big);
        return;
    }
    int n = tern_job_size(job);
    if (die && me == m - 1) {
        printf("client %d dies\n", me);
        fflush(stdout);
        _exit(5);
    }
    /* the first word from any server rank: the source says which */
    uint32_t word = 0;
    tern_recv_info_t info;
    st = tern_recv(w, &word, sizeof(word), TERN_ANY_SOURCE, 1, 0, &info);
    int p0 = info.source - tern_job_peer(job, 0);
    CHECK(st == TERN_OK && p0 >= 0 && p0 < n && word == (uint32_t)(p0 * 1000 + me),
          "first word: %s, source %d, %u", tern_strerror(st), info.source, word);
    for (int p = 0; p < n; p++) {
        int peer = tern_job_peer(job, p);
        if (p != p0) {
            st = tern_recv(w, &word, sizeof(word), peer, 1, 0, &info);
            CHECK(st == TERN_OK && word == (uint32_t)(p * 1000 + me), "word from server %d: %s",
                  p, tern_strerror(st));
        }
        memset(big, 0, BIG);
        st = tern_recv(w, big, BIG, peer, 2, 0, &info);
        int bad = st == TERN_OK ? check_fill(big, BIG, (unsigned)(p * 10 + me)) : 0;
        CHECK(st == TERN_OK && bad < 0, "1 MiB from server %d: %s, byte %d", p,
              tern_strerror(st), bad);
        send_pair(w, peer, 3, (uint32_t)(me * 1000 + p), (unsigned)(me * 10 + p + 5), big);
    }
    printf("client %d of %d: exchanged with %d server ranks\n", me, m, n);
    fflush(stdout);
    if (die) {
        if (me == 0) {
            uint32_t ping = 0;
            int s0 = tern_job_peer(job, 0);
            st = tern_recv(w, &ping, sizeof(ping), s0, 10, 0, NULL);
            ping++;
            if (st == TERN_OK)
                st = tern_send(w, &ping, sizeof(ping), s0, 11, 0);
            CHECK(st == TERN_OK, "answer after the death: %s", tern_strerror(st));
        }
        /* our job has a dead rank: ternrun ends it (exit without the fence) */
        fflush(stdout);
        _exit(failures ? 1 : 0);
    }
    st = tern_disconnect(job);
    CHECK(st == TERN_OK, "tern_disconnect: %s", tern_strerror(st));
    free(big);
}

int main(int argc, char **argv)
{
    tern_context_t *ctx;
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (len <= 0 || argc < 3) {
        fprintf(stderr, "usage: tern_connect server M [die] | client SERVERJOB [die] | "
                        "ended PROGRAM [ARG]\n");
        return 2;
    }
    self[len] = '\0';
    bool die = argc > 3 && strcmp(argv[3], "die") == 0;
    tern_status_t st = tern_init(&ctx);
    if (st != TERN_OK) {
        printf("FAIL: tern_init: %s (%s)\n", tern_strerror(st), tern_last_error());
        return 1;
    }
    me = tern_rank(ctx);
    if (strcmp(argv[1], "server") == 0)
        server(ctx, atoi(argv[2]), die, self);
    else if (strcmp(argv[1], "ended") == 0)
        ended(ctx, argv[2], argc > 3 ? argv[3] : NULL);
    else
        client(ctx, argv[2], die);
    fflush(stdout);
    st = tern_finalize(ctx);
    CHECK(st == TERN_OK, "finalize: %s", tern_strerror(st));
    return failures ? 1 : 0;
}
