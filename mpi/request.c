/*
 * MPI requests: the table of entries behind MPI_Request handles (made
 * handles whose index is the entry's in mpi.reqs) and their completion,
 * the wait / test families, request free and cancel.  Starting operations is p2p.c's (and p2p_modes.c's,
 * mprobe.c's, coll_nb.c's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

/* The table's free entries are a list threaded through their next field:
 * taking one and giving it back are O(1), and a handle stays the same
 * while its operation lives (the lists hold index + 1: 0 ends them).  The
 * table is reserved once at its largest (MPI_MAX_REQUESTS entries; calloc's
 * pages are only touched as
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
    mpi_req_t *sent = mpi_req_at(MPI_REQ_SENT);
    *sent = (mpi_req_t){.kind = REQ_DONE, .comm = MPI_COMM_WORLD};
    mpi_status_empty(&sent->status, MPI_ANY_SOURCE);
    __atomic_store_n(&mpi.nreqs, 1, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

const mpi_req_t mpi_req_zero; /* mpi_internal.h: why a copy of it */

/* h back on the free list (the table lock held, or not MULTIPLE) */
static void req_push(MPI_Request h)
{
    mpi_req_t *q = mpi_req_at(h);
    q->kind = REQ_FREE;
    q->next = mpi.free_head;
    mpi.free_head = (int)mpi_h_index(h) + 1;
}

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
    mpi.reqs[i] = mpi_req_zero;
    mpi_table_unlock();
    *out = MPI_REQ_HANDLE(i);
    return MPI_SUCCESS;
}

mpi_req_t *mpi_req_get(MPI_Request h)
{
    if (!mpi_h_is(h, MPI_HK_MADE, MPI_HT_REQUEST) ||
        mpi_h_index(h) >= (unsigned)__atomic_load_n(&mpi.nreqs, __ATOMIC_ACQUIRE) ||
        mpi_req_at(h)->kind == REQ_FREE)
        return NULL;
    return mpi_req_at(h);
}

/* Back on the free list (the entry's comm stays readable until reused:
 * finish_err names it); a persistent request's arguments go with it. */
