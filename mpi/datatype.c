/*
 * Datatypes: the predefined ones (the handle says the size: mpi_predef_size),
 * the table of derived ones (made handles, index = entry; the pair types
 * first), the packing helpers the rest
 * of the layer uses (buffered sends, collectives' staging, point to point)
 * and the queries.  The constructors are in dtype_build.c.
 *
 * A derived type is flattened when it is built: the blocks of one element
 * in typemap order (offsets from the element's address, adjacent blocks
 * merged), so packing, iovec lists and queries never walk a type tree.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "mpi/mpi_internal.h"

/* the predefined types' sizes, from the handle */
static int predefined_size(MPI_Datatype dt)
{
    return mpi_predef_size(dt);
}

/* ---- the derived types' table ---------------------------------------------- */

/* Reserved once at MPI_DT_MAX entries (calloc: pages touched as used) and
 * never moved, so a lookup takes no lock; registering is the table lock's
 * (MPI_THREAD_MULTIPLE), and ntypes is published with release / read with
 * acquire so an entry is written before its handle can be looked up. */
#define MPI_DT_MAX (1 << 16)
static mpi_dtype_t **types; /* by the handle's index; NULL: free */
static int ntypes;

/* the pair types take the first entries (MPI_Init builds them) */
int mpi_dt_init(void)
{
    if (types == NULL && (types = calloc(MPI_DT_MAX, sizeof(*types))) == NULL)
        return MPI_ERR_NO_MEM;
    return ntypes > 0 ? MPI_SUCCESS : mpi_dt_build_pairs();
}

mpi_dtype_t *mpi_dt_get(MPI_Datatype dt)
{
    unsigned i = mpi_h_index(dt);
    if (dt == MPI_2INT)
        i = MPI_DT_2INT_ENTRY;
    else if (!mpi_h_is(dt, MPI_HK_MADE, MPI_HT_DATATYPE))
        return NULL;
    return i < (unsigned)__atomic_load_n(&ntypes, __ATOMIC_ACQUIRE) ? types[i] : NULL;
}

MPI_Datatype mpi_dt_register(mpi_dtype_t *t)
{
    if (types == NULL)
        return MPI_DATATYPE_NULL;
    mpi_table_lock();
    /* the pair types are registered first, in order, into entries 0.. */
    for (int i = ntypes < MPI_DT_NPAIRS ? ntypes : MPI_DT_NPAIRS; i < ntypes; i++)
        if (types[i] == NULL) {
            types[i] = t;
            mpi_table_unlock();
            return mpi_h_make(MPI_HK_MADE, MPI_HT_DATATYPE, (unsigned)i);
        }
    if (ntypes >= MPI_DT_MAX) {
        mpi_table_unlock();
        return MPI_DATATYPE_NULL;
    }
    types[ntypes] = t;
    __atomic_store_n(&ntypes, ntypes + 1, __ATOMIC_RELEASE);
    mpi_table_unlock();
    return mpi_h_make(MPI_HK_MADE, MPI_HT_DATATYPE, (unsigned)ntypes - 1);
}

/* references: atomic (a staged receive on one thread, MPI_Type_free on
 * another) */
void mpi_dt_retain(mpi_dtype_t *t)
{
    __atomic_fetch_add(&t->refs, 1, __ATOMIC_RELAXED);
}

void mpi_dt_destroy(mpi_dtype_t *t)
{
    if (t == NULL)
        return;
    mpi_dt_env_free(t->env);
    free(t->blocks);
    free(t->runs);
    free(t->name);
    free(t);
}

void mpi_dt_release(mpi_dtype_t *t)
{
    /* acq_rel: the last owner sees every other owner's use finished */
    if (__atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0)
        mpi_dt_destroy(t);
}

