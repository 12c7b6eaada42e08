/*
 * Tag matching: posted and unexpected queues of one worker, searched in
 * order, so MPI's non-overtaking rule holds per (source, space).
 */
#ifndef TERN_ENGINE_MATCH_H
#define TERN_ENGINE_MATCH_H

#include "engine/engine_internal.h"

/* Remove and return the first posted receive that accepts (src, tag, space). */
tern_request_t *tern_match_posted(tern_worker_t *w, int src, int tag, uint16_t space);

/* The first unexpected message a receive (src, tag, space) accepts, left
 * in the queue (a probe). */
tern_request_t *tern_peek_unexpected(tern_worker_t *w, int src, int tag, uint16_t space);

/* Remove and return the first unexpected message a receive (src, tag, space) accepts. */
tern_request_t *tern_match_unexpected(tern_worker_t *w, int src, int tag, uint16_t space);

/* Rendezvous packet handlers (lmt.c). */
tern_status_t tern_lmt_handle_cts(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie);
tern_status_t tern_lmt_handle_done(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie);
tern_status_t tern_lmt_handle_cookie_pkt(tern_vc_t *vc, const tern_pkt_hdr_t *hdr,
                                         const uint8_t *cookie);

void tern_worker_pool_destroy(tern_worker_t *w);

#endif
