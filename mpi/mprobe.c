/*
 * Matched probes on tern's (tern_improbe / tern_mprobe / tern_imrecv): the
 * probe takes the message out of matching, so no other receive can get
 * it, and MPI_Mrecv / MPI_Imrecv receive exactly that one.  A message is an
 * entry of a table of the taken messages; its handle is of the request
 * type, as in MPICH (MPI_MESSAGE_NULL is MPI_REQUEST_NULL, and
 * MPI_MESSAGE_NO_PROC, a probe of MPI_PROC_NULL's, a predefined request),
 * in a range of its own (kind 3) so it is never mistaken for a request.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mpi/mpi_internal.h"

typedef struct mpi_msg {
    tern_message_t *m; /* NULL: a free slot */
    MPI_Comm comm;     /* the probe's: its ranks for the receive's status */
    bool held;         /* reserved by a probe under way, or holding m */
} mpi_msg_t;

static mpi_msg_t *msgs;
static int nmsgs;

/* A free slot (the table grows when there is none), reserved before the
 * probe takes a message: a message taken is never dropped for want of
 * room.  -1: out of memory.  The table is the table lock's. */
static int msg_slot_locked(void)
{
    for (int i = 0; i < nmsgs; i++)
        if (!msgs[i].held) {
            msgs[i].held = true;
            return i;
        }
    int cap = nmsgs ? 2 * nmsgs : 16;
    mpi_msg_t *t = realloc(msgs, sizeof(*t) * (size_t)cap);
    if (t == NULL)
        return -1;
    for (int i = nmsgs; i < cap; i++)
        t[i] = (mpi_msg_t){0};
    msgs = t;
    int i = nmsgs;
    nmsgs = cap;
    msgs[i].held = true;
    return i;
}

static int msg_slot(void)
{
    mpi_table_lock();
    int i = msg_slot_locked();
    mpi_table_unlock();
    return i;
}

/* fill a reserved slot (m: the message) or give it back (m NULL) */
static void msg_set(int slot, tern_message_t *m, MPI_Comm comm)
{
    mpi_table_lock();
    msgs[slot] = (mpi_msg_t){.m = m, .comm = comm, .held = m != NULL};
    mpi_table_unlock();
}

/* The receive buffer as tern takes it: count elements of a predefined
 * type are count * size contiguous bytes (a derived type goes through
 * mpi_dt_mrecv_start: iovecs or a staging buffer, as MPI_Irecv's). */
static size_t mrecv_len(int count, MPI_Datatype dt)
{
    return (size_t)count * (size_t)mpi_type_size(dt);
}

static int improbe(int source, int tag, MPI_Comm comm, bool block, int *flag,
                   MPI_Message *message, MPI_Status *status, const char *call)
{
    int e = mpi_check_comm(comm, call);
    if (e == MPI_SUCCESS)
        e = mpi_check_rank(comm, source, true, call);
    if (e == MPI_SUCCESS)
        e = mpi_check_tag(comm, tag, true, call);
    if (e != MPI_SUCCESS)
        return e;
    if (flag == NULL || message == NULL)
        return mpi_raise(comm, MPI_ERR_ARG, "%s: NULL flag or message pointer", call);
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        mpi_status_empty(status, MPI_PROC_NULL);
        return MPI_SUCCESS;
    }
    int slot = msg_slot();
    if (slot < 0)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s: message table", call);
    mpi_comm_t *c = mpi_comm_get(comm);
    int src = source == MPI_ANY_SOURCE ? TERN_ANY_SOURCE : c->ranks[source];
    tag = tag == MPI_ANY_TAG ? TERN_ANY_TAG : tag;
    tern_message_t *m = NULL;
    tern_recv_info_t info;
    tern_status_t st;
    if (block && !mpi_polling()) {
        st = tern_mprobe(c->w, src, tag, c->space, &m, &info);
        *flag = 1;
    } else {
        for (;;) { /* a blocking probe that polls: mpi_block between tries */
            mpi_lock(c->w);
            st = tern_improbe(c->w, src, tag, c->space, flag, &m, &info);
            mpi_unlock(c->w);
            if (st != TERN_OK || *flag || !block)
                break;
            mpi_block();
        }
    }
    if (st != TERN_OK || !*flag) {
        msg_set(slot, NULL, MPI_COMM_NULL);
        return st == TERN_OK ? MPI_SUCCESS : mpi_raise_tern(comm, st, call);
    }
    msg_set(slot, m, comm);
    *message = mpi_h_make(MPI_HK_MADE2, MPI_HT_REQUEST, (unsigned)slot);
    mpi_status_from(status, c, &info);
    return MPI_SUCCESS;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
    (void)mpi_progress_pending(); /* what a peer may wait for (mt.c) */
    return improbe(source, tag, comm, false, flag, message, status, "MPI_Improbe");
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    int flag;
    return improbe(source, tag, comm, true, &flag, message, status, "MPI_Mprobe");
}

