/*
 * The derived datatype constructors (MPI-3.1 chapter 4.1).  Every one is
 * a list of groups "n copies of an old type, one extent apart, from
 * displacement d"; a group appends the old type's blocks (shifted) and its
 * runs of basic elements to the new type, merging what touches, and
 * widens its bounds.  Children are flattened already, so the new type never
 * refers to them: freeing an old type never affects a type built from it.
 *
 * Bounds: lb and ub are the least and greatest over the copies, except that
 * bounds set explicitly (MPI_Type_create_resized) win over the others, as
 * MPI's lb / ub markers do.  A struct's extent is padded to its strictest
 * basic alignment unless a bound was set explicitly.
 */
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

typedef struct build {
    mpi_dtype_t *t;
    int cap_blocks, cap_runs;
    bool any;                 /* a group with copies seen */
    MPI_Aint lb, ub;          /* over every copy */
    MPI_Aint mlb, mub;        /* over explicitly bounded ones */
    bool too_big;
} build_t;

static int build_init(build_t *b)
{
    memset(b, 0, sizeof(*b));
    b->t = calloc(1, sizeof(*b->t));
    return b->t != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static int add_block(build_t *b, MPI_Aint off, MPI_Aint len)
{
    mpi_dtype_t *t = b->t;
    if (len == 0)
        return MPI_SUCCESS;
    if (t->nblocks > 0 && t->blocks[t->nblocks - 1].off + t->blocks[t->nblocks - 1].len == off) {
        t->blocks[t->nblocks - 1].len += len;
        return MPI_SUCCESS;
    }
    if (t->nblocks == b->cap_blocks) {
        if (b->cap_blocks > INT_MAX / 2)
            return MPI_ERR_NO_MEM;
        int cap = b->cap_blocks ? 2 * b->cap_blocks : 8;
        mpi_dt_block_t *v = realloc(t->blocks, sizeof(*v) * (size_t)cap);
        if (v == NULL)
            return MPI_ERR_NO_MEM;
        t->blocks = v;
        b->cap_blocks = cap;
    }
    t->blocks[t->nblocks++] = (mpi_dt_block_t){off, len};
    return MPI_SUCCESS;
}

static int add_run(build_t *b, MPI_Datatype type, MPI_Aint n)
{
    mpi_dtype_t *t = b->t;
    if (n == 0)
        return MPI_SUCCESS;
    if (t->nruns > 0 && t->runs[t->nruns - 1].type == type) {
        t->runs[t->nruns - 1].n += n;
        return MPI_SUCCESS;
    }
    if (t->nruns == b->cap_runs) {
        if (b->cap_runs > INT_MAX / 2)
            return MPI_ERR_NO_MEM;
        int cap = b->cap_runs ? 2 * b->cap_runs : 4;
        mpi_dt_run_t *v = realloc(t->runs, sizeof(*v) * (size_t)cap);
        if (v == NULL)
            return MPI_ERR_NO_MEM;
        t->runs = v;
        b->cap_runs = cap;
    }
    t->runs[t->nruns++] = (mpi_dt_run_t){type, n};
    return MPI_SUCCESS;
}

/* n copies of old, old->extent apart, from disp */
static int add_group(build_t *b, const mpi_dtype_t *old, MPI_Aint disp, MPI_Aint n)
{
    if (n <= 0)
        return MPI_SUCCESS;
    mpi_dtype_t *t = b->t;
    MPI_Aint span = (n - 1) * old->extent;
    MPI_Aint lo = disp + old->lb + (span < 0 ? span : 0);
    MPI_Aint hi = disp + old->lb + old->extent + (span > 0 ? span : 0);
    if (!b->any || lo < b->lb)
        b->lb = lo;
    if (!b->any || hi > b->ub)
        b->ub = hi;
    if (old->lb_mark && (!t->lb_mark || lo < b->mlb))
        b->mlb = lo;
    if (old->ub_mark && (!t->ub_mark || hi > b->mub))
        b->mub = hi;
    t->lb_mark |= old->lb_mark;
    t->ub_mark |= old->ub_mark;
    t->has_pair |= old->has_pair || old->pair;
    if (old->align > t->align)
        t->align = old->align;
    b->any = true;
    if (old->size > 0 && n > (MPI_Aint)INT_MAX / old->size + 1)
        b->too_big = true; /* checked in build_done, before copying blocks */
    if (b->too_big)
        return MPI_SUCCESS;
    int e = MPI_SUCCESS;
    if (old->nblocks == 1 && old->nruns == 1 && old->blocks[0].len == old->extent) {
        /* dense copies (a predefined type, say): one block, one run */
        e = add_block(b, disp + old->blocks[0].off, n * old->extent);
        return e == MPI_SUCCESS ? add_run(b, old->runs[0].type, n * old->runs[0].n) : e;
    }
    for (MPI_Aint i = 0; i < n && e == MPI_SUCCESS; i++) {
        MPI_Aint at = disp + i * old->extent;
        for (int k = 0; k < old->nblocks && e == MPI_SUCCESS; k++)
            e = add_block(b, at + old->blocks[k].off, old->blocks[k].len);
        for (int k = 0; k < old->nruns && e == MPI_SUCCESS; k++)
            e = add_run(b, old->runs[k].type, old->runs[k].n);
    }
    return e;
}

/* The bounds and sizes of the built type; a struct's padding; its handle. */
static int build_done(build_t *b, bool pad, MPI_Datatype *out, const char *call)
{
    mpi_dtype_t *t = b->t;
    int e = MPI_SUCCESS;
    MPI_Aint tlo = 0, thi = 0;
    for (int k = 0; k < t->nblocks; k++) {
        MPI_Aint lo = t->blocks[k].off, hi = lo + t->blocks[k].len;
        tlo = k == 0 || lo < tlo ? lo : tlo;
        thi = k == 0 || hi > thi ? hi : thi;
        t->size += t->blocks[k].len;
    }
    t->true_lb = tlo;
    t->true_extent = thi - tlo;
    for (int k = 0; k < t->nruns; k++)
        t->nelems += t->runs[k].n;
    MPI_Aint lb = t->lb_mark ? b->mlb : b->lb, ub = t->ub_mark ? b->mub : b->ub;
    t->lb = lb;
    t->extent = ub - lb;
    if (pad && !t->lb_mark && !t->ub_mark && t->align > 1 && t->extent % t->align != 0)
        t->extent += t->align - t->extent % t->align;
    t->refs = 1;
    if (b->too_big || t->size > INT_MAX)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: the type would hold more than %d bytes",
                      call, INT_MAX);
    else if ((*out = mpi_dt_register(t)) == MPI_DATATYPE_NULL)
        e = MPI_ERR_NO_MEM;
    if (e == MPI_ERR_NO_MEM)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory for the type", call);
    if (e != MPI_SUCCESS)
        mpi_dt_destroy(t);
    return e;
}

