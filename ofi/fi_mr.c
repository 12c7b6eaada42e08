/*
 * Memory regions.  tern moves tagged and msg data without registration
 * (the engine registers what a netmod needs, with its own cache), so a
 * registration for local access is bookkeeping: its arguments checked, a
 * key unique in the domain (the requested one, or one of the provider's
 * under FI_MR_PROV_KEY / FI_MR_BASIC), an opaque descriptor the data calls
 * ignore.  One open for remote access (FI_REMOTE_READ / FI_REMOTE_WRITE)
 * is also a tern region (tern_region_create over its one buffer), whose
 * packed key a peer fetches by the 64-bit key (fi_rma.c); closing it
 * destroys the region, and a peer's access through it is refused from
 * then on.
 */
#include <stdlib.h>
#include <string.h>

#include "ofi/tern_fi.h"

bool tfi_is_domain(const struct fid_domain *d);

struct tfi_mr {
    struct fid_mr mr;
    struct tfi_domain *dom;
    struct tfi_mr *next;  /* key chain */
    tern_region_t *reg;   /* remote access: its region; else NULL */
    uint64_t offset;      /* where offset addressing starts (fi_mr_attr's offset) */
};

#define ACCESS_BITS (FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)

static size_t slot(const struct tfi_domain *d, uint64_t key)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (d->mr_cap - 1);
}

static struct tfi_mr *find(const struct tfi_domain *d, uint64_t key)
{
    if (d->mr_cap == 0)
        return NULL;
    for (struct tfi_mr *m = d->mr_buckets[slot(d, key)]; m != NULL; m = m->next)
        if (m->mr.key == key)
            return m;
    return NULL;
}

static int insert(struct tfi_domain *d, struct tfi_mr *m)
{
    if (d->nmr + 1 > d->mr_cap) { /* grow: keep chains short */
        size_t cap = d->mr_cap ? d->mr_cap * 2 : 64;
        struct tfi_mr **b = calloc(cap, sizeof(*b));
        if (b == NULL)
            return -FI_ENOMEM;
        struct tfi_mr **old = d->mr_buckets;
        size_t oldcap = d->mr_cap;
        d->mr_buckets = b;
        d->mr_cap = cap;
        for (size_t i = 0; i < oldcap; i++) {
            for (struct tfi_mr *x = old[i], *nx; x != NULL; x = nx) {
                nx = x->next;
                size_t s = slot(d, x->mr.key);
                x->next = b[s];
                b[s] = x;
            }
        }
        free(old);
    }
    size_t s = slot(d, m->mr.key);
    m->next = d->mr_buckets[s];
    d->mr_buckets[s] = m;
    d->nmr++;
    return 0;
}

static void erase(struct tfi_domain *d, struct tfi_mr *m)
{
    for (struct tfi_mr **p = &d->mr_buckets[slot(d, m->mr.key)]; *p != NULL; p = &(*p)->next) {
        if (*p == m) {
            *p = m->next;
            d->nmr--;
            return;
        }
    }
}

void tfi_mr_keys_free(struct tfi_domain *d)
{
    free(d->mr_buckets); /* every region was closed: the domain's refs said so */
    d->mr_buckets = NULL;
    d->mr_cap = d->nmr = 0;
}

bool tfi_mr_remote(struct tfi_domain *d, uint64_t key, void *out, size_t *len, uint64_t *offset)
{
    const struct tfi_mr *m = find(d, key);
    if (m == NULL || m->reg == NULL || tern_region_pack(m->reg, out, len) != TERN_OK)
        return false;
    *offset = m->offset;
    return true;
}

static int mr_close(struct fid *fid)
{
    struct tfi_mr *m = (struct tfi_mr *)fid;
    struct tfi_domain *d = m->dom;
    tfi_lock(d);
    erase(d, m);
    if (m->reg != NULL) /* peers' accesses through it are refused from now */
        (void)tern_region_destroy(m->reg);
    tfi_unlock(d);
    atomic_fetch_sub(&d->refs, 1);
    free(m);
    return 0;
}

static int mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
    if (bfid == NULL)
        return -FI_EINVAL;
    if (bfid->fclass == FI_CLASS_EP || bfid->fclass == FI_CLASS_CNTR)
        return 0; /* nothing to do: no remote access to count or scope */
    return -FI_EINVAL;
}

static int mr_control(struct fid *fid, int command, void *arg)
{
    if (command == FI_ENABLE || command == FI_REFRESH)
        return 0;
    return -FI_ENOSYS;
}

