/*
 * Collectives over point to point, in the communicator's collective space
 * (its space + 1, so no user receive ever takes their messages), one tag
 * per kind of collective.  Every rank calls a communicator's collectives in
 * the same order and the messages of one source are matched in order, so
 * the messages of successive collectives never mix.  Non-blocking ones
 * (coll_nb.c) take a tag of their own each, so they may overlap these.
 *
 * Algorithms (MPICH's, chosen by size as MPICH does; docs/mpi.md):
 *  - barrier: dissemination;
 *  - bcast: binomial tree below TERN_MPI_BCAST_LONG bytes (12288) or below
 *    TERN_MPI_BCAST_MIN_PROCS ranks (8); above both, scatter + ring
 *    allgather (van de Geijn, coll_long.c);
 *  - reduce: binomial (non-commutative ops reduce to rank 0, which hands
 *    the result to the root);
 *  - allreduce: recursive doubling up to TERN_MPI_ALLREDUCE_LONG bytes
 *    (2048), or for non-commutative ops, or fewer elements than the power
 *    of two of the ranks; above, Rabenseifner (reduce-scatter by recursive
 *    halving + allgather by recursive doubling, coll_long.c); both fold the
 *    ranks beyond the largest power of two in first;
 *  - scan, exscan: recursive doubling; reduce-scatter(_block): reduce to
 *    rank 0 + scatter(v);
 *  - allgather(v): ring; alltoall(v): pairwise exchange; gather(v) /
 *    scatter(v): linear at the root (these four: coll_gather.c).
 * Datatypes: a contiguous type is sent in place, another is packed into a
 * staging buffer (mpi_dt_pack) and unpacked at the end; displacements are
 * in extents.  Reductions work on a buffer of elements the op applies to
 * (coll_red_t).  Operand order is kept for non-commutative ops.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/coll.h"
#include "mpi/coll_inter.h"

int coll_fail(const coll_t *k, tern_status_t st)
{
    return mpi_raise_tern(k->comm, st, k->call);
}

/* Blocking point to point through mt.c's forms: they poll (and move the
 * schedules of non-blocking collectives on: they may wait for this rank's
 * messages while its peers wait in this call) whenever mpi_polling says a
 * wait must, and otherwise go straight to tern's blocking calls. */
int coll_send(const coll_t *k, const void *buf, size_t len, int to, int tag)
{
    tern_status_t st = mpi_send_tern(k->w, buf, len, k->c->ranks[to], tag, k->space);
    return st == TERN_OK ? MPI_SUCCESS : coll_fail(k, st);
}

int coll_recv(const coll_t *k, void *buf, size_t len, int from, int tag)
{
    tern_status_t st = mpi_recv_tern(k->w, buf, len, k->c->ranks[from], tag, k->space, NULL);
    return st == TERN_OK ? MPI_SUCCESS : coll_fail(k, st);
}

/* receive posted first, so two ranks exchanging never wait for each other */
int coll_sendrecv(const coll_t *k, const void *sbuf, size_t slen, int to, void *rbuf,
                  size_t rlen, int from, int tag)
{
    tern_request_t *r = NULL;
    mpi_lock(k->w);
    tern_status_t st = tern_irecv(k->w, rbuf, rlen, k->c->ranks[from], tag, k->space, NULL, &r);
    mpi_unlock(k->w);
    if (st != TERN_OK && st != TERN_INPROGRESS)
        return coll_fail(k, st);
    int ss = coll_send(k, sbuf, slen, to, tag);
    if (st == TERN_INPROGRESS) /* completed even when the send failed: tern's rule */
        st = mpi_wait_tern(k->w, r, NULL);
    if (ss != MPI_SUCCESS)
        return ss;
    return st == TERN_OK ? MPI_SUCCESS : coll_fail(k, st);
}

