/*
 * One-sided operations at the origin (tern/rma.h) by the engine's path:
 * each operation is a packet on the VC's stream (engine/rma.h), applied by
 * the target's progress; a get or a fetching operation is a receive request
 * tracked on the VC (an id the answer names, failed with the VC) into the
 * caller's buffer; a flush sends RMA_FLUSH to every peer operations went to
 * since the last one and completes when each has answered.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "engine/netmod.h"
#include "engine/rma.h"

/* Checks every operation makes before anything moves; *vcp the key's VC. */
static tern_status_t rma_check(tern_worker_t *w, const tern_key_t *key, uint64_t raddr,
                               uint64_t len, unsigned need, const char *what, tern_vc_t **vcp)
{
    if (key == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "%s: NULL key", what);
    if (key->ctx != w->ctx)
        return tern_error(TERN_ERR_INVALID_PARAM, "%s: the key was unpacked by another context",
                          what);
    if (raddr < key->base || raddr - key->base > key->len || len > key->len - (raddr - key->base))
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "%s: %llu bytes at %#llx leave peer %d's region [%#llx, +%llu)", what,
                          (unsigned long long)len, (unsigned long long)raddr, key->peer,
                          (unsigned long long)key->base, (unsigned long long)key->len);
    if ((key->flags & need) != need)
        return tern_error(TERN_ERR_REMOTE_ACCESS, "%s: peer %d's region allows no %s access",
                          what, key->peer,
                          (need & ~key->flags & TERN_REGION_WRITE) ? "write" : "read");
    tern_vc_t *vc = tern_vc_of(w, key->peer);
    if (vc == NULL)
        return tern_error(TERN_ERR_INVALID_RANK, "%s: peer %d is no peer", what, key->peer);
    *vcp = vc;
    return tern_vc_send_check(vc);
}

tern_status_t tern_rma_mark_dirty(tern_worker_t *w, tern_vc_t *vc, int peer)
{
    if (vc->rma_dirty)
        return TERN_OK;
    if (w->rma_ndirty == w->rma_cap) {
        int cap = w->rma_cap ? 2 * w->rma_cap : 16;
        int *p = realloc(w->rma_dirty, (size_t)cap * sizeof(*p));
        if (p == NULL)
            return tern_error(TERN_ERR_NO_MEMORY, "flush list");
        w->rma_dirty = p;
        w->rma_cap = cap;
    }
    w->rma_dirty[w->rma_ndirty++] = peer;
    vc->rma_dirty = true;
    return TERN_OK;
}

/* A packet of an operation goes to vc (counted): the next flush to it
 * sends RMA_FLUSH. */
static tern_status_t mark_dirty(tern_worker_t *w, tern_vc_t *vc, int peer)
{
    w->rma_count[TERN_RMA_C_SENT]++;
    vc->rma_pkts = true;
    return tern_rma_mark_dirty(w, vc, peer);
}

/* A receive request into iov for the answer of an operation on vc (len
 * bytes), the caller's; tracked on vc (its id in *id).  NULL when out of
 * memory. */
static tern_request_t *answer_req(tern_worker_t *w, tern_vc_t *vc, int peer,
                                  const struct iovec *iov, int iovcnt, bool contig, size_t len,
                                  uint64_t *id)
{
    struct iovec *owned = NULL;
    if (!contig && (owned = tern_iov_dup(iov, iovcnt)) == NULL)
        return NULL;
    tern_request_t *r = tern_request_alloc(w, TERN_REQ_RECV);
    if (r == NULL) {
        free(owned);
        return NULL;
    }
    r->vc = vc;
    r->peer = r->match_src = peer;
    r->msg_len = len;
    tern_request_bind_buffer(r, iov, iovcnt, owned);
    /* USER before anything can complete it: an answer over the self VC
     * arrives inside the send */
    r->flags |= TERN_REQF_USER;
    *id = tern_lmt_track(vc, r);
    if (*id == 0) {
        tern_request_release(r);
        return NULL;
    }
    return r;
}

/* The request r (USER) after its packet was sent with status st. */
static tern_status_t answer_finish(tern_request_t *r, tern_status_t st, tern_request_t **req)
{
    if (st < 0 || (r->flags & TERN_REQF_COMPLETE)) {
        if (st >= 0)
            st = r->status; /* answered within the call (the self VC) */
        tern_request_release(r);
        return st;
    }
    *req = r;
    return TERN_INPROGRESS;
}

