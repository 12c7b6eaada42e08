/*
 * Collectives over point to point, in the communicator's collective space
 * (its space + 1, so no user receive ever takes their messages), one tag
 * per kind of collective.  Every rank calls a communicator's collectives in
 * the same order and the messages of one source are matched in order, so
 * the messages of successive collectives never mix.
 *
 * Algorithms (MPICH's): dissemination barrier, binomial broadcast and
 * reduce, recursive-doubling allreduce and scan (the non-power-of-two ranks
 * folded in first), ring allgather(v), pairwise alltoall(v), linear
 * gather(v) / scatter(v), reduce-scatter as reduce + scatter.  Predefined
 * contiguous datatypes; operand order is kept for non-commutative user ops.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

enum { TAG_BCAST = 40, TAG_REDUCE, TAG_ALLREDUCE, TAG_GATHER, TAG_SCATTER, TAG_ALLGATHER,
       TAG_ALLTOALL, TAG_SCAN };

typedef struct coll {
    MPI_Comm comm;
    mpi_comm_t *c;
    uint16_t space;
    const char *call;
} coll_t;

static int fail(const coll_t *k, tern_status_t st)
{
    return mpi_raise_tern(k->comm, st, k->call);
}

static int csend(const coll_t *k, const void *buf, size_t len, int to, int tag)
{
    tern_status_t st = tern_send(mpi.w, buf, len, k->c->ranks[to], tag, k->space);
    return st == TERN_OK ? MPI_SUCCESS : fail(k, st);
}

static int crecv(const coll_t *k, void *buf, size_t len, int from, int tag)
{
    tern_status_t st = tern_recv(mpi.w, buf, len, k->c->ranks[from], tag, k->space, NULL);
    return st == TERN_OK ? MPI_SUCCESS : fail(k, st);
}

/* receive posted first, so two ranks exchanging never wait for each other */
static int csendrecv(const coll_t *k, const void *sbuf, size_t slen, int to, void *rbuf,
                     size_t rlen, int from, int tag)
{
    tern_request_t *r = NULL;
    tern_status_t st = tern_irecv(mpi.w, rbuf, rlen, k->c->ranks[from], tag, k->space, NULL, &r);
    if (st != TERN_OK && st != TERN_INPROGRESS)
        return fail(k, st);
    tern_status_t ss = tern_send(mpi.w, sbuf, slen, k->c->ranks[to], tag, k->space);
    if (st == TERN_INPROGRESS)
        st = tern_wait(mpi.w, r, NULL);
    if (ss != TERN_OK)
        return fail(k, ss);
    return st == TERN_OK ? MPI_SUCCESS : fail(k, st);
}

static int start(coll_t *k, MPI_Comm comm, const char *call)
{
    int e = mpi_check_comm(comm, call);
    if (e != MPI_SUCCESS)
        return e;
    k->comm = comm;
    k->c = mpi_comm_get(comm);
    k->space = (uint16_t)(k->c->space + 1);
    k->call = call;
    return MPI_SUCCESS;
}

static int check_root(const coll_t *k, int root)
{
    if (root < 0 || root >= k->c->size)
        return mpi_raise(k->comm, MPI_ERR_ROOT, "%s: root %d (the communicator has %d)", k->call,
                         root, k->c->size);
    return MPI_SUCCESS;
}

static int check_buf(const coll_t *k, const void *buf, int count, MPI_Datatype dt)
{
    return buf == MPI_IN_PLACE ? MPI_SUCCESS : mpi_check_buf(k->comm, buf, count, dt, k->call);
}

static void *tmp_alloc(size_t len) { return malloc(len ? len : 1); }

/* ---- barrier ------------------------------------------------------------- */

/* Dissemination: in round k each rank sends to rank + 2^k and receives
 * from rank - 2^k (tag k). */
