/*
 * Send side of tagged messaging.  Eager: header + payload handed to the
 * netmod's istart_contig_msg, which creates a request only if it could not
 * send everything now.  Larger: rendezvous, an RTS carrying the netmod's LMT
 * cookie; the data moves once the receiver has matched and answered CTS.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "engine/netmod.h"

static tern_status_t check_args(tern_worker_t *w, int dest, int tag, tern_request_t **req)
{
    if (TERN_UNLIKELY(w == NULL))
        return tern_error(TERN_ERR_INVALID_PARAM, "send: worker is NULL");
    if (req == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "send: request pointer is NULL");
    if (tag < 0)
        return tern_error(TERN_ERR_INVALID_TAG, "send tag %d: tags are 0..%d (no wildcard)", tag,
                          TERN_TAG_MAX);
    return tern_send_check_dest(w, dest);
}

tern_status_t tern_send_check_dest(tern_worker_t *w, int dest)
{
    tern_vc_t *vc = tern_vc_of(w, dest);
    if (vc == NULL)
        return tern_error(TERN_ERR_INVALID_RANK, "send to rank %d: job has ranks 0..%d%s", dest,
                          w->ctx->size - 1,
                          dest >= w->ctx->size ? " and it is no rank of a connected job" : "");
    if (vc->state != TERN_VC_ACTIVE)
        return tern_error(vc->state == TERN_VC_FAILED ? vc->fail_status : TERN_ERR_PEER_FAILED,
                          "send to rank %d: its connection is %s", dest,
                          vc->state == TERN_VC_FAILED ? "failed" : "closed");
    return TERN_OK;
}

/* Rendezvous: register sreq, send RTS with the mode and the netmod's cookie. */
static tern_status_t start_rndv(tern_vc_t *vc, tern_request_t *s, uint64_t tag, uint16_t space,
                                uint8_t pflags, uint64_t data)
{
    uint8_t cookie[TERN_COOKIE_MAX];
    size_t clen = 0;
    uint64_t id = tern_lmt_track(vc, s);
    if (id == 0)
        return TERN_ERR_NO_MEMORY;
    int mode = tern_lmt_choose(vc, s->msg_len);
    if (mode == TERN_LMT_CMA_GET || mode == TERN_LMT_CMA_PUT) {
        tern_status_t st = tern_cma_initiate(vc, s, mode, cookie, &clen);
        if (st != TERN_OK)
            return st;
    } else if (mode != TERN_LMT_NULL) {
        clen = sizeof(cookie);
        tern_status_t st = vc->nm->lmt->initiate(vc, s, &mode, cookie, &clen);
        if (st != TERN_OK)
            return st;
    }
    s->lmt_mode = (uint8_t)mode;
    tern_pkt_hdr_t h = {.type = TERN_PKT_RTS, .flags = (uint8_t)(mode | pflags), .space = space,
                        .tag = tag, .len = s->msg_len, .sreq = id, .rreq = data,
                        .cookie_len = (uint32_t)clen};
    return tern_send_ctrl(vc, &h, cookie, clen);
}

/* sync: by rendezvous whatever the size, so the send completes only once
 * the receiver has matched it (tern_issend).  pflags: TERN_PKT_F_DATA with
 * data, or 0 (and data 0). */
tern_status_t tern_send_post(tern_worker_t *w, const struct iovec *iov, int iovcnt, bool contig,
                             size_t len, int dest, uint64_t tag, uint16_t space, bool sync,
                             uint8_t pflags, uint64_t data, tern_request_t **req)
{
    tern_vc_t *vc = tern_vc_of(w, dest);
    *req = NULL;

    /* (an eager contiguous send never gets here: tern_isend sends it) */
    struct iovec *owned = NULL;
    if (!contig && (owned = tern_iov_dup(iov, iovcnt)) == NULL)
        return TERN_ERR_NO_MEMORY;
    tern_request_t *s = tern_request_alloc(w, TERN_REQ_SEND);
    if (s == NULL) {
        free(owned);
        return TERN_ERR_NO_MEMORY;
    }
    s->vc = vc;
    s->peer = dest;
    s->tag = tag;
    s->space = space;
    s->msg_len = len;
    tern_request_bind_buffer(s, iov, iovcnt, owned);
    /* USER before handing it over: completion must not recycle it. */
    s->flags |= TERN_REQF_USER;

    tern_status_t st;
    if (len <= vc->eager_limit && !sync) {
        tern_pkt_hdr_t h = {.type = TERN_PKT_EAGER, .flags = pflags, .space = space, .tag = tag,
                            .len = len, .rreq = data};
        st = vc->nm->core.send_noncontig(vc, s, &h, sizeof(h));
    } else {
        st = start_rndv(vc, s, tag, space, pflags, data);
    }
    if (st < 0) {
        tern_request_release(s);
        return st;
    }
    if (s->flags & TERN_REQF_COMPLETE) {
        /* Went out at once: the user never sees a request. */
        st = s->status;
        tern_request_release(s);
        return st;
    }
    *req = s;
    return TERN_INPROGRESS;
}

