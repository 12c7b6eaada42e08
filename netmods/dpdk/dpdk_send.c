/*
 * dpdk netmod: the VC's byte stream into DATA frames.
 *
 * Engine packets (header + payload) are copied into pool mbufs, as many as
 * fit in a frame of the VC's payload size: small packets queued together
 * share frames, a large one spans several.  A packet copied whole
 * completes its request at once (the frames hold the bytes until acked);
 * what the window or the pool does not take waits in the VC's engine packet
 * queue (sendq, engine/pktq.h), in order, and moves on when acks open the
 * window.  A packet that fits one frame with the window open
 * and nothing queued goes out at once with no request (one tx_burst).
 */
#include <string.h>

#include "netmods/dpdk/dpdk_internal.h"

#define FRAME_HDR (TERN_DPDK_ETH_HDR + TERN_DPDK_HDR_SIZE)

/* Copy from the head requests of the sendq into m (up to room bytes);
 * completes the requests copied whole.  Returns the bytes copied. */
static uint16_t fill(tern_dpdk_vc_t *dv, struct rte_mbuf *m, uint16_t room)
{
    uint16_t used = 0;
    tern_request_t *r;
    while (used < room && (r = tern_pktq_head(&dv->sendq)) != NULL) {
        uint8_t *dst = rte_pktmbuf_mtod_offset(m, uint8_t *, FRAME_HDR + used);
        size_t n = tern_pktq_pack(r, dst, (size_t)(room - used));
        used = (uint16_t)(used + n);
        if (!tern_pktq_advance(r, n))
            break; /* the frame is full */
        tern_pktq_complete_head(&dv->sendq);
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
    while (!tern_pktq_empty(&dv->sendq) || !tern_list_empty(&dv->lmtq)) {
        if (!tern_dpdk_window_open(dv)) {
            d->stats.window_full++;
            break; /* back-pressure: acks reopen it */
        }
        bool ok = !tern_pktq_empty(&dv->sendq) ? frame_from_sendq(dv) : tern_dpdk_lmt_push(dv);
        if (!ok)
            break; /* out of mbufs: the timers retry */
    }
    tern_dpdk_flush(dv);
}

/* Queue r (with the unframed rest of hdr) behind what waits; push now
 * (r may complete inside this call: only for requests the caller owns),
 * else the poll moves it. */
static void enqueue(tern_dpdk_vc_t *dv, tern_request_t *r, const void *hdr, size_t hdrlen,
                    bool push_now)
{
    tern_pktq_push(&dv->sendq, r, hdr, hdrlen, 0);
    tern_dpdk_mark_active(dv);
    if (push_now)
        tern_dpdk_push(dv);
}

tern_status_t tern_dpdk_istart_contig_msg(tern_vc_t *vc, const void *hdr, size_t hdrlen,
                                          const void *data, size_t len, tern_request_t **sreq)
{
    tern_dpdk_vc_t *dv = tern_dpdk_vc(vc);
    *sreq = NULL;
    dv->d->now_ns = tern_now_ns();
    if (hdrlen + len <= dv->payload_max && tern_pktq_empty(&dv->sendq) &&
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
    /* completes in poll, never inside this call */
    enqueue(dv, r, hdr, hdrlen, false);
    *sreq = r;
    return TERN_OK;
}

tern_status_t tern_dpdk_send_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                       size_t hdrlen)
{
    tern_dpdk_vc(vc)->d->now_ns = tern_now_ns();
    enqueue(tern_dpdk_vc(vc), sreq, hdr, hdrlen, true);
    return TERN_OK;
}