int MPI_Barrier(MPI_Comm comm)
{
    coll_t k;
    int e = start(&k, comm, "MPI_Barrier");
    for (int r = 0, step = 1; e == MPI_SUCCESS && step < k.c->size; r++, step <<= 1) {
        char out = 0, in = 0;
        e = csendrecv(&k, &out, 1, (k.c->rank + step) % k.c->size, &in, 1,
                      (k.c->rank - step + k.c->size) % k.c->size, r);
    }
    return e;
}

/* ---- broadcast, reduce ------------------------------------------------------ */

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    coll_t k;
    int e = start(&k, comm, "MPI_Bcast");
    if (e == MPI_SUCCESS)
        e = check_root(&k, root);
    if (e == MPI_SUCCESS)
        e = mpi_check_buf(comm, buffer, count, datatype, k.call);
    if (e != MPI_SUCCESS)
        return e;
    int size = k.c->size, rank = k.c->rank, rel = (rank - root + size) % size;
    size_t len = (size_t)count * (size_t)mpi_type_size(datatype);
    int mask = 1;
    for (; mask < size; mask <<= 1)
        if (rel & mask) { /* from the parent */
            if ((e = crecv(&k, buffer, len, (rank - mask + size) % size, TAG_BCAST)) != MPI_SUCCESS)
                return e;
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < size &&
            (e = csend(&k, buffer, len, (rank + mask) % size, TAG_BCAST)) != MPI_SUCCESS)
            return e;
    return MPI_SUCCESS;
}

/* Binomial reduce to root 0 of the relative numbering; acc holds this
 * rank's partial result (the ranks [rel, rel + mask)), combined lower op
 * higher.  Non-commutative ops reduce to rank 0, which hands the result on.
 * The reductions move count extents of bytes (size != extent for the pair
 * types of MAXLOC / MINLOC: their padding goes along). */
static int reduce_tree(const coll_t *k, void *acc, int count, MPI_Datatype dt, MPI_Op op,
                       int root, void *tmp)
{
    int size = k->c->size, rank = k->c->rank, rel = (rank - root + size) % size;
    size_t len = (size_t)count * (size_t)mpi_dt_extent(dt);
    for (int mask = 1; mask < size; mask <<= 1) {
        if ((rel & mask) == 0) {
            int src_rel = rel | mask;
            if (src_rel >= size)
                continue;
            int e = crecv(k, tmp, len, (src_rel + root) % size, TAG_REDUCE);
            if (e != MPI_SUCCESS)
                return e;
            mpi_op_apply(op, acc, tmp, count, dt); /* tmp = acc op tmp (lower op higher) */
            memcpy(acc, tmp, len);
        } else {
            return csend(k, acc, len, ((rel & ~mask) + root) % size, TAG_REDUCE);
        }
    }
    return MPI_SUCCESS;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
    coll_t k;
    int e = start(&k, comm, "MPI_Reduce");
    if (e == MPI_SUCCESS)
        e = check_root(&k, root);
    if (e == MPI_SUCCESS && sendbuf == MPI_IN_PLACE && k.c->rank != root)
        e = mpi_raise(comm, MPI_ERR_BUFFER, "MPI_Reduce: MPI_IN_PLACE at rank %d, not the root",
                      k.c->rank);
    if (e == MPI_SUCCESS)
        e = check_buf(&k, sendbuf, count, datatype);
    if (e == MPI_SUCCESS && k.c->rank == root)
        e = mpi_check_buf(comm, recvbuf, count, datatype, k.call);
    if (e == MPI_SUCCESS)
        e = mpi_op_check(op, datatype, comm, k.call);
    if (e != MPI_SUCCESS)
        return e;
    size_t len = (size_t)count * (size_t)mpi_dt_extent(datatype);
    void *acc = tmp_alloc(len), *tmp = tmp_alloc(len);
    if (acc == NULL || tmp == NULL) {
        free(acc);
        free(tmp);
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Reduce: %zu bytes", len);
    }
    memcpy(acc, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, len);
    int tree_root = mpi_op_commutes(op) ? root : 0;
    e = reduce_tree(&k, acc, count, datatype, op, tree_root, tmp);
    if (e == MPI_SUCCESS && tree_root != root) { /* non-commutative: 0 hands it on */
        if (k.c->rank == 0)
            e = csend(&k, acc, len, root, TAG_REDUCE);
        else if (k.c->rank == root)
            e = crecv(&k, acc, len, 0, TAG_REDUCE);
    }
    if (e == MPI_SUCCESS && k.c->rank == root)
        memcpy(recvbuf, acc, len);
    free(acc);
    free(tmp);
    return e;
}

