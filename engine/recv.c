/* Receive side of tagged messaging: post, match the unexpected queue, complete. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "engine/match.h"

void tern_recv_fill_info(tern_recv_info_t *info, const tern_request_t *r, tern_status_t st)
{
    if (info != NULL) {
        info->source = r->peer;
        info->tag = (int)(r->tag & TERN_TAG_MAX); /* core.h's tags; tagged.h's low bits */
        info->length = r->msg_len;
        info->status = st;
    }
}

static tern_status_t truncation_status(const tern_request_t *r)
{
    if (r->msg_len <= r->cur.total || (r->flags & TERN_REQF_DISCARD)) /* dropped: asked for */
        return TERN_OK;
    return tern_error(TERN_ERR_TRUNCATED,
                      "message of %zu bytes from rank %d (tag %llu) truncated to the %zu-byte "
                      "receive buffer",
                      r->msg_len, r->peer, (unsigned long long)r->tag, r->cur.total);
}

void tern_recv_data_complete(tern_request_t *r)
{
    if (r->tmpbuf != NULL) {
        /* an unexpected eager message that a receive matched while streaming */
        tern_cursor_unpack(&r->cur, r->tmpbuf, r->msg_len);
        free(r->tmpbuf);
        r->tmpbuf = NULL;
    }
    if (r->on_data_avail != NULL) {
        r->on_data_avail(r);
        return;
    }
    tern_request_complete(r, truncation_status(r));
}

tern_status_t tern_recv_check_args(tern_worker_t *w, int src, int tag, tern_request_t **req)
{
    if (TERN_UNLIKELY(w == NULL))
        return tern_error(TERN_ERR_INVALID_PARAM, "receive: worker is NULL");
    if (req == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "receive: request pointer is NULL");
    if (tag != TERN_ANY_TAG && tag < 0)
        return tern_error(TERN_ERR_INVALID_TAG, "receive tag %d: tags are 0..%d or TERN_ANY_TAG",
                          tag, TERN_TAG_MAX);
    return tern_recv_check_src(w, src);
}

tern_status_t tern_recv_check_src(tern_worker_t *w, int src)
{
    tern_vc_t *vc = src != TERN_ANY_SOURCE ? tern_vc_of(w, src) : NULL;
    if (src != TERN_ANY_SOURCE && vc == NULL)
        return tern_error(TERN_ERR_INVALID_RANK, "receive from rank %d: job has ranks 0..%d%s",
                          src, w->ctx->size - 1,
                          src >= w->ctx->size ? " and it is no rank of a connected job" : "");
    if (vc != NULL && vc->state == TERN_VC_FAILED)
        return tern_error(vc->fail_status, "receive from rank %d: %s", src,
                          "its connection has failed");
    return TERN_OK;
}

/* A receive for the message u (matched off the unexpected queue, or by a
 * probe; NULL: none yet, post one) into iov: complete at once (TERN_OK or
 * TERN_ERR_TRUNCATED, info filled, *req NULL) or a request (TERN_INPROGRESS).
 * owned: iov's copy the request keeps (non-contiguous), or NULL. */
