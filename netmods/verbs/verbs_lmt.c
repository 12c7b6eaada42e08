/*
 * verbs netmod: zero-copy rendezvous (LMT).
 *
 *   get   RTS carries the sender's key {addr, len, rkey} of a window of its
 *         buffer; the receiver RDMA-reads it into its own buffer, then sends
 *         DONE to the sender (or NEXT for the next window).
 *   put   CTS carries the receiver's key; the sender RDMA-writes, then
 *         sends DONE to the receiver (or NEXT).  RC delivers the DONE after
 *         the writes it follows, so the receiver sees the data.
 *
 * Windows (TERN_VERBS_REG_WINDOW, or when registering the whole buffer
 * fails): the exposed side registers one window at a time; when the active
 * side has moved a window it sends NEXT {offset}, the exposed side
 * re-registers and answers with a COOKIE carrying the new key, the "cookie
 * change mid-transfer" of the LMT interface.  Registrations go through the
 * engine's cache (tern_mem_get), so a buffer used again is not registered
 * again.
 *
 * What cannot move zero-copy falls back to a copy through the stream: a
 * non-contiguous send buffer takes the engine's null mode at initiate; a
 * non-contiguous receive buffer, or one that cannot be registered, answers
 * with a CTS without a key, upon which the sender streams a DATA packet.
 * A registration failing mid-transfer (either side, any window) switches
 * the transfer to the stream the same way: a COPY cookie tells the other
 * side, both drop their windows, and the sender streams the whole message
 * as DATA.  The RDMA never moved the receive request's cursor, so the DATA
 * simply writes the buffer from its start: nothing is lost or doubled.
 *
 * The request's scratch (lmt_req_t) holds the transfer while it is in the
 * netmod's hands.
 */
#include <stdio.h>
#include <string.h>

#include "engine/rcache.h"
#include "netmods/verbs/verbs_internal.h"

/* verbs' scratch in a request (TERN_REQ_NM) */
typedef struct lmt_req {
    uint64_t state;                     /* enum lmt_state */
    tern_netmod_inst_t *inst;           /* tern_mem_t: the registration this side holds now */
    struct tern_rcache_region *region;
    uint64_t woff;                      /* window: offset in the message */
    uint64_t wlen;                      /*         bytes */
    uint64_t raddr;                     /* active side: remote address of the window */
    uint64_t rkey;                      /*              its rkey */
    uint64_t posted;                    /* active side: bytes of the window posted */
    uint64_t total;                     /* bytes the transfer moves: min(message, receive buffer) */
    uint64_t peer;                      /* the other side's request id for COOKIE packets */
} lmt_req_t;
#define LMT(r) TERN_REQ_NM(r, lmt_req_t)

enum lmt_state {
    S_NONE = 0,
    S_EXPOSED,   /* a window of ours is registered and its key sent */
    S_WAIT_KEY,  /* active side, between windows */
    S_MOVING,    /* active side: RDMA work queued or in flight */
};

static inline bool contiguous(const tern_request_t *r) { return r->cur.iovcnt == 1; }
static inline uint8_t *base_of(const tern_request_t *r) { return r->cur.iov[0].iov_base; }

static uint64_t window_len(const tern_verbs_t *v, uint64_t left)
{
    uint64_t w = v->cfg->reg_window;
    return w != 0 && w < left ? w : left;
}

static void mem_put(tern_request_t *r)
{
    if (LMT(r)->region == NULL)
        return;
    tern_mem_t m = {LMT(r)->inst, LMT(r)->region};
    tern_mem_put(&m);
    LMT(r)->region = NULL;
}

/* Register [off, off + len) of r's buffer; on failure try one window of
 * 16 MiB before giving up (a memlock limit, an HCA out of MTT entries). */
static tern_status_t mem_get(tern_vc_t *vc, tern_request_t *r, uint64_t off, uint64_t *len)
{
    tern_mem_t m;
    tern_status_t st = tern_mem_get(vc, base_of(r) + off, *len, &m);
    if (st != TERN_OK && *len > (16u << 20)) {
        *len = 16u << 20;
        st = tern_mem_get(vc, base_of(r) + off, *len, &m);
    }
    if (st != TERN_OK)
        return st;
    LMT(r)->inst = m.inst;
    LMT(r)->region = m.region;
    return TERN_OK;
}

