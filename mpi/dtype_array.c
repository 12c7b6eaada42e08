/*
 * The array datatype constructors: MPI_Type_create_subarray and
 * MPI_Type_create_darray (MPI-3.1 4.1.3, 4.1.4), made from the other
 * constructors: one dimension at a time from the fastest-varying one (the
 * last in C order, the first in Fortran order), each a contiguous run or an
 * hvector over the ones below, then the whole placed at its displacement
 * in the array and resized to the array's extent, so that consecutive
 * elements of the new type are whole arrays apart, as MPI defines.  The
 * intermediate types are freed: a type never refers to those it was built
 * from (dtype_build.c); the envelope records the call (dtype_env.c).
 */
#include <limits.h>
#include <stdlib.h>

#include "mpi/mpi_internal.h"

/* the dimension that varies i-th fastest */
static int dim_at(int i, int ndims, int order)
{
    return order == MPI_ORDER_C ? ndims - 1 - i : i;
}

/* t placed at disp bytes in an array of extent bytes: the final type */
static int place(MPI_Datatype *t, MPI_Aint disp, MPI_Aint extent, MPI_Datatype *out)
{
    int one = 1;
    MPI_Datatype at, sized;
    int e = MPI_Type_create_hindexed(1, &one, &disp, *t, &at);
    MPI_Type_free(t);
    if (e != MPI_SUCCESS)
        return e;
    e = MPI_Type_create_resized(at, 0, extent, &sized);
    MPI_Type_free(&at);
    if (e == MPI_SUCCESS)
        *out = sized;
    return e;
}

/* Replace *t by next (made from it, already: e is that call's result),
 * freeing the old one when it is an intermediate. */
static int step(MPI_Datatype *t, int e, MPI_Datatype next, bool free_old)
{
    if (free_old)
        MPI_Type_free(t);
    if (e == MPI_SUCCESS)
        *t = next;
    return e;
}

static int check_order(int order, const char *call)
{
    return order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN
               ? MPI_SUCCESS
               : mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: order %d (MPI_ORDER_C or "
                           "MPI_ORDER_FORTRAN)", call, order);
}

static int old_extent(MPI_Datatype oldtype, MPI_Aint *ext, const char *call)
{
    MPI_Aint lb;
    mpi_dt_view_t v;
    if (mpi_dt_lookup(oldtype, &v) == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "%s: old datatype %#x is not a valid "
                         "datatype", call, (unsigned)oldtype);
    return MPI_Type_get_extent(oldtype, &lb, ext);
}

int MPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                             const int array_of_starts[], int order, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_create_subarray";
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    if (ndims <= 0 || array_of_sizes == NULL || array_of_subsizes == NULL ||
        array_of_starts == NULL || newtype == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: %s", call,
                         ndims <= 0 ? "ndims must be positive" : "NULL argument");
    if ((e = check_order(order, call)) != MPI_SUCCESS)
        return e;
    for (int d = 0; d < ndims; d++) {
        int n = array_of_sizes[d], s = array_of_subsizes[d], st = array_of_starts[d];
        if (n <= 0 || s <= 0 || s > n || st < 0 || st > n - s)
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: dimension %d: size %d, subsize %d, "
                             "start %d (want 1 <= subsize <= size, 0 <= start <= size - "
                             "subsize)", call, d, n, s, st);
    }
    MPI_Aint ext;
    if ((e = old_extent(oldtype, &ext, call)) != MPI_SUCCESS)
        return e;
    MPI_Datatype t = MPI_DATATYPE_NULL, next;
    MPI_Aint stride = ext, disp = 0;
    for (int i = 0; i < ndims && e == MPI_SUCCESS; i++) {
        int d = dim_at(i, ndims, order);
        next = MPI_DATATYPE_NULL;
        if (i == 0)
            e = MPI_Type_contiguous(array_of_subsizes[d], oldtype, &next);
        else
            e = MPI_Type_create_hvector(array_of_subsizes[d], 1, stride, t, &next);
        e = step(&t, e, next, i > 0);
        disp += (MPI_Aint)array_of_starts[d] * stride;
        stride *= array_of_sizes[d];
    }
    if (e == MPI_SUCCESS)
        e = place(&t, disp, stride, newtype);
    else if (t != MPI_DATATYPE_NULL)
        MPI_Type_free(&t);
    if (e != MPI_SUCCESS)
        return e;
    int *ints = malloc(sizeof(int) * (size_t)(3 * ndims + 2));
    if (ints == NULL) {
        MPI_Type_free(newtype);
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory", call);
    }
    ints[0] = ndims;
    for (int d = 0; d < ndims; d++) {
        ints[1 + d] = array_of_sizes[d];
        ints[1 + ndims + d] = array_of_subsizes[d];
        ints[1 + 2 * ndims + d] = array_of_starts[d];
    }
    ints[1 + 3 * ndims] = order;
    e = mpi_dt_set_env(*newtype, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, ints, 0, NULL, 1,
                       &oldtype);
    free(ints);
    if (e != MPI_SUCCESS) {
        MPI_Type_free(newtype);
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory", call);
    }
    return MPI_SUCCESS;
}

