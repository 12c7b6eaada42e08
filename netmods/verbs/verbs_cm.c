/*
 * verbs netmod: the connection manager.  RC queue pairs are made lazily,
 * on the first send in either direction, through datagrams on each worker's
 * UD QP (whose number is in its card, in the worker address), as MVAPICH's on-demand
 * connection manager does:
 *
 *   connector                              acceptor
 *   create QP (INIT), grant credits
 *   REQ {qpn, psn, credits}  --- UD --->   create QP, RTR + RTS to the
 *   (repeated with back-off until          connector's QPN, grant credits
 *    a REP, within TERN_VERBS_CONNECT_MS)  <--- UD ---  REP {qpn, psn, credits}
 *   RTR + RTS to the acceptor's QPN                     (sends wait)
 *   RTU (first RC message) --- RC --->     any RC message: connected
 *
 * The acceptor holds its sends until the RTU: before it, the connector's QP
 * may not be in RTR and would drop them.  A repeated REQ (the REP was lost)
 * gets the same REP again.  When both sides connect at once, the lower
 * (job, rank)'s REQ wins: the higher one connects its own QP to the lower
 * one's and answers REP, and the lower one ignores the higher one's REQ.
 * Datagrams name both ends as (job hash, rank), so ranks of other jobs
 * (tern_connect, ports) are told apart; a REQ carries the connector's card,
 * so a process we have no address of (a client of our port) is answered:
 * the engine gives it a VC (tern_port_incoming) or we drop the REQ.
 * Datagrams are checked (magic, version, ranks, jobs, and the source QPN
 * against the sender's card) before anything is done with them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netmods/verbs/verbs_internal.h"

#define REQ_FIRST_MS 20
#define REQ_MAX_MS 1000

tern_status_t tern_verbs_card_check(const void *data, size_t len, int rank,
                                    const tern_verbs_dev_t *dev, tern_verbs_card_t *out)
{
    tern_verbs_card_t c;
    if (len != sizeof(c))
        return tern_error(TERN_ERR_MALFORMED, "verbs card of rank %d: %zu bytes, want %zu", rank,
                          len, sizeof(c));
    memcpy(&c, data, sizeof(c));
    if (c.magic != TERN_VERBS_MAGIC || c.version != TERN_VERBS_VERSION)
        return tern_error(TERN_ERR_MALFORMED, "verbs card of rank %d: magic %#x version %u (want "
                          "%#x version %u)", rank, c.magic, c.version, TERN_VERBS_MAGIC,
                          TERN_VERBS_VERSION);
    if (c.byte_order != TERN_VERBS_BYTE_ORDER)
        return tern_error(TERN_ERR_UNREACHABLE, "verbs card of rank %d: written in another byte "
                          "order (mixed-endian jobs are not supported)", rank);
    if (c.rank != rank || c.ud_qpn == 0 || c.mtu < IBV_MTU_256 || c.mtu > IBV_MTU_4096 ||
        c.port == 0)
        return tern_error(TERN_ERR_MALFORMED, "verbs card of rank %d: rank %d, UD QPN %u, MTU %u, "
                          "port %u", rank, c.rank, c.ud_qpn, c.mtu, c.port);
    if (c.link_layer != dev->port_attr.link_layer)
        return tern_error(TERN_ERR_UNREACHABLE, "rank %d's verbs port is %s, ours (%s port %u) "
                          "is %s", rank,
                          c.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)" : "InfiniBand",
                          dev->name, dev->port,
                          dev->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)"
                                                                               : "InfiniBand");
    *out = c;
    return TERN_OK;
}

/* ---- address vectors ------------------------------------------------------- */

void tern_verbs_fill_ah(const tern_verbs_t *v, const tern_verbs_card_t *c, struct ibv_ah_attr *ah)
{
    memset(ah, 0, sizeof(*ah));
    ah->dlid = c->lid;
    ah->port_num = v->dev->port;
    if (v->dev->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET) {
        ah->is_global = 1;
        memcpy(ah->grh.dgid.raw, c->gid, 16);
        ah->grh.sgid_index = v->dev->gid_index;
        ah->grh.hop_limit = 64;
    }
}

