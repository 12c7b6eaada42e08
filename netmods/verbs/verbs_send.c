/*
 * verbs netmod: the VC's byte stream and the RC send queue.
 *
 * A packet (engine header + payload) goes out as one or more segments of
 * at most seg_size bytes, each one SEND_WITH_IMM consuming one credit (one
 * of the peer's SRQ buffers).  A segment that fits max_inline is posted
 * inline straight from the caller's header and data (no copy of ours, no
 * registration); a larger one is copied into a registered bounce buffer.
 * Either way the bytes are the HCA's once ibv_post_send returns, so a send
 * completes when its last segment is posted: at most one ibv_post_send per
 * small message, and no request unless something had to wait.
 *
 * Waiting: no credit, a full send queue, a full send CQ or no bounce buffer
 * queue the rest in the VC's engine packet queue (sendq, engine/pktq.h), in
 * order; poll moves it on when credits or completions come back.
 *
 * Selective signalling: a completion is requested every signal_every work
 * requests, when a request fills the send queue, and when bounce buffers
 * run low; a signaled completion implies every earlier one on the QP (RC
 * completes in order), which releases their bounce buffers.  A zero-length
 * RDMA write, signaled, flushes the unsignaled tail when nothing else would
 * (VC termination, bounce buffers all held), as UCX's rc_verbs does.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "netmods/verbs/verbs_internal.h"

void tern_verbs_mark_pending(tern_verbs_vc_t *tv)
{
    tern_verbs_t *v = tv->v;
    if (tv->on_pending)
        return;
    tv->on_pending = true;
    tern_list_push_tail(&v->pending, &tv->pend_link);
}

bool tern_verbs_vc_idle(const tern_verbs_vc_t *tv)
{
    return tern_pktq_empty(&tv->sendq) && tern_list_empty(&tv->rdmaq) &&
           tv->sq_head == tv->sq_tail && tv->rhead == tv->rtail && /* one-sided drained too */
           tv->namo_pend == 0;
}

const char *tern_verbs_post_refused(int rc)
{
    return rc == ENOMEM ? "ibv_post_send refused a work request with room in the send queue "
                          "(ENOMEM: inline data or SGEs beyond what the QP was granted, or "
                          "the QP not in RTS)"
                        : "ibv_post_send refused a work request";
}

tern_status_t tern_verbs_post(tern_verbs_vc_t *tv, struct ibv_send_wr *wr, tern_verbs_txe_t txe,
                              unsigned flags)
{
    tern_verbs_t *v = tv->v;
    uint64_t depth = v->cfg->tx_depth;
    bool control = flags & TERN_VERBS_POST_CONTROL;
    if (tv->qp == NULL)
        return tern_error(TERN_ERR_PEER_FAILED, "verbs: no queue pair to rank %d", tv->vc->rank);
    if (tv->sq_head - tv->sq_tail >= depth - 1)
        return TERN_ERR_AGAIN;
    if (v->scq_outstanding >= (control ? v->scq_size : v->scq_size - TERN_VERBS_SCQ_RESERVE)) {
        v->scq_full = !control;
        return TERN_ERR_AGAIN;
    }
    uint64_t seq = tv->sq_head;
    /* A completion is asked for: when told to, every signal_every work
     * requests, for the last slot of the send queue (a full queue always
     * has a completion coming), when bounce buffers run low, and near the
     * send CQ's data limit (whose slots come back only through signaled
     * completions: each QP's unsignaled tail would otherwise hold them). */
    bool signal = (flags & (TERN_VERBS_POST_SIGNAL | TERN_VERBS_POST_CONTROL)) ||
                  tv->unsignaled + 1 >= v->cfg->signal_every ||
                  tv->sq_head - tv->sq_tail + 2 >= depth || (txe.buf >= 0 && v->ntx_free < 16) ||
                  v->scq_outstanding + 1 + 2 * TERN_VERBS_SCQ_RESERVE >= v->scq_size;
    wr->wr_id = TERN_VERBS_WR(WR_RC, seq);
    wr->next = NULL;
    if (signal)
        wr->send_flags |= IBV_SEND_SIGNALED;
    struct ibv_send_wr *bad = NULL;
    v->stats.post_send++;
    v->stats.post_send_wrs++;
    int rc = ibv_post_send(tv->qp, wr, &bad);
    if (rc != 0) /* never "full": the room was checked above (tern_verbs_post_refused) */
        return tern_verbs_err(TERN_ERR_PEER_FAILED, tv->vc->rank,
                              tern_verbs_post_refused(rc), rc);
    tv->txe[seq % depth] = txe;
    tv->sq_head++;
    v->scq_outstanding++;
    tv->unsignaled = signal ? 0 : tv->unsignaled + 1;
    return TERN_OK;
}

