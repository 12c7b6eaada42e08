/*
 * shm eager send: the packet stream (engine header + payload) is cut into
 * units, each written into the peer's next fastbox slot (when the rest of
 * the packet fits and a slot is free) or the next cell.  No syscall, lock or
 * malloc on this path; a request is created only when the ring is full.
 *
 * A partly written stream waits in the VC's engine packet queue (sendq,
 * engine/pktq.h: its header in req->pq, payload progress in req->cur) and
 * goes on from poll, in order.
 */
#include <assert.h>
#include <string.h>
#include <unistd.h>

#include "engine/copy.h"
#include "netmods/shm/shm_internal.h"

static size_t fill(uint8_t *dst, size_t room, const uint8_t *hdr, size_t hdrlen, size_t *hsent,
                   tern_cursor_t *cur, const uint8_t *data, size_t *dsent, size_t dlen)
{
    size_t n = 0;
    if (*hsent < hdrlen) {
        n = hdrlen - *hsent < room ? hdrlen - *hsent : room;
        memcpy(dst, hdr + *hsent, n); /* header bytes: small */
        *hsent += n;
    }
    if (n < room) {
        if (cur != NULL) {
            n += tern_cursor_pack(cur, dst + n, room - n);
        } else if (*dsent < dlen) {
            size_t m = dlen - *dsent < room - n ? dlen - *dsent : room - n;
            tern_copy(dst + n, data + *dsent, m);
            *dsent += m;
            n += m;
        }
    }
    return n;
}

/* The next free slot of a ring, or NULL when the ring is full.  A2: the
 * reader's release of its consumer index ends its reads of those slots. */
static inline tern_shm_unit_hdr_t *free_slot(uint8_t *base, uint32_t idx, uint32_t *head_cache,
                                             _Atomic uint32_t *head, uint32_t n, uint32_t mask,
                                             uint32_t size)
{
    if (TERN_UNLIKELY(idx - *head_cache == n)) {
        *head_cache = atomic_load_explicit(head, memory_order_acquire); /* A2 */
        if (idx - *head_cache == n)
            return NULL;
    }
    return (tern_shm_unit_hdr_t *)(void *)(base + (size_t)(idx & mask) * size);
}

/*
 * Write as much of the stream as the channel takes.  Either cur (iovec
 * payload) or data/dsent (contiguous) describes the payload.  Returns true
 * when everything was written.
 */
static bool push(tern_shm_t *s, tern_shm_vc_t *v, const uint8_t *hdr, size_t hdrlen,
                 size_t *hsent, tern_cursor_t *cur, const uint8_t *data, size_t *dsent,
                 size_t dlen)
{
    tern_shm_chan_t *c = &v->tx;
    bool wrote = false;
    for (;;) {
        size_t left = (hdrlen - *hsent) + (cur ? tern_cursor_left(cur) : dlen - *dsent);
        if (left == 0)
            break;
        tern_shm_unit_hdr_t *u = NULL;
        uint32_t stamp;
        size_t room;
        /* Pad so a large payload starts 64-byte aligned in the slot. */
        size_t hbytes = hdrlen - *hsent;
        size_t pad = left - hbytes >= TERN_SHM_PAD_MIN_PAYLOAD
                         ? (64 - ((TERN_SHM_UNIT_HDR + hbytes) & 63)) & 63
                         : 0;
        /* Fastbox ring: only for the whole rest of a packet. */
        if (left + pad <= s->fbox_cap &&
            (u = free_slot(c->fbox, c->fb_idx, &c->fb_head, &c->ctl->fbox_head, s->num_fbox,
                           s->fbox_mask, s->fbox_size)) != NULL) {
            stamp = ++c->fb_idx;
            room = left;
        } else if ((u = free_slot(c->cells, c->cell_idx, &c->cell_head, &c->ctl->cell_head,
                                  s->num_cells, s->cell_mask, s->cell_size)) != NULL) {
            stamp = ++c->cell_idx;
            room = left < s->cell_cap - pad ? left : s->cell_cap - pad;
        } else {
            break; /* both rings full: back-pressure, the caller queues */
        }
        u->pad = (uint32_t)pad;
        u->len = (uint32_t)fill((uint8_t *)u + TERN_SHM_UNIT_HDR + pad, room, hdr, hdrlen, hsent,
                                cur, data, dsent, dlen);
        u->seq = c->seq++;
        atomic_store_explicit(&u->stamp, stamp, memory_order_release); /* R1 */
        wrote = true;
    }
    if (wrote && s->ring_doorbells)
        tern_shm_ring_doorbell(s, v);
    return (hdrlen - *hsent) + (cur ? tern_cursor_left(cur) : dlen - *dsent) == 0;
}

