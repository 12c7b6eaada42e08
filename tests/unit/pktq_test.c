/*
 * Unit test of the engine's packet send queue (engine/pktq.h) and of the
 * engine's check before a send (no job):
 * - push keeps the header (and how much of it went) apart from the payload
 *   cursor; left counts both; the head is the oldest request;
 * - iov describes the rest (the header's unsent bytes, then payload slices,
 *   empty entries skipped) within max entries and max bytes, and pack copies
 *   it, neither moving the request; advance moves header bytes first, then
 *   payload, and says when all went; complete_head completes the head;
 * - fail_all completes every request with the status except those on their
 *   VC's rendezvous list (the engine's);
 * - tern_send_ctrl and tern_send_noncontig on a failed VC refuse with the
 *   VC's status and a message naming the netmod and the rank, and never
 *   call the netmod's data ops.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "engine/netmod.h"
#include "engine/pktq.h"

#include "tests/unit/expect.h"

static tern_context_t ctx;
static tern_worker_t worker;

/* a netmod that counts the data ops the engine calls */
static int data_ops;
static tern_status_t count_istart(tern_vc_t *vc, const void *hdr, size_t hdrlen, const void *data,
                                  size_t len, tern_request_t **sreq)
{
    data_ops++;
    *sreq = NULL;
    return TERN_OK;
}
static tern_status_t count_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                     size_t hdrlen)
{
    data_ops++;
    tern_request_complete(sreq, TERN_OK);
    return TERN_OK;
}
static tern_nm_core_ops_t count_core;
static const tern_netmod_desc_t count_desc = {
    .abi = TERN_NETMOD_ABI, .name = "counting", .core = &count_core};

static tern_request_t *new_send(void)
{
    tern_request_t *r = tern_request_alloc(&worker, TERN_REQ_SEND);
    if (r == NULL)
        abort();
    r->flags |= TERN_REQF_USER; /* completion must not recycle it: the test reads it */
    return r;
}

static void test_queue(void)
{
    uint8_t hdr[TERN_PKT_HDR_SIZE], a[5], c[1000], out[1100];
    for (size_t i = 0; i < sizeof(hdr); i++)
        hdr[i] = (uint8_t)(0xa0 + i);
    memset(a, 0x11, sizeof(a));
    for (size_t i = 0; i < sizeof(c); i++)
        c[i] = (uint8_t)i;
    struct iovec v[3] = {{a, sizeof(a)}, {NULL, 0}, {c, sizeof(c)}};
    tern_pktq_t q;
    tern_pktq_init(&q);
    EXPECT(tern_pktq_empty(&q) && tern_pktq_head(&q) == NULL, "a new queue is not empty");

    tern_request_t *r = new_send(), *r2 = new_send();
    tern_cursor_init(&r->cur, v, 3);
    tern_cursor_init(&r2->cur, v, 1);
    tern_pktq_push(&q, r, hdr, sizeof(hdr), 0);
    memset(hdr, 0, sizeof(hdr)); /* the queue keeps its own copy */
    tern_pktq_push(&q, r2, "BYE", 3, 0);
    EXPECT(tern_pktq_head(&q) == r, "the head is not the oldest request");
    EXPECT(tern_pktq_left(r) == 40 + 5 + 1000, "left %zu", tern_pktq_left(r));

    /* iov within 2 entries and 45 bytes: the header, then 5 payload bytes */
    struct iovec io[4];
    size_t bytes;
    int n = tern_pktq_iov(r, io, 2, 45, &bytes);
    EXPECT(n == 2 && bytes == 45 && io[0].iov_len == 40 && io[1].iov_base == a &&
               io[1].iov_len == 5,
           "iov: %d entries, %zu bytes", n, bytes);
    EXPECT(n >= 1 && ((uint8_t *)io[0].iov_base)[0] == 0xa0, "the header is not the one pushed");
    /* all of it: the empty entry is skipped */
    n = tern_pktq_iov(r, io, 4, SIZE_MAX, &bytes);
    EXPECT(n == 3 && bytes == 1045 && io[2].iov_base == c, "iov: %d entries, %zu bytes", n, bytes);

    /* pack copies header + payload across entries and moves nothing */
    EXPECT(tern_pktq_pack(r, out, 50) == 50, "pack 50");
    EXPECT(out[0] == 0xa0 && out[39] == 0xa0 + 39 && out[40] == 0x11 && out[44] == 0x11 &&
               out[45] == 0 && out[49] == 4,
           "pack copied the wrong bytes");
    EXPECT(tern_pktq_left(r) == 1045, "pack moved the request: %zu left", tern_pktq_left(r));

    /* advance: header bytes first */
    EXPECT(!tern_pktq_advance(r, 30), "30 bytes: done?");
    n = tern_pktq_iov(r, io, 4, SIZE_MAX, &bytes);
    EXPECT(n == 3 && io[0].iov_len == 10 && ((uint8_t *)io[0].iov_base)[0] == 0xa0 + 30,
           "after 30 bytes the header's rest is %zu bytes", n > 0 ? io[0].iov_len : 0);
    EXPECT(!tern_pktq_advance(r, 12), "42 bytes: done?"); /* header + 2 payload bytes */
    EXPECT(tern_pktq_left(r) == 1003, "left %zu", tern_pktq_left(r));
    EXPECT(tern_pktq_pack(r, out, 10) == 10 && out[0] == 0x11 && out[2] == 0x11 && out[3] == 0,
           "pack after 42 bytes");
    n = tern_pktq_iov(r, io, 1, 2, &bytes);
    EXPECT(n == 1 && bytes == 2 && io[0].iov_base == a + 2, "iov of the payload's rest");
    EXPECT(tern_pktq_advance(r, 1003), "all bytes went: not done");
    EXPECT(tern_pktq_left(r) == 0, "left %zu", tern_pktq_left(r));
    tern_pktq_complete_head(&q);
    EXPECT((r->flags & TERN_REQF_COMPLETE) && r->status == TERN_OK, "the head did not complete");
    EXPECT(tern_pktq_head(&q) == r2, "the next request is not the head");

    /* a header partly written before it was queued */
    tern_pktq_t q2;
    tern_pktq_init(&q2);
    tern_request_t *r3 = new_send();
    tern_cursor_init(&r3->cur, v, 1);
    uint8_t h2[TERN_PKT_HDR_SIZE];
    for (size_t i = 0; i < sizeof(h2); i++)
        h2[i] = (uint8_t)i;
    tern_pktq_push(&q2, r3, h2, sizeof(h2), 17); /* with 17 sent */
    EXPECT(tern_pktq_left(r3) == 23 + 5, "left %zu", tern_pktq_left(r3));
    EXPECT(tern_pktq_pack(r3, out, 1) == 1 && out[0] == 17, "the first unsent header byte");

    EXPECT(tern_pktq_head(&q2) == r3 && r3->link.next == &q2.reqs, "r3 alone in q2");

    /* fail_all: rendezvous requests are the engine's */
    tern_list_t vclist;
    tern_list_init(&vclist);
    tern_request_t *r5 = new_send();
    tern_cursor_init(&r5->cur, v, 1);
    tern_pktq_push(&q2, r5, h2, sizeof(h2), 0);
    r5->flags |= TERN_REQF_VCLIST;
    tern_list_push_tail(&vclist, &r5->vc_link);
    tern_pktq_fail_all(&q2, TERN_ERR_PEER_FAILED);
    EXPECT(tern_pktq_empty(&q2), "fail_all left requests queued");
    EXPECT((r3->flags & TERN_REQF_COMPLETE) && r3->status == TERN_ERR_PEER_FAILED,
           "a queued send did not fail");
    EXPECT(!(r5->flags & TERN_REQF_COMPLETE), "a rendezvous request was completed by the queue");
    tern_pktq_fail_all(&q, TERN_ERR_PEER_FAILED);
    EXPECT((r2->flags & TERN_REQF_COMPLETE) && r2->status == TERN_ERR_PEER_FAILED, "r2");
    tern_list_del(&r5->vc_link);
    r5->flags &= ~(uint32_t)TERN_REQF_VCLIST;
    tern_request_t *all[] = {r, r2, r3, r5};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        tern_request_release(all[i]);
}