/* ---- argument checks ---------------------------------------------------------- */

static const mpi_dtype_t *old_type(MPI_Datatype dt, mpi_dt_view_t *v, const char *call, int *e)
{
    const mpi_dtype_t *t = mpi_dt_lookup(dt, v);
    if (t == NULL)
        *e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "%s: old datatype %#x is not a valid "
                       "datatype", call, dt);
    return t;
}

/* the checks but the library's state (the pair types are built from any call) */
static int begin_internal(const char *call, int count, const void *out, build_t *b)
{
    if (count < 0)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_COUNT, "%s: count %d", call, count);
    if (out == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL newtype pointer", call);
    if (build_init(b) != MPI_SUCCESS)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory", call);
    return MPI_SUCCESS;
}

static int begin(const char *call, int count, const void *out, build_t *b)
{
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    return begin_internal(call, count, out, b);
}

static int fail(build_t *b, int e, const char *call)
{
    mpi_dt_destroy(b->t);
    return e == MPI_ERR_NO_MEM ? mpi_raise(MPI_COMM_WORLD, e, "%s: no memory for the type", call)
                               : e;
}

/* A constructor's type made (e MPI_SUCCESS): its envelope recorded, or
 * the type freed again when there is no memory for it. */
static int env_done(int e, MPI_Datatype *newtype, int combiner, int ni, const int *ints, int na,
                    const MPI_Aint *aints, int nd, const MPI_Datatype *types, const char *call)
{
    if (e != MPI_SUCCESS)
        return e;
    if (mpi_dt_set_env(*newtype, combiner, ni, ints, na, aints, nd, types) == MPI_SUCCESS)
        return MPI_SUCCESS;
    MPI_Type_free(newtype);
    return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory for the type", call);
}

