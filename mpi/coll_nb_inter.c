/*
 * Non-blocking collectives on intercommunicators, as schedules (coll_nb.h)
 * with the blocking ones' algorithms (coll_inter.c): a schedule of the
 * hidden local group (its ranks, its sequence number for the tag: every
 * process of both groups starts the intercommunicator's collectives in the
 * same order, so the numbers agree) whose sends and receives name either
 * local ranks or, after remote(), the remote group's.  Both kinds go in
 * the intercommunicator's collective space, which its local group shares:
 * a message's source tells them apart.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_inter.h"
#include "mpi/coll_nb.h"

/* the schedule's peers from now on: the remote group's ranks, or the
 * local group's */
static void remote(sched_t *s, const mpi_comm_t *ic)
{
    s->peers = ic->ranks;
}

static void local(sched_t *s)
{
    s->peers = s->k.c->ranks;
}

/* The checks of every one (the communicator, the request), then k for
 * the schedule: the hidden local group's, errors raised on the
 * intercommunicator.  *ic the intercommunicator's entry. */
static int inter_begin(coll_t *k, MPI_Comm comm, const char *call, MPI_Request *request,
                       const mpi_comm_t **ic)
{
    int e = nb_begin(k, comm, call, request);
    if (e != MPI_SUCCESS)
        return e;
    *ic = k->c;
    k->c = mpi_comm_local(k->c); /* its space and worker are the intercommunicator's */
    return MPI_SUCCESS;
}

/* a root check as coll_inter_root's, on the intercommunicator's ranks */
static int check_root(const coll_t *k, const mpi_comm_t *ic, int root)
{
    coll_t ki = *k;
    ki.c = (mpi_comm_t *)(uintptr_t)ic;
    return coll_inter_root(&ki, root);
}

/* len bytes at buf from local rank 0 to every other local rank (round by
 * round: a local rank receives in the round after rank 0's last one) */
static void local_fan_out(sched_t *s, void *buf, size_t len)
{
    local(s);
    for (int i = 1; i < s->k.c->size; i++)
        if (s->k.c->rank == 0)
            nb_add(s, NB_SEND, i, buf, NULL, len);
    if (s->k.c->rank != 0)
        nb_add(s, NB_RECV, 0, NULL, buf, len);
    nb_next_round(s);
}

int coll_inter_ibarrier(MPI_Comm comm, MPI_Request *request)
{
    coll_t k;
    const mpi_comm_t *ic;
    int e = inter_begin(&k, comm, "MPI_Ibarrier", request, &ic);
    sched_t *s = e == MPI_SUCCESS ? nb_sched_new(&k, &e) : NULL;
    if (s == NULL)
        return e;
    static const char zero;
    int n = k.c->size, me = k.c->rank;
    for (int i = 1; i < n; i++) /* every local process is in */
        if (me == 0)
            nb_add(s, NB_RECV, i, NULL, &s->byte, 1);
    if (me != 0)
        nb_add(s, NB_SEND, 0, &zero, NULL, 1);
    nb_next_round(s);
    if (me == 0) { /* and every remote one */
        remote(s, ic);
        nb_add(s, NB_RECV, 0, NULL, &s->byte, 1);
        nb_add(s, NB_SEND, 0, &zero, NULL, 1);
        nb_next_round(s);
    }
    local_fan_out(s, &s->byte, 1);
    return nb_start(s, request);
}

int coll_inter_ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                      MPI_Request *request)
{
    coll_t k;
    const mpi_comm_t *ic;
    int e = inter_begin(&k, comm, "MPI_Ibcast", request, &ic);
    if (e == MPI_SUCCESS)
        e = check_root(&k, ic, root);
    if (e == MPI_SUCCESS && root != MPI_PROC_NULL)
        e = mpi_check_buf(comm, buf, count, dt, k.call);
    sched_t *s = e == MPI_SUCCESS ? nb_sched_new(&k, &e) : NULL;
    if (s == NULL)
        return e;
    if (root == MPI_PROC_NULL) /* nothing to do: done at once */
        return nb_start(s, request);
    if ((e = coll_stage_in(&k, buf, count, dt, root == MPI_ROOT, &s->stage)) != MPI_SUCCESS) {
        nb_sched_free(s);
        return e;
    }
    remote(s, ic);
    if (root == MPI_ROOT) {
        nb_add(s, NB_SEND, 0, s->stage.bytes, NULL, s->stage.len);
        return nb_start(s, request);
    }
    if (s->stage.staged) { /* the type may be freed meanwhile */
        s->fin = END_UNPACK;
        s->user = buf;
        s->count = count;
        s->dt = mpi_dt_get(dt);
        mpi_dt_retain(s->dt);
    }
    if (k.c->rank == 0) {
        nb_add(s, NB_RECV, root, NULL, s->stage.bytes, s->stage.len);
        nb_next_round(s);
    }
    local_fan_out(s, s->stage.bytes, s->stage.len);
    return nb_start(s, request);
}

