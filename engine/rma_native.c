/*
 * One-sided operations a netmod carries itself (engine/netmod.h, its rma
 * table): the region's registration with it and the key's section naming
 * it, the origin's side of a put or get it posts, what comes back when its
 * device did not carry an operation out, and its part of a flush.
 *
 * A region is registered with the highest-priority netmod of worker 0
 * that has an rma table; its packed key then carries a TERN_KEY_SECT_NM
 * section (the netmod's name and bytes).  An operation goes to that
 * netmod when it also carries the key's VC here, the buffer is one
 * contiguous piece and no immediate data rides with it; otherwise, or
 * when the netmod declines it (TERN_ERR_UNSUPPORTED), the engine's path
 * (rma.c) takes it as before.
 *
 * A netmod's operation is a request of the caller's (SEND for a put, RECV
 * for a get) holding what the engine's path would need: the buffer, the
 * remote address (remote_id) and the region's wire id (tag).  So an
 * operation handed back (TERN_ERR_AGAIN: the netmod's queue pair failed
 * because another operation was refused) becomes the engine's operation
 * on the spot: the put's payload sent as RMA_PUT (the request completes
 * when it is sent), the get's RMA_GET with the request tracked on the VC
 * for its answer.  The netmod hands them back in the order it posted
 * them, and a flush part it holds comes back after them (replayed), so
 * that part's RMA_FLUSH follows them on the VC's stream and covers them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "engine/netmod.h"
#include "engine/rma.h"

/* ---- regions and keys ------------------------------------------------------- */

/* worker 0's instance of the netmod that serves regions, or NULL */
static tern_netmod_inst_t *rma_inst(tern_context_t *ctx)
{
    if (ctx->workers == NULL)
        return NULL;
    tern_worker_t *w = &ctx->workers[0];
    for (int i = 0; i < w->num_netmods; i++)
        if (w->netmods[i].rma != NULL && w->netmods[i].initialized)
            return &w->netmods[i];
    return NULL;
}

void tern_region_nm_reg(tern_region_t *r)
{
    tern_netmod_inst_t *nm = rma_inst(r->ctx);
    r->nm = NULL;
    r->nm_h = NULL;
    if (nm == NULL)
        return;
    void *h = NULL;
    tern_status_t st = nm->rma->reg(nm->state, (void *)r->base, r->len, r->flags, &h);
    if (st != TERN_OK) {
        if (st != TERN_ERR_UNSUPPORTED)
            tern_debug("region %u (%zu bytes): not registered with %s (%s): the engine's path "
                       "serves it",
                       r->index, r->len, nm->name, tern_last_error());
        return;
    }
    size_t n = sizeof(r->nm_key);
    if (nm->rma->pack(nm->state, h, r->nm_key, &n) != TERN_OK || n > sizeof(r->nm_key)) {
        tern_debug("region %u: %s could not pack its key: the engine's path serves it",
                   r->index, nm->name);
        nm->rma->dereg(nm->state, h);
        return;
    }
    r->nm = nm;
    r->nm_h = h;
    r->nm_key_len = (uint32_t)n;
}

void tern_region_nm_dereg(tern_region_t *r)
{
    if (r->nm == NULL)
        return;
    r->nm->rma->dereg(r->nm->state, r->nm_h);
    r->nm = NULL;
    r->nm_h = NULL;
}

size_t tern_region_nm_pack(const tern_region_t *r, void *buf, size_t room)
{
    if (r->nm == NULL)
        return 0;
    size_t n = r->nm_key_len;
    size_t need = sizeof(tern_key_sect_t) + TERN_KEY_NM_NAME + n;
    if (buf == NULL || room < need)
        return need; /* the length only */
    tern_key_sect_t s = {.type = TERN_KEY_SECT_NM, .len = (uint16_t)(TERN_KEY_NM_NAME + n)};
    char name[TERN_KEY_NM_NAME] = {0};
    strncpy(name, r->nm->name, sizeof(name) - 1);
    uint8_t *p = buf;
    memcpy(p, &s, sizeof(s));
    memcpy(p + sizeof(s), name, sizeof(name));
    memcpy(p + sizeof(s) + sizeof(name), r->nm_key, n);
    return need;
}

void tern_key_nm_take(tern_key_t *key, const void *sect, size_t len)
{
    if (len < TERN_KEY_NM_NAME || len - TERN_KEY_NM_NAME > TERN_NM_KEY_MAX)
        return; /* not one we can use: the engine's path */
    char name[TERN_KEY_NM_NAME + 1];
    memcpy(name, sect, TERN_KEY_NM_NAME);
    name[TERN_KEY_NM_NAME] = '\0';
    const tern_netmod_desc_t *d = tern_netmod_find(name);
    if (d == NULL || d->rma == NULL)
        return; /* a netmod this process does not have */
    key->nm_desc = d;
    key->nm_len = (uint32_t)(len - TERN_KEY_NM_NAME);
    memcpy(key->nm_key, (const uint8_t *)sect + TERN_KEY_NM_NAME, key->nm_len);
}

