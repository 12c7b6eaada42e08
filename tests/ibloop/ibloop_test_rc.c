/*
 * ibloop's own tests: RC data movement between two processes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibloop_test_one.h"

/* E, buf, mr, peer, setup, connect_rc, teardown: ibloop_test_one.c */

/* ---- send / receive --------------------------------------------------------- */
#define NMSG 64
#define MSG 256

static int recv_side(bool srq)
{
    struct ep_opts o = {.srq = srq};
    struct ibv_wc wc;

    TRY(setup(&o, NMSG * MSG));
    for (int i = 0; i < NMSG; i++)
        TRY(post_recv1(&E, (uint64_t)i, buf + i * MSG, MSG, mr->lkey));
    TRY(connect_rc(NULL));
    for (int i = 0; i < NMSG; i++) {
        TRY(wait_wc(E.rcq, &wc, 5000));
        CHECK(wc.status == IBV_WC_SUCCESS, "recv %d: %s", i, ibv_wc_status_str(wc.status));
        CHECK(wc.wr_id == (uint64_t)i, "recv out of order: wr_id %llu, expected %d",
              (unsigned long long)wc.wr_id, i);
        CHECK(wc.opcode == IBV_WC_RECV, "opcode %d", wc.opcode);
        CHECK(wc.byte_len == (uint32_t)(i + 1) * 4, "byte_len %u", wc.byte_len);
        CHECK(wc.qp_num == E.qp->qp_num, "qp_num %#x", wc.qp_num);
        CHECK(wc.src_qp == peer.qpn, "src_qp %#x, expected %#x", wc.src_qp, peer.qpn);
        CHECK(E.roce || wc.slid == peer.lid, "slid %u, expected %u", wc.slid, peer.lid);
        CHECK(!(wc.wc_flags & IBV_WC_WITH_IMM), "WITH_IMM set");
        CHECK(check_pattern(buf + i * MSG, wc.byte_len, (uint32_t)i) == wc.byte_len,
              "payload %d corrupted", i);
    }
    return teardown();
}

static int send_side(void)
{
    struct ibv_wc wc;

    TRY(setup(NULL, NMSG * MSG));
    TRY(connect_rc(NULL));
    for (int i = 0; i < NMSG; i++) {
        fill_pattern(buf + i * MSG, (size_t)(i + 1) * 4, (uint32_t)i);
        TRY(post_send1(&E, (uint64_t)i, IBV_WR_SEND, buf + i * MSG, (uint32_t)(i + 1) * 4,
                       mr->lkey, IBV_SEND_SIGNALED));
    }
    for (int i = 0; i < NMSG; i++) {
        TRY(wait_wc(E.scq, &wc, 5000));
        CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)i, "send %d: %s", i,
              ibv_wc_status_str(wc.status));
        CHECK(wc.opcode == IBV_WC_SEND, "send opcode %d", wc.opcode);
        CHECK(wc.qp_num == E.qp->qp_num, "send qp_num");
    }
    return teardown();
}

static int srq_a(void) { return recv_side(true); }
static int rq_a(void) { return recv_side(false); }

/* ---- inline ------------------------------------------------------------------ */
static int inline_a(void)
{
    struct ibv_wc wc;

    TRY(setup(NULL, 4096));
    TRY(post_recv1(&E, 1, buf, 4096, mr->lkey));
    TRY(post_recv1(&E, 2, buf + 1024, 1024, mr->lkey));
    TRY(post_recv1(&E, 3, buf + 2048, 2048, mr->lkey));
    TRY(connect_rc(NULL));
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == 100, "inline recv %s len %u",
          ibv_wc_status_str(wc.status), wc.byte_len);
    CHECK(check_pattern(buf, 100, 7) == 100, "inline payload corrupted");
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == 64 + 36, "2-sge inline len %u",
          wc.byte_len);
    CHECK(check_pattern(buf + 1024, 100, 9) == 100, "2-sge inline payload corrupted");
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == (mode_rxe() ? 128u : 188u),
          "inline of all that was granted: len %u", wc.byte_len);
    return teardown();
}

