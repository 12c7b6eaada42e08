/*
 * shm cooperative LMT: the sender copies the message through the pair's
 * copy buffer (num_chunks chunks of chunk_size) while the receiver copies
 * out of it into its buffer — a two-copy pipeline with both cores busy.
 * Only one message uses a pair's copy buffer at a time: both sides serve
 * their LMT queues in CTS order, which the ordered stream makes identical.
 * Each chunk names the receive request it belongs to; a mismatch is a
 * malformed segment, not silent corruption.
 *
 * This is shm's only LMT mode.  The single-copy get and put (CMA) are the
 * engine's (engine/cma_lmt.c), for every netmod: from the engine's
 * threshold (shm's cma_threshold, measured: the copy buffer wins below it)
 * or when TERN_LMT_MODE forces them; when the kernel refuses, the engine
 * hands the message back to this mode from its first byte.
 *
 * tern_shm_req(req)->done: bytes moved so far (sent by sender / received by receiver).
 */
#include "netmods/shm/shm_internal.h"

static inline tern_shm_chunk_hdr_t *chunk_at(tern_shm_t *s, tern_shm_chan_t *c, uint32_t i)
{
    return (tern_shm_chunk_hdr_t *)(void *)(c->copy + (size_t)i * sizeof(tern_shm_chunk_hdr_t));
}

static inline uint8_t *chunk_data(tern_shm_t *s, tern_shm_chan_t *c, uint32_t i)
{
    return c->copy_data + (size_t)i * s->hdr->chunk_size;
}

unsigned tern_shm_lmt_modes(void *state)
{
    return 1u << TERN_LMT_COOP;
}

int tern_shm_lmt_choose(tern_vc_t *vc, size_t len)
{
    return TERN_LMT_COOP;
}

tern_status_t tern_shm_lmt_initiate(tern_vc_t *vc, tern_request_t *sreq, int *mode, void *cookie,
                                    size_t *cookie_len)
{
    *mode = TERN_LMT_COOP; /* the only one */
    *cookie_len = 0;
    return TERN_OK;
}

/* An RTS was matched: CTS tells the sender to start filling the buffer. */
tern_status_t tern_shm_lmt_start_recv(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                      size_t cookie_len)
{
    tern_shm_vc_t *v = tern_shm_vc(vc);
    if (cookie_len != 0)
        return tern_error(TERN_ERR_MALFORMED, "shm RTS from rank %d carries a %zu-byte cookie",
                          vc->rank, cookie_len);
    tern_shm_req(rreq)->done = 0;
    tern_status_t st = tern_lmt_send_cts(vc, rreq, NULL, 0); /* registers the id */
    if (st != TERN_OK)
        return st;
    tern_list_push_tail(&v->lmt_rxq, &rreq->link);
    return TERN_OK;
}

/* CTS: the receiver has queued its side; ours follows in the same order. */
tern_status_t tern_shm_lmt_start_send(tern_vc_t *vc, tern_request_t *sreq, const void *cookie,
                                      size_t cookie_len)
{
    tern_shm_vc_t *v = tern_shm_vc(vc);
    if (cookie_len != 0)
        return tern_error(TERN_ERR_MALFORMED, "shm CTS from rank %d carries a %zu-byte cookie",
                          vc->rank, cookie_len);
    tern_shm_req(sreq)->done = 0;
    tern_list_push_tail(&v->lmt_txq, &sreq->link);
    return TERN_OK;
}

tern_status_t tern_shm_lmt_handle_cookie(tern_vc_t *vc, tern_request_t *req, const void *cookie,
                                         size_t cookie_len)
{
    return tern_error(TERN_ERR_MALFORMED,
                      "shm: COOKIE packet (%zu bytes) from rank %d: the copy "
                      "buffer has none",
                      cookie_len, vc->rank);
}

tern_status_t tern_shm_lmt_done_send(tern_vc_t *vc, tern_request_t *sreq)
{
    return tern_error(TERN_ERR_MALFORMED,
                      "shm: DONE to a sender from rank %d: the copy buffer "
                      "completes without one",
                      vc->rank);
}

