/*
 * Blocking collectives on intercommunicators (MPI-3.1 5.2.2): what one
 * group gives, the other receives.  In a rooted one the root passes
 * MPI_ROOT, the other processes of its group MPI_PROC_NULL (they take no
 * part), and the other group the root's rank in it.
 *
 * Algorithms: the messages across go in the intercommunicator's
 * collective space; the local steps are the intracommunicator
 * collectives on its hidden local group (inter.c), whose messages come
 * from the local processes only:
 *  - barrier: local barrier, the leaders (local rank 0) swap a byte, local
 *    broadcast;
 *  - bcast: the root sends to remote rank 0, which broadcasts locally;
 *  - reduce: the group reduces locally to its rank 0, which sends to the
 *    root;
 *  - allreduce: each group reduces locally, the leaders swap their
 *    results, each broadcasts the other group's locally;
 *  - gather(v), scatter(v): linear at the root;
 *  - allgather(v), alltoall(v, w): every process posts a receive from and
 *    a send to every remote process at once;
 *  - reduce_scatter(_block): each group reduces the whole vector locally,
 *    the leaders swap, each scatters the other group's result locally.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_inter.h"

int coll_inter_root(const coll_t *k, int root)
{
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < k->c->size))
        return MPI_SUCCESS;
    return mpi_raise(k->comm, MPI_ERR_ROOT, "%s: root %d on an intercommunicator (MPI_ROOT at "
                     "the root, MPI_PROC_NULL at the other processes of its group, the root's "
                     "rank in the remote group, 0..%d, at the other group)", k->call, root,
                     k->c->size - 1);
}

int coll_inter_no_inplace(const coll_t *k, const void *buf, const char *which)
{
    if (buf == MPI_IN_PLACE)
        return mpi_raise(k->comm, MPI_ERR_BUFFER, "%s: MPI_IN_PLACE as %s on an "
                         "intercommunicator (MPI allows it on intracommunicators only)", k->call,
                         which);
    return MPI_SUCCESS;
}

/* the hidden local group's handle */
static MPI_Comm local_of(const coll_t *k)
{
    return mpi_comm_handle(k->c->local);
}

/* A local step's error (the hidden group raises nothing): raised on the
 * intercommunicator, its message kept. */
static int local_step(const coll_t *k, int e)
{
    if (e == MPI_SUCCESS)
        return e;
    char msg[MPI_MAX_ERROR_STRING];
    snprintf(msg, sizeof(msg), "%s", mpi_last_error);
    return mpi_raise_code(k->comm, e, "%s (the local group's step): %s", k->call, msg);
}

/* count elements of dt to or from a remote rank: coll_block_send /
 * coll_block_recv; both ways with one (the receive posted first) */
static int tsendrecv(const coll_t *k, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                     int peer, int tag)
{
    coll_stage_t s, r;
    int e = coll_stage_in(k, sbuf, count, dt, true, &s);
    if (e != MPI_SUCCESS)
        return e;
    if ((e = coll_stage_in(k, rbuf, count, dt, false, &r)) == MPI_SUCCESS) {
        e = coll_sendrecv(k, s.bytes, s.len, peer, r.bytes, r.len, peer, tag);
        coll_stage_out(&r, rbuf, count, dt, e == MPI_SUCCESS);
    }
    coll_stage_out(&s, NULL, 0, dt, false);
    return e;
}

/* room for count elements of dt (its true bounds: an element may reach
 * before its lb), element 0 at the pointer returned; *base to give back */
static char *elems(const coll_t *k, int count, MPI_Datatype dt, char **base)
{
    MPI_Aint lo = 0, hi = 0;
    coll_span(count, dt, 0, &lo, &hi);
    *base = coll_tmp((size_t)(hi - lo));
    if (*base == NULL) {
        mpi_raise(k->comm, MPI_ERR_NO_MEM, "%s: %ld bytes", k->call, (long)(hi - lo));
        return NULL;
    }
    return *base - lo;
}

/* ---- barrier, bcast ------------------------------------------------------------ */

int coll_inter_barrier(MPI_Comm comm)
{
    coll_t k;
    int e = coll_start(&k, comm, "MPI_Barrier");
    if (e != MPI_SUCCESS)
        return e;
    char out = 0, in = 0;
    e = local_step(&k, MPI_Barrier(local_of(&k))); /* every local process is in */
    if (e == MPI_SUCCESS && k.c->rank == 0) /* and every remote one */
        e = coll_sendrecv(&k, &out, 1, 0, &in, 1, 0, TAG_INTER_BARRIER);
    if (e == MPI_SUCCESS)
        e = local_step(&k, MPI_Bcast(&in, 1, MPI_CHAR, 0, local_of(&k)));
    return e;
}

