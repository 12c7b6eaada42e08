/*
 * Unit test of the engine's stream parser (tern_handle_pkt) without a job:
 * a context with two ranks whose VC to rank 1 uses a capturing netmod.
 * Packets are fed in every fragmenting (byte by byte, header split, several
 * packets in one buffer), and malformed streams must fail the VC with
 * TERN_ERR_MALFORMED and complete the receives that depended on it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "engine/match.h"
#include "engine/netmod.h"

#include "tests/unit/expect.h"

/* capturing netmod: remembers the last control packet sent */
static tern_pkt_hdr_t last_sent;
static int sent_count;
static tern_status_t cap_istart(tern_vc_t *vc, const void *hdr, size_t hdrlen, const void *data,
                                size_t len, tern_request_t **sreq)
{
    memcpy(&last_sent, hdr, sizeof(last_sent));
    sent_count++;
    *sreq = NULL;
    return TERN_OK;
}
static tern_status_t cap_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                   size_t hdrlen)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "capture netmod: no payload sends");
}
/* self's lifecycle ops, the capture's data ops */
static tern_nm_core_ops_t cap_core;
static const tern_netmod_desc_t cap_desc = {
    .abi = TERN_NETMOD_ABI, .name = "capture", .core = &cap_core};

static tern_context_t ctx;
static tern_worker_t worker;
static tern_netmod_inst_t cap;

static void setup(void)
{
    static tern_vc_t vcs[2];
    memset(&ctx, 0, sizeof(ctx));
    memset(vcs, 0, sizeof(vcs));
    cap_core = *tern_netmod_self.core;
    cap_core.istart_contig_msg = cap_istart;
    cap_core.send_noncontig = cap_noncontig;
    if (tern_netmod_instantiate(&cap, &cap_desc) != TERN_OK ||
        tern_config_load(&ctx.cfg) != TERN_OK)
        abort();
    ctx.rank = 0;
    ctx.size = 2;
    ctx.workers = &worker;
    ctx.num_workers = 1;
    if (tern_worker_init(&worker, &ctx, 0) != TERN_OK)
        abort();
    worker.vcs = vcs;
    worker.netmods = &cap;
    worker.num_netmods = 1;
    for (int r = 0; r < 2; r++) {
        vcs[r].rank = r;
        vcs[r].worker = &worker;
        vcs[r].nm = &cap;
        vcs[r].eager_limit = ctx.cfg.eager_limit;
        tern_list_init(&vcs[r].lmt_wait);
    }
}

static void teardown(void)
{
    tern_worker_fini(&worker);
    for (int r = 0; r < ctx.size; r++)
        tern_vc_free_msgs(&worker.vcs[r]);
}

/* Append an eager packet with payload of len bytes of `fillc` + index. */
static size_t put_eager(uint8_t *out, int tag, size_t len, uint8_t seed)
{
    tern_pkt_hdr_t h = {.type = TERN_PKT_EAGER, .tag = tag, .len = len};
    memcpy(out, &h, sizeof(h));
    for (size_t i = 0; i < len; i++)
        out[sizeof(h) + i] = (uint8_t)(seed + i * 7);
    return sizeof(h) + len;
}

static int check_payload(const uint8_t *b, size_t len, uint8_t seed)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != (uint8_t)(seed + i * 7))
            return 0;
    return 1;
}

/* Feed buf to vc 1 in pieces of `step` (0: pseudo-random 1..97). */
static tern_status_t feed(const uint8_t *buf, size_t len, size_t step)
{
    unsigned x = 12345;
    for (size_t off = 0; off < len;) {
        size_t n = step;
        if (step == 0) {
            x = x * 1103515245u + 12345u;
            n = 1 + (x >> 16) % 97;
        }
        if (n > len - off)
            n = len - off;
        tern_status_t st = tern_handle_pkt(&worker.vcs[1], buf + off, n);
        if (st != TERN_OK)
            return st;
        off += n;
    }
    return TERN_OK;
}

