/*
 * Neighborhood collectives (MPI-3.1 7.6, 7.7): MPI_Neighbor_allgather(v),
 * MPI_Neighbor_alltoall(v, w) and their non-blocking forms, on the
 * communicators topo.c makes.
 *
 * The neighbors: a Cartesian topology's are, for each dimension, the
 * ranks one step down and one step up (MPI_Cart_shift(d, 1)), in and out
 * alike, MPI_PROC_NULL past a non-periodic edge (nothing is sent or
 * received there); a graph's are MPI_Graph_neighbors in and out; a
 * distributed graph's are its sources in, its destinations out.
 *
 * An operation is one tern receive per in-neighbor and one tern send per
 * out-neighbor in the communicator's collective space, under a tag of its
 * own (from the communicator's collective sequence number, shared with
 * the non-blocking collectives, so operations under way at once never
 * match each other).  A Cartesian message also carries the slot it fills
 * at the receiver: with two processes along a periodic dimension the same
 * rank is both neighbors, and the block sent up must land in the
 * receiver's down slot.  Graph neighbors repeated are matched in list
 * order (MPI's non-overtaking order).  A non-contiguous block goes through
 * a staging buffer (coll_stage_in / _out).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/coll.h"
#include "mpi/topo.h"

#define NBR_TAG_BASE (NB_TAG_BASE + NB_TAG_SPAN)
#define NBR_SLOTS 128 /* tag low bits: a Cartesian slot; so 63 dimensions at most */

typedef struct nbr_block {
    void *buf; /* the user's block */
    int count;
    MPI_Datatype dt;
    coll_stage_t st;
    bool recv;
    tern_request_t *r;
} nbr_block_t;

typedef struct nbr_op {
    coll_t k;
    int n; /* blocks: receives first */
    nbr_block_t *b;
    int err;
} nbr_op_t;

/* the neighbor lists of k's communicator (malloc'ed), and each one's tag
 * slot: the receiver's slot for a send, one's own for a receive */
typedef struct nbrs {
    int nin, nout;
    int *in, *out, *in_slot, *out_slot;
} nbrs_t;

static void nbrs_free(nbrs_t *n)
{
    free(n->in);
    free(n->out);
    free(n->in_slot);
    free(n->out_slot);
}

static int nbrs_of(const coll_t *k, nbrs_t *n)
{
    memset(n, 0, sizeof(*n));
    const mpi_topo_t *t = mpi_topo_of(k->comm);
    if (t == NULL)
        return mpi_raise(k->comm, MPI_ERR_TOPOLOGY, "%s: the communicator has no topology",
                         k->call);
    int me = k->c->rank;
    if (t->kind == MPI_CART) {
        if (t->ndims * 2 > NBR_SLOTS)
            return mpi_raise(k->comm, MPI_ERR_DIMS, "%s: %d dimensions (at most %d)", k->call,
                             t->ndims, NBR_SLOTS / 2);
        n->nin = n->nout = 2 * t->ndims;
    } else if (t->kind == MPI_GRAPH) {
        n->nin = n->nout = t->index[me] - (me > 0 ? t->index[me - 1] : 0);
    } else {
        n->nin = t->indegree;
        n->nout = t->outdegree;
    }
    size_t ni = (size_t)(n->nin > 0 ? n->nin : 1), no = (size_t)(n->nout > 0 ? n->nout : 1);
    n->in = malloc(sizeof(int) * ni);
    n->in_slot = calloc(ni, sizeof(int));
    n->out = malloc(sizeof(int) * no);
    n->out_slot = calloc(no, sizeof(int));
    if (n->in == NULL || n->in_slot == NULL || n->out == NULL || n->out_slot == NULL) {
        nbrs_free(n);
        return mpi_raise(k->comm, MPI_ERR_NO_MEM, "%s: no memory", k->call);
    }
    if (t->kind == MPI_CART) {
        for (int d = 0; d < t->ndims; d++) {
            int down, up;
            mpi_cart_shift(t, me, d, 1, &down, &up);
            n->in[2 * d] = n->out[2 * d] = down;
            n->in[2 * d + 1] = n->out[2 * d + 1] = up;
            n->in_slot[2 * d] = 2 * d;
            n->in_slot[2 * d + 1] = 2 * d + 1;
            n->out_slot[2 * d] = 2 * d + 1; /* sent down: the receiver's up slot */
            n->out_slot[2 * d + 1] = 2 * d;
        }
    } else if (t->kind == MPI_GRAPH) {
        int first = me > 0 ? t->index[me - 1] : 0;
        for (int i = 0; i < n->nin; i++)
            n->in[i] = n->out[i] = t->edges[first + i];
    } else {
        if (n->nin > 0)
            memcpy(n->in, t->sources, sizeof(int) * (size_t)n->nin);
        if (n->nout > 0)
            memcpy(n->out, t->dests, sizeof(int) * (size_t)n->nout);
    }
    return MPI_SUCCESS;
}