/* ---- operations ------------------------------------------------------------------ */

/* The netmod's answer st to the operation r it was given: posted (counted,
 * the caller's *req), or not (r released, st returned). */
static tern_status_t posted(tern_worker_t *w, tern_vc_t *vc, tern_request_t *r, tern_status_t st,
                            tern_request_t **req)
{
    if (st != TERN_INPROGRESS) {
        tern_request_release(r);
        return st;
    }
    w->rma_count[TERN_RMA_C_NATIVE]++;
    vc->rma_native = true;
    *req = r;
    return TERN_INPROGRESS;
}

tern_status_t tern_rma_native_op(tern_worker_t *w, tern_vc_t *vc, const tern_key_t *key,
                                 const struct iovec *iov, int iovcnt, size_t len, uint64_t raddr,
                                 bool write, tern_request_t **req)
{
    const tern_netmod_inst_t *nm = vc->nm;
    if (key->nm_desc == NULL || nm->rma == NULL || nm->desc != key->nm_desc || iovcnt != 1)
        return TERN_ERR_UNSUPPORTED;
    /* first: nothing can fail once the operation is posted */
    tern_status_t st = tern_rma_mark_dirty(w, vc, key->peer);
    if (st != TERN_OK)
        return st;
    tern_request_t *r = tern_request_alloc(w, write ? TERN_REQ_SEND : TERN_REQ_RECV);
    if (r == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "%s request", write ? "put" : "get");
    r->vc = vc;
    r->peer = r->match_src = key->peer;
    r->msg_len = len;
    tern_request_bind_buffer(r, iov, 1, NULL);
    r->remote_id = raddr;
    r->tag = key->id;
    r->flags |= TERN_REQF_USER; /* the caller's (op_end may make it a CQ request) */
    return posted(w, vc, r, (write ? nm->rma->put : nm->rma->get)(vc, r, key->nm_key, key->nm_len),
                  req);
}

/* ---- atomics by the device (TERN_REGION_ATOMIC_DEVICE) ---------------------- */

tern_status_t tern_rma_native_amo(tern_worker_t *w, tern_vc_t *vc, const tern_key_t *key,
                                  int aop, uint64_t value, uint64_t compare, void *result,
                                  uint64_t raddr, tern_request_t **req)
{
    const tern_netmod_inst_t *nm = vc->nm;
    if (key->nm_desc == NULL || nm->rma == NULL || nm->rma->amo == NULL ||
        nm->desc != key->nm_desc)
        return TERN_ERR_UNSUPPORTED;
    tern_status_t st = tern_rma_mark_dirty(w, vc, key->peer);
    if (st != TERN_OK)
        return st;
    tern_request_t *r = tern_request_alloc(w, TERN_REQ_RECV);
    if (r == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "atomic request");
    r->vc = vc;
    r->peer = r->match_src = key->peer;
    struct iovec iov = {.iov_base = result, .iov_len = result != NULL ? 8 : 0};
    r->msg_len = 8; /* its CQ entry's length, as the other paths report it */
    tern_request_bind_buffer(r, &iov, 1, NULL);
    r->remote_id = raddr;
    r->tag = key->id;
    /* the replay's mark, whether it fetches, and the operation */
    r->space = (uint16_t)(TERN_RMA_NATIVE_AMO | (result != NULL ? TERN_RMA_NATIVE_AMO_FETCH : 0) |
                          aop);
    r->data = value;
    r->match_tag = compare;
    r->flags |= TERN_REQF_USER;
    return posted(w, vc, r, nm->rma->amo(vc, r, key->nm_key, key->nm_len), req);
}

tern_status_t tern_rma_amo_local(tern_worker_t *w, const tern_region_t *r, uint64_t addr,
                                 int aop, uint64_t value, uint64_t compare, uint64_t *old)
{
    if (!(r->flags & TERN_REGION_ATOMIC_DEVICE) || r->nm == NULL || r->nm->rma->amo_local == NULL)
        return TERN_ERR_UNSUPPORTED;
    /* this worker's instance of that netmod (the registration is worker
     * 0's, on a protection domain all of them share); a worker that has
     * not opened it (it reaches no peer by it: a port's job) refuses:
     * never the CPU for a region whose atomics the device takes */
    for (int i = 0; i < w->num_netmods; i++) {
        tern_netmod_inst_t *n = &w->netmods[i];
        if (n->desc == r->nm->desc && n->initialized && n->state != NULL)
            return n->rma->amo_local(n->state, r->nm_h, addr, aop, value, compare, old);
    }
    return tern_error(TERN_ERR_UNREACHABLE,
                      "atomic on region %u: worker %d has not opened %s, whose device takes the "
                      "region's atomics (TERN_REGION_ATOMIC_DEVICE)",
                      r->index, w->index, r->nm->name);
}