const mpi_dtype_t *mpi_dt_lookup(MPI_Datatype dt, mpi_dt_view_t *v)
{
    int size = predefined_size(dt);
    if (size == 0)
        return mpi_dt_get(dt);
    memset(v, 0, sizeof(*v));
    v->b.len = size;
    v->r.n = mpi_predef_parts(dt, &v->r.type); /* Fortran's pairs: two elements */
    v->t.refs = 1;
    v->t.committed = true;
    v->t.align = mpi_predef_unit(dt); /* a complex number: its real part's */
    v->t.size = v->t.extent = v->t.true_extent = size;
    v->t.nelems = v->r.n;
    v->t.nblocks = v->t.nruns = 1;
    v->t.blocks = &v->b;
    v->t.runs = &v->r;
    return &v->t;
}

/* ---- the helpers the layer uses ------------------------------------------- */

int mpi_type_size(MPI_Datatype dt)
{
    int size = predefined_size(dt);
    if (size != 0)
        return size;
    const mpi_dtype_t *t = mpi_dt_get(dt);
    return t != NULL ? (int)t->size : 0; /* sizes are kept within int (dtype_build.c) */
}

int mpi_check_buf(MPI_Comm comm, const void *buf, int count, MPI_Datatype dt, const char *call)
{
    if (count < 0)
        return mpi_raise(comm, MPI_ERR_COUNT, "%s: count %d", call, count);
    if (predefined_size(dt) == 0) {
        const mpi_dtype_t *t = mpi_dt_get(dt);
        if (t == NULL)
            return mpi_raise(comm, MPI_ERR_TYPE, "%s: datatype %#x is not a valid datatype "
                             "(never built, or freed)", call, dt);
        if (!t->committed)
            return mpi_raise(comm, MPI_ERR_TYPE, "%s: datatype %#x is not committed "
                             "(MPI_Type_commit it before communicating with it)", call, dt);
        if (t->size == 0)
            return MPI_SUCCESS; /* nothing is read or written */
        return MPI_SUCCESS; /* buf may be MPI_BOTTOM: the type's displacements are addresses */
    }
    if (buf == NULL && count > 0)
        return mpi_raise(comm, MPI_ERR_BUFFER, "%s: NULL buffer for %d elements", call, count);
    return MPI_SUCCESS;
}

size_t mpi_dt_pack_size(int count, MPI_Datatype dt)
{
    return (size_t)count * (size_t)mpi_type_size(dt);
}

size_t mpi_dt_pack_t(const void *buf, int count, const mpi_dtype_t *t, void *out)
{
    char *o = out;
    for (int i = 0; i < count; i++) {
        const char *el = mpi_addr(buf, (MPI_Aint)i * t->extent);
        for (int k = 0; k < t->nblocks; k++) {
            memcpy(o, mpi_addr(el, t->blocks[k].off), (size_t)t->blocks[k].len);
            o += t->blocks[k].len;
        }
    }
    return (size_t)(o - (char *)out);
}

size_t mpi_dt_unpack_t(const void *in, size_t len, void *buf, int count, const mpi_dtype_t *t)
{
    const char *p = in;
    size_t left = len;
    for (int i = 0; i < count && left > 0; i++) {
        char *el = mpi_addr(buf, (MPI_Aint)i * t->extent);
        for (int k = 0; k < t->nblocks && left > 0; k++) {
            size_t n = (size_t)t->blocks[k].len < left ? (size_t)t->blocks[k].len : left;
            memcpy(mpi_addr(el, t->blocks[k].off), p, n);
            p += n;
            left -= n;
        }
    }
    return len - left;
}

size_t mpi_dt_pack(const void *buf, int count, MPI_Datatype dt, void *out)
{
    mpi_dt_view_t v;
    const mpi_dtype_t *t = mpi_dt_lookup(dt, &v);
    return t != NULL ? mpi_dt_pack_t(buf, count, t, out) : 0;
}

size_t mpi_dt_unpack(const void *in, size_t len, void *buf, int count, MPI_Datatype dt)
{
    mpi_dt_view_t v;
    const mpi_dtype_t *t = mpi_dt_lookup(dt, &v);
    return t != NULL ? mpi_dt_unpack_t(in, len, buf, count, t) : 0;
}

