/*
 * tern_port: processes of different jobs connected one to one, without a
 * collective (tern_port_open / _connect / _accept).
 *
 *   tern_port server N FILE   open a port, write its name to FILE, take N
 *                             clients as they come; from each: a word
 *                             (tag 1), answered with the key of a region
 *                             (tag 4: one-sided across jobs), and 1 MiB
 *                             (tag 2, a rendezvous) checked, answered with
 *                             the word + 1 (tag 3); then disconnect them and
 *                             check the region's counter (one add from
 *                             every client).  Prints "server took N via
 *                             NETMOD" (the netmod of the last client's VC),
 *                             then its same-host copy counters ("server
 *                             cma.get_bytes=B ... cma.refused=R ...").
 *                             Meant to run as a singleton (no launcher), as
 *                             the iofwd daemon will.
 *   tern_port client FILE     (every rank of a job) wait for FILE, connect
 *                             to the port, put into the server's region,
 *                             add to its counter and flush, send and check
 *                             the answer; put again, disconnect, and flush
 *                             every peer (the gone one is skipped).
 *                             Prints "ok client R via NETMOD".
 *
 * Every failed check prints "FAIL: ..." and makes the exit status 1.
 */
#define _GNU_SOURCE 1

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tern/tern.h>

#include "tests/launcher/tern_check.h"

#define BIG (1u << 20)



static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fill(unsigned char *b, uint32_t seed)
{
    for (size_t i = 0; i < BIG; i++)
        b[i] = (unsigned char)(seed + i * 13u);
}

static void server(tern_context_t *ctx, int n, const char *file)
{
    tern_worker_t *w = tern_context_worker(ctx);
    char port[TERN_PORT_NAME_MAX], tmp[4096];
    tern_job_t *peers[64];
    unsigned char *big = malloc(BIG), *want = malloc(BIG);
    tern_status_t st = tern_port_open(ctx, port);
    CHECK(st == TERN_OK, "tern_port_open: %s: %s", tern_strerror(st), tern_last_error());
    if (st != TERN_OK)
        return;
    snprintf(tmp, sizeof(tmp), "%s.tmp", file);
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%s\n", port) < 0 || fclose(f) != 0 || rename(tmp, file) != 0) {
        printf("FAIL: cannot write %s\n", file);
        failures++;
        return;
    }
    /* a region for the clients' one-sided operations: [0, 8) their last
     * put, [8, 16) a counter each adds 1 to */
    uint64_t *cell = calloc(4, sizeof(uint64_t));
    tern_region_t *reg = NULL;
    uint8_t key[TERN_KEY_MAX];
    size_t klen = sizeof(key);
    st = tern_region_create(ctx, cell, 4 * sizeof(uint64_t), TERN_REGION_READ | TERN_REGION_WRITE,
                            &reg);
    if (st == TERN_OK)
        st = tern_region_pack(reg, key, &klen);
    CHECK(st == TERN_OK, "region: %s", tern_strerror(st));
    int took = 0;
    const char *via = "none";
    double end = now_s() + 60;
    while (took < n && now_s() < end) {
        tern_job_t *p;
        st = tern_port_accept(ctx, &p);
        if (st == TERN_ERR_AGAIN)
            continue;
        CHECK(st == TERN_OK && tern_job_size(p) == 1, "tern_port_accept: %s", tern_strerror(st));
        if (st != TERN_OK)
            break;
        peers[took++] = p;
        int peer = tern_job_peer(p, 0);
        via = tern_peer_netmod(ctx, peer) ? tern_peer_netmod(ctx, peer) : "none";
        uint32_t word = 0;
        tern_recv_info_t info;
        st = tern_recv(w, &word, sizeof(word), peer, 1, 0, &info);
        CHECK(st == TERN_OK && info.source == peer, "word from peer %d: %s", peer,
              tern_strerror(st));
        /* (after the word: its first send makes the client's connection) */
        st = tern_send(w, key, klen, peer, 4, 0);
        CHECK(st == TERN_OK, "key to peer %d: %s", peer, tern_strerror(st));
        st = tern_recv(w, big, BIG, peer, 2, 0, &info);
        fill(want, word);
        CHECK(st == TERN_OK && memcmp(big, want, BIG) == 0, "1 MiB from peer %d: %s", peer,
              tern_strerror(st));
        word++;
        st = tern_send(w, &word, sizeof(word), peer, 3, 0);
        CHECK(st == TERN_OK, "answer to peer %d: %s", peer, tern_strerror(st));
    }
    CHECK(took == n, "took %d clients of %d within 60 s", took, n);
    for (int i = 0; i < took; i++) {
        st = tern_disconnect(peers[i]);
        CHECK(st == TERN_OK, "disconnect: %s", tern_strerror(st));
    }
    /* every client flushed its add before its word came */
    CHECK(cell[1] == (uint64_t)took, "the clients' counter: %llu, expected %d",
          (unsigned long long)cell[1], took);
    if (reg != NULL)
        tern_region_destroy(reg);
    free(cell);
    printf("server took %d via %s\n", took, via);
    tern_counter_t c[64];
    int nc = tern_worker_counters(w, c, 64);
    printf("server");
    for (int i = 0; i < nc && i < 64; i++)
        if (strncmp(c[i].name, "cma.", 4) == 0)
            printf(" %s=%llu", c[i].name, (unsigned long long)c[i].value);
    printf("\n");
    free(big);
    free(want);
}

