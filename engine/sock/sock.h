/*
 * engine/sock — event-driven socket layer (after MPICH's MPIDU_Sock design).
 *
 * A socket set owns an epoll instance.  Operations are posted on sockets of
 * the set and complete as events returned one at a time by tern_sock_wait().
 *
 * Model
 *  - One read and one write may be outstanding per socket.  An operation is
 *    outstanding from its post until tern_sock_wait() has returned its
 *    completion event; posting a second one meanwhile gives
 *    TERN_SOCK_ERR_BUSY.
 *  - post_read/post_write move a byte range min..max: the op completes once
 *    at least min bytes moved and the socket would block, or max bytes moved.
 *    post_readv/post_writev complete when the whole iov moved.  The iov array
 *    is copied; the buffers must stay valid until the completion event.
 *  - The progress callback runs in the waiting thread after every transfer
 *    that moved bytes (num_bytes = bytes of that transfer), always before the
 *    completion event is returned.  It runs without the set lock held: it may
 *    post or close (not wait).  A non-OK return aborts the op with that status.
 *  - Events carry the op type, bytes moved, the socket's user pointer and a
 *    status.  For a failed op, the waiting thread's tern_last_error() holds
 *    the message (errno text and peer address:port) when the event is
 *    returned; the message was composed where the failure was decided.
 *  - post_close interrupts everything outstanding: a posted read / write /
 *    pending connect completes with TERN_SOCK_ERR_CLOSED (its op type says
 *    which, num_bytes says what moved), a listener's pending ACCEPT
 *    notification likewise; then a CLOSE event (TERN_OK) follows.  The socket
 *    is freed when its CLOSE event is returned: ev.sock is then only an
 *    identity.  A listener closed with connections still queued in the kernel
 *    closes its listen socket: the kernel resets those connections, so their
 *    clients see ECONNRESET (TERN_ERR_CONN_RESET).
 *  - A read that reached min when the peer's EOF arrived completes TERN_OK;
 *    the next read then completes with TERN_ERR_CONN_CLOSED.  A read below min
 *    at EOF completes TERN_ERR_CONN_CLOSED with num_bytes of what arrived.
 *
 * Threads
 *  - One thread at a time waits on a set (a second concurrent wait gets
 *    TERN_SOCK_ERR_BUSY).  All I/O of posted ops happens in the waiting thread.
 *  - Any thread may post_* / post_close / wakeup while another thread is
 *    blocked in wait: a per-set mutex guards the op state and event queues,
 *    and an eventfd wakes the blocked epoll_wait so it notices the new op.
 *  - The immediate calls tern_sock_read / tern_sock_writev take no lock: they
 *    belong to the single-threaded fast path of the thread owning the socket.
 *
 * Sockets are non-blocking and close-on-exec; connected TCP sockets have
 * TCP_NODELAY.  SIGPIPE is never raised: sockets are written with
 * sendmsg(MSG_NOSIGNAL); an adopted non-socket fd (a pipe) is written with
 * writev with SIGPIPE blocked in the calling thread, and a SIGPIPE this
 * raised is consumed (sigtimedwait) before the mask is restored.
 *
 * Statuses are tern's (tern/status.h) plus the two private ones below, which
 * tell the socket's user about its own use of the socket.  No API call
 * returns them: the tcp netmod never posts twice or waits from two threads,
 * drops the events of sockets it closed, and turns any failure of a VC's
 * socket into TERN_ERR_PEER_FAILED.  What listen, set_create and
 * get_host_description return reaches tern_init as it is, so those return
 * public codes only.
 */
#ifndef TERN_ENGINE_SOCK_H
#define TERN_ENGINE_SOCK_H

#include <stddef.h>
#include <sys/uio.h>

#include <tern/status.h>

/* Private statuses, below the public range (tern/status.h: TERN_ERR_LAST);
 * tern_strerror knows their texts. */
/* an op of that direction is outstanding, or another thread waits on the set */
#define TERN_SOCK_ERR_BUSY ((tern_status_t)-1001)
/* the op was interrupted by tern_sock_post_close */
#define TERN_SOCK_ERR_CLOSED ((tern_status_t)-1002)

typedef struct tern_sock_set tern_sock_set_t;
typedef struct tern_sock tern_sock_t;

typedef enum {
    TERN_SOCK_OP_READ = 1,
    TERN_SOCK_OP_WRITE,
    TERN_SOCK_OP_ACCEPT, /* listener has a connection to accept */
    TERN_SOCK_OP_CONNECT,
    TERN_SOCK_OP_CLOSE,
    TERN_SOCK_OP_WAKEUP
} tern_sock_op_t;

typedef struct tern_sock_event {
    tern_sock_op_t op;
    size_t num_bytes; /* READ / WRITE: total bytes moved */
    void *user_ptr;   /* the socket's user pointer (NULL for WAKEUP) */
    tern_status_t status;
    tern_sock_t *sock; /* NULL for WAKEUP; after CLOSE only an identity */
} tern_sock_event_t;

/* Called on every transfer that moved bytes, before the completion event;
 * returning non-OK aborts the op with that status. */
typedef tern_status_t (*tern_sock_progress_fn)(size_t num_bytes, void *user_ptr);

/** New set (epoll + eventfd).  TERN_ERR_IO / TERN_ERR_NO_MEMORY. */
tern_status_t tern_sock_set_create(tern_sock_set_t **set);

/** Close every socket left (without events) and free the set.  No thread
 *  may be in tern_sock_wait on it. */
void tern_sock_set_destroy(tern_sock_set_t *set);

