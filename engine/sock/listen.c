/*
 * Listeners: bind on an explicit port, any port, or the first free port of
 * TERN_PORT_RANGE; ACCEPT notifications; tern_sock_accept.
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

tern_status_t tern_sock_parse_port_range(const char *s, int *lo, int *hi)
{
    *lo = *hi = 0;
    if (s == NULL || *s == '\0')
        return TERN_OK;
    char *end;
    long a = strtol(s, &end, 10);
    if (end == s || (*end != '-' && *end != ':'))
        goto bad;
    const char *p = end + 1;
    long b = strtol(p, &end, 10);
    if (end == p || *end != '\0' || a < 1 || b > 65535 || a > b)
        goto bad;
    *lo = (int)a;
    *hi = (int)b;
    return TERN_OK;
bad:
    return tern_error(TERN_ERR_INVALID_PARAM,
                      "TERN_PORT_RANGE='%s': expected lo-hi with 1 <= lo <= hi <= 65535", s);
}

/* TERN_PORT_RANGE "lo-hi" (or "lo:hi"); *lo = *hi = 0 when unset. */
static tern_status_t port_range(int *lo, int *hi)
{
    return tern_sock_parse_port_range(getenv("TERN_PORT_RANGE"), lo, hi);
}

/* The address to bind: bind_addr resolved, or the IPv6 wildcard (dual
 * stack) falling back to the IPv4 one. */
static tern_status_t bind_address(const char *bind_addr, tern_sock_addr_t *a, bool *dual)
{
    memset(a, 0, sizeof(*a));
    *dual = false;
    if (bind_addr == NULL) {
        int probe = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (probe >= 0) {
            close(probe);
            struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->sa;
            in6->sin6_family = AF_INET6;
            in6->sin6_addr = in6addr_any;
            a->len = sizeof(*in6);
            *dual = true;
        } else {
            struct sockaddr_in *in = (struct sockaddr_in *)&a->sa;
            in->sin_family = AF_INET;
            in->sin_addr.s_addr = htonl(INADDR_ANY);
            a->len = sizeof(*in);
        }
        return TERN_OK;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    struct addrinfo *res;
    int rc = getaddrinfo(bind_addr, NULL, &hints, &res);
    if (rc != 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "listen: bind address '%s': %s", bind_addr,
                          gai_strerror(rc));
    memcpy(&a->sa, res->ai_addr, res->ai_addrlen);
    a->len = res->ai_addrlen;
    freeaddrinfo(res);
    return TERN_OK;
}

static void set_port(tern_sock_addr_t *a, int port)
{
    if (a->sa.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&a->sa)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)&a->sa)->sin_port = htons((uint16_t)port);
}

