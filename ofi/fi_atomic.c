/*
 * FI_ATOMIC on tern's one-sided API: fi_atomic (and its v, msg and inject
 * forms) and fi_fetch_atomic are tern_accumulate (every element atomic at
 * the target, against every other atomic of the provider's and tern's);
 * fi_compare_atomic's FI_CSWAP on one integer is tern_atomic.  Keys and
 * addresses resolve as fi_rma.c says, and a non-fetching atomic is followed
 * by a flush whose completion is its own, as a write is (a fetching one
 * completes with its result, a refusal at the target with it).
 *
 * Offered: FI_MIN, FI_MAX, FI_SUM, FI_PROD on the integer, real and (SUM,
 * PROD) complex types; FI_LOR, FI_LAND, FI_LXOR, FI_BOR, FI_BAND, FI_BXOR
 * on the integers; FI_ATOMIC_WRITE on every type; FI_ATOMIC_READ (fetch
 * only); FI_CSWAP on one element of an integer type (compare only).  Not:
 * the other compare operations (FI_CSWAP_NE ... FI_MSWAP), more than one
 * ioc per side.  fi_atomicvalid and friends answer for each pair.
 */
#include <stdlib.h>
#include <string.h>

#include "ofi/tern_fi.h"

static struct tfi_op silent_atomic = {.flags = FI_ATOMIC | FI_WRITE, .kind = 0};
static struct tfi_op silent_fetch = {.flags = FI_ATOMIC | FI_READ, .kind = 0};
static struct tfi_op quiet_atomic = {.flags = FI_ATOMIC | FI_WRITE, .kind = TFI_OP_QUIET};

static int dt_of(enum fi_datatype t)
{
    switch (t) {
    case FI_INT8: return TERN_DT_INT8;
    case FI_UINT8: return TERN_DT_UINT8;
    case FI_INT16: return TERN_DT_INT16;
    case FI_UINT16: return TERN_DT_UINT16;
    case FI_INT32: return TERN_DT_INT32;
    case FI_UINT32: return TERN_DT_UINT32;
    case FI_INT64: return TERN_DT_INT64;
    case FI_UINT64: return TERN_DT_UINT64;
    case FI_FLOAT: return TERN_DT_FLOAT;
    case FI_DOUBLE: return TERN_DT_DOUBLE;
    case FI_FLOAT_COMPLEX: return TERN_DT_FLOAT_COMPLEX;
    case FI_DOUBLE_COMPLEX: return TERN_DT_DOUBLE_COMPLEX;
    case FI_LONG_DOUBLE: return TERN_DT_LONG_DOUBLE;
    case FI_LONG_DOUBLE_COMPLEX: return TERN_DT_LONG_DOUBLE_COMPLEX;
    default: return 0;
    }
}

static int acc_of(enum fi_op op)
{
    switch (op) {
    case FI_MIN: return TERN_ACC_MIN;
    case FI_MAX: return TERN_ACC_MAX;
    case FI_SUM: return TERN_ACC_SUM;
    case FI_PROD: return TERN_ACC_PROD;
    case FI_LOR: return TERN_ACC_LOR;
    case FI_LAND: return TERN_ACC_LAND;
    case FI_BOR: return TERN_ACC_BOR;
    case FI_BAND: return TERN_ACC_BAND;
    case FI_LXOR: return TERN_ACC_LXOR;
    case FI_BXOR: return TERN_ACC_BXOR;
    case FI_ATOMIC_WRITE: return TERN_ACC_REPLACE;
    case FI_ATOMIC_READ: return TERN_ACC_NO_OP;
    default: return -1;
    }
}

/* does tern apply acc to dt (as MPI's reductions, plus write and read) */
static bool applies(int acc, int dt)
{
    if (dt == 0 || acc < 0)
        return false;
    if (acc == TERN_ACC_REPLACE || acc == TERN_ACC_NO_OP)
        return true;
    if (dt <= TERN_DT_UINT64)
        return true;
    if (dt == TERN_DT_FLOAT || dt == TERN_DT_DOUBLE || dt == TERN_DT_LONG_DOUBLE)
        return acc <= TERN_ACC_MAX;
    return acc == TERN_ACC_SUM || acc == TERN_ACC_PROD; /* complex */
}

