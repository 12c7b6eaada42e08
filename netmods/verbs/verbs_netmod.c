/*
 * verbs netmod: registration, wire-up, VCs, waiting, memory registration;
 * the capability tables.  See verbs_internal.h for the shape and docs/verbs.md for
 * what was run where.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netmods/verbs/verbs_internal.h"

/* ---- wire-up ------------------------------------------------------------- */

/* Any other rank, when this process has a usable device: priority puts
 * shm first on a node, so verbs carries off-node peers unless
 * TERN_NETMODS leaves shm out. */
static bool verbs_reachable(tern_context_t *ctx, int rank)
{
    return rank != ctx->rank && tern_verbs_available(NULL);
}

static tern_status_t verbs_init(tern_worker_t *w, const void *config, void **shared, void **state)
{
    const tern_verbs_config_t *cfg = config;
    tern_context_t *ctx = w->ctx;
    tern_verbs_t *v = calloc(1, sizeof(*v));
    if (v == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "verbs netmod state");
    *state = v;
    v->ctx = ctx;
    v->worker = w;
    v->cfg_dev = *cfg; /* fitted to the device by tern_verbs_worker_open */
    v->cfg = &v->cfg_dev;
    v->job = tern_ctx_job_hash(ctx);
    tern_list_init(&v->live);
    tern_list_init(&v->retired);
    tern_list_init(&v->pending);
    if (*shared == NULL) {
        tern_status_t st = tern_verbs_dev_open(cfg, (tern_verbs_dev_t **)shared);
        if (st != TERN_OK)
            return st;
    } else {
        ((tern_verbs_dev_t *)*shared)->refs++;
    }
    v->dev = *shared;
    v->vcs = calloc((size_t)ctx->size, sizeof(*v->vcs));
    v->qpns = tern_verbs_qpn_map_new(ctx->size);
    if (v->vcs == NULL || v->qpns == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "verbs VC table for %d ranks", ctx->size);
    tern_status_t st = tern_verbs_worker_open(v);
    if (st != TERN_OK)
        return st;
    const tern_verbs_dev_t *d = v->dev;
    tern_verbs_card_t card = {.magic = TERN_VERBS_MAGIC, .version = TERN_VERBS_VERSION,
                              .link_layer = d->port_attr.link_layer, .port = d->port,
                              .byte_order = TERN_VERBS_BYTE_ORDER, .rank = ctx->rank,
                              .lid = d->port_attr.lid, .mtu = (uint8_t)d->port_attr.active_mtu,
                              .gid_index = d->gid_index, .ud_qpn = v->ud->qp_num};
    memcpy(card.gid, d->gid.raw, 16);
    v->card = card;
    return TERN_OK;
}

static tern_status_t verbs_card(void *state, void *buf, size_t *len)
{
    tern_verbs_t *v = state;
    if (*len < sizeof(v->card))
        return tern_error(TERN_ERR_INVALID_PARAM, "verbs: a card needs %zu bytes",
                          sizeof(v->card));
    memcpy(buf, &v->card, sizeof(v->card));
    *len = sizeof(v->card);
    return TERN_OK;
}

static tern_status_t verbs_finalize(void *state)
{
    tern_verbs_t *v = state;
    if (v == NULL)
        return TERN_OK;
    if (v->vcs != NULL)
        for (int r = 0; r < v->ctx->size; r++)
            if (v->vcs[r].vc != NULL)
                tern_verbs_qp_drop(&v->vcs[r]);
    for (int i = 0; i < v->nremote; i++)
        tern_verbs_qp_drop(v->remote[i]);
    tern_verbs_worker_close(v);
    tern_verbs_dev_close(v->dev);
    if (v->qpns != NULL)
        tern_verbs_qpn_map_free(v->qpns);
    free(v->vcs);
    for (int i = 0; i < v->nremote; i++)
        free(v->remote[i]);
    free(v->remote);
    free(v);
    return TERN_OK;
}

void tern_verbs_vc_setup(tern_verbs_t *v, tern_verbs_vc_t *tv, tern_vc_t *vc, uint32_t job,
                         int rank)
{
    tv->vc = vc;
    tv->v = v;
    tv->peer_job = job;
    tv->peer_rank = rank;
    tv->conn = VC_IDLE;
    tern_pktq_init(&tv->sendq);
    tern_list_init(&tv->rdmaq);
    tern_list_init(&tv->live_link);
    tern_list_init(&tv->pend_link);
    tern_list_init(&tv->amo_pend);
    vc->nm_vc = tv;
}

