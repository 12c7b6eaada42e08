/*
 * The send and receive paths shared by the tagged and msg tables: checks,
 * the AV lookup, the completion record, and the tern call.
 *
 * Every operation that may report goes to the engine with TERN_OP_CQ and a
 * record from the domain's pool (the application's context, the endpoint,
 * the completion flags).  One that asks for no successful completion
 * (FI_SELECTIVE_COMPLETION without FI_COMPLETION) and counts on no counter
 * gets no record: its context is one of the static ops below, with
 * TERN_OP_CQ_ERRORS, so only a failure comes back (with a NULL op_context,
 * as fi_cq(3) allows).  fi_inject / fi_tinject go with TERN_OP_INJECT and
 * no TERN_OP_CQ at all.
 */
#include <stdlib.h>

#include "ofi/tern_fi.h"

/* kind without TFI_OP_POOLED: never freed, shared read-only by threads */
static struct tfi_op silent[4] = {
    {.flags = FI_SEND | FI_TAGGED, .kind = 0},
    {.flags = FI_SEND | FI_MSG, .kind = 0},
    {.flags = FI_RECV | FI_TAGGED, .kind = TFI_OP_RECV},
    {.flags = FI_RECV | FI_MSG, .kind = TFI_OP_RECV},
};

static int iov_len(const struct tfi_xfer *x, size_t *len)
{
    if (x->iov == NULL) {
        if (x->buf == NULL && x->len > 0)
            return -FI_EINVAL;
        *len = x->len;
        return 0;
    }
    if (x->iov_count > TERN_IOV_MAX)
        return -FI_EINVAL;
    size_t n = 0;
    for (size_t i = 0; i < x->iov_count; i++) {
        if (x->iov[i].iov_base == NULL && x->iov[i].iov_len > 0)
            return -FI_EINVAL;
        if (x->iov[i].iov_len > SIZE_MAX - n)
            return -FI_EINVAL;
        n += x->iov[i].iov_len;
    }
    *len = n;
    return 0;
}

/* A record for an operation that reports, or the static op (NULL: no memory). */
struct tfi_op *tfi_record(struct tfi_ep *ep, const struct tfi_xfer *x, bool recv, tern_op_t *op)
{
    bool selective = recv ? ep->rx_selective : ep->tx_selective;
    bool want = !selective || (x->flags & FI_COMPLETION);
    bool counted = (recv ? ep->rx_cntr : ep->tx_cntr) != NULL;
    bool tagged = x->space == TFI_SPACE_TAGGED;
    op->flags |= TERN_OP_CQ;
    if (!want && !counted) {
        op->flags |= TERN_OP_CQ_ERRORS;
        op->context = &silent[(recv ? 2 : 0) + (tagged ? 0 : 1)];
        return op->context;
    }
    struct tfi_op *rec = tfi_op_get(ep->dom);
    if (rec == NULL)
        return NULL;
    rec->context = x->context;
    rec->ep = ep;
    rec->flags = (recv ? FI_RECV : FI_SEND) | (tagged ? FI_TAGGED : FI_MSG);
    rec->kind = TFI_OP_POOLED | (recv ? TFI_OP_RECV : 0) | (want ? TFI_OP_COMP : 0);
    op->context = rec;
    return rec;
}

void tfi_record_drop(struct tfi_ep *ep, struct tfi_op *rec)
{
    if (rec != NULL && (rec->kind & TFI_OP_POOLED))
        tfi_op_put(ep->dom, rec);
}