static struct ibv_mr *mr_of(const tern_request_t *r)
{
    return LMT(r)->region->handle;
}

/* Expose the window at off of r (the passive side) as a KEY cookie. */
static tern_status_t expose(tern_vc_t *vc, tern_request_t *r, uint64_t off, uint64_t total,
                            tern_verbs_cookie_t *c)
{
    uint64_t len = window_len(tern_verbs_state(vc), total - off);
    tern_status_t st = mem_get(vc, r, off, &len);
    if (st != TERN_OK)
        return st;
    LMT(r)->state = S_EXPOSED;
    LMT(r)->woff = off;
    LMT(r)->wlen = len;
    LMT(r)->total = total;
    *c = (tern_verbs_cookie_t){.kind = TERN_VERBS_COOKIE_KEY, .offset = off,
                               .addr = (uint64_t)(uintptr_t)(base_of(r) + off), .len = len,
                               .total = total, .rkey = mr_of(r)->rkey};
    return TERN_OK;
}

/* The active side takes a KEY window: register its own part and queue the
 * RDMA work. */
static tern_status_t take_window(tern_vc_t *vc, tern_request_t *r, const tern_verbs_cookie_t *c)
{
    uint64_t len = c->len;
    if (c->offset + len > LMT(r)->total)
        len = LMT(r)->total - c->offset; /* truncated receive: read no more than fits */
    tern_status_t st = mem_get(vc, r, c->offset, &len);
    if (st != TERN_OK)
        return st;
    LMT(r)->state = S_MOVING;
    LMT(r)->woff = c->offset;
    LMT(r)->wlen = len;
    LMT(r)->raddr = c->addr;
    LMT(r)->rkey = c->rkey;
    LMT(r)->posted = 0;
    tern_verbs_vc_t *tv = tern_verbs_vc(vc);
    tern_list_push_tail(&tv->rdmaq, &r->link);
    tern_verbs_mark_pending(tv);
    return TERN_OK;
}

static tern_status_t parse(tern_vc_t *vc, const void *cookie, size_t len, tern_verbs_cookie_t *c)
{
    if (len != sizeof(*c))
        return tern_error(TERN_ERR_MALFORMED, "verbs LMT cookie from rank %d: %zu bytes",
                          vc->rank, len);
    memcpy(c, cookie, sizeof(*c));
    if (c->kind < TERN_VERBS_COOKIE_KEY || c->kind > TERN_VERBS_COOKIE_COPY ||
        (c->kind == TERN_VERBS_COOKIE_KEY &&
         (c->len == 0 || c->offset >= c->total || c->len > c->total - c->offset ||
          c->addr + c->len < c->addr)))
        return tern_error(TERN_ERR_MALFORMED, "verbs LMT cookie from rank %d: kind %u, %llu "
                          "bytes at offset %llu of %llu", vc->rank, c->kind,
                          (unsigned long long)c->len, (unsigned long long)c->offset,
                          (unsigned long long)c->total);
    return TERN_OK;
}

static tern_status_t send_cookie(tern_vc_t *vc, tern_request_t *r, const tern_verbs_cookie_t *c)
{
    bool to_sender = r->kind == TERN_REQ_RECV;
    tern_pkt_hdr_t h = {.type = TERN_PKT_COOKIE, .cookie_len = sizeof(*c)};
    if (to_sender)
        h.sreq = r->remote_id;
    else
        h.rreq = LMT(r)->peer;
    return tern_send_ctrl(vc, &h, c, sizeof(*c));
}

/* The sender streams the whole message as one DATA packet to the receive
 * request rreq_id (the LMT state in nm is overwritten by the stream's). */
static tern_status_t stream_data(tern_vc_t *vc, tern_request_t *sreq, uint64_t rreq_id)
{
    mem_put(sreq);
    LMT(sreq)->state = S_NONE;
    sreq->lmt_mode = TERN_LMT_NULL; /* no LMT packet may name it any more */
    sreq->remote_id = rreq_id;
    tern_pkt_hdr_t d = {.type = TERN_PKT_DATA, .len = sreq->msg_len, .rreq = rreq_id};
    return tern_send_noncontig(vc, sreq, &d, sizeof(d));
}

/* A registration failed mid-transfer on our side: both sides drop their
 * windows and the message goes through the stream. */
