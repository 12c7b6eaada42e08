/*
 * Request pool and rendezvous id table.  Requests come from per-worker slabs
 * and go back to a free list: no malloc per message once warm.  A request a
 * peer must name (rendezvous) gets an id = index | generation << 32; lookups
 * of ids from the wire are validated, so a stale or forged id is an error,
 * never a wild pointer.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "engine/match.h"
#include "engine/rma.h"

#define SLAB_REQS 64

struct tern_req_slab {
    tern_req_slab_t *next;
    tern_request_t reqs[SLAB_REQS];
};

static bool grow_pool(tern_worker_t *w)
{
    tern_req_slab_t *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return false;
    s->next = w->slabs;
    w->slabs = s;
    for (int i = 0; i < SLAB_REQS; i++)
        tern_list_push_tail(&w->free_reqs, &s->reqs[i].link);
    return true;
}

tern_request_t *tern_request_alloc_slow(tern_worker_t *w, int kind)
{
    if (tern_list_empty(&w->free_reqs) && !grow_pool(w)) {
        tern_error(TERN_ERR_NO_MEMORY, "request pool: cannot allocate %zu bytes",
                   sizeof(tern_req_slab_t));
        return NULL;
    }
    return tern_request_alloc(w, kind);
}

void tern_request_release_slow(tern_request_t *r)
{
    if (r->flags & TERN_REQF_HAS_ID)
        tern_request_unregister(r);
    if (r->flags & TERN_REQF_VCLIST)
        tern_list_del(&r->vc_link);
    free(r->tmpbuf);
    free(r->iov_copy);
    r->tmpbuf = NULL;
    r->iov_copy = NULL;
    r->flags = 0;
    tern_list_push_tail(&r->worker->free_reqs, &r->link);
}

/* tern_request_complete's out-of-line part (engine_internal.h). */
void tern_request_complete_slow(tern_request_t *r)
{
    if (r->flags & TERN_REQF_HAS_ID)
        tern_request_unregister(r);
    if (r->flags & TERN_REQF_VCLIST) {
        tern_list_del(&r->vc_link);
        r->flags &= ~(uint32_t)TERN_REQF_VCLIST;
    }
    if (r->flags & TERN_REQF_CQ) { /* its entry goes to the CQ; nobody reaps it */
        tern_cq_complete(r);
        return;
    }
    /* Internal requests (control packets) have nobody to reap them; the
     * one-sided path's count towards their flush first. */
    if (!(r->flags & (TERN_REQF_USER | TERN_REQF_UNEXP | TERN_REQF_MPROBED))) {
        if (r->kind >= TERN_REQ_RMA_PART)
            tern_rma_request_done(r);
        else
            tern_request_release(r);
    }
}

tern_status_t tern_iov_check(const struct iovec *iov, int iovcnt, const char *what, size_t *total)
{
    if (iovcnt < 0 || (iovcnt > 0 && iov == NULL) || iovcnt > TERN_IOV_MAX)
        return tern_error(TERN_ERR_INVALID_PARAM, "%s iovec: %d entries at %p (0..%d entries)",
                          what, iovcnt, (const void *)iov, TERN_IOV_MAX);
    size_t sum = 0; /* never above SSIZE_MAX, so SSIZE_MAX - sum cannot wrap */
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_base == NULL && iov[i].iov_len > 0)
            return tern_error(TERN_ERR_INVALID_PARAM, "%s iovec entry %d: NULL base", what, i);
        if (iov[i].iov_len > (size_t)SSIZE_MAX - sum)
            return tern_error(TERN_ERR_INVALID_PARAM,
                              "%s iovec entry %d: its %zu bytes take the total past SSIZE_MAX "
                              "(%zu bytes before it)",
                              what, i, iov[i].iov_len, sum);
        sum += iov[i].iov_len;
    }
    *total = sum;
    return TERN_OK;
}

