/*
 * ibloop: queue pairs and shared receive queues -- creation, destruction,
 * queries, the shared receive rings, and the error state (flushing).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibloop.h"

/* ---- attributes under the seqlock (R4/A4 in ibloop_wire.h) -------------- */
void ibloop_qp_attr_read(struct ibloop_wire_qp *q, struct ibloop_wire_qp_attr *out)
{
    const uint32_t *src = (const uint32_t *)(const void *)&q->attr;
    uint32_t *dst = (uint32_t *)(void *)out;
    uint32_t s1, s2;

    for (;;) {
        s1 = atomic_load_explicit(&q->seq, memory_order_acquire); /* A4 */
        if (s1 & 1)
            continue;
        for (size_t i = 0; i < sizeof(*out) / 4; i++)
            dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
        atomic_thread_fence(memory_order_acquire);
        s2 = atomic_load_explicit(&q->seq, memory_order_relaxed);
        if (s1 == s2)
            return;
    }
}

void ibloop_qp_attr_write(struct ibloop_wire_qp *q, const struct ibloop_wire_qp_attr *a)
{
    const uint32_t *src = (const uint32_t *)(const void *)a;
    uint32_t *dst = (uint32_t *)(void *)&q->attr;
    uint32_t s = atomic_load_explicit(&q->seq, memory_order_relaxed);

    atomic_store_explicit(&q->seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    for (size_t i = 0; i < sizeof(*a) / 4; i++)
        __atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
    atomic_store_explicit(&q->seq, s + 2, memory_order_release); /* R4 */
}

/* ---- receive rings ------------------------------------------------------- */
static struct ibloop_wire_rwqe *rq_slot(struct ibloop_wire_rq *rq, uint64_t i)
{
    return (struct ibloop_wire_rwqe *)ibloop_at(rq->ring + (i & (rq->size - 1)) *
                                                rq->stride);
}

static int rq_init(struct ibloop_wire_rq *rq, uint32_t max_wr, uint32_t max_sge)
{
    uint32_t size = 1;

    while (size < max_wr)
        size <<= 1;
    ibloop_lock_init(&rq->lock);
    rq->size = size;
    rq->max_sge = max_sge ? max_sge : 1;
    rq->stride = (uint32_t)(sizeof(struct ibloop_wire_rwqe) +
                            rq->max_sge * sizeof(struct ibloop_wire_sge));
    rq->max_wr = max_wr;
    rq->ring = ibloop_arena_alloc((uint64_t)size * rq->stride, &rq->ring_order);
    return rq->ring ? 0 : ENOMEM;
}

bool ibloop_rq_pop(struct ibloop_wire_rq *rq, _Atomic uint32_t *gen,
                   uint32_t want_gen, struct ibloop_wire_rwqe *out, bool *limit_hit)
{
    struct ibloop_wire_rwqe *w;
    uint64_t h, t;

    ibloop_lock(&rq->lock);
    h = atomic_load_explicit(&rq->head, memory_order_relaxed);
    t = atomic_load_explicit(&rq->tail, memory_order_relaxed);
    if (atomic_load(gen) != want_gen || h == t) {
        ibloop_unlock(&rq->lock);
        return false;
    }
    w = rq_slot(rq, h);
    memcpy(out, w, sizeof(*w) + (w->num_sge > rq->max_sge ? rq->max_sge : w->num_sge) *
                                    sizeof(struct ibloop_wire_sge));
    if (out->num_sge > rq->max_sge) /* never trust a count read from the fabric */
        out->num_sge = rq->max_sge;
    atomic_store_explicit(&rq->head, h + 1, memory_order_relaxed);
    if (rq->limit && t - (h + 1) < rq->limit) {
        rq->limit = 0; /* the SRQ limit event fires once per arming */
        *limit_hit = true;
    }
    ibloop_unlock(&rq->lock);
    return true;
}

static void flush_cqe(struct ibloop_wire_cqe *e, struct ibloop_wire_qp *q,
                      uint64_t wr_id)
{
    memset(e, 0, sizeof(*e));
    e->wr_id = wr_id;
    e->status = IBV_WC_WR_FLUSH_ERR;
    e->vendor_err = 0xf5;
    e->qp_num = q->qpn;
    e->qp_idx = (uint32_t)(q - ibloop_qp(0));
    e->qp_gen = atomic_load(&q->gen);
}

void ibloop_rq_flush_locked(struct ibloop_wire_rq *rq, struct ibloop_wire_qp *q)
{
    struct ibloop_wire_cqe e;
    uint64_t h, t;

    ibloop_lock(&rq->lock);
    h = atomic_load_explicit(&rq->head, memory_order_relaxed);
    t = atomic_load_explicit(&rq->tail, memory_order_relaxed);
    for (; h != t; h++) {
        flush_cqe(&e, q, rq_slot(rq, h)->wr_id);
        ibloop_cq_push(q->recv_cq, q->recv_cq_gen, &e);
    }
    atomic_store_explicit(&rq->head, h, memory_order_relaxed);
    ibloop_unlock(&rq->lock);
}

/* ---- the error state ----------------------------------------------------- */
/* every outstanding send WR completes with a flush error, signaled or
 * not; in the error state later posts are flushed as they come */
void ibloop_sq_flush_locked(struct ibloop_wire_qp *q)
{
    struct ibloop_wire_cqe e;

    for (uint64_t i = q->sq_head; i != q->sq_tail; i++) {
        struct ibloop_wire_swqe *w = ibloop_at(q->sq_ring + (i & (q->sq_size - 1)) *
                                               q->sq_stride);
        flush_cqe(&e, q, w->wr_id);
        e.is_send = 1;
        e.sq_idx = i + 1;
        ibloop_cq_push(q->send_cq, q->send_cq_gen, &e);
    }
    q->sq_head = q->sq_tail;
    q->in_retry = 0;
    q->rnr_used = 0;
    q->next_try = 0;
}

void ibloop_qp_to_err_locked(struct ibloop_wire_qp *q, int event)
{
    uint32_t idx = (uint32_t)(q - ibloop_qp(0));
    uint32_t st = atomic_load(&q->state);

    if (st == IBV_QPS_ERR || st == IBV_QPS_RESET)
        return;
    atomic_store(&q->state, IBV_QPS_ERR);
    ibloop_sq_flush_locked(q);
    if (!q->srq_gen)
        ibloop_rq_flush_locked(&q->rq, q);
    if (event >= 0)
        ibloop_async_post(q->ctx, q->ctx_gen, (uint32_t)event, IBLOOP_OBJ_QP, idx,
                          atomic_load(&q->gen));
    if (q->srq_gen)
        ibloop_async_post(q->ctx, q->ctx_gen, IBV_EVENT_QP_LAST_WQE_REACHED,
                          IBLOOP_OBJ_QP, idx, atomic_load(&q->gen));
}

void ibloop_qp_error(uint32_t idx, uint32_t gen, int event)
{
    struct ibloop_wire_qp *q = ibloop_qp(idx);

    ibloop_lock(&q->lock);
    if (atomic_load(&q->gen) == gen)
        ibloop_qp_to_err_locked(q, event);
    ibloop_unlock(&q->lock);
}

/* to RESET: work requests are discarded without completions */
void ibloop_qp_reset_locked(struct ibloop_wire_qp *q)
{
    struct ibloop_wire_qp_attr a;

    atomic_store(&q->state, IBV_QPS_RESET);
    q->sq_head = q->sq_tail = 0;
    atomic_store(&q->sq_freed, 0);
    q->in_retry = 0;
    q->next_try = 0;
    atomic_store(&q->comm_est, 0);
    if (!q->srq_gen) {
        ibloop_lock(&q->rq.lock);
        atomic_store(&q->rq.head, 0);
        atomic_store(&q->rq.tail, 0);
        ibloop_unlock(&q->rq.lock);
    }
    memset(&a, 0, sizeof(a));
    ibloop_qp_attr_write(q, &a);
}

/* ---- create / destroy ----------------------------------------------------- */
static _Atomic long qp_created;

static uint32_t pow2_up(uint64_t x)
{
    uint64_t p = 1;

    while (p < x)
        p <<= 1;
    return p > UINT32_MAX ? UINT32_MAX : (uint32_t)p;
}

static uint32_t align_up(uint32_t x, uint32_t a)
{
    return (x + a - 1) / a * a;
}

/*
 * What the QP gets: the caps asked for, checked against the device's
 * limits, then rounded up the way the followed provider does and written
 * back into ia->cap (a program must read back what it got, not assume
 * what it asked for).
 *
 * mlx5 (rdma-core 44, providers/mlx5/verbs.c): a send WQE is the fixed part
 * (RC 192 bytes, UD 64) plus the larger of the inline segment (4-byte
 * header + data, in 16-byte units) and the SGEs, in 64-byte units, at most
 * 1 KiB; the inline data granted is what fills that WQE (asking 0..60
 * gives 60, 64 gives 124, above 828 on RC fails); the send queue is rounded
 * up to a power of two in bytes, the receive queue and its SGEs to powers
 * of two.  rxe (the kernel's rxe_qp_chk_cap / rxe_qp_init_req): at most 512
 * bytes inline, granted max(request, 16 x send SGEs), the send SGEs
 * max(request, inline / 16); queue lengths as asked.
 */
static int grant_caps(const struct ibv_qp_init_attr *ia, struct ibv_qp_cap *g)
{
    const struct ibloop_env *e = ibloop_env();
    const struct ibv_qp_cap *cap = &ia->cap;

    if (cap->max_send_wr > e->max_qp_wr || cap->max_send_sge > e->max_sge ||
        cap->max_inline_data > e->max_inline || cap->max_inline_data > IBLOOP_MAX_INLINE)
        return EINVAL;
    if (!ia->srq && (cap->max_recv_wr > e->max_qp_wr || cap->max_recv_sge > e->max_sge))
        return EINVAL;
    *g = *cap;
    if (e->mode == IBLOOP_MODE_RXE) {
        uint32_t lim = e->max_inline;
        if (g->max_inline_data < 16 * g->max_send_sge)
            g->max_inline_data = 16 * g->max_send_sge;
        if (g->max_inline_data > lim)
            g->max_inline_data = lim;
        if (g->max_send_sge < g->max_inline_data / 16)
            g->max_send_sge = g->max_inline_data / 16;
        if (g->max_send_sge > e->max_sge)
            g->max_send_sge = e->max_sge;
    } else if (cap->max_send_wr) {
        uint32_t oh = ia->qp_type == IBV_QPT_UD ? IBLOOP_MLX5_WQE_OH_UD : IBLOOP_MLX5_WQE_OH_RC;
        uint32_t inl = align_up(4 + cap->max_inline_data, 16);
        uint32_t sges = 16 * cap->max_send_sge;
        uint32_t wqe = align_up(oh + (inl > sges ? inl : sges), 64);
        uint32_t sq;
        if (wqe > IBLOOP_MLX5_MAX_WQE)
            return EINVAL;
        g->max_inline_data = wqe - oh - 4;
        if (g->max_inline_data > e->max_inline)
            g->max_inline_data = e->max_inline; /* a smaller device */
        if (g->max_inline_data > IBLOOP_MAX_INLINE)
            g->max_inline_data = IBLOOP_MAX_INLINE;
        sq = pow2_up((uint64_t)cap->max_send_wr * wqe) / wqe;
        g->max_send_wr = sq > e->max_qp_wr ? cap->max_send_wr : sq;
    }
    if (e->mode == IBLOOP_MODE_MLX5 && !ia->srq) {
        uint32_t rq = pow2_up(cap->max_recv_wr);
        uint32_t rs = pow2_up(16 * (cap->max_recv_sge ? cap->max_recv_sge : 1)) / 16;
        if (cap->max_recv_wr)
            g->max_recv_wr = rq > e->max_qp_wr ? cap->max_recv_wr : rq;
        g->max_recv_sge = rs > e->max_sge ? cap->max_recv_sge : rs;
    }
    return 0;
}

static int check_init(struct ibv_pd *pd, const struct ibv_qp_init_attr *ia)
{
    if (ia->qp_type != IBV_QPT_RC && ia->qp_type != IBV_QPT_UD)
        return EOPNOTSUPP;
    if (!ia->send_cq || !ia->recv_cq || ia->send_cq->context != pd->context ||
        ia->recv_cq->context != pd->context ||
        (ia->srq && ia->srq->context != pd->context))
        return EINVAL;
    return 0;
}

static int qp_wire_create(struct ibloop_qp *qp, struct ibv_pd *ibpd,
                          struct ibv_qp_init_attr *ia)
{
    struct ibloop_context *c = ibloop_ctx_of(ibpd->context);
    struct ibloop_cq *scq = IBLOOP_CONTAINER(ia->send_cq, struct ibloop_cq);
    struct ibloop_cq *rcq = IBLOOP_CONTAINER(ia->recv_cq, struct ibloop_cq);
    struct ibloop_srq *srq = IBLOOP_CONTAINER(ia->srq, struct ibloop_srq);
    struct ibloop_wire_qp *q;
    uint32_t inl = (ia->cap.max_inline_data + 15) & ~15u;
    uint32_t sge = ia->cap.max_send_sge * (uint32_t)sizeof(struct ibloop_wire_sge);
    uint32_t size = 1;
    int i;

    ibloop_fab_lock();
    i = ibloop_tab_alloc(IBLOOP_T_QP);
    if (i < 0) {
        ibloop_fab_unlock();
        return ENOMEM;
    }
    q = ibloop_qp((uint32_t)i);
    ibloop_lock_init(&q->lock);
    while (size < ia->cap.max_send_wr)
        size <<= 1;
    q->sq_size = size;
    q->sq_stride = (uint32_t)sizeof(struct ibloop_wire_swqe) + (inl > sge ? inl : sge);
    q->sq_ring = ibloop_arena_alloc((uint64_t)size * q->sq_stride, &q->sq_order);
    if (!q->sq_ring || (!srq && rq_init(&q->rq, ia->cap.max_recv_wr ? ia->cap.max_recv_wr : 1,
                                        ia->cap.max_recv_sge))) {
        ibloop_arena_free(q->sq_ring, q->sq_order);
        ibloop_fab_unlock();
        return ENOMEM;
    }
    if (!srq)
        q->rq.max_wr = ia->cap.max_recv_wr;
    qp->gen = ibloop_new_gen();
    q->qpn = ((qp->gen % 1023) + 1) << IBLOOP_QP_IDX_BITS | (uint32_t)i;
    q->ctx = c->idx;
    q->ctx_gen = c->gen;
    q->proc = ibloop_fab.proc;
    q->type = ia->qp_type;
    q->pd = IBLOOP_CONTAINER(ibpd, struct ibloop_pd)->id;
    q->send_cq = scq->idx;
    q->send_cq_gen = scq->gen;
    q->recv_cq = rcq->idx;
    q->recv_cq_gen = rcq->gen;
    if (srq) {
        q->srq = srq->idx;
        q->srq_gen = srq->gen;
    }
    atomic_store(&q->state, IBV_QPS_RESET);
    q->max_send_wr = ia->cap.max_send_wr;
    q->max_recv_wr = srq ? 0 : ia->cap.max_recv_wr;
    q->max_send_sge = ia->cap.max_send_sge;
    q->max_recv_sge = srq ? 0 : ia->cap.max_recv_sge;
    q->max_inline = ia->cap.max_inline_data;
    q->sq_sig_all = (uint32_t)ia->sq_sig_all;
    qp->idx = (uint32_t)i;
    atomic_store(&q->gen, qp->gen);
    ibloop_fab_unlock();
    return 0;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
    struct ibloop_context *c;
    struct ibloop_qp *qp;
    struct ibv_qp_cap granted;
    struct ibv_qp_init_attr gia;
    long fail_after = ibloop_env()->qp_fail_after;
    int rc;

    if (!pd || !ia) {
        errno = EINVAL;
        return NULL;
    }
    if ((rc = check_init(pd, ia)) || (rc = grant_caps(ia, &granted))) {
        errno = rc;
        return NULL;
    }
    gia = *ia;
    gia.cap = granted; /* the QP is made with what it was granted */
    if (fail_after >= 0 && atomic_fetch_add(&qp_created, 1) >= fail_after) {
        errno = ENOMEM;
        return NULL;
    }
    c = ibloop_ctx_of(pd->context);
    qp = calloc(1, sizeof(*qp));
    if (!qp || (rc = qp_wire_create(qp, pd, &gia))) {
        free(qp);
        errno = qp ? rc : ENOMEM;
        return NULL;
    }
    qp->ctx = c;
    qp->pd = IBLOOP_CONTAINER(pd, struct ibloop_pd);
    qp->scq = IBLOOP_CONTAINER(ia->send_cq, struct ibloop_cq);
    qp->rcq = IBLOOP_CONTAINER(ia->recv_cq, struct ibloop_cq);
    qp->srq = IBLOOP_CONTAINER(ia->srq, struct ibloop_srq);
    pthread_mutex_init(&qp->ibv.mutex, NULL);
    pthread_cond_init(&qp->ibv.cond, NULL);
    qp->ibv.context = pd->context;
    qp->ibv.qp_context = ia->qp_context;
    qp->ibv.pd = pd;
    qp->ibv.send_cq = ia->send_cq;
    qp->ibv.recv_cq = ia->recv_cq;
    qp->ibv.srq = ia->srq;
    qp->ibv.handle = qp->idx;
    qp->ibv.qp_num = ibloop_qp(qp->idx)->qpn;
    qp->ibv.state = IBV_QPS_RESET;
    qp->ibv.qp_type = ia->qp_type;
    atomic_fetch_add(&qp->pd->refs, 1);
    atomic_fetch_add(&qp->scq->refs, 1);
    atomic_fetch_add(&qp->rcq->refs, 1);
    if (qp->srq)
        atomic_fetch_add(&qp->srq->refs, 1);
    ia->cap = granted;
    if (ia->srq) {
        ia->cap.max_recv_wr = 0;
        ia->cap.max_recv_sge = 0;
    }
    ibloop_local_qp[qp->idx] = qp;
    pthread_mutex_lock(&c->lock);
    qp->next = c->qps;
    c->qps = qp;
    pthread_mutex_unlock(&c->lock);
    atomic_fetch_add(&c->nobjs, 1);
    IBLOOP_DBG("created %s QP %#x", ia->qp_type == IBV_QPT_RC ? "RC" : "UD",
               qp->ibv.qp_num);
    return &qp->ibv;
}

struct ibv_qp *ibloop_create_qp_ex(struct ibv_context *context,
                                   struct ibv_qp_init_attr_ex *ie)
{
    struct ibv_qp_init_attr ia;

    if ((ie->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS)) ||
        !(ie->comp_mask & IBV_QP_INIT_ATTR_PD) ||
        ((ie->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && ie->create_flags)) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    memcpy(&ia, ie, sizeof(ia)); /* the same leading members */
    struct ibv_qp *qp = ibv_create_qp(ie->pd, &ia);
    if (qp)
        ie->cap = ia.cap;
    return qp;
}

int ibv_destroy_qp(struct ibv_qp *ibqp)
{
    struct ibloop_qp *qp = IBLOOP_CONTAINER(ibqp, struct ibloop_qp);
    struct ibloop_context *c = qp->ctx;
    struct ibloop_wire_qp *q = ibloop_qp(qp->idx);

    ibloop_wait_acks(&ibqp->mutex, &ibqp->cond, &ibqp->events_completed,
                     qp->async_reported, NULL, 0, "ibv_destroy_qp");
    pthread_mutex_lock(&c->lock); /* no progress pass is using it now */
    for (struct ibloop_qp **p = &c->qps; *p; p = &(*p)->next)
        if (*p == qp) {
            *p = qp->next;
            break;
        }
    if (atomic_load(&qp->pending))
        atomic_fetch_sub(&c->npending, 1);
    pthread_mutex_unlock(&c->lock);
    ibloop_fab_lock();
    ibloop_lock(&q->lock);
    atomic_store(&q->state, IBV_QPS_RESET);
    atomic_store(&q->gen, 0);
    ibloop_unlock(&q->lock);
    ibloop_lock(&q->rq.lock); /* wait for a requester popping from it */
    ibloop_unlock(&q->rq.lock);
    ibloop_arena_free(q->sq_ring, q->sq_order);
    if (!q->srq_gen)
        ibloop_arena_free(q->rq.ring, q->rq.ring_order);
    ibloop_fab_unlock();
    ibloop_local_qp[qp->idx] = NULL;
    atomic_fetch_sub(&qp->pd->refs, 1);
    atomic_fetch_sub(&qp->scq->refs, 1);
    atomic_fetch_sub(&qp->rcq->refs, 1);
    if (qp->srq)
        atomic_fetch_sub(&qp->srq->refs, 1);
    atomic_fetch_sub(&c->nobjs, 1);
    pthread_mutex_destroy(&ibqp->mutex);
    pthread_cond_destroy(&ibqp->cond);
    free(qp);
    return 0;
}

int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
                 struct ibv_qp_init_attr *init)
{
    struct ibloop_qp *qp = IBLOOP_CONTAINER(ibqp, struct ibloop_qp);
    struct ibloop_wire_qp *q = ibloop_qp(qp->idx);
    struct ibloop_wire_qp_attr a;