static int inline_b(void)
{
    struct ep_opts o = {.inline_data = 128, .send_sge = 2};
    uint8_t data[IBLOOP_TEST_MAX_INLINE + 1];
    uint32_t granted;
    struct ibv_sge sge[2] = {{.addr = (uintptr_t)data, .length = 64, .lkey = 0xbad},
                             {.addr = (uintptr_t)data + 64, .length = 36, .lkey = 0}};
    struct ibv_send_wr wr = {.wr_id = 5, .sg_list = sge, .num_sge = 1, .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED};
    struct ibv_send_wr *bad = NULL;
    int rc;

    TRY(setup(&o, 4096));
    /* read back: mlx5 fills its 256-byte WQE (188 bytes inline), rxe grants
     * what was asked */
    granted = E.ia.cap.max_inline_data;
    CHECK(granted == (mode_rxe() ? 128u : 188u) && granted < sizeof(data),
          "max_inline_data %u granted for 128", granted);
    TRY(connect_rc(NULL));
    fill_pattern(data, 100, 7);
    sge[0].length = 100;
    rc = ibv_post_send(E.qp, &wr, &bad);
    CHECK(rc == 0, "inline post: %s", strerror(rc));
    memset(data, 0xee, sizeof(data)); /* the data was taken at post time */
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 5, 5000));
    fill_pattern(data, 100, 9);
    sge[0].length = 64;
    wr.num_sge = 2;
    wr.wr_id = 6;
    CHECK(ibv_post_send(E.qp, &wr, &bad) == 0, "2-sge inline post");
    memset(data, 0xee, sizeof(data));
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 6, 5000));
    sge[0].length = granted; /* all that was granted */
    wr.num_sge = 1;
    wr.wr_id = 7;
    CHECK(ibv_post_send(E.qp, &wr, &bad) == 0, "inline post of the granted %u bytes", granted);
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 7, 5000));
    sge[0].length = granted + 1; /* more than max_inline_data */
    wr.wr_id = 8;
    bad = NULL;
    rc = ibv_post_send(E.qp, &wr, &bad);
    CHECK(rc == POST_OVER_ERRNO && bad == &wr, "oversized inline post: rc %d bad %p", rc,
          (void *)bad);
    return teardown();
}

/* ---- signaled / unsignaled, send queue accounting ------------------------------ */
static int signal_a(void)
{
    struct ep_opts o = {.recv_wr = 64};
    struct ibv_wc wc;

    TRY(setup(&o, 64 * 64));
    for (int i = 0; i < 40; i++)
        TRY(post_recv1(&E, (uint64_t)i, buf + i * 64, 64, mr->lkey));
    TRY(connect_rc(NULL));
    for (int i = 0; i < 32; i++) {
        TRY(wait_wc(E.rcq, &wc, 5000));
        CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)i, "recv %d", i);
    }
    return teardown();
}

static int signal_b(void)
{
    struct ep_opts o = {.send_wr = 16};
    struct ibv_send_wr *bad;
    struct ibv_wc wc;
    int rc;

    TRY(setup(&o, 4096));
    TRY(connect_rc(NULL));
    for (int i = 0; i < 16; i++)
        TRY(post_send1(&E, (uint64_t)i, IBV_WR_SEND, buf, 8, mr->lkey,
                       i == 15 ? IBV_SEND_SIGNALED : 0));
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 15, 5000));
    TRY(expect_none(E.scq, 20)); /* unsignaled WRs complete silently */
    /* the slots of unsignaled WRs are only freed by a later signaled
     * completion: 16 more fill the queue, the 17th does not fit */
    for (int i = 16; i < 32; i++)
        TRY(post_send1(&E, (uint64_t)i, IBV_WR_SEND, buf, 8, mr->lkey, 0));
    {
        struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey};
        struct ibv_send_wr wr = {.wr_id = 99, .sg_list = &sge, .num_sge = 1,
                                 .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED};
        bad = NULL;
        rc = ibv_post_send(E.qp, &wr, &bad);
        CHECK(rc == ENOMEM && bad == &wr, "post to a full send queue: rc %d", rc);
    }
    CHECK(ibv_poll_cq(E.scq, 1, &wc) == 0, "completion of an unsignaled WR");
    return teardown();
}

