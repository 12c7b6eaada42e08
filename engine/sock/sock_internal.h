/*
 * engine/sock internals: the set, the socket, its transfers and the event
 * nodes.  Everything here is guarded by set->lock unless noted.
 *
 * Event nodes are embedded in the socket (one per kind: read, write,
 * connect/accept, close), so completing an op never allocates.  That is why
 * an op stays outstanding until its event was returned: the node is reused
 * by the next op of the same kind.
 *
 * Connected sockets are registered edge-triggered (EPOLLIN | EPOLLOUT |
 * EPOLLRDHUP | EPOLLET) once; a transfer is attempted when posted (from the
 * waiting thread, through the set's attention list) and again on every edge,
 * and only waits for an edge after the socket said EAGAIN or a short write,
 * so no readiness is lost.  Listeners are level-triggered and disarmed while
 * an ACCEPT notification is outstanding (re-armed by tern_sock_accept).
 */
#ifndef TERN_ENGINE_SOCK_INTERNAL_H
#define TERN_ENGINE_SOCK_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "engine/list.h"
#include "engine/log.h"
#include "engine/sock/sock.h"

#define TERN_SOCK_MSG_LEN 256
#define TERN_SOCK_PEER_LEN 96
#define TERN_SOCK_IOV_INLINE 8

typedef enum {
    TERN_SOCK_ST_CONNECTING = 1,
    TERN_SOCK_ST_CONNECTED,
    TERN_SOCK_ST_LISTENING,
    TERN_SOCK_ST_FAILED, /* connect failed: only post_close is left */
    TERN_SOCK_ST_CLOSED  /* post_close done, CLOSE event not yet returned */
} tern_sock_state_t;

typedef enum {
    TERN_SOCK_XFER_IDLE = 0,
    TERN_SOCK_XFER_ACTIVE, /* posted, moving bytes */
    TERN_SOCK_XFER_DONE    /* completion queued or being returned */
} tern_sock_xfer_state_t;

typedef struct tern_sock_evnode {
    tern_list_t link; /* set->events while queued */
    bool queued;
    tern_sock_event_t ev;
    char msg[TERN_SOCK_MSG_LEN]; /* descriptive message of a failed op */
} tern_sock_evnode_t;

typedef struct tern_sock_xfer {
    tern_sock_xfer_state_t state;
    unsigned gen;      /* bumped at every post: detects an op replaced during a callback */
    struct iovec *iov; /* remaining part (into iov_inline or iov_heap) */
    int iovcnt;
    struct iovec iov_inline[TERN_SOCK_IOV_INLINE];
    struct iovec *iov_heap;
    size_t min, max, done;
    tern_sock_progress_fn fn;
    tern_sock_evnode_t ev;
} tern_sock_xfer_t;

typedef struct tern_sock_addr {
    struct sockaddr_storage sa;
    socklen_t len;
} tern_sock_addr_t;

struct tern_sock {
    tern_list_t link;      /* set->socks */
    tern_list_t attn_link; /* set->attn while attn */
    bool attn;
    tern_sock_set_t *set;
    int fd;
    tern_sock_state_t state;
    bool is_socket;       /* write with sendmsg(MSG_NOSIGNAL), else writev */
    bool eof;             /* peer EOF seen by a read that had reached min */
    bool accept_notified; /* listener: ACCEPT reported, tern_sock_accept not yet called */
    void *user_ptr;
    char peer[TERN_SOCK_PEER_LEN]; /* "addr:port" of the peer (listener: local address) */
    tern_sock_xfer_t rd, wr;
    tern_sock_evnode_t ev_conn; /* CONNECT or ACCEPT */
    tern_sock_evnode_t ev_close;
    /* connect: addresses of the host description, tried in order */
    tern_sock_addr_t *addrs;
    int naddrs, next_addr;
    char *host_desc;
    int port;
    bool conn_failed;
    tern_status_t conn_status; /* status of the last failed attempt */
};

struct tern_sock_set {
    pthread_mutex_t lock;
    int epfd;
    int evfd;            /* kicks a blocked epoll_wait; registered with data.ptr NULL */
    bool in_wait;        /* a thread is inside tern_sock_wait */
    bool waiting;        /* ... and blocked in epoll_wait (lock released) */
    bool kicked;         /* evfd written since the waiter blocked */
    bool wakeup_pending; /* tern_sock_wakeup called, WAKEUP not yet returned */
    tern_list_t socks;   /* every socket of the set */
    tern_list_t events;  /* completed events, FIFO */
    tern_list_t attn;    /* sockets with a newly posted op to start */
};

/* set.c */
tern_sock_t *tern_sock_alloc(tern_sock_set_t *set, int fd, void *user_ptr);
void tern_sock_free(tern_sock_t *s);
tern_status_t tern_sock_register_locked(tern_sock_t *s, uint32_t events);
void tern_sock_kick_locked(tern_sock_set_t *set);
void tern_sock_attn_locked(tern_sock_t *s);
void tern_sock_event_push_locked(tern_sock_t *s, tern_sock_evnode_t *n, tern_sock_op_t op,
                                 size_t num_bytes, tern_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
tern_status_t tern_sock_adopt(tern_sock_set_t *set, int fd, void *user_ptr, const char *peer,
                              bool is_socket, tern_sock_t **sock);

/* io.c */
void tern_sock_xfer_progress_locked(tern_sock_t *s, tern_sock_xfer_t *x);
void tern_sock_xfer_fail_locked(tern_sock_t *s, tern_sock_xfer_t *x, tern_status_t status,
                                const char *why);
void tern_sock_start_io_locked(tern_sock_t *s);

/* connect.c */
void tern_sock_connect_progress_locked(tern_sock_t *s);

/* listen.c */
void tern_sock_listener_ready_locked(tern_sock_t *s);

/* addr.c */
tern_status_t tern_sock_errno_status(int err);
void tern_sock_format_addr(const struct sockaddr *sa, char *out, size_t len);
void tern_sock_describe_fd(int fd, char *out, size_t len, bool *is_socket);
const char *tern_sock_op_name(const tern_sock_t *s, const tern_sock_xfer_t *x);

#endif
