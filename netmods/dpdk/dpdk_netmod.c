/*
 * dpdk netmod: registration, wire-up, VCs, polling, keepalive, block mode,
 * memory registration; the capability tables.  See dpdk_internal.h for the shape
 * and docs/dpdk.md for what was run where.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_memory.h>

#include "netmods/dpdk/dpdk_internal.h"

#define RX_ROUNDS 4

/* ---- wire-up ------------------------------------------------------------- */

static bool dpdk_reachable(tern_context_t *ctx, int rank)
{
    return rank != ctx->rank && tern_dpdk_eal_unavailable() == NULL;
}

static uint32_t new_nonce(void)
{
    uint32_t n = 0;
    if (getrandom(&n, sizeof(n), 0) != sizeof(n))
        n = (uint32_t)getpid() * 2654435761u ^ (uint32_t)tern_now_ns();
    return n != 0 ? n : 1;
}

/* DATA frames carry the VC's byte stream: up to the engine's parser (any
 * number of packets, or a fragment of one). */
static void rx_stream(tern_dpdk_vc_t *dv, const void *ext, const void *payload, uint16_t len)
{
    (void)ext;
    tern_handle_pkt(dv->vc, payload, len);
}

static const tern_dpdk_handler_t stream_handler = {.rx = rx_stream};

static tern_status_t dpdk_init(tern_worker_t *w, const void *config, void **shared, void **state)
{
    const tern_dpdk_config_t *cfg = config;
    tern_context_t *ctx = w->ctx;
    (void)shared;
    tern_dpdk_t *d = calloc(1, sizeof(*d));
    if (d == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "dpdk netmod state");
    *state = d;
    d->ctx = ctx;
    d->worker = w;
    d->cfg = cfg;
    d->port.id = RTE_MAX_ETHPORTS;
    d->job = tern_ctx_job_hash(ctx);
    d->nonce = new_nonce();
    tern_list_init(&d->active);
    tern_list_init(&d->live);
    tern_list_init(&d->reap);
    d->timer_fd = d->wait_ep = d->intr_ep = -1;
    tern_dpdk_rel_handler(d, TERN_DPDK_F_DATA, &stream_handler);
    tern_dpdk_lmt_attach(d);
    if (w->index > 255)
        return tern_error(TERN_ERR_UNSUPPORTED, "dpdk: worker %d: frames name at most 256 "
                          "workers", w->index);
    d->vcs = calloc((size_t)ctx->size, sizeof(*d->vcs));
    if (d->vcs == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "dpdk VC table for %d ranks", ctx->size);
    tern_status_t st = tern_dpdk_eal_start(cfg, tern_ctx_job(ctx), ctx->rank);
    if (st != TERN_OK)
        return st;
    if (cfg->port[0] != '\0') {
        if (w->index > 0)
            return tern_error(TERN_ERR_UNSUPPORTED, "dpdk: TERN_DPDK_PORT %s drives worker 0 "
                              "only; give more workers ports with TERN_DPDK_VDEV", cfg->port);
        st = tern_dpdk_port_open(d, cfg->port, false, &d->port);
    } else {
        d->per_peer = tern_dpdk_per_peer(cfg->vdev);
        if (!d->per_peer) {
            char devargs[512];
            st = tern_dpdk_expand(cfg->vdev, d, d->job, -1, devargs, sizeof(devargs));
            if (st == TERN_OK)
                st = tern_dpdk_port_open(d, devargs, true, &d->port);
        }
    }
    if (st != TERN_OK)
        return st;
    tern_dpdk_card_t card = {.magic = TERN_DPDK_MAGIC, .version = TERN_DPDK_CARD_VERSION,
                             .rank = ctx->rank, .nonce = d->nonce, .job = d->job,
                             .window = (uint32_t)cfg->window};
    if (!d->per_peer) {
        memcpy(card.mac, d->port.mac.addr_bytes, 6);
        card.mtu = d->port.mtu;
        card.max_frame = d->port.max_frame;
        card.caps = d->port.multiseg ? TERN_DPDK_CAP_MULTISEG : 0;
    }
    d->card = card;
    return TERN_OK;
}