static tern_status_t need_ah(tern_verbs_vc_t *tv)
{
    if (tv->ah != NULL)
        return TERN_OK;
    struct ibv_ah_attr a;
    tern_verbs_fill_ah(tv->v, &tv->card, &a);
    tv->ah = ibv_create_ah(tv->v->pd, &a);
    if (tv->ah == NULL)
        return tern_verbs_err(TERN_ERR_UNREACHABLE, tv->vc->rank, "ibv_create_ah", errno);
    return TERN_OK;
}

/* RDMA reads our QPs answer at once (max_dest_rd_atomic), told to the peer. */
static uint8_t responder_resources(const tern_verbs_t *v)
{
    int n = v->dev->attr.max_qp_rd_atom;
    return (uint8_t)(n < 1 ? 1 : n > 16 ? 16 : n);
}

/* xorshift64*: a 24-bit PSN of our own (seeded per worker from pid, time
 * and address), so stale packets of a reused QPN do not match and the
 * application's random() sequence is left alone. */
static uint32_t next_psn(tern_verbs_t *v)
{
    if (v->rng == 0)
        v->rng = ((uint64_t)getpid() << 32) ^ tern_now_ns() ^ (uint64_t)(uintptr_t)v ^ 1;
    v->rng ^= v->rng >> 12;
    v->rng ^= v->rng << 25;
    v->rng ^= v->rng >> 27;
    return (uint32_t)((v->rng * 2685821657736338717ull) >> 40) & 0xffffffu;
}

/* ---- UD: the datagrams ------------------------------------------------------------ */

tern_status_t tern_verbs_post_ud_recvs(tern_verbs_t *v, uint32_t first, uint32_t n)
{
    for (uint32_t i = first; i < first + n; i++) {
        struct ibv_sge sge = {(uintptr_t)tern_verbs_slab_buf(&v->udrx, i), v->udrx.size,
                              v->udrx.mr->lkey};
        struct ibv_recv_wr wr = {.wr_id = TERN_VERBS_WR(WR_UD_RECV, i), .sg_list = &sge,
                                 .num_sge = 1},
                           *bad;
        v->stats.post_recv++;
        v->stats.post_recv_wrs++;
        int rc = ibv_post_recv(v->ud, &wr, &bad);
        if (rc != 0)
            return tern_verbs_err(TERN_ERR_NO_RESOURCE, -1, "ibv_post_recv (UD)", rc);
    }
    return TERN_OK;
}

static void cm_send(tern_verbs_vc_t *tv, uint8_t type)
{
    tern_verbs_t *v = tv->v;
    if (need_ah(tv) != TERN_OK || v->ud_tx_busy == TERN_VERBS_UD_SENDS)
        return; /* the connector's timer repeats the REQ; a lost REP gets a new REQ */
    uint32_t b = v->ud_tx_next;
    v->ud_tx_next = (b + 1) % TERN_VERBS_UD_SENDS;
    tern_verbs_cm_msg_t m = {.magic = TERN_VERBS_MAGIC, .version = TERN_VERBS_VERSION,
                             .type = type, .src_rank = v->ctx->rank, .dst_rank = tv->peer_rank,
                             .qpn = tv->qp->qp_num, .psn = tv->psn, .credits = tv->rx_granted,
                             .rd_atomic = responder_resources(v), .src_job = v->job,
                             .dst_job = tv->peer_job, .card = v->card,
                             .rma_qpn = tv->rqp != NULL ? tv->rqp->qp_num : 0,
                             .rma_psn = tv->rpsn};
    memcpy(tern_verbs_slab_buf(&v->udtx, b), &m, sizeof(m));
    struct ibv_sge sge = {(uintptr_t)tern_verbs_slab_buf(&v->udtx, b), sizeof(m),
                          v->udtx.mr->lkey};
    struct ibv_send_wr wr = {.wr_id = TERN_VERBS_WR(WR_UD_SEND, b), .sg_list = &sge,
                             .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
                             .wr.ud = {.ah = tv->ah, .remote_qpn = tv->card.ud_qpn,
                                       .remote_qkey = TERN_VERBS_QKEY}},
                       *bad;
    v->stats.post_send++;
    v->stats.post_send_wrs++;
    int rc = ibv_post_send(v->ud, &wr, &bad);
    if (rc == 0)
        v->ud_tx_busy++;
    else
        tern_warn("verbs: connection %s to rank %d not sent: ibv_post_send (UD): %s",
                  type == TERN_VERBS_CM_REQ ? "request" : "reply", tv->vc->rank, strerror(rc));
}

