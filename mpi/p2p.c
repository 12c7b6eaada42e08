/*
 * MPI point to point on tern's tagged messages: a communicator rank is a
 * tern peer id, its space is the communicator's.  MPI_Request is an index
 * (+1) into mpi.reqs; a tern operation that completed at once leaves a
 * REQ_DONE entry with its status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "mpi/mpi_internal.h"

/* ---- starting operations ------------------------------------------------- */

int mpi_check_p2p(MPI_Comm comm, const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                  bool recv, const char *call)
{
    int e = mpi_check_comm(comm, call);
    /* no element of no type (MPI_DATATYPE_NULL, count 0): accepted, as MPICH
     * does; it moves nothing (a zero-length message, or none with
     * MPI_PROC_NULL) */
    if (e == MPI_SUCCESS && !(count == 0 && dt == MPI_DATATYPE_NULL))
        e = mpi_check_buf(comm, buf, count, dt, call);
    if (e == MPI_SUCCESS)
        e = mpi_check_rank(comm, peer, recv, call);
    if (e == MPI_SUCCESS)
        e = mpi_check_tag(comm, tag, recv, call);
    return e;
}

/* The arguments of a point-to-point call: the common case (an initialised
 * library, a valid communicator, count elements of a predefined type, a
 * rank and a tag in range) inline, anything else through the checks that
 * say what is wrong (derived types: whether committed). */
static inline int check_p2p(MPI_Comm comm, const void *buf, int count, MPI_Datatype dt, int peer,
                            int tag, bool recv, const char *call)
{
    const mpi_comm_t *c = mpi_comm_get(comm); /* NULL before MPI_Init and after Finalize */
    if (c != NULL && count >= 0 && (buf != NULL || count == 0) && mpi_predef_size(dt) != 0 &&
        ((peer >= 0 && peer < c->size) || peer == MPI_PROC_NULL ||
         (recv && peer == MPI_ANY_SOURCE)) &&
        ((tag >= 0 && tag <= MPI_TAG_UB_VALUE) || (recv && tag == MPI_ANY_TAG)))
        return MPI_SUCCESS;
    return mpi_check_p2p(comm, buf, count, dt, peer, tag, recv, call);
}

/* A request entry for what tern returned (st: TERN_OK at once, or
 * TERN_INPROGRESS with r); finish (with aux) runs when the operation
 * finished, at once if it did already. */
static int req_from(MPI_Comm comm, tern_status_t st, tern_request_t *r, bool recv,
                    const tern_recv_info_t *info, MPI_Request *out, const char *call,
                    void (*finish)(mpi_req_t *q), void *aux)
{
    if (st != TERN_OK && st != TERN_INPROGRESS && !(recv && st == TERN_ERR_TRUNCATED))
        return mpi_raise_tern(comm, st, call);
    if (st == TERN_OK && !recv && finish == NULL) {
        *out = MPI_REQ_SENT;
        return MPI_SUCCESS;
    }
    MPI_Request h = mpi_req_pop(); /* the common case, inline; else the general one */
    if (h == MPI_REQUEST_NULL) {
        int e = mpi_req_new(&h);
        if (e != MPI_SUCCESS)
            return mpi_raise(comm, e, "%s: request table", call);
    }
    mpi_req_t *q = mpi_req_at(h);
    const mpi_comm_t *c = mpi_comm_entry(comm);
    q->comm = comm;
    q->recv = recv;
    q->finish = finish;
    q->aux = aux;
    if (st == TERN_INPROGRESS) {
        q->kind = REQ_TERN;
        q->r = r;
        q->w = c->w;
    } else {
        q->kind = REQ_DONE;
        q->err = st == TERN_OK ? MPI_SUCCESS : mpi_class_of(st);
        if (recv)
            mpi_status_from(&q->status, c, info);
        else
            mpi_status_empty(&q->status, MPI_ANY_SOURCE);
        if (st != TERN_OK) /* raised when the request is waited for */
            snprintf(mpi_last_error, sizeof(mpi_last_error), "%s", tern_last_error());
        if (finish != NULL)
            finish(q);
    }
    *out = h;
    return MPI_SUCCESS;
}

