/*
 * ibloop: completion queues -- creation, the shared ring, polling, arming.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibloop.h"

#define POISON32 0xdeadbeefu

static struct ibloop_wire_cqe *cq_ring(struct ibloop_wire_cq *w)
{
    return ibloop_at(w->ring);
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
                             void *cq_context, struct ibv_comp_channel *channel,
                             int comp_vector)
{
    struct ibloop_context *c = ibloop_ctx_of(context);
    struct ibloop_chan *ch = IBLOOP_CONTAINER(channel, struct ibloop_chan);
    struct ibloop_wire_cq *w;
    struct ibloop_cq *cq;
    uint32_t size = 2, order;
    uint64_t ring;
    int i;

    if (cqe < 1 || (uint32_t)cqe > ibloop_env()->max_cqe || comp_vector < 0 ||
        comp_vector >= context->num_comp_vectors ||
        (channel && channel->context != context)) {
        errno = EINVAL;
        return NULL;
    }
    while (size < (uint32_t)cqe + 1)
        size <<= 1;
    cq = calloc(1, sizeof(*cq));
    if (!cq) {
        errno = ENOMEM;
        return NULL;
    }
    ibloop_fab_lock();
    i = ibloop_tab_alloc(IBLOOP_T_CQ);
    ring = i < 0 ? 0 : ibloop_arena_alloc((uint64_t)size * sizeof(struct ibloop_wire_cqe),
                                          &order);
    if (!ring) {
        ibloop_fab_unlock();
        free(cq);
        errno = ENOMEM;
        return NULL;
    }
    w = ibloop_cq((uint32_t)i);
    ibloop_lock_init(&w->lock);
    w->ctx = c->idx;
    w->ctx_gen = c->gen;
    w->proc = ibloop_fab.proc;
    w->size = size;
    w->ring = ring;
    w->ring_order = order;
    if (ch) {
        w->chan = ch->idx;
        w->chan_gen = ch->gen;
    }
    cq->idx = (uint32_t)i;
    cq->gen = ibloop_new_gen();
    atomic_store(&w->gen, cq->gen);
    ibloop_fab_unlock();

    pthread_mutex_init(&cq->poll_lock, NULL);
    pthread_mutex_init(&cq->ibv.mutex, NULL);
    pthread_cond_init(&cq->ibv.cond, NULL);
    cq->ibv.context = context;
    cq->ibv.channel = channel;
    cq->ibv.cq_context = cq_context;
    cq->ibv.handle = (uint32_t)i;
    cq->ibv.cqe = (int)size - 1;
    ibloop_local_cq[i] = cq;
    if (ch) {
        pthread_mutex_lock(&ch->lock);
        cq->chan_next = ch->cqs;
        ch->cqs = cq;
        channel->refcnt++;
        pthread_mutex_unlock(&ch->lock);
    }
    atomic_fetch_add(&c->nobjs, 1);
    return &cq->ibv;
}

/* The real library blocks until every event handed out is acknowledged;
 * here a forgotten ack is reported instead of hanging forever. */
void ibloop_wait_acks(pthread_mutex_t *m, pthread_cond_t *cond,
                      const uint32_t *done, uint32_t want,
                      const uint32_t *done2, uint32_t want2, const char *what)
{
    struct timespec ts;
    bool ok = true;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 2;
    pthread_mutex_lock(m);
    while ((*done != want || (done2 && *done2 != want2)) && ok)
        ok = pthread_cond_timedwait(cond, m, &ts) == 0;
    pthread_mutex_unlock(m);
    if (!ok)
        ibloop_log("%s: events were not all acknowledged; the real "
                   "libibverbs would block here forever", what);
}

