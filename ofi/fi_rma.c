/*
 * FI_RMA on tern's one-sided API (<tern/rma.h>): fi_read / fi_write and
 * their v and msg forms, fi_writedata, fi_inject_write and
 * fi_inject_writedata; and the keys every one-sided operation (FI_ATOMIC
 * too, fi_atomic.c) resolves.
 *
 * Keys.  A libfabric key is 64 bits; a tern key is the 48-120 bytes of
 * tern_region_pack.  An initiator asks the target for the packed key of
 * (key) once: a tagged message in the provider's key-request space, which
 * the target's endpoint answers from its progress (the receive it keeps
 * posted completes into its worker's CQ like any other: tfi_keysvc_answer)
 * with the packed key and the registration's offset, or "no such key".  The
 * answer lands in the initiator's rkey entry, found by (peer, key); while
 * it is on its way an operation returns -FI_EAGAIN (the caller progresses
 * and tries again, as libfabric lets a provider ask).  A key the target
 * refused is forgotten, and so is one an access through which was refused
 * (the registration may have been closed and made again under that key).
 *
 * Addresses: with FI_MR_VIRT_ADDR (or FI_MR_BASIC) in the domain's mr_mode
 * the address is the target's virtual address; without, an offset into the
 * registration counted from its fi_mr_attr offset.
 *
 * Completion: a write completes when it is in the target's memory (a
 * tern_flush after it, whose completion is the write's: every completion
 * level libfabric defines, and a refusal at the target reported), a read
 * when its data is here.
 */
#include <stdlib.h>
#include <string.h>

#include "ofi/tern_fi.h"

/* what the target answers */
struct key_answer {
    uint32_t found;
    uint32_t klen;
    uint64_t offset;
    uint8_t key[TERN_KEY_MAX];
};

/* failures of operations that asked for no completion (errors only); a
 * write's put whose flush reports for it (its failures dropped) */
static struct tfi_op silent_write = {.flags = FI_RMA | FI_WRITE, .kind = 0};
static struct tfi_op silent_read = {.flags = FI_RMA | FI_READ, .kind = 0};
static struct tfi_op quiet_write = {.flags = FI_RMA | FI_WRITE, .kind = TFI_OP_QUIET};

static size_t bucket(int peer, uint64_t key)
{
    return (size_t)(((key ^ ((uint64_t)(unsigned)peer << 40)) * 0x9e3779b97f4a7c15ull) >> 56);
}

/* ---- the target's side: answering --------------------------------------------- */

int tfi_keysvc_start(struct tfi_ep *ep)
{
    struct tfi_op *op = ep->keysvc;
    if (op == NULL) {
        if ((op = tfi_op_get(ep->dom)) == NULL)
            return -FI_ENOMEM;
        op->ep = ep;
        op->kind = TFI_OP_POOLED | TFI_OP_RECV | TFI_OP_KEYSVC;
        op->flags = 0;
        op->context = NULL;
        ep->keysvc = op;
    }
    tern_op_t top = {.flags = TERN_OP_CQ, .context = op};
    tern_request_t *req = NULL;
    tern_status_t st = tern_trecv(ep->w, &ep->keyreq, sizeof(ep->keyreq), TERN_ANY_SOURCE, 0,
                                  ~0ull, TFI_SPACE_KEYREQ, &top, &req);
    if (st < 0) {
        tfi_op_put(ep->dom, op);
        ep->keysvc = NULL;
        return tfi_errno(st);
    }
    op->req = req;
    if (req != NULL) /* fi_close cancels it */
        tfi_ep_track(ep, op);
    return 0;
}

void tfi_keysvc_answer(struct tfi_ep *ep, struct tfi_op *op, const tern_cq_entry_t *e)
{
    tfi_ep_untrack(op);
    op->req = NULL;
    if (e->status != TERN_OK) { /* cancelled: the endpoint is closing */
        ep->keysvc = NULL;
        tfi_op_put(ep->dom, op);
        return;
    }
    struct key_answer a = {0};
    size_t klen = sizeof(a.key);
    if (e->length == sizeof(ep->keyreq) &&
        tfi_mr_remote(ep->dom, ep->keyreq, a.key, &klen, &a.offset)) {
        a.found = 1;
        a.klen = (uint32_t)klen;
    }
    /* injected: the buffer is ours again at once; a failure means the
     * initiator is gone, and nobody waits for the answer */
    tern_op_t top = {.flags = TERN_OP_INJECT};
    (void)tern_tsend(ep->w, &a, offsetof(struct key_answer, key) + a.klen, e->peer, ep->keyreq,
                     TFI_SPACE_KEYREP, &top, NULL);
    if (ep->closing) {
        ep->keysvc = NULL;
        tfi_op_put(ep->dom, op);
        return;
    }
    if (tfi_keysvc_start(ep) != 0)
        TFI_WARN(FI_LOG_EP_DATA, "no memory to receive the next key request: peers' one-sided "
                                 "operations on new keys will wait\n");
}

