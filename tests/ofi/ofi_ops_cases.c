/*
 * The data cases of ofi_ops, each run by A and B at once (A mostly sends,
 * B receives and checks); ofi_ops.c meets the two after every case.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "tests/ofi/ofi_ops.h"

#define MIB (1u << 20)

static void check_bytes(const void *got, const char *want, size_t len, const char *what)
{
    CHECK(memcmp(got, want, len) == 0, "%s: the bytes received", what);
}

/* B: keep peeking (with flags) until the message is there; its entry */
static struct fi_cq_err_entry peek_until(uint64_t tag, uint64_t flags, struct fi_context *ctx,
                                         fi_addr_t *src)
{
    struct fi_msg_tagged m = {.addr = PEER, .tag = tag, .context = ctx};
    for (int i = 0; i < 100000; i++) {
        CHECK_RET(fi_trecvmsg(T.ep, &m, FI_PEEK | FI_COMPLETION | flags), 0, "fi_trecvmsg FI_PEEK");
        struct fi_cq_err_entry e = wait_ok(ctx, "a peek", src);
        if (e.err == 0)
            return e;
        CHECK(e.err == FI_ENOMSG, "a peek that finds nothing says FI_ENOMSG (%d)", e.err);
        if (e.err != FI_ENOMSG)
            break;
    }
    printf("FAIL: tag 0x%llx never seen by FI_PEEK\n", (unsigned long long)tag);
    exit(1);
}

/* ---- 64-bit tags, ignore masks, order, FI_SOURCE, directed, rendezvous --- */

static void case_tagged(void)
{
    static char big[MIB], got[MIB];
    struct fi_context c[4];
    for (size_t i = 0; i < MIB; i++)
        big[i] = (char)(i * 7 + 1);
    if (IS_A) {
        CHECK_RET(fi_tsend(T.ep, "one", 3, NULL, PEER, 0x1234000000000001ull, &c[0]), 0, "tsend");
        CHECK_RET(fi_tsend(T.ep, "two", 3, NULL, PEER, 0x1234000000000002ull, &c[1]), 0, "tsend");
        CHECK_RET(fi_tsend(T.ep, "nine", 4, NULL, PEER, 0x9999000000000001ull, &c[2]), 0, "tsend");
        CHECK_RET(fi_tsend(T.ep, big, MIB, NULL, PEER, 0x42, &c[3]), 0, "tsend 1 MiB");
        for (int i = 0; i < 4; i++) {
            struct fi_cq_err_entry e = wait_ok(&c[i], "a tagged send", NULL);
            CHECK(e.err == 0 && e.flags == (FI_SEND | FI_TAGGED), "send %d: flags 0x%llx", i,
                  (unsigned long long)e.flags);
        }
        return;
    }
    fi_addr_t src = 7;
    /* the last one sent, taken first by its mask */
    CHECK_RET(fi_trecv(T.ep, got, 16, NULL, PEER, 0x9999000000000000ull, 0xffff, &c[0]), 0,
              "trecv");
    struct fi_cq_err_entry e = wait_ok(&c[0], "trecv nine", &src);
    CHECK(e.err == 0 && e.len == 4 && e.tag == 0x9999000000000001ull, "nine: len %zu tag 0x%llx",
          e.len, (unsigned long long)e.tag);
    check_bytes(got, "nine", 4, "nine");
    CHECK(e.flags == (FI_RECV | FI_TAGGED), "receive flags 0x%llx (no data: no FI_REMOTE_CQ_DATA)",
          (unsigned long long)e.flags);
    CHECK(src == PEER, "FI_SOURCE: the sender's fi_addr %llu (want %llu)", (unsigned long long)src,
          (unsigned long long)PEER);
    /* the two others through one wide mask, in send order */
    for (int i = 0; i < 2; i++) {
        CHECK_RET(fi_trecv(T.ep, got, 16, NULL, FI_ADDR_UNSPEC, 0x1234000000000000ull,
                           0xffffffffull, &c[1]),
                  0, "trecv masked");
        e = wait_ok(&c[1], "trecv masked", &src);
        CHECK(e.tag == 0x1234000000000001ull + (uint64_t)i, "send order under a mask: 0x%llx",
              (unsigned long long)e.tag);
        check_bytes(got, i == 0 ? "one" : "two", 3, "masked");
        CHECK(src == PEER, "FI_SOURCE of an any-source receive");
    }
    /* a rendezvous size, into a receive naming its source */
    CHECK_RET(fi_trecv(T.ep, got, MIB, NULL, PEER, 0x42, 0, &c[2]), 0, "trecv 1 MiB");
    e = wait_ok(&c[2], "trecv 1 MiB", NULL);
    CHECK(e.err == 0 && e.len == MIB, "1 MiB: len %zu", e.len);
    check_bytes(got, big, MIB, "1 MiB");
    CHECK_RET(fi_trecv(T.ep, got, 8, NULL, 4242, 0x42, 0, &c[3]), -FI_EINVAL,
              "a receive from an fi_addr not in the AV");
}

