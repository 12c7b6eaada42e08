/*
 * verbs netmod: polling.  One poll reads the receive CQ (SRQ segments of
 * the peers' streams, connection-manager datagrams) and, when something
 * may wait on it, the send CQ (completions of signaled work requests).
 * Consumed SRQ buffers are reposted in batches of REPOST_BATCH, one
 * ibv_post_srq_recv each (as UCX's rc_verbs refills RX_MAX_BATCH = 16 at a
 * time), and only then are their credits returned: a credit never names a
 * buffer that is not posted again.  This cannot stall a peer: one blocked
 * on credits has all of its grant unreturned here, so either a batch is
 * due or half the grant waits to go back (the credit-only message).
 * Then the VCs' queued work moves on and, now and then, the connection
 * manager's timers and the device's async events run.
 */
#include <stdio.h>
#include <string.h>

#include "netmods/verbs/verbs_internal.h"

static tern_status_t wc_status(enum ibv_wc_status s)
{
    switch (s) {
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_LOC_PROT_ERR:
        return TERN_ERR_REMOTE_ACCESS;
    case IBV_WC_LOC_LEN_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_LOC_QP_OP_ERR:
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_BAD_RESP_ERR:
        return TERN_ERR_MALFORMED;
    default: /* RETRY_EXC, RNR_RETRY_EXC, WR_FLUSH, FATAL, ...: the peer or the link */
        return TERN_ERR_PEER_FAILED;
    }
}

static const char *op_name(const tern_verbs_vc_t *tv, const struct ibv_wc *wc)
{
    if (TERN_VERBS_WR_KIND(wc->wr_id) == WR_SRQ)
        return "receive";
    if (tv->txe == NULL)
        return "work request";
    switch (tv->txe[TERN_VERBS_WR_VAL(wc->wr_id) % tv->v->cfg->tx_depth].op) {
    case OP_SEND:
        return "send";
    case OP_READ:
        return "RDMA read";
    case OP_WRITE:
        return "RDMA write";
    case OP_FLUSH:
        return "flush or keepalive (zero-length RDMA write)";
    default:
        return "work request";
    }
}

void tern_verbs_fail_wc(tern_verbs_vc_t *tv, const struct ibv_wc *wc, const char *what)
{
    char why[256];
    snprintf(why, sizeof(why), "verbs %s %s %s rank %d failed: %s (work request %llu, QP %u, "
             "vendor error %#x)", tv->v->dev->name, what, TERN_VERBS_WR_KIND(wc->wr_id) == WR_SRQ
                                                              ? "from" : "to",
             tv->vc->rank, ibv_wc_status_str(wc->status),
             (unsigned long long)TERN_VERBS_WR_VAL(wc->wr_id), wc->qp_num, wc->vendor_err);
    tern_vc_fail(tv->vc, wc_status(wc->status), why);
}

static void on_srq_recv(tern_verbs_t *v, const struct ibv_wc *wc)
{
    uint32_t b = (uint32_t)TERN_VERBS_WR_VAL(wc->wr_id);
    v->srq_posted--;
    v->rx_repost[v->nrepost++] = b; /* whatever happens, the buffer goes back */
    tern_verbs_vc_t *tv = tern_verbs_qpn_get(v->qpns, wc->qp_num);
    if (tv == NULL || tv->vc->state == TERN_VC_FAILED)
        return; /* a QP already dropped */
    if (wc->status != IBV_WC_SUCCESS) {
        tern_verbs_fail_wc(tv, wc, op_name(tv, wc));
        return;
    }
    if (!(wc->wc_flags & IBV_WC_WITH_IMM)) {
        tern_vc_fail(tv->vc, TERN_ERR_MALFORMED, "verbs: a send without immediate data");
        return;
    }
    uint32_t imm = ntohl(wc->imm_data);
    tv->tx_credits += TERN_VERBS_IMM_CREDITS(imm);
    if (TERN_VERBS_IMM_KIND(imm) == TERN_VERBS_IMM_RTU_NORMA)
        tern_verbs_rma_drop(tv); /* the connector's RMA QP is gone: ours is useless */
    if (tv->conn == VC_ACCEPTED) /* the connector's RTU (or what follows it) */
        tern_verbs_connected(tv);
    switch (TERN_VERBS_IMM_KIND(imm)) {
    case TERN_VERBS_IMM_DATA:
        /* a repost falls due when half this peer's grant waits for one */
        if (++tv->rx_consumed >= (tv->rx_granted + 1) / 2)
            v->repost_due = true;
        tern_verbs_mark_pending(tv);
        (void)tern_handle_pkt(tv->vc, tern_verbs_slab_buf(&v->rx, b), wc->byte_len);
        break;
    case TERN_VERBS_IMM_CREDIT:
    case TERN_VERBS_IMM_RTU:
    case TERN_VERBS_IMM_RTU_NORMA:
        if (TERN_VERBS_IMM_CREDITS(imm) != 0)
            tern_verbs_mark_pending(tv);
        break;
    default:
        tern_vc_fail(tv->vc, TERN_ERR_MALFORMED, "verbs: unknown message kind in an immediate");
        break;
    }
}

static void on_recv(tern_verbs_t *v, const struct ibv_wc *wc)
{
    v->stats.cqes++;
    switch (TERN_VERBS_WR_KIND(wc->wr_id)) {
    case WR_SRQ:
        on_srq_recv(v, wc);
        break;
    case WR_UD_RECV: {
        uint32_t b = (uint32_t)TERN_VERBS_WR_VAL(wc->wr_id);
        if (wc->status != IBV_WC_SUCCESS)
            return; /* flushed at finalize */
        if (wc->byte_len > TERN_VERBS_GRH)
            tern_verbs_cm_recv(v, tern_verbs_slab_buf(&v->udrx, b) + TERN_VERBS_GRH,
                               wc->byte_len - TERN_VERBS_GRH, wc->src_qp);
        (void)tern_verbs_post_ud_recvs(v, b, 1);
        break;
    }
    default:
        break;
    }
}

