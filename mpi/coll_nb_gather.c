/*
 * Non-blocking gather, scatter and allgather (and their v forms) as
 * schedules (coll_nb.h), with the blocking ones' algorithms (coll_gather.c):
 *  - gather(v) / scatter(v): linear at the root, every peer's block in one
 *    round;
 *  - allgather(v): ring, size - 1 rounds, each passing on the block the
 *    previous one brought.
 * Displacements count extents of the type.  A rank's own block is copied
 * when the call starts (the buffers are the operation's from then on).
 */
#include <stdlib.h>

#include "mpi/coll_inter.h"
#include "mpi/coll_nb.h"

static char *at(const void *buf, int displ, MPI_Datatype dt)
{
    return (char *)buf + (ptrdiff_t)displ * mpi_dt_extent(dt);
}

/* MPI_IN_PLACE where only the root may give it */
static int inplace_root_only(const coll_t *k, const void *buf, int root, const char *which)
{
    if (buf == MPI_IN_PLACE && k->c->rank != root)
        return mpi_raise(k->comm, MPI_ERR_BUFFER, "%s: MPI_IN_PLACE as %s at rank %d, not the "
                         "root (%d)", k->call, which, k->c->rank, root);
    return MPI_SUCCESS;
}

/* The root's v arguments: the arrays, the type, each count and block. */
static int root_v_args(const coll_t *k, const void *buf, const int counts[], const int displs[],
                       MPI_Datatype dt)
{
    if (counts == NULL || displs == NULL)
        return mpi_raise(k->comm, MPI_ERR_ARG, "%s: NULL counts or displacements at the root",
                         k->call);
    int e = mpi_check_buf(k->comm, NULL, 0, dt, k->call);
    for (int i = 0; i < k->c->size && e == MPI_SUCCESS; i++) {
        if (counts[i] < 0)
            return mpi_raise(k->comm, MPI_ERR_COUNT, "%s: count %d for rank %d", k->call,
                             counts[i], i);
        e = mpi_check_buf(k->comm, buf, counts[i], dt, k->call);
    }
    return e;
}

/* Igatherv / Iscatterv once their arguments were checked (Igather and
 * Iscatter too): linear at the root, whose own block is copied now */
static int irooted(const coll_t *k, const coll_rooted_t *x, int root, MPI_Request *request)
{
    int e;
    sched_t *s = nb_sched_new(k, &e);
    if (s == NULL)
        return e;
    if (k->c->rank != root) {
        if (x->gather)
            nb_send_block(s, root, x->one, x->one_count, x->one_type);
        else
            nb_recv_block(s, root, x->one, x->one_count, x->one_type);
        return nb_start(s, request);
    }
    for (int i = 0; i < k->c->size; i++) {
        char *b = at(x->many, x->displs[i], x->many_type);
        if (i != root && x->gather)
            nb_recv_block(s, i, b, x->counts[i], x->many_type);
        else if (i != root)
            nb_send_block(s, i, b, x->counts[i], x->many_type);
    }
    char *mine = at(x->many, x->displs[root], x->many_type);
    if (x->one != MPI_IN_PLACE &&
        (e = x->gather ? nb_copy_now(k, x->one, x->one_count, x->one_type, mine,
                                     x->counts[root], x->many_type)
                       : nb_copy_now(k, mine, x->counts[root], x->many_type, x->one,
                                     x->one_count, x->one_type)) != MPI_SUCCESS) {
        nb_sched_free(s);
        return e;
    }
    return nb_start(s, request);
}

/* Igather(v) and Iscatter(v) on an intracommunicator: every process's
 * checks, the root's blocks' (v: the arrays given; else equal blocks of
 * many_count), then the schedule */
static int irooted_call(const coll_rooted_t *x, bool v, int root, MPI_Comm comm,
                        MPI_Request *request)
{
    coll_t k;
    int e = nb_begin(&k, comm, x->call, request);
    if (e == MPI_SUCCESS)
        e = coll_check_root(&k, root);
    if (e == MPI_SUCCESS)
        e = inplace_root_only(&k, x->one, root, x->gather ? "send buffer" : "receive buffer");
    if (e == MPI_SUCCESS && x->one != MPI_IN_PLACE)
        e = mpi_check_buf(comm, x->one, x->one_count, x->one_type, x->call);
    coll_rooted_t y = *x;
    int *counts = NULL, *displs = NULL;
    if (e == MPI_SUCCESS && k.c->rank == root && v)
        e = root_v_args(&k, x->many, x->counts, x->displs, x->many_type);
    else if (e == MPI_SUCCESS && k.c->rank == root &&
             (e = mpi_check_buf(comm, x->many, x->many_count, x->many_type, k.call)) ==
                 MPI_SUCCESS &&
             (counts = nb_equal_blocks(&k, x->many_count, &displs)) == NULL)
        e = MPI_ERR_NO_MEM;
    if (counts != NULL) {
        y.counts = counts;
        y.displs = displs;
    }
    if (e == MPI_SUCCESS)
        e = irooted(&k, &y, root, request);
    free(counts);
    return e;
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_igather("MPI_Igatherv", sendbuf, sendcount, sendtype, recvbuf, 0,
                                  recvcounts, displs, recvtype, root, comm, request);
    coll_rooted_t x = {"MPI_Igatherv", true, (void *)(uintptr_t)sendbuf, sendcount, sendtype,
                       recvbuf, 0, recvcounts, displs, recvtype};
    return irooted_call(&x, true, root, comm, request);
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_igather("MPI_Igather", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                  NULL, NULL, recvtype, root, comm, request);
    coll_rooted_t x = {"MPI_Igather", true, (void *)(uintptr_t)sendbuf, sendcount, sendtype,
                       recvbuf, recvcount, NULL, NULL, recvtype};
    return irooted_call(&x, false, root, comm, request);
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_iscatter("MPI_Iscatterv", sendbuf, 0, sendcounts, displs, sendtype,
                                   recvbuf, recvcount, recvtype, root, comm, request);
    coll_rooted_t x = {"MPI_Iscatterv", false, recvbuf, recvcount, recvtype,
                       (void *)(uintptr_t)sendbuf, 0, sendcounts, displs, sendtype};
    return irooted_call(&x, true, root, comm, request);
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_iscatter("MPI_Iscatter", sendbuf, sendcount, NULL, NULL, sendtype,
                                   recvbuf, recvcount, recvtype, root, comm, request);
    coll_rooted_t x = {"MPI_Iscatter", false, recvbuf, recvcount, recvtype,
                       (void *)(uintptr_t)sendbuf, sendcount, NULL, NULL, sendtype};
    return irooted_call(&x, false, root, comm, request);
}

