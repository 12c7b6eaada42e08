/*
 * push: the launcher's stdin (or any local fd) to the ranks' stdin pipes.
 *
 * A pushed source is read once per chunk and the same bytes are appended to
 * every open target (one per rank it is pushed to).  It is read only while
 * every open target holds less than TERN_IOF_STDIN_HIGH bytes, so a rank
 * that does not read its stdin stops the reading (and "--stdin all" goes at
 * the pace of the slowest rank) instead of growing memory.  The target ends
 * are our own pipes, non-blocking.  A rank that exited makes its target
 * fail with EPIPE (SIGPIPE is ignored): the target is closed and forgotten.
 * At EOF of the source, each target is closed once its bytes are written,
 * which gives the rank its EOF.  The source itself is never closed here.
 * A tool source (TERN_IOF_PUSH_TOOL, "ternrun --stdin-tool") is the socket
 * of the attached tool that asked for stdin: the bytes after its request
 * line are the ranks' stdin, its shutdown (or loss) is their EOF.  The
 * socket belongs to the tool's sink; a tool dropped for any reason (gone,
 * or too slow at reading its output) ends the ranks' stdin too: the bytes
 * it had sent that were not read yet are lost with the socket.
 * A terminal is read only while our process group is its foreground group.
 */
#include "launcher/iof/iof_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void iof_target_close(struct iof_target *t)
{
    if (t->fd >= 0) {
        close(t->fd);
        t->fd = -1;
    }
    iof_buf_free(&t->buf);
}

void iof_target_write(struct iof_target *t)
{
    while (t->fd >= 0 && t->buf.len > 0) {
        ssize_t w = write(t->fd, t->buf.data + t->buf.off, t->buf.len);

        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno != EAGAIN) {
                /* EPIPE: the rank is gone or closed its stdin */
                iof_target_close(t);
            }
            break;
        }
        iof_buf_consume(&t->buf, (size_t)w);
    }
    if (t->fd >= 0 && t->closing && t->buf.len == 0) {
        iof_target_close(t);
    }
}

bool iof_push_can_read(const struct tern_iof *iof, const struct iof_push_src *ps)
{
    int src = (int)(ps - iof->push_src);
    bool any = false;

    if (ps->eof) {
        return false;
    }
    /* a background launcher reading its terminal would be stopped by
     * SIGTTIN: wait until it is in the foreground (checked every loop) */
    if (ps->tty && tcgetpgrp(ps->fd) != getpgrp()) {
        return false;
    }
    for (int r = 0; r < iof->nranks; r++) {
        const struct iof_target *t = &iof->targets[r];

        if (t->fd < 0 || t->src != src) {
            continue;
        }
        if (t->buf.len >= TERN_IOF_STDIN_HIGH) {
            return false;
        }
        any = true;
    }
    return any;
}

void iof_push_data(struct tern_iof *iof, struct iof_push_src *ps, const char *p, size_t n)
{
    int src = (int)(ps - iof->push_src);

    if (n == 0) {
        ps->eof = true;
    }
    for (int r = 0; r < iof->nranks; r++) {
        struct iof_target *t = &iof->targets[r];

        if (t->fd < 0 || t->src != src) {
            continue;
        }
        if (n > 0) {
            iof_buf_append(&t->buf, p, n);
        } else {
            t->closing = true;
        }
        iof_target_write(t);
    }
}

void iof_push_read(struct tern_iof *iof, struct iof_push_src *ps)
{
    static char chunk[IOF_READ_CHUNK];
    ssize_t n;

    do {
        n = read(ps->fd, chunk, sizeof(chunk));
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN) {
        return;
    }
    if (n < 0) {
        fprintf(stderr, "ternrun: iof: reading %s (fd %d): %s: ending the ranks' stdin\n",
                ps->tool ? "the attached tool's stdin" : "stdin", ps->fd, strerror(errno));
    }
    if (n <= 0 && ps->tool) {
        /* the tool's input ended (it shut its side down, or is gone): the
         * socket stays its sink's, which still sends it output */
        ps->fd = -1;
        ps->owner = NULL;
    }
    iof_push_data(iof, ps, chunk, n > 0 ? (size_t)n : 0);
}
