/*
 * The domain: a reference on the process's tern context (fi_ctx.c), the
 * threading model (a mutex unless FI_THREAD_DOMAIN), the pool of
 * operation records every posted operation takes one of, and the MR keys
 * (fi_mr.c).  Closing it while anything opened on it is still open is
 * -FI_EBUSY; closing the last domain finalizes the tern context, which in a
 * PMIx job is collective (MPI_Finalize closes it on every rank).
 */
#include <stdlib.h>
#include <string.h>

#include "ofi/tern_fi.h"

bool tfi_is_domain(const struct fid_domain *d);

#define OPS_PER_CHUNK 256

struct tfi_op *tfi_op_get(struct tfi_domain *d)
{
    if (d->free_ops == NULL) {
        void **chunks = realloc(d->chunks, (d->nchunks + 1) * sizeof(*chunks));
        if (chunks == NULL)
            return NULL;
        d->chunks = chunks;
        struct tfi_op *c = calloc(OPS_PER_CHUNK, sizeof(*c));
        if (c == NULL)
            return NULL;
        d->chunks[d->nchunks++] = c;
        for (size_t i = 0; i < OPS_PER_CHUNK; i++) {
            c[i].next = d->free_ops;
            d->free_ops = &c[i];
        }
    }
    struct tfi_op *op = d->free_ops;
    d->free_ops = op->next;
    op->next = op->prev = op; /* tracked by no endpoint */
    op->req = NULL;
    return op;
}

void tfi_op_put(struct tfi_domain *d, struct tfi_op *op)
{
    free(op->aux); /* an inject's bounce buffer (the others clear it first) */
    op->aux = NULL;
    op->req = NULL;
    op->ep = NULL;
    op->kind = 0;
    op->next = d->free_ops;
    d->free_ops = op;
}

static int domain_close(struct fid *fid)
{
    struct tfi_domain *d = (struct tfi_domain *)fid;
    if (atomic_load(&d->refs) != 0) {
        TFI_WARN(FI_LOG_DOMAIN, "fi_close(domain): %d object(s) opened on it still open\n",
                 atomic_load(&d->refs));
        return -FI_EBUSY;
    }
    /* the last domain finalizes tern: after that no engine completion
     * can name one of the ops freed below */
    tfi_ctx_release();
    for (size_t i = 0; i < d->nchunks; i++)
        free(d->chunks[i]);
    free(d->chunks);
    tfi_mr_keys_free(d);
    tfi_rkeys_free(d);
    pthread_mutex_destroy(&d->lock);
    atomic_fetch_sub(&d->fab->refs, 1);
    free(d);
    return 0;
}

static int domain_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
    return -FI_ENOSYS; /* registrations complete at once: no FI_REG_MR events */
}

static int domain_control(struct fid *fid, int command, void *arg)
{
    return -FI_ENOSYS;
}

static int domain_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
                           void *context)
{
    return -FI_ENOSYS;
}

static int domain_tostr(const struct fid *fid, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return -FI_EINVAL;
    strncpy(buf, "tern domain", len - 1);
    buf[len - 1] = '\0';
    return 0;
}

static int domain_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops,
                          void *context)
{
    return -FI_ENOSYS;
}

static struct fi_ops domain_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = domain_close,
    .bind = domain_bind,
    .control = domain_control,
    .ops_open = domain_ops_open,
    .tostr = domain_tostr,
    .ops_set = domain_ops_set,
};

static int domain_no_sep(struct fid_domain *domain, struct fi_info *info, struct fid_ep **sep,
                         void *context)
{
    return -FI_ENOSYS; /* one worker per endpoint: no scalable endpoints */
}

static int domain_no_poll(struct fid_domain *domain, struct fi_poll_attr *attr,
                          struct fid_poll **pollset)
{
    return -FI_ENOSYS;
}

static int domain_no_stx(struct fid_domain *domain, struct fi_tx_attr *attr, struct fid_stx **stx,
                         void *context)
{
    return -FI_ENOSYS;
}

static int domain_no_srx(struct fid_domain *domain, struct fi_rx_attr *attr, struct fid_ep **rx_ep,
                         void *context)
{
    return -FI_ENOSYS;
}

static int domain_no_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
                                  enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags)
{
    return -FI_EOPNOTSUPP; /* FI_ATOMIC comes with tern's one-sided work */
}

static int domain_no_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
                                      struct fi_collective_attr *attr, uint64_t flags)
{
    return -FI_EOPNOTSUPP;
}

static int domain_endpoint2(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep,
                            uint64_t flags, void *context)
{
    if (flags != 0)
        return -FI_EBADFLAGS;
    return tfi_endpoint(domain, info, ep, context);
}

static struct fi_ops_domain domain_ops = {
    .size = sizeof(struct fi_ops_domain),
    .av_open = tfi_av_open,
    .cq_open = tfi_cq_open,
    .endpoint = tfi_endpoint,
    .scalable_ep = domain_no_sep,
    .cntr_open = tfi_cntr_open,
    .poll_open = domain_no_poll,
    .stx_ctx = domain_no_stx,
    .srx_ctx = domain_no_srx,
    .query_atomic = domain_no_query_atomic,
    .query_collective = domain_no_query_collective,
    .endpoint2 = domain_endpoint2,
};

bool tfi_is_domain(const struct fid_domain *d)
{
    return d != NULL && d->fid.fclass == FI_CLASS_DOMAIN && d->ops == &domain_ops;
}

int tfi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **out,
                    void *context)
{
    if (fabric == NULL || info == NULL || out == NULL)
        return -FI_EINVAL;
    int ret = tfi_check_info(fabric->api_version, info);
    if (ret != 0) {
        TFI_WARN(FI_LOG_DOMAIN, "fi_domain: the fi_info is not one tern can honour (see the "
                                "FI_LOG_LEVEL=info line before)\n");
        return -FI_EINVAL;
    }
    struct tfi_domain *d = calloc(1, sizeof(*d));
    if (d == NULL)
        return -FI_ENOMEM;
    const struct fi_domain_attr *da = info->domain_attr;
    d->threading =
        da != NULL && da->threading != FI_THREAD_UNSPEC ? da->threading : FI_THREAD_DOMAIN;
    d->locked = d->threading != FI_THREAD_DOMAIN;
    d->caps = info->caps != 0 ? info->caps : TFI_CAPS;
    d->mr_mode = da != NULL ? da->mr_mode : 0;
    d->api_version = fabric->api_version;
    struct tfi_settings s;
    tfi_settings(&s);
    d->inject_size = info->tx_attr != NULL && info->tx_attr->inject_size != 0
                         ? info->tx_attr->inject_size
                         : s.inject_size;
    d->next_key = 1;
    atomic_init(&d->refs, 0);
    pthread_mutex_init(&d->lock, NULL);
    ret = tfi_ctx_acquire(&d->ctx);
    if (ret != 0) {
        pthread_mutex_destroy(&d->lock);
        free(d);
        return ret;
    }
    d->fab = (struct tfi_fabric *)fabric;
    atomic_fetch_add(&d->fab->refs, 1);
    d->domain.fid.fclass = FI_CLASS_DOMAIN;
    d->domain.fid.context = context;
    d->domain.fid.ops = &domain_fi_ops;
    d->domain.ops = &domain_ops;
    d->domain.mr = &tfi_mr_ops;
    *out = &d->domain;
    return 0;
}
