/*
 * ibloop's own tests: scatter/gather lists, and one SRQ shared by two QPs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibloop_test_one.h"

/* E, buf, mr, peer, setup, connect_rc, teardown: ibloop_test_one.c */

/* ---- scatter / gather lists ------------------------------------------------------ */
static int sge_a(void)
{
    struct ep_opts o = {.recv_sge = 3};
    const uint32_t off[3] = {100, 300, 500}, len[3] = {5, 0, 2000};
    struct ibv_sge sge[3];
    struct ibv_recv_wr wr = {.wr_id = 1, .sg_list = sge, .num_sge = 3}, *bad;
    struct ibv_wc wc;
    uint8_t ref[1000];

    TRY(setup(&o, 8192));
    for (int i = 0; i < 3; i++)
        sge[i] = (struct ibv_sge){.addr = (uintptr_t)buf + off[i], .length = len[i],
                                  .lkey = mr->lkey};
    CHECK(ibv_post_recv(E.qp, &wr, &bad) == 0, "post 3-SGE receive");
    /* mlx5 rounds the receive SGEs up to a power of two, rxe does not; a
     * receive past what was granted is EINVAL in both */
    CHECK(E.ia.cap.max_recv_sge == (mode_rxe() ? 3u : 4u), "%u receive SGEs granted for 3",
          E.ia.cap.max_recv_sge);
    {
        struct ibv_sge more[8];
        struct ibv_recv_wr w2 = {.wr_id = 9, .sg_list = more,
                                 .num_sge = (int)E.ia.cap.max_recv_sge + 1};
        for (int i = 0; i < w2.num_sge; i++)
            more[i] = sge[0];
        CHECK(ibv_post_recv(E.qp, &w2, &bad) == EINVAL && bad == &w2,
              "%d SGEs on a %u-SGE RQ", w2.num_sge, E.ia.cap.max_recv_sge);
    }
    TRY(connect_rc(NULL));
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == 1000, "gathered send: %s len %u",
          ibv_wc_status_str(wc.status), wc.byte_len);
    fill_pattern(ref, 1000, 77);
    CHECK(!memcmp(buf + 100, ref, 5) && !memcmp(buf + 500, ref + 5, 995) &&
              buf[500 + 995] == 0 && buf[105] == 0,
          "scattered payload");
    fill_pattern(buf + 4096, 3000, 78); /* for B to read */
    TRY(xsync());
    return teardown();
}

static int sge_b(void)
{
    struct ep_opts o = {.send_sge = 4};
    struct ibv_sge sge[4];
    struct ibv_send_wr wr = {.wr_id = 1, .sg_list = sge, .num_sge = 4, .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_SIGNALED}, *bad;
    const uint32_t len[4] = {1, 499, 0, 500}, off[4] = {10, 20, 900, 1000};
    uint8_t ref[3000];
    uint32_t at = 0;

    TRY(setup(&o, 8192));
    fill_pattern(ref, 1000, 77);
    for (int i = 0; i < 4; i++) {
        memcpy(buf + off[i], ref + at, len[i]);
        sge[i] = (struct ibv_sge){.addr = (uintptr_t)buf + off[i], .length = len[i],
                                  .lkey = mr->lkey};
        at += len[i];
    }
    TRY(connect_rc(NULL));
    CHECK(ibv_post_send(E.qp, &wr, &bad) == 0, "post 4-SGE send");
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 1, 5000));
    CHECK(E.ia.cap.max_send_sge == 4, "%u send SGEs granted for 4", E.ia.cap.max_send_sge);
    wr.num_sge = 5;
    CHECK(ibv_post_send(E.qp, &wr, &bad) == POST_OVER_ERRNO && bad == &wr,
          "5 SGEs on a 4-SGE SQ");
    TRY(xsync());
    /* RDMA read into three pieces */
    memset(buf, 0, 8192);
    sge[0] = (struct ibv_sge){.addr = (uintptr_t)buf + 7000, .length = 1000, .lkey = mr->lkey};
    sge[1] = (struct ibv_sge){.addr = (uintptr_t)buf + 1, .length = 1, .lkey = mr->lkey};
    sge[2] = (struct ibv_sge){.addr = (uintptr_t)buf + 3000, .length = 1999, .lkey = mr->lkey};
    wr = (struct ibv_send_wr){.wr_id = 2, .sg_list = sge, .num_sge = 3,
                              .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED};
    wr.wr.rdma.remote_addr = peer.addr + 4096;
    wr.wr.rdma.rkey = peer.rkey;
    CHECK(ibv_post_send(E.qp, &wr, &bad) == 0, "post 3-SGE read");
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 2, 5000));
    fill_pattern(ref, 3000, 78);
    CHECK(!memcmp(buf + 7000, ref, 1000) && buf[1] == ref[1000] &&
              !memcmp(buf + 3000, ref + 1001, 1999),
          "read scattered over 3 SGEs");
    return teardown();
}