/* the checks of a reduction, as coll_inter.c's; r for the elements of
 * count */
static int red_args(const coll_t *k, const void *sendbuf, const void *recvbuf, int scount,
                    int rcount, MPI_Datatype dt, MPI_Op op, bool send, bool recv, coll_red_t *r)
{
    int e = send ? coll_inter_no_inplace(k, sendbuf, "the send buffer") : MPI_SUCCESS;
    if (e == MPI_SUCCESS && send)
        e = mpi_check_buf(k->comm, sendbuf, scount, dt, k->call);
    if (e == MPI_SUCCESS && recv)
        e = mpi_check_buf(k->comm, recvbuf, rcount, dt, k->call);
    if (e == MPI_SUCCESS)
        e = coll_red_init(k, r, scount, dt, op);
    return e;
}

int coll_inter_ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                       int root, MPI_Comm comm, MPI_Request *request)
{
    coll_t k;
    const mpi_comm_t *ic;
    coll_red_t r;
    int e = inter_begin(&k, comm, "MPI_Ireduce", request, &ic);
    if (e == MPI_SUCCESS)
        e = check_root(&k, ic, root);
    if (e == MPI_SUCCESS && root != MPI_PROC_NULL)
        e = red_args(&k, sendbuf, recvbuf, count, count, dt, op, root >= 0, root == MPI_ROOT,
                     &r);
    if (e != MPI_SUCCESS)
        return e;
    if (root == MPI_PROC_NULL) {
        sched_t *s = nb_sched_new(&k, &e);
        return s == NULL ? e : nb_start(s, request);
    }
    sched_t *s = nb_red_sched(&k, &r, root == MPI_ROOT ? NULL : sendbuf, &e);
    if (s == NULL)
        return e;
    if (root == MPI_ROOT) { /* the other group's result, from its rank 0 */
        remote(s, ic);
        nb_add(s, NB_RECV, 0, NULL, s->work, r.len);
        s->fin = END_STORE;
        s->user = recvbuf;
        return nb_start(s, request);
    }
    nb_reduce_rounds(s, 0);
    if (k.c->rank == 0) {
        remote(s, ic);
        nb_add(s, NB_SEND, root, s->work, NULL, r.len);
    }
    return nb_start(s, request);
}

/* local rank 0 swaps s->work (len bytes) with the other group's rank 0,
 * whose result lands in s->work (through s->tmp) */
static void leaders_swap(sched_t *s, const mpi_comm_t *ic, size_t len)
{
    if (s->k.c->rank != 0)
        return;
    remote(s, ic);
    nb_add(s, NB_RECV, 0, NULL, s->tmp, len);
    nb_add(s, NB_SEND, 0, s->work, NULL, len);
    nb_add(s, NB_COPY, 0, s->tmp, s->work, len);
    nb_next_round(s);
}

int coll_inter_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                          MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    coll_t k;
    const mpi_comm_t *ic;
    coll_red_t r;
    int e = inter_begin(&k, comm, "MPI_Iallreduce", request, &ic);
    if (e == MPI_SUCCESS)
        e = red_args(&k, sendbuf, recvbuf, count, count, dt, op, true, true, &r);
    sched_t *s = e == MPI_SUCCESS ? nb_red_sched(&k, &r, sendbuf, &e) : NULL;
    if (s == NULL)
        return e;
    nb_reduce_rounds(s, 0);
    leaders_swap(s, ic, r.len);
    local_fan_out(s, s->work, r.len);
    s->fin = END_STORE;
    s->user = recvbuf;
    return nb_start(s, request);
}

