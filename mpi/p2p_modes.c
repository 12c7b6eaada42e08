/*
 * The other send modes and persistent requests, on the start calls of
 * p2p.c (mpi_isend_start / mpi_irecv_start: whatever they do with a
 * datatype, these calls do not look inside it).
 *
 * - Ready mode: a standard send.  MPI only promises the receive is posted;
 *   a standard send is correct whether it is or not.
 * - Buffered mode: the message is packed (mpi_dt_pack) into the buffer
 *   MPI_Buffer_attach gave and sent from there as bytes, so the caller's
 *   buffer is free at once; the room is taken back once that send
 *   completes (checked at each buffered send and at detach).
 * - Persistent requests: a REQ_PERSIST entry holding the arguments;
 *   MPI_Start runs the operation as an ordinary request (the entry's
 *   inner), whose completion request.c moves into the persistent entry.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"


/* A request that completed at once (Ibsend's: its data is copied). */
static int done_req(MPI_Comm comm, int source, MPI_Request *out, const char *call)
{
    MPI_Request h;
    if (mpi_req_new(&h) != MPI_SUCCESS)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s: request table", call);
    mpi_req_t *q = mpi_req_at(h); /* free until its kind is set */
    q->kind = REQ_DONE;
    q->comm = comm;
    mpi_status_empty(&q->status, source);
    *out = h;
    return MPI_SUCCESS;
}

/* ---- ready mode -------------------------------------------------------------- */

int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    MPI_Request r;
    int e = mpi_isend_start(buf, count, datatype, dest, tag, comm, MPI_SEND_STANDARD, &r,
                            "MPI_Rsend");
    return e != MPI_SUCCESS ? e : MPI_Wait(&r, MPI_STATUS_IGNORE);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    return mpi_isend_start(buf, count, datatype, dest, tag, comm, MPI_SEND_STANDARD, request,
                           "MPI_Irsend");
}

/* ---- buffered mode ------------------------------------------------------------ */

/* A message in the attached buffer: bytes [off, off + len) of it (the
 * packed data plus MPI_BSEND_OVERHEAD, which leaves room to align the
 * data), sent by req.  Kept in address order: a new one takes the first
 * gap that fits. */
typedef struct bsend_blk {
    size_t off, len;
    MPI_Request req;
} bsend_blk_t;

/* The attached buffer's state; under MPI_THREAD_MULTIPLE bsend_lock's
 * (taken before the request table's and the workers' locks). */
static pthread_mutex_t bsend_lock = PTHREAD_MUTEX_INITIALIZER;


static struct {
    bool attached;
    char *buf;
    size_t size;
    bsend_blk_t *blk;
    int n, cap;
} bsend;

/* Take back the room of the sends that completed (wait: of all).  A send
 * that failed (its peer died) has nobody left to tell: MPI gives a
 * buffered send no request to report it on. */
static void bsend_reclaim(bool wait)
{
    int k = 0;
    for (int i = 0; i < bsend.n; i++) {
        int err;
        if (!mpi_req_complete(&bsend.blk[i].req, wait, MPI_STATUS_IGNORE, &err))
            bsend.blk[k++] = bsend.blk[i];
    }
    bsend.n = k;
}

void mpi_bsend_drain(void) /* MPI_Finalize: one thread left */
{
    bsend_reclaim(true);
    free(bsend.blk);
    bsend.blk = NULL;
    bsend.n = bsend.cap = 0;
}

/* Room for len bytes: the index of the new block (its off set), or -1
 * with the largest gap in *largest. */
static int bsend_alloc(size_t len, size_t *largest)
{
    if (bsend.n == bsend.cap) {
        int cap = bsend.cap ? 2 * bsend.cap : 16;
        bsend_blk_t *b = realloc(bsend.blk, sizeof(*b) * (size_t)cap);
        if (b == NULL) {
            *largest = 0;
            return -1;
        }
        bsend.blk = b;
        bsend.cap = cap;
    }
    size_t end = 0; /* of the block before the gap */
    *largest = 0;
    for (int i = 0; i <= bsend.n; i++) {
        size_t next = i < bsend.n ? bsend.blk[i].off : bsend.size;
        size_t gap = next - end;
        if (gap >= len) {
            memmove(&bsend.blk[i + 1], &bsend.blk[i], sizeof(bsend.blk[0]) * (size_t)(bsend.n - i));
            bsend.blk[i] = (bsend_blk_t){.off = end, .len = len, .req = MPI_REQUEST_NULL};
            bsend.n++;
            return i;
        }
        if (gap > *largest)
            *largest = gap;
        if (i < bsend.n)
            end = bsend.blk[i].off + bsend.blk[i].len;
    }
    return -1;
}