static void op_free(nbr_op_t *o)
{
    if (o == NULL)
        return;
    for (int i = 0; i < o->n; i++)
        coll_stage_out(&o->b[i].st, NULL, 0, o->b[i].dt, false);
    free(o->b);
    free(o);
}

/* The blocks, described by the caller: a receive block per in-neighbor, a
 * send block per out-neighbor (buf NULL: a neighbor MPI_PROC_NULL). */
static nbr_op_t *op_new(const coll_t *k, int nin, int nout)
{
    nbr_op_t *o = calloc(1, sizeof(*o));
    if (o == NULL)
        return NULL;
    o->k = *k;
    o->n = nin + nout;
    o->b = calloc((size_t)(o->n > 0 ? o->n : 1), sizeof(*o->b));
    if (o->b == NULL) {
        free(o);
        return NULL;
    }
    return o;
}

/* post every receive then every send */
static int op_start(nbr_op_t *o, const nbrs_t *n, int tag0)
{
    coll_t *k = &o->k;
    for (int i = 0; i < o->n; i++) {
        nbr_block_t *b = &o->b[i];
        bool recv = i < n->nin;
        int peer = recv ? n->in[i] : n->out[i - n->nin];
        int slot = recv ? n->in_slot[i] : n->out_slot[i - n->nin];
        b->recv = recv;
        if (peer == MPI_PROC_NULL)
            continue;
        int e = coll_stage_in(k, b->buf, b->count, b->dt, !recv, &b->st);
        if (e != MPI_SUCCESS)
            return e;
        int to = k->c->ranks[peer];
        tern_status_t st;
        tern_recv_info_t info;
        mpi_lock(k->w);
        if (recv)
            st = tern_irecv(k->w, b->st.bytes, b->st.len, to, tag0 + slot, k->space, &info, &b->r);
        else
            st = tern_isend(k->w, b->st.bytes, b->st.len, to, tag0 + slot, k->space, &b->r);
        mpi_unlock(k->w);
        if (st < 0)
            return coll_fail(k, st);
        if (st == TERN_OK) /* done at once: nothing to wait for (a receive's unpacking later) */
            b->r = NULL;
    }
    return MPI_SUCCESS;
}

/* One block finished with st: its receive unpacked; the first error kept. */
static void block_done(nbr_op_t *o, nbr_block_t *b, tern_status_t st)
{
    b->r = NULL;
    if (st != TERN_OK && o->err == MPI_SUCCESS)
        o->err = mpi_raise_tern(o->k.comm, st, o->k.call);
    coll_stage_out(&b->st, b->buf, b->count, b->dt, b->recv && st == TERN_OK);
}

/* Test every block once; true when all finished. */
static bool op_test(nbr_op_t *o)
{
    bool all = true;
    for (int i = 0; i < o->n; i++) {
        nbr_block_t *b = &o->b[i];
        if (b->r == NULL)
            continue;
        mpi_lock(o->k.w);
        tern_status_t st = tern_test(o->k.w, b->r, NULL);
        mpi_unlock(o->k.w);
        if (st == TERN_INPROGRESS)
            all = false;
        else
            block_done(o, b, st);
    }
    return all;
}

static int op_wait(nbr_op_t *o)
{
    for (int i = 0; i < o->n; i++) {
        nbr_block_t *b = &o->b[i];
        if (b->r != NULL)
            block_done(o, b, mpi_wait_tern(o->k.w, b->r, NULL));
        else
            coll_stage_out(&b->st, b->buf, b->count, b->dt, b->recv);
    }
    return o->err;
}

/* ---- the non-blocking forms: a REQ_SCHED request --------------------------------- */

