/*
 * Probes, matched probes and cancelling a receive (MPI_Iprobe, MPI_Improbe
 * / MPI_Imrecv, MPI_Cancel of a receive), on the worker's queues.
 *
 * A probe looks at the unexpected queue (after one round of progress) and
 * leaves the message there.  A matched probe takes it off the queue and
 * flags it MPROBED: the stream parser and the failure path then treat it as
 * they treat an unexpected message (the payload keeps arriving into its
 * temporary buffer; nobody releases it) until tern_imrecv gives it a buffer,
 * exactly as a receive that matched it in the queue would have.  No other
 * receive can match it meanwhile: the order of matching is the probe's.
 */
#include <stdlib.h>

#include "engine/engine_internal.h"
#include "engine/match.h"

struct tern_message; /* a tern_request_t of kind RECV flagged MPROBED */

static tern_status_t probe_args(tern_worker_t *w, int src, int tag, const void *out)
{
    tern_request_t *dummy;
    tern_status_t st = tern_recv_check_args(w, src, tag, &dummy);
    if (st == TERN_OK && out == NULL)
        st = tern_error(TERN_ERR_INVALID_PARAM, "probe: NULL flag or message pointer");
    return st;
}

static void probe_info(tern_recv_info_t *info, const tern_request_t *u)
{
    tern_recv_fill_info(info, u, TERN_OK);
}

/* Between two probes that found nothing: src's connection failed (its
 * status), else idle as a wait does. */
static tern_status_t tern_probe_wait(tern_worker_t *w, int src)
{
    tern_vc_t *vc = src != TERN_ANY_SOURCE ? tern_vc_of(w, src) : NULL;
    if (vc != NULL && vc->state == TERN_VC_FAILED)
        return tern_error(vc->fail_status, "probe of rank %d: its connection has failed", src);
    if (w->idle_polls >= w->ctx->cfg.spin_count)
        tern_idle_step(w, UINT64_MAX);
    return TERN_OK;
}

tern_status_t tern_iprobe(tern_worker_t *w, int src, int tag, uint16_t space, int *flag,
                          tern_recv_info_t *info)
{
    tern_status_t st = probe_args(w, src, tag, flag);
    if (st != TERN_OK)
        return st;
    tern_progress(w);
    tern_request_t *u = tern_peek_unexpected(w, src, tern_match_int_tag(tag),
                                              tern_match_int_ignore(tag), space);
    *flag = u != NULL;
    if (u != NULL)
        probe_info(info, u);
    return TERN_OK;
}

tern_status_t tern_probe(tern_worker_t *w, int src, int tag, uint16_t space,
                         tern_recv_info_t *info)
{
    int flag = 0;
    tern_status_t st;
    while ((st = tern_iprobe(w, src, tag, space, &flag, info)) == TERN_OK && !flag) {
        if ((st = tern_probe_wait(w, src)) != TERN_OK)
            return st;
    }
    return st;
}

tern_status_t tern_improbe(tern_worker_t *w, int src, int tag, uint16_t space, int *flag,
                           tern_message_t **msg, tern_recv_info_t *info)
{
    tern_status_t st = probe_args(w, src, tag, flag);
    if (st == TERN_OK && msg == NULL)
        st = tern_error(TERN_ERR_INVALID_PARAM, "tern_improbe: NULL message pointer");
    if (st != TERN_OK)
        return st;
    *msg = NULL;
    tern_progress(w);
    tern_request_t *u = tern_match_unexpected(w, src, tern_match_int_tag(tag),
                                               tern_match_int_ignore(tag), space);
    *flag = u != NULL;
    if (u == NULL)
        return TERN_OK;
    u->flags |= TERN_REQF_MPROBED;
    probe_info(info, u);
    *msg = (tern_message_t *)u;
    return TERN_OK;
}

tern_status_t tern_mprobe(tern_worker_t *w, int src, int tag, uint16_t space,
                          tern_message_t **msg, tern_recv_info_t *info)
{
    int flag = 0;
    tern_status_t st;
    while ((st = tern_improbe(w, src, tag, space, &flag, msg, info)) == TERN_OK && !flag) {
        if ((st = tern_probe_wait(w, src)) != TERN_OK)
            return st;
    }
    return st;
}

tern_status_t tern_mrecv(tern_worker_t *w, const struct iovec *iov, int iovcnt, bool contig,
                         tern_message_t *msg, tern_recv_info_t *info, tern_cq_entry_t *done,
                         tern_request_t **req)
{
    tern_request_t *u = (tern_request_t *)msg;
    if (w == NULL || req == NULL || u == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_imrecv: NULL worker, message or request");
    if (u->worker != w || u->kind != TERN_REQ_RECV || !(u->flags & TERN_REQF_MPROBED))
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_imrecv: not a message of this worker's "
                          "matched probes (or received already)");
    *req = NULL;
    struct iovec *owned = NULL;
    if (!contig && (owned = tern_iov_dup(iov, iovcnt)) == NULL)
        return TERN_ERR_NO_MEMORY;
    u->flags &= ~(uint32_t)TERN_REQF_MPROBED;
    return tern_recv_bind(w, u, iov, iovcnt, owned, u->peer, u->tag, 0, u->space, info, done,
                          req);
}

tern_status_t tern_imrecv(tern_worker_t *w, void *buf, size_t len, tern_message_t *msg,
                          tern_recv_info_t *info, tern_request_t **req)
{
    if (buf == NULL && len > 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "receive of %zu bytes into a NULL buffer", len);
    tern_status_t st = tern_len_check(len, "receive");
    if (st != TERN_OK)
        return st;
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    return tern_mrecv(w, &iov, 1, true, msg, info, NULL, req);
}

tern_status_t tern_imrecvv(tern_worker_t *w, const struct iovec *iov, int iovcnt,
                           tern_message_t *msg, tern_recv_info_t *info, tern_request_t **req)
{
    size_t total;
    tern_status_t st = tern_iov_check(iov, iovcnt, "receive", &total);
    return st != TERN_OK ? st : tern_mrecv(w, iov, iovcnt, false, msg, info, NULL, req);
}

tern_status_t tern_cancel(tern_worker_t *w, tern_request_t *req)
{
    if (w == NULL || req == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_cancel: NULL worker or request");
    if (req->kind != TERN_REQ_RECV)
        return tern_error(TERN_ERR_UNSUPPORTED, "tern_cancel: sends cannot be cancelled "
                          "(only receives that have not matched)");
    if (req->flags & TERN_REQF_POSTED) { /* not matched: it never will be */
        tern_list_del(&req->link);
        req->flags &= ~(uint32_t)TERN_REQF_POSTED;
        tern_request_complete(req, TERN_ERR_CANCELED);
    }
    /* matched (or complete): it completes as it would have; its status says
     * whether the cancel took effect */
    return TERN_OK;
}
