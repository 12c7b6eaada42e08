/*
 * Completion queues, and the routing of engine completions to them.
 *
 * Every operation is posted with TERN_OP_CQ and a struct tfi_op as its
 * context, so its completion comes back through its worker's CQ
 * (tern_cq_read) in the order operations complete, O(1) each.  Reading a
 * provider CQ drains the workers of the endpoints bound to it
 * (tfi_ep_progress: manual progress) and routes each engine completion to
 * the CQ and counter its endpoint bound for that direction (a send's and
 * a receive's may differ), or to none when the operation asked for no
 * successful completion (FI_SELECTIVE_COMPLETION).  A provider CQ is a
 * ring that grows, so nothing is lost; successes and errors keep their
 * order in it: fi_cq_read stops at an error entry and answers -FI_EAVAIL
 * when one is at the head, fi_cq_readerr takes it.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ofi/tern_fi.h"

int tfi_cq_err(tern_status_t st)
{
    int e = -tfi_errno(st); /* TRUNCATED -> FI_ETRUNC, CANCELED -> FI_ECANCELED,
                             * PEER_FAILED -> FI_EIO ... */
    return e > 0 ? e : FI_EOTHER;
}

int tfi_cq_push(struct tfi_cq *cq, const struct tfi_cqe *e)
{
    if (cq->count == cq->cap) { /* grow, keeping the order */
        size_t cap = cq->cap * 2;
        struct tfi_cqe *r = malloc(cap * sizeof(*r));
        if (r == NULL) {
            TFI_WARN(FI_LOG_CQ, "a completion is lost: no memory to grow the CQ past %zu\n",
                     cq->cap);
            return -FI_ENOMEM;
        }
        for (size_t i = 0; i < cq->count; i++)
            r[i] = cq->ring[(cq->head + i) & (cq->cap - 1)];
        free(cq->ring);
        cq->ring = r;
        cq->cap = cap;
        cq->head = 0;
    }
    cq->ring[(cq->head + cq->count) & (cq->cap - 1)] = *e;
    cq->count++;
    return 0;
}

/* ---- routing --------------------------------------------------------------- */

/* The provider's entry of the engine's completion e of op (its error
 * fields are the caller's). */
static inline void fill(const struct tfi_ep *ep, const struct tfi_op *op, const tern_cq_entry_t *e,
                        struct tfi_cqe *c)
{
    *c = (struct tfi_cqe){.context = op->context, .flags = op->flags, .src = FI_ADDR_NOTAVAIL};
    if (op->kind & TFI_OP_RECV) {
        c->len = e->length;
        if (op->flags & FI_TAGGED)
            c->tag = e->tag;
        if (e->flags & TERN_CQ_DATA) {
            c->flags |= FI_REMOTE_CQ_DATA;
            c->data = e->data;
        }
        if ((ep->caps & FI_SOURCE) && ep->av != NULL)
            c->src = tfi_av_addr(ep->av, e->peer);
    }
}

static void deliver(struct tfi_ep *ep, const struct tfi_op *op, const tern_cq_entry_t *e)
{
    bool recv = (op->kind & TFI_OP_RECV) != 0;
    struct tfi_cq *cq = recv ? ep->rx_cq : ep->tx_cq;
    struct tfi_cntr *cn = recv ? ep->rx_cntr : ep->tx_cntr;
    if (e->status == TERN_OK) {
        if (cn != NULL)
            atomic_fetch_add(&cn->value, 1);
        if (!(op->kind & TFI_OP_COMP) || cq == NULL)
            return;
    } else {
        if (cn != NULL)
            atomic_fetch_add(&cn->err, 1);
        if (cq == NULL) { /* fi_enable refuses this; say so all the same */
            TFI_WARN(FI_LOG_CQ, "a failed %s (%s) has no CQ to report to\n",
                     recv ? "receive" : "send", tern_strerror(e->status));
            return;
        }
    }
    struct tfi_cqe c;
    fill(ep, op, e, &c);
    if (e->status != TERN_OK) {
        c.err = tfi_cq_err(e->status);
        c.prov_errno = (int)e->status;
        if (e->status == TERN_ERR_TRUNCATED && e->msg_len > e->length)
            c.olen = e->msg_len - e->length;
    }
    tfi_cq_push(cq, &c);
}

