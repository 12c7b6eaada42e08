/*
 * ibloop's own tests: error completions, flushing, RNR, dead peers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ibloop_test.h"

static struct ep E;
static uint8_t buf[1 << 16];
static struct ibv_mr *mr, *mr_ro, *mr_nolw;
static struct xinfo peer;

/* A exports: mr (all access) at extra[0] = rkey, mr_ro (remote read only) */
static int open_connect(const struct rc_opts *o, bool post_recv)
{
    struct xinfo mine;

    TRY(ep_open(&E, NULL));
    mr = ibv_reg_mr(E.pd, buf, 32768, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                          IBV_ACCESS_REMOTE_READ);
    mr_ro = ibv_reg_mr(E.pd, buf + 32768, 16384, IBV_ACCESS_REMOTE_READ);
    mr_nolw = ibv_reg_mr(E.pd, buf + 49152, 16384, 0);
    CHECK(mr && mr_ro && mr_nolw, "ibv_reg_mr: %s", strerror(errno));
    if (post_recv)
        TRY(post_recv1(&E, 77, buf, 4096, mr->lkey));
    ep_info(&E, &mine);
    mine.addr = (uintptr_t)buf;
    mine.rkey = mr->rkey;
    mine.extra[0] = mr_ro->rkey;
    TRY(ep_exchange(&E, &mine, &peer));
    TRY(ep_rc_connect(&E, &peer, o));
    return xsync();
}

static int close_all(void)
{
    TRY(xsync());
    ibv_dereg_mr(mr);
    ibv_dereg_mr(mr_ro);
    ibv_dereg_mr(mr_nolw);
    ep_close(&E);
    return 0;
}

static int expect_async(struct ibv_context *ctx, enum ibv_event_type type, int ms)
{
    struct pollfd p = {.fd = ctx->async_fd, .events = POLLIN};
    struct ibv_async_event ev;

    CHECK(poll(&p, 1, ms) == 1, "no async event (waited for '%s')", ibv_event_type_str(type));
    CHECK(ibv_get_async_event(ctx, &ev) == 0, "ibv_get_async_event: %s", strerror(errno));
    ibv_ack_async_event(&ev);
    CHECK(ev.event_type == type, "async event '%s', expected '%s'",
          ibv_event_type_str(ev.event_type), ibv_event_type_str(type));
    return 0;
}

static int qp_state(struct ibv_qp *qp)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr ia;

    return ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) ? -1 : (int)a.qp_state;
}

