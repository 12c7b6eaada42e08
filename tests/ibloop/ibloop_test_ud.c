/*
 * ibloop's own tests: UD datagrams, the QP state machine, and two hosts in
 * two network namespaces.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ibloop_test.h"

static struct ep E;
static uint8_t buf[65536];
static struct ibv_mr *mr;
static struct xinfo peer;

#define QKEY 0x11111111u

static int ud_open(void)
{
    struct ep_opts o = {.type = IBV_QPT_UD, .recv_wr = 64};

    TRY(ep_open(&E, &o));
    mr = ibv_reg_mr(E.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
    CHECK(mr, "reg: %s", strerror(errno));
    TRY(ep_ud_ready(&E));
    return 0;
}

static int ud_close(void)
{
    TRY(xsync());
    ibv_dereg_mr(mr);
    ep_close(&E);
    return 0;
}

static int ud_send(struct ibv_ah *ah, uint64_t id, void *p, uint32_t len, uint32_t qpn,
                   uint32_t qkey, enum ibv_wr_opcode op)
{
    struct ibv_sge sge = {.addr = (uintptr_t)p, .length = len, .lkey = mr->lkey};
    struct ibv_send_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
                             .send_flags = IBV_SEND_SIGNALED};
    struct ibv_send_wr *bad;
    int rc;

    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = qpn;
    wr.wr.ud.remote_qkey = qkey;
    wr.imm_data = htobe32(0xabcd);
    rc = ibv_post_send(E.qp, &wr, &bad);
    CHECK(rc == 0, "UD post: %s", strerror(rc));
    return 0;
}

/* the active MTU in bytes: 4096 like mlx5, 1024 like rxe */
static uint32_t port_mtu(void)
{
    struct ibv_port_attr pa;

    if (ibv_query_port(E.ctx, 1, &pa))
        return 0;
    return 128u << pa.active_mtu;
}

/* A receives, B sends; then A answers through ibv_create_ah_from_wc */
static int ud_a(void)
{
    struct ibv_wc wc;
    struct ibv_ah *ah;
    bool grh = false;

    TRY(ud_open());
    for (int i = 0; i < 3; i++)
        TRY(post_recv1(&E, (uint64_t)i, buf + i * 8192, 8192, mr->lkey));
    TRY(post_recv1(&E, 3, buf + 3 * 8192, 100, mr->lkey));
    TRY(ep_exchange(&E, NULL, &peer));
    TRY(xsync());
    /* 1: a datagram with immediate data */
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 0, "recv 0: %s",
          ibv_wc_status_str(wc.status));
    CHECK(wc.opcode == IBV_WC_RECV && wc.byte_len == 40 + 1000, "opcode %d byte_len %u",
          wc.opcode, wc.byte_len);
    CHECK(wc.src_qp == peer.qpn && wc.qp_num == E.qp->qp_num, "src_qp %#x", wc.src_qp);
    CHECK(E.roce || wc.slid == peer.lid, "slid %u", wc.slid);
    CHECK((wc.wc_flags & IBV_WC_WITH_IMM) && be32toh(wc.imm_data) == 0xabcd, "imm");
    grh = (wc.wc_flags & IBV_WC_GRH) != 0;
    CHECK(grh == E.roce, "IBV_WC_GRH %d on a %s fabric", grh, E.roce ? "RoCE" : "IB");
    CHECK(check_pattern(buf + 40, 1000, 1) == 1000, "payload not after the 40-byte GRH");
    /* 2: the same with the QP's own qkey (high bit set) */
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 1 && wc.byte_len == 40 + port_mtu(),
          "recv 1 (MTU-sized): %s len %u", ibv_wc_status_str(wc.status), wc.byte_len);
    CHECK(!(wc.wc_flags & IBV_WC_WITH_IMM), "WITH_IMM on a plain send");
    /* 3: with a GRH on an IB fabric: the GRH names both ends */
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 2 && (wc.wc_flags & IBV_WC_GRH),
          "recv 2 with GRH: %s flags %#x", ibv_wc_status_str(wc.status), wc.wc_flags);
    if (!E.roce) {
        struct ibv_grh *g = (struct ibv_grh *)(void *)(buf + 2 * 8192);
        CHECK(!memcmp(g->sgid.raw, peer.gid, 16) && !memcmp(g->dgid.raw, E.gid.raw, 16),
              "GRH gids");
        CHECK(be16toh(g->paylen) == 16, "GRH paylen %u", be16toh(g->paylen));
    }
    /* the wrong-qkey datagram was dropped, nothing else arrived */
    TRY(xsync());
    TRY(expect_none(E.rcq, 20));
    /* answer through the work completion */
    ah = ibv_create_ah_from_wc(E.pd, &wc, (struct ibv_grh *)(void *)(buf + 2 * 8192), 1);
    CHECK(ah, "ibv_create_ah_from_wc: %s", strerror(errno));
    fill_pattern(buf + 40000, 64, 5);
    TRY(ud_send(ah, 9, buf + 40000, 64, wc.src_qp, QKEY, IBV_WR_SEND));
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 9, 5000));
    ibv_destroy_ah(ah);
    /* a receive buffer too small for GRH + payload */
    TRY(xsync());
    TRY(xsync());
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(wc.status == IBV_WC_LOC_LEN_ERR && wc.wr_id == 3, "short buffer: %s",
          ibv_wc_status_str(wc.status));
    return ud_close();
}

