/*
 * Non-blocking reduce-scatter and scans as schedules (coll_nb.h), with the
 * blocking ones' algorithms (coll.c):
 *  - reduce_scatter(_block): the binomial reduce of the whole vector to
 *    rank 0 (nb_reduce_rounds), then one round in which rank 0 sends each
 *    rank its block;
 *  - scan, exscan: recursive doubling, as coll.c's scan(): partial covers
 *    the ranks exchanged with so far, result those below this rank
 *    (exclusive) or up to it (inclusive); operand order kept for
 *    non-commutative operations.
 * The working buffers hold the elements the operation applies to
 * (coll_red_t): per of them for each element of the user's datatype.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_inter.h"
#include "mpi/coll_nb.h"

/* Ireduce_scatter once its counts were read: total elements, counts */
static int ireduce_scatter(coll_t *k, const void *sendbuf, void *recvbuf, const int counts[],
                           MPI_Datatype datatype, MPI_Op op, MPI_Request *request)
{
    int size = k->c->size, rank = k->c->rank, total = 0, e;
    for (int i = 0; i < size; i++) {
        if (counts[i] < 0)
            return mpi_raise(k->comm, MPI_ERR_COUNT, "%s: count %d for rank %d", k->call,
                             counts[i], i);
        if (counts[i] > INT_MAX - total)
            return mpi_raise(k->comm, MPI_ERR_COUNT, "%s: the counts add up to more than an int",
                             k->call);
        total += counts[i];
    }
    bool inplace = sendbuf == MPI_IN_PLACE;
    if (!inplace && (e = mpi_check_buf(k->comm, sendbuf, total, datatype, k->call)) != MPI_SUCCESS)
        return e;
    /* in place: the input is recvbuf, whole, and the result its beginning */
    if ((e = mpi_check_buf(k->comm, recvbuf, inplace ? total : counts[rank], datatype,
                           k->call)) != MPI_SUCCESS)
        return e;
    coll_red_t r;
    if ((e = coll_red_init(k, &r, total, datatype, op)) != MPI_SUCCESS)
        return e;
    sched_t *s = nb_red_sched(k, &r, inplace ? recvbuf : sendbuf, &e);
    if (s == NULL)
        return e;
    nb_reduce_rounds(s, 0);
    size_t eb = total > 0 ? (size_t)(r.n / total) * r.ext : 0; /* bytes of one element */
    size_t off = 0, mine = 0;
    for (int i = 0; i < size; i++) {
        if (i == rank)
            mine = off;
        else if (rank == 0)
            nb_add(s, NB_SEND, i, s->work + off, NULL, (size_t)counts[i] * eb);
        off += (size_t)counts[i] * eb;
    }
    if (rank != 0)
        nb_add(s, NB_RECV, 0, NULL, s->work + mine, (size_t)counts[rank] * eb);
    s->fin = END_STORE;
    s->user = recvbuf;
    s->out = s->work + mine;
    s->sred.count = counts[rank];
    s->sred.n = total > 0 ? counts[rank] * (r.n / total) : 0;
    s->sred.len = (size_t)s->sred.n * r.ext;
    return nb_start(s, request);
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_ireduce_scatter("MPI_Ireduce_scatter", sendbuf, recvbuf, 0, recvcounts,
                                          datatype, op, comm, request);
    coll_t k;
    int e = nb_begin(&k, comm, "MPI_Ireduce_scatter", request);
    if (e == MPI_SUCCESS && recvcounts == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: NULL counts", k.call);
    if (e == MPI_SUCCESS)
        e = ireduce_scatter(&k, sendbuf, recvbuf, recvcounts, datatype, op, request);
    return e;
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_ireduce_scatter("MPI_Ireduce_scatter_block", sendbuf, recvbuf,
                                          recvcount, NULL, datatype, op, comm, request);
    coll_t k;
    int *counts = NULL, *displs;
    int e = nb_begin(&k, comm, "MPI_Ireduce_scatter_block", request);
    if (e == MPI_SUCCESS && recvcount < 0)
        e = mpi_raise(comm, MPI_ERR_COUNT, "%s: count %d", k.call, recvcount);
    if (e == MPI_SUCCESS && (counts = nb_equal_blocks(&k, recvcount, &displs)) == NULL)
        e = MPI_ERR_NO_MEM;
    if (e == MPI_SUCCESS)
        e = ireduce_scatter(&k, sendbuf, recvbuf, counts, datatype, op, request);
    free(counts);
    return e;
}

static int iscan(const char *call, const void *sendbuf, void *recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request,
                 bool exclusive)
{
    coll_t k;
    coll_red_t r;
    int e = nb_begin(&k, comm, call, request);
    if (e == MPI_SUCCESS) /* MPI defines no scan on an intercommunicator */
        e = mpi_check_intra(comm, call);
    if (e == MPI_SUCCESS)
        e = coll_red_args(&k, comm, call, sendbuf, recvbuf, count, datatype, op, COLL_ALL_RANKS,
                          &r);
    if (e != MPI_SUCCESS)
        return e;
    sched_t *s = nb_red_sched(&k, &r, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, &e);
    if (s == NULL)
        return e;
    char *partial = s->work, *tmp = s->tmp, *result = nb_buf(s, r.len);
    if (result != NULL)
        memcpy(result, partial, r.len);
    bool have = !exclusive, commute = mpi_op_commutes(op); /* have: result holds something */
    int rank = k.c->rank, size = k.c->size;
    for (int mask = 1; mask < size && result != NULL; mask <<= 1) {
        int dst = rank ^ mask;
        if (dst >= size)
            continue;
        nb_add(s, NB_RECV, dst, NULL, tmp, r.len);
        nb_add(s, NB_SEND, dst, partial, NULL, r.len);
        if (rank > dst) { /* tmp covers lower ranks */
            nb_add(s, NB_REDUCE, 0, tmp, partial, 0);
            nb_add(s, have ? NB_REDUCE : NB_COPY, 0, tmp, result, have ? 0 : r.len);
            have = true;
        } else if (commute) {
            nb_add(s, NB_REDUCE, 0, tmp, partial, 0);
        } else {
            nb_add(s, NB_REDUCE, 0, partial, tmp, 0); /* tmp = partial op tmp */
            nb_add(s, NB_COPY, 0, tmp, partial, r.len);
        }
        nb_next_round(s);
    }
    if (have) { /* exscan: rank 0's recvbuf is left alone */
        s->fin = END_STORE;
        s->user = recvbuf;
        s->out = result;
    }
    return nb_start(s, request);
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request)
{
    return iscan("MPI_Iscan", sendbuf, recvbuf, count, datatype, op, comm, request, false);
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request)
{
    return iscan("MPI_Iexscan", sendbuf, recvbuf, count, datatype, op, comm, request, true);
}