tern_status_t tern_shm_istart_contig_msg(tern_vc_t *vc, const void *hdr, size_t hdrlen,
                                         const void *data, size_t len, tern_request_t **sreq)
{
    tern_shm_t *s = tern_shm_state(vc);
    tern_shm_vc_t *v = tern_shm_vc(vc);
    *sreq = NULL;
    size_t hsent = 0, dsent = 0;
    if (TERN_LIKELY(tern_pktq_empty(&v->sendq))) {
        /* Fast path: the whole packet in the next fastbox slot. */
        tern_shm_chan_t *c = &v->tx;
        tern_shm_unit_hdr_t *u;
        if (TERN_LIKELY(len < TERN_SHM_PAD_MIN_PAYLOAD && hdrlen + len <= s->fbox_cap) &&
            (u = free_slot(c->fbox, c->fb_idx, &c->fb_head, &c->ctl->fbox_head, s->num_fbox,
                           s->fbox_mask, s->fbox_size)) != NULL) {
            uint8_t *d = (uint8_t *)u + TERN_SHM_UNIT_HDR;
            /* Copies of a known size are inlined: a call to memcpy per part
             * is a good share of an 8-byte message's time.  hdr is always
             * one engine packet header (netmod.h). */
            assert(hdrlen == TERN_PKT_HDR_SIZE);
            memcpy(d, hdr, TERN_PKT_HDR_SIZE);
            tern_copy_small(d + hdrlen, data, len);
            u->len = (uint32_t)(hdrlen + len);
            u->pad = 0;
            u->seq = c->seq++;
            atomic_store_explicit(&u->stamp, ++c->fb_idx, memory_order_release); /* R1 */
            if (s->ring_doorbells)
                tern_shm_ring_doorbell(s, v);
            return TERN_OK;
        }
        if (push(s, v, hdr, hdrlen, &hsent, NULL, data, &dsent, len))
            return TERN_OK;
    }
    /* Could not send it all now: a request carries the rest. */
    tern_request_t *r = tern_request_alloc_contig_send(vc, data, len, dsent);
    if (r == NULL) {
        tern_status_t st =
            tern_error(TERN_ERR_NO_MEMORY,
                       "shm send to rank %d: no request for the rest of a packet", vc->rank);
        /* Part of the packet may be in the channel already: the stream is
         * torn, so the VC fails loudly rather than lose data silently. */
        if (hsent > 0)
            tern_vc_fail(vc, st, tern_last_error());
        return st;
    }
    tern_pktq_push(&v->sendq, r, hdr, hdrlen, hsent);
    *sreq = r;
    return TERN_OK;
}

tern_status_t tern_shm_send_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                      size_t hdrlen)
{
    tern_shm_t *s = tern_shm_state(vc);
    tern_shm_vc_t *v = tern_shm_vc(vc);
    size_t hsent = 0;
    if (tern_pktq_empty(&v->sendq) && push(s, v, hdr, hdrlen, &hsent, &sreq->cur, NULL, NULL, 0)) {
        tern_request_complete(sreq, TERN_OK);
        return TERN_OK;
    }
    tern_pktq_push(&v->sendq, sreq, hdr, hdrlen, hsent);
    return TERN_OK;
}

unsigned tern_shm_progress_sendq(tern_shm_t *s, tern_shm_vc_t *v)
{
    unsigned n = 0;
    tern_request_t *r;
    while ((r = tern_pktq_head(&v->sendq)) != NULL) {
        size_t hsent = r->pq.sent;
        bool done = push(s, v, r->pq.bytes, r->pq.len, &hsent, &r->cur, NULL, NULL, 0);
        r->pq.sent = (uint8_t)hsent;
        if (!done)
            break;
        tern_pktq_complete_head(&v->sendq);
        n++;
    }
    return n;
}