tern_status_t tern_shm_lmt_done_recv(tern_vc_t *vc, tern_request_t *rreq)
{
    return tern_error(TERN_ERR_MALFORMED,
                      "shm: DONE to a receiver from rank %d: the copy "
                      "buffer completes without one",
                      vc->rank);
}

size_t tern_shm_coop_piece(uint32_t chunk_size, uint64_t len)
{
    size_t piece = 16u << 10;
    while (piece < chunk_size && piece < len / 4)
        piece *= 2;
    return piece < chunk_size ? piece : chunk_size;
}

static unsigned progress_send(tern_shm_t *s, tern_shm_vc_t *v)
{
    unsigned n = 0;
    tern_shm_chan_t *c = &v->tx;
    while (!tern_list_empty(&v->lmt_txq)) {
        tern_request_t *r = TERN_CONTAINER_OF(v->lmt_txq.next, tern_request_t, link);
        while (tern_shm_req(r)->done < r->msg_len) {
            tern_shm_chunk_hdr_t *ch = chunk_at(s, c, c->chunk);
            /* A4: the reader's release of len=0 ends its reads of the chunk. */
            if (atomic_load_explicit(&ch->len, memory_order_acquire) != 0)
                return n;
            /* The last message queued goes in pieces, so the receiver starts
             * copying early; with more queued behind it the pipeline is
             * already full, and whole chunks take fewer handshakes. */
            size_t piece = r->link.next == &v->lmt_txq
                               ? tern_shm_coop_piece(s->hdr->chunk_size, r->msg_len)
                               : s->hdr->chunk_size;
            size_t k = tern_cursor_pack(&r->cur, chunk_data(s, c, c->chunk), piece);
            ch->rreq_id = r->remote_id;
            atomic_store_explicit(&ch->len, (uint32_t)k, memory_order_release); /* R4 */
            if (s->ring_doorbells)
                tern_shm_ring_doorbell(s, v);
            tern_shm_req(r)->done += k;
            c->chunk = (c->chunk + 1) & s->chunk_mask;
            n++;
        }
        tern_list_del(&r->link);
        tern_request_complete(r, TERN_OK);
    }
    return n;
}

static unsigned progress_recv(tern_shm_t *s, tern_shm_vc_t *v)
{
    unsigned n = 0;
    tern_shm_chan_t *c = &v->rx;
    while (!tern_list_empty(&v->lmt_rxq)) {
        tern_request_t *r = TERN_CONTAINER_OF(v->lmt_rxq.next, tern_request_t, link);
        while (tern_shm_req(r)->done < r->msg_len) {
            tern_shm_chunk_hdr_t *ch = chunk_at(s, c, c->chunk);
            /* A4: pairs with the writer's R4; the chunk's bytes are visible. */
            uint32_t len = atomic_load_explicit(&ch->len, memory_order_acquire);
            if (len == 0)
                return n;
            if (TERN_UNLIKELY(ch->rreq_id != tern_request_id(r) || len > s->hdr->chunk_size ||
                              len > r->msg_len - tern_shm_req(r)->done)) {
                tern_vc_fail(v->vc, TERN_ERR_MALFORMED,
                             "shm copy-buffer chunk does not belong to the receive in progress");
                return n;
            }
            /* Bounded by the user buffer: a truncated tail is dropped. */
            tern_cursor_unpack(&r->cur, chunk_data(s, c, c->chunk), len);
            atomic_store_explicit(&ch->len, 0, memory_order_release); /* R4 */
            tern_shm_req(r)->done += len;
            c->chunk = (c->chunk + 1) & s->chunk_mask;
            n++;
        }
        tern_list_del(&r->link);
        tern_recv_data_complete(r);
    }
    return n;
}

unsigned tern_shm_lmt_progress(tern_shm_t *s, tern_shm_vc_t *v)
{
    unsigned n = 0;
    if (!tern_list_empty(&v->lmt_rxq))
        n += progress_recv(s, v);
    if (!tern_list_empty(&v->lmt_txq))
        n += progress_send(s, v);
    return n;
}