int coll_inter_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    coll_t k;
    int e = coll_start(&k, comm, "MPI_Bcast");
    if (e == MPI_SUCCESS)
        e = coll_inter_root(&k, root);
    if (e != MPI_SUCCESS || root == MPI_PROC_NULL)
        return e;
    if ((e = mpi_check_buf(comm, buf, count, dt, k.call)) != MPI_SUCCESS)
        return e;
    if (root == MPI_ROOT)
        return coll_block_send(&k, buf, count, dt, 0, TAG_BCAST);
    if (k.c->rank == 0)
        e = coll_block_recv(&k, buf, count, dt, root, TAG_BCAST);
    if (e == MPI_SUCCESS)
        e = local_step(&k, MPI_Bcast(buf, count, dt, 0, local_of(&k)));
    return e;
}

/* ---- reductions -------------------------------------------------------------------- */

/* the checks of a reduction: operation against type, the buffers the
 * process gives (send: its group contributes; recv: it receives) */
static int red_args(coll_t *k, MPI_Comm comm, const char *call, const void *sendbuf,
                    const void *recvbuf, int scount, int rcount, MPI_Datatype dt, MPI_Op op,
                    bool send, bool recv)
{
    coll_red_t r;
    int e = coll_start(k, comm, call);
    if (e == MPI_SUCCESS && send) /* the root's is not significant */
        e = coll_inter_no_inplace(k, sendbuf, "the send buffer");
    if (e == MPI_SUCCESS && send)
        e = mpi_check_buf(comm, sendbuf, scount, dt, call);
    if (e == MPI_SUCCESS && recv)
        e = mpi_check_buf(comm, recvbuf, rcount, dt, call);
    if (e == MPI_SUCCESS)
        e = coll_red_init(k, &r, scount > rcount ? scount : rcount, dt, op);
    return e;
}

/* The group's sendbufs reduced to its rank 0, into *acc there (count
 * elements of dt; *base to give back). */
static int reduce_local(const coll_t *k, const void *sendbuf, int count, MPI_Datatype dt,
                        MPI_Op op, char **acc, char **base)
{
    *acc = *base = NULL;
    if (k->c->rank == 0 && (*acc = elems(k, count, dt, base)) == NULL)
        return MPI_ERR_NO_MEM;
    return local_step(k, MPI_Reduce(sendbuf, *acc, count, dt, op, 0, local_of(k)));
}

int coll_inter_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                      int root, MPI_Comm comm)
{
    coll_t k;
    int e = coll_start(&k, comm, "MPI_Reduce");
    if (e == MPI_SUCCESS)
        e = coll_inter_root(&k, root);
    if (e == MPI_SUCCESS && root != MPI_PROC_NULL)
        e = red_args(&k, comm, k.call, sendbuf, recvbuf, count, count, dt, op, root >= 0,
                     root == MPI_ROOT);
    if (e != MPI_SUCCESS || root == MPI_PROC_NULL)
        return e;
    if (root == MPI_ROOT)
        return coll_block_recv(&k, recvbuf, count, dt, 0, TAG_REDUCE);
    char *acc, *base;
    e = reduce_local(&k, sendbuf, count, dt, op, &acc, &base);
    if (e == MPI_SUCCESS && k.c->rank == 0)
        e = coll_block_send(&k, acc, count, dt, root, TAG_REDUCE);
    coll_tmp_free(base);
    return e;
}

int coll_inter_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                         MPI_Op op, MPI_Comm comm)
{
    coll_t k;
    char *acc, *base;
    int e = red_args(&k, comm, "MPI_Allreduce", sendbuf, recvbuf, count, count, dt, op, true,
                     true);
    if (e == MPI_SUCCESS)
        e = reduce_local(&k, sendbuf, count, dt, op, &acc, &base);
    if (e != MPI_SUCCESS)
        return e;
    if (k.c->rank == 0) /* the leaders swap their groups' results */
        e = tsendrecv(&k, acc, recvbuf, count, dt, 0, TAG_ALLREDUCE);
    coll_tmp_free(base);
    if (e == MPI_SUCCESS)
        e = local_step(&k, MPI_Bcast(recvbuf, count, dt, 0, local_of(&k)));
    return e;
}

