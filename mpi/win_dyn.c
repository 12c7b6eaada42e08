/*
 * Dynamic windows (MPI_Win_create_dynamic): MPI_Win_attach registers the
 * memory as a tern region of its own, MPI_Win_detach destroys it.  An
 * origin learns a target's segment the first time it touches it: a key
 * request on the window's communicator, answered by the target from any
 * blocking or polling MPI call (mpi_progress_pending: blocking waits poll
 * while a dynamic window exists).  What an origin learnt is forgotten
 * whenever it opens an epoch (fence, start, lock, lock_all), so that
 * memory detached and attached again between epochs is asked for again; a
 * key of memory detached since is refused by its target (TERN_ERR_REMOTE_
 * ACCESS: MPI_ERR_RMA_RANGE), never written through.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/win.h"

int mpi_win_dyn_active;

/* the dynamic windows that exist (serve walks them) */
static mpi_win_t *dyn_wins[MPI_MAX_WINS];
static int ndyn;
static pthread_mutex_t dyn_lock = PTHREAD_MUTEX_INITIALIZER;
static int serving; /* a thread is in mpi_win_dyn_serve */

typedef struct key_req {
    uint64_t addr, len;
} key_req_t;

typedef struct key_rep {
    int32_t found;
    uint32_t klen;
    uint64_t addr, len; /* the segment */
    uint8_t key[TERN_KEY_MAX];
} key_rep_t;

/* the segment of segs covering [addr, addr + len); NULL: none */
static win_seg_t *seg_find(win_seg_t *segs, int n, uint64_t addr, uint64_t len)
{
    for (int i = 0; i < n; i++)
        if (addr >= segs[i].addr && addr + len <= segs[i].addr + segs[i].len)
            return &segs[i];
    return NULL;
}

static bool seg_push(win_seg_t **segs, int *n, int *cap, const win_seg_t *s)
{
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 8;
        win_seg_t *more = realloc(*segs, sizeof(*more) * (size_t)c);
        if (more == NULL)
            return false;
        *segs = more;
        *cap = c;
    }
    (*segs)[(*n)++] = *s;
    return true;
}

void mpi_win_dyn_register(mpi_win_t *w)
{
    pthread_mutex_lock(&dyn_lock);
    for (int i = 0; i < MPI_MAX_WINS; i++)
        if (dyn_wins[i] == NULL) {
            dyn_wins[i] = w;
            if (i >= ndyn)
                ndyn = i + 1;
            break;
        }
    pthread_mutex_unlock(&dyn_lock);
}

int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    static const char call[] = "MPI_Win_attach";
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, call);
    if (e != MPI_SUCCESS)
        return e;
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return mpi_raise_win(win, MPI_ERR_RMA_FLAVOR, "%s: the window was not made by "
                             "MPI_Win_create_dynamic", call);
    if (size < 0)
        return mpi_raise_win(win, MPI_ERR_SIZE, "%s: size %ld is negative", call, (long)size);
    if (size > 0 && base == NULL)
        return mpi_raise_win(win, MPI_ERR_BASE, "%s: NULL base for %ld bytes", call, (long)size);
    if (size == 0)
        return MPI_SUCCESS; /* nothing anyone can reach */
    uint64_t a = (uint64_t)(uintptr_t)base, l = (uint64_t)size;
    for (int i = 0; i < w->nown; i++)
        if (a < w->own[i].addr + w->own[i].len && w->own[i].addr < a + l)
            return mpi_raise_win(win, MPI_ERR_RMA_ATTACH, "%s: [%p, +%ld) overlaps memory "
                                 "attached already", call, base, (long)size);
    win_seg_t s = {.addr = a, .len = l};
    tern_status_t st = tern_region_create(mpi.ctx, base, (size_t)size,
                                          TERN_REGION_READ | TERN_REGION_WRITE, &s.reg);
    if (st != TERN_OK)
        return mpi_raise_win(win, MPI_ERR_RMA_ATTACH, "%s: %s (%s)", call, tern_strerror(st),
                             tern_last_error());
    /* the segments under mu: another thread's serve reads them */
    mpi_mt_lock(&w->mu);
    bool pushed = seg_push(&w->own, &w->nown, &w->capown, &s);
    mpi_mt_unlock(&w->mu);
    if (!pushed) {
        (void)tern_region_destroy(s.reg);
        return mpi_raise_win(win, MPI_ERR_NO_MEM, "%s: no memory", call);
    }
    return MPI_SUCCESS;
}

