/*
 * verbs netmod: one-sided operations by RDMA (engine/netmod.h, the rma
 * table; docs/rma.md "verbs").
 *
 * A region is registered once, with the protection domain every worker of
 * the process shares, for remote read and write as the region allows; its
 * key carries the rkey (tern_verbs_region_key_t).  A put is one RDMA WRITE (inline
 * when small, else from the buffer's registration in the engine's cache), a
 * get one RDMA READ: one ibv_post_send each, signaled, on the VC's RMA QP.
 * RC completes a WRITE once the responder has it, so an operation's
 * completion is its remote completion, and a flush waits for the
 * completions of what was posted before it (nothing is posted for it).
 *
 * The RMA QP is a second RC QP per VC, made and connected with the stream's
 * (the CM's REQ / REP carry its QPN and PSN).  A region destroyed at the
 * target deregisters its memory: an operation that reaches it then
 * completes with a remote access error and moves that QP (both ends of it)
 * to ERR, never the stream's.  That operation is refused with
 * TERN_ERR_REMOTE_ACCESS, as tern/rma.h says: a get by its request, a put
 * (whose request is its local completion) by the next flush; those
 * posted after it complete flushed, were not carried out, and go back to
 * the engine (TERN_ERR_AGAIN), which sends them as packets in the same
 * order; flush parts waiting then are answered "replayed".  From then on
 * the VC's one-sided operations take the engine's path.
 *
 * Atomics go by the device only on regions made with
 * TERN_REGION_ATOMIC_DEVICE (verbs_amo.c): a NIC atomic is atomic with the
 * CPU's only with IBV_ATOMIC_GLOB, so every atomic on such a region goes
 * through a device, the owner's included; the others' stay on the engine's
 * path (the target's CPU).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rcache.h"
#include "netmods/verbs/verbs_internal.h"

/* ---- regions ------------------------------------------------------------------- */

static tern_status_t rma_reg(void *state, void *addr, size_t len, unsigned access, void **h)
{
    tern_verbs_t *v = state;
    *h = NULL;
    if (!v->cfg->rma)
        return TERN_ERR_UNSUPPORTED;
    int flags = 0; /* a read-only region may be read-only memory: no local write */
    if (access & TERN_REGION_READ)
        flags |= IBV_ACCESS_REMOTE_READ;
    if (access & TERN_REGION_WRITE) /* remote write needs local write (verbs' rule) */
        flags |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    if ((access & TERN_REGION_ATOMIC_DEVICE) && tern_verbs_amo_ok(v))
        flags |= IBV_ACCESS_REMOTE_ATOMIC;
    tern_verbs_region_t *g = malloc(sizeof(*g));
    if (g == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "verbs region");
    g->mr = ibv_reg_mr(v->dev->pd, addr, len, flags);
    if (g->mr == NULL) {
        int e = errno;
        free(g);
        return tern_error(e == ENOMEM || e == EAGAIN ? TERN_ERR_NO_RESOURCE : TERN_ERR_IO,
                          "verbs %s: ibv_reg_mr of a region of %zu bytes at %p: %s",
                          v->dev->name, len, addr, strerror(e));
    }
    g->amo = (flags & IBV_ACCESS_REMOTE_ATOMIC) != 0;
    *h = g;
    return TERN_OK;
}

static void rma_dereg(void *state, void *h)
{
    tern_verbs_region_t *g = h;
    tern_verbs_mr_dereg(state, g->mr);
    free(g);
}

static tern_status_t rma_pack(void *state, void *h, void *buf, size_t *len)
{
    (void)state;
    const tern_verbs_region_t *g = h;
    tern_verbs_region_key_t k = {.version = TERN_VERBS_REGION_KEY_VERSION,
                                 .flags = g->amo ? TERN_VERBS_KEY_AMO : 0,
                                 .rkey = g->mr->rkey};
    if (*len < sizeof(k))
        return TERN_ERR_TRUNCATED;
    memcpy(buf, &k, sizeof(k));
    *len = sizeof(k);
    return TERN_OK;
}

/* ---- operations ---------------------------------------------------------------- */

static void rop_release(tern_verbs_rop_t *o)
{
    /* no cache any more (finalize after a VC failed): it deregistered all */
    if (o->region != NULL && o->inst->rcache != NULL) {
        tern_mem_t m = {o->inst, o->region};
        tern_mem_put(&m);
    }
    o->inst = NULL;
    o->region = NULL;
}

/* The RMA QP failed (why): ERR (its remaining work completes flushed, the
 * peer's end follows), operations from now on by the engine's path. */