ssize_t tfi_send(struct tfi_ep *ep, const struct tfi_xfer *x)
{
    if (!ep->enabled)
        return -FI_EOPBADSTATE;
    if (!(ep->caps & FI_SEND))
        return -FI_EOPNOTSUPP;
    size_t len;
    int ret = iov_len(x, &len);
    if (ret != 0)
        return ret;
    if (len > ep->max_msg_size)
        return -FI_EINVAL;
    bool inject = x->inject_only || (x->flags & FI_INJECT);
    if (inject && len > ep->inject_size)
        return -FI_EINVAL; /* inject_size is the limit of FI_INJECT */
    tern_op_t op = {.flags = 0, .data = x->data, .context = NULL};
    if (x->flags & FI_REMOTE_CQ_DATA)
        op.flags |= TERN_OP_DATA;
    if (inject)
        op.flags |= TERN_OP_INJECT;
    if (x->flags & (FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | FI_MATCH_COMPLETE))
        op.flags |= TERN_OP_SYNC; /* complete once matched: meets all three */
    struct tfi_domain *d = ep->dom;
    tfi_lock(d);
    int peer = tfi_av_peer(ep->av, x->addr);
    if (peer < 0) {
        tfi_unlock(d);
        return -FI_EINVAL;
    }
    struct tfi_op *rec = NULL;
    if (!x->inject_only && (rec = tfi_record(ep, x, false, &op)) == NULL) {
        tfi_unlock(d);
        return -FI_ENOMEM;
    }
    tern_status_t st;
    tern_request_t *req = NULL;
    tern_request_t **reqp = rec != NULL && (rec->kind & TFI_OP_POOLED) ? &req : NULL;
    if (x->iov == NULL)
        st = tern_tsend(ep->w, x->buf, x->len, peer, x->tag, x->space, &op, reqp);
    else if (x->iov_count == 1) /* the contiguous path: no iovec copy */
        st = tern_tsend(ep->w, x->iov[0].iov_base, x->iov[0].iov_len, peer, x->tag, x->space, &op,
                        reqp);
    else
        st = tern_tsendv(ep->w, x->iov, (int)x->iov_count, peer, x->tag, x->space, &op, reqp);
    if (st < 0) {
        tfi_record_drop(ep, rec);
        tfi_unlock(d);
        return tfi_errno(st);
    }
    if (req != NULL) /* still in the engine */
        tfi_ep_track(ep, rec);
    else if (x->inject_only && ep->tx_cntr != NULL) /* done, as far as the sender can tell */
        atomic_fetch_add(&ep->tx_cntr->value, 1);
    tfi_unlock(d);
    return 0;
}

int tfi_recv_source(struct tfi_ep *ep, fi_addr_t addr, int *src)
{
    *src = TERN_ANY_SOURCE;
    if (!(ep->caps & FI_DIRECTED_RECV) || addr == FI_ADDR_UNSPEC)
        return 0;
    *src = tfi_av_peer(ep->av, addr);
    return *src < 0 ? -FI_EINVAL : 0;
}

ssize_t tfi_recv(struct tfi_ep *ep, const struct tfi_xfer *x)
{
    if (!ep->enabled)
        return -FI_EOPBADSTATE;
    if (!(ep->caps & FI_RECV))
        return -FI_EOPNOTSUPP;
    size_t len;
    int ret = iov_len(x, &len);
    if (ret != 0)
        return ret;
    struct tfi_domain *d = ep->dom;
    tfi_lock(d);
    int src;
    if ((ret = tfi_recv_source(ep, x->addr, &src)) != 0) {
        tfi_unlock(d);
        return ret;
    }
    tern_op_t op = {.flags = 0, .data = 0, .context = NULL};
    struct tfi_op *rec = tfi_record(ep, x, true, &op);
    if (rec == NULL) {
        tfi_unlock(d);
        return -FI_ENOMEM;
    }
    bool pooled = (rec->kind & TFI_OP_POOLED) != 0;
    tern_request_t *req = NULL;
    tern_request_t **reqp = pooled ? &req : NULL;
    tern_status_t st;
    if (x->iov == NULL)
        st = tern_trecv(ep->w, (void *)x->buf, x->len, src, x->tag, x->ignore, x->space, &op, reqp);
    else if (x->iov_count == 1)
        st = tern_trecv(ep->w, x->iov[0].iov_base, x->iov[0].iov_len, src, x->tag, x->ignore,
                        x->space, &op, reqp);
    else
        st = tern_trecvv(ep->w, x->iov, (int)x->iov_count, src, x->tag, x->ignore, x->space, &op,
                         reqp);
    if (st < 0) {
        tfi_record_drop(ep, rec);
        tfi_unlock(d);
        return tfi_errno(st);
    }
    if (req != NULL) { /* pending: fi_cancel finds it by context */
        rec->req = req;
        tfi_ep_track(ep, rec);
    }
    tfi_unlock(d);
    return 0;
}

/* ---- the plain calls ---------------------------------------------------------- */

/* The record of a plain call in direction p, or the static op; NULL: no memory. */
static inline struct tfi_op *plain_record(struct tfi_ep *ep, const struct tfi_plan *p, bool recv,
                                          uint16_t space, void *context)
{
    bool tagged = space == TFI_SPACE_TAGGED;
    if (p->kind == 0)
        return &silent[(recv ? 2 : 0) + (tagged ? 0 : 1)];
    struct tfi_op *rec = tfi_op_get(ep->dom);
    if (TFI_UNLIKELY(rec == NULL))
        return NULL;
    rec->context = context;
    rec->ep = ep;
    rec->flags = (recv ? FI_RECV : FI_SEND) | (tagged ? FI_TAGGED : FI_MSG);
    rec->kind = p->kind;
    return rec;
}

