/*
 * The same-host copy's mechanics (engine/cma.h): cookies and the copy
 * step.  The protocol on a VC is engine/cma_lmt.c; the host identity is
 * the engine's (engine/address.c).
 */
#include "engine/cma.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "engine/log.h"

/* ---- cookies ------------------------------------------------------------------ */

size_t tern_cma_cookie_fill(tern_cma_cookie_t *c, enum tern_cma_kind kind, const tern_cursor_t *cur,
                            uint64_t len)
{
    memset(c, 0, TERN_CMA_COOKIE_HDR);
    c->magic = TERN_CMA_MAGIC;
    c->kind = (uint8_t)kind;
    c->version = TERN_CMA_VERSION;
    c->pid = (int32_t)getpid();
    c->host = *tern_host_self(); /* unknown: a zero boot id, which matches no host */
    c->len = len;
    if (kind == TERN_CMA_HELLO || cur == NULL)
        return TERN_CMA_COOKIE_HDR;
    c->iovcnt = (uint32_t)cur->iovcnt;
    c->iov_addr = (uint64_t)(uintptr_t)cur->iov; /* the request's: valid until DONE */
    uint32_t inl = c->iovcnt < TERN_CMA_INLINE ? c->iovcnt : TERN_CMA_INLINE;
    for (uint32_t i = 0; i < inl; i++) {
        c->seg[i].base = (uint64_t)(uintptr_t)cur->iov[i].iov_base;
        c->seg[i].len = cur->iov[i].iov_len;
    }
    return TERN_CMA_COOKIE_HDR + inl * sizeof(tern_cma_seg_t);
}

tern_status_t tern_cma_cookie_parse(const void *buf, size_t len, enum tern_cma_kind kind,
                                    tern_cma_cookie_t *c, const char *who)
{
    memset(c, 0, sizeof(*c));
    if (buf != NULL && len > 0) /* no cookie at all is parsed as an empty one */
        memcpy(c, buf, len < sizeof(*c) ? len : sizeof(*c));
    uint32_t inl = c->iovcnt < TERN_CMA_INLINE ? c->iovcnt : TERN_CMA_INLINE;
    const char *what = NULL;
    if (len < TERN_CMA_COOKIE_HDR || c->magic != TERN_CMA_MAGIC)
        what = "not a CMA cookie";
    else if (c->version != TERN_CMA_VERSION)
        what = "another version";
    else if (c->kind != kind)
        what = "another kind";
    else if (c->pid <= 0)
        what = "no process id";
    else if (c->iovcnt > (1u << 20))
        what = "too many segments";
    else if (len != TERN_CMA_COOKIE_HDR + inl * sizeof(tern_cma_seg_t))
        what = "a length that does not match its segments";
    if (what != NULL)
        return tern_error(TERN_ERR_MALFORMED,
                          "CMA cookie from %s: %s (%zu bytes, kind %u, version %u, pid %d, "
                          "%u segments)",
                          who, what, len, c->kind, c->version, c->pid, c->iovcnt);
    return TERN_OK;
}

/* ---- the copy ------------------------------------------------------------------- */

static ssize_t xfer(const tern_cma_xfer_t *x, const struct iovec *l, int lc, const struct iovec *r,
                    int rc)
{
    if (x->fault_after != TERN_CMA_FAULT_OFF && x->done >= x->fault_after) {
        errno = EPERM;
        return -1;
    }
    return x->write ? process_vm_writev(x->pid, l, (unsigned long)lc, r, (unsigned long)rc, 0)
                    : process_vm_readv(x->pid, l, (unsigned long)lc, r, (unsigned long)rc, 0);
}

ssize_t tern_cma_step(tern_cma_xfer_t *x, tern_cursor_t *cur)
{
    if (x->done >= x->want)
        return 0;
    struct iovec l[TERN_CMA_IOV], r[TERN_CMA_IOV];
    uint64_t left = x->want - x->done;
    size_t lbytes, rbytes;
    int lc = tern_cursor_slice(cur, l, TERN_CMA_IOV, left < TERN_CMA_STEP ? left : TERN_CMA_STEP,
                               &lbytes);
    int rc = tern_cursor_slice(&x->peer, r, TERN_CMA_IOV, lbytes, &rbytes);
    if (rbytes == 0)
        return -EMSGSIZE;
    /* both sides must describe the same bytes: trim the local slice */
    size_t keep = rbytes;
    int k = 0;
    for (; k < lc && keep > 0; k++) {
        if (l[k].iov_len > keep)
            l[k].iov_len = keep;
        keep -= l[k].iov_len;
    }
    ssize_t got = xfer(x, l, k, r, rc);
    if (got < 0)
        return -errno;
    if (got == 0)
        return -EFAULT; /* no progress: a range is not accessible */
    tern_cursor_advance(cur, (size_t)got);
    x->done += (uint64_t)got;
    tern_cursor_advance(&x->peer, (size_t)got);
    return got;
}

int tern_cma_read_iov(pid_t pid, uint64_t addr, struct iovec *out, uint64_t n, uint64_t fault_after)
{
    if (fault_after == 0) /* the hook counts the message's bytes: none yet */
        return -EPERM;
    struct iovec l = {out, sizeof(*out) * n};
    struct iovec r = {(void *)(uintptr_t)addr, sizeof(*out) * n};
    ssize_t got = process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (got < 0)
        return -errno;
    return (size_t)got == l.iov_len ? 0 : -EFAULT;
}

tern_status_t tern_cma_parse_size(const char *env, const char *value, const char *word,
                                  uint64_t *out)
{
    if (strcasecmp(value, word) == 0) {
        *out = UINT64_MAX;
        return TERN_OK;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(value, &end, 0);
    int shift = 0;
    if (end != value && (*end == 'k' || *end == 'K'))
        shift = 10, end++;
    else if (end != value && (*end == 'm' || *end == 'M'))
        shift = 20, end++;
    else if (end != value && (*end == 'g' || *end == 'G'))
        shift = 30, end++;
    if (errno != 0 || end == value || *end != '\0' || value[0] == '-' ||
        !isdigit((unsigned char)value[0]) || v > (UINT64_MAX >> 1) >> shift)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "%s=\"%s\": expected %s or a byte count (k, m, g suffixes allowed)", env,
                          value, word);
    *out = (uint64_t)v << shift;
    return TERN_OK;
}
