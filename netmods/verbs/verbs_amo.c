/*
 * verbs netmod: atomics by the device, for regions made with
 * TERN_REGION_ATOMIC_DEVICE (include/tern/rma.h; engine/netmod.h, the rma
 * table's amo and amo_local).
 *
 * A NIC's atomics are atomic against the CPU's only where the device says
 * IBV_ATOMIC_GLOB (mlx5 and tests/ibloop say IBV_ATOMIC_HCA: against the
 * device's own).  So every atomic on such a region goes through a device:
 * a peer's as one RDMA fetch-and-add or compare-and-swap on the VC's RMA
 * QP (verbs_rma.c), the owner's own, and those peers sent as packets, on a
 * QP the owner's worker connects to itself (the loopback QP), waited for
 * there.  Only 8-byte fetch-and-add and compare-and-swap exist in verbs;
 * the engine refuses the rest on such a region.
 *
 * Order: atomics from one worker on one key are applied in the order they
 * were started (tern/rma.h).  On the RMA QP, RC executes them in posting
 * order; one that cannot be posted now (the connection is not up yet, the
 * queue or the send CQ is full, or the QP failed and is still handing back
 * what it held) waits in amo_pend and every later one queues behind it;
 * the poll posts them as room comes.  A failed QP's atomics, those it
 * handed back and those waiting, go to the engine in that order (packets,
 * applied by the owner through its device): never one overtaking another.
 * Only those known not to have been executed go again: the ones never
 * posted, and those flushed behind a refusal of ours (RC's responder
 * executes nothing after the NAK).  After any other failure an atomic in
 * flight may have been applied: it fails (TERN_ERR_IO), never twice.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "netmods/verbs/verbs_internal.h"

/* The region key's rkey, kept in the request while it waits. */
typedef struct amo_nm {
    uint32_t rkey;
} amo_nm_t;

bool tern_verbs_amo_ok(const tern_verbs_t *v)
{
    return v->cfg->rma && v->cfg->amo && v->dev->attr.atomic_cap != IBV_ATOMIC_NONE;
}

/* ---- the origin: the VC's RMA QP ----------------------------------------------- */

/* The registered words of the VC's atomics' old values, made at its first
 * atomic (once: a failure keeps its atomics on packets for good). */
static void setup(tern_verbs_vc_t *tv)
{
    tern_verbs_t *v = tv->v;
    tv->amo_tried = true;
    size_t len = v->cfg->tx_depth * sizeof(uint64_t);
    tv->amo_res = calloc(v->cfg->tx_depth, sizeof(uint64_t));
    if (tv->amo_res != NULL)
        tv->amo_mr = ibv_reg_mr(v->dev->pd, tv->amo_res, len, IBV_ACCESS_LOCAL_WRITE);
    if (tv->amo_mr == NULL) {
        tern_debug("verbs %s: no registered words for device atomics to rank %d: packets carry "
                   "them",
                   v->dev->name, tv->vc->rank);
        free(tv->amo_res);
        tv->amo_res = NULL;
    }
}

void tern_verbs_amo_free(tern_verbs_vc_t *tv)
{
    if (tv->amo_mr != NULL)
        tern_verbs_mr_dereg(tv->v, tv->amo_mr);
    tv->amo_mr = NULL;
    free(tv->amo_res);
    tv->amo_res = NULL;
}

static bool room(const tern_verbs_vc_t *tv)
{
    const tern_verbs_t *v = tv->v;
    return tv->rhead - tv->rtail < v->cfg->tx_depth - 1 &&
           v->scq_outstanding < v->scq_size - TERN_VERBS_SCQ_RESERVE;
}

/* Post r on the RMA QP (room() checked): 0, or ibv_post_send's error, a
 * refusal that takes the QP down (tern_verbs_post_refused). */
