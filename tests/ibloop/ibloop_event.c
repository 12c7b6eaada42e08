/*
 * ibloop: completion channels and asynchronous events.
 * Both fds are eventfds kept readable exactly while something is pending
 * (the token protocol of ibloop_notify.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "ibloop.h"

/* ---- completion channels ----------------------------------------------- */
struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
    struct ibloop_context *c = ibloop_ctx_of(context);
    struct ibloop_chan *ch = calloc(1, sizeof(*ch));
    struct ibloop_wire_chan *w;
    uint64_t id = 0;
    int i, fd;

    fd = ch ? ibloop_efd_create(&id) : -1;
    if (fd < 0) {
        free(ch);
        errno = ENOMEM;
        return NULL;
    }
    ibloop_fab_lock();
    i = ibloop_tab_alloc(IBLOOP_T_CHAN);
    if (i < 0) {
        ibloop_fab_unlock();
        close(fd);
        free(ch);
        errno = ENOMEM;
        return NULL;
    }
    w = ibloop_chan((uint32_t)i);
    w->proc = ibloop_fab.proc;
    w->efd = fd;
    w->efd_id = id;
    w->ctx = c->idx;
    ch->idx = (uint32_t)i;
    ch->gen = ibloop_new_gen();
    atomic_store(&w->gen, ch->gen);
    ibloop_fab_unlock();
    pthread_mutex_init(&ch->lock, NULL);
    ch->ibv.context = context;
    ch->ibv.fd = fd;
    atomic_fetch_add(&c->nobjs, 1);
    return &ch->ibv;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
    struct ibloop_chan *ch = IBLOOP_CONTAINER(channel, struct ibloop_chan);

    pthread_mutex_lock(&ch->lock);
    if (ch->cqs) {
        pthread_mutex_unlock(&ch->lock);
        return EBUSY;
    }
    pthread_mutex_unlock(&ch->lock);
    ibloop_fab_lock();
    atomic_store(&ibloop_chan(ch->idx)->gen, 0);
    ibloop_fab_unlock();
    close(channel->fd);
    atomic_fetch_sub(&ibloop_ctx_of(channel->context)->nobjs, 1);
    pthread_mutex_destroy(&ch->lock);
    free(ch);
    return 0;
}

/* a CQ of the channel with an event not handed out yet (chan lock held) */
static struct ibloop_cq *chan_pending(struct ibloop_chan *ch)
{
    for (struct ibloop_cq *cq = ch->cqs; cq; cq = cq->chan_next)
        if (atomic_load(&ibloop_cq(cq->idx)->ev_count) > cq->ev_taken)
            return cq;
    return NULL;
}

/* nothing left to hand out: empty the eventfd, then look again (S1) */
static void chan_settle(struct ibloop_chan *ch)
{
    struct ibloop_wire_chan *w = ibloop_chan(ch->idx);

    ibloop_token_drain(ch->ibv.fd, &w->token);
    if (chan_pending(ch))
        ibloop_token_raise(&w->token, ibloop_fab.proc, ch->ibv.fd, w->efd_id);
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq_out,
                     void **cq_context)
{
    struct ibloop_chan *ch = IBLOOP_CONTAINER(channel, struct ibloop_chan);
    struct ibloop_cq *cq;

    for (;;) {
        pthread_mutex_lock(&ch->lock);
        cq = chan_pending(ch);
        if (cq) {
            cq->ev_taken++;
            if (!chan_pending(ch))
                chan_settle(ch);
            pthread_mutex_unlock(&ch->lock);
            *cq_out = &cq->ibv;
            *cq_context = cq->ibv.cq_context;
            return 0;
        }
        chan_settle(ch);
        cq = chan_pending(ch);
        pthread_mutex_unlock(&ch->lock);
        if (cq)
            continue;
        if (ibloop_wait_readable(channel->fd, -1) < 0)
            return -1;
    }
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
    pthread_mutex_lock(&cq->mutex);
    cq->comp_events_completed += nevents;
    pthread_cond_signal(&cq->cond);
    pthread_mutex_unlock(&cq->mutex);
}

