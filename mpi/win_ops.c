/*
 * One-sided operations: MPI_Put, MPI_Get, MPI_Accumulate,
 * MPI_Get_accumulate, MPI_Fetch_and_op, MPI_Compare_and_swap and the
 * request forms (MPI_Rput, _Rget, _Raccumulate, _Rget_accumulate).
 *
 * Each checks its arguments (the datatypes, the epoch, that the target
 * memory lies in the target's part of the window) before anything moves,
 * then issues tern calls: one when both sides are contiguous; else the
 * origin's data packed into a staging buffer and the target's datatype cut
 * into its contiguous pieces (adjacent ones merged), one call each, a get's
 * or result's data unpacked into the origin's datatype at the end.  Calls
 * that did not complete at once are kept (win.h's pending operations).
 *
 * Accumulate is tern_accumulate on the predefined type both sides are made
 * of: each element is updated atomically at the target, as MPI asks
 * (same operation or MPI_NO_OP on a location: never a torn element), and
 * the operations of one origin to one target are applied in their order
 * (tern's stream order, or the origin's own order on the direct path).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/win.h"

/* One side of an operation: count elements of dt. */
typedef struct side {
    MPI_Datatype dt;
    int count;
    const mpi_dtype_t *t;
    mpi_dt_view_t v;
    size_t bytes;
} side_t;

/* An operation being issued. */
typedef struct xfer {
    mpi_win_t *w;
    int target;
    const char *call;
    win_op_t *op;     /* made at the first call that does not complete at once */
    tern_status_t st; /* the first call refused */
} xfer_t;

static int side_of(MPI_Win win, side_t *s, MPI_Datatype dt, int count, const char *what,
                   const char *call)
{
    s->dt = dt;
    s->count = count;
    s->bytes = 0;
    if (count < 0)
        return mpi_raise_win(win, MPI_ERR_COUNT, "%s: %s count %d is negative", call, what,
                             count);
    s->t = mpi_dt_lookup(dt, &s->v);
    if (s->t == NULL)
        return mpi_raise_win(win, MPI_ERR_TYPE, "%s: the %s datatype %#x is not valid", call,
                             what, (unsigned)dt);
    if (!s->t->committed)
        return mpi_raise_win(win, MPI_ERR_TYPE, "%s: the %s datatype %#x is not committed",
                             call, what, (unsigned)dt);
    s->bytes = (size_t)s->t->size * (size_t)count;
    return MPI_SUCCESS;
}

/* the common checks: the window, the target rank (*skip for
 * MPI_PROC_NULL), the epoch */
static int op_begin(MPI_Win win, int target, mpi_win_t **w, bool *skip, bool request,
                    const char *call)
{
    *skip = false;
    int e = mpi_win_check(win, w, call);
    if (e != MPI_SUCCESS)
        return e;
    if (target == MPI_PROC_NULL) {
        *skip = true;
        return MPI_SUCCESS;
    }
    if (target < 0 || target >= (*w)->size)
        return mpi_raise_win(win, MPI_ERR_RANK, "%s: rank %d of a window of %d", call, target,
                             (*w)->size);
    if (!mpi_win_may_access(*w, target))
        return mpi_raise_win(win, MPI_ERR_RMA_SYNC, "%s: no access epoch to rank %d is open "
                             "(MPI_Win_fence, _start, _lock or _lock_all first)", call, target);
    if (request && !(*w)->lock_all && (*w)->t[target].lock == 0)
        return mpi_raise_win(win, MPI_ERR_RMA_SYNC, "%s: the request forms need a "
                             "passive-target epoch (MPI_Win_lock or _lock_all)", call);
    return MPI_SUCCESS;
}

/* The target memory of ts at displacement disp: its key and the remote
 * address displacement disp stands for, checked to lie in the target's
 * part of the window (a dynamic window's: in memory attached there). */