static bool nbr_progress(mpi_req_t *q)
{
    nbr_op_t *o = q->aux;
    if (o == NULL) /* finished before: its status is there */
        return true;
    if (!op_test(o))
        return false;
    for (int i = 0; i < o->n; i++) /* receives done at once: their unpacking */
        if (o->b[i].r == NULL)
            coll_stage_out(&o->b[i].st, o->b[i].buf, o->b[i].count, o->b[i].dt, o->b[i].recv);
    q->err = o->err;
    mpi_status_empty(&q->status, MPI_ANY_SOURCE);
    op_free(o);
    q->aux = NULL;
    return true;
}

static int as_request(nbr_op_t *o, MPI_Request *request)
{
    MPI_Request h;
    if (mpi_req_new(&h) != MPI_SUCCESS) {
        op_wait(o); /* nothing to hand it to: finish it here */
        op_free(o);
        return mpi_raise(o->k.comm, MPI_ERR_NO_MEM, "%s: no request entry", o->k.call);
    }
    mpi_req_t *q = mpi_req_at(h);
    q->kind = REQ_SCHED;
    q->comm = o->k.comm;
    q->recv = false;
    q->progress = nbr_progress;
    q->finish = NULL;
    q->aux = o;
    q->err = MPI_SUCCESS;
    *request = h;
    return MPI_SUCCESS;
}

/* ---- one driver for the five ----------------------------------------------------- */

enum nbr_kind { ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV, ALLTOALLW };

typedef struct nbr_args {
    enum nbr_kind kind;
    const void *sbuf;
    int scount;
    const int *scounts;
    const int *sdispls;
    const MPI_Aint *sdisplw;
    MPI_Datatype stype;
    const MPI_Datatype *stypes;
    void *rbuf;
    int rcount;
    const int *rcounts;
    const int *rdispls;
    const MPI_Aint *rdisplw;
    MPI_Datatype rtype;
    const MPI_Datatype *rtypes;
} nbr_args_t;

static MPI_Aint extent_of(MPI_Datatype dt)
{
    MPI_Aint lb = 0, ext = 0;
    MPI_Type_get_extent(dt, &lb, &ext);
    return ext;
}

static int nbr_run(MPI_Comm comm, const nbr_args_t *a, MPI_Request *request, const char *call)
{
    coll_t k;
    int e = coll_start(&k, comm, call);
    if (e != MPI_SUCCESS)
        return e;
    nbrs_t n;
    if ((e = nbrs_of(&k, &n)) != MPI_SUCCESS)
        return e;
    nbr_op_t *o = op_new(&k, n.nin, n.nout);
    if (o == NULL) {
        nbrs_free(&n);
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s: no memory", call);
    }
    MPI_Aint rext = a->kind == ALLTOALLW ? 1 : extent_of(a->rtype);
    MPI_Aint sext = a->kind == ALLTOALLW ? 1 : extent_of(a->stype);
    for (int i = 0; i < n.nin && e == MPI_SUCCESS; i++) {
        nbr_block_t *b = &o->b[i];
        MPI_Aint off;
        switch (a->kind) {
        case ALLGATHER:
        case ALLTOALL:
            b->count = a->rcount;
            off = (MPI_Aint)i * a->rcount * rext;
            break;
        case ALLGATHERV:
        case ALLTOALLV:
            b->count = a->rcounts[i];
            off = (MPI_Aint)a->rdispls[i] * rext;
            break;
        default:
            b->count = a->rcounts[i];
            off = a->rdisplw[i];
            break;
        }
        b->dt = a->kind == ALLTOALLW ? a->rtypes[i] : a->rtype;
        b->buf = mpi_addr(a->rbuf, off);
        e = mpi_check_buf(comm, b->buf, b->count, b->dt, call);
    }
    for (int j = 0; j < n.nout && e == MPI_SUCCESS; j++) {
        nbr_block_t *b = &o->b[n.nin + j];
        MPI_Aint off = 0;
        switch (a->kind) {
        case ALLGATHER:
        case ALLGATHERV:
            b->count = a->scount; /* the same block to every neighbor */
            break;
        case ALLTOALL:
            b->count = a->scount;
            off = (MPI_Aint)j * a->scount * sext;
            break;
        case ALLTOALLV:
            b->count = a->scounts[j];
            off = (MPI_Aint)a->sdispls[j] * sext;
            break;
        default:
            b->count = a->scounts[j];
            off = a->sdisplw[j];
            break;
        }
        b->dt = a->kind == ALLTOALLW ? a->stypes[j] : a->stype;
        b->buf = mpi_addr(a->sbuf, off);
        e = mpi_check_buf(comm, b->buf, b->count, b->dt, call);
    }
    int tag0 = NBR_TAG_BASE + (int)(k.c->nbc_seq++ % 0x4000) * NBR_SLOTS;
    if (e == MPI_SUCCESS)
        e = op_start(o, &n, tag0);
    nbrs_free(&n);
    if (e != MPI_SUCCESS) { /* what was posted still completes: then let go */
        op_wait(o);
        op_free(o);
        return e;
    }
    if (request != NULL)
        return as_request(o, request);
    e = op_wait(o);
    op_free(o);
    return e;
}