/* Recursive doubling on buf (count elements), MPICH's: with rem = size -
 * pof2, the first 2 * rem ranks pair up (odd ones take their even
 * neighbour's data and the part), the pof2 that remain exchange with
 * newrank ^ mask, then the odd ones hand the result back. */
static int allreduce_rd(const coll_t *k, void *buf, int count, MPI_Datatype dt, MPI_Op op,
                        void *tmp)
{
    int size = k->c->size, rank = k->c->rank, e;
    size_t len = (size_t)count * (size_t)mpi_dt_extent(dt);
    bool commute = mpi_op_commutes(op);
    int pof2 = 1;
    while (pof2 * 2 <= size)
        pof2 *= 2;
    int rem = size - pof2, newrank;
    if (rank < 2 * rem) {
        if (rank % 2 == 0) {
            if ((e = csend(k, buf, len, rank + 1, TAG_ALLREDUCE)) != MPI_SUCCESS)
                return e;
            newrank = -1;
        } else {
            if ((e = crecv(k, tmp, len, rank - 1, TAG_ALLREDUCE)) != MPI_SUCCESS)
                return e;
            mpi_op_apply(op, tmp, buf, count, dt); /* buf = lower op buf */
            newrank = rank / 2;
        }
    } else {
        newrank = rank - rem;
    }
    if (newrank != -1) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int newdst = newrank ^ mask;
            int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            if ((e = csendrecv(k, buf, len, dst, tmp, len, dst, TAG_ALLREDUCE)) != MPI_SUCCESS)
                return e;
            if (commute || dst < rank) {
                mpi_op_apply(op, tmp, buf, count, dt); /* buf = tmp op buf */
            } else {
                mpi_op_apply(op, buf, tmp, count, dt); /* tmp = buf op tmp */
                memcpy(buf, tmp, len);
            }
        }
    }
    if (rank < 2 * rem)
        e = rank % 2 ? csend(k, buf, len, rank - 1, TAG_ALLREDUCE)
                     : crecv(k, buf, len, rank + 1, TAG_ALLREDUCE);
    else
        e = MPI_SUCCESS;
    return e;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    coll_t k;
    int e = start(&k, comm, "MPI_Allreduce");
    if (e == MPI_SUCCESS)
        e = check_buf(&k, sendbuf, count, datatype);
    if (e == MPI_SUCCESS)
        e = mpi_check_buf(comm, recvbuf, count, datatype, k.call);
    if (e == MPI_SUCCESS)
        e = mpi_op_check(op, datatype, comm, k.call);
    if (e != MPI_SUCCESS)
        return e;
    size_t len = (size_t)count * (size_t)mpi_dt_extent(datatype);
    void *tmp = tmp_alloc(len);
    if (tmp == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Allreduce: %zu bytes", len);
    if (sendbuf != MPI_IN_PLACE)
        memcpy(recvbuf, sendbuf, len);
    e = allreduce_rd(&k, recvbuf, count, datatype, op, tmp);
    free(tmp);
    return e;
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)
{
    coll_t k;
    int e = start(&k, comm, "MPI_Scan");
    if (e == MPI_SUCCESS)
        e = check_buf(&k, sendbuf, count, datatype);
    if (e == MPI_SUCCESS)
        e = mpi_check_buf(comm, recvbuf, count, datatype, k.call);
    if (e == MPI_SUCCESS)
        e = mpi_op_check(op, datatype, comm, k.call);
    if (e != MPI_SUCCESS)
        return e;
    size_t len = (size_t)count * (size_t)mpi_dt_extent(datatype);
    void *partial = tmp_alloc(len), *tmp = tmp_alloc(len);
    if (partial == NULL || tmp == NULL) {
        free(partial);
        free(tmp);
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Scan: %zu bytes", len);
    }
    if (sendbuf != MPI_IN_PLACE)
        memcpy(recvbuf, sendbuf, len);
    memcpy(partial, recvbuf, len);
    int rank = k.c->rank, size = k.c->size;
    for (int mask = 1; e == MPI_SUCCESS && mask < size; mask <<= 1) {
        int dst = rank ^ mask;
        if (dst >= size)
            continue;
        if ((e = csendrecv(&k, partial, len, dst, tmp, len, dst, TAG_SCAN)) != MPI_SUCCESS)
            break;
        if (rank > dst) { /* tmp covers lower ranks */
            mpi_op_apply(op, tmp, partial, count, datatype);
            mpi_op_apply(op, tmp, recvbuf, count, datatype);
        } else if (mpi_op_commutes(op)) {
            mpi_op_apply(op, tmp, partial, count, datatype);
        } else {
            mpi_op_apply(op, partial, tmp, count, datatype); /* tmp = partial op tmp */
            memcpy(partial, tmp, len);
        }
    }
    free(partial);
    free(tmp);
    return e;
}

