/*
 * Predefined datatypes made of parts, and the types of Fortran kinds.
 *
 * - Complex numbers (MPI_C_*_COMPLEX, MPI_CXX_*_COMPLEX, MPI_COMPLEX,
 *   MPI_DOUBLE_COMPLEX, MPI_COMPLEXn) are two reals, real part first:
 *   aligned as one real, byte-swapped real by real in external32, one
 *   basic element each (as MPICH counts them).
 * - Fortran's pairs for MPI_MAXLOC / MPI_MINLOC (MPI_2INTEGER, MPI_2REAL,
 *   MPI_2DOUBLE_PRECISION) are two basic elements of one type.
 * - MPI_Type_create_f90_integer / _real / _complex (MPI-3.1 16.2.5) give
 *   the type of a Fortran variable of kind selected_int_kind(r) /
 *   selected_real_kind(p, r): gfortran's kinds, which are MPI's
 *   size-specific types (INTEGER1..8, REAL4/8/16: 16 being IEEE binary128,
 *   not x87's 80-bit long double, which no size-specific type names).  As
 *   the standard's model has it (and MPICH does) each (p, r) is a type of
 *   its own: MPI_Type_get_envelope says MPI_COMBINER_F90_* and
 *   MPI_Type_get_contents gives p and r back; it is the library's, never
 *   freed, and the same (p, r) gives the same handle again.  It is stored
 *   as a derived type equal to its size-specific type (mpi_dt_named maps it
 *   back for the predefined reductions).
 */
#include <stdlib.h>

#include "mpi/mpi_internal.h"

int mpi_predef_parts(MPI_Datatype dt, MPI_Datatype *part)
{
    switch (dt) {
    case MPI_2INTEGER:
        *part = MPI_INTEGER;
        return 2;
    case MPI_2REAL:
        *part = MPI_REAL;
        return 2;
    case MPI_2DOUBLE_PRECISION:
        *part = MPI_DOUBLE_PRECISION;
        return 2;
    default:
        *part = dt;
        return 1;
    }
}

int mpi_predef_unit(MPI_Datatype dt)
{
    switch (dt) {
    case MPI_C_FLOAT_COMPLEX:
    case MPI_C_DOUBLE_COMPLEX:
    case MPI_C_LONG_DOUBLE_COMPLEX:
    case MPI_CXX_FLOAT_COMPLEX:
    case MPI_CXX_DOUBLE_COMPLEX:
    case MPI_CXX_LONG_DOUBLE_COMPLEX:
    case MPI_COMPLEX:
    case MPI_DOUBLE_COMPLEX:
    case MPI_COMPLEX8:
    case MPI_COMPLEX16:
    case MPI_COMPLEX32:
    case MPI_2INTEGER:
    case MPI_2REAL:
    case MPI_2DOUBLE_PRECISION:
        return mpi_predef_size(dt) / 2;
    default:
        return mpi_predef_size(dt);
    }
}

/* ---- MPI_Type_create_f90_* -------------------------------------------------- */

/* the (combiner, p, r) asked so far and their types; the table lock's */
typedef struct f90_type {
    int combiner, p, r;
    MPI_Datatype h;
} f90_type_t;
static f90_type_t *made;
static int nmade, capmade;

MPI_Datatype mpi_dt_named(MPI_Datatype dt)
{
    if (!mpi_h_is(dt, MPI_HK_MADE, MPI_HT_DATATYPE))
        return dt;
    const mpi_dtype_t *t = mpi_dt_get(dt);
    return t != NULL && t->permanent && t->nruns == 1 ? t->runs[0].type : dt;
}

/* The type for (combiner, p, r), named like `named`: the one made before,
 * or a new one.  MPI_SUCCESS, or the error raised. */
static int f90_type(int combiner, int p, int r, MPI_Datatype named, MPI_Datatype *out,
                    const char *call)
{
    mpi_table_lock();
    for (int i = 0; i < nmade; i++)
        if (made[i].combiner == combiner && made[i].p == p && made[i].r == r) {
            *out = made[i].h;
            mpi_table_unlock();
            return MPI_SUCCESS;
        }
    mpi_table_unlock();
    /* a one-element copy of the named type, committed, with the envelope
     * of the call (two threads asking at once may each make one: the
     * second is kept too, and either is correct) */
    MPI_Datatype h;
    int e = MPI_Type_contiguous(1, named, &h);
    if (e == MPI_SUCCESS)
        e = MPI_Type_commit(&h);
    if (e != MPI_SUCCESS)
        return e;
    const int ints[2] = {combiner == MPI_COMBINER_F90_INTEGER ? r : p, r};
    int ni = combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    if (mpi_dt_set_env(h, combiner, ni, ints, 0, NULL, 0, NULL) != MPI_SUCCESS) {
        MPI_Type_free(&h);
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory", call);
    }
    mpi_table_lock();
    if (nmade == capmade) {
        int cap = capmade ? 2 * capmade : 16;
        f90_type_t *m = realloc(made, sizeof(*m) * (size_t)cap);
        if (m == NULL) {
            mpi_table_unlock();
            MPI_Type_free(&h);
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory", call);
        }
        made = m;
        capmade = cap;
    }
    made[nmade++] = (f90_type_t){combiner, p, r, h};
    mpi_dt_get(h)->permanent = true; /* MPI_Type_free refuses it from now on */
    mpi_table_unlock();
    *out = h;
    return MPI_SUCCESS;
}

