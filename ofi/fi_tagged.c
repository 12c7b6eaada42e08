/*
 * fi_tagged: 64-bit tags with ignore masks, in the tagged matching space
 * (TFI_SPACE_TAGGED); the engine matches (tag ^ want) & ~ignore == 0,
 * which is fi_tagged(3)'s rule.
 *
 * fi_trecvmsg also takes
 *  - FI_PEEK: tern_tprobe, answered at once through the receive CQ: a
 *    completion with the message's length, tag, data and source, or an
 *    error entry with FI_ENOMSG when none matches (what Open MPI's iprobe
 *    waits for);
 *  - FI_PEEK | FI_CLAIM: the same, and the message is taken for a later
 *    FI_CLAIM receive, which names it through the fi_context given to both
 *    calls (fi_tagged(3) requires one there, whatever the mode bits): the
 *    tern message handle is kept in it;
 *  - FI_PEEK | FI_DISCARD: the message found is dropped;
 *  - FI_CLAIM [| FI_DISCARD]: receive [or drop] the claimed message
 *    (tern_tmrecv).
 */
#include <stdlib.h>

#include "ofi/tern_fi.h"

#define RECV_FLAGS (FI_COMPLETION | FI_PEEK | FI_CLAIM | FI_DISCARD | FI_MORE | FI_REMOTE_CQ_DATA)
#define SEND_FLAGS                                                                                 \
    (FI_COMPLETION | FI_REMOTE_CQ_DATA | FI_INJECT | FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |   \
     FI_DELIVERY_COMPLETE | FI_MATCH_COMPLETE | FI_MORE)

/* marks an fi_context that holds a claimed message (internal[1]) */
static const char claim_mark;

static ssize_t tagged_ok(struct tfi_ep *ep)
{
    return (ep->caps & FI_TAGGED) ? 0 : -FI_EOPNOTSUPP;
}

/* ---- sends ---------------------------------------------------------------------- */

static ssize_t tsend(struct fid_ep *f, const void *buf, size_t len, void *desc, fi_addr_t dest,
                     uint64_t tag, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = tagged_ok(ep);
    return ret != 0
               ? ret
               : tfi_send_plain(ep, buf, len, dest, tag, TFI_SPACE_TAGGED, context, 0, 0, false);
}

static ssize_t tsendv(struct fid_ep *f, const struct iovec *iov, void **desc, size_t count,
                      fi_addr_t dest, uint64_t tag, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = tagged_ok(ep);
    if (ret != 0)
        return ret;
    if (iov == NULL && count > 0)
        return -FI_EINVAL;
    struct tfi_xfer x = {.iov = iov,
                         .iov_count = count,
                         .addr = dest,
                         .tag = tag,
                         .space = TFI_SPACE_TAGGED,
                         .context = context,
                         .flags = ep->tx_op_flags};
    return tfi_send(ep, &x);
}

static ssize_t tsendmsg(struct fid_ep *f, const struct fi_msg_tagged *msg, uint64_t flags)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = tagged_ok(ep);
    if (ret != 0)
        return ret;
    if (msg == NULL || (msg->msg_iov == NULL && msg->iov_count > 0))
        return -FI_EINVAL;
    if (flags & ~(uint64_t)SEND_FLAGS)
        return -FI_EBADFLAGS;
    struct tfi_xfer x = {.iov = msg->msg_iov,
                         .iov_count = msg->iov_count,
                         .addr = msg->addr,
                         .tag = msg->tag,
                         .space = TFI_SPACE_TAGGED,
                         .context = msg->context,
                         .data = msg->data,
                         .flags = flags};
    return tfi_send(ep, &x);
}

static ssize_t tsenddata(struct fid_ep *f, const void *buf, size_t len, void *desc, uint64_t data,
                         fi_addr_t dest, uint64_t tag, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = tagged_ok(ep);
    return ret != 0 ? ret
                    : tfi_send_plain(ep, buf, len, dest, tag, TFI_SPACE_TAGGED, context, data,
                                     TERN_OP_DATA, false);
}