/* req_from's common cases inline (a tern operation under way: an entry
 * from the free list; a send done at once: the shared entry), the rest
 * through it. */
static inline int req_tern(MPI_Comm comm, const mpi_comm_t *c, tern_status_t st,
                           tern_request_t *r, bool recv, const tern_recv_info_t *info,
                           MPI_Request *out, const char *call)
{
    if (st == TERN_INPROGRESS) {
        MPI_Request h = mpi_req_pop();
        if (h != MPI_REQUEST_NULL) {
            mpi_req_t *q = mpi_req_at(h); /* zeroed: no finish, no aux */
            q->kind = REQ_TERN;
            q->comm = comm;
            q->recv = recv;
            q->r = r;
            q->w = c->w;
            *out = h;
            return MPI_SUCCESS;
        }
    } else if (st == TERN_OK && !recv) {
        *out = MPI_REQ_SENT;
        return MPI_SUCCESS;
    }
    return req_from(comm, st, r, recv, info, out, call, NULL, NULL);
}

static int proc_null_req(MPI_Comm comm, MPI_Request *out)
{
    MPI_Request h;
    int e = mpi_req_new(&h);
    if (e != MPI_SUCCESS)
        return mpi_raise(comm, e, "request table");
    mpi_req_at(h)->kind = REQ_DONE;
    mpi_req_at(h)->comm = comm;
    mpi_status_empty(&mpi_req_at(h)->status, MPI_PROC_NULL);
    *out = h;
    return MPI_SUCCESS;
}

/* ---- derived datatypes ------------------------------------------------------ */

/* A derived type's elements go as an iovec list (tern copies the list, so
 * the type is not needed afterwards) when it takes at most
 * MPI_DT_IOV_LIMIT entries; otherwise through a staging buffer, packed
 * before a send, unpacked when a receive finished.  A staged receive holds
 * a reference on its type: MPI_Type_free may come before it completes. */
typedef struct dt_stage {
    void *buf;                /* receive: the user's buffer */
    int count;
    mpi_dtype_t *t;           /* receive: referenced */
    size_t len;
    char data[];
} dt_stage_t;

static void dt_stage_free(dt_stage_t *s)
{
    if (s->t != NULL)
        mpi_dt_release(s->t);
    free(s);
}

/* what arrived (bytes, as the status says; never more than the stage) */
static void dt_unstage(dt_stage_t *s, size_t bytes)
{
    mpi_dt_unpack_t(s->data, bytes < s->len ? bytes : s->len, s->buf, s->count, s->t);
}

static void dt_finish(mpi_req_t *q)
{
    dt_stage_t *s = q->aux;
    if (q->recv && !(q->status.count_hi_and_cancelled & 1))
        dt_unstage(s, (size_t)(unsigned)q->status.count_lo |
                          (size_t)(q->status.count_hi_and_cancelled >> 1) << 31);
    dt_stage_free(s);
    q->aux = NULL;
}

enum { DT_RECV = -1 }; /* a dt_post mode beside MPI_SEND_STANDARD / _SYNC */

/* Post a send or receive (peer, tag: tern's) of count elements of a
 * derived dt; *s the staging buffer when one is used.  MPI_SUCCESS with
 * tern's status in *st, or MPI_ERR_NO_MEM. */
