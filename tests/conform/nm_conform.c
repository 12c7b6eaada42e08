/*
 * nm_conform: ops-level conformance of the netmod that carries the VC
 * between ranks 0 and 1 (TERN_NETMODS picks it), against the capturing
 * engine of tap.c.  One case per job:
 *   ternrun -n 2 ./nm_conform stream|backpressure|terminate|destroy|lmt
 * stream        both ranks send 1500 eager messages of mixed sizes at once;
 *               the bytes the netmod delivered are exactly the packets
 *               sent, in order, whatever the fragmenting
 * backpressure  rank 1 does not poll while rank 0 pushes packets through
 *               istart_contig_msg until the netmod queues (a request) or
 *               says TERN_ERR_AGAIN (retried): nothing is lost or reordered
 * terminate     vc_terminate with sends queued returns at once (VC
 *               TERMINATING, the peer still asleep), the sends drain, CLOSED
 * destroy       failing the VC with sends queued completes each of them
 *               with the VC's status; the peer got a prefix of the stream
 * memreg        registration through the engine's cache: a key packed by
 *               rank 0 unpacks on rank 1 to the range it names, a damaged
 *               key is refused, a second registration inside the first is a
 *               cache hit, and unmapping the memory drops the registration
 *               (a netmod that registers nothing says so and passes)
 * lmt           every LMT mode the netmod declares, both directions: the
 *               RTS names the mode (or the netmod's lowered choice), the
 *               CTS / DONE / DATA packets follow the mode, data byte-exact
 * Exit status 0 only when every check passed on this rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "engine/netmod.h"
#include "engine/rcache.h"
#include "tests/conform/tap.h"
#include "tests/engine/harness.h"

#define TAG 11
#define NSTREAM 1500

static size_t stream_len(int i) { return (size_t)((i * 2654435761u) % 9000u) * (i % 3 == 0); }

void th_barrier(th_t *t)
{
    CHECK_ST(t, tern_barrier(t->ctx), TERN_OK);
}

static void sleep_ms(int ms) { usleep((useconds_t)ms * 1000u); }

/* Checks a captured stream against the expected eager packets. */
struct expect {
    th_t *t;
    int next, from;
    size_t (*len)(int);
    int bad;
};

static void check_eager(const tern_pkt_hdr_t *h, const uint8_t *body, void *arg)
{
    struct expect *e = arg;
    if (h->type != TERN_PKT_EAGER || h->tag != TAG)
        return; /* the case's own bookkeeping messages */
    size_t want = e->len(e->next);
    if (h->len != want ||
        th_verify(body, want, (uint64_t)e->from * 100000u + (uint64_t)e->next) != (size_t)-1) {
        if (e->bad++ == 0)
            fprintf(stderr, "FAIL [%s] rank %d: packet %d from rank %d: tag %llu len %llu "
                    "(want %zu) or bytes differ\n", e->t->test, e->t->rank, e->next, e->from,
                    (unsigned long long)h->tag, (unsigned long long)h->len, want);
    }
    e->next++;
}

static int case_stream(th_t *t)
{
    int peer = 1 - t->rank;
    uint8_t *sb = malloc(9000), *rb = malloc(9000);
    tap_start(peer);
    th_barrier(t);
    for (int i = 0; i < NSTREAM; i++) {
        tern_request_t *sr, *rr;
        tern_recv_info_t info;
        th_fill(sb, stream_len(i), (uint64_t)t->rank * 100000u + (uint64_t)i);
        tern_status_t rs = tern_irecv(t->w, rb, 9000, peer, TAG, 0, &info, &rr);
        tern_status_t ss = tern_isend(t->w, sb, stream_len(i), peer, TAG, 0, &sr);
        CHECK_ST(t, th_finish(t, ss, sr, NULL), TERN_OK);
        CHECK_ST(t, th_finish(t, rs, rr, &info), TERN_OK);
    }
    th_barrier(t);
    tap_stop();
    tap_stream_t *s = tap_stream();
    struct expect e = {t, 0, peer, stream_len, 0};
    size_t left = tap_packets(s, check_eager, &e);
    CHECK(t, left == 0 && e.next == NSTREAM && e.bad == 0,
          "%d of %d packets as sent (%d bad), %zu bytes left over", e.next, NSTREAM, e.bad, left);
    printf("stream: rank %d got %zu bytes in %zu fragments of %zu..%zu bytes\n", t->rank, s->len,
           s->fragments, s->min_frag, s->max_frag);
    free(sb);
    free(rb);
    return 0;
}