tern_status_t tern_len_error(size_t len, const char *what)
{
    return tern_error(TERN_ERR_INVALID_PARAM,
                      "%s of %zu bytes: more than SSIZE_MAX (%zd), the most one message or "
                      "buffer can hold",
                      what, len, (ssize_t)SSIZE_MAX);
}

struct iovec *tern_iov_dup(const struct iovec *iov, int iovcnt)
{
    /* an empty iovec gets a copy too: bind_buffer tells a vector by owned != NULL */
    struct iovec *copy = malloc(sizeof(*iov) * (size_t)(iovcnt ? iovcnt : 1));
    if (copy == NULL) {
        tern_error(TERN_ERR_NO_MEMORY, "copy of a %d-entry iovec", iovcnt);
        return NULL;
    }
    if (iovcnt > 0) /* iov may be NULL when empty: memcpy must not see it */
        memcpy(copy, iov, sizeof(*iov) * (size_t)iovcnt);
    return copy;
}

void tern_request_bind_buffer(tern_request_t *r, const struct iovec *iov, int iovcnt,
                              struct iovec *owned)
{
    if (owned != NULL) {
        r->iov_copy = owned;
        tern_cursor_init(&r->cur, owned, iovcnt);
    } else {
        r->iov1 = iov[0];
        tern_cursor_init(&r->cur, &r->iov1, 1);
    }
}

uint64_t tern_request_register(tern_request_t *r)
{
    tern_worker_t *w = r->worker;
    if (w->id_free_head == UINT32_MAX) {
        uint32_t ncap = w->id_cap ? w->id_cap * 2 : 64;
        tern_request_t **t = realloc(w->id_table, ncap * sizeof(*t));
        uint32_t *nf = realloc(w->id_next_free, ncap * sizeof(*nf));
        if (t == NULL || nf == NULL) {
            /* keep whichever realloc succeeded: both stay valid */
            if (t)
                w->id_table = t;
            if (nf)
                w->id_next_free = nf;
            return 0;
        }
        w->id_table = t;
        w->id_next_free = nf;
        for (uint32_t i = w->id_cap; i < ncap; i++) {
            t[i] = NULL;
            nf[i] = i + 1 < ncap ? i + 1 : UINT32_MAX;
        }
        w->id_free_head = w->id_cap;
        w->id_cap = ncap;
    }
    uint32_t idx = w->id_free_head;
    w->id_free_head = w->id_next_free[idx];
    w->id_table[idx] = r;
    r->id_index = idx;
    r->id_gen = ++w->id_gen ? w->id_gen : ++w->id_gen; /* never 0: id 0 means none */
    r->flags |= TERN_REQF_HAS_ID;
    return tern_request_id(r);
}

void tern_request_unregister(tern_request_t *r)
{
    tern_worker_t *w = r->worker;
    w->id_table[r->id_index] = NULL;
    w->id_next_free[r->id_index] = w->id_free_head;
    w->id_free_head = r->id_index;
    r->flags &= ~(uint32_t)TERN_REQF_HAS_ID;
}

tern_request_t *tern_request_lookup(tern_worker_t *w, uint64_t id)
{
    uint32_t idx = (uint32_t)id, gen = (uint32_t)(id >> 32);
    if (idx >= w->id_cap || gen == 0)
        return NULL;
    tern_request_t *r = w->id_table[idx];
    return (r != NULL && r->id_gen == gen) ? r : NULL;
}

void tern_worker_pool_destroy(tern_worker_t *w)
{
    tern_req_slab_t *s = w->slabs;
    while (s) {
        tern_req_slab_t *n = s->next;
        for (int i = 0; i < SLAB_REQS; i++) {
            free(s->reqs[i].tmpbuf);
            free(s->reqs[i].iov_copy);
        }
        free(s);
        s = n;
    }
    w->slabs = NULL;
    tern_cq_destroy(w);
    free(w->id_table);
    free(w->id_next_free);
    w->id_table = NULL;
    w->id_next_free = NULL;
}