static int target_of(xfer_t *x, MPI_Aint disp, const side_t *ts, const tern_key_t **key,
                     uint64_t *raddr)
{
    mpi_win_t *w = x->w;
    const win_target_t *t = &w->t[x->target];
    *key = NULL;
    if (ts->bytes == 0)
        return MPI_SUCCESS;
    /* the span the elements touch, from displacement disp */
    MPI_Aint last = (MPI_Aint)(ts->count - 1) * ts->t->extent;
    MPI_Aint lo = ts->t->true_lb + (last < 0 ? last : 0);
    /* a pair type is written whole, its padding too (accumulate applies
     * tern's C struct of it) */
    MPI_Aint span = ts->t->pair ? ts->t->extent : ts->t->true_extent;
    MPI_Aint hi = ts->t->true_lb + span + (last > 0 ? last : 0);
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        *raddr = (uint64_t)disp;
        return mpi_win_dyn_key(w, x->target, (uint64_t)disp + (uint64_t)lo, (uint64_t)(hi - lo),
                               key, x->call);
    }
    MPI_Aint off;
    if (disp < 0 || __builtin_mul_overflow(disp, (MPI_Aint)t->disp_unit, &off))
        return mpi_raise_win(w->handle, MPI_ERR_DISP, "%s: displacement %ld on rank %d", x->call,
                             (long)disp, x->target);
    if (t->key == NULL || off + lo < 0 || off + hi > t->size)
        return mpi_raise_win(w->handle, MPI_ERR_RMA_RANGE, "%s: bytes [%ld, %ld) of rank %d's "
                             "part of the window, which has %ld", x->call, (long)(off + lo),
                             (long)(off + hi), x->target, (long)t->size);
    *key = t->key;
    *raddr = t->base + (uint64_t)off;
    return MPI_SUCCESS;
}

/* A tern call returned st (r: its request when under way). */
static void xfer_note(xfer_t *x, tern_status_t st, tern_request_t *r)
{
    if (st != TERN_INPROGRESS) {
        if (st != TERN_OK && x->st == TERN_OK)
            x->st = st;
        return;
    }
    win_op_t *op = x->op;
    if (op == NULL && (op = calloc(1, sizeof(*op))) != NULL) {
        op->target = x->target;
        op->w = x->w->w;
        op->refs = 1;
        op->udt = MPI_DATATYPE_NULL;
        x->op = op;
    }
    tern_request_t **more = op != NULL && (op->nreq & (op->nreq - 1)) == 0
                                ? realloc(op->reqs, sizeof(*more) * (size_t)(op->nreq ? 2 * op->nreq : 1))
                                : op != NULL ? op->reqs : NULL;
    if (more == NULL) { /* no memory to keep it: finish it now */
        tern_status_t fs = mpi_wait_tern(x->w->w, r, NULL);
        if (fs != TERN_OK && x->st == TERN_OK)
            x->st = fs;
        return;
    }
    op->reqs = more;
    op->reqs[op->nreq++] = r;
}

/* What a contiguous piece of the target memory does. */
enum piece_kind { PIECE_PUT, PIECE_GET, PIECE_ACC };
typedef struct piece_args {
    enum piece_kind kind;
    const tern_key_t *key;
    char *src;    /* put / accumulate: the packed origin data (NULL: MPI_NO_OP) */
    char *dst;    /* get: where the data goes; accumulate: the result (NULL: none) */
    int acc, tdt; /* accumulate: tern's operation and type */
    size_t esize; /* accumulate: bytes of an element */
} piece_args_t;

static void piece(xfer_t *x, const piece_args_t *a, size_t pos, uint64_t addr, size_t len)
{
    if (x->st != TERN_OK)
        return; /* nothing more once a call was refused */
    tern_worker_t *w = x->w->w;
    tern_request_t *r = NULL;
    tern_status_t st;
    mpi_lock(w);
    if (a->kind == PIECE_PUT)
        st = tern_put(w, a->src + pos, len, a->key, addr, NULL, &r);
    else if (a->kind == PIECE_GET)
        st = tern_get(w, a->dst + pos, len, a->key, addr, NULL, &r);
    else
        st = tern_accumulate(w, a->acc, a->tdt, a->src != NULL ? a->src + pos : NULL,
                             len / a->esize, a->dst != NULL ? a->dst + pos : NULL, a->key, addr,
                             NULL, &r);
    mpi_unlock(w);
    xfer_note(x, st, r);
}

/* Every contiguous piece of ts's memory at raddr, in typemap order, with
 * its position in the packed data (adjacent pieces merged). */