/* A peer's fi_writedata landed in this endpoint's memory: its remote CQ
 * data to the receive CQ (no receive is consumed: no FI_RX_CQ_DATA mode). */
static void remote_write(struct tfi_ep *ep, const tern_cq_entry_t *e)
{
    if (ep->rx_cq == NULL) {
        TFI_WARN(FI_LOG_CQ, "remote CQ data %#llx of a peer's write: no receive CQ to report "
                            "it\n", (unsigned long long)e->data);
        return;
    }
    struct tfi_cqe c = {.flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
                        .len = e->length,
                        .data = e->data,
                        .src = (ep->caps & FI_SOURCE) && ep->av != NULL
                                   ? tfi_av_addr(ep->av, e->peer)
                                   : FI_ADDR_NOTAVAIL};
    tfi_cq_push(ep->rx_cq, &c);
}

void tfi_ep_complete(struct tfi_ep *ep, const tern_cq_entry_t *e)
{
    struct tfi_op *op = e->context;
    if (op == NULL && (e->flags & TERN_CQ_REMOTE_WRITE)) {
        remote_write(ep, e);
        return;
    }
    if (op->kind & TFI_OP_QUIET) /* the call's other operation reports it */
        return;
    if (!(op->kind & TFI_OP_POOLED)) { /* a static op: no record, errors only */
        deliver(ep, op, e);
        return;
    }
    struct tfi_ep *owner = op->ep; /* NULL: its endpoint was closed */
    if (owner != NULL && (op->kind & TFI_OP_KEYSVC)) { /* answers, posts the next */
        tfi_keysvc_answer(owner, op, e);
        return;
    }
    if (owner != NULL && (op->kind & TFI_OP_KEYREP)) {
        tfi_keyrep_done(owner, op, e);
        op->aux = NULL; /* the rkey is the domain's */
    } else if (owner != NULL) {
        tfi_ep_untrack(op);
        deliver(owner, op, e);
    }
    tfi_op_put(ep->dom, op);
}

void tfi_ep_progress(struct tfi_ep *ep)
{
    tern_cq_entry_t e[32];
    int n = tern_cq_read(ep->w, e, (int)(sizeof(e) / sizeof(e[0])));
    for (int i = 0; i < n; i++)
        tfi_ep_complete(ep, &e[i]);
}

/* ---- the CQ's endpoints ------------------------------------------------------- */

int tfi_cq_attach(struct tfi_cq *cq, struct tfi_ep *ep)
{
    for (size_t i = 0; i < cq->neps; i++)
        if (cq->eps[i] == ep)
            goto out;
    if (cq->neps == cq->epcap) {
        size_t cap = cq->epcap ? cq->epcap * 2 : 4;
        struct tfi_ep **a = realloc(cq->eps, cap * sizeof(*a));
        if (a == NULL)
            return -FI_ENOMEM;
        cq->eps = a;
        cq->epcap = cap;
    }
    cq->eps[cq->neps++] = ep;
out:
    atomic_fetch_add(&cq->refs, 1);
    return 0;
}

void tfi_cq_detach(struct tfi_cq *cq, struct tfi_ep *ep)
{
    for (size_t i = 0; i < cq->neps; i++) {
        if (cq->eps[i] == ep) {
            cq->eps[i] = cq->eps[--cq->neps];
            break;
        }
    }
    atomic_fetch_sub(&cq->refs, 1);
}

/* ---- reading ----------------------------------------------------------------- */