static void test_fragments(size_t step)
{
    setup();
    tern_worker_t *w = &worker;
    static uint8_t stream[1 << 16];
    const size_t lens[] = {0, 1, 39, 40, 41, 300, 5000};
    size_t n = 0;
    for (int k = 0; k < 7; k++)
        n += put_eager(stream + n, k, lens[k], (uint8_t)(k * 31));
    /* receives for even tags posted first; odd tags arrive unexpected */
    uint8_t bufs[7][6000];
    tern_request_t *reqs[7] = {0};
    for (int k = 0; k < 7; k += 2)
        EXPECT(tern_irecv(w, bufs[k], sizeof(bufs[k]), 1, k, 0, NULL, &reqs[k]) == TERN_INPROGRESS,
               "post %d", k);
    EXPECT(feed(stream, n, step) == TERN_OK, "feed step %zu: %s", step, tern_last_error());
    for (int k = 0; k < 7; k++) {
        tern_recv_info_t info = {0};
        tern_status_t st;
        if (k % 2 == 0) {
            st = tern_test(w, reqs[k], &info);
        } else {
            tern_request_t *r = NULL;
            st = tern_irecv(w, bufs[k], sizeof(bufs[k]), 1, k, 0, &info, &r);
        }
        EXPECT(st == TERN_OK, "step %zu tag %d: %s", step, k, tern_strerror(st));
        EXPECT(info.length == lens[k] && info.source == 1 && info.tag == k,
               "step %zu tag %d info", step, k);
        EXPECT(check_payload(bufs[k], lens[k], (uint8_t)(k * 31)), "step %zu tag %d data", step, k);
    }
    /* rendezvous in the null mode: RTS -> our CTS -> DATA in fragments */
    uint8_t big[20000], data[sizeof(tern_pkt_hdr_t) + sizeof(big)];
    tern_request_t *r;
    EXPECT(tern_irecv(w, big, sizeof(big), 1, 50, 0, NULL, &r) == TERN_INPROGRESS, "post rndv");
    tern_pkt_hdr_t rts = {.type = TERN_PKT_RTS, .flags = TERN_LMT_NULL, .tag = 50,
                          .len = sizeof(big), .sreq = 0x77};
    sent_count = 0;
    EXPECT(feed((const uint8_t *)&rts, sizeof(rts), step) == TERN_OK, "RTS");
    EXPECT(sent_count == 1 && last_sent.type == TERN_PKT_CTS && last_sent.sreq == 0x77 &&
               last_sent.rreq != 0, "CTS answered (count %d type %u)", sent_count, last_sent.type);
    tern_pkt_hdr_t d = {.type = TERN_PKT_DATA, .len = sizeof(big), .rreq = last_sent.rreq};
    memcpy(data, &d, sizeof(d));
    for (size_t i = 0; i < sizeof(big); i++)
        data[sizeof(d) + i] = (uint8_t)(9 + i * 7);
    EXPECT(feed(data, sizeof(data), step) == TERN_OK, "DATA");
    EXPECT(tern_test(w, r, NULL) == TERN_OK, "rendezvous receive completed");
    EXPECT(check_payload(big, sizeof(big), 9), "rendezvous data");
    teardown();
}

/* Each malformed header fails the VC and the receive waiting on it. */
static void test_malformed(const char *what, tern_pkt_hdr_t h)
{
    setup();
    tern_worker_t *w = &worker;
    char buf[8];
    tern_request_t *r;
    EXPECT(tern_irecv(w, buf, sizeof(buf), 1, 0, 0, NULL, &r) == TERN_INPROGRESS, "post");
    uint8_t pkt[sizeof(h) + 300];
    memset(pkt, 0, sizeof(pkt));
    memcpy(pkt, &h, sizeof(h));
    tern_status_t st = feed(pkt, sizeof(pkt), 0);
    EXPECT(st == TERN_ERR_MALFORMED, "%s: feed returned %s", what, tern_strerror(st));
    EXPECT(worker.vcs[1].state == TERN_VC_FAILED, "%s: VC not failed", what);
    EXPECT(strstr(tern_last_error(), "rank 1") != NULL, "%s: message %s", what,
           tern_last_error());
    tern_recv_info_t info;
    tern_error(TERN_ERR_IO, "an unrelated later error");
    st = tern_test(w, r, &info);
    EXPECT(st == TERN_ERR_MALFORMED, "%s: waiting receive got %s", what, tern_strerror(st));
    EXPECT(strstr(tern_last_error(), "connection to rank 1 failed") != NULL,
           "%s: reaping the failed receive gives its VC's message, not: %s", what,
           tern_last_error());
    char b2[4];
    st = tern_irecv(w, b2, 4, 1, 0, 0, NULL, &r);
    EXPECT(st == TERN_ERR_MALFORMED, "%s: later receive from the failed VC: %s", what,
           tern_strerror(st));
    teardown();
}

/* A BYE (the peer terminated the VC: finalize) makes the end of its stream a
 * close: the receive that only rank 1 could satisfy ends with
 * TERN_ERR_PEER_FAILED and a message saying it closed, not failed, and a
 * receive from any source stays posted. */