void tern_verbs_rma_down(tern_verbs_vc_t *tv, const char *why)
{
    if (!tv->rma_up || tv->rqp == NULL)
        return;
    tv->rma_up = false;
    tv->v->stats.rma_failed++;
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
    (void)ibv_modify_qp(tv->rqp, &a, IBV_QP_STATE);
    tern_debug("verbs %s: the one-sided QP %u to rank %d failed (%s): its operations go by "
               "packets from now on", tv->v->dev->name, tv->rqp->qp_num, tv->vc->rank, why);
}

static tern_status_t rma_post(tern_vc_t *vc, tern_request_t *r, const void *kb, size_t klen,
                              bool write)
{
    tern_verbs_vc_t *tv = tern_verbs_vc(vc);
    tern_verbs_region_key_t k;
    if (tv == NULL || !tv->rma_up || klen != sizeof(k))
        return TERN_ERR_UNSUPPORTED;
    tern_verbs_t *v = tv->v;
    uint64_t depth = v->cfg->tx_depth;
    memcpy(&k, kb, sizeof(k));
    size_t len = r->msg_len;
    /* atomics waiting: a put or get posted now would take a seq a flush
     * counted for them (a put or get is ordered with nothing: packets) */
    if (tv->namo_pend != 0 || k.version != TERN_VERBS_REGION_KEY_VERSION ||
        len > v->dev->port_attr.max_msg_sz ||
        tv->rhead - tv->rtail >= depth - 1 ||
        v->scq_outstanding >= v->scq_size - TERN_VERBS_SCQ_RESERVE)
        return TERN_ERR_UNSUPPORTED; /* a full queue: the engine's path meanwhile */
    void *buf = r->cur.iov[0].iov_base;
    struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = (uint32_t)len};
    struct ibv_send_wr wr = {.wr_id = TERN_VERBS_WR(WR_RMA, tv->rhead),
                             .sg_list = &sge, .num_sge = len != 0,
                             .opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
                             .send_flags = IBV_SEND_SIGNALED,
                             .wr.rdma = {.remote_addr = r->remote_id, .rkey = k.rkey}},
                       *bad = NULL;
    tern_mem_t m = {NULL, NULL};
    if (write && len <= v->rma_inline) {
        wr.send_flags |= IBV_SEND_INLINE;
    } else if (len != 0) {
        if (tern_mem_get(vc, buf, len, &m) != TERN_OK)
            return TERN_ERR_UNSUPPORTED; /* unregistrable: the engine's path copies it */
        sge.lkey = ((struct ibv_mr *)m.region->handle)->lkey;
    }
    v->stats.post_send++;
    v->stats.post_send_wrs++;
    v->stats.rma_posts++;
    int rc = ibv_post_send(tv->rqp, &wr, &bad);
    if (rc != 0) {
        tern_verbs_rop_t o = {NULL, m.inst, m.region};
        rop_release(&o);
        /* the room was checked above: a refusal, the QP is unusable */
        tern_verbs_rma_down(tv, tern_verbs_post_refused(rc));
        return TERN_ERR_UNSUPPORTED; /* the engine's path takes it */
    }
    tv->rops[tv->rhead % depth] = (tern_verbs_rop_t){r, m.inst, m.region};
    tv->rhead++;
    v->scq_outstanding++;
    v->rma_inflight++;
    return TERN_INPROGRESS;
}

static tern_status_t rma_put(tern_vc_t *vc, tern_request_t *r, const void *kb, size_t klen)
{
    return rma_post(vc, r, kb, klen, true);
}

static tern_status_t rma_get(tern_vc_t *vc, tern_request_t *r, const void *kb, size_t klen)
{
    return rma_post(vc, r, kb, klen, false);
}

static tern_status_t rma_flush(tern_vc_t *vc, tern_request_t *p)
{
    tern_verbs_vc_t *tv = tern_verbs_vc(vc);
    if (tv == NULL || (tv->rhead == tv->rtail && tv->namo_pend == 0)) {
        tern_status_t st = tv != NULL ? tv->rma_err : TERN_OK;
        if (tv != NULL)
            tv->rma_err = TERN_OK; /* reported once */
        return st;
    }
    if (tv->nrflush == tv->rflush_cap) {
        uint32_t cap = tv->rflush_cap ? 2 * tv->rflush_cap : 8;
        tern_verbs_rflush_t *n = realloc(tv->rflush, cap * sizeof(*n));
        if (n == NULL)
            return tern_error(TERN_ERR_NO_MEMORY, "verbs flush list");
        tv->rflush = n;
        tv->rflush_cap = cap;
    }
    /* the atomics waiting get the next seqs when posted (replayed instead:
     * the QP failed, and every part is answered once they have gone) */
    tv->rflush[tv->nrflush++] = (tern_verbs_rflush_t){tv->rhead + tv->namo_pend, p};
    return TERN_INPROGRESS;
}