int ibv_destroy_cq(struct ibv_cq *ibcq)
{
    struct ibloop_cq *cq = IBLOOP_CONTAINER(ibcq, struct ibloop_cq);
    struct ibloop_wire_cq *w = ibloop_cq(cq->idx);

    if (atomic_load(&cq->refs))
        return EBUSY;
    if (ibcq->channel) {
        struct ibloop_chan *ch = IBLOOP_CONTAINER(ibcq->channel, struct ibloop_chan);
        uint32_t taken;
        pthread_mutex_lock(&ch->lock);
        for (struct ibloop_cq **p = &ch->cqs; *p; p = &(*p)->chan_next)
            if (*p == cq) {
                *p = cq->chan_next;
                break;
            }
        ibcq->channel->refcnt--;
        taken = (uint32_t)cq->ev_taken;
        pthread_mutex_unlock(&ch->lock);
        ibloop_wait_acks(&ibcq->mutex, &ibcq->cond, &ibcq->comp_events_completed,
                         taken, &ibcq->async_events_completed, cq->async_reported,
                         "ibv_destroy_cq");
    } else {
        ibloop_wait_acks(&ibcq->mutex, &ibcq->cond, &ibcq->async_events_completed,
                         cq->async_reported, NULL, 0, "ibv_destroy_cq");
    }
    ibloop_fab_lock();
    ibloop_lock(&w->lock);
    atomic_store(&w->gen, 0);
    ibloop_unlock(&w->lock);
    ibloop_arena_free(w->ring, w->ring_order);
    ibloop_fab_unlock();
    ibloop_local_cq[cq->idx] = NULL;
    atomic_fetch_sub(&ibloop_ctx_of(ibcq->context)->nobjs, 1);
    pthread_mutex_destroy(&cq->poll_lock);
    pthread_mutex_destroy(&ibcq->mutex);
    pthread_cond_destroy(&ibcq->cond);
    free(cq);
    return 0;
}

/*
 * Resizing: the ring is replaced by one of pow2(cqe + 1) entries holding the
 * completions not yet polled, and ibv_cq->cqe becomes its size - 1 (mlx5
 * and rxe alike).  Like mlx5, a size that rounds to the current one changes
 * nothing.  Fewer entries than completions waiting is EINVAL (rxe checks it;
 * the IB spec requires it; mlx5's firmware refuses it), as is 0 or more than
 * max_cqe.  Producers (any process) hold the CQ lock while they push and
 * pollers of this process hold poll_lock: both are held while the ring
 * changes.
 */
int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
    struct ibloop_cq *cq = IBLOOP_CONTAINER(ibcq, struct ibloop_cq);
    struct ibloop_wire_cq *w = ibloop_cq(cq->idx);
    uint32_t size = 2, order, old_order;
    uint64_t ring, old_ring, p, c;
    int rc = 0;

    if (cqe < 1 || (uint32_t)cqe > ibloop_env()->max_cqe)
        return EINVAL;
    while (size < (uint32_t)cqe + 1)
        size <<= 1;
    if (size == w->size)
        return 0;
    ibloop_fab_lock(); /* the arena */
    ring = ibloop_arena_alloc((uint64_t)size * sizeof(struct ibloop_wire_cqe), &order);
    ibloop_fab_unlock();
    if (!ring)
        return ENOMEM;
    pthread_mutex_lock(&cq->poll_lock);
    ibloop_lock(&w->lock);
    p = atomic_load_explicit(&w->prod, memory_order_relaxed);
    c = atomic_load_explicit(&w->cons, memory_order_relaxed);
    if (p - c > (uint64_t)cqe) {
        rc = EINVAL;
    } else {
        struct ibloop_wire_cqe *to = ibloop_at(ring), *from = cq_ring(w);
        for (uint64_t i = c; i != p; i++)
            to[i & (size - 1)] = from[i & (w->size - 1)];
        old_ring = w->ring;
        old_order = w->ring_order;
        /* Three stores where a lock's structure is otherwise published by
         * one (ibloop_lock): should this process die between them, a pusher
         * that recovers the lock must still write inside whichever ring it
         * finds, so the ring never has fewer entries than size says (grow:
         * the ring first; shrink: size first), and reclaim must not free a
         * ring by the other's order ('resizing'). */
        atomic_store(&w->resizing, 1);
        if (size > w->size) {
            w->ring = ring;
            w->ring_order = order;
            w->size = size;
        } else {
            w->size = size;
            w->ring = ring;
            w->ring_order = order;
        }
        atomic_store(&w->resizing, 0);
        ring = old_ring;
        order = old_order;
        ibcq->cqe = (int)size - 1;
    }
    ibloop_unlock(&w->lock);
    pthread_mutex_unlock(&cq->poll_lock);
    ibloop_fab_lock();
    ibloop_arena_free(ring, order); /* the old ring, or the new one refused */
    ibloop_fab_unlock();
    return rc;
}

