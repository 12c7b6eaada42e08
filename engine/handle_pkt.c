/*
 * The engine's stream parser: netmods hand it the bytes of a VC in order, in
 * any fragmenting (a packet split over cells, several packets in one
 * buffer).  Header bytes are kept in the VC until complete; payload bytes
 * stream straight into the matched receive buffer (or the unexpected
 * buffer), so an eager message costs one copy out of the netmod.
 *
 * Dispatch by packet type goes through an enum-indexed table.  Every header
 * is validated; a malformed one fails the VC with TERN_ERR_MALFORMED.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/copy.h"
#include "engine/engine_internal.h"
#include "engine/match.h"
#include "engine/netmod.h"
#include "engine/rma.h"

/* Largest eager payload any peer may send us (the config maximum). */
#define TERN_EAGER_WIRE_MAX (1024u * 1024u)

typedef tern_status_t (*pkt_handler_t)(tern_vc_t *vc, const tern_pkt_hdr_t *hdr,
                                       const uint8_t *cookie);

/* Bind the VC's payload sink to rreq for hdr->len bytes. */
static void start_payload(tern_vc_t *vc, tern_request_t *rreq, size_t len)
{
    vc->rx.sink = rreq;
    vc->rx.payload_left = len;
    vc->rx.state = TERN_RX_PAYLOAD;
}

/* Record on r which message it holds (from vc, described by hdr). */
static void bind_message(tern_request_t *r, tern_vc_t *vc, const tern_pkt_hdr_t *hdr)
{
    r->vc = vc;
    r->peer = vc->rank;
    r->tag = hdr->tag;
    r->space = hdr->space;
    r->msg_len = hdr->len;
    if (TERN_UNLIKELY(hdr->flags & TERN_PKT_F_DATA)) {
        r->flags |= TERN_REQF_HAS_DATA;
        r->data = hdr->rreq;
    }
}

static tern_status_t handle_eager(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie)
{
    tern_worker_t *w = vc->worker;
    if (hdr->len > TERN_EAGER_WIRE_MAX)
        return tern_error(TERN_ERR_MALFORMED, "eager packet from rank %d claims %llu bytes",
                          vc->rank, (unsigned long long)hdr->len);
    tern_request_t *r = tern_match_posted(w, vc->rank, hdr->tag, hdr->space);
    if (r == NULL) {
        r = tern_request_alloc(w, TERN_REQ_RECV);
        if (r == NULL)
            return TERN_ERR_NO_MEMORY;
        /* a zero-byte message needs no buffer: it is DATA_DONE at once */
        r->tmpbuf = hdr->len ? malloc(hdr->len) : NULL;
        if (hdr->len && r->tmpbuf == NULL) {
            tern_request_release(r);
            return tern_error(TERN_ERR_NO_MEMORY, "unexpected message of %llu bytes from rank %d",
                              (unsigned long long)hdr->len, vc->rank);
        }
        r->flags |= TERN_REQF_UNEXP;
        tern_list_push_tail(&w->unexpected, &r->link);
        w->completions++; /* an arrival: wakes a probe-then-wait (tern_worker_wait) */
    }
    bind_message(r, vc, hdr);
    if (hdr->len == 0) {
        r->flags |= TERN_REQF_DATA_DONE;
        if (!(r->flags & (TERN_REQF_UNEXP | TERN_REQF_MPROBED)))
            tern_recv_data_complete(r);
        return TERN_OK;
    }
    start_payload(vc, r, hdr->len);
    return TERN_OK;
}

