#include "engine/cursor.h"

size_t tern_cursor_unpack(tern_cursor_t *c, const void *src, size_t len)
{
    const char *s = src;
    size_t done = 0;
    while (done < len && c->idx < c->iovcnt) {
        const struct iovec *v = &c->iov[c->idx];
        size_t room = v->iov_len - c->off;
        size_t n = len - done < room ? len - done : room;
        if (n)
            memcpy((char *)v->iov_base + c->off, s + done, n);
        done += n;
        c->off += n;
        if (c->off == v->iov_len) {
            c->idx++;
            c->off = 0;
        }
    }
    c->pos += done;
    return done;
}

size_t tern_cursor_pack(tern_cursor_t *c, void *dst, size_t len)
{
    char *d = dst;
    size_t done = 0;
    while (done < len && c->idx < c->iovcnt) {
        const struct iovec *v = &c->iov[c->idx];
        size_t room = v->iov_len - c->off;
        size_t n = len - done < room ? len - done : room;
        if (n)
            memcpy(d + done, (const char *)v->iov_base + c->off, n);
        done += n;
        c->off += n;
        if (c->off == v->iov_len) {
            c->idx++;
            c->off = 0;
        }
    }
    c->pos += done;
    return done;
}
