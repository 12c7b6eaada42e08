/*
 * Address vectors and the names fi_getname hands out.
 *
 * A name is one of two formats of the provider's own (little endian):
 *  - compact, 16 bytes, inside a PMIx job (the job is wired by tern_init,
 *    and Open MPI passes fi_getname a 64-byte buffer): "TFIC", version 1,
 *    the worker index, FNV-1a of tern_job_name(), the rank.  Inserted, it
 *    is that rank's peer id.
 *  - full, outside one: "TFIA", version 1, the length of the tern worker
 *    address that follows (tern_worker_address), inserted with
 *    tern_peer_insert.
 * Both say their own length, so fi_av_insert walks count of them laid end
 * to end.  FI_AV_MAP and FI_AV_TABLE are one table here: fi_addr_t is the
 * index (in insertion order, as FI_AV_TABLE requires), so the data path
 * finds a peer id in one array load, and by_peer answers FI_SOURCE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ofi/tern_fi.h"

#define NAME_HDR 16
#define MAGIC_COMPACT 0x43494654u /* "TFIC" */
#define MAGIC_FULL 0x41494654u    /* "TFIA" */
#define NAME_VERSION 1

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int tfi_name(tern_context_t *ctx, tern_worker_t *w, void *addr, size_t *addrlen)
{
    if (ctx == NULL || w == NULL || addrlen == NULL)
        return -FI_EINVAL;
    uint8_t *p = addr;
    if (tfi_ctx_pmix()) {
        if (p == NULL || *addrlen < NAME_HDR) {
            *addrlen = NAME_HDR;
            return -FI_ETOOSMALL;
        }
        put32(p, MAGIC_COMPACT);
        put16(p + 4, NAME_VERSION);
        put16(p + 6, (uint16_t)tern_worker_index(w));
        put32(p + 8, tfi_ctx_job_hash());
        put32(p + 12, (uint32_t)tern_rank(ctx));
        *addrlen = NAME_HDR;
        return 0;
    }
    size_t alen = 0;
    tern_status_t st = tern_worker_address(w, NULL, &alen);
    if (st != TERN_ERR_TRUNCATED && st != TERN_OK) {
        TFI_WARN(FI_LOG_EP_CTRL, "tern_worker_address: %s\n", tern_last_error());
        return tfi_errno(st);
    }
    if (p == NULL || *addrlen < NAME_HDR + alen) {
        *addrlen = NAME_HDR + alen;
        return -FI_ETOOSMALL;
    }
    st = tern_worker_address(w, p + NAME_HDR, &alen);
    if (st != TERN_OK) {
        TFI_WARN(FI_LOG_EP_CTRL, "tern_worker_address: %s\n", tern_last_error());
        return tfi_errno(st);
    }
    put32(p, MAGIC_FULL);
    put16(p + 4, NAME_VERSION);
    put16(p + 6, 0);
    put32(p + 8, (uint32_t)alen);
    put32(p + 12, 0);
    *addrlen = NAME_HDR + alen;
    return 0;
}

bool tfi_name_valid(const void *addr, size_t len)
{
    const uint8_t *p = addr;
    if (p == NULL || len < NAME_HDR || get16(p + 4) != NAME_VERSION)
        return false;
    if (get32(p) == MAGIC_COMPACT)
        return len == NAME_HDR;
    return get32(p) == MAGIC_FULL && get32(p + 8) > 0 && len == NAME_HDR + get32(p + 8);
}

/* One name at p: its length in *len (0: unknown, so the names after it
 * cannot be found either) and its peer id. */