/* ---- the initiator's side: resolving --------------------------------------------- */

static struct tfi_rkey *rkey_find(struct tfi_domain *d, int peer, uint64_t key)
{
    for (struct tfi_rkey *r = d->rkeys[bucket(peer, key)]; r != NULL; r = r->next)
        if (r->peer == peer && r->key == key)
            return r;
    return NULL;
}

static void rkey_unlink(struct tfi_domain *d, struct tfi_rkey *rk)
{
    for (struct tfi_rkey **p = &d->rkeys[bucket(rk->peer, rk->key)]; *p != NULL;
         p = &(*p)->next)
        if (*p == rk) {
            *p = rk->next;
            return;
        }
}

static void rkey_free(struct tfi_rkey *rk)
{
    if (rk->tkey != NULL)
        tern_key_destroy(rk->tkey);
    free(rk->answer);
    free(rk);
}

void tfi_rkey_drop(struct tfi_domain *d, int peer, uint64_t key)
{
    struct tfi_rkey *rk = rkey_find(d, peer, key);
    if (rk != NULL && rk->state != 0) { /* one being fetched finishes first */
        rkey_unlink(d, rk);
        rkey_free(rk);
    }
}

void tfi_rkeys_free(struct tfi_domain *d)
{
    for (size_t b = 0; b < sizeof(d->rkeys) / sizeof(d->rkeys[0]); b++)
        while (d->rkeys[b] != NULL) {
            struct tfi_rkey *rk = d->rkeys[b];
            d->rkeys[b] = rk->next;
            rkey_free(rk); /* a fetch still out: its answer's op was orphaned at close */
        }
}

void tfi_keyrep_done(struct tfi_ep *ep, struct tfi_op *op, const tern_cq_entry_t *e)
{
    struct tfi_rkey *rk = op->aux;
    tfi_ep_untrack(op);
    const struct key_answer *a = rk->answer;
    rk->state = -1;
    if (e->status == TERN_OK && e->length >= offsetof(struct key_answer, key) && a->found &&
        a->klen <= sizeof(a->key) &&
        tern_key_unpack(ep->dom->ctx, rk->peer, a->key, a->klen, &rk->tkey) == TERN_OK) {
        rk->state = 1;
        rk->offset = a->offset;
    }
    free(rk->answer);
    rk->answer = NULL;
}

/* Ask peer for key: the answer's receive, then the request. */
static int rkey_fetch(struct tfi_ep *ep, int peer, uint64_t key)
{
    struct tfi_domain *d = ep->dom;
    struct tfi_rkey *rk = calloc(1, sizeof(*rk));
    struct tfi_op *op = rk != NULL ? tfi_op_get(d) : NULL;
    if (rk != NULL)
        rk->answer = malloc(sizeof(struct key_answer));
    if (op == NULL || rk->answer == NULL) {
        if (op != NULL)
            tfi_op_put(d, op);
        if (rk != NULL)
            free(rk->answer);
        free(rk);
        return -FI_ENOMEM;
    }
    rk->peer = peer;
    rk->key = key;
    op->ep = ep;
    op->kind = TFI_OP_POOLED | TFI_OP_RECV | TFI_OP_KEYREP;
    op->flags = 0;
    op->context = NULL;
    op->aux = rk;
    tern_op_t top = {.flags = TERN_OP_CQ, .context = op};
    tern_request_t *req = NULL;
    tern_status_t st = tern_trecv(ep->w, rk->answer, sizeof(struct key_answer), peer, key, 0,
                                  TFI_SPACE_KEYREP, &top, &req);
    if (st >= 0) {
        op->req = req;
        if (req != NULL)
            tfi_ep_track(ep, op);
        tern_op_t inj = {.flags = TERN_OP_INJECT};
        st = tern_tsend(ep->w, &key, sizeof(key), peer, 0, TFI_SPACE_KEYREQ, &inj, NULL);
        if (st < 0 && req != NULL)
            tern_cancel(ep->w, req); /* its completion (cancelled) refuses the key */
    } else {
        tfi_op_put(d, op);
        free(rk->answer);
        free(rk);
        return tfi_errno(st);
    }
    rk->next = d->rkeys[bucket(peer, key)];
    d->rkeys[bucket(peer, key)] = rk;
    return 0;
}

