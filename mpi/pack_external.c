/*
 * MPI_Pack_external / MPI_Unpack_external / MPI_Pack_external_size with
 * the "external32" representation (MPI-3.1 4.2 and 13.5.2): big-endian,
 * with the standard's sizes.  On the hosts tern builds for (LP64 Linux)
 * every predefined type but MPI_LONG_DOUBLE already has its external32
 * size, so the external form is the native packed form (datatype.c's, in
 * typemap order) with each basic element's bytes reversed on a
 * little-endian host, part by part for a complex number (real, then
 * imaginary part, each big-endian).  MPI_LONG_DOUBLE's native format is not
 * IEEE binary128 (x87's 80 bits on x86-64): it and the complex numbers made
 * of it are refused with MPI_ERR_TYPE rather than sent wrong (MPI_REAL16
 * and MPI_COMPLEX32 are binary128 already).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

static int check_rep(const char *datarep, const char *call)
{
    if (datarep == NULL || strcmp(datarep, "external32") != 0)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: data representation '%s' (only "
                         "\"external32\")", call, datarep != NULL ? datarep : "(null)");
    return MPI_SUCCESS;
}

/* the type of dt, refused when it holds a basic type external32 cannot carry */
static const mpi_dtype_t *external_type(MPI_Datatype dt, mpi_dt_view_t *v, int *e,
                                        const char *call)
{
    const mpi_dtype_t *t = mpi_dt_lookup(dt, v);
    if (t == NULL) {
        *e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "%s: datatype %#x is not a valid datatype",
                       call, (unsigned)dt);
        return NULL;
    }
    for (int i = 0; i < t->nruns; i++) {
        MPI_Datatype b = t->runs[i].type;
        if (b == MPI_LONG_DOUBLE || b == MPI_C_LONG_DOUBLE_COMPLEX ||
            b == MPI_CXX_LONG_DOUBLE_COMPLEX) {
            *e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "%s: %s has no external32 form here "
                           "(the native long double is not IEEE binary128)", call,
                           b == MPI_LONG_DOUBLE ? "MPI_LONG_DOUBLE"
                                                : "a complex type of long doubles");
            return NULL;
        }
    }
    *e = MPI_SUCCESS;
    return t;
}

/* Reverse the bytes of every basic element of count elements of t packed
 * at p (its own inverse: packing and unpacking both use it). */
static void swap_elements(char *p, int count, const mpi_dtype_t *t)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    (void)p, (void)count, (void)t; /* big-endian already */
#else
    for (int c = 0; c < count; c++)
        for (int i = 0; i < t->nruns; i++) {
            /* a complex number's parts one by one */
            int s = mpi_predef_unit(t->runs[i].type);
            MPI_Aint parts = t->runs[i].n * (mpi_predef_size(t->runs[i].type) / s);
            for (MPI_Aint k = 0; k < parts; k++, p += s)
                for (int a = 0, b = s - 1; a < b; a++, b--) {
                    char x = p[a];
                    p[a] = p[b];
                    p[b] = x;
                }
        }
#endif
}

int MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                           MPI_Aint *size)
{
    static const char call[] = "MPI_Pack_external_size";
    int e = mpi_check_init(call);
    if (e == MPI_SUCCESS)
        e = check_rep(datarep, call);
    if (e != MPI_SUCCESS)
        return e;
    if (incount < 0 || size == NULL)
        return mpi_raise(MPI_COMM_WORLD, incount < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG,
                         "%s: count %d, size %p", call, incount, (void *)size);
    mpi_dt_view_t v;
    const mpi_dtype_t *t = external_type(datatype, &v, &e, call);
    if (t == NULL)
        return e;
    *size = (MPI_Aint)incount * t->size;
    return MPI_SUCCESS;
}

/* The checks both directions make: the representation, count elements of a
 * committed type external32 can carry from *position, within size bytes;
 * the type, or NULL with *e set. */
static const mpi_dtype_t *pack_args(const char *datarep, int count, MPI_Datatype datatype,
                                    const MPI_Aint *position, MPI_Aint size, mpi_dt_view_t *v,
                                    MPI_Aint *need, int *e, const char *call)
{
    *e = mpi_check_init(call);
    if (*e == MPI_SUCCESS)
        *e = check_rep(datarep, call);
    if (*e != MPI_SUCCESS)
        return NULL;
    if (count < 0 || position == NULL || *position < 0) {
        *e = mpi_raise(MPI_COMM_WORLD, count < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG,
                       "%s: count %d, position %ld", call, count,
                       position != NULL ? (long)*position : -1L);
        return NULL;
    }
    const mpi_dtype_t *t = external_type(datatype, v, e, call);
    if (t == NULL)
        return NULL;
    if (!t->committed) {
        *e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "%s: datatype %#x is not committed", call,
                       (unsigned)datatype);
        return NULL;
    }
    *need = (MPI_Aint)count * t->size;
    if (*need > size - *position) {
        *e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_TRUNCATE, "%s: %ld bytes at position %ld, the "
                       "buffer has %ld", call, (long)*need, (long)*position, (long)size);
        return NULL;
    }
    return t;
}

int MPI_Pack_external(const char datarep[], const void *inbuf, int incount,
                      MPI_Datatype datatype, void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    static const char call[] = "MPI_Pack_external";
    mpi_dt_view_t v;
    MPI_Aint need = 0;
    int e;
    const mpi_dtype_t *t =
        pack_args(datarep, incount, datatype, position, outsize, &v, &need, &e, call);
    if (t == NULL)
        return e;
    if (need > 0 && ((inbuf == NULL && mpi_dt_predefined(datatype)) || outbuf == NULL))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_BUFFER, "%s: NULL buffer", call);
    char *out = (char *)outbuf + *position;
    mpi_dt_pack_t(inbuf, incount, t, out);
    swap_elements(out, incount, t);
    *position += need;
    return MPI_SUCCESS;
}

int MPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                        MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
    static const char call[] = "MPI_Unpack_external";
    mpi_dt_view_t v;
    MPI_Aint need = 0;
    int e;
    const mpi_dtype_t *t =
        pack_args(datarep, outcount, datatype, position, insize, &v, &need, &e, call);
    if (t == NULL)
        return e;
    if (need == 0)
        return MPI_SUCCESS;
    if (inbuf == NULL || (outbuf == NULL && mpi_dt_predefined(datatype)))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_BUFFER, "%s: NULL buffer", call);
    /* swap a copy: the input is the caller's, read-only */
    char *tmp = malloc((size_t)need);
    if (tmp == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: %ld bytes", call, (long)need);
    memcpy(tmp, (const char *)inbuf + *position, (size_t)need);
    swap_elements(tmp, outcount, t);
    mpi_dt_unpack_t(tmp, (size_t)need, outbuf, outcount, t);
    free(tmp);
    *position += need;
    return MPI_SUCCESS;
}
