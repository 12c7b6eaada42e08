/*
 * The fabric: one object per fi_fabric call, the parent of domains and
 * EQs.  It holds no tern state: the tern context belongs to the domains
 * (fi_ctx.c).
 */
#include <stdlib.h>
#include <string.h>

#include "ofi/tern_fi.h"

bool tfi_is_fabric(const struct fid_fabric *f);

static int fabric_close(struct fid *fid)
{
    struct tfi_fabric *fab = (struct tfi_fabric *)fid;
    if (atomic_load(&fab->refs) != 0) {
        TFI_WARN(FI_LOG_FABRIC, "fi_close(fabric): %d domain(s) or EQ(s) still open\n",
                 atomic_load(&fab->refs));
        return -FI_EBUSY;
    }
    free(fab);
    return 0;
}

static int fabric_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
    return -FI_ENOSYS;
}

static int fabric_no_control(struct fid *fid, int command, void *arg)
{
    return -FI_ENOSYS;
}

static int fabric_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
                              void *context)
{
    return -FI_ENOSYS;
}

static int fabric_tostr(const struct fid *fid, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return -FI_EINVAL;
    strncpy(buf, "tern fabric", len - 1);
    buf[len - 1] = '\0';
    return 0;
}

static int fabric_no_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops,
                             void *context)
{
    return -FI_ENOSYS;
}

static struct fi_ops fabric_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = fabric_close,
    .bind = fabric_no_bind,
    .control = fabric_no_control,
    .ops_open = fabric_no_ops_open,
    .tostr = fabric_tostr,
    .ops_set = fabric_no_ops_set,
};

static int fabric_no_pep(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep,
                         void *context)
{
    return -FI_ENOSYS; /* FI_EP_RDM only: no passive endpoints */
}

static int fabric_no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
                               struct fid_wait **waitset)
{
    return -FI_ENOSYS;
}

static int fabric_no_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
    return -FI_ENOSYS; /* no wait objects to arm */
}

static int fabric_domain2(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
                          uint64_t flags, void *context)
{
    if (flags != 0)
        return -FI_EBADFLAGS; /* FI_PEER: tern is no peer provider */
    return tfi_domain_open(fabric, info, dom, context);
}

static struct fi_ops_fabric fabric_ops = {
    .size = sizeof(struct fi_ops_fabric),
    .domain = tfi_domain_open,
    .passive_ep = fabric_no_pep,
    .eq_open = tfi_eq_open,
    .wait_open = fabric_no_wait_open,
    .trywait = fabric_no_trywait,
    .domain2 = fabric_domain2,
};

bool tfi_is_fabric(const struct fid_fabric *f)
{
    return f != NULL && f->fid.fclass == FI_CLASS_FABRIC && f->ops == &fabric_ops;
}

int tfi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    if (attr == NULL || fabric == NULL)
        return -FI_EINVAL;
    if (attr->name != NULL && strcmp(attr->name, TFI_NAME) != 0) {
        TFI_INFO(FI_LOG_FABRIC, "fi_fabric: name %s is not \"%s\"\n", attr->name, TFI_NAME);
        return -FI_ENODATA;
    }
    struct tfi_fabric *fab = calloc(1, sizeof(*fab));
    if (fab == NULL)
        return -FI_ENOMEM;
    fab->fabric.fid.fclass = FI_CLASS_FABRIC;
    fab->fabric.fid.context = context;
    fab->fabric.fid.ops = &fabric_fi_ops;
    fab->fabric.ops = &fabric_ops;
    fab->fabric.api_version = attr->api_version;
    atomic_init(&fab->refs, 0);
    *fabric = &fab->fabric;
    return 0;
}
