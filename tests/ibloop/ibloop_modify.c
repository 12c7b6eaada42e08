/*
 * ibloop: the QP state machine of ibv_modify_qp.
 *
 * Each (current state, next state, QP type) allows a set of required and
 * optional attributes (IB spec 11.2.4.2 / the kernel's qp_state_table);
 * a missing required or a forbidden attribute is EINVAL, as on hardware.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>

#include "ibloop.h"

struct trans {
    int req, opt;
};

#define RC_INIT_ATTRS (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define UD_INIT_ATTRS (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)

/* false: the transition does not exist */
static bool transition(enum ibv_qp_type t, int cur, int next, struct trans *tr)
{
    bool rc = t == IBV_QPT_RC;

    tr->req = tr->opt = 0;
    if (next == IBV_QPS_RESET || next == IBV_QPS_ERR)
        return true;
    switch (cur * 16 + next) {
    case IBV_QPS_RESET * 16 + IBV_QPS_INIT:
        tr->req = rc ? RC_INIT_ATTRS : UD_INIT_ATTRS;
        return true;
    case IBV_QPS_INIT * 16 + IBV_QPS_INIT:
        tr->opt = rc ? RC_INIT_ATTRS : UD_INIT_ATTRS;
        return true;
    case IBV_QPS_INIT * 16 + IBV_QPS_RTR:
        if (rc) {
            tr->req = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
            tr->opt = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX;
        } else {
            tr->opt = IBV_QP_PKEY_INDEX | IBV_QP_QKEY;
        }
        return true;
    case IBV_QPS_RTR * 16 + IBV_QPS_RTS:
        if (rc) {
            tr->req = IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
            tr->opt = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
                      IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE;
        } else {
            tr->req = IBV_QP_SQ_PSN;
            tr->opt = IBV_QP_CUR_STATE | IBV_QP_QKEY;
        }
        return true;
    case IBV_QPS_RTS * 16 + IBV_QPS_RTS:
        tr->opt = rc ? IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
                           IBV_QP_PATH_MIG_STATE | IBV_QP_MIN_RNR_TIMER
                     : IBV_QP_CUR_STATE | IBV_QP_QKEY;
        return true;
    default:
        return false; /* SQD/SQE, backwards, skipping states */
    }
}

static int check_values(const struct ibv_qp_attr *a, int mask, struct ibloop_wire_qp_attr *w)
{
    if ((mask & IBV_QP_PORT) && a->port_num != 1)
        return EINVAL;
    if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
        return EINVAL;
    if ((mask & IBV_QP_PATH_MTU) &&
        (a->path_mtu < IBV_MTU_256 || a->path_mtu > (enum ibv_mtu)ibloop_env()->mtu))
        return EINVAL;
    if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > IBLOOP_MAX_RD_ATOM)
        return EINVAL;
    if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
        a->max_dest_rd_atomic > IBLOOP_MAX_RD_ATOM)
        return EINVAL;
    if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
        return EINVAL;
    if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
        return EINVAL;
    if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
        return EINVAL;
    if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
        return EINVAL;
    if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > 0xffffff)
        return EINVAL;
    if ((mask & IBV_QP_ACCESS_FLAGS) &&
        (a->qp_access_flags & ~(unsigned)(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                          IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)))
        return EINVAL;
    if (mask & IBV_QP_AV) {
        if (ibloop_av_from_attr(&a->ah_attr, &w->av))
            return EINVAL;
    }
    if (mask & IBV_QP_PATH_MTU)
        w->path_mtu = a->path_mtu;
    if (mask & IBV_QP_QKEY)
        w->qkey = a->qkey;
    if (mask & IBV_QP_ACCESS_FLAGS)
        w->access = a->qp_access_flags;
    if (mask & IBV_QP_DEST_QPN)
        w->dest_qpn = a->dest_qp_num;
    if (mask & IBV_QP_RQ_PSN)
        w->rq_psn = a->rq_psn & 0xffffff;
    if (mask & IBV_QP_SQ_PSN)
        w->sq_psn = a->sq_psn & 0xffffff;
    if (mask & IBV_QP_MIN_RNR_TIMER)
        w->min_rnr_timer = a->min_rnr_timer;
    if (mask & IBV_QP_TIMEOUT)
        w->timeout = a->timeout;
    if (mask & IBV_QP_RETRY_CNT)
        w->retry_cnt = a->retry_cnt;
    if (mask & IBV_QP_RNR_RETRY)
        w->rnr_retry = a->rnr_retry;
    if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
        w->max_rd_atomic = a->max_rd_atomic;
    if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
        w->max_dest_rd_atomic = a->max_dest_rd_atomic;
    if (mask & IBV_QP_PKEY_INDEX)
        w->pkey_index = a->pkey_index;
    if (mask & IBV_QP_PORT)
        w->port_num = a->port_num;
    return 0;
}

int ibloop_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
    struct ibloop_qp *qp = IBLOOP_CONTAINER(ibqp, struct ibloop_qp);
    struct ibloop_wire_qp *q = ibloop_qp(qp->idx);
    struct ibloop_wire_qp_attr w;
    struct trans tr;
    int cur, next, rc = 0, attrs;
    const int known = (IBV_QP_RATE_LIMIT << 1) - 1;

    if (!attr || (mask & ~known))
        return EINVAL;
    ibloop_lock(&q->lock);
    cur = (int)atomic_load(&q->state);
    next = (mask & IBV_QP_STATE) ? (int)attr->qp_state : cur;
    attrs = mask & ~IBV_QP_STATE;
    if ((mask & IBV_QP_CUR_STATE) && (int)attr->cur_qp_state != cur)
        rc = EINVAL;
    else if (next < IBV_QPS_RESET || next > IBV_QPS_ERR ||
             !transition(ibqp->qp_type, cur, next, &tr))
        rc = EINVAL;
    else if ((attrs & tr.req) != tr.req || (attrs & ~(tr.req | tr.opt)))
        rc = EINVAL;
    if (rc) {
        ibloop_unlock(&q->lock);
        IBLOOP_DBG("modify_qp %#x: state %d -> %d with mask %#x: EINVAL",
                   ibqp->qp_num, cur, next, mask);
        return rc;
    }
    if (next == IBV_QPS_RESET) {
        ibloop_qp_reset_locked(q);
        atomic_store(&qp->sq_opened, false);
    } else if (next == IBV_QPS_ERR) {
        ibloop_qp_to_err_locked(q, -1);
        atomic_store(&q->state, IBV_QPS_ERR);
    } else {
        ibloop_qp_attr_read(q, &w);
        rc = check_values(attr, mask, &w);
        if (!rc) {
            ibloop_qp_attr_write(q, &w);
            if (next == IBV_QPS_RTR && cur != IBV_QPS_RTR)
                atomic_store(&q->epsn, w.rq_psn);
            if (next == IBV_QPS_RTS && cur == IBV_QPS_RTR)
                q->npsn = w.sq_psn;
            if (next == IBV_QPS_RTS) /* before the state: posts see both */
                atomic_store(&qp->sq_opened, true);
            atomic_store(&q->state, (uint32_t)next);
        }
    }
    ibloop_unlock(&q->lock);
    if (!rc)
        ibqp->state = (enum ibv_qp_state)next;
    return rc;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
    return ibloop_modify_qp(qp, attr, mask);
}
