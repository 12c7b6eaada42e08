/*
 * Rendezvous in the engine: RTS / CTS / DONE / COOKIE packets and the null
 * LMT mode.  The netmod's LMT ops move the data (shm: cooperative copy
 * buffers); a netmod without them gets the null mode, where the sender
 * answers CTS with a DATA packet over the ordinary stream.  The CMA modes
 * are the engine's same-host copy (engine/cma_lmt.c), whatever the netmod:
 * packets for a request in one of them go there.
 *
 * Every rendezvous request sits on its VC's lmt_wait list from RTS/CTS until
 * completion, so a failing VC can complete them all with an error.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "engine/match.h"
#include "engine/netmod.h"

tern_status_t tern_send_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                  size_t hdrlen)
{
    tern_status_t st = tern_vc_send_check(vc);
    return st != TERN_OK ? st : vc->nm->core.send_noncontig(vc, sreq, hdr, hdrlen);
}

tern_status_t tern_send_ctrl(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const void *cookie,
                             size_t cookie_len)
{
    tern_status_t vst = tern_vc_send_check(vc);
    if (vst != TERN_OK)
        return vst;
    if (cookie_len == 0) {
        tern_request_t *s = NULL;
        tern_status_t st = vc->nm->core.istart_contig_msg(vc, hdr, sizeof(*hdr), NULL, 0, &s);
        return st < 0 ? st : TERN_OK; /* a queued s is internal: freed when sent */
    }
    void *copy = malloc(cookie_len); /* the cookie must outlive a queued send */
    if (copy == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "control packet cookie");
    memcpy(copy, cookie, cookie_len);
    tern_request_t *s = tern_request_alloc_contig_send(vc, copy, cookie_len, 0);
    if (s == NULL) {
        free(copy);
        return TERN_ERR_NO_MEMORY;
    }
    s->tmpbuf = copy; /* freed with s */
    tern_status_t st = vc->nm->core.send_noncontig(vc, s, hdr, sizeof(*hdr));
    if (st < 0 && !(s->flags & TERN_REQF_COMPLETE))
        tern_request_release(s);
    return st < 0 ? st : TERN_OK;
}

uint64_t tern_lmt_track(tern_vc_t *vc, tern_request_t *req)
{
    uint64_t id = (req->flags & TERN_REQF_HAS_ID) ? tern_request_id(req)
                                                  : tern_request_register(req);
    if (id == 0) {
        tern_error(TERN_ERR_NO_MEMORY, "rendezvous id table");
        return 0;
    }
    if (!(req->flags & TERN_REQF_VCLIST)) {
        req->flags |= TERN_REQF_VCLIST;
        tern_list_push_tail(&vc->lmt_wait, &req->vc_link);
    }
    return id;
}

/* Receiver: register rreq and answer the RTS with CTS (+ netmod cookie). */
tern_status_t tern_lmt_send_cts(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                size_t cookie_len)
{
    uint64_t id = tern_lmt_track(vc, rreq);
    if (id == 0)
        return TERN_ERR_NO_MEMORY;
    tern_pkt_hdr_t h = {.type = TERN_PKT_CTS, .len = rreq->msg_len, .sreq = rreq->remote_id,
                        .rreq = id, .cookie_len = (uint32_t)cookie_len};
    return tern_send_ctrl(vc, &h, cookie, cookie_len);
}

static inline bool cma_mode(unsigned mode)
{
    return mode == TERN_LMT_CMA_GET || mode == TERN_LMT_CMA_PUT;
}

/* The netmod's mode for len bytes: TERN_LMT_MODE when it has that mode
 * (warn: say once when it has not), else its choice by size; null
 * without LMT ops. */
static int netmod_choose(tern_vc_t *vc, size_t len, bool warn)
{
    const tern_nm_lmt_ops_t *lmt = vc->nm->lmt;
    if (lmt == NULL)
        return TERN_LMT_NULL;
    int forced = (int)vc->worker->ctx->cfg.lmt_mode;
    if (forced == TERN_LMT_NULL)
        return TERN_LMT_NULL;
    if (forced != TERN_LMT_AUTO) {
        if (lmt->modes(vc->nm_state) & (1u << forced))
            return forced;
        static atomic_bool warned; /* once per process, whichever worker sees it */
        if (warn && !atomic_exchange_explicit(&warned, true, memory_order_relaxed)) {
            tern_warn("TERN_LMT_MODE: netmod %s has no such mode for rank %d; it chooses by size",
                      vc->nm->name, vc->rank);
        }
    }
    return lmt->choose(vc, len);
}

int tern_lmt_choose(tern_vc_t *vc, size_t len)
{
    int forced = (int)vc->worker->ctx->cfg.lmt_mode;
    if (forced != TERN_LMT_NULL && len > 0 && tern_cma_usable(vc)) {
        /* a get or a put to a same-host peer: the engine's copy, whatever
         * the netmod would have done (shm has neither of its own) */
        if (forced == TERN_LMT_GET)
            return TERN_LMT_CMA_GET;
        if (forced == TERN_LMT_PUT)
            return TERN_LMT_CMA_PUT;
        if (forced == TERN_LMT_AUTO && len >= tern_cma_threshold(vc))
            return TERN_LMT_CMA_GET;
    }
    /* a forced get or put the copy had before it was refused on vc (which
     * was logged): the netmod's choice without a word */
    return netmod_choose(vc, len, !vc->cma_off);
}

