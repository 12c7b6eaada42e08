/*
 * The worker's completion queue (include/tern/tagged.h): operations posted
 * with TERN_OP_CQ end here, in the order they complete, with the user's
 * context.
 *
 * A ring of entries.  Room is promised when an operation is posted
 * (tern_cq_reserve: the ring grows then, while the call can still fail
 * with TERN_ERR_NO_MEMORY and post nothing), so a completion, which may
 * happen deep in a netmod's progress or a failing VC, only writes an
 * entry: O(1), no allocation, never lost.  One thread per worker: no
 * atomics.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"

/* The ring's capacity is a power of two (64, doubled): indexes wrap by mask. */
static tern_status_t grow(tern_worker_t *w, uint32_t need)
{
    uint32_t cap = w->cq_cap ? w->cq_cap : 64;
    while (cap < need) {
        if (cap > UINT32_MAX / 2)
            return tern_error(TERN_ERR_NO_RESOURCE, "completion queue: %u entries pending", need);
        cap *= 2;
    }
    tern_cq_entry_t *ring = malloc((size_t)cap * sizeof(*ring));
    if (ring == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "completion queue of %u entries", cap);
    /* unwrap the old ring, oldest first */
    for (uint32_t i = 0; i < w->cq_count; i++)
        ring[i] = w->cq[(w->cq_head + i) & (w->cq_cap - 1)];
    free(w->cq);
    w->cq = ring;
    w->cq_cap = cap;
    w->cq_head = 0;
    return TERN_OK;
}

tern_status_t tern_cq_reserve_grow(tern_worker_t *w)
{
    tern_status_t st = grow(w, w->cq_count + w->cq_reserved + 1);
    if (st == TERN_OK)
        w->cq_reserved++;
    return st;
}

void tern_cq_entry_of(const tern_request_t *r, tern_status_t st, tern_cq_entry_t *e)
{
    e->context = r->context;
    e->status = st;
    e->peer = r->peer;
    e->tag = r->tag;
    e->msg_len = r->msg_len;
    if (r->flags & TERN_REQF_RMA) { /* engine/rma.c: its flags and length */
        e->flags = (uint32_t)r->match_ignore;
        e->tag = e->data = 0;
        e->length = e->msg_len = r->msg_len; /* a flush's: 0 */
        return;
    }
    if (r->kind == TERN_REQ_SEND) {
        e->flags = TERN_CQ_SEND;
        e->data = 0;
        e->length = r->msg_len;
        return;
    }
    e->flags = TERN_CQ_RECV;
    e->data = 0;
    if (r->flags & TERN_REQF_HAS_DATA) {
        e->flags |= TERN_CQ_DATA;
        e->data = r->data;
    }
    /* what landed in the buffer: all of it, or the buffer's size */
    e->length = (r->flags & TERN_REQF_DISCARD) ? 0
                : r->msg_len < r->cur.total    ? r->msg_len
                                               : r->cur.total;
}

/* From tern_request_complete_slow: r (its id and VC-list entry gone) has
 * its final status; write its entry straight into its reserved slot
 * (unless only failures are wanted and it succeeded) and give it back to
 * the pool. */
void tern_cq_complete(tern_request_t *r)
{
    tern_worker_t *w = r->worker;
    if (!(r->flags & TERN_REQF_CQ_ERRORS) || r->status != TERN_OK)
        tern_cq_entry_of(r, r->status, tern_cq_slot(w));
    else
        tern_cq_unreserve(w);
    r->flags &= ~(uint32_t)(TERN_REQF_CQ | TERN_REQF_CQ_ERRORS | TERN_REQF_USER);
    tern_request_release(r);
}

void tern_cq_destroy(tern_worker_t *w)
{
    free(w->cq);
    w->cq = NULL;
    w->cq_cap = w->cq_head = w->cq_count = w->cq_reserved = 0;
}

int tern_cq_read(tern_worker_t *w, tern_cq_entry_t *out, int max)
{
    if (w == NULL || max < 0 || (out == NULL && max > 0))
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_cq_read: NULL worker, or %d entries "
                          "into %p",
                          max, (void *)out);
    if (w->cq_count == 0)
        tern_progress(w);
    int n = max < (int)w->cq_count ? max : (int)w->cq_count;
    for (int i = 0; i < n; i++)
        out[i] = w->cq[(w->cq_head + (uint32_t)i) & (w->cq_cap - 1)];
    w->cq_head = (w->cq_head + (uint32_t)n) & (w->cq_cap - 1);
    w->cq_count -= (uint32_t)n;
    return n;
}

size_t tern_cq_count(const tern_worker_t *w)
{
    return w != NULL ? w->cq_count : 0;
}
