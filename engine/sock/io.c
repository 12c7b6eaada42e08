/*
 * Reads and writes: posting (min..max ranges and iovs), progress in the
 * waiting thread with the progress callbacks, and the immediate fast-path
 * transfers.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "engine/sock/sock_internal.h"

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

/* ---- the system calls ---------------------------------------------------- */

static ssize_t do_readv(tern_sock_t *s, const struct iovec *iov, int cnt)
{
    return readv(s->fd, iov, cnt < IOV_MAX ? cnt : IOV_MAX);
}

/* writev on a non-socket (pipe) with SIGPIPE blocked in this thread; a
 * SIGPIPE this write raised is consumed before the mask is restored. */
static ssize_t writev_nosigpipe(int fd, const struct iovec *iov, int cnt)
{
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE);
    ssize_t n = writev(fd, iov, cnt);
    int err = errno;
    if (n < 0 && err == EPIPE && !was_pending) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = err;
    return n;
}

static ssize_t do_writev(tern_sock_t *s, const struct iovec *iov, int cnt)
{
    if (cnt > IOV_MAX)
        cnt = IOV_MAX;
    if (!s->is_socket)
        return writev_nosigpipe(s->fd, iov, cnt);
    struct msghdr mh = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt};
    return sendmsg(s->fd, &mh, MSG_NOSIGNAL);
}

static size_t iov_total(const struct iovec *iov, int cnt)
{
    size_t t = 0;
    for (int i = 0; i < cnt; i++)
        t += iov[i].iov_len;
    return t;
}

/* Drop n moved bytes from the front of x's iov. */
static void iov_advance(tern_sock_xfer_t *x, size_t n)
{
    while (n > 0 && x->iovcnt > 0) {
        if (n < x->iov->iov_len) {
            x->iov->iov_base = (char *)x->iov->iov_base + n;
            x->iov->iov_len -= n;
            return;
        }
        n -= x->iov->iov_len;
        x->iov++;
        x->iovcnt--;
    }
    /* skip zero-length entries so the next syscall gets data */
    while (x->iovcnt > 0 && x->iov->iov_len == 0) {
        x->iov++;
        x->iovcnt--;
    }
}

/* ---- completion ---------------------------------------------------------- */

static void xfer_complete(tern_sock_t *s, tern_sock_xfer_t *x, tern_status_t status,
                          const char *msg)
{
    x->state = TERN_SOCK_XFER_DONE;
    free(x->iov_heap);
    x->iov_heap = NULL;
    x->iov = NULL;
    x->iovcnt = 0;
    tern_sock_event_push_locked(s, &x->ev, x == &s->rd ? TERN_SOCK_OP_READ : TERN_SOCK_OP_WRITE,
                                x->done, status, msg ? "%s" : NULL, msg);
}

static void xfer_fail_errno(tern_sock_t *s, tern_sock_xfer_t *x, int err)
{
    char msg[TERN_SOCK_MSG_LEN];
    snprintf(msg, sizeof(msg), "%s on %s (fd %d) failed after %zu of %zu bytes: %s",
             tern_sock_op_name(s, x), s->peer, s->fd, x->done, x->max, strerror(err));
    xfer_complete(s, x, tern_sock_errno_status(err), msg);
}

/* Complete an active transfer with status; why names the cause. */
void tern_sock_xfer_fail_locked(tern_sock_t *s, tern_sock_xfer_t *x, tern_status_t status,
                                const char *why)
{
    char msg[TERN_SOCK_MSG_LEN];
    snprintf(msg, sizeof(msg), "%s on %s %s after %zu of %zu bytes", tern_sock_op_name(s, x),
             s->peer, why, x->done, x->max);
    xfer_complete(s, x, status, msg);
}

static void xfer_eof(tern_sock_t *s, tern_sock_xfer_t *x)
{
    if (x->done >= x->min) {
        s->eof = true;
        xfer_complete(s, x, TERN_OK, NULL);
        return;
    }
    tern_sock_xfer_fail_locked(s, x, TERN_ERR_CONN_CLOSED, "closed by the peer (EOF)");
}

/*
 * Move bytes for an active transfer until it completes or the socket would
 * block.  Called with the lock held; the lock is dropped around the progress
 * callback, after which the op may have been interrupted (post_close) or
 * completed and replaced: gen tells.
 */