static int ud_b(void)
{
    struct ibv_ah *ah;
    struct ibv_ah_attr aa;
    struct ibv_wc wc;

    TRY(ud_open());
    TRY(post_recv1(&E, 50, buf + 50000, 8192, mr->lkey));
    TRY(ep_exchange(&E, NULL, &peer));
    TRY(xsync());
    ah = ep_ah(&E, &peer);
    CHECK(ah, "ibv_create_ah: %s", strerror(errno));
    fill_pattern(buf, 1000, 1);
    TRY(ud_send(ah, 1, buf, 1000, peer.qpn, QKEY, IBV_WR_SEND_WITH_IMM));
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 1, 5000));
    TRY(ud_send(ah, 2, buf, port_mtu(), peer.qpn, 0x80000000u, IBV_WR_SEND));
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 2, 5000));
    /* with a GRH */
    memset(&aa, 0, sizeof(aa));
    aa.dlid = (uint16_t)peer.lid;
    aa.port_num = 1;
    aa.is_global = 1;
    memcpy(aa.grh.dgid.raw, peer.gid, 16);
    aa.grh.sgid_index = (uint8_t)E.gid_index;
    aa.grh.hop_limit = 64;
    {
        struct ibv_ah *gah = ibv_create_ah(E.pd, &aa);
        CHECK(gah, "GRH ah: %s", strerror(errno));
        TRY(ud_send(gah, 3, buf, 16, peer.qpn, QKEY, IBV_WR_SEND));
        TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 3, 5000));
        ibv_destroy_ah(gah);
    }
    /* a wrong qkey: dropped, but the sender never knows */
    TRY(ud_send(ah, 4, buf, 16, peer.qpn, QKEY + 1, IBV_WR_SEND));
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 4, 5000));
    /* to a QP number nobody has: dropped too */
    TRY(ud_send(ah, 5, buf, 16, peer.qpn ^ (3 << 14), QKEY, IBV_WR_SEND));
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 5, 5000));
    TRY(xsync());
    /* the answer, through an AH made from the work completion */
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 50 &&
              check_pattern(buf + 50000 + 40, 64, 5) == 64,
          "answer: %s", ibv_wc_status_str(wc.status));
    /* larger than the MTU: a local error, and the QP is in error */
    TRY(ud_send(ah, 6, buf, port_mtu() + 1, peer.qpn, QKEY, IBV_WR_SEND));
    TRY(expect_wc(E.scq, IBV_WC_LOC_LEN_ERR, 6, 5000));
    TRY(ud_send(ah, 7, buf, 16, peer.qpn, QKEY, IBV_WR_SEND));
    TRY(expect_wc(E.scq, IBV_WC_WR_FLUSH_ERR, 7, 5000));
    TRY(xsync());
    /* a fresh QP sends more than the receiver's buffer holds */
    ibv_destroy_ah(ah);
    ibv_dereg_mr(mr);
    ep_close(&E);
    TRY(ud_open());
    ah = ep_ah(&E, &peer);
    CHECK(ah, "ah");
    TRY(xsync());
    TRY(ud_send(ah, 8, buf, 200, peer.qpn, QKEY, IBV_WR_SEND));
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 8, 5000)); /* the sender never knows */
    ibv_destroy_ah(ah);
    return ud_close();
}