static int check_lengths(int count, const int lens[], const char *call)
{
    if (count > 0 && lens == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL array of block lengths", call);
    for (int i = 0; i < count; i++)
        if (lens[i] < 0)
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: block length %d at %d", call,
                             lens[i], i);
    return MPI_SUCCESS;
}

/* ---- the constructors ------------------------------------------------------- */

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_contiguous";
    build_t b;
    mpi_dt_view_t v;
    int e = begin(call, count, newtype, &b);
    if (e != MPI_SUCCESS)
        return e;
    const mpi_dtype_t *old = old_type(oldtype, &v, call, &e);
    if (old != NULL)
        e = add_group(&b, old, 0, count);
    e = e == MPI_SUCCESS ? build_done(&b, false, newtype, call) : fail(&b, e, call);
    return env_done(e, newtype, MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1, &oldtype, call);
}

/* count blocks of blocklength old elements, stride bytes apart */
static int vector(int count, int blocklength, MPI_Aint stride, bool bytes, MPI_Datatype oldtype,
                  MPI_Datatype *newtype, const char *call)
{
    build_t b;
    mpi_dt_view_t v;
    int e = begin(call, count, newtype, &b);
    if (e != MPI_SUCCESS)
        return e;
    const mpi_dtype_t *old = old_type(oldtype, &v, call, &e);
    if (old != NULL && blocklength < 0)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: block length %d", call, blocklength);
    MPI_Aint given = stride;
    if (old != NULL && e == MPI_SUCCESS && !bytes)
        stride *= old->extent;
    for (int i = 0; old != NULL && e == MPI_SUCCESS && i < count; i++)
        e = add_group(&b, old, i * stride, blocklength);
    e = e == MPI_SUCCESS ? build_done(&b, false, newtype, call) : fail(&b, e, call);
    if (bytes) {
        int ints[2] = {count, blocklength};
        return env_done(e, newtype, MPI_COMBINER_HVECTOR, 2, ints, 1, &given, 1, &oldtype, call);
    }
    int ints[3] = {count, blocklength, (int)given};
    return env_done(e, newtype, MPI_COMBINER_VECTOR, 3, ints, 0, NULL, 1, &oldtype, call);
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype *newtype)
{
    return vector(count, blocklength, stride, false, oldtype, newtype, "MPI_Type_vector");
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    return vector(count, blocklength, stride, true, oldtype, newtype, "MPI_Type_create_hvector");
}

int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    return vector(count, blocklength, stride, true, oldtype, newtype, "MPI_Type_hvector");
}

/* count blocks: lens[i] (or len when lens is NULL) old elements at
 * displacement idisp[i] (in old extents) or adisp[i] (in bytes) */