/* The CQ's channel gets an event (called with the CQ lock held). */
static bool fire_locked(struct ibloop_wire_cq *w, uint32_t armed)
{
    if (!armed || !w->chan_gen)
        return false;
    if (!atomic_compare_exchange_strong(&w->armed, &armed, IBLOOP_ARM_NONE))
        return false;
    atomic_fetch_add(&w->ev_count, 1);
    return true;
}

static void fire_raise(uint32_t chan, uint32_t chan_gen)
{
    struct ibloop_wire_chan *ch = ibloop_chan(chan);

    if (atomic_load(&ch->gen) == chan_gen)
        ibloop_token_raise(&ch->token, ch->proc, ch->efd, ch->efd_id);
}

int ibloop_cq_push(uint32_t idx, uint32_t gen, const struct ibloop_wire_cqe *e)
{
    struct ibloop_wire_cq *w = ibloop_cq(idx);
    uint32_t armed, chan = 0, chan_gen = 0, ctx = 0, ctx_gen = 0;
    uint64_t p, c;
    bool fire = false, overflow = false;

    if (atomic_load(&w->gen) != gen)
        return IBLOOP_PUSH_GONE;
    ibloop_lock(&w->lock);
    if (atomic_load(&w->gen) != gen) {
        ibloop_unlock(&w->lock);
        return IBLOOP_PUSH_GONE;
    }
    if (atomic_load(&w->overflow)) {
        ibloop_unlock(&w->lock);
        return IBLOOP_PUSH_OVERFLOW;
    }
    if (w->proc != ibloop_fab.proc)
        ibloop_fault_die_in_lock();
    p = atomic_load_explicit(&w->prod, memory_order_relaxed);
    /* A2: the owner has finished reading the slots before 'cons' (R2) */
    c = atomic_load_explicit(&w->cons, memory_order_acquire);
    if (p - c >= w->size) {
        atomic_store(&w->overflow, 1);
        overflow = true;
        ctx = w->ctx;
        ctx_gen = w->ctx_gen;
    } else {
        cq_ring(w)[p & (w->size - 1)] = *e;
        /* R1: the entry before the index that publishes it */
        atomic_store_explicit(&w->prod, p + 1, memory_order_release);
        armed = atomic_load(&w->armed);
        if (armed == IBLOOP_ARM_ANY || e->solicited || e->status)
            fire = fire_locked(w, armed);
        chan = w->chan;
        chan_gen = w->chan_gen;
    }
    ibloop_unlock(&w->lock);
    if (overflow) {
        IBLOOP_DBG("CQ %u overflow", idx);
        ibloop_async_post(ctx, ctx_gen, IBV_EVENT_CQ_ERR, IBLOOP_OBJ_CQ, idx, gen);
        return IBLOOP_PUSH_OVERFLOW;
    }
    if (fire)
        fire_raise(chan, chan_gen);
    return IBLOOP_PUSH_OK;
}