/* ---- the QP state machine (one side) ---------------------------------------------- */
static int st_modify(struct ibv_qp *qp, enum ibv_qp_state s, int mask, int want)
{
    struct ibv_qp_attr a;
    int rc;

    memset(&a, 0, sizeof(a));
    a.qp_state = s;
    a.port_num = 1;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = qp->qp_num;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 1;
    a.ah_attr.port_num = 1;
    a.ah_attr.dlid = E.port.lid;
    a.ah_attr.is_global = E.roce;
    a.ah_attr.grh.sgid_index = (uint8_t)E.gid_index;
    memcpy(a.ah_attr.grh.dgid.raw, E.gid.raw, 16);
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.qkey = QKEY;
    if (want == -2) { /* path_mtu beyond the port */
        a.path_mtu = (enum ibv_mtu)6;
        want = EINVAL;
    }
    rc = ibv_modify_qp(qp, &a, mask);
    CHECK(rc == want, "modify to %d mask %#x: %d (%s), expected %d", s, mask, rc,
          strerror(rc), want);
    return 0;
}

#define S IBV_QP_STATE
#define INIT_RC (S | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define RTR_RC (S | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | \
                IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_RC (S | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | \
                IBV_QP_MAX_QP_RD_ATOMIC)

/* ibv_resize_cq on E.rcq with flushed receives of qp (in ERR) waiting */
static int resize_cq_check(struct ibv_qp *qp)
{
    struct ibv_recv_wr rwr = {.wr_id = 100}, *rbad = NULL;
    struct ibv_device_attr da;
    struct ibv_wc wc[4];
    int n = 0;

    CHECK(ibv_query_device(E.ctx, &da) == 0, "query device");
    for (int i = 0; i < 3; i++, rwr.wr_id++)
        CHECK(ibv_post_recv(qp, &rwr, &rbad) == 0, "post_recv in ERR");
    CHECK(ibv_resize_cq(E.rcq, 2) == EINVAL, "shrinking below the 3 completions waiting");
    CHECK(ibv_resize_cq(E.rcq, 0) == EINVAL, "resizing to 0");
    CHECK(ibv_resize_cq(E.rcq, da.max_cqe + 1) == EINVAL, "resizing above max_cqe");
    CHECK(ibv_resize_cq(E.rcq, 3) == 0 && E.rcq->cqe == 3, "shrink to 3: cqe %d", E.rcq->cqe);
    CHECK(ibv_resize_cq(E.rcq, 1000) == 0 && E.rcq->cqe == 1023, "grow: cqe %d", E.rcq->cqe);
    CHECK(ibv_resize_cq(E.rcq, 600) == 0 && E.rcq->cqe == 1023, "same size: cqe %d",
          E.rcq->cqe);
    for (int i = 0; i < 2; i++, rwr.wr_id++)
        CHECK(ibv_post_recv(qp, &rwr, &rbad) == 0, "post_recv in ERR");
    CHECK(ibv_resize_cq(E.rcq, 4) == EINVAL, "shrinking below the 5 completions waiting");
    CHECK(ibv_resize_cq(E.rcq, 5) == 0 && E.rcq->cqe == 7, "shrink to 5: cqe %d", E.rcq->cqe);
    /* all five, in order, across three rings */
    for (uint64_t id = 100; id < 105; id++) {
        n = ibv_poll_cq(E.rcq, 1, wc);
        CHECK(n == 1 && wc[0].wr_id == id && wc[0].status == IBV_WC_WR_FLUSH_ERR,
              "completion %llu after resizing: n %d wr_id %llu", (unsigned long long)id, n,
              (unsigned long long)wc[0].wr_id);
    }
    CHECK(ibv_poll_cq(E.rcq, 4, wc) == 0, "nothing more");
    CHECK(ibv_resize_cq(E.rcq, 256) == 0 && E.rcq->cqe == 511, "back: cqe %d", E.rcq->cqe);
    return 0;
}

