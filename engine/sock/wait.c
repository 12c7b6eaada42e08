/*
 * tern_sock_wait: start newly posted ops, dispatch epoll readiness, return
 * one queued event.
 *
 * Locking: the set lock is held throughout except while blocked in
 * epoll_wait (set->waiting) and around progress callbacks.  A thread that
 * posts while the waiter is blocked kicks the eventfd (once per blocking,
 * set->kicked); the waiter drains it when it comes back.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "engine/sock/sock_internal.h"

#define TERN_SOCK_EPOLL_BATCH 64

static void dispatch(tern_sock_t *s, uint32_t events)
{
    switch (s->state) {
    case TERN_SOCK_ST_CONNECTING:
        tern_sock_connect_progress_locked(s);
        break;
    case TERN_SOCK_ST_CONNECTED:
        if (s->rd.state == TERN_SOCK_XFER_ACTIVE &&
            (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
            tern_sock_xfer_progress_locked(s, &s->rd);
        if (s->state == TERN_SOCK_ST_CONNECTED && s->wr.state == TERN_SOCK_XFER_ACTIVE &&
            (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)))
            tern_sock_xfer_progress_locked(s, &s->wr);
        break;
    case TERN_SOCK_ST_LISTENING:
        tern_sock_listener_ready_locked(s);
        break;
    default: /* closed or failed since the event was fetched */
        break;
    }
}

static void process_attn(tern_sock_set_t *set)
{
    tern_list_t *e;
    while ((e = tern_list_pop_head(&set->attn)) != NULL) {
        tern_sock_t *s = TERN_CONTAINER_OF(e, tern_sock_t, attn_link);
        s->attn = false;
        if (s->state == TERN_SOCK_ST_CONNECTING)
            tern_sock_connect_progress_locked(s);
        else
            tern_sock_start_io_locked(s);
    }
}

/* Hand over the oldest queued event; frees a socket whose CLOSE it is. */
static void pop_event(tern_sock_set_t *set, tern_sock_event_t *ev)
{
    tern_list_t *e = tern_list_pop_head(&set->events);
    tern_sock_evnode_t *n = TERN_CONTAINER_OF(e, tern_sock_evnode_t, link);
    tern_sock_t *s = n->ev.sock;
    n->queued = false;
    *ev = n->ev;
    ev->user_ptr = s->user_ptr;
    if (ev->status != TERN_OK)
        tern_error(ev->status, "%s", n->msg);
    switch (ev->op) {
    case TERN_SOCK_OP_READ:
        s->rd.state = TERN_SOCK_XFER_IDLE;
        break;
    case TERN_SOCK_OP_WRITE:
        s->wr.state = TERN_SOCK_XFER_IDLE;
        break;
    case TERN_SOCK_OP_CLOSE:
        tern_list_del(&s->link);
        tern_sock_free(s);
        break;
    default:
        break;
    }
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

tern_status_t tern_sock_wait(tern_sock_set_t *set, int timeout_ms, tern_sock_event_t *ev)
{
    struct epoll_event evs[TERN_SOCK_EPOLL_BATCH];
    long long deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
    tern_status_t st = TERN_OK;
    bool polled = false;

    pthread_mutex_lock(&set->lock);
    if (set->in_wait) {
        pthread_mutex_unlock(&set->lock);
        return tern_error(TERN_SOCK_ERR_BUSY, "sock wait: another thread is waiting on this set");
    }
    set->in_wait = true;
    for (;;) {
        process_attn(set);
        if (!tern_list_empty(&set->events)) {
            pop_event(set, ev);
            break;
        }
        if (set->wakeup_pending) {
            set->wakeup_pending = false;
            *ev = (tern_sock_event_t){.op = TERN_SOCK_OP_WAKEUP, .status = TERN_OK};
            break;
        }
        int tmo = -1;
        if (timeout_ms == 0) {
            tmo = 0;
        } else if (timeout_ms > 0) {
            long long left = deadline - now_ms();
            tmo = left > 0 ? (int)left : 0;
        }
        if (tmo == 0 && polled) {
            st = TERN_ERR_TIMED_OUT;
            break;
        }
        set->waiting = true;
        pthread_mutex_unlock(&set->lock);
        int n = epoll_wait(set->epfd, evs, TERN_SOCK_EPOLL_BATCH, tmo);
        int err = errno;
        pthread_mutex_lock(&set->lock);
        set->waiting = false;
        polled = true;
        if (set->kicked) {
            uint64_t v;
            while (read(set->evfd, &v, sizeof(v)) < 0 && errno == EINTR)
                ;
            set->kicked = false;
        }
        if (n < 0) {
            if (err == EINTR)
                continue;
            st = tern_error(TERN_ERR_IO, "sock wait: epoll_wait: %s", strerror(err));
            break;
        }
        /* sockets are freed only by pop_event in this thread, so every
         * pointer of the batch stays valid while it is dispatched */
        for (int i = 0; i < n; i++)
            if (evs[i].data.ptr != NULL)
                dispatch(evs[i].data.ptr, evs[i].events);
    }
    set->in_wait = false;
    pthread_mutex_unlock(&set->lock);
    return st;
}