static tern_status_t dpdk_card(void *state, void *buf, size_t *len)
{
    tern_dpdk_t *d = state;
    if (*len < sizeof(d->card))
        return tern_error(TERN_ERR_INVALID_PARAM, "dpdk: a card needs %zu bytes",
                          sizeof(d->card));
    memcpy(buf, &d->card, sizeof(d->card));
    *len = sizeof(d->card);
    return TERN_OK;
}

/* rank of job (hash)'s card */
static tern_status_t card_check(const void *data, size_t len, uint32_t job, int rank,
                                const tern_dpdk_t *d, tern_dpdk_card_t *out)
{
    if (len != sizeof(*out))
        return tern_error(TERN_ERR_MALFORMED, "dpdk card of rank %d: %zu bytes, want %zu", rank,
                          len, sizeof(*out));
    memcpy(out, data, sizeof(*out));
    if (out->magic != TERN_DPDK_MAGIC || out->version != TERN_DPDK_CARD_VERSION ||
        out->rank != rank)
        return tern_error(TERN_ERR_MALFORMED, "dpdk card of rank %d: not a version-%u card of "
                          "that rank", rank, TERN_DPDK_CARD_VERSION);
    if (out->job != job || out->nonce == 0 || out->window < 8 ||
        out->window > TERN_DPDK_WINDOW_MAX)
        return tern_error(TERN_ERR_MALFORMED, "dpdk card of rank %d: job %#x nonce %#x window "
                          "%u", rank, out->job, out->nonce, out->window);
    bool peer_shared = out->mtu != 0;
    if (peer_shared == d->per_peer)
        return tern_error(TERN_ERR_INVALID_PARAM, "dpdk: rank %d uses %s ports, this rank %s: "
                          "give every rank the same TERN_DPDK_VDEV", rank,
                          peer_shared ? "shared" : "per-peer", d->per_peer ? "per-peer" : "shared");
    return TERN_OK;
}

/* VC i of the instance: the job's ranks' (d->vcs), then other jobs' */
static inline int nvcs(const tern_dpdk_t *d) { return d->ctx->size + d->nremote; }
static inline tern_dpdk_vc_t *vc_at(const tern_dpdk_t *d, int i)
{
    return i < d->ctx->size ? &d->vcs[i] : d->remote[i - d->ctx->size];
}

/* dv (its card checked) carries vc: its port, window and endpoints. */
static tern_status_t vc_setup(tern_dpdk_t *d, tern_dpdk_vc_t *dv, tern_vc_t *vc)
{
    dv->vc = vc;
    dv->d = d;
    tern_pktq_init(&dv->sendq);
    tern_list_init(&dv->lmtq);
    tern_list_init(&dv->lmt_sent);
    tern_list_init(&dv->active_link);
    tern_list_init(&dv->live_link);
    dv->own.id = RTE_MAX_ETHPORTS;
    if (d->per_peer) {
        char devargs[512];
        tern_status_t st = tern_dpdk_expand(d->cfg->vdev, d, dv->card.job, dv->card.rank,
                                            devargs, sizeof(devargs));
        if (st == TERN_OK)
            st = tern_dpdk_port_open(d, devargs, true, &dv->own);
        if (st != TERN_OK)
            return st;
        dv->port = &dv->own;
        memset(dv->peer_mac.addr_bytes, 0xff, 6); /* point to point: no addressing */
    } else {
        dv->port = &d->port;
        memcpy(dv->peer_mac.addr_bytes, dv->card.mac, 6);
    }
    uint32_t mtu = dv->port->mtu;
    if (dv->card.mtu != 0 && dv->card.mtu < mtu)
        mtu = dv->card.mtu;
    dv->payload_max = (uint16_t)(mtu - TERN_DPDK_HDR_SIZE);
    uint32_t w = (uint32_t)d->cfg->window;
    dv->slots = calloc(w, sizeof(*dv->slots));
    dv->ooo = calloc(w, sizeof(*dv->ooo));
    if (dv->slots == NULL || dv->ooo == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "dpdk window of %u frames", w);
    dv->peer_window = dv->card.window;
    dv->my_ep = TERN_DPDK_EP(d->ctx->rank, d->worker->index);
    dv->peer_ep = TERN_DPDK_EP(dv->card.rank, d->worker->index);
    dv->rto_ns = d->cfg->rto_min_us * 1000ull;
    dv->conn = DPDK_VC_UP;
    vc->nm_vc = dv;
    return TERN_OK;
}

