/*
 * ibloop: posting work requests.  Immediate errors (bad state, too many
 * SGEs, queue full, oversized inline data) fail the post and set *bad like
 * a provider does; everything else is found when the WR executes and is
 * reported by a completion.
 *
 * The error numbers are the followed provider's (rdma-core 44):
 *
 *   ibv_post_send          mlx5 (default)          rxe
 *   not yet RTS            ENOMEM, *bad = wr       EINVAL, *bad = NULL
 *   in ERR                 taken, flushed (ENOMEM  taken, flushed
 *                          if never RTS)
 *   num_sge too large      ENOMEM                  EINVAL
 *   inline data too long   ENOMEM                  EINVAL
 *   send queue full        ENOMEM                  ENOMEM
 *   bad opcode, atomic     EINVAL                  EINVAL
 *   length, UD without AH
 *
 * so ENOMEM on mlx5 does not mean "full": a caller must know its queue's
 * occupancy to tell.  ibv_post_recv / ibv_post_srq_recv agree in both:
 * ENOMEM full, EINVAL for too many SGEs or a QP in RESET.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>

#include "ibloop.h"

static bool opcode_ok(uint32_t type, enum ibv_wr_opcode op)
{
    switch (op) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
        return true;
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_RDMA_READ:
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
        return type == IBV_QPT_RC;
    default:
        return false;
    }
}

static int check_wr(struct ibloop_qp *qp, struct ibloop_wire_qp *q,
                    const struct ibv_send_wr *wr, uint64_t *len)
{
    bool atomic = wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
                  wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
    /* beyond what the QP was granted */
    int over = ibloop_env()->mode == IBLOOP_MODE_RXE ? EINVAL : ENOMEM;

    if (!opcode_ok(q->type, wr->opcode))
        return EINVAL;
    if (wr->num_sge < 0 || (wr->num_sge && !wr->sg_list))
        return EINVAL;
    if ((uint32_t)wr->num_sge > q->max_send_sge)
        return over;
    *len = 0;
    for (int i = 0; i < wr->num_sge; i++)
        *len += wr->sg_list[i].length;
    if (wr->send_flags & IBV_SEND_INLINE) {
        if (wr->opcode == IBV_WR_RDMA_READ || atomic)
            return EINVAL;
        if (*len > q->max_inline)
            return over;
    }
    if (atomic && (wr->num_sge != 1 || wr->sg_list[0].length != 8))
        return EINVAL;
    if (q->type == IBV_QPT_UD &&
        (!wr->wr.ud.ah || wr->wr.ud.ah->context != qp->ibv.context))
        return EINVAL;
    return 0;
}

static void fill_wqe(struct ibloop_wire_swqe *w, const struct ibv_send_wr *wr,
                     uint64_t len, struct ibloop_wire_qp *q)
{
    void *data = w + 1;

    w->wr_id = wr->wr_id;
    w->opcode = wr->opcode;
    w->flags = wr->send_flags;
    if (q->sq_sig_all)
        w->flags |= IBV_SEND_SIGNALED;
    w->imm = wr->imm_data;
    w->length = len;
    w->inline_len = 0;
    if (q->type == IBV_QPT_UD) {
        w->av = IBLOOP_CONTAINER(wr->wr.ud.ah, struct ibloop_ah)->av;
        w->remote_qpn = wr->wr.ud.remote_qpn;
        w->remote_qkey = wr->wr.ud.remote_qkey;
    } else if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
               wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
        w->remote_addr = wr->wr.atomic.remote_addr;
        w->rkey = wr->wr.atomic.rkey;
        w->compare_add = wr->wr.atomic.compare_add;
        w->swap = wr->wr.atomic.swap;
    } else {
        w->remote_addr = wr->wr.rdma.remote_addr;
        w->rkey = wr->wr.rdma.rkey;
    }
    if (wr->send_flags & IBV_SEND_INLINE) {
        /* inline data is copied now: the buffer may be reused at once, and
         * the lkey is not looked at */
        uint8_t *p = data;
        for (int i = 0; i < wr->num_sge; i++) {
            memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
            p += wr->sg_list[i].length;
        }
        w->inline_len = (uint32_t)len;
        w->num_sge = 0;
    } else {
        struct ibloop_wire_sge *s = data;
        for (int i = 0; i < wr->num_sge; i++) {
            s[i].addr = wr->sg_list[i].addr;
            s[i].length = wr->sg_list[i].length;
            s[i].lkey = wr->sg_list[i].lkey;
        }
        w->num_sge = (uint32_t)wr->num_sge;
    }
}