    ibloop_qp_attr_read(q, &a);
    memset(attr, 0, sizeof(*attr));
    attr->qp_state = (enum ibv_qp_state)atomic_load(&q->state);
    attr->cur_qp_state = attr->qp_state;
    ibqp->state = attr->qp_state;
    attr->path_mtu = (enum ibv_mtu)a.path_mtu;
    attr->path_mig_state = IBV_MIG_MIGRATED;
    attr->qkey = a.qkey;
    attr->rq_psn = a.rq_psn;
    attr->sq_psn = a.sq_psn;
    attr->dest_qp_num = a.dest_qpn;
    attr->qp_access_flags = a.access;
    attr->cap.max_send_wr = q->max_send_wr;
    attr->cap.max_recv_wr = q->max_recv_wr;
    attr->cap.max_send_sge = q->max_send_sge;
    attr->cap.max_recv_sge = q->max_recv_sge;
    attr->cap.max_inline_data = q->max_inline;
    ibloop_av_to_attr(&a.av, &attr->ah_attr);
    attr->pkey_index = (uint16_t)a.pkey_index;
    attr->max_rd_atomic = (uint8_t)a.max_rd_atomic;
    attr->max_dest_rd_atomic = (uint8_t)a.max_dest_rd_atomic;
    attr->min_rnr_timer = (uint8_t)a.min_rnr_timer;
    attr->port_num = (uint8_t)a.port_num;
    attr->timeout = (uint8_t)a.timeout;
    attr->retry_cnt = (uint8_t)a.retry_cnt;
    attr->rnr_retry = (uint8_t)a.rnr_retry;
    if (init) {
        memset(init, 0, sizeof(*init));
        init->qp_context = ibqp->qp_context;
        init->send_cq = ibqp->send_cq;
        init->recv_cq = ibqp->recv_cq;
        init->srq = ibqp->srq;
        init->cap = attr->cap;
        init->qp_type = ibqp->qp_type;
        init->sq_sig_all = (int)q->sq_sig_all;
    }
    return 0;
}