bool mpi_dt_is_contig(MPI_Datatype dt)
{
    if (predefined_size(dt) != 0)
        return true;
    const mpi_dtype_t *t = mpi_dt_get(dt);
    if (t == NULL || t->extent != t->size)
        return false;
    return t->size == 0 || (t->nblocks == 1 && t->blocks[0].off == 0);
}

MPI_Aint mpi_dt_extent(MPI_Datatype dt)
{
    int size = predefined_size(dt);
    if (size != 0)
        return size;
    const mpi_dtype_t *t = mpi_dt_get(dt);
    return t != NULL ? t->extent : 0;
}

int mpi_dt_basic(MPI_Datatype dt, MPI_Datatype *basic, int *n)
{
    if (predefined_size(dt) != 0) {
        *basic = dt;
        *n = 1;
        return 0;
    }
    /* a pair type's two basic types are one element for MAXLOC / MINLOC:
     * never n of one type */
    const mpi_dtype_t *t = mpi_dt_get(dt);
    if (t == NULL || t->has_pair || t->nruns != 1 || !mpi_dt_is_contig(dt) ||
        t->runs[0].n > INT_MAX)
        return -1;
    *basic = t->runs[0].type;
    *n = (int)t->runs[0].n;
    return 0;
}

bool mpi_dt_iov(const void *buf, int count, const mpi_dtype_t *t, struct iovec **iov,
                struct iovec *one, int *n)
{
    *iov = one;
    *n = 0;
    if (count == 0 || t->nblocks == 0)
        return true;
    /* an upper bound first: the last block of an element runs into the
     * first of the next, or no block merges across elements */
    const mpi_dt_block_t *first = &t->blocks[0], *last = &t->blocks[t->nblocks - 1];
    bool join = last->off + last->len == first->off + t->extent;
    long long total = (long long)count * t->nblocks - (join ? count - 1 : 0);
    if (total > MPI_DT_IOV_LIMIT)
        return false;
    if (total > 1 && (*iov = malloc(sizeof(**iov) * (size_t)total)) == NULL) {
        *n = -1;
        return false;
    }
    struct iovec *v = *iov;
    int k = 0;
    for (int i = 0; i < count; i++) {
        char *el = mpi_addr(buf, (MPI_Aint)i * t->extent);
        for (int j = 0; j < t->nblocks; j++) {
            char *p = mpi_addr(el, t->blocks[j].off);
            if (k > 0 && (char *)v[k - 1].iov_base + v[k - 1].iov_len == p) {
                v[k - 1].iov_len += (size_t)t->blocks[j].len;
            } else {
                v[k].iov_base = p;
                v[k].iov_len = (size_t)t->blocks[j].len;
                k++;
            }
        }
    }
    *n = k;
    return true;
}

/* ---- queries ---------------------------------------------------------------- */

/* the type of a handle for a query (uncommitted allowed), raising as call */
static const mpi_dtype_t *query(MPI_Datatype dt, mpi_dt_view_t *v, const void *out,
                                const char *call, int *e)
{
    *e = mpi_check_init(call);
    if (*e != MPI_SUCCESS)
        return NULL;
    const mpi_dtype_t *t = mpi_dt_lookup(dt, v);
    if (t == NULL)
        *e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "%s: datatype %#x is not a valid "
                       "datatype", call, dt);
    else if (out == NULL)
        *e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL output argument", call);
    return *e == MPI_SUCCESS ? t : NULL;
}

int MPI_Type_size(MPI_Datatype datatype, int *size)
{
    mpi_dt_view_t v;
    int e;
    const mpi_dtype_t *t = query(datatype, &v, size, "MPI_Type_size", &e);
    if (t != NULL)
        *size = (int)t->size;
    return e;
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    mpi_dt_view_t v;
    int e;
    const mpi_dtype_t *t = query(datatype, &v, lb && extent ? lb : NULL,
                                 "MPI_Type_get_extent", &e);
    if (t != NULL) {
        *lb = t->lb;
        *extent = t->extent;
    }
    return e;
}

