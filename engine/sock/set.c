/*
 * Socket sets: creation and destruction, socket allocation and epoll
 * registration, the event queue, the kick of a blocked waiter, wakeup and
 * adoption of native fds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "engine/sock/sock_internal.h"

tern_status_t tern_sock_set_create(tern_sock_set_t **out)
{
    tern_status_t st;
    tern_sock_set_t *set = calloc(1, sizeof(*set));
    if (set == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "sock set: out of memory");
    pthread_mutex_init(&set->lock, NULL);
    tern_list_init(&set->socks);
    tern_list_init(&set->events);
    tern_list_init(&set->attn);

    set->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (set->epfd < 0) {
        st = tern_error(TERN_ERR_IO, "sock set: epoll_create1: %s", strerror(errno));
        goto err_free;
    }
    set->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (set->evfd < 0) {
        st = tern_error(TERN_ERR_IO, "sock set: eventfd: %s", strerror(errno));
        goto err_epoll;
    }
    struct epoll_event ee = {.events = EPOLLIN, .data.ptr = NULL};
    if (epoll_ctl(set->epfd, EPOLL_CTL_ADD, set->evfd, &ee) < 0) {
        st = tern_error(TERN_ERR_IO, "sock set: epoll_ctl(eventfd): %s", strerror(errno));
        goto err_evfd;
    }
    *out = set;
    return TERN_OK;

err_evfd:
    close(set->evfd);
err_epoll:
    close(set->epfd);
err_free:
    pthread_mutex_destroy(&set->lock);
    free(set);
    return st;
}

int tern_sock_set_fd(const tern_sock_set_t *set) { return set->epfd; }

void tern_sock_set_destroy(tern_sock_set_t *set)
{
    tern_list_t *pos, *tmp;
    if (set == NULL)
        return;
    tern_list_for_each_safe(pos, tmp, &set->socks)
    {
        tern_sock_t *s = TERN_CONTAINER_OF(pos, tern_sock_t, link);
        if (s->fd >= 0)
            close(s->fd);
        tern_sock_free(s);
    }
    close(set->evfd);
    close(set->epfd);
    pthread_mutex_destroy(&set->lock);
    free(set);
}

static void evnode_init(tern_sock_evnode_t *n)
{
    tern_list_init(&n->link);
}

tern_sock_t *tern_sock_alloc(tern_sock_set_t *set, int fd, void *user_ptr)
{
    tern_sock_t *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    tern_list_init(&s->link);
    tern_list_init(&s->attn_link);
    s->set = set;
    s->fd = fd;
    s->user_ptr = user_ptr;
    s->is_socket = true;
    evnode_init(&s->rd.ev);
    evnode_init(&s->wr.ev);
    evnode_init(&s->ev_conn);
    evnode_init(&s->ev_close);
    return s;
}

/* The socket must be unlinked from every list of its set. */
void tern_sock_free(tern_sock_t *s)
{
    free(s->rd.iov_heap);
    free(s->wr.iov_heap);
    free(s->addrs);
    free(s->host_desc);
    free(s);
}

tern_status_t tern_sock_register_locked(tern_sock_t *s, uint32_t events)
{
    struct epoll_event ee = {.events = events, .data.ptr = s};
    if (epoll_ctl(s->set->epfd, EPOLL_CTL_ADD, s->fd, &ee) < 0)
        return tern_error(tern_sock_errno_status(errno), "epoll_ctl(ADD) of %s (fd %d): %s",
                          s->peer, s->fd, strerror(errno));
    return TERN_OK;
}

/* Make a waiter blocked in epoll_wait return (once per blocking). */
void tern_sock_kick_locked(tern_sock_set_t *set)
{
    if (!set->waiting || set->kicked)
        return;
    set->kicked = true;
    uint64_t one = 1;
    /* EAGAIN means the counter is already non-zero: the waiter wakes anyway */
    while (write(set->evfd, &one, sizeof(one)) < 0 && errno == EINTR)
        ;
}

/* A newly posted op: the waiting thread starts it. */
void tern_sock_attn_locked(tern_sock_t *s)
{
    if (!s->attn) {
        s->attn = true;
        tern_list_push_tail(&s->set->attn, &s->attn_link);
    }
    tern_sock_kick_locked(s->set);
}

void tern_sock_event_push_locked(tern_sock_t *s, tern_sock_evnode_t *n, tern_sock_op_t op,
                                 size_t num_bytes, tern_status_t status, const char *fmt, ...)
{
    n->ev.op = op;
    n->ev.num_bytes = num_bytes;
    n->ev.status = status;
    n->ev.sock = s;
    n->msg[0] = '\0';
    if (fmt != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(n->msg, sizeof(n->msg), fmt, ap);
        va_end(ap);
    }
    if (!n->queued) {
        n->queued = true;
        tern_list_push_tail(&s->set->events, &n->link);
    }
    tern_sock_kick_locked(s->set);
}

tern_status_t tern_sock_wakeup(tern_sock_set_t *set)
{
    pthread_mutex_lock(&set->lock);
    set->wakeup_pending = true;
    tern_sock_kick_locked(set);
    pthread_mutex_unlock(&set->lock);
    return TERN_OK;
}

/* A connected fd becomes a socket of set; on failure the fd is left to the
 * caller. */
tern_status_t tern_sock_adopt(tern_sock_set_t *set, int fd, void *user_ptr, const char *peer,
                              bool is_socket, tern_sock_t **sock)
{
    tern_status_t st;
    tern_sock_t *s = tern_sock_alloc(set, fd, user_ptr);
    if (s == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "socket of %s: out of memory", peer);
    snprintf(s->peer, sizeof(s->peer), "%s", peer);
    s->is_socket = is_socket;
    s->state = TERN_SOCK_ST_CONNECTED;
    pthread_mutex_lock(&set->lock);
    st = tern_sock_register_locked(s, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
    if (st == TERN_OK)
        tern_list_push_tail(&set->socks, &s->link);
    pthread_mutex_unlock(&set->lock);
    if (st != TERN_OK) {
        tern_sock_free(s);
        return st;
    }
    *sock = s;
    return TERN_OK;
}

tern_status_t tern_sock_native_to_sock(tern_sock_set_t *set, int fd, void *user_ptr,
                                       tern_sock_t **sock)
{
    char peer[TERN_SOCK_PEER_LEN];
    bool is_socket;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "native_to_sock: fd %d: fcntl: %s", fd,
                          strerror(errno));
    tern_sock_describe_fd(fd, peer, sizeof(peer), &is_socket);
    return tern_sock_adopt(set, fd, user_ptr, peer, is_socket, sock);
}

void tern_sock_set_user_ptr(tern_sock_t *s, void *user_ptr)
{
    pthread_mutex_lock(&s->set->lock);
    s->user_ptr = user_ptr;
    pthread_mutex_unlock(&s->set->lock);
}

int tern_sock_get_fd(const tern_sock_t *s)
{
    return s->fd;
}
