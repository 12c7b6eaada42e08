/*
 * Window synchronisation: the pending operations run to their end, fence,
 * post / start / complete / wait / test, lock / unlock (one target or
 * all), the flush family and MPI_Win_sync.
 *
 * Remote completion is tern_flush: once it finishes, every operation this
 * rank issued to the peer before it is in the target's memory (or was
 * refused, and the flush says so).  An epoch's end is therefore: the local
 * requests finished, the flush, then the message (PSCW's completion
 * token), the barrier (fence) or the lock word's release (unlock) that
 * lets the target or the next origin go on.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "mpi/win.h"

/* MPI_THREAD_MULTIPLE: one poller of an operation at a time (a flush and
 * the R* request's wait may poll it from two threads; taken after the
 * window's mu and after the schedules' lock, never before them) */
static pthread_mutex_t op_mu = PTHREAD_MUTEX_INITIALIZER;

static bool op_poll(win_op_t *op, bool wait);

bool mpi_win_op_poll(win_op_t *op, bool wait)
{
    mpi_mt_lock(&op_mu);
    bool done = op_poll(op, wait);
    mpi_mt_unlock(&op_mu);
    return done;
}

static bool op_poll(win_op_t *op, bool wait)
{
    if (op->done)
        return true;
    for (int i = 0; i < op->nreq; i++) {
        if (op->reqs[i] == NULL)
            continue;
        tern_status_t st;
        if (wait) {
            st = mpi_wait_tern(op->w, op->reqs[i], NULL);
        } else {
            mpi_lock(op->w);
            st = tern_test(op->w, op->reqs[i], NULL);
            mpi_unlock(op->w);
            if (st == TERN_INPROGRESS)
                return false;
        }
        op->reqs[i] = NULL;
        if (st != TERN_OK && op->st == TERN_OK)
            op->st = st;
    }
    if (op->udt != MPI_DATATYPE_NULL) { /* a get's data, a result: into the caller's type */
        if (op->st == TERN_OK)
            (void)mpi_dt_unpack(op->stage, op->ulen, op->ubuf, op->ucount, op->udt);
        mpi_dt_drop(op->udt);
        op->udt = MPI_DATATYPE_NULL;
    }
    free(op->stage);
    free(op->stage_in);
    op->stage = op->stage_in = NULL;
    op->done = true;
    return true;
}