/* Send h + the payload iov (len bytes) on vc.  user: the send is the
 * operation's local completion (*req when it could not finish at once);
 * else it is internal (freed when sent). */
static tern_status_t send_payload(tern_worker_t *w, tern_vc_t *vc, int peer,
                                  const tern_pkt_hdr_t *h, const struct iovec *iov, int iovcnt,
                                  bool contig, size_t len, bool user, tern_request_t **req)
{
    if (contig && len <= vc->eager_limit) {
        tern_request_t *s = NULL;
        tern_status_t st =
            vc->nm->core.istart_contig_msg(vc, h, sizeof(*h), iov[0].iov_base, len, &s);
        if (st < 0 || s == NULL || !user)
            return st < 0 ? st : TERN_OK;
        s->flags |= TERN_REQF_USER;
        s->peer = peer;
        s->msg_len = len;
        *req = s;
        return TERN_INPROGRESS;
    }
    struct iovec *owned = NULL;
    if (!contig && (owned = tern_iov_dup(iov, iovcnt)) == NULL)
        return TERN_ERR_NO_MEMORY;
    tern_request_t *s = tern_request_alloc(w, TERN_REQ_SEND);
    if (s == NULL) {
        free(owned);
        return TERN_ERR_NO_MEMORY;
    }
    s->vc = vc;
    s->peer = peer;
    s->msg_len = len;
    tern_request_bind_buffer(s, iov, iovcnt, owned);
    s->flags |= TERN_REQF_USER; /* completion must not recycle it before we look */
    tern_status_t st = vc->nm->core.send_noncontig(vc, s, h, sizeof(*h));
    if (st < 0 || (s->flags & TERN_REQF_COMPLETE)) {
        if (st >= 0)
            st = s->status;
        tern_request_release(s);
        return st;
    }
    if (!user) {
        s->flags &= ~(uint32_t)TERN_REQF_USER; /* internal: released when sent */
        return TERN_OK;
    }
    *req = s;
    return TERN_INPROGRESS;
}

/* The stripe locks of accumulates on key's memory reached directly (held:
 * tern_key_enter's). */
static _Atomic int32_t *direct_locks(const tern_key_t *key, const tern_region_t *held)
{
    if (key->shared != NULL)
        return key->shared->locks;
    return held != NULL ? tern_region_locks(held) : NULL;
}

/* A put (write) or get between iov and [raddr, raddr + len) of key's
 * region, when the key reaches it directly: a copy, counted.
 * TERN_ERR_UNSUPPORTED: no direct path (nothing done); else its status. */
static tern_status_t direct_copy(tern_worker_t *w, const tern_key_t *key, uint64_t raddr,
                                 const struct iovec *iov, int iovcnt, size_t len, bool write)
{
    void *p;
    tern_region_t *held;
    tern_status_t st = tern_key_enter(key, raddr, len, write ? TERN_REGION_WRITE : TERN_REGION_READ,
                                      &p, &held);
    if (st != TERN_OK)
        return st;
    tern_cursor_t c;
    tern_cursor_init(&c, iov, iovcnt);
    if (write)
        tern_cursor_pack(&c, p, len);
    else
        tern_cursor_unpack(&c, p, len);
    tern_key_leave(held);
    w->rma_count[TERN_RMA_C_DIRECT]++;
    return TERN_OK;
}

