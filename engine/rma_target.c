/*
 * One-sided operations at the target (the engine's path, engine/rma.h):
 * the packet handlers apply what arrives on a VC's stream to the context's
 * regions, in stream order, and answer on the VC; RMA_RESP is the origin's
 * handler of the answers.  A refused operation touches nothing: it is
 * answered with the error, or recorded for the peer's next flush.  Only a
 * header that breaks the protocol fails the VC (TERN_ERR_MALFORMED).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/copy.h"
#include "engine/engine_internal.h"
#include "engine/netmod.h"
#include "engine/rma.h"

static tern_status_t malformed(const tern_vc_t *vc, const char *what, const tern_pkt_hdr_t *h)
{
    return tern_error(TERN_ERR_MALFORMED,
                      "%s packet from rank %d is malformed (flags %u space %u cookie %u len "
                      "%llu)",
                      what, vc->rank, h->flags, h->space, h->cookie_len,
                      (unsigned long long)h->len);
}

/* RMA_RESP to the origin's request rreq: st and the cookie (the result, or
 * the message). */
static tern_status_t answer(tern_vc_t *vc, uint64_t rreq, tern_status_t st, const void *cookie,
                            size_t len)
{
    tern_pkt_hdr_t h = {.type = TERN_PKT_RMA_RESP,
                        .tag = (uint64_t)(int64_t)st,
                        .rreq = rreq,
                        .cookie_len = (uint32_t)len};
    return tern_send_ctrl(vc, &h, cookie, len);
}

/* Answer the error st with the message tern_error recorded. */
static tern_status_t answer_error(tern_vc_t *vc, uint64_t rreq, tern_status_t st)
{
    const char *m = tern_last_error();
    size_t n = strlen(m);
    return answer(vc, rreq, st, m, n < TERN_COOKIE_MAX ? n : TERN_COOKIE_MAX);
}

/* An operation without a result was refused with st: the first since the
 * peer's last flush is its answer. */
static void record(tern_vc_t *vc, tern_status_t st)
{
    if (vc->rma_err != TERN_OK)
        return;
    vc->rma_err = st;
    free(vc->rma_msg);
    vc->rma_msg = strdup(tern_last_error()); /* NULL only costs the detail */
}

/* Refused: answered when the origin waits for a result (rreq), else recorded. */
static tern_status_t refuse(tern_vc_t *vc, uint64_t rreq, tern_status_t st)
{
    if (rreq != 0)
        return answer_error(vc, rreq, st);
    record(vc, st);
    return TERN_OK;
}

/* The result bytes to the origin's request rreq: in RMA_RESP's cookie when
 * they fit, else a DATA packet of a buffer (malloc'd, taken: freed when
 * sent). */
static tern_status_t send_result(tern_vc_t *vc, uint64_t rreq, void *buf, size_t len, bool owned)
{
    if (len <= TERN_COOKIE_MAX) {
        tern_status_t st = answer(vc, rreq, TERN_OK, buf, len);
        if (owned)
            free(buf);
        return st;
    }
    tern_request_t *s = tern_request_alloc_contig_send(vc, buf, len, 0);
    if (s == NULL) {
        if (owned)
            free(buf);
        return tern_error(TERN_ERR_NO_MEMORY, "one-sided result");
    }
    s->tmpbuf = buf; /* freed with s */
    tern_pkt_hdr_t h = {.type = TERN_PKT_DATA, .len = len, .rreq = rreq};
    tern_status_t st = vc->nm->core.send_noncontig(vc, s, &h, sizeof(h));
    if (st < 0 && !(s->flags & TERN_REQF_COMPLETE))
        tern_request_release(s);
    return st < 0 ? st : TERN_OK;
}

/* The VC's payload goes to sink r for len bytes (engine/handle_pkt.c). */
static void start_sink(tern_vc_t *vc, tern_request_t *r, size_t len)
{
    vc->rx.sink = r;
    vc->rx.payload_left = len;
    vc->rx.state = TERN_RX_PAYLOAD;
}