void tern_sock_xfer_progress_locked(tern_sock_t *s, tern_sock_xfer_t *x)
{
    bool is_read = x == &s->rd;
    if (is_read && s->eof) {
        xfer_eof(s, x);
        return;
    }
    while (x->state == TERN_SOCK_XFER_ACTIVE) {
        size_t want = x->max - x->done;
        ssize_t n = is_read ? do_readv(s, x->iov, x->iovcnt) : do_writev(s, x->iov, x->iovcnt);
        if (n > 0) {
            x->done += (size_t)n;
            iov_advance(x, (size_t)n);
            if (x->fn != NULL) {
                unsigned gen = x->gen;
                tern_sock_progress_fn fn = x->fn;
                void *up = s->user_ptr;
                pthread_mutex_unlock(&s->set->lock);
                tern_status_t st = fn((size_t)n, up);
                pthread_mutex_lock(&s->set->lock);
                if (x->state != TERN_SOCK_XFER_ACTIVE || x->gen != gen)
                    return;
                if (st != TERN_OK) {
                    char why[64];
                    snprintf(why, sizeof(why), "aborted by its progress callback (%s)",
                             tern_strerror(st));
                    tern_sock_xfer_fail_locked(s, x, st, why);
                    return;
                }
            }
            if (x->done == x->max || ((size_t)n < want && x->done >= x->min)) {
                /* a short transfer means the socket is drained (or full):
                 * a further syscall would only say EAGAIN */
                xfer_complete(s, x, TERN_OK, NULL);
                return;
            }
            continue;
        }
        if (n == 0 && is_read) {
            xfer_eof(s, x);
            return;
        }
        if (n == 0) /* a zero-byte write of a non-empty iov: treat as full */
            return;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (x->done >= x->min)
                xfer_complete(s, x, TERN_OK, NULL);
            return; /* the next edge resumes */
        }
        xfer_fail_errno(s, x, errno);
        return;
    }
}

/* Start the posted transfers of a connected socket. */
void tern_sock_start_io_locked(tern_sock_t *s)
{
    if (s->state == TERN_SOCK_ST_CONNECTED && s->rd.state == TERN_SOCK_XFER_ACTIVE)
        tern_sock_xfer_progress_locked(s, &s->rd);
    if (s->state == TERN_SOCK_ST_CONNECTED && s->wr.state == TERN_SOCK_XFER_ACTIVE)
        tern_sock_xfer_progress_locked(s, &s->wr);
}

/* ---- posting ------------------------------------------------------------- */

static tern_status_t post_xfer(tern_sock_t *s, tern_sock_xfer_t *x, const struct iovec *iov,
                               int iovcnt, size_t min, size_t max, tern_sock_progress_fn fn)
{
    const char *what = tern_sock_op_name(s, x);
    struct iovec *copy = x->iov_inline;
    if (iovcnt > TERN_SOCK_IOV_INLINE) {
        copy = malloc(sizeof(*copy) * (size_t)iovcnt);
        if (copy == NULL)
            return tern_error(TERN_ERR_NO_MEMORY, "post %s on %s: iov of %d entries", what, s->peer,
                              iovcnt);
    }
    pthread_mutex_lock(&s->set->lock);
    tern_status_t st = TERN_OK;
    if (s->state == TERN_SOCK_ST_CLOSED || s->state == TERN_SOCK_ST_LISTENING ||
        s->state == TERN_SOCK_ST_FAILED)
        st = tern_error(TERN_ERR_INVALID_PARAM, "post %s on %s: socket is %s", what, s->peer,
                        s->state == TERN_SOCK_ST_CLOSED      ? "closed"
                        : s->state == TERN_SOCK_ST_LISTENING ? "a listener"
                                                             : "not connected (connect failed)");
    else if (x->state != TERN_SOCK_XFER_IDLE)
        st = tern_error(TERN_SOCK_ERR_BUSY, "post %s on %s: a %s is already outstanding", what, s->peer,
                        what);
    if (st != TERN_OK) {
        pthread_mutex_unlock(&s->set->lock);
        if (copy != x->iov_inline)
            free(copy);
        return st;
    }
    memcpy(copy, iov, sizeof(*copy) * (size_t)iovcnt);
    x->iov_heap = copy != x->iov_inline ? copy : NULL;
    x->iov = copy;
    x->iovcnt = iovcnt;
    x->min = min;
    x->max = max;
    x->done = 0;
    x->fn = fn;
    x->gen++;
    x->state = TERN_SOCK_XFER_ACTIVE;
    iov_advance(x, 0);
    tern_sock_attn_locked(s);
    pthread_mutex_unlock(&s->set->lock);
    return TERN_OK;
}