static tern_status_t put(tern_worker_t *w, const struct iovec *iov, int iovcnt, bool contig,
                         size_t len, const tern_key_t *key, uint64_t raddr, const tern_op_t *op,
                         tern_request_t **req)
{
    tern_vc_t *vc = NULL;
    tern_status_t st = rma_check(w, key, raddr, len, TERN_REGION_WRITE, "put", &vc);
    bool data = op != NULL && (op->flags & TERN_OP_DATA); /* even with 0 bytes: its entry */
    if (st != TERN_OK || (len == 0 && !data))
        return st;
    /* immediate data needs the target's progress: its CQ gets an entry */
    if (!data && (st = direct_copy(w, key, raddr, iov, iovcnt, len, true)) != TERN_ERR_UNSUPPORTED)
        return st;
    if (!data && (st = tern_rma_cma_op(w, vc, key, iov, iovcnt, len, raddr, true)) !=
                     TERN_ERR_UNSUPPORTED)
        return st;
    if (!data && (st = tern_rma_native_op(w, vc, key, iov, iovcnt, len, raddr, true, req)) !=
                     TERN_ERR_UNSUPPORTED)
        return st;
    if ((st = mark_dirty(w, vc, key->peer)) != TERN_OK)
        return st;
    tern_pkt_hdr_t h = {.type = TERN_PKT_RMA_PUT,
                        .flags = data ? TERN_PKT_F_DATA : 0,
                        .tag = raddr,
                        .len = len,
                        .sreq = data ? op->data : 0,
                        .rreq = key->id};
    return send_payload(w, vc, key->peer, &h, iov, iovcnt, contig, len, true, req);
}

static tern_status_t put_contig(tern_worker_t *w, const void *buf, size_t len,
                                const tern_key_t *key, uint64_t raddr, const tern_op_t *op,
                                tern_request_t **req)
{
    if (buf == NULL && len > 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "put of %zu bytes from a NULL buffer", len);
    tern_status_t st = tern_len_check(len, "put");
    if (st != TERN_OK)
        return st;
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    return put(w, &iov, 1, true, len, key, raddr, op, req);
}

static tern_status_t put_iov(tern_worker_t *w, const struct iovec *iov, int iovcnt,
                             const tern_key_t *key, uint64_t raddr, const tern_op_t *op,
                             tern_request_t **req)
{
    size_t len;
    tern_status_t st = tern_iov_check(iov, iovcnt, "put", &len);
    if (st != TERN_OK)
        return st;
    return put(w, iov, iovcnt, false, len, key, raddr, op, req);
}

static tern_status_t get(tern_worker_t *w, const struct iovec *iov, int iovcnt, bool contig,
                         size_t len, const tern_key_t *key, uint64_t raddr, const tern_op_t *op,
                         tern_request_t **req)
{
    tern_vc_t *vc = NULL;
    tern_status_t st = rma_check(w, key, raddr, len, TERN_REGION_READ, "get", &vc);
    if (st != TERN_OK || len == 0)
        return st;
    if ((st = direct_copy(w, key, raddr, iov, iovcnt, len, false)) != TERN_ERR_UNSUPPORTED)
        return st;
    if ((st = tern_rma_cma_op(w, vc, key, iov, iovcnt, len, raddr, false)) !=
        TERN_ERR_UNSUPPORTED)
        return st;
    if ((st = tern_rma_native_op(w, vc, key, iov, iovcnt, len, raddr, false, req)) !=
        TERN_ERR_UNSUPPORTED)
        return st;
    if ((st = mark_dirty(w, vc, key->peer)) != TERN_OK)
        return st;
    uint64_t id;
    tern_request_t *r = answer_req(w, vc, key->peer, iov, iovcnt, contig, len, &id);
    if (r == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "get request");
    tern_pkt_hdr_t h = {.type = TERN_PKT_RMA_GET, .tag = raddr, .len = len, .rreq = key->id,
                        .sreq = id};
    return answer_finish(r, tern_send_ctrl(vc, &h, NULL, 0), req);
}

static tern_status_t get_contig(tern_worker_t *w, void *buf, size_t len, const tern_key_t *key,
                                uint64_t raddr, const tern_op_t *op, tern_request_t **req)
{
    if (buf == NULL && len > 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "get of %zu bytes into a NULL buffer", len);
    tern_status_t st = tern_len_check(len, "get");
    if (st != TERN_OK)
        return st;
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    return get(w, &iov, 1, true, len, key, raddr, op, req);
}

static tern_status_t get_iov(tern_worker_t *w, const struct iovec *iov, int iovcnt,
                             const tern_key_t *key, uint64_t raddr, const tern_op_t *op,
                             tern_request_t **req)
{
    size_t len;
    tern_status_t st = tern_iov_check(iov, iovcnt, "get", &len);
    if (st != TERN_OK)
        return st;
    return get(w, iov, iovcnt, false, len, key, raddr, op, req);
}

