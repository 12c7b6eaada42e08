/*
 * ibloop: protection domains, memory regions and their keys, address handles.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <endian.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ibloop.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/* ---- protection domains ------------------------------------------------- */
struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
    struct ibloop_pd *pd = calloc(1, sizeof(*pd));

    if (!pd) {
        errno = ENOMEM;
        return NULL;
    }
    pd->ibv.context = context;
    pd->id = atomic_fetch_add(&ibloop_fab.hdr->next_pd, 1);
    pd->ibv.handle = pd->id;
    atomic_fetch_add(&ibloop_ctx_of(context)->nobjs, 1);
    return &pd->ibv;
}

int ibv_dealloc_pd(struct ibv_pd *ibpd)
{
    struct ibloop_pd *pd = IBLOOP_CONTAINER(ibpd, struct ibloop_pd);

    if (atomic_load(&pd->refs))
        return EBUSY;
    atomic_fetch_sub(&ibloop_ctx_of(ibpd->context)->nobjs, 1);
    free(pd);
    return 0;
}

/* ---- keys ---------------------------------------------------------------- */
bool ibloop_mr_get(uint32_t key, struct ibloop_mr_snap *o)
{
    uint32_t idx = key >> 8;
    struct ibloop_wire_mr *m;

    if (!key || idx >= IBLOOP_NMR)
        return false;
    m = ibloop_mr(idx);
    /* A3: pairs with R3 of the registration */
    if (atomic_load_explicit(&m->key, memory_order_acquire) != key)
        return false;
    o->proc = atomic_load_explicit(&m->proc, memory_order_relaxed);
    o->pd = atomic_load_explicit(&m->pd, memory_order_relaxed);
    o->access = atomic_load_explicit(&m->access, memory_order_relaxed);
    o->addr = atomic_load_explicit(&m->addr, memory_order_relaxed);
    o->length = atomic_load_explicit(&m->length, memory_order_relaxed);
    o->iova = atomic_load_explicit(&m->iova, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&m->key, memory_order_relaxed) == key;
}

int ibloop_key_check(uint32_t key, uint32_t pd, uint32_t proc, uint64_t addr,
                     uint64_t len, uint32_t need, uint64_t *va)
{
    struct ibloop_mr_snap s;

    if (!ibloop_mr_get(key, &s) || s.proc != proc)
        return IBLOOP_KEY_BAD;
    if (s.pd != pd)
        return IBLOOP_KEY_PD;
    if (addr < s.iova || len > s.length || addr - s.iova > s.length - len)
        return IBLOOP_KEY_RANGE;
    if (need & ~s.access)
        return IBLOOP_KEY_ACCESS;
    *va = s.addr + (addr - s.iova);
    return IBLOOP_KEY_OK;
}