/* Each group reduces the whole vector (total elements: the sum of its
 * counts, which MPI has equal to the other group's sum), the leaders swap
 * their results, and each scatters the other's over the group. */
int coll_inter_reduce_scatter(const char *call, const void *sendbuf, void *recvbuf,
                              int recvcount, const int recvcounts[], MPI_Datatype dt, MPI_Op op,
                              MPI_Comm comm)
{
    coll_t k;
    int e = coll_start(&k, comm, call);
    if (e != MPI_SUCCESS)
        return e;
    const mpi_comm_t *lc = mpi_comm_local(k.c);
    int n = lc->size, total = 0, mine = recvcounts != NULL ? 0 : recvcount;
    if (recvcounts == NULL && recvcount < 0)
        return mpi_raise(comm, MPI_ERR_COUNT, "%s: count %d", call, recvcount);
    for (int i = 0; i < n; i++) {
        int c = recvcounts != NULL ? recvcounts[i] : recvcount;
        if (c < 0)
            return mpi_raise(comm, MPI_ERR_COUNT, "%s: count %d of local rank %d", call, c, i);
        if (c > (1 << 30) - total)
            return mpi_raise(comm, MPI_ERR_COUNT, "%s: the counts add up to more than 2^30",
                             call);
        total += c;
        if (i == k.c->rank && recvcounts != NULL)
            mine = c;
    }
    if ((e = red_args(&k, comm, call, sendbuf, recvbuf, total, mine, dt, op, true, true)) !=
        MPI_SUCCESS)
        return e;
    char *acc, *base, *theirs = NULL, *tbase = NULL;
    e = reduce_local(&k, sendbuf, total, dt, op, &acc, &base);
    if (e == MPI_SUCCESS && k.c->rank == 0 &&
        (theirs = elems(&k, total, dt, &tbase)) == NULL)
        e = MPI_ERR_NO_MEM;
    if (e == MPI_SUCCESS && k.c->rank == 0)
        e = tsendrecv(&k, acc, theirs, total, dt, 0, TAG_INTER_RED_SCAT);
    coll_tmp_free(base);
    if (e == MPI_SUCCESS && recvcounts == NULL) {
        e = local_step(&k, MPI_Scatter(theirs, recvcount, dt, recvbuf, recvcount, dt, 0,
                                       local_of(&k)));
    } else if (e == MPI_SUCCESS) {
        int *displs = malloc(sizeof(int) * (size_t)n);
        if (displs == NULL) {
            e = mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
        } else {
            for (int i = 0, at = 0; i < n; at += recvcounts[i], i++)
                displs[i] = at;
            e = local_step(&k, MPI_Scatterv(theirs, recvcounts, displs, dt, recvbuf, mine, dt,
                                            0, local_of(&k)));
            free(displs);
        }
    }
    coll_tmp_free(tbase);
    return e;
}

/* ---- gather, scatter ---------------------------------------------------------- */

/* the root's blocks: counts[i] (or count) elements at displs[i] (or i *
 * count) extents of dt, for each remote rank i; checked */
int coll_inter_blocks(const coll_t *k, const void *buf, int count, const int counts[],
                       const int displs[], MPI_Datatype dt, bool v)
{
    if (v && (counts == NULL || displs == NULL))
        return mpi_raise(k->comm, MPI_ERR_ARG, "%s: NULL counts or displacements at the root",
                         k->call);
    int e = mpi_check_buf(k->comm, NULL, 0, dt, k->call);
    for (int i = 0; i < k->c->size && e == MPI_SUCCESS; i++) {
        int c = v ? counts[i] : count;
        if (c < 0)
            return mpi_raise(k->comm, MPI_ERR_COUNT, "%s: count %d for remote rank %d", k->call,
                             c, i);
        e = mpi_check_buf(k->comm, buf, c, dt, k->call);
    }
    return e;
}

char *coll_inter_block_at(const void *buf, int i, int count, const int displs[], MPI_Datatype dt)
{
    return mpi_addr(buf, (MPI_Aint)(displs != NULL ? displs[i] : i * count) * mpi_dt_extent(dt));
}