static void put_entry(const struct tfi_cq *cq, void *buf, size_t i, const struct tfi_cqe *e)
{
    switch (cq->format) {
    case FI_CQ_FORMAT_MSG: {
        struct fi_cq_msg_entry *m = (struct fi_cq_msg_entry *)buf + i;
        m->op_context = e->context;
        m->flags = e->flags;
        m->len = e->len;
        break;
    }
    case FI_CQ_FORMAT_DATA: {
        struct fi_cq_data_entry *d = (struct fi_cq_data_entry *)buf + i;
        d->op_context = e->context;
        d->flags = e->flags;
        d->len = e->len;
        d->buf = e->buf;
        d->data = e->data;
        break;
    }
    case FI_CQ_FORMAT_TAGGED: {
        struct fi_cq_tagged_entry *t = (struct fi_cq_tagged_entry *)buf + i;
        t->op_context = e->context;
        t->flags = e->flags;
        t->len = e->len;
        t->buf = e->buf;
        t->data = e->data;
        t->tag = e->tag;
        break;
    }
    default: /* FI_CQ_FORMAT_CONTEXT */
        ((struct fi_cq_entry *)buf)[i].op_context = e->context;
        break;
    }
}

/*
 * The common case (Open MPI's mtl ofi, fi_pingpong): the CQ is empty and is
 * both CQs of its one endpoint, which counts nothing.  The engine's entries
 * then go straight into the caller's buffer in its format, without a stop
 * in the CQ's ring; the first failure (or an errors-only operation's entry)
 * and everything after it in the batch take the usual way, through the
 * ring in their order, where fi_cq_readerr finds them.
 */
static bool direct_ok(const struct tfi_cq *cq, size_t count)
{
    if (cq->count != 0 || cq->neps != 1 || count == 0)
        return false;
    const struct tfi_ep *ep = cq->eps[0];
    return ep->rx_cq == cq && ep->tx_cq == cq && ep->rx_cntr == NULL && ep->tx_cntr == NULL;
}

static size_t read_direct(struct tfi_cq *cq, void *buf, size_t count, fi_addr_t *src)
{
    struct tfi_ep *ep = cq->eps[0];
    tern_cq_entry_t e[32];
    int k = tern_cq_read(ep->w, e, count < 32 ? (int)count : 32);
    size_t n = 0;
    int i = 0;
    for (; i < k; i++) {
        struct tfi_op *op = e[i].context;
        /* a peer's remote write (no op), the key service's own: the usual way */
        if (e[i].status != TERN_OK || op == NULL || !(op->kind & TFI_OP_POOLED) || op->ep != ep ||
            (op->kind & (TFI_OP_KEYSVC | TFI_OP_KEYREP)))
            break;
        tfi_ep_untrack(op);
        if (op->kind & TFI_OP_COMP) {
            struct tfi_cqe c;
            fill(ep, op, &e[i], &c);
            put_entry(cq, buf, n, &c);
            if (src != NULL)
                src[n] = c.src;
            n++;
        }
        tfi_op_put(ep->dom, op);
    }
    for (; i < k; i++)
        tfi_ep_complete(ep, &e[i]);
    return n;
}

/* Nothing queued: not in the CQ, not in its endpoints' workers. */
static bool all_empty(const struct tfi_cq *cq)
{
    if (cq->count != 0)
        return false;
    for (size_t i = 0; i < cq->neps; i++)
        if (tern_cq_count(cq->eps[i]->w) != 0)
            return false;
    return true;
}

/*
 * Manual progress: a read of an empty CQ polls its endpoints' transports,
 * except right after a read that returned completions.  A caller that
 * reads until -FI_EAGAIN (Open MPI's mtl ofi does, after every completion)
 * would otherwise pay one more poll of every transport, a system call on
 * tcp, between a completion and its own next step: the critical path of
 * a ping-pong.  The read after that -FI_EAGAIN polls as always, so a loop
 * of reads still progresses on every other call at least.
 */
static ssize_t cq_readfrom(struct fid_cq *f, void *buf, size_t count, fi_addr_t *src)
{
    struct tfi_cq *cq = (struct tfi_cq *)f;
    if (buf == NULL && count > 0)
        return -FI_EINVAL;
    struct tfi_domain *d = cq->dom;
    tfi_lock(d);
    bool after_delivery = cq->delivered;
    cq->delivered = false;
    if (after_delivery && count > 0 && all_empty(cq)) {
        tfi_unlock(d);
        return -FI_EAGAIN;
    }
    size_t n = 0;
    if (direct_ok(cq, count)) {
        n = read_direct(cq, buf, count, src);
        if (n > 0) {
            cq->delivered = true;
            tfi_unlock(d);
            return (ssize_t)n;
        }
    } else if (cq->count < count || count == 0) { /* manual progress */
        for (size_t i = 0; i < cq->neps; i++)
            tfi_ep_progress(cq->eps[i]);
    }
    while (n < count && cq->count > 0) {
        const struct tfi_cqe *e = &cq->ring[cq->head];
        if (e->err != 0)
            break;
        put_entry(cq, buf, n, e);
        if (src != NULL)
            src[n] = e->src;
        cq->head = (cq->head + 1) & (cq->cap - 1);
        cq->count--;
        n++;
    }
    ssize_t ret = n > 0 ? (ssize_t)n : cq->count > 0 ? -FI_EAVAIL : -FI_EAGAIN;
    cq->delivered = n > 0;
    tfi_unlock(d);
    return ret;
}