static void walk_target(xfer_t *x, const side_t *ts, uint64_t raddr, const piece_args_t *a)
{
    const mpi_dtype_t *t = ts->t;
    if (ts->bytes == 0)
        return;
    if (t->nblocks == 1 && t->extent == t->blocks[0].len) { /* contiguous: one piece */
        piece(x, a, 0, raddr + (uint64_t)t->blocks[0].off, ts->bytes);
        return;
    }
    uint64_t at = 0;
    size_t len = 0, from = 0, pos = 0;
    for (int i = 0; i < ts->count; i++)
        for (int j = 0; j < t->nblocks; j++) {
            uint64_t p = raddr + (uint64_t)((MPI_Aint)i * t->extent + t->blocks[j].off);
            size_t l = (size_t)t->blocks[j].len;
            if (len > 0 && at + len == p) {
                len += l;
            } else {
                if (len > 0)
                    piece(x, a, from, at, len);
                at = p;
                len = l;
                from = pos;
            }
            pos += l;
        }
    if (len > 0)
        piece(x, a, from, at, len);
}

/* s's data as one contiguous buffer: the caller's when contiguous (NULL
 * *stage), else packed into *stage; NULL (raised) when out of memory */
static char *packed(MPI_Win win, const void *buf, const side_t *s, void **stage, const char *call)
{
    *stage = NULL;
    if (s->bytes == 0)
        return (char *)buf;
    if (mpi_dt_is_contig(s->dt))
        return mpi_addr(buf, s->t->true_lb);
    if ((*stage = malloc(s->bytes)) == NULL) {
        mpi_raise_win(win, MPI_ERR_NO_MEM, "%s: no memory to stage %zu bytes", call, s->bytes);
        return NULL;
    }
    (void)mpi_dt_pack(buf, s->count, s->dt, *stage);
    return *stage;
}

/* A request's progress (MPI_Rput ...): its operation polled. */
static bool rreq_progress(mpi_req_t *q)
{
    win_op_t *op = q->aux;
    if (!mpi_win_op_poll(op, false))
        return false;
    q->err = op->st == TERN_OK ? MPI_SUCCESS : mpi_class_of(op->st);
    mpi_status_empty(&q->status, MPI_ANY_SOURCE);
    mpi_win_op_release(op);
    q->aux = NULL;
    return true;
}

static int rreq_make(mpi_win_t *w, win_op_t *op, MPI_Request *request, const char *call)
{
    MPI_Request h;
    if (mpi_req_new(&h) != MPI_SUCCESS) {
        if (op != NULL)
            mpi_win_op_release(op);
        return mpi_raise_win(w->handle, MPI_ERR_NO_MEM, "%s: no request entry free", call);
    }
    mpi_req_t *q = mpi_req_at(h);
    q->comm = w->comm;
    /* op: the request's reference to it is taken (xfer_end) */
    if (op == NULL) {
        q->kind = REQ_DONE;
        q->err = MPI_SUCCESS;
        mpi_status_empty(&q->status, MPI_ANY_SOURCE);
    } else {
        q->kind = REQ_SCHED;
        q->progress = rreq_progress;
        q->aux = op;
    }
    *request = h;
    return MPI_SUCCESS;
}

/* The end of an issue: the pending calls kept with the staging buffers
 * (and what to unpack), or, all done, the unpacking now; the request of
 * an R* call; the error of a refused call raised. */
