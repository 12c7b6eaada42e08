/*
 * ibloop's own tests: completion channels, async events, threads, and the
 * fault injection variables.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "ibloop_test.h"

static struct ep E;
static uint8_t buf[65536];
static struct ibv_mr *mr;
static struct xinfo peer;

static int rc_up(const struct ep_opts *o, int nrecv)
{
    TRY(ep_open(&E, o));
    mr = ibv_reg_mr(E.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    CHECK(mr, "reg: %s", strerror(errno));
    for (int i = 0; i < nrecv; i++)
        TRY(post_recv1(&E, (uint64_t)i, buf + i * 64, 64, mr->lkey));
    TRY(ep_exchange(&E, NULL, &peer));
    TRY(ep_rc_connect(&E, &peer, NULL));
    return xsync();
}

static int rc_down(void)
{
    TRY(xsync());
    ibv_dereg_mr(mr);
    ep_close(&E);
    return 0;
}

static int get_async(struct ibv_context *ctx, struct ibv_async_event *ev, int ms)
{
    struct pollfd p = {.fd = ctx->async_fd, .events = POLLIN};

    CHECK(poll(&p, 1, ms) == 1, "no async event within %d ms", ms);
    CHECK(ibv_get_async_event(ctx, ev) == 0, "ibv_get_async_event: %s", strerror(errno));
    ibv_ack_async_event(ev);
    return 0;
}

/* ---- completion channel wakes an epoll in the other process ------------------------ */
static int chan_a(void)
{
    struct ep_opts o = {.channel = true};
    struct epoll_event ev = {.events = EPOLLIN}, out;
    struct ibv_cq *cq;
    void *cqctx;
    struct ibv_wc wc;
    int ep, fl;

    TRY(rc_up(&o, 8));
    ep = epoll_create1(EPOLL_CLOEXEC);
    CHECK(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, E.ch->fd, &ev) == 0, "epoll");
    fl = fcntl(E.ch->fd, F_GETFL);
    CHECK(fcntl(E.ch->fd, F_SETFL, fl | O_NONBLOCK) == 0, "O_NONBLOCK");
    CHECK(ibv_get_cq_event(E.ch, &cq, &cqctx) == -1 && errno == EAGAIN,
          "ibv_get_cq_event on an empty non-blocking channel: errno %d", errno);
    CHECK(ibv_req_notify_cq(E.rcq, 0) == 0, "arm");
    CHECK(epoll_wait(ep, &out, 1, 0) == 0, "readable before any completion");
    TRY(xsync()); /* B sends */
    CHECK(epoll_wait(ep, &out, 1, 5000) == 1, "epoll did not wake");
    CHECK(epoll_wait(ep, &out, 1, 0) == 1, "level-triggered: still readable");
    CHECK(ibv_get_cq_event(E.ch, &cq, &cqctx) == 0, "ibv_get_cq_event: %s", strerror(errno));
    CHECK(cq == E.rcq && cqctx == &E, "event for the wrong CQ");
    ibv_ack_cq_events(cq, 1);
    CHECK(epoll_wait(ep, &out, 1, 0) == 0, "still readable after the event was taken");
    TRY(wait_wc(E.rcq, &wc, 1000));
    CHECK(wc.status == IBV_WC_SUCCESS, "recv");
    /* not re-armed: no more events */
    TRY(xsync());
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(epoll_wait(ep, &out, 1, 50) == 0, "event without arming");
    /* solicited only: an unsolicited send does not wake, a solicited one does */
    CHECK(ibv_req_notify_cq(E.rcq, 1) == 0, "arm solicited");
    TRY(xsync());
    TRY(wait_wc(E.rcq, &wc, 5000));
    CHECK(epoll_wait(ep, &out, 1, 50) == 0, "woken by an unsolicited completion");
    TRY(xsync());
    CHECK(epoll_wait(ep, &out, 1, 5000) == 1, "not woken by a solicited completion");
    CHECK(ibv_get_cq_event(E.ch, &cq, &cqctx) == 0 && cq == E.rcq, "solicited event");
    ibv_ack_cq_events(cq, 1);
    TRY(wait_wc(E.rcq, &wc, 1000));
    /* blocking mode again: ibv_get_cq_event waits for the next one */
    CHECK(fcntl(E.ch->fd, F_SETFL, fl) == 0, "blocking");
    CHECK(ibv_req_notify_cq(E.rcq, 0) == 0, "arm");
    TRY(xsync());
    CHECK(ibv_get_cq_event(E.ch, &cq, &cqctx) == 0 && cq == E.rcq, "blocking get");
    ibv_ack_cq_events(cq, 1);
    close(ep);
    return rc_down();
}

