/* The capturing netmod of fuzz_pkt.c: see fuzz_pkt.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_pkt.h"

#define QMAX 256
/* A rendezvous request's state, in its netmod scratch (TERN_REQ_NM). */
#define ST_OFFERED 0x4f46u /* send: RTS out, waiting for the CTS */
#define ST_ACTIVE 0x4143u  /* data moving: DONE or COOKIE may come */
#define ST(r) TERN_REQ_NM(r, uint64_t)

static tern_netmod_inst_t inst_null, inst_lmt;
static bool instantiated;
static tern_request_t *queue[QMAX];
static int nq;
static bool queueing;
static unsigned nchosen;

static void broken(const char *what, const tern_request_t *r)
{
    fprintf(stderr, "fuzz_pkt: the engine handed the netmod request %p %s\n", (const void *)r,
            what);
    abort();
}

void fuzz_nm_drain(void)
{
    int n = nq;
    nq = 0; /* a completion may hand over more: they queue afresh */
    for (int i = 0; i < n; i++)
        tern_request_complete(queue[i], TERN_OK);
}

/* The netmod now holds r until it completes it. */
static void hand_over(tern_request_t *r)
{
    if (r->flags & TERN_REQF_COMPLETE)
        broken("already complete", r);
    for (int i = 0; i < nq; i++)
        if (queue[i] == r)
            broken("while the netmod still held it", r);
    if (!queueing) {
        tern_request_complete(r, TERN_OK);
        return;
    }
    if (nq == QMAX)
        fuzz_nm_drain();
    queue[nq++] = r;
}

static tern_status_t nm_istart(tern_vc_t *vc, const void *hdr, size_t hdrlen, const void *data,
                               size_t len, tern_request_t **sreq)
{
    *sreq = NULL;
    if (!queueing)
        return TERN_OK;
    tern_request_t *r = tern_request_alloc_contig_send(vc, data, len, 0);
    if (r == NULL)
        return TERN_ERR_NO_MEMORY;
    hand_over(r);
    *sreq = r;
    return TERN_OK;
}

static tern_status_t nm_send_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                       size_t hdrlen)
{
    hand_over(sreq);
    return TERN_OK;
}

/* Like tcp: drop vc's queued sends; fail those that are not rendezvous
 * requests (the engine fails those on its VC list). */
static tern_status_t nm_vc_destroy(tern_vc_t *vc)
{
    int keep = 0, n = nq;
    tern_request_t *mine[QMAX];
    int nmine = 0;
    for (int i = 0; i < n; i++) {
        if (queue[i]->vc == vc)
            mine[nmine++] = queue[i];
        else
            queue[keep++] = queue[i];
    }
    nq = keep;
    for (int i = 0; i < nmine; i++)
        if (!(mine[i]->flags & TERN_REQF_VCLIST))
            tern_request_complete(mine[i], vc->fail_status);
    return TERN_OK;
}

static unsigned nm_lmt_modes(void *state)
{
    return 1u << TERN_LMT_COOP | 1u << TERN_LMT_GET | 1u << TERN_LMT_PUT;
}

static int nm_lmt_choose(tern_vc_t *vc, size_t len)
{
    return TERN_LMT_COOP + (int)(nchosen++ % 3);
}

static tern_status_t nm_lmt_initiate(tern_vc_t *vc, tern_request_t *sreq, int *mode,
                                     void *cookie, size_t *cookie_len)
{
    *ST(sreq) = ST_OFFERED;
    memset(cookie, 0x5c, 8);
    *cookie_len = 8;
    return TERN_OK;
}

static tern_status_t nm_lmt_start_recv(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                       size_t cookie_len)
{
    *ST(rreq) = ST_ACTIVE;
    return tern_lmt_send_cts(vc, rreq, NULL, 0);
}

static tern_status_t refuse(tern_vc_t *vc, const char *what)
{
    return tern_error(TERN_ERR_MALFORMED, "fuzz netmod: %s from rank %d out of turn", what,
                      vc->rank);
}

static tern_status_t nm_lmt_start_send(tern_vc_t *vc, tern_request_t *sreq, const void *cookie,
                                       size_t cookie_len)
{
    if (*ST(sreq) != ST_OFFERED)
        return refuse(vc, "CTS");
    *ST(sreq) = ST_ACTIVE;
    return TERN_OK;
}

static tern_status_t nm_lmt_cookie(tern_vc_t *vc, tern_request_t *req, const void *cookie,
                                   size_t cookie_len)
{
    return *ST(req) == ST_ACTIVE ? TERN_OK : refuse(vc, "COOKIE");
}

static tern_status_t nm_lmt_done_send(tern_vc_t *vc, tern_request_t *sreq)
{
    if (*ST(sreq) != ST_ACTIVE)
        return refuse(vc, "DONE");
    *ST(sreq) = 0;
    tern_request_complete(sreq, TERN_OK);
    return TERN_OK;
}

static tern_status_t nm_lmt_done_recv(tern_vc_t *vc, tern_request_t *rreq)
{
    if (*ST(rreq) != ST_ACTIVE)
        return refuse(vc, "DONE");
    *ST(rreq) = 0;
    tern_recv_data_complete(rreq); /* TRUNCATED if the message was longer */
    return TERN_OK;
}

/* self's lifecycle ops (fuzz_nm_reset), the fuzz netmod's data ops */
static tern_nm_core_ops_t core;

static const tern_nm_lmt_ops_t lmt_ops = {
    .modes = nm_lmt_modes,
    .choose = nm_lmt_choose,
    .initiate = nm_lmt_initiate,
    .start_recv = nm_lmt_start_recv,
    .start_send = nm_lmt_start_send,
    .handle_cookie = nm_lmt_cookie,
    .done_send = nm_lmt_done_send,
    .done_recv = nm_lmt_done_recv,
};

static const tern_netmod_desc_t desc_null = {
    .abi = TERN_NETMOD_ABI, .name = "fuzz-null", .core = &core};
static const tern_netmod_desc_t desc_lmt = {
    .abi = TERN_NETMOD_ABI, .name = "fuzz-lmt", .core = &core, .lmt = &lmt_ops};

tern_netmod_inst_t *fuzz_nm_reset(bool lmt, bool queue_sends)
{
    if (!instantiated) {
        core = *tern_netmod_self.core;
        core.vc_destroy = nm_vc_destroy;
        core.istart_contig_msg = nm_istart;
        core.send_noncontig = nm_send_noncontig;
        if (tern_netmod_instantiate(&inst_null, &desc_null) != TERN_OK ||
            tern_netmod_instantiate(&inst_lmt, &desc_lmt) != TERN_OK) {
            fprintf(stderr, "fuzz_pkt: netmod: %s\n", tern_last_error());
            abort();
        }
        instantiated = true;
    }
    nq = 0;
    nchosen = 0;
    queueing = queue_sends;
    return lmt ? &inst_lmt : &inst_null;
}