static int decode(struct tfi_av *av, const uint8_t *p, size_t *len, int *peer)
{
    *len = 0;
    uint32_t magic = get32(p);
    if (magic != MAGIC_COMPACT && magic != MAGIC_FULL) {
        TFI_INFO(FI_LOG_AV, "fi_av_insert: not a tern name (magic 0x%08x)\n", magic);
        return -FI_EINVAL;
    }
    if (get16(p + 4) != NAME_VERSION) {
        TFI_INFO(FI_LOG_AV, "fi_av_insert: a tern name of version %u (this is %u)\n", get16(p + 4),
                 NAME_VERSION);
        return -FI_EINVAL;
    }
    if (magic == MAGIC_COMPACT) {
        *len = NAME_HDR;
        uint32_t job = get32(p + 8), rank = get32(p + 12);
        if (!tfi_ctx_pmix() || job != tfi_ctx_job_hash()) {
            TFI_INFO(FI_LOG_AV,
                     "fi_av_insert: a compact name of job %08x; this process's job is %08x%s "
                     "(compact names are for the ranks of one PMIx job)\n",
                     job, tfi_ctx_job_hash(), tfi_ctx_pmix() ? "" : ", not a PMIx job");
            return -FI_EINVAL;
        }
        if (rank >= (uint32_t)tern_size(av->dom->ctx)) {
            TFI_INFO(FI_LOG_AV, "fi_av_insert: rank %u of a job of %d\n", rank,
                     tern_size(av->dom->ctx));
            return -FI_EINVAL;
        }
        *peer = (int)rank;
        return 0;
    }
    uint32_t alen = get32(p + 8);
    if (alen == 0 || alen > TERN_ADDRESS_MAX) {
        TFI_INFO(FI_LOG_AV, "fi_av_insert: a tern name of %u address bytes\n", alen);
        return -FI_EINVAL;
    }
    *len = NAME_HDR + alen;
    tern_status_t st = tern_peer_insert(av->dom->ctx, p + NAME_HDR, alen, peer);
    if (st != TERN_OK) {
        TFI_WARN(FI_LOG_AV, "fi_av_insert: %s\n", tern_last_error());
        return tfi_errno(st);
    }
    return 0;
}

static int add(struct tfi_av *av, const void *name, size_t len, int peer, fi_addr_t *out)
{
    if (av->n == av->cap) {
        size_t cap = av->cap ? av->cap * 2 : 64;
        struct tfi_av_entry *t = realloc(av->tab, cap * sizeof(*t));
        if (t == NULL)
            return -FI_ENOMEM;
        av->tab = t;
        av->cap = cap;
    }
    if ((size_t)peer >= av->npeer) {
        size_t np = av->npeer ? av->npeer : 64;
        while (np <= (size_t)peer)
            np *= 2;
        fi_addr_t *b = realloc(av->by_peer, np * sizeof(*b));
        if (b == NULL)
            return -FI_ENOMEM;
        for (size_t i = av->npeer; i < np; i++)
            b[i] = FI_ADDR_NOTAVAIL;
        av->by_peer = b;
        av->npeer = np;
    }
    void *copy = malloc(len);
    if (copy == NULL)
        return -FI_ENOMEM;
    memcpy(copy, name, len);
    fi_addr_t a = av->n++;
    av->tab[a] = (struct tfi_av_entry){.peer = peer, .len = len, .name = copy};
    if (av->by_peer[peer] == FI_ADDR_NOTAVAIL)
        av->by_peer[peer] = a;
    *out = a;
    return 0;
}

static int av_insert(struct fid_av *f, const void *addr, size_t count, fi_addr_t *fi_addr,
                     uint64_t flags, void *context)
{
    struct tfi_av *av = (struct tfi_av *)f;
    if (addr == NULL && count > 0)
        return -FI_EINVAL;
    if (flags & ~(uint64_t)(FI_MORE | FI_SYNC_ERR))
        return -FI_EBADFLAGS; /* FI_AV_USER_ID: no user ids */
    bool async = av->event;
    if (async && av->eq == NULL)
        return -FI_ENOEQ; /* fi_av(3): FI_EVENT inserts before an EQ is bound */
    if ((flags & FI_SYNC_ERR) && (async || context == NULL))
        return -FI_EINVAL;
    int *errs = (flags & FI_SYNC_ERR) ? context : NULL;
    const uint8_t *p = addr;
    size_t ok = 0;
    bool lost = false; /* a name of unknown length: the rest cannot be found */
    int ret = 0;
    tfi_lock(av->dom);
    for (size_t i = 0; i < count && ret == 0; i++) {
        size_t len = 0;
        int peer = -1, err = lost ? -FI_EINVAL : decode(av, p, &len, &peer);
        lost = lost || len == 0;
        fi_addr_t a = FI_ADDR_NOTAVAIL;
        if (err == 0)
            err = add(av, p, len, peer, &a);
        if (err == -FI_ENOMEM)
            ret = err;
        ok += err == 0;
        if (fi_addr != NULL)
            fi_addr[i] = a;
        if (errs != NULL)
            errs[i] = -err;
        if (err != 0 && async) {
            struct fi_eq_err_entry e = {
                .fid = &av->av.fid, .context = context, .data = i, .err = -err};
            tfi_eq_post(av->eq, FI_AV_COMPLETE, &e, sizeof(e), true);
        }
        p += len;
    }
    tfi_unlock(av->dom);
    if (ret != 0)
        return ret;
    if (async) {
        struct fi_eq_entry e = {.fid = &av->av.fid, .context = context, .data = ok};
        ret = tfi_eq_post(av->eq, FI_AV_COMPLETE, &e, sizeof(e), false);
        return ret;
    }
    return (int)ok;
}