static void test_send_check(void)
{
    static tern_vc_t vcs[2];
    tern_netmod_inst_t inst;
    count_core = *tern_netmod_self.core;
    count_core.istart_contig_msg = count_istart;
    count_core.send_noncontig = count_noncontig;
    if (tern_netmod_instantiate(&inst, &count_desc) != TERN_OK)
        abort();
    worker.vcs = vcs;
    for (int r = 0; r < 2; r++) {
        vcs[r].rank = r;
        vcs[r].worker = &worker;
        vcs[r].nm = &inst;
        tern_list_init(&vcs[r].lmt_wait);
    }
    tern_vc_t *vc = &vcs[1];
    tern_pkt_hdr_t h = {.type = TERN_PKT_BYE};
    EXPECT(tern_send_ctrl(vc, &h, NULL, 0) == TERN_OK && data_ops == 1, "an active VC: %s",
           tern_last_error());

    vc->state = TERN_VC_FAILED;
    vc->fail_status = TERN_ERR_CONN_RESET;
    data_ops = 0;
    uint8_t cookie[8] = {0};
    tern_status_t st = tern_send_ctrl(vc, &h, NULL, 0);
    EXPECT(st == TERN_ERR_CONN_RESET, "control packet on a failed VC: status %d", st);
    EXPECT(strcmp(tern_last_error(), "counting send to rank 1: connection failed") == 0,
           "message: %s", tern_last_error());
    st = tern_send_ctrl(vc, &h, cookie, sizeof(cookie));
    EXPECT(st == TERN_ERR_CONN_RESET, "control packet with a cookie: status %d", st);
    tern_request_t *s = new_send();
    s->vc = vc;
    st = tern_send_noncontig(vc, s, &h, sizeof(h));
    EXPECT(st == TERN_ERR_CONN_RESET, "payload send on a failed VC: status %d", st);
    EXPECT(strstr(tern_last_error(), "counting send to rank 1") != NULL, "message: %s",
           tern_last_error());
    EXPECT(data_ops == 0, "the netmod was called %d times on a failed VC", data_ops);
    EXPECT(!(s->flags & TERN_REQF_COMPLETE), "the refused send completed");
    tern_request_release(s);
    tern_netmod_inst_release(&inst);
}

int main(void)
{
    if (tern_config_load(&ctx.cfg) != TERN_OK)
        abort();
    ctx.rank = 0;
    ctx.size = 2;
    ctx.workers = &worker;
    ctx.num_workers = 1;
    if (tern_worker_init(&worker, &ctx, 0) != TERN_OK)
        abort();
    test_queue();
    test_send_check();
    tern_worker_fini(&worker);
    if (failures == 0)
        printf("pktq_test: all passed\n");
    return failures ? 1 : 0;
}
