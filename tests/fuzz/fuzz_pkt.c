/*
 * libFuzzer harness of the engine's stream parser (tern_handle_pkt): a
 * job-less engine (two ranks, as in tests/unit/parser_test.c) whose VC to
 * rank 1 is carried by the capturing netmod of fuzz_nm.c, fed the input's
 * bytes in fragments the input chooses, between receives and sends it
 * posts (input format: fuzz_pkt.h).  Engine and buffers are rebuilt for
 * every input.  Invariants (abort): no byte written outside a receive
 * buffer (canaries after each buffer and between iovec entries), a failed
 * feed fails the VC with TERN_ERR_MALFORMED or a resource code, a
 * completed receive's status agrees with its length and buffer.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_pkt.h"
#include "tests/fuzz/seeds.h"

#define CANARY 16
#define CANARY_BYTE 0xa5
#define NSEND 8

/* The receives an input may post. */
static const struct rslot {
    int src, tag;
    uint16_t space;
    bool vector; /* tern_irecvv, else tern_irecv */
    int n;
    size_t len[3];
} rslots[8] = {
    {1, 0, 0, false, 1, {8}},                               /* exact source and tag */
    {TERN_ANY_SOURCE, 1, 0, false, 1, {64}},
    {1, 2, 0, true, 3, {5, 0, 11}},                         /* iovec, an empty entry */
    {1, TERN_ANY_TAG, 0, false, 1, {20000}},                /* rendezvous size */
    {TERN_ANY_SOURCE, TERN_ANY_TAG, 0, true, 2, {4096, 9000}},
    {1, 5, 0, false, 1, {0}},
    {0, 6, 0, false, 1, {16}},                              /* from ourselves only */
    {1, TERN_ANY_TAG, 3, false, 1, {100}},                  /* another space */
};

static tern_context_t ctx;
static tern_worker_t worker;
static tern_vc_t vcs[2];
static tern_config_t cfg0;
static uint8_t *blocks[8]; /* a slot's entries, each followed by CANARY bytes */
static tern_request_t *recvs[8], *sends[NSEND];
static uint8_t send_buf[20000];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_pkt: invariant broken: %s (last error: %s)\n", what,
                tern_last_error());
        abort();
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    seeds_maybe_write(fuzz_pkt_write_seeds);
    /* Each failed VC logs a warning: to /dev/null, through the variable
     * that names ternrun's INTERNAL stream (already set: kept). */
    static char fdvar[16];
    int fd = getenv("TERN_IOF_INTERNAL_FD") ? -1 : open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (fd > 2) {
        snprintf(fdvar, sizeof(fdvar), "%d", fd);
        setenv("TERN_IOF_INTERNAL_FD", fdvar, 1);
    }
    check(tern_config_load(&cfg0) == TERN_OK, "configuration");
    cfg0.eager_limit = 16384; /* whatever the environment says: inputs keep their meaning */
    cfg0.lmt_mode = TERN_LMT_AUTO;
    return 0;
}

static void post(int k)
{
    const struct rslot *s = &rslots[k];
    if (blocks[k] != NULL)
        return; /* each slot once per input: its buffer stays checkable */
    size_t total = 0, off = 0;
    for (int i = 0; i < s->n; i++)
        total += s->len[i] + CANARY;
    check((blocks[k] = malloc(total)) != NULL, "malloc");
    memset(blocks[k], CANARY_BYTE, total);
    struct iovec iov[3];
    for (int i = 0; i < s->n; i++) {
        iov[i] = (struct iovec){blocks[k] + off, s->len[i]};
        off += s->len[i] + CANARY;
    }
    tern_status_t st =
        s->vector ? tern_irecvv(&worker, iov, s->n, s->src, s->tag, s->space, NULL, &recvs[k])
                  : tern_irecv(&worker, iov[0].iov_base, s->len[0], s->src, s->tag, s->space,
                               NULL, &recvs[k]);
    if (st != TERN_INPROGRESS)
        recvs[k] = NULL; /* done at once from the unexpected queue, or refused */
}