static int f90_args(MPI_Datatype *newtype, const char *call)
{
    int e = mpi_check_init(call);
    if (e == MPI_SUCCESS && newtype == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL datatype pointer", call);
    return e;
}

/* gfortran's selected_real_kind(p, r) as an MPI type of reals (REAL4, 8
 * or 16: the smallest with p decimal digits and a decimal exponent range
 * of r; MPI_UNDEFINED: no demand); MPI_DATATYPE_NULL: none */
static MPI_Datatype real_kind(int p, int r)
{
    static const struct {
        int p, r;
        MPI_Datatype dt;
    } kinds[] = {{6, 37, MPI_REAL4}, {15, 307, MPI_REAL8}, {33, 4931, MPI_REAL16}};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if ((p == MPI_UNDEFINED || p <= kinds[i].p) && (r == MPI_UNDEFINED || r <= kinds[i].r))
            return kinds[i].dt;
    return MPI_DATATYPE_NULL;
}

/* p and r as selected_real_kind takes them: either may be left out
 * (MPI_UNDEFINED), not both; none negative */
static int real_args(int p, int r, const char *call)
{
    if ((p == MPI_UNDEFINED && r == MPI_UNDEFINED) || (p < 0 && p != MPI_UNDEFINED) ||
        (r < 0 && r != MPI_UNDEFINED))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG,
                         "%s: precision %d and range %d (each >= 0 "
                         "or MPI_UNDEFINED, not both MPI_UNDEFINED)",
                         call, p, r);
    return MPI_SUCCESS;
}

int MPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_create_f90_real";
    int e = f90_args(newtype, call);
    if (e == MPI_SUCCESS)
        e = real_args(p, r, call);
    if (e != MPI_SUCCESS)
        return e;
    MPI_Datatype named = real_kind(p, r);
    if (named == MPI_DATATYPE_NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG,
                         "%s: no real type has %d decimal digits "
                         "and a decimal exponent range of %d (the largest, MPI_REAL16: 33 and "
                         "4931)",
                         call, p, r);
    return f90_type(MPI_COMBINER_F90_REAL, p, r, named, newtype, call);
}

int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_create_f90_complex";
    int e = f90_args(newtype, call);
    if (e == MPI_SUCCESS)
        e = real_args(p, r, call);
    if (e != MPI_SUCCESS)
        return e;
    MPI_Datatype real = real_kind(p, r);
    if (real == MPI_DATATYPE_NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG,
                         "%s: no complex type has parts of %d "
                         "decimal digits and a decimal exponent range of %d (the largest, "
                         "MPI_COMPLEX32: 33 and 4931)",
                         call, p, r);
    MPI_Datatype named = real == MPI_REAL4   ? MPI_COMPLEX8
                         : real == MPI_REAL8 ? MPI_COMPLEX16
                                             : MPI_COMPLEX32;
    return f90_type(MPI_COMBINER_F90_COMPLEX, p, r, named, newtype, call);
}

int MPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_create_f90_integer";
    int e = f90_args(newtype, call);
    if (e != MPI_SUCCESS)
        return e;
    /* selected_int_kind(r): the smallest with every integer of r decimal
     * digits (1 byte: 2, 2: 4, 4: 9, 8: 18) */
    MPI_Datatype named = r < 0     ? MPI_DATATYPE_NULL
                         : r <= 2  ? MPI_INTEGER1
                         : r <= 4  ? MPI_INTEGER2
                         : r <= 9  ? MPI_INTEGER4
                         : r <= 18 ? MPI_INTEGER8
                                   : MPI_DATATYPE_NULL;
    if (named == MPI_DATATYPE_NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG,
                         "%s: no integer type has a decimal range "
                         "of %d (0 to 18: MPI_INTEGER8 the largest)",
                         call, r);
    return f90_type(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, named, newtype, call);
}