/* ---- remote CQ data ------------------------------------------------------ */

static void case_data(void)
{
    struct fi_context c[4];
    char got[16];
    if (IS_A) {
        CHECK_RET(fi_tsenddata(T.ep, "d1", 2, NULL, 0xdeadbeefcafef00dull, PEER, 0x10, &c[0]), 0,
                  "fi_tsenddata");
        CHECK_RET(fi_tinjectdata(T.ep, "d2", 2, 1, PEER, 0x11), 0, "fi_tinjectdata");
        CHECK_RET(fi_senddata(T.ep, "d3", 2, NULL, 2, PEER, &c[1]), 0, "fi_senddata");
        CHECK_RET(fi_injectdata(T.ep, "d4", 2, 3, PEER), 0, "fi_injectdata");
        wait_ok(&c[0], "fi_tsenddata", NULL);
        wait_ok(&c[1], "fi_senddata", NULL);
        return;
    }
    uint64_t want[4] = {0xdeadbeefcafef00dull, 1, 2, 3};
    for (int i = 0; i < 4; i++) {
        int ret =
            i < 2 ? (int)fi_trecv(T.ep, got, sizeof(got), NULL, PEER, 0x10 + (uint64_t)i, 0, &c[i])
                  : (int)fi_recv(T.ep, got, sizeof(got), NULL, PEER, &c[i]);
        CHECK_RET(ret, 0, "receive of data");
        struct fi_cq_err_entry e = wait_ok(&c[i], "a receive with data", NULL);
        CHECK((e.flags & FI_REMOTE_CQ_DATA) && e.data == want[i],
              "message %d: FI_REMOTE_CQ_DATA 0x%llx (want 0x%llx)", i, (unsigned long long)e.data,
              (unsigned long long)want[i]);
        CHECK(e.len == 2 && got[0] == 'd' && got[1] == '1' + i, "message %d: its bytes", i);
        CHECK(e.flags & (i < 2 ? FI_TAGGED : FI_MSG), "message %d: FI_TAGGED / FI_MSG", i);
    }
}

/* ---- inject: the buffer is the caller's again at once; no completion ----- */

static void case_inject(void)
{
    char buf[32], got[32];
    struct fi_context c[2];
    if (IS_A) {
        strcpy(buf, "inject-payload");
        CHECK_RET(fi_tinject(T.ep, buf, 15, PEER, 0x20), 0, "fi_tinject");
        memset(buf, 'X', sizeof(buf));
        strcpy(buf, "inject-msg");
        CHECK_RET(fi_inject(T.ep, buf, 11, PEER), 0, "fi_inject");
        memset(buf, 'Y', sizeof(buf));
        sync_peer();
        for (int i = 0; i < 100; i++)
            tep_poll(&T);
        CHECK(T.nstash == 0, "injected sends produce no completion (%d seen)", T.nstash);
        return;
    }
    CHECK_RET(fi_trecv(T.ep, got, sizeof(got), NULL, PEER, 0x20, 0, &c[0]), 0, "trecv");
    CHECK_RET(fi_recv(T.ep, got + 16, 16, NULL, PEER, &c[1]), 0, "recv");
    wait_ok(&c[0], "tinject's message", NULL);
    wait_ok(&c[1], "inject's message", NULL);
    check_bytes(got, "inject-payload", 15, "fi_tinject");
    check_bytes(got + 16, "inject-msg", 11, "fi_inject");
    sync_peer();
}

