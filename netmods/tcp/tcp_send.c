/*
 * tcp netmod sends: a packet is written with one writev of header + payload
 * straight from the user's buffer.  What the socket does not take at once
 * waits in the VC's engine packet queue (sendq, engine/pktq.h) and goes out
 * through a posted writev of its head, in order.  A request is created only
 * when the packet could not be written completely at once.
 */
#include <string.h>

#include "netmods/tcp/tcp_internal.h"

/* The rest of the head request r as the VC's write iovec. */
static int head_iov(tern_tcp_vc_t *tv, tern_request_t *r)
{
    size_t bytes;
    return tern_pktq_iov(r, tv->wiov, TERN_TCP_WIOV, SIZE_MAX, &bytes);
}

static void maybe_closed(tern_tcp_vc_t *tv)
{
    if (tv->vc->state == TERN_VC_TERMINATING && tern_pktq_empty(&tv->sendq) && !tv->writing)
        tv->vc->state = TERN_VC_CLOSED;
}

void tern_tcp_flush(tern_tcp_vc_t *tv)
{
    if (tv->state != TCP_VC_CONNECTED || tv->writing || tv->vc->state == TERN_VC_FAILED)
        return;
    tern_request_t *r;
    while ((r = tern_pktq_head(&tv->sendq)) != NULL) {
        int n = head_iov(tv, r);
        size_t nb = 0;
        tern_status_t st = tern_sock_writev(tv->data->sock, tv->wiov, n, &nb);
        if (st != TERN_OK) {
            tern_tcp_vc_lost(tv, st, "writev");
            return;
        }
        if (tern_pktq_advance(r, nb)) {
            tern_pktq_complete_head(&tv->sendq);
            continue;
        }
        /* The socket is full: the rest goes out when it drains. */
        n = head_iov(tv, r);
        st = tern_sock_post_writev(tv->data->sock, tv->wiov, n, NULL);
        if (st != TERN_OK) {
            tern_tcp_vc_lost(tv, st, "post_writev");
            return;
        }
        tern_tcp_set_writing(tv, true);
        return;
    }
    maybe_closed(tv);
}

void tern_tcp_write_done(tern_tcp_vc_t *tv, size_t nbytes)
{
    tern_tcp_set_writing(tv, false);
    tern_request_t *r = tern_pktq_head(&tv->sendq);
    if (r != NULL && tern_pktq_advance(r, nbytes))
        tern_pktq_complete_head(&tv->sendq);
    tern_tcp_flush(tv);
}

/* Post the head request's rest without trying to write it now (completion
 * then only ever happens in poll, never inside the call that queued it). */
static tern_status_t kick(tern_tcp_vc_t *tv)
{
    tern_request_t *r = tern_pktq_head(&tv->sendq);
    if (tv->state != TCP_VC_CONNECTED || tv->writing || r == NULL)
        return TERN_OK;
    tern_status_t st = tern_sock_post_writev(tv->data->sock, tv->wiov, head_iov(tv, r), NULL);
    if (st == TERN_OK)
        tern_tcp_set_writing(tv, true);
    return st;
}

/*
 * Queue r (with the unwritten rest of hdr) and get it moving: try_now
 * writes what the socket takes at once (r may complete inside this call:
 * only for requests the caller owns), else the rest is only posted.
 */
static tern_status_t enqueue(tern_tcp_vc_t *tv, tern_request_t *r, const void *hdr, size_t hdrlen,
                             size_t hsent, bool try_now)
{
    if (tv->state == TCP_VC_IDLE) {
        tern_status_t st = tern_tcp_start_connect(tern_tcp_state(tv->vc), tv);
        if (st != TERN_OK)
            return st;
    }
    tern_pktq_push(&tv->sendq, r, hdr, hdrlen, hsent);
    if (try_now) {
        tern_tcp_flush(tv);
        return TERN_OK;
    }
    tern_status_t st = kick(tv);
    if (st != TERN_OK)
        tern_pktq_remove(r);
    return st;
}

tern_status_t tern_tcp_istart_contig_msg(tern_vc_t *vc, const void *hdr, size_t hdrlen,
                                         const void *data, size_t len, tern_request_t **sreq)
{
    tern_tcp_vc_t *tv = tern_tcp_vc(vc);
    tern_status_t st;
    *sreq = NULL;
    size_t nb = 0;
    if (tv->state == TCP_VC_CONNECTED && tern_pktq_empty(&tv->sendq) && !tv->writing) {
        struct iovec iov[2] = {{(void *)hdr, hdrlen}, {(void *)data, len}};
        st = tern_sock_writev(tv->data->sock, iov, len ? 2 : 1, &nb);
        if (st != TERN_OK) {
            tern_tcp_vc_lost(tv, st, "writev");
            return vc->fail_status;
        }
        if (nb == hdrlen + len)
            return TERN_OK;
    }
    size_t hsent = nb < hdrlen ? nb : hdrlen;
    tern_request_t *r = tern_request_alloc_contig_send(vc, data, len, nb - hsent);
    if (r == NULL)
        return TERN_ERR_NO_MEMORY;
    st = enqueue(tv, r, hdr, hdrlen, hsent, false);
    if (st != TERN_OK) {
        tern_request_release(r);
        return st;
    }
    *sreq = r;
    return TERN_OK;
}

tern_status_t tern_tcp_send_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                      size_t hdrlen)
{
    return enqueue(tern_tcp_vc(vc), sreq, hdr, hdrlen, 0, true);
}