ssize_t tfi_send_plain(struct tfi_ep *ep, const void *buf, size_t len, fi_addr_t dest, uint64_t tag,
                       uint16_t space, void *context, uint64_t data, uint32_t tflags,
                       bool inject_only)
{
    if (TFI_UNLIKELY(!ep->tx.plain)) {
        struct tfi_xfer x = {.buf = buf,
                             .len = len,
                             .addr = dest,
                             .tag = tag,
                             .space = space,
                             .context = context,
                             .data = data,
                             .flags = (inject_only ? 0 : ep->tx_op_flags) |
                                      ((tflags & TERN_OP_DATA) ? FI_REMOTE_CQ_DATA : 0),
                             .inject_only = inject_only};
        return tfi_send(ep, &x);
    }
    if (TFI_UNLIKELY((buf == NULL && len > 0) || len > ep->max_msg_size ||
                     (inject_only && len > ep->inject_size)))
        return -FI_EINVAL;
    struct tfi_domain *d = ep->dom;
    tfi_lock(d);
    int peer = tfi_av_peer(ep->av, dest);
    if (TFI_UNLIKELY(peer < 0)) {
        tfi_unlock(d);
        return -FI_EINVAL;
    }
    tern_op_t op = {.flags = tflags, .data = data, .context = NULL};
    struct tfi_op *rec = NULL;
    if (inject_only) {
        op.flags |= TERN_OP_INJECT;
    } else {
        op.flags |= ep->tx.tflags;
        if ((rec = plain_record(ep, &ep->tx, false, space, context)) == NULL) {
            tfi_unlock(d);
            return -FI_ENOMEM;
        }
        op.context = rec;
    }
    tern_request_t *req = NULL;
    tern_status_t st = tern_tsend(ep->w, buf, len, peer, tag, space, &op,
                                  rec != NULL && ep->tx.kind != 0 ? &req : NULL);
    if (TFI_UNLIKELY(st < 0)) {
        tfi_record_drop(ep, rec);
        tfi_unlock(d);
        return tfi_errno(st);
    }
    if (req != NULL) /* still in the engine */
        tfi_ep_track(ep, rec);
    else if (inject_only && ep->tx_cntr != NULL)
        atomic_fetch_add(&ep->tx_cntr->value, 1);
    tfi_unlock(d);
    return 0;
}

ssize_t tfi_recv_plain(struct tfi_ep *ep, void *buf, size_t len, fi_addr_t src, uint64_t tag,
                       uint64_t ignore, uint16_t space, void *context)
{
    if (TFI_UNLIKELY(!ep->rx.plain)) {
        struct tfi_xfer x = {.buf = buf,
                             .len = len,
                             .addr = src,
                             .tag = tag,
                             .ignore = ignore,
                             .space = space,
                             .context = context,
                             .flags = ep->rx_op_flags};
        return tfi_recv(ep, &x);
    }
    if (TFI_UNLIKELY(buf == NULL && len > 0))
        return -FI_EINVAL;
    struct tfi_domain *d = ep->dom;
    tfi_lock(d);
    int from;
    ssize_t ret = tfi_recv_source(ep, src, &from);
    if (TFI_UNLIKELY(ret != 0)) {
        tfi_unlock(d);
        return ret;
    }
    struct tfi_op *rec = plain_record(ep, &ep->rx, true, space, context);
    if (TFI_UNLIKELY(rec == NULL)) {
        tfi_unlock(d);
        return -FI_ENOMEM;
    }
    tern_op_t op = {.flags = ep->rx.tflags, .data = 0, .context = rec};
    tern_request_t *req = NULL;
    tern_status_t st =
        tern_trecv(ep->w, buf, len, from, tag, ignore, space, &op, ep->rx.kind != 0 ? &req : NULL);
    if (TFI_UNLIKELY(st < 0)) {
        tfi_record_drop(ep, rec);
        tfi_unlock(d);
        return tfi_errno(st);
    }
    if (req != NULL) { /* pending: fi_cancel finds it by context */
        rec->req = req;
        tfi_ep_track(ep, rec);
    }
    tfi_unlock(d);
    return 0;
}