int coll_start(coll_t *k, MPI_Comm comm, const char *call)
{
    int e = mpi_check_comm(comm, call);
    if (e != MPI_SUCCESS)
        return e;
    k->comm = comm;
    k->c = mpi_comm_get(comm);
    k->space = (uint16_t)(k->c->space + 1);
    k->w = k->c->w;
    k->call = call;
    if (mpi.mt || coll_nb_active > 0) /* a collective call is a chance to move them on */
        mpi_coll_progress();
    return MPI_SUCCESS;
}

int coll_check_root(const coll_t *k, int root)
{
    if (root < 0 || root >= k->c->size)
        return mpi_raise(k->comm, MPI_ERR_ROOT, "%s: root %d (the communicator has %d%s)",
                         k->call, root, k->c->size,
                         root == MPI_ROOT || root == MPI_PROC_NULL
                             ? "; MPI_ROOT and MPI_PROC_NULL are roots of an "
                               "intercommunicator's collectives"
                             : "");
    return MPI_SUCCESS;
}

int coll_check_buf(const coll_t *k, const void *buf, int count, MPI_Datatype dt)
{
    return buf == MPI_IN_PLACE ? MPI_SUCCESS : mpi_check_buf(k->comm, buf, count, dt, k->call);
}

/* Scratch buffers: the large ones (COLL_TMP_KEEP bytes and more) a
 * collective gives back are kept, up to COLL_TMP_CACHED of them, for the
 * next one: a fresh 4 MiB malloc is an mmap whose page faults cost more
 * than the reduction (allreduce of 4 MiB: 75 % of its time in faults and
 * munmap).  Any malloc'd pointer may be given back; the cache is freed at
 * MPI_Finalize.  Under MPI_THREAD_MULTIPLE the cache is tmp_lock's. */
#define COLL_TMP_KEEP (64 * 1024)
#define COLL_TMP_CACHED 4
static void *tmp_cache[COLL_TMP_CACHED];
static pthread_mutex_t tmp_lock = PTHREAD_MUTEX_INITIALIZER;


void *coll_tmp(size_t len)
{
    if (len >= COLL_TMP_KEEP) {
        void *p = NULL;
        mpi_mt_lock(&tmp_lock);
        for (int i = 0; i < COLL_TMP_CACHED && p == NULL; i++)
            if (tmp_cache[i] != NULL && malloc_usable_size(tmp_cache[i]) >= len) {
                p = tmp_cache[i];
                tmp_cache[i] = NULL;
            }
        mpi_mt_unlock(&tmp_lock);
        if (p != NULL)
            return p;
    }
    return malloc(len ? len : 1);
}

void coll_tmp_free(void *p)
{
    if (p == NULL)
        return;
    if (malloc_usable_size(p) >= COLL_TMP_KEEP) {
        mpi_mt_lock(&tmp_lock);
        int small = -1; /* a full cache keeps the larger buffers */
        for (int i = 0; i < COLL_TMP_CACHED; i++) {
            if (tmp_cache[i] == NULL) {
                tmp_cache[i] = p;
                p = NULL;
                break;
            }
            if (small < 0 ||
                malloc_usable_size(tmp_cache[i]) < malloc_usable_size(tmp_cache[small]))
                small = i;
        }
        if (p != NULL && malloc_usable_size(tmp_cache[small]) < malloc_usable_size(p)) {
            void *q = tmp_cache[small];
            tmp_cache[small] = p;
            p = q;
        }
        mpi_mt_unlock(&tmp_lock);
    }
    free(p);
}

void coll_tmp_drain(void)
{
    for (int i = 0; i < COLL_TMP_CACHED; i++) {
        free(tmp_cache[i]);
        tmp_cache[i] = NULL;
    }
}

/* ---- barrier ------------------------------------------------------------- */

/* Dissemination: in round k each rank sends to rank + 2^k and receives
 * from rank - 2^k (tag k). */
int MPI_Barrier(MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_barrier(comm);
    coll_t k;
    int e = coll_start(&k, comm, "MPI_Barrier");
    for (int r = 0, step = 1; e == MPI_SUCCESS && step < k.c->size; r++, step <<= 1) {
        char out = 0, in = 0;
        e = coll_sendrecv(&k, &out, 1, (k.c->rank + step) % k.c->size, &in, 1,
                          (k.c->rank - step + k.c->size) % k.c->size, r);
    }
    return e;
}