static tern_status_t verbs_vc_init(void *state, tern_vc_t *vc, const void *card, size_t len)
{
    tern_verbs_t *v = state;
    tern_verbs_vc_t *tv = &v->vcs[vc->rank];
    tern_status_t st = tern_verbs_card_check(card, len, vc->rank, v->dev, &tv->card);
    if (st != TERN_OK)
        return st;
    tern_verbs_vc_setup(v, tv, vc, v->job, vc->rank);
    return TERN_OK;
}

tern_status_t tern_verbs_remote_add(tern_verbs_t *v, tern_vc_t *vc, uint32_t job, int rank,
                                    const tern_verbs_card_t *card)
{
    tern_verbs_vc_t **r = tern_remote_table_room(v->remote, v->nremote, &v->remote_cap, sizeof(*r));
    if (r == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "verbs: table of %d VCs to other jobs",
                          v->nremote + 1);
    v->remote = r;
    tern_verbs_vc_t *tv = calloc(1, sizeof(*tv));
    if (tv == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "verbs: VC to job %08x rank %d", job, rank);
    tv->card = *card;
    tern_verbs_vc_setup(v, tv, vc, job, rank);
    v->remote[v->nremote++] = tv;
    return TERN_OK;
}

/* Another job's rank (tern_connect, a port, tern_peer_insert). */
static tern_status_t verbs_vc_init_remote(void *state, tern_vc_t *vc, uint32_t job, int rank,
                                          const void *data, size_t len)
{
    tern_verbs_t *v = state;
    tern_verbs_card_t card;
    tern_status_t st = tern_verbs_card_check(data, len, rank, v->dev, &card);
    return st == TERN_OK ? tern_verbs_remote_add(v, vc, job, rank, &card) : st;
}

/* The VC failed: requests only we hold fail here, rendezvous ones (on the
 * engine's list) in the engine; the QP goes with what it held. */
static tern_status_t verbs_vc_destroy(tern_vc_t *vc)
{
    tern_verbs_vc_t *tv = tern_verbs_vc(vc);
    if (tv == NULL)
        return TERN_OK;
    /* the HCA stops first, then what its work named is let go */
    tern_verbs_qp_retire(tv);
    tern_verbs_rma_fail(tv, vc->fail_status);
    tern_pktq_fail_all(&tv->sendq, vc->fail_status);
    tern_verbs_lmt_drop(tv);
    if (tv->on_pending) {
        tern_list_del(&tv->pend_link);
        tv->on_pending = false;
    }
    return TERN_OK;
}

/* Never blocks: what is queued goes out, a flush makes the unsignaled tail
 * complete, then poll reports the VC closed.  A VC with a QP (connected, or
 * our REQ out) ends its stream with BYE (engine_internal.h,
 * tern_vc_say_bye): once we destroy the QP, the peer's next keepalive or
 * flush to it fails (retry exceeded), and after our BYE that failure is a
 * close, not a warning; a QP connected later says BYE at once
 * (verbs_cm.c).  A VC that never had a QP says nothing. */
static tern_status_t verbs_vc_terminate(tern_vc_t *vc)
{
    tern_verbs_vc_t *tv = tern_verbs_vc(vc);
    if (vc->state != TERN_VC_ACTIVE)
        return TERN_OK;
    if (tv == NULL || tv->conn == VC_IDLE || tv->conn == VC_DEAD) {
        vc->state = TERN_VC_CLOSED;
        return TERN_OK;
    }
    vc->state = TERN_VC_TERMINATING;
    tern_vc_say_bye(vc); /* a failure fails the VC, with its message */
    if (vc->state == TERN_VC_TERMINATING)
        tern_verbs_mark_pending(tv);
    return TERN_OK;
}

static void verbs_check_peers(void *state)
{
    tern_verbs_t *v = state;
    uint64_t now = tern_now_ns();
    tern_verbs_cm_timers(v, now);
    tern_verbs_keepalive(v, now);
    tern_verbs_reap(v, now);
    if (v->worker->index == 0)
        tern_verbs_async_events(v);
}

/* ---- block mode: the completion channel ---------------------------------- */

static int verbs_wait_fd(void *state)
{
    tern_verbs_t *v = state;
    return v->channel != NULL ? v->channel->fd : -1;
}