static ssize_t cq_read(struct fid_cq *f, void *buf, size_t count)
{
    return cq_readfrom(f, buf, count, NULL);
}

static ssize_t cq_readerr(struct fid_cq *f, struct fi_cq_err_entry *buf, uint64_t flags)
{
    struct tfi_cq *cq = (struct tfi_cq *)f;
    if (buf == NULL)
        return -FI_EINVAL;
    if (flags != 0)
        return -FI_EBADFLAGS;
    ssize_t ret = -FI_EAGAIN;
    tfi_lock(cq->dom);
    if (cq->count > 0 && cq->ring[cq->head].err != 0) {
        const struct tfi_cqe *e = &cq->ring[cq->head];
        buf->op_context = e->context;
        buf->flags = e->flags;
        buf->len = e->len;
        buf->buf = e->buf;
        buf->data = e->data;
        buf->tag = e->tag;
        buf->olen = e->olen;
        buf->err = e->err;
        buf->prov_errno = e->prov_errno;
        /* no error data: fi_cq_strerror turns prov_errno (a tern status)
         * into text */
        buf->err_data = NULL;
        buf->err_data_size = 0;
        cq->head = (cq->head + 1) & (cq->cap - 1);
        cq->count--;
        ret = 1;
    }
    tfi_unlock(cq->dom);
    return ret;
}

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* Wait a little for cq's endpoints: on the worker's own wait (bounded)
 * when the application serialises the domain and one endpoint feeds the
 * CQ, else a yield (another thread may be in the worker). */
static void wait_some(struct tfi_cq *cq, int ms)
{
    if (!cq->dom->locked && cq->neps == 1)
        tern_worker_wait(cq->eps[0]->w, ms < 100 ? ms : 100);
    else
        sched_yield();
}

static ssize_t cq_sreadfrom(struct fid_cq *f, void *buf, size_t count, fi_addr_t *src,
                            const void *cond, int timeout)
{
    struct tfi_cq *cq = (struct tfi_cq *)f;
    if (cq->wait_obj == FI_WAIT_NONE)
        return -FI_EINVAL; /* fi_cq(3): no sread without a wait object */
    uint64_t end = timeout >= 0 ? now_ms() + (uint64_t)timeout : UINT64_MAX;
    for (;;) {
        ssize_t n = cq_readfrom(f, buf, count, src);
        if (n != -FI_EAGAIN)
            return n;
        if (atomic_exchange(&cq->signaled, false))
            return -FI_EAGAIN;
        uint64_t t = now_ms();
        if (t >= end)
            return -FI_EAGAIN;
        wait_some(cq, end - t > 100 ? 100 : (int)(end - t));
    }
}

static ssize_t cq_sread(struct fid_cq *f, void *buf, size_t count, const void *cond, int timeout)
{
    return cq_sreadfrom(f, buf, count, NULL, cond, timeout);
}

static int cq_signal(struct fid_cq *f)
{
    struct tfi_cq *cq = (struct tfi_cq *)f;
    atomic_store(&cq->signaled, true);
    tfi_lock(cq->dom);
    for (size_t i = 0; i < cq->neps; i++)
        tern_worker_signal(cq->eps[i]->w);
    tfi_unlock(cq->dom);
    return 0;
}

static const char *cq_strerror(struct fid_cq *f, int prov_errno, const void *err_data, char *buf,
                               size_t len)
{
    const char *s = tern_strerror((tern_status_t)prov_errno);
    if (buf == NULL || len == 0)
        return s;
    strncpy(buf, s, len - 1);
    buf[len - 1] = '\0';
    return buf;
}