static int chan_b(void)
{
    TRY(rc_up(NULL, 0));
    for (int i = 0; i < 5; i++) {
        TRY(xsync());
        usleep(20000);
        TRY(post_send1(&E, (uint64_t)i, IBV_WR_SEND, buf, 8, mr->lkey,
                       IBV_SEND_SIGNALED | (i == 3 ? IBV_SEND_SOLICITED : 0)));
        TRY(expect_wc(E.scq, IBV_WC_SUCCESS, (uint64_t)i, 5000));
    }
    return rc_down();
}

/* ---- SRQ limit, last WQE reached --------------------------------------------------- */
static int srq_a(void)
{
    struct ep_opts o = {.srq = true, .recv_wr = 32};
    struct ibv_srq_attr sa = {.srq_limit = 10};
    struct ibv_async_event ev;
    struct ibv_wc wc;

    TRY(rc_up(&o, 16));
    CHECK(ibv_modify_srq(E.srq, &sa, IBV_SRQ_LIMIT) == 0, "arm the SRQ limit");
    sa.srq_limit = 33;
    CHECK(ibv_modify_srq(E.srq, &sa, IBV_SRQ_LIMIT) == EINVAL, "limit above max_wr");
    CHECK(ibv_query_srq(E.srq, &sa) == 0 && sa.srq_limit == 10 && sa.max_wr >= 32,
          "query: limit %u max_wr %u", sa.srq_limit, sa.max_wr);
    TRY(xsync()); /* B sends 7: 9 left, below the limit */
    TRY(get_async(E.ctx, &ev, 5000));
    CHECK(ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == E.srq,
          "event '%s'", ibv_event_type_str(ev.event_type));
    CHECK(ibv_query_srq(E.srq, &sa) == 0 && sa.srq_limit == 0, "limit not disarmed");
    for (int i = 0; i < 7; i++)
        TRY(wait_wc(E.rcq, &wc, 2000));
    /* a QP on an SRQ that goes to error raises last-WQE-reached */
    {
        struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
        CHECK(ibv_modify_qp(E.qp, &a, IBV_QP_STATE) == 0, "to ERR");
        TRY(get_async(E.ctx, &ev, 2000));
        CHECK(ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED && ev.element.qp == E.qp,
              "event '%s'", ibv_event_type_str(ev.event_type));
    }
    return rc_down();
}

static int srq_b(void)
{
    TRY(rc_up(NULL, 0));
    TRY(xsync());
    for (int i = 0; i < 7; i++) {
        TRY(post_send1(&E, (uint64_t)i, IBV_WR_SEND, buf, 8, mr->lkey, IBV_SEND_SIGNALED));
        TRY(expect_wc(E.scq, IBV_WC_SUCCESS, (uint64_t)i, 5000));
    }
    return rc_down();
}

/* ---- one thread posts, another polls ----------------------------------------------- */
#define NTHR 20000
static volatile int poll_fail;

static void *poller(void *arg)
{
    struct ibv_wc wc[16];
    int got = 0;
    uint64_t end = now_us() + 30000000;

    (void)arg;
    while (got < NTHR / 16 && now_us() < end) {
        int n = ibv_poll_cq(E.scq, 16, wc);
        for (int i = 0; i < n; i++)
            if (wc[i].status != IBV_WC_SUCCESS)
                poll_fail = 1;
        got += n > 0 ? n : 0;
    }
    if (got < NTHR / 16)
        poll_fail = 2;
    return NULL;
}

static int thr_a(void)
{
    struct ep_opts o = {.srq = true, .recv_wr = 4096, .cqe = 8192};
    struct ibv_wc wc[64];
    int got = 0;
    uint64_t end = now_us() + 30000000;

    TRY(rc_up(&o, 1024));
    while (got < NTHR && now_us() < end) {
        int n = ibv_poll_cq(E.rcq, 64, wc);
        for (int i = 0; i < n; i++) {
            CHECK(wc[i].status == IBV_WC_SUCCESS, "recv %d", got);
            TRY(post_recv1(&E, wc[i].wr_id, buf + wc[i].wr_id * 64, 64, mr->lkey));
        }
        got += n;
    }
    CHECK(got == NTHR, "received %d of %d", got, NTHR);
    return rc_down();
}