static int states_a(void)
{
    struct ibv_qp_init_attr ia;
    struct ibv_qp *qp, *ud;
    struct ibv_send_wr swr = {.wr_id = 1, .opcode = IBV_WR_SEND}, *sbad = NULL;
    struct ibv_recv_wr rwr = {.wr_id = 2}, *rbad = NULL;
    struct ibv_wc wc;

    TRY(ep_open(&E, NULL));
    ia = E.ia;
    qp = ibv_create_qp(E.pd, &ia);
    CHECK(qp, "create");
    /* mlx5: ENOMEM and the WR; rxe: its doorbell fails, EINVAL and no WR */
    CHECK(ibv_post_send(qp, &swr, &sbad) == POST_OVER_ERRNO &&
              sbad == (mode_rxe() ? NULL : &swr),
          "post_send in RESET");
    CHECK(ibv_post_recv(qp, &rwr, &rbad) != 0 && rbad == &rwr, "post_recv in RESET");
    TRY(st_modify(qp, IBV_QPS_RTR, RTR_RC, EINVAL));           /* skipping INIT */
    TRY(st_modify(qp, IBV_QPS_INIT, INIT_RC & ~IBV_QP_ACCESS_FLAGS, EINVAL));
    TRY(st_modify(qp, IBV_QPS_INIT, INIT_RC | IBV_QP_QKEY, EINVAL)); /* not for RC */
    TRY(st_modify(qp, IBV_QPS_INIT, INIT_RC, 0));
    CHECK(ibv_post_recv(qp, &rwr, &rbad) == 0, "post_recv in INIT");
    TRY(st_modify(qp, IBV_QPS_RTR, RTR_RC & ~IBV_QP_MIN_RNR_TIMER, EINVAL));
    TRY(st_modify(qp, IBV_QPS_RTR, RTR_RC & ~IBV_QP_AV, EINVAL));
    TRY(st_modify(qp, IBV_QPS_RTR, RTR_RC, -2));
    TRY(st_modify(qp, IBV_QPS_RTR, RTR_RC | IBV_QP_SQ_PSN, EINVAL));
    TRY(st_modify(qp, IBV_QPS_RTR, RTR_RC, 0));
    sbad = NULL;
    CHECK(ibv_post_send(qp, &swr, &sbad) == POST_OVER_ERRNO &&
              sbad == (mode_rxe() ? NULL : &swr),
          "post_send in RTR");
    TRY(st_modify(qp, IBV_QPS_RTR, RTR_RC, EINVAL)); /* RTR -> RTR does not exist */
    TRY(st_modify(qp, IBV_QPS_RTS, RTS_RC & ~IBV_QP_RNR_RETRY, EINVAL));
    TRY(st_modify(qp, IBV_QPS_RTS, RTS_RC, 0));
    TRY(st_modify(qp, IBV_QPS_RTS, S | IBV_QP_MIN_RNR_TIMER, 0)); /* RTS -> RTS */
    TRY(st_modify(qp, IBV_QPS_RTS, S | IBV_QP_PATH_MTU, EINVAL));
    TRY(st_modify(qp, IBV_QPS_INIT, INIT_RC, EINVAL)); /* backwards */
    {
        struct ibv_qp_attr a = {.qp_state = IBV_QPS_SQD};
        CHECK(ibv_modify_qp(qp, &a, S) == EINVAL, "SQD is not emulated");
        a.qp_state = IBV_QPS_RTS;
        a.cur_qp_state = IBV_QPS_RTR;
        CHECK(ibv_modify_qp(qp, &a, S | IBV_QP_CUR_STATE) == EINVAL, "wrong cur_qp_state");
    }
    /* to ERR: the posted receive is flushed, and so is a later send */
    TRY(st_modify(qp, IBV_QPS_ERR, S, 0));
    TRY(wait_wc(E.rcq, &wc, 2000));
    CHECK(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 2, "receive not flushed");
    CHECK(ibv_post_send(qp, &swr, &sbad) == 0, "post_send in ERR is accepted");
    TRY(wait_wc(E.scq, &wc, 2000));
    CHECK(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 1, "send not flushed");
    TRY(st_modify(qp, IBV_QPS_RESET, S, 0));
    CHECK(ibv_post_recv(qp, &rwr, &rbad) != 0, "post_recv after going back to RESET");
    TRY(st_modify(qp, IBV_QPS_INIT, INIT_RC, 0)); /* and round again */
    /* RESET forgets RTS: in ERR now, mlx5 refuses sends (its SQ was never
     * opened), rxe takes and flushes them */
    TRY(st_modify(qp, IBV_QPS_ERR, S, 0));
    sbad = NULL;
    if (mode_rxe()) {
        CHECK(ibv_post_send(qp, &swr, &sbad) == 0, "post_send in ERR, never RTS (rxe)");
        TRY(wait_wc(E.scq, &wc, 2000));
        CHECK(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 1, "send not flushed");
    } else {
        CHECK(ibv_post_send(qp, &swr, &sbad) == ENOMEM && sbad == &swr,
              "post_send in ERR, never RTS (mlx5)");
    }
    TRY(resize_cq_check(qp));
    CHECK(ibv_destroy_cq(E.scq) == EBUSY, "destroying a CQ in use");
    CHECK(ibv_dealloc_pd(E.pd) == EBUSY, "freeing a PD in use");
    CHECK(ibv_destroy_qp(qp) == 0, "destroy");
    /* UD */
    ia.qp_type = IBV_QPT_UD;
    ud = ibv_create_qp(E.pd, &ia);
    CHECK(ud, "create UD");
    TRY(st_modify(ud, IBV_QPS_INIT, INIT_RC, EINVAL)); /* UD wants a qkey */
    TRY(st_modify(ud, IBV_QPS_INIT, S | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, 0));
    TRY(st_modify(ud, IBV_QPS_RTR, S | IBV_QP_AV, EINVAL));
    TRY(st_modify(ud, IBV_QPS_RTR, S, 0));
    TRY(st_modify(ud, IBV_QPS_RTS, S, EINVAL)); /* UD RTS needs the SQ PSN */
    TRY(st_modify(ud, IBV_QPS_RTS, S | IBV_QP_SQ_PSN, 0));
    CHECK(ibv_destroy_qp(ud) == 0, "destroy UD");
    /* unsupported QP types and sizes */
    ia.qp_type = IBV_QPT_UC;
    CHECK(!ibv_create_qp(E.pd, &ia), "UC QPs are not emulated");
    ia.qp_type = IBV_QPT_RC;
    {
        struct ibv_device_attr da;
        CHECK(ibv_query_device(E.ctx, &da) == 0, "query device");
        ia.cap.max_send_sge = (uint32_t)da.max_sge + 1;
    }
    CHECK(!ibv_create_qp(E.pd, &ia) && errno == EINVAL, "max_send_sge above the device's");
    ep_close(&E);
    return 0;
}