static int xfer_end(xfer_t *x, void *stage_in, void *stage_out, void *ubuf, int ucount,
                    MPI_Datatype udt, size_t ulen, MPI_Request *request)
{
    mpi_win_t *w = x->w;
    win_op_t *op = x->op;
    bool kept = false;
    if (op != NULL) {
        if (op->st == TERN_OK)
            op->st = x->st;
        if (request != NULL)
            op->refs++; /* the request's, before another thread's flush can see it */
        op->stage_in = stage_in;
        /* what comes back is unpacked at the end, through a hold of the
         * type (MPI_Type_free of the caller's handle may come first) */
        MPI_Datatype held = stage_out != NULL ? mpi_dt_hold(udt) : MPI_DATATYPE_NULL;
        mpi_mt_lock(&w->mu);
        if (w->nops == w->capops) {
            int cap = w->capops ? 2 * w->capops : 16;
            win_op_t **more = realloc(w->ops, sizeof(*more) * (size_t)cap);
            if (more != NULL) {
                w->ops = more;
                w->capops = cap;
            }
        }
        if (w->nops < w->capops && (stage_out == NULL || held != MPI_DATATYPE_NULL)) {
            op->stage = stage_out;
            op->udt = held;
            op->ubuf = ubuf;
            op->ucount = ucount;
            op->ulen = ulen;
            w->ops[w->nops++] = op;
            kept = true;
        }
        mpi_mt_unlock(&w->mu);
        if (!kept) { /* no memory to keep it: finish it now, unpacking here */
            if (held != MPI_DATATYPE_NULL)
                mpi_dt_drop(held);
            (void)mpi_win_op_poll(op, true);
            if (op->st == TERN_OK && stage_out != NULL)
                (void)mpi_dt_unpack(stage_out, ulen, ubuf, ucount, udt);
            free(stage_out);
        }
    } else {
        if (x->st == TERN_OK && stage_out != NULL)
            (void)mpi_dt_unpack(stage_out, ulen, ubuf, ucount, udt);
        free(stage_in);
        free(stage_out);
    }
    int e = MPI_SUCCESS;
    if (x->st != TERN_OK)
        e = mpi_raise_win(w->handle, mpi_class_of(x->st), "%s: rank %d: %s (%s)", x->call,
                          x->target, tern_strerror(x->st), tern_last_error());
    if (request != NULL) {
        *request = MPI_REQUEST_NULL;
        if (e == MPI_SUCCESS)
            e = rreq_make(w, op, request, x->call);
        else if (op != NULL)
            mpi_win_op_release(op); /* no request holds it */
    }
    if (op != NULL && !kept)
        mpi_win_op_release(op); /* finished here: nobody else holds it */
    return e;
}

/* ---- put and get ------------------------------------------------------------------- */

static int put_get(bool put, void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request,
                   const char *call)
{
    mpi_win_t *w;
    bool skip;
    int e = op_begin(win, target_rank, &w, &skip, request != NULL, call);
    if (e != MPI_SUCCESS)
        return e;
    side_t os, ts;
    if ((e = side_of(win, &os, origin_datatype, origin_count, "origin", call)) != MPI_SUCCESS ||
        (e = side_of(win, &ts, target_datatype, target_count, "target", call)) != MPI_SUCCESS)
        return e;
    if (os.bytes != ts.bytes)
        return mpi_raise_win(win, MPI_ERR_TYPE, "%s: the origin has %zu bytes, the target %zu",
                             call, os.bytes, ts.bytes);
    if (os.bytes > 0 && origin_addr == NULL && mpi_dt_is_contig(origin_datatype))
        return mpi_raise_win(win, MPI_ERR_BUFFER, "%s: NULL origin buffer", call);
    xfer_t x = {.w = w, .target = target_rank, .call = call};
    if (skip) {
        if (request != NULL)
            return rreq_make(w, NULL, request, call);
        return MPI_SUCCESS;
    }
    piece_args_t a = {.kind = put ? PIECE_PUT : PIECE_GET};
    uint64_t raddr = 0;
    if ((e = target_of(&x, target_disp, &ts, &a.key, &raddr)) != MPI_SUCCESS)
        return e;
    void *stage = NULL;
    if (put) {
        if ((a.src = packed(win, origin_addr, &os, &stage, call)) == NULL && os.bytes > 0)
            return MPI_ERR_NO_MEM;
        walk_target(&x, &ts, raddr, &a);
        return xfer_end(&x, stage, NULL, NULL, 0, MPI_DATATYPE_NULL, 0, request);
    }
    if (os.bytes == 0 || mpi_dt_is_contig(origin_datatype)) {
        a.dst = mpi_addr(origin_addr, os.t->true_lb);
    } else if ((a.dst = stage = malloc(os.bytes)) == NULL) {
        return mpi_raise_win(win, MPI_ERR_NO_MEM, "%s: no memory to stage %zu bytes", call,
                             os.bytes);
    }
    walk_target(&x, &ts, raddr, &a);
    return xfer_end(&x, NULL, stage, origin_addr, origin_count, origin_datatype, os.bytes,
                    request);
}

/* The usual case without the general path's lookups: one predefined type
 * on both sides, a window with its parts (not dynamic), the target in an
 * epoch and in range.  Returns -1 when the general path must decide. */