/* ---- RC queue pairs ------------------------------------------------------------------ */

/* Our share of the SRQ for this peer: its credits, plus the reserve for
 * RTU and credit-only messages (which carry no credit). */
static void grant_credits(tern_verbs_vc_t *tv)
{
    tern_verbs_t *v = tv->v;
    uint32_t want = (uint32_t)v->cfg->credits;
    uint32_t room = v->rx.count - v->srq_target;
    uint32_t grant = want;
    if (room < want + TERN_VERBS_RESERVED_RECVS) {
        grant = room > TERN_VERBS_RESERVED_RECVS + 4 ? room - TERN_VERBS_RESERVED_RECVS : 4;
        static bool warned;
        if (!warned) {
            warned = true;
            tern_warn("verbs: shared receive queue full (TERN_VERBS_SRQ_MAX=%u): rank %d gets "
                      "%u credits instead of %u; RNR retries absorb bursts", v->rx.count,
                      tv->vc->rank, grant, want);
        }
    }
    tv->rx_granted = grant;
    uint32_t add = grant + TERN_VERBS_RESERVED_RECVS;
    v->srq_target = v->srq_target + add > v->rx.count ? v->rx.count : v->srq_target + add;
    v->ngranted++;
}

/*
 * A peer whose credits are about to go back in a message of their own is
 * streaming to us one way: nothing flows back to carry them.  Its grant
 * doubles, up to TERN_VERBS_CREDITS_MAX, so that such messages come once
 * per half grant: 1/256 of its messages at 512, the window UCX's rc flow
 * control grants.  The buffers come only from SRQ room no other peer can
 * need: beyond the base share of every rank of the job not yet granted
 * one (TERN_VERBS_CREDITS + the reserve), so a big job's peers keep their
 * shares and only a job small enough for its SRQ grows any.  A grant never
 * shrinks, as the SRQ target does not.  The new buffers are posted before
 * the credits naming them go out.
 */
uint32_t tern_verbs_grow_grant(tern_verbs_vc_t *tv)
{
    tern_verbs_t *v = tv->v;
    uint32_t max = (uint32_t)v->cfg->credits_max;
    if (tv->rx_granted >= max)
        return 0;
    uint64_t share = v->cfg->credits + TERN_VERBS_RESERVED_RECVS;
    uint64_t peers = v->ctx->size > 1 ? (uint64_t)v->ctx->size - 1 : 0;
    uint64_t unseen = peers > v->ngranted ? peers - v->ngranted : 0;
    uint64_t keep = (uint64_t)v->srq_target + unseen * share;
    if (keep >= v->rx.count)
        return 0;
    uint32_t add = tv->rx_granted;
    if (add > max - tv->rx_granted)
        add = max - tv->rx_granted;
    if (add > v->rx.count - keep)
        add = (uint32_t)(v->rx.count - keep);
    uint32_t target = v->srq_target;
    v->srq_target += add;
    if (tern_verbs_srq_fill(v) != TERN_OK) { /* not posted: no credits name them */
        v->srq_target = target;
        return 0;
    }
    tv->rx_granted += add;
    v->stats.grants_grown++;
    return add;
}

