/*
 * Workers and threads (docs/mpi.md, "Threads").
 *
 * The layer takes every worker the context has (TERN_NUM_WORKERS, the same
 * on every rank) whatever the thread level, and a communicator's traffic
 * goes through worker (context id % workers): both ends of a message agree
 * on the worker without asking, as tern pairs worker i with worker i
 * (MPICH's VCI model).  Communicators on different workers are driven by
 * different threads without any shared lock.
 *
 * MPI_THREAD_MULTIPLE: a mutex per worker is held around every tern call on
 * that worker (the mpi_locked_* wrappers), never while waiting: a blocking
 * MPI call waits by polling its request, lock taken and dropped each time,
 * and yields the CPU in between (mpi_block), so a thread blocked in
 * MPI_Recv never keeps another from sending on the same worker.  Below
 * MULTIPLE the mutexes are never touched.
 *
 * With more than one worker, a thread waiting on one worker also makes
 * progress on the others (mpi_block): a rendezvous in flight on worker 0
 * may be what the peer needs before it sends what we wait for on worker 1.
 */
#include <sched.h>
#include <stdlib.h>

#include "mpi/comm_ctx.h"
#include "mpi/mpi_internal.h"

int mpi_workers_init(void)
{
    mpi.workers[0] = tern_context_worker(mpi.ctx);
    mpi.nworkers = 1;
    while (mpi.nworkers < MPI_MAX_WORKERS) {
        tern_worker_t *w = NULL;
        if (tern_worker_create(mpi.ctx, &w) != TERN_OK)
            break; /* TERN_ERR_NO_RESOURCE: all of TERN_NUM_WORKERS taken */
        mpi.workers[mpi.nworkers++] = w;
    }
    for (int i = 0; i < mpi.nworkers; i++)
        if (pthread_mutex_init(&mpi.wlock[i], NULL) != 0)
            return MPI_ERR_INTERN;
    /* recursive: reaping freed requests (under it) releases entries */
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    int rc = pthread_mutex_init(&mpi.table_lock, &a);
    pthread_mutexattr_destroy(&a);
    if (rc != 0)
        return MPI_ERR_INTERN;
    return MPI_SUCCESS;
}

void mpi_workers_finalize(void)
{
    for (int i = 1; i < mpi.nworkers; i++)
        (void)tern_worker_destroy(mpi.workers[i]);
    for (int i = 0; i < mpi.nworkers; i++)
        pthread_mutex_destroy(&mpi.wlock[i]);
    pthread_mutex_destroy(&mpi.table_lock);
    mpi.nworkers = 0;
}

tern_worker_t *mpi_worker_for(int context)
{
    return mpi.workers[context % mpi.nworkers];
}

/* Wait a little for progress.  The schedules of non-blocking collectives
 * under way move on first (a peer may wait for their next round).  One
 * worker, one thread: then sleep in tern_worker_wait until something
 * happens.  Otherwise: progress every worker whose lock is free, and yield. */
void mpi_block(void)
{
    mpi_block_ms(-1);
}

bool mpi_progress_pending(void)
{
    bool moved = (mpi.mt || coll_nb_active > 0) && mpi_coll_progress();
    if (__atomic_load_n(&mpi_idups_active, __ATOMIC_RELAXED) > 0 && mpi_ctx_step_all())
        moved = true;
    if (__atomic_load_n(&mpi_win_dyn_active, __ATOMIC_RELAXED) > 0 && mpi_win_dyn_serve())
        moved = true;
    return moved;
}

void mpi_block_ms(int ms)
{
    if ((ms < 0 || ms > 1) && mpi_ctx_pausing())
        ms = 1; /* an MPI_Comm_idup starts its next attempt by the clock */
    /* a schedule or idup that moved on may be what the caller waits for (or
     * may have consumed the wake-up it would sleep for): no sleep then */
    if (mpi_progress_pending())
        return;
    if (!mpi.mt && mpi.nworkers == 1) {
        tern_worker_wait(mpi.w, ms);
        return;
    }
    for (int i = 0; i < mpi.nworkers; i++) {
        if (mpi.mt && pthread_mutex_trylock(&mpi.wlock[i]) != 0)
            continue; /* another thread drives it now */
        (void)tern_progress(mpi.workers[i]);
        if (mpi.mt)
            pthread_mutex_unlock(&mpi.wlock[i]);
    }
    sched_yield();
}

/* ---- blocking operations that may not block inside tern ---------------- */

tern_status_t mpi_wait_tern(tern_worker_t *w, tern_request_t *r, tern_recv_info_t *info)
{
    if (!mpi_polling())
        return tern_wait(w, r, info);
    for (;;) {
        mpi_lock(w);
        tern_status_t st = tern_test(w, r, info);
        mpi_unlock(w);
        if (st != TERN_INPROGRESS)
            return st;
        mpi_block();
    }
}

tern_status_t mpi_send_tern(tern_worker_t *w, const void *buf, size_t len, int dest, int tag,
                            uint16_t space)
{
    if (!mpi_polling())
        return tern_send(w, buf, len, dest, tag, space);
    tern_request_t *r = NULL;
    mpi_lock(w);
    tern_status_t st = tern_isend(w, buf, len, dest, tag, space, &r);
    mpi_unlock(w);
    return st == TERN_INPROGRESS ? mpi_wait_tern(w, r, NULL) : st;
}

tern_status_t mpi_recv_tern(tern_worker_t *w, void *buf, size_t len, int src, int tag,
                            uint16_t space, tern_recv_info_t *info)
{
    if (!mpi_polling())
        return tern_recv(w, buf, len, src, tag, space, info);
    tern_request_t *r = NULL;
    mpi_lock(w);
    tern_status_t st = tern_irecv(w, buf, len, src, tag, space, info, &r);
    mpi_unlock(w);
    return st == TERN_INPROGRESS ? mpi_wait_tern(w, r, info) : st;
}