/* An atomic into the region as RMA_AMO (result: the caller's, or NULL). */
static tern_status_t amo_packet(tern_worker_t *w, tern_vc_t *vc, int aop, size_t size,
                                uint64_t value, uint64_t compare, void *result,
                                const tern_key_t *key, uint64_t raddr, tern_request_t **req)
{
    tern_status_t st = mark_dirty(w, vc, key->peer);
    if (st != TERN_OK)
        return st;
    uint64_t operands[2] = {value, compare};
    tern_pkt_hdr_t h = {.type = TERN_PKT_RMA_AMO, .flags = (uint8_t)aop, .space = (uint16_t)size,
                        .tag = raddr, .rreq = key->id, .cookie_len = sizeof(operands)};
    if (result == NULL)
        return tern_send_ctrl(vc, &h, operands, sizeof(operands));
    struct iovec iov = {.iov_base = result, .iov_len = size};
    tern_request_t *r = answer_req(w, vc, key->peer, &iov, 1, true, size, &h.sreq);
    if (r == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "atomic request");
    return answer_finish(r, tern_send_ctrl(vc, &h, operands, sizeof(operands)), req);
}

/* An atomic on a TERN_REGION_ATOMIC_DEVICE key: through the device from
 * everywhere (tern/rma.h), never the CPU here on a mapping.  The owner's:
 * its device at once (or the CPU where it has none, as the target would);
 * a peer's: the netmod's atomic on the VC, else a packet the target applies
 * through its device. */
static tern_status_t device_atomic(tern_worker_t *w, tern_vc_t *vc, int aop, size_t size,
                                   uint64_t value, uint64_t compare, void *result,
                                   const tern_key_t *key, uint64_t raddr, tern_request_t **req)
{
    if (size != 8 || (aop != TERN_AMO_ADD && aop != TERN_AMO_CSWAP))
        return tern_error(TERN_ERR_UNSUPPORTED,
                          "atomic: op %d on %zu bytes: a TERN_REGION_ATOMIC_DEVICE region takes "
                          "8-byte TERN_AMO_ADD and TERN_AMO_CSWAP only",
                          aop, size);
    unsigned need = TERN_REGION_WRITE | (result != NULL ? TERN_REGION_READ : 0);
    if (key->self != NULL) {
        tern_region_t *r;
        tern_status_t st = tern_region_enter(w->ctx, key->id, raddr, size, need, w->ctx->rank, &r);
        if (st != TERN_OK)
            return st;
        uint64_t old;
        st = tern_rma_amo_local(w, r, raddr, aop, value, compare, &old);
        if (st == TERN_ERR_UNSUPPORTED) {
            old = tern_amo_apply(aop, size, (void *)(uintptr_t)raddr, value, compare);
            st = TERN_OK;
        }
        tern_region_leave(r);
        if (st != TERN_OK)
            return st;
        w->rma_count[TERN_RMA_C_DIRECT]++;
        if (result != NULL)
            memcpy(result, &old, 8);
        return TERN_OK;
    }
    tern_status_t st =
        tern_rma_native_amo(w, vc, key, aop, value, compare, result, raddr, req);
    if (st != TERN_ERR_UNSUPPORTED)
        return st;
    return amo_packet(w, vc, aop, size, value, compare, result, key, raddr, req);
}

static tern_status_t atomic_op(tern_worker_t *w, int aop, size_t size, uint64_t value,
                               uint64_t compare, void *result, const tern_key_t *key,
                               uint64_t raddr, tern_request_t **req)
{
    if (aop < 0 || aop >= TERN_AMO_NOPS || (size != 1 && size != 2 && size != 4 && size != 8))
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "atomic: op %d on %zu bytes (ops 0..%d on 1, 2, 4 or 8 bytes)", aop,
                          size, TERN_AMO_NOPS - 1);
    unsigned need = TERN_REGION_WRITE | (result != NULL ? TERN_REGION_READ : 0);
    tern_vc_t *vc = NULL;
    tern_status_t st = rma_check(w, key, raddr, size, need, "atomic", &vc);
    if (st != TERN_OK)
        return st;
    if (raddr % size != 0)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "atomic: %#llx is misaligned for a %zu-byte operation",
                          (unsigned long long)raddr, size);
    if (key->flags & TERN_REGION_ATOMIC_DEVICE)
        return device_atomic(w, vc, aop, size, value, compare, result, key, raddr, req);
    void *p;
    tern_region_t *held;
    if ((st = tern_key_enter(key, raddr, size, need, &p, &held)) != TERN_ERR_UNSUPPORTED) {
        if (st == TERN_OK) { /* direct: the atomic instruction on the memory */
            uint64_t old = tern_amo_apply(aop, size, p, value, compare);
            tern_key_leave(held);
            w->rma_count[TERN_RMA_C_DIRECT]++;
            if (result != NULL)
                tern_amo_store(result, old, size);
        }
        return st;
    }
    return amo_packet(w, vc, aop, size, value, compare, result, key, raddr, req);
}

