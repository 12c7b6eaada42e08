/*
 * The all-to-all family beyond coll_gather.c's blocking MPI_Alltoall(v):
 * MPI_Alltoallw (blocking: coll_gather.c's pairwise exchange, in step i to rank +
 * i and from rank - i) and the non-blocking MPI_Ialltoall, _Ialltoallv,
 * _Ialltoallw as schedules (coll_nb.h): every peer's block in one round,
 * the receives posted first.  The three forms are one description of each
 * side (a2a_side_t: the block for rank i is counts[i] elements of types[i]
 * at buf + displs[i], the displacements counting extents, or bytes for
 * the w form).  MPI_IN_PLACE (sendbuf): the blocks to send are what
 * recvbuf holds when the call starts, packed then, so receiving over them
 * is harmless; the rank's own block stays.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_inter.h"
#include "mpi/coll_nb.h"

typedef struct a2a_side {
    const char *buf;
    int count;                 /* alltoall: every block's */
    MPI_Datatype type;         /* alltoall, v: every block's */
    const int *counts, *displs; /* v, w */
    const MPI_Datatype *types; /* w */
} a2a_side_t;

static int side_count(const a2a_side_t *d, int i) { return d->counts ? d->counts[i] : d->count; }

static MPI_Datatype side_type(const a2a_side_t *d, int i)
{
    return d->types ? d->types[i] : d->type;
}

static char *side_at(const a2a_side_t *d, int i)
{
    if (d->types) /* w: bytes */
        return (char *)d->buf + d->displs[i];
    MPI_Aint ext = mpi_dt_extent(d->type);
    ptrdiff_t n = d->displs ? d->displs[i] : (ptrdiff_t)i * d->count;
    return (char *)d->buf + n * ext;
}

/* one side's arguments: the arrays given, every block's count, type and
 * buffer valid */
static int side_check(const coll_t *k, const a2a_side_t *d, const char *which)
{
    if (d->counts == NULL && d->count < 0)
        return mpi_raise(k->comm, MPI_ERR_COUNT, "%s: %s count %d", k->call, which, d->count);
    if (d->counts == NULL)
        return mpi_check_buf(k->comm, d->buf, d->count, d->type, k->call);
    if (d->displs == NULL)
        return mpi_raise(k->comm, MPI_ERR_ARG, "%s: NULL %s counts or displacements", k->call,
                         which);
    int e = MPI_SUCCESS;
    for (int i = 0; i < k->c->size && e == MPI_SUCCESS; i++) {
        if (d->counts[i] < 0)
            return mpi_raise(k->comm, MPI_ERR_COUNT, "%s: %s count %d for rank %d", k->call,
                             which, d->counts[i], i);
        if (d->counts[i] == 0 && side_type(d, i) == MPI_DATATYPE_NULL)
            continue; /* no element of no type (the w form), as MPICH accepts it */
        e = mpi_check_buf(k->comm, d->buf, d->counts[i], side_type(d, i), k->call);
    }
    return e;
}

/* the checks every form makes once k is started and the arrays of the w
 * form are known to be there */
static int a2a_args(const coll_t *k, const a2a_side_t *snd, const a2a_side_t *rcv)
{
    if (rcv->buf == MPI_IN_PLACE)
        return mpi_raise(k->comm, MPI_ERR_BUFFER, "%s: MPI_IN_PLACE as the receive buffer "
                         "(only the send buffer may be)", k->call);
    int e = side_check(k, rcv, "receive");
    if (e == MPI_SUCCESS && snd->buf != MPI_IN_PLACE)
        e = side_check(k, snd, "send");
    return e;
}

static int w_arrays(const coll_t *k, const int *counts, const int *displs,
                    const MPI_Datatype *types, const char *which)
{
    if (counts == NULL || displs == NULL || types == NULL)
        return mpi_raise(k->comm, MPI_ERR_ARG, "%s: NULL %s counts, displacements or types",
                         k->call, which);
    return MPI_SUCCESS;
}

/* ---- non-blocking --------------------------------------------------------- */