tern_status_t tern_recv_bind(tern_worker_t *w, tern_request_t *u, const struct iovec *iov,
                             int iovcnt, struct iovec *owned, int src, uint64_t tag,
                             uint64_t ignore, uint16_t space, tern_recv_info_t *info,
                             tern_cq_entry_t *done, tern_request_t **req)
{
    if (u != NULL && (u->flags & TERN_REQF_COMPLETE)) {
        /* a probed message whose connection failed before it was all here */
        tern_status_t st = u->status;
        tern_recv_fill_info(info, u, st);
        if (done != NULL)
            tern_cq_entry_of(u, st, done);
        free(u->tmpbuf);
        u->tmpbuf = NULL;
        tern_request_release(u);
        free(owned);
        return st;
    }
    if (u != NULL && (u->flags & TERN_REQF_DATA_DONE)) {
        /* Whole eager message already here: complete at once, no request. */
        tern_cursor_t c;
        tern_cursor_init(&c, iov, iovcnt);
        tern_cursor_unpack(&c, u->tmpbuf, u->msg_len);
        u->cur = c;
        tern_status_t st = truncation_status(u);
        tern_recv_fill_info(info, u, st);
        if (done != NULL)
            tern_cq_entry_of(u, st, done);
        tern_request_release(u);
        free(owned);
        return st;
    }

    tern_request_t *r = u;
    if (r == NULL) {
        r = tern_request_alloc(w, TERN_REQ_RECV);
        if (r == NULL) {
            free(owned);
            return TERN_ERR_NO_MEMORY;
        }
        r->peer = src;
        r->tag = tag;
    }
    r->match_src = src;
    r->match_tag = tag;
    r->match_ignore = ignore;
    r->space = space;
    tern_request_bind_buffer(r, iov, iovcnt, owned);
    r->flags |= TERN_REQF_USER;

    if (u == NULL) {
        r->flags |= TERN_REQF_POSTED;
        tern_list_push_tail(&w->posted, &r->link);
    } else if (u->flags & TERN_REQF_RNDV) {
        /* An RTS waited for us: its cookie sits in tmpbuf. */
        void *cookie = u->tmpbuf;
        size_t clen = u->tmp_have;
        u->tmpbuf = NULL;
        u->tmp_have = 0;
        (void)tern_lmt_recv_matched(r, cookie, clen); /* a failure completes r */
        free(cookie);
    }
    /* else: an eager message still streaming into tmpbuf; completes later. */
    *req = r;
    return TERN_INPROGRESS;
}

tern_status_t tern_recv_post(tern_worker_t *w, const struct iovec *iov, int iovcnt, bool contig,
                             int src, uint64_t tag, uint64_t ignore, uint16_t space,
                             tern_recv_info_t *info, tern_cq_entry_t *done, tern_request_t **req)
{
    *req = NULL;
    struct iovec *owned = NULL; /* copied before matching: nothing to undo after */
    if (!contig && (owned = tern_iov_dup(iov, iovcnt)) == NULL)
        return TERN_ERR_NO_MEMORY;
    tern_request_t *u = tern_match_unexpected(w, src, tag, ignore, space);
    return tern_recv_bind(w, u, iov, iovcnt, owned, src, tag, ignore, space, info, done, req);
}

tern_status_t tern_irecv(tern_worker_t *w, void *buf, size_t len, int src, int tag,
                         uint16_t space, tern_recv_info_t *info, tern_request_t **req)
{
    tern_status_t st = tern_recv_check_args(w, src, tag, req);
    if (st != TERN_OK)
        return st;
    if (buf == NULL && len > 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "receive of %zu bytes into a NULL buffer", len);
    if ((st = tern_len_check(len, "receive")) != TERN_OK)
        return st;
    if (TERN_LIKELY(tern_list_empty(&w->unexpected))) {
        /* Nothing can match yet: post at once (the common, expected case). */
        tern_request_t *r =
            tern_recv_post_now(w, buf, len, src, tern_match_int_tag(tag),
                               tern_match_int_ignore(tag), space, TERN_REQF_USER);
        if (r == NULL)
            return TERN_ERR_NO_MEMORY;
        *req = r;
        return TERN_INPROGRESS;
    }
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    return tern_recv_post(w, &iov, 1, true, src, tern_match_int_tag(tag),
                          tern_match_int_ignore(tag), space, info, NULL, req);
}

tern_status_t tern_irecvv(tern_worker_t *w, const struct iovec *iov, int iovcnt, int src, int tag,
                          uint16_t space, tern_recv_info_t *info, tern_request_t **req)
{
    tern_status_t st = tern_recv_check_args(w, src, tag, req);
    if (st != TERN_OK)
        return st;
    size_t total;
    if ((st = tern_iov_check(iov, iovcnt, "receive", &total)) != TERN_OK)
        return st;
    return tern_recv_post(w, iov, iovcnt, false, src, tern_match_int_tag(tag),
                          tern_match_int_ignore(tag), space, info, NULL, req);
}

tern_status_t tern_recv(tern_worker_t *w, void *buf, size_t len, int src, int tag,
                        uint16_t space, tern_recv_info_t *info)
{
    tern_request_t *r;
    tern_status_t st = tern_irecv(w, buf, len, src, tag, space, info, &r);
    if (st != TERN_INPROGRESS)
        return st;
    return tern_wait(w, r, info);
}