void tern_verbs_sq_complete(tern_verbs_vc_t *tv, uint64_t seq, tern_status_t st,
                            const char *why)
{
    tern_verbs_t *v = tv->v;
    uint64_t depth = v->cfg->tx_depth;
    (void)why;
    if (seq < tv->sq_tail || seq >= tv->sq_head)
        return; /* already accounted (an error flushed it) */
    while (tv->sq_tail <= seq) {
        tern_verbs_txe_t *e = &tv->txe[tv->sq_tail % depth];
        tern_verbs_txe_t done = *e;
        *e = (tern_verbs_txe_t){.buf = -1};
        tv->sq_tail++;
        v->scq_outstanding--;
        if (done.buf >= 0)
            v->tx_free[v->ntx_free++] = done.buf;
        if (done.op == OP_FLUSH)
            tv->flush_posted = false;
        if (st == TERN_OK && done.last && done.req != NULL)
            tern_verbs_lmt_window_done(tv, done.req);
    }
    if (!tern_verbs_vc_idle(tv) || tv->vc->state == TERN_VC_TERMINATING)
        tern_verbs_mark_pending(tv);
}

static tern_status_t post_flush(tern_verbs_vc_t *tv)
{
    struct ibv_send_wr wr = {.opcode = IBV_WR_RDMA_WRITE, .num_sge = 0};
    tern_status_t st = tern_verbs_post(tv, &wr, (tern_verbs_txe_t){.op = OP_FLUSH, .buf = -1},
                                       TERN_VERBS_POST_CONTROL);
    if (st == TERN_OK)
        tv->flush_posted = true;
    return st == TERN_ERR_AGAIN ? TERN_OK : st;
}

tern_status_t tern_verbs_flush(tern_verbs_vc_t *tv)
{
    if (tv->flush_posted || tv->unsignaled == 0 || tv->conn != VC_CONNECTED)
        return TERN_OK;
    return post_flush(tv);
}

void tern_verbs_keepalive(tern_verbs_t *v, uint64_t now)
{
    if (v->cfg->keepalive_ms == 0 || now < v->next_keepalive_ns)
        return;
    v->next_keepalive_ns = now + v->cfg->keepalive_ms * 1000000ull;
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &v->live)
    {
        tern_verbs_vc_t *tv = TERN_CONTAINER_OF(pos, tern_verbs_vc_t, live_link);
        if (tv->conn != VC_CONNECTED || tv->flush_posted || tv->vc->state != TERN_VC_ACTIVE)
            continue;
        tern_status_t st = post_flush(tv);
        if (st == TERN_OK)
            v->stats.keepalives++;
        else if (st != TERN_ERR_AGAIN) /* a full queue: traffic flows, next period */
            tern_vc_fail(tv->vc, st, tern_last_error());
    }
}

/* A flush where one is due: a refused one fails the VC (its unsignaled
 * tail would never come back, and a closing VC never close); a full queue
 * is tried again by the next poll. */
static void flush_or_fail(tern_verbs_vc_t *tv)
{
    tern_status_t st = tern_verbs_flush(tv);
    if (st != TERN_OK && st != TERN_ERR_AGAIN)
        tern_vc_fail(tv->vc, st, tern_last_error());
}

/* Bounce buffers or send CQ slots all held by unsignaled sends: flush
 * every QP that has some. */
void tern_verbs_flush_all(tern_verbs_t *v)
{
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &v->live)
    {
        tern_verbs_vc_t *tv = TERN_CONTAINER_OF(pos, tern_verbs_vc_t, live_link);
        flush_or_fail(tv);
    }
}

static uint32_t take_credits_out(tern_verbs_vc_t *tv)
{
    uint32_t c = tv->credits_out > 0xffffffu ? 0xffffffu : tv->credits_out;
    tv->credits_out -= c;
    tv->credit_grace = false; /* whatever was due goes with this send */
    return c;
}

/*
 * Credits go back in the immediate of every data send; a message of their
 * own only when half the peer's grant waits here.  Even then it waits one
 * poll: the reposting poll usually delivers a message the program answers
 * at once (a ping-pong, a request and its reply), and the answer carries
 * the credits, as UCX's rc transports piggyback their grants.  A peer
 * streaming one way gets the message one poll later, and a larger grant
 * with it (tern_verbs_grow_grant), so that such messages grow rare.  While
 * it is held back the VC stays pending and the poll counts progress, so a
 * waiting engine polls again rather than sleeping on it.
 */