static tern_status_t dpdk_vc_init(void *state, tern_vc_t *vc, const void *card, size_t len)
{
    tern_dpdk_t *d = state;
    tern_dpdk_vc_t *dv = &d->vcs[vc->rank];
    tern_status_t st = card_check(card, len, d->job, vc->rank, d, &dv->card);
    return st == TERN_OK ? vc_setup(d, dv, vc) : st;
}

/* A VC to another job's rank (its own allocation, kept until finalize). */
static tern_status_t remote_add(tern_dpdk_t *d, tern_vc_t *vc, const tern_dpdk_card_t *card)
{
    tern_dpdk_vc_t **r = tern_remote_table_room(d->remote, d->nremote, &d->remote_cap, sizeof(*r));
    if (r == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "dpdk: table of %d VCs to other jobs",
                          d->nremote + 1);
    d->remote = r;
    tern_dpdk_vc_t *dv = calloc(1, sizeof(*dv));
    if (dv == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "dpdk: VC to job %08x rank %d", card->job,
                          card->rank);
    dv->card = *card;
    d->remote[d->nremote++] = dv; /* before the setup: finalize frees what it made */
    tern_status_t st = vc_setup(d, dv, vc);
    if (st != TERN_OK) { /* the engine forgets vc: so do we */
        dv->vc = NULL;
        dv->conn = DPDK_VC_DEAD;
        vc->nm_vc = NULL;
    }
    return st;
}

/* Another job's rank (tern_connect, a port, tern_peer_insert). */
static tern_status_t dpdk_vc_init_remote(void *state, tern_vc_t *vc, uint32_t job, int rank,
                                         const void *data, size_t len)
{
    tern_dpdk_t *d = state;
    tern_dpdk_card_t card;
    tern_status_t st = card_check(data, len, job, rank, d, &card);
    return st == TERN_OK ? remote_add(d, vc, &card) : st;
}

/* A point-to-point device is made for one peer on both sides: a process
 * we have no address of cannot reach us through one. */
static const char *dpdk_port_unable(void *state)
{
    tern_dpdk_t *d = state;
    return d->per_peer ? "dpdk: TERN_DPDK_VDEV makes a point-to-point device per peer (it "
                         "names %p, %l, %h or %R), which a process this one was given no "
                         "address of cannot reach (ports need a shared medium)"
                       : NULL;
}

tern_dpdk_vc_t *tern_dpdk_remote_vc(tern_dpdk_t *d, uint32_t job, int rank,
                                    const struct rte_mbuf *m)
{
    for (int i = 0; i < d->nremote; i++)
        if (d->remote[i]->card.job == job && d->remote[i]->card.rank == rank)
            return d->remote[i];
    const tern_dpdk_hdr_t *h =
        rte_pktmbuf_mtod_offset(m, const tern_dpdk_hdr_t *, TERN_DPDK_ETH_HDR);
    if (d->per_peer || (h->type != TERN_DPDK_F_DATA && h->type != TERN_DPDK_F_LMT))
        return NULL;
    /* a client of our port: what its frame says stands for its card.  Its
     * MTU it does not say: ours when TERN_DPDK_MTU chose it (both ends have
     * the same settings), else at most 1500 (ours may be its interface's,
     * dpdk_devargs.c, and the client's interface smaller) */
    const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
    uint16_t window = rte_le_to_cpu_16(h->window);
    uint16_t mtu = d->cfg->mtu != 0 || d->port.mtu < RTE_ETHER_MTU ? d->port.mtu : RTE_ETHER_MTU;
    tern_dpdk_card_t card = {.magic = TERN_DPDK_MAGIC, .version = TERN_DPDK_CARD_VERSION,
                             .rank = rank, .nonce = rte_le_to_cpu_32(h->src_nonce),
                             .mtu = mtu, .max_frame = d->port.max_frame, .job = job,
                             .window = window < 8 ? 8 : window > TERN_DPDK_WINDOW_MAX
                                                             ? TERN_DPDK_WINDOW_MAX
                                                             : window};
    memcpy(card.mac, eth->src_addr.addr_bytes, 6);
    if (card.nonce == 0)
        return NULL;
    tern_vc_t *vc = tern_port_incoming(d->worker, d, job, rank);
    if (vc == NULL || remote_add(d, vc, &card) != TERN_OK)
        return NULL;
    return d->remote[d->nremote - 1];
}

