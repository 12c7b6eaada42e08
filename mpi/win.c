/*
 * MPI windows: creation (MPI_Win_create, _allocate, _allocate_shared,
 * _create_dynamic), MPI_Win_free and MPI_Win_shared_query; the window
 * table.  mpi/win.h has the design; synchronisation is win_sync.c's, the
 * operations win_ops.c's, dynamic windows' keys win_dyn.c's, the queries
 * (attributes, info, name, group, error handlers) win_query.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/win.h"

static mpi_win_t *wins[MPI_MAX_WINS];

mpi_win_t *mpi_win_get(MPI_Win win)
{
    unsigned i = mpi_h_index(win);
    if (!mpi_h_is(win, MPI_HK_MADE, MPI_HT_WIN) || i >= MPI_MAX_WINS)
        return NULL;
    /* A: the entry was complete before win_publish's release store */
    return __atomic_load_n(&wins[i], __ATOMIC_ACQUIRE);
}

int mpi_win_check(MPI_Win win, mpi_win_t **out, const char *call)
{
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    *out = mpi_win_get(win);
    if (*out == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_WIN, "%s: %#x is not a window%s", call,
                         (unsigned)win, win == MPI_WIN_NULL ? " (MPI_WIN_NULL)" : "");
    return MPI_SUCCESS;
}

/* A free slot for w (its handle set); false when the table is full. */
static bool win_publish(mpi_win_t *w)
{
    bool ok = false;
    mpi_table_lock();
    for (unsigned i = 0; i < MPI_MAX_WINS && !ok; i++)
        if (wins[i] == NULL) {
            w->handle = mpi_h_make(MPI_HK_MADE, MPI_HT_WIN, i);
            /* R: the entry is complete before a lookup can see it */
            __atomic_store_n(&wins[i], w, __ATOMIC_RELEASE);
            ok = true;
        }
    mpi_table_unlock();
    return ok;
}

static void win_unpublish(mpi_win_t *w)
{
    mpi_table_lock();
    __atomic_store_n(&wins[mpi_h_index(w->handle)], NULL, __ATOMIC_RELEASE);
    mpi_table_unlock();
}

/* What each rank tells the others at creation. */
typedef struct win_rec {
    int err;        /* this rank's error class (all fail if any does) */
    int disp_unit;
    int64_t size;
    uint64_t base;  /* the remote address of displacement 0 */
    uint32_t klen;  /* its region's key (0: none) */
    uint32_t clen;  /* its control region's key */
    uint8_t key[TERN_KEY_MAX];
    uint8_t ckey[TERN_KEY_MAX];
} win_rec_t;