static int put_get_fast(bool put, void *buf, int count, MPI_Datatype dt, int target,
                        MPI_Aint disp, int tcount, MPI_Datatype tdt, MPI_Win win)
{
    mpi_win_t *w = mpi_win_get(win);
    int size = mpi_predef_size(dt);
    if (w == NULL || dt != tdt || count != tcount || size == 0 || count < 0 || target < 0 ||
        target >= w->size || disp < 0 || w->flavor == MPI_WIN_FLAVOR_DYNAMIC ||
        !mpi_win_may_access(w, target))
        return -1;
    if (count == 0)
        return MPI_SUCCESS; /* nothing moves (the checks a general path makes passed) */
    if (buf == NULL)
        return -1;
    const win_target_t *t = &w->t[target];
    size_t len = (size_t)size * (size_t)count;
    MPI_Aint off;
    if (t->key == NULL || __builtin_mul_overflow(disp, (MPI_Aint)t->disp_unit, &off) ||
        off > t->size || (MPI_Aint)len > t->size - off)
        return -1;
    tern_request_t *r = NULL;
    mpi_lock(w->w);
    tern_status_t st = put ? tern_put(w->w, buf, len, t->key, t->base + (uint64_t)off, NULL, &r)
                           : tern_get(w->w, buf, len, t->key, t->base + (uint64_t)off, NULL, &r);
    mpi_unlock(w->w);
    if (st == TERN_OK)
        return MPI_SUCCESS;
    xfer_t x = {.w = w, .target = target, .call = put ? "MPI_Put" : "MPI_Get"};
    xfer_note(&x, st, r);
    return xfer_end(&x, NULL, NULL, NULL, 0, MPI_DATATYPE_NULL, 0, NULL);
}

int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Win win)
{
    int e = put_get_fast(true, (void *)origin_addr, origin_count, origin_datatype, target_rank,
                         target_disp, target_count, target_datatype, win);
    if (e >= 0)
        return e;
    return put_get(true, (void *)origin_addr, origin_count, origin_datatype, target_rank,
                   target_disp, target_count, target_datatype, win, NULL, "MPI_Put");
}

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    int e = put_get_fast(false, origin_addr, origin_count, origin_datatype, target_rank,
                         target_disp, target_count, target_datatype, win);
    if (e >= 0)
        return e;
    return put_get(false, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, NULL, "MPI_Get");
}

int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    if (request == NULL)
        return mpi_raise_win(win, MPI_ERR_ARG, "MPI_Rput: NULL request pointer");
    return put_get(true, (void *)origin_addr, origin_count, origin_datatype, target_rank,
                   target_disp, target_count, target_datatype, win, request, "MPI_Rput");
}

int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
             MPI_Request *request)
{
    if (request == NULL)
        return mpi_raise_win(win, MPI_ERR_ARG, "MPI_Rget: NULL request pointer");
    return put_get(false, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, request, "MPI_Rget");
}

/* ---- accumulate -------------------------------------------------------------------- */

/* tern's type for a predefined MPI type (0: none) */
static int tern_dt_of(MPI_Datatype dt)
{
    switch (mpi_dt_named(dt)) {
    case MPI_CHAR: case MPI_SIGNED_CHAR: case MPI_INT8_T: case MPI_INTEGER1:
        return TERN_DT_INT8;
    case MPI_UNSIGNED_CHAR: case MPI_BYTE: case MPI_UINT8_T: case MPI_C_BOOL: case MPI_CXX_BOOL:
        return TERN_DT_UINT8;
    case MPI_SHORT: case MPI_INT16_T: case MPI_INTEGER2:
        return TERN_DT_INT16;
    case MPI_UNSIGNED_SHORT: case MPI_UINT16_T:
        return TERN_DT_UINT16;
    case MPI_INT: case MPI_INT32_T: case MPI_INTEGER: case MPI_INTEGER4: case MPI_LOGICAL:
        return TERN_DT_INT32;
    case MPI_UNSIGNED: case MPI_UINT32_T: case MPI_WCHAR:
        return TERN_DT_UINT32;
    case MPI_LONG: case MPI_LONG_LONG_INT: case MPI_INT64_T: case MPI_INTEGER8: case MPI_AINT:
    case MPI_OFFSET: case MPI_COUNT:
        return TERN_DT_INT64;
    case MPI_UNSIGNED_LONG: case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T:
        return TERN_DT_UINT64;
    case MPI_FLOAT: case MPI_REAL: case MPI_REAL4:
        return TERN_DT_FLOAT;
    case MPI_DOUBLE: case MPI_DOUBLE_PRECISION: case MPI_REAL8:
        return TERN_DT_DOUBLE;
    case MPI_LONG_DOUBLE:
        return TERN_DT_LONG_DOUBLE;
    case MPI_C_FLOAT_COMPLEX: case MPI_CXX_FLOAT_COMPLEX: case MPI_COMPLEX: case MPI_COMPLEX8:
        return TERN_DT_FLOAT_COMPLEX;
    case MPI_C_DOUBLE_COMPLEX: case MPI_CXX_DOUBLE_COMPLEX: case MPI_DOUBLE_COMPLEX:
    case MPI_COMPLEX16:
        return TERN_DT_DOUBLE_COMPLEX;
    case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_CXX_LONG_DOUBLE_COMPLEX:
        return TERN_DT_LONG_DOUBLE_COMPLEX;
    case MPI_FLOAT_INT:
        return TERN_DT_FLOAT_INT;
    case MPI_DOUBLE_INT:
        return TERN_DT_DOUBLE_INT;
    case MPI_LONG_INT:
        return TERN_DT_LONG_INT;
    case MPI_2INT:
        return TERN_DT_2INT;
    case MPI_SHORT_INT:
        return TERN_DT_SHORT_INT;
    case MPI_LONG_DOUBLE_INT:
        return TERN_DT_LONG_DOUBLE_INT;
    default:
        return 0;
    }
}