static tern_status_t accumulate_op(tern_worker_t *w, int acc, int dtype, const void *buf,
                                   size_t count, void *result, const tern_key_t *key,
                                   uint64_t raddr, tern_request_t **req)
{
    size_t es = 0;
    if (!tern_acc_valid(acc, dtype, &es))
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "accumulate: op %d is not defined on type %d (tern/rma.h: enum "
                          "tern_acc, enum tern_dtype)",
                          acc, dtype);
    if (count > (size_t)SSIZE_MAX / es)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "accumulate: %zu elements of %zu bytes pass SSIZE_MAX", count, es);
    size_t len = count * es;
    if (buf == NULL && len > 0 && acc != TERN_ACC_NO_OP)
        return tern_error(TERN_ERR_INVALID_PARAM, "accumulate of %zu elements from a NULL buffer",
                          count);
    if (key != NULL && (key->flags & TERN_REGION_ATOMIC_DEVICE))
        return tern_error(TERN_ERR_UNSUPPORTED,
                          "accumulate: peer %d's region takes its atomics through the device "
                          "(TERN_REGION_ATOMIC_DEVICE): no accumulate on it",
                          key->peer);
    unsigned need = (acc == TERN_ACC_NO_OP ? TERN_REGION_READ : TERN_REGION_WRITE) |
                    (result != NULL ? TERN_REGION_READ : 0);
    tern_vc_t *vc = NULL;
    tern_status_t st = rma_check(w, key, raddr, len, need, "accumulate", &vc);
    if (st != TERN_OK || len == 0 || (acc == TERN_ACC_NO_OP && result == NULL))
        return st;
    void *p;
    tern_region_t *held;
    if ((st = tern_key_enter(key, raddr, len, need, &p, &held)) != TERN_ERR_UNSUPPORTED) {
        if (st == TERN_OK) { /* direct: each element atomically, here */
            tern_acc_apply(acc, dtype, p, buf, count, result, direct_locks(key, held));
            tern_key_leave(held);
            w->rma_count[TERN_RMA_C_DIRECT]++;
        }
        return st;
    }
    if ((st = mark_dirty(w, vc, key->peer)) != TERN_OK)
        return st;
    tern_pkt_hdr_t h = {.type = TERN_PKT_RMA_ACC, .flags = (uint8_t)acc, .space = (uint16_t)dtype,
                        .tag = raddr, .len = len, .rreq = key->id};
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    if (result == NULL)
        return send_payload(w, vc, key->peer, &h, &iov, 1, true, len, true, req);
    struct iovec riov = {.iov_base = result, .iov_len = len};
    tern_request_t *r = answer_req(w, vc, key->peer, &riov, 1, true, len, &h.sreq);
    if (r == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "accumulate request");
    /* the result is the local completion: the payload's send is internal */
    st = acc == TERN_ACC_NO_OP ? tern_send_ctrl(vc, &h, NULL, 0)
                               : send_payload(w, vc, key->peer, &h, &iov, 1, true, len, false, NULL);
    return answer_finish(r, st, req);
}

/* ---- flush ----------------------------------------------------------------- */

/* One part of flush f ended with st: the first error is the flush's. */
static void flush_part_done(tern_request_t *f, tern_status_t st)
{
    if (st < 0 && (tern_status_t)(int64_t)f->data == TERN_OK)
        f->data = (uint64_t)(int64_t)st;
    if (--f->msg_len == 0)
        tern_request_complete(f, (tern_status_t)(int64_t)f->data);
}