/* r handed back: the engine's path takes it now (see the top). */
static void replay(tern_request_t *r)
{
    tern_worker_t *w = r->worker;
    tern_vc_t *vc = r->vc;
    w->rma_count[TERN_RMA_C_REPLAYED]++;
    vc->rma_pkts = true;
    tern_status_t st = tern_rma_mark_dirty(w, vc, r->peer);
    uint64_t region = r->tag;
    r->tag = 0;
    /* Held across the send, as the caller's with no CQ: a VC that fails
     * inside it (or a send that completes at once) completes r without
     * releasing it or writing its CQ entry; that is done below. */
    uint32_t keep = r->flags & (TERN_REQF_USER | TERN_REQF_CQ | TERN_REQF_CQ_ERRORS);
    r->flags = (r->flags & ~keep) | TERN_REQF_USER;
    if (st == TERN_OK && (r->space & TERN_RMA_NATIVE_AMO)) {
        /* an atomic: RMA_AMO, answered (the old value into r) when it fetches */
        int aop = r->space & 0xff;
        bool fetch = (r->space & TERN_RMA_NATIVE_AMO_FETCH) != 0;
        uint64_t ops[2] = {r->data, r->match_tag};
        r->space = 0;
        uint64_t id = fetch ? tern_lmt_track(vc, r) : 0;
        if (fetch && id == 0) {
            st = tern_error(TERN_ERR_NO_MEMORY, "atomic request id");
        } else {
            tern_pkt_hdr_t h = {.type = TERN_PKT_RMA_AMO, .flags = (uint8_t)aop, .space = 8,
                                .tag = r->remote_id, .rreq = region, .sreq = id,
                                .cookie_len = sizeof(ops)};
            st = tern_send_ctrl(vc, &h, ops, sizeof(ops));
            if (st >= 0 && id == 0)
                tern_request_complete(r, TERN_OK); /* no result: sent is done */
        }
    } else if (st == TERN_OK && r->kind == TERN_REQ_SEND) {
        tern_pkt_hdr_t h = {.type = TERN_PKT_RMA_PUT, .tag = r->remote_id, .len = r->msg_len,
                            .rreq = region};
        st = tern_send_noncontig(vc, r, &h, sizeof(h)); /* completes r when sent */
    } else if (st == TERN_OK) {
        uint64_t id = tern_lmt_track(vc, r); /* the answer names it; a failing VC completes it */
        if (id == 0) {
            st = tern_error(TERN_ERR_NO_MEMORY, "get request id");
        } else {
            tern_pkt_hdr_t h = {.type = TERN_PKT_RMA_GET, .tag = r->remote_id, .len = r->msg_len,
                                .rreq = region, .sreq = id};
            st = tern_send_ctrl(vc, &h, NULL, 0);
        }
    }
    r->flags = (r->flags & ~(uint32_t)TERN_REQF_USER) | keep;
    if (!(r->flags & TERN_REQF_COMPLETE)) {
        if (st < 0)
            tern_request_complete(r, st);
    } else if (keep & TERN_REQF_CQ) {
        tern_cq_complete(r); /* what its completion would have done: the entry, the release */
    }
}

void tern_rma_native_done(tern_request_t *r, tern_status_t st)
{
    if (st == TERN_ERR_AGAIN && r->vc->state == TERN_VC_ACTIVE)
        replay(r);
    else
        tern_request_complete(r, st == TERN_ERR_AGAIN ? TERN_ERR_PEER_FAILED : st);
}

/* ---- flush --------------------------------------------------------------------- */

bool tern_rma_native_flush(tern_worker_t *w, tern_request_t *f, tern_vc_t *vc)
{
    f->msg_len++;
    tern_request_t *p = tern_request_alloc(w, TERN_REQ_RMA_PART);
    if (p == NULL) {
        f->msg_len--;
        tern_error(TERN_ERR_NO_MEMORY, "flush part");
        if ((tern_status_t)(int64_t)f->data == TERN_OK)
            f->data = (uint64_t)(int64_t)TERN_ERR_NO_MEMORY;
        return true; /* not known to be done: the next flush asks again */
    }
    p->vc = vc;
    p->peer = vc->rank;
    p->context = f;
    p->data = (uint64_t)(int64_t)TERN_OK;
    /* a failed VC: its netmod let its operations go (they failed) */
    tern_status_t st = vc->state == TERN_VC_FAILED ? tern_vc_send_check(vc)
                                                    : vc->nm->rma->flush(vc, p);
    if (st == TERN_INPROGRESS)
        return true;
    tern_request_complete(p, st); /* counted in f now (internal: rma_request_done) */
    return false;
}

void tern_rma_native_flushed(tern_request_t *p, tern_status_t st, bool replayed)
{
    if (st < 0)
        p->data = (uint64_t)(int64_t)st;
    /* replayed operations went on an active VC's stream; a closing or failed
     * VC sends nothing more (its operations failed with it) */
    if (replayed && p->vc->state == TERN_VC_ACTIVE)
        tern_rma_flush_send(p->worker, p->vc, p);
    else
        tern_request_complete(p, p->vc->state != TERN_VC_ACTIVE && replayed
                                     ? TERN_ERR_PEER_FAILED
                                     : TERN_OK);
}
