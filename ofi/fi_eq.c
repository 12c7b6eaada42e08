/*
 * Event queues: a FIFO of events under a mutex, with a condition variable
 * for fi_eq_sread.  tern's RDM endpoints have no connection events; the
 * EQ carries FI_AV_COMPLETE (an AV opened with FI_EVENT, fi_av.c) and what
 * the application writes itself with fi_eq_write.  An EQ belongs to the
 * fabric, not to a domain, so it locks for itself whatever the threading
 * model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ofi/tern_fi.h"

struct tfi_eq_ev {
    struct tfi_eq_ev *next;
    uint32_t event;
    bool err;
    size_t len;
    unsigned char data[]; /* the entry as written (err: a struct fi_eq_err_entry) */
};

int tfi_eq_post(struct tfi_eq *eq, uint32_t event, const void *buf, size_t len, bool err)
{
    struct tfi_eq_ev *ev = malloc(sizeof(*ev) + len);
    if (ev == NULL)
        return -FI_ENOMEM;
    ev->next = NULL;
    ev->event = event;
    ev->err = err;
    ev->len = len;
    if (len > 0)
        memcpy(ev->data, buf, len);
    pthread_mutex_lock(&eq->lock);
    if (eq->last != NULL)
        eq->last->next = ev;
    else
        eq->first = ev;
    eq->last = ev;
    pthread_cond_broadcast(&eq->cond);
    pthread_mutex_unlock(&eq->lock);
    return 0;
}

static void pop(struct tfi_eq *eq)
{
    struct tfi_eq_ev *ev = eq->first;
    eq->first = ev->next;
    if (eq->first == NULL)
        eq->last = NULL;
    free(ev);
}

/* lock held */
static ssize_t read_locked(struct tfi_eq *eq, uint32_t *event, void *buf, size_t len,
                           uint64_t flags)
{
    struct tfi_eq_ev *ev = eq->first;
    if (ev == NULL)
        return -FI_EAGAIN;
    if (ev->err)
        return -FI_EAVAIL;
    if (len < ev->len)
        return -FI_ETOOSMALL;
    *event = ev->event;
    size_t n = ev->len;
    if (n > 0)
        memcpy(buf, ev->data, n);
    if (!(flags & FI_PEEK))
        pop(eq);
    return (ssize_t)n;
}

static ssize_t eq_read(struct fid_eq *f, uint32_t *event, void *buf, size_t len, uint64_t flags)
{
    struct tfi_eq *eq = (struct tfi_eq *)f;
    if (event == NULL || (buf == NULL && len > 0))
        return -FI_EINVAL;
    if (flags & ~(uint64_t)FI_PEEK)
        return -FI_EBADFLAGS;
    pthread_mutex_lock(&eq->lock);
    ssize_t n = read_locked(eq, event, buf, len, flags);
    pthread_mutex_unlock(&eq->lock);
    return n;
}

static ssize_t eq_readerr(struct fid_eq *f, struct fi_eq_err_entry *buf, uint64_t flags)
{
    struct tfi_eq *eq = (struct tfi_eq *)f;
    if (buf == NULL)
        return -FI_EINVAL;
    if (flags & ~(uint64_t)FI_PEEK)
        return -FI_EBADFLAGS;
    pthread_mutex_lock(&eq->lock);
    struct tfi_eq_ev *ev = eq->first;
    ssize_t n = -FI_EAGAIN;
    if (ev != NULL && ev->err) {
        struct fi_eq_err_entry e;
        memcpy(&e, ev->data, sizeof(e));
        buf->fid = e.fid;
        buf->context = e.context;
        buf->data = e.data;
        buf->err = e.err;
        buf->prov_errno = e.prov_errno;
        /* no provider error data: an empty buffer whatever was offered */
        buf->err_data = NULL;
        buf->err_data_size = 0;
        n = (ssize_t)sizeof(*buf);
        if (!(flags & FI_PEEK))
            pop(eq);
    }
    pthread_mutex_unlock(&eq->lock);
    return n;
}

static ssize_t eq_write(struct fid_eq *f, uint32_t event, const void *buf, size_t len,
                        uint64_t flags)
{
    struct tfi_eq *eq = (struct tfi_eq *)f;
    if (buf == NULL && len > 0)
        return -FI_EINVAL;
    if (flags != 0)
        return -FI_EBADFLAGS;
    int ret = tfi_eq_post(eq, event, buf, len, false);
    return ret != 0 ? ret : (ssize_t)len;
}