/* The set's epoll fd: readable while tern_sock_wait has something to
 * collect.  For an outer event loop to sleep on; never read it directly. */
int tern_sock_set_fd(const tern_sock_set_t *set);

/**
 * Listen on bind_addr (NULL: every address, IPv6 dual-stack when available).
 * *port in: a port, or 0 for any — then TERN_PORT_RANGE="lo-hi" (or "lo:hi")
 * from the environment restricts the choice; out: the bound port.
 * TERN_ERR_ADDR_IN_USE (the explicit port, or every port of the range, is
 * taken: the message says which), TERN_ERR_INVALID_PARAM (bad address or
 * range), TERN_ERR_IO.
 */
tern_status_t tern_sock_listen(tern_sock_set_t *set, void *user_ptr, const char *bind_addr,
                               int *port, tern_sock_t **sock);

/**
 * Accept one connection of a listener (after its ACCEPT event) into set; the
 * listener is re-armed and reports ACCEPT again while connections remain.
 * TERN_ERR_AGAIN if none is pending.
 */
tern_status_t tern_sock_accept(tern_sock_t *listener, tern_sock_set_t *set, void *user_ptr,
                               tern_sock_t **sock);

/**
 * Connect to port on the addresses of host_description ("addr1,addr2,...",
 * numeric or names), tried in order until one accepts.  Completes with a
 * CONNECT event: TERN_OK, or the status of the last attempt
 * (TERN_ERR_CONN_REFUSED, TERN_ERR_HOST_UNREACH, TERN_ERR_TIMED_OUT ...) with
 * a message listing every attempt.  Reads and writes may be posted at once;
 * they start when connected and fail with the connect's status otherwise.
 * Returns TERN_ERR_UNREACHABLE if no entry of the description resolves,
 * TERN_ERR_INVALID_PARAM for a NULL description or a port outside 1..65535.
 */
tern_status_t tern_sock_post_connect(tern_sock_set_t *set, void *user_ptr,
                                     const char *host_description, int port, tern_sock_t **sock);

/** Read into buf; completes with min <= num_bytes <= max (1 <= min <= max). */
tern_status_t tern_sock_post_read(tern_sock_t *s, void *buf, size_t min, size_t max,
                                  tern_sock_progress_fn fn);
/** Read until all of iov is filled (iovcnt >= 1, total > 0; iov copied). */
tern_status_t tern_sock_post_readv(tern_sock_t *s, const struct iovec *iov, int iovcnt,
                                   tern_sock_progress_fn fn);
/** Write from buf; completes with min <= num_bytes <= max. */
tern_status_t tern_sock_post_write(tern_sock_t *s, const void *buf, size_t min, size_t max,
                                   tern_sock_progress_fn fn);
/** Write all of iov. */
tern_status_t tern_sock_post_writev(tern_sock_t *s, const struct iovec *iov, int iovcnt,
                                    tern_sock_progress_fn fn);

/**
 * Immediate transfers for a netmod's fast path: move what the socket takes
 * now; TERN_OK with *nb possibly 0.  TERN_ERR_CONN_CLOSED at EOF,
 * TERN_ERR_CONN_RESET ..., TERN_SOCK_ERR_BUSY if an op of that direction is
 * posted.  No lock: only the thread owning the socket calls them.
 */
tern_status_t tern_sock_read(tern_sock_t *s, void *buf, size_t len, size_t *nb);
tern_status_t tern_sock_writev(tern_sock_t *s, const struct iovec *iov, int iovcnt, size_t *nb);

/** Interrupt outstanding ops and close; a CLOSE event follows them. */
tern_status_t tern_sock_post_close(tern_sock_t *s);

/**
 * Return one event.  timeout_ms < 0: forever, 0: poll.  TERN_OK with *ev
 * set, TERN_ERR_TIMED_OUT (not logged: polling is normal), TERN_SOCK_ERR_BUSY
 * if another thread is waiting on the set.
 */
tern_status_t tern_sock_wait(tern_sock_set_t *set, int timeout_ms, tern_sock_event_t *ev);

/** From any thread: the blocked (or next) wait returns a WAKEUP event.
 *  Wakeups not yet delivered coalesce into one. */
tern_status_t tern_sock_wakeup(tern_sock_set_t *set);

/** Adopt a connected fd (socket, socketpair end or pipe): made non-blocking
 *  and close-on-exec; on success the set owns it (closed by post_close), on
 *  failure it stays the caller's. */
tern_status_t tern_sock_native_to_sock(tern_sock_set_t *set, int fd, void *user_ptr,
                                       tern_sock_t **sock);

void tern_sock_set_user_ptr(tern_sock_t *s, void *user_ptr);
/** The OS fd, -1 once closed. */
int tern_sock_get_fd(const tern_sock_t *s);

/**
 * Every IPv4/IPv6 address of the machine's interfaces that are up
 * (getifaddrs), comma separated, non-loopback first (IPv4, global IPv6,
 * link-local IPv6 as "fe80::x%ifname"), then loopback.  TERN_ERR_TRUNCATED if
 * len is too small (buf then holds the addresses that fit), TERN_ERR_NO_DEVICE
 * if no interface has an address up.
 */
tern_status_t tern_sock_get_host_description(char *buf, size_t len);

/* Parse a port range "lo-hi" (or "lo:hi", the form of TERN_PORT_RANGE,
 * which listeners bound to port 0 honour); NULL or "" gives 0, 0. */
tern_status_t tern_sock_parse_port_range(const char *s, int *lo, int *hi);

#endif
