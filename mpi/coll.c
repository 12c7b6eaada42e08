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
 *    scatter(v): linear at the root.
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

static int check_buf(const coll_t *k, const void *buf, int count, MPI_Datatype dt)
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

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_gather("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                 NULL, NULL, recvtype, root, comm);
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

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_scatter("MPI_Scatter", sendbuf, sendcount, NULL, NULL, sendtype,
                                  recvbuf, recvcount, recvtype, root, comm);
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
        e = check_buf(&k, sendbuf, sendcount, sendtype);
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
    int *counts = equal_blocks(size, recvcount, &displs);
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
    int *counts = equal_blocks(size, recvcount, &displs);
    if (counts == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Reduce_scatter_block");
    e = MPI_Reduce_scatter(sendbuf, recvbuf, counts, datatype, op, comm);
    free(counts);
    return e;
}