static tern_status_t qp_create(tern_verbs_vc_t *tv)
{
    tern_verbs_t *v = tv->v;
    const tern_verbs_config_t *cfg = v->cfg;
    /* No device attribute says how much inline data a QP can take: ask for
     * TERN_VERBS_INLINE and halve it while the device refuses (EINVAL),
     * then remember what worked for the next QPs. */
    uint32_t want = v->qps_made ? v->max_inline : (uint32_t)cfg->max_inline;
    struct ibv_qp_init_attr ia;
    for (;;) {
        ia = (struct ibv_qp_init_attr){
            .send_cq = v->scq, .recv_cq = v->rcq, .srq = v->srq, .qp_type = IBV_QPT_RC,
            .cap = {.max_send_wr = (uint32_t)cfg->tx_depth, .max_send_sge = 2,
                    .max_inline_data = want},
            .sq_sig_all = 0,
        };
        tv->qp = ibv_create_qp(v->pd, &ia);
        if (tv->qp != NULL || errno != EINVAL || want == 0)
            break;
        want /= 2;
    }
    if (tv->qp == NULL)
        return tern_verbs_err(TERN_ERR_NO_RESOURCE, tv->vc->rank, "ibv_create_qp (RC)", errno);
    if (!v->qps_made && want < cfg->max_inline)
        tern_debug("verbs %s: inline sends up to %u bytes (TERN_VERBS_INLINE=%llu is more than "
                   "the device takes)", v->dev->name, want, (unsigned long long)cfg->max_inline);
    /* what the device granted, not what was asked: the send queue's depth
     * is the netmod's accounting (TERN_VERBS_TX_DEPTH, fitted to max_qp_wr),
     * and a header and its data are two SGEs */
    if (ia.cap.max_send_wr < cfg->tx_depth || ia.cap.max_send_sge < 2) {
        ibv_destroy_qp(tv->qp);
        tv->qp = NULL;
        return tern_error(TERN_ERR_NO_RESOURCE, "verbs %s: ibv_create_qp (RC) granted %u work "
                          "requests and %u SGEs (%llu and 2 asked)", v->dev->name,
                          ia.cap.max_send_wr, ia.cap.max_send_sge,
                          (unsigned long long)cfg->tx_depth);
    }
    v->qps_made = true;
    v->max_inline = ia.cap.max_inline_data < want ? ia.cap.max_inline_data : want;
    tv->psn = next_psn(v);
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = v->dev->port,
                            .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
                                               IBV_ACCESS_REMOTE_WRITE};
    int rc = ibv_modify_qp(tv->qp, &a,
                           IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    tv->txe = rc == 0 ? calloc(cfg->tx_depth, sizeof(*tv->txe)) : NULL;
    if (tv->txe == NULL) { /* unwind: the VC stays without a QP */
        tern_status_t st = rc != 0 ? tern_verbs_err(TERN_ERR_NO_RESOURCE, tv->vc->rank,
                                                    "ibv_modify_qp (RC to INIT)", rc)
                                   : tern_error(TERN_ERR_NO_MEMORY, "verbs send queue of rank %d",
                                                tv->vc->rank);
        ibv_destroy_qp(tv->qp);
        tv->qp = NULL;
        return st;
    }
    tern_status_t st = tern_verbs_qpn_put(&v->qpns, tv->qp->qp_num, tv);
    if (st != TERN_OK) {
        free(tv->txe);
        tv->txe = NULL;
        ibv_destroy_qp(tv->qp);
        tv->qp = NULL;
        return st;
    }
    for (uint64_t i = 0; i < cfg->tx_depth; i++)
        tv->txe[i].buf = -1;
    tv->sq_head = tv->sq_tail = 0;
    tv->unsignaled = 0;
    v->stats.connections++;
    tern_list_push_tail(&v->live, &tv->live_link);
    grant_credits(tv);
    tern_verbs_rma_create(tv); /* none: one-sided by packets */
    return tern_verbs_srq_fill(v);
}

/* RDMA reads we keep outstanding: what our device can issue, no more than
 * the peer answers at once (its responder resources, from REQ / REP:
 * exceeding them is an invalid request on mixed HCA models). */