int tfi_rkey_resolve(struct tfi_ep *ep, int peer, uint64_t key, uint64_t addr,
                     const tern_key_t **tkey, uint64_t *raddr)
{
    struct tfi_domain *d = ep->dom;
    struct tfi_rkey *rk = rkey_find(d, peer, key);
    if (rk == NULL) {
        int ret = rkey_fetch(ep, peer, key);
        if (ret != 0)
            return ret;
        rk = rkey_find(d, peer, key);
    }
    if (rk->state == 0) { /* on its way: progress once, the answer may be here */
        tfi_ep_progress(ep);
        if (rk->state == 0)
            return -FI_EAGAIN;
    }
    if (rk->state < 0) {
        TFI_INFO(FI_LOG_EP_DATA, "key %llu: the peer has no registration for remote access "
                                 "under it\n", (unsigned long long)key);
        rkey_unlink(d, rk);
        rkey_free(rk);
        return -FI_EKEYREJECTED;
    }
    *tkey = rk->tkey;
    bool virt = (d->mr_mode & (FI_MR_VIRT_ADDR | FI_MR_BASIC)) != 0;
    *raddr = virt ? addr : tern_key_base(rk->tkey) + (addr - rk->offset);
    return 0;
}

/* ---- the operations ----------------------------------------------------------------- */

/* One RMA operation as the calls give it. */
struct rma_args {
    const struct iovec *iov; /* or buf, len */
    size_t count;
    void *buf;
    size_t len;
    fi_addr_t addr;
    uint64_t raddr, key;
    void *context;
    uint64_t data;
    uint64_t flags;
    bool read, inject_only;
};

/* the record of an RMA operation (NULL: no memory): a static op
 * reporting failures only when nothing else is asked of it, else a pooled
 * one (always for a copied buffer, which it frees) */
static struct tfi_op *rma_record(struct tfi_ep *ep, const struct rma_args *a, bool bounce,
                                 tern_op_t *top)
{
    bool want = !a->inject_only && (!ep->tx_selective || (a->flags & FI_COMPLETION));
    bool counted = ep->tx_cntr != NULL;
    top->flags |= TERN_OP_CQ;
    if (!bounce && !want && !counted) {
        top->flags |= TERN_OP_CQ_ERRORS;
        top->context = a->read ? &silent_read : &silent_write;
        return top->context;
    }
    struct tfi_op *rec = tfi_op_get(ep->dom);
    if (rec == NULL)
        return NULL;
    rec->context = a->context;
    rec->ep = ep;
    rec->flags = FI_RMA | (a->read ? FI_READ : FI_WRITE);
    rec->kind = TFI_OP_POOLED | (want ? TFI_OP_COMP : 0);
    rec->aux = NULL;
    top->context = rec;
    return rec;
}

/* The end of a one-sided post (rma_post here, amo_post in fi_atomic.c):
 * st is the operation's tern status; with flush, the flush fop follows it.
 * A failed flush undoes nothing (the operation went out): the record, when
 * the flush was to complete it, completes with the failure.  A failed
 * operation drops its record and frees bounce.  Unlocks ep's domain. */
ssize_t tfi_onesided_end(struct tfi_ep *ep, struct tfi_op *rec, tern_status_t st, bool flush,
                         int peer, tern_op_t *fop, void *bounce)
{
    struct tfi_domain *d = ep->dom;
    if (st >= 0 && flush) {
        tern_status_t fs = tern_flush(ep->w, peer, fop, NULL);
        if (fs < 0) {
            if (rec->kind & TFI_OP_POOLED)
                tfi_ep_track(ep, rec);
            if (fop->context == rec) {
                tern_cq_entry_t e = {.context = rec, .status = fs};
                tfi_ep_complete(ep, &e);
            }
            tfi_unlock(d);
            return 0;
        }
    }
    if (st == TERN_ERR_REMOTE_ACCESS) {
        /* the target's region refused it within the call (memory reached
         * directly or by the same-host copy): an error completion, as the
         * target's refusal of an operation sent to it is */
        if (rec->kind & TFI_OP_POOLED)
            tfi_ep_track(ep, rec); /* its record frees the copy */
        else
            free(bounce);
        tern_cq_entry_t e = {.context = rec, .status = st};
        tfi_ep_complete(ep, &e);
        tfi_unlock(d);
        return 0;
    }
    if (st < 0) {
        if (rec->kind & TFI_OP_POOLED) {
            rec->aux = NULL;
            tfi_record_drop(ep, rec);
        }
        free(bounce);
        tfi_unlock(d);
        return tfi_errno(st);
    }
    if (rec->kind & TFI_OP_POOLED)
        tfi_ep_track(ep, rec);
    tfi_unlock(d);
    return 0;
}

