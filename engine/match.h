/*
 * Tag matching: posted and unexpected queues of one worker, searched in
 * order, so MPI's non-overtaking rule holds per (source, space).
 */
#ifndef TERN_ENGINE_MATCH_H
#define TERN_ENGINE_MATCH_H

#include "engine/engine_internal.h"

/* Does a receive (want_src, want_tag with the bits of ignore ignored,
 * want_space) accept a message (src, tag, space)? */
static inline bool tern_match_accepts(int want_src, uint64_t want_tag, uint64_t ignore,
                                      uint16_t want_space, int src, uint64_t tag, uint16_t space)
{
    return want_space == space && (want_src == TERN_ANY_SOURCE || want_src == src) &&
           ((tag ^ want_tag) & ~ignore) == 0;
}

/* core.h's int tag as the engine's (tag, ignore): TERN_ANY_TAG takes the
 * tags 0 .. TERN_TAG_MAX, the only ones a core.h receive can report. */
static inline uint64_t tern_match_int_ignore(int tag)
{
    return tag == TERN_ANY_TAG ? (uint64_t)TERN_TAG_MAX : 0;
}
static inline uint64_t tern_match_int_tag(int tag)
{
    return tag == TERN_ANY_TAG ? 0 : (uint64_t)tag;
}

/* Remove and return the first posted receive that accepts (src, tag, space). */
tern_request_t *tern_match_posted(tern_worker_t *w, int src, uint64_t tag, uint16_t space);

/* The first unexpected message a receive (src, tag, ignore, space)
 * accepts, left in the queue (a probe). */
tern_request_t *tern_peek_unexpected(tern_worker_t *w, int src, uint64_t tag, uint64_t ignore,
                                     uint16_t space);

/* Remove and return the first unexpected message a receive (src, tag,
 * ignore, space) accepts. */
tern_request_t *tern_match_unexpected(tern_worker_t *w, int src, uint64_t tag, uint64_t ignore,
                                      uint16_t space);

/* Rendezvous packet handlers (lmt.c). */
tern_status_t tern_lmt_handle_cts(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie);
tern_status_t tern_lmt_handle_done(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie);
tern_status_t tern_lmt_handle_cookie_pkt(tern_vc_t *vc, const tern_pkt_hdr_t *hdr,
                                         const uint8_t *cookie);

void tern_worker_pool_destroy(tern_worker_t *w);

#endif