static int av_insertsvc(struct fid_av *f, const char *node, const char *service, fi_addr_t *fi_addr,
                        uint64_t flags, void *context)
{
    return -FI_ENOSYS; /* no node / service resolution: names come from fi_getname */
}

static int av_insertsym(struct fid_av *f, const char *node, size_t nodecnt, const char *service,
                        size_t svccnt, fi_addr_t *fi_addr, uint64_t flags, void *context)
{
    return -FI_ENOSYS;
}

static int av_remove(struct fid_av *f, fi_addr_t *fi_addr, size_t count, uint64_t flags)
{
    struct tfi_av *av = (struct tfi_av *)f;
    if ((fi_addr == NULL && count > 0) || flags != 0)
        return -FI_EINVAL;
    int ret = 0;
    tfi_lock(av->dom);
    for (size_t i = 0; i < count; i++)
        if (tfi_av_peer(av, fi_addr[i]) < 0)
            ret = -FI_EINVAL;
    for (size_t i = 0; i < count && ret == 0; i++) {
        /* the tern peer stays (tern has no call to forget one); the
         * address is invalid until inserted again */
        struct tfi_av_entry *e = &av->tab[fi_addr[i]];
        int peer = e->peer;
        e->peer = -1;
        free(e->name);
        e->name = NULL;
        e->len = 0;
        if (av->by_peer[peer] == fi_addr[i]) { /* another name of that peer, if any */
            av->by_peer[peer] = FI_ADDR_NOTAVAIL;
            for (size_t k = 0; k < av->n; k++)
                if (av->tab[k].peer == peer) {
                    av->by_peer[peer] = k;
                    break;
                }
        }
    }
    tfi_unlock(av->dom);
    return ret;
}

static int av_lookup(struct fid_av *f, fi_addr_t fi_addr, void *addr, size_t *addrlen)
{
    struct tfi_av *av = (struct tfi_av *)f;
    if (addrlen == NULL || (addr == NULL && *addrlen > 0))
        return -FI_EINVAL;
    tfi_lock(av->dom);
    int ret = 0;
    if (tfi_av_peer(av, fi_addr) < 0) {
        ret = -FI_EINVAL;
    } else {
        const struct tfi_av_entry *e = &av->tab[fi_addr];
        size_t n = e->len < *addrlen ? e->len : *addrlen;
        if (n > 0) /* addr may be NULL with a 0 length: asking the size */
            memcpy(addr, e->name, n);
        *addrlen = e->len;
    }
    tfi_unlock(av->dom);
    return ret;
}

static const char *av_straddr(struct fid_av *f, const void *addr, char *buf, size_t *len)
{
    if (addr == NULL || len == NULL)
        return NULL;
    const uint8_t *p = addr;
    char s[96];
    uint32_t magic = get32(p);
    if (magic == MAGIC_COMPACT)
        snprintf(s, sizeof(s), "tern://job-%08x/rank-%u/worker-%u", get32(p + 8), get32(p + 12),
                 get16(p + 6));
    else if (magic == MAGIC_FULL)
        snprintf(s, sizeof(s), "tern://address/%u-bytes", get32(p + 8));
    else
        snprintf(s, sizeof(s), "tern://not-a-tern-name");
    size_t need = strlen(s) + 1;
    if (buf != NULL && *len > 0) {
        size_t n = need < *len ? need : *len;
        memcpy(buf, s, n - 1);
        buf[n - 1] = '\0';
    }
    *len = need;
    return buf;
}