tern_status_t tern_lmt_netmod_initiate(tern_vc_t *vc, tern_request_t *sreq, int *mode, void *cookie,
                                       size_t *cookie_len)
{
    /* a forced get or put the engine's copy had: quietly the netmod's choice */
    *mode = netmod_choose(vc, sreq->msg_len, false);
    if (*mode == TERN_LMT_NULL) {
        *cookie_len = 0;
        return TERN_OK;
    }
    return vc->nm->lmt->initiate(vc, sreq, mode, cookie, cookie_len);
}

tern_status_t tern_lmt_recv_start(tern_request_t *rreq, const void *cookie, size_t cookie_len)
{
    tern_vc_t *vc = rreq->vc;
    if (rreq->lmt_mode != TERN_LMT_NULL)
        return vc->nm->lmt->start_recv(vc, rreq, cookie, cookie_len);
    return tern_lmt_send_cts(vc, rreq, NULL, 0); /* null mode: data follows as DATA */
}

tern_status_t tern_lmt_recv_matched(tern_request_t *rreq, const void *cookie, size_t cookie_len)
{
    tern_vc_t *vc = rreq->vc;
    if (vc->state == TERN_VC_FAILED) {
        tern_request_complete(rreq, tern_error(vc->fail_status,
                                               "receive from rank %d: its connection has failed",
                                               vc->rank));
        return TERN_OK;
    }
    tern_status_t st = cma_mode(rreq->lmt_mode) ? tern_cma_start_recv(vc, rreq, cookie, cookie_len)
                                                : tern_lmt_recv_start(rreq, cookie, cookie_len);
    /* A start that failed (a malformed cookie, a refused send) ends the
     * receive here with its cause, on the VC's list or not: whether the
     * caller then fails the VC (the parser) or not (a later receive that
     * matched the RTS), the receive must not wait forever. */
    if (st < 0 && !(rreq->flags & TERN_REQF_COMPLETE))
        tern_request_complete(rreq, st);
    return st;
}

static tern_request_t *lookup_on_vc(tern_vc_t *vc, uint64_t id, int kind, const char *what)
{
    tern_request_t *r = tern_request_lookup(vc->worker, id);
    if (r == NULL || r->kind != kind || r->vc != vc) {
        tern_error(TERN_ERR_MALFORMED, "%s packet from rank %d names unknown request %#llx", what,
                   vc->rank, (unsigned long long)id);
        return NULL;
    }
    return r;
}

tern_status_t tern_lmt_handle_cts(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie)
{
    tern_request_t *s = lookup_on_vc(vc, hdr->sreq, TERN_REQ_SEND, "CTS");
    if (s == NULL)
        return TERN_ERR_MALFORMED;
    if (hdr->rreq == 0 || s->remote_id != 0)
        return tern_error(TERN_ERR_MALFORMED, "CTS packet from rank %d for request %#llx: %s",
                          vc->rank, (unsigned long long)hdr->sreq,
                          hdr->rreq == 0 ? "names no receive" : "it already had one");
    s->remote_id = hdr->rreq;
    if (cma_mode(s->lmt_mode)) /* a put's key; a get is never answered with CTS */
        return s->lmt_mode == TERN_LMT_CMA_PUT
                   ? tern_cma_start_send(vc, s, cookie, hdr->cookie_len)
                   : tern_error(TERN_ERR_MALFORMED, "CTS from rank %d for a CMA get", vc->rank);
    if (s->lmt_mode != TERN_LMT_NULL)
        return vc->nm->lmt->start_send(vc, s, cookie, hdr->cookie_len);
    /* null mode: the whole message as one DATA packet on the stream */
    tern_pkt_hdr_t d = {.type = TERN_PKT_DATA, .len = s->msg_len, .rreq = hdr->rreq};
    return tern_send_noncontig(vc, s, &d, sizeof(d));
}

tern_status_t tern_lmt_handle_done(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie)
{
    bool to_sender = hdr->sreq != 0;
    tern_request_t *r = lookup_on_vc(vc, to_sender ? hdr->sreq : hdr->rreq,
                                     to_sender ? TERN_REQ_SEND : TERN_REQ_RECV, "DONE");
    if (r == NULL)
        return TERN_ERR_MALFORMED;
    if (cma_mode(r->lmt_mode))
        return tern_cma_done(vc, r);
    if (r->lmt_mode == TERN_LMT_NULL || vc->nm->lmt == NULL)
        return tern_error(TERN_ERR_MALFORMED, "DONE packet from rank %d for a null-mode "
                          "transfer (netmod %s)", vc->rank, vc->nm->name);
    return to_sender ? vc->nm->lmt->done_send(vc, r) : vc->nm->lmt->done_recv(vc, r);
}

tern_status_t tern_lmt_handle_cookie_pkt(tern_vc_t *vc, const tern_pkt_hdr_t *hdr,
                                         const uint8_t *cookie)
{
    bool to_sender = hdr->sreq != 0;
    tern_request_t *r = lookup_on_vc(vc, to_sender ? hdr->sreq : hdr->rreq,
                                     to_sender ? TERN_REQ_SEND : TERN_REQ_RECV, "COOKIE");
    if (r == NULL)
        return TERN_ERR_MALFORMED;
    if (cma_mode(r->lmt_mode))
        return tern_cma_handle_cookie(vc, r, cookie, hdr->cookie_len);
    if (r->lmt_mode == TERN_LMT_NULL || vc->nm->lmt == NULL)
        return tern_error(TERN_ERR_MALFORMED, "COOKIE packet from rank %d for a null-mode "
                          "transfer (netmod %s)", vc->rank, vc->nm->name);
    return vc->nm->lmt->handle_cookie(vc, r, cookie, hdr->cookie_len);
}
