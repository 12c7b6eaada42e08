/*
 * Generalized requests (MPI_Grequest_start / MPI_Grequest_complete): an
 * operation the application carries out itself and completes through MPI,
 * so that MPI_Wait, MPI_Test and their array forms handle it beside MPI's
 * own.  A REQ_GREQ entry holds the three callbacks and their state (aux);
 * it finishes once MPI_Grequest_complete was called: then query_fn fills
 * its status (its return value is the request's error), and free_fn runs
 * (both at the wait or test that finds it complete, or, for a request
 * MPI_Request_free let go, when the layer reaps it).  MPI_Cancel calls
 * cancel_fn with whether it completed already.
 */
#include <stdlib.h>

#include "mpi/mpi_internal.h"

typedef struct greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
    int done; /* MPI_Grequest_complete called: atomic, another thread may set it */
} greq_t;

int MPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                       MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                       MPI_Request *request)
{
    int e = mpi_check_init("MPI_Grequest_start");
    if (e != MPI_SUCCESS)
        return e;
    if (query_fn == NULL || free_fn == NULL || cancel_fn == NULL || request == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Grequest_start: NULL %s",
                         request == NULL ? "request pointer" : "callback");
    greq_t *g = malloc(sizeof(*g));
    MPI_Request h;
    if (g == NULL || mpi_req_new(&h) != MPI_SUCCESS) {
        free(g);
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Grequest_start: no memory");
    }
    *g = (greq_t){.query = query_fn, .free_fn = free_fn, .cancel = cancel_fn,
                  .extra = extra_state};
    mpi_req_t *q = mpi_req_at(h);
    q->kind = REQ_GREQ;
    q->comm = MPI_COMM_WORLD;
    q->recv = false;
    q->aux = g;
    q->err = MPI_SUCCESS;
    mpi_status_empty(&q->status, MPI_ANY_SOURCE);
    *request = h;
    return MPI_SUCCESS;
}

int MPI_Grequest_complete(MPI_Request request)
{
    int e = mpi_check_init("MPI_Grequest_complete");
    if (e != MPI_SUCCESS)
        return e;
    mpi_req_t *q = mpi_req_get(request);
    if (q == NULL || q->kind != REQ_GREQ)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Grequest_complete: request %d "
                         "is not a generalized request under way", request);
    greq_t *g = q->aux;
    /* R: pairs with the acquire in mpi_greq_poll: what the application did
     * before completing is seen by the thread that takes the completion */
    if (__atomic_exchange_n(&g->done, 1, __ATOMIC_RELEASE))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Grequest_complete: request %d "
                         "is complete already", request);
    tern_worker_signal(mpi.w); /* a wait asleep in tern: look again */
    return MPI_SUCCESS;
}

bool mpi_greq_poll(mpi_req_t *q)
{
    greq_t *g = q->aux;
    /* A: pairs with MPI_Grequest_complete's release */
    if (!__atomic_load_n(&g->done, __ATOMIC_ACQUIRE))
        return false;
    MPI_Status st;
    mpi_status_empty(&st, MPI_ANY_SOURCE);
    st.MPI_ERROR = MPI_SUCCESS;
    int qe = g->query(g->extra, &st);
    q->status = st;
    q->err = qe != MPI_SUCCESS ? qe : MPI_SUCCESS;
    int fe = g->free_fn(g->extra);
    if (q->err == MPI_SUCCESS && fe != MPI_SUCCESS)
        q->err = fe;
    free(g);
    q->aux = NULL;
    return true;
}

int mpi_greq_cancel(mpi_req_t *q)
{
    greq_t *g = q->aux;
    int e = g->cancel(g->extra, __atomic_load_n(&g->done, __ATOMIC_ACQUIRE));
    return e == MPI_SUCCESS ? MPI_SUCCESS
                            : mpi_raise_code(q->comm, e, "MPI_Cancel: the generalized "
                                             "request's cancel callback failed (%d)", e);
}