/* gather or scatter: the root moves a block with every remote process */
static int rooted(const coll_rooted_t *x, int root, MPI_Comm comm)
{
    coll_t k;
    int e = coll_start(&k, comm, x->call);
    if (e == MPI_SUCCESS)
        e = coll_inter_root(&k, root);
    if (e != MPI_SUCCESS || root == MPI_PROC_NULL)
        return e;
    int tag = x->gather ? TAG_GATHER : TAG_SCATTER;
    if (root >= 0) {
        if ((e = coll_inter_no_inplace(&k, x->one, x->gather ? "the send buffer"
                                                             : "the receive buffer")) ==
                MPI_SUCCESS &&
            (e = mpi_check_buf(comm, x->one, x->one_count, x->one_type, x->call)) == MPI_SUCCESS)
            e = x->gather ? coll_block_send(&k, x->one, x->one_count, x->one_type, root, tag)
                          : coll_block_recv(&k, x->one, x->one_count, x->one_type, root, tag);
        return e;
    }
    bool v = x->counts != NULL || x->displs != NULL;
    if ((e = coll_inter_blocks(&k, x->many, x->many_count, x->counts, x->displs, x->many_type,
                               v)) != MPI_SUCCESS)
        return e;
    for (int i = 0; i < k.c->size && e == MPI_SUCCESS; i++) {
        char *b = coll_inter_block_at(x->many, i, x->many_count, x->displs, x->many_type);
        int n = v ? x->counts[i] : x->many_count;
        e = x->gather ? coll_block_recv(&k, b, n, x->many_type, i, tag)
                      : coll_block_send(&k, b, n, x->many_type, i, tag);
    }
    return e;
}

int coll_inter_gather(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, const int recvcounts[], const int displs[],
                      MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    coll_rooted_t x = {call, true, (void *)(uintptr_t)sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvcounts, displs, recvtype};
    return rooted(&x, root, comm);
}

int coll_inter_scatter(const char *call, const void *sendbuf, int sendcount,
                       const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm)
{
    coll_rooted_t x = {call, false, recvbuf, recvcount, recvtype, (void *)(uintptr_t)sendbuf,
                       sendcount, sendcounts, displs, sendtype};
    return rooted(&x, root, comm);
}

/* ---- allgather, alltoall: every pair at once ---------------------------------------- */

typedef struct xblk {
    char *buf;
    int count;
    MPI_Datatype dt;
} xblk_t;

/* For every remote rank j a receive of rcv[j] and a send of snd[j], all
 * posted at once (receives first), then waited for. */
static int exchange_all(const coll_t *k, const xblk_t *snd, const xblk_t *rcv, int tag)
{
    int n = k->c->size, e = MPI_SUCCESS;
    coll_stage_t *st = calloc(2 * (size_t)n, sizeof(*st));
    tern_request_t **r = calloc(2 * (size_t)n, sizeof(*r));
    if (st == NULL || r == NULL) {
        free(st);
        free(r);
        return mpi_raise(k->comm, MPI_ERR_NO_MEM, "%s", k->call);
    }
    tern_status_t bad = TERN_OK;
    int posted = 0;
    for (int i = 0; i < 2 * n && e == MPI_SUCCESS && bad == TERN_OK; i++, posted++) {
        bool recv = i < n;
        const xblk_t *b = recv ? &rcv[i] : &snd[i - n];
        int j = recv ? i : i - n;
        if ((e = coll_stage_in(k, b->buf, b->count, b->dt, !recv, &st[i])) != MPI_SUCCESS)
            break;
        mpi_lock(k->w);
        tern_status_t s = recv ? tern_irecv(k->w, st[i].bytes, st[i].len, k->c->ranks[j], tag,
                                            k->space, NULL, &r[i])
                               : tern_isend(k->w, st[i].bytes, st[i].len, k->c->ranks[j], tag,
                                            k->space, &r[i]);
        mpi_unlock(k->w);
        if (s != TERN_INPROGRESS)
            r[i] = NULL;
        if (s != TERN_OK && s != TERN_INPROGRESS)
            bad = s;
    }
    if (bad != TERN_OK || e != MPI_SUCCESS) /* the receives no send will match */
        for (int i = 0; i < n && i < posted; i++)
            if (r[i] != NULL) {
                mpi_lock(k->w);
                (void)tern_cancel(k->w, r[i]);
                mpi_unlock(k->w);
            }
    for (int i = 0; i < posted; i++) {
        tern_status_t s = r[i] != NULL ? mpi_wait_tern(k->w, r[i], NULL) : TERN_OK;
        if (s != TERN_OK && s != TERN_ERR_CANCELED && bad == TERN_OK)
            bad = s;
    }
    for (int i = 0; i < posted; i++)
        coll_stage_out(&st[i], i < n ? rcv[i].buf : NULL, i < n ? rcv[i].count : 0,
                       i < n ? rcv[i].dt : snd[i - n].dt, i < n && bad == TERN_OK && e == 0);
    free(st);
    free(r);
    if (e == MPI_SUCCESS && bad != TERN_OK)
        e = coll_fail(k, bad);
    return e;
}