/* the most elements one operation takes */
#define MAX_COUNT ((size_t)1 << 30)

static int valid(struct fid_ep *fep, enum fi_datatype datatype, enum fi_op op, size_t *count,
                 int kind)
{
    struct tfi_ep *ep = (struct tfi_ep *)fep;
    if (ep == NULL || count == NULL)
        return -FI_EINVAL;
    if (!(ep->caps & FI_ATOMIC))
        return -FI_EOPNOTSUPP;
    int dt = dt_of(datatype), acc = acc_of(op);
    bool ok;
    if (kind == 2) /* compare: FI_CSWAP on one integer */
        ok = op == FI_CSWAP && dt != 0 && dt <= TERN_DT_UINT64;
    else
        ok = applies(acc, dt) && (kind == 1 || acc != TERN_ACC_NO_OP);
    if (!ok)
        return -FI_EOPNOTSUPP;
    *count = kind == 2 ? 1 : MAX_COUNT;
    return 0;
}

static int atomic_valid(struct fid_ep *ep, enum fi_datatype dt, enum fi_op op, size_t *count)
{
    return valid(ep, dt, op, count, 0);
}
static int fetch_valid(struct fid_ep *ep, enum fi_datatype dt, enum fi_op op, size_t *count)
{
    return valid(ep, dt, op, count, 1);
}
static int compare_valid(struct fid_ep *ep, enum fi_datatype dt, enum fi_op op, size_t *count)
{
    return valid(ep, dt, op, count, 2);
}

/* One atomic as the calls give it. */
struct amo_args {
    const void *buf, *compare;
    void *result;
    size_t count;
    fi_addr_t addr;
    uint64_t raddr, key;
    enum fi_datatype datatype;
    enum fi_op op;
    void *context;
    uint64_t flags;
    int kind; /* 0 atomic, 1 fetch, 2 compare */
    bool inject_only;
};

static ssize_t amo_post(struct tfi_ep *ep, const struct amo_args *a)
{
    if (!ep->enabled)
        return -FI_EOPBADSTATE;
    size_t max;
    int ret = valid(&ep->ep, a->datatype, a->op, &max, a->kind);
    if (ret != 0)
        return ret;
    int dt = dt_of(a->datatype), acc = acc_of(a->op);
    size_t es = tern_dtype_size(dt);
    if (a->count == 0 || a->count > max || (a->buf == NULL && acc != TERN_ACC_NO_OP) ||
        (a->kind > 0 && a->result == NULL) || (a->kind == 2 && a->compare == NULL))
        return -FI_EINVAL;
    /* an inherited FI_INJECT does not apply to fetching atomics */
    bool inject = a->inject_only || (a->kind == 0 && (a->flags & FI_INJECT));
    if ((inject && a->count * es > ep->inject_size) || (a->inject_only && a->kind > 0))
        return -FI_EINVAL;
    struct tfi_domain *d = ep->dom;
    tfi_lock(d);
    int peer = tfi_av_peer(ep->av, a->addr);
    const tern_key_t *tkey = NULL;
    uint64_t raddr = 0;
    ret = peer < 0 ? -FI_EINVAL : tfi_rkey_resolve(ep, peer, a->key, a->raddr, &tkey, &raddr);
    if (ret != 0) {
        tfi_unlock(d);
        return ret;
    }
    void *bounce = NULL;
    const void *src = a->buf;
    if (inject) { /* the caller's buffer is free at return */
        if ((bounce = malloc(a->count * es)) == NULL) {
            tfi_unlock(d);
            return -FI_ENOMEM;
        }
        memcpy(bounce, a->buf, a->count * es);
        src = bounce;
    }
    bool want = !ep->tx_selective || (a->flags & FI_COMPLETION);
    tern_op_t top = {.flags = TERN_OP_CQ};
    struct tfi_op *rec;
    if (!inject && !want && ep->tx_cntr == NULL) {
        top.flags |= TERN_OP_CQ_ERRORS;
        rec = a->kind > 0 ? &silent_fetch : &silent_atomic;
    } else if ((rec = tfi_op_get(d)) != NULL) {
        rec->context = a->context;
        rec->ep = ep;
        rec->flags = FI_ATOMIC | (a->kind > 0 ? FI_READ : FI_WRITE);
        rec->kind = TFI_OP_POOLED | (want && !inject ? TFI_OP_COMP : 0);
        rec->aux = bounce;
    } else {
        free(bounce);
        tfi_unlock(d);
        return -FI_ENOMEM;
    }
    top.context = rec;
    /* a non-fetching atomic: the flush after it completes it (its own
     * failures dropped), or, with a copied buffer, reports failures only */
    bool flush = a->kind == 0;
    tern_op_t aop = top, fop = top;
    if (flush && bounce == NULL) {
        aop.flags = TERN_OP_CQ | TERN_OP_CQ_ERRORS;
        aop.context = &quiet_atomic;
    } else if (flush) {
        fop.flags = TERN_OP_CQ | TERN_OP_CQ_ERRORS;
        fop.context = &silent_atomic;
    }
    tern_status_t st;
    if (a->kind == 2) {
        uint64_t value = 0, compare = 0;
        memcpy(&value, src, es); /* the low bytes (x86-64: little-endian) */
        memcpy(&compare, a->compare, es);
        st = tern_atomic(ep->w, TERN_AMO_CSWAP, es, value, compare, a->result, tkey, raddr, &top,
                         NULL);
    } else {
        st = tern_accumulate(ep->w, acc, dt, acc == TERN_ACC_NO_OP ? NULL : src, a->count,
                             a->kind == 1 ? a->result : NULL, tkey, raddr, &aop, NULL);
    }
    return tfi_onesided_end(ep, rec, st, flush, peer, &fop, bounce);
}