static void bsend_drop(int i)
{
    memmove(&bsend.blk[i], &bsend.blk[i + 1], sizeof(bsend.blk[0]) * (size_t)(bsend.n - i - 1));
    bsend.n--;
}

/* Pack the message into the attached buffer and start its send from
 * there; the caller's buffer is free on return.  (bsend_lock held) */
static int bsend_start_locked(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                              MPI_Comm comm, const char *call)
{
    int e = mpi_check_p2p(comm, buf, count, dt, dest, tag, false, call);
    if (e != MPI_SUCCESS || dest == MPI_PROC_NULL)
        return e;
    if (!bsend.attached)
        return mpi_raise(comm, MPI_ERR_BUFFER, "%s: no buffer attached (MPI_Buffer_attach "
                         "first)", call);
    size_t n = mpi_dt_pack_size(count, dt);
    if (n > INT_MAX)
        return mpi_raise(comm, MPI_ERR_COUNT, "%s: %zu bytes packed, more than one buffered "
                         "send takes", call, n);
    bsend_reclaim(false);
    size_t need = n + MPI_BSEND_OVERHEAD, largest;
    int i = bsend_alloc(need, &largest);
    if (i < 0)
        return mpi_raise(comm, MPI_ERR_BUFFER, "%s: the message needs %zu bytes of the attached "
                         "buffer (%zu packed + MPI_BSEND_OVERHEAD %d), its largest free part "
                         "is %zu of %zu bytes (%d buffered sends in flight)", call, need, n,
                         MPI_BSEND_OVERHEAD, largest, bsend.size, bsend.n);
    uintptr_t at = (uintptr_t)(bsend.buf + bsend.blk[i].off);
    char *data = bsend.buf + bsend.blk[i].off + (((at + 15) & ~(uintptr_t)15) - at);
    mpi_dt_pack(buf, count, dt, data);
    MPI_Request r;
    e = mpi_isend_start(data, (int)n, MPI_BYTE, dest, tag, comm, MPI_SEND_STANDARD, &r, call);
    if (e != MPI_SUCCESS) {
        bsend_drop(i);
        return e;
    }
    bsend.blk[i].req = r;
    return MPI_SUCCESS;
}

static int bsend_start(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                       MPI_Comm comm, const char *call)
{
    mpi_mt_lock(&bsend_lock);
    int e = bsend_start_locked(buf, count, dt, dest, tag, comm, call);
    mpi_mt_unlock(&bsend_lock);
    return e;
}

int MPI_Buffer_attach(void *buffer, int size)
{
    int e = mpi_check_init("MPI_Buffer_attach");
    if (e != MPI_SUCCESS)
        return e;
    if (size < 0 || (buffer == NULL && size > 0))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_Buffer_attach: buffer %p of %d "
                         "bytes", buffer, size);
    mpi_mt_lock(&bsend_lock);
    bool had = bsend.attached;
    size_t had_size = bsend.size;
    if (!had) {
        bsend.attached = true;
        bsend.buf = buffer;
        bsend.size = (size_t)size;
    }
    mpi_mt_unlock(&bsend_lock);
    if (had)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_Buffer_attach: a buffer of %zu "
                         "bytes is attached already (MPI_Buffer_detach it first)", had_size);
    return MPI_SUCCESS;
}

