/*
 * ibloop's own tests: endpoints (device, PD, CQs, SRQ, QP), connection
 * set-up, posting helpers and bounded waits for completions.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ibloop_test.h"

uint64_t now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

void fill_pattern(void *p, size_t n, uint32_t seed)
{
    uint8_t *b = p;

    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)((i * 2654435761u + seed) >> 13);
}

size_t check_pattern(const void *p, size_t n, uint32_t seed)
{
    const uint8_t *b = p;

    for (size_t i = 0; i < n; i++)
        if (b[i] != (uint8_t)((i * 2654435761u + seed) >> 13))
            return i;
    return n;
}

int ep_open(struct ep *e, const struct ep_opts *o)
{
    static const struct ep_opts dflt;
    struct ibv_device **list;
    int n = 0;

    if (!o)
        o = &dflt;
    memset(e, 0, sizeof(*e));
    list = ibv_get_device_list(&n);
    CHECK(list && n >= 1, "no verbs device (%s)", strerror(errno));
    e->ctx = ibv_open_device(list[0]);
    ibv_free_device_list(list);
    CHECK(e->ctx, "ibv_open_device: %s", strerror(errno));
    CHECK(ibv_query_port(e->ctx, 1, &e->port) == 0, "ibv_query_port");
    e->roce = e->port.link_layer == IBV_LINK_LAYER_ETHERNET;
    e->gid_index = e->roce ? 1 : 0;
    CHECK(ibv_query_gid(e->ctx, 1, e->gid_index, &e->gid) == 0, "ibv_query_gid");
    e->psn = ((uint32_t)getpid() * 2654435761u) & 0xffffff;
    e->pd = ibv_alloc_pd(e->ctx);
    CHECK(e->pd, "ibv_alloc_pd");
    if (o->channel) {
        e->ch = ibv_create_comp_channel(e->ctx);
        CHECK(e->ch, "ibv_create_comp_channel: %s", strerror(errno));
    }
    e->scq = ibv_create_cq(e->ctx, o->cqe ? o->cqe : 256, e, e->ch, 0);
    e->rcq = ibv_create_cq(e->ctx, o->cqe ? o->cqe : 256, e, e->ch, 0);
    CHECK(e->scq && e->rcq, "ibv_create_cq: %s", strerror(errno));
    if (o->srq) {
        struct ibv_srq_init_attr sa = {.attr = {.max_wr = o->recv_wr ? o->recv_wr : 256,
                                                .max_sge = o->recv_sge ? o->recv_sge : 1}};
        e->srq = ibv_create_srq(e->pd, &sa);
        CHECK(e->srq, "ibv_create_srq: %s", strerror(errno));
    }
    e->ia.send_cq = e->scq;
    e->ia.recv_cq = e->rcq;
    e->ia.srq = e->srq;
    e->ia.qp_type = o->type ? o->type : IBV_QPT_RC;
    e->ia.sq_sig_all = o->sig_all;
    e->ia.cap.max_send_wr = o->send_wr ? o->send_wr : 256;
    e->ia.cap.max_recv_wr = o->srq ? 0 : o->recv_wr ? o->recv_wr : 256;
    e->ia.cap.max_send_sge = o->send_sge ? o->send_sge : 1;
    e->ia.cap.max_recv_sge = o->srq ? 0 : o->recv_sge ? o->recv_sge : 1;
    e->ia.cap.max_inline_data = o->inline_data;
    e->qp = ibv_create_qp(e->pd, &e->ia);
    CHECK(e->qp, "ibv_create_qp: %s", strerror(errno));
    if (e->ia.qp_type == IBV_QPT_RC) {
        struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1,
                                .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
                                                   IBV_ACCESS_REMOTE_READ |
                                                   IBV_ACCESS_REMOTE_ATOMIC};
        int rc = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                              IBV_QP_ACCESS_FLAGS);
        CHECK(rc == 0, "modify to INIT: %s", strerror(rc));
    } else {
        struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1,
                                .qkey = 0x11111111};
        int rc = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                              IBV_QP_QKEY);
        CHECK(rc == 0, "modify UD to INIT: %s", strerror(rc));
    }
    return 0;
}

void ep_close(struct ep *e)
{
    if (e->qp)
        ibv_destroy_qp(e->qp);
    if (e->srq)
        ibv_destroy_srq(e->srq);
    if (e->scq)
        ibv_destroy_cq(e->scq);
    if (e->rcq)
        ibv_destroy_cq(e->rcq);
    if (e->ch)
        ibv_destroy_comp_channel(e->ch);
    if (e->pd)
        ibv_dealloc_pd(e->pd);
    if (e->ctx)
        ibv_close_device(e->ctx);
    memset(e, 0, sizeof(*e));
}

void ep_info(const struct ep *e, struct xinfo *x)
{
    memset(x, 0, sizeof(*x));
    x->lid = e->port.lid;
    x->qpn = e->qp ? e->qp->qp_num : 0;
    x->psn = e->psn;
    memcpy(x->gid, e->gid.raw, 16);
}

int ep_exchange(struct ep *e, struct xinfo *mine, struct xinfo *peer)
{
    struct xinfo tmp;

    if (!mine) {
        mine = &tmp;
        ep_info(e, mine);
    }
    TRY(xsend(mine, sizeof(*mine)));
    return xrecv(peer, sizeof(*peer), 20000);
}

static void fill_av(const struct ep *e, const struct xinfo *peer, struct ibv_ah_attr *ah)
{
    memset(ah, 0, sizeof(*ah));
    ah->dlid = (uint16_t)peer->lid;
    ah->port_num = 1;
    if (e->roce) {
        ah->is_global = 1;
        memcpy(ah->grh.dgid.raw, peer->gid, 16);
        ah->grh.sgid_index = (uint8_t)e->gid_index;
        ah->grh.hop_limit = 1;
    }
}

int ep_rc_connect(struct ep *e, const struct xinfo *peer, const struct rc_opts *o)
{
    struct rc_opts d = {.access = -1, .min_rnr_timer = 1, .rnr_retry = 7, .timeout = 14,
                        .retry_cnt = 7, .max_rd_atomic = 4};
    struct ibv_qp_attr a;
    int rc;

    if (o && o->set)
        d = *o;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    {
        struct ibv_port_attr pa;
        CHECK(ibv_query_port(e->ctx, 1, &pa) == 0, "query port");
        a.path_mtu = pa.active_mtu; /* 4096 like mlx5, 1024 like rxe */
    }
    a.dest_qp_num = peer->qpn;
    a.rq_psn = peer->psn;
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = d.min_rnr_timer;
    fill_av(e, peer, &a.ah_attr);
    rc = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    CHECK(rc == 0, "modify to RTR: %s", strerror(rc));
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.timeout = d.timeout;
    a.retry_cnt = d.retry_cnt;
    a.rnr_retry = d.rnr_retry;
    a.sq_psn = e->psn;
    a.max_rd_atomic = d.max_rd_atomic;
    a.qp_access_flags = d.access >= 0 ? (unsigned)d.access : 0;
    rc = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                      IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                      IBV_QP_MAX_QP_RD_ATOMIC |
                                      (d.access >= 0 ? IBV_QP_ACCESS_FLAGS : 0));
    CHECK(rc == 0, "modify to RTS: %s", strerror(rc));
    return 0;
}