/*
 * A sink for a payload of len bytes of an RMA_PUT / RMA_ACC: region r (NULL:
 * refused, the bytes are dropped) with id, its bytes going to raddr (a put)
 * or to tmpbuf (an accumulate).  The request's fields, for this kind:
 * context the region, data its id, tag the next byte's address, remote_id
 * the origin's request (accumulate), lmt_mode / space the op and type.
 */
static tern_request_t *sink_new(tern_vc_t *vc, int kind, tern_region_t *r, uint64_t id,
                                uint64_t raddr)
{
    tern_request_t *s = tern_request_alloc(vc->worker, kind);
    if (s == NULL)
        return NULL;
    s->vc = vc;
    s->peer = vc->rank;
    s->context = r;
    s->data = id;
    s->tag = raddr;
    return s;
}

/* A put with immediate data (sreq) was applied: the worker's CQ gets its
 * entry, in the slot promised when its header arrived. */
static void put_data_entry(tern_vc_t *vc, uint64_t data, uint64_t len)
{
    tern_cq_entry_t e = {.flags = TERN_CQ_REMOTE_WRITE | TERN_CQ_DATA,
                         .status = TERN_OK,
                         .peer = vc->rank,
                         .data = data,
                         .length = len,
                         .msg_len = len};
    tern_cq_put(vc->worker, &e);
}

tern_status_t tern_rma_handle_put(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie)
{
    bool data = hdr->flags == TERN_PKT_F_DATA;
    if ((hdr->flags && !data) || hdr->space || hdr->cookie_len || (hdr->sreq && !data))
        return malformed(vc, "RMA_PUT", hdr);
    tern_region_t *r = NULL;
    tern_status_t st = tern_region_enter(vc->worker->ctx, hdr->rreq, hdr->tag, hdr->len,
                                         TERN_REGION_WRITE, vc->rank, &r);
    if (st == TERN_OK)
        tern_region_leave(r); /* entered again per fragment */
    else
        record(vc, st);
    /* immediate data: an entry in this worker's CQ once the bytes are in
     * (none for a refused put: its origin's flush reports it) */
    if (data && st == TERN_OK && (st = tern_cq_reserve(vc->worker)) != TERN_OK)
        return st;
    if (hdr->len == 0) {
        if (data && r != NULL)
            put_data_entry(vc, hdr->sreq, 0);
        return TERN_OK;
    }
    tern_request_t *s = sink_new(vc, TERN_REQ_RMA_PUT, r, hdr->rreq, hdr->tag);
    if (s == NULL) {
        if (data && r != NULL)
            tern_cq_unreserve(vc->worker);
        return tern_error(TERN_ERR_NO_MEMORY, "put from rank %d", vc->rank);
    }
    if (data && r != NULL) {
        s->flags |= TERN_REQF_HAS_DATA; /* a CQ slot is promised */
        s->remote_id = hdr->sreq;
        s->msg_len = hdr->len;
    }
    start_sink(vc, s, hdr->len);
    return TERN_OK;
}

tern_status_t tern_rma_handle_get(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie)
{
    if (hdr->flags || hdr->space || hdr->cookie_len || hdr->sreq == 0)
        return malformed(vc, "RMA_GET", hdr);
    tern_region_t *r = NULL;
    tern_status_t st = tern_region_enter(vc->worker->ctx, hdr->rreq, hdr->tag, hdr->len,
                                         TERN_REGION_READ, vc->rank, &r);
    if (st != TERN_OK)
        return answer_error(vc, hdr->sreq, st);
    /* copied now, inside the region: the bytes must not be read after a
     * destroy, and a queued send reads them later */
    size_t len = hdr->len;
    uint8_t small[TERN_COOKIE_MAX];
    void *buf = len <= sizeof(small) ? small : malloc(len);
    if (buf == NULL) {
        tern_region_leave(r);
        return answer_error(vc, hdr->sreq,
                            tern_error(TERN_ERR_NO_MEMORY, "rank %d: get of %zu bytes from "
                                       "rank %d", tern_rank(vc->worker->ctx), len, vc->rank));
    }
    tern_copy(buf, (const void *)(uintptr_t)hdr->tag, len);
    tern_region_leave(r);
    vc->worker->rma_count[TERN_RMA_C_APPLIED]++;
    return send_result(vc, hdr->sreq, buf, len, buf != small);
}