int ibloop_req_notify_cq(struct ibv_cq *ibcq, int solicited)
{
    struct ibloop_cq *cq = IBLOOP_CONTAINER(ibcq, struct ibloop_cq);
    struct ibloop_wire_cq *w = ibloop_cq(cq->idx);
    bool fire = false;

    IBLOOP_COUNT(req_notify, 1);
    ibloop_lock(&w->lock);
    atomic_store(&w->armed, solicited ? IBLOOP_ARM_SOLICITED : IBLOOP_ARM_ANY);
    /* like mlx5: arming is relative to the consumer index, so entries not
     * yet polled raise the event at once (not for solicited-only) */
    if (!solicited && atomic_load(&w->prod) != atomic_load(&w->cons))
        fire = fire_locked(w, IBLOOP_ARM_ANY);
    ibloop_unlock(&w->lock);
    if (fire)
        fire_raise(w->chan, w->chan_gen);
    return 0;
}

static void wc_from_cqe(struct ibv_wc *wc, const struct ibloop_wire_cqe *e)
{
    wc->wr_id = e->wr_id;
    wc->status = (enum ibv_wc_status)e->status;
    wc->vendor_err = e->vendor_err;
    wc->qp_num = e->qp_num;
    if (e->status == IBV_WC_SUCCESS) {
        wc->opcode = (enum ibv_wc_opcode)e->opcode;
        wc->byte_len = e->byte_len;
        wc->imm_data = e->imm;
        wc->src_qp = e->src_qp;
        wc->wc_flags = e->wc_flags;
        wc->pkey_index = e->pkey_index;
        wc->slid = e->slid;
        wc->sl = e->sl;
        wc->dlid_path_bits = e->dlid_path_bits;
        return;
    }
    /* only wr_id, status, vendor_err and qp_num are valid on an error:
     * poison the rest so that code reading them shows it */
    wc->opcode = (enum ibv_wc_opcode)0xdead;
    wc->byte_len = POISON32;
    wc->imm_data = POISON32;
    wc->src_qp = POISON32;
    wc->wc_flags = POISON32;
    wc->pkey_index = 0xdead;
    wc->slid = 0xdead;
    wc->sl = 0xde;
    wc->dlid_path_bits = 0xad;
}

int ibloop_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
    struct ibloop_cq *cq = IBLOOP_CONTAINER(ibcq, struct ibloop_cq);
    struct ibloop_context *ctx = ibloop_ctx_of(ibcq->context);
    struct ibloop_wire_cq *w = ibloop_cq(cq->idx);
    struct ibloop_wire_cqe *ring;
    uint64_t p, c;
    int k = 0;

    if (n < 0)
        return -1;
    if (atomic_load_explicit(&ctx->npending, memory_order_relaxed))
        ibloop_ctx_progress(ctx, false);
    pthread_mutex_lock(&cq->poll_lock);
    ring = cq_ring(w); /* resizing holds poll_lock */
    /* A1: pairs with R1 of the producer that wrote the entries */
    p = atomic_load_explicit(&w->prod, memory_order_acquire);
    c = atomic_load_explicit(&w->cons, memory_order_relaxed);
    for (; c != p && k < n; c++, k++) {
        const struct ibloop_wire_cqe *e = &ring[c & (w->size - 1)];
        wc_from_cqe(&wc[k], e);
        if (e->is_send) {
            struct ibloop_wire_qp *q = ibloop_qp(e->qp_idx);
            if (atomic_load(&q->gen) == e->qp_gen &&
                atomic_load(&q->sq_freed) < e->sq_idx)
                /* R5: the slots before sq_idx may be reused by post_send */
                atomic_store_explicit(&q->sq_freed, e->sq_idx,
                                      memory_order_release);
        }
    }
    /* R2: the slots read above may be overwritten (A2) */
    atomic_store_explicit(&w->cons, c, memory_order_release);
    pthread_mutex_unlock(&cq->poll_lock);
    IBLOOP_COUNT(poll_cq, 1);
    IBLOOP_COUNT(cqes, k);
    IBLOOP_COUNT(poll_empty, k == 0);
    return k;
}