/* ---- gather, scatter ------------------------------------------------------ */

static int gatherv(coll_t *k, const void *sendbuf, size_t slen, void *recvbuf,
                   const int counts[], const int displs[], int blk, int root)
{
    int e = MPI_SUCCESS;
    if (k->c->rank != root)
        return csend(k, sendbuf, slen, root, TAG_GATHER);
    for (int i = 0; i < k->c->size && e == MPI_SUCCESS; i++) {
        char *at = (char *)recvbuf + (size_t)displs[i] * (size_t)blk;
        size_t n = (size_t)counts[i] * (size_t)blk;
        if (i == root) {
            if (sendbuf != MPI_IN_PLACE)
                memmove(at, sendbuf, slen < n ? slen : n);
        } else {
            e = crecv(k, at, n, i, TAG_GATHER);
        }
    }
    return e;
}

static int scatterv(coll_t *k, const void *sendbuf, const int counts[], const int displs[],
                    int blk, void *recvbuf, size_t rlen, int root)
{
    int e = MPI_SUCCESS;
    if (k->c->rank != root)
        return crecv(k, recvbuf, rlen, root, TAG_SCATTER);
    for (int i = 0; i < k->c->size && e == MPI_SUCCESS; i++) {
        const char *at = (const char *)sendbuf + (size_t)displs[i] * (size_t)blk;
        size_t n = (size_t)counts[i] * (size_t)blk;
        if (i == root) {
            if (recvbuf != MPI_IN_PLACE)
                memmove(recvbuf, at, n < rlen ? n : rlen);
        } else {
            e = csend(k, at, n, i, TAG_SCATTER);
        }
    }
    return e;
}