int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    mpi_dt_view_t v;
    int e;
    const mpi_dtype_t *t = query(datatype, &v, true_lb && true_extent ? true_lb : NULL,
                                 "MPI_Type_get_true_extent", &e);
    if (t != NULL) {
        *true_lb = t->true_lb;
        *true_extent = t->true_extent;
    }
    return e;
}

int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    mpi_dt_view_t v;
    int e, dummy;
    const mpi_dtype_t *t = query(datatype, &v, size != NULL ? &dummy : NULL, "MPI_Type_size_x",
                                 &e);
    if (t != NULL)
        *size = (MPI_Count)t->size;
    return e;
}

int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    mpi_dt_view_t v;
    int e, dummy;
    const mpi_dtype_t *t = query(datatype, &v, lb && extent ? &dummy : NULL,
                                 "MPI_Type_get_extent_x", &e);
    if (t != NULL) {
        *lb = t->lb;
        *extent = t->extent;
    }
    return e;
}

int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    mpi_dt_view_t v;
    int e, dummy;
    const mpi_dtype_t *t = query(datatype, &v, true_lb && true_extent ? &dummy : NULL,
                                 "MPI_Type_get_true_extent_x", &e);
    if (t != NULL) {
        *true_lb = t->true_lb;
        *true_extent = t->true_extent;
    }
    return e;
}

int MPI_Type_commit(MPI_Datatype *datatype)
{
    int e = mpi_check_init("MPI_Type_commit");
    if (e != MPI_SUCCESS)
        return e;
    if (datatype == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_commit: NULL datatype pointer");
    if (predefined_size(*datatype) != 0)
        return MPI_SUCCESS; /* predefined types are committed */
    mpi_dtype_t *t = mpi_dt_get(*datatype);
    if (t == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Type_commit: datatype %#x is not "
                         "a valid datatype", *datatype);
    t->committed = true; /* flattened already when built */
    return MPI_SUCCESS;
}

/* The entry goes at once (the handle is invalid); the type itself lives on
 * while a pending receive that unpacks into it holds a reference. */
int MPI_Type_free(MPI_Datatype *datatype)
{
    int e = mpi_check_init("MPI_Type_free");
    if (e != MPI_SUCCESS)
        return e;
    if (datatype == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_free: NULL datatype pointer");
    mpi_dtype_t *t = mpi_dt_get(*datatype);
    if (t == NULL || t->pair || t->permanent)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Type_free: datatype %#x is %s",
                         *datatype, t != NULL || predefined_size(*datatype) != 0
                                        ? "predefined" : "not a valid derived datatype");
    /* its attributes first, their delete callbacks seeing the type (attr.c) */
    int ae = mpi_attr_type_delete(*datatype);
    if (ae != MPI_SUCCESS)
        return mpi_raise_code(MPI_COMM_WORLD, ae, "MPI_Type_free: a delete callback of an "
                              "attribute failed (%d)", ae);
    mpi_table_lock();
    types[mpi_h_index(*datatype)] = NULL;
    mpi_table_unlock();
    mpi_dt_release(t);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

MPI_Datatype mpi_dt_hold(MPI_Datatype dt)
{
    mpi_dtype_t *t = mpi_dt_predefined(dt) ? NULL : mpi_dt_get(dt);
    if (t == NULL || t->pair || t->permanent)
        return dt; /* predefined (pair, f90) types are never freed */
    mpi_dt_retain(t);
    MPI_Datatype h = mpi_dt_register(t);
    if (h == MPI_DATATYPE_NULL)
        mpi_dt_release(t);
    return h;
}

void mpi_dt_drop(MPI_Datatype h)
{
    mpi_dtype_t *t = mpi_dt_predefined(h) ? NULL : mpi_dt_get(h);
    if (t == NULL || t->pair || t->permanent)
        return;
    mpi_table_lock();
    types[mpi_h_index(h)] = NULL;
    mpi_table_unlock();
    mpi_dt_release(t);
}

/* ---- packing ---------------------------------------------------------------- */

static int pack_args(MPI_Comm comm, MPI_Datatype dt, int count, int *position, const char *call,
                     const mpi_dtype_t **t, mpi_dt_view_t *v)
{
    int e = mpi_check_init(call);
    if (e == MPI_SUCCESS)
        e = mpi_check_comm(comm, call);
    if (e == MPI_SUCCESS && count < 0)
        e = mpi_raise(comm, MPI_ERR_COUNT, "%s: count %d", call, count);
    if (e == MPI_SUCCESS && (*t = mpi_dt_lookup(dt, v)) == NULL)
        e = mpi_raise(comm, MPI_ERR_TYPE, "%s: datatype %#x is not a valid datatype", call, dt);
    if (e == MPI_SUCCESS && !(*t)->committed)
        e = mpi_raise(comm, MPI_ERR_TYPE, "%s: datatype %#x is not committed", call, dt);
    if (e == MPI_SUCCESS && (position == NULL || *position < 0))
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: position %d", call, position ? *position : -1);
    return e;
}

int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
             int *position, MPI_Comm comm)
{
    const mpi_dtype_t *t;
    mpi_dt_view_t v;
    int e = pack_args(comm, datatype, incount, position, "MPI_Pack", &t, &v);
    if (e != MPI_SUCCESS)
        return e;
    long long need = (long long)incount * t->size;
    if (*position + need > outsize)
        return mpi_raise(comm, MPI_ERR_TRUNCATE, "MPI_Pack: %lld bytes at position %d do not "
                         "fit in %d", need, *position, outsize);
    /* a derived type's inbuf may be MPI_BOTTOM (absolute displacements) */
    if (need > 0 && ((inbuf == NULL && mpi_dt_predefined(datatype)) || outbuf == NULL))
        return mpi_raise(comm, MPI_ERR_BUFFER, "MPI_Pack: NULL buffer");
    *position += (int)mpi_dt_pack_t(inbuf, incount, t, (char *)outbuf + *position);
    return MPI_SUCCESS;
}

int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm)
{
    const mpi_dtype_t *t;
    mpi_dt_view_t v;
    int e = pack_args(comm, datatype, outcount, position, "MPI_Unpack", &t, &v);
    if (e != MPI_SUCCESS)
        return e;
    long long need = (long long)outcount * t->size;
    if (*position + need > insize)
        return mpi_raise(comm, MPI_ERR_TRUNCATE, "MPI_Unpack: %lld bytes at position %d, the "
                         "buffer has %d", need, *position, insize);
    if (need > 0 && (inbuf == NULL || (outbuf == NULL && mpi_dt_predefined(datatype))))
        return mpi_raise(comm, MPI_ERR_BUFFER, "MPI_Unpack: NULL buffer");
    *position += (int)mpi_dt_unpack_t((const char *)inbuf + *position, (size_t)need, outbuf,
                                      outcount, t);
    return MPI_SUCCESS;
}