/* ---- msg: a space of its own ------------------------------------------------ */

static void case_msg(void)
{
    struct fi_context c[5];
    char got[4][32];
    if (IS_A) {
        CHECK_RET(fi_tsend(T.ep, "tagged-zero", 11, NULL, PEER, 0, &c[0]), 0, "tsend tag 0");
        CHECK_RET(fi_send(T.ep, "msg-one", 7, NULL, PEER, &c[1]), 0, "fi_send");
        struct iovec iov[2] = {{"msg-", 4}, {"two", 3}};
        CHECK_RET(fi_sendv(T.ep, iov, NULL, 2, PEER, &c[2]), 0, "fi_sendv");
        struct iovec one = {"msg-three", 9};
        struct fi_msg m = {.msg_iov = &one, .iov_count = 1, .addr = PEER, .context = &c[3]};
        CHECK_RET(fi_sendmsg(T.ep, &m, FI_COMPLETION), 0, "fi_sendmsg");
        for (int i = 0; i < 4; i++) {
            struct fi_cq_err_entry e = wait_ok(&c[i], "a send", NULL);
            CHECK(e.flags == (FI_SEND | (i == 0 ? FI_TAGGED : FI_MSG)), "send %d flags", i);
        }
        return;
    }
    CHECK_RET(fi_recv(T.ep, got[0], 32, NULL, PEER, &c[0]), 0, "fi_recv");
    struct iovec iov[2] = {{got[1], 4}, {got[1] + 4, 28}};
    CHECK_RET(fi_recvv(T.ep, iov, NULL, 2, FI_ADDR_UNSPEC, &c[1]), 0, "fi_recvv");
    struct iovec one = {got[2], 32};
    struct fi_msg m = {.msg_iov = &one, .iov_count = 1, .addr = PEER, .context = &c[2]};
    CHECK_RET(fi_recvmsg(T.ep, &m, FI_COMPLETION), 0, "fi_recvmsg");
    const char *want[3] = {"msg-one", "msg-two", "msg-three"};
    for (int i = 0; i < 3; i++) {
        struct fi_cq_err_entry e = wait_ok(&c[i], "a msg receive", NULL);
        CHECK(e.len == strlen(want[i]) && e.flags == (FI_RECV | FI_MSG), "msg %d: len %zu", i,
              e.len);
        check_bytes(got[i], want[i], strlen(want[i]), want[i]);
    }
    CHECK_RET(fi_trecv(T.ep, got[3], 32, NULL, PEER, 0, 0, &c[3]), 0, "trecv tag 0");
    struct fi_cq_err_entry e = wait_ok(&c[3], "trecv tag 0", NULL);
    CHECK(e.len == 11, "the tagged message was left for the tagged receive");
    check_bytes(got[3], "tagged-zero", 11, "tag 0");
}

/* ---- FI_PEEK ------------------------------------------------------------------- */