/* Rank 0 pushes eager packets straight through the netmod's
 * istart_contig_msg while rank 1 sleeps; returns the queued requests. */
#define NPUSH_MAX 200000
static size_t push_len(int i) { return (size_t)(i % 7) * 600u; }

/* Packet i's bytes live in slot i % PUSH_SLOTS until its request is
 * done: at most `extra` + 1 packets are queued at once. */
#define PUSH_SLOTS 64
static int push(th_t *t, tern_vc_t *vc, tern_request_t **q, int *nq, int extra)
{
    static uint8_t data[PUSH_SLOTS][7 * 600];
    int i = 0, queued_at = -1;
    for (; i < NPUSH_MAX && (queued_at < 0 || i < queued_at + extra); i++) {
        uint8_t *d = data[i % PUSH_SLOTS];
        th_fill(d, push_len(i), (uint64_t)i);
        tern_pkt_hdr_t h = {.type = TERN_PKT_EAGER, .tag = TAG, .len = push_len(i)};
        tern_request_t *r = NULL;
        tern_status_t st;
        for (int tries = 0;; tries++) {
            st = vc->nm->core.istart_contig_msg(vc, &h, sizeof(h), d, push_len(i), &r);
            if (st != TERN_ERR_AGAIN || tries > 100000)
                break;
            if (queued_at < 0)
                queued_at = i;
            tern_progress(t->w); /* the contract: queue the work and retry */
        }
        CHECK_ST(t, st, TERN_OK);
        if (st != TERN_OK)
            break;
        if (r != NULL) {
            r->flags |= TERN_REQF_USER; /* ours to reap, as tern_isend does */
            q[(*nq)++] = r;
            if (queued_at < 0)
                queued_at = i;
        }
    }
    return i;
}

/* One message each way first: a lazily connected netmod (tcp) then queues
 * on a full channel, not on the connection under way. */
static void connect_pair(th_t *t)
{
    int x = 0, peer = 1 - t->rank;
    tern_request_t *r;
    tern_status_t rs = tern_irecv(t->w, &x, sizeof(x), peer, TAG + 2, 0, NULL, &r);
    CHECK_ST(t, tern_send(t->w, &x, sizeof(x), peer, TAG + 2, 0), TERN_OK);
    CHECK_ST(t, th_finish(t, rs, r, NULL), TERN_OK);
}

static int case_backpressure(th_t *t)
{
    tern_vc_t *vc = &t->w->vcs[1 - t->rank];
    int n = 0;
    connect_pair(t);
    tap_start(0);
    th_barrier(t);
    if (t->rank == 0) {
        static tern_request_t *q[NPUSH_MAX];
        int nq = 0;
        n = push(t, vc, q, &nq, 32);
        CHECK(t, nq > 0, "the netmod never queued in %d packets", n);
        for (int k = 0; k < nq; k++)
            CHECK_ST(t, tern_wait(t->w, q[k], NULL), TERN_OK);
        printf("backpressure: %d packets, %d queued (the first after %d)\n", n, nq, n - 32);
        tern_send(t->w, &n, sizeof(n), 1, TAG + 1, 0);
    } else {
        sleep_ms(1500);
        CHECK_ST(t, tern_recv(t->w, &n, sizeof(n), 0, TAG + 1, 0, NULL), TERN_OK);
        tap_stop();
        struct expect e = {t, 0, 0, push_len, 0};
        /* the pushed packets carry seeds 0.. (not 100000 * rank) */
        tap_stream_t *s = tap_stream();
        size_t left = tap_packets(s, check_eager, &e);
        CHECK(t, e.next == n && e.bad == 0 && left == 0, "%d of %d packets, %d bad", e.next, n,
              e.bad);
    }
    th_barrier(t);
    return 0;
}

/* Rank 0 of terminate / destroy: connect, then fill the VC until 16
 * sends are queued while rank 1 sleeps.  Returns the packets pushed. */
static tern_request_t *queued[NPUSH_MAX];
static int fill_vc(th_t *t, tern_vc_t *vc, int *nq)
{
    connect_pair(t);
    /* before the barrier: tern_barrier progresses, and rank 0's first
     * packets may arrive while rank 1 still waits in it */
    if (t->rank == 1)
        tap_start(0);
    th_barrier(t);
    *nq = 0;
    return t->rank == 0 ? push(t, vc, queued, nq, 16) : 0;
}