static int post(tern_verbs_vc_t *tv, tern_request_t *r)
{
    tern_verbs_t *v = tv->v;
    uint64_t seq = tv->rhead, depth = v->cfg->tx_depth;
    int op = r->space & 0xff;
    struct ibv_sge sge = {.addr = (uintptr_t)&tv->amo_res[seq % depth], .length = 8,
                          .lkey = tv->amo_mr->lkey};
    struct ibv_send_wr wr = {.wr_id = TERN_VERBS_WR(WR_RMA, seq),
                             .sg_list = &sge, .num_sge = 1,
                             .opcode = op == TERN_AMO_ADD ? IBV_WR_ATOMIC_FETCH_AND_ADD
                                                          : IBV_WR_ATOMIC_CMP_AND_SWP,
                             .send_flags = IBV_SEND_SIGNALED,
                             .wr.atomic = {.remote_addr = r->remote_id,
                                           .compare_add = op == TERN_AMO_ADD ? r->data
                                                                             : r->match_tag,
                                           .swap = r->data,
                                           .rkey = TERN_REQ_NM(r, amo_nm_t)->rkey}},
                       *bad = NULL;
    v->stats.post_send++;
    v->stats.post_send_wrs++;
    v->stats.amo_posts++;
    int rc = ibv_post_send(tv->rqp, &wr, &bad);
    if (rc != 0) {
        tern_verbs_rma_down(tv, tern_verbs_post_refused(rc));
        return rc;
    }
    tv->rops[seq % depth] = (tern_verbs_rop_t){r, NULL, NULL};
    tv->rhead++;
    v->scq_outstanding++;
    v->rma_inflight++;
    return 0;
}

static void pend(tern_verbs_vc_t *tv, tern_request_t *r, bool front)
{
    if (front)
        tern_list_push_head(&tv->amo_pend, &r->link);
    else
        tern_list_push_tail(&tv->amo_pend, &r->link);
    tv->namo_pend++;
    tv->v->amo_parked++;
}

static tern_request_t *unpend(tern_verbs_vc_t *tv)
{
    tern_request_t *r = TERN_CONTAINER_OF(tv->amo_pend.next, tern_request_t, link);
    tern_list_del(&r->link);
    tv->namo_pend--;
    tv->v->amo_parked--;
    return r;
}

/* Is the VC's RMA QP settled: connected and up, or known to be absent or
 * failed?  Before that an atomic waits (it must not go as a packet and
 * then be overtaken by a later one on the QP). */
static bool settled(const tern_verbs_vc_t *tv)
{
    return tv->conn == VC_CONNECTED || tv->conn == VC_DEAD;
}

tern_status_t tern_verbs_amo(tern_vc_t *vc, tern_request_t *r, const void *kb, size_t klen)
{
    tern_verbs_vc_t *tv = tern_verbs_vc(vc);
    tern_verbs_region_key_t k;
    if (tv == NULL || klen != sizeof(k) || !tern_verbs_amo_ok(tv->v))
        return TERN_ERR_UNSUPPORTED;
    memcpy(&k, kb, sizeof(k));
    /* the owner's device does atomics too (its key says so): else its CPU */
    if (k.version != TERN_VERBS_REGION_KEY_VERSION || !(k.flags & TERN_VERBS_KEY_AMO))
        return TERN_ERR_UNSUPPORTED;
    TERN_REQ_NM(r, amo_nm_t)->rkey = k.rkey;
    if (!settled(tv)) {
        if (tv->conn == VC_IDLE) { /* its first traffic: connect now */
            tern_status_t st = tern_verbs_connect(tv);
            if (st != TERN_OK)
                return st;
        }
        pend(tv, r, false); /* the connection decides: the QP, or packets */
        return TERN_INPROGRESS;
    }
    if (tv->rqp != NULL && tv->rma_up && !tv->amo_tried)
        setup(tv);
    bool usable = tv->rqp != NULL && tv->rma_up && tv->amo_mr != NULL;
    /* nothing of ours on the QP, nothing waiting, and no QP to use: packets
     * from now on, in order */
    if (!usable && tv->rtail == tv->rhead && tv->namo_pend == 0)
        return TERN_ERR_UNSUPPORTED;
    if (!usable || tv->namo_pend != 0 || !room(tv)) {
        pend(tv, r, false); /* behind what went before it */
        return TERN_INPROGRESS;
    }
    int rc = post(tv, r);
    if (rc == 0)
        return TERN_INPROGRESS;
    if (tv->rtail == tv->rhead)
        return TERN_ERR_UNSUPPORTED; /* the QP went down with nothing on it */
    pend(tv, r, false);
    return TERN_INPROGRESS;
}