/* Reap the completed requests (never progress: there is no job). */
static void reap(void)
{
    for (int k = 0; k < 8; k++) {
        if (recvs[k] == NULL || !(recvs[k]->flags & TERN_REQF_COMPLETE))
            continue;
        size_t cap = 0;
        for (int i = 0; i < rslots[k].n; i++)
            cap += rslots[k].len[i];
        tern_recv_info_t info;
        tern_status_t st = tern_test(&worker, recvs[k], &info);
        recvs[k] = NULL;
        check(st != TERN_OK || info.length <= cap, "a receive completed OK beyond its buffer");
        check(st != TERN_ERR_TRUNCATED || info.length > cap, "TRUNCATED, but the message fit");
        check(st == TERN_OK || st == TERN_ERR_TRUNCATED || st == TERN_ERR_MALFORMED ||
                  tern_status_is_resource_error(st),
              "a receive completed with an unexpected status");
    }
    for (int k = 0; k < NSEND; k++)
        if (sends[k] != NULL && (sends[k]->flags & TERN_REQF_COMPLETE)) {
            tern_test(&worker, sends[k], NULL);
            sends[k] = NULL;
        }
}

static void start_send(size_t len, int tag)
{
    for (int k = 0; k < NSEND; k++)
        if (sends[k] == NULL) {
            if (tern_isend(&worker, send_buf, len, 1, tag, 0, &sends[k]) != TERN_INPROGRESS)
                sends[k] = NULL;
            return;
        }
}

static void feed(const uint8_t *p, size_t n)
{
    tern_vc_t *vc = &vcs[1];
    tern_status_t st = tern_handle_pkt(vc, p, n);
    if (st == TERN_OK)
        return;
    check(vc->state == TERN_VC_FAILED && vc->fail_status == st, "an error left the VC up");
    check(st == TERN_ERR_MALFORMED || tern_status_is_resource_error(st),
          "the VC failed with neither MALFORMED nor a resource code");
}

static void setup(uint8_t flags)
{
    memset(&ctx, 0, sizeof(ctx));
    memset(vcs, 0, sizeof(vcs));
    memset(recvs, 0, sizeof(recvs));
    memset(sends, 0, sizeof(sends));
    ctx.cfg = cfg0;
    ctx.rank = 0;
    ctx.size = 2;
    ctx.workers = &worker;
    ctx.num_workers = 1;
    check(tern_worker_init(&worker, &ctx, 0) == TERN_OK, "worker init");
    tern_netmod_inst_t *nm = fuzz_nm_reset(flags & SETUP_LMT, flags & SETUP_QUEUE);
    worker.vcs = vcs;
    worker.netmods = nm;
    worker.num_netmods = 1;
    for (int r = 0; r < 2; r++) {
        vcs[r].rank = r;
        vcs[r].worker = &worker;
        vcs[r].nm = nm;
        vcs[r].eager_limit = ctx.cfg.eager_limit;
        tern_list_init(&vcs[r].lmt_wait);
    }
}

static void teardown(void)
{
    tern_worker_fini(&worker); /* frees every request, with its tmpbuf and iovec */
    for (int k = 0; k < 8; k++) {
        for (size_t i = 0, off = 0; blocks[k] != NULL && i < (size_t)rslots[k].n; i++) {
            off += rslots[k].len[i];
            for (int c = 0; c < CANARY; c++)
                check(blocks[k][off + c] == CANARY_BYTE, "a byte written past a receive buffer");
            off += CANARY;
        }
        free(blocks[k]);
        blocks[k] = NULL;
    }
    for (int r = 0; r < 2; r++)
        tern_vc_free_msgs(&vcs[r]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    setup(data[0]);
    for (int k = 0; k < 8; k++)
        if (data[1] & (1u << k))
            post(k);
    for (const uint8_t *p = data + 2, *end = data + size; p < end;) {
        uint8_t op = *p++;
        size_t left = (size_t)(end - p);
        if (op < OP_ACTION) {
            size_t n = op == OP_REST || op > left ? left : op;
            feed(p, n);
            p += n;
        } else if (op - OP_ACTION < ACT_SEND_RNDV) {
            post(op - OP_ACTION);
        } else if (op - OP_ACTION == ACT_SEND_RNDV) {
            start_send(sizeof(send_buf), 7);
        } else if (op - OP_ACTION == ACT_SEND_EAGER) {
            start_send(100, 8);
        } else if (op - OP_ACTION == ACT_DRAIN) {
            fuzz_nm_drain();
        } else {
            reap();
        }
    }
    fuzz_nm_drain();
    reap();
    teardown();
    return 0;
}