static int thr_b(void)
{
    struct ep_opts o = {.send_wr = 1024, .cqe = 4096};
    pthread_t t;

    TRY(rc_up(&o, 0));
    CHECK(pthread_create(&t, NULL, poller, NULL) == 0, "thread");
    for (int i = 0; i < NTHR; i++) {
        struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey};
        struct ibv_send_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1,
                                 .opcode = IBV_WR_SEND,
                                 .send_flags = (i % 16) == 15 ? IBV_SEND_SIGNALED : 0};
        struct ibv_send_wr *bad;
        uint64_t end = now_us() + 10000000;
        int rc;
        while ((rc = ibv_post_send(E.qp, &wr, &bad)) == ENOMEM && now_us() < end)
            ; /* the poller frees the slots */
        CHECK(rc == 0, "post %d: %s", i, strerror(rc));
    }
    pthread_join(t, NULL);
    CHECK(!poll_fail, "poller thread: %s", poll_fail == 1 ? "error completion" : "stalled");
    return rc_down();
}

/* ---- fault injection ------------------------------------------------------------- */
static int link_a(void)
{
    struct ibv_wc wc;

    TRY(rc_up(NULL, 16));
    TRY(xsync());
    for (int i = 0; i < 3; i++) {
        TRY(wait_wc(E.rcq, &wc, 5000));
        CHECK(wc.status == IBV_WC_SUCCESS, "recv %d", i);
    }
    return rc_down();
}

static int link_b(void) /* IBLOOP_FAULT_LINK_DOWN_AFTER=3 IBLOOP_FAULT_LINK_DOWN_MS=300 */
{
    struct ibv_async_event ev;
    struct ibv_port_attr pa;
    uint64_t t0;

    TRY(rc_up(NULL, 0));
    TRY(xsync());
    for (int i = 0; i < 3; i++) {
        TRY(post_send1(&E, (uint64_t)i, IBV_WR_SEND, buf, 8, mr->lkey, IBV_SEND_SIGNALED));
        TRY(expect_wc(E.scq, IBV_WC_SUCCESS, (uint64_t)i, 5000));
    }
    CHECK(ibv_query_port(E.ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE, "port");
    t0 = now_us();
    TRY(post_send1(&E, 3, IBV_WR_SEND, buf, 8, mr->lkey, IBV_SEND_SIGNALED));
    TRY(get_async(E.ctx, &ev, 2000));
    CHECK(ev.event_type == IBV_EVENT_PORT_ERR && ev.element.port_num == 1, "event '%s'",
          ibv_event_type_str(ev.event_type));
    CHECK(ibv_query_port(E.ctx, 1, &pa) == 0 && pa.state == IBV_PORT_DOWN,
          "port state %s while down", ibv_port_state_str(pa.state));
    TRY(expect_wc(E.scq, IBV_WC_RETRY_EXC_ERR, 3, 5000));
    TRY(get_async(E.ctx, &ev, 2000));
    CHECK(ev.event_type == IBV_EVENT_PORT_ACTIVE, "event '%s'",
          ibv_event_type_str(ev.event_type));
    CHECK(now_us() - t0 >= 250000, "link came back too early");
    CHECK(ibv_query_port(E.ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE, "port up");
    return rc_down();
}

static int idle(void)
{
    return 0;
}

static int reg_a(void) /* IBLOOP_FAULT_REG_FAIL_AFTER=2 */
{
    struct ibv_mr *m[3];

    TRY(ep_open(&E, NULL));
    m[0] = ibv_reg_mr(E.pd, buf, 4096, 0);
    m[1] = ibv_reg_mr(E.pd, buf, 4096, 0);
    CHECK(m[0] && m[1], "the first registrations fail");
    m[2] = ibv_reg_mr(E.pd, buf, 4096, 0);
    CHECK(!m[2] && errno == ENOMEM, "third registration: %p errno %d", (void *)m[2], errno);
    ibv_dereg_mr(m[0]);
    ibv_dereg_mr(m[1]);
    ep_close(&E);
    return 0;
}

static int drop_a(void)
{
    TRY(rc_up(NULL, 16));
    return rc_down();
}

static int drop_b(void) /* IBLOOP_FAULT_DROP_CQE=3 */
{
    struct ibv_wc wc;
    const uint64_t want[] = {0, 1, 3, 4};

    TRY(rc_up(NULL, 0));
    for (int i = 0; i < 5; i++)
        TRY(post_send1(&E, (uint64_t)i, IBV_WR_SEND, buf, 8, mr->lkey, IBV_SEND_SIGNALED));
    for (int i = 0; i < 4; i++) {
        TRY(wait_wc(E.scq, &wc, 5000));
        CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == want[i], "got wr %llu, expected %llu",
              (unsigned long long)wc.wr_id, (unsigned long long)want[i]);
    }
    TRY(expect_none(E.scq, 50));
    return rc_down();
}

static int qpfail_a(void) /* IBLOOP_FAULT_QP_FAIL_AFTER=1 */
{
    struct ibv_qp_init_attr ia;

    TRY(ep_open(&E, NULL));
    ia = E.ia;
    CHECK(!ibv_create_qp(E.pd, &ia) && errno == ENOMEM, "second QP created");
    ep_close(&E);
    return 0;
}

static int nodev_a(void) /* IBLOOP_FAULT_NO_DEVICE=1 */
{
    int n = -1;
    struct ibv_device **l = ibv_get_device_list(&n);

    CHECK(l && n == 0 && !l[0], "devices: %d", n);
    ibv_free_device_list(l);
    return 0;
}

/* B dies holding the lock of A's receive CQ; A's CQ keeps working */
static int die_a(void)
{
    struct ibv_qp *qp1, *qp2, *orig;
    struct ibv_qp_init_attr ia;
    struct ibv_qp_attr a;
    struct xinfo x1, x2;
    struct ibv_wc wc;
    char b;

    TRY(rc_up(NULL, 16));
    TRY(xrecv(&b, 1, 20000));
    for (int i = 0; i < 4; i++)
        TRY(wait_wc(E.rcq, &wc, 5000));
    usleep(100000); /* B is dead now, with our CQ's lock held */
    CHECK(ibv_req_notify_cq(E.rcq, 0) == 0, "arm a CQ whose lock a dead process held");
    /* two QPs of ours, connected to each other, complete into that CQ */
    ia = E.ia;
    qp1 = ibv_create_qp(E.pd, &ia);
    qp2 = ibv_create_qp(E.pd, &ia);
    CHECK(qp1 && qp2, "create");
    for (int i = 0; i < 2; i++) {
        struct ibv_qp *q = i ? qp2 : qp1;
        memset(&a, 0, sizeof(a));
        a.qp_state = IBV_QPS_INIT;
        a.port_num = 1;
        CHECK(ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                       IBV_QP_ACCESS_FLAGS) == 0, "INIT");
    }
    orig = E.qp;
    ep_info(&E, &x1);
    x2 = x1;
    x1.qpn = qp1->qp_num;
    x2.qpn = qp2->qp_num;
    E.qp = qp1;
    TRY(ep_rc_connect(&E, &x2, NULL));
    E.qp = qp2;
    TRY(ep_rc_connect(&E, &x1, NULL));
    TRY(post_recv1(&E, 42, buf, 64, mr->lkey));
    E.qp = qp1;
    TRY(post_send1(&E, 43, IBV_WR_SEND, buf + 1024, 8, mr->lkey, IBV_SEND_SIGNALED));
    TRY(expect_wc(E.scq, IBV_WC_SUCCESS, 43, 5000));
    TRY(expect_wc(E.rcq, IBV_WC_SUCCESS, 42, 5000));
    ibv_destroy_qp(qp1);
    ibv_destroy_qp(qp2);
    E.qp = orig;
    ibv_dereg_mr(mr);
    ep_close(&E);
    return 0;
}

