/*
 * The self netmod: a VC to one's own rank.  Sending feeds the bytes straight
 * to the engine's stream parser, so self messages take the same matching,
 * unexpected-queue and rendezvous (null LMT mode) paths as any netmod.
 * The parser resets its state before dispatching a packet, which makes the
 * re-entry (RTS -> CTS -> DATA, all inline) safe.
 */
#include "engine/netmod.h"

static bool self_reachable(tern_context_t *ctx, int rank) { return rank == ctx->rank; }

static tern_status_t self_init(tern_worker_t *w, const void *config, void **shared,
                               void **state)
{
    *state = w;
    return TERN_OK;
}

/* nothing to reach: the engine puts no self card in an address */
static tern_status_t self_card(void *state, void *buf, size_t *len)
{
    (void)state, (void)buf;
    *len = 0;
    return TERN_OK;
}

static tern_status_t self_vc_init(void *state, tern_vc_t *vc, const void *card, size_t len)
{
    (void)state, (void)vc, (void)card, (void)len;
    return TERN_OK;
}

static tern_status_t self_istart(tern_vc_t *vc, const void *hdr, size_t hdrlen, const void *data,
                                 size_t len, tern_request_t **sreq)
{
    *sreq = NULL;
    tern_status_t st = tern_handle_pkt(vc, hdr, hdrlen);
    return st == TERN_OK && len ? tern_handle_pkt(vc, data, len) : st;
}

/* The header, then the cursor's slices (a contiguous buffer is one). */
static tern_status_t self_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                    size_t hdrlen)
{
    tern_status_t st = tern_handle_pkt(vc, hdr, hdrlen);
    struct iovec v;
    size_t n;
    while (st == TERN_OK && tern_cursor_slice(&sreq->cur, &v, 1, SIZE_MAX, &n) == 1) {
        st = tern_handle_pkt(vc, v.iov_base, v.iov_len);
        tern_cursor_advance(&sreq->cur, n);
    }
    if (st == TERN_OK)
        tern_request_complete(sreq, TERN_OK);
    return st;
}

static tern_status_t self_finalize(void *state)
{
    (void)state;
    return TERN_OK;
}

static tern_status_t self_vc_destroy(tern_vc_t *vc)
{
    (void)vc; /* nothing is ever queued */
    return TERN_OK;
}

static tern_status_t self_vc_terminate(tern_vc_t *vc)
{
    vc->state = TERN_VC_CLOSED; /* every send completed inside its call */
    return TERN_OK;
}

static const tern_nm_core_ops_t self_core = {
    .reachable = self_reachable,
    .init = self_init,
    .finalize = self_finalize,
    .card = self_card,
    .vc_init = self_vc_init,
    .vc_destroy = self_vc_destroy,
    .vc_terminate = self_vc_terminate,
    .istart_contig_msg = self_istart,
    .send_noncontig = self_noncontig,
};

/* No poll (nothing arrives later), no LMT (the null mode), nothing else. */
const tern_netmod_desc_t tern_netmod_self = {
    .abi = TERN_NETMOD_ABI,
    .name = "self",
    .reach = "one's own rank",
    .core = &self_core,
};
