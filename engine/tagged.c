/*
 * include/tern/tagged.h: 64-bit tags with an ignore mask, immediate data,
 * completions into the worker's CQ, injected sends, and peek / claim /
 * discard.  Thin on purpose: the messages are core.h's (same queues, same
 * packets, same ordering), only how a call is completed differs.
 *
 * A pending operation of TERN_OP_CQ is an engine request that nobody
 * reaps: flagged TERN_REQF_CQ (not USER), its completion writes its entry
 * into the ring slot reserved when it was posted, and gives it back to the
 * pool (engine/cq.c).  An injected send without TERN_OP_CQ is an internal
 * request, released when it completes.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "engine/match.h"
#include "engine/netmod.h"

#define SEND_FLAGS (TERN_OP_DATA | TERN_OP_CQ | TERN_OP_INJECT | TERN_OP_SYNC | TERN_OP_CQ_ERRORS)
#define RECV_FLAGS (TERN_OP_CQ | TERN_OP_CQ_ERRORS)

/* Where a dropped message goes: nowhere (TERN_REQF_DISCARD) */
static const struct iovec no_buffer = {.iov_base = NULL, .iov_len = 0};

static tern_status_t __attribute__((noinline, cold))
bad_op_flags(uint32_t f, uint32_t allowed, const char *what)
{
    if (f & ~allowed)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "%s: op flags %#x not allowed here (this call "
                          "takes %#x)",
                          what, f & ~allowed, allowed);
    return tern_error(TERN_ERR_INVALID_PARAM, "%s: TERN_OP_CQ_ERRORS without TERN_OP_CQ", what);
}

static inline tern_status_t op_flags(const tern_op_t *op, uint32_t allowed, const char *what,
                                     uint32_t *f)
{
    *f = op != NULL ? op->flags : 0;
    if (TERN_UNLIKELY((*f & ~allowed) ||
                      (*f & (TERN_OP_CQ_ERRORS | TERN_OP_CQ)) == TERN_OP_CQ_ERRORS))
        return bad_op_flags(*f, allowed, what);
    return TERN_OK;
}

/* A buffer the request owns holding all len bytes of the iovec: one block,
 * its iovec first (kept in iov_copy, freed with the request). */
static struct iovec *copy_block(const struct iovec *iov, int iovcnt, size_t len)
{
    struct iovec *b = malloc(sizeof(*b) + (len ? len : 1));
    if (b == NULL) {
        tern_error(TERN_ERR_NO_MEMORY, "injected send: a copy of %zu bytes", len);
        return NULL;
    }
    b->iov_base = b + 1;
    b->iov_len = len;
    tern_cursor_t c;
    tern_cursor_init(&c, iov, iovcnt);
    tern_cursor_pack(&c, b->iov_base, len);
    return b;
}

/* An injected eager send that could not all go out within the call: the
 * bytes still to send move into a copy, so the caller's buffer is free.
 * What the netmod took already it has copied (cells, frames, bounce or
 * inline segments, the socket): only the cursor refers to the caller. */
static tern_status_t inject_detach(tern_request_t *r)
{
    struct iovec *b = copy_block(r->cur.iov, r->cur.iovcnt, r->cur.total);
    if (b == NULL)
        return TERN_ERR_NO_MEMORY;
    size_t pos = r->cur.pos;
    free(r->iov_copy);
    r->iov_copy = b;
    tern_cursor_init(&r->cur, b, 1);
    tern_cursor_advance(&r->cur, pos);
    return TERN_OK;
}