static int tern_acc_of(MPI_Op op)
{
    switch (op) {
    case MPI_SUM: return TERN_ACC_SUM;
    case MPI_PROD: return TERN_ACC_PROD;
    case MPI_MIN: return TERN_ACC_MIN;
    case MPI_MAX: return TERN_ACC_MAX;
    case MPI_LAND: return TERN_ACC_LAND;
    case MPI_LOR: return TERN_ACC_LOR;
    case MPI_LXOR: return TERN_ACC_LXOR;
    case MPI_BAND: return TERN_ACC_BAND;
    case MPI_BOR: return TERN_ACC_BOR;
    case MPI_BXOR: return TERN_ACC_BXOR;
    case MPI_REPLACE: return TERN_ACC_REPLACE;
    case MPI_NO_OP: return TERN_ACC_NO_OP;
    case MPI_MAXLOC: return TERN_ACC_MAXLOC;
    case MPI_MINLOC: return TERN_ACC_MINLOC;
    default: return -1;
    }
}

/* does MPI define acc on tern type tdt (as for the reductions, plus
 * MPI_REPLACE and MPI_NO_OP on every type) */
static bool acc_applies(int acc, int tdt)
{
    if (acc == TERN_ACC_REPLACE || acc == TERN_ACC_NO_OP)
        return true;
    if (tdt >= TERN_DT_FLOAT_INT)
        return acc == TERN_ACC_MAXLOC || acc == TERN_ACC_MINLOC;
    if (acc == TERN_ACC_MAXLOC || acc == TERN_ACC_MINLOC)
        return false;
    if (tdt >= TERN_DT_FLOAT_COMPLEX)
        return acc == TERN_ACC_SUM || acc == TERN_ACC_PROD;
    if (tdt >= TERN_DT_FLOAT)
        return acc <= TERN_ACC_MAX;
    return true;
}

/* the predefined type s is made of (a predefined or pair type itself);
 * MPI_DATATYPE_NULL when it mixes types or holds pair types */
static MPI_Datatype basic_of(const side_t *s)
{
    if (mpi_predef_size(s->dt) > 0 || s->t->pair)
        return mpi_dt_named(s->dt);
    if (s->t->has_pair || s->t->nruns == 0)
        return MPI_DATATYPE_NULL;
    MPI_Datatype b = s->t->runs[0].type;
    for (int k = 1; k < s->t->nruns; k++)
        if (s->t->runs[k].type != b)
            return MPI_DATATYPE_NULL;
    return mpi_dt_named(b);
}