/* counts / displs of equal blocks of n, for the non-v forms */
static int *equal_blocks(int size, int n, int **displs)
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

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    coll_t k;
    int e = start(&k, comm, "MPI_Gatherv");
    if (e == MPI_SUCCESS)
        e = check_root(&k, root);
    if (e == MPI_SUCCESS && !(sendbuf == MPI_IN_PLACE && k.c->rank == root))
        e = mpi_check_buf(comm, sendbuf, sendcount, sendtype, k.call);
    if (e == MPI_SUCCESS && k.c->rank == root && (recvcounts == NULL || displs == NULL))
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Gatherv: NULL counts or displacements at root");
    if (e == MPI_SUCCESS && k.c->rank == root && mpi_type_size(recvtype) == 0)
        e = mpi_raise(comm, MPI_ERR_TYPE, "MPI_Gatherv: receive datatype %#x", recvtype);
    if (e != MPI_SUCCESS)
        return e;
    size_t slen = sendbuf == MPI_IN_PLACE ? 0
                                          : (size_t)sendcount * (size_t)mpi_type_size(sendtype);
    return gatherv(&k, sendbuf, slen, recvbuf, recvcounts, displs,
                   k.c->rank == root ? mpi_type_size(recvtype) : 0, root);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int size, *displs, e = MPI_Comm_size(comm, &size);
    if (e != MPI_SUCCESS)
        return e;
    int *counts = equal_blocks(size, recvcount, &displs);
    if (counts == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Gather");
    e = MPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype, root, comm);
    free(counts);
    return e;
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    coll_t k;
    int e = start(&k, comm, "MPI_Scatterv");
    if (e == MPI_SUCCESS)
        e = check_root(&k, root);
    if (e == MPI_SUCCESS && !(recvbuf == MPI_IN_PLACE && k.c->rank == root))
        e = mpi_check_buf(comm, recvbuf, recvcount, recvtype, k.call);
    if (e == MPI_SUCCESS && k.c->rank == root && (sendcounts == NULL || displs == NULL))
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Scatterv: NULL counts or displacements at root");
    if (e == MPI_SUCCESS && k.c->rank == root && mpi_type_size(sendtype) == 0)
        e = mpi_raise(comm, MPI_ERR_TYPE, "MPI_Scatterv: send datatype %#x", sendtype);
    if (e != MPI_SUCCESS)
        return e;
    size_t rlen = recvbuf == MPI_IN_PLACE ? 0
                                          : (size_t)recvcount * (size_t)mpi_type_size(recvtype);
    return scatterv(&k, sendbuf, sendcounts, displs,
                    k.c->rank == root ? mpi_type_size(sendtype) : 0, recvbuf, rlen, root);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int size, *displs, e = MPI_Comm_size(comm, &size);
    if (e != MPI_SUCCESS)
        return e;
    int *counts = equal_blocks(size, sendcount, &displs);
    if (counts == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Scatter");
    e = MPI_Scatterv(sendbuf, counts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    free(counts);
    return e;
}

/* ---- allgather, alltoall ------------------------------------------------- */

/* Ring: in step i each rank passes on the block it got in step i - 1. */
int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    coll_t k;
    int e = start(&k, comm, "MPI_Allgatherv");
    if (e == MPI_SUCCESS)
        e = check_buf(&k, sendbuf, sendcount, sendtype);
    if (e == MPI_SUCCESS && (recvcounts == NULL || displs == NULL || recvbuf == NULL))
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Allgatherv: NULL buffer, counts or displacements");
    if (e == MPI_SUCCESS && mpi_type_size(recvtype) == 0)
        e = mpi_raise(comm, MPI_ERR_TYPE, "MPI_Allgatherv: receive datatype %#x", recvtype);
    if (e != MPI_SUCCESS)
        return e;
    int size = k.c->size, rank = k.c->rank;
    size_t blk = (size_t)mpi_type_size(recvtype);
    char *rb = recvbuf;
    if (sendbuf != MPI_IN_PLACE)
        memmove(rb + (size_t)displs[rank] * blk, sendbuf,
                (size_t)sendcount * (size_t)mpi_type_size(sendtype));
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    for (int i = 0; e == MPI_SUCCESS && i < size - 1; i++) {
        int sb = (rank - i + size) % size, rbk = (rank - i - 1 + size) % size;
        e = csendrecv(&k, rb + (size_t)displs[sb] * blk, (size_t)recvcounts[sb] * blk, right,
                      rb + (size_t)displs[rbk] * blk, (size_t)recvcounts[rbk] * blk, left,
                      TAG_ALLGATHER);
    }
    return e;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int size, *displs, e = MPI_Comm_size(comm, &size);
    if (e != MPI_SUCCESS)
        return e;
    int *counts = equal_blocks(size, recvcount, &displs);
    if (counts == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Allgather");
    e = MPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype, comm);
    free(counts);
    return e;
}

