/*
 * Rendezvous in the engine: RTS / CTS / DONE / COOKIE packets and the null
 * LMT mode.  The netmod's LMT ops move the data (shm: cooperative copy
 * buffers); a netmod without them gets the null mode, where the sender
 * answers CTS with a DATA packet over the ordinary stream.
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
    tern_request_t *s = tern_request_alloc(vc->worker, TERN_REQ_SEND);
    if (s == NULL)
        return TERN_ERR_NO_MEMORY;
    s->tmpbuf = malloc(cookie_len); /* the cookie must outlive a queued send */
    if (s->tmpbuf == NULL) {
        tern_request_release(s);
        return tern_error(TERN_ERR_NO_MEMORY, "control packet cookie");
    }
    memcpy(s->tmpbuf, cookie, cookie_len);
    s->vc = vc;
    s->peer = vc->rank;
    s->iov1.iov_base = s->tmpbuf;
    s->iov1.iov_len = cookie_len;
    tern_cursor_init(&s->cur, &s->iov1, 1);
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

tern_status_t tern_lmt_recv_matched(tern_request_t *rreq, const void *cookie, size_t cookie_len)
{
    tern_vc_t *vc = rreq->vc;
    if (vc->state == TERN_VC_FAILED) {
        tern_request_complete(rreq, tern_error(vc->fail_status,
                                               "receive from rank %d: its connection has failed",
                                               vc->rank));
        return TERN_OK;
    }
    if (rreq->lmt_mode != TERN_LMT_NULL)
        return vc->nm->lmt->start_recv(vc, rreq, cookie, cookie_len);
    return tern_lmt_send_cts(vc, rreq, NULL, 0); /* null mode: data follows as DATA */
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
    if (r->lmt_mode == TERN_LMT_NULL || vc->nm->lmt == NULL)
        return tern_error(TERN_ERR_MALFORMED, "COOKIE packet from rank %d for a null-mode "
                          "transfer (netmod %s)", vc->rank, vc->nm->name);
    return vc->nm->lmt->handle_cookie(vc, r, cookie, hdr->cookie_len);
}