const tern_nm_rma_ops_t tern_verbs_rma_ops = {
    .reg = rma_reg,
    .dereg = rma_dereg,
    .pack = rma_pack,
    .put = rma_put,
    .get = rma_get,
    .flush = rma_flush,
    .amo = tern_verbs_amo,
    .amo_local = tern_verbs_amo_local,
};

/* ---- completions and failure ---------------------------------------------------- */

/* Flush parts whose operations have all completed (all: every one).
 * Each is taken off the list before it is answered: answering may send
 * (a replayed part's RMA_FLUSH), and a VC failing in that send comes back
 * here through tern_verbs_rma_fail. */
void tern_verbs_rma_parts_done(tern_verbs_vc_t *tv, bool all, bool replayed)
{
    while (tv->nrflush > 0 && (all || tv->rflush[0].seq <= tv->rtail)) {
        tern_request_t *p = tv->rflush[0].part;
        memmove(tv->rflush, tv->rflush + 1, (tv->nrflush - 1) * sizeof(*tv->rflush));
        tv->nrflush--;
        tern_status_t st = tv->rma_err;
        tv->rma_err = TERN_OK;
        /* the QP failed: what it handed back goes as packets, the part after them */
        tern_rma_native_flushed(p, st, replayed);
    }
}

void tern_verbs_rma_wc(tern_verbs_vc_t *tv, const struct ibv_wc *wc)
{
    tern_verbs_t *v = tv->v;
    uint64_t seq = TERN_VERBS_WR_VAL(wc->wr_id);
    if (tv->rops == NULL || seq < tv->rtail || seq >= tv->rhead)
        return;
    tern_verbs_rop_t *o = &tv->rops[seq % v->cfg->tx_depth];
    tern_request_t *r = o->req;
    bool amo = r != NULL && (r->space & TERN_RMA_NATIVE_AMO);
    if (amo && wc->status == IBV_WC_SUCCESS && (r->space & TERN_RMA_NATIVE_AMO_FETCH))
        tern_cursor_unpack(&r->cur, &tv->amo_res[seq % v->cfg->tx_depth], 8);
    rop_release(o);
    o->req = NULL;
    tv->rtail = seq + 1; /* every one is signaled: they come one by one, in order */
    v->scq_outstanding--;
    v->rma_inflight--;
    if (wc->status != IBV_WC_SUCCESS) {
        if (tv->rma_up) /* the first failure: ours refused (a NAK), or anything else */
            tv->amo_safe = wc->status == IBV_WC_REM_ACCESS_ERR;
        tern_verbs_rma_down(tv, ibv_wc_status_str(wc->status));
    }
    if (r != NULL) {
        tern_status_t st = TERN_OK;
        if (wc->status == IBV_WC_REM_ACCESS_ERR) {
            st = tern_error(TERN_ERR_REMOTE_ACCESS,
                            "verbs %s: rank %d's device refused a one-sided %s of %zu bytes at "
                            "%#llx (remote access error: the region is destroyed)",
                            v->dev->name, tv->vc->rank,
                            amo ? "atomic" : r->kind == TERN_REQ_SEND ? "write" : "read",
                            r->msg_len, (unsigned long long)r->remote_id);
            /* a put, or an atomic with no result: done here, refused there */
            if (r->kind == TERN_REQ_SEND || (amo && !(r->space & TERN_RMA_NATIVE_AMO_FETCH))) {
                if (tv->rma_err == TERN_OK)
                    tv->rma_err = st;
                st = TERN_OK;
            }
        } else if (wc->status != IBV_WC_SUCCESS && amo && !tv->amo_safe) {
            /* the QP failed for another reason (the peer's operation refused
             * here, retries exhausted): the responder may have executed
             * it, and an atomic must not be applied twice */
            st = tern_error(TERN_ERR_IO,
                            "verbs %s: a device atomic to rank %d at %#llx: its outcome is "
                            "unknown (%s: the one-sided QP failed while it was in flight)",
                            v->dev->name, tv->vc->rank, (unsigned long long)r->remote_id,
                            ibv_wc_status_str(wc->status));
        } else if (wc->status != IBV_WC_SUCCESS) {
            st = TERN_ERR_AGAIN; /* not carried out: the engine sends it */
        }
        tern_rma_native_done(r, st);
    }
    tern_verbs_rma_parts_done(tv, false, !tv->rma_up);
    if (tv->namo_pend != 0)
        tern_verbs_amo_drain(tv); /* room now, or the failed QP has drained */
}