static int die_b(void) /* IBLOOP_FAULT_DIE_IN_LOCK=5 */
{
    char b = 'd';

    TRY(rc_up(NULL, 0));
    TRY(xsend(&b, 1));
    for (int i = 0; i < 10; i++)
        TRY(post_send1(&E, (uint64_t)i, IBV_WR_SEND, buf, 8, mr->lkey, 0));
    sleep(30); /* not reached: the 5th send kills us */
    return 0;
}

const struct tcase cases_ev[] = {
    {.name = "fault_die_in_lock", .a = die_a, .b = die_b, .b_killed = true,
     .env_b = "IBLOOP_FAULT_DIE_IN_LOCK=5"},
    {.name = "channel", .a = chan_a, .b = chan_b},
    {.name = "srq_limit", .a = srq_a, .b = srq_b},
    {.name = "threads", .a = thr_a, .b = thr_b, .timeout_s = 90},
    {.name = "fault_link_down", .a = link_a, .b = link_b,
     .env_b = "IBLOOP_FAULT_LINK_DOWN_AFTER=3 IBLOOP_FAULT_LINK_DOWN_MS=300"},
    {.name = "fault_reg", .a = reg_a, .b = idle, .env_a = "IBLOOP_FAULT_REG_FAIL_AFTER=2"},
    {.name = "fault_drop_cqe", .a = drop_a, .b = drop_b, .env_b = "IBLOOP_FAULT_DROP_CQE=3"},
    {.name = "fault_qp", .a = qpfail_a, .b = idle, .env_a = "IBLOOP_FAULT_QP_FAIL_AFTER=1"},
    {.name = "fault_no_device", .a = nodev_a, .b = idle, .env_a = "IBLOOP_FAULT_NO_DEVICE=1"},
    {0},
};