static void test_bye(void)
{
    setup();
    tern_worker_t *w = &worker;
    char b1[8], b2[8];
    tern_request_t *r1, *r2;
    EXPECT(tern_irecv(w, b1, sizeof(b1), 1, 0, 0, NULL, &r1) == TERN_INPROGRESS, "post");
    EXPECT(tern_irecv(w, b2, sizeof(b2), TERN_ANY_SOURCE, 0, 0, NULL, &r2) == TERN_INPROGRESS,
           "post any");
    tern_pkt_hdr_t bye = {.type = TERN_PKT_BYE};
    EXPECT(feed((const uint8_t *)&bye, sizeof(bye), 7) == TERN_OK, "BYE: %s", tern_last_error());
    EXPECT(worker.vcs[1].peer_bye && worker.vcs[1].state == TERN_VC_ACTIVE,
           "BYE: peer_bye %d, VC state %d", worker.vcs[1].peer_bye, worker.vcs[1].state);
    tern_vc_fail(&worker.vcs[1], TERN_ERR_PEER_FAILED, "tcp read: closed by the peer (EOF)");
    tern_status_t st = tern_test(w, r1, NULL);
    EXPECT(st == TERN_ERR_PEER_FAILED, "receive from rank 1 after BYE + EOF: %s",
           tern_strerror(st));
    EXPECT(strstr(tern_last_error(), "connection to rank 1 closed: rank 1 said goodbye") != NULL,
           "after BYE the end is a close: %s", tern_last_error());
    EXPECT(tern_test(w, r2, NULL) == TERN_INPROGRESS, "any-source receive ended by a close");
    EXPECT(tern_cancel(w, r2) == TERN_OK && tern_test(w, r2, NULL) == TERN_ERR_CANCELED,
           "cancel the any-source receive");
    teardown();
}

/* An RTS of the engine's same-host copy whose cookie is wrong: the VC fails
 * with TERN_ERR_MALFORMED naming the cause, the matched receive with it. */
static void test_cma_cookie(const char *what, uint64_t rts_len, uint32_t nseg, uint64_t iov_addr,
                            const char *cause)
{
    setup();
    char buf[8];
    tern_request_t *r;
    EXPECT(tern_irecv(&worker, buf, sizeof(buf), 1, 0, 0, NULL, &r) == TERN_INPROGRESS, "post");
    tern_cma_cookie_t c;
    char data[64];
    struct iovec iov[20];
    for (uint32_t i = 0; i < 20; i++)
        iov[i] = (struct iovec){data, 3};
    tern_cursor_t cur;
    tern_cursor_init(&cur, iov, (int)nseg);
    size_t clen = tern_cma_cookie_fill(&c, TERN_CMA_OFFER, &cur, 3u * nseg);
    c.iov_addr = iov_addr; /* where the segments past the inline ones are */
    tern_pkt_hdr_t h = {.type = TERN_PKT_RTS, .flags = TERN_LMT_CMA_GET, .len = rts_len,
                        .sreq = 5, .cookie_len = (uint32_t)clen};
    uint8_t pkt[sizeof(h) + sizeof(c)];
    memcpy(pkt, &h, sizeof(h));
    memcpy(pkt + sizeof(h), &c, clen);
    tern_status_t st = feed(pkt, sizeof(h) + clen, 0);
    EXPECT(st == TERN_ERR_MALFORMED && strstr(tern_last_error(), cause) != NULL &&
               worker.vcs[1].state == TERN_VC_FAILED,
           "%s: %s: %s", what, tern_strerror(st), tern_last_error());
    EXPECT(tern_test(&worker, r, NULL) == TERN_ERR_MALFORMED, "%s: the receive", what);
    teardown();
}

/* A rendezvous start that fails ends the receive itself, with the cause,
 * whatever the caller does next: complete, its id and VC-list entry gone,
 * the VC untouched (failing it is the caller's choice). */
