/*
 * Counters: a success and an error count, bumped by the routing of
 * completions (fi_cq.c) for the endpoints bound to the counter with
 * FI_SEND or FI_RECV.  Progress is manual, so reading or waiting on a
 * counter drains its endpoints' workers first.  FI_READ / FI_WRITE
 * bindings are accepted and never count (no RMA yet); FI_REMOTE_READ /
 * FI_REMOTE_WRITE need FI_RMA_EVENT, which tern does not offer.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ofi/tern_fi.h"

static void progress(struct tfi_cntr *c)
{
    tfi_lock(c->dom);
    for (size_t i = 0; i < c->neps; i++)
        tfi_ep_progress(c->eps[i]);
    tfi_unlock(c->dom);
}

static uint64_t cntr_read(struct fid_cntr *f)
{
    struct tfi_cntr *c = (struct tfi_cntr *)f;
    progress(c);
    return atomic_load(&c->value);
}

static uint64_t cntr_readerr(struct fid_cntr *f)
{
    struct tfi_cntr *c = (struct tfi_cntr *)f;
    progress(c);
    return atomic_load(&c->err);
}

static int cntr_add(struct fid_cntr *f, uint64_t value)
{
    atomic_fetch_add(&((struct tfi_cntr *)f)->value, value);
    return 0;
}

static int cntr_set(struct fid_cntr *f, uint64_t value)
{
    atomic_store(&((struct tfi_cntr *)f)->value, value);
    return 0;
}

static int cntr_adderr(struct fid_cntr *f, uint64_t value)
{
    atomic_fetch_add(&((struct tfi_cntr *)f)->err, value);
    return 0;
}

static int cntr_seterr(struct fid_cntr *f, uint64_t value)
{
    atomic_store(&((struct tfi_cntr *)f)->err, value);
    return 0;
}

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static int cntr_wait(struct fid_cntr *f, uint64_t threshold, int timeout)
{
    struct tfi_cntr *c = (struct tfi_cntr *)f;
    uint64_t err0 = atomic_load(&c->err);
    uint64_t end = timeout >= 0 ? now_ms() + (uint64_t)timeout : UINT64_MAX;
    for (;;) {
        progress(c);
        if (atomic_load(&c->value) >= threshold)
            return 0;
        if (atomic_load(&c->err) != err0)
            return -FI_EAVAIL; /* fi_cntr(3): an operation failed while waiting */
        if (now_ms() >= end)
            return -FI_ETIMEDOUT;
        if (!c->dom->locked && c->neps == 1)
            tern_worker_wait(c->eps[0]->w, 10);
        else
            sched_yield();
    }
}

static struct fi_ops_cntr cntr_ops = {
    .size = sizeof(struct fi_ops_cntr),
    .read = cntr_read,
    .readerr = cntr_readerr,
    .add = cntr_add,
    .set = cntr_set,
    .wait = cntr_wait,
    .adderr = cntr_adderr,
    .seterr = cntr_seterr,
};

int tfi_cntr_attach(struct tfi_cntr *c, struct tfi_ep *ep)
{
    for (size_t i = 0; i < c->neps; i++)
        if (c->eps[i] == ep)
            goto out;
    if (c->neps == c->epcap) {
        size_t cap = c->epcap ? c->epcap * 2 : 4;
        struct tfi_ep **a = realloc(c->eps, cap * sizeof(*a));
        if (a == NULL)
            return -FI_ENOMEM;
        c->eps = a;
        c->epcap = cap;
    }
    c->eps[c->neps++] = ep;
out:
    atomic_fetch_add(&c->refs, 1);
    return 0;
}

void tfi_cntr_detach(struct tfi_cntr *c, struct tfi_ep *ep)
{
    for (size_t i = 0; i < c->neps; i++) {
        if (c->eps[i] == ep) {
            c->eps[i] = c->eps[--c->neps];
            break;
        }
    }
    atomic_fetch_sub(&c->refs, 1);
}

static int cntr_close(struct fid *fid)
{
    struct tfi_cntr *c = (struct tfi_cntr *)fid;
    if (atomic_load(&c->refs) != 0) {
        TFI_WARN(FI_LOG_CNTR, "fi_close(cntr): bound to %d endpoint direction(s)\n",
                 atomic_load(&c->refs));
        return -FI_EBUSY;
    }
    free(c->eps);
    atomic_fetch_sub(&c->dom->refs, 1);
    free(c);
    return 0;
}

static int cntr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
    return -FI_ENOSYS;
}

static int cntr_control(struct fid *fid, int command, void *arg)
{
    struct tfi_cntr *c = (struct tfi_cntr *)fid;
    if (command == FI_GETWAITOBJ && arg != NULL) {
        *(enum fi_wait_obj *)arg = c->wait_obj;
        return 0;
    }
    return -FI_ENOSYS;
}

static int cntr_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
                         void *context)
{
    return -FI_ENOSYS;
}

static int cntr_tostr(const struct fid *fid, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return -FI_EINVAL;
    strncpy(buf, "tern cntr", len - 1);
    buf[len - 1] = '\0';
    return 0;
}

static int cntr_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops, void *context)
{
    return -FI_ENOSYS;
}

static struct fi_ops cntr_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = cntr_close,
    .bind = cntr_bind,
    .control = cntr_control,
    .ops_open = cntr_ops_open,
    .tostr = cntr_tostr,
    .ops_set = cntr_ops_set,
};

int tfi_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **out,
                  void *context)
{
    if (domain == NULL || out == NULL)
        return -FI_EINVAL;
    enum fi_wait_obj wait = FI_WAIT_NONE;
    if (attr != NULL) {
        if (attr->events != FI_CNTR_EVENTS_COMP || attr->flags != 0)
            return -FI_EINVAL;
        switch (attr->wait_obj) {
        case FI_WAIT_NONE:
        case FI_WAIT_UNSPEC:
        case FI_WAIT_YIELD:
            wait = attr->wait_obj;
            break;
        default:
            TFI_INFO(FI_LOG_CNTR,
                     "fi_cntr_open: wait object %d: tern counters offer "
                     "FI_WAIT_NONE, FI_WAIT_UNSPEC or FI_WAIT_YIELD\n",
                     (int)attr->wait_obj);
            return -FI_ENOSYS;
        }
    }
    struct tfi_cntr *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return -FI_ENOMEM;
    c->dom = (struct tfi_domain *)domain;
    c->wait_obj = wait;
    atomic_init(&c->value, 0);
    atomic_init(&c->err, 0);
    atomic_init(&c->refs, 0);
    c->cntr.fid.fclass = FI_CLASS_CNTR;
    c->cntr.fid.context = context;
    c->cntr.fid.ops = &cntr_fi_ops;
    c->cntr.ops = &cntr_ops;
    atomic_fetch_add(&c->dom->refs, 1);
    *out = &c->cntr;
    return 0;
}