static int dt_post(tern_worker_t *w, void *buf, int count, MPI_Datatype dt, int peer, int tag,
                   uint16_t space, int mode, tern_message_t *m, tern_recv_info_t *info,
                   tern_request_t **r, dt_stage_t **s, tern_status_t *st)
{
    mpi_dtype_t *t = mpi_dt_get(dt);
    struct iovec one, *iov;
    int n;
    *s = NULL;
    if (!mpi_dt_iov(buf, count, t, &iov, &one, &n)) {
        if (n < 0)
            return MPI_ERR_NO_MEM;
        size_t len = (size_t)count * (size_t)t->size;
        if ((*s = malloc(sizeof(**s) + len)) == NULL)
            return MPI_ERR_NO_MEM;
        **s = (dt_stage_t){.buf = buf, .count = count, .len = len};
        if (mode == DT_RECV) {
            (*s)->t = t;
            mpi_dt_retain(t);
        } else {
            mpi_dt_pack_t(buf, count, t, (*s)->data);
        }
        one = (struct iovec){(*s)->data, len};
        iov = &one;
        n = 1;
    }
    mpi_lock(w);
    *st = mode == DT_RECV && m != NULL ? tern_imrecvv(w, iov, n, m, info, r)
          : mode == DT_RECV ? tern_irecvv(w, iov, n, peer, tag, space, info, r)
          : mode == MPI_SEND_SYNC ? tern_issendv(w, iov, n, peer, tag, space, r)
                                  : tern_isendv(w, iov, n, peer, tag, space, r);
    mpi_unlock(w);
    if (iov != &one)
        free(iov);
    if (*s != NULL && *st != TERN_OK && *st != TERN_INPROGRESS && *st != TERN_ERR_TRUNCATED) {
        dt_stage_free(*s); /* nothing was posted */
        *s = NULL;
    }
    return MPI_SUCCESS;
}

/* the non-blocking start of a derived send or receive (arguments checked;
 * m: a matched probe's message to receive) */
static int dt_start(void *buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                    int mode, tern_message_t *m, MPI_Request *out, const char *call)
{
    mpi_comm_t *c = mpi_comm_get(comm);
    tern_request_t *r = NULL;
    tern_recv_info_t info;
    dt_stage_t *s;
    tern_status_t st;
    if (dt_post(c->w, buf, count, dt, peer, tag, c->space, mode, m, &info, &r, &s, &st) !=
        MPI_SUCCESS)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s: no memory for %d elements of datatype %#x",
                         call, count, dt);
    return req_from(comm, st, r, mode == DT_RECV, &info, out, call, s ? dt_finish : NULL, s);
}

/* MPI_Send / MPI_Recv of a derived type: post, wait, unstage */
static int dt_blocking(void *buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                       int mode, MPI_Status *status, const char *call)
{
    mpi_comm_t *c = mpi_comm_get(comm);
    tern_request_t *r = NULL;
    tern_recv_info_t info;
    dt_stage_t *s;
    tern_status_t st;
    if (dt_post(c->w, buf, count, dt, peer, tag, c->space, mode, NULL, &info, &r, &s, &st) !=
        MPI_SUCCESS)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s: no memory for %d elements of datatype %#x",
                         call, count, dt);
    if (st == TERN_INPROGRESS)
        st = mpi_wait_tern(c->w, r, &info);
    if (mode == DT_RECV && (st == TERN_OK || st == TERN_ERR_TRUNCATED)) {
        mpi_status_from(status, c, &info);
        if (s != NULL)
            dt_unstage(s, info.length);
    }
    if (s != NULL)
        dt_stage_free(s);
    return st == TERN_OK ? MPI_SUCCESS : mpi_raise_tern(comm, st, call);
}