/* ---- asynchronous events ------------------------------------------------ */
void ibloop_async_post(uint32_t ctx, uint32_t ctx_gen, uint32_t type,
                       uint32_t kind, uint32_t idx, uint32_t gen)
{
    struct ibloop_wire_ctx *w = ibloop_ctx(ctx);
    uint64_t t, h;
    uint32_t proc;
    int efd;
    uint64_t id;

    ibloop_lock(&w->lock);
    if (atomic_load(&w->gen) != ctx_gen) {
        ibloop_unlock(&w->lock);
        return;
    }
    t = atomic_load_explicit(&w->tail, memory_order_relaxed);
    h = atomic_load_explicit(&w->head, memory_order_acquire); /* A7 */
    if (t - h >= IBLOOP_NASYNC) {
        atomic_fetch_add(&w->dropped, 1);
        ibloop_unlock(&w->lock);
        return;
    }
    w->ev[t % IBLOOP_NASYNC] = (struct ibloop_wire_async_ev){type, kind, idx, gen};
    /* R6: the event before the tail that publishes it (A6 in the reader) */
    atomic_store_explicit(&w->tail, t + 1, memory_order_release);
    proc = w->proc;
    efd = w->efd;
    id = w->efd_id;
    ibloop_unlock(&w->lock);
    IBLOOP_DBG("async event %s to ctx %u", ibv_event_type_str(type), ctx);
    ibloop_token_raise(&w->token, proc, efd, id);
}

static bool async_pending(struct ibloop_wire_ctx *w)
{
    return atomic_load_explicit(&w->tail, memory_order_acquire) != /* A6 */
           atomic_load_explicit(&w->head, memory_order_relaxed);
}

/* turn a queued event into one for the user; false if its object is gone */
static bool async_local(const struct ibloop_wire_async_ev *e,
                        struct ibv_async_event *out)
{
    out->event_type = (enum ibv_event_type)e->type;
    switch (e->kind) {
    case IBLOOP_OBJ_QP: {
        struct ibloop_qp *qp = ibloop_local_qp[e->idx % IBLOOP_NQP];
        if (!qp || qp->gen != e->gen)
            return false;
        qp->async_reported++;
        out->element.qp = &qp->ibv;
        return true;
    }
    case IBLOOP_OBJ_CQ: {
        struct ibloop_cq *cq = ibloop_local_cq[e->idx % IBLOOP_NCQ];
        if (!cq || cq->gen != e->gen)
            return false;
        cq->async_reported++;
        out->element.cq = &cq->ibv;
        return true;
    }
    case IBLOOP_OBJ_SRQ: {
        struct ibloop_srq *srq = ibloop_local_srq[e->idx % IBLOOP_NSRQ];
        if (!srq || srq->gen != e->gen)
            return false;
        srq->async_reported++;
        out->element.srq = &srq->ibv;
        return true;
    }
    default:
        out->element.port_num = (int)e->idx;
        return true;
    }
}

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
    struct ibloop_context *c = ibloop_ctx_of(context);
    struct ibloop_wire_ctx *w = ibloop_ctx(c->idx);
    struct ibloop_wire_async_ev e;
    uint64_t h;
    bool got;

    for (;;) {
        ibloop_port_check();
        pthread_mutex_lock(&c->async_lock);
        got = false;
        while (!got && async_pending(w)) {
            h = atomic_load_explicit(&w->head, memory_order_relaxed);
            /* A6 was the acquire load of tail in async_pending */
            e = w->ev[h % IBLOOP_NASYNC];
            /* R7: the slot was copied out and may be reused (A7) */
            atomic_store_explicit(&w->head, h + 1, memory_order_release);
            got = async_local(&e, event);
        }
        if (!async_pending(w)) {
            ibloop_token_drain(context->async_fd, &w->token);
            if (async_pending(w))
                ibloop_token_raise(&w->token, ibloop_fab.proc, context->async_fd,
                                   w->efd_id);
        }
        pthread_mutex_unlock(&c->async_lock);
        if (got)
            return 0;
        if (async_pending(w))
            continue;
        if (ibloop_wait_readable(context->async_fd, ibloop_port_wait_ms()) < 0)
            return -1;
    }
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
    pthread_mutex_t *m = NULL;
    pthread_cond_t *cond = NULL;
    uint32_t *cnt = NULL;

    switch (event->event_type) {
    case IBV_EVENT_CQ_ERR:
        m = &event->element.cq->mutex;
        cond = &event->element.cq->cond;
        cnt = &event->element.cq->async_events_completed;
        break;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
        m = &event->element.qp->mutex;
        cond = &event->element.qp->cond;
        cnt = &event->element.qp->events_completed;
        break;
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED:
        m = &event->element.srq->mutex;
        cond = &event->element.srq->cond;
        cnt = &event->element.srq->events_completed;
        break;
    default:
        return;
    }
    pthread_mutex_lock(m);
    ++*cnt;
    pthread_cond_signal(cond);
    pthread_mutex_unlock(m);
}