static struct fi_ops_cq cq_ops = {
    .size = sizeof(struct fi_ops_cq),
    .read = cq_read,
    .readfrom = cq_readfrom,
    .readerr = cq_readerr,
    .sread = cq_sread,
    .sreadfrom = cq_sreadfrom,
    .signal = cq_signal,
    .strerror = cq_strerror,
};

/* ---- the fid ------------------------------------------------------------------- */

static int cq_close(struct fid *fid)
{
    struct tfi_cq *cq = (struct tfi_cq *)fid;
    if (atomic_load(&cq->refs) != 0) {
        TFI_WARN(FI_LOG_CQ, "fi_close(cq): bound to %d endpoint direction(s)\n",
                 atomic_load(&cq->refs));
        return -FI_EBUSY;
    }
    free(cq->ring);
    free(cq->eps);
    atomic_fetch_sub(&cq->dom->refs, 1);
    free(cq);
    return 0;
}

static int cq_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
    return -FI_ENOSYS;
}

static int cq_control(struct fid *fid, int command, void *arg)
{
    struct tfi_cq *cq = (struct tfi_cq *)fid;
    if (command == FI_GETWAITOBJ && arg != NULL) {
        *(enum fi_wait_obj *)arg = cq->wait_obj;
        return 0;
    }
    return -FI_ENOSYS; /* FI_GETWAIT: no file descriptor to hand out */
}

static int cq_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context)
{
    return -FI_ENOSYS;
}

static int cq_tostr(const struct fid *fid, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return -FI_EINVAL;
    strncpy(buf, "tern cq", len - 1);
    buf[len - 1] = '\0';
    return 0;
}

static int cq_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops, void *context)
{
    return -FI_ENOSYS;
}

static struct fi_ops cq_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = cq_close,
    .bind = cq_bind,
    .control = cq_control,
    .ops_open = cq_ops_open,
    .tostr = cq_tostr,
    .ops_set = cq_ops_set,
};

int tfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **out,
                void *context)
{
    if (domain == NULL || attr == NULL || out == NULL)
        return -FI_EINVAL;
    if (attr->flags & ~(uint64_t)FI_AFFINITY)
        return -FI_EBADFLAGS;
    enum fi_cq_format fmt =
        attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
    if (fmt > FI_CQ_FORMAT_TAGGED)
        return -FI_EINVAL;
    switch (attr->wait_obj) {
    case FI_WAIT_NONE:
    case FI_WAIT_UNSPEC:
    case FI_WAIT_YIELD:
        break;
    default:
        TFI_INFO(FI_LOG_CQ,
                 "fi_cq_open: wait object %d: tern CQs offer FI_WAIT_NONE, "
                 "FI_WAIT_UNSPEC or FI_WAIT_YIELD (no file descriptor)\n",
                 (int)attr->wait_obj);
        return -FI_ENOSYS;
    }
    if (attr->wait_cond != FI_CQ_COND_NONE && attr->wait_cond != FI_CQ_COND_THRESHOLD)
        return -FI_EINVAL;
    struct tfi_cq *cq = calloc(1, sizeof(*cq));
    if (cq == NULL)
        return -FI_ENOMEM;
    cq->cap = 64;
    while (cq->cap < attr->size && cq->cap < (1u << 20))
        cq->cap *= 2;
    cq->ring = malloc(cq->cap * sizeof(*cq->ring));
    if (cq->ring == NULL) {
        free(cq);
        return -FI_ENOMEM;
    }
    cq->dom = (struct tfi_domain *)domain;
    cq->format = fmt;
    cq->wait_obj = attr->wait_obj;
    atomic_init(&cq->signaled, false);
    atomic_init(&cq->refs, 0);
    cq->cq.fid.fclass = FI_CLASS_CQ;
    cq->cq.fid.context = context;
    cq->cq.fid.ops = &cq_fi_ops;
    cq->cq.ops = &cq_ops;
    atomic_fetch_add(&cq->dom->refs, 1);
    *out = &cq->cq;
    return 0;
}