/* Accumulate and its fetching forms (result_addr NULL: none). */
static int acc_common(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                      void *result_addr, int result_count, MPI_Datatype result_datatype,
                      int target_rank, MPI_Aint target_disp, int target_count,
                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, bool fetch,
                      MPI_Request *request, const char *call)
{
    mpi_win_t *w;
    bool skip;
    int e = op_begin(win, target_rank, &w, &skip, request != NULL, call);
    if (e != MPI_SUCCESS)
        return e;
    int acc = tern_acc_of(op);
    if (acc < 0 || (acc == TERN_ACC_NO_OP && !fetch))
        return mpi_raise_win(win, MPI_ERR_OP, "%s: operation %#x: one-sided accumulate takes "
                             "the predefined operations, MPI_REPLACE%s", call, (unsigned)op,
                             fetch ? " and MPI_NO_OP" : " (MPI_NO_OP: with a result only)");
    side_t ts, os, rs;
    if ((e = side_of(win, &ts, target_datatype, target_count, "target", call)) != MPI_SUCCESS)
        return e;
    MPI_Datatype tb = ts.bytes > 0 ? basic_of(&ts) : MPI_DATATYPE_NULL;
    int tdt = tb != MPI_DATATYPE_NULL ? tern_dt_of(tb) : 0;
    if (ts.bytes > 0 && tdt == 0)
        return mpi_raise_win(win, MPI_ERR_TYPE, "%s: the target datatype %#x is not made of one "
                             "predefined type accumulate takes here (C and Fortran integers, "
                             "reals, complex numbers and the C pair types)", call,
                             (unsigned)target_datatype);
    if (ts.bytes > 0 && !acc_applies(acc, tdt))
        return mpi_raise_win(win, MPI_ERR_OP, "%s: operation %#x does not apply to datatype %#x",
                             call, (unsigned)op, (unsigned)tb);
    bool with_origin = acc != TERN_ACC_NO_OP;
    if (with_origin) {
        if ((e = side_of(win, &os, origin_datatype, origin_count, "origin", call)) != MPI_SUCCESS)
            return e;
        if (os.bytes != ts.bytes || (os.bytes > 0 && basic_of(&os) != tb))
            return mpi_raise_win(win, MPI_ERR_TYPE, "%s: the origin (%zu bytes) and the target "
                                 "(%zu bytes) must hold as many elements of one type", call,
                                 os.bytes, ts.bytes);
        if (os.bytes > 0 && origin_addr == NULL &&
            (mpi_dt_is_contig(origin_datatype) || os.t->pair))
            return mpi_raise_win(win, MPI_ERR_BUFFER, "%s: NULL origin buffer", call);
    }
    if (fetch) {
        if ((e = side_of(win, &rs, result_datatype, result_count, "result", call)) != MPI_SUCCESS)
            return e;
        if (rs.bytes != ts.bytes || (rs.bytes > 0 && basic_of(&rs) != tb))
            return mpi_raise_win(win, MPI_ERR_TYPE, "%s: the result (%zu bytes) and the target "
                                 "(%zu bytes) must hold as many elements of one type", call,
                                 rs.bytes, ts.bytes);
        if (rs.bytes > 0 && result_addr == NULL &&
            (mpi_dt_is_contig(result_datatype) || rs.t->pair))
            return mpi_raise_win(win, MPI_ERR_BUFFER, "%s: NULL result buffer", call);
    }
    if (skip || ts.bytes == 0)
        return request != NULL ? rreq_make(w, NULL, request, call) : MPI_SUCCESS;
    size_t esize = tern_dtype_size(tdt);
    xfer_t x = {.w = w, .target = target_rank, .call = call};
    piece_args_t a = {.kind = PIECE_ACC, .acc = acc, .tdt = tdt, .esize = esize};
    uint64_t raddr = 0;
    if ((e = target_of(&x, target_disp, &ts, &a.key, &raddr)) != MPI_SUCCESS)
        return e;
    if (tdt >= TERN_DT_FLOAT_INT) {
        /* a pair type on every side (derived ones holding pairs are
         * refused above): arrays of its C struct, padding included */
        if ((MPI_Aint)esize != ts.t->extent)
            return mpi_raise_win(win, MPI_ERR_TYPE, "%s: pair type %#x's extent %ld is not its "
                                 "C struct's %zu", call, (unsigned)tb, (long)ts.t->extent,
                                 esize);
        a.src = with_origin ? (char *)origin_addr : NULL;
        a.dst = fetch ? result_addr : NULL;
        piece(&x, &a, 0, raddr, (size_t)target_count * esize);
        return xfer_end(&x, NULL, NULL, NULL, 0, MPI_DATATYPE_NULL, 0, request);
    }
    for (int j = 0; j < ts.t->nblocks; j++)
        if (ts.t->blocks[j].len % (MPI_Aint)esize != 0)
            return mpi_raise_win(win, MPI_ERR_TYPE, "%s: the target datatype cuts an element",
                                 call);
    void *stage_in = NULL, *stage_out = NULL;
    if (with_origin && (a.src = packed(win, origin_addr, &os, &stage_in, call)) == NULL)
        return MPI_ERR_NO_MEM;
    if (fetch) {
        if (mpi_dt_is_contig(result_datatype)) {
            a.dst = mpi_addr(result_addr, rs.t->true_lb);
        } else if ((a.dst = stage_out = malloc(rs.bytes)) == NULL) {
            free(stage_in);
            return mpi_raise_win(win, MPI_ERR_NO_MEM, "%s: no memory to stage %zu bytes", call,
                                 rs.bytes);
        }
    }
    walk_target(&x, &ts, raddr, &a);
    return xfer_end(&x, stage_in, stage_out, result_addr, result_count, result_datatype,
                    fetch ? rs.bytes : 0, request);
}