static ssize_t eq_sread(struct fid_eq *f, uint32_t *event, void *buf, size_t len, int timeout,
                        uint64_t flags)
{
    struct tfi_eq *eq = (struct tfi_eq *)f;
    if (event == NULL || (buf == NULL && len > 0))
        return -FI_EINVAL;
    if (flags & ~(uint64_t)FI_PEEK)
        return -FI_EBADFLAGS;
    if (eq->wait_obj == FI_WAIT_NONE)
        return -FI_EINVAL; /* fi_eq(3): no sread on an EQ without a wait object */
    struct timespec end;
    clock_gettime(CLOCK_REALTIME, &end);
    if (timeout >= 0) {
        end.tv_sec += timeout / 1000;
        end.tv_nsec += (long)(timeout % 1000) * 1000000L;
        if (end.tv_nsec >= 1000000000L) {
            end.tv_sec++;
            end.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&eq->lock);
    ssize_t n;
    while ((n = read_locked(eq, event, buf, len, flags)) == -FI_EAGAIN) {
        int rc = timeout >= 0 ? pthread_cond_timedwait(&eq->cond, &eq->lock, &end)
                              : pthread_cond_wait(&eq->cond, &eq->lock);
        if (rc == ETIMEDOUT) {
            n = read_locked(eq, event, buf, len, flags);
            break;
        }
    }
    pthread_mutex_unlock(&eq->lock);
    return n;
}

static const char *eq_strerror(struct fid_eq *f, int prov_errno, const void *err_data, char *buf,
                               size_t len)
{
    struct tfi_eq *eq = (struct tfi_eq *)f;
    const char *s = prov_errno != 0 ? tern_strerror((tern_status_t)prov_errno) : "no error";
    char *out = buf != NULL && len > 0 ? buf : eq->errbuf;
    size_t cap = buf != NULL && len > 0 ? len : sizeof(eq->errbuf);
    strncpy(out, s, cap - 1);
    out[cap - 1] = '\0';
    return out;
}

static struct fi_ops_eq eq_ops = {
    .size = sizeof(struct fi_ops_eq),
    .read = eq_read,
    .readerr = eq_readerr,
    .write = eq_write,
    .sread = eq_sread,
    .strerror = eq_strerror,
};

static int eq_close(struct fid *fid)
{
    struct tfi_eq *eq = (struct tfi_eq *)fid;
    if (atomic_load(&eq->refs) != 0) {
        TFI_WARN(FI_LOG_EQ, "fi_close(eq): bound to %d object(s)\n", atomic_load(&eq->refs));
        return -FI_EBUSY;
    }
    while (eq->first != NULL)
        pop(eq);
    atomic_fetch_sub(&eq->fab->refs, 1);
    pthread_cond_destroy(&eq->cond);
    pthread_mutex_destroy(&eq->lock);
    free(eq);
    return 0;
}

static int eq_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
    return -FI_ENOSYS; /* an EQ is bound to, it binds nothing */
}

static int eq_control(struct fid *fid, int command, void *arg)
{
    return -FI_ENOSYS; /* FI_GETWAIT: no file descriptor to hand out */
}

static int eq_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context)
{
    return -FI_ENOSYS;
}

static int eq_tostr(const struct fid *fid, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return -FI_EINVAL;
    strncpy(buf, "tern eq", len - 1);
    buf[len - 1] = '\0';
    return 0;
}

static int eq_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops, void *context)
{
    return -FI_ENOSYS;
}

static struct fi_ops eq_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = eq_close,
    .bind = eq_bind,
    .control = eq_control,
    .ops_open = eq_ops_open,
    .tostr = eq_tostr,
    .ops_set = eq_ops_set,
};

int tfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **out,
                void *context)
{
    if (fabric == NULL || attr == NULL || out == NULL)
        return -FI_EINVAL;
    if (attr->flags & ~(uint64_t)FI_AFFINITY) {
        TFI_INFO(FI_LOG_EQ, "fi_eq_open: flags 0x%llx unknown\n", (unsigned long long)attr->flags);
        return -FI_EBADFLAGS;
    }
    switch (attr->wait_obj) {
    case FI_WAIT_NONE:
    case FI_WAIT_UNSPEC:
    case FI_WAIT_MUTEX_COND:
    case FI_WAIT_YIELD:
        break;
    default:
        TFI_INFO(FI_LOG_EQ,
                 "fi_eq_open: wait object %d: tern EQs wait on a condition "
                 "variable (FI_WAIT_UNSPEC, FI_WAIT_MUTEX_COND) or not at all\n",
                 (int)attr->wait_obj);
        return -FI_ENOSYS;
    }
    struct tfi_eq *eq = calloc(1, sizeof(*eq));
    if (eq == NULL)
        return -FI_ENOMEM;
    eq->eq.fid.fclass = FI_CLASS_EQ;
    eq->eq.fid.context = context;
    eq->eq.fid.ops = &eq_fi_ops;
    eq->eq.ops = &eq_ops;
    eq->fab = (struct tfi_fabric *)fabric;
    eq->wait_obj = attr->wait_obj;
    pthread_mutex_init(&eq->lock, NULL);
    pthread_cond_init(&eq->cond, NULL);
    atomic_init(&eq->refs, 0);
    atomic_fetch_add(&eq->fab->refs, 1);
    *out = &eq->eq;
    return 0;
}