/* Everything of w released (its handle too, when published). */
static void win_destroy(mpi_win_t *w)
{
    if (w->t != NULL) {
        for (int r = 0; r < w->size; r++) {
            /* a shared window's targets share rank 0's key */
            if (w->t[r].key != NULL && (w->flavor != MPI_WIN_FLAVOR_SHARED || r == 0))
                tern_key_destroy(w->t[r].key);
            if (w->t[r].ctl != NULL)
                tern_key_destroy(w->t[r].ctl);
        }
        mpi_win_dyn_free(w);
        free(w->t);
    }
    if (w->region != NULL)
        (void)tern_region_destroy(w->region);
    if (w->ctl_region != NULL)
        (void)tern_region_destroy(w->ctl_region);
    if (w->comm != MPI_COMM_NULL)
        (void)MPI_Comm_free(&w->comm);
    if (w->info != MPI_INFO_NULL)
        (void)MPI_Info_free(&w->info);
    free(w->post_grp);
    free(w->ops);
    if (w->handle != 0)
        win_unpublish(w);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

/* Make the window's communicator and control region; local_err: this
 * rank's arguments were refused (raised already): it still takes part in
 * the collective calls, and every rank then fails. */
static int win_begin(MPI_Comm comm, int flavor, MPI_Info info, int local_err, mpi_win_t **out,
                     const char *call)
{
    *out = NULL;
    int e = mpi_check_comm(comm, call);
    if (e == MPI_SUCCESS)
        e = mpi_check_intra(comm, call);
    if (e != MPI_SUCCESS)
        return e;
    if (local_err == MPI_SUCCESS && !mpi_info_ok(info))
        local_err = mpi_raise(comm, MPI_ERR_INFO, "%s: %#x is not an info object", call,
                              (unsigned)info);
    mpi_comm_t *c = mpi_comm_get(comm);
    /* everything this rank needs first: a rank out of memory still joins
     * the communicator's making, which then fails everywhere */
    int *ranks = malloc(sizeof(int) * (size_t)c->size);
    mpi_win_t *w = calloc(1, sizeof(*w));
    if (w != NULL)
        w->t = calloc((size_t)c->size, sizeof(*w->t));
    if ((ranks == NULL || w == NULL || w->t == NULL) && local_err == MPI_SUCCESS)
        local_err = mpi_raise(comm, MPI_ERR_NO_MEM, "%s: no memory", call);
    MPI_Comm wc = MPI_COMM_NULL;
    if (ranks != NULL) {
        memcpy(ranks, c->ranks, sizeof(int) * (size_t)c->size);
        e = mpi_comm_make(comm, ranks, c->size, c->rank, local_err, &wc, call);
    } else { /* a list of nobody's, only so that this rank takes part */
        int *none = calloc((size_t)c->size, sizeof(int));
        e = none == NULL ? MPI_ERR_NO_MEM
                         : mpi_comm_make(comm, none, c->size, c->rank, local_err, &wc, call);
    }
    if (e != MPI_SUCCESS || local_err != MPI_SUCCESS) {
        if (w != NULL)
            free(w->t);
        free(w);
        if (wc != MPI_COMM_NULL)
            (void)MPI_Comm_free(&wc);
        return e != MPI_SUCCESS ? e : local_err;
    }
    mpi_comm_t *k = mpi_comm_get(wc);
    pthread_mutex_init(&w->mu, NULL);
    w->comm = wc;
    w->w = k->w;
    w->size = k->size;
    w->rank = k->rank;
    w->flavor = flavor;
    w->model = MPI_WIN_UNIFIED;
    w->errh = MPI_ERRORS_ARE_FATAL;
    w->info = MPI_INFO_NULL;
    for (int r = 0; r < w->size; r++)
        w->t[r].proc = w->t[r].peer = k->ranks[r];
    *out = w;
    return MPI_SUCCESS;
}

/* The exchange: rec (this rank's, err included) to every rank; the keys
 * unpacked into w's targets.  Every rank returns the same: MPI_SUCCESS,
 * or the first error class any rank had (raised here on comm when this
 * rank's own was not). */
static int win_exchange(mpi_win_t *w, win_rec_t *rec, MPI_Comm comm, const char *call)
{
    win_rec_t *all = malloc(sizeof(*all) * (size_t)w->size);
    /* every rank has room for the records, or none exchanges them */
    int pre = all == NULL ? MPI_ERR_NO_MEM : MPI_SUCCESS, agreed = MPI_SUCCESS;
    int e = MPI_Allreduce(&pre, &agreed, 1, MPI_INT, MPI_MAX, w->comm);
    if (e != MPI_SUCCESS || agreed != MPI_SUCCESS) {
        free(all);
        if (pre != MPI_SUCCESS)
            return mpi_raise(comm, pre, "%s: no memory for the ranks' records", call);
        return e != MPI_SUCCESS ? e
                                : mpi_raise(comm, agreed, "%s: another rank ran out of memory",
                                            call);
    }
    int bad = rec->err;
    e = MPI_Allgather(rec, (int)sizeof(*rec), MPI_BYTE, all, (int)sizeof(*rec), MPI_BYTE,
                      w->comm);
    if (e != MPI_SUCCESS && bad == MPI_SUCCESS)
        bad = e;
    for (int r = 0; bad == MPI_SUCCESS && r < w->size; r++) {
        win_target_t *t = &w->t[r];
        t->size = all[r].size;
        t->disp_unit = all[r].disp_unit;
        t->base = all[r].base;
        if (all[r].err != MPI_SUCCESS) {
            bad = all[r].err;
            break;
        }
        tern_status_t st = TERN_OK;
        if (all[r].klen > 0 && (w->flavor != MPI_WIN_FLAVOR_SHARED || r == 0))
            st = tern_key_unpack(mpi.ctx, t->peer, all[r].key, all[r].klen,
                                 &t->key);
        if (st == TERN_OK)
            st = tern_key_unpack(mpi.ctx, t->peer, all[r].ckey, all[r].clen,
                                 &t->ctl);
        if (st != TERN_OK)
            bad = mpi_raise_tern(comm, st, call);
    }
    if (w->flavor == MPI_WIN_FLAVOR_SHARED && bad == MPI_SUCCESS) {
        /* every part is in rank 0's region, mapped here */
        char *at = w->t[0].key != NULL ? tern_key_local(w->t[0].key) : NULL;
        if (w->t[0].key != NULL && at == NULL)
            bad = mpi_raise(comm, MPI_ERR_RMA_SHARED, "%s: rank 0's memory cannot be mapped "
                            "here: the communicator's processes are not all on one host (or "
                            "TERN_RMA_MAP=0)", call);
        for (int r = 0; r < w->size && bad == MPI_SUCCESS; r++) {
            w->t[r].key = w->t[0].key;
            w->t[r].peer = w->t[0].peer;
            w->t[r].local = at != NULL ? at + (w->t[r].base - w->t[0].base) : NULL;
        }
    }
    free(all);
    e = MPI_Allreduce(&bad, &agreed, 1, MPI_INT, MPI_MAX, w->comm);
    if (e != MPI_SUCCESS)
        agreed = e;
    if (agreed != MPI_SUCCESS && bad == MPI_SUCCESS)
        return mpi_raise(comm, agreed, "%s: another rank failed to make its part of the window",
                         call);
    return agreed;
}

/* Pack region's key (and the control region's) into rec. */
static void rec_keys(win_rec_t *rec, const mpi_win_t *w, const tern_region_t *region,
                     MPI_Comm comm, const char *call)
{
    size_t len = sizeof(rec->key);
    tern_status_t st = TERN_OK;
    if (region != NULL && (st = tern_region_pack(region, rec->key, &len)) == TERN_OK)
        rec->klen = (uint32_t)len;
    len = sizeof(rec->ckey);
    if (st == TERN_OK && (st = tern_region_pack(w->ctl_region, rec->ckey, &len)) == TERN_OK)
        rec->clen = (uint32_t)len;
    if (st != TERN_OK && rec->err == MPI_SUCCESS)
        rec->err = mpi_raise_tern(comm, st, call);
}

/* The control region (the lock word) of w. */
static int win_ctl(mpi_win_t *w, MPI_Comm comm, const char *call)
{
    void *p = NULL;
    tern_status_t st = tern_region_alloc(mpi.ctx, WIN_CTL_LEN,
                                         TERN_REGION_READ | TERN_REGION_WRITE, &p,
                                         &w->ctl_region);
    if (st != TERN_OK)
        return mpi_raise_tern(comm, st, call);
    w->ctl = p;
    return MPI_SUCCESS;
}

/* The common end of every creation: exchange, publish, hand out. */
static int win_finish(mpi_win_t *w, win_rec_t *rec, MPI_Comm comm, MPI_Win *win, const char *call)
{
    rec->disp_unit = w->disp_unit;
    rec->size = w->wsize;
    int e = win_exchange(w, rec, comm, call);
    if (e == MPI_SUCCESS) { /* published on every rank, or on none */
        int mine = win_publish(w) ? MPI_SUCCESS : MPI_ERR_NO_MEM, all = MPI_SUCCESS;
        e = MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, w->comm);
        if (e == MPI_SUCCESS && all != MPI_SUCCESS)
            e = mpi_raise(comm, MPI_ERR_NO_MEM, "%s: %d windows exist on a rank (the most this "
                          "library keeps)", call, MPI_MAX_WINS);
        if (e != MPI_SUCCESS && mine == MPI_SUCCESS)
            win_unpublish(w);
    }
    if (e != MPI_SUCCESS) {
        w->handle = 0;
        win_destroy(w);
        *win = MPI_WIN_NULL;
        return e;
    }
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        mpi_win_dyn_register(w);
        __atomic_fetch_add(&mpi_win_dyn_active, 1, __ATOMIC_RELAXED);
    }
    *win = w->handle;
    return MPI_SUCCESS;
}