static void client(tern_context_t *ctx, const char *file)
{
    tern_worker_t *w = tern_context_worker(ctx);
    char port[TERN_PORT_NAME_MAX] = "";
    for (int i = 0; i < 600 && port[0] == '\0'; i++) {
        FILE *f = fopen(file, "r");
        if (f != NULL) {
            if (fgets(port, sizeof(port), f) == NULL)
                port[0] = '\0';
            fclose(f);
        }
        if (port[0] == '\0')
            usleep(100 * 1000);
    }
    port[strcspn(port, "\n")] = '\0';
    CHECK(port[0] != '\0', "no port name in %s within 60 s", file);
    tern_job_t *srv;
    tern_status_t st = tern_port_connect(ctx, port, &srv);
    CHECK(st == TERN_OK, "tern_port_connect: %s", tern_strerror(st));
    if (st != TERN_OK)
        return;
    int peer = tern_job_peer(srv, 0), me = tern_rank(ctx);
    const char *via = tern_peer_netmod(ctx, peer);
    uint32_t word = (uint32_t)(me * 10 + 7), answer = 0;
    /* one-sided into the server's region, made remotely complete */
    uint8_t key[TERN_KEY_MAX];
    tern_recv_info_t kinfo;
    tern_key_t *k = NULL;
    tern_request_t *r = NULL;
    uint64_t v = word, old = 0;
    st = tern_send(w, &word, sizeof(word), peer, 1, 0);
    if (st == TERN_OK)
        st = tern_recv(w, key, sizeof(key), peer, 4, 0, &kinfo);
    if (st == TERN_OK)
        st = tern_key_unpack(ctx, peer, key, kinfo.length, &k);
    if (st == TERN_OK && (st = tern_put(w, &v, 8, k, tern_key_base(k), NULL, &r)) == TERN_INPROGRESS)
        st = tern_wait(w, r, NULL);
    if (st == TERN_OK &&
        (st = tern_atomic(w, TERN_AMO_ADD, 8, 1, 0, &old, k, tern_key_base(k) + 8, NULL, &r)) ==
            TERN_INPROGRESS)
        st = tern_wait(w, r, NULL);
    if (st == TERN_OK && (st = tern_flush(w, peer, NULL, &r)) == TERN_INPROGRESS)
        st = tern_wait(w, r, NULL);
    CHECK(st == TERN_OK, "one-sided into the server: %s (%s)", tern_strerror(st),
          tern_last_error());
    unsigned char *big = malloc(BIG);
    fill(big, word);
    if (st == TERN_OK)
        st = tern_send(w, big, BIG, peer, 2, 0);
    if (st == TERN_OK)
        st = tern_recv(w, &answer, sizeof(answer), peer, 3, 0, NULL);
    CHECK(st == TERN_OK && answer == word + 1, "exchange with the server: %s, %u", tern_strerror(st),
          answer);
    /* a put left unflushed when the server goes: the flush after the
     * disconnect skips it.  The server may have destroyed its region by
     * now: a put the same-host copy makes (a port peer on this host) is
     * then refused within the call, as the direct path refuses */
    if (k != NULL && (st = tern_put(w, &v, 8, k, tern_key_base(k), NULL, &r)) == TERN_INPROGRESS)
        st = tern_wait(w, r, NULL);
    CHECK(st == TERN_OK ||
              (st == TERN_ERR_REMOTE_ACCESS && strstr(tern_last_error(), "was destroyed") != NULL),
          "second put: %s (%s)", tern_strerror(st), tern_last_error());
    st = tern_disconnect(srv);
    CHECK(st == TERN_OK, "disconnect: %s", tern_strerror(st));
    if ((st = tern_flush(w, TERN_ANY_SOURCE, NULL, &r)) == TERN_INPROGRESS)
        st = tern_wait(w, r, NULL);
    CHECK(st == TERN_OK, "flush after the disconnect: %s", tern_strerror(st));
    tern_key_destroy(k);
    if (failures == 0)
        printf("ok client %d via %s\n", me, via ? via : "none");
    free(big);
}

int main(int argc, char **argv)
{
    tern_context_t *ctx;
    tern_status_t st = tern_init(&ctx);
    if (st != TERN_OK) {
        printf("FAIL: tern_init: %s (%s)\n", tern_strerror(st), tern_last_error());
        return 1;
    }
    if (argc == 4 && strcmp(argv[1], "server") == 0) {
        server(ctx, atoi(argv[2]), argv[3]);
    } else if (argc == 3 && strcmp(argv[1], "client") == 0) {
        client(ctx, argv[2]);
    } else {
        printf("FAIL: usage: tern_port server N FILE | client FILE\n");
        failures++;
    }
    fflush(stdout);
    st = tern_finalize(ctx);
    CHECK(st == TERN_OK, "finalize: %s", tern_strerror(st));
    return failures ? 1 : 0;
}