static tern_status_t handle_rts(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie)
{
    tern_worker_t *w = vc->worker;
    /* the CMA modes are the engine's: any netmod's RTS may name them */
    unsigned mode = hdr->flags & TERN_PKT_LMT_MASK;
    if (mode != TERN_LMT_NULL && mode != TERN_LMT_CMA_GET && mode != TERN_LMT_CMA_PUT &&
        (vc->nm->lmt == NULL || !(vc->nm->lmt->modes(vc->nm_state) & (1u << mode))))
        return tern_error(TERN_ERR_MALFORMED, "RTS from rank %d asks for LMT mode %u, which "
                          "netmod %s does not have", vc->rank, mode, vc->nm->name);
    tern_request_t *r = tern_match_posted(w, vc->rank, hdr->tag, hdr->space);
    bool matched = r != NULL;
    if (!matched) {
        r = tern_request_alloc(w, TERN_REQ_RECV);
        if (r == NULL)
            return TERN_ERR_NO_MEMORY;
        r->flags |= TERN_REQF_UNEXP | TERN_REQF_RNDV;
        if (hdr->cookie_len) {
            r->tmpbuf = malloc(hdr->cookie_len);
            if (r->tmpbuf == NULL) {
                tern_request_release(r);
                return tern_error(TERN_ERR_NO_MEMORY, "RTS cookie");
            }
            memcpy(r->tmpbuf, cookie, hdr->cookie_len);
            r->tmp_have = hdr->cookie_len;
        }
        tern_list_push_tail(&w->unexpected, &r->link);
        w->completions++; /* an arrival: as handle_eager's */
    }
    bind_message(r, vc, hdr);
    r->remote_id = hdr->sreq;
    r->lmt_mode = (uint8_t)mode;
    if (matched)
        return tern_lmt_recv_matched(r, cookie, hdr->cookie_len);
    return TERN_OK;
}

static tern_status_t handle_data(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie)
{
    tern_request_t *r = tern_request_lookup(vc->worker, hdr->rreq);
    if (r == NULL || r->kind != TERN_REQ_RECV || r->vc != vc || hdr->len != r->msg_len)
        return tern_error(TERN_ERR_MALFORMED,
                          "DATA packet from rank %d names no receive waiting for %llu bytes",
                          vc->rank, (unsigned long long)hdr->len);
    if (hdr->len == 0) {
        tern_recv_data_complete(r);
        return TERN_OK;
    }
    start_payload(vc, r, hdr->len);
    return TERN_OK;
}

/* The peer terminated the VC (tern_vc_say_bye): from now on the end of its
 * stream is a close (engine/progress.c), and finalize stops waiting for it. */
static tern_status_t handle_bye(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie)
{
    vc->peer_bye = true;
    return TERN_OK;
}

static const pkt_handler_t pkt_handlers[TERN_PKT_TYPE_MAX] = {
    [TERN_PKT_EAGER] = handle_eager,
    [TERN_PKT_RTS] = handle_rts,
    [TERN_PKT_CTS] = tern_lmt_handle_cts,
    [TERN_PKT_DONE] = tern_lmt_handle_done,
    [TERN_PKT_COOKIE] = tern_lmt_handle_cookie_pkt,
    [TERN_PKT_DATA] = handle_data,
    [TERN_PKT_BYE] = handle_bye,
    [TERN_PKT_RMA_PUT] = tern_rma_handle_put,
    [TERN_PKT_RMA_GET] = tern_rma_handle_get,
    [TERN_PKT_RMA_AMO] = tern_rma_handle_amo,
    [TERN_PKT_RMA_ACC] = tern_rma_handle_acc,
    [TERN_PKT_RMA_FLUSH] = tern_rma_handle_flush,
    [TERN_PKT_RMA_RESP] = tern_rma_handle_resp,
};

