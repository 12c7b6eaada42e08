/*
 * fi_msg: untagged messages.  They are tern messages in a matching space
 * of their own (TFI_SPACE_MSG) with tag 0, received with want 0 and
 * ignore 0, so a msg receive never takes a tagged message nor the other
 * way round, and send order per source is kept as for tagged ones.
 */
#include <stdlib.h>

#include "ofi/tern_fi.h"

#define RECV_FLAGS (FI_COMPLETION | FI_MORE | FI_REMOTE_CQ_DATA)
#define SEND_FLAGS                                                                                 \
    (FI_COMPLETION | FI_REMOTE_CQ_DATA | FI_INJECT | FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |   \
     FI_DELIVERY_COMPLETE | FI_MATCH_COMPLETE | FI_MORE)

static ssize_t msg_ok(struct tfi_ep *ep)
{
    return (ep->caps & FI_MSG) ? 0 : -FI_EOPNOTSUPP;
}

static ssize_t msend(struct fid_ep *f, const void *buf, size_t len, void *desc, fi_addr_t dest,
                     void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = msg_ok(ep);
    return ret != 0 ? ret
                    : tfi_send_plain(ep, buf, len, dest, 0, TFI_SPACE_MSG, context, 0, 0, false);
}

static ssize_t msendv(struct fid_ep *f, const struct iovec *iov, void **desc, size_t count,
                      fi_addr_t dest, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = msg_ok(ep);
    if (ret != 0)
        return ret;
    if (iov == NULL && count > 0)
        return -FI_EINVAL;
    struct tfi_xfer x = {.iov = iov,
                         .iov_count = count,
                         .addr = dest,
                         .space = TFI_SPACE_MSG,
                         .context = context,
                         .flags = ep->tx_op_flags};
    return tfi_send(ep, &x);
}

static ssize_t msendmsg(struct fid_ep *f, const struct fi_msg *msg, uint64_t flags)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = msg_ok(ep);
    if (ret != 0)
        return ret;
    if (msg == NULL || (msg->msg_iov == NULL && msg->iov_count > 0))
        return -FI_EINVAL;
    if (flags & ~(uint64_t)SEND_FLAGS)
        return -FI_EBADFLAGS;
    struct tfi_xfer x = {.iov = msg->msg_iov,
                         .iov_count = msg->iov_count,
                         .addr = msg->addr,
                         .space = TFI_SPACE_MSG,
                         .context = msg->context,
                         .data = msg->data,
                         .flags = flags};
    return tfi_send(ep, &x);
}

static ssize_t msenddata(struct fid_ep *f, const void *buf, size_t len, void *desc, uint64_t data,
                         fi_addr_t dest, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = msg_ok(ep);
    return ret != 0 ? ret
                    : tfi_send_plain(ep, buf, len, dest, 0, TFI_SPACE_MSG, context, data,
                                     TERN_OP_DATA, false);
}

static ssize_t minject(struct fid_ep *f, const void *buf, size_t len, fi_addr_t dest)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = msg_ok(ep);
    return ret != 0 ? ret : tfi_send_plain(ep, buf, len, dest, 0, TFI_SPACE_MSG, NULL, 0, 0, true);
}

static ssize_t minjectdata(struct fid_ep *f, const void *buf, size_t len, uint64_t data,
                           fi_addr_t dest)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = msg_ok(ep);
    return ret != 0 ? ret
                    : tfi_send_plain(ep, buf, len, dest, 0, TFI_SPACE_MSG, NULL, data, TERN_OP_DATA,
                                     true);
}

static ssize_t mrecv(struct fid_ep *f, void *buf, size_t len, void *desc, fi_addr_t src,
                     void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = msg_ok(ep);
    return ret != 0 ? ret : tfi_recv_plain(ep, buf, len, src, 0, 0, TFI_SPACE_MSG, context);
}

static ssize_t mrecvv(struct fid_ep *f, const struct iovec *iov, void **desc, size_t count,
                      fi_addr_t src, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = msg_ok(ep);
    if (ret != 0)
        return ret;
    if (iov == NULL && count > 0)
        return -FI_EINVAL;
    struct tfi_xfer x = {.iov = iov,
                         .iov_count = count,
                         .addr = src,
                         .space = TFI_SPACE_MSG,
                         .context = context,
                         .flags = ep->rx_op_flags};
    return tfi_recv(ep, &x);
}

static ssize_t mrecvmsg(struct fid_ep *f, const struct fi_msg *msg, uint64_t flags)
{
    struct tfi_ep *ep = (struct tfi_ep *)f;
    ssize_t ret = msg_ok(ep);
    if (ret != 0)
        return ret;
    if (msg == NULL || (msg->msg_iov == NULL && msg->iov_count > 0))
        return -FI_EINVAL;
    if (flags & ~(uint64_t)RECV_FLAGS)
        return -FI_EBADFLAGS; /* FI_MULTI_RECV, FI_PEEK / FI_CLAIM (tagged only) ... */
    struct tfi_xfer x = {.iov = msg->msg_iov,
                         .iov_count = msg->iov_count,
                         .addr = msg->addr,
                         .space = TFI_SPACE_MSG,
                         .context = msg->context,
                         .flags = flags};
    return tfi_recv(ep, &x);
}

struct fi_ops_msg tfi_msg_ops = {
    .size = sizeof(struct fi_ops_msg),
    .recv = mrecv,
    .recvv = mrecvv,
    .recvmsg = mrecvmsg,
    .send = msend,
    .sendv = msendv,
    .sendmsg = msendmsg,
    .inject = minject,
    .senddata = msenddata,
    .injectdata = minjectdata,
};
