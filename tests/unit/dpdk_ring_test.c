/*
 * Unit test of the dpdk netmod's reliability layer without a job: two
 * engine contexts in one process (ranks 0 and 1 of a 2-rank job), each
 * with the self netmod and the real dpdk netmod on a net_ring port; the
 * two ports are joined by a pair of rte_rings (rte_eth_from_rings: what
 * one sends the other receives, nothing lost unless the fault shim says
 * so).  One thread polls both workers in turn, so every run with the same
 * seed sees the same frames.  Each rank's card goes straight to the
 * other's vc_init, as the engine hands it from an address; the exit fence
 * (tern_pmix_fence_timed) is wrapped at link time (-Wl,--wrap).
 *
 * Cases:
 *   clean      2 x 1500 messages of 0 .. 20000 bytes both ways, eager and
 *              rendezvous (zero-copy LMT put): in order, byte-exact, never
 *              an early frame or a fast retransmission;
 *   faults     the same with TERN_DPDK_FAULTS drop / hold / dup / corrupt
 *              at 2 % each and CRC32C on: still in order and byte-exact,
 *              and the counters show each fault and its repair;
 *   window     TERN_DPDK_WINDOW=8: never more than 8 frames unacknowledged
 *              (checked after every poll), and the full window was hit;
 *   malformed  frames of this job's VC with a bad version, type, length,
 *              window position or checksum, and random bytes, put on rank
 *              0's receive ring: counted bad, nothing delivered, the VC
 *              goes on;
 *   silent     rank 1 stops polling: rank 0's send fails with
 *              TERN_ERR_PEER_FAILED naming rank 1 (TERN_DPDK_TIMEOUT_MS
 *              1000), within 10 s;
 *   handlers   the reliability layer hands every in-order frame up through
 *              the handler of its type (DATA and LMT tapped on both ranks),
 *              and builds zero-copy LMT transmissions and reports LMT acks
 *              through it: each frame exactly once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "engine/address.h"
#include "engine/engine_internal.h"
#include "engine/netmod.h"
#include "netmods/dpdk/dpdk_internal.h"
#include "netmods/dpdk/dpdk_wire.h"

#include "tests/unit/expect.h"

/* ---- the exit fence: both "ranks" are this process ---------------------- */

tern_status_t __wrap_tern_pmix_fence_timed(tern_pmix_t *p, unsigned timeout_ms);

tern_status_t __wrap_tern_pmix_fence_timed(tern_pmix_t *p, unsigned timeout_ms)
{
    (void)p, (void)timeout_ms;
    return TERN_OK; /* both "ranks" are this process */
}

/* ---- two ranks in one process ---------------------------------------- */

typedef struct settings {
    const char *faults;
    unsigned csum, window, timeout_ms;
} settings_t;

static tern_context_t ctx[2];
static tern_worker_t wk[2];
static tern_vc_t vcs[2][2];
static tern_netmod_inst_t nms[2][2]; /* [0] self, [1] dpdk */
static void *shared[2][2];
static struct rte_ring *rings[2];     /* rings[r]: what rank r receives */
static int setup_count;

static tern_dpdk_t *dpdk_of(int r) { return nms[r][1].state; }
static tern_dpdk_vc_t *dvc(int r) { return tern_dpdk_vc(&vcs[r][1 - r]); }