static int case_terminate(th_t *t)
{
    tern_vc_t *vc = &t->w->vcs[1 - t->rank];
    int nq, n = fill_vc(t, vc, &nq);
    tern_request_t **q = queued;
    if (t->rank == 0) {
        tern_status_t st = vc->nm->core.vc_terminate(vc);
        CHECK_ST(t, st, TERN_OK);
        CHECK(t, vc->state == TERN_VC_TERMINATING,
              "vc_terminate with %d sends queued left the VC in state %d (must not block)", nq,
              vc->state);
        time_t end = time(NULL) + 60;
        while (vc->state == TERN_VC_TERMINATING && time(NULL) < end)
            if (tern_progress(t->w) == 0)
                sleep_ms(1);
        CHECK(t, vc->state == TERN_VC_CLOSED, "the VC did not drain and close (state %d)",
              vc->state);
        for (int k = 0; k < nq; k++)
            CHECK_ST(t, tern_wait(t->w, q[k], NULL), TERN_OK);
        printf("terminate: %d packets, %d queued when vc_terminate returned\n", n, nq);
    } else {
        sleep_ms(2000); /* asleep while rank 0 terminates */
        time_t end = time(NULL) + 60;
        struct expect e = {t, 0, 0, push_len, 0};
        size_t prev = (size_t)-1;
        for (;;) { /* until the stream stops growing for a while */
            for (int k = 0; k < 20000; k++)
                tern_progress(t->w);
            if (tap_stream()->len == prev || time(NULL) > end)
                break;
            prev = tap_stream()->len;
            sleep_ms(50);
        }
        tap_stop();
        size_t left = tap_packets(tap_stream(), check_eager, &e);
        CHECK(t, e.bad == 0 && left == 0 && e.next > 0, "%d packets, %d bad, %zu bytes cut",
              e.next, e.bad, left);
        printf("terminate: rank 1 got all %d packets whole\n", e.next);
    }
    th_barrier(t);
    return 0;
}

static int case_destroy(th_t *t)
{
    tern_vc_t *vc = &t->w->vcs[1 - t->rank];
    int nq;
    fill_vc(t, vc, &nq);
    tern_request_t **q = queued;
    if (t->rank == 0) {
        tern_vc_fail(vc, TERN_ERR_PEER_FAILED, "conformance test: the VC is failed");
        int failed = 0;
        for (int k = 0; k < nq; k++) {
            tern_status_t st = tern_test(t->w, q[k], NULL);
            CHECK(t, st == TERN_OK || st == TERN_ERR_PEER_FAILED,
                  "queued request %d: %s (must be complete)", k, tern_strerror(st));
            failed += st == TERN_ERR_PEER_FAILED;
        }
        CHECK(t, failed > 0, "none of the %d queued requests failed with the VC", nq);
        printf("destroy: %d queued, %d failed with the VC\n", nq, failed);
    } else {
        sleep_ms(1500);
        for (int k = 0; k < 200000; k++)
            tern_progress(t->w);
        tap_stop();
        struct expect e = {t, 0, 0, push_len, 0};
        tap_packets(tap_stream(), check_eager, &e);
        CHECK(t, e.bad == 0, "the %d packets that arrived are not the sent prefix", e.next);
    }
    th_barrier(t);
    return 0;
}

/* Control packets seen, by type. */
struct seen {
    int n[TERN_PKT_TYPE_MAX];
    int rts_mode;
};

static void count(const tern_pkt_hdr_t *h, const uint8_t *body, void *arg)
{
    struct seen *s = arg;
    if (h->type < TERN_PKT_TYPE_MAX)
        s->n[h->type]++;
    if (h->type == TERN_PKT_RTS)
        s->rts_mode = h->flags;
}