tern_status_t tern_isend(tern_worker_t *w, const void *buf, size_t len, int dest, int tag,
                         uint16_t space, tern_request_t **req)
{
    tern_status_t st = check_args(w, dest, tag, req);
    if (TERN_UNLIKELY(st != TERN_OK))
        return st;
    if (buf == NULL && len > 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "send of %zu bytes from a NULL buffer", len);
    tern_vc_t *vc = tern_vc_of(w, dest);
    if (TERN_LIKELY(len <= vc->eager_limit)) {
        /* eager, contiguous: straight to the netmod */
        tern_pkt_hdr_t h = {.type = TERN_PKT_EAGER, .space = space, .tag = (uint64_t)tag,
                            .len = len};
        tern_request_t *s = NULL;
        *req = NULL;
        st = vc->nm->core.istart_contig_msg(vc, &h, sizeof(h), buf, len, &s);
        if (st < 0 || s == NULL)
            return st;
        s->flags |= TERN_REQF_USER;
        s->peer = dest;
        s->tag = (uint64_t)tag;
        s->msg_len = len;
        *req = s;
        return TERN_INPROGRESS;
    }
    /* past the eager limit (at most 1 MiB): the check costs eager sends nothing */
    if ((st = tern_len_check(len, "send")) != TERN_OK)
        return st;
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    return tern_send_post(w, &iov, 1, true, len, dest, (uint64_t)tag, space, false, 0, 0, req);
}

static tern_status_t sendv(tern_worker_t *w, const struct iovec *iov, int iovcnt, int dest,
                           int tag, uint16_t space, bool sync, tern_request_t **req)
{
    tern_status_t st = check_args(w, dest, tag, req);
    if (st != TERN_OK)
        return st;
    size_t len;
    if ((st = tern_iov_check(iov, iovcnt, "send", &len)) != TERN_OK)
        return st;
    return tern_send_post(w, iov, iovcnt, false, len, dest, (uint64_t)tag, space, sync, 0, 0, req);
}

tern_status_t tern_isendv(tern_worker_t *w, const struct iovec *iov, int iovcnt, int dest,
                          int tag, uint16_t space, tern_request_t **req)
{
    return sendv(w, iov, iovcnt, dest, tag, space, false, req);
}

tern_status_t tern_issend(tern_worker_t *w, const void *buf, size_t len, int dest, int tag,
                          uint16_t space, tern_request_t **req)
{
    tern_status_t st = check_args(w, dest, tag, req);
    if (st != TERN_OK)
        return st;
    if (buf == NULL && len > 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "send of %zu bytes from a NULL buffer", len);
    if ((st = tern_len_check(len, "synchronous send")) != TERN_OK)
        return st;
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    return tern_send_post(w, &iov, 1, true, len, dest, (uint64_t)tag, space, true, 0, 0, req);
}

tern_status_t tern_issendv(tern_worker_t *w, const struct iovec *iov, int iovcnt, int dest,
                           int tag, uint16_t space, tern_request_t **req)
{
    return sendv(w, iov, iovcnt, dest, tag, space, true, req);
}

tern_status_t tern_ssend(tern_worker_t *w, const void *buf, size_t len, int dest, int tag,
                         uint16_t space)
{
    tern_request_t *r;
    tern_status_t st = tern_issend(w, buf, len, dest, tag, space, &r);
    if (st != TERN_INPROGRESS)
        return st;
    return tern_wait(w, r, NULL);
}

tern_status_t tern_send(tern_worker_t *w, const void *buf, size_t len, int dest, int tag,
                        uint16_t space)
{
    tern_request_t *r;
    tern_status_t st = tern_isend(w, buf, len, dest, tag, space, &r);
    if (st != TERN_INPROGRESS)
        return st;
    return tern_wait(w, r, NULL);
}