unsigned tern_verbs_return_credits(tern_verbs_vc_t *tv, bool force)
{
    if (tv->conn != VC_CONNECTED || tv->credits_out == 0 ||
        (!force && tv->credits_out < (tv->rx_granted + 1) / 2))
        return 0;
    if (!force && !tv->credit_grace) {
        tv->credit_grace = true;
        return 1;
    }
    tv->credits_out += tern_verbs_grow_grant(tv);
    uint32_t c = take_credits_out(tv);
    struct ibv_send_wr wr = {.opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_INLINE,
                             .imm_data = htonl(TERN_VERBS_IMM(TERN_VERBS_IMM_CREDIT, c))};
    tern_status_t st = tern_verbs_post(tv, &wr, (tern_verbs_txe_t){.op = OP_SEND, .buf = -1}, 0);
    if (st == TERN_ERR_AGAIN) {
        tv->credits_out += c; /* the queue is full: next time */
        return 0;
    }
    if (st != TERN_OK) { /* refused: the peer would wait for these forever */
        tern_vc_fail(tv->vc, st, tern_last_error());
        return 0;
    }
    tv->v->stats.credit_msgs++;
    return 0;
}

/* Post one stream segment described by sge (inline, or in bounce buffer
 * buf, which the caller peeked at the top of the free stack).
 * TERN_ERR_AGAIN: nothing posted, try later. */
static tern_status_t post_seg(tern_verbs_vc_t *tv, struct ibv_sge *sge, int nsge, int32_t buf)
{
    tern_verbs_t *v = tv->v;
    if (tv->tx_credits == 0)
        return TERN_ERR_AGAIN;
    uint32_t c = take_credits_out(tv);
    struct ibv_send_wr wr = {.opcode = IBV_WR_SEND_WITH_IMM, .sg_list = sge, .num_sge = nsge,
                             .send_flags = buf < 0 ? IBV_SEND_INLINE : 0,
                             .imm_data = htonl(TERN_VERBS_IMM(TERN_VERBS_IMM_DATA, c))};
    tern_status_t st = tern_verbs_post(tv, &wr, (tern_verbs_txe_t){.op = OP_SEND, .buf = buf}, 0);
    if (st != TERN_OK) {
        tv->credits_out += c;
        return st;
    }
    if (buf >= 0)
        v->ntx_free--;
    else
        v->stats.inline_sends++;
    tv->tx_credits--;
    return TERN_OK;
}

/* The bounce buffer a segment would take (top of the free stack), or -1
 * after asking the QPs that hold them to flush. */
static int32_t peek_buf(tern_verbs_t *v)
{
    if (v->ntx_free > 0)
        return v->tx_free[v->ntx_free - 1];
    tern_verbs_flush_all(v);
    return -1;
}

/* Post hlen header bytes and len contiguous payload bytes as one segment:
 * inline when it fits, else copied into a bounce buffer. */
static tern_status_t post_segment(tern_verbs_vc_t *tv, const void *hdr, size_t hlen,
                                  const void *data, size_t len)
{
    tern_verbs_t *v = tv->v;
    struct ibv_sge sge[2];
    if (tv->tx_credits == 0)
        return TERN_ERR_AGAIN;
    if (hlen + len <= v->max_inline) {
        int n = 0;
        if (hlen)
            sge[n++] = (struct ibv_sge){(uintptr_t)hdr, (uint32_t)hlen, 0};
        if (len)
            sge[n++] = (struct ibv_sge){(uintptr_t)data, (uint32_t)len, 0};
        return post_seg(tv, sge, n, -1);
    }
    int32_t b = peek_buf(v);
    if (b < 0)
        return TERN_ERR_AGAIN;
    uint8_t *p = tern_verbs_slab_buf(&v->tx, (uint32_t)b);
    memcpy(p, hdr, hlen);
    if (len)
        memcpy(p + hlen, data, len);
    sge[0] = (struct ibv_sge){(uintptr_t)p, (uint32_t)(hlen + len), v->tx.mr->lkey};
    return post_seg(tv, sge, 1, b);
}

/* Post segments of the queued request r while they go out; true when all
 * of r is posted. */