static int case_lmt(th_t *t)
{
    int peer = 1 - t->rank;
    tern_vc_t *vc = &t->w->vcs[peer];
    unsigned modes = vc->nm->lmt != NULL ? vc->nm->lmt->modes(vc->nm_state) : 0;
    modes |= 1u << TERN_LMT_NULL;
    const size_t n = 5u * 1048576u + 3;
    uint8_t *sb = malloc(n), *rb = malloc(n);
    for (int mode = TERN_LMT_NULL; mode < TERN_LMT_NMODES; mode++) {
        if (!(modes & (1u << mode)))
            continue;
        t->ctx->cfg.lmt_mode = (uint64_t)mode;
        for (int dir = 0; dir < 2; dir++) {
            tap_start(peer); /* before the barrier, which progresses */
            th_barrier(t);
            bool sender = t->rank == dir;
            tern_request_t *r;
            tern_recv_info_t info;
            tern_status_t st;
            if (sender) {
                th_fill(sb, n, (uint64_t)mode * 10 + (uint64_t)dir);
                st = tern_isend(t->w, sb, n, peer, TAG, 0, &r);
                CHECK_ST(t, th_finish(t, st, r, NULL), TERN_OK);
            } else {
                st = tern_irecv(t->w, rb, n, peer, TAG, 0, &info, &r);
                CHECK_ST(t, th_finish(t, st, r, &info), TERN_OK);
                CHECK(t, th_verify(rb, n, (uint64_t)mode * 10 + (uint64_t)dir) == (size_t)-1,
                      "mode %d: data differs", mode);
            }
            th_barrier(t); /* a DONE to the receiver has arrived by now */
            tap_stop();
            struct seen s = {{0}, -1};
            tap_packets(tap_stream(), count, &s);
            if (sender) { /* what the receiver sent us */
                /* get: the receiver reads and answers DONE, no CTS (unless
                 * it had to fall back to the copy buffer: CTS, no DONE) */
                bool get = mode == TERN_LMT_GET && s.n[TERN_PKT_CTS] == 0;
                CHECK(t, s.n[TERN_PKT_CTS] == !get, "mode %d: %d CTS", mode, s.n[TERN_PKT_CTS]);
                CHECK(t, s.n[TERN_PKT_DONE] == get, "mode %d: %d DONE to the sender", mode,
                      s.n[TERN_PKT_DONE]);
            } else {
                /* the mode asked for, or one the netmod lowered it to for this
                 * transfer (lmt_initiate: verbs when it cannot register the
                 * buffer -> null) */
                CHECK(t, s.n[TERN_PKT_RTS] == 1 && s.rts_mode >= TERN_LMT_NULL &&
                             (s.rts_mode == mode ||
                              (s.rts_mode < mode && (modes & (1u << s.rts_mode)))),
                      "mode %d: RTS %d with mode %d", mode, s.n[TERN_PKT_RTS], s.rts_mode);
                CHECK(t, s.n[TERN_PKT_DATA] == (s.rts_mode == TERN_LMT_NULL),
                      "mode %d: %d DATA packets", mode, s.n[TERN_PKT_DATA]);
                CHECK(t, s.n[TERN_PKT_DONE] == (s.rts_mode == TERN_LMT_PUT),
                      "mode %d: %d DONE to the receiver", mode, s.n[TERN_PKT_DONE]);
                printf("lmt: %s mode %d -> RTS mode %d\n", vc->nm->name, mode, s.rts_mode);
            }
        }
    }
    free(sb);
    free(rb);
    return 0;
}

struct key_msg {
    uint64_t addr, len;
    size_t klen;
    uint8_t key[TERN_RKEY_MAX];
};