static struct fi_ops_av av_ops = {
    .size = sizeof(struct fi_ops_av),
    .insert = av_insert,
    .insertsvc = av_insertsvc,
    .insertsym = av_insertsym,
    .remove = av_remove,
    .lookup = av_lookup,
    .straddr = av_straddr,
    .av_set = NULL, /* fi_av_set checks the slot: -FI_ENOSYS */
};

static int av_close(struct fid *fid)
{
    struct tfi_av *av = (struct tfi_av *)fid;
    if (atomic_load(&av->refs) != 0) {
        TFI_WARN(FI_LOG_AV, "fi_close(av): bound to %d endpoint(s)\n", atomic_load(&av->refs));
        return -FI_EBUSY;
    }
    for (size_t i = 0; i < av->n; i++)
        free(av->tab[i].name);
    free(av->tab);
    free(av->by_peer);
    if (av->eq != NULL)
        atomic_fetch_sub(&av->eq->refs, 1);
    atomic_fetch_sub(&av->dom->refs, 1);
    free(av);
    return 0;
}

static int av_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
    struct tfi_av *av = (struct tfi_av *)fid;
    if (bfid == NULL || bfid->fclass != FI_CLASS_EQ || flags != 0)
        return -FI_EINVAL;
    if (av->eq != NULL)
        return -FI_EINVAL; /* one EQ */
    av->eq = (struct tfi_eq *)bfid;
    atomic_fetch_add(&av->eq->refs, 1);
    return 0;
}

static int av_control(struct fid *fid, int command, void *arg)
{
    return -FI_ENOSYS;
}

static int av_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context)
{
    return -FI_ENOSYS;
}

static int av_tostr(const struct fid *fid, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return -FI_EINVAL;
    strncpy(buf, "tern av", len - 1);
    buf[len - 1] = '\0';
    return 0;
}

static int av_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops, void *context)
{
    return -FI_ENOSYS;
}

static struct fi_ops av_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = av_close,
    .bind = av_bind,
    .control = av_control,
    .ops_open = av_ops_open,
    .tostr = av_tostr,
    .ops_set = av_ops_set,
};

int tfi_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **out,
                void *context)
{
    if (domain == NULL || attr == NULL || out == NULL)
        return -FI_EINVAL;
    if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_MAP && attr->type != FI_AV_TABLE)
        return -FI_EINVAL;
    if (attr->rx_ctx_bits != 0) {
        TFI_INFO(FI_LOG_AV, "fi_av_open: rx_ctx_bits: no scalable endpoints\n");
        return -FI_EINVAL;
    }
    if (attr->name != NULL || (attr->flags & FI_READ)) {
        TFI_INFO(FI_LOG_AV, "fi_av_open: no shared (named) AVs\n");
        return -FI_ENOSYS;
    }
    if (attr->flags & ~(uint64_t)(FI_EVENT | FI_SYMMETRIC))
        return -FI_EBADFLAGS;
    struct tfi_av *av = calloc(1, sizeof(*av));
    if (av == NULL)
        return -FI_ENOMEM;
    if (attr->type == FI_AV_UNSPEC)
        attr->type = FI_AV_MAP; /* told back, as fi_av(3) asks */
    av->type = attr->type;
    av->dom = (struct tfi_domain *)domain;
    atomic_init(&av->refs, 0);
    av->av.fid.fclass = FI_CLASS_AV;
    av->av.fid.context = context;
    av->av.fid.ops = &av_fi_ops;
    av->av.ops = &av_ops;
    /* FI_EVENT: inserts report on the EQ bound later; until then they fail */
    av->event = (attr->flags & FI_EVENT) != 0;
    atomic_fetch_add(&av->dom->refs, 1);
    *out = &av->av;
    return 0;
}