static tern_status_t switch_to_copy(tern_vc_t *vc, tern_request_t *r)
{
    tern_debug("verbs: %s; rank %d: the rest of the rendezvous goes through the stream",
               tern_last_error(), vc->rank);
    mem_put(r);
    LMT(r)->state = S_NONE;
    if (r->kind == TERN_REQ_RECV) { /* ask the sender to stream; DATA fills us */
        tern_verbs_cookie_t c = {.kind = TERN_VERBS_COOKIE_COPY, .req_id = tern_request_id(r)};
        return send_cookie(vc, r, &c);
    }
    uint64_t rid = r->remote_id != 0 ? r->remote_id : LMT(r)->peer;
    tern_verbs_cookie_t c = {.kind = TERN_VERBS_COOKIE_COPY};
    LMT(r)->peer = rid;
    tern_status_t st = send_cookie(vc, r, &c);
    return st != TERN_OK ? st : stream_data(vc, r, rid);
}

unsigned tern_verbs_lmt_modes(void *state)
{
    (void)state;
    return (1u << TERN_LMT_GET) | (1u << TERN_LMT_PUT);
}

int tern_verbs_lmt_choose(tern_vc_t *vc, size_t len)
{
    return len >= tern_verbs_state(vc)->cfg->put_min ? TERN_LMT_PUT : TERN_LMT_GET;
}

tern_status_t tern_verbs_lmt_initiate(tern_vc_t *vc, tern_request_t *sreq, int *mode,
                                      void *cookie, size_t *cookie_len)
{
    LMT(sreq)->state = S_NONE;
    LMT(sreq)->region = NULL;
    if (!contiguous(sreq) || (*mode != TERN_LMT_GET && *mode != TERN_LMT_PUT)) {
        *mode = TERN_LMT_NULL; /* the engine streams it as DATA after the CTS */
        *cookie_len = 0;
        return TERN_OK;
    }
    if (*mode == TERN_LMT_PUT) {
        *cookie_len = 0;
        return TERN_OK;
    }
    tern_verbs_cookie_t c;
    if (expose(vc, sreq, 0, sreq->msg_len, &c) != TERN_OK) {
        tern_debug("verbs: %s; rank %d gets the message through the stream", tern_last_error(),
                   vc->rank);
        *mode = TERN_LMT_NULL;
        *cookie_len = 0;
        return TERN_OK;
    }
    memcpy(cookie, &c, sizeof(c));
    *cookie_len = sizeof(c);
    return TERN_OK;
}

/* Receiver: CTS without a key: the sender streams the message. */
static tern_status_t ask_for_copy(tern_vc_t *vc, tern_request_t *rreq)
{
    LMT(rreq)->state = S_NONE;
    LMT(rreq)->region = NULL;
    return tern_lmt_send_cts(vc, rreq, NULL, 0);
}

tern_status_t tern_verbs_lmt_start_recv(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                        size_t cookie_len)
{
    uint64_t total = rreq->msg_len < rreq->cur.total ? rreq->msg_len : rreq->cur.total;
    LMT(rreq)->region = NULL;
    if (!contiguous(rreq) || total == 0)
        return ask_for_copy(vc, rreq);
    if (rreq->lmt_mode == TERN_LMT_PUT) {
        tern_verbs_cookie_t c;
        uint64_t id = tern_lmt_track(vc, rreq);
        if (id == 0)
            return TERN_ERR_NO_MEMORY;
        if (expose(vc, rreq, 0, total, &c) != TERN_OK)
            return ask_for_copy(vc, rreq);
        return tern_lmt_send_cts(vc, rreq, &c, sizeof(c));
    }
    /* get: read the sender's window */
    tern_verbs_cookie_t c;
    tern_status_t st = parse(vc, cookie, cookie_len, &c);
    if (st != TERN_OK)
        return st;
    if (c.kind != TERN_VERBS_COOKIE_KEY || c.offset != 0 || c.total != rreq->msg_len)
        return tern_error(TERN_ERR_MALFORMED, "verbs RTS from rank %d: not a first window of "
                          "the message", vc->rank);
    if (tern_lmt_track(vc, rreq) == 0)
        return TERN_ERR_NO_MEMORY;
    LMT(rreq)->total = total;
    if (take_window(vc, rreq, &c) != TERN_OK)
        return switch_to_copy(vc, rreq);
    return TERN_OK;
}

