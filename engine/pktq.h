/*
 * The packet send queue under every netmod (after UCX's pending queue and
 * uct_iov_to_buffer): a VC's send requests in order, each one packet, the
 * header the engine gave the send op (req->pq: its bytes and how many went
 * out) followed by the payload in req->cur.
 *
 * A netmod queues what it could not write at once (push) and moves the head
 * on from its progress: iov and pack describe or copy the rest without
 * moving it, advance says how many bytes went, and the head completes once
 * all of it has.  How the bytes travel (a writev, RC segments, frames,
 * cells) stays the netmod's.  The queue links requests through req->link;
 * a VC that fails empties it with fail_all.
 */
#ifndef TERN_ENGINE_PKTQ_H
#define TERN_ENGINE_PKTQ_H

#include "engine/engine_internal.h"

typedef struct tern_pktq {
    tern_list_t reqs; /* tern_request_t.link, oldest first */
} tern_pktq_t;

static inline void tern_pktq_init(tern_pktq_t *q)
{
    tern_list_init(&q->reqs);
}

static inline bool tern_pktq_empty(const tern_pktq_t *q)
{
    return tern_list_empty(&q->reqs);
}

/* The oldest request of q, NULL when q is empty. */
static inline tern_request_t *tern_pktq_head(const tern_pktq_t *q)
{
    return tern_list_empty(&q->reqs) ? NULL : TERN_CONTAINER_OF(q->reqs.next, tern_request_t, link);
}

/* Queue r behind q's requests: hdr (hdrlen bytes, the first hsent of them
 * already sent) then the rest of r->cur.  hdr is copied: the caller's may
 * go.  hdrlen is at most TERN_PKTQ_HDR_MAX, which every engine packet
 * header fits (asserted); it cannot fail. */
void tern_pktq_push(tern_pktq_t *q, tern_request_t *r, const void *hdr, size_t hdrlen,
                    size_t hsent);

/* Bytes of r still to send. */
static inline size_t tern_pktq_left(const tern_request_t *r)
{
    return (size_t)(r->pq.len - r->pq.sent) + tern_cursor_left(&r->cur);
}

/* n more bytes of r went out (header bytes first, then payload); true when
 * all of r has. */
static inline bool tern_pktq_advance(tern_request_t *r, size_t n)
{
    size_t h = (size_t)(r->pq.len - r->pq.sent);
    if (h > n)
        h = n;
    r->pq.sent = (uint8_t)(r->pq.sent + h);
    if (n > h)
        tern_cursor_advance(&r->cur, n - h);
    return tern_pktq_left(r) == 0;
}

/* The rest of r as up to max iovec entries holding at most max_bytes in
 * all: the unsent header bytes (inside r), then slices of the payload.  r
 * does not move.  Returns the entry count, *bytes their sum. */
int tern_pktq_iov(tern_request_t *r, struct iovec *iov, int max, size_t max_bytes, size_t *bytes);

/* Copy up to len bytes of r's rest into buf; r does not move (advance says
 * what went).  Returns the bytes copied. */
size_t tern_pktq_pack(const tern_request_t *r, void *buf, size_t len);

/* Take r off the queue it is on (whoever owns it completes or releases it). */
static inline void tern_pktq_remove(tern_request_t *r)
{
    tern_list_del(&r->link);
}

/* The head request is all out: take it off q and complete it (TERN_OK). */
void tern_pktq_complete_head(tern_pktq_t *q);

/* Empty q (its VC failed, tern_vc_fail): every request completes with
 * status, except those on their VC's rendezvous list, which the engine
 * completes with the VC.  The reason reaches each request from the VC's
 * fail message when it is reaped. */
void tern_pktq_fail_all(tern_pktq_t *q, tern_status_t status);

#endif