tern_status_t tern_rma_handle_amo(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie)
{
    size_t size = hdr->space;
    if (hdr->flags >= TERN_AMO_NOPS || (size != 1 && size != 2 && size != 4 && size != 8) ||
        hdr->cookie_len != 16 || hdr->len != 0)
        return malformed(vc, "RMA_AMO", hdr);
    unsigned need = TERN_REGION_WRITE | (hdr->sreq ? TERN_REGION_READ : 0);
    tern_region_t *r = NULL;
    tern_status_t st =
        tern_region_enter(vc->worker->ctx, hdr->rreq, hdr->tag, size, need, vc->rank, &r);
    if (st == TERN_OK && hdr->tag % size != 0) {
        tern_region_leave(r);
        st = tern_error(TERN_ERR_INVALID_PARAM, "rank %d: atomic at %#llx misaligned for %zu "
                        "bytes", vc->rank, (unsigned long long)hdr->tag, size);
    }
    bool device = st == TERN_OK && (r->flags & TERN_REGION_ATOMIC_DEVICE);
    if (device && (size != 8 || (hdr->flags != TERN_AMO_ADD && hdr->flags != TERN_AMO_CSWAP))) {
        tern_region_leave(r);
        st = tern_error(TERN_ERR_UNSUPPORTED, "rank %d: atomic op %d on %zu bytes into a "
                        "TERN_REGION_ATOMIC_DEVICE region of rank %d",
                        vc->rank, hdr->flags, size, vc->worker->ctx->rank);
    }
    if (st != TERN_OK)
        return refuse(vc, hdr->sreq, st);
    uint64_t ops[2];
    memcpy(ops, cookie, sizeof(ops));
    uint64_t old = 0;
    /* a device region's: through the device, as every other atomic on it */
    st = device ? tern_rma_amo_local(vc->worker, r, hdr->tag, hdr->flags, ops[0], ops[1], &old)
                : TERN_ERR_UNSUPPORTED;
    if (st == TERN_ERR_UNSUPPORTED) {
        old = tern_amo_apply(hdr->flags, size, (void *)(uintptr_t)hdr->tag, ops[0], ops[1]);
        st = TERN_OK;
    }
    tern_region_leave(r);
    if (st != TERN_OK)
        return refuse(vc, hdr->sreq, st);
    vc->worker->rma_count[TERN_RMA_C_APPLIED]++;
    if (hdr->sreq == 0)
        return TERN_OK;
    uint8_t out[8];
    tern_amo_store(out, old, size);
    return answer(vc, hdr->sreq, TERN_OK, out, size);
}