static ssize_t a_atomic(struct fid_ep *fep, const void *buf, size_t count, void *desc,
                        fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype datatype,
                        enum fi_op op, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)fep;
    struct amo_args a = {.buf = buf, .count = count, .addr = dest, .raddr = addr, .key = key,
                         .datatype = datatype, .op = op, .context = context,
                         .flags = ep->tx_op_flags};
    return amo_post(ep, &a);
}

/* the ioc forms: one ioc per side */
static ssize_t a_atomicv(struct fid_ep *fep, const struct fi_ioc *iov, void **desc, size_t count,
                         fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype datatype,
                         enum fi_op op, void *context)
{
    if (count != 1 || iov == NULL)
        return -FI_EINVAL;
    return a_atomic(fep, iov[0].addr, iov[0].count, NULL, dest, addr, key, datatype, op, context);
}

static ssize_t a_atomicmsg(struct fid_ep *fep, const struct fi_msg_atomic *msg, uint64_t flags)
{
    if (msg == NULL || msg->iov_count != 1 || msg->msg_iov == NULL || msg->rma_iov_count != 1 ||
        msg->rma_iov == NULL || msg->rma_iov[0].count != msg->msg_iov[0].count)
        return -FI_EINVAL;
    struct amo_args a = {.buf = msg->msg_iov[0].addr, .count = msg->msg_iov[0].count,
                         .addr = msg->addr, .raddr = msg->rma_iov[0].addr,
                         .key = msg->rma_iov[0].key, .datatype = msg->datatype, .op = msg->op,
                         .context = msg->context, .flags = flags};
    return amo_post((struct tfi_ep *)fep, &a);
}

static ssize_t a_inject(struct fid_ep *fep, const void *buf, size_t count, fi_addr_t dest,
                        uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op)
{
    struct amo_args a = {.buf = buf, .count = count, .addr = dest, .raddr = addr, .key = key,
                         .datatype = datatype, .op = op, .inject_only = true};
    return amo_post((struct tfi_ep *)fep, &a);
}

static ssize_t a_fetch(struct fid_ep *fep, const void *buf, size_t count, void *desc,
                       void *result, void *result_desc, fi_addr_t dest, uint64_t addr,
                       uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)fep;
    struct amo_args a = {.buf = buf, .result = result, .count = count, .addr = dest,
                         .raddr = addr, .key = key, .datatype = datatype, .op = op,
                         .context = context, .flags = ep->tx_op_flags, .kind = 1};
    return amo_post(ep, &a);
}