static tern_status_t tsend(tern_worker_t *w, const struct iovec *iov, int iovcnt, bool contig,
                           size_t len, int dest, uint64_t tag, uint16_t space, const tern_op_t *op,
                           tern_request_t **req)
{
    uint32_t f = op != NULL ? op->flags : 0;
    if (req != NULL)
        *req = NULL;
    tern_status_t st;
    tern_vc_t *vc = tern_vc_of(w, dest);
    if (TERN_UNLIKELY(vc == NULL || vc->state != TERN_VC_ACTIVE))
        return tern_send_check_dest(w, dest); /* says why */
    bool sync = (f & TERN_OP_SYNC) != 0;
    uint8_t pflags = (f & TERN_OP_DATA) ? TERN_PKT_F_DATA : 0;
    uint64_t data = (f & TERN_OP_DATA) ? op->data : 0;
    if ((f & TERN_OP_CQ) && (st = tern_cq_reserve(w)) != TERN_OK)
        return st;

    /* An injected rendezvous (large, or synchronous) sends from a copy from
     * the start: its key or segments name the copy, never the caller. */
    struct iovec *block = NULL;
    if ((f & TERN_OP_INJECT) && (sync || len > vc->eager_limit)) {
        if ((block = copy_block(iov, iovcnt, len)) == NULL) {
            st = TERN_ERR_NO_MEMORY;
            goto fail;
        }
        iov = block;
        iovcnt = 1;
        contig = true;
    }

    tern_request_t *r = NULL;
    if (contig && !sync && len <= vc->eager_limit) {
        /* eager and contiguous: straight to the netmod, as tern_isend */
        tern_pkt_hdr_t h = {.type = TERN_PKT_EAGER,
                            .flags = pflags,
                            .space = space,
                            .tag = tag,
                            .len = len,
                            .rreq = data};
        st = vc->nm->core.istart_contig_msg(vc, &h, sizeof(h), iov[0].iov_base, len, &r);
        if (st >= 0 && r != NULL) {
            r->peer = dest;
            r->tag = tag;
            r->msg_len = len;
            r->flags |= TERN_REQF_USER;
            st = TERN_INPROGRESS;
        }
    } else {
        st = tern_send_post(w, iov, iovcnt, contig, len, dest, tag, space, sync, pflags, data, &r);
    }
    if (st < 0)
        goto fail;
    if (st == TERN_OK || r == NULL) { /* out at once */
        free(block);
        if (f & TERN_OP_CQ) {
            if (f & TERN_OP_CQ_ERRORS) {
                tern_cq_unreserve(w);
            } else {
                tern_cq_entry_t e = {.context = op->context,
                                     .flags = TERN_CQ_SEND,
                                     .status = TERN_OK,
                                     .peer = dest,
                                     .tag = tag,
                                     .length = len,
                                     .msg_len = len};
                tern_cq_put(w, &e);
            }
        }
        return TERN_OK;
    }
    if (block != NULL) {
        r->iov_copy = block; /* the cursor points into it: freed with r */
    } else if ((f & TERN_OP_INJECT) && inject_detach(r) != TERN_OK) {
        /* no memory for a copy: the caller's buffer must stay ours until
         * the bytes are out, so push them out now (an eager send needs no
         * action of the receiver to leave) */
        while (!(r->flags & TERN_REQF_COMPLETE))
            tern_progress(w);
    }
    /* From here r is no longer the caller's to reap: a CQ operation's
     * completion writes its entry and releases it, an injected send's only
     * releases it.  Nothing completes between these lines: one thread. */
    if (f & TERN_OP_CQ) {
        r->context = op->context;
        r->flags |= TERN_REQF_CQ | ((f & TERN_OP_CQ_ERRORS) ? TERN_REQF_CQ_ERRORS : 0);
        r->flags &= ~(uint32_t)TERN_REQF_USER;
        if (r->flags & TERN_REQF_COMPLETE) /* pushed out just above */
            tern_request_complete_slow(r);
        else if (req != NULL)
            *req = r;
        return TERN_OK;
    }
    if (f & TERN_OP_INJECT) {
        r->flags &= ~(uint32_t)TERN_REQF_USER;
        if (r->flags & TERN_REQF_COMPLETE)
            tern_request_release(r);
        return TERN_OK;
    }
    *req = r;
    return TERN_INPROGRESS;

fail:
    free(block);
    if (f & TERN_OP_CQ)
        tern_cq_unreserve(w);
    return st;
}