int ibloop_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
                     struct ibv_send_wr **bad)
{
    struct ibloop_qp *qp = IBLOOP_CONTAINER(ibqp, struct ibloop_qp);
    struct ibloop_wire_qp *q = ibloop_qp(qp->idx);
    struct ibloop_deferred d = {0};
    uint32_t st;
    uint64_t len;
    bool pending, no_bad = false;
    uint64_t tail0;
    bool rxe = ibloop_env()->mode == IBLOOP_MODE_RXE;
    int rc = 0;

    ibloop_lock(&q->lock);
    tail0 = q->sq_tail;
    st = atomic_load(&q->state);
    for (; wr; wr = wr->next) {
        if (st != IBV_QPS_RTS && (st != IBV_QPS_ERR || (!rxe && !atomic_load(&qp->sq_opened)))) {
            if (rxe)
                no_bad = true; /* rxe's doorbell fails after the ring took them */
            rc = rxe ? EINVAL : ENOMEM;
            break;
        }
        if ((rc = check_wr(qp, q, wr, &len)))
            break;
        if (ibloop_fault_post_refused()) {
            rc = rxe ? EINVAL : ENOMEM;
            break;
        }
        /* A5: slots up to sq_freed were polled (R5) */
        if (q->sq_tail - atomic_load_explicit(&q->sq_freed, memory_order_acquire) >=
            q->max_send_wr) {
            rc = ENOMEM;
            break;
        }
        fill_wqe(ibloop_at(q->sq_ring + (q->sq_tail & (q->sq_size - 1)) * q->sq_stride),
                 wr, len, q);
        q->sq_tail++;
        ibloop_fault_count_send();
    }
    IBLOOP_COUNT(post_send, 1);
    IBLOOP_COUNT(send_wrs, q->sq_tail - tail0);
    pending = ibloop_sq_exec_locked(qp, &d);
    ibloop_unlock(&q->lock);
    ibloop_sq_after(qp, pending, &d);
    if (rc)
        *bad = no_bad ? NULL : wr;
    return rc;
}

static int post_rq(struct ibloop_wire_rq *rq, struct ibv_recv_wr *wr,
                   struct ibv_recv_wr **bad, uint32_t max_sge)
{
    uint64_t h, t;
    int rc = 0;

    ibloop_lock(&rq->lock);
    h = atomic_load_explicit(&rq->head, memory_order_relaxed);
    t = atomic_load_explicit(&rq->tail, memory_order_relaxed);
    for (; wr; wr = wr->next) {
        struct ibloop_wire_rwqe *w;
        if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
            (wr->num_sge && !wr->sg_list)) {
            rc = EINVAL;
            break;
        }
        if (t - h >= rq->max_wr) {
            rc = ENOMEM;
            break;
        }
        w = ibloop_at(rq->ring + (t & (rq->size - 1)) * rq->stride);
        w->wr_id = wr->wr_id;
        w->num_sge = (uint32_t)wr->num_sge;
        for (int i = 0; i < wr->num_sge; i++) {
            w->sge[i].addr = wr->sg_list[i].addr;
            w->sge[i].length = wr->sg_list[i].length;
            w->sge[i].lkey = wr->sg_list[i].lkey;
        }
        t++;
    }
    IBLOOP_COUNT(post_recv, 1);
    IBLOOP_COUNT(recv_wrs, t - atomic_load_explicit(&rq->tail, memory_order_relaxed));
    /* the unlock below is the release of the new entries to requesters */
    atomic_store_explicit(&rq->tail, t, memory_order_relaxed);
    ibloop_unlock(&rq->lock);
    if (rc)
        *bad = wr;
    return rc;
}

int ibloop_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
                     struct ibv_recv_wr **bad)
{
    struct ibloop_qp *qp = IBLOOP_CONTAINER(ibqp, struct ibloop_qp);
    struct ibloop_wire_qp *q = ibloop_qp(qp->idx);
    uint32_t st = atomic_load(&q->state);
    int rc;

    if (q->srq_gen || st == IBV_QPS_RESET) {
        *bad = wr;
        return EINVAL;
    }
    rc = post_rq(&q->rq, wr, bad, q->max_recv_sge);
    if (st == IBV_QPS_ERR || atomic_load(&q->state) == IBV_QPS_ERR)
        ibloop_rq_flush_locked(&q->rq, q);
    return rc;
}

int ibloop_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
                         struct ibv_recv_wr **bad)
{
    struct ibloop_srq *srq = IBLOOP_CONTAINER(ibsrq, struct ibloop_srq);
    struct ibloop_wire_srq *w = ibloop_srq(srq->idx);

    return post_rq(&w->rq, wr, bad, w->rq.max_sge);
}