static void case_peek(void)
{
    struct fi_context c, r;
    if (IS_A) {
        sync_peer(); /* B has peeked in vain */
        CHECK_RET(fi_tsenddata(T.ep, "peeked", 6, NULL, 0x55, PEER, 0x30, &c), 0, "tsenddata");
        wait_ok(&c, "send", NULL);
        return;
    }
    struct fi_msg_tagged m = {.addr = PEER, .tag = 0x30, .context = &c};
    CHECK_RET(fi_trecvmsg(T.ep, &m, FI_PEEK | FI_COMPLETION), 0, "FI_PEEK");
    struct fi_cq_err_entry e = wait_ok(&c, "a peek", NULL);
    CHECK(e.err == FI_ENOMSG && e.op_context == &c, "a peek before the send: FI_ENOMSG (%d)",
          e.err);
    sync_peer();
    fi_addr_t src = 9;
    e = peek_until(0x30, 0, &c, &src);
    CHECK(e.len == 6 && e.tag == 0x30 && (e.flags & FI_REMOTE_CQ_DATA) && e.data == 0x55,
          "the peek's entry: len %zu tag 0x%llx data 0x%llx", e.len, (unsigned long long)e.tag,
          (unsigned long long)e.data);
    CHECK(src == PEER, "the peek's source");
    char got[8];
    CHECK_RET(fi_trecv(T.ep, got, 8, NULL, PEER, 0x30, 0, &r), 0, "trecv after the peek");
    e = wait_ok(&r, "the peeked message", NULL);
    CHECK(e.len == 6, "a peek leaves the message");
    check_bytes(got, "peeked", 6, "peeked");
}

/* ---- FI_PEEK | FI_CLAIM, then FI_CLAIM ------------------------------------------ */

static void case_claim(void)
{
    struct fi_context c[2], cl, r;
    if (IS_A) {
        CHECK_RET(fi_tsend(T.ep, "first", 5, NULL, PEER, 0x40, &c[0]), 0, "tsend");
        CHECK_RET(fi_tsend(T.ep, "second", 6, NULL, PEER, 0x40, &c[1]), 0, "tsend");
        wait_ok(&c[0], "send", NULL);
        wait_ok(&c[1], "send", NULL);
        return;
    }
    struct fi_cq_err_entry e = peek_until(0x40, FI_CLAIM, &cl, NULL);
    CHECK(e.len == 5, "claimed the first (len %zu)", e.len);
    char got[16] = "", claimed[16] = "";
    CHECK_RET(fi_trecv(T.ep, got, 16, NULL, PEER, 0x40, 0, &r), 0, "trecv after the claim");
    e = wait_ok(&r, "the unclaimed message", NULL);
    check_bytes(got, "second", 6, "a claimed message is no receive's");
    struct iovec iov = {claimed, 16};
    struct fi_msg_tagged m = {
        .msg_iov = &iov, .iov_count = 1, .addr = PEER, .tag = 0x40, .context = &cl};
    CHECK_RET(fi_trecvmsg(T.ep, &m, FI_CLAIM | FI_COMPLETION), 0, "FI_CLAIM");
    e = wait_ok(&cl, "the claimed message", NULL);
    CHECK(e.err == 0 && e.len == 5 && e.tag == 0x40, "the claimed message's entry");
    check_bytes(claimed, "first", 5, "FI_CLAIM");
    CHECK_RET(fi_trecvmsg(T.ep, &m, FI_CLAIM), -FI_EINVAL, "a message is claimed once");
}

/* ---- FI_DISCARD ------------------------------------------------------------------- */

static void case_discard(void)
{
    struct fi_context c[3], p, r;
    if (IS_A) {
        CHECK_RET(fi_tsend(T.ep, "drop-me", 7, NULL, PEER, 0x50, &c[0]), 0, "tsend");
        CHECK_RET(fi_tsend(T.ep, "keep-me", 7, NULL, PEER, 0x50, &c[1]), 0, "tsend");
        CHECK_RET(fi_tsend(T.ep, "claim-drop", 10, NULL, PEER, 0x51, &c[2]), 0, "tsend");
        for (int i = 0; i < 3; i++)
            wait_ok(&c[i], "send", NULL);
        return;
    }
    struct fi_cq_err_entry e = peek_until(0x50, FI_DISCARD, &p, NULL);
    CHECK(e.len == 7, "FI_PEEK | FI_DISCARD found the first");
    char got[16] = "";
    CHECK_RET(fi_trecv(T.ep, got, 16, NULL, PEER, 0x50, 0, &r), 0, "trecv");
    wait_ok(&r, "the message after the discarded one", NULL);
    check_bytes(got, "keep-me", 7, "FI_PEEK | FI_DISCARD dropped the first");
    e = peek_until(0x51, FI_CLAIM, &p, NULL);
    struct fi_msg_tagged m = {.addr = PEER, .tag = 0x51, .context = &p};
    CHECK_RET(fi_trecvmsg(T.ep, &m, FI_CLAIM | FI_DISCARD | FI_COMPLETION), 0,
              "FI_CLAIM | FI_DISCARD");
    e = wait_ok(&p, "the discarded claim", NULL);
    CHECK(e.err == 0 && e.len == 0, "FI_CLAIM | FI_DISCARD: len %zu", e.len);
}