void tern_verbs_rma_fail(tern_verbs_vc_t *tv, tern_status_t st)
{
    tv->rma_up = false;
    for (uint64_t s = tv->rtail; tv->rops != NULL && s != tv->rhead; s++) {
        tern_verbs_rop_t *o = &tv->rops[s % tv->v->cfg->tx_depth];
        tern_request_t *r = o->req;
        o->req = NULL; /* its completion, when it comes, gives the slot back */
        rop_release(o); /* the QP is in ERR (retired): the device touches no buffer */
        if (r != NULL)
            tern_rma_native_done(r, st);
    }
    /* never posted: the engine sends them (a live VC), else they fail */
    tern_verbs_amo_fail(tv, tv->vc->state == TERN_VC_ACTIVE ? TERN_ERR_AGAIN : st);
    tern_verbs_rma_parts_done(tv, true, !tv->rma_up);
}

/* ---- the QP ---------------------------------------------------------------------- */

void tern_verbs_rma_create(tern_verbs_vc_t *tv)
{
    tern_verbs_t *v = tv->v;
    if (!v->cfg->rma || tv->rqp != NULL)
        return;
    struct ibv_qp_init_attr ia = {
        .send_cq = v->scq, .recv_cq = v->rcq, .qp_type = IBV_QPT_RC, .sq_sig_all = 1,
        .cap = {.max_send_wr = (uint32_t)v->cfg->tx_depth, .max_send_sge = 1, .max_recv_wr = 1,
                .max_recv_sge = 1, .max_inline_data = v->max_inline},
    };
    struct ibv_qp *qp = ibv_create_qp(v->dev->pd, &ia);
    if (qp == NULL) {
        tern_debug("verbs %s: no one-sided QP for rank %d (ibv_create_qp: %s): packets carry "
                   "its one-sided operations", v->dev->name, tv->vc->rank, strerror(errno));
        return;
    }
    if (ia.cap.max_send_wr < v->cfg->tx_depth) { /* the accounting assumes the whole depth */
        tern_debug("verbs %s: the one-sided QP for rank %d got %u work requests (%llu asked): "
                   "packets carry its one-sided operations", v->dev->name, tv->vc->rank,
                   ia.cap.max_send_wr, (unsigned long long)v->cfg->tx_depth);
        ibv_destroy_qp(qp);
        return;
    }
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = v->dev->port,
                            .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
                                               IBV_ACCESS_REMOTE_WRITE |
                                               (tern_verbs_amo_ok(v) ? IBV_ACCESS_REMOTE_ATOMIC
                                                                     : 0)};
    tv->rops = calloc(v->cfg->tx_depth, sizeof(*tv->rops));
    if (tv->rops == NULL ||
        ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                  IBV_QP_ACCESS_FLAGS) != 0 ||
        tern_verbs_qpn_put(&v->qpns, qp->qp_num, tv) != TERN_OK) {
        free(tv->rops);
        tv->rops = NULL;
        ibv_destroy_qp(qp);
        return;
    }
    if (ia.cap.max_inline_data < v->rma_inline || !v->rma_inline_known) {
        v->rma_inline = ia.cap.max_inline_data;
        v->rma_inline_known = true;
    }
    tv->rqp = qp;
    tv->rhead = tv->rtail = 0;
    tv->rpsn = (tv->psn + 0x800000u) & 0xffffffu;
}

void tern_verbs_rma_drop(tern_verbs_vc_t *tv)
{
    tern_verbs_t *v = tv->v;
    if (tv->rqp == NULL) { /* never had one: atomics that waited for it go (or fail) now */
        tern_verbs_amo_fail(tv, tv->vc->state == TERN_VC_ACTIVE ? TERN_ERR_AGAIN
                                                                : TERN_ERR_PEER_FAILED);
        return;
    }
    tern_verbs_rma_fail(tv, TERN_ERR_PEER_FAILED);
    tv->rma_err = TERN_OK;
    if (tv->rqp == NULL)
        return; /* the VC failed in a replay above, and dropped it already */
    tern_verbs_qpn_del(v->qpns, tv->rqp->qp_num);
    ibv_destroy_qp(tv->rqp);
    tv->rqp = NULL;
    for (uint64_t s = tv->rtail; s != tv->rhead; s++)
        rop_release(&tv->rops[s % v->cfg->tx_depth]);
    v->scq_outstanding -= (uint32_t)(tv->rhead - tv->rtail);
    v->rma_inflight -= (uint32_t)(tv->rhead - tv->rtail);
    tv->rtail = tv->rhead;
    free(tv->rops);
    tv->rops = NULL;
    free(tv->rflush);
    tv->rflush = NULL;
    tv->nrflush = tv->rflush_cap = 0;
    tern_verbs_amo_free(tv);
}