/* The VC failed: requests only we hold fail here, rendezvous ones (on the
 * engine's list) in the engine. */
/* Every rank has its ports (the engine's wire-up fence): bring each
 * point-to-point link up before tern_init returns.  Not only for the first
 * message's latency: DPDK 22.11's memif panics in EAL's interrupt thread
 * ("Error adding fd N epoll_ctl, Bad file descriptor", rank aborted) when
 * the peer's process dies in the middle of the control-channel handshake,
 * seen in ~1 of 30 runs of tests/engine/peer_killed.sh while the links
 * still came up lazily, under the first transfer.  A peer that dies once
 * its link is up is handled (the link goes down, the VC fails). */
static tern_status_t dpdk_wireup_done(void *state)
{
    tern_dpdk_t *d = state;
    if (!d->per_peer)
        return TERN_OK;
    uint64_t deadline = tern_now_ns() + d->cfg->connect_ms * 1000000ull;
    for (;;) {
        d->now_ns = tern_now_ns();
        int waiting = -1;
        for (int r = 0; r < d->ctx->size; r++) {
            tern_dpdk_vc_t *dv = &d->vcs[r];
            if (dv->vc != NULL && dv->conn != DPDK_VC_DEAD && !tern_dpdk_port_ready(d, &dv->own))
                waiting = r;
        }
        if (waiting < 0)
            return TERN_OK;
        if (d->now_ns > deadline)
            return tern_error(TERN_ERR_PEER_FAILED, "dpdk: port %s to rank %d not up within "
                              "%llu ms of the wire-up (TERN_DPDK_CONNECT_MS): is the peer "
                              "running, with the same TERN_DPDK_VDEV?", d->vcs[waiting].own.name,
                              waiting, (unsigned long long)d->cfg->connect_ms);
        usleep(100); /* the handshake runs in EAL's interrupt threads */
    }
}

static tern_status_t dpdk_vc_destroy(tern_vc_t *vc)
{
    tern_dpdk_vc_t *dv = tern_dpdk_vc(vc);
    if (dv == NULL)
        return TERN_OK;
    dv->conn = DPDK_VC_DEAD;
    tern_pktq_fail_all(&dv->sendq, vc->fail_status);
    tern_dpdk_lmt_drop(dv);
    tern_dpdk_rel_drop(dv);
    return TERN_OK;
}

/* Never blocks: the queue drains and is acked, then the timers report the
 * VC closed. */
static tern_status_t dpdk_vc_terminate(tern_vc_t *vc)
{
    tern_dpdk_vc_t *dv = tern_dpdk_vc(vc);
    if (vc->state != TERN_VC_ACTIVE)
        return TERN_OK;
    if (dv == NULL || dv->conn == DPDK_VC_DEAD) {
        vc->state = TERN_VC_CLOSED;
        return TERN_OK;
    }
    if (dv->ack_due_ns != 0 || dv->ack_now)
        tern_dpdk_send_ctrl(dv, TERN_DPDK_F_ACK, 0); /* the peer may be draining too */
    if (tern_dpdk_vc_idle(dv)) {
        vc->state = TERN_VC_CLOSED;
        return TERN_OK;
    }
    vc->state = TERN_VC_TERMINATING;
    tern_dpdk_mark_active(dv);
    return TERN_OK;
}