/* ---- fi_cancel ------------------------------------------------------------------------ */

static void case_cancel(void)
{
    if (IS_A)
        return;
    char got[8];
    struct fi_context c;
    CHECK_RET(fi_trecv(T.ep, got, 8, NULL, PEER, 0x60, 0, &c), 0, "trecv");
    CHECK_RET(fi_cancel(&T.ep->fid, &c), 0, "fi_cancel");
    struct fi_cq_err_entry e = wait_ok(&c, "the cancelled receive", NULL);
    CHECK(e.err == FI_ECANCELED && (e.flags & FI_RECV), "cancelled: FI_ECANCELED (%d)", e.err);
    CHECK_RET(fi_cancel(&T.ep->fid, &c), -FI_ENOENT, "fi_cancel of a completed receive");
}

/* ---- fi_close with operations outstanding ---------------------------------------------- */

/* Sends whose entries nobody read and a receive that never matched when
 * the endpoint closes: the next endpoint (on the same tern worker) sees
 * none of their completions, only its own. */
static void case_close(void)
{
    struct fi_context r, s[3];
    char got[3][8];
    if (IS_A) {
        for (int i = 0; i < 3; i++)
            CHECK_RET(fi_tsend(T.ep, "gone", 4, NULL, PEER, 0xa0, &s[i]), 0, "tsend");
    } else {
        CHECK_RET(fi_trecv(T.ep, got[0], 8, NULL, PEER, 0xa1, 0, &r), 0, "trecv (never matched)");
    }
    reopen(FI_CQ_FORMAT_TAGGED, 0);
    sync_peer();
    if (!IS_A) { /* the three messages wait for the new endpoint's receives */
        for (int i = 0; i < 3; i++)
            CHECK_RET(fi_trecv(T.ep, got[i], 8, NULL, PEER, 0xa0, 0, &s[i]), 0, "trecv");
        for (int i = 0; i < 3; i++) {
            struct fi_cq_err_entry e =
                wait_ok(&s[i], "a message sent to the closed endpoint", NULL);
            CHECK(e.err == 0 && e.len == 4, "message %d: err %d len %zu", i, e.err, e.len);
            check_bytes(got[i], "gone", 4, "a message sent before the reopen");
        }
    }
    for (int i = 0; i < 20; i++)
        tep_poll(&T);
    CHECK(T.nstash == 0,
          "after the reopen, %d completion(s) of the closed endpoint's "
          "operations reached the new one",
          T.nstash);
}

/* ---- truncation ------------------------------------------------------------------------ */

static void case_trunc(void)
{
    char buf[100];
    for (int i = 0; i < 100; i++)
        buf[i] = (char)i;
    struct fi_context c;
    if (IS_A) {
        CHECK_RET(fi_tsend(T.ep, buf, 100, NULL, PEER, 0x70, &c), 0, "tsend 100");
        wait_ok(&c, "send", NULL);
        return;
    }
    char got[40];
    CHECK_RET(fi_trecv(T.ep, got, 40, NULL, PEER, 0x70, 0, &c), 0, "trecv 40");
    struct fi_cq_err_entry e = wait_ok(&c, "the truncated receive", NULL);
    CHECK(e.err == FI_ETRUNC && e.len == 40 && e.olen == 60 && e.tag == 0x70,
          "truncated: err %d len %zu olen %zu", e.err, e.len, e.olen);
    check_bytes(got, buf, 40, "the first 40 bytes");
    CHECK(fi_cq_strerror(T.cq, e.prov_errno, NULL, NULL, 0) != NULL, "fi_cq_strerror");
}