/* Apply an accumulate (payload in, NULL for NO_OP) and answer it. */
static tern_status_t acc_apply(tern_vc_t *vc, uint64_t id, uint64_t raddr, size_t len, int acc,
                               int dtype, const void *in, uint64_t rreq)
{
    unsigned need = (acc == TERN_ACC_NO_OP ? TERN_REGION_READ : TERN_REGION_WRITE) |
                    (rreq ? TERN_REGION_READ : 0);
    tern_region_t *r = NULL;
    tern_status_t st = tern_region_enter(vc->worker->ctx, id, raddr, len, need, vc->rank, &r);
    if (st == TERN_OK && (r->flags & TERN_REGION_ATOMIC_DEVICE)) {
        tern_region_leave(r);
        st = tern_error(TERN_ERR_UNSUPPORTED, "rank %d: accumulate into a "
                        "TERN_REGION_ATOMIC_DEVICE region of rank %d",
                        vc->rank, vc->worker->ctx->rank);
    }
    if (st != TERN_OK)
        return refuse(vc, rreq, st);
    uint8_t small[TERN_COOKIE_MAX];
    void *old = rreq == 0 ? NULL : len <= sizeof(small) ? small : malloc(len);
    if (rreq != 0 && old == NULL) {
        tern_region_leave(r);
        return refuse(vc, rreq, tern_error(TERN_ERR_NO_MEMORY, "accumulate result"));
    }
    size_t es = tern_dtype_size(dtype);
    tern_acc_apply(acc, dtype, (void *)(uintptr_t)raddr, in, len / es, old, tern_region_locks(r));
    tern_region_leave(r);
    vc->worker->rma_count[TERN_RMA_C_APPLIED]++;
    return rreq == 0 ? TERN_OK : send_result(vc, rreq, old, len, old != small);
}

tern_status_t tern_rma_handle_acc(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie)
{
    size_t es = 0;
    if (!tern_acc_valid(hdr->flags, hdr->space, &es) || hdr->cookie_len || hdr->len % es ||
        hdr->len > (uint64_t)SSIZE_MAX)
        return malformed(vc, "RMA_ACC", hdr);
    if (hdr->flags == TERN_ACC_NO_OP)
        return acc_apply(vc, hdr->rreq, hdr->tag, hdr->len, TERN_ACC_NO_OP, hdr->space, NULL,
                         hdr->sreq);
    /* checked now (the payload is not buffered for a refused one), and
     * again when it is all here */
    tern_region_t *r = NULL;
    tern_status_t st = tern_region_enter(vc->worker->ctx, hdr->rreq, hdr->tag, hdr->len,
                                         TERN_REGION_WRITE, vc->rank, &r);
    if (st == TERN_OK)
        tern_region_leave(r);
    if (hdr->len == 0) /* nothing follows (a peer's oddity): answered now */
        return st == TERN_OK ? acc_apply(vc, hdr->rreq, hdr->tag, 0, hdr->flags, hdr->space, NULL,
                                         hdr->sreq)
                             : refuse(vc, hdr->sreq, st);
    tern_request_t *s = sink_new(vc, TERN_REQ_RMA_ACC, r, hdr->rreq, hdr->tag);
    if (s == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "accumulate from rank %d", vc->rank);
    s->remote_id = hdr->sreq;
    s->lmt_mode = hdr->flags;
    s->space = hdr->space;
    s->msg_len = hdr->len;
    if (r != NULL && (s->tmpbuf = malloc(hdr->len)) == NULL) {
        s->context = NULL; /* dropped, and refused */
        st = tern_error(TERN_ERR_NO_MEMORY, "rank %d: accumulate of %llu bytes",
                        tern_rank(vc->worker->ctx), (unsigned long long)hdr->len);
    }
    if (st != TERN_OK) {
        /* A refusal is answered once the payload is all here: the origin's
         * request completes on the answer, and its payload must be out of
         * its buffer by then.  Kept: the status, the message (in tmpbuf,
         * which a refused sink fills with nothing else). */
        if (hdr->sreq == 0) {
            record(vc, st);
        } else {
            s->status = st;
            s->tmpbuf = strdup(tern_last_error()); /* NULL: answered without the detail */
        }
    }
    start_sink(vc, s, hdr->len);
    return TERN_OK;
}