static void test_start_fails(void)
{
    setup();
    char buf[8];
    tern_request_t *r;
    tern_vc_t *vc = &worker.vcs[1];
    EXPECT(tern_irecv(&worker, buf, sizeof(buf), 1, 0, 0, NULL, &r) == TERN_INPROGRESS, "post");
    /* matched to a CMA-get RTS without a cookie, as the parser would */
    tern_list_del(&r->link);
    r->flags &= ~(uint32_t)TERN_REQF_POSTED;
    r->vc = vc;
    r->peer = 1;
    r->msg_len = 99999;
    r->remote_id = 5;
    r->lmt_mode = TERN_LMT_CMA_GET;
    tern_status_t st = tern_lmt_recv_matched(r, NULL, 0);
    EXPECT(st == TERN_ERR_MALFORMED, "start without a cookie: %s", tern_strerror(st));
    EXPECT((r->flags & TERN_REQF_COMPLETE) && r->status == st &&
               !(r->flags & (TERN_REQF_HAS_ID | TERN_REQF_VCLIST)) &&
               tern_list_empty(&vc->lmt_wait),
           "failed start: flags %#x, status %s", r->flags, tern_strerror(r->status));
    EXPECT(vc->state != TERN_VC_FAILED, "failed start failed the VC");
    EXPECT(tern_test(&worker, r, NULL) == TERN_ERR_MALFORMED, "reap the failed start");
    /* the same RTS unexpected, matched by a later receive: it ends at once */
    tern_pkt_hdr_t h = {.type = TERN_PKT_RTS, .flags = TERN_LMT_CMA_GET, .len = 99999, .sreq = 5};
    EXPECT(feed((const uint8_t *)&h, sizeof(h), 0) == TERN_OK, "unexpected RTS: %s",
           tern_last_error());
    EXPECT(tern_irecv(&worker, buf, sizeof(buf), 1, 0, 0, NULL, &r) == TERN_INPROGRESS,
           "receive matching it");
    EXPECT(r->flags & TERN_REQF_COMPLETE, "receive matching a bad RTS not complete");
    EXPECT(tern_test(&worker, r, NULL) == TERN_ERR_MALFORMED, "reap it");
    teardown();
}

/* tern_worker_wait in block mode: a message the progress round inside the
 * idle step takes (the one after arming the netmods) is activity.  The
 * capture netmod's poll delivers an eager message on its second call,
 * which is that round's: the wait must return TERN_OK at once, and the
 * message be there for a probe.  (It used to go back to sleep with the
 * message queued until its deadline: MPI_Probe hung, the message being an
 * unexpected one, no completion.) */
static int polls;
static unsigned cap_poll(void *state, int what)
{
    (void)state;
    (void)what;
    if (++polls != 2)
        return 0;
    uint8_t buf[64];
    size_t n = put_eager(buf, 9, 8, 3);
    return tern_handle_pkt(&worker.vcs[1], buf, n) == TERN_OK ? 1 : 0;
}
static int cap_wait_fd(void *state)
{
    (void)state;
    return -1;
}
static bool cap_arm(void *state)
{
    (void)state;
    return true;
}
static void cap_disarm(void *state)
{
    (void)state;
}
static const tern_nm_wait_ops_t cap_wait = {
    .wait_fd = cap_wait_fd, .arm = cap_arm, .disarm = cap_disarm};

static void test_block_wait_sees_arrival(void)
{
    setup();
    ctx.cfg.wait_mode = TERN_WAIT_BLOCK;
    ctx.cfg.spin_count = 0;
    ctx.cfg.health_ms = 1000000000; /* no health round in the test */
    cap.core.poll = cap_poll;
    cap.wait = &cap_wait;
    cap.initialized = true;
    worker.pollers[0] = &cap;
    worker.num_pollers = 1;
    polls = 0;
    tern_status_t st = tern_worker_wait(&worker, 3000);
    EXPECT(st == TERN_OK, "block-mode wait after an arrival in its own round: %s (polls %d)",
           tern_strerror(st), polls);
    int flag = 0;
    tern_recv_info_t info;
    EXPECT(tern_iprobe(&worker, 1, 9, 0, &flag, &info) == TERN_OK && flag && info.length == 8,
           "the message the wait saw arrive: flag %d", flag);
    cap.initialized = false;
    worker.num_pollers = 0;
    teardown();
}

