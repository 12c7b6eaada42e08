/*
 * post_close: interrupt every outstanding op of the socket (each completes
 * with TERN_SOCK_ERR_CLOSED, its op type telling which), close the fd, queue
 * the CLOSE event.  The socket is freed when wait returns that event.
 *
 * A listener closes its listen socket even with connections still queued in
 * the kernel: the kernel resets them, so their clients see ECONNRESET.  Its
 * ACCEPT notification completes with TERN_SOCK_ERR_CLOSED if it was queued
 * and not yet returned, or is queued so if connections were pending.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "engine/sock/sock_internal.h"

static bool backlog_pending(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

static void close_listener(tern_sock_t *s)
{
    static const char why[] = "interrupted by post_close: queued connections are reset";
    if (s->ev_conn.queued) {
        tern_sock_event_push_locked(s, &s->ev_conn, TERN_SOCK_OP_ACCEPT, 0, TERN_SOCK_ERR_CLOSED,
                                    "accept on listener %s %s", s->peer, why);
    } else if (!s->accept_notified && backlog_pending(s->fd)) {
        tern_sock_event_push_locked(s, &s->ev_conn, TERN_SOCK_OP_ACCEPT, 0, TERN_SOCK_ERR_CLOSED,
                                    "accept on listener %s %s", s->peer, why);
    }
}

tern_status_t tern_sock_post_close(tern_sock_t *s)
{
    tern_sock_set_t *set = s->set;
    pthread_mutex_lock(&set->lock);
    if (s->state == TERN_SOCK_ST_CLOSED) {
        pthread_mutex_unlock(&set->lock);
        return tern_error(TERN_ERR_INVALID_PARAM, "post_close on %s: already closed", s->peer);
    }
    tern_debug("sock: post_close of %s (fd %d, state %d)", s->peer, s->fd, (int)s->state);
    for (int i = 0; i < 2; i++) {
        tern_sock_xfer_t *x = i == 0 ? &s->rd : &s->wr;
        if (x->state == TERN_SOCK_XFER_ACTIVE)
            tern_sock_xfer_fail_locked(s, x, TERN_SOCK_ERR_CLOSED, "interrupted by post_close");
    }
    if (s->state == TERN_SOCK_ST_CONNECTING)
        tern_sock_event_push_locked(s, &s->ev_conn, TERN_SOCK_OP_CONNECT, 0, TERN_SOCK_ERR_CLOSED,
                                    "connect to %s interrupted by post_close", s->peer);
    else if (s->state == TERN_SOCK_ST_LISTENING)
        close_listener(s);
    if (s->fd >= 0) {
        epoll_ctl(set->epfd, EPOLL_CTL_DEL, s->fd, NULL);
        close(s->fd);
        s->fd = -1;
    }
    if (s->attn) {
        tern_list_del(&s->attn_link);
        s->attn = false;
    }
    s->state = TERN_SOCK_ST_CLOSED;
    tern_sock_event_push_locked(s, &s->ev_close, TERN_SOCK_OP_CLOSE, 0, TERN_OK, NULL);
    pthread_mutex_unlock(&set->lock);
    return TERN_OK;
}
