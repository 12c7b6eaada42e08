/*
 * RDM endpoints.  An endpoint is a tern worker: worker 0 for the first,
 * then tern_worker_create while TERN_NUM_WORKERS (FI_TERN_NUM_WORKERS)
 * has one free, else fi_endpoint fails with -FI_EBUSY and says so.  Worker
 * i of a process talks to worker i of its peers, so endpoints pair up in
 * the order processes open them.
 *
 * The endpoint keeps the operations the engine still holds in a list, so
 * that fi_close can cancel and orphan them (their completions are then
 * dropped) and fi_cancel can find a pending receive by its context (the
 * engine request handle is kept with the op).  What its plain calls need
 * (the completion record, the tern flags) is worked out once, when it is
 * enabled (tfi_ep_plan).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ofi/tern_fi.h"

/* ---- outstanding operations ------------------------------------------------------ */

static bool want_completion(bool selective, uint64_t op_flags)
{
    return !selective || (op_flags & FI_COMPLETION);
}

static void plan(struct tfi_plan *p, bool ready, bool selective, uint64_t op_flags, bool counted,
                 unsigned dir)
{
    bool want = want_completion(selective, op_flags);
    /* an endpoint-wide FI_INJECT or a completion level above the
     * default takes the general path (tfi_send) */
    p->plain =
        ready &&
        !(op_flags & (FI_INJECT | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | FI_MATCH_COMPLETE));
    if (!want && !counted) {
        p->tflags = TERN_OP_CQ | TERN_OP_CQ_ERRORS;
        p->kind = 0;
    } else {
        p->tflags = TERN_OP_CQ;
        p->kind = TFI_OP_POOLED | dir | (want ? TFI_OP_COMP : 0);
    }
}

void tfi_ep_plan(struct tfi_ep *ep)
{
    plan(&ep->tx, ep->enabled && (ep->caps & FI_SEND), ep->tx_selective, ep->tx_op_flags,
         ep->tx_cntr != NULL, 0);
    plan(&ep->rx, ep->enabled && (ep->caps & FI_RECV), ep->rx_selective, ep->rx_op_flags,
         ep->rx_cntr != NULL, TFI_OP_RECV);
}

/* fi_cancel walks the outstanding list: cancelling is rare, and a list
 * walk there keeps every post and completion free of a table by context. */
static ssize_t ep_cancel(fid_t fid, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)fid;
    if (fid == NULL || fid->fclass != FI_CLASS_EP || context == NULL)
        return -FI_EINVAL;
    ssize_t ret = -FI_ENOENT;
    tfi_lock(ep->dom);
    for (struct tfi_op *op = ep->outstanding.next; op != &ep->outstanding; op = op->next) {
        if (op->context == context && op->req != NULL && (op->kind & TFI_OP_RECV) &&
            !(op->kind & (TFI_OP_KEYSVC | TFI_OP_KEYREP))) {
            /* the CANCELED completion (or the real one, had it matched)
             * comes through the CQ as usual */
            tern_status_t st = tern_cancel(ep->w, op->req);
            ret = st == TERN_OK ? 0 : tfi_errno(st);
            break;
        }
    }
    tfi_unlock(ep->dom);
    return ret;
}

/* ---- options ------------------------------------------------------------------ */

static int ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
    if (level != FI_OPT_ENDPOINT)
        return -FI_ENOPROTOOPT;
    if (optval == NULL || optlen == NULL)
        return -FI_EINVAL;
    switch (optname) {
    case FI_OPT_TX_SIZE:
    case FI_OPT_RX_SIZE:
        if (*optlen < sizeof(size_t)) {
            *optlen = sizeof(size_t);
            return -FI_ETOOSMALL;
        }
        *(size_t *)optval = TFI_QUEUE_SIZE;
        *optlen = sizeof(size_t);
        return 0;
    default: /* FI_OPT_MIN_MULTI_RECV (no FI_MULTI_RECV), CM data, buffered
              * receives, socket buffer sizes, HMEM: none of tern's */
        return -FI_ENOPROTOOPT;
    }
}

static int ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
    if (level != FI_OPT_ENDPOINT)
        return -FI_ENOPROTOOPT;
    if (optval == NULL)
        return -FI_EINVAL;
    return -FI_ENOPROTOOPT;
}

static int ep_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
                        struct fid_ep **tx_ep, void *context)
{
    return -FI_ENOSYS;
}

static int ep_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
                        struct fid_ep **rx_ep, void *context)
{
    return -FI_ENOSYS;
}

static ssize_t ep_size_left(struct fid_ep *ep)
{
    return TFI_QUEUE_SIZE; /* tern's queues grow */
}

