/*
 * Typed defaults for netmod ops a netmod does not provide: each answers
 * TERN_ERR_UNSUPPORTED naming the netmod and the operation (after
 * rdma-core's dummy_ops: a missing op is an error, never a crash).
 */
#include "engine/netmod.h"

static bool no_reachable(tern_context_t *ctx, int rank) { return false; }
static tern_status_t no_init(tern_context_t *ctx, void **state)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "netmod has no init");
}
static tern_status_t no_finalize(void *state) { return TERN_OK; }
static tern_status_t no_card(void *state, void *buf, size_t *len)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "netmod has no business card");
}
static tern_status_t no_connect_to_root(void *state, const char *card, tern_vc_t *vc)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "netmod %s: connect_to_root not supported",
                      vc->nm->name);
}
static tern_status_t no_vc_init(void *state, tern_vc_t *vc)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "netmod %s: vc_init not supported", vc->nm->name);
}
static tern_status_t no_wireup_done(void *state) { return TERN_OK; }
static tern_status_t no_vc_destroy(tern_vc_t *vc) { return TERN_OK; }
static tern_status_t no_vc_terminate(tern_vc_t *vc)
{
    vc->state = TERN_VC_CLOSED;
    return TERN_OK;
}
static int no_ordering(void *state) { return 1; }
static tern_status_t no_isend_contig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                     size_t hdrlen, const void *data, size_t len)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "netmod %s: isend_contig not supported", vc->nm->name);
}
static tern_status_t no_istart(tern_vc_t *vc, const void *hdr, size_t hdrlen, const void *data,
                               size_t len, tern_request_t **sreq)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "netmod %s: istart_contig_msg not supported",
                      vc->nm->name);
}
static tern_status_t no_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                  size_t hdrlen)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "netmod %s: send_noncontig not supported",
                      vc->nm->name);
}
static void no_check_peers(void *state) {}

void tern_netmod_fill_defaults(tern_netmod_ops_t *o)
{
#define DEF(slot, fn) \
    if (o->slot == NULL) \
        o->slot = fn;
    DEF(reachable, no_reachable)
    DEF(init, no_init)
    DEF(finalize, no_finalize)
    DEF(get_business_card, no_card)
    DEF(connect_to_root, no_connect_to_root)
    DEF(vc_init, no_vc_init)
    DEF(wireup_done, no_wireup_done)
    DEF(vc_destroy, no_vc_destroy)
    DEF(vc_terminate, no_vc_terminate)
    DEF(get_ordering, no_ordering)
    DEF(isend_contig, no_isend_contig)
    DEF(istart_contig_msg, no_istart)
    DEF(send_noncontig, no_noncontig)
    DEF(check_peers, no_check_peers)
#undef DEF
}