/* One bind + listen on port; the fd, or -1 with errno. */
static int try_listen(tern_sock_addr_t *a, bool dual, int port)
{
    int fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (dual)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    set_port(a, port);
    if (bind(fd, (struct sockaddr *)&a->sa, a->len) < 0 || listen(fd, SOMAXCONN) < 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

tern_status_t tern_sock_listen(tern_sock_set_t *set, void *user_ptr, const char *bind_addr,
                               int *port, tern_sock_t **sock)
{
    tern_sock_addr_t a;
    bool dual;
    int lo, hi, fd = -1;
    char where[TERN_SOCK_PEER_LEN];
    const char *host = bind_addr ? bind_addr : "*";

    if (port == NULL || *port < 0 || *port > 65535)
        return tern_error(TERN_ERR_INVALID_PARAM, "listen on %s: port must be 0..65535", host);
    tern_status_t st = bind_address(bind_addr, &a, &dual);
    if (st != TERN_OK)
        return st;
    if (*port == 0 && (st = port_range(&lo, &hi)) != TERN_OK)
        return st;

    if (*port != 0 || lo == 0) {
        fd = try_listen(&a, dual, *port);
        if (fd < 0)
            return tern_error(tern_sock_errno_status(errno), "listen on %s port %d: %s", host,
                              *port, strerror(errno));
    } else {
        for (int p = lo; p <= hi && fd < 0; p++) {
            fd = try_listen(&a, dual, p);
            if (fd < 0 && errno != EADDRINUSE)
                return tern_error(tern_sock_errno_status(errno),
                                  "listen on %s port %d (TERN_PORT_RANGE=%d-%d): %s", host, p, lo,
                                  hi, strerror(errno));
        }
        if (fd < 0) /* every bind said EADDRINUSE: the range's ports are all in use */
            return tern_error(TERN_ERR_ADDR_IN_USE,
                              "listen on %s: no free port in TERN_PORT_RANGE=%d-%d (all %d "
                              "ports in use)",
                              host, lo, hi, hi - lo + 1);
    }

    socklen_t sl = sizeof(a.sa);
    getsockname(fd, (struct sockaddr *)&a.sa, &sl);
    tern_sock_format_addr((struct sockaddr *)&a.sa, where, sizeof(where));
    tern_sock_t *s = tern_sock_alloc(set, fd, user_ptr);
    if (s == NULL) {
        close(fd);
        return tern_error(TERN_ERR_NO_MEMORY, "listen on %s: out of memory", where);
    }
    memcpy(s->peer, where, sizeof(s->peer));
    s->state = TERN_SOCK_ST_LISTENING;
    pthread_mutex_lock(&set->lock);
    st = tern_sock_register_locked(s, EPOLLIN);
    if (st == TERN_OK)
        tern_list_push_tail(&set->socks, &s->link);
    pthread_mutex_unlock(&set->lock);
    if (st != TERN_OK) {
        close(fd);
        tern_sock_free(s);
        return st;
    }
    *port = ntohs(a.sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&a.sa)->sin6_port
                                             : ((struct sockaddr_in *)&a.sa)->sin_port);
    *sock = s;
    return TERN_OK;
}

static void listener_arm(tern_sock_t *s, bool on)
{
    struct epoll_event ee = {.events = on ? EPOLLIN : 0, .data.ptr = s};
    epoll_ctl(s->set->epfd, EPOLL_CTL_MOD, s->fd, &ee);
}

/* A connection is pending: report it once, until tern_sock_accept. */
void tern_sock_listener_ready_locked(tern_sock_t *s)
{
    if (s->accept_notified)
        return;
    s->accept_notified = true;
    listener_arm(s, false);
    tern_sock_event_push_locked(s, &s->ev_conn, TERN_SOCK_OP_ACCEPT, 0, TERN_OK, NULL);
}

tern_status_t tern_sock_accept(tern_sock_t *listener, tern_sock_set_t *set, void *user_ptr,
                               tern_sock_t **sock)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char peer[TERN_SOCK_PEER_LEN];
    int fd, err = 0;

    pthread_mutex_lock(&listener->set->lock);
    if (listener->state != TERN_SOCK_ST_LISTENING) {
        pthread_mutex_unlock(&listener->set->lock);
        return tern_error(TERN_ERR_INVALID_PARAM, "accept on %s: not a listening socket",
                          listener->peer);
    }
    while ((fd = accept4(listener->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC)) <
               0 &&
           errno == EINTR)
        ;
    if (fd < 0)
        err = errno;
    /* re-arm: a level-triggered listener reports again if more are queued */
    listener->accept_notified = false;
    listener_arm(listener, true);
    pthread_mutex_unlock(&listener->set->lock);

    if (fd < 0) {
        if (err == EAGAIN || err == EWOULDBLOCK)
            return tern_error(TERN_ERR_AGAIN, "accept on %s: no connection pending",
                              listener->peer);
        return tern_error(tern_sock_errno_status(err), "accept on %s: %s", listener->peer,
                          strerror(err));
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    tern_sock_format_addr((struct sockaddr *)&ss, peer, sizeof(peer));
    tern_status_t st = tern_sock_adopt(set, fd, user_ptr, peer, true, sock);
    if (st != TERN_OK)
        close(fd);
    return st;
}