int coll_inter_allgather(const char *call, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm)
{
    coll_t k;
    int e = coll_start(&k, comm, call);
    bool v = recvcounts != NULL || displs != NULL;
    if (e == MPI_SUCCESS)
        e = coll_inter_no_inplace(&k, sendbuf, "the send buffer");
    if (e == MPI_SUCCESS)
        e = mpi_check_buf(comm, sendbuf, sendcount, sendtype, call);
    if (e == MPI_SUCCESS)
        e = coll_inter_blocks(&k, recvbuf, recvcount, recvcounts, displs, recvtype, v);
    if (e != MPI_SUCCESS)
        return e;
    int n = k.c->size;
    xblk_t *b = malloc(sizeof(*b) * 2 * (size_t)n);
    if (b == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
    for (int j = 0; j < n; j++) {
        b[j] = (xblk_t){(char *)(uintptr_t)sendbuf, sendcount, sendtype};
        b[n + j] = (xblk_t){coll_inter_block_at(recvbuf, j, recvcount, displs, recvtype),
                            v ? recvcounts[j] : recvcount, recvtype};
    }
    e = exchange_all(&k, b, b + n, TAG_ALLGATHER);
    free(b);
    return e;
}

/* one side of an alltoall(v, w): block j's address, count and type */
static xblk_t a2a_block(const void *buf, int count, const int counts[], const int displs[],
                        MPI_Datatype dt, const MPI_Datatype types[], int j)
{
    if (types != NULL) /* w: displacements in bytes */
        return (xblk_t){mpi_addr(buf, displs[j]), counts[j], types[j]};
    return (xblk_t){coll_inter_block_at(buf, j, count, displs, dt), counts != NULL ? counts[j] : count, dt};
}

int coll_inter_a2a_check(const coll_t *k, const void *buf, int count, const int counts[],
                     const int displs[], MPI_Datatype dt, const MPI_Datatype types[])
{
    if (types == NULL)
        return coll_inter_blocks(k, buf, count, counts, displs, dt, counts != NULL || displs != NULL);
    if (counts == NULL || displs == NULL)
        return mpi_raise(k->comm, MPI_ERR_ARG, "%s: NULL counts or displacements", k->call);
    int e = MPI_SUCCESS;
    for (int i = 0; i < k->c->size && e == MPI_SUCCESS; i++)
        if (!(counts[i] == 0 && types[i] == MPI_DATATYPE_NULL)) /* an empty block of no type */
            e = mpi_check_buf(k->comm, mpi_addr(buf, displs[i]), counts[i], types[i], k->call);
    return e;
}

int coll_inter_alltoall(const char *call, const void *sendbuf, int sendcount,
                        const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        const MPI_Datatype sendtypes[], void *recvbuf, int recvcount,
                        const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                        const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    coll_t k;
    int e = coll_start(&k, comm, call);
    if (e == MPI_SUCCESS)
        e = coll_inter_no_inplace(&k, sendbuf, "the send buffer");
    if (e == MPI_SUCCESS)
        e = coll_inter_a2a_check(&k, sendbuf, sendcount, sendcounts, sdispls, sendtype, sendtypes);
    if (e == MPI_SUCCESS)
        e = coll_inter_a2a_check(&k, recvbuf, recvcount, recvcounts, rdispls, recvtype, recvtypes);
    if (e != MPI_SUCCESS)
        return e;
    int n = k.c->size;
    xblk_t *b = malloc(sizeof(*b) * 2 * (size_t)n);
    if (b == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
    for (int j = 0; j < n; j++) {
        b[j] = a2a_block(sendbuf, sendcount, sendcounts, sdispls, sendtype, sendtypes, j);
        b[n + j] = a2a_block(recvbuf, recvcount, recvcounts, rdispls, recvtype, recvtypes, j);
    }
    e = exchange_all(&k, b, b + n, TAG_ALLTOALL);
    free(b);
    return e;
}