int mpi_isend_start(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                    MPI_Comm comm, int mode, MPI_Request *request, const char *call)
{
    bool sync = mode == MPI_SEND_SYNC;
    int e = check_p2p(comm, buf, count, dt, dest, tag, false, call);
    if (e != MPI_SUCCESS)
        return e;
    if (request == NULL)
        return mpi_raise(comm, MPI_ERR_REQUEST, "%s: NULL request pointer", call);
    if (dest == MPI_PROC_NULL)
        return proc_null_req(comm, request);
    mpi_comm_t *c = mpi_comm_get(comm);
    if (!mpi_dt_predefined(dt))
        return dt_start((void *)(uintptr_t)buf, count, dt, c->ranks[dest], tag, comm, mode,
                        NULL, request, call);
    size_t len = (size_t)count * (size_t)mpi_predef_size(dt);
    tern_request_t *r = NULL;
    mpi_lock(c->w);
    tern_status_t st = sync ? tern_issend(c->w, buf, len, c->ranks[dest], tag, c->space, &r)
                            : tern_isend(c->w, buf, len, c->ranks[dest], tag, c->space, &r);
    mpi_unlock(c->w);
    return req_from(comm, st, r, false, NULL, request, call, NULL, NULL);
}

/* MPI_Isend and MPI_Irecv: the common case (valid arguments, a
 * predefined type, a real peer) straight to tern, in the function itself;
 * anything else through mpi_isend_start / mpi_irecv_start, which check
 * again and say what is wrong. */
int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    const mpi_comm_t *c = mpi_comm_get(comm);
    int size = mpi_predef_size(datatype);
    if (c != NULL && request != NULL && size != 0 && count >= 0 && (buf != NULL || count == 0) &&
        dest >= 0 && dest < c->size && tag >= 0 && tag <= MPI_TAG_UB_VALUE) {
        tern_request_t *r = NULL;
        mpi_lock(c->w);
        tern_status_t st = tern_isend(c->w, buf, (size_t)count * (size_t)size, c->ranks[dest], tag,
                                      c->space, &r);
        mpi_unlock(c->w);
        return req_tern(comm, c, st, r, false, NULL, request, "MPI_Isend");
    }
    return mpi_isend_start(buf, count, datatype, dest, tag, comm, MPI_SEND_STANDARD, request,
                           "MPI_Isend");
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    return mpi_isend_start(buf, count, datatype, dest, tag, comm, MPI_SEND_SYNC, request,
                           "MPI_Issend");
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    const mpi_comm_t *c = mpi_comm_get(comm);
    int size = mpi_predef_size(datatype);
    if (c != NULL && request != NULL && size != 0 && count >= 0 && (buf != NULL || count == 0) &&
        ((source >= 0 && source < c->size) || source == MPI_ANY_SOURCE) &&
        ((tag >= 0 && tag <= MPI_TAG_UB_VALUE) || tag == MPI_ANY_TAG)) {
        int src = source == MPI_ANY_SOURCE ? TERN_ANY_SOURCE : c->ranks[source];
        tern_request_t *r = NULL;
        tern_recv_info_t info;
        mpi_lock(c->w);
        tern_status_t st = tern_irecv(c->w, buf, (size_t)count * (size_t)size, src,
                                      tag == MPI_ANY_TAG ? TERN_ANY_TAG : tag, c->space, &info, &r);
        mpi_unlock(c->w);
        return req_tern(comm, c, st, r, true, &info, request, "MPI_Irecv");
    }
    return mpi_irecv_start(buf, count, datatype, source, tag, comm, request, "MPI_Irecv");
}

int mpi_irecv_start(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                    MPI_Comm comm, MPI_Request *request, const char *call)
{
    int e = check_p2p(comm, buf, count, datatype, source, tag, true, call);
    if (e != MPI_SUCCESS)
        return e;
    if (request == NULL)
        return mpi_raise(comm, MPI_ERR_REQUEST, "%s: NULL request pointer", call);
    if (source == MPI_PROC_NULL)
        return proc_null_req(comm, request);
    mpi_comm_t *c = mpi_comm_get(comm);
    int src = source == MPI_ANY_SOURCE ? TERN_ANY_SOURCE : c->ranks[source];
    if (!mpi_dt_predefined(datatype))
        return dt_start(buf, count, datatype, src, tag == MPI_ANY_TAG ? TERN_ANY_TAG : tag, comm,
                        DT_RECV, NULL, request, call);
    size_t len = (size_t)count * (size_t)mpi_predef_size(datatype);
    tern_request_t *r = NULL;
    tern_recv_info_t info;
    mpi_lock(c->w);
    tern_status_t st = tern_irecv(c->w, buf, len, src, tag == MPI_ANY_TAG ? TERN_ANY_TAG : tag,
                                  c->space, &info, &r);
    mpi_unlock(c->w);
    return req_from(comm, st, r, true, &info, request, call, NULL, NULL);
}