/* ---- every CQ format --------------------------------------------------------------------- */

static void case_formats(void)
{
    enum fi_cq_format f[4] = {FI_CQ_FORMAT_CONTEXT, FI_CQ_FORMAT_MSG, FI_CQ_FORMAT_DATA,
                              FI_CQ_FORMAT_TAGGED};
    for (int i = 0; i < 4; i++) {
        reopen(f[i], 0);
        sync_peer();
        struct fi_context c;
        char got[8];
        if (IS_A) {
            CHECK_RET(
                fi_tsenddata(T.ep, "fmt", 3, NULL, 100 + (uint64_t)i, PEER, 0x80 + (uint64_t)i, &c),
                0, "tsenddata");
            wait_ok(&c, "send", NULL);
            continue;
        }
        CHECK_RET(fi_trecv(T.ep, got, 8, NULL, PEER, 0x80 + (uint64_t)i, 0, &c), 0, "trecv");
        struct fi_cq_err_entry e = wait_ok(&c, "a receive", NULL);
        if (f[i] != FI_CQ_FORMAT_CONTEXT)
            CHECK(e.len == 3 && (e.flags & FI_RECV), "format %d: flags and len", i);
        if (f[i] == FI_CQ_FORMAT_DATA || f[i] == FI_CQ_FORMAT_TAGGED)
            CHECK(e.data == 100 + (uint64_t)i, "format %d: data", i);
        if (f[i] == FI_CQ_FORMAT_TAGGED)
            CHECK(e.tag == 0x80 + (uint64_t)i, "format %d: tag", i);
        check_bytes(got, "fmt", 3, "format");
    }
}

/* ---- counters and selective completion ------------------------------------------------- */