void tern_rma_request_done(tern_request_t *r)
{
    if (r->kind == TERN_REQ_RMA_PART) /* data: a refusal the netmod saw before it */
        flush_part_done(r->context, r->status < 0 ? r->status : (tern_status_t)(int64_t)r->data);
    else if (r->kind == TERN_REQ_RMA_PUT && (r->flags & TERN_REQF_HAS_DATA))
        tern_cq_unreserve(r->worker); /* a put with data cut off: no entry */
    tern_request_release(r);
}

/* The flush of peer's VC as parts of flush f: the netmod's own
 * operations' (asked of it), RMA_FLUSH for those sent as packets.  True
 * when the VC stays dirty: the netmod's operations are still outstanding,
 * so the next flush must wait for them too (even with nothing new sent). */
static bool flush_peer(tern_worker_t *w, tern_request_t *f, int peer)
{
    tern_vc_t *vc = tern_vc_of(w, peer);
    if (vc == NULL)
        return false; /* its job was disconnected (tern_disconnect): nobody to flush */
    bool native = vc->rma_native, pkts = vc->rma_pkts || !native;
    vc->rma_pkts = false;
    bool stay = native && tern_rma_native_flush(w, f, vc);
    vc->rma_native = vc->rma_dirty = stay;
    if (!pkts)
        return stay;
    f->msg_len++;
    tern_request_t *p = tern_request_alloc(w, TERN_REQ_RMA_PART);
    if (p == NULL) {
        flush_part_done(f, TERN_ERR_NO_MEMORY);
        return stay;
    }
    p->vc = vc;
    p->peer = peer;
    p->context = f;
    p->data = (uint64_t)(int64_t)TERN_OK;
    tern_rma_flush_send(w, vc, p);
    return stay;
}

void tern_rma_flush_send(tern_worker_t *w, tern_vc_t *vc, tern_request_t *p)
{
    uint64_t id = tern_lmt_track(vc, p); /* a failing VC completes it */
    if (id == 0) {
        tern_request_complete(p, TERN_ERR_NO_MEMORY);
        return;
    }
    tern_pkt_hdr_t h = {.type = TERN_PKT_RMA_FLUSH, .sreq = id};
    w->rma_count[TERN_RMA_C_FLUSHES]++;
    /* held (USER) across the send: a VC that fails inside it (vc_end), or
     * an answer over the self VC, completes p without releasing it */
    p->flags |= TERN_REQF_USER;
    tern_status_t st = tern_send_ctrl(vc, &h, NULL, 0);
    p->flags &= ~(uint32_t)TERN_REQF_USER;
    if (p->flags & TERN_REQF_COMPLETE)
        tern_rma_request_done(p); /* counted now, and released */
    else if (st < 0)
        tern_request_complete(p, st);
}

static tern_status_t flush_op(tern_worker_t *w, int peer, tern_request_t **req)
{
    /* Direct operations need nothing: they were applied within their call,
     * and the target sees them after whatever synchronises it with this
     * process next (a message's release / acquire pair, a barrier). */
    tern_vc_t *vc = NULL;
    if (peer != TERN_ANY_SOURCE && (vc = tern_vc_of(w, peer)) == NULL)
        return tern_error(TERN_ERR_INVALID_RANK, "flush: peer %d is no peer", peer);
    if (vc != NULL && !vc->rma_dirty)
        return tern_vc_send_check(vc); /* nothing to wait for, unless the peer is gone */
    if (vc == NULL && w->rma_ndirty == 0)
        return TERN_OK;
    tern_request_t *f = tern_request_alloc(w, TERN_REQ_RMA_FLUSH);
    if (f == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "flush request");
    f->flags |= TERN_REQF_USER;
    f->peer = peer;
    f->data = (uint64_t)(int64_t)TERN_OK; /* the first error of a part */
    f->msg_len = 1;                        /* parts pending, and this call's hold */
    for (int i = 0; i < w->rma_ndirty;) {
        int p = w->rma_dirty[i];
        if (vc != NULL && p != peer) {
            i++;
            continue;
        }
        /* taken off the list first: a VC failing inside flush_peer changes nothing there */
        w->rma_dirty[i] = w->rma_dirty[--w->rma_ndirty];
        if (flush_peer(w, f, p)) { /* back on it, where this loop does not look again */
            w->rma_dirty[w->rma_ndirty++] = w->rma_dirty[i];
            w->rma_dirty[i] = p;
            i++;
        }
    }
    flush_part_done(f, TERN_OK); /* drop the hold */
    if (f->flags & TERN_REQF_COMPLETE) {
        tern_status_t st = f->status;
        tern_request_release(f);
        return st;
    }
    *req = f;
    return TERN_INPROGRESS;
}