void tern_rma_feed(tern_vc_t *vc, tern_request_t *s, const uint8_t *p, size_t n, bool last)
{
    tern_region_t *r = s->context;
    if (s->kind == TERN_REQ_RMA_PUT && r != NULL) {
        if (tern_region_reenter(r, s->data)) {
            tern_copy((void *)(uintptr_t)s->tag, p, n);
            tern_region_leave(r);
        } else {
            s->context = NULL; /* the rest is dropped */
            record(vc, tern_error(TERN_ERR_REMOTE_ACCESS,
                                  "rank %d: region %u was destroyed while a put from rank %d "
                                  "arrived",
                                  tern_rank(vc->worker->ctx), (uint32_t)s->data, vc->rank));
        }
        s->tag += n;
    } else if (s->kind == TERN_REQ_RMA_ACC && s->context != NULL) {
        memcpy((uint8_t *)s->tmpbuf + s->tmp_have, p, n);
        s->tmp_have += n;
    }
    if (!last)
        return;
    if (s->kind == TERN_REQ_RMA_PUT && s->context != NULL)
        vc->worker->rma_count[TERN_RMA_C_APPLIED]++;
    if (s->flags & TERN_REQF_HAS_DATA) { /* the promised entry, or none after all */
        s->flags &= ~(uint32_t)TERN_REQF_HAS_DATA;
        if (s->context != NULL)
            put_data_entry(vc, s->remote_id, s->msg_len);
        else
            tern_cq_unreserve(vc->worker);
    }
    tern_status_t st = TERN_OK;
    if (s->kind == TERN_REQ_RMA_ACC && s->context != NULL) {
        st = acc_apply(vc, s->data, s->tag, s->msg_len, s->lmt_mode, s->space, s->tmpbuf,
                       s->remote_id);
    } else if (s->kind == TERN_REQ_RMA_ACC && s->remote_id != 0) { /* the refusal, now */
        const char *m = s->tmpbuf != NULL ? s->tmpbuf : "accumulate refused";
        size_t len = strlen(m);
        st = answer(vc, s->remote_id, s->status, m, len < TERN_COOKIE_MAX ? len : TERN_COOKIE_MAX);
    }
    tern_request_release(s);
    if (st != TERN_OK)
        tern_vc_fail(vc, st, tern_last_error());
}

tern_status_t tern_rma_handle_flush(tern_vc_t *vc, const tern_pkt_hdr_t *hdr,
                                    const uint8_t *cookie)
{
    if (hdr->flags || hdr->space || hdr->cookie_len || hdr->len || hdr->sreq == 0)
        return malformed(vc, "RMA_FLUSH", hdr);
    /* stream order: everything the peer sent before is applied */
    tern_status_t st = vc->rma_err;
    vc->rma_err = TERN_OK;
    char *m = vc->rma_msg;
    vc->rma_msg = NULL;
    size_t n = m == NULL || st == TERN_OK ? 0 : strlen(m);
    st = answer(vc, hdr->sreq, st, m, n < TERN_COOKIE_MAX ? n : TERN_COOKIE_MAX);
    free(m);
    return st;
}

tern_status_t tern_rma_handle_resp(tern_vc_t *vc, const tern_pkt_hdr_t *hdr,
                                   const uint8_t *cookie)
{
    tern_request_t *r = tern_request_lookup(vc->worker, hdr->rreq);
    int64_t st = (int64_t)hdr->tag;
    if (r == NULL || r->vc != vc || (r->kind != TERN_REQ_RECV && r->kind != TERN_REQ_RMA_PART) ||
        hdr->flags || hdr->space || hdr->len || st > 0 || st <= TERN_ERR_LAST ||
        (st == TERN_OK && hdr->cookie_len != (r->kind == TERN_REQ_RECV ? r->msg_len : 0)))
        return tern_error(TERN_ERR_MALFORMED,
                          "RMA_RESP from rank %d names no one-sided operation waiting for it "
                          "(status %lld, cookie %u)",
                          vc->rank, (long long)st, hdr->cookie_len);
    if (st == TERN_OK) {
        if (hdr->cookie_len)
            tern_cursor_unpack(&r->cur, cookie, hdr->cookie_len);
    } else {
        tern_error((tern_status_t)st, "%.*s", (int)hdr->cookie_len, (const char *)cookie);
    }
    tern_request_complete(r, (tern_status_t)st);
    return TERN_OK;
}