static void on_send(tern_verbs_t *v, const struct ibv_wc *wc)
{
    v->stats.cqes++;
    if (TERN_VERBS_WR_KIND(wc->wr_id) == WR_UD_SEND) {
        v->ud_tx_busy--;
        if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR)
            tern_warn("verbs: a connection datagram failed: %s", ibv_wc_status_str(wc->status));
        return;
    }
    tern_verbs_vc_t *tv = tern_verbs_qpn_get(v->qpns, wc->qp_num);
    if (tv == NULL)
        return; /* its QP was dropped with everything it held */
    if (TERN_VERBS_WR_KIND(wc->wr_id) == WR_RMA) {
        tern_verbs_rma_wc(tv, wc); /* its failures are its own, never the VC's */
        return;
    }
    uint64_t seq = TERN_VERBS_WR_VAL(wc->wr_id);
    if (tv->conn == VC_DEAD) { /* retired: every completion gives its slots back */
        tern_verbs_sq_complete(tv, seq, TERN_ERR_PEER_FAILED, NULL);
        return;
    }
    if (wc->status == IBV_WC_SUCCESS) {
        tern_verbs_sq_complete(tv, seq, TERN_OK, NULL);
        return;
    }
    if (tv->vc->state == TERN_VC_CLOSED) { /* finalizing: the peer may be gone already */
        tern_verbs_sq_complete(tv, seq, TERN_ERR_PEER_FAILED, NULL);
        return;
    }
    if (tv->vc->state != TERN_VC_FAILED)
        tern_verbs_fail_wc(tv, wc, op_name(tv, wc));
}

/* Give the consumed buffers back to the SRQ: one post (one doorbell) per
 * 32 of them. */
#define REPOST_BATCH 16

static void repost(tern_verbs_t *v)
{
    if (tern_verbs_srq_post(v, v->rx_repost, 0, v->nrepost) != TERN_OK)
        tern_warn("%s (the shared receive queue shrinks)", tern_last_error());
    v->nrepost = 0;
    v->repost_due = false;
    /* every buffer consumed so far is posted again: their credits may go
     * back (the VCs that consumed any are on the pending list) */
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &v->pending)
    {
        tern_verbs_vc_t *tv = TERN_CONTAINER_OF(pos, tern_verbs_vc_t, pend_link);
        tv->credits_out += tv->rx_consumed;
        tv->rx_consumed = 0;
    }
}

unsigned tern_verbs_poll(void *state, int direction)
{
    tern_verbs_t *v = state;
    struct ibv_wc wc[TERN_VERBS_POLL_BATCH];
    unsigned n = 0;
    (void)direction;
    v->stats.poll_cq++;
    int k = ibv_poll_cq(v->rcq, TERN_VERBS_POLL_BATCH, wc);
    for (int i = 0; i < k; i++)
        on_recv(v, &wc[i]);
    n += k > 0 ? (unsigned)k : 0;
    /* the send CQ only holds signaled completions (one per signal_every
     * work requests, flushes, RDMA windows): read it when no receive came
     * in, when work waits for send resources, and every 16th poll */
    if (k <= 0 || !tern_list_empty(&v->pending) || v->rma_inflight != 0 || v->amo_parked != 0 ||
        (v->polls & 15u) == 0) {
        v->stats.poll_cq++;
        k = ibv_poll_cq(v->scq, TERN_VERBS_POLL_BATCH, wc);
        for (int i = 0; i < k; i++)
            on_send(v, &wc[i]);
        n += k > 0 ? (unsigned)k : 0;
    }
    if (v->nrepost >= REPOST_BATCH || v->repost_due ||
        (v->nrepost > 0 && v->srq_posted < REPOST_BATCH))
        repost(v);
    if (v->rx_next < v->srq_target)
        (void)tern_verbs_srq_fill(v);
    /* queued work, and credits for the buffers just reposted */
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &v->pending)
    {
        tern_verbs_vc_t *tv = TERN_CONTAINER_OF(pos, tern_verbs_vc_t, pend_link);
        n += tern_verbs_progress_vc(tv);
        if (tv->vc->state == TERN_VC_FAILED || tv->conn == VC_DEAD ||
            (tv->conn != VC_RTU_PENDING && tern_pktq_empty(&tv->sendq) &&
             tern_list_empty(&tv->rdmaq) &&
             tv->rx_consumed == 0 && tv->credits_out < (tv->rx_granted + 1) / 2 &&
             tv->vc->state != TERN_VC_TERMINATING)) {
            tern_list_del(&tv->pend_link);
            tv->on_pending = false;
        }
    }
    if (v->amo_parked != 0) /* atomics waiting for room, a connection or a drained QP */
        tern_verbs_amo_drain_all(v);
    if (v->scq_full) { /* data ran into the send CQ's limit: get the tails signaled */
        v->scq_full = false;
        tern_verbs_flush_all(v);
    }
    if ((++v->polls & 63u) == 0 && !tern_list_empty(&v->live))
        tern_verbs_cm_timers(v, tern_now_ns());
    if ((v->polls & 4095u) == 0 && v->worker->index == 0)
        tern_verbs_async_events(v);
    return n;
}
