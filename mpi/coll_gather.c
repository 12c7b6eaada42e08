/*
 * The collectives that move a block per process (MPI-3.1 5.5-5.8):
 * gather(v) and scatter(v), linear at the root; allgather(v), a ring;
 * alltoall(v), pairwise exchange.  coll.c says how every collective runs
 * in the communicator's collective space.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/coll.h"
#include "mpi/coll_inter.h"

/* ---- gather, scatter ------------------------------------------------------ */

/* count elements of dt at buf to / from a peer: contiguous ones in place,
 * others through a staging buffer (coll.h) */
int coll_block_send(const coll_t *k, const void *buf, int count, MPI_Datatype dt, int to, int tag)
{
    coll_stage_t s;
    int e = coll_stage_in(k, buf, count, dt, true, &s);
    if (e == MPI_SUCCESS)
        e = coll_send(k, s.bytes, s.len, to, tag);
    coll_stage_out(&s, NULL, 0, dt, false);
    return e;
}

int coll_block_recv(const coll_t *k, void *buf, int count, MPI_Datatype dt, int from, int tag)
{
    coll_stage_t s;
    int e = coll_stage_in(k, buf, count, dt, false, &s);
    if (e == MPI_SUCCESS)
        e = coll_recv(k, s.bytes, s.len, from, tag);
    coll_stage_out(&s, buf, count, dt, e == MPI_SUCCESS);
    return e;
}

/* a rank's own block, from (scount, stype) to (rcount, rtype): what fits */
static int local_copy(const coll_t *k, const void *src, int scount, MPI_Datatype stype, void *dst,
                      int rcount, MPI_Datatype rtype)
{
    coll_stage_t s;
    int e = coll_stage_in(k, src, scount, stype, true, &s);
    if (e != MPI_SUCCESS)
        return e;
    if (mpi_dt_is_contig(rtype)) {
        size_t n = mpi_dt_pack_size(rcount, rtype);
        memmove(dst, s.bytes, s.len < n ? s.len : n);
    } else {
        mpi_dt_unpack(s.bytes, s.len, dst, rcount, rtype);
    }
    coll_stage_out(&s, NULL, 0, stype, false);
    return MPI_SUCCESS;
}

/* displacements count extents */
static size_t disp(int displ, MPI_Datatype dt) { return (size_t)displ * (size_t)mpi_dt_extent(dt); }
static char *at(const void *buf, int displ, MPI_Datatype dt) { return mpi_addr(buf, disp(displ, dt)); }

/* The checks Gatherv and Scatterv share: mine (count, dt) is every rank's
 * own buffer (MPI_IN_PLACE at the root), the root's v arguments. */
static int v_args(coll_t *k, MPI_Comm comm, const char *call, int root, const void *mine,
                  int count, MPI_Datatype dt, const int counts[], const int displs[],
                  MPI_Datatype rootdt)
{
    int e = coll_start(k, comm, call);
    if (e == MPI_SUCCESS)
        e = coll_check_root(k, root);
    bool at_root = e == MPI_SUCCESS && k->c->rank == root;
    if (e == MPI_SUCCESS && !(mine == MPI_IN_PLACE && at_root))
        e = mpi_check_buf(comm, mine, count, dt, call);
    if (e == MPI_SUCCESS && at_root && (counts == NULL || displs == NULL))
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: NULL counts or displacements at root", call);
    if (e == MPI_SUCCESS && at_root)
        e = mpi_check_buf(comm, NULL, 0, rootdt, call);
    return e;
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_gather("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf, 0,
                                 recvcounts, displs, recvtype, root, comm);
    coll_t k;
    int e = v_args(&k, comm, "MPI_Gatherv", root, sendbuf, sendcount, sendtype, recvcounts,
                   displs, recvtype);
    if (e != MPI_SUCCESS)
        return e;
    if (k.c->rank != root)
        return coll_block_send(&k, sendbuf, sendcount, sendtype, root, TAG_GATHER);
    for (int i = 0; i < k.c->size && e == MPI_SUCCESS; i++) {
        char *dst = at(recvbuf, displs[i], recvtype);
        if (i != root)
            e = coll_block_recv(&k, dst, recvcounts[i], recvtype, i, TAG_GATHER);
        else if (sendbuf != MPI_IN_PLACE)
            e = local_copy(&k, sendbuf, sendcount, sendtype, dst, recvcounts[i], recvtype);
    }
    return e;
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_scatter("MPI_Scatterv", sendbuf, 0, sendcounts, displs, sendtype,
                                  recvbuf, recvcount, recvtype, root, comm);
    coll_t k;
    int e = v_args(&k, comm, "MPI_Scatterv", root, recvbuf, recvcount, recvtype, sendcounts,
                   displs, sendtype);
    if (e != MPI_SUCCESS)
        return e;
    if (k.c->rank != root)
        return coll_block_recv(&k, recvbuf, recvcount, recvtype, root, TAG_SCATTER);
    for (int i = 0; i < k.c->size && e == MPI_SUCCESS; i++) {
        const char *src = at(sendbuf, displs[i], sendtype);
        if (i != root)
            e = coll_block_send(&k, src, sendcounts[i], sendtype, i, TAG_SCATTER);
        else if (recvbuf != MPI_IN_PLACE)
            e = local_copy(&k, src, sendcounts[i], sendtype, recvbuf, recvcount, recvtype);
    }
    return e;
}