/* ---- immediate data ---------------------------------------------------------- */
static int imm_a(void)
{
    struct ibv_wc wc;

    TRY(setup(NULL, 8192));
    TRY(post_recv1(&E, 1, buf, 64, mr->lkey));
    TRY(post_recv1(&E, 2, NULL, 0, 0)); /* RDMA write with immediate: no SGE needed */
    TRY(connect_rc(NULL));
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 1, "send-imm recv");
    CHECK(wc.opcode == IBV_WC_RECV && (wc.wc_flags & IBV_WC_WITH_IMM) &&
              be32toh(wc.imm_data) == 0x1234 && wc.byte_len == 16,
          "send-imm: opcode %d flags %#x imm %#x len %u", wc.opcode, wc.wc_flags,
          be32toh(wc.imm_data), wc.byte_len);
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 2, "write-imm recv");
    CHECK(wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && (wc.wc_flags & IBV_WC_WITH_IMM) &&
              be32toh(wc.imm_data) == 0x5678 && wc.byte_len == 3000,
          "write-imm: opcode %d flags %#x imm %#x len %u", wc.opcode, wc.wc_flags,
          be32toh(wc.imm_data), wc.byte_len);
    CHECK(check_pattern(buf + 4096, 3000, 3) == 3000, "write-imm payload");
    return teardown();
}

static int imm_b(void)
{
    struct ep_opts o = {.sig_all = true};

    TRY(setup(&o, 8192));
    TRY(connect_rc(NULL));
    fill_pattern(buf, 3000, 3);
    TRY(post_send1(&E, 0x1234, IBV_WR_SEND_WITH_IMM, buf, 16, mr->lkey, 0));
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 0x1234, 5000)); /* sq_sig_all */
    TRY(post_rdma(&E, 0x5678, IBV_WR_RDMA_WRITE_WITH_IMM, buf, 3000, mr->lkey,
                  peer.addr + 4096, peer.rkey));
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 0x5678, 5000));
    return teardown();
}

/* ---- ordering of many sends, and the round trip time ---------------------------- */
#define NORDER 10000
#define NPING 2000

static int order_a(void)
{
    struct ep_opts o = {.srq = true, .recv_wr = 512, .cqe = 1024};
    struct ibv_wc wc[32];
    uint32_t next = 0;
    uint64_t t0, end;

    TRY(setup(&o, 512 * 16));
    for (int i = 0; i < 512; i++)
        TRY(post_recv1(&E, (uint64_t)i, buf + i * 16, 16, mr->lkey));
    TRY(connect_rc(NULL));
    end = now_us() + 30000000;
    while (next < NORDER) {
        int n = ibv_poll_cq(E.rcq, 32, wc);
        CHECK(n >= 0 && now_us() < end, "stalled at message %u", next);
        for (int i = 0; i < n; i++) {
            uint32_t v;
            CHECK(wc[i].status == IBV_WC_SUCCESS, "recv %u: %s", next,
                  ibv_wc_status_str(wc[i].status));
            memcpy(&v, buf + wc[i].wr_id * 16, 4);
            CHECK(v == next, "message %u arrived as number %u", v, next);
            next++;
            TRY(post_recv1(&E, wc[i].wr_id, buf + wc[i].wr_id * 16, 16, mr->lkey));
        }
    }
    /* ping-pong: 8 bytes each way */
    TRY(xsync());
    t0 = now_us();
    for (int i = 0; i < NPING; i++) {
        TRY(wait_wc(E.rcq, wc, 5000));
        CHECK(wc[0].status == IBV_WC_SUCCESS, "ping %d", i);
        TRY(post_recv1(&E, wc[0].wr_id, buf + wc[0].wr_id * 16, 16, mr->lkey));
        TRY(post_send1(&E, 1, IBV_WR_SEND, buf + 511 * 16, 8, mr->lkey,
                       IBV_SEND_SIGNALED));
        TRY(wait_wc(E.scq, wc, 5000));
    }
    (void)t0;
    return teardown();
}