static inline tern_status_t send_args(tern_worker_t *w, const tern_op_t *op, tern_request_t **req)
{
    uint32_t f;
    if (TERN_UNLIKELY(w == NULL))
        return tern_error(TERN_ERR_INVALID_PARAM, "tagged send: worker is NULL");
    tern_status_t st = op_flags(op, SEND_FLAGS, "tagged send", &f);
    if (TERN_UNLIKELY(st == TERN_OK && req == NULL && !(f & (TERN_OP_CQ | TERN_OP_INJECT))))
        st = tern_error(TERN_ERR_INVALID_PARAM,
                        "tagged send: request pointer is NULL (only a "
                        "TERN_OP_CQ or TERN_OP_INJECT send may go without one)");
    return st;
}

tern_status_t tern_tsend(tern_worker_t *w, const void *buf, size_t len, int dest, uint64_t tag,
                         uint16_t space, const tern_op_t *op, tern_request_t **req)
{
    tern_status_t st = send_args(w, op, req);
    if (st != TERN_OK)
        return st;
    if (buf == NULL && len > 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "send of %zu bytes from a NULL buffer", len);
    if ((st = tern_len_check(len, "send")) != TERN_OK)
        return st;
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    return tsend(w, &iov, 1, true, len, dest, tag, space, op, req);
}

tern_status_t tern_tsendv(tern_worker_t *w, const struct iovec *iov, int iovcnt, int dest,
                          uint64_t tag, uint16_t space, const tern_op_t *op, tern_request_t **req)
{
    tern_status_t st = send_args(w, op, req);
    if (st != TERN_OK)
        return st;
    size_t len;
    if ((st = tern_iov_check(iov, iovcnt, "send", &len)) != TERN_OK)
        return st;
    return tsend(w, iov, iovcnt, false, len, dest, tag, space, op, req);
}

/* ---- receives ------------------------------------------------------------ */

/* A receive (or a matched-probe receive) just posted or bound with st and
 * r: turn it into a CQ operation when asked.  done is its entry when it
 * completed within the call. */
static tern_status_t recv_finish(tern_worker_t *w, uint32_t f, const tern_op_t *op,
                                 tern_status_t st, tern_request_t *r, tern_cq_entry_t *done,
                                 tern_request_t **req)
{
    if (!(f & TERN_OP_CQ)) {
        if (req != NULL)
            *req = r;
        return st;
    }
    if (st != TERN_INPROGRESS) {
        if (done->flags == 0) { /* refused (no memory): nothing posted, no entry */
            tern_cq_unreserve(w);
            return st;
        }
        if ((f & TERN_OP_CQ_ERRORS) && st == TERN_OK) {
            tern_cq_unreserve(w);
        } else {
            done->context = op->context;
            tern_cq_put(w, done);
        }
        return TERN_OK;
    }
    r->context = op->context;
    r->flags |= TERN_REQF_CQ | ((f & TERN_OP_CQ_ERRORS) ? TERN_REQF_CQ_ERRORS : 0);
    r->flags &= ~(uint32_t)TERN_REQF_USER;
    if (r->flags & TERN_REQF_COMPLETE) /* failed within the call (a bad LMT start) */
        tern_request_complete_slow(r);
    else if (req != NULL)
        *req = r;
    return TERN_OK;
}

static inline tern_status_t recv_args(tern_worker_t *w, int src, const tern_op_t *op,
                                      tern_request_t **req, uint32_t *f)
{
    if (TERN_UNLIKELY(w == NULL))
        return tern_error(TERN_ERR_INVALID_PARAM, "tagged receive: worker is NULL");
    tern_status_t st = op_flags(op, RECV_FLAGS, "tagged receive", f);
    if (TERN_UNLIKELY(st == TERN_OK && req == NULL && !(*f & TERN_OP_CQ)))
        st = tern_error(TERN_ERR_INVALID_PARAM, "tagged receive: request pointer is NULL (only "
                                                "a TERN_OP_CQ receive may go without one)");
    if (st != TERN_OK)
        return st;
    if (src != TERN_ANY_SOURCE) {
        const tern_vc_t *vc = tern_vc_of(w, src);
        if (TERN_UNLIKELY(vc == NULL || vc->state == TERN_VC_FAILED))
            return tern_recv_check_src(w, src); /* says why */
    }
    return (*f & TERN_OP_CQ) ? tern_cq_reserve(w) : TERN_OK;
}

