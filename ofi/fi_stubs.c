/*
 * The ops tables tern does not offer, filled with typed stubs that answer
 * -FI_ENOSYS (libfabric's inline wrappers call these slots without
 * checking them, so an empty slot would be a crash, and a cast of one stub
 * to every type would be undefined behaviour): collectives are the MPI's.
 */
#include "ofi/tern_fi.h"

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