static int mr_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context)
{
    return -FI_ENOSYS;
}

static int mr_tostr(const struct fid *fid, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return -FI_EINVAL;
    strncpy(buf, "tern mr", len - 1);
    buf[len - 1] = '\0';
    return 0;
}

static int mr_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops, void *context)
{
    return -FI_ENOSYS;
}

static struct fi_ops mr_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = mr_close,
    .bind = mr_bind,
    .control = mr_control,
    .ops_open = mr_ops_open,
    .tostr = mr_tostr,
    .ops_set = mr_ops_set,
};

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access,
                   uint64_t offset, uint64_t requested_key, uint64_t flags, struct fid_mr **out,
                   void *context)
{
    if (fid == NULL || fid->fclass != FI_CLASS_DOMAIN || !tfi_is_domain((struct fid_domain *)fid) ||
        out == NULL)
        return -FI_EINVAL;
    struct tfi_domain *d = (struct tfi_domain *)fid;
    if (count > TFI_MR_IOV_LIMIT || (iov == NULL && count > 0))
        return -FI_EINVAL;
    for (size_t i = 0; i < count; i++)
        if (iov[i].iov_base == NULL && iov[i].iov_len > 0)
            return -FI_EINVAL;
    if (access & ~(uint64_t)ACCESS_BITS)
        return -FI_EINVAL;
    if (flags != 0)
        return -FI_EBADFLAGS;
    bool remote = (access & (FI_REMOTE_READ | FI_REMOTE_WRITE)) != 0;
    if (remote && count != 1) {
        TFI_INFO(FI_LOG_MR, "fi_mr_regv: remote access to %zu buffers in one registration: tern "
                            "registers one (register each)\n", count);
        return -FI_EINVAL;
    }
    struct tfi_mr *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return -FI_ENOMEM;
    m->dom = d;
    m->offset = offset;
    if (remote && iov[0].iov_len > 0) {
        unsigned rf = ((access & FI_REMOTE_READ) ? TERN_REGION_READ : 0) |
                      ((access & FI_REMOTE_WRITE) ? TERN_REGION_WRITE : 0);
        tern_status_t st = tern_region_create(d->ctx, iov[0].iov_base, iov[0].iov_len, rf, &m->reg);
        if (st != TERN_OK) {
            TFI_INFO(FI_LOG_MR, "fi_mr_reg: %s (%s)\n", tern_strerror(st), tern_last_error());
            free(m);
            return tfi_errno(st);
        }
    }
    m->mr.fid.fclass = FI_CLASS_MR;
    m->mr.fid.context = context;
    m->mr.fid.ops = &mr_fi_ops;
    m->mr.mem_desc = m; /* opaque; the data calls ignore descriptors */
    bool prov_key = (d->mr_mode & (FI_MR_PROV_KEY | FI_MR_BASIC)) != 0;
    int ret = 0;
    tfi_lock(d);
    if (prov_key) {
        while (find(d, d->next_key) != NULL)
            d->next_key++;
        m->mr.key = d->next_key++;
    } else if (find(d, requested_key) != NULL) {
        ret = -FI_ENOKEY;
        TFI_INFO(FI_LOG_MR, "fi_mr_reg: key %llu is taken in this domain\n",
                 (unsigned long long)requested_key);
    } else {
        m->mr.key = requested_key;
    }
    if (ret == 0)
        ret = insert(d, m);
    tfi_unlock(d);
    if (ret != 0) {
        if (m->reg != NULL)
            (void)tern_region_destroy(m->reg);
        free(m);
        return ret;
    }
    atomic_fetch_add(&d->refs, 1);
    *out = &m->mr;
    return 0;
}

static int mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset,
                  uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    return mr_regv(fid, &iov, 1, access, offset, requested_key, flags, mr, context);
}

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags,
                      struct fid_mr **mr)
{
    if (attr == NULL)
        return -FI_EINVAL;
    if (attr->iface != FI_HMEM_SYSTEM)
        return -FI_ENOSYS; /* host memory only: no FI_HMEM */
    if (attr->auth_key_size != 0)
        return -FI_EINVAL;
    return mr_regv(fid, attr->mr_iov, attr->iov_count, attr->access, attr->offset,
                   attr->requested_key, flags, mr, attr->context);
}

struct fi_ops_mr tfi_mr_ops = {
    .size = sizeof(struct fi_ops_mr),
    .reg = mr_reg,
    .regv = mr_regv,
    .regattr = mr_regattr,
};