/* A matched probe's message m received into count elements of the derived
 * type dt (mprobe.c; arguments checked): as a receive of that type. */
int mpi_dt_mrecv_start(void *buf, int count, MPI_Datatype dt, tern_message_t *m, MPI_Comm comm,
                       MPI_Request *out, const char *call)
{
    return dt_start(buf, count, dt, 0, 0, comm, DT_RECV, m, out, call);
}

/* ---- blocking forms ------------------------------------------------------- */

/* The blocking forms go straight to tern's blocking calls: no request
 * table entry (it cost a quarter of an 8-byte message's latency).  When a
 * wait must poll instead (several workers or threads, non-blocking
 * collectives under way: mpi_polling), mt.c's forms of them. */
int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    /* the common case with one lookup of each handle (as MPI_Isend's) */
    const mpi_comm_t *c0 = mpi_comm_get(comm);
    int size = mpi_predef_size(datatype);
    if (c0 != NULL && size != 0 && count >= 0 && (buf != NULL || count == 0) && dest >= 0 &&
        dest < c0->size && tag >= 0 && tag <= MPI_TAG_UB_VALUE) {
        size_t len = (size_t)count * (size_t)size;
        int to = c0->ranks[dest];
        tern_status_t st = mpi_polling() ? mpi_send_tern(c0->w, buf, len, to, tag, c0->space)
                                         : tern_send(c0->w, buf, len, to, tag, c0->space);
        return st == TERN_OK ? MPI_SUCCESS : mpi_raise_tern(comm, st, "MPI_Send");
    }
    int e = check_p2p(comm, buf, count, datatype, dest, tag, false, "MPI_Send");
    if (e != MPI_SUCCESS || dest == MPI_PROC_NULL)
        return e;
    mpi_comm_t *c = mpi_comm_get(comm);
    if (!mpi_dt_predefined(datatype))
        return dt_blocking((void *)(uintptr_t)buf, count, datatype, c->ranks[dest], tag, comm,
                           MPI_SEND_STANDARD, MPI_STATUS_IGNORE, "MPI_Send");
    size_t len = (size_t)count * (size_t)mpi_predef_size(datatype);
    int to = c->ranks[dest];
    tern_status_t st = mpi_polling() ? mpi_send_tern(c->w, buf, len, to, tag, c->space)
                                     : tern_send(c->w, buf, len, to, tag, c->space);
    return st == TERN_OK ? MPI_SUCCESS : mpi_raise_tern(comm, st, "MPI_Send");
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    MPI_Request r;
    int e = mpi_isend_start(buf, count, datatype, dest, tag, comm, MPI_SEND_SYNC, &r,
                            "MPI_Ssend");
    return e != MPI_SUCCESS ? e : MPI_Wait(&r, MPI_STATUS_IGNORE);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    const mpi_comm_t *c0 = mpi_comm_get(comm);
    int size = mpi_predef_size(datatype);
    if (c0 != NULL && size != 0 && count >= 0 && (buf != NULL || count == 0) &&
        ((source >= 0 && source < c0->size) || source == MPI_ANY_SOURCE) &&
        ((tag >= 0 && tag <= MPI_TAG_UB_VALUE) || tag == MPI_ANY_TAG)) {
        tern_recv_info_t info;
        size_t len = (size_t)count * (size_t)size;
        int src = source == MPI_ANY_SOURCE ? TERN_ANY_SOURCE : c0->ranks[source];
        int ttag = tag == MPI_ANY_TAG ? TERN_ANY_TAG : tag;
        tern_status_t st = mpi_polling()
                               ? mpi_recv_tern(c0->w, buf, len, src, ttag, c0->space, &info)
                               : tern_recv(c0->w, buf, len, src, ttag, c0->space, &info);
        if (st == TERN_OK || st == TERN_ERR_TRUNCATED)
            mpi_status_from(status, c0, &info);
        return st == TERN_OK ? MPI_SUCCESS : mpi_raise_tern(comm, st, "MPI_Recv");
    }
    int e = check_p2p(comm, buf, count, datatype, source, tag, true, "MPI_Recv");
    if (e != MPI_SUCCESS)
        return e;
    if (source == MPI_PROC_NULL) {
        mpi_status_empty(status, MPI_PROC_NULL);
        return MPI_SUCCESS;
    }
    mpi_comm_t *c = mpi_comm_get(comm);
    if (!mpi_dt_predefined(datatype))
        return dt_blocking(buf, count, datatype,
                           source == MPI_ANY_SOURCE ? TERN_ANY_SOURCE : c->ranks[source],
                           tag == MPI_ANY_TAG ? TERN_ANY_TAG : tag, comm, DT_RECV, status,
                           "MPI_Recv");
    tern_recv_info_t info;
    size_t len = (size_t)count * (size_t)mpi_predef_size(datatype);
    int src = source == MPI_ANY_SOURCE ? TERN_ANY_SOURCE : c->ranks[source];
    int ttag = tag == MPI_ANY_TAG ? TERN_ANY_TAG : tag;
    tern_status_t st = mpi_polling() ? mpi_recv_tern(c->w, buf, len, src, ttag, c->space, &info)
                                     : tern_recv(c->w, buf, len, src, ttag, c->space, &info);
    if (st == TERN_OK || st == TERN_ERR_TRUNCATED)
        mpi_status_from(status, c, &info);
    return st == TERN_OK ? MPI_SUCCESS : mpi_raise_tern(comm, st, "MPI_Recv");
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
    MPI_Request r[2];
    int e = MPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r[0]);
    if (e != MPI_SUCCESS)
        return e;
    e = MPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &r[1]);
    if (e != MPI_SUCCESS)
        return e;
    MPI_Status st[2];
    e = MPI_Waitall(2, r, st);
    mpi_status_copy(status, &st[0]);
    return e == MPI_ERR_IN_STATUS ? (st[0].MPI_ERROR ? st[0].MPI_ERROR : st[1].MPI_ERROR) : e;
}