/* Ireduce_scatter(_block): each group reduces the whole vector to its
 * rank 0, the leaders swap, each rank 0 sends its processes their blocks
 * of the other group's result. */
int coll_inter_ireduce_scatter(const char *call, const void *sendbuf, void *recvbuf,
                               int recvcount, const int recvcounts[], MPI_Datatype dt, MPI_Op op,
                               MPI_Comm comm, MPI_Request *request)
{
    coll_t k;
    const mpi_comm_t *ic;
    coll_red_t r;
    int e = inter_begin(&k, comm, call, request, &ic);
    if (e != MPI_SUCCESS)
        return e;
    int n = k.c->size, me = k.c->rank, total = 0, mine = 0;
    if (recvcounts == NULL && recvcount < 0)
        return mpi_raise(comm, MPI_ERR_COUNT, "%s: count %d", call, recvcount);
    for (int i = 0; i < n; i++) {
        int c = recvcounts != NULL ? recvcounts[i] : recvcount;
        if (c < 0 || c > (1 << 30) - total)
            return mpi_raise(comm, MPI_ERR_COUNT, "%s: count %d of local rank %d (counts "
                             "add up to at most 2^30)", call, c, i);
        if (i == me)
            mine = c;
        total += c;
    }
    if ((e = red_args(&k, sendbuf, recvbuf, total, mine, dt, op, true, true, &r)) != MPI_SUCCESS)
        return e;
    sched_t *s = nb_red_sched(&k, &r, sendbuf, &e);
    if (s == NULL)
        return e;
    nb_reduce_rounds(s, 0);
    leaders_swap(s, ic, r.len);
    local(s);
    size_t eb = total > 0 ? (size_t)(r.n / total) * r.ext : 0; /* bytes of one element */
    size_t off = 0, at = 0;
    for (int i = 0; i < n; i++) {
        size_t c = (size_t)(recvcounts != NULL ? recvcounts[i] : recvcount);
        if (i == me)
            at = off;
        else if (me == 0)
            nb_add(s, NB_SEND, i, s->work + off, NULL, c * eb);
        off += c * eb;
    }
    if (me != 0)
        nb_add(s, NB_RECV, 0, NULL, s->work + at, (size_t)mine * eb);
    s->fin = END_STORE;
    s->user = recvbuf;
    s->out = s->work + at;
    s->sred.count = mine;
    s->sred.n = total > 0 ? mine * (r.n / total) : 0;
    s->sred.len = (size_t)s->sred.n * r.ext;
    return nb_start(s, request);
}

/* ---- gather, scatter, allgather, alltoall -------------------------------------- */

/* gather or scatter: the root moves a block with every remote process */
static int irooted(const coll_rooted_t *x, int root, MPI_Comm comm, MPI_Request *request)
{
    coll_t k;
    const mpi_comm_t *ic;
    bool v = x->counts != NULL || x->displs != NULL;
    int e = inter_begin(&k, comm, x->call, request, &ic);
    if (e == MPI_SUCCESS)
        e = check_root(&k, ic, root);
    if (e == MPI_SUCCESS && root >= 0)
        e = coll_inter_no_inplace(&k, x->one, x->gather ? "the send buffer"
                                                        : "the receive buffer");
    if (e == MPI_SUCCESS && root >= 0)
        e = mpi_check_buf(comm, x->one, x->one_count, x->one_type, x->call);
    if (e == MPI_SUCCESS && root == MPI_ROOT) {
        coll_t ki = k;
        ki.c = (mpi_comm_t *)(uintptr_t)ic;
        e = coll_inter_blocks(&ki, x->many, x->many_count, x->counts, x->displs, x->many_type,
                              v);
    }
    sched_t *s = e == MPI_SUCCESS ? nb_sched_new(&k, &e) : NULL;
    if (s == NULL)
        return e;
    remote(s, ic);
    if (root >= 0 && x->gather)
        nb_send_block(s, root, x->one, x->one_count, x->one_type);
    else if (root >= 0)
        nb_recv_block(s, root, x->one, x->one_count, x->one_type);
    for (int i = 0; root == MPI_ROOT && i < ic->size; i++) {
        char *b = coll_inter_block_at(x->many, i, x->many_count, x->displs, x->many_type);
        int n = v ? x->counts[i] : x->many_count;
        if (x->gather)
            nb_recv_block(s, i, b, n, x->many_type);
        else
            nb_send_block(s, i, b, n, x->many_type);
    }
    return nb_start(s, request);
}

