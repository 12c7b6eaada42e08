/*
 * The netmod interface (after the Nemesis network-module API).
 *
 * One ops table per netmod, filled with designated initialisers.  The table
 * carries its size so it can grow; every slot a netmod leaves NULL is
 * replaced at registration by a typed default from netmod.c that answers
 * TERN_ERR_UNSUPPORTED (never a cast stub).  A netmod without LMT ops gets
 * the engine's null LMT mode: RTS / CTS / DATA over ordinary sends.  poll
 * also stays NULL when not given: such a netmod (self) is never polled.
 *
 * Wire-up phases, driven by engine/context.c:
 *   init            create resources, PMIx_Put the business card
 *   (engine: PMIx commit + fence)
 *   vc_init         per peer using this netmod, with the peer's card
 *   (engine: fence)
 *   wireup_done     everyone is attached (shm: unlink the segment name)
 *
 * Received bytes go to tern_handle_pkt(vc, buf, len) in stream order.
 */
#ifndef TERN_ENGINE_NETMOD_H
#define TERN_ENGINE_NETMOD_H

#include "engine/engine_internal.h"

enum tern_poll_dir { TERN_POLL_RECV = 1, TERN_POLL_SEND = 2, TERN_POLL_ALL = 3 };

struct tern_netmod_ops {
    size_t size;        /* sizeof(tern_netmod_ops_t) the netmod was built with */
    const char *name;

    /* Does this netmod reach rank from here?  (shm: same node) */
    bool (*reachable)(tern_context_t *ctx, int rank);

    tern_status_t (*init)(tern_context_t *ctx, void **state);
    tern_status_t (*finalize)(void *state);
    tern_status_t (*get_business_card)(void *state, void *buf, size_t *len);
    tern_status_t (*connect_to_root)(void *state, const char *business_card, tern_vc_t *vc);
    tern_status_t (*vc_init)(void *state, tern_vc_t *vc);
    tern_status_t (*wireup_done)(void *state);
    tern_status_t (*vc_destroy)(tern_vc_t *vc);
    /* Never blocks: pending sends finish, then poll reports the VC closed. */
    tern_status_t (*vc_terminate)(tern_vc_t *vc);
    int (*get_ordering)(void *state);   /* 1: ordered stream per VC */

    /* Send hdr+data for the existing request sreq; completes it when sent. */
    tern_status_t (*isend_contig)(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                  size_t hdrlen, const void *data, size_t len);
    /* Send hdr+data; *sreq = NULL if all went out now, else a new request. */
    tern_status_t (*istart_contig_msg)(tern_vc_t *vc, const void *hdr, size_t hdrlen,
                                       const void *data, size_t len, tern_request_t **sreq);
    /* Send hdr + the payload described by sreq->cur; completes sreq when sent. */
    tern_status_t (*send_noncontig)(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                    size_t hdrlen);
    unsigned (*poll)(void *state, int direction);

    /* LMT (rendezvous data movement); all NULL selects the null mode. */
    tern_status_t (*lmt_initiate)(tern_vc_t *vc, tern_request_t *sreq, void *cookie,
                                  size_t *cookie_len);
    tern_status_t (*lmt_start_recv)(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                    size_t cookie_len);
    tern_status_t (*lmt_start_send)(tern_vc_t *vc, tern_request_t *sreq, const void *cookie,
                                    size_t cookie_len);
    tern_status_t (*lmt_handle_cookie)(tern_vc_t *vc, tern_request_t *req, const void *cookie,
                                       size_t cookie_len);
    tern_status_t (*lmt_done_send)(tern_vc_t *vc, tern_request_t *sreq);
    tern_status_t (*lmt_done_recv)(tern_vc_t *vc, tern_request_t *rreq);

    /* Check the health of the peers; fail VCs whose peer died.  Idle path. */
    void (*check_peers)(void *state);
};

/* Fill NULL slots of ops with typed defaults (LMT slots and poll stay NULL). */
void tern_netmod_fill_defaults(tern_netmod_ops_t *ops);

/* True when ops has LMT operations (otherwise the null mode is used). */
static inline bool tern_netmod_has_lmt(const tern_netmod_ops_t *ops)
{
    return ops->lmt_start_recv != NULL && ops->lmt_start_send != NULL;
}

extern tern_netmod_ops_t tern_netmod_shm_ops;
extern tern_netmod_ops_t tern_netmod_self_ops;
#ifdef TERN_HAVE_NETMOD_TCP
extern tern_netmod_ops_t tern_netmod_tcp_ops;
#endif

#endif