static void req_release(mpi_req_t *q)
{
    if (q == mpi_req_at(MPI_REQ_SENT))
        return; /* shared by every send that completed at once */
    if (q->kind == REQ_PERSIST)
        mpi_persist_free(q->aux);
    q->aux = NULL;
    mpi_table_lock();
    req_push(MPI_REQ_HANDLE(q - mpi.reqs));
    mpi_table_unlock();
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
    if (q->kind == REQ_GREQ) {
        if (!mpi_greq_poll(q))
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
    q->kind = REQ_DONE;
    q->r = NULL;
    q->err = st == TERN_OK || st == TERN_ERR_CANCELED ? MPI_SUCCESS : mpi_class_of(st);
    if (q->recv) { /* a freed communicator's entry keeps its ranks (comm.c) */
        mpi_status_from(&q->status, mpi_comm_entry(q->comm), info);
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
    mpi_status_copy(status, &q->status);
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

/* Every operation under way on comm run to its end, its entry kept
 * (MPI_Comm_disconnect: the requests stay the user's to complete). */
void mpi_reqs_settle(MPI_Comm comm)
{
    int n = __atomic_load_n(&mpi.nreqs, __ATOMIC_ACQUIRE);
    for (int i = 1; i < n; i++) {
        mpi_req_t *q = &mpi.reqs[i];
        if (q->comm != comm || q->kind == REQ_FREE || q->kind == REQ_DONE)
            continue;
        while (!req_poll(q))
            mpi_block();
    }
}

static inline __attribute__((always_inline)) int check_req(MPI_Request *h, const char *call)
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
    mpi_req_t *q = mpi_req_at(h_was);
    return mpi_raise(q->comm, err, "%s: %s", call, mpi_last_error);
}

/* The common cases of a wait, inline: a send that completed at once, and
 * (one worker, one thread, nothing to poll for) a tern operation without
 * a finish hook that ends well.  True: *h was completed (status filled,
 * *h MPI_REQUEST_NULL); false: take the general path (an entry that failed
 * here is REQ_DONE by then, with its status and error). */
static inline __attribute__((always_inline)) bool wait_fast(MPI_Request *h, MPI_Status *status)
{
    if (*h == MPI_REQ_SENT) {
        mpi_status_empty(status, MPI_ANY_SOURCE);
        *h = MPI_REQUEST_NULL;
        return true;
    }
    mpi_req_t *q = mpi_req_at(*h); /* valid: checked by the caller */
    if (q->kind == REQ_DONE && q->err == MPI_SUCCESS && !mpi.mt) { /* done when started */
        mpi_status_copy(status, &q->status);
        req_push(*h);
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
    if (q->recv) /* a freed communicator's entry keeps its ranks (comm.c) */
        mpi_status_from(status, mpi_comm_entry(q->comm), &info);
    else
        mpi_status_empty(status, MPI_ANY_SOURCE);
    req_push(*h); /* req_release's, without the table lock (not MULTIPLE) */
    *h = MPI_REQUEST_NULL;
    return true;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    (void)mpi_progress_pending(); /* what a peer may wait for (mt.c) */
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
    (void)mpi_progress_pending(); /* what a peer may wait for (mt.c) */
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

/* MPI_Waitall's common case as one tern_waitall, the way tern's own
 * programs wait for a window: one thread, one worker, nothing to poll for
 * (!mpi_polling), at most WAITALL_BATCH handles, each null, a send done at
 * once, or a plain tern operation (no finish hook).  false: not that case,
 * nothing changed (the caller takes the general path).  Errors come out
 * as the general path's: the entry turned REQ_DONE by req_finished, then
 * taken. */
#define WAITALL_BATCH 64
static bool waitall_batch(int count, MPI_Request requests[], MPI_Status statuses[],
                          int *result)
{
    tern_request_t *tr[WAITALL_BATCH];
    tern_recv_info_t infos[WAITALL_BATCH];
    tern_worker_t *w = NULL;
    if (count > WAITALL_BATCH || mpi_polling())
        return false;
    for (int i = 0; i < count; i++) {
        MPI_Request h = requests[i];
        tr[i] = NULL;
        if (h == MPI_REQUEST_NULL || h == MPI_REQ_SENT)
            continue;
        const mpi_req_t *q = mpi_req_get(h);
        if (q == NULL || q->kind != REQ_TERN || q->finish != NULL || (w != NULL && q->w != w))
            return false;
        w = q->w;
        tr[i] = q->r;
    }
    if (w != NULL)
        (void)tern_waitall(w, tr, (size_t)count, infos); /* each one's status in infos */
    *result = MPI_SUCCESS;
    bool ignore = statuses == MPI_STATUSES_IGNORE;
    for (int i = 0; i < count; i++) {
        MPI_Request h = requests[i];
        if (ignore && (h == MPI_REQUEST_NULL || h == MPI_REQ_SENT)) { /* nothing to say */
            requests[i] = MPI_REQUEST_NULL;
            continue;
        }
        MPI_Status *s = ignore ? MPI_STATUS_IGNORE : &statuses[i];
        int err = MPI_SUCCESS;
        if (h == MPI_REQUEST_NULL || h == MPI_REQ_SENT) {
            mpi_status_empty(s, MPI_ANY_SOURCE);
            requests[i] = MPI_REQUEST_NULL;
        } else if (infos[i].status == TERN_OK) {
            mpi_req_t *q = mpi_req_at(h);
            if (q->recv) /* a freed communicator's entry keeps its ranks (comm.c) */
                mpi_status_from(s, mpi_comm_entry(q->comm), &infos[i]);
            else
                mpi_status_empty(s, MPI_ANY_SOURCE);
            req_push(h); /* not MPI_THREAD_MULTIPLE: no table lock */
            requests[i] = MPI_REQUEST_NULL;
        } else {
            mpi_req_t *q = mpi_req_at(h);
            MPI_Comm comm = q->comm;
            req_finished(q, infos[i].status, &infos[i]);
            req_take(&requests[i], s, &err);
            if (err != MPI_SUCCESS && *result == MPI_SUCCESS)
                *result = mpi_raise(comm, MPI_ERR_IN_STATUS, "MPI_Waitall: request %d: %s", i,
                                    mpi_last_error);
        }
        if (s != MPI_STATUS_IGNORE) /* a call of several: each status's class */
            s->MPI_ERROR = err;
    }
    return true;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    int e = mpi_check_init("MPI_Waitall");
    if (e != MPI_SUCCESS)
        return e;
    if (count < 0 || (count > 0 && requests == NULL))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Waitall: %d requests", count);
    int result = MPI_SUCCESS;
    if (waitall_batch(count, requests, statuses, &result))
        return result;
    for (int i = 0; i < count; i++) {
        MPI_Status *s = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        if (requests[i] == MPI_REQUEST_NULL) {
            mpi_status_empty(s, MPI_ANY_SOURCE);
            if (s != MPI_STATUS_IGNORE)
                s->MPI_ERROR = MPI_SUCCESS; /* a call of several: each status's class */
            continue;
        }
        if (mpi_req_get(requests[i]) == NULL)
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Waitall: request %d is not "
                             "valid", requests[i]);
        if (wait_fast(&requests[i], s)) {
            if (s != MPI_STATUS_IGNORE)
                s->MPI_ERROR = MPI_SUCCESS;
            continue;
        }
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
    (void)mpi_progress_pending(); /* what a peer may wait for (mt.c) */
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
            result = mpi_raise(mpi_req_at(h)->comm, MPI_ERR_IN_STATUS, "%s: request %d: %s",
                               call, i, mpi_last_error);
    }
    *outcount = any_active ? n : MPI_UNDEFINED;
    return result;
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    (void)mpi_progress_pending(); /* what a peer may wait for (mt.c) */
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
        mpi.freed_head = (int)mpi_h_index(*request) + 1;
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
    if (q->kind == REQ_GREQ)
        return mpi_greq_cancel(q);
    /* A send: tern does not take back a message it sent (the engine cancels
     * unmatched receives only), and MPI lets a cancel fail that way: the
     * send completes as it would have, MPI_Test_cancelled of its status says
     * false, and the receiver gets the message (MPI-3.1 3.8.4).  Accepted,
     * so that programs which cancel sends run. */
    if (!q->recv)
        return MPI_SUCCESS;
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

/* Has the request finished, without taking it (it stays for a wait) */
int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    (void)mpi_progress_pending(); /* what a peer may wait for (mt.c) */
    int e = mpi_check_init("MPI_Request_get_status");
    if (e != MPI_SUCCESS)
        return e;
    if (flag == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Request_get_status: NULL flag");
    if (request == MPI_REQUEST_NULL || request == MPI_REQ_SENT) {
        *flag = 1;
        mpi_status_empty(status, MPI_ANY_SOURCE);
        return MPI_SUCCESS;
    }
    mpi_req_t *q = mpi_req_get(request);
    if (q == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Request_get_status: request %d "
                         "is not valid", request);
    if (q->kind == REQ_PERSIST && !q->active) {
        *flag = 1;
        mpi_status_empty(status, MPI_ANY_SOURCE);
        return MPI_SUCCESS;
    }
    *flag = req_poll(q);
    if (*flag)
        mpi_status_copy(status, &q->status);
    return MPI_SUCCESS;
}

int MPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    if (status == NULL || status == MPI_STATUS_IGNORE || flag == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test_cancelled: NULL argument "
                         "(or MPI_STATUS_IGNORE)");
    *flag = status->count_hi_and_cancelled & 1;
    return MPI_SUCCESS;
}