static void case_counters(void)
{
    struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC};
    struct fid_cntr *tx = NULL, *rx = NULL;
    CHECK_RET(fi_cntr_open(T.domain, &ca, &tx, NULL), 0, "fi_cntr_open");
    CHECK_RET(fi_cntr_open(T.domain, &ca, &rx, NULL), 0, "fi_cntr_open");
    /* counters are bound before fi_enable: a fresh endpoint */
    tep_close_ep(&T);
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_UNSPEC};
    CHECK_RET(fi_cq_open(T.domain, &cqa, &T.cq, NULL), 0, "fi_cq_open");
    CHECK_RET(fi_endpoint(T.domain, T.info, &T.ep, NULL), 0, "fi_endpoint");
    CHECK_RET(fi_ep_bind(T.ep, &T.av->fid, 0), 0, "bind av");
    CHECK_RET(fi_ep_bind(T.ep, &T.cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION), 0,
              "bind cq selective");
    CHECK_RET(fi_ep_bind(T.ep, &tx->fid, FI_SEND), 0, "bind send counter");
    CHECK_RET(fi_ep_bind(T.ep, &rx->fid, FI_RECV), 0, "bind recv counter");
    CHECK_RET(fi_enable(T.ep), 0, "fi_enable");
    T.nstash = 0;
    /* no meeting here (it would count): what A sends before B's endpoint
     * is back waits in B's worker as unexpected messages */
    char buf[64] = "counted", got[8][64];
    struct fi_context c;
    if (IS_A) {
        for (int i = 0; i < 5; i++) /* op_flags 0: no completion, but counted */
            CHECK_RET(fi_tsend(T.ep, buf, 8, NULL, PEER, 0x90, NULL), 0, "tsend");
        struct iovec iov = {buf, 8};
        struct fi_msg_tagged m = {
            .msg_iov = &iov, .iov_count = 1, .addr = PEER, .tag = 0x90, .context = &c};
        CHECK_RET(fi_tsendmsg(T.ep, &m, FI_COMPLETION), 0, "tsendmsg FI_COMPLETION");
        CHECK_RET(fi_tsend(T.ep, buf, 64, NULL, PEER, 0x91, NULL), 0, "tsend to be truncated");
        CHECK_RET(fi_cntr_wait(tx, 7, 60000), 0, "fi_cntr_wait(send, 7)");
        struct fi_cq_err_entry e = wait_ok(&c, "the one send asking for a completion", NULL);
        CHECK(e.err == 0, "its completion");
        for (int i = 0; i < 100; i++)
            tep_poll(&T);
        CHECK(T.nstash == 0, "selective completion: %d other send completion(s)", T.nstash);
    } else {
        for (int i = 0; i < 5; i++)
            CHECK_RET(fi_trecv(T.ep, got[i], 64, NULL, PEER, 0x90, 0, NULL), 0, "trecv");
        struct iovec iov = {got[5], 64};
        struct fi_msg_tagged m = {
            .msg_iov = &iov, .iov_count = 1, .addr = PEER, .tag = 0x90, .context = &c};
        CHECK_RET(fi_trecvmsg(T.ep, &m, FI_COMPLETION), 0, "trecvmsg FI_COMPLETION");
        CHECK_RET(fi_cntr_wait(rx, 6, 60000), 0, "fi_cntr_wait(recv, 6)");
        struct fi_cq_err_entry e = wait_ok(&c, "the one receive asking for a completion", NULL);
        CHECK(e.err == 0 && e.len == 8, "its completion");
        for (int i = 0; i < 6; i++)
            check_bytes(got[i], "counted", 8, "counted");
        /* a failure is reported whatever was asked, and counted as an error */
        CHECK_RET(fi_trecv(T.ep, got[6], 8, NULL, PEER, 0x91, 0, NULL), 0, "trecv 8 of 64");
        double end = now_s() + WAIT_S;
        while (fi_cntr_readerr(rx) == 0 && now_s() < end)
            ;
        CHECK(fi_cntr_readerr(rx) == 1, "the truncation counted as an error");
        CHECK(fi_cntr_read(rx) == 6, "and not as a success (%llu)",
              (unsigned long long)fi_cntr_read(rx));
        bool seen = false;
        for (int i = 0; i < 1000 && !seen; i++) {
            tep_poll(&T);
            for (int k = 0; k < T.nstash; k++)
                seen = seen || (T.stash[k].err == FI_ETRUNC && T.stash[k].op_context == NULL);
        }
        CHECK(seen, "its error entry, without a context (none was asked for)");
        T.nstash = 0;
    }
    sync_peer();
    tep_close_ep(&T);
    CHECK_RET(fi_close(&tx->fid), 0, "fi_close(cntr)");
    CHECK_RET(fi_close(&rx->fid), 0, "fi_close(cntr)");
    reopen(FI_CQ_FORMAT_TAGGED, 0);
}

/* ---- FI_DELIVERY_COMPLETE: complete once the receiver matched ---------------------------- */

static void case_delivery(void)
{
    struct fi_context s, g;
    char got[8];
    if (IS_A) {
        struct iovec iov = {"sync", 4};
        struct fi_msg_tagged m = {
            .msg_iov = &iov, .iov_count = 1, .addr = PEER, .tag = 0xa0, .context = &s};
        CHECK_RET(fi_tsendmsg(T.ep, &m, FI_DELIVERY_COMPLETE | FI_COMPLETION), 0,
                  "tsendmsg FI_DELIVERY_COMPLETE");
        /* B posts the matching receive only after "go", sent below: the
         * send cannot have completed before */
        for (int i = 0; i < 200; i++)
            tep_poll(&T);
        bool early = false;
        for (int k = 0; k < T.nstash; k++)
            early = early || T.stash[k].op_context == &s;
        CHECK(!early, "FI_DELIVERY_COMPLETE completed before any receive matched");
        CHECK_RET(fi_tsend(T.ep, "go", 2, NULL, PEER, 0xa1, &g), 0, "tsend go");
        wait_ok(&g, "go", NULL);
        struct fi_cq_err_entry e = wait_ok(&s, "the delivered send", NULL);
        CHECK(e.err == 0, "delivered");
        return;
    }
    CHECK_RET(fi_trecv(T.ep, got, 8, NULL, PEER, 0xa1, 0, &g), 0, "trecv go");
    wait_ok(&g, "go", NULL);
    CHECK_RET(fi_trecv(T.ep, got, 8, NULL, PEER, 0xa0, 0, &s), 0, "trecv");
    wait_ok(&s, "the synchronous message", NULL);
    check_bytes(got, "sync", 4, "sync");
}