/* ---- progress -------------------------------------------------------------- */

static unsigned rx_port(tern_dpdk_t *d, tern_dpdk_port_t *p)
{
    struct rte_mbuf *m[2 * TERN_DPDK_BURST];
    unsigned total = 0;
    for (int round = 0; round < RX_ROUNDS; round++) {
        uint16_t n = tern_dpdk_port_rx(d, p, m, (uint16_t)RTE_DIM(m));
        if (n == 0)
            break;
        d->stats.rx_bursts++;
        for (uint16_t i = 0; i < n; i++) {
            if (i + 1 < n)
                rte_prefetch0(rte_pktmbuf_mtod(m[i + 1], void *));
            tern_dpdk_rx_frame(d, m[i]);
        }
        total += n;
        if (n < TERN_DPDK_BURST)
            break;
    }
    return total;
}

static unsigned dpdk_poll(void *state, int direction)
{
    tern_dpdk_t *d = state;
    (void)direction;
    d->now_ns = tern_now_ns();
    unsigned n = 0;
    if (!d->per_peer) {
        n += rx_port(d, &d->port);
    } else {
        for (int i = 0; i < nvcs(d); i++) {
            tern_dpdk_vc_t *dv = vc_at(d, i);
            if (dv->vc == NULL || dv->conn == DPDK_VC_DEAD)
                continue;
            /* a client brings its link up even with nothing to send (its
             * peer may be waiting to send to it) */
            if (!dv->own.link_up && dv->own.client)
                tern_dpdk_port_ready(d, &dv->own);
            if (dv->own.started)
                n += rx_port(d, &dv->own);
            if (dv->own.fault != NULL && dv->own.link_up)
                tern_dpdk_port_tx(d, &dv->own, NULL, 0); /* frames the shim held back */
        }
    }
    if (!tern_list_empty(&d->active))
        tern_dpdk_timers(d); /* acks and retransmissions: no event for the engine */
    if (!tern_list_empty(&d->reap))
        tern_dpdk_lmt_reap(d);
    if (d->port.fault != NULL)
        tern_dpdk_port_tx(d, &d->port, NULL, 0); /* frames the shim held back */
    return n;
}

/* Idle path: keepalive of every VC heard from; a point-to-point port's
 * faults shim releases what it held. */
static void dpdk_check_peers(void *state)
{
    tern_dpdk_t *d = state;
    const tern_dpdk_config_t *cfg = d->cfg;
    d->now_ns = tern_now_ns();
    uint64_t ka = cfg->keepalive_ms * 1000000ull, limit = cfg->timeout_ms * 1000000ull;
    for (int i = 0; d->per_peer && i < nvcs(d); i++) {
        tern_dpdk_vc_t *dv = vc_at(d, i);
        if (dv->vc == NULL || dv->conn != DPDK_VC_UP || dv->vc->state == TERN_VC_FAILED)
            continue;
        if (tern_dpdk_port_check_link(d, &dv->own) && dv->on_live) {
            tern_dpdk_link_lost(dv);
        } else if (!dv->own.link_up && d->now_ns > dv->own.start_deadline_ns) {
            /* never up, or down and not back (a client that restarts is
             * back within ms): the peer is gone or was never there */
            tern_dpdk_vc_lost(dv, TERN_ERR_PEER_FAILED, "dpdk: port %s to rank %d not up within "
                              "%llu ms (TERN_DPDK_CONNECT_MS): is the peer running, with the "
                              "same TERN_DPDK_VDEV?", dv->own.name, dv->vc->rank,
                              (unsigned long long)cfg->connect_ms);
        }
    }
    if (cfg->keepalive_ms == 0)
        return;
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &d->live)
    {
        tern_dpdk_vc_t *dv = TERN_CONTAINER_OF(pos, tern_dpdk_vc_t, live_link);
        if (dv->conn != DPDK_VC_UP || dv->vc->state == TERN_VC_FAILED)
            continue;
        uint64_t quiet = d->now_ns - dv->last_rx_ns;
        if (quiet > limit) {
            tern_dpdk_vc_lost(dv, TERN_ERR_PEER_FAILED, "dpdk: rank %d silent for %llu ms "
                              "(keepalive every %llu ms, TERN_DPDK_TIMEOUT_MS %llu)",
                              dv->vc->rank, (unsigned long long)(quiet / 1000000),
                              (unsigned long long)cfg->keepalive_ms,
                              (unsigned long long)cfg->timeout_ms);
            continue;
        }
        if (quiet >= ka && d->now_ns - dv->probe_sent_ns >= ka) {
            dv->probe_sent_ns = d->now_ns;
            tern_dpdk_send_ctrl(dv, TERN_DPDK_F_PROBE, TERN_DPDK_FL_ACK_NOW);
        }
    }
}