/* the message of a slot, the slot freed */
static tern_message_t *msg_take(int slot)
{
    mpi_table_lock();
    tern_message_t *m = msgs[slot].m;
    msgs[slot] = (mpi_msg_t){0};
    mpi_table_unlock();
    return m;
}

/* Start receiving *message into buf: a request in *out (done at once for
 * MPI_MESSAGE_NO_PROC, or when tern had it all), *message
 * MPI_MESSAGE_NULL. */
static int mrecv_start(void *buf, int count, MPI_Datatype dt, MPI_Message *message,
                       MPI_Request *out, const char *call)
{
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    if (message == NULL || out == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL message or request pointer",
                         call);
    int slot = mpi_h_is(*message, MPI_HK_MADE2, MPI_HT_REQUEST) ? (int)mpi_h_index(*message) : -1;
    mpi_table_lock();
    MPI_Comm comm = *message == MPI_MESSAGE_NO_PROC ? MPI_COMM_WORLD
                    : slot >= 0 && slot < nmsgs && msgs[slot].m != NULL ? msgs[slot].comm
                                                                        : MPI_COMM_NULL;
    mpi_table_unlock();
    if (comm == MPI_COMM_NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: message %#x is not one a matched "
                         "probe returned (or it was received already)", call, (unsigned)*message);
    e = mpi_check_buf(comm, buf, count, dt, call);
    if (e != MPI_SUCCESS)
        return e;
    if (!mpi_dt_predefined(dt) && *message != MPI_MESSAGE_NO_PROC) {
        tern_message_t *m = msg_take(slot); /* tern_imrecvv takes it, whatever it returns */
        *message = MPI_MESSAGE_NULL;
        return mpi_dt_mrecv_start(buf, count, dt, m, comm, out, call);
    }
    MPI_Request h;
    if (mpi_req_new(&h) != MPI_SUCCESS)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s: request table", call);
    mpi_req_t *q = mpi_req_at(h); /* free until its kind is set */
    q->comm = comm;
    q->recv = true;
    q->kind = REQ_DONE;
    *out = h;
    if (*message == MPI_MESSAGE_NO_PROC) {
        mpi_status_empty(&q->status, MPI_PROC_NULL);
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    tern_message_t *m = msg_take(slot); /* tern_imrecv takes it, whatever it returns */
    *message = MPI_MESSAGE_NULL;
    tern_request_t *r = NULL;
    tern_recv_info_t info;
    tern_worker_t *w = mpi_comm_get(comm)->w;
    mpi_lock(w);
    tern_status_t st = tern_imrecv(w, buf, mrecv_len(count, dt), m, &info, &r);
    mpi_unlock(w);
    if (st == TERN_INPROGRESS) {
        q->kind = REQ_TERN;
        q->r = r;
        q->w = w;
        return MPI_SUCCESS;
    }
    q->err = mpi_class_of(st);
    if (st == TERN_OK || st == TERN_ERR_TRUNCATED) {
        /* a truncation is raised when the request completes, as MPI_Irecv's */
        mpi_status_from(&q->status, mpi_comm_get(comm), &info);
        if (st != TERN_OK)
            snprintf(mpi_last_error, sizeof(mpi_last_error), "%s", tern_last_error());
        return MPI_SUCCESS;
    }
    MPI_Request_free(out);
    return mpi_raise_tern(comm, st, call);
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Request *request)
{
    return mrecv_start(buf, count, datatype, message, request, "MPI_Imrecv");
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
              MPI_Status *status)
{
    MPI_Request h;
    int e = mrecv_start(buf, count, datatype, message, &h, "MPI_Mrecv");
    if (e != MPI_SUCCESS)
        return e;
    MPI_Comm comm = mpi_req_get(h)->comm;
    int err;
    mpi_req_complete(&h, true, status, &err);
    return err == MPI_SUCCESS ? MPI_SUCCESS
                              : mpi_raise(comm, err, "MPI_Mrecv: %s", mpi_last_error);
}