/* the range must be mapped, as pinning it would require */
static bool range_mapped(const void *addr, size_t len)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(pg - 1);
    uintptr_t end = ((uintptr_t)addr + len + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);
    unsigned char vec[256];

    for (uintptr_t p = start; p < end;) {
        size_t n = (end - p) / (size_t)pg;
        if (n > sizeof(vec))
            n = sizeof(vec);
        if (mincore((void *)p, n * (size_t)pg, vec) && errno == ENOMEM)
            return false;
        p += n * (size_t)pg;
    }
    return true;
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *ibpd, void *addr, size_t length,
                                uint64_t iova, unsigned int access)
{
    struct ibloop_pd *pd = IBLOOP_CONTAINER(ibpd, struct ibloop_pd);
    struct ibloop_wire_hdr *h;
    struct ibloop_wire_mr *m;
    struct ibloop_mr *mr;
    long fail_after = ibloop_env()->reg_fail_after;
    uint32_t i, key;

    IBLOOP_COUNT(reg_mr, 1);
    if (!ibpd || length == 0 || !addr) {
        errno = EINVAL;
        return NULL;
    }
    if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
        !(access & IBV_ACCESS_LOCAL_WRITE)) {
        errno = EINVAL;
        return NULL;
    }
    if (fail_after >= 0 && ibloop_reg_count_inc() >= fail_after) {
        IBLOOP_DBG("fault: registration fails (IBLOOP_FAULT_REG_FAIL_AFTER)");
        errno = ENOMEM;
        return NULL;
    }
    if (ibloop_env()->reg_max_bytes >= 0 && length > (size_t)ibloop_env()->reg_max_bytes) {
        /* what a memlock limit or a full translation table looks like */
        IBLOOP_DBG("fault: registration of %zu bytes fails (IBLOOP_FAULT_REG_MAX_BYTES)", length);
        errno = ENOMEM;
        return NULL;
    }
    if (!range_mapped(addr, length)) {
        errno = EFAULT;
        return NULL;
    }
    mr = calloc(1, sizeof(*mr));
    if (!mr) {
        errno = ENOMEM;
        return NULL;
    }
    h = ibloop_fab.hdr;
    ibloop_fab_lock();
    for (i = 1; i < h->hwm[7]; i++)
        if (!atomic_load(&ibloop_mr(i)->key))
            break;
    if (i == IBLOOP_NMR) {
        ibloop_fab_unlock();
        free(mr);
        errno = ENOMEM;
        return NULL;
    }
    if (i >= h->hwm[7])
        h->hwm[7] = i + 1;
    key = i << 8 | ((ibloop_new_gen() % 255) + 1);
    m = ibloop_mr(i);
    /* R3 (seqlock writer): the key read as 0 above is ordered before the
     * field stores, so a reader that sees a new field also sees key != old */
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&m->proc, ibloop_fab.proc, memory_order_relaxed);
    atomic_store_explicit(&m->pd, pd->id, memory_order_relaxed);
    atomic_store_explicit(&m->access, access, memory_order_relaxed);
    atomic_store_explicit(&m->addr, (uint64_t)(uintptr_t)addr, memory_order_relaxed);
    atomic_store_explicit(&m->length, length, memory_order_relaxed);
    atomic_store_explicit(&m->iova, iova, memory_order_relaxed);
    atomic_store_explicit(&m->ctx, ibloop_ctx_of(ibpd->context)->idx,
                          memory_order_relaxed);
    /* R3: the fields above before the key that validates them */
    atomic_store_explicit(&m->key, key, memory_order_release);
    ibloop_fab_unlock();
    mr->idx = i;
    mr->ibv.context = ibpd->context;
    mr->ibv.pd = ibpd;
    mr->ibv.addr = addr;
    mr->ibv.length = length;
    mr->ibv.handle = i;
    mr->ibv.lkey = key;
    mr->ibv.rkey = key;
    atomic_fetch_add(&pd->refs, 1);
    atomic_fetch_add(&ibloop_ctx_of(ibpd->context)->nobjs, 1);
    return &mr->ibv;
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
    return ibv_reg_mr_iova2(pd, addr, length, (uint64_t)(uintptr_t)addr,
                            (unsigned int)access);
}

struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
                               uint64_t iova, int access)
{
    return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

int ibv_dereg_mr(struct ibv_mr *ibmr)
{
    struct ibloop_mr *mr = IBLOOP_CONTAINER(ibmr, struct ibloop_mr);
    struct ibloop_wire_mr *m = ibloop_mr(mr->idx);
    uint32_t key = ibmr->lkey;

    IBLOOP_COUNT(dereg_mr, 1);
    if (!atomic_compare_exchange_strong(&m->key, &key, 0))
        return EINVAL;
    /* remote accesses that found the key live finish first (bounded: an
     * accessor killed inside one never leaves) */
    for (int i = 0; atomic_load(&m->users) != 0 && i < 200000; i++)
        sched_yield();
    atomic_fetch_sub(&IBLOOP_CONTAINER(ibmr->pd, struct ibloop_pd)->refs, 1);
    atomic_fetch_sub(&ibloop_ctx_of(ibmr->context)->nobjs, 1);
    free(mr);
    return 0;
}

/* ---- address handles ----------------------------------------------------- */
static int av_from_attr(const struct ibv_ah_attr *a, struct ibloop_wire_av *av)
{
    if (a->port_num != 1)
        return EINVAL;
    if (a->is_global && a->grh.sgid_index >= ibloop_gid_count())
        return EINVAL;
    if (ibloop_fab.roce && !a->is_global)
        return EINVAL; /* RoCE needs a GRH */
    memset(av, 0, sizeof(*av));
    av->dlid = a->dlid;
    av->is_global = a->is_global;
    memcpy(av->dgid, a->grh.dgid.raw, 16);
    av->sgid_index = a->grh.sgid_index;
    av->flow_label = a->grh.flow_label;
    av->hop_limit = a->grh.hop_limit;
    av->traffic_class = a->grh.traffic_class;
    av->sl = a->sl;
    av->src_path_bits = a->src_path_bits;
    av->static_rate = a->static_rate;
    av->port_num = a->port_num;
    return 0;
}

int ibloop_av_from_attr(const struct ibv_ah_attr *a, struct ibloop_wire_av *av)
{
    return av_from_attr(a, av);
}

void ibloop_av_to_attr(const struct ibloop_wire_av *av, struct ibv_ah_attr *a)
{
    memset(a, 0, sizeof(*a));
    a->dlid = (uint16_t)av->dlid;
    a->is_global = (uint8_t)av->is_global;
    memcpy(a->grh.dgid.raw, av->dgid, 16);
    a->grh.sgid_index = (uint8_t)av->sgid_index;
    a->grh.flow_label = av->flow_label;
    a->grh.hop_limit = av->hop_limit;
    a->grh.traffic_class = av->traffic_class;
    a->sl = av->sl;
    a->src_path_bits = av->src_path_bits;
    a->static_rate = av->static_rate;
    a->port_num = av->port_num;
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
    struct ibloop_ah *ah;
    struct ibloop_wire_av av;
    int rc;

    if (!pd || !attr) {
        errno = EINVAL;
        return NULL;
    }
    if ((rc = av_from_attr(attr, &av))) {
        errno = rc;
        return NULL;
    }
    ah = calloc(1, sizeof(*ah));
    if (!ah) {
        errno = ENOMEM;
        return NULL;
    }
    ah->av = av;
    ah->ibv.context = pd->context;
    ah->ibv.pd = pd;
    atomic_fetch_add(&IBLOOP_CONTAINER(pd, struct ibloop_pd)->refs, 1);
    atomic_fetch_add(&ibloop_ctx_of(pd->context)->nobjs, 1);
    return &ah->ibv;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
    atomic_fetch_sub(&IBLOOP_CONTAINER(ah->pd, struct ibloop_pd)->refs, 1);
    atomic_fetch_sub(&ibloop_ctx_of(ah->context)->nobjs, 1);
    free(ah);
    return 0;
}

int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
                        struct ibv_wc *wc, struct ibv_grh *grh,
                        struct ibv_ah_attr *ah_attr)
{
    const uint8_t *raw = (const uint8_t *)grh;
    union ibv_gid mine;

    memset(ah_attr, 0, sizeof(*ah_attr));
    ah_attr->dlid = wc->slid;
    ah_attr->sl = wc->sl;
    ah_attr->src_path_bits = wc->dlid_path_bits;
    ah_attr->port_num = port_num;
    if (!(wc->wc_flags & IBV_WC_GRH))
        return 0;
    ah_attr->is_global = 1;
    ah_attr->grh.hop_limit = 0xff;
    if (ibloop_fab.roce && raw[20] == 0x45) {
        /* RoCE v2 over IPv4: the IPv4 header is in the last 20 bytes */
        ah_attr->grh.dgid.raw[10] = 0xff;
        ah_attr->grh.dgid.raw[11] = 0xff;
        memcpy(ah_attr->grh.dgid.raw + 12, raw + 20 + 12, 4);
        ah_attr->grh.sgid_index = 1;
        return 0;
    }
    ah_attr->grh.dgid = grh->sgid;
    ah_attr->grh.flow_label = be32toh(grh->version_tclass_flow) & 0xfffff;
    ah_attr->grh.traffic_class = (uint8_t)(be32toh(grh->version_tclass_flow) >> 20);
    for (int i = 0; i < ibloop_gid_count(); i++) {
        ibloop_gid(ibloop_fab.lid, i, &mine);
        if (!memcmp(mine.raw, grh->dgid.raw, 16)) {
            ah_attr->grh.sgid_index = (uint8_t)i;
            return 0;
        }
    }
    errno = ENOENT;
    return -1;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
                                     struct ibv_grh *grh, uint8_t port_num)
{
    struct ibv_ah_attr a;

    if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &a))
        return NULL;
    return ibv_create_ah(pd, &a);
}