static ssize_t rma_post(struct tfi_ep *ep, const struct rma_args *a)
{
    if (!ep->enabled)
        return -FI_EOPBADSTATE;
    if (!(ep->caps & FI_RMA) || !(ep->caps & (a->read ? FI_READ : FI_WRITE)))
        return -FI_EOPNOTSUPP;
    size_t len = a->len;
    if (a->iov != NULL) {
        if (a->count > TERN_IOV_MAX)
            return -FI_EINVAL;
        len = 0;
        for (size_t i = 0; i < a->count; i++) {
            if (a->iov[i].iov_base == NULL && a->iov[i].iov_len > 0)
                return -FI_EINVAL;
            len += a->iov[i].iov_len;
        }
    } else if (a->buf == NULL && len > 0) {
        return -FI_EINVAL;
    }
    /* an inherited FI_INJECT does not apply to reads */
    bool inject = a->inject_only || (!a->read && (a->flags & FI_INJECT));
    if ((inject && len > ep->inject_size) || (a->inject_only && a->read))
        return -FI_EINVAL;
    struct tfi_domain *d = ep->dom;
    tfi_lock(d);
    int peer = tfi_av_peer(ep->av, a->addr);
    const tern_key_t *tkey = NULL;
    uint64_t raddr = 0;
    int ret = peer < 0 ? -FI_EINVAL : tfi_rkey_resolve(ep, peer, a->key, a->raddr, &tkey, &raddr);
    if (ret != 0) {
        tfi_unlock(d);
        return ret;
    }
    /* an injected write's data is copied: the caller's buffer is free at return */
    void *bounce = NULL;
    const void *src = a->buf;
    if (inject && len > 0) {
        if ((bounce = malloc(len)) == NULL) {
            tfi_unlock(d);
            return -FI_ENOMEM;
        }
        if (a->iov == NULL) {
            memcpy(bounce, a->buf, len);
        } else {
            for (size_t i = 0, at = 0; i < a->count; at += a->iov[i].iov_len, i++)
                memcpy((char *)bounce + at, a->iov[i].iov_base, a->iov[i].iov_len);
        }
        src = bounce;
    }
    tern_op_t top = {.flags = 0, .data = a->data};
    if (!a->read && (a->flags & FI_REMOTE_CQ_DATA))
        top.flags |= TERN_OP_DATA;
    struct tfi_op *rec = rma_record(ep, a, bounce != NULL, &top);
    if (rec == NULL) {
        free(bounce);
        tfi_unlock(d);
        return -FI_ENOMEM;
    }
    if (bounce != NULL && (rec->kind & TFI_OP_POOLED))
        rec->aux = bounce; /* freed with the record */
    /* A write is followed by a flush: its completion is the write's (the
     * data is in the target's memory: delivery complete), and a target that
     * refuses it (a registration closed since) says so there.  An injected
     * write's record frees its copy when the put completes; the flush then
     * reports failures only. */
    bool flush = !a->read;
    tern_op_t wop = top, fop = top;
    if (flush && bounce == NULL) { /* the flush reports: the put's failures are dropped */
        wop.flags = (top.flags & TERN_OP_DATA) | TERN_OP_CQ | TERN_OP_CQ_ERRORS;
        wop.context = &quiet_write;
        fop.flags = top.flags & ~(uint32_t)TERN_OP_DATA;
    } else if (flush) { /* the put's record frees the copy; the flush reports failures */
        fop.flags = TERN_OP_CQ | TERN_OP_CQ_ERRORS;
        fop.context = &silent_write;
    }
    tern_status_t st;
    bool one = a->iov == NULL || bounce != NULL || a->count == 1;
    void *one_buf = a->iov == NULL || bounce != NULL ? (void *)src : a->iov[0].iov_base;
    if (a->read)
        st = one ? tern_get(ep->w, one_buf, len, tkey, raddr, &top, NULL)
                 : tern_getv(ep->w, a->iov, (int)a->count, tkey, raddr, &top, NULL);
    else
        st = one ? tern_put(ep->w, one_buf, len, tkey, raddr, &wop, NULL)
                 : tern_putv(ep->w, a->iov, (int)a->count, tkey, raddr, &wop, NULL);
    return tfi_onesided_end(ep, rec, st, flush, peer, &fop, bounce);
}