/* ---- broadcast, reduce ------------------------------------------------------ */

static int bcast_binomial(const coll_t *k, void *buf, size_t len, int root)
{
    int size = k->c->size, rank = k->c->rank, rel = (rank - root + size) % size, e;
    int mask = 1;
    for (; mask < size; mask <<= 1)
        if (rel & mask) { /* from the parent */
            if ((e = coll_recv(k, buf, len, (rank - mask + size) % size, TAG_BCAST)) !=
                MPI_SUCCESS)
                return e;
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < size &&
            (e = coll_send(k, buf, len, (rank + mask) % size, TAG_BCAST)) != MPI_SUCCESS)
            return e;
    return MPI_SUCCESS;
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_bcast(buffer, count, datatype, root, comm);
    coll_t k;
    int e = coll_start(&k, comm, "MPI_Bcast");
    if (e == MPI_SUCCESS)
        e = coll_check_root(&k, root);
    if (e == MPI_SUCCESS)
        e = mpi_check_buf(comm, buffer, count, datatype, k.call);
    coll_stage_t s;
    if (e != MPI_SUCCESS ||
        (e = coll_stage_in(&k, buffer, count, datatype, k.c->rank == root, &s)) != MPI_SUCCESS)
        return e;
    if (coll_bcast_is_long(&k, s.len))
        e = coll_bcast_long(&k, s.bytes, s.len, root);
    else
        e = bcast_binomial(&k, s.bytes, s.len, root);
    coll_stage_out(&s, buffer, count, datatype, e == MPI_SUCCESS && k.c->rank != root);
    return e;
}

/* Binomial reduce to root 0 of the relative numbering; acc holds this
 * rank's partial result (the ranks [rel, rel + mask)), combined lower op
 * higher.  Non-commutative ops reduce to rank 0, which hands the result on. */
