/*
 * post_connect: the host description's addresses are resolved when posted
 * and tried in order.  Every attempt is non-blocking; whether it succeeded is
 * decided in the waiting thread (EPOLLOUT, then SO_ERROR / getpeername), so
 * a post_close right after post_connect always interrupts it.  A failed
 * attempt moves to the next address; the CONNECT event of the last failure
 * lists every attempt.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "engine/sock/sock_internal.h"

/* Append "addr: why" to the CONNECT message being built. */
static void note_failure(tern_sock_t *s, int err)
{
    char *m = s->ev_conn.msg;
    size_t used = strlen(m);
    if (used == 0)
        snprintf(m, TERN_SOCK_MSG_LEN, "connect to '%s' port %d failed: %s: %s", s->host_desc,
                 s->port, s->peer, strerror(err));
    else if (used < TERN_SOCK_MSG_LEN - 1)
        snprintf(m + used, TERN_SOCK_MSG_LEN - used, "; %s: %s", s->peer, strerror(err));
    s->conn_status = tern_sock_errno_status(err);
}

static void drop_fd(tern_sock_t *s)
{
    if (s->fd < 0)
        return;
    epoll_ctl(s->set->epfd, EPOLL_CTL_DEL, s->fd, NULL);
    close(s->fd);
    s->fd = -1;
}

/* Start attempts from next_addr until one is under way; if none is left,
 * the failure is reported by the waiting thread (conn_failed). */
static void connect_next(tern_sock_t *s)
{
    while (s->next_addr < s->naddrs) {
        tern_sock_addr_t *a = &s->addrs[s->next_addr++];
        tern_sock_format_addr((struct sockaddr *)&a->sa, s->peer, sizeof(s->peer));
        tern_debug("sock: connect attempt %d/%d to %s", s->next_addr, s->naddrs, s->peer);
        int fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            note_failure(s, errno);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        int r;
        while ((r = connect(fd, (struct sockaddr *)&a->sa, a->len)) < 0 && errno == EINTR)
            ;
        if (r == 0 || errno == EINPROGRESS) {
            struct epoll_event ee = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
                                     .data.ptr = s};
            if (epoll_ctl(s->set->epfd, EPOLL_CTL_ADD, fd, &ee) == 0) {
                s->fd = fd;
                return; /* EPOLLOUT (or an error) decides */
            }
        }
        note_failure(s, errno);
        close(fd);
    }
    s->conn_failed = true;
    tern_sock_attn_locked(s);
}

static void connect_failed(tern_sock_t *s)
{
    char msg[TERN_SOCK_MSG_LEN];
    memcpy(msg, s->ev_conn.msg, sizeof(msg));
    s->state = TERN_SOCK_ST_FAILED;
    tern_sock_event_push_locked(s, &s->ev_conn, TERN_SOCK_OP_CONNECT, 0, s->conn_status, "%s", msg);
    for (int i = 0; i < 2; i++) {
        tern_sock_xfer_t *x = i == 0 ? &s->rd : &s->wr;
        if (x->state == TERN_SOCK_XFER_ACTIVE)
            tern_sock_xfer_fail_locked(s, x, s->conn_status, "not started: its connect failed");
    }
}

/* Decide a connect under way (EPOLLOUT, an error, or a post while connecting). */
void tern_sock_connect_progress_locked(tern_sock_t *s)
{
    if (s->conn_failed) {
        if (s->state == TERN_SOCK_ST_CONNECTING)
            connect_failed(s);
        return;
    }
    if (s->fd < 0)
        return;
    int err = 0;
    socklen_t el = sizeof(err);
    if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
        err = errno;
    if (err == 0) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        if (getpeername(s->fd, (struct sockaddr *)&ss, &sl) < 0) {
            if (errno == ENOTCONN)
                return; /* still in progress */
            err = errno;
        }
    }
    if (err == 0) {
        s->state = TERN_SOCK_ST_CONNECTED;
        tern_sock_event_push_locked(s, &s->ev_conn, TERN_SOCK_OP_CONNECT, 0, TERN_OK, NULL);
        tern_sock_start_io_locked(s);
        return;
    }
    note_failure(s, err);
    drop_fd(s);
    connect_next(s);
    if (s->conn_failed)
        connect_failed(s);
}

/* Resolve every entry of the description (in order) into s->addrs. */
static tern_status_t resolve(tern_sock_t *s, const char *desc, int port)
{
    char portstr[16], why[128] = "empty";
    snprintf(portstr, sizeof(portstr), "%d", port);
    char *copy = strdup(desc), *save = NULL;
    if (copy == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "post_connect: out of memory");
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        if (*tok == '\0')
            continue;
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
        struct addrinfo *res, *ai;
        int rc = getaddrinfo(tok, portstr, &hints, &res);
        if (rc != 0) {
            snprintf(why, sizeof(why), "%s: %s", tok, gai_strerror(rc));
            continue;
        }
        for (ai = res; ai != NULL; ai = ai->ai_next) {
            tern_sock_addr_t *na = realloc(s->addrs, sizeof(*na) * (size_t)(s->naddrs + 1));
            if (na == NULL) {
                freeaddrinfo(res);
                free(copy);
                return tern_error(TERN_ERR_NO_MEMORY, "post_connect: out of memory");
            }
            s->addrs = na;
            memset(&na[s->naddrs], 0, sizeof(*na));
            memcpy(&na[s->naddrs].sa, ai->ai_addr, ai->ai_addrlen);
            na[s->naddrs].len = ai->ai_addrlen;
            s->naddrs++;
        }
        freeaddrinfo(res);
    }
    free(copy);
    if (s->naddrs == 0) /* the peer's description, not the caller's argument, is at fault */
        return tern_error(TERN_ERR_UNREACHABLE,
                          "post_connect: host description '%s' has no usable address (%s)", desc,
                          why);
    return TERN_OK;
}

tern_status_t tern_sock_post_connect(tern_sock_set_t *set, void *user_ptr,
                                     const char *host_description, int port, tern_sock_t **sock)
{
    tern_status_t st;
    if (host_description == NULL || port <= 0 || port > 65535)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "post_connect: need a host description and a "
                          "port in 1..65535 (got %d)",
                          port);
    tern_sock_t *s = tern_sock_alloc(set, -1, user_ptr);
    if (s == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "post_connect: out of memory");
    s->host_desc = strdup(host_description);
    if (s->host_desc == NULL) {
        st = tern_error(TERN_ERR_NO_MEMORY, "post_connect: out of memory");
        goto err_free;
    }
    s->port = port;
    st = resolve(s, host_description, port);
    if (st != TERN_OK)
        goto err_free;
    s->state = TERN_SOCK_ST_CONNECTING;
    pthread_mutex_lock(&set->lock);
    tern_list_push_tail(&set->socks, &s->link);
    connect_next(s);
    pthread_mutex_unlock(&set->lock);
    *sock = s;
    return TERN_OK;

err_free:
    tern_sock_free(s);
    return st;
}
