/*
 * What the collectives need around their algorithms: the size thresholds,
 * the staging of non-contiguous buffers (packed with mpi_dt_pack), and the
 * working buffers of reductions (coll_red_t, coll.h).
 */
#include <string.h>

#include "mpi/coll.h"

size_t coll_threshold(int which)
{
    switch (which) {
    case THR_BCAST_LONG:
        return (size_t)mpi.cfg.bcast_long;
    case THR_BCAST_MIN_PROCS:
        return (size_t)mpi.cfg.bcast_min_procs;
    default:
        return (size_t)mpi.cfg.allreduce_long;
    }
}

/* ---- staging of non-contiguous buffers ------------------------------------ */

int coll_stage_in(const coll_t *k, const void *buf, int count, MPI_Datatype dt, bool pack,
                  coll_stage_t *s)
{
    s->len = mpi_dt_pack_size(count, dt);
    s->staged = !mpi_dt_is_contig(dt) && s->len > 0;
    if (!s->staged) {
        s->bytes = (char *)buf;
        return MPI_SUCCESS;
    }
    if ((s->bytes = coll_tmp(s->len)) == NULL)
        return mpi_raise(k->comm, MPI_ERR_NO_MEM, "%s: %zu bytes of staging", k->call, s->len);
    if (pack)
        mpi_dt_pack(buf, count, dt, s->bytes);
    return MPI_SUCCESS;
}

void coll_stage_out(coll_stage_t *s, void *buf, int count, MPI_Datatype dt, bool unpack)
{
    if (!s->staged)
        return;
    if (unpack)
        mpi_dt_unpack(s->bytes, s->len, buf, count, dt);
    coll_tmp_free(s->bytes);
    s->staged = false;
}

void coll_span(int count, MPI_Datatype dt, MPI_Aint at, MPI_Aint *lo, MPI_Aint *hi)
{
    mpi_dt_view_t v;
    const mpi_dtype_t *t = mpi_dt_lookup(dt, &v);
    if (t == NULL || count <= 0 || t->size == 0)
        return;
    MPI_Aint last = (MPI_Aint)(count - 1) * t->extent; /* the last element's offset */
    MPI_Aint a = at + t->true_lb + (last < 0 ? last : 0);
    MPI_Aint b = at + t->true_lb + t->true_extent + (last > 0 ? last : 0);
    *lo = a < *lo ? a : *lo;
    *hi = b > *hi ? b : *hi;
}

/* ---- reductions' working buffers ------------------------------------------- */

/* the predefined operations but MAXLOC / MINLOC: MPI_MAX (index 1) to
 * MPI_BXOR (0xa) in MPICH's numbering */
static bool elementwise_op(MPI_Op op)
{
    return mpi_h_is(op, MPI_HK_BUILTIN, MPI_HT_OP) && mpi_h_index(op) >= 1 &&
           mpi_h_index(op) <= 0xa;
}

int coll_red_init(const coll_t *k, coll_red_t *r, int count, MPI_Datatype dt, MPI_Op op)
{
    *r = (coll_red_t){.how = RED_DIRECT, .dt = dt, .t = dt, .count = count, .n = count,
                      .op = op};
    MPI_Datatype b;
    int per;
    if (!mpi_dt_is_contig(dt)) {
        if (mpi_dt_basic(dt, &b, &per) == 0) { /* n predefined elements each */
            r->t = b;
            r->n = count * per;
            r->how = mpi_dt_is_contig(b) ? RED_PACK : RED_DIRECT; /* a pair: as it lies */
        } else if (!elementwise_op(op)) { /* a user op takes the type whole */
            r->how = RED_IMAGE;
        } else {
            return mpi_raise(k->comm, MPI_ERR_UNSUPPORTED_OPERATION, "%s: operation %d on "
                             "datatype %#x, which is not made of one predefined type", k->call,
                             op, dt);
        }
    }
    r->ext = (size_t)mpi_dt_extent(r->t);
    r->len = (size_t)r->n * r->ext;
    return mpi_op_check(op, r->t, k->comm, k->call);
}

int coll_red_load(const coll_t *k, const coll_red_t *r, const void *user, void *work)
{
    if (r->how == RED_PACK) {
        mpi_dt_pack(user, r->count, r->dt, work);
    } else if (r->how == RED_IMAGE) { /* the typemap's bytes at their places */
        coll_stage_t s;
        int e = coll_stage_in(k, user, r->count, r->dt, true, &s);
        if (e != MPI_SUCCESS)
            return e;
        memset(work, 0, r->len);
        mpi_dt_unpack(s.bytes, s.len, work, r->count, r->dt);
        coll_stage_out(&s, NULL, 0, r->dt, false);
    } else if (user != work && r->len > 0) {
        memcpy(work, user, r->len);
    }
    return MPI_SUCCESS;
}

int coll_red_store(const coll_t *k, const coll_red_t *r, const void *work, void *user)
{
    if (r->how == RED_PACK) {
        mpi_dt_unpack(work, r->len, user, r->count, r->dt);
    } else if (r->how == RED_IMAGE) {
        coll_stage_t s;
        int e = coll_stage_in(k, work, r->count, r->dt, true, &s);
        if (e != MPI_SUCCESS)
            return e;
        mpi_dt_unpack(s.bytes, s.len, user, r->count, r->dt);
        coll_stage_out(&s, NULL, 0, r->dt, false);
    } else if (user != work && r->len > 0) {
        memcpy(user, work, r->len);
    }
    return MPI_SUCCESS;
}

void coll_red_apply(const coll_red_t *r, const void *in, void *inout)
{
    mpi_op_apply(r->op, in, inout, r->n, r->t);
}

void coll_red_apply_part(const coll_red_t *r, const char *in, char *inout, int from, int n)
{
    if (n > 0)
        mpi_op_apply(r->op, in + (size_t)from * r->ext, inout + (size_t)from * r->ext, n, r->t);
}

int coll_red_bufs(const coll_t *k, const coll_red_t *r, const void *user, char **a, char **b)
{
    *a = coll_tmp(r->len);
    *b = coll_tmp(r->len);
    if (*a == NULL || *b == NULL) {
        coll_tmp_free(*a);
        coll_tmp_free(*b);
        return mpi_raise(k->comm, MPI_ERR_NO_MEM, "%s: %zu bytes", k->call, r->len);
    }
    int e = user != NULL ? coll_red_load(k, r, user, *a) : MPI_SUCCESS;
    if (e != MPI_SUCCESS) {
        coll_tmp_free(*a);
        coll_tmp_free(*b);
    }
    return e;
}

int coll_red_args(coll_t *k, MPI_Comm comm, const char *call, const void *sendbuf,
                  const void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                  coll_red_t *r)
{
    int e = coll_start(k, comm, call);
    bool rooted = root != COLL_ALL_RANKS;
    if (e == MPI_SUCCESS && rooted) /* MPI_ROOT and MPI_PROC_NULL too: refused */
        e = coll_check_root(k, root);
    if (e == MPI_SUCCESS && rooted && sendbuf == MPI_IN_PLACE && k->c->rank != root)
        e = mpi_raise(comm, MPI_ERR_BUFFER, "%s: MPI_IN_PLACE at rank %d, not the root", call,
                      k->c->rank);
    if (e == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        e = mpi_check_buf(comm, sendbuf, count, dt, call);
    if (e == MPI_SUCCESS && (!rooted || k->c->rank == root))
        e = mpi_check_buf(comm, recvbuf, count, dt, call);
    if (e == MPI_SUCCESS)
        e = coll_red_init(k, r, count, dt, op);
    return e;
}