void tern_verbs_amo_drain(tern_verbs_vc_t *tv)
{
    if (tv->namo_pend == 0 || !settled(tv))
        return;
    if (tv->rqp != NULL && tv->rma_up && !tv->amo_tried)
        setup(tv);
    bool handed = false;
    while (tv->namo_pend != 0) {
        if (tv->rqp != NULL && tv->rma_up && tv->amo_mr != NULL) {
            if (!room(tv))
                return;
            tern_request_t *r = unpend(tv);
            int rc = post(tv, r);
            if (rc == 0)
                continue;
            pend(tv, r, true);
            /* down now: handed back below once what it holds has come back */
        }
        if (tv->rtail != tv->rhead)
            return;
        /* no QP to use, and it holds nothing of ours: these go after, never
         * posted (a live VC's go as packets, a failed one's fail) */
        tern_rma_native_done(unpend(tv), TERN_ERR_AGAIN);
        handed = true;
    }
    /* parts that counted them (and all the QP held: it is drained) answer
     * behind the replays, whether the QP failed or never took atomics */
    if (handed)
        tern_verbs_rma_parts_done(tv, true, true);
}

static void drain_vc(tern_verbs_vc_t *tv)
{
    if (tv->namo_pend != 0)
        tern_verbs_amo_drain(tv);
}

void tern_verbs_amo_drain_all(tern_verbs_t *v)
{
    for (int r = 0; v->vcs != NULL && r < v->ctx->size && v->amo_parked != 0; r++)
        drain_vc(&v->vcs[r]);
    for (int i = 0; i < v->nremote && v->amo_parked != 0; i++)
        drain_vc(v->remote[i]);
}

void tern_verbs_amo_fail(tern_verbs_vc_t *tv, tern_status_t st)
{
    while (tv->namo_pend != 0)
        tern_rma_native_done(unpend(tv), st);
    if (st == TERN_ERR_AGAIN) /* replayed: parts counting them answer behind */
        tern_verbs_rma_parts_done(tv, true, true);
}

/* ---- the owner: a QP to itself ------------------------------------------------- */

void tern_verbs_lb_close(tern_verbs_t *v)
{
    if (v->lb_qp != NULL)
        ibv_destroy_qp(v->lb_qp);
    if (v->lb_cq != NULL)
        ibv_destroy_cq(v->lb_cq);
    if (v->lb_mr != NULL)
        tern_verbs_mr_dereg(v, v->lb_mr);
    v->lb_qp = NULL;
    v->lb_cq = NULL;
    v->lb_mr = NULL;
}