static bool setup(const settings_t *s)
{
    char name[32];
    setup_count++;
    for (int r = 0; r < 2; r++) {
        snprintf(name, sizeof(name), "tring%d_%d", setup_count, r);
        rings[r] = rte_ring_create(name, 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (rings[r] == NULL) {
            fprintf(stderr, "rte_ring_create: %s\n", rte_strerror(rte_errno));
            return false;
        }
    }
    memset(ctx, 0, sizeof(ctx));
    memset(wk, 0, sizeof(wk));
    memset(vcs, 0, sizeof(vcs));
    memset(nms, 0, sizeof(nms));
    memset(shared, 0, sizeof(shared));
    const tern_netmod_desc_t *desc = tern_netmod_find("dpdk");
    if (desc == NULL) {
        fprintf(stderr, "no dpdk netmod registered\n");
        return false;
    }
    for (int r = 0; r < 2; r++) {
        /* port r receives from rings[r] and sends into the other's */
        snprintf(name, sizeof(name), "tring%d_%d", setup_count, r);
        int id = rte_eth_from_rings(name, &rings[r], 1, &rings[1 - r], 1,
                                    (unsigned)rte_socket_id());
        char port[RTE_ETH_NAME_MAX_LEN];
        if (id < 0 || rte_eth_dev_get_name_by_port((uint16_t)id, port) != 0) {
            fprintf(stderr, "rte_eth_from_rings: %s\n", rte_strerror(rte_errno));
            return false;
        }
        tern_context_t *c = &ctx[r];
        if (tern_config_load(&c->cfg) != TERN_OK)
            return false;
        c->cfg.cma = TERN_CMA_OFF; /* both ranks are this process: dpdk's own LMT, not the
                                    * engine's same-host copy */
        c->rank = r;
        c->size = 2;
        c->workers = &wk[r];
        c->num_workers = 1;
        c->pmix.rank = (uint32_t)r;
        c->pmix.size = 2;
        snprintf(c->pmix.nspace, sizeof(c->pmix.nspace), "dpdk-ring-test");
        c->job_hash = tern_job_hash(c->pmix.nspace);
        if (tern_worker_init(&wk[r], c, 0) != TERN_OK)
            return false;
        if (tern_netmod_instantiate(&nms[r][0], &tern_netmod_self) != TERN_OK ||
            tern_netmod_instantiate(&nms[r][1], desc) != TERN_OK)
            return false;
        tern_dpdk_config_t *dc = nms[r][1].config;
        snprintf(dc->port, sizeof(dc->port), "%s", port);
        dc->vdev[0] = '\0';
        snprintf(dc->faults, sizeof(dc->faults), "%s", s->faults ? s->faults : "");
        dc->csum = s->csum;
        if (s->window)
            dc->window = s->window;
        if (s->timeout_ms)
            dc->timeout_ms = s->timeout_ms;
        wk[r].vcs = vcs[r];
        wk[r].netmods = nms[r];
        wk[r].num_netmods = 2;
        for (int q = 0; q < 2; q++) {
            tern_vc_t *vc = &vcs[r][q];
            vc->rank = q;
            vc->worker = &wk[r];
            vc->eager_limit = c->cfg.eager_limit;
            tern_list_init(&vc->lmt_wait);
            vc->nm = &nms[r][q == r ? 0 : 1];
        }
        for (int i = 0; i < 2; i++) {
            tern_netmod_inst_t *n = &nms[r][i];
            n->initialized = true;
            if (n->core.init(&wk[r], n->config, &shared[r][i], &n->state) != TERN_OK) {
                fprintf(stderr, "rank %d: %s init: %s\n", r, n->name, tern_last_error());
                return false;
            }
            if (n->core.poll != NULL)
                wk[r].pollers[wk[r].num_pollers++] = n;
        }
        for (int q = 0; q < 2; q++)
            vcs[r][q].nm_state = nms[r][q == r ? 0 : 1].state;
    }
    unsigned char card[2][TERN_ADDR_CARD_MAX];
    size_t card_len[2];
    for (int r = 0; r < 2; r++) {
        card_len[r] = sizeof(card[r]);
        if (nms[r][1].core.card(nms[r][1].state, card[r], &card_len[r]) != TERN_OK) {
            fprintf(stderr, "rank %d: dpdk card: %s\n", r, tern_last_error());
            return false;
        }
    }
    for (int r = 0; r < 2; r++)
        for (int q = 0; q < 2; q++) {
            tern_vc_t *vc = &vcs[r][q];
            if (vc->nm->core.vc_init(vc->nm_state, vc, q == r ? NULL : card[q],
                                     q == r ? 0 : card_len[q]) != TERN_OK) {
                fprintf(stderr, "rank %d: VC to %d: %s\n", r, q, tern_last_error());
                return false;
            }
        }
    return true;
}

static void teardown(void)
{
    for (int r = 0; r < 2; r++) {
        for (int i = 1; i >= 0; i--) {
            tern_netmod_inst_t *n = &nms[r][i];
            tern_mem_release(n);
            if (n->initialized)
                n->core.finalize(n->state);
            tern_netmod_inst_release(n);
        }
        tern_worker_fini(&wk[r]);
        for (int q = 0; q < 2; q++)
            tern_vc_free_msgs(&vcs[r][q]);
    }
    for (int r = 0; r < 2; r++)
        rte_ring_free(rings[r]); /* the ring ports were closed with the netmods */
}

static uint64_t counter(int r, const char *name)
{
    tern_counter_t cs[64];
    int n = tern_worker_counters(&wk[r], cs, 64);
    for (int i = 0; i < n && i < 64; i++)
        if (strcmp(cs[i].name, name) == 0)
            return cs[i].value;
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- traffic ---------------------------------------------------------------- */

enum { MSGS = 1500, MAXLEN = 20000, INFLIGHT = 16 };

static size_t msg_len(uint32_t i)
{
    uint32_t x = i * 2654435761u;
    return (x >> 7) % 10 == 0 ? MAXLEN - (x % 64) : (x >> 3) % 3000; /* some rendezvous */
}

static unsigned char msg_byte(int from, uint32_t i, size_t k)
{
    return (unsigned char)(from * 101 + i * 7 + k * 13 + (k >> 8));
}

typedef struct stream {
    tern_request_t *sreq[INFLIGHT], *rreq[INFLIGHT];
    unsigned char *sbuf[INFLIGHT], *rbuf[INFLIGHT];
    uint32_t sidx[INFLIGHT], ridx[INFLIGHT];
    tern_recv_info_t rinfo[INFLIGHT]; /* a receive done within tern_irecv */
    bool rnow[INFLIGHT];
    uint32_t sent, recvd, checked, bad;
} stream_t;

/* Rank `from` sends message i to the other with tag i; the receiver posts
 * receives with tag TERN_ANY_TAG in order and checks tag == its count (the
 * stream is in order) and every byte. */
static void stream_step(stream_t *st, int from, int max_window)
{
    int to = 1 - from;
    for (int k = 0; k < INFLIGHT; k++) {
        if (st->sreq[k] == NULL && st->sent < MSGS) {
            uint32_t i = st->sent++;
            size_t len = msg_len(i);
            for (size_t b = 0; b < len; b++)
                st->sbuf[k][b] = msg_byte(from, i, b);
            tern_status_t s = tern_isend(&wk[from], st->sbuf[k], len, to, (int)i, 0, &st->sreq[k]);
            if (s != TERN_INPROGRESS)
                st->sreq[k] = NULL;
            EXPECT(s == TERN_OK || s == TERN_INPROGRESS, "isend %u: %s", i, tern_strerror(s));
        } else if (st->sreq[k] != NULL && (st->sreq[k]->flags & TERN_REQF_COMPLETE)) {
            tern_status_t s = tern_test(&wk[from], st->sreq[k], NULL);
            EXPECT(s == TERN_OK, "send: %s", tern_strerror(s));
            st->sreq[k] = NULL;
        }
    }
    /* receives: posted in order, reaped in order */
    for (int k = 0; k < INFLIGHT; k++) {
        int slot = (int)(st->checked % INFLIGHT);
        tern_request_t *r = st->rreq[slot];
        if (st->checked == st->recvd || (!st->rnow[slot] && !(r->flags & TERN_REQF_COMPLETE)))
            break;
        tern_recv_info_t info = st->rinfo[slot];
        tern_status_t s = st->rnow[slot] ? info.status : tern_test(&wk[to], r, &info);
        st->rnow[slot] = false;
        uint32_t i = st->ridx[slot];
        st->rreq[slot] = NULL;
        size_t len = msg_len(i);
        bool ok = s == TERN_OK && info.tag == (int)i && info.length == len;
        for (size_t b = 0; ok && b < len; b++)
            ok = st->rbuf[slot][b] == msg_byte(from, i, b);
        if (!ok && st->bad++ < 5)
            EXPECT(ok, "message %u from rank %d: status %s, tag %d, %zu bytes (want %zu)", i, from,
                   tern_strerror(s), info.tag, info.length, len);
        st->checked++;
    }
    while (st->recvd < MSGS && st->recvd - st->checked < INFLIGHT) {
        int slot = (int)(st->recvd % INFLIGHT);
        st->ridx[slot] = st->recvd++;
        tern_status_t s = tern_irecv(&wk[to], st->rbuf[slot], MAXLEN, from, TERN_ANY_TAG, 0,
                                     &st->rinfo[slot], &st->rreq[slot]);
        /* the message may be here already (unexpected): done at once */
        st->rnow[slot] = s != TERN_INPROGRESS;
        if (st->rnow[slot])
            st->rinfo[slot].status = s;
        EXPECT(s == TERN_OK || s == TERN_INPROGRESS, "irecv: %s", tern_strerror(s));
    }
    if (max_window) {
        tern_dpdk_vc_t *dv = dvc(from);
        EXPECT((int)(dv->snd_nxt - dv->snd_una) <= max_window, "%u frames unacknowledged",
               dv->snd_nxt - dv->snd_una);
    }
}

static void stream_init(stream_t *st)
{
    memset(st, 0, sizeof(*st));
    for (int k = 0; k < INFLIGHT; k++) {
        st->sbuf[k] = malloc(MAXLEN);
        st->rbuf[k] = malloc(MAXLEN);
    }
}

static void stream_free(stream_t *st)
{
    for (int k = 0; k < INFLIGHT; k++) {
        free(st->sbuf[k]);
        free(st->rbuf[k]);
    }
}

/* both ways at once until all is checked (or 60 s) */
static bool exchange(const char *label, int max_window)
{
    stream_t a, b;
    stream_init(&a);
    stream_init(&b);
    double t0 = now_s();
    while ((a.checked < MSGS || b.checked < MSGS || a.sreq[0] || b.sreq[0]) &&
           now_s() - t0 < 60) {
        stream_step(&a, 0, max_window);
        stream_step(&b, 1, max_window);
        tern_progress(&wk[0]);
        tern_progress(&wk[1]);
    }
    /* the last sends' completions (acks) */
    for (int n = 0; n < 1000000 && (!tern_dpdk_vc_idle(dvc(0)) || !tern_dpdk_vc_idle(dvc(1)));
         n++) {
        tern_progress(&wk[0]);
        tern_progress(&wk[1]);
    }
    for (int k = 0; k < INFLIGHT; k++) {
        stream_step(&a, 0, 0);
        stream_step(&b, 1, 0);
    }
    bool done = a.checked == MSGS && b.checked == MSGS && a.bad == 0 && b.bad == 0;
    for (int r = 0; !done && r < 2; r++) {
        tern_dpdk_vc_t *dv = dvc(r);
        fprintf(stderr, "%s: rank %d: snd_una %u snd_nxt %u snd_high %u peer_window %u, rcv_nxt "
                "%u, %u early, sendq %s, lmtq %s, lmt_sent %s, VC state %d; sends done %u\n",
                label, r, dv->snd_una, dv->snd_nxt, dv->snd_high, dv->peer_window, dv->rcv_nxt,
                dv->ooo_count, tern_pktq_empty(&dv->sendq) ? "empty" : "queued",
                tern_list_empty(&dv->lmtq) ? "empty" : "queued",
                tern_list_empty(&dv->lmt_sent) ? "empty" : "waiting", (int)dv->vc->state,
                r ? b.sent : a.sent);
    }
    EXPECT(done, "%s: 0 -> 1: %u of %u checked, %u bad; 1 -> 0: %u checked, %u bad (%.1f s)",
           label, a.checked, MSGS, a.bad, b.checked, b.bad, now_s() - t0);
    stream_free(&a);
    stream_free(&b);
    return done;
}

/* ---- cases ------------------------------------------------------------------ */

static void case_clean(void)
{
    settings_t s = {0};
    if (!setup(&s)) {
        EXPECT(false, "setup");
        return;
    }
    exchange("clean", 0);
    for (int r = 0; r < 2; r++) {
        /* a FIFO that loses nothing: never a hole, so never an early
         * frame or a fast retransmission (a loss probe may still fire on a
         * slow run: timing, not loss) */
        EXPECT(counter(r, "dpdk.ooo_frames") == 0 && counter(r, "dpdk.fast_retransmits") == 0,
               "rank %d: %llu early frames, %llu fast retransmissions on a clean ring", r,
               (unsigned long long)counter(r, "dpdk.ooo_frames"),
               (unsigned long long)counter(r, "dpdk.fast_retransmits"));
        EXPECT(counter(r, "dpdk.bad_frames") == 0, "rank %d: bad frames", r);
        EXPECT(counter(r, "dpdk.zcopy_frames") > 0, "rank %d: no zero-copy LMT frame", r);
    }
    printf("clean: ok (%llu frames out of rank 0)\n",
           (unsigned long long)counter(0, "dpdk.tx_frames"));
    teardown();
}

static void case_faults(void)
{
    settings_t s = {.faults = "drop=0.02,hold=0.02:3,dup=0.02,corrupt=0.02,seed=11", .csum = 1};
    if (!setup(&s)) {
        EXPECT(false, "setup");
        return;
    }
    exchange("faults", 0);
    uint64_t drop = 0, held = 0, dupd = 0, corr = 0, retx = 0, csum = 0, dupf = 0;
    for (int r = 0; r < 2; r++) {
        drop += counter(r, "dpdk.fault_dropped");
        held += counter(r, "dpdk.fault_held");
        dupd += counter(r, "dpdk.fault_duplicated");
        corr += counter(r, "dpdk.fault_corrupted");
        retx += counter(r, "dpdk.retransmits");
        csum += counter(r, "dpdk.csum_errors");
        dupf += counter(r, "dpdk.dup_frames");
    }
    EXPECT(drop > 0 && held > 0 && dupd > 0 && corr > 0, "the shim did nothing: %llu %llu %llu "
           "%llu", (unsigned long long)drop, (unsigned long long)held, (unsigned long long)dupd,
           (unsigned long long)corr);
    EXPECT(retx >= drop / 2, "%llu retransmissions for %llu drops", (unsigned long long)retx,
           (unsigned long long)drop);
    EXPECT(csum > 0, "no corrupt frame caught by the CRC");
    EXPECT(dupf > 0, "no duplicate frame seen");
    printf("faults: ok (dropped %llu, held %llu, duplicated %llu, corrupted %llu; retransmitted "
           "%llu, CRC errors %llu, duplicates %llu)\n", (unsigned long long)drop,
           (unsigned long long)held, (unsigned long long)dupd, (unsigned long long)corr,
           (unsigned long long)retx, (unsigned long long)csum, (unsigned long long)dupf);
    teardown();
}

static void case_window(void)
{
    settings_t s = {.window = 8};
    if (!setup(&s)) {
        EXPECT(false, "setup");
        return;
    }
    exchange("window", 8);
    EXPECT(counter(0, "dpdk.window_full") > 0, "a window of 8 was never full");
    printf("window: ok (full %llu times)\n", (unsigned long long)counter(0, "dpdk.window_full"));
    teardown();
}

/* a frame from rank 1's VC as rank 0 receives it, header h */
static void inject(struct rte_mempool *mp, const tern_dpdk_hdr_t *h, const void *tail,
                   size_t tail_len)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
    if (m == NULL)
        return;
    size_t len = TERN_DPDK_ETH_HDR + sizeof(*h) + tail_len;
    unsigned char *p = (unsigned char *)rte_pktmbuf_append(m, (uint16_t)len);
    if (p == NULL) {
        rte_pktmbuf_free(m);
        return;
    }
    tern_dpdk_t *d0 = dpdk_of(0), *d1 = dpdk_of(1);
    memcpy(p, d0->port.mac.addr_bytes, 6);
    memcpy(p + 6, d1->port.mac.addr_bytes, 6);
    p[12] = TERN_DPDK_ETHERTYPE >> 8;
    p[13] = TERN_DPDK_ETHERTYPE & 0xff;
    memcpy(p + TERN_DPDK_ETH_HDR, h, sizeof(*h));
    if (tail_len)
        memcpy(p + TERN_DPDK_ETH_HDR + sizeof(*h), tail, tail_len);
    if (rte_ring_enqueue(rings[0], m) != 0)
        rte_pktmbuf_free(m);
}

static void case_malformed(void)
{
    settings_t s = {.csum = 1};
    if (!setup(&s)) {
        EXPECT(false, "setup");
        return;
    }
    struct rte_mempool *mp = rte_pktmbuf_pool_create("tern_ring_test", 2047, 0, 0,
                                                     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    if (mp == NULL) {
        EXPECT(false, "pool: %s", rte_strerror(rte_errno));
        teardown();
        return;
    }
    tern_dpdk_t *d0 = dpdk_of(0), *d1 = dpdk_of(1);
    tern_dpdk_vc_t *v0 = dvc(0);
    tern_dpdk_hdr_t good = {.version = TERN_DPDK_WIRE_VERSION,
                            .type = TERN_DPDK_F_DATA,
                            .len = 0,
                            .job = d1->job,
                            .src = TERN_DPDK_EP(1, 0),
                            .dst = TERN_DPDK_EP(0, 0),
                            .src_nonce = d1->nonce,
                            .dst_nonce = d0->nonce,
                            .seq = v0->rcv_nxt,
                            .ack = v0->snd_una,
                            .window = 8};
    unsigned char junk[256];
    srand(5);
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (unsigned char)rand();
    int n = 0;
    for (int k = 0; k < 8; k++) {
        tern_dpdk_hdr_t h = good;
        switch (k) {
        case 0: h.version = 9; break;                         /* unknown version */
        case 1: h.type = 0; break;                            /* no such type */
        case 2: h.type = TERN_DPDK_F_MAX + 3; break;
        case 3: h.len = 1400; break;                          /* longer than the frame */
        case 4: h.seq = v0->rcv_nxt + 100000; break;          /* far beyond the window */
        case 5: h.csum = 0x12345678; break;                   /* CRC that does not match */
        case 6: h.csum = 0; break;                            /* no CRC where it is on */
        case 7: h.sack_block = 250; h.sack = 1; break;        /* SACK block beyond the window */
        }
        inject(mp, &h, junk, 64);
        n++;
    }
    for (int k = 0; k < 200; k++) { /* random bytes after a plausible start */
        tern_dpdk_hdr_t h;
        memcpy(&h, junk + (k % 200), sizeof(h));
        h.job = d1->job;
        h.src = TERN_DPDK_EP(1, 0);
        h.dst = TERN_DPDK_EP(0, 0);
        inject(mp, &h, junk, (size_t)(k % 40));
        n++;
    }
    uint64_t rx_before = counter(0, "dpdk.rx_frames");
    for (int k = 0; k < 1000; k++)
        tern_progress(&wk[0]);
    uint64_t bad = counter(0, "dpdk.bad_frames") + counter(0, "dpdk.csum_errors");
    EXPECT(bad >= (uint64_t)n - 8, "%llu of %d malformed frames counted bad",
           (unsigned long long)bad, n);
    EXPECT(vcs[0][1].state != TERN_VC_FAILED, "the VC failed on garbage: %s",
           vcs[0][1].fail_msg ? vcs[0][1].fail_msg : "?");
    EXPECT(wk[0].unexpected.next == &wk[0].unexpected, "garbage delivered as a message");
    exchange("malformed", 0); /* and the VC still carries everything */
    printf("malformed: ok (%d injected, %llu counted bad, %llu frames taken)\n", n,
           (unsigned long long)bad, (unsigned long long)(counter(0, "dpdk.rx_frames") - rx_before));
    teardown();
    rte_mempool_free(mp);
}

static void case_silent(void)
{
    settings_t s = {.timeout_ms = 1000};
    if (!setup(&s)) {
        EXPECT(false, "setup");
        return;
    }
    static unsigned char buf[1 << 20]; /* rendezvous: it needs the peer's answer */
    tern_request_t *req = NULL;
    tern_status_t st = tern_isend(&wk[0], buf, sizeof(buf), 1, 1, 0, &req);
    EXPECT(st == TERN_OK || st == TERN_INPROGRESS, "isend: %s", tern_strerror(st));
    double t0 = now_s();
    while (req != NULL && !(req->flags & TERN_REQF_COMPLETE) && now_s() - t0 < 10)
        tern_progress(&wk[0]); /* rank 1 never polls: its ring fills, nothing answers */
    double took = now_s() - t0;
    if (req != NULL) {
        EXPECT(req->flags & TERN_REQF_COMPLETE, "the send to a silent peer never ended (%.1f s)",
               took);
        st = tern_test(&wk[0], req, NULL);
    }
    EXPECT(st == TERN_ERR_PEER_FAILED, "send to a silent peer: %s", tern_strerror(st));
    EXPECT(strstr(tern_last_error(), "rank 1") != NULL, "the error names no rank: %s",
           tern_last_error());
    printf("silent: ok after %.1f s: %s\n", took, tern_last_error());
    teardown();
}

/* ---- the handler table: every frame goes up through it ------------------- */

static struct {
    const tern_dpdk_handler_t *orig[2][TERN_DPDK_F_MAX];
    tern_dpdk_handler_t tapped[2][TERN_DPDK_F_MAX];
    uint64_t rx[2][TERN_DPDK_F_MAX], frame[2], acked[2];
} tap;

static int rank_of(const tern_dpdk_vc_t *dv)
{
    return dv->d == dpdk_of(0) ? 0 : 1;
}

static void tap_rx(int type, tern_dpdk_vc_t *dv, const void *ext, const void *payload, uint16_t len)
{
    int r = rank_of(dv);
    tap.rx[r][type]++;
    tap.orig[r][type]->rx(dv, ext, payload, len);
}

static void tap_rx_data(tern_dpdk_vc_t *dv, const void *ext, const void *payload, uint16_t len)
{
    tap_rx(TERN_DPDK_F_DATA, dv, ext, payload, len);
}

static void tap_rx_lmt(tern_dpdk_vc_t *dv, const void *ext, const void *payload, uint16_t len)
{
    tap_rx(TERN_DPDK_F_LMT, dv, ext, payload, len);
}

static struct rte_mbuf *tap_frame_lmt(tern_dpdk_vc_t *dv, const tern_dpdk_slot_t *s)
{
    int r = rank_of(dv);
    tap.frame[r]++;
    return tap.orig[r][TERN_DPDK_F_LMT]->frame(dv, s);
}

static void tap_acked_lmt(tern_dpdk_vc_t *dv, tern_dpdk_slot_t *s)
{
    int r = rank_of(dv);
    tap.acked[r]++;
    tap.orig[r][TERN_DPDK_F_LMT]->acked(dv, s);
}

static void case_handlers(void)
{
    settings_t s = {0};
    if (!setup(&s)) {
        EXPECT(false, "setup");
        return;
    }
    memset(&tap, 0, sizeof(tap));
    for (int r = 0; r < 2; r++) {
        tern_dpdk_t *d = dpdk_of(r);
        const int types[2] = {TERN_DPDK_F_DATA, TERN_DPDK_F_LMT};
        for (int i = 0; i < 2; i++) {
            int t = types[i];
            tap.orig[r][t] = d->up[t];
            EXPECT(d->up[t] != NULL && d->up[t]->rx != NULL,
                   "rank %d: no handler for frame type %d after init", r, t);
            if (d->up[t] == NULL)
                goto out;
            tap.tapped[r][t] = *d->up[t];
        }
        EXPECT(d->up[TERN_DPDK_F_ACK] == NULL && d->up[TERN_DPDK_F_PROBE] == NULL,
               "rank %d: a handler for the reliability layer's own frames", r);
        EXPECT(tap.orig[r][TERN_DPDK_F_LMT]->frame != NULL &&
                   tap.orig[r][TERN_DPDK_F_LMT]->acked != NULL,
               "rank %d: LMT handler without frame / acked", r);
        tap.tapped[r][TERN_DPDK_F_DATA].rx = tap_rx_data;
        tap.tapped[r][TERN_DPDK_F_LMT].rx = tap_rx_lmt;
        tap.tapped[r][TERN_DPDK_F_LMT].frame = tap_frame_lmt;
        tap.tapped[r][TERN_DPDK_F_LMT].acked = tap_acked_lmt;
        tern_dpdk_rel_handler(d, TERN_DPDK_F_DATA, &tap.tapped[r][TERN_DPDK_F_DATA]);
        tern_dpdk_rel_handler(d, TERN_DPDK_F_LMT, &tap.tapped[r][TERN_DPDK_F_LMT]);
    }
    exchange("handlers", 0);
    for (int r = 0; r < 2; r++) {
        tern_dpdk_vc_t *dv = dvc(r);
        uint64_t up = tap.rx[r][TERN_DPDK_F_DATA] + tap.rx[r][TERN_DPDK_F_LMT];
        EXPECT(tap.rx[r][TERN_DPDK_F_DATA] > 0 && tap.rx[r][TERN_DPDK_F_LMT] > 0,
               "rank %d: %llu DATA, %llu LMT frames went up through the handlers", r,
               (unsigned long long)tap.rx[r][TERN_DPDK_F_DATA],
               (unsigned long long)tap.rx[r][TERN_DPDK_F_LMT]);
        /* sequence numbers start at 0: rcv_nxt frames were taken in order */
        EXPECT(up == dv->rcv_nxt, "rank %d: %llu frames handed up, %u taken in order", r,
               (unsigned long long)up, dv->rcv_nxt);
        EXPECT(tap.acked[r] == tap.rx[1 - r][TERN_DPDK_F_LMT],
               "rank %d: %llu LMT acks "
               "reported, the peer took %llu LMT frames",
               r, (unsigned long long)tap.acked[r],
               (unsigned long long)tap.rx[1 - r][TERN_DPDK_F_LMT]);
        EXPECT(tap.frame[r] > 0 && tap.frame[r] == counter(r, "dpdk.zcopy_frames"),
               "rank %d: %llu zero-copy frames built through the handler, %llu counted", r,
               (unsigned long long)tap.frame[r],
               (unsigned long long)counter(r, "dpdk.zcopy_frames"));
    }
    printf("handlers: ok (rank 1 took %llu DATA and %llu LMT frames through them)\n",
           (unsigned long long)tap.rx[1][TERN_DPDK_F_DATA],
           (unsigned long long)tap.rx[1][TERN_DPDK_F_LMT]);
out:
    teardown();
}

int main(void)
{
    /* rank 0's EAL settings start EAL for the process (the rank-1 context
     * finds it running); the ring ports need it before the netmods look
     * for them */
    tern_dpdk_config_t eal_cfg;
    memset(&eal_cfg, 0, sizeof(eal_cfg));
    if (tern_config_load_table(&tern_dpdk_config_table, &eal_cfg, NULL) != TERN_OK ||
        tern_dpdk_eal_start(&eal_cfg, "dpdk-ring-test", 0) != TERN_OK) {
        const char *why = tern_last_error();
        printf("SKIP: DPDK EAL does not start here: %s\n", why);
        return 77;
    }
    case_clean();
    case_faults();
    case_window();
    case_malformed();
    case_silent();
    case_handlers();
    if (failures) {
        fprintf(stderr, "dpdk_ring_test: %d failure(s)\n", failures);
        return 1;
    }
    printf("dpdk_ring_test: all cases passed\n");
    return 0;
}