static tern_status_t trecv(tern_worker_t *w, const struct iovec *iov, int iovcnt, bool contig,
                           int src, uint64_t want, uint64_t ignore, uint16_t space, uint32_t f,
                           const tern_op_t *op, tern_request_t **req)
{
    if (TERN_LIKELY(contig && tern_list_empty(&w->unexpected))) {
        /* nothing can match yet: post at once, as tern_irecv does */
        uint32_t flags = !(f & TERN_OP_CQ)         ? TERN_REQF_USER
                         : (f & TERN_OP_CQ_ERRORS) ? TERN_REQF_CQ | TERN_REQF_CQ_ERRORS
                                                   : TERN_REQF_CQ;
        tern_request_t *r =
            tern_recv_post_now(w, iov[0].iov_base, iov[0].iov_len, src, want, ignore, space, flags);
        if (r == NULL) {
            if (f & TERN_OP_CQ)
                tern_cq_unreserve(w);
            return TERN_ERR_NO_MEMORY;
        }
        if (f & TERN_OP_CQ)
            r->context = op->context;
        if (req != NULL)
            *req = r;
        return (f & TERN_OP_CQ) ? TERN_OK : TERN_INPROGRESS;
    }
    tern_cq_entry_t done = {.flags = 0};
    tern_request_t *r = NULL;
    tern_status_t st = tern_recv_post(w, iov, iovcnt, contig, src, want, ignore, space, NULL,
                                      (f & TERN_OP_CQ) ? &done : NULL, &r);
    return recv_finish(w, f, op, st, r, &done, req);
}

tern_status_t tern_trecv(tern_worker_t *w, void *buf, size_t len, int src, uint64_t want,
                         uint64_t ignore, uint16_t space, const tern_op_t *op, tern_request_t **req)
{
    uint32_t f = 0;
    if (TERN_UNLIKELY(buf == NULL && len > 0))
        return tern_error(TERN_ERR_INVALID_PARAM, "receive of %zu bytes into a NULL buffer", len);
    tern_status_t st = tern_len_check(len, "receive");
    if (st == TERN_OK)
        st = recv_args(w, src, op, req, &f); /* last: it reserves the CQ slot */
    if (st != TERN_OK)
        return st;
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    return trecv(w, &iov, 1, true, src, want, ignore, space, f, op, req);
}

tern_status_t tern_trecvv(tern_worker_t *w, const struct iovec *iov, int iovcnt, int src,
                          uint64_t want, uint64_t ignore, uint16_t space, const tern_op_t *op,
                          tern_request_t **req)
{
    uint32_t f = 0;
    size_t total;
    tern_status_t st = tern_iov_check(iov, iovcnt, "receive", &total);
    if (st == TERN_OK)
        st = recv_args(w, src, op, req, &f);
    if (st != TERN_OK)
        return st;
    return trecv(w, iov, iovcnt, false, src, want, ignore, space, f, op, req);
}

/* ---- probes ------------------------------------------------------------- */