tern_status_t tern_verbs_lmt_start_send(tern_vc_t *vc, tern_request_t *sreq, const void *cookie,
                                        size_t cookie_len)
{
    if (cookie_len == 0) /* the receiver wants the data through the stream */
        return stream_data(vc, sreq, sreq->remote_id);
    tern_verbs_cookie_t c;
    tern_status_t st = parse(vc, cookie, cookie_len, &c);
    if (st != TERN_OK)
        return st;
    if (sreq->lmt_mode != TERN_LMT_PUT || c.kind != TERN_VERBS_COOKIE_KEY || c.offset != 0 ||
        c.total > sreq->msg_len)
        return tern_error(TERN_ERR_MALFORMED, "verbs CTS from rank %d: an unexpected key",
                          vc->rank);
    LMT(sreq)->total = c.total;
    LMT(sreq)->peer = sreq->remote_id;
    if (take_window(vc, sreq, &c) != TERN_OK)
        return switch_to_copy(vc, sreq);
    return TERN_OK;
}

tern_status_t tern_verbs_lmt_handle_cookie(tern_vc_t *vc, tern_request_t *r, const void *cookie,
                                           size_t cookie_len)
{
    tern_verbs_cookie_t c;
    tern_status_t st = parse(vc, cookie, cookie_len, &c);
    if (st != TERN_OK)
        return st;
    uint64_t state = LMT(r)->state;
    if (c.kind == TERN_VERBS_COOKIE_COPY) { /* the other side cannot go on zero-copy */
        if (state != S_EXPOSED && state != S_WAIT_KEY)
            return tern_error(TERN_ERR_MALFORMED, "verbs COPY cookie from rank %d while a window "
                              "is moving", vc->rank);
        if (r->kind == TERN_REQ_RECV) { /* DATA follows */
            mem_put(r);
            LMT(r)->state = S_NONE;
            return TERN_OK;
        }
        if (c.req_id == 0 && r->remote_id == 0 && LMT(r)->peer == 0)
            return tern_error(TERN_ERR_MALFORMED, "verbs COPY cookie from rank %d names no "
                              "receive", vc->rank);
        return stream_data(vc, r, c.req_id != 0 ? c.req_id
                                  : r->remote_id != 0 ? r->remote_id : LMT(r)->peer);
    }
    if (c.kind == TERN_VERBS_COOKIE_NEXT) { /* to the exposed side */
        /* the active side may have moved less than our window when it could
         * register only part of its own (mem_get's fallback): we expose
         * again from wherever it stopped inside the window */
        if (state != S_EXPOSED || c.offset <= LMT(r)->woff ||
            c.offset > LMT(r)->woff + LMT(r)->wlen || c.offset >= LMT(r)->total)
            return tern_error(TERN_ERR_MALFORMED, "verbs NEXT cookie from rank %d: offset %llu "
                              "out of turn", vc->rank, (unsigned long long)c.offset);
        if (r->kind == TERN_REQ_SEND)
            LMT(r)->peer = c.req_id;
        mem_put(r);
        tern_verbs_cookie_t key;
        if (expose(vc, r, c.offset, LMT(r)->total, &key) != TERN_OK) {
            LMT(r)->state = S_WAIT_KEY; /* what switch_to_copy expects of us */
            return switch_to_copy(vc, r);
        }
        return send_cookie(vc, r, &key);
    }
    /* KEY: to the active side, between windows */
    if (state != S_WAIT_KEY || c.offset != LMT(r)->woff + LMT(r)->wlen)
        return tern_error(TERN_ERR_MALFORMED, "verbs key cookie from rank %d: offset %llu out of "
                          "turn", vc->rank, (unsigned long long)c.offset);
    if (take_window(vc, r, &c) != TERN_OK)
        return switch_to_copy(vc, r);
    return TERN_OK;
}

/* The exposed side's DONE: its window is no longer needed. */
tern_status_t tern_verbs_lmt_done_send(tern_vc_t *vc, tern_request_t *sreq)
{
    if (LMT(sreq)->state != S_EXPOSED)
        return tern_error(TERN_ERR_MALFORMED, "verbs DONE from rank %d for a send that exposed "
                          "no buffer", vc->rank);
    mem_put(sreq);
    LMT(sreq)->state = S_NONE;
    tern_request_complete(sreq, TERN_OK);
    return TERN_OK;
}

