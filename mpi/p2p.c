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

/* The table's free entries are a list threaded through their next field:
 * taking one and giving it back are O(1), and a handle (index + 1) stays
 * the same while its operation lives.  The table is reserved once at its
 * largest (MPI_MAX_REQUESTS entries; calloc's pages are only touched as
 * entries are used) and never moves, so a thread may keep a pointer to an
 * entry while another takes a new one (MPI_THREAD_MULTIPLE).  When the
 * list is empty the requests MPI_Request_free let go (their own list) are
 * reaped first, then the next never-used entry is taken.  Under
 * MPI_THREAD_MULTIPLE the lists are the table lock's (a recursive mutex:
 * reaping releases entries). */
/* Entry 0 (handle MPI_REQ_SENT) is every send that completed at once: a
 * REQ_DONE send with an empty status, shared by all of them and never
 * released (req_release passes it by; it is only read once made), so an
 * eager MPI_Isend takes no entry of its own. */
int mpi_reqs_init(void)
{
    if (mpi.reqs == NULL)
        mpi.reqs = calloc(MPI_MAX_REQUESTS, sizeof(*mpi.reqs));
    if (mpi.reqs == NULL)
        return MPI_ERR_NO_MEM;
    mpi_req_t *sent = &mpi.reqs[MPI_REQ_SENT - 1];
    *sent = (mpi_req_t){.kind = REQ_DONE, .comm = MPI_COMM_WORLD};
    mpi_status_empty(&sent->status, MPI_ANY_SOURCE);
    __atomic_store_n(&mpi.nreqs, MPI_REQ_SENT, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

/* A new entry starts as a copy of this one: vector stores.  Zeroing it
 * (memset, or a compound literal's unnamed members) comes out as rep stos,
 * whose start-up perf put at 10 % of a 4-byte message's receive, and at
 * 30 % of MPI_Irecv's own time. */
static const mpi_req_t req_zero;

int mpi_req_new(MPI_Request *out)
{
    mpi_table_lock();
    if (mpi.free_head == 0 && mpi.nfreed > 0)
        mpi_reap_freed(false);
    int i;
    if (mpi.free_head != 0) {
        i = mpi.free_head - 1;
        mpi.free_head = mpi.reqs[i].next;
    } else if (mpi.nreqs < MPI_MAX_REQUESTS) {
        i = mpi.nreqs;
        /* release: the entry is zeroed before a reader's bound check
         * (acquire, in mpi_req_get) can admit its handle */
        __atomic_store_n(&mpi.nreqs, mpi.nreqs + 1, __ATOMIC_RELEASE);
    } else {
        mpi_table_unlock();
        return MPI_ERR_NO_MEM; /* MPI_MAX_REQUESTS requests under way */
    }
    mpi.reqs[i] = req_zero;
    mpi_table_unlock();
    *out = i + 1;
    return MPI_SUCCESS;
}

mpi_req_t *mpi_req_get(MPI_Request h)
{
    if (h < 1 || h > __atomic_load_n(&mpi.nreqs, __ATOMIC_ACQUIRE) ||
        mpi.reqs[h - 1].kind == REQ_FREE)
        return NULL;
    return &mpi.reqs[h - 1];
}

/* Back on the free list (the entry's comm stays readable until reused:
 * finish_err names it); a persistent request's arguments go with it. */
static void req_release(mpi_req_t *q)
{
    if (q == &mpi.reqs[MPI_REQ_SENT - 1])
        return; /* shared by every send that completed at once */
    if (q->kind == REQ_PERSIST)
        free(q->aux);
    q->aux = NULL;
    mpi_table_lock();
    q->kind = REQ_FREE;
    q->next = mpi.free_head;
    mpi.free_head = (int)(q - mpi.reqs) + 1;
    mpi_table_unlock();
}

/* ---- starting operations ------------------------------------------------- */

int mpi_check_p2p(MPI_Comm comm, const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                  bool recv, const char *call)
{
    int e = mpi_check_comm(comm, call);
    if (e == MPI_SUCCESS)
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
    MPI_Request h;
    int e = mpi_req_new(&h);
    if (e != MPI_SUCCESS)
        return mpi_raise(comm, e, "%s: request table", call);
    mpi_req_t *q = &mpi.reqs[h - 1];
    q->comm = comm;
    q->recv = recv;
    q->finish = finish;
    q->aux = aux;
    if (st == TERN_INPROGRESS) {
        q->kind = REQ_TERN;
        q->r = r;
        q->w = mpi_comm_get(comm)->w;
    } else {
        q->kind = REQ_DONE;
        q->err = mpi_class_of(st);
        if (recv)
            mpi_status_from(&q->status, mpi_comm_get(comm), info, q->err);
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

static int proc_null_req(MPI_Comm comm, MPI_Request *out)
{
    MPI_Request h;
    int e = mpi_req_new(&h);
    if (e != MPI_SUCCESS)
        return mpi_raise(comm, e, "request table");
    mpi.reqs[h - 1].kind = REQ_DONE;
    mpi.reqs[h - 1].comm = comm;
    mpi_status_empty(&mpi.reqs[h - 1].status, MPI_PROC_NULL);
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
        mpi_status_from(status, c, &info, mpi_class_of(st));
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

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
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
    /* req_from's common cases: posted, or taken whole from the unexpected
     * messages (status here: identity communicators) */
    if (!mpi.mt && mpi.free_head != 0 &&
        (st == TERN_INPROGRESS || (st == TERN_OK && c->identity))) {
        int i = mpi.free_head - 1;
        mpi_req_t *q = &mpi.reqs[i];
        mpi.free_head = q->next;
        *q = req_zero;
        q->recv = true;
        q->comm = comm;
        if (st == TERN_INPROGRESS) {
            q->kind = REQ_TERN;
            q->r = r;
            q->w = c->w;
        } else {
            q->kind = REQ_DONE;
            q->status.count_lo = (int)(info.length & 0x7fffffff);
            q->status.count_hi_and_cancelled = (int)((info.length >> 31) << 1);
            q->status.MPI_SOURCE = info.source;
            q->status.MPI_TAG = info.tag;
        }
        *request = i + 1;
        return MPI_SUCCESS;
    }
    return req_from(comm, st, r, true, &info, request, call, NULL, NULL);
}

/* A matched probe's message m received into count elements of the derived
 * type dt (mprobe.c; arguments checked): as a receive of that type. */
int mpi_dt_mrecv_start(void *buf, int count, MPI_Datatype dt, tern_message_t *m, MPI_Comm comm,
                       MPI_Request *out, const char *call)
{
    return dt_start(buf, count, dt, 0, 0, comm, DT_RECV, m, out, call);
}

/* ---- completion ------------------------------------------------------------ */

static bool req_poll(mpi_req_t *q);
static void req_finished(mpi_req_t *q, tern_status_t st, const tern_recv_info_t *info);

/* A persistent request: finished when inactive, or once the operation
 * MPI_Start began has (its status and error class then move into this
 * entry, which stays active until they are taken). */
static bool persist_poll(mpi_req_t *q)
{
    if (!q->active || q->inner == MPI_REQUEST_NULL)
        return true;
    mpi_req_t *in = mpi_req_get(q->inner);
    if (!req_poll(in))
        return false;
    q->status = in->status;
    q->err = in->err;
    req_release(in);
    q->inner = MPI_REQUEST_NULL;
    return true;
}

/* Turn a finished tern operation into a REQ_DONE entry (progress once). */
static bool req_poll(mpi_req_t *q)
{
    if (q->kind == REQ_PERSIST)
        return persist_poll(q);
    if (q->kind == REQ_SCHED) {
        if (!mpi_sched_poll(q))
            return false;
        q->kind = REQ_DONE;
        return true;
    }
    if (q->kind != REQ_TERN)
        return true;
    tern_recv_info_t info;
    mpi_lock(q->w);
    tern_status_t st = tern_test(q->w, q->r, &info);
    mpi_unlock(q->w);
    if (st == TERN_INPROGRESS)
        return false;
    req_finished(q, st, &info);
    return true;
}

/* A REQ_TERN entry whose tern operation ended with st (info: tern's) turns
 * REQ_DONE: its error class and status, then its finish hook. */
static void req_finished(mpi_req_t *q, tern_status_t st, const tern_recv_info_t *info)
{
    if (__builtin_expect(st == TERN_OK && q->finish == NULL, 1)) { /* the common case */
        q->kind = REQ_DONE;
        q->r = NULL;
        q->err = MPI_SUCCESS;
        mpi_comm_t *c = &mpi.comms[q->comm]; /* freed since: its ranks stay (comm.c) */
        if (q->recv && c->identity)
            q->status = (MPI_Status){.count_lo = (int)(info->length & 0x7fffffff),
                                     .count_hi_and_cancelled = (int)((info->length >> 31) << 1),
                                     .MPI_SOURCE = info->source, .MPI_TAG = info->tag};
        else if (q->recv)
            mpi_status_from(&q->status, c, info, MPI_SUCCESS);
        else
            q->status = (MPI_Status){.MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG};
        return;
    }
    q->kind = REQ_DONE;
    q->r = NULL;
    q->err = st == TERN_ERR_CANCELED ? MPI_SUCCESS : mpi_class_of(st);
    if (q->recv) {
        mpi_status_from(&q->status, &mpi.comms[q->comm], info, q->err);
        if (st == TERN_ERR_CANCELED)
            q->status.count_hi_and_cancelled |= 1;
    } else {
        mpi_status_empty(&q->status, MPI_ANY_SOURCE);
    }
    if (q->err != MPI_SUCCESS)
        snprintf(mpi_last_error, sizeof(mpi_last_error), "%s", tern_last_error());
    if (q->finish != NULL)
        q->finish(q);
}

/* Wait until an entry finished.  A tern operation, with one worker, one
 * thread and no schedule to move on (!mpi_polling), is tern_wait's: its
 * tight progress loop, as tern's own programs wait (polling it and
 * sleeping in tern_worker_wait by turns cost a quarter of the message rate
 * of small messages).  Anything else: poll it, mpi_block in between. */
static void req_wait(mpi_req_t *q)
{
    if (q->kind == REQ_TERN && !mpi_polling()) {
        tern_recv_info_t info;
        req_finished(q, tern_wait(q->w, q->r, &info), &info);
        return;
    }
    while (!req_poll(q))
        mpi_block();
}

/* Is h something to wait for: neither MPI_REQUEST_NULL nor an inactive
 * persistent request (Waitany, Testany and the some forms skip both;
 * Wait, Test and the all forms return an empty status for them). */
static bool req_active(MPI_Request h)
{
    mpi_req_t *q = mpi_req_get(h);
    return q != NULL && (q->kind != REQ_PERSIST || q->active);
}

/* A finished entry's status out, and the entry freed; a persistent one
 * keeps its handle and turns inactive (a wait on it now returns at once
 * with an empty status). */
static void req_take(MPI_Request *h, MPI_Status *status, int *err)
{
    mpi_req_t *q = mpi_req_get(*h);
    if (status != MPI_STATUS_IGNORE)
        *status = q->status;
    *err = q->err;
    if (q->kind == REQ_PERSIST) {
        q->active = false;
        q->err = MPI_SUCCESS;
        mpi_status_empty(&q->status, MPI_ANY_SOURCE);
        return;
    }
    req_release(q);
    *h = MPI_REQUEST_NULL;
}

static bool req_done(MPI_Request *h, MPI_Status *status, int *err)
{
    if (!req_poll(mpi_req_get(*h)))
        return false;
    req_take(h, status, err);
    return true;
}

bool mpi_req_complete(MPI_Request *h, bool wait, MPI_Status *status, int *err)
{
    while (!req_done(h, status, err)) {
        if (!wait)
            return false;
        mpi_block();
    }
    return true;
}

/* Requests MPI_Request_free let go (their list): reaped once finished. */
void mpi_reap_freed(bool wait)
{
    int *link = &mpi.freed_head;
    while (*link != 0) {
        mpi_req_t *q = &mpi.reqs[*link - 1];
        bool done;
        while (!(done = req_poll(q)) && wait)
            mpi_block();
        if (done) {
            *link = q->next;
            mpi.nfreed--;
            req_release(q);
        } else {
            link = &q->next;
        }
    }
}

static int check_req(MPI_Request *h, const char *call)
{
    int e = mpi_check_init(call);
    if (e == MPI_SUCCESS && h == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: NULL request pointer", call);
    if (e == MPI_SUCCESS && *h != MPI_REQUEST_NULL && mpi_req_get(*h) == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: request %d is not valid", call, *h);
    return e;
}

static int finish_err(MPI_Request h_was, int err, const char *call)
{
    if (err == MPI_SUCCESS)
        return MPI_SUCCESS;
    mpi_req_t *q = &mpi.reqs[h_was - 1];
    return mpi_raise(q->comm, err, "%s: %s", call, mpi_last_error);
}

/* The common cases of a wait, inline: a send that completed at once, and
 * (one worker, one thread, nothing to poll for) a tern operation without
 * a finish hook that ends well.  True: *h was completed (status filled,
 * *h MPI_REQUEST_NULL); false: take the general path (an entry that failed
 * here is REQ_DONE by then, with its status and error). */
static inline bool wait_fast(MPI_Request *h, MPI_Status *status)
{
    if (*h == MPI_REQ_SENT) {
        mpi_status_empty(status, MPI_ANY_SOURCE);
        *h = MPI_REQUEST_NULL;
        return true;
    }
    mpi_req_t *q = &mpi.reqs[*h - 1]; /* valid: checked by the caller */
    if (q->kind == REQ_DONE && q->err == MPI_SUCCESS && !mpi.mt) { /* done when started */
        if (status != MPI_STATUS_IGNORE)
            *status = q->status;
        q->kind = REQ_FREE;
        q->next = mpi.free_head;
        mpi.free_head = *h;
        *h = MPI_REQUEST_NULL;
        return true;
    }
    if (q->kind != REQ_TERN || q->finish != NULL || mpi_polling())
        return false;
    tern_recv_info_t info;
    tern_status_t st = tern_wait(q->w, q->r, &info);
    if (st != TERN_OK) {
        req_finished(q, st, &info);
        return false;
    }
    mpi_comm_t *c = &mpi.comms[q->comm]; /* freed since: its ranks stay (comm.c) */
    if (status == MPI_STATUS_IGNORE)
        ;
    else if (q->recv && c->identity)
        *status = (MPI_Status){.count_lo = (int)(info.length & 0x7fffffff),
                               .count_hi_and_cancelled = (int)((info.length >> 31) << 1),
                               .MPI_SOURCE = info.source, .MPI_TAG = info.tag};
    else if (q->recv)
        mpi_status_from(status, c, &info, MPI_SUCCESS);
    else
        mpi_status_empty(status, MPI_ANY_SOURCE);
    q->kind = REQ_FREE; /* req_release's, without the table lock (not MULTIPLE) */
    q->next = mpi.free_head;
    mpi.free_head = *h;
    *h = MPI_REQUEST_NULL;
    return true;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    int e = check_req(request, "MPI_Test");
    if (e != MPI_SUCCESS)
        return e;
    if (*request == MPI_REQUEST_NULL) {
        *flag = 1;
        mpi_status_empty(status, MPI_ANY_SOURCE);
        return MPI_SUCCESS;
    }
    MPI_Request h = *request;
    int err;
    *flag = req_done(request, status, &err);
    return *flag ? finish_err(h, err, "MPI_Test") : MPI_SUCCESS;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    int e = check_req(request, "MPI_Wait");
    if (e != MPI_SUCCESS)
        return e;
    if (*request == MPI_REQUEST_NULL) {
        mpi_status_empty(status, MPI_ANY_SOURCE);
        return MPI_SUCCESS;
    }
    if (wait_fast(request, status))
        return MPI_SUCCESS;
    MPI_Request h = *request;
    int err;
    req_wait(mpi_req_get(h));
    req_take(request, status, &err);
    return finish_err(h, err, "MPI_Wait");
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    int e = mpi_check_init("MPI_Testall");
    if (e != MPI_SUCCESS)
        return e;
    if (count < 0 || (count > 0 && requests == NULL) || flag == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Testall: %d requests", count);
    bool all = true; /* all or nothing: nothing is taken unless all are done */
    for (int i = 0; i < count; i++) {
        if (requests[i] == MPI_REQUEST_NULL)
            continue;
        if (mpi_req_get(requests[i]) == NULL)
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Testall: request %d is not "
                             "valid", requests[i]);
        all = req_poll(mpi_req_get(requests[i])) && all;
    }
    *flag = all;
    return all ? MPI_Waitall(count, requests, statuses) : MPI_SUCCESS;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    int e = mpi_check_init("MPI_Waitall");
    if (e != MPI_SUCCESS)
        return e;
    if (count < 0 || (count > 0 && requests == NULL))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Waitall: %d requests", count);
    int result = MPI_SUCCESS;
    for (int i = 0; i < count; i++) {
        MPI_Status *s = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        if (requests[i] == MPI_REQUEST_NULL) {
            mpi_status_empty(s, MPI_ANY_SOURCE);
            continue;
        }
        if (mpi_req_get(requests[i]) == NULL)
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Waitall: request %d is not "
                             "valid", requests[i]);
        if (wait_fast(&requests[i], s))
            continue; /* MPI_ERROR: MPI_SUCCESS, set by wait_fast */
        MPI_Comm comm = mpi_req_get(requests[i])->comm;
        int err;
        req_wait(mpi_req_get(requests[i]));
        req_take(&requests[i], s, &err);
        if (s != MPI_STATUS_IGNORE) /* a send's too */
            s->MPI_ERROR = err;
        if (err != MPI_SUCCESS && result == MPI_SUCCESS)
            result = mpi_raise(comm, MPI_ERR_IN_STATUS, "MPI_Waitall: request %d: %s", i,
                               mpi_last_error);
    }
    return result;
}

/* The array checks of the any and some forms: every handle valid (a null
 * or inactive one is skipped, not an error). */
static int check_reqs(int count, const MPI_Request requests[], const char *call)
{
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    if (count < 0 || (count > 0 && requests == NULL))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: %d requests", call, count);
    for (int i = 0; i < count; i++)
        if (requests[i] != MPI_REQUEST_NULL && mpi_req_get(requests[i]) == NULL)
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: request %d (index %d) is "
                             "not valid", call, requests[i], i);
    return MPI_SUCCESS;
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    int e = check_reqs(count, requests, "MPI_Testany");
    if (e != MPI_SUCCESS)
        return e;
    if (index == NULL || flag == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Testany: NULL index or flag");
    bool any_active = false;
    for (int i = 0; i < count; i++) {
        if (!req_active(requests[i]))
            continue;
        any_active = true;
        MPI_Request h = requests[i];
        int err;
        if (req_done(&requests[i], status, &err)) {
            *index = i;
            *flag = 1;
            return finish_err(h, err, "MPI_Testany");
        }
    }
    *index = MPI_UNDEFINED;
    *flag = !any_active; /* no active request: flag true, index undefined */
    if (!any_active)
        mpi_status_empty(status, MPI_ANY_SOURCE);
    return MPI_SUCCESS;
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    int flag = 0;
    for (;;) {
        int e = MPI_Testany(count, requests, index, &flag, status);
        if (e != MPI_SUCCESS || flag)
            return e;
        mpi_block();
    }
}

/* Testsome: take every active request that finished (progress once each);
 * *outcount MPI_UNDEFINED when none is active.  A failed one gives
 * MPI_ERR_IN_STATUS, its class in its status (the others' MPI_SUCCESS). */
static int test_some(int incount, MPI_Request requests[], int *outcount, int indices[],
                     MPI_Status statuses[], const char *call)
{
    int e = check_reqs(incount, requests, call);
    if (e != MPI_SUCCESS)
        return e;
    if (outcount == NULL || (incount > 0 && indices == NULL))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL outcount or indices", call);
    bool any_active = false;
    int n = 0, result = MPI_SUCCESS;
    for (int i = 0; i < incount; i++) {
        if (!req_active(requests[i]))
            continue;
        any_active = true;
        MPI_Request h = requests[i];
        MPI_Status *s = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
        int err;
        if (!req_done(&requests[i], s, &err))
            continue;
        indices[n++] = i;
        if (s != MPI_STATUS_IGNORE)
            s->MPI_ERROR = err;
        if (err != MPI_SUCCESS && result == MPI_SUCCESS)
            result = mpi_raise(mpi.reqs[h - 1].comm, MPI_ERR_IN_STATUS, "%s: request %d: %s",
                               call, i, mpi_last_error);
    }
    *outcount = any_active ? n : MPI_UNDEFINED;
    return result;
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    return test_some(incount, requests, outcount, indices, statuses, "MPI_Testsome");
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    for (;;) {
        int e = test_some(incount, requests, outcount, indices, statuses, "MPI_Waitsome");
        if (e != MPI_SUCCESS || *outcount != 0)
            return e;
        mpi_block();
    }
}

int MPI_Request_free(MPI_Request *request)
{
    int e = check_req(request, "MPI_Request_free");
    if (e != MPI_SUCCESS || *request == MPI_REQUEST_NULL)
        return e;
    /* one under way completes in the background (a freed receive's data
     * still lands in its buffer); mpi_reap_freed frees the entry then */
    mpi_req_t *q = mpi_req_get(*request);
    if (q->kind == REQ_DONE || (q->kind == REQ_PERSIST && !q->active)) {
        req_release(q);
    } else {
        q->freed = true;
        q->next = mpi.freed_head;
        mpi.freed_head = *request;
        mpi.nfreed++;
    }
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int MPI_Cancel(MPI_Request *request)
{
    int e = check_req(request, "MPI_Cancel");
    if (e != MPI_SUCCESS || *request == MPI_REQUEST_NULL)
        return e;
    mpi_req_t *q = mpi_req_get(*request);
    if (!q->recv)
        return mpi_raise(q->comm, MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Cancel: sends cannot be "
                         "cancelled (receives only)");
    if (q->kind == REQ_PERSIST) { /* the receive it started, if still under way */
        if (!q->active || q->inner == MPI_REQUEST_NULL)
            return MPI_SUCCESS;
        q = mpi_req_get(q->inner);
    }
    if (q->kind == REQ_TERN) {
        mpi_lock(q->w);
        tern_status_t st = tern_cancel(q->w, q->r);
        mpi_unlock(q->w);
        if (st != TERN_OK)
            return mpi_raise_tern(q->comm, st, "MPI_Cancel");
    }
    return MPI_SUCCESS;
}

int MPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    if (status == NULL || flag == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test_cancelled: NULL argument");
    *flag = status->count_hi_and_cancelled & 1;
    return MPI_SUCCESS;
}

/* ---- blocking forms ------------------------------------------------------- */

/* The blocking forms go straight to tern's blocking calls: no request
 * table entry (it cost a quarter of an 8-byte message's latency).  When a
 * wait must poll instead (several workers or threads, non-blocking
 * collectives under way: mpi_polling), mt.c's forms of them. */
int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
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
    int err = mpi_class_of(st);
    if (st == TERN_OK || st == TERN_ERR_TRUNCATED)
        mpi_status_from(status, c, &info, err);
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
    if (status != MPI_STATUS_IGNORE)
        *status = st[0];
    return e == MPI_ERR_IN_STATUS ? (st[0].MPI_ERROR ? st[0].MPI_ERROR : st[1].MPI_ERROR) : e;
}

/* ---- probes ---------------------------------------------------------------- */

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
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
        mpi_status_from(status, c, &info, MPI_SUCCESS);
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