int main(void)
{
    const size_t steps[] = {1, 3, 39, 40, 41, 64, 1000, 0, 1 << 20};
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        test_fragments(steps[i]);
    test_malformed("unknown type", (tern_pkt_hdr_t){.type = 99});
    test_malformed("type zero", (tern_pkt_hdr_t){.type = 0});
    test_malformed("nonzero flags", (tern_pkt_hdr_t){.type = TERN_PKT_EAGER, .flags = 1});
    test_malformed("huge eager", (tern_pkt_hdr_t){.type = TERN_PKT_EAGER, .len = 1ull << 40});
    test_malformed("eager with rreq but no data flag", (tern_pkt_hdr_t){.type = TERN_PKT_EAGER, .tag = 4, .rreq = 5});
    test_malformed("eager with a flag beside data", (tern_pkt_hdr_t){.type = TERN_PKT_EAGER, .flags = TERN_PKT_F_DATA | 1, .rreq = 5});
    test_malformed("DATA with the data flag", (tern_pkt_hdr_t){.type = TERN_PKT_DATA, .flags = TERN_PKT_F_DATA, .len = 5, .rreq = 42});
    test_malformed("RTS with an unknown flag", (tern_pkt_hdr_t){.type = TERN_PKT_RTS, .flags = 0x40 | TERN_LMT_NULL, .len = 99999});
    test_malformed("cookie too long", (tern_pkt_hdr_t){.type = TERN_PKT_RTS, .flags = TERN_LMT_NULL, .cookie_len = 4096});
    test_malformed("RTS without a mode", (tern_pkt_hdr_t){.type = TERN_PKT_RTS, .tag = 1, .len = 99999});
    test_malformed("RTS with an unknown mode", (tern_pkt_hdr_t){.type = TERN_PKT_RTS, .flags = 9, .tag = 1, .len = 99999});
    test_malformed("RTS for an LMT this netmod lacks", (tern_pkt_hdr_t){.type = TERN_PKT_RTS, .flags = TERN_LMT_PUT, .tag = 0, .len = 99999, .sreq = 5});
    test_malformed("CTS for no request", (tern_pkt_hdr_t){.type = TERN_PKT_CTS, .sreq = 0x500000001ull, .rreq = 1});
    test_malformed("DATA for no request", (tern_pkt_hdr_t){.type = TERN_PKT_DATA, .len = 5, .rreq = 42});
    test_malformed("DONE without LMT", (tern_pkt_hdr_t){.type = TERN_PKT_DONE, .sreq = 7});
    test_malformed("BYE with a payload", (tern_pkt_hdr_t){.type = TERN_PKT_BYE, .len = 5});
    test_malformed("BYE with a cookie", (tern_pkt_hdr_t){.type = TERN_PKT_BYE, .cookie_len = 8});
    test_malformed("CMA RTS without a cookie", (tern_pkt_hdr_t){.type = TERN_PKT_RTS, .flags = TERN_LMT_CMA_GET, .tag = 0, .len = 99999, .sreq = 5});
    /* one-sided (engine/rma.h): a header that breaks the protocol fails the
     * VC; a refused operation does not (the engine suite's rma_errors) */
    test_malformed("RMA_PUT with flags", (tern_pkt_hdr_t){.type = TERN_PKT_RMA_PUT, .flags = 1, .len = 8, .rreq = 1ull << 32});
    test_malformed("RMA_GET answering nobody", (tern_pkt_hdr_t){.type = TERN_PKT_RMA_GET, .len = 8, .rreq = 1ull << 32});
    test_malformed("RMA_AMO of 3 bytes", (tern_pkt_hdr_t){.type = TERN_PKT_RMA_AMO, .space = 3, .cookie_len = 16});
    test_malformed("RMA_AMO with an unknown op", (tern_pkt_hdr_t){.type = TERN_PKT_RMA_AMO, .flags = 200, .space = 8, .cookie_len = 16});
    test_malformed("RMA_AMO without operands", (tern_pkt_hdr_t){.type = TERN_PKT_RMA_AMO, .space = 8});
    test_malformed("RMA_ACC of no type", (tern_pkt_hdr_t){.type = TERN_PKT_RMA_ACC, .len = 8});
    test_malformed("RMA_ACC of a partial element", (tern_pkt_hdr_t){.type = TERN_PKT_RMA_ACC, .space = TERN_DT_INT32, .len = 6});
    test_malformed("RMA_ACC with MAX on complex", (tern_pkt_hdr_t){.type = TERN_PKT_RMA_ACC, .flags = TERN_ACC_MAX, .space = TERN_DT_DOUBLE_COMPLEX, .len = 16});
    test_malformed("RMA_FLUSH with a length", (tern_pkt_hdr_t){.type = TERN_PKT_RMA_FLUSH, .len = 4, .sreq = 3});
    test_malformed("RMA_RESP for no request", (tern_pkt_hdr_t){.type = TERN_PKT_RMA_RESP, .rreq = 0x500000001ull});
    test_cma_cookie("CMA cookie of another length", 99999, 2, 0, "its RTS says 99999");
    test_cma_cookie("CMA segments unreadable", 60, 20, 8, "cannot be read: Bad address");
    test_start_fails();
    test_block_wait_sees_arrival();
    test_bye();
    printf("%s parser_test (%d failures)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