int MPI_Win_detach(MPI_Win win, const void *base)
{
    static const char call[] = "MPI_Win_detach";
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, call);
    if (e != MPI_SUCCESS)
        return e;
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return mpi_raise_win(win, MPI_ERR_RMA_FLAVOR, "%s: the window was not made by "
                             "MPI_Win_create_dynamic", call);
    mpi_mt_lock(&w->mu);
    for (int i = 0; i < w->nown; i++)
        if (w->own[i].addr == (uint64_t)(uintptr_t)base) {
            /* destroyed: a key any origin holds is refused from now on */
            (void)tern_region_destroy(w->own[i].reg);
            w->own[i] = w->own[--w->nown];
            mpi_mt_unlock(&w->mu);
            return MPI_SUCCESS;
        }
    mpi_mt_unlock(&w->mu);
    return mpi_raise_win(win, MPI_ERR_RMA_RANGE, "%s: no memory is attached at %p", call, base);
}

/* The answer to a request for [addr, addr + len) of w's memory here. */
static void fill_rep(const mpi_win_t *w, const key_req_t *q, key_rep_t *rep)
{
    memset(rep, 0, offsetof(key_rep_t, key));
    const win_seg_t *s = seg_find(w->own, w->nown, q->addr, q->len);
    size_t klen = sizeof(rep->key);
    if (s != NULL && tern_region_pack(s->reg, rep->key, &klen) == TERN_OK) {
        rep->found = 1;
        rep->klen = (uint32_t)klen;
        rep->addr = s->addr;
        rep->len = s->len;
    }
}

/* Answer one request from origin proc. */
static void answer(mpi_win_t *w, int proc, const key_req_t *q)
{
    key_rep_t rep;
    mpi_mt_lock(&w->mu);
    fill_rep(w, q, &rep);
    mpi_mt_unlock(&w->mu);
    size_t len = offsetof(key_rep_t, key) + rep.klen;
    /* eager and small: it leaves at once (a failure means the origin is
     * gone, and nobody waits for the answer) */
    (void)mpi_send_tern(w->w, &rep, len, proc, TAG_KEYREP, win_space(w));
}

bool mpi_win_dyn_serve(void)
{
    if (__atomic_exchange_n(&serving, 1, __ATOMIC_ACQUIRE))
        return false; /* the sends below may wait, and waits come back here */
    bool any = false;
    pthread_mutex_lock(&dyn_lock);
    for (int i = 0; i < ndyn; i++) {
        mpi_win_t *w = dyn_wins[i];
        for (int k = 0; w != NULL && k < 64; k++) { /* bounded: others' turn too */
            int flag = 0;
            tern_recv_info_t info;
            mpi_lock(w->w);
            tern_status_t st = tern_iprobe(w->w, TERN_ANY_SOURCE, TAG_KEYREQ, win_space(w), &flag,
                                           &info);
            mpi_unlock(w->w);
            if (st != TERN_OK || !flag)
                break;
            key_req_t q = {0};
            st = mpi_recv_tern(w->w, &q, sizeof(q), info.source, TAG_KEYREQ, win_space(w), &info);
            if (st == TERN_OK)
                answer(w, info.source, &q);
            any = true;
        }
    }
    pthread_mutex_unlock(&dyn_lock);
    __atomic_store_n(&serving, 0, __ATOMIC_RELEASE);
    return any;
}