static ssize_t rma_read(struct fid_ep *fep, void *buf, size_t len, void *desc, fi_addr_t src,
                        uint64_t addr, uint64_t key, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)fep;
    struct rma_args a = {.buf = buf, .len = len, .addr = src, .raddr = addr, .key = key,
                         .context = context, .flags = ep->tx_op_flags, .read = true};
    return rma_post(ep, &a);
}

static ssize_t rma_readv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
                         fi_addr_t src, uint64_t addr, uint64_t key, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)fep;
    struct rma_args a = {.iov = iov, .count = count, .addr = src, .raddr = addr, .key = key,
                         .context = context, .flags = ep->tx_op_flags, .read = true};
    if (iov == NULL && count > 0)
        return -FI_EINVAL;
    return rma_post(ep, &a);
}

/* the msg forms: one remote range (rma_iov_count 1) */
static ssize_t rma_msg(struct tfi_ep *ep, const struct fi_msg_rma *msg, uint64_t flags, bool read)
{
    if (msg == NULL || msg->rma_iov_count != 1 || msg->rma_iov == NULL ||
        (msg->msg_iov == NULL && msg->iov_count > 0))
        return -FI_EINVAL;
    struct rma_args a = {.iov = msg->msg_iov, .count = msg->iov_count, .addr = msg->addr,
                         .raddr = msg->rma_iov[0].addr, .key = msg->rma_iov[0].key,
                         .context = msg->context, .data = msg->data, .flags = flags,
                         .read = read};
    size_t len = 0;
    for (size_t i = 0; i < msg->iov_count; i++)
        len += msg->msg_iov[i].iov_len;
    if (len != msg->rma_iov[0].len)
        return -FI_EINVAL;
    return rma_post(ep, &a);
}

static ssize_t rma_readmsg(struct fid_ep *fep, const struct fi_msg_rma *msg, uint64_t flags)
{
    return rma_msg((struct tfi_ep *)fep, msg, flags, true);
}

static ssize_t rma_write(struct fid_ep *fep, const void *buf, size_t len, void *desc,
                         fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)fep;
    struct rma_args a = {.buf = (void *)buf, .len = len, .addr = dest, .raddr = addr, .key = key,
                         .context = context, .flags = ep->tx_op_flags};
    return rma_post(ep, &a);
}

static ssize_t rma_writev(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
                          fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)fep;
    struct rma_args a = {.iov = iov, .count = count, .addr = dest, .raddr = addr, .key = key,
                         .context = context, .flags = ep->tx_op_flags};
    if (iov == NULL && count > 0)
        return -FI_EINVAL;
    return rma_post(ep, &a);
}

static ssize_t rma_writemsg(struct fid_ep *fep, const struct fi_msg_rma *msg, uint64_t flags)
{
    return rma_msg((struct tfi_ep *)fep, msg, flags, false);
}

static ssize_t rma_inject(struct fid_ep *fep, const void *buf, size_t len, fi_addr_t dest,
                          uint64_t addr, uint64_t key)
{
    struct tfi_ep *ep = (struct tfi_ep *)fep;
    struct rma_args a = {.buf = (void *)buf, .len = len, .addr = dest, .raddr = addr, .key = key,
                         .inject_only = true};
    return rma_post(ep, &a);
}

static ssize_t rma_writedata(struct fid_ep *fep, const void *buf, size_t len, void *desc,
                             uint64_t data, fi_addr_t dest, uint64_t addr, uint64_t key,
                             void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)fep;
    struct rma_args a = {.buf = (void *)buf, .len = len, .addr = dest, .raddr = addr, .key = key,
                         .context = context, .data = data,
                         .flags = ep->tx_op_flags | FI_REMOTE_CQ_DATA};
    return rma_post(ep, &a);
}

static ssize_t rma_injectdata(struct fid_ep *fep, const void *buf, size_t len, uint64_t data,
                              fi_addr_t dest, uint64_t addr, uint64_t key)
{
    struct tfi_ep *ep = (struct tfi_ep *)fep;
    struct rma_args a = {.buf = (void *)buf, .len = len, .addr = dest, .raddr = addr, .key = key,
                         .data = data, .flags = FI_REMOTE_CQ_DATA, .inject_only = true};
    return rma_post(ep, &a);
}

struct fi_ops_rma tfi_rma_ops = {
    .size = sizeof(struct fi_ops_rma),
    .read = rma_read,
    .readv = rma_readv,
    .readmsg = rma_readmsg,
    .write = rma_write,
    .writev = rma_writev,
    .writemsg = rma_writemsg,
    .inject = rma_inject,
    .writedata = rma_writedata,
    .injectdata = rma_injectdata,
};