static int indexed(int count, const int lens[], int len, const int idisp[], const MPI_Aint adisp[],
                   MPI_Datatype oldtype, MPI_Datatype *newtype, const char *call)
{
    build_t b;
    mpi_dt_view_t v;
    int e = begin(call, count, newtype, &b);
    if (e != MPI_SUCCESS)
        return e;
    const mpi_dtype_t *old = old_type(oldtype, &v, call, &e);
    if (old != NULL)
        e = lens != NULL || count == 0 ? check_lengths(count, lens, call)
            : len < 0 ? mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: block length %d", call, len)
                      : MPI_SUCCESS;
    if (old != NULL && e == MPI_SUCCESS && count > 0 && idisp == NULL && adisp == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL array of displacements", call);
    for (int i = 0; old != NULL && e == MPI_SUCCESS && i < count; i++)
        e = add_group(&b, old, idisp != NULL ? idisp[i] * old->extent : adisp[i],
                      lens != NULL ? lens[i] : len);
    e = e == MPI_SUCCESS ? build_done(&b, false, newtype, call) : fail(&b, e, call);
    if (e != MPI_SUCCESS)
        return e;
    /* the envelope: count, the lengths (or the one length), the integer
     * displacements; byte displacements as addresses (MPI-3.1 4.1.13) */
    int combiner = lens != NULL ? (idisp != NULL ? MPI_COMBINER_INDEXED : MPI_COMBINER_HINDEXED)
                                : (idisp != NULL ? MPI_COMBINER_INDEXED_BLOCK
                                                 : MPI_COMBINER_HINDEXED_BLOCK);
    int ni = 1 + (lens != NULL ? count : 1) + (idisp != NULL ? count : 0);
    int *ints = malloc(sizeof(int) * (size_t)ni);
    if (ints == NULL) {
        MPI_Type_free(newtype);
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory for the type", call);
    }
    int k = 0;
    ints[k++] = count;
    if (lens != NULL)
        for (int i = 0; i < count; i++)
            ints[k++] = lens[i];
    else
        ints[k++] = len;
    if (idisp != NULL)
        for (int i = 0; i < count; i++)
            ints[k++] = idisp[i];
    e = env_done(e, newtype, combiner, ni, ints, idisp != NULL ? 0 : count, adisp, 1, &oldtype,
                 call);
    free(ints);
    return e;
}

int MPI_Type_indexed(int count, const int array_of_blocklengths[],
                     const int array_of_displacements[], MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    return indexed(count, array_of_blocklengths, 0, array_of_displacements, NULL, oldtype,
                   newtype, "MPI_Type_indexed");
}

int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                             const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    return indexed(count, array_of_blocklengths, 0, NULL, array_of_displacements, oldtype,
                   newtype, "MPI_Type_create_hindexed");
}

int MPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                  MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed(count, NULL, blocklength, array_of_displacements, NULL, oldtype, newtype,
                   "MPI_Type_create_indexed_block");
}

int MPI_Type_create_hindexed_block(int count, int blocklength,
                                   const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype *newtype)
{
    return indexed(count, NULL, blocklength, NULL, array_of_displacements, oldtype, newtype,
                   "MPI_Type_create_hindexed_block");
}

static int type_struct(int count, const int lens[], const MPI_Aint disps[],
                       const MPI_Datatype types[], MPI_Datatype *newtype, const char *call)
{
    build_t b;
    int e = begin_internal(call, count, newtype, &b);
    if (e != MPI_SUCCESS)
        return e;
    e = check_lengths(count, lens, call);
    if (e == MPI_SUCCESS && count > 0 && (disps == NULL || types == NULL))
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL array of displacements or types",
                      call);
    for (int i = 0; e == MPI_SUCCESS && i < count; i++) {
        mpi_dt_view_t v;
        const mpi_dtype_t *old = mpi_dt_lookup(types[i], &v);
        if (old == NULL)
            e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "%s: datatype %#x at %d is not a valid "
                          "datatype", call, types[i], i);
        else
            e = add_group(&b, old, disps[i], lens[i]);
    }
    return e == MPI_SUCCESS ? build_done(&b, true, newtype, call) : fail(&b, e, call);
}

int MPI_Type_create_struct(int count, const int array_of_blocklengths[],
                           const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_create_struct";
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    e = type_struct(count, array_of_blocklengths, array_of_displacements, array_of_types,
                    newtype, call);
    if (e != MPI_SUCCESS)
        return e;
    int *ints = malloc(sizeof(int) * (size_t)(count + 1));
    if (ints == NULL) {
        MPI_Type_free(newtype);
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory for the type", call);
    }
    ints[0] = count;
    for (int i = 0; i < count; i++)
        ints[i + 1] = array_of_blocklengths[i];
    e = env_done(e, newtype, MPI_COMBINER_STRUCT, count + 1, ints, count, array_of_displacements,
                 count, array_of_types, call);
    free(ints);
    return e;
}