static bool vecs_ok(const void *a, const void *b, const void *c)
{
    return a != NULL && b != NULL && c != NULL;
}

int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    nbr_args_t a = {.kind = ALLGATHER, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                    .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype};
    return nbr_run(comm, &a, NULL, "MPI_Neighbor_allgather");
}

int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!vecs_ok(recvcounts, displs, recvcounts))
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Neighbor_allgatherv: NULL counts or "
                         "displacements");
    nbr_args_t a = {.kind = ALLGATHERV, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                    .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,
                    .rtype = recvtype};
    return nbr_run(comm, &a, NULL, "MPI_Neighbor_allgatherv");
}

int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    nbr_args_t a = {.kind = ALLTOALL, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                    .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype};
    return nbr_run(comm, &a, NULL, "MPI_Neighbor_alltoall");
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!vecs_ok(sendcounts, sdispls, recvcounts) || rdispls == NULL)
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Neighbor_alltoallv: NULL counts or "
                         "displacements");
    nbr_args_t a = {.kind = ALLTOALLV, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
                    .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts,
                    .rdispls = rdispls, .rtype = recvtype};
    return nbr_run(comm, &a, NULL, "MPI_Neighbor_alltoallv");
}

int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm)
{
    if (!vecs_ok(sendcounts, sdispls, sendtypes) || !vecs_ok(recvcounts, rdispls, recvtypes))
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Neighbor_alltoallw: NULL counts, "
                         "displacements or types");
    nbr_args_t a = {.kind = ALLTOALLW, .sbuf = sendbuf, .scounts = sendcounts, .sdisplw = sdispls,
                    .stypes = sendtypes, .rbuf = recvbuf, .rcounts = recvcounts,
                    .rdisplw = rdispls, .rtypes = recvtypes};
    return nbr_run(comm, &a, NULL, "MPI_Neighbor_alltoallw");
}

int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    nbr_args_t a = {.kind = ALLGATHER, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                    .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype};
    if (request == NULL)
        return mpi_raise(comm, MPI_ERR_REQUEST, "MPI_Ineighbor_allgather: NULL request");
    return nbr_run(comm, &a, request, "MPI_Ineighbor_allgather");
}

int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!vecs_ok(recvcounts, displs, request))
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Ineighbor_allgatherv: NULL argument");
    nbr_args_t a = {.kind = ALLGATHERV, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                    .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,
                    .rtype = recvtype};
    return nbr_run(comm, &a, request, "MPI_Ineighbor_allgatherv");
}

int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request)
{
    nbr_args_t a = {.kind = ALLTOALL, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                    .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype};
    if (request == NULL)
        return mpi_raise(comm, MPI_ERR_REQUEST, "MPI_Ineighbor_alltoall: NULL request");
    return nbr_run(comm, &a, request, "MPI_Ineighbor_alltoall");
}

int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    if (!vecs_ok(sendcounts, sdispls, recvcounts) || !vecs_ok(rdispls, request, request))
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Ineighbor_alltoallv: NULL argument");
    nbr_args_t a = {.kind = ALLTOALLV, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
                    .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts,
                    .rdispls = rdispls, .rtype = recvtype};
    return nbr_run(comm, &a, request, "MPI_Ineighbor_alltoallv");
}

int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                            void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
    if (!vecs_ok(sendcounts, sdispls, sendtypes) || !vecs_ok(recvcounts, rdispls, recvtypes) ||
        request == NULL)
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Ineighbor_alltoallw: NULL argument");
    nbr_args_t a = {.kind = ALLTOALLW, .sbuf = sendbuf, .scounts = sendcounts, .sdisplw = sdispls,
                    .stypes = sendtypes, .rbuf = recvbuf, .rcounts = recvcounts,
                    .rdisplw = rdispls, .rtypes = recvtypes};
    return nbr_run(comm, &a, request, "MPI_Ineighbor_alltoallw");
}