static uint8_t initiator_depth(const struct ibv_device_attr *da, uint8_t peer)
{
    int n = da->max_qp_init_rd_atom;
    n = n < 1 ? 1 : n > 16 ? 16 : n;
    return (uint8_t)(peer >= 1 && peer < n ? peer : n);
}

/* Once per worker, on its first connected QP: the transport timers the
 * device holds, read back (ibv_query_qp) against what was set.
 * A device may round or cap them; the netmod's failure detection then runs
 * on the device's values, and a warning says which.  A query the device
 * refuses changes nothing. */
static void read_back_timers(tern_verbs_vc_t *tv, struct ibv_qp *qp, const struct ibv_qp_attr *set)
{
    tern_verbs_t *v = tv->v;
    struct ibv_qp_attr q;
    struct ibv_qp_init_attr qi;
    v->timers_read = true;
    if (ibv_query_qp(qp, &q, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY, &qi) != 0)
        return;
    if (q.timeout != set->timeout || q.retry_cnt != set->retry_cnt ||
        q.rnr_retry != set->rnr_retry)
        tern_warn("verbs %s: the device holds ACK timeout %u, retry count %u, RNR retry %u "
                  "(TERN_VERBS_TIMEOUT=%u, _RETRY_COUNT=%u, _RNR_RETRY=%u were set)",
                  v->dev->name, q.timeout, q.retry_cnt, q.rnr_retry, set->timeout,
                  set->retry_cnt, set->rnr_retry);
}

/* RESET/INIT -> RTR -> RTS of qp (first send PSN my_psn) to the peer's
 * qpn (its first PSN psn). */
static tern_status_t qp_connect_one(tern_verbs_vc_t *tv, struct ibv_qp *qp, uint32_t my_psn,
                                    uint32_t qpn, uint32_t psn)
{
    tern_verbs_t *v = tv->v;
    const tern_verbs_config_t *cfg = v->cfg;
    const struct ibv_device_attr *da = &v->dev->attr;
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR,
                            .path_mtu = tv->card.mtu < v->dev->port_attr.active_mtu
                                            ? (enum ibv_mtu)tv->card.mtu
                                            : v->dev->port_attr.active_mtu,
                            .dest_qp_num = qpn, .rq_psn = psn,
                            .max_dest_rd_atomic = responder_resources(v), .min_rnr_timer = 12};
    tern_verbs_fill_ah(v, &tv->card, &a.ah_attr);
    int rc = ibv_modify_qp(qp, &a,
                           IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                               IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (rc != 0)
        return tern_verbs_err(TERN_ERR_UNREACHABLE, tv->vc->rank, "ibv_modify_qp (RC to RTR)",
                              rc);
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = (uint8_t)cfg->timeout,
                             .retry_cnt = (uint8_t)cfg->retry_cnt,
                             .rnr_retry = (uint8_t)cfg->rnr_retry, .sq_psn = my_psn,
                             .max_rd_atomic = initiator_depth(da, tv->peer_rd_atomic)};
    rc = ibv_modify_qp(qp, &a,
                       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                           IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
    if (rc != 0)
        return tern_verbs_err(TERN_ERR_UNREACHABLE, tv->vc->rank, "ibv_modify_qp (RC to RTS)",
                              rc);
    if (!v->timers_read)
        read_back_timers(tv, qp, &a);
    return TERN_OK;
}

static tern_status_t qp_connect(tern_verbs_vc_t *tv, uint32_t qpn, uint32_t psn)
{
    return qp_connect_one(tv, tv->qp, tv->psn, qpn, psn);
}

/* The peer's RMA QP, from its REQ / REP: ours connected to it, or dropped
 * when it has none (one-sided by packets). */
void tern_verbs_rma_connect(tern_verbs_vc_t *tv, uint32_t qpn, uint32_t psn)
{
    if (tv->rqp == NULL)
        return;
    if (qpn == 0 || qp_connect_one(tv, tv->rqp, tv->rpsn, qpn, psn) != TERN_OK) {
        if (qpn != 0)
            tern_debug("%s (the one-sided QP: packets carry one-sided operations)",
                       tern_last_error());
        tern_verbs_rma_drop(tv);
    }
}

