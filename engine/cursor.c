#include "engine/cursor.h"

#include "engine/copy.h"

#include <stdbool.h>

/* Move up to len bytes between buf and the cursor's iovec, in either
 * direction; buf == NULL only advances. */
static size_t cursor_copy(tern_cursor_t *c, void *buf, size_t len, bool into_iov)
{
    char *b = buf;
    size_t done = 0;
    while (done < len && c->idx < c->iovcnt) {
        const struct iovec *v = &c->iov[c->idx];
        size_t room = v->iov_len - c->off;
        size_t n = len - done < room ? len - done : room;
        char *at = (char *)v->iov_base + c->off;
        if (n && b != NULL)
            tern_copy(into_iov ? at : b + done, into_iov ? b + done : at, n);
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

size_t tern_cursor_unpack(tern_cursor_t *c, const void *src, size_t len)
{
    return cursor_copy(c, (void *)src, len, true);
}

size_t tern_cursor_pack(tern_cursor_t *c, void *dst, size_t len)
{
    return cursor_copy(c, dst, len, false);
}

size_t tern_cursor_advance(tern_cursor_t *c, size_t len)
{
    return cursor_copy(c, NULL, len, false);
}

int tern_cursor_slice(const tern_cursor_t *c, struct iovec *out, int max, size_t max_bytes,
                      size_t *bytes)
{
    int n = 0;
    size_t sum = 0;
    size_t off = c->off;
    for (int i = c->idx; i < c->iovcnt && n < max && sum < max_bytes; i++, off = 0) {
        size_t len = c->iov[i].iov_len - off;
        if (len == 0)
            continue;
        if (len > max_bytes - sum)
            len = max_bytes - sum;
        out[n].iov_base = (char *)c->iov[i].iov_base + off;
        out[n].iov_len = len;
        sum += len;
        n++;
    }
    *bytes = sum;
    return n;
}