/* an error completion: only wr_id, status, vendor_err and qp_num are valid */
static int expect_err(struct ibv_cq *cq, enum ibv_wc_status st, uint64_t wr_id)
{
    struct ibv_wc wc;

    TRY(wait_wc(cq, &wc, 5000));
    CHECK(wc.status == st && wc.wr_id == wr_id, "wr %llu: '%s', expected wr %llu '%s'",
          (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
          (unsigned long long)wr_id, ibv_wc_status_str(st));
    CHECK(wc.qp_num == E.qp->qp_num, "error completion without qp_num");
    CHECK(wc.byte_len == 0xdeadbeef && wc.src_qp == 0xdeadbeef,
          "error completion fields not poisoned (byte_len %#x)", wc.byte_len);
    return 0;
}

/* ---- remote access errors ------------------------------------------------------ */
enum { RA_BAD_RKEY, RA_READONLY, RA_BOUNDS, RA_QP_ACCESS, RA_N };

static int access_a(void)
{
    for (int i = 0; i < RA_N; i++) {
        struct rc_opts o = {.set = true, .access = IBV_ACCESS_REMOTE_READ, .min_rnr_timer = 1,
                            .rnr_retry = 7, .timeout = 14, .retry_cnt = 7,
                            .max_rd_atomic = 4};
        TRY(open_connect(i == RA_QP_ACCESS ? &o : NULL, true));
        TRY(xsync()); /* B has seen its error */
        TRY(expect_async(E.ctx, IBV_EVENT_QP_ACCESS_ERR, 2000));
        CHECK(qp_state(E.qp) == IBV_QPS_ERR, "case %d: responder QP not in error", i);
        TRY(expect_err(E.rcq, IBV_WC_WR_FLUSH_ERR, 77)); /* our posted receive */
        TRY(close_all());
    }
    return 0;
}

static int access_b(void)
{
    for (int i = 0; i < RA_N; i++) {
        uint64_t addr;
        uint32_t rkey;
        TRY(open_connect(NULL, false));
        addr = peer.addr;
        rkey = peer.rkey;
        if (i == RA_BAD_RKEY)
            rkey = peer.rkey ^ 0x300;
        else if (i == RA_READONLY)
            addr += 32768, rkey = peer.extra[0];
        else if (i == RA_BOUNDS)
            addr += 32768 - 100;
        TRY(post_rdma(&E, 1, IBV_WR_RDMA_WRITE, buf, 200, mr->lkey, addr, rkey));
        TRY(post_send1(&E, 2, IBV_WR_SEND, buf, 8, mr->lkey, 0));
        TRY(expect_err(E.scq, IBV_WC_REM_ACCESS_ERR, 1));
        TRY(expect_err(E.scq, IBV_WC_WR_FLUSH_ERR, 2)); /* unsignaled, but flushed */
        CHECK(qp_state(E.qp) == IBV_QPS_ERR, "case %d: requester QP not in error", i);
        TRY(post_send1(&E, 3, IBV_WR_SEND, buf, 8, mr->lkey, IBV_SEND_SIGNALED));
        TRY(expect_err(E.scq, IBV_WC_WR_FLUSH_ERR, 3)); /* later posts too */
        TRY(xsync());
        TRY(close_all());
    }
    return 0;
}

/* ---- local protection errors ---------------------------------------------------- */
static int idle_a(void)
{
    for (int i = 0; i < 3; i++) {
        TRY(open_connect(NULL, false));
        TRY(close_all());
    }
    return 0;
}

/* 3 GiB in two SGEs: more than the port's max_msg_sz (2^31) */
static int too_long(void)
{
    size_t half = 3ull << 29;
    uint8_t *big = mmap(NULL, 2 * half, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    struct ibv_mr *bmr;
    struct ibv_sge sge[2];
    struct ibv_send_wr wr = {.wr_id = 1, .sg_list = sge, .num_sge = 2,
                             .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED};
    struct ibv_send_wr *bad;
    struct ep_opts o = {.send_sge = 2};
    int rc;

    CHECK(big != MAP_FAILED, "mmap 3 GiB");
    TRY(ep_open(&E, &o));
    bmr = ibv_reg_mr(E.pd, big, 2 * half, IBV_ACCESS_LOCAL_WRITE);
    CHECK(bmr, "reg 3 GiB: %s", strerror(errno));
    for (int i = 0; i < 2; i++)
        sge[i] = (struct ibv_sge){.addr = (uintptr_t)big + i * half, .length = (uint32_t)half,
                                  .lkey = bmr->lkey};
    TRY(ep_exchange(&E, NULL, &peer));
    TRY(ep_rc_connect(&E, &peer, NULL));
    TRY(xsync());
    rc = ibv_post_send(E.qp, &wr, &bad);
    CHECK(rc == 0, "post: %s", strerror(rc));
    TRY(expect_err(E.scq, IBV_WC_LOC_LEN_ERR, 1));
    TRY(xsync());
    ibv_dereg_mr(bmr);
    ep_close(&E);
    munmap(big, 2 * half);
    return 0;
}

static int too_long_peer(void)
{
    TRY(ep_open(&E, NULL));
    TRY(ep_exchange(&E, NULL, &peer));
    TRY(ep_rc_connect(&E, &peer, NULL));
    TRY(xsync());
    TRY(xsync());
    ep_close(&E);
    return 0;
}

static int locprot_b(void)
{
    for (int i = 0; i < 3; i++) {
        TRY(open_connect(NULL, false));
        if (i == 0) /* an lkey that does not exist */
            TRY(post_send1(&E, 1, IBV_WR_SEND, buf, 8, mr->lkey ^ 0x700, IBV_SEND_SIGNALED));
        else if (i == 1) /* beyond the end of the region */
            TRY(post_send1(&E, 1, IBV_WR_SEND, buf + 32760, 100, mr->lkey, IBV_SEND_SIGNALED));
        else /* reading into memory registered without LOCAL_WRITE */
            TRY(post_rdma(&E, 1, IBV_WR_RDMA_READ, buf + 49152, 64, mr_nolw->lkey, peer.addr,
                          peer.rkey));
        TRY(expect_err(E.scq, IBV_WC_LOC_PROT_ERR, 1));
        TRY(close_all());
    }
    return 0;
}

/* ---- receive buffer too small ----------------------------------------------------- */
static int lenerr_a(void)
{
    TRY(ep_open(&E, NULL));
    mr = ibv_reg_mr(E.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    CHECK(mr, "reg");
    TRY(post_recv1(&E, 5, buf, 16, mr->lkey));
    TRY(post_recv1(&E, 6, buf + 16, 16, mr->lkey));
    TRY(ep_exchange(&E, NULL, &peer));
    TRY(ep_rc_connect(&E, &peer, NULL));
    TRY(xsync());
    TRY(expect_err(E.rcq, IBV_WC_LOC_LEN_ERR, 5));
    TRY(expect_err(E.rcq, IBV_WC_WR_FLUSH_ERR, 6));
    CHECK(qp_state(E.qp) == IBV_QPS_ERR, "responder QP not in error");
    TRY(xsync());
    ibv_dereg_mr(mr);
    ep_close(&E);
    return 0;
}

static int lenerr_b(void)
{
    TRY(ep_open(&E, NULL));
    mr = ibv_reg_mr(E.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    CHECK(mr, "reg");
    TRY(ep_exchange(&E, NULL, &peer));
    TRY(ep_rc_connect(&E, &peer, NULL));
    TRY(xsync());
    TRY(post_send1(&E, 1, IBV_WR_SEND, buf, 64, mr->lkey, IBV_SEND_SIGNALED));
    TRY(expect_err(E.scq, IBV_WC_REM_INV_REQ_ERR, 1));
    TRY(xsync());
    ibv_dereg_mr(mr);
    ep_close(&E);
    return 0;
}

/* ---- RNR ---------------------------------------------------------------------------- */
static int rnr_a(void)
{
    struct rc_opts slow = {.set = true, .access = -1, .min_rnr_timer = 14 /* 1.28 ms */,
                           .rnr_retry = 7, .timeout = 14, .retry_cnt = 7, .max_rd_atomic = 4};
    struct ibv_wc wc;

    /* 1: nothing posted, the sender gives up after rnr_retry */
    TRY(open_connect(NULL, false));
    TRY(close_all());
    /* 2: the receive comes 30 ms late; the sends wait, in order */
    TRY(open_connect(&slow, false));
    usleep(30000);
    TRY(post_recv1(&E, 1, buf, 64, mr->lkey));
    TRY(post_recv1(&E, 2, buf + 64, 64, mr->lkey));
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 1 && buf[0] == 'x', "late recv 1");
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 2 && buf[64] == 'y', "late recv 2");
    return close_all();
}

static int rnr_b(void)
{
    struct rc_opts few = {.set = true, .access = -1, .min_rnr_timer = 1, .rnr_retry = 2,
                          .timeout = 14, .retry_cnt = 7, .max_rd_atomic = 4};
    uint64_t t0;

    TRY(open_connect(&few, false));
    t0 = now_us();
    TRY(post_send1(&E, 1, IBV_WR_SEND, buf, 8, mr->lkey, IBV_SEND_SIGNALED));
    TRY(expect_err(E.scq, IBV_WC_RNR_RETRY_EXC_ERR, 1));
    /* a few RNR timer periods (microseconds) when it works; 10 s only
     * catches retries that never end, and no loaded machine breaks it */
    CHECK(now_us() - t0 < 10000000, "RNR retries took %llu us",
          (unsigned long long)(now_us() - t0));
    TRY(close_all());
    TRY(open_connect(NULL, false));
    t0 = now_us();
    buf[0] = 'x';
    buf[64] = 'y';
    TRY(post_send1(&E, 1, IBV_WR_SEND, buf, 1, mr->lkey, IBV_SEND_SIGNALED));
    TRY(post_send1(&E, 2, IBV_WR_SEND, buf + 64, 1, mr->lkey, IBV_SEND_SIGNALED));
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 1, 5000));
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 2, 5000));
    CHECK(now_us() - t0 >= 25000, "sends completed before the receive was posted");
    return close_all();
}