static ssize_t tinject(struct fid_ep *f, const void *buf, size_t len, fi_addr_t dest, uint64_t tag)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = tagged_ok(ep);
    return ret != 0 ? ret
                    : tfi_send_plain(ep, buf, len, dest, tag, TFI_SPACE_TAGGED, NULL, 0, 0, true);
}

static ssize_t tinjectdata(struct fid_ep *f, const void *buf, size_t len, uint64_t data,
                           fi_addr_t dest, uint64_t tag)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = tagged_ok(ep);
    return ret != 0 ? ret
                    : tfi_send_plain(ep, buf, len, dest, tag, TFI_SPACE_TAGGED, NULL, data,
                                     TERN_OP_DATA, true);
}

/* ---- receives --------------------------------------------------------------------- */

static ssize_t trecv(struct fid_ep *f, void *buf, size_t len, void *desc, fi_addr_t src,
                     uint64_t tag, uint64_t ignore, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = tagged_ok(ep);
    return ret != 0 ? ret
                    : tfi_recv_plain(ep, buf, len, src, tag, ignore, TFI_SPACE_TAGGED, context);
}

static ssize_t trecvv(struct fid_ep *f, const struct iovec *iov, void **desc, size_t count,
                      fi_addr_t src, uint64_t tag, uint64_t ignore, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = tagged_ok(ep);
    if (ret != 0)
        return ret;
    if (iov == NULL && count > 0)
        return -FI_EINVAL;
    struct tfi_xfer x = {.iov = iov,
                         .iov_count = count,
                         .addr = src,
                         .tag = tag,
                         .ignore = ignore,
                         .space = TFI_SPACE_TAGGED,
                         .context = context,
                         .flags = ep->rx_op_flags};
    return tfi_recv(ep, &x);
}

/* FI_PEEK [| FI_CLAIM | FI_DISCARD]: the answer goes to the receive CQ now */
static ssize_t peek(struct tfi_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
    if ((flags & FI_CLAIM) && (flags & FI_DISCARD))
        return -FI_EINVAL; /* claim it or drop it, not both */
    if ((flags & FI_CLAIM) && msg->context == NULL)
        return -FI_EINVAL; /* the claimed message is kept in the fi_context */
    unsigned pf = (flags & FI_CLAIM)     ? TERN_PROBE_CLAIM
                  : (flags & FI_DISCARD) ? TERN_PROBE_DISCARD
                                         : 0;
    struct tfi_domain *d = ep->dom;
    tfi_lock(d);
    int src;
    ssize_t ret = tfi_recv_source(ep, msg->addr, &src);
    int found = 0;
    tern_message_t *m = NULL;
    tern_cq_entry_t e;
    if (ret == 0) {
        tern_status_t st = tern_tprobe(ep->w, src, msg->tag, msg->ignore, TFI_SPACE_TAGGED, pf,
                                       &found, (flags & FI_CLAIM) ? &m : NULL, &e);
        ret = st == TERN_OK ? 0 : tfi_errno(st);
    }
    if (ret == 0) {
        struct tfi_cqe c = {
            .context = msg->context, .flags = FI_RECV | FI_TAGGED, .src = FI_ADDR_NOTAVAIL};
        if (found) {
            c.len = e.msg_len;
            c.tag = e.tag;
            if (e.flags & TERN_CQ_DATA) {
                c.flags |= FI_REMOTE_CQ_DATA;
                c.data = e.data;
            }
            if ((ep->caps & FI_SOURCE) && ep->av != NULL)
                c.src = tfi_av_addr(ep->av, e.peer);
            if (flags & FI_CLAIM) {
                struct fi_context *fc = msg->context;
                fc->internal[0] = m;
                fc->internal[1] = (void *)&claim_mark;
                fc->internal[2] = ep;
            }
        } else {
            c.err = FI_ENOMSG; /* fi_tagged(3): a peek that finds nothing */
            c.tag = msg->tag;
        }
        bool want = !ep->rx_selective || (flags & FI_COMPLETION) || c.err != 0;
        if (want)
            ret = tfi_cq_push(ep->rx_cq, &c);
    }
    tfi_unlock(d);
    return ret;
}