/* ---- darray -------------------------------------------------------------------- */

/* One dimension of a distributed array: this process's part of gsize
 * elements (unit: t, one element of the dimension, unit_ext bytes apart)
 * under distribution dist over psize processes at coordinate coord; its
 * first element's offset (in elements) into *off. */
static int darray_dim(MPI_Datatype *t, bool free_old, int gsize, int dist, int darg, int psize,
                      int coord, MPI_Aint unit_ext, int *off, const char *call)
{
    MPI_Datatype next;
    if (dist == MPI_DISTRIBUTE_NONE) {
        psize = 1;
        coord = 0;
        dist = MPI_DISTRIBUTE_BLOCK;
        darg = MPI_DISTRIBUTE_DFLT_DARG;
    }
    if (dist == MPI_DISTRIBUTE_BLOCK) {
        int blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        if (blk <= 0 || (long long)blk * psize < gsize)
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: a block of %d over %d processes "
                             "does not cover %d elements", call, blk, psize, gsize);
        long long first = (long long)blk * coord;
        int mine = first >= gsize ? 0 : (int)(gsize - first < blk ? gsize - first : blk);
        *off = first >= gsize ? 0 : (int)first;
        int e = MPI_Type_create_hvector(mine, 1, unit_ext, *t, &next);
        return step(t, e, next, free_old);
    }
    /* cyclic: blocks of blk, dealt round robin */
    int blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    if (blk <= 0)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: cyclic block size %d", call, darg);
    long long start = (long long)coord * blk;
    long long local = 0;
    if (start < gsize) {
        long long span = gsize - start, period = (long long)psize * blk;
        local = span / period * blk + (span % period < blk ? span % period : blk);
    }
    int whole = (int)(local / blk), rem = (int)(local % blk);
    *off = start < gsize ? (int)start : 0;
    MPI_Aint period_bytes = (MPI_Aint)psize * blk * unit_ext;
    MPI_Datatype blocks, unit;
    /* unit: t with the dimension's element extent, so blk of them are contiguous */
    int e = MPI_Type_create_resized(*t, 0, unit_ext, &unit);
    if (e != MPI_SUCCESS)
        return step(t, e, MPI_DATATYPE_NULL, free_old);
    e = MPI_Type_create_hvector(whole, blk, period_bytes, unit, &blocks);
    if (e == MPI_SUCCESS && rem > 0) {
        int lens[2] = {1, rem};
        MPI_Aint disps[2] = {0, (MPI_Aint)whole * period_bytes};
        MPI_Datatype types[2] = {blocks, unit};
        e = MPI_Type_create_struct(2, lens, disps, types, &next);
        MPI_Type_free(&blocks);
        blocks = next;
    }
    MPI_Type_free(&unit);
    return step(t, e, blocks, free_old);
}

int MPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                           const int array_of_distribs[], const int array_of_dargs[],
                           const int array_of_psizes[], int order, MPI_Datatype oldtype,
                           MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_create_darray";
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    if (ndims <= 0 || array_of_gsizes == NULL || array_of_distribs == NULL ||
        array_of_dargs == NULL || array_of_psizes == NULL || newtype == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: %s", call,
                         ndims <= 0 ? "ndims must be positive" : "NULL argument");
    if ((e = check_order(order, call)) != MPI_SUCCESS)
        return e;
    long long procs = 1;
    for (int d = 0; d < ndims; d++) {
        int ds = array_of_distribs[d];
        if (array_of_gsizes[d] <= 0 || array_of_psizes[d] <= 0 ||
            (ds != MPI_DISTRIBUTE_BLOCK && ds != MPI_DISTRIBUTE_CYCLIC &&
             ds != MPI_DISTRIBUTE_NONE) ||
            (ds == MPI_DISTRIBUTE_NONE && array_of_psizes[d] != 1))
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: dimension %d: gsize %d, psize %d, "
                             "distribution %d (MPI_DISTRIBUTE_NONE takes psize 1)", call, d,
                             array_of_gsizes[d], array_of_psizes[d], ds);
        procs *= array_of_psizes[d];
    }
    if (procs != size || rank < 0 || rank >= size)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: the process grid has %lld processes, "
                         "size is %d, rank %d", call, procs, size, rank);
    MPI_Aint ext;
    if ((e = old_extent(oldtype, &ext, call)) != MPI_SUCCESS)
        return e;
    /* rank -> coordinates: the process grid in row-major order (MPI-3.1) */
    int *coords = malloc(sizeof(int) * (size_t)ndims);
    if (coords == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory", call);
    for (int d = ndims - 1, r = rank; d >= 0; d--) {
        coords[d] = r % array_of_psizes[d];
        r /= array_of_psizes[d];
    }
    MPI_Datatype t = oldtype;
    MPI_Aint unit = ext, disp = 0;
    for (int i = 0; i < ndims && e == MPI_SUCCESS; i++) {
        int d = dim_at(i, ndims, order), off = 0;
        e = darray_dim(&t, i > 0, array_of_gsizes[d], array_of_distribs[d], array_of_dargs[d],
                       array_of_psizes[d], coords[d], unit, &off, call);
        disp += (MPI_Aint)off * unit;
        unit *= array_of_gsizes[d];
    }
    free(coords);
    if (e == MPI_SUCCESS)
        e = place(&t, disp, unit, newtype);
    else if (t != oldtype && t != MPI_DATATYPE_NULL)
        MPI_Type_free(&t);
    if (e != MPI_SUCCESS)
        return e;
    int ni = 4 * ndims + 4;
    int *ints = malloc(sizeof(int) * (size_t)ni);
    if (ints == NULL) {
        MPI_Type_free(newtype);
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory", call);
    }
    ints[0] = size;
    ints[1] = rank;
    ints[2] = ndims;
    for (int d = 0; d < ndims; d++) {
        ints[3 + d] = array_of_gsizes[d];
        ints[3 + ndims + d] = array_of_distribs[d];
        ints[3 + 2 * ndims + d] = array_of_dargs[d];
        ints[3 + 3 * ndims + d] = array_of_psizes[d];
    }
    ints[3 + 4 * ndims] = order;
    e = mpi_dt_set_env(*newtype, MPI_COMBINER_DARRAY, ni, ints, 0, NULL, 1, &oldtype);
    free(ints);
    if (e != MPI_SUCCESS) {
        MPI_Type_free(newtype);
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory", call);
    }
    return MPI_SUCCESS;
}
