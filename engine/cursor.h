/*
 * A position inside an iovec: the one data description of the engine.  A
 * contiguous buffer is a one-element iovec.  Copies into and out of it are
 * bounded by the iovec's total length: nothing is written past its end.
 */
#ifndef TERN_ENGINE_CURSOR_H
#define TERN_ENGINE_CURSOR_H

#include <stddef.h>
#include <string.h>
#include <sys/uio.h>

typedef struct tern_cursor {
    const struct iovec *iov;
    int iovcnt;
    int idx;        /* current element */
    size_t off;     /* offset inside iov[idx] */
    size_t total;   /* sum of the lengths */
    size_t pos;     /* bytes consumed so far */
} tern_cursor_t;

static inline void tern_cursor_init(tern_cursor_t *c, const struct iovec *iov, int iovcnt)
{
    c->iov = iov;
    c->iovcnt = iovcnt;
    c->idx = 0;
    c->off = 0;
    c->pos = 0;
    c->total = 0;
    for (int i = 0; i < iovcnt; i++)
        c->total += iov[i].iov_len;
}

static inline size_t tern_cursor_left(const tern_cursor_t *c) { return c->total - c->pos; }

/* Copy up to len bytes from src into the cursor; returns bytes copied. */
size_t tern_cursor_unpack(tern_cursor_t *c, const void *src, size_t len);

/* Copy up to len bytes from the cursor into dst; returns bytes copied. */
size_t tern_cursor_pack(tern_cursor_t *c, void *dst, size_t len);

/* Move the cursor len bytes forward without copying; returns bytes moved. */
size_t tern_cursor_advance(tern_cursor_t *c, size_t len);

/* Describe the next at most max_bytes of the cursor as up to max entries of
 * out (the cursor does not move); returns the entry count, *bytes the sum. */
int tern_cursor_slice(const tern_cursor_t *c, struct iovec *out, int max, size_t max_bytes,
                      size_t *bytes);

#endif