/* ---- one SRQ shared by two QPs --------------------------------------------------- */
static int second_qp(struct ibv_qp **qp)
{
    struct ibv_qp_init_attr ia = E.ia;
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1,
                            .qp_access_flags = IBV_ACCESS_REMOTE_WRITE};

    *qp = ibv_create_qp(E.pd, &ia);
    CHECK(*qp, "second QP: %s", strerror(errno));
    CHECK(ibv_modify_qp(*qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                     IBV_QP_ACCESS_FLAGS) == 0, "second QP to INIT");
    return 0;
}

static int shared_setup(struct ibv_qp **qp2, struct xinfo *p2)
{
    struct ep_opts o = {.srq = true};
    struct xinfo m1, m2;
    struct ibv_qp *first;

    TRY(setup(&o, 128 * 64));
    TRY(second_qp(qp2));
    ep_info(&E, &m1);
    ep_info(&E, &m2);
    m2.qpn = (*qp2)->qp_num;
    m2.psn = E.psn + 1000;
    TRY(xsend(&m1, sizeof(m1)));
    TRY(xsend(&m2, sizeof(m2)));
    TRY(xrecv(&peer, sizeof(peer), 20000));
    TRY(xrecv(p2, sizeof(*p2), 20000));
    TRY(ep_rc_connect(&E, &peer, NULL));
    first = E.qp;
    E.qp = *qp2;
    E.psn += 1000;
    TRY(ep_rc_connect(&E, p2, NULL));
    E.psn -= 1000;
    E.qp = first;
    return xsync();
}

static int shared_a(void)
{
    struct ibv_qp *qp2;
    struct xinfo p2;
    struct ibv_wc wc;
    int n1 = 0, n2 = 0;

    TRY(shared_setup(&qp2, &p2));
    for (int i = 0; i < 64; i++)
        TRY(post_recv1(&E, (uint64_t)i, buf + i * 64, 64, mr->lkey));
    TRY(xsync());
    for (int i = 0; i < 64; i++) {
        TRY(wait_wc(E.rcq, &wc, 5000));
        CHECK(wc.status == IBV_WC_SUCCESS, "recv %d", i);
        if (wc.qp_num == E.qp->qp_num) {
            CHECK(wc.src_qp == peer.qpn, "src_qp on the first QP");
            n1++;
        } else {
            CHECK(wc.qp_num == qp2->qp_num && wc.src_qp == p2.qpn, "src_qp on the second QP");
            n2++;
        }
    }
    CHECK(n1 == 32 && n2 == 32, "%d and %d receives per QP", n1, n2);
    TRY(xsync());
    CHECK(ibv_destroy_qp(qp2) == 0, "destroy second QP");
    return teardown();
}

static int shared_b(void)
{
    struct ibv_qp *qp2, *first;
    struct xinfo p2;

    TRY(shared_setup(&qp2, &p2));
    TRY(xsync());
    first = E.qp;
    for (int i = 0; i < 64; i++) {
        E.qp = (i & 1) ? qp2 : first;
        TRY(post_send1(&E, (uint64_t)i, IBV_WR_SEND, buf, 8, mr->lkey, IBV_SEND_SIGNALED));
        TRY(expect_wc(E.scq, IBV_WC_SUCCESS, (uint64_t)i, 5000));
    }
    E.qp = first;
    TRY(xsync());
    CHECK(ibv_destroy_qp(qp2) == 0, "destroy second QP");
    return teardown();
}

const struct tcase cases_sge[] = {
    {.name = "rc_sge", .a = sge_a, .b = sge_b},
    {.name = "srq_shared", .a = shared_a, .b = shared_b},
    {0},
};