void mpi_win_op_release(win_op_t *op)
{
    /* the list's reference and the request's may go in two threads */
    if (__atomic_sub_fetch(&op->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    free(op->reqs);
    free(op);
}

int mpi_win_complete_ops(mpi_win_t *win, int target, bool remote, const char *call)
{
    tern_status_t first = TERN_OK;
    int first_target = -1, k = 0;
    mpi_mt_lock(&win->mu);
    for (int i = 0; i < win->nops; i++) {
        win_op_t *op = win->ops[i];
        if (target >= 0 && op->target != target) {
            win->ops[k++] = op;
            continue;
        }
        (void)mpi_win_op_poll(op, true);
        if (op->st != TERN_OK && first == TERN_OK) {
            first = op->st;
            first_target = op->target;
        }
        mpi_win_op_release(op);
    }
    win->nops = k;
    mpi_mt_unlock(&win->mu);
    if (remote && first == TERN_OK) {
        tern_request_t *r = NULL;
        int peer = target >= 0 ? win->t[target].peer : TERN_ANY_SOURCE;
        mpi_lock(win->w);
        tern_status_t st = tern_flush(win->w, peer, NULL, &r);
        mpi_unlock(win->w);
        if (st == TERN_INPROGRESS)
            st = mpi_wait_tern(win->w, r, NULL);
        if (st != TERN_OK) {
            first = st;
            first_target = target;
        }
    }
    if (first == TERN_OK)
        return MPI_SUCCESS;
    if (first_target >= 0)
        return mpi_raise_win(win->handle, mpi_class_of(first), "%s: an operation on rank %d of "
                             "the window failed: %s (%s)", call, first_target,
                             tern_strerror(first), tern_last_error());
    return mpi_raise_win(win->handle, mpi_class_of(first), "%s: an operation failed: %s (%s)",
                         call, tern_strerror(first), tern_last_error());
}

bool mpi_win_may_access(const mpi_win_t *win, int target)
{
    const win_target_t *t = &win->t[target];
    return win->fence || win->lock_all || t->lock != 0 || t->in_start;
}

static int check_assert(mpi_win_t *win, int assert, int allowed, const char *call)
{
    if ((assert & ~allowed) != 0)
        return mpi_raise_win(win->handle, MPI_ERR_ASSERT, "%s: assert %#x has bits %#x this "
                             "call does not take", call, (unsigned)assert,
                             (unsigned)(assert & ~allowed));
    return MPI_SUCCESS;
}

/* ---- fence ------------------------------------------------------------------ */

int MPI_Win_fence(int assert, MPI_Win win)
{
    static const char call[] = "MPI_Win_fence";
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, call);
    if (e == MPI_SUCCESS)
        e = check_assert(w, assert, MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE |
                         MPI_MODE_NOSUCCEED, call);
    if (e == MPI_SUCCESS && (w->lock_all || w->nlocked > 0 || w->nstart != 0 || w->posted))
        e = mpi_raise_win(win, MPI_ERR_RMA_SYNC, "%s: a lock or post / start epoch is open",
                          call);
    if (e != MPI_SUCCESS)
        return e;
    /* this rank's operations in their targets' memory, then everyone's */
    e = mpi_win_complete_ops(w, -1, true, call);
    int be = MPI_Barrier(w->comm);
    w->fence = (assert & MPI_MODE_NOSUCCEED) == 0;
    mpi_win_dyn_forget(w, -1);
    return e != MPI_SUCCESS ? e : be;
}

/* ---- post / start / complete / wait ------------------------------------------ */

/* group's members as window ranks (malloc'ed), *n of them; NULL with the
 * error raised */
static int *group_ranks(mpi_win_t *w, MPI_Group group, int *n, const char *call)
{
    int size;
    const int *procs = mpi_group_procs(group, &size);
    if (procs == NULL) {
        mpi_raise_win(w->handle, MPI_ERR_GROUP, "%s: %#x is not a group", call,
                      (unsigned)group);
        return NULL;
    }
    int *out = malloc(sizeof(int) * (size_t)(size > 0 ? size : 1));
    if (out == NULL) {
        mpi_raise_win(w->handle, MPI_ERR_NO_MEM, "%s: no memory", call);
        return NULL;
    }
    for (int i = 0; i < size; i++) {
        int r = 0;
        while (r < w->size && w->t[r].proc != procs[i])
            r++;
        if (r == w->size) {
            free(out);
            mpi_raise_win(w->handle, MPI_ERR_GROUP, "%s: member %d of the group is not in the "
                          "window", call, i);
            return NULL;
        }
        out[i] = r;
    }
    *n = size;
    return out;
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    static const char call[] = "MPI_Win_post";
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, call);
    if (e == MPI_SUCCESS)
        e = check_assert(w, assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, call);
    if (e == MPI_SUCCESS && w->posted)
        e = mpi_raise_win(win, MPI_ERR_RMA_SYNC, "%s: an exposure epoch is open already "
                          "(MPI_Win_wait ends it)", call);
    if (e != MPI_SUCCESS)
        return e;
    int n = 0, *g = group_ranks(w, group, &n, call);
    if (g == NULL)
        return MPI_ERR_GROUP;
    for (int i = 0; i < n && e == MPI_SUCCESS && (assert & MPI_MODE_NOCHECK) == 0; i++) {
        tern_status_t st = mpi_send_tern(w->w, NULL, 0, w->t[g[i]].proc, TAG_POST, win_space(w));
        if (st != TERN_OK)
            e = mpi_raise_win(win, mpi_class_of(st), "%s: telling rank %d: %s", call, g[i],
                              tern_strerror(st));
    }
    if (e != MPI_SUCCESS) {
        free(g);
        return e;
    }
    free(w->post_grp);
    w->post_grp = g;
    w->npost = n;
    w->post_done = 0;
    w->posted = true;
    return MPI_SUCCESS;
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    static const char call[] = "MPI_Win_start";
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, call);
    if (e == MPI_SUCCESS)
        e = check_assert(w, assert, MPI_MODE_NOCHECK, call);
    if (e == MPI_SUCCESS && w->nstart != 0)
        e = mpi_raise_win(win, MPI_ERR_RMA_SYNC, "%s: an access epoch is open already "
                          "(MPI_Win_complete ends it)", call);
    if (e != MPI_SUCCESS)
        return e;
    int n = 0, *g = group_ranks(w, group, &n, call);
    if (g == NULL)
        return MPI_ERR_GROUP;
    /* each target's post first (its memory is ready for us) */
    for (int i = 0; i < n && e == MPI_SUCCESS && (assert & MPI_MODE_NOCHECK) == 0; i++) {
        tern_recv_info_t info;
        tern_status_t st = mpi_recv_tern(w->w, NULL, 0, w->t[g[i]].proc, TAG_POST, win_space(w),
                                         &info);
        if (st != TERN_OK)
            e = mpi_raise_win(win, mpi_class_of(st), "%s: waiting for rank %d's post: %s", call,
                              g[i], tern_strerror(st));
    }
    for (int i = 0; i < n && e == MPI_SUCCESS; i++)
        w->t[g[i]].in_start = true;
    if (e == MPI_SUCCESS)
        w->nstart = n > 0 ? n : -1; /* an empty group opens an epoch too */
    for (int i = 0; i < n && e == MPI_SUCCESS; i++)
        mpi_win_dyn_forget(w, g[i]);
    free(g);
    return e;
}