static struct fi_ops_ep ep_ops = {
    .size = sizeof(struct fi_ops_ep),
    .cancel = ep_cancel,
    .getopt = ep_getopt,
    .setopt = ep_setopt,
    .tx_ctx = ep_no_tx_ctx,
    .rx_ctx = ep_no_rx_ctx,
    .rx_size_left = ep_size_left,
    .tx_size_left = ep_size_left,
};

/* ---- names (fi_cm) ---------------------------------------------------------------- */

static int cm_no_setname(fid_t fid, void *addr, size_t addrlen)
{
    return -FI_ENOSYS; /* the name is the worker's address */
}

static int cm_getname(fid_t fid, void *addr, size_t *addrlen)
{
    if (fid == NULL || fid->fclass != FI_CLASS_EP)
        return -FI_EINVAL;
    struct tfi_ep *ep = (struct tfi_ep *)fid;
    tfi_lock(ep->dom);
    int ret = tfi_name(ep->dom->ctx, ep->w, addr, addrlen);
    tfi_unlock(ep->dom);
    return ret;
}

static int cm_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
    return -FI_ENOSYS; /* RDM: no connection, no peer */
}

static int cm_no_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen)
{
    return -FI_ENOSYS;
}

static int cm_no_listen(struct fid_pep *pep)
{
    return -FI_ENOSYS;
}

static int cm_no_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
    return -FI_ENOSYS;
}

static int cm_no_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen)
{
    return -FI_ENOSYS;
}

static int cm_no_shutdown(struct fid_ep *ep, uint64_t flags)
{
    return -FI_ENOSYS;
}

static int cm_no_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
                      void *context)
{
    return -FI_ENOSYS;
}

struct fi_ops_cm tfi_cm_ops = {
    .size = sizeof(struct fi_ops_cm),
    .setname = cm_no_setname,
    .getname = cm_getname,
    .getpeer = cm_no_getpeer,
    .connect = cm_no_connect,
    .listen = cm_no_listen,
    .accept = cm_no_accept,
    .reject = cm_no_reject,
    .shutdown = cm_no_shutdown,
    .join = cm_no_join,
};

/* ---- bind, enable, control, close ---------------------------------------------- */

static int bind_cq(struct tfi_ep *ep, struct tfi_cq *cq, uint64_t flags)
{
    if (flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
        return -FI_EBADFLAGS;
    if (!(flags & (FI_TRANSMIT | FI_RECV)))
        return -FI_EBADFLAGS;
    if (cq->dom != ep->dom)
        return -FI_EDOMAIN;
    if (((flags & FI_TRANSMIT) && ep->tx_cq != NULL) || ((flags & FI_RECV) && ep->rx_cq != NULL))
        return -FI_EINVAL; /* one CQ per direction */
    bool sel = (flags & FI_SELECTIVE_COMPLETION) != 0;
    if (flags & FI_TRANSMIT) {
        if (tfi_cq_attach(cq, ep) != 0)
            return -FI_ENOMEM;
        ep->tx_cq = cq;
        ep->tx_selective = sel;
    }
    if (flags & FI_RECV) {
        if (tfi_cq_attach(cq, ep) != 0)
            return -FI_ENOMEM;
        ep->rx_cq = cq;
        ep->rx_selective = sel;
    }
    return 0;
}

static int bind_cntr(struct tfi_ep *ep, struct tfi_cntr *c, uint64_t flags)
{
    uint64_t known = FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    if (flags == 0 || (flags & ~known))
        return -FI_EBADFLAGS;
    if (flags & (FI_REMOTE_READ | FI_REMOTE_WRITE))
        return -FI_EINVAL; /* needs FI_RMA_EVENT */
    if (c->dom != ep->dom)
        return -FI_EDOMAIN;
    if (((flags & FI_SEND) && ep->tx_cntr != NULL) || ((flags & FI_RECV) && ep->rx_cntr != NULL))
        return -FI_EINVAL;
    if (flags & FI_SEND) {
        if (tfi_cntr_attach(c, ep) != 0)
            return -FI_ENOMEM;
        ep->tx_cntr = c;
    }
    if (flags & FI_RECV) {
        if (tfi_cntr_attach(c, ep) != 0)
            return -FI_ENOMEM;
        ep->rx_cntr = c;
    }
    return 0; /* FI_READ / FI_WRITE: nothing ever counts there (no RMA) */
}

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
    struct tfi_ep *ep = (struct tfi_ep *)fid;
    if (bfid == NULL)
        return -FI_EINVAL;
    if (ep->enabled)
        return -FI_EOPBADSTATE; /* fi_endpoint(3): bind before fi_enable */
    int ret = 0;
    tfi_lock(ep->dom);
    switch (bfid->fclass) {
    case FI_CLASS_AV: {
        struct tfi_av *av = (struct tfi_av *)bfid;
        if (flags != 0)
            ret = -FI_EBADFLAGS;
        else if (av->dom != ep->dom)
            ret = -FI_EDOMAIN;
        else if (ep->av != NULL)
            ret = -FI_EINVAL; /* one AV */
        else {
            ep->av = av;
            atomic_fetch_add(&av->refs, 1);
        }
        break;
    }
    case FI_CLASS_CQ:
        ret = bind_cq(ep, (struct tfi_cq *)bfid, flags);
        break;
    case FI_CLASS_CNTR:
        ret = bind_cntr(ep, (struct tfi_cntr *)bfid, flags);
        break;
    case FI_CLASS_EQ:
        if (ep->eq != NULL) {
            ret = -FI_EINVAL;
        } else { /* RDM has no connection events: nothing will come */
            ep->eq = (struct tfi_eq *)bfid;
            atomic_fetch_add(&ep->eq->refs, 1);
        }
        break;
    case FI_CLASS_STX_CTX:
    case FI_CLASS_SRX_CTX:
        ret = -FI_ENOSYS;
        break;
    default:
        ret = -FI_EINVAL;
        break;
    }
    tfi_unlock(ep->dom);
    return ret;
}