int ep_ud_ready(struct ep *e)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR};
    int rc = ibv_modify_qp(e->qp, &a, IBV_QP_STATE);

    CHECK(rc == 0, "UD to RTR: %s", strerror(rc));
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = e->psn;
    rc = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
    CHECK(rc == 0, "UD to RTS: %s", strerror(rc));
    return 0;
}

struct ibv_ah *ep_ah(struct ep *e, const struct xinfo *peer)
{
    struct ibv_ah_attr ah;

    fill_av(e, peer, &ah);
    return ibv_create_ah(e->pd, &ah);
}

/* ---- posting ----------------------------------------------------------------- */
int post_recv1(struct ep *e, uint64_t wr_id, void *buf, uint32_t len, uint32_t lkey)
{
    struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = len, .lkey = lkey};
    struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = buf ? 1 : 0};
    struct ibv_recv_wr *bad = NULL;
    int rc = e->srq ? ibv_post_srq_recv(e->srq, &wr, &bad) : ibv_post_recv(e->qp, &wr, &bad);

    CHECK(rc == 0, "post recv: %s", strerror(rc));
    return 0;
}

int post_send1(struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op, void *buf, uint32_t len,
               uint32_t lkey, unsigned flags)
{
    struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = len, .lkey = lkey};
    struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = buf ? 1 : 0,
                             .opcode = op, .send_flags = flags};
    struct ibv_send_wr *bad = NULL;
    int rc;

    if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM)
        wr.imm_data = htobe32((uint32_t)wr_id);
    rc = ibv_post_send(e->qp, &wr, &bad);
    CHECK(rc == 0, "post send: %s", strerror(rc));
    return 0;
}

int post_rdma(struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op, void *buf, uint32_t len,
              uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
    struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = len, .lkey = lkey};
    struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
                             .send_flags = IBV_SEND_SIGNALED};
    struct ibv_send_wr *bad = NULL;
    int rc;

    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
        wr.imm_data = htobe32((uint32_t)wr_id);
    rc = ibv_post_send(e->qp, &wr, &bad);
    CHECK(rc == 0, "post rdma: %s", strerror(rc));
    return 0;
}

/* ---- completions --------------------------------------------------------------- */
int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
    uint64_t end = now_us() + (uint64_t)timeout_ms * 1000;
    unsigned spins = 0;

    for (;;) {
        int n = ibv_poll_cq(cq, 1, wc);
        CHECK(n >= 0, "ibv_poll_cq failed");
        if (n == 1)
            return 0;
        if (++spins > 2000) {
            if (now_us() > end) {
                fail_at(__FILE__, __LINE__, "no completion within %d ms", timeout_ms);
                return -1;
            }
            usleep(50);
        } else {
            sched_yield();
        }
    }
}

int expect_wc(struct ibv_cq *cq, enum ibv_wc_status st, uint64_t wr_id, int timeout_ms)
{
    struct ibv_wc wc;

    TRY(wait_wc(cq, &wc, timeout_ms));
    CHECK(wc.status == st, "wr_id %llu: status '%s', expected '%s'",
          (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status), ibv_wc_status_str(st));
    CHECK(wc.wr_id == wr_id, "wr_id %llu, expected %llu", (unsigned long long)wc.wr_id,
          (unsigned long long)wr_id);
    return 0;
}

int expect_none(struct ibv_cq *cq, int ms)
{
    uint64_t end = now_us() + (uint64_t)ms * 1000;
    struct ibv_wc wc;

    while (now_us() < end) {
        int n = ibv_poll_cq(cq, 1, &wc);
        CHECK(n == 0, "unexpected completion: wr_id %llu status '%s'",
              (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
        usleep(200);
    }
    return 0;
}