/* Arguments every creation checks: size (unless dynamic), disp_unit, the
 * output pointers; this rank's error class (raised), or MPI_SUCCESS. */
static int win_args(MPI_Comm comm, MPI_Aint size, int disp_unit, const void *out,
                    const MPI_Win *win, const char *call)
{
    if (win == NULL || out == NULL)
        return mpi_raise(comm, MPI_ERR_ARG, "%s: NULL %s pointer", call,
                         win == NULL ? "window" : "base");
    if (size < 0)
        return mpi_raise(comm, MPI_ERR_SIZE, "%s: size %ld is negative", call, (long)size);
    if (disp_unit <= 0)
        return mpi_raise(comm, MPI_ERR_DISP, "%s: displacement unit %d (must be positive)",
                         call, disp_unit);
    return MPI_SUCCESS;
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win)
{
    static const char call[] = "MPI_Win_create";
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    int le = win_args(comm, size, disp_unit, win, win, call);
    if (le == MPI_SUCCESS && size > 0 && base == NULL)
        le = mpi_raise(comm, MPI_ERR_BASE, "%s: NULL base for %ld bytes", call, (long)size);
    mpi_win_t *w;
    if ((e = win_begin(comm, MPI_WIN_FLAVOR_CREATE, info, le, &w, call)) != MPI_SUCCESS)
        return e;
    win_rec_t rec = {0};
    w->base = base;
    w->wsize = size;
    w->disp_unit = disp_unit;
    rec.err = win_ctl(w, comm, call);
    if (rec.err == MPI_SUCCESS && size > 0) {
        tern_status_t st = tern_region_create(mpi.ctx, base, (size_t)size,
                                              TERN_REGION_READ | TERN_REGION_WRITE, &w->region);
        if (st != TERN_OK)
            rec.err = mpi_raise_tern(comm, st, call);
    }
    rec.base = (uint64_t)(uintptr_t)base;
    if (rec.err == MPI_SUCCESS)
        rec_keys(&rec, w, w->region, comm, call);
    return win_finish(w, &rec, comm, win, call);
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win)
{
    static const char call[] = "MPI_Win_allocate";
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    int le = win_args(comm, size, disp_unit, baseptr, win, call);
    mpi_win_t *w;
    if ((e = win_begin(comm, MPI_WIN_FLAVOR_ALLOCATE, info, le, &w, call)) != MPI_SUCCESS)
        return e;
    win_rec_t rec = {0};
    w->wsize = size;
    w->disp_unit = disp_unit;
    rec.err = win_ctl(w, comm, call);
    if (rec.err == MPI_SUCCESS && size > 0) {
        tern_status_t st = tern_region_alloc(mpi.ctx, (size_t)size,
                                             TERN_REGION_READ | TERN_REGION_WRITE, &w->base,
                                             &w->region);
        if (st != TERN_OK)
            rec.err = mpi_raise_tern(comm, st, call);
    }
    rec.base = (uint64_t)(uintptr_t)w->base;
    if (rec.err == MPI_SUCCESS)
        rec_keys(&rec, w, w->region, comm, call);
    e = win_finish(w, &rec, comm, win, call);
    if (e == MPI_SUCCESS)
        *(void **)baseptr = w->base;
    return e;
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win)
{
    static const char call[] = "MPI_Win_allocate_shared";
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    int le = win_args(comm, size, disp_unit, baseptr, win, call);
    mpi_win_t *w;
    if ((e = win_begin(comm, MPI_WIN_FLAVOR_SHARED, info, le, &w, call)) != MPI_SUCCESS)
        return e;
    w->wsize = size;
    w->disp_unit = disp_unit;
    /* every rank's size, so that rank 0 allocates the sum and each knows
     * where its part begins */
    int64_t mine = le == MPI_SUCCESS ? size : 0, *sizes = calloc((size_t)w->size, sizeof(*sizes));
    win_rec_t rec = {0};
    rec.err = sizes == NULL ? mpi_raise(comm, MPI_ERR_NO_MEM, "%s: no memory", call) : le;
    /* every rank has room for the sizes, or none gathers them */
    int pre = sizes == NULL ? MPI_ERR_NO_MEM : MPI_SUCCESS, agreed = MPI_SUCCESS;
    e = MPI_Allreduce(&pre, &agreed, 1, MPI_INT, MPI_MAX, w->comm);
    if (e == MPI_SUCCESS && agreed == MPI_SUCCESS)
        e = MPI_Allgather(&mine, 1, MPI_INT64_T, sizes, 1, MPI_INT64_T, w->comm);
    else if (e == MPI_SUCCESS)
        e = agreed;
    if (e != MPI_SUCCESS && rec.err == MPI_SUCCESS)
        rec.err = e;
    if (e != MPI_SUCCESS) { /* no sizes: nothing allocated below */
        free(sizes);
        sizes = NULL;
    }
    uint64_t off = 0, total = 0;
    for (int r = 0; sizes != NULL && r < w->size; r++) {
        if (r == w->rank)
            off = total;
        total += (uint64_t)sizes[r];
    }
    free(sizes);
    if (rec.err == MPI_SUCCESS)
        rec.err = win_ctl(w, comm, call);
    void *at = NULL;
    if (rec.err == MPI_SUCCESS && w->rank == 0) {
        tern_status_t st = tern_region_alloc(mpi.ctx,
                                             total > 0 ? (size_t)total : 1,
                                             TERN_REGION_READ | TERN_REGION_WRITE, &at,
                                             &w->region);
        if (st != TERN_OK)
            rec.err = mpi_raise_tern(comm, st, call);
    }
    /* rank 0's address of each part (the others learn rank 0's region's
     * address from its record and add the offset) */
    if (rec.err == MPI_SUCCESS)
        rec_keys(&rec, w, w->region, comm, call);
    rec.base = off; /* made absolute below, once rank 0's base is known */
    uint64_t base0 = (uint64_t)(uintptr_t)at;
    e = MPI_Bcast(&base0, 1, MPI_UINT64_T, 0, w->comm);
    if (e != MPI_SUCCESS && rec.err == MPI_SUCCESS)
        rec.err = e;
    rec.base = base0 + off;
    e = win_finish(w, &rec, comm, win, call);
    if (e != MPI_SUCCESS)
        return e;
    w = mpi_win_get(*win);
    w->base = size > 0 || w->t[w->rank].local != NULL ? w->t[w->rank].local : NULL;
    *(void **)baseptr = w->base;
    return MPI_SUCCESS;
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    static const char call[] = "MPI_Win_create_dynamic";
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    int le = win == NULL ? mpi_raise(comm, MPI_ERR_ARG, "%s: NULL window pointer", call)
                         : MPI_SUCCESS;
    mpi_win_t *w;
    if ((e = win_begin(comm, MPI_WIN_FLAVOR_DYNAMIC, info, le, &w, call)) != MPI_SUCCESS)
        return e;
    win_rec_t rec = {.err = win_ctl(w, comm, call)};
    w->disp_unit = 1;
    if (rec.err == MPI_SUCCESS)
        rec_keys(&rec, w, NULL, comm, call);
    return win_finish(w, &rec, comm, win, call);
}