int MPI_Win_complete(MPI_Win win)
{
    static const char call[] = "MPI_Win_complete";
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, call);
    if (e == MPI_SUCCESS && w->nstart == 0)
        e = mpi_raise_win(win, MPI_ERR_RMA_SYNC, "%s: no access epoch (MPI_Win_start) is open",
                          call);
    if (e != MPI_SUCCESS)
        return e;
    e = mpi_win_complete_ops(w, -1, true, call);
    for (int r = 0; r < w->size; r++) {
        if (!w->t[r].in_start)
            continue;
        w->t[r].in_start = false;
        tern_status_t st = mpi_send_tern(w->w, NULL, 0, w->t[r].proc, TAG_DONE, win_space(w));
        if (st != TERN_OK && e == MPI_SUCCESS)
            e = mpi_raise_win(win, mpi_class_of(st), "%s: telling rank %d: %s", call, r,
                              tern_strerror(st));
    }
    w->nstart = 0;
    return e;
}

/* Take the completion tokens of the exposure group (wait: all; else those
 * there); MPI_SUCCESS, or the error raised. */
static int take_done(mpi_win_t *w, bool wait, const char *call)
{
    for (int i = 0; i < w->npost; i++) {
        int r = w->post_grp[i];
        if (r < 0)
            continue;
        tern_recv_info_t info;
        if (!wait) {
            int flag = 0;
            mpi_lock(w->w);
            tern_status_t st = tern_iprobe(w->w, w->t[r].proc, TAG_DONE, win_space(w), &flag,
                                           &info);
            mpi_unlock(w->w);
            if (st != TERN_OK)
                return mpi_raise_win(w->handle, mpi_class_of(st), "%s: rank %d: %s", call, r,
                                     tern_strerror(st));
            if (!flag)
                continue;
        }
        tern_status_t st = mpi_recv_tern(w->w, NULL, 0, w->t[r].proc, TAG_DONE, win_space(w),
                                         &info);
        if (st != TERN_OK)
            return mpi_raise_win(w->handle, mpi_class_of(st), "%s: waiting for rank %d's "
                                 "completion: %s", call, r, tern_strerror(st));
        w->post_grp[i] = -1;
        w->post_done++;
    }
    if (w->post_done == w->npost)
        w->posted = false;
    return MPI_SUCCESS;
}

