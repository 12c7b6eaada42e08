/*
 * tcp netmod sends: a packet is written with one writev of header + payload
 * straight from the user's buffer.  What the socket does not take at once
 * stays at the head of the VC's sendq (header bytes in req->nm.u64[0..7],
 * header length u64[8], header bytes written u64[9], payload progress in
 * req->cur) and goes out through a posted writev, in order.  A request is
 * created only when the packet could not be written completely at once.
 */
#include <string.h>

#include "netmods/tcp/tcp_internal.h"

#define NM_HDR_MAX 64

static int build_iov(tern_request_t *r, struct iovec *iov, int max)
{
    size_t hlen = r->nm.u64[8], hsent = r->nm.u64[9];
    int n = 0;
    if (hsent < hlen) {
        iov[n].iov_base = (uint8_t *)r->nm.u64 + hsent;
        iov[n].iov_len = hlen - hsent;
        n++;
    }
    size_t bytes;
    return n + tern_cursor_slice(&r->cur, iov + n, max - n, SIZE_MAX, &bytes);
}

/* Account nb more bytes of r as written; true when all of r is. */
static bool advance(tern_request_t *r, size_t nb)
{
    size_t hlen = r->nm.u64[8], hsent = r->nm.u64[9];
    size_t h = hlen - hsent < nb ? hlen - hsent : nb;
    r->nm.u64[9] = hsent + h;
    if (nb > h)
        tern_cursor_advance(&r->cur, nb - h);
    return r->nm.u64[9] == hlen && tern_cursor_left(&r->cur) == 0;
}

static void maybe_closed(tern_tcp_vc_t *tv)
{
    if (tv->vc->state == TERN_VC_TERMINATING && tern_list_empty(&tv->sendq) && !tv->writing)
        tv->vc->state = TERN_VC_CLOSED;
}

void tern_tcp_flush(tern_tcp_vc_t *tv)
{
    if (tv->state != TCP_VC_CONNECTED || tv->writing || tv->vc->state == TERN_VC_FAILED)
        return;
    while (!tern_list_empty(&tv->sendq)) {
        tern_request_t *r = TERN_CONTAINER_OF(tv->sendq.next, tern_request_t, link);
        int n = build_iov(r, tv->wiov, TERN_TCP_WIOV);
        size_t nb = 0;
        tern_status_t st = tern_sock_writev(tv->data->sock, tv->wiov, n, &nb);
        if (st != TERN_OK) {
            tern_tcp_vc_lost(tv, st, "writev");
            return;
        }
        if (advance(r, nb)) {
            tern_list_del(&r->link);
            tern_request_complete(r, TERN_OK);
            continue;
        }
        /* The socket is full: the rest goes out when it drains. */
        n = build_iov(r, tv->wiov, TERN_TCP_WIOV);
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
    if (!tern_list_empty(&tv->sendq)) {
        tern_request_t *r = TERN_CONTAINER_OF(tv->sendq.next, tern_request_t, link);
        if (advance(r, nbytes)) {
            tern_list_del(&r->link);
            tern_request_complete(r, TERN_OK);
        }
    }
    tern_tcp_flush(tv);
}

/* Post the head request's rest without trying to write it now (completion
 * then only ever happens in poll, never inside the call that queued it). */
static tern_status_t kick(tern_tcp_vc_t *tv)
{
    if (tv->state != TCP_VC_CONNECTED || tv->writing || tern_list_empty(&tv->sendq))
        return TERN_OK;
    tern_request_t *r = TERN_CONTAINER_OF(tv->sendq.next, tern_request_t, link);
    int n = build_iov(r, tv->wiov, TERN_TCP_WIOV);
    tern_status_t st = tern_sock_post_writev(tv->data->sock, tv->wiov, n, NULL);
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
    if (hdrlen > NM_HDR_MAX)
        return tern_error(TERN_ERR_INVALID_PARAM, "tcp: %zu-byte packet header", hdrlen);
    memcpy(r->nm.u64, hdr, hdrlen);
    r->nm.u64[8] = hdrlen;
    r->nm.u64[9] = hsent;
    if (tv->state == TCP_VC_IDLE) {
        tern_status_t st = tern_tcp_start_connect(tern_tcp_state(tv->vc), tv);
        if (st != TERN_OK)
            return st;
    }
    tern_list_push_tail(&tv->sendq, &r->link);
    if (try_now) {
        tern_tcp_flush(tv);
        return TERN_OK;
    }
    tern_status_t st = kick(tv);
    if (st != TERN_OK)
        tern_list_del(&r->link);
    return st;
}

static tern_status_t check_vc(tern_vc_t *vc)
{
    if (vc->state == TERN_VC_FAILED)
        return tern_error(vc->fail_status, "tcp send to rank %d: connection failed", vc->rank);
    return TERN_OK;
}

tern_status_t tern_tcp_istart_contig_msg(tern_vc_t *vc, const void *hdr, size_t hdrlen,
                                         const void *data, size_t len, tern_request_t **sreq)
{
    tern_tcp_vc_t *tv = tern_tcp_vc(vc);
    tern_status_t st = check_vc(vc);
    *sreq = NULL;
    if (st != TERN_OK)
        return st;
    size_t nb = 0;
    if (tv->state == TCP_VC_CONNECTED && tern_list_empty(&tv->sendq) && !tv->writing) {
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
    tern_status_t st = check_vc(vc);
    if (st != TERN_OK)
        return st;
    sreq->vc = vc;
    return enqueue(tern_tcp_vc(vc), sreq, hdr, hdrlen, 0, true);
}