/* Iallgatherv once its arguments were checked (Iallgather too).  The
 * blocks travel as bytes: in recvbuf for a contiguous type, else packed
 * one after the other in a buffer of the schedule's, each unpacked once
 * it arrived. */
static int iallgatherv(const coll_t *k, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int displs[], MPI_Datatype recvtype, MPI_Request *request)
{
    int size = k->c->size, rank = k->c->rank, e = MPI_SUCCESS;
    bool contig = mpi_dt_is_contig(recvtype);
    /* block i: len[i] bytes at base + off[i] (a displacement may be negative) */
    ptrdiff_t *off = malloc((sizeof(ptrdiff_t) + sizeof(size_t)) * (size_t)size);
    size_t *len = (size_t *)(off + size), total = 0;
    if (off == NULL)
        return mpi_raise(k->comm, MPI_ERR_NO_MEM, "%s: offsets", k->call);
    for (int i = 0; i < size; i++) {
        len[i] = mpi_dt_pack_size(recvcounts[i], recvtype);
        off[i] = contig ? at(recvbuf, displs[i], recvtype) - (char *)recvbuf : (ptrdiff_t)total;
        total += len[i];
    }
    sched_t *s = nb_sched_new(k, &e);
    char *base = s == NULL ? NULL : contig ? recvbuf : nb_buf(s, total);
    char *own = at(recvbuf, displs[rank], recvtype);
    if (s != NULL && sendbuf != MPI_IN_PLACE)
        e = nb_copy_now(k, sendbuf, sendcount, sendtype, own, recvcounts[rank], recvtype);
    if (s != NULL && e == MPI_SUCCESS) {
        if (base != NULL && !contig)
            mpi_dt_pack(own, recvcounts[rank], recvtype, base + off[rank]);
        int right = (rank + 1) % size, left = (rank - 1 + size) % size;
        for (int i = 0; base != NULL && i < size - 1; i++, nb_next_round(s)) {
            int sb = (rank - i + size) % size, rb = (rank - i - 1 + size) % size;
            nb_add(s, NB_RECV, left, NULL, base + off[rb], len[rb]);
            nb_add(s, NB_SEND, right, base + off[sb], NULL, len[sb]);
            if (!contig && len[rb] > 0)
                nb_add_unpack(s, base + off[rb], at(recvbuf, displs[rb], recvtype), len[rb],
                              recvcounts[rb], recvtype);
        }
    }
    free(off);
    if (s == NULL)
        return e;
    if (e != MPI_SUCCESS) {
        nb_sched_free(s);
        return e;
    }
    return nb_start(s, request);
}

static int allgather_args(coll_t *k, MPI_Comm comm, const char *call, MPI_Request *request,
                          const void *sendbuf, int sendcount, MPI_Datatype sendtype)
{
    int e = nb_begin(k, comm, call, request);
    if (e == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        e = mpi_check_buf(comm, sendbuf, sendcount, sendtype, call);
    return e;
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_iallgather("MPI_Iallgatherv", sendbuf, sendcount, sendtype, recvbuf, 0,
                                     recvcounts, displs, recvtype, comm, request);
    coll_t k;
    int e = allgather_args(&k, comm, "MPI_Iallgatherv", request, sendbuf, sendcount, sendtype);
    if (e == MPI_SUCCESS)
        e = root_v_args(&k, recvbuf, recvcounts, displs, recvtype);
    if (e != MPI_SUCCESS)
        return e;
    return iallgatherv(&k, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                       request);
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_iallgather("MPI_Iallgather", sendbuf, sendcount, sendtype, recvbuf,
                                     recvcount, NULL, NULL, recvtype, comm, request);
    coll_t k;
    int e = allgather_args(&k, comm, "MPI_Iallgather", request, sendbuf, sendcount, sendtype);
    int *counts = NULL, *displs = NULL;
    if (e == MPI_SUCCESS &&
        (e = mpi_check_buf(comm, recvbuf, recvcount, recvtype, k.call)) == MPI_SUCCESS &&
        (counts = nb_equal_blocks(&k, recvcount, &displs)) == NULL)
        e = MPI_ERR_NO_MEM;
    if (e == MPI_SUCCESS)
        e = iallgatherv(&k, sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype,
                        request);
    free(counts);
    return e;
}