static int ep_enable(struct tfi_ep *ep)
{
    if (ep->av == NULL) {
        TFI_INFO(FI_LOG_EP_CTRL, "fi_enable: no AV bound\n");
        return -FI_ENOAV;
    }
    if (((ep->caps & FI_SEND) && ep->tx_cq == NULL) ||
        ((ep->caps & FI_RECV) && ep->rx_cq == NULL)) {
        TFI_INFO(FI_LOG_EP_CTRL, "fi_enable: a %s CQ is needed (failures report there)\n",
                 ep->tx_cq == NULL ? "transmit" : "receive");
        return -FI_ENOCQ;
    }
    if ((ep->caps & (FI_READ | FI_WRITE)) && ep->tx_cq == NULL && ep->tx_cntr == NULL) {
        TFI_INFO(FI_LOG_EP_CTRL, "fi_enable: one-sided operations need a transmit CQ or "
                                 "counter\n");
        return -FI_ENOCQ;
    }
    if ((ep->caps & (FI_RMA | FI_ATOMIC)) && (ep->caps & (FI_REMOTE_READ | FI_REMOTE_WRITE)) &&
        ep->keysvc == NULL) {
        /* peers ask this endpoint for the keys of the domain's registrations */
        int ret = tfi_keysvc_start(ep);
        if (ret != 0)
            return ret;
    }
    ep->enabled = true;
    tfi_ep_plan(ep);
    return 0;
}

static int ep_control(struct fid *fid, int command, void *arg)
{
    struct tfi_ep *ep = (struct tfi_ep *)fid;
    switch (command) {
    case FI_ENABLE:
        return ep_enable(ep);
    case FI_GETOPSFLAG:
    case FI_SETOPSFLAG: {
        if (arg == NULL)
            return -FI_EINVAL;
        uint64_t *f = arg;
        uint64_t dir = *f & (FI_TRANSMIT | FI_RECV);
        if (dir != FI_TRANSMIT && dir != FI_RECV)
            return -FI_EINVAL; /* exactly one of the two */
        uint64_t *opf = dir == FI_TRANSMIT ? &ep->tx_op_flags : &ep->rx_op_flags;
        if (command == FI_GETOPSFLAG) {
            *f = *opf;
            return 0;
        }
        uint64_t want = *f & ~dir;
        uint64_t allowed = dir == FI_TRANSMIT ? TFI_TX_OP_FLAGS : TFI_RX_OP_FLAGS;
        if (want & ~allowed)
            return -FI_EBADFLAGS;
        *opf = want;
        tfi_ep_plan(ep);
        return 0;
    }
    default: /* FI_ALIAS, FI_GETWAIT ... */
        return -FI_ENOSYS;
    }
}

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static int ep_close(struct fid *fid)
{
    struct tfi_ep *ep = (struct tfi_ep *)fid;
    struct tfi_domain *d = ep->dom;
    tfi_lock(d);
    /* Pending receives are cancelled, and what is still in the engine gets
     * a bounded time to complete (into the CQs, which are still bound);
     * the worker's CQ is emptied (operations that completed within their
     * call are there only), and what is left after that is orphaned: its
     * completion will be dropped by the worker's next owner. */
    ep->closing = true; /* a key request answered now posts no next receive */
    for (struct tfi_op *op = ep->outstanding.next; op != &ep->outstanding; op = op->next)
        if (op->req != NULL && (op->kind & TFI_OP_RECV))
            tern_cancel(ep->w, op->req);
    uint64_t end = now_ms() + 1000;
    while (ep->outstanding.next != &ep->outstanding && now_ms() < end)
        tfi_ep_progress(ep);
    while (tern_cq_count(ep->w) > 0)
        tfi_ep_progress(ep);
    while (ep->outstanding.next != &ep->outstanding) {
        struct tfi_op *op = ep->outstanding.next;
        tfi_ep_untrack(op);
        op->ep = NULL;
        if (op->kind & TFI_OP_KEYREP) {
            /* a key answer still awaited: the key is refused, and its
             * buffer is left to the engine, which may still write it */
            struct tfi_rkey *rk = op->aux;
            rk->state = -1;
            rk->answer = NULL;
            op->aux = NULL;
        }
    }
    ep->keysvc = NULL;
    if (ep->tx_cq != NULL)
        tfi_cq_detach(ep->tx_cq, ep);
    if (ep->rx_cq != NULL)
        tfi_cq_detach(ep->rx_cq, ep);
    if (ep->tx_cntr != NULL)
        tfi_cntr_detach(ep->tx_cntr, ep);
    if (ep->rx_cntr != NULL)
        tfi_cntr_detach(ep->rx_cntr, ep);
    if (ep->av != NULL)
        atomic_fetch_sub(&ep->av->refs, 1);
    if (ep->eq != NULL)
        atomic_fetch_sub(&ep->eq->refs, 1);
    tfi_worker_give(ep->w);
    tfi_unlock(d);
    atomic_fetch_sub(&d->refs, 1);
    free(ep);
    return 0;
}