static int order_b(void)
{
    struct ep_opts o = {.srq = true, .recv_wr = 512, .cqe = 1024};
    struct ibv_wc wc;
    uint64_t t0, t, tb = 0, best = UINT64_MAX;

    TRY(setup(&o, 512 * 16));
    for (int i = 0; i < 16; i++)
        TRY(post_recv1(&E, (uint64_t)i, buf + 64 * 16 + i * 16, 16, mr->lkey));
    TRY(connect_rc(NULL));
    for (uint32_t i = 0; i < NORDER; i++) {
        memcpy(buf + (i % 64) * 16, &i, 4);
        TRY(post_send1(&E, i, IBV_WR_SEND, buf + (i % 64) * 16, 8, mr->lkey,
                       (i % 32) == 31 ? IBV_SEND_SIGNALED : 0));
        if ((i % 32) == 31)
            TRY(expect_wc(E.scq, IBV_WC_SUCCESS, i, 10000));
    }
    TRY(xsync());
    t0 = now_us();
    for (int i = 0; i < NPING; i++) {
        if (i % (NPING / 5) == 0)
            tb = now_us();
        TRY(post_send1(&E, 2, IBV_WR_SEND, buf, 8, mr->lkey, IBV_SEND_SIGNALED));
        TRY(wait_wc(E.scq, &wc, 5000));
        TRY(wait_wc(E.rcq, &wc, 5000));
        CHECK(wc.status == IBV_WC_SUCCESS, "pong %d", i);
        TRY(post_recv1(&E, wc.wr_id, buf + 64 * 16 + wc.wr_id * 16, 16, mr->lkey));
        if (i % (NPING / 5) == NPING / 5 - 1 && now_us() - tb < best)
            best = now_us() - tb;
    }
    t = now_us() - t0;
    printf("# rc 8-byte send round trip between two processes: %.2f us "
           "(best batch; %.2f us over all %d; a software figure, not hardware)\n",
           (double)best / (NPING / 5), (double)t / NPING, NPING);
    fflush(stdout);
    return teardown();
}

/* ---- RDMA write / read, byte exact ---------------------------------------------- */
#define RBIG (64u << 20)
static const uint32_t rsizes[] = {1, 7, 4095, 4097, 65539, (1u << 20) + 5, RBIG - 3};

static int rdma_a(void)
{
    uint32_t off = 3, seed = 100;

    TRY(setup(NULL, RBIG + 4096));
    TRY(connect_rc(NULL));
    /* B writes each size at offset 3 then tells us; we check and reply */
    for (size_t i = 0; i < sizeof(rsizes) / sizeof(rsizes[0]); i++) {
        size_t bad;
        TRY(xsync());
        bad = check_pattern(buf + off, rsizes[i], seed + (uint32_t)i);
        CHECK(bad == rsizes[i], "write of %u bytes: byte %zu differs", rsizes[i], bad);
        CHECK(buf[off - 1] == 0 && buf[off + rsizes[i]] == 0,
              "write of %u bytes spilled outside its range", rsizes[i]);
        memset(buf, 0, off + rsizes[i] + 1);
        fill_pattern(buf + off, rsizes[i], seed + 50 + (uint32_t)i);
        TRY(xsync());
        TRY(xsync()); /* B has read it */
        memset(buf, 0, off + rsizes[i] + 1);
        TRY(xsync());
    }
    return teardown();
}