int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return acc_common(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                      target_rank, target_disp, target_count, target_datatype, op, win, false,
                      NULL, "MPI_Accumulate");
}

int MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    if (request == NULL)
        return mpi_raise_win(win, MPI_ERR_ARG, "MPI_Raccumulate: NULL request pointer");
    return acc_common(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                      target_rank, target_disp, target_count, target_datatype, op, win, false,
                      request, "MPI_Raccumulate");
}

int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void *result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return acc_common(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                      result_datatype, target_rank, target_disp, target_count, target_datatype,
                      op, win, true, NULL, "MPI_Get_accumulate");
}

int MPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                        MPI_Request *request)
{
    if (request == NULL)
        return mpi_raise_win(win, MPI_ERR_ARG, "MPI_Rget_accumulate: NULL request pointer");
    return acc_common(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                      result_datatype, target_rank, target_disp, target_count, target_datatype,
                      op, win, true, request, "MPI_Rget_accumulate");
}

int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    if (mpi_predef_size(datatype) == 0 && !mpi_dt_predefined(mpi_dt_named(datatype)) &&
        datatype != MPI_2INT) {
        mpi_dt_view_t v;
        const mpi_dtype_t *t = mpi_dt_lookup(datatype, &v);
        if (t == NULL || !t->pair)
            return mpi_raise_win(win, MPI_ERR_TYPE, "MPI_Fetch_and_op: datatype %#x is not "
                                 "predefined", (unsigned)datatype);
    }
    return acc_common(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
                      target_disp, 1, datatype, op, win, true, NULL, "MPI_Fetch_and_op");
}

int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Win win)
{
    static const char call[] = "MPI_Compare_and_swap";
    mpi_win_t *w;
    bool skip;
    int e = op_begin(win, target_rank, &w, &skip, false, call);
    if (e != MPI_SUCCESS)
        return e;
    int tdt = mpi_dt_predefined(datatype) ? tern_dt_of(datatype) : 0;
    if (tdt < TERN_DT_INT8 || tdt > TERN_DT_UINT64)
        return mpi_raise_win(win, MPI_ERR_TYPE, "%s: datatype %#x: compare-and-swap takes C and "
                             "Fortran integers, logicals and MPI_BYTE", call, (unsigned)datatype);
    if (origin_addr == NULL || compare_addr == NULL || result_addr == NULL)
        return mpi_raise_win(win, MPI_ERR_BUFFER, "%s: NULL %s buffer", call,
                             origin_addr == NULL ? "origin" : compare_addr == NULL ? "compare"
                                                                                 : "result");
    if (skip)
        return MPI_SUCCESS;
    side_t ts;
    if ((e = side_of(win, &ts, datatype, 1, "target", call)) != MPI_SUCCESS)
        return e;
    xfer_t x = {.w = w, .target = target_rank, .call = call};
    const tern_key_t *key;
    uint64_t raddr = 0, value = 0, compare = 0;
    if ((e = target_of(&x, target_disp, &ts, &key, &raddr)) != MPI_SUCCESS)
        return e;
    memcpy(&value, origin_addr, ts.bytes); /* the low bytes (x86-64: little-endian) */
    memcpy(&compare, compare_addr, ts.bytes);
    tern_request_t *r = NULL;
    mpi_lock(w->w);
    tern_status_t st = tern_atomic(w->w, TERN_AMO_CSWAP, ts.bytes, value, compare, result_addr,
                                   key, raddr, NULL, &r);
    mpi_unlock(w->w);
    xfer_note(&x, st, r);
    return xfer_end(&x, NULL, NULL, NULL, 0, MPI_DATATYPE_NULL, 0, NULL);
}