static int dyn_key_locked(mpi_win_t *w, int target, uint64_t addr, uint64_t len,
                          const tern_key_t **key, const char *call);

int mpi_win_dyn_key(mpi_win_t *w, int target, uint64_t addr, uint64_t len,
                    const tern_key_t **key, const char *call)
{
    mpi_mt_lock(&w->mu);
    int e = dyn_key_locked(w, target, addr, len, key, call);
    mpi_mt_unlock(&w->mu);
    return e;
}

static int dyn_key_locked(mpi_win_t *w, int target, uint64_t addr, uint64_t len,
                          const tern_key_t **key, const char *call)
{
    win_target_t *t = &w->t[target];
    *key = NULL;
    const win_seg_t *s = seg_find(t->segs, t->nsegs, addr, len);
    if (s != NULL) {
        *key = s->key;
        return MPI_SUCCESS;
    }
    key_req_t q = {.addr = addr, .len = len};
    key_rep_t rep;
    tern_recv_info_t info;
    tern_status_t st = TERN_OK;
    if (target == w->rank) { /* our own memory: no question to ask */
        fill_rep(w, &q, &rep);
    } else {
        st = mpi_send_tern(w->w, &q, sizeof(q), t->proc, TAG_KEYREQ, win_space(w));
        if (st == TERN_OK)
            st = mpi_recv_tern(w->w, &rep, sizeof(rep), t->proc, TAG_KEYREP, win_space(w),
                               &info);
    }
    if (st != TERN_OK)
        return mpi_raise_win(w->handle, mpi_class_of(st), "%s: asking rank %d for its memory: "
                             "%s", call, target, tern_strerror(st));
    if (!rep.found)
        return mpi_raise_win(w->handle, MPI_ERR_RMA_RANGE, "%s: rank %d has no memory attached "
                             "at [%#lx, +%lu)", call, target, (unsigned long)addr,
                             (unsigned long)len);
    win_seg_t seg = {.addr = rep.addr, .len = rep.len};
    st = tern_key_unpack(mpi.ctx, t->peer, rep.key, rep.klen, &seg.key);
    if (st != TERN_OK)
        return mpi_raise_win(w->handle, mpi_class_of(st), "%s: rank %d's key: %s", call, target,
                             tern_strerror(st));
    if (!seg_push(&t->segs, &t->nsegs, &t->capsegs, &seg)) {
        tern_key_destroy(seg.key);
        return mpi_raise_win(w->handle, MPI_ERR_NO_MEM, "%s: no memory", call);
    }
    *key = t->segs[t->nsegs - 1].key;
    return MPI_SUCCESS;
}

void mpi_win_dyn_forget(mpi_win_t *w, int target)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return;
    /* no operation may still use a key destroyed here (a failure is
     * raised now, and reported again by the epoch's end) */
    (void)mpi_win_complete_ops(w, target, false, "MPI_Win (opening an epoch)");
    mpi_mt_lock(&w->mu);
    for (int r = target < 0 ? 0 : target; r < (target < 0 ? w->size : target + 1); r++) {
        win_target_t *t = &w->t[r];
        for (int i = 0; i < t->nsegs; i++)
            tern_key_destroy(t->segs[i].key);
        t->nsegs = 0;
    }
    mpi_mt_unlock(&w->mu);
}

void mpi_win_dyn_free(mpi_win_t *w)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return;
    mpi_win_dyn_forget(w, -1);
    for (int r = 0; r < w->size; r++)
        free(w->t[r].segs);
    pthread_mutex_lock(&dyn_lock);
    for (int i = 0; i < ndyn; i++)
        if (dyn_wins[i] == w)
            dyn_wins[i] = NULL;
    pthread_mutex_unlock(&dyn_lock);
    for (int i = 0; i < w->nown; i++)
        (void)tern_region_destroy(w->own[i].reg);
    free(w->own);
}