static tern_status_t validate(const tern_vc_t *vc, const tern_pkt_hdr_t *h)
{
    /* EAGER and RTS may carry immediate data (F_DATA, in rreq); without it
     * rreq is zero.  An RTS names its mode below the flag. */
    bool msg = h->type == TERN_PKT_EAGER || h->type == TERN_PKT_RTS;
    /* the one-sided operations name theirs in flags (a put: F_DATA): their
     * handlers check */
    bool op = h->type == TERN_PKT_RMA_AMO || h->type == TERN_PKT_RMA_ACC ||
              h->type == TERN_PKT_RMA_PUT;
    unsigned mode = op ? 0 : h->flags & (msg ? TERN_PKT_LMT_MASK | 0x70u : 0xffu);
    bool flags_ok = h->type == TERN_PKT_RTS ? mode >= TERN_LMT_NULL && mode < TERN_LMT_NMODES
                                            : mode == 0;
    if (h->type == 0 || h->type >= TERN_PKT_TYPE_MAX || !flags_ok ||
        h->cookie_len > TERN_COOKIE_MAX ||
        (msg && !(h->flags & TERN_PKT_F_DATA) && h->rreq != 0) ||
        ((h->type == TERN_PKT_EAGER || h->type == TERN_PKT_DATA) && h->cookie_len != 0) ||
        (h->type == TERN_PKT_BYE && (h->cookie_len != 0 || h->len != 0)))
        return tern_error(TERN_ERR_MALFORMED,
                          "malformed packet header from rank %d (type %u flags %u cookie %u)",
                          vc->rank, h->type, h->flags, h->cookie_len);
    return TERN_OK;
}

/* Stream up to len payload bytes into the sink; returns bytes consumed. */
static size_t feed_payload(tern_vc_t *vc, const uint8_t *p, size_t len)
{
    tern_vc_rx_t *rx = &vc->rx;
    tern_request_t *r = rx->sink;
    size_t n = len < rx->payload_left ? len : rx->payload_left;
    if (TERN_UNLIKELY(r->kind >= TERN_REQ_RMA_PUT)) { /* into a region (engine/rma_target.c) */
        rx->payload_left -= n;
        bool last = rx->payload_left == 0;
        if (last) {
            rx->state = TERN_RX_HDR;
            rx->sink = NULL;
        }
        tern_rma_feed(vc, r, p, n, last);
        return n;
    }
    if (r->tmpbuf != NULL) {
        tern_copy((char *)r->tmpbuf + r->tmp_have, p, n);
        r->tmp_have += n;
    } else {
        /* Bounded by the cursor: bytes past the user buffer are dropped. */
        tern_cursor_unpack(&r->cur, p, n);
    }
    rx->payload_left -= n;
    if (rx->payload_left == 0) {
        rx->state = TERN_RX_HDR;
        rx->sink = NULL;
        r->flags |= TERN_REQF_DATA_DONE;
        if (!(r->flags & (TERN_REQF_UNEXP | TERN_REQF_MPROBED)))
            tern_recv_data_complete(r);
    }
    return n;
}

/*
 * Fast path: buf is exactly one whole eager packet and a posted receive with
 * a contiguous buffer takes it — the common case of small messages.  Returns
 * false (having done nothing) when anything else applies.
 */
static inline bool eager_fast(tern_vc_t *vc, const uint8_t *p, size_t len)
{
    tern_pkt_hdr_t h;
    memcpy(&h, p, TERN_PKT_HDR_SIZE);
    if (h.type != TERN_PKT_EAGER || (h.flags == 0 ? h.rreq != 0 : h.flags != TERN_PKT_F_DATA) ||
        h.cookie_len != 0 || h.len != len - TERN_PKT_HDR_SIZE)
        return false;
    tern_worker_t *w = vc->worker;
    if (tern_list_empty(&w->posted))
        return false;
    tern_request_t *r = TERN_CONTAINER_OF(w->posted.next, tern_request_t, link);
    /* only the head of the posted queue: a deeper match takes the slow path */
    if (r->space != h.space || (r->match_src != TERN_ANY_SOURCE && r->match_src != vc->rank) ||
        ((h.tag ^ r->match_tag) & ~r->match_ignore) != 0 || r->cur.iovcnt != 1)
        return false;
    tern_list_del(&r->link);
    r->flags &= ~(uint32_t)TERN_REQF_POSTED;
    bind_message(r, vc, &h);
    size_t n = h.len < r->cur.total ? h.len : r->cur.total; /* never past the buffer */
    tern_copy_small(r->cur.iov[0].iov_base, p + TERN_PKT_HDR_SIZE, n);
    r->cur.pos = n;
    r->flags |= TERN_REQF_DATA_DONE;
    /* Whole and untruncated, no staging buffer, no chained handler: what
     * tern_recv_data_complete would come to, without its call; a truncated
     * or chained receive takes it. */
    if (TERN_LIKELY(n == h.len && r->on_data_avail == NULL && r->tmpbuf == NULL))
        tern_request_complete(r, TERN_OK);
    else
        tern_recv_data_complete(r);
    return true;
}