/* ---- the peer dies ------------------------------------------------------------------ */
static int killed_a(void)
{
    uint64_t t0;

    TRY(open_connect(NULL, false));
    kill(me->peer, SIGKILL);
    usleep(20000);
    t0 = now_us();
    TRY(post_send1(&E, 1, IBV_WR_SEND, buf, 8, mr->lkey, IBV_SEND_SIGNALED));
    TRY(post_rdma(&E, 2, IBV_WR_RDMA_READ, buf, 8, mr->lkey, peer.addr, peer.rkey));
    TRY(expect_err(E.scq, IBV_WC_RETRY_EXC_ERR, 1));
    TRY(expect_err(E.scq, IBV_WC_WR_FLUSH_ERR, 2));
    CHECK(now_us() - t0 < 3000000, "dead peer detected after %llu us",
          (unsigned long long)(now_us() - t0));
    ibv_dereg_mr(mr);
    ibv_dereg_mr(mr_ro);
    ibv_dereg_mr(mr_nolw);
    ep_close(&E);
    return 0;
}

static int killed_b(void)
{
    TRY(open_connect(NULL, false));
    sleep(30); /* killed by A */
    return 0;
}

/* ---- nobody answers: not connected back, wrong LID, wrong PSN -------------------- */
static int noanswer_a(void)
{
    for (int i = 0; i < 3; i++) {
        TRY(ep_open(&E, NULL));
        mr = ibv_reg_mr(E.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
        CHECK(mr, "reg");
        TRY(post_recv1(&E, 1, buf, 64, mr->lkey));
        TRY(ep_exchange(&E, NULL, &peer));
        if (i == 0)
            peer.qpn ^= 1 << 14; /* connected to somebody else */
        TRY(ep_rc_connect(&E, &peer, NULL));
        TRY(xsync());
        TRY(xsync());
        TRY(expect_none(E.rcq, 10));
        ibv_dereg_mr(mr);
        ep_close(&E);
    }
    return 0;
}

static int noanswer_b(void)
{
    for (int i = 0; i < 3; i++) {
        struct rc_opts o = {.set = true, .access = -1, .min_rnr_timer = 1, .rnr_retry = 7,
                            .timeout = 10, .retry_cnt = 3, .max_rd_atomic = 4};
        uint64_t t0;
        TRY(ep_open(&E, NULL));
        mr = ibv_reg_mr(E.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
        CHECK(mr, "reg");
        TRY(ep_exchange(&E, NULL, &peer));
        if (i == 1)
            peer.lid += 7, peer.gid[15] += 7; /* a host that is not there */
        if (i == 2)
            E.psn ^= 0x55; /* not what the responder expects */
        TRY(ep_rc_connect(&E, &peer, &o));
        TRY(xsync());
        t0 = now_us();
        TRY(post_send1(&E, 1, IBV_WR_SEND, buf, 8, mr->lkey, IBV_SEND_SIGNALED));
        TRY(expect_err(E.scq, IBV_WC_RETRY_EXC_ERR, 1));
        CHECK(now_us() - t0 >= 3000, "case %d: gave up after %llu us, before the timeout", i,
              (unsigned long long)(now_us() - t0));
        TRY(xsync());
        ibv_dereg_mr(mr);
        ep_close(&E);
    }
    return 0;
}

/* ---- CQ overflow ------------------------------------------------------------------- */
static int overflow_a(void)
{
    struct ep_opts o = {.cqe = 4, .recv_wr = 32};

    TRY(ep_open(&E, &o));
    mr = ibv_reg_mr(E.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    CHECK(mr, "reg");
    for (int i = 0; i < 16; i++)
        TRY(post_recv1(&E, (uint64_t)i, buf + i * 64, 64, mr->lkey));
    TRY(ep_exchange(&E, NULL, &peer));
    TRY(ep_rc_connect(&E, &peer, NULL));
    TRY(xsync());
    TRY(xsync()); /* B sent cqe + 2 messages without us polling */
    TRY(expect_async(E.ctx, IBV_EVENT_CQ_ERR, 2000));
    TRY(expect_async(E.ctx, IBV_EVENT_QP_FATAL, 2000));
    CHECK(qp_state(E.qp) == IBV_QPS_ERR, "QP not in error after its CQ overflowed");
    TRY(xsync());
    ibv_dereg_mr(mr);
    ep_close(&E);
    return 0;
}

static int overflow_b(void)
{
    TRY(ep_open(&E, NULL));
    mr = ibv_reg_mr(E.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    CHECK(mr, "reg");
    TRY(ep_exchange(&E, NULL, &peer));
    TRY(ep_rc_connect(&E, &peer, NULL));
    TRY(xsync());
    for (int i = 0; i < 9; i++) {
        TRY(post_send1(&E, (uint64_t)i, IBV_WR_SEND, buf, 8, mr->lkey, IBV_SEND_SIGNALED));
        TRY(expect_wc(E.scq, IBV_WC_SUCCESS, (uint64_t)i, 5000));
    }
    TRY(xsync());
    TRY(xsync());
    ibv_dereg_mr(mr);
    ep_close(&E);
    return 0;
}

/* ---- a peer killed in the middle of traffic wedges nothing ------------------------ */
static int busy_a(void)
{
    struct ep_opts o = {.srq = true, .recv_wr = 1024, .cqe = 4096};
    struct ibv_wc wc[64];
    uint64_t end;
    long got = 0;
    char b;

    TRY(ep_open(&E, &o));
    mr = ibv_reg_mr(E.pd, buf, 65536, IBV_ACCESS_LOCAL_WRITE);
    CHECK(mr, "reg");
    for (int i = 0; i < 1024; i++)
        TRY(post_recv1(&E, (uint64_t)i, buf + (i % 1024) * 64, 64, mr->lkey));
    TRY(ep_exchange(&E, NULL, &peer));
    TRY(ep_rc_connect(&E, &peer, NULL));
    TRY(xsync());
    TRY(xrecv(&b, 1, 20000)); /* B is sending */
    end = now_us() + 150000;
    while (now_us() < end || got < 1000) {
        int n = ibv_poll_cq(E.rcq, 64, wc);
        for (int i = 0; i < n; i++)
            TRY(post_recv1(&E, wc[i].wr_id, buf + (wc[i].wr_id % 1024) * 64, 64, mr->lkey));
        got += n > 0 ? n : 0;
        CHECK(now_us() < end + 10000000, "only %ld messages arrived", got);
    }
    kill(me->peer, SIGKILL);
    /* everything of ours still works, whatever B held when it died */
    end = now_us() + 100000;
    while (now_us() < end) {
        int n = ibv_poll_cq(E.rcq, 64, wc);
        for (int i = 0; i < n; i++)
            TRY(post_recv1(&E, wc[i].wr_id, buf + (wc[i].wr_id % 1024) * 64, 64, mr->lkey));
    }
    {
        struct ep e2 = E;
        struct ibv_mr *m2;
        TRY(ep_open(&E, NULL)); /* a new endpoint in the same fabric */
        m2 = ibv_reg_mr(E.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
        CHECK(m2, "reg after the kill");
        TRY(post_recv1(&E, 1, buf, 64, m2->lkey));
        ibv_dereg_mr(m2);
        ep_close(&E);
        E = e2;
    }
    ibv_dereg_mr(mr);
    ep_close(&E);
    return 0;
}

static int busy_b(void)
{
    char b = 'g';

    TRY(ep_open(&E, &(struct ep_opts){.send_wr = 512, .cqe = 1024}));
    mr = ibv_reg_mr(E.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    CHECK(mr, "reg");
    TRY(ep_exchange(&E, NULL, &peer));
    TRY(ep_rc_connect(&E, &peer, NULL));
    TRY(xsync());
    TRY(xsend(&b, 1));
    for (uint64_t i = 0;; i++) { /* until A kills us */
        TRY(post_send1(&E, i, IBV_WR_SEND, buf, 8, mr->lkey,
                       (i % 64) == 63 ? IBV_SEND_SIGNALED : 0));
        if ((i % 64) == 63)
            TRY(expect_wc(E.scq, IBV_WC_SUCCESS, i, 20000));
    }
    return 0;
}

/* ---- a fabric whose only process was killed is reclaimed -------------------------- */
static int stale_a(void)
{
    char path[256];
    struct stat st;
    char b;

    snprintf(path, sizeof(path), "/dev/shm/ibloop-%u-%s", (unsigned)getuid(),
             getenv("IBLOOP_FABRIC") ? getenv("IBLOOP_FABRIC") : "default");
    TRY(xrecv(&b, 1, 20000)); /* B is attached, with objects */
    kill(me->peer, SIGKILL);
    usleep(50000);
    CHECK(stat(path, &st) == 0, "the fabric file of a killed process vanished by itself");
    TRY(ep_open(&E, NULL)); /* finds every attached process dead: resets it */
    TRY(post_recv1(&E, 1, NULL, 0, 0));
    ep_close(&E);
    CHECK(stat(path, &st) != 0, "%s left behind after the last user closed", path);
    return 0;
}

static int stale_b(void)
{
    struct ep_opts o = {.srq = true};
    char b = 'k';

    TRY(ep_open(&E, &o));
    mr = ibv_reg_mr(E.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    CHECK(mr, "reg");
    TRY(post_recv1(&E, 1, buf, 64, mr->lkey));
    TRY(xsend(&b, 1));
    sleep(30); /* killed by A */
    return 0;
}

const struct tcase cases_err[] = {
    {.name = "msg_too_long", .a = too_long_peer, .b = too_long},
    {.name = "stale_fabric", .a = stale_a, .b = stale_b, .b_killed = true},
    {.name = "killed_busy", .a = busy_a, .b = busy_b, .b_killed = true},
    {.name = "rem_access", .a = access_a, .b = access_b},
    {.name = "loc_prot", .a = idle_a, .b = locprot_b},
    {.name = "len_err", .a = lenerr_a, .b = lenerr_b},
    {.name = "rnr", .a = rnr_a, .b = rnr_b},
    {.name = "peer_killed", .a = killed_a, .b = killed_b, .b_killed = true},
    {.name = "no_answer", .a = noanswer_a, .b = noanswer_b},
    {.name = "cq_overflow", .a = overflow_a, .b = overflow_b},
    {0},
};