int coll_inter_igather(const char *call, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Request *request)
{
    coll_rooted_t x = {call, true, (void *)(uintptr_t)sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvcounts, displs, recvtype};
    return irooted(&x, root, comm, request);
}

int coll_inter_iscatter(const char *call, const void *sendbuf, int sendcount,
                        const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                        void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Request *request)
{
    coll_rooted_t x = {call, false, recvbuf, recvcount, recvtype, (void *)(uintptr_t)sendbuf,
                       sendcount, sendcounts, displs, sendtype};
    return irooted(&x, root, comm, request);
}

int coll_inter_iallgather(const char *call, const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Request *request)
{
    coll_t k;
    const mpi_comm_t *ic;
    bool v = recvcounts != NULL || displs != NULL;
    int e = inter_begin(&k, comm, call, request, &ic);
    if (e == MPI_SUCCESS)
        e = coll_inter_no_inplace(&k, sendbuf, "the send buffer");
    if (e == MPI_SUCCESS)
        e = mpi_check_buf(comm, sendbuf, sendcount, sendtype, call);
    if (e == MPI_SUCCESS) {
        coll_t ki = k;
        ki.c = (mpi_comm_t *)(uintptr_t)ic;
        e = coll_inter_blocks(&ki, recvbuf, recvcount, recvcounts, displs, recvtype, v);
    }
    sched_t *s = e == MPI_SUCCESS ? nb_sched_new(&k, &e) : NULL;
    if (s == NULL)
        return e;
    remote(s, ic);
    for (int j = 0; j < ic->size; j++) { /* every pair at once */
        nb_recv_block(s, j, coll_inter_block_at(recvbuf, j, recvcount, displs, recvtype),
                      v ? recvcounts[j] : recvcount, recvtype);
        nb_send_block(s, j, sendbuf, sendcount, sendtype);
    }
    return nb_start(s, request);
}

int coll_inter_ialltoall(const char *call, const void *sendbuf, int sendcount,
                         const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                         const MPI_Datatype sendtypes[], void *recvbuf, int recvcount,
                         const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                         const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
    coll_t k;
    const mpi_comm_t *ic;
    int e = inter_begin(&k, comm, call, request, &ic);
    coll_t ki = k;
    ki.c = e == MPI_SUCCESS ? (mpi_comm_t *)(uintptr_t)ic : NULL;
    if (e == MPI_SUCCESS)
        e = coll_inter_no_inplace(&k, sendbuf, "the send buffer");
    if (e == MPI_SUCCESS)
        e = coll_inter_a2a_check(&ki, sendbuf, sendcount, sendcounts, sdispls, sendtype,
                                 sendtypes);
    if (e == MPI_SUCCESS)
        e = coll_inter_a2a_check(&ki, recvbuf, recvcount, recvcounts, rdispls, recvtype,
                                 recvtypes);
    sched_t *s = e == MPI_SUCCESS ? nb_sched_new(&k, &e) : NULL;
    if (s == NULL)
        return e;
    remote(s, ic);
    for (int j = 0; j < ic->size; j++) {
        if (recvtypes != NULL)
            nb_recv_block(s, j, mpi_addr(recvbuf, rdispls[j]), recvcounts[j], recvtypes[j]);
        else
            nb_recv_block(s, j, coll_inter_block_at(recvbuf, j, recvcount, rdispls, recvtype),
                          recvcounts != NULL ? recvcounts[j] : recvcount, recvtype);
        if (sendtypes != NULL)
            nb_send_block(s, j, mpi_addr(sendbuf, sdispls[j]), sendcounts[j], sendtypes[j]);
        else
            nb_send_block(s, j, coll_inter_block_at(sendbuf, j, sendcount, sdispls, sendtype),
                          sendcounts != NULL ? sendcounts[j] : sendcount, sendtype);
    }
    return nb_start(s, request);
}