static ssize_t a_fetchv(struct fid_ep *fep, const struct fi_ioc *iov, void **desc, size_t count,
                        struct fi_ioc *resultv, void **result_desc, size_t result_count,
                        fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype datatype,
                        enum fi_op op, void *context)
{
    if (count != 1 || result_count != 1 || iov == NULL || resultv == NULL ||
        resultv[0].count != iov[0].count)
        return -FI_EINVAL;
    return a_fetch(fep, iov[0].addr, iov[0].count, NULL, resultv[0].addr, NULL, dest, addr, key,
                   datatype, op, context);
}

static ssize_t a_fetchmsg(struct fid_ep *fep, const struct fi_msg_atomic *msg,
                          struct fi_ioc *resultv, void **result_desc, size_t result_count,
                          uint64_t flags)
{
    if (msg == NULL || msg->iov_count != 1 || msg->msg_iov == NULL || msg->rma_iov_count != 1 ||
        msg->rma_iov == NULL || result_count != 1 || resultv == NULL ||
        resultv[0].count != msg->msg_iov[0].count)
        return -FI_EINVAL;
    struct amo_args a = {.buf = msg->msg_iov[0].addr, .result = resultv[0].addr,
                         .count = msg->msg_iov[0].count, .addr = msg->addr,
                         .raddr = msg->rma_iov[0].addr, .key = msg->rma_iov[0].key,
                         .datatype = msg->datatype, .op = msg->op, .context = msg->context,
                         .flags = flags, .kind = 1};
    return amo_post((struct tfi_ep *)fep, &a);
}

static ssize_t a_compare(struct fid_ep *fep, const void *buf, size_t count, void *desc,
                         const void *compare, void *compare_desc, void *result,
                         void *result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
                         enum fi_datatype datatype, enum fi_op op, void *context)
{
    struct tfi_ep *ep = (struct tfi_ep *)fep;
    struct amo_args a = {.buf = buf, .compare = compare, .result = result, .count = count,
                         .addr = dest, .raddr = addr, .key = key, .datatype = datatype,
                         .op = op, .context = context, .flags = ep->tx_op_flags, .kind = 2};
    return amo_post(ep, &a);
}

static ssize_t a_comparev(struct fid_ep *fep, const struct fi_ioc *iov, void **desc, size_t count,
                          const struct fi_ioc *comparev, void **compare_desc,
                          size_t compare_count, struct fi_ioc *resultv, void **result_desc,
                          size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
                          enum fi_datatype datatype, enum fi_op op, void *context)
{
    if (count != 1 || compare_count != 1 || result_count != 1 || iov == NULL ||
        comparev == NULL || resultv == NULL)
        return -FI_EINVAL;
    return a_compare(fep, iov[0].addr, iov[0].count, NULL, comparev[0].addr, NULL,
                     resultv[0].addr, NULL, dest, addr, key, datatype, op, context);
}

static ssize_t a_comparemsg(struct fid_ep *fep, const struct fi_msg_atomic *msg,
                            const struct fi_ioc *comparev, void **compare_desc,
                            size_t compare_count, struct fi_ioc *resultv, void **result_desc,
                            size_t result_count, uint64_t flags)
{
    if (msg == NULL || msg->iov_count != 1 || msg->msg_iov == NULL || msg->rma_iov_count != 1 ||
        msg->rma_iov == NULL || compare_count != 1 || comparev == NULL || result_count != 1 ||
        resultv == NULL)
        return -FI_EINVAL;
    struct amo_args a = {.buf = msg->msg_iov[0].addr, .compare = comparev[0].addr,
                         .result = resultv[0].addr, .count = msg->msg_iov[0].count,
                         .addr = msg->addr, .raddr = msg->rma_iov[0].addr,
                         .key = msg->rma_iov[0].key, .datatype = msg->datatype, .op = msg->op,
                         .context = msg->context, .flags = flags, .kind = 2};
    return amo_post((struct tfi_ep *)fep, &a);
}

struct fi_ops_atomic tfi_atomic_ops = {
    .size = sizeof(struct fi_ops_atomic),
    .write = a_atomic,
    .writev = a_atomicv,
    .writemsg = a_atomicmsg,
    .inject = a_inject,
    .readwrite = a_fetch,
    .readwritev = a_fetchv,
    .readwritemsg = a_fetchmsg,
    .compwrite = a_compare,
    .compwritev = a_comparev,
    .compwritemsg = a_comparemsg,
    .writevalid = atomic_valid,
    .readwritevalid = fetch_valid,
    .compwritevalid = compare_valid,
};