/* old's typemap with the bounds given (both explicit from now on) */
int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_create_resized";
    build_t b;
    mpi_dt_view_t v;
    int e = begin(call, 0, newtype, &b);
    if (e != MPI_SUCCESS)
        return e;
    const mpi_dtype_t *old = old_type(oldtype, &v, call, &e);
    if (old != NULL)
        e = add_group(&b, old, 0, 1);
    if (e != MPI_SUCCESS)
        return fail(&b, e, call);
    b.t->lb_mark = b.t->ub_mark = true;
    b.mlb = lb;
    b.mub = lb + extent;
    e = build_done(&b, false, newtype, call);
    MPI_Aint bounds[2] = {lb, extent};
    return env_done(e, newtype, MPI_COMBINER_RESIZED, 0, NULL, 2, bounds, 1, &oldtype, call);
}

/* the same typemap, committed if old is (MPI-3.1 4.1.10) */
int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_dup";
    build_t b;
    mpi_dt_view_t v;
    int e = begin(call, 0, newtype, &b);
    if (e != MPI_SUCCESS)
        return e;
    const mpi_dtype_t *old = old_type(oldtype, &v, call, &e);
    if (old != NULL)
        e = add_group(&b, old, 0, 1);
    if (e != MPI_SUCCESS)
        return fail(&b, e, call);
    /* the bounds as they are (a struct's padding included) */
    b.t->lb_mark = b.t->ub_mark = true;
    b.mlb = old->lb;
    b.mub = old->lb + old->extent;
    e = build_done(&b, false, newtype, call);
    if (e == MPI_SUCCESS) {
        mpi_dtype_t *t = mpi_dt_get(*newtype);
        t->lb_mark = old->lb_mark;
        t->ub_mark = old->ub_mark;
        t->committed = old->committed;
        if (env_done(MPI_SUCCESS, newtype, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &oldtype,
                     call) != MPI_SUCCESS)
            return MPI_ERR_NO_MEM; /* raised, the new type freed */
        /* the attributes, as their copy callbacks decide (attr.c) */
        int ae = mpi_attr_type_copy(oldtype, *newtype);
        if (ae != MPI_SUCCESS) {
            mpi_attr_type_delete(*newtype);
            MPI_Type_free(newtype);
            return mpi_raise_code(MPI_COMM_WORLD, ae, "%s: a copy callback of an attribute "
                                  "failed (%d)", call, ae);
        }
    }
    return e;
}

/* ---- the pair types (MINLOC / MAXLOC) ---------------------------------------- */

#define PAIR(T) {sizeof(struct { T v; int i; }), offsetof(struct { T v; int i; }, i)}

/* in the order of their entries: MPI_FLOAT_INT .. MPI_LONG_DOUBLE_INT are
 * made handles 0..4 (include/mpi.h), MPI_2INT is entry MPI_DT_2INT_ENTRY */
int mpi_dt_build_pairs(void)
{
    static const MPI_Datatype first[MPI_DT_NPAIRS] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG, MPI_SHORT,
                                                      MPI_LONG_DOUBLE, MPI_INT};
    static const struct { MPI_Aint extent, ioff; } layout[MPI_DT_NPAIRS] = {
        PAIR(float), PAIR(double), PAIR(long), PAIR(short), PAIR(long double), PAIR(int)};
    _Static_assert(MPI_DT_2INT_ENTRY == 5, "MPI_2INT's entry is the last pair's");
    _Static_assert((unsigned)MPI_FLOAT_INT == 0x8c000000u &&
                       (unsigned)MPI_LONG_DOUBLE_INT == 0x8c000004u,
                   "the pair types are made handles 0..4");
    for (int i = 0; i < MPI_DT_NPAIRS; i++) {
        const int lens[2] = {1, 1};
        const MPI_Aint disps[2] = {0, layout[i].ioff};
        const MPI_Datatype types[2] = {first[i], MPI_INT};
        MPI_Datatype h;
        int e = type_struct(2, lens, disps, types, &h, "MPI_Init (pair types)");
        if (e != MPI_SUCCESS)
            return e;
        mpi_dtype_t *t = mpi_dt_get(h);
        t->extent = layout[i].extent; /* the C struct's, padding included */
        t->committed = t->pair = t->has_pair = true;
    }
    return MPI_SUCCESS;
}