int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    static const char call[] = "MPI_Win_shared_query";
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, call);
    if (e != MPI_SUCCESS)
        return e;
    if (size == NULL || disp_unit == NULL || baseptr == NULL)
        return mpi_raise_win(win, MPI_ERR_ARG, "%s: NULL output pointer", call);
    if (w->flavor != MPI_WIN_FLAVOR_SHARED)
        return mpi_raise_win(win, MPI_ERR_RMA_FLAVOR, "%s: the window was not made by "
                             "MPI_Win_allocate_shared", call);
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
        return mpi_raise_win(win, MPI_ERR_RANK, "%s: rank %d of a window of %d", call, rank,
                             w->size);
    int r = rank;
    if (rank == MPI_PROC_NULL) /* the first rank with memory */
        for (r = 0; r < w->size - 1 && w->t[r].size == 0; r++)
            ;
    *size = w->t[r].size;
    *disp_unit = w->t[r].disp_unit;
    *(void **)baseptr = w->t[r].size > 0 || rank == MPI_PROC_NULL ? w->t[r].local : NULL;
    return MPI_SUCCESS;
}

int MPI_Win_free(MPI_Win *win)
{
    static const char call[] = "MPI_Win_free";
    mpi_win_t *w;
    int e = mpi_check_init(call);
    if (e == MPI_SUCCESS && win == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL window pointer", call);
    if (e == MPI_SUCCESS)
        e = mpi_win_check(*win, &w, call);
    if (e != MPI_SUCCESS)
        return e;
    if (w->lock_all || w->nlocked > 0 || w->nstart != 0 || w->posted)
        return mpi_raise_win(*win, MPI_ERR_RMA_SYNC, "%s: an epoch is still open (%s)", call,
                             w->lock_all ? "MPI_Win_lock_all" : w->nlocked > 0 ? "MPI_Win_lock"
                             : w->nstart != 0 ? "MPI_Win_start" : "MPI_Win_post");
    /* this rank's operations done at their targets, then nobody's left */
    e = mpi_win_complete_ops(w, -1, true, call);
    int be = MPI_Barrier(w->comm);
    if (e == MPI_SUCCESS)
        e = be;
    int ae = mpi_attr_win_delete_all(*win);
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        __atomic_fetch_sub(&mpi_win_dyn_active, 1, __ATOMIC_RELAXED);
    win_destroy(w);
    *win = MPI_WIN_NULL;
    if (e == MPI_SUCCESS && ae != MPI_SUCCESS)
        e = mpi_raise_code(MPI_COMM_WORLD, ae, "%s: a delete callback of an attribute failed "
                           "(%d)", call, ae);
    return e;
}