static int ialltoall(const coll_t *k, const a2a_side_t *snd, const a2a_side_t *rcv,
                     MPI_Request *request)
{
    int size = k->c->size, rank = k->c->rank, e = MPI_SUCCESS;
    bool inplace = snd->buf == MPI_IN_PLACE;
    sched_t *s = nb_sched_new(k, &e);
    if (s == NULL)
        return e;
    for (int i = 1; i < size; i++) {
        int src = (rank - i + size) % size;
        nb_recv_block(s, src, side_at(rcv, src), side_count(rcv, src), side_type(rcv, src));
    }
    for (int i = 1; i < size && !s->nomem; i++) {
        int dst = (rank + i) % size;
        if (!inplace) {
            nb_send_block(s, dst, side_at(snd, dst), side_count(snd, dst), side_type(snd, dst));
            continue;
        }
        /* what recvbuf holds now, before the receives land in it */
        MPI_Datatype t = side_type(rcv, dst);
        size_t len = mpi_dt_pack_size(side_count(rcv, dst), t);
        char *b = nb_buf(s, len);
        if (b != NULL) {
            mpi_dt_pack(side_at(rcv, dst), side_count(rcv, dst), t, b);
            nb_add(s, NB_SEND, dst, b, NULL, len);
        }
    }
    if (!inplace)
        e = nb_copy_now(k, side_at(snd, rank), side_count(snd, rank), side_type(snd, rank),
                        side_at(rcv, rank), side_count(rcv, rank), side_type(rcv, rank));
    if (e != MPI_SUCCESS) {
        nb_sched_free(s);
        return e;
    }
    return nb_start(s, request);
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_ialltoall("MPI_Ialltoall", sendbuf, sendcount, NULL, NULL, sendtype,
                                    NULL, recvbuf, recvcount, NULL, NULL, recvtype, NULL, comm,
                                    request);
    coll_t k;
    a2a_side_t snd = {.buf = sendbuf, .count = sendcount, .type = sendtype};
    a2a_side_t rcv = {.buf = recvbuf, .count = recvcount, .type = recvtype};
    int e = nb_begin(&k, comm, "MPI_Ialltoall", request);
    if (e == MPI_SUCCESS)
        e = a2a_args(&k, &snd, &rcv);
    return e == MPI_SUCCESS ? ialltoall(&k, &snd, &rcv, request) : e;
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_ialltoall("MPI_Ialltoallv", sendbuf, 0, sendcounts, sdispls, sendtype,
                                    NULL, recvbuf, 0, recvcounts, rdispls, recvtype, NULL, comm,
                                    request);
    coll_t k;
    a2a_side_t snd = {.buf = sendbuf, .counts = sendcounts, .displs = sdispls, .type = sendtype};
    a2a_side_t rcv = {.buf = recvbuf, .counts = recvcounts, .displs = rdispls, .type = recvtype};
    int e = nb_begin(&k, comm, "MPI_Ialltoallv", request);
    if (e == MPI_SUCCESS && (recvcounts == NULL ||
                             (sendbuf != MPI_IN_PLACE && sendcounts == NULL)))
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: NULL counts", k.call);
    if (e == MPI_SUCCESS)
        e = a2a_args(&k, &snd, &rcv);
    return e == MPI_SUCCESS ? ialltoall(&k, &snd, &rcv, request) : e;
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_ialltoall("MPI_Ialltoallw", sendbuf, 0, sendcounts, sdispls,
                                    MPI_DATATYPE_NULL, sendtypes, recvbuf, 0, recvcounts, rdispls,
                                    MPI_DATATYPE_NULL, recvtypes, comm, request);
    coll_t k;
    a2a_side_t snd = {.buf = sendbuf, .counts = sendcounts, .displs = sdispls, .types = sendtypes};
    a2a_side_t rcv = {.buf = recvbuf, .counts = recvcounts, .displs = rdispls, .types = recvtypes};
    int e = nb_begin(&k, comm, "MPI_Ialltoallw", request);
    if (e == MPI_SUCCESS)
        e = w_arrays(&k, recvcounts, rdispls, recvtypes, "receive");
    if (e == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        e = w_arrays(&k, sendcounts, sdispls, sendtypes, "send");
    if (e == MPI_SUCCESS)
        e = a2a_args(&k, &snd, &rcv);
    return e == MPI_SUCCESS ? ialltoall(&k, &snd, &rcv, request) : e;
}

/* ---- blocking MPI_Alltoallw --------------------------------------------------- */

/* one step of the pairwise exchange: sb / slen bytes out, a block in */
static int exchange(const coll_t *k, const char *sb, size_t slen, int to, void *rb, int rc,
                    MPI_Datatype rt, int from)
{
    coll_stage_t r;
    int e = coll_stage_in(k, rb, rc, rt, false, &r);
    if (e != MPI_SUCCESS)
        return e;
    e = coll_sendrecv(k, sb, slen, to, r.bytes, r.len, from, TAG_ALLTOALL);
    coll_stage_out(&r, rb, rc, rt, e == MPI_SUCCESS);
    return e;
}

/* the blocks to send, packed one after the other in *all (in place: from
 * recvbuf, before anything lands in it); off[i] where rank i's starts */
static int pack_all(const coll_t *k, const a2a_side_t *d, char **all, size_t *off)
{
    int size = k->c->size;
    off[0] = 0;
    for (int i = 0; i < size; i++)
        off[i + 1] = off[i] + mpi_dt_pack_size(side_count(d, i), side_type(d, i));
    if ((*all = coll_tmp(off[size])) == NULL)
        return mpi_raise(k->comm, MPI_ERR_NO_MEM, "%s: %zu bytes", k->call, off[size]);
    for (int i = 0; i < size; i++)
        if (i != k->c->rank)
            mpi_dt_pack(side_at(d, i), side_count(d, i), side_type(d, i), *all + off[i]);
    return MPI_SUCCESS;
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_alltoall("MPI_Alltoallw", sendbuf, 0, sendcounts, sdispls,
                                   MPI_DATATYPE_NULL, sendtypes, recvbuf, 0, recvcounts, rdispls,
                                   MPI_DATATYPE_NULL, recvtypes, comm);
    coll_t k;
    a2a_side_t snd = {.buf = sendbuf, .counts = sendcounts, .displs = sdispls, .types = sendtypes};
    a2a_side_t rcv = {.buf = recvbuf, .counts = recvcounts, .displs = rdispls, .types = recvtypes};
    int e = coll_start(&k, comm, "MPI_Alltoallw");
    if (e == MPI_SUCCESS)
        e = w_arrays(&k, recvcounts, rdispls, recvtypes, "receive");
    if (e == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        e = w_arrays(&k, sendcounts, sdispls, sendtypes, "send");
    if (e == MPI_SUCCESS)
        e = a2a_args(&k, &snd, &rcv);
    if (e != MPI_SUCCESS)
        return e;
    int size = k.c->size, rank = k.c->rank;
    char *all = NULL;
    size_t *off = NULL;
    if (sendbuf == MPI_IN_PLACE) {
        if ((off = malloc(sizeof(size_t) * ((size_t)size + 1))) == NULL)
            return mpi_raise(comm, MPI_ERR_NO_MEM, "%s: offsets", k.call);
        if ((e = pack_all(&k, &rcv, &all, off)) != MPI_SUCCESS) {
            free(off);
            return e;
        }
    } else {
        e = nb_copy_now(&k, side_at(&snd, rank), side_count(&snd, rank), side_type(&snd, rank),
                        side_at(&rcv, rank), side_count(&rcv, rank), side_type(&rcv, rank));
    }
    for (int i = 1; e == MPI_SUCCESS && i < size; i++) {
        int dst = (rank + i) % size, src = (rank - i + size) % size;
        coll_stage_t sb = {0};
        if (all != NULL) {
            sb.bytes = all + off[dst];
            sb.len = off[dst + 1] - off[dst];
        } else if ((e = coll_stage_in(&k, side_at(&snd, dst), side_count(&snd, dst),
                                      side_type(&snd, dst), true, &sb)) != MPI_SUCCESS) {
            break;
        }
        e = exchange(&k, sb.bytes, sb.len, dst, side_at(&rcv, src), side_count(&rcv, src),
                     side_type(&rcv, src), src);
        coll_stage_out(&sb, NULL, 0, MPI_DATATYPE_NULL, false);
    }
    coll_tmp_free(all);
    free(off);
    return e;
}