/* Destroy tv's QP now (finalize, or a retired QP that drained): what it
 * still held comes back. */
void tern_verbs_qp_drop(tern_verbs_vc_t *tv)
{
    tern_verbs_t *v = tv->v;
    tern_verbs_rma_drop(tv);
    if (tv->qp != NULL) {
        tern_verbs_qpn_del(v->qpns, tv->qp->qp_num);
        ibv_destroy_qp(tv->qp);
        tv->qp = NULL;
        tern_list_del(&tv->live_link);
        for (uint64_t s = tv->sq_tail; s != tv->sq_head; s++) {
            tern_verbs_txe_t *e = &tv->txe[s % v->cfg->tx_depth];
            if (e->buf >= 0)
                v->tx_free[v->ntx_free++] = e->buf;
            *e = (tern_verbs_txe_t){.buf = -1};
        }
        v->scq_outstanding -= (uint32_t)(tv->sq_head - tv->sq_tail);
        tv->sq_tail = tv->sq_head;
    }
    free(tv->txe);
    tv->txe = NULL;
    if (tv->ah != NULL)
        ibv_destroy_ah(tv->ah);
    tv->ah = NULL;
}

/*
 * The VC failed: stop its QP without destroying it yet.  Destroying a QP
 * attached to an SRQ makes some drivers (mlx5) drop its unpolled receive
 * completions and free their SRQ entries behind our back (those buffers
 * would never be reposted), and a QP destroyed with work in flight gives
 * no sign of when the HCA stopped touching our bounce buffers.  So: ERR
 * now (the HCA stops, outstanding work requests complete flushed), keep
 * the QPN mapped so every completion of it is still taken and its buffers
 * come back, and destroy it once its send queue has drained and
 * TERN_VERBS_RETIRE_NS have passed for its last receive completions
 * (tern_verbs_reap).  Requests named by its work requests are forgotten
 * here: the engine completes them with the VC's status.
 */
void tern_verbs_qp_retire(tern_verbs_vc_t *tv)
{
    tern_verbs_t *v = tv->v;
    tv->conn = VC_DEAD;
    if (tv->qp == NULL)
        return;
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
    if (ibv_modify_qp(tv->qp, &a, IBV_QP_STATE) != 0) {
        tern_verbs_qp_drop(tv); /* cannot stop it: destroy it at once */
        return;
    }
    for (uint64_t s = tv->sq_tail; s != tv->sq_head; s++)
        tv->txe[s % v->cfg->tx_depth].req = NULL;
    if (tv->rqp != NULL) /* stops too; its operations are let go (tern_verbs_rma_fail) */
        (void)ibv_modify_qp(tv->rqp, &a, IBV_QP_STATE);
    tern_list_del(&tv->live_link);
    tern_list_push_tail(&v->retired, &tv->live_link);
    tv->retire_ns = tern_now_ns();
}

void tern_verbs_reap(tern_verbs_t *v, uint64_t now)
{
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &v->retired)
    {
        tern_verbs_vc_t *tv = TERN_CONTAINER_OF(pos, tern_verbs_vc_t, live_link);
        if (tv->sq_tail == tv->sq_head && tv->rtail == tv->rhead && tv->namo_pend == 0 &&
            now - tv->retire_ns >= TERN_VERBS_RETIRE_NS)
            tern_verbs_qp_drop(tv);
    }
}

static void cm_fail(tern_verbs_vc_t *tv, tern_status_t st)
{
    char why[384];
    snprintf(why, sizeof(why), "%s", tern_last_error());
    tern_vc_fail(tv->vc, st, why);
}

tern_status_t tern_verbs_connect(tern_verbs_vc_t *tv)
{
    if (tv->conn != VC_IDLE)
        return TERN_OK;
    tern_status_t st = qp_create(tv);
    if (st != TERN_OK)
        return st;
    uint64_t now = tern_now_ns();
    tv->conn = VC_CONNECTING;
    tv->connect_deadline_ns = now + tv->v->cfg->connect_ms * 1000000ull;
    tv->req_ms = REQ_FIRST_MS;
    tv->next_req_ns = now + tv->req_ms * 1000000ull;
    cm_send(tv, TERN_VERBS_CM_REQ);
    return TERN_OK;
}