/* ---- FI_THREAD_SAFE: two threads on one endpoint and CQ ------------------------------------ */

#define NT 2000
static struct fi_context tctx[2][NT];
static uint64_t tbuf[2][NT];
static atomic_int done[2]; /* 0: sends, 1: receives */
static atomic_int bad;

static void reap(void)
{
    struct fi_cq_tagged_entry e[16];
    ssize_t n = fi_cq_read(T.cq, e, 16);
    if (n == -FI_EAVAIL) {
        struct fi_cq_err_entry err = {0};
        if (fi_cq_readerr(T.cq, &err, 0) == 1)
            atomic_fetch_add(&bad, 1);
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        struct fi_context *c = e[i].op_context;
        int kind = c >= tctx[1] && c < tctx[1] + NT;
        if (kind == 1 && tbuf[1][c - tctx[1]] != (uint64_t)(c - tctx[1]))
            atomic_fetch_add(&bad, 1); /* receive i gets send i: send order */
        atomic_fetch_add(&done[kind], 1);
    }
}

static void *thread_main(void *arg)
{
    int kind = (int)(intptr_t)arg;
    double end = now_s() + 120;
    for (int i = 0; i < NT; i++) {
        ssize_t ret;
        do {
            ret = kind == 0 ? fi_tsend(T.ep, &tbuf[0][i], 8, NULL, PEER, 0xb0, &tctx[0][i])
                            : fi_trecv(T.ep, &tbuf[1][i], 8, NULL, PEER, 0xb0, 0, &tctx[1][i]);
            if (ret == -FI_EAGAIN)
                reap();
        } while (ret == -FI_EAGAIN && now_s() < end);
        if (ret != 0)
            atomic_fetch_add(&bad, 1);
        if (i % 16 == 0)
            reap();
    }
    while ((atomic_load(&done[0]) < NT || atomic_load(&done[1]) < NT) && now_s() < end)
        reap();
    return NULL;
}

static void case_threads(void)
{
    for (int i = 0; i < NT; i++) {
        tbuf[0][i] = (uint64_t)i;
        tbuf[1][i] = ~0ull;
    }
    pthread_t th[2];
    for (int k = 0; k < 2; k++)
        pthread_create(&th[k], NULL, thread_main, (void *)(intptr_t)k);
    for (int k = 0; k < 2; k++)
        pthread_join(th[k], NULL);
    CHECK(atomic_load(&done[0]) == NT && atomic_load(&done[1]) == NT,
          "two threads: %d sends and %d receives completed of %d", atomic_load(&done[0]),
          atomic_load(&done[1]), NT);
    CHECK(atomic_load(&bad) == 0, "two threads: %d failure(s) or out-of-order receive(s)",
          atomic_load(&bad));
}

const struct ops_case ops_cases[] = {
    {"tagged", case_tagged},     {"data", case_data},       {"inject", case_inject},
    {"msg", case_msg},           {"peek", case_peek},       {"claim", case_claim},
    {"discard", case_discard},   {"cancel", case_cancel},   {"close", case_close},
    {"trunc", case_trunc},       {"formats", case_formats}, {"counters", case_counters},
    {"delivery", case_delivery}, {"threads", case_threads}, {"rma", case_rma},
    {"atomic", case_atomic},     {"rma_errors", case_rma_errors}, {NULL, NULL},
};