static int ep_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context)
{
    return -FI_ENOSYS;
}

static int ep_tostr(const struct fid *fid, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return -FI_EINVAL;
    strncpy(buf, "tern rdm endpoint", len - 1);
    buf[len - 1] = '\0';
    return 0;
}

static int ep_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops, void *context)
{
    return -FI_ENOSYS;
}

static struct fi_ops ep_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = ep_close,
    .bind = ep_bind,
    .control = ep_control,
    .ops_open = ep_ops_open,
    .tostr = ep_tostr,
    .ops_set = ep_ops_set,
};

int tfi_endpoint(struct fid_domain *domain, struct fi_info *info, struct fid_ep **out,
                 void *context)
{
    if (domain == NULL || info == NULL || out == NULL)
        return -FI_EINVAL;
    struct tfi_domain *d = (struct tfi_domain *)domain;
    if (tfi_check_info(d->api_version, info) != 0) {
        TFI_WARN(FI_LOG_EP_CTRL, "fi_endpoint: the fi_info is not one tern can honour (see the "
                                 "FI_LOG_LEVEL=info line before)\n");
        return -FI_EINVAL;
    }
    struct tfi_ep *ep = calloc(1, sizeof(*ep));
    if (ep == NULL)
        return -FI_ENOMEM;
    int ret = tfi_worker_take(&ep->w);
    if (ret != 0) {
        free(ep);
        return ret;
    }
    ep->dom = d;
    ep->caps = info->caps != 0 ? info->caps : TFI_CAPS;
    if ((ep->caps & (FI_TAGGED | FI_MSG)) && !(ep->caps & (FI_SEND | FI_RECV)))
        ep->caps |= FI_SEND | FI_RECV; /* no modifier: both */
    if ((ep->caps & (FI_RMA | FI_ATOMIC)) && !(ep->caps & TFI_CAPS_RMA_MODIFIERS))
        ep->caps |= TFI_CAPS_RMA_MODIFIERS; /* the same for one-sided */
    ep->tx_op_flags = info->tx_attr != NULL ? info->tx_attr->op_flags : 0;
    ep->rx_op_flags = info->rx_attr != NULL ? info->rx_attr->op_flags : 0;
    ep->inject_size = info->tx_attr != NULL && info->tx_attr->inject_size != 0
                          ? info->tx_attr->inject_size
                          : d->inject_size;
    ep->max_msg_size = info->ep_attr != NULL && info->ep_attr->max_msg_size != 0
                           ? info->ep_attr->max_msg_size
                           : SSIZE_MAX;
    ep->outstanding.next = ep->outstanding.prev = &ep->outstanding;
    ep->ep.fid.fclass = FI_CLASS_EP;
    ep->ep.fid.context = context;
    ep->ep.fid.ops = &ep_fi_ops;
    ep->ep.ops = &ep_ops;
    ep->ep.cm = &tfi_cm_ops;
    ep->ep.msg = &tfi_msg_ops;
    ep->ep.rma = &tfi_rma_ops;
    ep->ep.tagged = &tfi_tagged_ops;
    ep->ep.atomic = &tfi_atomic_ops;
    ep->ep.collective = &tfi_no_collective_ops;
    atomic_fetch_add(&d->refs, 1);
    *out = &ep->ep;
    return 0;
}