/* Pairwise: in step i a rank sends to rank + i and receives from rank - i. */
int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    coll_t k;
    int e = start(&k, comm, "MPI_Alltoallv");
    if (e == MPI_SUCCESS && (recvcounts == NULL || rdispls == NULL || recvbuf == NULL ||
                             (sendbuf != MPI_IN_PLACE && (sendcounts == NULL || sdispls == NULL))))
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Alltoallv: NULL buffer, counts or displacements");
    if (e == MPI_SUCCESS && (mpi_type_size(recvtype) == 0 ||
                             (sendbuf != MPI_IN_PLACE && mpi_type_size(sendtype) == 0)))
        e = mpi_raise(comm, MPI_ERR_TYPE, "MPI_Alltoallv: datatype %#x / %#x", sendtype, recvtype);
    if (e != MPI_SUCCESS)
        return e;
    int size = k.c->size, rank = k.c->rank;
    size_t rblk = (size_t)mpi_type_size(recvtype);
    char *copy = NULL;
    if (sendbuf == MPI_IN_PLACE) { /* send what recvbuf holds now */
        size_t total = 0;
        for (int i = 0; i < size; i++) {
            size_t end = ((size_t)rdispls[i] + (size_t)recvcounts[i]) * rblk;
            total = end > total ? end : total;
        }
        if ((copy = tmp_alloc(total)) == NULL)
            return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Alltoallv: %zu bytes", total);
        memcpy(copy, recvbuf, total);
        sendbuf = copy;
        sendcounts = recvcounts;
        sdispls = rdispls;
        sendtype = recvtype;
    }
    size_t sblk = (size_t)mpi_type_size(sendtype);
    const char *sb = sendbuf;
    char *rb = recvbuf;
    memmove(rb + (size_t)rdispls[rank] * rblk, sb + (size_t)sdispls[rank] * sblk,
            (size_t)sendcounts[rank] * sblk);
    for (int i = 1; e == MPI_SUCCESS && i < size; i++) {
        int dst = (rank + i) % size, src = (rank - i + size) % size;
        e = csendrecv(&k, sb + (size_t)sdispls[dst] * sblk, (size_t)sendcounts[dst] * sblk, dst,
                      rb + (size_t)rdispls[src] * rblk, (size_t)recvcounts[src] * rblk, src,
                      TAG_ALLTOALL);
    }
    free(copy);
    return e;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int size, *sd, *rd, e = MPI_Comm_size(comm, &size);
    if (e != MPI_SUCCESS)
        return e;
    int *sc = equal_blocks(size, sendcount, &sd), *rc = equal_blocks(size, recvcount, &rd);
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

/* Reduce the whole vector to rank 0, then scatter its blocks. */
int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int size, rank, e = MPI_Comm_size(comm, &size);
    if (e != MPI_SUCCESS)
        return e;
    MPI_Comm_rank(comm, &rank);
    if (recvcount < 0)
        return mpi_raise(comm, MPI_ERR_COUNT, "MPI_Reduce_scatter_block: count %d", recvcount);
    /* extents, and the blocks scattered as bytes: a pair type's size is
     * less than its extent (MAXLOC / MINLOC) */
    int sz = (int)mpi_dt_extent(datatype);
    size_t total = (size_t)recvcount * (size_t)size * (size_t)sz;
    void *all = tmp_alloc(total);
    if (all == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Reduce_scatter_block: %zu bytes", total);
    const void *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    e = MPI_Reduce(src, all, recvcount * size, datatype, op, 0, comm);
    if (e == MPI_SUCCESS)
        e = MPI_Scatter(all, recvcount * sz, MPI_BYTE, recvbuf, recvcount * sz, MPI_BYTE, 0,
                        comm);
    free(all);
    return e;
}
