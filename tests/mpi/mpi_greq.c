/*
 * Generalized requests and statuses the application makes: MPI_Grequest_start
 * / _complete with MPI_Wait, MPI_Test, MPI_Waitall beside MPI's own
 * requests, completed from another thread while MPI_Wait waits
 * (MPI_THREAD_MULTIPLE), MPI_Cancel calling the cancel callback, a query
 * callback's error returned by the wait; MPI_Status_set_elements(_x) /
 * _set_cancelled read back by MPI_Get_count / _elements(_x) and
 * MPI_Test_cancelled; the _x queries of a datatype.
 */
#include <mpi.h>
#include <pthread.h>
#include <time.h>

#include "tests/mpi/mpi_check.h"

typedef struct op {
    int elements, source, tag, fail, queried, freed, cancelled, cancel_complete;
} op_t;

static int query(void *extra, MPI_Status *st)
{
    op_t *o = extra;
    o->queried++;
    MPI_Status_set_elements(st, MPI_INT, o->elements);
    MPI_Status_set_cancelled(st, o->cancelled);
    st->MPI_SOURCE = o->source;
    st->MPI_TAG = o->tag;
    return o->fail;
}

static int release(void *extra)
{
    ((op_t *)extra)->freed++;
    return MPI_SUCCESS;
}

static int cancel(void *extra, int complete)
{
    op_t *o = extra;
    o->cancelled = 1;
    o->cancel_complete = complete;
    return MPI_SUCCESS;
}

static void *completer(void *arg)
{
    struct timespec d = {0, 20 * 1000 * 1000}; /* let the main thread wait first */
    nanosleep(&d, NULL);
    MPI_Grequest_complete(*(MPI_Request *)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Status st;
    int n = -1, flag = -1;

    /* completed, then waited for */
    op_t a = {.elements = 5, .source = 3, .tag = 77};
    MPI_Request r = MPI_REQUEST_NULL;
    CHECK(MPI_Grequest_start(query, release, cancel, &a, &r) == MPI_SUCCESS, "start");
    MPI_Test(&r, &flag, &st);
    CHECK(flag == 0 && a.queried == 0, "MPI_Test before completion: flag %d", flag);
    MPI_Grequest_complete(r);
    CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "wait");
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 5 && st.MPI_SOURCE == 3 && st.MPI_TAG == 77, "status: count %d source %d tag %d",
          n, st.MPI_SOURCE, st.MPI_TAG);
    CHECK(a.queried == 1 && a.freed == 1, "callbacks: query %d free %d", a.queried, a.freed);

    /* beside a real message, in MPI_Waitall */
    op_t b = {.elements = 2};
    MPI_Request rs[3];
    int out = rank, in = -1;
    MPI_Grequest_start(query, release, cancel, &b, &rs[0]);
    MPI_Irecv(&in, 1, MPI_INT, (rank - 1 + size) % size, 5, MPI_COMM_WORLD, &rs[1]);
    MPI_Isend(&out, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD, &rs[2]);
    MPI_Grequest_complete(rs[0]);
    MPI_Status sts[3];
    CHECK(MPI_Waitall(3, rs, sts) == MPI_SUCCESS, "waitall");
    MPI_Get_count(&sts[0], MPI_INT, &n);
    CHECK(n == 2 && b.freed == 1 && in == (rank - 1 + size) % size, "waitall: %d %d %d", n,
          b.freed, in);

    /* completed by another thread while MPI_Wait waits */
    if (provided == MPI_THREAD_MULTIPLE) {
        op_t c = {.elements = 1};
        MPI_Request rc;
        MPI_Grequest_start(query, release, cancel, &c, &rc);
        pthread_t th;
        pthread_create(&th, NULL, completer, &rc);
        CHECK(MPI_Wait(&rc, &st) == MPI_SUCCESS && c.freed == 1, "wait for another thread");
        pthread_join(th, NULL);
    }

    /* cancelled: the callback, then the status says so */
    op_t d = {.elements = 0};
    MPI_Request rd;
    MPI_Grequest_start(query, release, cancel, &d, &rd);
    CHECK(MPI_Cancel(&rd) == MPI_SUCCESS && d.cancelled == 1 && d.cancel_complete == 0,
          "cancel callback: %d %d", d.cancelled, d.cancel_complete);
    MPI_Grequest_complete(rd);
    MPI_Wait(&rd, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag == 1, "MPI_Test_cancelled after a cancelled generalized request");

    /* a query callback's error is the wait's */
    op_t f = {.elements = 0, .fail = MPI_ERR_OTHER};
    MPI_Request rf;
    MPI_Grequest_start(query, release, cancel, &f, &rf);
    MPI_Grequest_complete(rf);
    int e = MPI_Wait(&rf, &st), cls = -1;
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_OTHER && f.freed == 1, "query error: class %d", cls);

    /* statuses and the _x queries of a derived type: 3 x (int, double) */
    MPI_Datatype pair, types[2] = {MPI_INT, MPI_DOUBLE};
    int lens[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Type_create_struct(2, lens, disp, types, &pair);
    MPI_Type_commit(&pair);
    MPI_Count sx = -1, lb = -1, ext = -1, cx = -1;
    MPI_Type_size_x(pair, &sx);
    MPI_Type_get_extent_x(pair, &lb, &ext);
    CHECK(sx == 12 && lb == 0 && ext == 16, "size_x %lld extent_x %lld %lld", (long long)sx,
          (long long)lb, (long long)ext);
    MPI_Type_get_true_extent_x(pair, &lb, &ext);
    CHECK(lb == 0 && ext == 16, "true_extent_x %lld %lld", (long long)lb, (long long)ext);
#ifdef TERN_MPI_H /* the standard's reading; MPICH 4.0 sets count x the type's size */
    MPI_Status s2;
    MPI_Status_set_cancelled(&s2, 0);
    MPI_Status_set_elements_x(&s2, pair, 5); /* two whole pairs and an int */
    MPI_Get_elements_x(&s2, pair, &cx);
    MPI_Get_elements(&s2, pair, &n);
    CHECK(cx == 5 && n == 5, "elements: %lld %d", (long long)cx, n);
    MPI_Get_count(&s2, pair, &n);
    CHECK(n == MPI_UNDEFINED, "count of 2.5 pairs: %d", n);
    MPI_Status_set_elements(&s2, pair, 4);
    MPI_Get_count(&s2, pair, &n);
    CHECK(n == 2, "count of two pairs: %d", n);
    MPI_Test_cancelled(&s2, &flag);
    CHECK(flag == 0, "set_elements changed the cancelled bit");
#endif
    MPI_Type_free(&pair);

    MPI_Barrier(MPI_COMM_WORLD);
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