int *coll_equal_blocks(int size, int n, int **displs)
{
    int *c = malloc(sizeof(int) * (size_t)size * 2);
    if (c == NULL)
        return NULL;
    *displs = c + size;
    for (int i = 0; i < size; i++) {
        c[i] = n;
        (*displs)[i] = i * n;
    }
    return c;
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_gather("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                 NULL, NULL, recvtype, root, comm);
    int size, *displs, e = MPI_Comm_size(comm, &size);
    if (e != MPI_SUCCESS)
        return e;
    int *counts = coll_equal_blocks(size, recvcount, &displs);
    if (counts == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Gather");
    e = MPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype, root, comm);
    free(counts);
    return e;
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_scatter("MPI_Scatter", sendbuf, sendcount, NULL, NULL, sendtype,
                                  recvbuf, recvcount, recvtype, root, comm);
    int size, *displs, e = MPI_Comm_size(comm, &size);
    if (e != MPI_SUCCESS)
        return e;
    int *counts = coll_equal_blocks(size, sendcount, &displs);
    if (counts == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Scatter");
    e = MPI_Scatterv(sendbuf, counts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    free(counts);
    return e;
}

/* ---- allgather, alltoall ------------------------------------------------- */

/* Ring: in step i each rank passes on the block it got in step i - 1.  The
 * blocks travel as bytes: in recvbuf for a contiguous type, else packed one
 * after the other in a staging buffer, unpacked at the end. */
static int ring(const coll_t *k, char *base, const size_t off[], const size_t len[])
{
    int size = k->c->size, rank = k->c->rank, e = MPI_SUCCESS;
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    for (int i = 0; e == MPI_SUCCESS && i < size - 1; i++) {
        int sb = (rank - i + size) % size, rb = (rank - i - 1 + size) % size;
        e = coll_sendrecv(k, base + off[sb], len[sb], right, base + off[rb], len[rb], left,
                          TAG_ALLGATHER);
    }
    return e;
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_allgather("MPI_Allgatherv", sendbuf, sendcount, sendtype, recvbuf, 0,
                                    recvcounts, displs, recvtype, comm);
    coll_t k;
    int e = coll_start(&k, comm, "MPI_Allgatherv");
    if (e == MPI_SUCCESS)
        e = coll_check_buf(&k, sendbuf, sendcount, sendtype);
    if (e == MPI_SUCCESS && (recvcounts == NULL || displs == NULL || recvbuf == NULL))
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Allgatherv: NULL buffer, counts or displacements");
    if (e == MPI_SUCCESS)
        e = mpi_check_buf(comm, NULL, 0, recvtype, k.call);
    if (e != MPI_SUCCESS)
        return e;
    int size = k.c->size, rank = k.c->rank;
    bool contig = mpi_dt_is_contig(recvtype);
    size_t *off = malloc(sizeof(size_t) * 2 * (size_t)size), *len = off + size, total = 0;
    if (off == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Allgatherv");
    for (int i = 0; i < size; i++) {
        len[i] = mpi_dt_pack_size(recvcounts[i], recvtype);
        off[i] = contig ? disp(displs[i], recvtype) : total;
        total += len[i];
    }
    char *base = contig ? recvbuf : coll_tmp(total);
    if (base == NULL) {
        free(off);
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Allgatherv: %zu bytes", total);
    }
    char *own = at(recvbuf, displs[rank], recvtype);
    if (sendbuf != MPI_IN_PLACE)
        e = local_copy(&k, sendbuf, sendcount, sendtype, own, recvcounts[rank], recvtype);
    if (e == MPI_SUCCESS && !contig)
        mpi_dt_pack(own, recvcounts[rank], recvtype, base + off[rank]);
    if (e == MPI_SUCCESS)
        e = ring(&k, base, off, len);
    for (int i = 0; e == MPI_SUCCESS && !contig && i < size; i++)
        if (i != rank)
            mpi_dt_unpack(base + off[i], len[i], at(recvbuf, displs[i], recvtype),
                          recvcounts[i], recvtype);
    if (!contig)
        coll_tmp_free(base);
    free(off);
    return e;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_allgather("MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf,
                                    recvcount, NULL, NULL, recvtype, comm);
    int size, *displs, e = MPI_Comm_size(comm, &size);
    if (e != MPI_SUCCESS)
        return e;
    int *counts = coll_equal_blocks(size, recvcount, &displs);
    if (counts == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Allgather");
    e = MPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype, comm);
    free(counts);
    return e;
}

/* one step of the pairwise exchange, either side staged when not contiguous */
static int exchange(const coll_t *k, const void *sb, int sc, MPI_Datatype st, int to, void *rb,
                    int rc, MPI_Datatype rt, int from)
{
    coll_stage_t s, r;
    int e = coll_stage_in(k, sb, sc, st, true, &s);
    if (e != MPI_SUCCESS)
        return e;
    if ((e = coll_stage_in(k, rb, rc, rt, false, &r)) == MPI_SUCCESS) {
        e = coll_sendrecv(k, s.bytes, s.len, to, r.bytes, r.len, from, TAG_ALLTOALL);
        coll_stage_out(&r, rb, rc, rt, e == MPI_SUCCESS);
    }
    coll_stage_out(&s, NULL, 0, st, false);
    return e;
}

/* Pairwise: in step i a rank sends to rank + i and receives from rank - i. */
int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_alltoall("MPI_Alltoallv", sendbuf, 0, sendcounts, sdispls, sendtype,
                                   NULL, recvbuf, 0, recvcounts, rdispls, recvtype, NULL, comm);
    coll_t k;
    int e = coll_start(&k, comm, "MPI_Alltoallv");
    if (e == MPI_SUCCESS && (recvcounts == NULL || rdispls == NULL || recvbuf == NULL ||
                             (sendbuf != MPI_IN_PLACE && (sendcounts == NULL || sdispls == NULL))))
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Alltoallv: NULL buffer, counts or displacements");
    if (e == MPI_SUCCESS)
        e = mpi_check_buf(comm, NULL, 0, recvtype, k.call);
    if (e == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        e = mpi_check_buf(comm, NULL, 0, sendtype, k.call);
    if (e != MPI_SUCCESS)
        return e;
    int size = k.c->size, rank = k.c->rank;
    char *copy = NULL;
    if (sendbuf == MPI_IN_PLACE) {
        /* send what recvbuf holds now: every byte the blocks touch (an
         * element may reach past its extent, or before its lb) */
        MPI_Aint lo = 0, hi = 0;
        for (int i = 0; i < size; i++)
            coll_span(recvcounts[i], recvtype, (MPI_Aint)disp(rdispls[i], recvtype), &lo, &hi);
        size_t total = (size_t)(hi - lo);
        if ((copy = coll_tmp(total)) == NULL)
            return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Alltoallv: %zu bytes", total);
        memcpy(copy, (char *)recvbuf + lo, total);
        sendbuf = copy - lo; /* lo <= 0: inside copy */
        sendcounts = recvcounts;
        sdispls = rdispls;
        sendtype = recvtype;
    }
    e = local_copy(&k, at(sendbuf, sdispls[rank], sendtype), sendcounts[rank], sendtype,
                   at(recvbuf, rdispls[rank], recvtype), recvcounts[rank], recvtype);
    for (int i = 1; e == MPI_SUCCESS && i < size; i++) {
        int dst = (rank + i) % size, src = (rank - i + size) % size;
        e = exchange(&k, at(sendbuf, sdispls[dst], sendtype), sendcounts[dst], sendtype, dst,
                     at(recvbuf, rdispls[src], recvtype), recvcounts[src], recvtype, src);
    }
    coll_tmp_free(copy);
    return e;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_alltoall("MPI_Alltoall", sendbuf, sendcount, NULL, NULL, sendtype, NULL,
                                   recvbuf, recvcount, NULL, NULL, recvtype, NULL, comm);
    int size, *sd, *rd, e = MPI_Comm_size(comm, &size);
    if (e != MPI_SUCCESS)
        return e;
    int *sc = coll_equal_blocks(size, sendcount, &sd);
    int *rc = coll_equal_blocks(size, recvcount, &rd);
    if (sc == NULL || rc == NULL) {
        free(sc);
        free(rc);
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Alltoall");
    }
    e = MPI_Alltoallv(sendbuf, sc, sd, sendtype, recvbuf, rc, rd, recvtype, comm);
    free(sc);
    free(rc);
    return e;
}