int MPI_Win_wait(MPI_Win win)
{
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, "MPI_Win_wait");
    if (e == MPI_SUCCESS && !w->posted)
        e = mpi_raise_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_wait: no exposure epoch "
                          "(MPI_Win_post) is open");
    return e != MPI_SUCCESS ? e : take_done(w, true, "MPI_Win_wait");
}

int MPI_Win_test(MPI_Win win, int *flag)
{
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, "MPI_Win_test");
    if (e == MPI_SUCCESS && flag == NULL)
        e = mpi_raise_win(win, MPI_ERR_ARG, "MPI_Win_test: NULL flag");
    if (e == MPI_SUCCESS && !w->posted)
        e = mpi_raise_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_test: no exposure epoch "
                          "(MPI_Win_post) is open");
    if (e != MPI_SUCCESS)
        return e;
    mpi_lock(w->w);
    (void)tern_progress(w->w);
    mpi_unlock(w->w);
    e = take_done(w, false, "MPI_Win_test");
    *flag = e == MPI_SUCCESS && !w->posted;
    return e;
}

/* ---- locks ---------------------------------------------------------------------- */

/* A tern atomic on target's lock word: *old its value before. */
static int ctl_amo(mpi_win_t *w, int target, int aop, uint64_t value, uint64_t compare,
                   uint64_t *old, const char *call)
{
    const win_target_t *t = &w->t[target];
    tern_request_t *r = NULL;
    mpi_lock(w->w);
    tern_status_t st = tern_atomic(w->w, aop, 8, value, compare, old, t->ctl,
                                   tern_key_base(t->ctl), NULL, &r);
    mpi_unlock(w->w);
    if (st == TERN_INPROGRESS)
        st = mpi_wait_tern(w->w, r, NULL);
    if (st != TERN_OK)
        return mpi_raise_win(w->handle, mpi_class_of(st), "%s: the lock of rank %d: %s (%s)",
                             call, target, tern_strerror(st), tern_last_error());
    return MPI_SUCCESS;
}

/* Between two tries at a held lock: what others wait for moves on here
 * (our own lock word's changes among it), and a loaded machine's other
 * processes get the core now and then. */
static void lock_backoff(mpi_win_t *w, int tries)
{
    mpi_lock(w->w);
    (void)tern_progress(w->w);
    mpi_unlock(w->w);
    (void)mpi_progress_pending();
    if (tries % 16 == 15)
        sched_yield();
}

static int lock_take(mpi_win_t *w, int target, int type, const char *call)
{
    uint64_t old = 0;
    for (int tries = 0;; tries++) {
        int e;
        if (type == MPI_LOCK_EXCLUSIVE) {
            e = ctl_amo(w, target, TERN_AMO_CSWAP, WIN_LOCK_EXCL, 0, &old, call);
            if (e != MPI_SUCCESS || old == 0)
                return e;
        } else {
            e = ctl_amo(w, target, TERN_AMO_ADD, 1, 0, &old, call);
            if (e != MPI_SUCCESS || (old & WIN_LOCK_EXCL) == 0)
                return e;
            /* an exclusive holder: give the share back, try again */
            if ((e = ctl_amo(w, target, TERN_AMO_ADD, UINT64_MAX, 0, &old, call)) != MPI_SUCCESS)
                return e;
        }
        lock_backoff(w, tries);
    }
}