/* ---- probes ---------------------------------------------------------------- */

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    (void)mpi_progress_pending(); /* what a peer may wait for (mt.c) */
    int e = check_p2p(comm, NULL, 0, MPI_BYTE, source, tag, true, "MPI_Iprobe");
    if (e != MPI_SUCCESS)
        return e;
    if (flag == NULL)
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Iprobe: NULL flag pointer");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        mpi_status_empty(status, MPI_PROC_NULL);
        return MPI_SUCCESS;
    }
    mpi_comm_t *c = mpi_comm_get(comm);
    tern_recv_info_t info;
    mpi_lock(c->w);
    tern_status_t st = tern_iprobe(c->w, source == MPI_ANY_SOURCE ? TERN_ANY_SOURCE
                                                                  : c->ranks[source],
                                   tag == MPI_ANY_TAG ? TERN_ANY_TAG : tag, c->space, flag, &info);
    mpi_unlock(c->w);
    if (st != TERN_OK)
        return mpi_raise_tern(comm, st, "MPI_Iprobe");
    if (*flag)
        mpi_status_from(status, c, &info);
    return MPI_SUCCESS;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int flag = 0;
    for (;;) {
        int e = MPI_Iprobe(source, tag, comm, &flag, status);
        if (e != MPI_SUCCESS || flag)
            return e;
        mpi_block();
    }
}