int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    const mpi_dtype_t *t;
    mpi_dt_view_t v;
    int pos = 0;
    int e = pack_args(comm, datatype, incount, &pos, "MPI_Pack_size", &t, &v);
    if (e == MPI_SUCCESS && size == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Pack_size: NULL size pointer");
    if (e != MPI_SUCCESS)
        return e;
    long long n = (long long)incount * t->size;
    if (n > INT_MAX)
        return mpi_raise(comm, MPI_ERR_COUNT, "MPI_Pack_size: %lld bytes do not fit an int", n);
    *size = (int)n;
    return MPI_SUCCESS;
}

int MPI_Get_address(const void *location, MPI_Aint *address)
{
    if (address == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Get_address: NULL address pointer");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

/* ---- counts of a status ------------------------------------------------------ */

static long long status_bytes(const MPI_Status *s)
{
    return (long long)(unsigned)s->count_lo | ((long long)(s->count_hi_and_cancelled >> 1) << 31);
}

static const mpi_dtype_t *count_args(const MPI_Status *status, MPI_Datatype dt, int *count,
                                     mpi_dt_view_t *v, const char *call, int *e)
{
    *e = MPI_SUCCESS;
    if (status == NULL || status == MPI_STATUS_IGNORE || count == NULL) {
        *e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL argument", call);
        return NULL;
    }
    const mpi_dtype_t *t = mpi_dt_lookup(dt, v);
    if (t == NULL)
        *e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "%s: datatype %#x is not a valid datatype",
                       call, dt);
    return t;
}

int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    mpi_dt_view_t v;
    int e;
    const mpi_dtype_t *t = count_args(status, datatype, count, &v, "MPI_Get_count", &e);
    if (t == NULL)
        return e;
    long long bytes = status_bytes(status);
    if (t->size == 0)
        *count = 0; /* as MPICH: any number of empty elements is none */
    else
        *count = bytes % t->size || bytes / t->size > INT_MAX ? MPI_UNDEFINED
                                                              : (int)(bytes / t->size);
    return MPI_SUCCESS;
}