static int reduce_tree(const coll_t *k, const coll_red_t *r, char *acc, int root, char *tmp)
{
    int size = k->c->size, rank = k->c->rank, rel = (rank - root + size) % size;
    for (int mask = 1; mask < size; mask <<= 1) {
        if ((rel & mask) == 0) {
            int src_rel = rel | mask;
            if (src_rel >= size)
                continue;
            int e = coll_recv(k, tmp, r->len, (src_rel + root) % size, TAG_REDUCE);
            if (e != MPI_SUCCESS)
                return e;
            coll_red_apply(r, acc, tmp); /* tmp = acc op tmp (lower op higher) */
            memcpy(acc, tmp, r->len);
        } else {
            return coll_send(k, acc, r->len, ((rel & ~mask) + root) % size, TAG_REDUCE);
        }
    }
    return MPI_SUCCESS;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    coll_t k;
    coll_red_t r;
    char *acc, *tmp;
    int e = coll_red_args(&k, comm, "MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, &r);
    if (e != MPI_SUCCESS ||
        (e = coll_red_bufs(&k, &r, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, &acc, &tmp)) !=
            MPI_SUCCESS)
        return e;
    int tree_root = mpi_op_commutes(op) ? root : 0;
    e = reduce_tree(&k, &r, acc, tree_root, tmp);
    if (e == MPI_SUCCESS && tree_root != root) { /* non-commutative: 0 hands it on */
        if (k.c->rank == 0)
            e = coll_send(&k, acc, r.len, root, TAG_REDUCE);
        else if (k.c->rank == root)
            e = coll_recv(&k, acc, r.len, 0, TAG_REDUCE);
    }
    if (e == MPI_SUCCESS && k.c->rank == root)
        e = coll_red_store(&k, &r, acc, recvbuf);
    coll_tmp_free(acc);
    coll_tmp_free(tmp);
    return e;
}

/* Recursive doubling on buf, MPICH's: with rem = size - pof2, the first
 * 2 * rem ranks pair up (odd ones take their even neighbour's data and
 * part), the pof2 that remain exchange with newrank ^ mask, then the odd
 * ones hand the result back. */
static int allreduce_rd(const coll_t *k, const coll_red_t *r, char *buf, char *tmp)
{
    int size = k->c->size, rank = k->c->rank, e;
    size_t len = r->len;
    bool commute = mpi_op_commutes(r->op);
    int pof2 = 1;
    while (pof2 * 2 <= size)
        pof2 *= 2;
    int rem = size - pof2, newrank;
    if (rank < 2 * rem) {
        if (rank % 2 == 0) {
            if ((e = coll_send(k, buf, len, rank + 1, TAG_ALLREDUCE)) != MPI_SUCCESS)
                return e;
            newrank = -1;
        } else {
            if ((e = coll_recv(k, tmp, len, rank - 1, TAG_ALLREDUCE)) != MPI_SUCCESS)
                return e;
            coll_red_apply(r, tmp, buf); /* buf = lower op buf */
            newrank = rank / 2;
        }
    } else {
        newrank = rank - rem;
    }
    if (newrank != -1) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int newdst = newrank ^ mask;
            int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            if ((e = coll_sendrecv(k, buf, len, dst, tmp, len, dst, TAG_ALLREDUCE)) !=
                MPI_SUCCESS)
                return e;
            if (commute || dst < rank) {
                coll_red_apply(r, tmp, buf); /* buf = tmp op buf */
            } else {
                coll_red_apply(r, buf, tmp); /* tmp = buf op tmp */
                memcpy(buf, tmp, len);
            }
        }
    }
    if (rank < 2 * rem)
        return rank % 2 ? coll_send(k, buf, len, rank - 1, TAG_ALLREDUCE)
                        : coll_recv(k, buf, len, rank + 1, TAG_ALLREDUCE);
    return MPI_SUCCESS;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    coll_t k;
    coll_red_t r;
    char *work, *tmp;
    int e = coll_red_args(&k, comm, "MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, COLL_ALL_RANKS,
                          &r);
    if (e != MPI_SUCCESS)
        return e;
    /* the user's own layout: work in recvbuf (one copy in, none out) */
    bool direct = r.how == RED_DIRECT;
    if (direct) {
        work = recvbuf;
        if (sendbuf != MPI_IN_PLACE && r.len > 0)
            memcpy(recvbuf, sendbuf, r.len);
        if ((tmp = coll_tmp(r.len)) == NULL)
            return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Allreduce: %zu bytes", r.len);
    } else if ((e = coll_red_bufs(&k, &r, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, &work,
                                  &tmp)) != MPI_SUCCESS) {
        return e;
    }
    if (coll_allreduce_is_long(&k, &r))
        e = coll_allreduce_long(&k, &r, work, tmp);
    else
        e = allreduce_rd(&k, &r, work, tmp);
    if (!direct) {
        if (e == MPI_SUCCESS)
            e = coll_red_store(&k, &r, work, recvbuf);
        coll_tmp_free(work);
    }
    coll_tmp_free(tmp);
    return e;
}

/* Recursive doubling: partial covers the ranks exchanged with so far
 * (this one included), result those below this rank (exclusive) or up to
 * it (inclusive, starting as this rank's own). */