int tern_rma_counters(tern_worker_t *w, tern_counter_t *out, int max)
{
    static const char *const names[TERN_RMA_NCOUNTERS] = {
        "rma.direct", "rma.sent", "rma.applied", "rma.flushes", "rma.native", "rma.replayed",
        "rma.cma"};
    for (int i = 0; i < TERN_RMA_NCOUNTERS && i < max; i++)
        out[i] = (tern_counter_t){names[i], w->rma_count[i]};
    return TERN_RMA_NCOUNTERS;
}

/* ---- the public calls: their op (tagged.h's TERN_OP_CQ rules) --------------- */

#define OP_CQ (TERN_OP_CQ | TERN_OP_CQ_ERRORS)

/* The caller's op: flags among allowed, a request pointer unless the
 * completion goes to the CQ, a CQ slot promised (the last failure point);
 * *f the flags. */
static tern_status_t op_begin(tern_worker_t *w, const tern_op_t *op, uint32_t allowed,
                              tern_request_t **req, const char *what, uint32_t *f)
{
    *f = op != NULL ? op->flags : 0;
    if (w == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "%s: NULL worker", what);
    if ((*f & ~allowed) || (*f & OP_CQ) == TERN_OP_CQ_ERRORS)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "%s: op flags %#x (it takes %s; TERN_OP_CQ_ERRORS with TERN_OP_CQ)",
                          what, *f,
                          (allowed & TERN_OP_DATA) ? "TERN_OP_CQ, _CQ_ERRORS and _DATA"
                                                   : "TERN_OP_CQ and _CQ_ERRORS");
    if (req == NULL && !(*f & TERN_OP_CQ))
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "%s: NULL request pointer (only a TERN_OP_CQ operation may go without "
                          "one)",
                          what);
    if (req != NULL)
        *req = NULL;
    return (*f & TERN_OP_CQ) ? tern_cq_reserve(w) : TERN_OK;
}

/* The operation returned st (TERN_OK done, TERN_INPROGRESS with r pending,
 * an error): as the caller asked, its status and *req, or with TERN_OP_CQ
 * its entry now (done: flags cqf, len bytes, peer) or r made a CQ request
 * whose completion writes it. */
static tern_status_t op_end(tern_worker_t *w, const tern_op_t *op, uint32_t f, uint32_t cqf,
                            int peer, size_t len, tern_status_t st, tern_request_t *r,
                            tern_request_t **req)
{
    if (!(f & TERN_OP_CQ)) {
        if (st == TERN_INPROGRESS)
            *req = r;
        return st;
    }
    if (st < 0) {
        tern_cq_unreserve(w);
        return st;
    }
    if (st == TERN_OK) {
        if (f & TERN_OP_CQ_ERRORS) {
            tern_cq_unreserve(w);
        } else {
            tern_cq_entry_t e = {.context = op->context, .flags = cqf, .status = TERN_OK,
                                 .peer = peer, .length = len, .msg_len = len};
            tern_cq_put(w, &e);
        }
        return TERN_OK;
    }
    /* pending: nobody reaps it now, its completion writes the entry */
    r->context = op->context;
    r->match_ignore = cqf;
    r->flags |= TERN_REQF_RMA | TERN_REQF_CQ | ((f & TERN_OP_CQ_ERRORS) ? TERN_REQF_CQ_ERRORS : 0);
    r->flags &= ~(uint32_t)TERN_REQF_USER;
    if (req != NULL)
        *req = r;
    return TERN_OK;
}

static int key_peer(const tern_key_t *key)
{
    return key != NULL ? key->peer : -1;
}

/* The bytes of an iovec an operation accepted (st >= 0: tern_iov_check
 * passed it), for its CQ entry. */
static size_t iov_total(const struct iovec *iov, int iovcnt, tern_status_t st)
{
    size_t n = 0;
    for (int i = 0; st >= 0 && i < iovcnt; i++)
        n += iov[i].iov_len;
    return n;
}