/* FI_CLAIM [| FI_DISCARD] without FI_PEEK: the message an earlier peek claimed */
static ssize_t claimed(struct tfi_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
    struct fi_context *fc = msg->context;
    if (fc == NULL || fc->internal[1] != (void *)&claim_mark || fc->internal[2] != ep)
        return -FI_EINVAL; /* no FI_PEEK | FI_CLAIM of this endpoint filled this context */
    struct tfi_domain *d = ep->dom;
    tfi_lock(d);
    struct tfi_xfer x = {.context = msg->context, .flags = flags, .space = TFI_SPACE_TAGGED};
    tern_op_t op = {.flags = (flags & FI_DISCARD) ? TERN_OP_DISCARD : 0};
    struct tfi_op *rec = tfi_record(ep, &x, true, &op);
    if (rec == NULL) {
        tfi_unlock(d);
        return -FI_ENOMEM;
    }
    tern_message_t *m = fc->internal[0];
    tern_request_t *req = NULL;
    tern_request_t **reqp = (rec->kind & TFI_OP_POOLED) ? &req : NULL;
    tern_status_t st;
    if (flags & FI_DISCARD)
        st = tern_tmrecv(ep->w, NULL, 0, m, &op, reqp);
    else
        st = tern_tmrecvv(ep->w, msg->msg_iov, (int)msg->iov_count, m, &op, reqp);
    if (st < 0) {
        tfi_record_drop(ep, rec);
        tfi_unlock(d);
        return tfi_errno(st);
    }
    fc->internal[0] = fc->internal[1] = fc->internal[2] = NULL; /* received exactly once */
    if (req != NULL)
        tfi_ep_track(ep, rec); /* matched already: nothing to cancel (req stays NULL) */
    tfi_unlock(d);
    return 0;
}

static ssize_t trecvmsg(struct fid_ep *f, const struct fi_msg_tagged *msg, uint64_t flags)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = tagged_ok(ep);
    if (ret != 0)
        return ret;
    if (msg == NULL || (msg->msg_iov == NULL && msg->iov_count > 0))
        return -FI_EINVAL;
    if (flags & ~(uint64_t)RECV_FLAGS)
        return -FI_EBADFLAGS; /* FI_MULTI_RECV among them */
    if (!ep->enabled)
        return -FI_EOPBADSTATE;
    if (!(ep->caps & FI_RECV))
        return -FI_EOPNOTSUPP;
    if (msg->iov_count > TERN_IOV_MAX)
        return -FI_EINVAL;
    if (flags & FI_PEEK)
        return peek(ep, msg, flags);
    if (flags & FI_CLAIM)
        return claimed(ep, msg, flags);
    if (flags & FI_DISCARD)
        return -FI_EINVAL; /* with FI_PEEK or FI_CLAIM only */
    struct tfi_xfer x = {.iov = msg->msg_iov,
                         .iov_count = msg->iov_count,
                         .addr = msg->addr,
                         .tag = msg->tag,
                         .ignore = msg->ignore,
                         .space = TFI_SPACE_TAGGED,
                         .context = msg->context,
                         .flags = flags};
    return tfi_recv(ep, &x);
}

struct fi_ops_tagged tfi_tagged_ops = {
    .size = sizeof(struct fi_ops_tagged),
    .recv = trecv,
    .recvv = trecvv,
    .recvmsg = trecvmsg,
    .send = tsend,
    .sendv = tsendv,
    .sendmsg = tsendmsg,
    .inject = tinject,
    .senddata = tsenddata,
    .injectdata = tinjectdata,
};