/* Whole elements, then the basic elements of a partial one, run by run;
 * -1: a partial basic element (MPI_UNDEFINED). */
static long long elements_of(const mpi_dtype_t *t, long long bytes)
{
    if (t->size == 0)
        return 0;
    long long n = bytes / t->size * t->nelems, rem = bytes % t->size;
    for (int i = 0; i < t->nruns && rem > 0; i++) {
        long long bs = predefined_size(t->runs[i].type);
        long long k = rem / bs < t->runs[i].n ? rem / bs : t->runs[i].n;
        n += k;
        rem -= k * bs;
        if (k < t->runs[i].n)
            break;
    }
    return rem != 0 ? -1 : n;
}

/* The bytes of n basic elements of t: whole elements, then the first of
 * the next one's runs (the inverse of elements_of). */
static long long bytes_of_elements(const mpi_dtype_t *t, long long n)
{
    if (t->nelems == 0)
        return 0;
    long long bytes = n / t->nelems * t->size, rem = n % t->nelems;
    for (int i = 0; i < t->nruns && rem > 0; i++) {
        long long k = rem < t->runs[i].n ? rem : t->runs[i].n;
        bytes += k * predefined_size(t->runs[i].type);
        rem -= k;
    }
    return bytes;
}

int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    mpi_dt_view_t v;
    int e;
    const mpi_dtype_t *t = count_args(status, datatype, count, &v, "MPI_Get_elements", &e);
    if (t == NULL)
        return e;
    long long n = elements_of(t, status_bytes(status));
    *count = n < 0 || n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}

int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    mpi_dt_view_t v;
    int e, dummy;
    const mpi_dtype_t *t = count_args(status, datatype, count != NULL ? &dummy : NULL, &v,
                                      "MPI_Get_elements_x", &e);
    if (t == NULL)
        return e;
    long long n = elements_of(t, status_bytes(status));
    *count = n < 0 ? MPI_UNDEFINED : (MPI_Count)n;
    return MPI_SUCCESS;
}

/* MPI_Status_set_elements(_x): the status says count basic elements of
 * datatype arrived (a generalized request's, say); the cancelled bit kept */
static int set_elements(MPI_Status *status, MPI_Datatype datatype, long long count,
                        const char *call)
{
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    mpi_dt_view_t v;
    int dummy;
    const mpi_dtype_t *t = count_args(status, datatype, &dummy, &v, call, &e);
    if (t == NULL)
        return e;
    if (count < 0)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_COUNT, "%s: count %lld", call, count);
    long long bytes = bytes_of_elements(t, count);
    if (bytes >= (1ll << 62))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_COUNT, "%s: %lld elements do not fit a status",
                         call, count);
    status->count_lo = (int)(bytes & 0x7fffffff);
    status->count_hi_and_cancelled =
        (int)(((bytes >> 31) << 1) | (status->count_hi_and_cancelled & 1));
    return MPI_SUCCESS;
}

int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    return set_elements(status, datatype, count, "MPI_Status_set_elements");
}

int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements(status, datatype, count, "MPI_Status_set_elements_x");
}

int MPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    if (status == NULL || status == MPI_STATUS_IGNORE)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_set_cancelled: no status");
    status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
    return MPI_SUCCESS;
}