static tern_status_t dpdk_finalize(void *state)
{
    tern_dpdk_t *d = state;
    if (d == NULL)
        return TERN_OK;
    /* This rank polls no more (after the engine's fence), but a peer may
     * still be in that fence, polling: memif frees the shared regions from
     * EAL's interrupt thread when the other end's process goes away, under
     * a receive or send burst in progress (SIGSEGV, RECIPES.md).  So no
     * rank with dpdk leaves before every one has stopped polling: a fence
     * without progress, bounded (a peer that never finalizes costs a
     * warning and a delay, not a hang).  Every rank of the job has dpdk or
     * none has: it is enabled by the job's settings (TERN_DPDK_VDEV /
     * TERN_DPDK_PORT), and a rank whose dpdk failed fails tern_init.
     * Without a launcher there is no such fence (the engine's finalize
     * barrier and goodbyes over the VCs are all there is). */
    if (d->ctx->size > 1) {
        tern_status_t fst = tern_ctx_exit_fence(d->ctx, 5000);
        if (fst != TERN_OK)
            tern_warn("dpdk: exit barrier: %s; leaving anyway", tern_last_error());
    }
    /* A worker's
     * shared port closes; point-to-point ports are abandoned (see
     * dpdk_port.c: closing races DPDK memif's interrupt thread), with the
     * pool their receive rings draw on. */
    d->finalizing = true; /* tern_mem_release ran: no tern_mem_put from here */
    bool keep_pool = false;
    for (int i = 0; d->vcs != NULL && i < nvcs(d); i++) {
        tern_dpdk_vc_t *dv = vc_at(d, i);
        if ((dv->vc != NULL || i >= d->ctx->size) && d->per_peer &&
            dv->own.id < RTE_MAX_ETHPORTS) {
            tern_dpdk_port_abandon(&dv->own);
            keep_pool = true;
        }
    }
    tern_dpdk_intr_detach(d, &d->port);
    tern_dpdk_port_close(&d->port);
    for (int i = 0; d->vcs != NULL && i < nvcs(d); i++) {
        tern_dpdk_vc_t *dv = vc_at(d, i);
        if (dv->vc != NULL) {
            tern_dpdk_lmt_drop(dv);
            tern_dpdk_rel_drop(dv);
        }
        free(dv->slots);
        free(dv->ooo);
    }
    for (int i = 0; i < d->nremote; i++)
        free(d->remote[i]);
    free(d->remote);
    tern_list_t *l;
    while ((l = tern_list_pop_head(&d->reap)) != NULL) {
        tern_dpdk_lmt_tx_t *t = TERN_CONTAINER_OF(l, tern_dpdk_lmt_tx_t, link);
        if (t->sreq != NULL) /* finalize with the send pending: detached */
            tern_dpdk_req(t->sreq)->tx = NULL;
        free(t); /* its registration went with the engine's cache */
    }
    if (d->pool != NULL && !keep_pool)
        rte_mempool_free(d->pool);
    tern_dpdk_wait_close(d);
    free(d->vcs);
    free(d);
    return TERN_OK;
}

/* ---- memory registration (through the engine's cache) -------------------- */

typedef struct dpdk_memh {
    void *addr;
    size_t len;
    bool mapped;
} dpdk_memh_t;

