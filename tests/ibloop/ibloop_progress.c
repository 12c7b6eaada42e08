/*
 * ibloop: progress of send queues that wait on a timer (RNR, no response).
 *
 * Such a queue is marked pending; every ibv_poll_cq of its context and a
 * helper thread per context (started the first time a queue waits) run it
 * again.  The helper thread sleeps until the earliest deadline; it stands
 * for the HCA retrying on its own while the program sleeps in
 * ibv_get_cq_event or epoll.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <time.h>

#include "ibloop.h"

static void *helper_main(void *arg)
{
    struct ibloop_context *c = arg;
    struct timespec ts;
    uint64_t wake, now;

    pthread_mutex_lock(&c->thr_lock);
    while (!c->thr_stop) {
        wake = c->thr_wake;
        now = ibloop_now_ns();
        if (!wake) {
            pthread_cond_wait(&c->thr_cond, &c->thr_lock);
        } else if (now < wake) {
            ts.tv_sec = (time_t)(wake / 1000000000ull);
            ts.tv_nsec = (long)(wake % 1000000000ull);
            pthread_cond_timedwait(&c->thr_cond, &c->thr_lock, &ts);
        } else {
            c->thr_wake = 0;
            pthread_mutex_unlock(&c->thr_lock);
            ibloop_ctx_progress(c, true);
            pthread_mutex_lock(&c->thr_lock);
        }
    }
    pthread_mutex_unlock(&c->thr_lock);
    return NULL;
}

static void helper_kick(struct ibloop_context *c, uint64_t when)
{
    pthread_mutex_lock(&c->thr_lock);
    if (!c->thr_started && !c->thr_stop) {
        if (pthread_create(&c->thr, NULL, helper_main, c) == 0)
            c->thr_started = true;
    }
    if (!c->thr_wake || when < c->thr_wake) {
        c->thr_wake = when ? when : 1;
        pthread_cond_signal(&c->thr_cond);
    }
    pthread_mutex_unlock(&c->thr_lock);
}

void ibloop_helper_stop(struct ibloop_context *c)
{
    bool started;

    pthread_mutex_lock(&c->thr_lock);
    c->thr_stop = true;
    started = c->thr_started;
    pthread_cond_signal(&c->thr_cond);
    pthread_mutex_unlock(&c->thr_lock);
    if (started)
        pthread_join(c->thr, NULL);
}

void ibloop_sq_after(struct ibloop_qp *qp, bool pending, struct ibloop_deferred *d)
{
    struct ibloop_context *c = qp->ctx;

    for (int i = 0; i < d->n; i++)
        ibloop_qp_error(d->e[i].idx, d->e[i].gen, d->e[i].event);
    d->n = 0;
    if (pending) {
        if (!atomic_exchange(&qp->pending, 1))
            atomic_fetch_add(&c->npending, 1);
        helper_kick(c, ibloop_qp(qp->idx)->next_try);
    } else if (atomic_exchange(&qp->pending, 0)) {
        atomic_fetch_sub(&c->npending, 1);
    }
}

void ibloop_sq_run(struct ibloop_qp *qp, bool wait_lock)
{
    struct ibloop_wire_qp *q = ibloop_qp(qp->idx);
    struct ibloop_deferred d = {0};
    bool pending;

    if (wait_lock)
        ibloop_lock(&q->lock);
    else if (!ibloop_trylock(&q->lock))
        return;
    pending = ibloop_sq_exec_locked(qp, &d);
    ibloop_unlock(&q->lock);
    ibloop_sq_after(qp, pending, &d);
}

void ibloop_ctx_progress(struct ibloop_context *c, bool wait_lock)
{
    if (wait_lock)
        pthread_mutex_lock(&c->lock);
    else if (pthread_mutex_trylock(&c->lock))
        return;
    for (struct ibloop_qp *qp = c->qps; qp; qp = qp->next)
        if (atomic_load(&qp->pending))
            ibloop_sq_run(qp, wait_lock);
    pthread_mutex_unlock(&c->lock);
}