/* Ask for an event on the next completion of either CQ; the engine polls
 * once more after arming, which catches a completion that came before.  A
 * connection being made needs no timer to wake us: the peer's REP (or RTU)
 * lands on the receive CQ; only a lost datagram waits out TERN_HEALTH_MS
 * for its repetition. */
static bool verbs_arm(void *state)
{
    tern_verbs_t *v = state;
    v->stats.req_notify += 2;
    return ibv_req_notify_cq(v->rcq, 0) == 0 && ibv_req_notify_cq(v->scq, 0) == 0;
}

static void verbs_disarm(void *state)
{
    tern_verbs_t *v = state;
    struct ibv_cq *cq;
    void *cq_ctx;
    unsigned nr = 0, ns = 0;
    while (ibv_get_cq_event(v->channel, &cq, &cq_ctx) == 0) {
        if (cq == v->rcq)
            nr++;
        else
            ns++;
    }
    if (nr)
        ibv_ack_cq_events(v->rcq, nr);
    if (ns)
        ibv_ack_cq_events(v->scq, ns);
}

/* ---- memory registration (through the engine's cache) -------------------- */

/* A packed remote key: what a peer's RDMA needs, and an FNV-1a check of
 * the rest (each FNV-1a step is a bijection of the state, so any one
 * damaged byte changes the check: a damaged key is refused, not used). */
typedef struct tern_verbs_rkey {
    uint32_t magic;
    uint32_t rkey;
    uint64_t addr, len;
    uint32_t check;
    uint32_t reserved;
} tern_verbs_rkey_t;
static_assert(sizeof(tern_verbs_rkey_t) == 32, "verbs remote key is a wire format");
static_assert(sizeof(tern_verbs_rkey_t) <= TERN_RKEY_MAX, "verbs remote key fits");