static tern_status_t check_range(tern_sock_t *s, const char *what, const void *buf, size_t min,
                                 size_t max)
{
    if (buf == NULL || min == 0 || min > max)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "post %s on %s: need a buffer and 1 <= min <= max (min %zu, max %zu)",
                          what, s->peer, min, max);
    return TERN_OK;
}

static tern_status_t check_iov(tern_sock_t *s, const char *what, const struct iovec *iov,
                               int iovcnt, size_t *total)
{
    if (iov == NULL || iovcnt <= 0 || (*total = iov_total(iov, iovcnt)) == 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "post %s on %s: empty iov (%d entries)", what,
                          s->peer, iovcnt);
    return TERN_OK;
}

tern_status_t tern_sock_post_read(tern_sock_t *s, void *buf, size_t min, size_t max,
                                  tern_sock_progress_fn fn)
{
    tern_status_t st = check_range(s, "read", buf, min, max);
    if (st != TERN_OK)
        return st;
    struct iovec iov = {.iov_base = buf, .iov_len = max};
    return post_xfer(s, &s->rd, &iov, 1, min, max, fn);
}

tern_status_t tern_sock_post_readv(tern_sock_t *s, const struct iovec *iov, int iovcnt,
                                   tern_sock_progress_fn fn)
{
    size_t total = 0;
    tern_status_t st = check_iov(s, "readv", iov, iovcnt, &total);
    if (st != TERN_OK)
        return st;
    return post_xfer(s, &s->rd, iov, iovcnt, total, total, fn);
}

tern_status_t tern_sock_post_write(tern_sock_t *s, const void *buf, size_t min, size_t max,
                                   tern_sock_progress_fn fn)
{
    tern_status_t st = check_range(s, "write", buf, min, max);
    if (st != TERN_OK)
        return st;
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = max};
    return post_xfer(s, &s->wr, &iov, 1, min, max, fn);
}

tern_status_t tern_sock_post_writev(tern_sock_t *s, const struct iovec *iov, int iovcnt,
                                    tern_sock_progress_fn fn)
{
    size_t total = 0;
    tern_status_t st = check_iov(s, "writev", iov, iovcnt, &total);
    if (st != TERN_OK)
        return st;
    return post_xfer(s, &s->wr, iov, iovcnt, total, total, fn);
}

/* ---- immediate transfers (fast path, no lock) ---------------------------- */

static tern_status_t check_immediate(tern_sock_t *s, tern_sock_xfer_t *x, const char *what)
{
    if (s->state != TERN_SOCK_ST_CONNECTED)
        return tern_error(TERN_ERR_INVALID_PARAM, "%s on %s: socket not connected", what, s->peer);
    if (x->state != TERN_SOCK_XFER_IDLE)
        return tern_error(TERN_SOCK_ERR_BUSY, "%s on %s: a posted %s is outstanding", what, s->peer,
                          tern_sock_op_name(s, x));
    return TERN_OK;
}

tern_status_t tern_sock_read(tern_sock_t *s, void *buf, size_t len, size_t *nb)
{
    tern_status_t st = check_immediate(s, &s->rd, "read");
    if (st != TERN_OK)
        return st;
    if (s->eof)
        return tern_error(TERN_ERR_CONN_CLOSED, "read on %s: closed by the peer (EOF)", s->peer);
    for (;;) {
        ssize_t n = read(s->fd, buf, len);
        if (n > 0 || (n == 0 && len == 0)) {
            *nb = (size_t)n;
            return TERN_OK;
        }
        if (n == 0) {
            s->eof = true;
            return tern_error(TERN_ERR_CONN_CLOSED, "read on %s: closed by the peer (EOF)",
                              s->peer);
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            *nb = 0;
            return TERN_OK;
        }
        return tern_error(tern_sock_errno_status(errno), "read on %s (fd %d): %s", s->peer, s->fd,
                          strerror(errno));
    }
}

tern_status_t tern_sock_writev(tern_sock_t *s, const struct iovec *iov, int iovcnt, size_t *nb)
{
    tern_status_t st = check_immediate(s, &s->wr, "writev");
    if (st != TERN_OK)
        return st;
    for (;;) {
        ssize_t n = do_writev(s, iov, iovcnt);
        if (n >= 0) {
            *nb = (size_t)n;
            return TERN_OK;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            *nb = 0;
            return TERN_OK;
        }
        return tern_error(tern_sock_errno_status(errno), "writev on %s (fd %d): %s", s->peer, s->fd,
                          strerror(errno));
    }
}