static int rdma_b(void)
{
    uint32_t off = 3, seed = 100;
    uint8_t *rd;
    struct ibv_mr *rmr;

    TRY(setup(NULL, RBIG + 4096));
    rd = aligned_alloc(4096, RBIG + 4096);
    CHECK(rd, "out of memory");
    rmr = ibv_reg_mr(E.pd, rd, RBIG + 4096, IBV_ACCESS_LOCAL_WRITE);
    CHECK(rmr, "reg read buffer");
    TRY(connect_rc(NULL));
    for (size_t i = 0; i < sizeof(rsizes) / sizeof(rsizes[0]); i++) {
        size_t bad;
        fill_pattern(buf + 5, rsizes[i], seed + (uint32_t)i);
        TRY(post_rdma(&E, 10 + i, IBV_WR_RDMA_WRITE, buf + 5, rsizes[i], mr->lkey,
                      peer.addr + off, peer.rkey));
        TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 10 + i, 10000));
        TRY(xsync());
        TRY(xsync()); /* A has put a new pattern there */
        memset(rd, 0, rsizes[i] + 16);
        TRY(post_rdma(&E, 20 + i, IBV_WR_RDMA_READ, rd + 1, rsizes[i], rmr->lkey,
                      peer.addr + off, peer.rkey));
        {
            struct ibv_wc wc;
            TRY(wait_wc(E.scq, &wc, 10000));
            CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 20 + i &&
                      wc.opcode == IBV_WC_RDMA_READ,
                  "read: %s opcode %d", ibv_wc_status_str(wc.status), wc.opcode);
        }
        bad = check_pattern(rd + 1, rsizes[i], seed + 50 + (uint32_t)i);
        CHECK(bad == rsizes[i], "read of %u bytes: byte %zu differs", rsizes[i], bad);
        CHECK(rd[0] == 0 && rd[1 + rsizes[i]] == 0, "read of %u bytes spilled", rsizes[i]);
        TRY(xsync());
        TRY(xsync()); /* A has cleared its buffer */
    }
    ibv_dereg_mr(rmr);
    free(rd);
    return teardown();
}

/* ---- atomics and iova-based keys -------------------------------------------------- */
static int atomic_a(void)
{
    uint64_t v;

    TRY(setup(NULL, 4096));
    v = 40;
    memcpy(buf + 64, &v, 8);
    TRY(connect_rc(NULL));
    TRY(xsync());
    memcpy(&v, buf + 64, 8);
    CHECK(v == 1000, "atomics left %llu, expected 1000", (unsigned long long)v);
    return teardown();
}

static int atomic_b(void)
{
    struct ibv_sge sge;
    struct ibv_send_wr wr, *bad;
    uint64_t old;

    TRY(setup(NULL, 4096));
    TRY(connect_rc(NULL));
    sge = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey};
    wr = (struct ibv_send_wr){.wr_id = 1, .sg_list = &sge, .num_sge = 1,
                              .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
                              .send_flags = IBV_SEND_SIGNALED};
    wr.wr.atomic.remote_addr = peer.addr + 64;
    wr.wr.atomic.rkey = peer.rkey;
    wr.wr.atomic.compare_add = 2;
    CHECK(ibv_post_send(E.qp, &wr, &bad) == 0, "post fetch-add");
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 1, 5000));
    memcpy(&old, buf, 8);
    CHECK(old == 40, "fetch-add returned %llu", (unsigned long long)old);
    wr.wr_id = 2;
    wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
    wr.wr.atomic.compare_add = 42;
    wr.wr.atomic.swap = 1000;
    CHECK(ibv_post_send(E.qp, &wr, &bad) == 0, "post cmp-swap");
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 2, 5000));
    memcpy(&old, buf, 8);
    CHECK(old == 42, "cmp-swap returned %llu", (unsigned long long)old);
    TRY(xsync());
    return teardown();
}

const struct tcase cases_rc[] = {
    {.name = "rc_srq", .a = srq_a, .b = send_side},
    {.name = "rc_rq", .a = rq_a, .b = send_side},
    {.name = "rc_inline", .a = inline_a, .b = inline_b},
    {.name = "rc_signal", .a = signal_a, .b = signal_b},
    {.name = "rc_imm", .a = imm_a, .b = imm_b},
    {.name = "rc_order", .a = order_a, .b = order_b, .timeout_s = 120},
    {.name = "rdma_rw", .a = rdma_a, .b = rdma_b, .timeout_s = 120},
    {.name = "rc_atomic", .a = atomic_a, .b = atomic_b},
    {0},
};