static tern_status_t dpdk_mem_reg(void *state, void *addr, size_t len, void **memh)
{
    tern_dpdk_t *d = state;
    dpdk_memh_t *h = calloc(1, sizeof(*h));
    if (h == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "dpdk registration");
    long pg = sysconf(_SC_PAGESIZE);
    if (rte_extmem_register(addr, len, NULL, 0, (size_t)pg) != 0) {
        int err = rte_errno;
        free(h);
        return tern_error(err == ENOSPC ? TERN_ERR_NO_RESOURCE : TERN_ERR_IO,
                          "dpdk: rte_extmem_register of %zu bytes at %p: %s", len, addr,
                          rte_strerror(err));
    }
    h->addr = addr;
    h->len = len;
    /* a real device does DMA from it: map it for the device (IOVA = VA) */
    if (!d->port.created && d->port.id < RTE_MAX_ETHPORTS) {
        struct rte_eth_dev_info info;
        if (rte_eth_dev_info_get(d->port.id, &info) == 0 && info.device != NULL) {
            if (rte_dev_dma_map(info.device, addr, (uint64_t)(uintptr_t)addr, len) == 0)
                h->mapped = true;
            else if (rte_errno != ENOTSUP)
                tern_debug("dpdk: rte_dev_dma_map of %zu bytes: %s", len,
                           rte_strerror(rte_errno));
        }
    }
    *memh = h;
    return TERN_OK;
}

static void dpdk_mem_dereg(void *state, void *memh)
{
    tern_dpdk_t *d = state;
    dpdk_memh_t *h = memh;
    if (h->mapped) {
        struct rte_eth_dev_info info;
        if (rte_eth_dev_info_get(d->port.id, &info) == 0 && info.device != NULL)
            rte_dev_dma_unmap(info.device, h->addr, (uint64_t)(uintptr_t)h->addr, h->len);
    }
    if (rte_extmem_unregister(h->addr, h->len) != 0)
        tern_warn("dpdk: rte_extmem_unregister of %zu bytes at %p: %s", h->len, h->addr,
                  rte_strerror(rte_errno));
    free(h);
}

/* ---- counters ---------------------------------------------------------------- */

static int dpdk_counters(void *state, tern_counter_t *out, int max)
{
    const tern_dpdk_t *d = state;
    const tern_dpdk_stats_t *s = &d->stats;
    tern_dpdk_fault_stats_t f = {0};
    if (d->port.fault != NULL)
        tern_dpdk_fault_stats(d->port.fault, &f);
    for (int i = 0; d->per_peer && i < nvcs(d); i++)
        if (vc_at(d, i)->vc != NULL && vc_at(d, i)->own.fault != NULL) {
            tern_dpdk_fault_stats_t g;
            tern_dpdk_fault_stats(vc_at(d, i)->own.fault, &g);
            f.dropped += g.dropped;
            f.held += g.held;
            f.duplicated += g.duplicated;
            f.corrupted += g.corrupted;
        }
    /* what the ports themselves dropped: receive ring full (imissed), no
     * mbuf to receive into (rx_nombuf), bad frames (ierrors) */
    uint64_t missed = 0, nombuf = 0;
    struct rte_eth_stats es;
    if (d->port.started && rte_eth_stats_get(d->port.id, &es) == 0)
        missed += es.imissed + es.ierrors, nombuf += es.rx_nombuf;
    for (int i = 0; d->per_peer && i < nvcs(d); i++)
        if (vc_at(d, i)->vc != NULL && vc_at(d, i)->own.started &&
            rte_eth_stats_get(vc_at(d, i)->own.id, &es) == 0)
            missed += es.imissed + es.ierrors, nombuf += es.rx_nombuf;
    const tern_counter_t all[] = {
        {"dpdk.tx_frames", s->tx_frames},       {"dpdk.rx_frames", s->rx_frames},
        {"dpdk.tx_bursts", s->tx_bursts},       {"dpdk.rx_bursts", s->rx_bursts},
        {"dpdk.tx_full", s->tx_full},           {"dpdk.acks_sent", s->acks_sent},
        {"dpdk.retransmits", s->retransmits},   {"dpdk.fast_retransmits", s->fast_retransmits},
        {"dpdk.probes", s->probes},             {"dpdk.timeouts", s->timeouts},
        {"dpdk.dup_frames", s->dup_frames},     {"dpdk.ooo_frames", s->ooo_frames},
        {"dpdk.bad_frames", s->bad_frames},     {"dpdk.csum_errors", s->csum_errors},
        {"dpdk.window_full", s->window_full},   {"dpdk.zcopy_frames", s->zcopy_frames},
        {"dpdk.copy_frames", s->copy_frames},   {"dpdk.fault_dropped", f.dropped},
        {"dpdk.fault_held", f.held},            {"dpdk.fault_duplicated", f.duplicated},
        {"dpdk.fault_corrupted", f.corrupted},  {"dpdk.port_missed", missed},
        {"dpdk.port_nombuf", nombuf},           {"dpdk.gbn_frames", s->gbn_frames},
        {"dpdk.sleeps", s->sleeps},             {"dpdk.intr_wakeups", s->intr_wakeups},
        {"dpdk.slice_wakeups", s->slice_wakeups},
    };
    int n = (int)(sizeof(all) / sizeof(all[0]));
    for (int i = 0; i < n && i < max; i++)
        out[i] = all[i];
    return n;
}