/* The connector got the REP (or the acceptor its RTU): sends may go. */
void tern_verbs_connected(tern_verbs_vc_t *tv)
{
    tv->conn = VC_CONNECTED;
    tv->rma_up = tv->rqp != NULL; /* both ends of it are past RTR now */
    tern_verbs_amo_drain(tv);      /* atomics that waited for it: posted, or packets */
    tern_verbs_mark_pending(tv);
    tern_vc_connection_up(tv->vc); /* BYE at once if we terminated the VC meanwhile */
}

/* The connector's RTU, the first message on its RC QP (signaled, from the
 * send CQ's control reserve).  Until it is posted nothing else may go:
 * a send CQ at its limit leaves the VC in VC_RTU_PENDING, retried by
 * tern_verbs_progress_vc. */
tern_status_t tern_verbs_send_rtu(tern_verbs_vc_t *tv)
{
    unsigned kind = tv->rqp != NULL ? TERN_VERBS_IMM_RTU : TERN_VERBS_IMM_RTU_NORMA;
    struct ibv_send_wr wr = {.opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_INLINE,
                             .imm_data = htonl(TERN_VERBS_IMM(kind, 0))};
    tern_status_t st = tern_verbs_post(tv, &wr, (tern_verbs_txe_t){.op = OP_SEND, .buf = -1},
                                       TERN_VERBS_POST_CONTROL);
    if (st == TERN_ERR_AGAIN) {
        tv->conn = VC_RTU_PENDING;
        tern_verbs_mark_pending(tv);
        return TERN_OK;
    }
    if (st != TERN_OK) {
        cm_fail(tv, st);
        return st;
    }
    tern_verbs_connected(tv);
    return TERN_OK;
}

static void on_req(tern_verbs_vc_t *tv, const tern_verbs_cm_msg_t *m)
{
    tern_verbs_t *v = tv->v;
    int me = v->ctx->rank;
    switch (tv->conn) {
    case VC_CONNECTING:
        if (v->job < m->src_job || (v->job == m->src_job && me < m->src_rank))
            return; /* our REQ wins; the peer answers it */
        break;      /* theirs wins: connect our QP to theirs */
    case VC_ACCEPTED:
        if (m->qpn == tv->remote_qpn)
            cm_send(tv, TERN_VERBS_CM_REP); /* our REP was lost */
        return;
    case VC_IDLE:
        if (qp_create(tv) != TERN_OK) {
            cm_fail(tv, TERN_ERR_NO_RESOURCE);
            return;
        }
        tv->connect_deadline_ns = tern_now_ns() + tv->v->cfg->connect_ms * 1000000ull;
        break;
    default:
        return; /* connected (a late copy of the REQ) or dead */
    }
    tv->peer_rd_atomic = m->rd_atomic;
    tern_status_t st = qp_connect(tv, m->qpn, m->psn);
    if (st != TERN_OK) {
        cm_fail(tv, st);
        return;
    }
    tern_verbs_rma_connect(tv, m->rma_qpn, m->rma_psn);
    tv->tx_credits = m->credits;
    tv->remote_qpn = m->qpn;
    tv->conn = VC_ACCEPTED;
    cm_send(tv, TERN_VERBS_CM_REP);
}

static void on_rep(tern_verbs_vc_t *tv, const tern_verbs_cm_msg_t *m)
{
    if (tv->conn != VC_CONNECTING)
        return; /* a copy of a REP we already took */
    tv->peer_rd_atomic = m->rd_atomic;
    tern_status_t st = qp_connect(tv, m->qpn, m->psn);
    if (st != TERN_OK) {
        cm_fail(tv, st);
        return;
    }
    tern_verbs_rma_connect(tv, m->rma_qpn, m->rma_psn);
    tv->tx_credits = m->credits;
    tv->remote_qpn = m->qpn;
    (void)tern_verbs_send_rtu(tv);
}