static int scan(const char *call, const void *sendbuf, void *recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, bool exclusive)
{
    coll_t k;
    coll_red_t r;
    char *partial, *tmp, *result = NULL;
    int e = mpi_check_comm(comm, call);
    if (e == MPI_SUCCESS) /* MPI defines no scan on an intercommunicator */
        e = mpi_check_intra(comm, call);
    if (e == MPI_SUCCESS)
        e = coll_red_args(&k, comm, call, sendbuf, recvbuf, count, datatype, op, COLL_ALL_RANKS,
                          &r);
    if (e != MPI_SUCCESS ||
        (e = coll_red_bufs(&k, &r, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, &partial, &tmp)) !=
            MPI_SUCCESS)
        return e;
    if ((result = coll_tmp(r.len)) == NULL) {
        coll_tmp_free(partial);
        coll_tmp_free(tmp);
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s: %zu bytes", call, r.len);
    }
    memcpy(result, partial, r.len);
    bool have = !exclusive; /* result holds something */
    int rank = k.c->rank, size = k.c->size;
    for (int mask = 1; e == MPI_SUCCESS && mask < size; mask <<= 1) {
        int dst = rank ^ mask;
        if (dst >= size)
            continue;
        if ((e = coll_sendrecv(&k, partial, r.len, dst, tmp, r.len, dst, TAG_SCAN)) !=
            MPI_SUCCESS)
            break;
        if (rank > dst) { /* tmp covers lower ranks */
            coll_red_apply(&r, tmp, partial);
            if (have)
                coll_red_apply(&r, tmp, result);
            else
                memcpy(result, tmp, r.len);
            have = true;
        } else if (mpi_op_commutes(op)) {
            coll_red_apply(&r, tmp, partial);
        } else {
            coll_red_apply(&r, partial, tmp); /* tmp = partial op tmp */
            memcpy(partial, tmp, r.len);
        }
    }
    if (e == MPI_SUCCESS && have) /* exscan: rank 0's recvbuf is left alone */
        e = coll_red_store(&k, &r, result, recvbuf);
    coll_tmp_free(partial);
    coll_tmp_free(tmp);
    coll_tmp_free(result);
    return e;
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)
{
    return scan("MPI_Scan", sendbuf, recvbuf, count, datatype, op, comm, false);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm)
{
    return scan("MPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm, true);
}

/* ---- reduce-scatter ---------------------------------------------------------- */

/* Reduce the whole vector to rank 0, then scatter its blocks. */
int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_reduce_scatter("MPI_Reduce_scatter", sendbuf, recvbuf, 0, recvcounts,
                                         datatype, op, comm);
    coll_t k;
    int e = coll_start(&k, comm, "MPI_Reduce_scatter");
    if (e == MPI_SUCCESS && recvcounts == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Reduce_scatter: NULL counts");
    if (e == MPI_SUCCESS)
        e = mpi_check_buf(comm, NULL, 0, datatype, k.call);
    if (e != MPI_SUCCESS)
        return e;
    int size = k.c->size, rank = k.c->rank, total = 0;
    int *displs = malloc(sizeof(int) * (size_t)size);
    if (displs == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Reduce_scatter");
    for (int i = 0; i < size; i++) {
        if (recvcounts[i] < 0) {
            free(displs);
            return mpi_raise(comm, MPI_ERR_COUNT, "MPI_Reduce_scatter: count %d of rank %d",
                             recvcounts[i], i);
        }
        displs[i] = total;
        total += recvcounts[i];
    }
    size_t bytes = (size_t)total * (size_t)mpi_dt_extent(datatype);
    void *all = coll_tmp(bytes);
    if (all == NULL) {
        free(displs);
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Reduce_scatter: %zu bytes", bytes);
    }
    /* in place: the input is recvbuf, whole; rank 0's result lands in all */
    const void *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    e = MPI_Reduce(src, all, total, datatype, op, 0, comm);
    if (e == MPI_SUCCESS)
        e = MPI_Scatterv(all, recvcounts, displs, datatype, recvbuf, recvcounts[rank], datatype,
                         0, comm);
    coll_tmp_free(all);
    free(displs);
    return e;
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_reduce_scatter("MPI_Reduce_scatter_block", sendbuf, recvbuf, recvcount,
                                         NULL, datatype, op, comm);
    int size, *displs, e = MPI_Comm_size(comm, &size);
    if (e != MPI_SUCCESS)
        return e;
    if (recvcount < 0)
        return mpi_raise(comm, MPI_ERR_COUNT, "MPI_Reduce_scatter_block: count %d", recvcount);
    int *counts = coll_equal_blocks(size, recvcount, &displs);
    if (counts == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Reduce_scatter_block");
    e = MPI_Reduce_scatter(sendbuf, recvbuf, counts, datatype, op, comm);
    free(counts);
    return e;
}