static const tern_nm_conn_ops_t dpdk_conn = {
    .vc_init_remote = dpdk_vc_init_remote,
    .port_unable = dpdk_port_unable,
};

static const tern_nm_core_ops_t dpdk_core = {
    .reachable = dpdk_reachable,
    .init = dpdk_init,
    .finalize = dpdk_finalize,
    .card = dpdk_card,
    .vc_init = dpdk_vc_init,
    .wireup_done = dpdk_wireup_done,
    .vc_destroy = dpdk_vc_destroy,
    .vc_terminate = dpdk_vc_terminate,
    .poll = dpdk_poll,
    .check_peers = dpdk_check_peers,
    .counters = dpdk_counters,
    .istart_contig_msg = tern_dpdk_istart_contig_msg,
    .send_noncontig = tern_dpdk_send_noncontig,
};

static const tern_nm_lmt_ops_t dpdk_lmt = {
    .modes = tern_dpdk_lmt_modes,
    .choose = tern_dpdk_lmt_choose,
    .initiate = tern_dpdk_lmt_initiate,
    .start_recv = tern_dpdk_lmt_start_recv,
    .start_send = tern_dpdk_lmt_start_send,
    .handle_cookie = tern_dpdk_lmt_handle_cookie,
    .done_send = tern_dpdk_lmt_done_send,
    .done_recv = tern_dpdk_lmt_done_recv,
};

static const tern_nm_wait_ops_t dpdk_wait = {
    .wait_fd = tern_dpdk_wait_fd,
    .arm = tern_dpdk_arm,
    .disarm = tern_dpdk_disarm,
};

/* registration for the put mode's zero-copy frames only: no remote keys */
static const tern_nm_mem_ops_t dpdk_mem = {
    .mem_reg = dpdk_mem_reg,
    .mem_dereg = dpdk_mem_dereg,
};

static const char *dpdk_unavailable(void) { return tern_dpdk_eal_unavailable(); }

static const tern_netmod_desc_t dpdk_netmod = {
    .abi = TERN_NETMOD_ABI,
    .name = "dpdk",
    .priority = 30,
    .reach = "any rank, with a DPDK port (Ethernet; TERN_DPDK_VDEV or TERN_DPDK_PORT)",
    /* a same-host peer (memif, a port peer): the engine's copy beat the
     * framed put at every rendezvous size measured (32 KiB .. 16 MiB,
     * 2.3-5x; bench/RESULTS.md) */
    .cma_threshold = 0,
    .config = &tern_dpdk_config_table,
    .unavailable = dpdk_unavailable,
    .core = &dpdk_core,
    .lmt = &dpdk_lmt,
    .wait = &dpdk_wait,
    .mem = &dpdk_mem,
    .conn = &dpdk_conn,
};
TERN_NETMOD_DEFINE(dpdk_netmod)