static bool push_request(tern_verbs_vc_t *tv, tern_request_t *r, tern_status_t *err)
{
    tern_verbs_t *v = tv->v;
    size_t seg = v->cfg->seg_size;
    *err = TERN_OK;
    size_t left;
    while ((left = tern_pktq_left(r)) > 0) {
        size_t want = left < seg ? left : seg;
        /* the segment's pieces: the header's rest and a payload slice, or
         * two payload slices */
        struct iovec io[2];
        size_t bytes;
        int nio = tern_pktq_iov(r, io, 2, want, &bytes);
        tern_status_t st;
        if (bytes == want || bytes <= v->max_inline) {
            st = post_segment(tv, io[0].iov_base, io[0].iov_len, nio > 1 ? io[1].iov_base : NULL,
                              nio > 1 ? io[1].iov_len : 0);
        } else {
            /* more pieces than that: pack them into a bounce buffer */
            if (tv->tx_credits == 0)
                return false;
            int32_t b = peek_buf(v);
            if (b < 0)
                return false;
            uint8_t *p = tern_verbs_slab_buf(&v->tx, (uint32_t)b);
            bytes = tern_pktq_pack(r, p, want);
            struct ibv_sge sge = {(uintptr_t)p, (uint32_t)bytes, v->tx.mr->lkey};
            st = post_seg(tv, &sge, 1, b);
        }
        if (st == TERN_ERR_AGAIN)
            return false;
        if (st != TERN_OK) {
            *err = st;
            return false;
        }
        tern_pktq_advance(r, bytes);
    }
    return true;
}

unsigned tern_verbs_progress_vc(tern_verbs_vc_t *tv)
{
    if (tv->conn == VC_RTU_PENDING && tv->vc->state != TERN_VC_FAILED)
        (void)tern_verbs_send_rtu(tv); /* first, before anything of ours */
    if (tv->conn != VC_CONNECTED || tv->vc->state == TERN_VC_FAILED)
        return 0;
    unsigned n = tern_verbs_lmt_progress(tv);
    tern_request_t *r;
    while ((r = tern_pktq_head(&tv->sendq)) != NULL) {
        tern_status_t err;
        if (!push_request(tv, r, &err)) {
            if (err != TERN_OK)
                tern_vc_fail(tv->vc, err, tern_last_error());
            break;
        }
        tern_pktq_complete_head(&tv->sendq);
        n++;
    }
    n += tern_verbs_return_credits(tv, false);
    if (tv->vc->state == TERN_VC_TERMINATING && tern_pktq_empty(&tv->sendq) &&
        tern_list_empty(&tv->rdmaq)) {
        if (tv->sq_head == tv->sq_tail)
            tv->vc->state = TERN_VC_CLOSED;
        else
            flush_or_fail(tv);
    }
    return n;
}

/* Queue r (hdr copied in) behind the VC's stream and get it moving. */
static tern_status_t enqueue(tern_verbs_vc_t *tv, tern_request_t *r, const void *hdr,
                             size_t hdrlen)
{
    if (tv->conn == VC_IDLE) {
        tern_status_t st = tern_verbs_connect(tv);
        if (st != TERN_OK)
            return st;
    }
    tern_pktq_push(&tv->sendq, r, hdr, hdrlen, 0);
    tern_verbs_mark_pending(tv);
    return TERN_OK;
}

tern_status_t tern_verbs_istart_contig_msg(tern_vc_t *vc, const void *hdr, size_t hdrlen,
                                           const void *data, size_t len, tern_request_t **sreq)
{
    tern_verbs_vc_t *tv = tern_verbs_vc(vc);
    tern_verbs_t *v = tv->v;
    *sreq = NULL;
    tern_status_t st;
    /* fast path: connected, nothing queued, one segment */
    if (tv->conn == VC_CONNECTED && tern_pktq_empty(&tv->sendq) &&
        hdrlen + len <= v->cfg->seg_size) {
        st = post_segment(tv, hdr, hdrlen, data, len);
        if (st == TERN_OK)
            return TERN_OK;
        if (st != TERN_ERR_AGAIN) {
            tern_vc_fail(vc, st, tern_last_error());
            return vc->fail_status;
        }
    }
    tern_request_t *r = tern_request_alloc_contig_send(vc, data, len, 0);
    if (r == NULL)
        return TERN_ERR_NO_MEMORY;
    st = enqueue(tv, r, hdr, hdrlen);
    if (st != TERN_OK) {
        tern_request_release(r);
        return st;
    }
    /* as much as goes now; a request only if some had to wait */
    if (tv->conn == VC_CONNECTED && tern_pktq_head(&tv->sendq) == r) {
        tern_status_t err;
        if (push_request(tv, r, &err)) {
            tern_pktq_remove(r);
            tern_request_release(r);
            return TERN_OK;
        }
        if (err != TERN_OK) {
            tern_pktq_remove(r);
            tern_request_release(r);
            tern_vc_fail(vc, err, tern_last_error());
            return vc->fail_status;
        }
    }
    *sreq = r;
    return TERN_OK;
}

tern_status_t tern_verbs_send_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                        size_t hdrlen)
{
    tern_status_t st = enqueue(tern_verbs_vc(vc), sreq, hdr, hdrlen);
    if (st == TERN_OK)
        tern_verbs_progress_vc(tern_verbs_vc(vc));
    return st;
}
