/*
 * dpdk netmod: the VC's byte stream into DATA frames.
 *
 * Engine packets (header + payload) are copied into pool mbufs, as many as
 * fit in a frame of the VC's payload size: small packets queued together
 * share frames, a large one spans several.  A packet copied whole
 * completes its request at once (the frames hold the bytes until acked);
 * what the window or the pool does not take waits in the VC's sendq
 * (header bytes in req->nm.u64[0..7], its length in [8], header bytes
 * framed in [9], the payload in req->cur), in order, and moves on when
 * acks open the window.  A packet that fits one frame with the window open
 * and nothing queued goes out at once with no request (one tx_burst).
 */
#include <string.h>

#include "netmods/dpdk/dpdk_internal.h"

#define HDR_MAX 64
#define HDRLEN 8
#define HDRSENT 9
#define FRAME_HDR (TERN_DPDK_ETH_HDR + TERN_DPDK_HDR_SIZE)

/* Copy from the head requests of the sendq into m (up to room bytes);
 * completes the requests copied whole.  Returns the bytes copied. */
static uint16_t fill(tern_dpdk_vc_t *dv, struct rte_mbuf *m, uint16_t room)
{
    uint16_t used = 0;
    while (used < room && !tern_list_empty(&dv->sendq)) {
        tern_request_t *r = TERN_CONTAINER_OF(dv->sendq.next, tern_request_t, link);
        size_t hlen = r->nm.u64[HDRLEN], hsent = r->nm.u64[HDRSENT];
        uint8_t *dst = rte_pktmbuf_mtod_offset(m, uint8_t *, FRAME_HDR + used);
        if (hsent < hlen) {
            size_t n = hlen - hsent < (size_t)(room - used) ? hlen - hsent : (size_t)(room - used);
            memcpy(dst, (const uint8_t *)r->nm.u64 + hsent, n);
            r->nm.u64[HDRSENT] = hsent + n;
            used = (uint16_t)(used + n);
            dst += n;
        }
        if (used < room && tern_cursor_left(&r->cur) > 0)
            used = (uint16_t)(used + tern_cursor_pack(&r->cur, dst, (size_t)(room - used)));
        if (r->nm.u64[HDRSENT] == hlen && tern_cursor_left(&r->cur) == 0) {
            tern_list_del(&r->link);
            tern_request_complete(r, TERN_OK);
        } else {
            break; /* the frame is full */
        }
    }
    return used;
}

/* One DATA frame from the sendq; false when the pool is empty. */
static bool frame_from_sendq(tern_dpdk_vc_t *dv)
{
    struct rte_mbuf *m = tern_dpdk_frame_alloc(dv, TERN_DPDK_F_DATA);
    if (m == NULL)
        return false;
    uint16_t n = fill(dv, m, dv->payload_max);
    rte_pktmbuf_append(m, n);
    tern_dpdk_hdr_t *h = rte_pktmbuf_mtod_offset(m, tern_dpdk_hdr_t *, TERN_DPDK_ETH_HDR);
    h->len = rte_cpu_to_le_16(n);
    dv->d->stats.copy_frames++;
    tern_dpdk_frame_queue(dv, (tern_dpdk_slot_t){.m = m, .len = n, .type = TERN_DPDK_F_DATA});
    return true;
}

void tern_dpdk_push(tern_dpdk_vc_t *dv)
{
    tern_dpdk_t *d = dv->d;
    if (dv->conn == DPDK_VC_DEAD || dv->vc->state == TERN_VC_FAILED)
        return;
    while (!tern_list_empty(&dv->sendq) || !tern_list_empty(&dv->lmtq)) {
        if (!tern_dpdk_window_open(dv)) {
            d->stats.window_full++;
            break; /* back-pressure: acks reopen it */
        }
        bool ok = !tern_list_empty(&dv->sendq) ? frame_from_sendq(dv) : tern_dpdk_lmt_push(dv);
        if (!ok)
            break; /* out of mbufs: the timers retry */
    }
    tern_dpdk_flush(dv);
}

/* Queue r (with the unframed rest of hdr) behind what waits; push now
 * (r may complete inside this call: only for requests the caller owns),
 * else the poll moves it. */
static tern_status_t enqueue(tern_dpdk_vc_t *dv, tern_request_t *r, const void *hdr,
                             size_t hdrlen, bool push_now)
{
    if (hdrlen > HDR_MAX)
        return tern_error(TERN_ERR_INVALID_PARAM, "dpdk: %zu-byte packet header", hdrlen);
    memcpy(r->nm.u64, hdr, hdrlen);
    r->nm.u64[HDRLEN] = hdrlen;
    r->nm.u64[HDRSENT] = 0;
    tern_list_push_tail(&dv->sendq, &r->link);
    tern_dpdk_mark_active(dv);
    if (push_now)
        tern_dpdk_push(dv);
    return TERN_OK;
}

static tern_status_t check_vc(tern_vc_t *vc)
{
    if (vc->state == TERN_VC_FAILED)
        return tern_error(vc->fail_status, "dpdk send to rank %d: connection failed", vc->rank);
    return TERN_OK;
}

tern_status_t tern_dpdk_istart_contig_msg(tern_vc_t *vc, const void *hdr, size_t hdrlen,
                                          const void *data, size_t len, tern_request_t **sreq)
{
    tern_dpdk_vc_t *dv = tern_dpdk_vc(vc);
    *sreq = NULL;
    tern_status_t st = check_vc(vc);
    if (st != TERN_OK)
        return st;
    dv->d->now_ns = tern_now_ns();
    if (hdrlen + len <= dv->payload_max && tern_list_empty(&dv->sendq) &&
        tern_list_empty(&dv->lmtq) && tern_dpdk_window_open(dv)) {
        struct rte_mbuf *m = tern_dpdk_frame_alloc(dv, TERN_DPDK_F_DATA);
        if (m != NULL) {
            uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(hdrlen + len));
            memcpy(p, hdr, hdrlen);
            if (len)
                memcpy(p + hdrlen, data, len);
            tern_dpdk_hdr_t *h = rte_pktmbuf_mtod_offset(m, tern_dpdk_hdr_t *,
                                                         TERN_DPDK_ETH_HDR);
            h->len = rte_cpu_to_le_16((uint16_t)(hdrlen + len));
            dv->d->stats.copy_frames++;
            tern_dpdk_frame_queue(dv, (tern_dpdk_slot_t){.m = m, .len = (uint16_t)(hdrlen + len),
                                                        .type = TERN_DPDK_F_DATA});
            tern_dpdk_flush(dv);
            return TERN_OK;
        }
    }
    tern_request_t *r = tern_request_alloc_contig_send(vc, data, len, 0);
    if (r == NULL)
        return TERN_ERR_NO_MEMORY;
    st = enqueue(dv, r, hdr, hdrlen, false); /* completes in poll, never inside this call */
    if (st != TERN_OK) {
        tern_request_release(r);
        return st;
    }
    *sreq = r;
    return TERN_OK;
}

tern_status_t tern_dpdk_send_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                       size_t hdrlen)
{
    tern_status_t st = check_vc(vc);
    if (st != TERN_OK)
        return st;
    sreq->vc = vc;
    tern_dpdk_vc(vc)->d->now_ns = tern_now_ns();
    return enqueue(tern_dpdk_vc(vc), sreq, hdr, hdrlen, true);
}