static int case_memreg(th_t *t)
{
    int peer = 1 - t->rank;
    tern_vc_t *vc = &t->w->vcs[peer];
    tern_mem_t mem;
    struct key_msg m = {0};
    bool registered = false;
    const size_t len = 8u << 20;
    if (t->rank == 0) {
        uint8_t *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(t, buf != MAP_FAILED, "mmap");
        memset(buf, 0x5a, len);
        tern_status_t st = tern_mem_get(vc, buf + 100, len - 200, &mem);
        if (st == TERN_ERR_UNSUPPORTED) {
            printf("memreg: netmod %s registers no memory (%s)\n", vc->nm->name,
                   tern_last_error());
            m.klen = 0;
        } else {
            CHECK_ST(t, st, TERN_OK);
            registered = true;
            m.addr = (uint64_t)(uintptr_t)(buf + 4096);
            m.len = 65536;
            m.klen = sizeof(m.key);
            st = tern_mem_rkey(&mem, buf + 4096, 65536, m.key, &m.klen);
            if (st == TERN_ERR_UNSUPPORTED && strstr(tern_last_error(), "no remote keys")) {
                /* registration for the device only (dpdk: DMA), no remote access */
                printf("memreg: netmod %s registers for its device, no remote keys\n",
                       vc->nm->name);
                m.klen = 0;
            } else {
                CHECK_ST(t, st, TERN_OK);
                size_t k2 = sizeof(m.key);
                uint8_t tmp[TERN_RKEY_MAX];
                CHECK_ST(t, tern_mem_rkey(&mem, buf + len + 4096, 10, tmp, &k2),
                         TERN_ERR_INVALID_PARAM);
            }
            tern_mem_t inner;
            CHECK_ST(t, tern_mem_get(vc, buf + 8192, 4096, &inner), TERN_OK);
            tern_rcache_stats_t stats;
            tern_rcache_get_stats(mem.inst->rcache, &stats);
            CHECK(t, !tern_rcache_caching(mem.inst->rcache) || stats.hits == 1,
                  "a registration inside a cached one: %llu hits, %llu misses",
                  (unsigned long long)stats.hits, (unsigned long long)stats.misses);
            tern_mem_put(&inner);
            tern_mem_put(&mem);
        }
        CHECK_ST(t, tern_send(t->w, &m, sizeof(m), peer, TAG, 0), TERN_OK);
        th_barrier(t);
        /* the memory goes away: the cache must drop its registration */
        munmap(buf, len);
        if (registered && tern_rcache_caching(mem.inst->rcache)) {
            tern_rcache_stats_t stats = {0};
            for (int k = 0; k < 2000 && stats.invalidated == 0; k++) {
                tern_mem_progress(t->w);
                tern_rcache_get_stats(mem.inst->rcache, &stats);
                if (stats.invalidated == 0)
                    sleep_ms(1);
            }
            CHECK(t, stats.invalidated >= 1 && stats.regions == 0,
                  "after munmap: %llu invalidated, %zu registrations left",
                  (unsigned long long)stats.invalidated, stats.regions);
            printf("memreg: %s key of %zu bytes; hit inside, dropped after munmap\n",
                   vc->nm->name, m.klen);
        }
    } else {
        CHECK_ST(t, tern_recv(t->w, &m, sizeof(m), peer, TAG, 0, NULL), TERN_OK);
        if (m.klen != 0) {
            tern_rkey_t k;
            CHECK_ST(t, vc->nm->mem->rkey_unpack(vc, m.key, m.klen, &k), TERN_OK);
            CHECK(t, k.addr == m.addr && k.len == m.len, "unpacked %llu bytes at %#llx",
                  (unsigned long long)k.len, (unsigned long long)k.addr);
            for (size_t i = 0; i < m.klen; i++) { /* every damaged byte is refused or harmless */
                uint8_t bad[TERN_RKEY_MAX];
                memcpy(bad, m.key, m.klen);
                bad[i] ^= 0x80;
                tern_rkey_t kb;
                tern_status_t st = vc->nm->mem->rkey_unpack(vc, bad, m.klen, &kb);
                CHECK(t, st != TERN_OK || kb.addr != k.addr || kb.len != k.len,
                      "key byte %zu damaged, still unpacks to the same range", i);
            }
            CHECK(t, vc->nm->mem->rkey_unpack(vc, m.key, m.klen - 1, &k) != TERN_OK,
                  "a short key unpacks");
        }
        th_barrier(t);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(th_t *);
    } cases[] = {{"stream", case_stream},       {"backpressure", case_backpressure},
                 {"terminate", case_terminate}, {"destroy", case_destroy},
                 {"lmt", case_lmt},             {"memreg", case_memreg}};
    if (argc != 2) {
        fprintf(stderr, "usage: ternrun -n 2 nm_conform stream|backpressure|terminate|destroy|lmt\n");
        return 2;
    }
    th_t t = {0};
    t.test = argv[1];
    if (tern_init(&t.ctx) != TERN_OK) {
        fprintf(stderr, "nm_conform: tern_init: %s\n", tern_last_error());
        return 1;
    }
    t.w = tern_context_worker(t.ctx);
    t.rank = tern_rank(t.ctx);
    t.size = tern_size(t.ctx);
    int found = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) && t.size == 2; i++)
        if (strcmp(cases[i].name, argv[1]) == 0) {
            found = 1;
            printf("# %s over %s\n", argv[1], tern_peer_netmod(t.ctx, 1 - t.rank));
            cases[i].fn(&t);
        }
    CHECK(&t, found, "no case %s (or not 2 ranks)", argv[1]);
    printf("%s %s (rank %d)\n", t.failures ? "not ok" : "ok", argv[1], t.rank);
    fflush(stdout);
    if (tern_finalize(t.ctx) != TERN_OK)
        t.failures++;
    return t.failures ? 1 : 0;
}
