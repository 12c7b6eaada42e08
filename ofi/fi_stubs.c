/*
 * The ops tables tern does not offer yet, filled with typed stubs that
 * answer -FI_ENOSYS (libfabric's inline wrappers call these slots without
 * checking them, so an empty slot would be a crash, and a cast of one stub
 * to every type would be undefined behaviour).  FI_RMA and FI_ATOMIC come
 * with tern's one-sided work (issue 25); collectives are the MPI's.
 */
#include "ofi/tern_fi.h"

/* ---- fi_rma ------------------------------------------------------------------ */

static ssize_t no_read(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr,
                       uint64_t addr, uint64_t key, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_readv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
                        fi_addr_t src_addr, uint64_t addr, uint64_t key, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
    return -FI_ENOSYS;
}
static ssize_t no_write(struct fid_ep *ep, const void *buf, size_t len, void *desc,
                        fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_writev(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
                         fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
    return -FI_ENOSYS;
}
static ssize_t no_rma_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr,
                             uint64_t addr, uint64_t key)
{
    return -FI_ENOSYS;
}
static ssize_t no_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
                            uint64_t data, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
                            void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_rma_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data,
                                 fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
    return -FI_ENOSYS;
}

struct fi_ops_rma tfi_no_rma_ops = {
    .size = sizeof(struct fi_ops_rma),
    .read = no_read,
    .readv = no_readv,
    .readmsg = no_readmsg,
    .write = no_write,
    .writev = no_writev,
    .writemsg = no_writemsg,
    .inject = no_rma_inject,
    .writedata = no_writedata,
    .injectdata = no_rma_injectdata,
};

/* ---- fi_atomic ------------------------------------------------------------------ */

static ssize_t no_awrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
                         fi_addr_t dest_addr, uint64_t addr, uint64_t key,
                         enum fi_datatype datatype, enum fi_op op, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_awritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
                          fi_addr_t dest_addr, uint64_t addr, uint64_t key,
                          enum fi_datatype datatype, enum fi_op op, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_awritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, uint64_t flags)
{
    return -FI_ENOSYS;
}
static ssize_t no_ainject(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest_addr,
                          uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op)
{
    return -FI_ENOSYS;
}
static ssize_t no_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
                            void *result, void *result_desc, fi_addr_t dest_addr, uint64_t addr,
                            uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
                             struct fi_ioc *resultv, void **result_desc, size_t result_count,
                             fi_addr_t dest_addr, uint64_t addr, uint64_t key,
                             enum fi_datatype datatype, enum fi_op op, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
                               struct fi_ioc *resultv, void **result_desc, size_t result_count,
                               uint64_t flags)
{
    return -FI_ENOSYS;
}
static ssize_t no_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
                            const void *compare, void *compare_desc, void *result,
                            void *result_desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
                            enum fi_datatype datatype, enum fi_op op, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
                             const struct fi_ioc *comparev, void **compare_desc,
                             size_t compare_count, struct fi_ioc *resultv, void **result_desc,
                             size_t result_count, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
                             enum fi_datatype datatype, enum fi_op op, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
                               const struct fi_ioc *comparev, void **compare_desc,
                               size_t compare_count, struct fi_ioc *resultv, void **result_desc,
                               size_t result_count, uint64_t flags)
{
    return -FI_ENOSYS;
}
static int no_valid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count)
{
    return -FI_ENOSYS;
}

struct fi_ops_atomic tfi_no_atomic_ops = {
    .size = sizeof(struct fi_ops_atomic),
    .write = no_awrite,
    .writev = no_awritev,
    .writemsg = no_awritemsg,
    .inject = no_ainject,
    .readwrite = no_readwrite,
    .readwritev = no_readwritev,
    .readwritemsg = no_readwritemsg,
    .compwrite = no_compwrite,
    .compwritev = no_compwritev,
    .compwritemsg = no_compwritemsg,
    .writevalid = no_valid,
    .readwritevalid = no_valid,
    .compwritevalid = no_valid,
};

/* ---- fi_collective ----------------------------------------------------------------- */

static ssize_t no_barrier(struct fid_ep *ep, fi_addr_t coll_addr, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_broadcast(struct fid_ep *ep, void *buf, size_t count, void *desc,
                            fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype,
                            uint64_t flags, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_alltoall(struct fid_ep *ep, const void *buf, size_t count, void *desc,
                           void *result, void *result_desc, fi_addr_t coll_addr,
                           enum fi_datatype datatype, uint64_t flags, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_allreduce(struct fid_ep *ep, const void *buf, size_t count, void *desc,
                            void *result, void *result_desc, fi_addr_t coll_addr,
                            enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_reduce(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result,
                         void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr,
                         enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc,
                          void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr,
                          enum fi_datatype datatype, uint64_t flags, void *context)
{
    return -FI_ENOSYS;
}
static ssize_t no_cmsg(struct fid_ep *ep, const struct fi_msg_collective *msg,
                       struct fi_ioc *resultv, void **result_desc, size_t result_count,
                       uint64_t flags)
{
    return -FI_ENOSYS;
}
static ssize_t no_barrier2(struct fid_ep *ep, fi_addr_t coll_addr, uint64_t flags, void *context)
{
    return -FI_ENOSYS;
}

struct fi_ops_collective tfi_no_collective_ops = {
    .size = sizeof(struct fi_ops_collective),
    .barrier = no_barrier,
    .broadcast = no_broadcast,
    .alltoall = no_alltoall,
    .allreduce = no_allreduce,
    .allgather = no_alltoall,       /* same signature */
    .reduce_scatter = no_allreduce, /* same signature */
    .reduce = no_reduce,
    .scatter = no_scatter,
    .gather = no_scatter, /* same signature */
    .msg = no_cmsg,
    .barrier2 = no_barrier2,
};