static int lock_give(mpi_win_t *w, int target, int type, const char *call)
{
    uint64_t old = 0;
    /* exclusive: bit 63 cleared by adding it (shared tries that saw it
     * take their own increments back) */
    return ctl_amo(w, target, TERN_AMO_ADD, type == MPI_LOCK_EXCLUSIVE ? WIN_LOCK_EXCL : UINT64_MAX,
                   0, &old, call);
}

static int check_rank(mpi_win_t *w, int rank, const char *call)
{
    if (rank < 0 || rank >= w->size)
        return mpi_raise_win(w->handle, MPI_ERR_RANK, "%s: rank %d of a window of %d", call,
                             rank, w->size);
    return MPI_SUCCESS;
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    static const char call[] = "MPI_Win_lock";
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, call);
    if (e == MPI_SUCCESS)
        e = check_assert(w, assert, MPI_MODE_NOCHECK, call);
    if (e == MPI_SUCCESS && lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        e = mpi_raise_win(win, MPI_ERR_LOCKTYPE, "%s: lock type %d (MPI_LOCK_SHARED or "
                          "MPI_LOCK_EXCLUSIVE)", call, lock_type);
    if (e == MPI_SUCCESS && rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (e == MPI_SUCCESS)
        e = check_rank(w, rank, call);
    if (e == MPI_SUCCESS && (w->t[rank].lock != 0 || w->lock_all))
        e = mpi_raise_win(win, MPI_ERR_RMA_SYNC, "%s: rank %d is locked already%s", call, rank,
                          w->lock_all ? " (MPI_Win_lock_all)" : "");
    if (e == MPI_SUCCESS && (assert & MPI_MODE_NOCHECK) == 0)
        e = lock_take(w, rank, lock_type, call);
    if (e != MPI_SUCCESS)
        return e;
    w->t[rank].lock = lock_type;
    w->t[rank].nocheck = (assert & MPI_MODE_NOCHECK) != 0;
    w->nlocked++;
    mpi_win_dyn_forget(w, rank);
    return MPI_SUCCESS;
}

int MPI_Win_unlock(int rank, MPI_Win win)
{
    static const char call[] = "MPI_Win_unlock";
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, call);
    if (e == MPI_SUCCESS && rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (e == MPI_SUCCESS)
        e = check_rank(w, rank, call);
    if (e == MPI_SUCCESS && w->t[rank].lock == 0)
        e = mpi_raise_win(win, MPI_ERR_RMA_SYNC, "%s: rank %d is not locked (MPI_Win_lock)",
                          call, rank);
    if (e != MPI_SUCCESS)
        return e;
    /* the operations in the target's memory before the lock goes */
    e = mpi_win_complete_ops(w, rank, true, call);
    int type = w->t[rank].lock;
    w->t[rank].lock = 0;
    w->nlocked--;
    int le = w->t[rank].nocheck ? MPI_SUCCESS : lock_give(w, rank, type, call);
    return e != MPI_SUCCESS ? e : le;
}

int MPI_Win_lock_all(int assert, MPI_Win win)
{
    static const char call[] = "MPI_Win_lock_all";
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, call);
    if (e == MPI_SUCCESS)
        e = check_assert(w, assert, MPI_MODE_NOCHECK, call);
    if (e == MPI_SUCCESS && (w->lock_all || w->nlocked > 0))
        e = mpi_raise_win(win, MPI_ERR_RMA_SYNC, "%s: %s", call,
                          w->lock_all ? "the window is locked already (MPI_Win_lock_all)"
                                      : "ranks are locked one by one (MPI_Win_lock)");
    if (e != MPI_SUCCESS)
        return e;
    bool check = (assert & MPI_MODE_NOCHECK) == 0;
    for (int r = 0; r < w->size && check; r++)
        if ((e = lock_take(w, r, MPI_LOCK_SHARED, call)) != MPI_SUCCESS) {
            while (--r >= 0) /* the ones taken go back */
                (void)lock_give(w, r, MPI_LOCK_SHARED, call);
            return e;
        }
    for (int r = 0; r < w->size; r++)
        w->t[r].nocheck = !check;
    w->lock_all = true;
    mpi_win_dyn_forget(w, -1);
    return MPI_SUCCESS;
}