static uint32_t rkey_check(const tern_verbs_rkey_t *k)
{
    const uint8_t *p = (const uint8_t *)k;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < offsetof(tern_verbs_rkey_t, check); i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static tern_status_t verbs_mem_reg(void *state, void *addr, size_t len, void **memh)
{
    tern_verbs_t *v = state;
    struct ibv_mr *mr = ibv_reg_mr(v->pd, addr, len,
                                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
                                       IBV_ACCESS_REMOTE_WRITE);
    if (mr == NULL)
        return tern_error(errno == ENOMEM || errno == EAGAIN ? TERN_ERR_NO_RESOURCE : TERN_ERR_IO,
                          "verbs %s: ibv_reg_mr of %zu bytes at %p: %s", v->dev->name, len, addr,
                          strerror(errno));
    *memh = mr;
    return TERN_OK;
}

void tern_verbs_mr_dereg(void *state, void *mr)
{
    (void)state;
    int rc = ibv_dereg_mr(mr);
    if (rc != 0)
        tern_warn("verbs: ibv_dereg_mr: %s", strerror(rc));
}

static tern_status_t verbs_rkey_pack(void *state, void *memh, const void *addr, size_t len,
                                     void *buf, size_t *buflen)
{
    (void)state;
    tern_verbs_rkey_t k = {.magic = TERN_VERBS_MAGIC, .rkey = ((struct ibv_mr *)memh)->rkey,
                           .addr = (uint64_t)(uintptr_t)addr, .len = len};
    k.check = rkey_check(&k);
    if (*buflen < sizeof(k))
        return tern_error(TERN_ERR_INVALID_PARAM, "verbs remote key: %zu bytes of room, needs "
                          "%zu", *buflen, sizeof(k));
    memcpy(buf, &k, sizeof(k));
    *buflen = sizeof(k);
    return TERN_OK;
}

static tern_status_t verbs_rkey_unpack(tern_vc_t *vc, const void *buf, size_t buflen,
                                       tern_rkey_t *rkey)
{
    tern_verbs_rkey_t k;
    if (buflen != sizeof(k))
        return tern_error(TERN_ERR_MALFORMED, "verbs remote key from rank %d: %zu bytes",
                          vc->rank, buflen);
    memcpy(&k, buf, sizeof(k));
    if (k.magic != TERN_VERBS_MAGIC || k.check != rkey_check(&k) || k.reserved != 0 ||
        k.len == 0 || k.addr + k.len < k.addr)
        return tern_error(TERN_ERR_REMOTE_ACCESS, "verbs remote key from rank %d: not a key "
                          "(%llu bytes at %#llx)", vc->rank, (unsigned long long)k.len,
                          (unsigned long long)k.addr);
    *rkey = (tern_rkey_t){.addr = k.addr, .len = k.len, .key = k.rkey};
    return TERN_OK;
}

/* ---- counters ---------------------------------------------------------------- */

static int verbs_counters(void *state, tern_counter_t *out, int max)
{
    const tern_verbs_stats_t *s = &((tern_verbs_t *)state)->stats;
    const tern_counter_t all[] = {
        {"verbs.post_send", s->post_send},   {"verbs.post_send_wrs", s->post_send_wrs},
        {"verbs.post_recv", s->post_recv},   {"verbs.post_recv_wrs", s->post_recv_wrs},
        {"verbs.poll_cq", s->poll_cq},       {"verbs.cqes", s->cqes},
        {"verbs.req_notify", s->req_notify}, {"verbs.inline_sends", s->inline_sends},
        {"verbs.credit_msgs", s->credit_msgs},
        {"verbs.grants_grown", s->grants_grown}, {"verbs.connections", s->connections},
        {"verbs.keepalives", s->keepalives},
        {"verbs.rma_posts", s->rma_posts},
        {"verbs.rma_failed", s->rma_failed},
        {"verbs.amo_posts", s->amo_posts},   {"verbs.amo_local", s->amo_local},
    };
    int n = (int)(sizeof(all) / sizeof(all[0]));
    for (int i = 0; i < n && i < max; i++)
        out[i] = all[i];
    return n;
}

static const tern_nm_conn_ops_t verbs_conn = {
    .vc_init_remote = verbs_vc_init_remote,
};

static const tern_nm_core_ops_t verbs_core = {
    .reachable = verbs_reachable,
    .init = verbs_init,
    .finalize = verbs_finalize,
    .card = verbs_card,
    .vc_init = verbs_vc_init,
    .vc_destroy = verbs_vc_destroy,
    .vc_terminate = verbs_vc_terminate,
    .poll = tern_verbs_poll,
    .check_peers = verbs_check_peers,
    .counters = verbs_counters,
    .istart_contig_msg = tern_verbs_istart_contig_msg,
    .send_noncontig = tern_verbs_send_noncontig,
};

static const tern_nm_lmt_ops_t verbs_lmt = {
    .modes = tern_verbs_lmt_modes,
    .choose = tern_verbs_lmt_choose,
    .initiate = tern_verbs_lmt_initiate,
    .start_recv = tern_verbs_lmt_start_recv,
    .start_send = tern_verbs_lmt_start_send,
    .handle_cookie = tern_verbs_lmt_handle_cookie,
    .done_send = tern_verbs_lmt_done_send,
    .done_recv = tern_verbs_lmt_done_recv,
};

static const tern_nm_wait_ops_t verbs_wait = {
    .wait_fd = verbs_wait_fd,
    .arm = verbs_arm,
    .disarm = verbs_disarm,
};

static const tern_nm_mem_ops_t verbs_mem = {
    .mem_reg = verbs_mem_reg,
    .mem_dereg = tern_verbs_mr_dereg,
    .rkey_pack = verbs_rkey_pack,
    .rkey_unpack = verbs_rkey_unpack,
};

static const char *verbs_unavailable(void)
{
    const char *why;
    return tern_verbs_available(&why) ? NULL : why;
}

static const tern_netmod_desc_t verbs_netmod = {
    .abi = TERN_NETMOD_ABI,
    .name = "verbs",
    .priority = 50,
    .reach = "any rank, with an RDMA device (InfiniBand, RoCE)",
    /* a same-host peer: below 256 KiB RDMA from the registration cache was
     * as fast or faster (fewer syscalls than CMA's page pinning), from it
     * on the engine's copy was as fast or faster (up to 1.3x) and spares
     * the HCA's loopback through PCIe (bench/RESULTS.md) */
    .cma_threshold = 256u << 10,
    .config = &tern_verbs_config_table,
    .unavailable = verbs_unavailable,
    .core = &verbs_core,
    .lmt = &verbs_lmt,
    .wait = &verbs_wait,
    .mem = &verbs_mem,
    .conn = &verbs_conn,
    .rma = &tern_verbs_rma_ops,
};
TERN_NETMOD_DEFINE(verbs_netmod)