tern_status_t tern_verbs_lmt_done_recv(tern_vc_t *vc, tern_request_t *rreq)
{
    if (LMT(rreq)->state != S_EXPOSED)
        return tern_error(TERN_ERR_MALFORMED, "verbs DONE from rank %d for a receive that "
                          "exposed no buffer", vc->rank);
    mem_put(rreq);
    LMT(rreq)->state = S_NONE;
    tern_recv_data_complete(rreq); /* TRUNCATED when the message was longer */
    return TERN_OK;
}

/* The active side moved a whole window (its last work request completed). */
void tern_verbs_lmt_window_done(tern_verbs_vc_t *tv, tern_request_t *r)
{
    tern_vc_t *vc = tv->vc;
    if (LMT(r)->state != S_MOVING)
        return;
    mem_put(r);
    uint64_t next = LMT(r)->woff + LMT(r)->wlen;
    if (next < LMT(r)->total) {
        LMT(r)->state = S_WAIT_KEY;
        tern_verbs_cookie_t c = {.kind = TERN_VERBS_COOKIE_NEXT, .offset = next,
                                 .req_id = r->kind == TERN_REQ_RECV ? tern_request_id(r) : 0};
        tern_status_t st = send_cookie(vc, r, &c);
        if (st != TERN_OK)
            tern_vc_fail(vc, st, tern_last_error());
        return;
    }
    LMT(r)->state = S_NONE;
    tern_pkt_hdr_t h = {.type = TERN_PKT_DONE};
    if (r->kind == TERN_REQ_RECV)
        h.sreq = r->remote_id; /* get: the reader tells the sender */
    else
        h.rreq = r->remote_id; /* put: the writer tells the receiver */
    tern_status_t st = tern_send_ctrl(vc, &h, NULL, 0);
    if (st != TERN_OK) {
        tern_vc_fail(vc, st, tern_last_error());
        return;
    }
    if (r->kind == TERN_REQ_RECV)
        tern_recv_data_complete(r);
    else
        tern_request_complete(r, TERN_OK);
}

/* Post the queued RDMA work of tv, in chunks, in order. */
unsigned tern_verbs_lmt_progress(tern_verbs_vc_t *tv)
{
    unsigned n = 0;
    uint64_t chunk = tv->v->cfg->rdma_chunk;
    while (!tern_list_empty(&tv->rdmaq)) {
        tern_request_t *r = TERN_CONTAINER_OF(tv->rdmaq.next, tern_request_t, link);
        bool read = r->kind == TERN_REQ_RECV;
        uint64_t wlen = LMT(r)->wlen;
        uint32_t lkey = mr_of(r)->lkey;
        while (LMT(r)->posted < wlen) {
            uint64_t done = LMT(r)->posted;
            uint64_t len = wlen - done < chunk ? wlen - done : chunk;
            bool last = done + len == wlen;
            struct ibv_sge sge = {(uintptr_t)(base_of(r) + LMT(r)->woff + done),
                                  (uint32_t)len, lkey};
            struct ibv_send_wr wr = {.opcode = read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
                                     .sg_list = &sge, .num_sge = 1,
                                     .wr.rdma = {.remote_addr = LMT(r)->raddr + done,
                                                 .rkey = (uint32_t)LMT(r)->rkey}};
            tern_verbs_txe_t e = {.op = read ? OP_READ : OP_WRITE, .last = last, .buf = -1,
                                  .req = last ? r : NULL};
            tern_status_t st = tern_verbs_post(tv, &wr, e, last ? TERN_VERBS_POST_SIGNAL : 0);
            if (st == TERN_ERR_AGAIN)
                return n;
            if (st != TERN_OK) {
                tern_vc_fail(tv->vc, st, tern_last_error());
                return n;
            }
            LMT(r)->posted = done + len;
            n++;
        }
        tern_list_del(&r->link);
    }
    return n;
}

/* tv failed: its queued RDMA work is dropped and the registrations of its
 * rendezvous requests released (the engine completes them). */
void tern_verbs_lmt_drop(tern_verbs_vc_t *tv)
{
    while (!tern_list_empty(&tv->rdmaq))
        tern_list_del(tv->rdmaq.next);
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &tv->vc->lmt_wait)
    {
        tern_request_t *r = TERN_CONTAINER_OF(pos, tern_request_t, vc_link);
        if (r->lmt_mode == TERN_LMT_GET || r->lmt_mode == TERN_LMT_PUT)
            if (LMT(r)->state != S_NONE)
                mem_put(r);
    }
}