static int states_b(void)
{
    return 0;
}

/* ---- two hosts: each side in its own network namespace ---------------------------- */
static int enter_netns(void)
{
    const char *ns = getenv(me->role ? "IBLOOP_TEST_NETNS_B" : "IBLOOP_TEST_NETNS_A");
    char path[256];
    int fd;

    CHECK(ns && *ns, "IBLOOP_TEST_NETNS_A/B not set (run.sh sets them)");
    snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
    CHECK(setns(fd, CLONE_NEWNET) == 0, "setns: %s", strerror(errno));
    close(fd);
    return 0;
}

static int netns_side(void)
{
    struct ibv_wc wc;
    struct xinfo mine;

    TRY(enter_netns());
    TRY(ep_open(&E, NULL));
    mr = ibv_reg_mr(E.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
                                                IBV_ACCESS_REMOTE_WRITE);
    CHECK(mr, "reg");
    TRY(post_recv1(&E, 1, buf + 1024, 1024, mr->lkey));
    ep_info(&E, &mine);
    mine.addr = (uintptr_t)buf;
    mine.rkey = mr->rkey;
    TRY(ep_exchange(&E, &mine, &peer));
    CHECK(E.roce ? memcmp(peer.gid, E.gid.raw, 16) != 0 : peer.lid != E.port.lid,
          "both namespaces got the same address (LID %u)", peer.lid);
    TRY(ep_rc_connect(&E, &peer, NULL));
    TRY(xsync());
    fill_pattern(buf, 512, (uint32_t)me->role);
    TRY(post_send1(&E, 2, IBV_WR_SEND, buf, 512, mr->lkey, IBV_SEND_SIGNALED));
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 2, 5000));
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == 512 &&
              check_pattern(buf + 1024, 512, (uint32_t)!me->role) == 512,
          "receive from the other host");
    CHECK(E.roce || wc.slid == peer.lid, "slid %u, expected %u", wc.slid, peer.lid);
    TRY(xsync());
    TRY(post_rdma(&E, 3, IBV_WR_RDMA_READ, buf + 4096, 512, mr->lkey, peer.addr, peer.rkey));
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 3, 5000));
    CHECK(check_pattern(buf + 4096, 512, (uint32_t)!me->role) == 512, "RDMA read");
    TRY(xsync());
    ibv_dereg_mr(mr);
    ep_close(&E);
    return 0;
}

const struct tcase cases_ud[] = {
    {.name = "ud", .a = ud_a, .b = ud_b},
    {.name = "qp_states", .a = states_a, .b = states_b},
    {.name = "netns", .a = netns_side, .b = netns_side, .group = "netns"},
    {0},
};