/* The VC a connection message names: a rank of this job, of a job we know
 * (its address was given), or, for a REQ, a process the engine takes as a
 * port peer; NULL when none. */
static tern_verbs_vc_t *vc_of_msg(tern_verbs_t *v, const tern_verbs_cm_msg_t *m)
{
    if (m->src_job == v->job) {
        if (m->src_rank >= v->ctx->size || m->src_rank == v->ctx->rank)
            return NULL;
        return &v->vcs[m->src_rank];
    }
    for (int i = 0; i < v->nremote; i++)
        if (v->remote[i]->peer_job == m->src_job && v->remote[i]->peer_rank == m->src_rank)
            return v->remote[i];
    tern_verbs_card_t card;
    if (m->type != TERN_VERBS_CM_REQ ||
        tern_verbs_card_check(&m->card, sizeof(m->card), m->src_rank, v->dev, &card) != TERN_OK)
        return NULL;
    tern_vc_t *vc = tern_port_incoming(v->worker, v, m->src_job, m->src_rank);
    if (vc == NULL || tern_verbs_remote_add(v, vc, m->src_job, m->src_rank, &card) != TERN_OK)
        return NULL;
    return v->remote[v->nremote - 1];
}

void tern_verbs_cm_recv(tern_verbs_t *v, const void *buf, size_t len, uint32_t src_qpn)
{
    tern_verbs_cm_msg_t m;
    if (len < sizeof(m))
        return;
    memcpy(&m, buf, sizeof(m));
    if (m.magic != TERN_VERBS_MAGIC || m.version != TERN_VERBS_VERSION ||
        m.dst_rank != v->ctx->rank || m.dst_job != v->job || m.src_rank < 0 || m.qpn == 0 ||
        m.credits == 0 || m.credits > 0xffffffu) {
        tern_debug("verbs: datagram from UD QP %u dropped (not a connection message for rank %d)",
                   src_qpn, v->ctx->rank);
        return;
    }
    tern_verbs_vc_t *tv = vc_of_msg(v, &m);
    if (tv == NULL || tv->vc == NULL || tv->vc->nm_vc != tv || tv->card.ud_qpn != src_qpn ||
        tv->vc->state == TERN_VC_FAILED) {
        tern_debug("verbs: connection message from rank %d (UD QP %u) dropped", m.src_rank,
                   src_qpn);
        return;
    }
    if (m.type == TERN_VERBS_CM_REQ)
        on_req(tv, &m);
    else if (m.type == TERN_VERBS_CM_REP)
        on_rep(tv, &m);
}

void tern_verbs_cm_timers(tern_verbs_t *v, uint64_t now)
{
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &v->live)
    {
        tern_verbs_vc_t *tv = TERN_CONTAINER_OF(pos, tern_verbs_vc_t, live_link);
        if (tv->conn != VC_CONNECTING && tv->conn != VC_ACCEPTED)
            continue;
        if (now >= tv->connect_deadline_ns) {
            tern_error(TERN_ERR_UNREACHABLE, "verbs: rank %d did not %s within %llu ms "
                       "(TERN_VERBS_CONNECT_MS; its LID %u, UD QPN %u)", tv->vc->rank,
                       tv->conn == VC_CONNECTING ? "answer our connection request"
                                                 : "confirm the connection",
                       (unsigned long long)v->cfg->connect_ms, tv->card.lid, tv->card.ud_qpn);
            cm_fail(tv, TERN_ERR_UNREACHABLE);
            continue;
        }
        if (tv->conn == VC_CONNECTING && now >= tv->next_req_ns) {
            cm_send(tv, TERN_VERBS_CM_REQ);
            tv->req_ms = tv->req_ms * 2 > REQ_MAX_MS ? REQ_MAX_MS : tv->req_ms * 2;
            tv->next_req_ns = now + tv->req_ms * 1000000ull;
        }
    }
}
