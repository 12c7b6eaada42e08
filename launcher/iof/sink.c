/*
 * Sinks: where forwarded bytes are written (ternrun's stdout/stderr, a
 * per-rank file, later a tool's socket), and the byte buffers they use.
 *
 * A sink never blocks the launcher for long: it must keep serving signals
 * and the other ranks while a reader is slow.  Setting O_NONBLOCK on an
 * inherited stdout would change the description the shell (or a tty) shares
 * with us, so instead:
 *  - a regular file is written in full: the kernel does not make it wait;
 *  - a pipe is reopened through /proc/self/fd as our own description with
 *    O_NONBLOCK (pipes allow that), and written as far as it takes;
 *  - anything else (tty, socket) is written PIPE_BUF bytes at a time, each
 *    after poll() said POLLOUT, cut at a newline when one is in the chunk so
 *    that ternrun's own messages on stderr do not land inside a line.
 * A reader that went away (EPIPE, SIGPIPE is ignored) makes the sink dead:
 * its bytes are dropped so that the ranks never block on it.
 */
#include "launcher/iof/iof_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int iof_buf_append(struct iof_buf *b, const void *p, size_t n)
{
    if (n == 0) {
        return 0;
    }
    if (b->off + b->len + n > b->cap) {
        if (b->off > 0) { /* compact first */
            memmove(b->data, b->data + b->off, b->len);
            b->off = 0;
        }
        if (b->len + n > b->cap) {
            size_t cap = b->cap ? b->cap : 4096;
            char *d;

            while (cap < b->len + n) {
                cap *= 2;
            }
            d = realloc(b->data, cap);
            if (d == NULL) {
                fprintf(stderr, "ternrun: iof: out of memory for %zu bytes\n", cap);
                return -ENOMEM;
            }
            b->data = d;
            b->cap = cap;
        }
    }
    memcpy(b->data + b->off + b->len, p, n);
    b->len += n;
    return 0;
}

void iof_buf_consume(struct iof_buf *b, size_t n)
{
    b->off += n;
    b->len -= n;
    if (b->len == 0) {
        b->off = 0;
        /* give back a buffer that grew past the high-water mark */
        if (b->cap > 2 * TERN_IOF_SINK_HIGH) {
            free(b->data);
            b->data = NULL;
            b->cap = 0;
        }
    }
}

void iof_buf_free(struct iof_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof(*b));
}

int iof_set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        return -errno;
    }
    return 0;
}

void iof_timestamp(char *buf, size_t len)
{
    struct timespec ts;
    struct tm tm;
    size_t n;

    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%06ld ", ts.tv_nsec / 1000);
}

struct iof_sink *iof_sink_new(int fd, bool own, const struct tern_iof_format *fmt)
{
    struct iof_sink *s = calloc(1, sizeof(*s));
    struct stat st;

    if (s == NULL) {
        return NULL;
    }
    s->fd = s->user_fd = fd;
    s->own = own;
    s->fmt = *fmt;
    s->mode = IOF_SINK_POLLED;
    if (fstat(fd, &st) == 0) {
        s->has_id = true;
        s->dev = st.st_dev;
        s->ino = st.st_ino;
        if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
            s->mode = IOF_SINK_FILE;
        } else if (S_ISFIFO(st.st_mode)) {
            char path[64];
            int nfd;

            snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
            nfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
            if (nfd >= 0) {
                s->fd = nfd;
                s->mode = IOF_SINK_NONBLOCK;
            }
        }
    }
    return s;
}

void iof_sink_free(struct iof_sink *s)
{
    if (s == NULL) {
        return;
    }
    if (s->fd != s->user_fd && s->fd >= 0) {
        close(s->fd);
    }
    if (s->own && s->user_fd >= 0) {
        close(s->user_fd);
    }
    iof_buf_free(&s->buf);
    free(s);
}

void iof_sink_put(struct iof_sink *s, bool tagged, const struct iof_stream *st, const char *ts,
                  const char *p, size_t n, bool line_start)
{
    char prefix[128];
    int plen = 0;

    if (s->dead || n == 0) {
        return;
    }
    if (s->tool) {
        iof_tool_put(s, st->rank, st->tag, p, n);
        return;
    }
    if (!tagged && !s->fmt.timestamp) {
        iof_buf_append(&s->buf, p, n);
        return;
    }
    plen = snprintf(prefix, sizeof(prefix), "%s", s->fmt.timestamp ? ts : "");
    if (tagged) {
        if (st->job == 0) {
            plen += snprintf(prefix + plen, sizeof(prefix) - (size_t)plen, "[%d,%s] ",
                             st->label, tern_iof_tag_name(st->tag));
        } else {
            plen += snprintf(prefix + plen, sizeof(prefix) - (size_t)plen, "[%d.%d,%s] ",
                             st->job, st->label, tern_iof_tag_name(st->tag));
        }
    }
    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        size_t len = nl ? (size_t)(nl - p) + 1 : n;

        if (line_start) {
            iof_buf_append(&s->buf, prefix, (size_t)plen);
        }
        iof_buf_append(&s->buf, p, len);
        p += len;
        n -= len;
        line_start = true;
    }
}

static void sink_died(struct iof_sink *s, int err)
{
    if (s->tool) {
        iof_tool_drop(s, strerror(err));
        return;
    }
    if (err != EPIPE) {
        fprintf(stderr, "ternrun: iof: cannot write output (fd %d): %s: dropping it\n",
                s->user_fd, strerror(err));
    }
    s->dead = true;
    iof_buf_consume(&s->buf, s->buf.len);
}

bool iof_sink_write(struct iof_sink *s)
{
    /* bounded: at most this many write() calls per call */
    for (int round = 0; round < 64 && s->buf.len > 0 && !s->dead; round++) {
        const char *p = s->buf.data + s->buf.off;
        size_t n = s->buf.len;
        ssize_t w;

        if (s->mode == IOF_SINK_POLLED) {
            struct pollfd pfd = {.fd = s->fd, .events = POLLOUT};

            if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & (POLLOUT | POLLERR | POLLHUP))) {
                break;
            }
            if (n > PIPE_BUF) {
                const char *nl = memrchr(p, '\n', PIPE_BUF);

                n = nl ? (size_t)(nl - p) + 1 : PIPE_BUF;
            }
        }
        w = write(s->fd, p, n);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN) {
                break;
            }
            sink_died(s, errno);
            break;
        }
        iof_buf_consume(&s->buf, (size_t)w);
    }
    return s->buf.len > 0;
}

bool iof_sink_full(const struct iof_sink *s)
{
    /* a tool never holds the job back: it is dropped instead (tool.c) */
    return !s->dead && !s->tool && s->buf.len >= TERN_IOF_SINK_HIGH;
}

bool iof_sink_pending(const struct iof_sink *s)
{
    return !s->dead && s->buf.len > 0;
}