static tern_status_t handle_stream(tern_vc_t *vc, const uint8_t *p, size_t len);

tern_status_t tern_handle_pkt(tern_vc_t *vc, const void *buf, size_t len)
{
    const tern_vc_rx_t *rx = &vc->rx;
    if (rx->state == TERN_RX_HDR && rx->have == 0 && len >= TERN_PKT_HDR_SIZE &&
        TERN_LIKELY(vc->state != TERN_VC_FAILED) && eager_fast(vc, buf, len))
        return TERN_OK;
    return handle_stream(vc, buf, len);
}

/* Everything but the fast path, out of line: its 300-byte frame (a header
 * and cookie copy) is not paid by every small message. */
__attribute__((noinline)) static tern_status_t handle_stream(tern_vc_t *vc, const uint8_t *p,
                                                             size_t len)
{
    tern_vc_rx_t *rx = &vc->rx;
    while (len > 0) {
        if (vc->state == TERN_VC_FAILED)
            return vc->fail_status;
        if (rx->state == TERN_RX_PAYLOAD) {
            size_t n = feed_payload(vc, p, len);
            p += n;
            len -= n;
            continue;
        }
        /* Header (+cookie): in place when whole, else gathered in rx->buf. */
        const tern_pkt_hdr_t *hdr;
        const uint8_t *cookie;
        tern_pkt_hdr_t hcopy;
        uint8_t ccopy[TERN_COOKIE_MAX];
        uint32_t clen = UINT32_MAX;
        if (rx->have == 0 && len >= TERN_PKT_HDR_SIZE) /* buffers may be unaligned */
            memcpy(&clen, p + offsetof(tern_pkt_hdr_t, cookie_len), sizeof(clen));
        if (rx->have == 0 && clen <= TERN_COOKIE_MAX && len >= TERN_PKT_HDR_SIZE + clen) {
            memcpy(&hcopy, p, TERN_PKT_HDR_SIZE);
            size_t total = TERN_PKT_HDR_SIZE + hcopy.cookie_len;
            memcpy(ccopy, p + TERN_PKT_HDR_SIZE, hcopy.cookie_len);
            p += total;
            len -= total;
        } else {
            size_t want = TERN_PKT_HDR_SIZE;
            if (rx->have >= TERN_PKT_HDR_SIZE) {
                memcpy(&hcopy, rx->buf, TERN_PKT_HDR_SIZE);
                want += hcopy.cookie_len > TERN_COOKIE_MAX ? 0 : hcopy.cookie_len;
            }
            size_t n = want - rx->have < len ? want - rx->have : len;
            memcpy(rx->buf + rx->have, p, n);
            rx->have += n;
            p += n;
            len -= n;
            if (rx->have < TERN_PKT_HDR_SIZE)
                continue;
            memcpy(&hcopy, rx->buf, TERN_PKT_HDR_SIZE);
            if (hcopy.cookie_len <= TERN_COOKIE_MAX &&
                rx->have < TERN_PKT_HDR_SIZE + hcopy.cookie_len)
                continue; /* cookie still incomplete */
            memcpy(ccopy, rx->buf + TERN_PKT_HDR_SIZE,
                   hcopy.cookie_len <= TERN_COOKIE_MAX ? hcopy.cookie_len : 0);
            rx->have = 0;
        }
        hdr = &hcopy;
        cookie = ccopy;
        /* The parser state is reset before dispatch: a handler may send on
         * this VC and, for the self netmod, re-enter this function. */
        tern_status_t st = validate(vc, hdr);
        if (st == TERN_OK)
            st = pkt_handlers[hdr->type](vc, hdr, cookie);
        if (TERN_UNLIKELY(st != TERN_OK)) {
            tern_vc_fail(vc, st, tern_last_error());
            return st;
        }
    }
    return TERN_OK;
}