static tern_status_t lb_open(tern_verbs_t *v)
{
    const tern_verbs_config_t *cfg = v->cfg;
    v->lb_cq = ibv_create_cq(v->dev->ctx, 4, NULL, NULL, 0);
    v->lb_mr = ibv_reg_mr(v->dev->pd, &v->lb_res, sizeof(v->lb_res), IBV_ACCESS_LOCAL_WRITE);
    if (v->lb_cq == NULL || v->lb_mr == NULL)
        goto fail;
    struct ibv_qp_init_attr ia = {.send_cq = v->lb_cq, .recv_cq = v->lb_cq,
                                  .qp_type = IBV_QPT_RC, .sq_sig_all = 1,
                                  .cap = {.max_send_wr = 2, .max_recv_wr = 1, .max_send_sge = 1,
                                          .max_recv_sge = 1}};
    v->lb_qp = ibv_create_qp(v->dev->pd, &ia);
    if (v->lb_qp == NULL)
        goto fail;
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = v->dev->port,
                            .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC};
    if (ibv_modify_qp(v->lb_qp, &a,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
        goto fail;
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = v->dev->port_attr.active_mtu,
                             .dest_qp_num = v->lb_qp->qp_num, .rq_psn = 0,
                             .max_dest_rd_atomic = 1, .min_rnr_timer = 12};
    tern_verbs_fill_ah(v, &v->card, &a.ah_attr);
    if (ibv_modify_qp(v->lb_qp, &a,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                          IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
        goto fail;
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = (uint8_t)cfg->timeout,
                             .retry_cnt = (uint8_t)cfg->retry_cnt,
                             .rnr_retry = (uint8_t)cfg->rnr_retry, .sq_psn = 0,
                             .max_rd_atomic = 1};
    if (ibv_modify_qp(v->lb_qp, &a,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                          IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0)
        goto fail;
    return TERN_OK;
fail:;
    int e = errno;
    tern_verbs_lb_close(v);
    return tern_error(TERN_ERR_IO, "verbs %s: the loopback QP of device atomics: %s",
                      v->dev->name, strerror(e));
}

tern_status_t tern_verbs_amo_local(void *state, void *h, uint64_t addr, int op, uint64_t value,
                                   uint64_t compare, uint64_t *old)
{
    tern_verbs_t *v = state;
    const tern_verbs_region_t *g = h;
    /* the region's registration says (its remote atomic access): a property
     * of the region and the device, the same for every atomic on it */
    if (!g->amo)
        return TERN_ERR_UNSUPPORTED;
    if (v->lb_qp == NULL) {
        tern_status_t st = lb_open(v);
        if (st != TERN_OK)
            return st; /* never the CPU: the peers' atomics are the device's */
    }
    struct ibv_sge sge = {.addr = (uintptr_t)&v->lb_res, .length = 8, .lkey = v->lb_mr->lkey};
    struct ibv_send_wr wr = {.wr_id = 0, .sg_list = &sge, .num_sge = 1,
                             .opcode = op == TERN_AMO_ADD ? IBV_WR_ATOMIC_FETCH_AND_ADD
                                                          : IBV_WR_ATOMIC_CMP_AND_SWP,
                             .send_flags = IBV_SEND_SIGNALED,
                             .wr.atomic = {.remote_addr = addr,
                                           .compare_add = op == TERN_AMO_ADD ? value : compare,
                                           .swap = value, .rkey = g->mr->rkey}},
                       *bad = NULL;
    v->stats.post_send++;
    v->stats.post_send_wrs++;
    v->stats.amo_local++;
    int rc = ibv_post_send(v->lb_qp, &wr, &bad);
    if (rc != 0) {
        tern_verbs_lb_close(v); /* a fresh one next time */
        return tern_error(TERN_ERR_IO, "verbs %s: ibv_post_send of a device atomic: %s",
                          v->dev->name, strerror(rc));
    }
    /* the device answers every work request (an error at worst, after its
     * retries): waited for here, the region held by the caller */
    struct ibv_wc wc;
    int n;
    for (unsigned spins = 0; (n = ibv_poll_cq(v->lb_cq, 1, &wc)) == 0; spins++)
        if (spins > 64)
            sched_yield();
    if (n < 0 || wc.status != IBV_WC_SUCCESS) {
        tern_verbs_lb_close(v);
        return tern_error(TERN_ERR_IO, "verbs %s: a device atomic on this process's region at "
                                       "%#llx: %s",
                          v->dev->name, (unsigned long long)addr,
                          n < 0 ? "ibv_poll_cq failed" : ibv_wc_status_str(wc.status));
    }
    *old = v->lb_res;
    return TERN_OK;
}