int MPI_Buffer_detach(void *buffer_addr, int *size)
{
    int e = mpi_check_init("MPI_Buffer_detach");
    if (e != MPI_SUCCESS)
        return e;
    if (buffer_addr == NULL || size == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Buffer_detach: NULL argument");
    /* MPI: it returns once the messages in the buffer are sent */
    mpi_mt_lock(&bsend_lock);
    bsend_reclaim(true);
    void *buf = bsend.attached ? bsend.buf : NULL;
    memcpy(buffer_addr, &buf, sizeof(buf)); /* buffer_addr is a void ** passed as void * */
    *size = bsend.attached ? (int)bsend.size : 0;
    bsend.attached = false;
    bsend.buf = NULL;
    bsend.size = 0;
    mpi_mt_unlock(&bsend_lock);
    return MPI_SUCCESS;
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return bsend_start(buf, count, datatype, dest, tag, comm, "MPI_Bsend");
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    if (request == NULL)
        return mpi_raise(comm, MPI_ERR_REQUEST, "MPI_Ibsend: NULL request pointer");
    int e = bsend_start(buf, count, datatype, dest, tag, comm, "MPI_Ibsend");
    return e != MPI_SUCCESS ? e : done_req(comm, MPI_ANY_SOURCE, request, "MPI_Ibsend");
}

/* ---- persistent requests ------------------------------------------------------- */

enum persist_op { PERSIST_SEND, PERSIST_SSEND, PERSIST_RSEND, PERSIST_BSEND, PERSIST_RECV };

/* what MPI_Start names in its errors, by operation */
static const char *const start_call[] = {
    [PERSIST_SEND] = "MPI_Start (MPI_Send_init)",
    [PERSIST_SSEND] = "MPI_Start (MPI_Ssend_init)",
    [PERSIST_RSEND] = "MPI_Start (MPI_Rsend_init)",
    [PERSIST_BSEND] = "MPI_Start (MPI_Bsend_init)",
    [PERSIST_RECV] = "MPI_Start (MPI_Recv_init)",
};

/* a persistent request's arguments (its entry's aux) */
typedef struct persist {
    enum persist_op op;
    void *buf;
    int count;
    MPI_Datatype dt;
    int peer, tag;
    MPI_Comm comm;
} persist_t;

static int persist_new(const persist_t *args, MPI_Request *request, const char *call)
{
    int e = mpi_check_p2p(args->comm, args->buf, args->count, args->dt, args->peer, args->tag,
                       args->op == PERSIST_RECV, call);
    if (e != MPI_SUCCESS)
        return e;
    if (request == NULL)
        return mpi_raise(args->comm, MPI_ERR_REQUEST, "%s: NULL request pointer", call);
    persist_t *p = malloc(sizeof(*p));
    MPI_Datatype held = args->dt == MPI_DATATYPE_NULL ? args->dt : mpi_dt_hold(args->dt);
    MPI_Request h;
    if (p == NULL || (held == MPI_DATATYPE_NULL && args->dt != MPI_DATATYPE_NULL) ||
        mpi_req_new(&h) != MPI_SUCCESS) {
        free(p);
        if (held != args->dt)
            mpi_dt_drop(held);
        return mpi_raise(args->comm, MPI_ERR_NO_MEM, "%s: no memory for the request", call);
    }
    *p = *args;
    p->dt = held; /* the request's own handle: MPI_Type_free of the user's leaves it */
    mpi_req_t *q = mpi_req_at(h); /* free until its kind is set */
    q->kind = REQ_PERSIST;
    q->comm = args->comm;
    q->recv = args->op == PERSIST_RECV;
    q->aux = p;
    q->inner = MPI_REQUEST_NULL;
    mpi_status_empty(&q->status, MPI_ANY_SOURCE);
    *request = h;
    return MPI_SUCCESS;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    persist_t a = {PERSIST_SEND, (void *)buf, count, datatype, dest, tag, comm};
    return persist_new(&a, request, "MPI_Send_init");
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    persist_t a = {PERSIST_SSEND, (void *)buf, count, datatype, dest, tag, comm};
    return persist_new(&a, request, "MPI_Ssend_init");
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    persist_t a = {PERSIST_RSEND, (void *)buf, count, datatype, dest, tag, comm};
    return persist_new(&a, request, "MPI_Rsend_init");
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    persist_t a = {PERSIST_BSEND, (void *)buf, count, datatype, dest, tag, comm};
    return persist_new(&a, request, "MPI_Bsend_init");
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    persist_t a = {PERSIST_RECV, buf, count, datatype, source, tag, comm};
    return persist_new(&a, request, "MPI_Recv_init");
}

void mpi_persist_free(void *aux)
{
    persist_t *p = aux;
    if (p == NULL)
        return;
    mpi_dt_drop(p->dt);
    free(p);
}

/* Run the operation of an inactive persistent request: its request into
 * *inner. */
static int persist_run(const persist_t *p, MPI_Request *inner)
{
    const char *call = start_call[p->op];
    switch (p->op) {
    case PERSIST_RECV:
        return mpi_irecv_start(p->buf, p->count, p->dt, p->peer, p->tag, p->comm, inner, call);
    case PERSIST_SSEND:
        return mpi_isend_start(p->buf, p->count, p->dt, p->peer, p->tag, p->comm,
                               MPI_SEND_SYNC, inner, call);
    case PERSIST_BSEND: {
        int e = bsend_start(p->buf, p->count, p->dt, p->peer, p->tag, p->comm, call);
        return e != MPI_SUCCESS ? e : done_req(p->comm, MPI_ANY_SOURCE, inner, call);
    }
    default: /* standard and ready (a standard send, as MPI_Rsend) */
        return mpi_isend_start(p->buf, p->count, p->dt, p->peer, p->tag, p->comm,
                               MPI_SEND_STANDARD, inner, call);
    }
}

static int start_one(MPI_Request *request, const char *call)
{
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    if (request == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: NULL request pointer", call);
    mpi_req_t *q = mpi_req_get(*request);
    if (q == NULL || q->kind != REQ_PERSIST)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: request %d is not a persistent "
                         "request (MPI_Send_init, MPI_Recv_init, ...)", call, *request);
    if (q->active)
        return mpi_raise(q->comm, MPI_ERR_REQUEST, "%s: request %d is active (started, not "
                         "completed yet)", call, *request);
    persist_t p = *(const persist_t *)q->aux; /* the table may move while it starts */
    MPI_Request inner;
    e = persist_run(&p, &inner);
    if (e != MPI_SUCCESS)
        return e;
    q = mpi_req_get(*request);
    q->inner = inner;
    q->active = true;
    q->err = MPI_SUCCESS;
    mpi_status_empty(&q->status, MPI_ANY_SOURCE);
    return MPI_SUCCESS;
}

int MPI_Start(MPI_Request *request)
{
    return start_one(request, "MPI_Start");
}

int MPI_Startall(int count, MPI_Request requests[])
{
    int e = mpi_check_init("MPI_Startall");
    if (e != MPI_SUCCESS)
        return e;
    if (count < 0 || (count > 0 && requests == NULL))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Startall: %d requests", count);
    for (int i = 0; i < count; i++) {
        e = start_one(&requests[i], "MPI_Startall");
        if (e != MPI_SUCCESS)
            return e;
    }
    return MPI_SUCCESS;
}

/* ---- staged forms --------------------------------------------------------------- */

/* The outgoing message packed into a temporary buffer and sent from there
 * as bytes, while the incoming one lands in buf. */
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    const char *call = "MPI_Sendrecv_replace";
    int e = mpi_check_p2p(comm, buf, count, datatype, dest, sendtag, false, call);
    if (e == MPI_SUCCESS)
        e = mpi_check_p2p(comm, buf, count, datatype, source, recvtag, true, call);
    if (e != MPI_SUCCESS)
        return e;
    size_t n = mpi_dt_pack_size(count, datatype);
    if (n > INT_MAX)
        return mpi_raise(comm, MPI_ERR_COUNT, "%s: %zu bytes packed", call, n);
    void *tmp = malloc(n ? n : 1);
    if (tmp == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s: %zu bytes to stage the message", call, n);
    mpi_dt_pack(buf, count, datatype, tmp);
    MPI_Request r[2];
    e = mpi_irecv_start(buf, count, datatype, source, recvtag, comm, &r[0], call);
    if (e != MPI_SUCCESS) {
        free(tmp);
        return e;
    }
    e = mpi_isend_start(tmp, (int)n, MPI_BYTE, dest, sendtag, comm, MPI_SEND_STANDARD, &r[1],
                        call);
    if (e != MPI_SUCCESS) { /* the receive is not left behind */
        int err;
        MPI_Cancel(&r[0]);
        mpi_req_complete(&r[0], true, MPI_STATUS_IGNORE, &err);
        free(tmp);
        return e;
    }
    MPI_Status st[2];
    e = MPI_Waitall(2, r, st);
    free(tmp);
    mpi_status_copy(status, &st[0]);
    if (e != MPI_ERR_IN_STATUS)
        return e;
    return st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR
           : st[1].MPI_ERROR != MPI_SUCCESS ? st[1].MPI_ERROR : MPI_ERR_OTHER;
}