tern_status_t tern_tprobe(tern_worker_t *w, int src, uint64_t want, uint64_t ignore, uint16_t space,
                          unsigned flags, int *flag, tern_message_t **msg, tern_cq_entry_t *entry)
{
    if (w == NULL || flag == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_tprobe: NULL worker or flag");
    if (flags & ~(TERN_PROBE_CLAIM | TERN_PROBE_DISCARD) ||
        flags == (TERN_PROBE_CLAIM | TERN_PROBE_DISCARD))
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_tprobe: flags %#x (CLAIM or DISCARD, "
                          "not both)",
                          flags);
    if ((flags & TERN_PROBE_CLAIM) && msg == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_tprobe: CLAIM without a message pointer");
    tern_status_t st = tern_recv_check_src(w, src);
    if (st != TERN_OK)
        return st;
    if (flags & TERN_PROBE_CLAIM)
        *msg = NULL;
    tern_progress(w);
    tern_request_t *u = flags ? tern_match_unexpected(w, src, want, ignore, space)
                              : tern_peek_unexpected(w, src, want, ignore, space);
    *flag = u != NULL;
    if (u == NULL)
        return TERN_OK;
    if (entry != NULL) {
        tern_cq_entry_of(u, TERN_OK, entry);
        entry->length = 0;
        entry->context = NULL;
    }
    if (flags == 0) /* a peek: it stays for a receive */
        return TERN_OK;
    u->flags |= TERN_REQF_MPROBED; /* held as tern_improbe holds it */
    if (flags & TERN_PROBE_CLAIM) {
        *msg = (tern_message_t *)u;
        return TERN_OK;
    }
    {
        tern_request_t *r = NULL;
        u->flags |= TERN_REQF_DISCARD;
        st = tern_mrecv(w, &no_buffer, 1, true, (tern_message_t *)u, NULL, NULL, &r);
        if (st == TERN_INPROGRESS) /* the rest arrives and is dropped: internal */
            r->flags &= ~(uint32_t)TERN_REQF_USER;
        return st == TERN_INPROGRESS || st == TERN_ERR_TRUNCATED ? TERN_OK : st;
    }
}

static tern_status_t tmrecv(tern_worker_t *w, const struct iovec *iov, int iovcnt, bool contig,
                            tern_message_t *msg, const tern_op_t *op, tern_request_t **req)
{
    uint32_t f;
    if (w == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_tmrecv: worker is NULL");
    tern_status_t st = op_flags(op, RECV_FLAGS | TERN_OP_DISCARD, "tern_tmrecv", &f);
    if (st == TERN_OK && req == NULL && !(f & TERN_OP_CQ))
        st = tern_error(TERN_ERR_INVALID_PARAM, "tern_tmrecv: request pointer is NULL");
    if (st != TERN_OK)
        return st;
    tern_request_t *u = (tern_request_t *)msg;
    if (u == NULL || u->worker != w || u->kind != TERN_REQ_RECV || !(u->flags & TERN_REQF_MPROBED))
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_tmrecv: not a message of this worker's "
                                                  "claims (or received already)");
    if ((f & TERN_OP_CQ) && (st = tern_cq_reserve(w)) != TERN_OK)
        return st;
    if (f & TERN_OP_DISCARD) {
        u->flags |= TERN_REQF_DISCARD;
        iov = &no_buffer;
        iovcnt = 1;
        contig = true;
    }
    tern_cq_entry_t done = {.flags = 0};
    tern_request_t *r = NULL;
    st = tern_mrecv(w, iov, iovcnt, contig, msg, NULL, (f & TERN_OP_CQ) ? &done : NULL, &r);
    if ((f & TERN_OP_DISCARD) && st == TERN_ERR_TRUNCATED) {
        st = TERN_OK; /* dropping it is what was asked */
        done.status = TERN_OK;
    }
    if ((f & TERN_OP_DISCARD) && st == TERN_INPROGRESS && !(f & TERN_OP_CQ)) {
        /* nobody waits for the rest of a dropped message */
        r->flags &= ~(uint32_t)TERN_REQF_USER;
        if (req != NULL)
            *req = NULL;
        return TERN_OK;
    }
    return recv_finish(w, f, op, st, r, &done, req);
}

tern_status_t tern_tmrecv(tern_worker_t *w, void *buf, size_t len, tern_message_t *msg,
                          const tern_op_t *op, tern_request_t **req)
{
    if (buf == NULL && len > 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "receive of %zu bytes into a NULL buffer", len);
    tern_status_t st = tern_len_check(len, "receive");
    if (st != TERN_OK)
        return st;
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    return tmrecv(w, &iov, 1, true, msg, op, req);
}

tern_status_t tern_tmrecvv(tern_worker_t *w, const struct iovec *iov, int iovcnt,
                           tern_message_t *msg, const tern_op_t *op, tern_request_t **req)
{
    size_t total;
    tern_status_t st = tern_iov_check(iov, iovcnt, "receive", &total);
    return st != TERN_OK ? st : tmrecv(w, iov, iovcnt, false, msg, op, req);
}