int MPI_Win_unlock_all(MPI_Win win)
{
    static const char call[] = "MPI_Win_unlock_all";
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, call);
    if (e == MPI_SUCCESS && !w->lock_all)
        e = mpi_raise_win(win, MPI_ERR_RMA_SYNC, "%s: the window is not locked "
                          "(MPI_Win_lock_all)", call);
    if (e != MPI_SUCCESS)
        return e;
    e = mpi_win_complete_ops(w, -1, true, call);
    w->lock_all = false;
    for (int r = 0; r < w->size; r++)
        if (!w->t[r].nocheck) {
            int le = lock_give(w, r, MPI_LOCK_SHARED, call);
            if (e == MPI_SUCCESS)
                e = le;
        }
    return e;
}

/* ---- flush ------------------------------------------------------------------------ */

/* the flush family's checks: a passive-target epoch to rank (-1: any) */
static int flush_check(MPI_Win win, int rank, mpi_win_t **w, const char *call)
{
    int e = mpi_win_check(win, w, call);
    if (e == MPI_SUCCESS && rank >= 0)
        e = check_rank(*w, rank, call);
    if (e != MPI_SUCCESS)
        return e;
    bool open = (*w)->lock_all || (rank >= 0 ? (*w)->t[rank].lock != 0 : (*w)->nlocked > 0);
    if (!open)
        return mpi_raise_win(win, MPI_ERR_RMA_SYNC, "%s: no passive-target epoch (MPI_Win_lock "
                             "or MPI_Win_lock_all) is open%s", call,
                             rank >= 0 ? " to that rank" : "");
    return MPI_SUCCESS;
}

int MPI_Win_flush(int rank, MPI_Win win)
{
    mpi_win_t *w;
    if (rank == MPI_PROC_NULL)
        return mpi_win_check(win, &w, "MPI_Win_flush");
    int e = flush_check(win, rank, &w, "MPI_Win_flush");
    return e != MPI_SUCCESS ? e : mpi_win_complete_ops(w, rank, true, "MPI_Win_flush");
}

int MPI_Win_flush_all(MPI_Win win)
{
    mpi_win_t *w;
    int e = flush_check(win, -1, &w, "MPI_Win_flush_all");
    return e != MPI_SUCCESS ? e : mpi_win_complete_ops(w, -1, true, "MPI_Win_flush_all");
}

int MPI_Win_flush_local(int rank, MPI_Win win)
{
    mpi_win_t *w;
    if (rank == MPI_PROC_NULL)
        return mpi_win_check(win, &w, "MPI_Win_flush_local");
    int e = flush_check(win, rank, &w, "MPI_Win_flush_local");
    return e != MPI_SUCCESS ? e : mpi_win_complete_ops(w, rank, false, "MPI_Win_flush_local");
}

int MPI_Win_flush_local_all(MPI_Win win)
{
    mpi_win_t *w;
    int e = flush_check(win, -1, &w, "MPI_Win_flush_local_all");
    return e != MPI_SUCCESS ? e
                            : mpi_win_complete_ops(w, -1, false, "MPI_Win_flush_local_all");
}

int MPI_Win_sync(MPI_Win win)
{
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, "MPI_Win_sync");
    if (e != MPI_SUCCESS)
        return e;
    /* the unified model: the public and private copies are one memory;
     * this orders this process's loads and stores against its peers' */
    atomic_thread_fence(memory_order_seq_cst);
    mpi_lock(w->w);
    (void)tern_progress(w->w);
    mpi_unlock(w->w);
    return MPI_SUCCESS;
}