tern_status_t tern_put(tern_worker_t *w, const void *buf, size_t len, const tern_key_t *key,
                       uint64_t raddr, const tern_op_t *op, tern_request_t **req)
{
    uint32_t f;
    tern_status_t st = op_begin(w, op, OP_CQ | TERN_OP_DATA, req, "put", &f);
    if (st != TERN_OK)
        return st;
    tern_request_t *r = NULL;
    st = put_contig(w, buf, len, key, raddr, op, &r);
    return op_end(w, op, f, TERN_CQ_WRITE, key_peer(key), len, st, r, req);
}

tern_status_t tern_putv(tern_worker_t *w, const struct iovec *iov, int iovcnt,
                        const tern_key_t *key, uint64_t raddr, const tern_op_t *op,
                        tern_request_t **req)
{
    uint32_t f;
    tern_status_t st = op_begin(w, op, OP_CQ | TERN_OP_DATA, req, "put", &f);
    if (st != TERN_OK)
        return st;
    tern_request_t *r = NULL;
    st = put_iov(w, iov, iovcnt, key, raddr, op, &r);
    return op_end(w, op, f, TERN_CQ_WRITE, key_peer(key), iov_total(iov, iovcnt, st), st, r, req);
}

tern_status_t tern_get(tern_worker_t *w, void *buf, size_t len, const tern_key_t *key,
                       uint64_t raddr, const tern_op_t *op, tern_request_t **req)
{
    uint32_t f;
    tern_status_t st = op_begin(w, op, OP_CQ, req, "get", &f);
    if (st != TERN_OK)
        return st;
    tern_request_t *r = NULL;
    st = get_contig(w, buf, len, key, raddr, op, &r);
    return op_end(w, op, f, TERN_CQ_READ, key_peer(key), len, st, r, req);
}

tern_status_t tern_getv(tern_worker_t *w, const struct iovec *iov, int iovcnt,
                        const tern_key_t *key, uint64_t raddr, const tern_op_t *op,
                        tern_request_t **req)
{
    uint32_t f;
    tern_status_t st = op_begin(w, op, OP_CQ, req, "get", &f);
    if (st != TERN_OK)
        return st;
    tern_request_t *r = NULL;
    st = get_iov(w, iov, iovcnt, key, raddr, op, &r);
    return op_end(w, op, f, TERN_CQ_READ, key_peer(key), iov_total(iov, iovcnt, st), st, r, req);
}

tern_status_t tern_atomic(tern_worker_t *w, int aop, size_t size, uint64_t value,
                          uint64_t compare, void *result, const tern_key_t *key, uint64_t raddr,
                          const tern_op_t *op, tern_request_t **req)
{
    uint32_t f;
    tern_status_t st = op_begin(w, op, OP_CQ, req, "atomic", &f);
    if (st != TERN_OK)
        return st;
    tern_request_t *r = NULL;
    st = atomic_op(w, aop, size, value, compare, result, key, raddr, &r);
    uint32_t cqf = TERN_CQ_ATOMIC | (result != NULL ? TERN_CQ_READ : TERN_CQ_WRITE);
    return op_end(w, op, f, cqf, key_peer(key), size, st, r, req);
}

tern_status_t tern_accumulate(tern_worker_t *w, int acc, int dtype, const void *buf,
                              size_t count, void *result, const tern_key_t *key, uint64_t raddr,
                              const tern_op_t *op, tern_request_t **req)
{
    uint32_t f;
    tern_status_t st = op_begin(w, op, OP_CQ, req, "accumulate", &f);
    if (st != TERN_OK)
        return st;
    tern_request_t *r = NULL;
    st = accumulate_op(w, acc, dtype, buf, count, result, key, raddr, &r);
    uint32_t cqf = TERN_CQ_ATOMIC | (result != NULL ? TERN_CQ_READ : TERN_CQ_WRITE);
    return op_end(w, op, f, cqf, key_peer(key), count * tern_dtype_size(dtype), st, r, req);
}

tern_status_t tern_flush(tern_worker_t *w, int peer, const tern_op_t *op, tern_request_t **req)
{
    uint32_t f;
    tern_status_t st = op_begin(w, op, OP_CQ, req, "flush", &f);
    if (st != TERN_OK)
        return st;
    tern_request_t *r = NULL;
    st = flush_op(w, peer, &r);
    return op_end(w, op, f, TERN_CQ_FLUSH, peer, 0, st, r, req);
}