/* ---- shared receive queues ------------------------------------------------ */
struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init)
{
    struct ibloop_srq *srq;
    struct ibloop_wire_srq *w;
    struct ibv_srq_attr *a = &init->attr;
    int i;

    if (!a->max_wr || a->max_wr > ibloop_env()->max_qp_wr || a->max_sge > ibloop_env()->max_sge) {
        errno = EINVAL;
        return NULL;
    }
    srq = calloc(1, sizeof(*srq));
    if (!srq) {
        errno = ENOMEM;
        return NULL;
    }
    ibloop_fab_lock();
    i = ibloop_tab_alloc(IBLOOP_T_SRQ);
    w = i < 0 ? NULL : ibloop_srq((uint32_t)i);
    if (!w || rq_init(&w->rq, a->max_wr, a->max_sge)) {
        ibloop_fab_unlock();
        free(srq);
        errno = ENOMEM;
        return NULL;
    }
    w->ctx = ibloop_ctx_of(pd->context)->idx;
    w->ctx_gen = ibloop_ctx_of(pd->context)->gen;
    w->proc = ibloop_fab.proc;
    w->pd = IBLOOP_CONTAINER(pd, struct ibloop_pd)->id;
    srq->idx = (uint32_t)i;
    srq->gen = ibloop_new_gen();
    atomic_store(&w->gen, srq->gen);
    ibloop_fab_unlock();
    srq->pd = IBLOOP_CONTAINER(pd, struct ibloop_pd);
    atomic_fetch_add(&srq->pd->refs, 1);
    pthread_mutex_init(&srq->ibv.mutex, NULL);
    pthread_cond_init(&srq->ibv.cond, NULL);
    srq->ibv.context = pd->context;
    srq->ibv.srq_context = init->srq_context;
    srq->ibv.pd = pd;
    srq->ibv.handle = (uint32_t)i;
    ibloop_local_srq[i] = srq;
    atomic_fetch_add(&ibloop_ctx_of(pd->context)->nobjs, 1);
    return &srq->ibv;
}

int ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
    struct ibloop_srq *srq = IBLOOP_CONTAINER(ibsrq, struct ibloop_srq);
    struct ibloop_wire_srq *w = ibloop_srq(srq->idx);

    if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
        return EINVAL;
    if (mask & IBV_SRQ_MAX_WR)
        return EINVAL; /* no resizing, as on many HCAs */
    if (mask & IBV_SRQ_LIMIT) {
        if (attr->srq_limit > w->rq.max_wr)
            return EINVAL;
        ibloop_lock(&w->rq.lock);
        w->rq.limit = attr->srq_limit;
        ibloop_unlock(&w->rq.lock);
    }
    return 0;
}

int ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
    struct ibloop_srq *srq = IBLOOP_CONTAINER(ibsrq, struct ibloop_srq);
    struct ibloop_wire_srq *w = ibloop_srq(srq->idx);

    ibloop_lock(&w->rq.lock);
    attr->max_wr = w->rq.max_wr;
    attr->max_sge = w->rq.max_sge;
    attr->srq_limit = w->rq.limit;
    ibloop_unlock(&w->rq.lock);
    return 0;
}

int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
    struct ibloop_srq *srq = IBLOOP_CONTAINER(ibsrq, struct ibloop_srq);
    struct ibloop_wire_srq *w = ibloop_srq(srq->idx);

    if (atomic_load(&srq->refs))
        return EBUSY;
    ibloop_wait_acks(&ibsrq->mutex, &ibsrq->cond, &ibsrq->events_completed,
                     srq->async_reported, NULL, 0, "ibv_destroy_srq");
    ibloop_fab_lock();
    ibloop_lock(&w->rq.lock);
    atomic_store(&w->gen, 0);
    ibloop_unlock(&w->rq.lock);
    ibloop_arena_free(w->rq.ring, w->rq.ring_order);
    ibloop_fab_unlock();
    ibloop_local_srq[srq->idx] = NULL;
    atomic_fetch_sub(&srq->pd->refs, 1);
    atomic_fetch_sub(&ibloop_ctx_of(ibsrq->context)->nobjs, 1);
    pthread_mutex_destroy(&ibsrq->mutex);
    pthread_cond_destroy(&ibsrq->cond);
    free(srq);
    return 0;
}
