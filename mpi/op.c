/*
 * Reduction operations: the predefined ones on the predefined types they
 * apply to, MAXLOC / MINLOC on the pair types, and user operations
 * (MPI_Op_create).  MPI_Op handles: the predefined are MPICH's (index 1
 * MPI_MAX .. 0xc MPI_MAXLOC), user ones made handles (index into user_ops).
 * As MPI says (and MPICH does), the
 * predefined operations take predefined types only (those of
 * MPI_Type_create_f90_* too): a derived type needs a user operation.
 * MPI_SUM and MPI_PROD take the complex types as well.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "mpi/mpi_internal.h"

#define USER_MAX 256

static struct {
    MPI_User_function *fn;
    bool commute, used;
} user_ops[USER_MAX];

/* a user operation's entry (used or not); -1: op is no made handle */
static int user_index(MPI_Op op)
{
    unsigned i = mpi_h_index(op);
    return mpi_h_is(op, MPI_HK_MADE, MPI_HT_OP) && i < USER_MAX ? (int)i : -1;
}
/* one of the predefined reductions (MPI_MAX .. MPI_MAXLOC, not MPI-3's
 * one-sided MPI_REPLACE / MPI_NO_OP) */
static bool predefined(MPI_Op op)
{
    unsigned i = mpi_h_index(op);
    return mpi_h_is(op, MPI_HK_BUILTIN, MPI_HT_OP) && i >= 1 && i <= 0xc;
}

#define ARITH(T)                                                                             \
    case MPI_SUM: for (int i = 0; i < n; i++) ((T *)io)[i] += ((const T *)in)[i]; return 0;  \
    case MPI_PROD: for (int i = 0; i < n; i++) ((T *)io)[i] *= ((const T *)in)[i]; return 0; \
    case MPI_MAX:                                                                            \
        for (int i = 0; i < n; i++)                                                          \
            if (((const T *)in)[i] > ((T *)io)[i]) ((T *)io)[i] = ((const T *)in)[i];        \
        return 0;                                                                            \
    case MPI_MIN:                                                                            \
        for (int i = 0; i < n; i++)                                                          \
            if (((const T *)in)[i] < ((T *)io)[i]) ((T *)io)[i] = ((const T *)in)[i];        \
        return 0;
#define LOGIC(T)                                                                             \
    case MPI_LAND: for (int i = 0; i < n; i++) ((T *)io)[i] = ((const T *)in)[i] && ((T *)io)[i]; return 0; \
    case MPI_LOR: for (int i = 0; i < n; i++) ((T *)io)[i] = ((const T *)in)[i] || ((T *)io)[i]; return 0;  \
    case MPI_LXOR: for (int i = 0; i < n; i++) ((T *)io)[i] = !((const T *)in)[i] != !((T *)io)[i]; return 0;
#define BITS(T)                                                                              \
    case MPI_BAND: for (int i = 0; i < n; i++) ((T *)io)[i] &= ((const T *)in)[i]; return 0; \
    case MPI_BOR: for (int i = 0; i < n; i++) ((T *)io)[i] |= ((const T *)in)[i]; return 0;  \
    case MPI_BXOR: for (int i = 0; i < n; i++) ((T *)io)[i] ^= ((const T *)in)[i]; return 0;
#define INTEGER(T)                                                                           \
    switch (op) {                                                                            \
    ARITH(T) LOGIC(T) BITS(T)                                                                \
    default: return -1;                                                                      \
    }
#define FLOATING(T)                                                                          \
    switch (op) {                                                                            \
    ARITH(T)                                                                                 \
    default: return -1;                                                                      \
    }
/* complex numbers have no order: MPI_SUM and MPI_PROD only */
#define COMPLEX(T)                                                                           \
    switch (op) {                                                                            \
    case MPI_SUM: for (int i = 0; i < n; i++) ((T *)io)[i] += ((const T *)in)[i]; return 0;  \
    case MPI_PROD: for (int i = 0; i < n; i++) ((T *)io)[i] *= ((const T *)in)[i]; return 0; \
    default: return -1;                                                                      \
    }

/* IEEE binary128 (Fortran's REAL*16): C23's _Float128 for gcc; clang (the
 * fuzzing build's compiler) has only the GNU name for it in C */
#if defined(__clang__)
#define MPI_F128 __float128
#else
#define MPI_F128 _Float128
#endif

/* in op io, elementwise: 0, or -1 when op does not apply to dt */
static int apply_predefined(MPI_Op op, const void *in, void *io, int n, MPI_Datatype dt)
{
    switch (dt) {
    case MPI_CHAR: case MPI_SIGNED_CHAR: case MPI_INT8_T: case MPI_INTEGER1: INTEGER(int8_t)
    case MPI_UNSIGNED_CHAR: case MPI_BYTE: case MPI_UINT8_T: case MPI_C_BOOL: case MPI_CXX_BOOL:
        INTEGER(uint8_t)
    case MPI_SHORT: case MPI_INT16_T: case MPI_INTEGER2: INTEGER(int16_t)
    case MPI_UNSIGNED_SHORT: case MPI_UINT16_T: INTEGER(uint16_t)
    case MPI_INT: case MPI_INT32_T: case MPI_INTEGER: case MPI_INTEGER4: case MPI_LOGICAL:
        INTEGER(int32_t)
    case MPI_UNSIGNED: case MPI_UINT32_T: case MPI_WCHAR: INTEGER(uint32_t)
    case MPI_LONG: case MPI_LONG_LONG_INT: case MPI_INT64_T: case MPI_INTEGER8: case MPI_AINT:
    case MPI_OFFSET: case MPI_COUNT:
        INTEGER(int64_t)
    case MPI_UNSIGNED_LONG: case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T: INTEGER(uint64_t)
    case MPI_FLOAT: case MPI_REAL: case MPI_REAL4: FLOATING(float)
    case MPI_DOUBLE: case MPI_DOUBLE_PRECISION: case MPI_REAL8: FLOATING(double)
    case MPI_LONG_DOUBLE: FLOATING(long double)
    case MPI_REAL16: FLOATING(MPI_F128) /* IEEE binary128, not x87's long double */
    case MPI_C_FLOAT_COMPLEX: case MPI_CXX_FLOAT_COMPLEX: case MPI_COMPLEX: case MPI_COMPLEX8:
        COMPLEX(float _Complex)
    case MPI_C_DOUBLE_COMPLEX: case MPI_CXX_DOUBLE_COMPLEX: case MPI_DOUBLE_COMPLEX:
    case MPI_COMPLEX16:
        COMPLEX(double _Complex)
    case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_CXX_LONG_DOUBLE_COMPLEX: COMPLEX(long double _Complex)
    case MPI_COMPLEX32: COMPLEX(MPI_F128 _Complex)
    default:
        return -1;
    }
}

/* The C struct of each pair type: the value first, then the index; the
 * greater (MAXLOC) or lesser (MINLOC) value wins, on a tie the lower index. */
#define LOC(T)                                                                               \
    {                                                                                        \
        typedef struct { T v; int i; } pair_t;                                               \
        const pair_t *a = in;                                                                \
        pair_t *b = io;                                                                      \
        for (int k = 0; k < n; k++)                                                          \
            if (op == MPI_MAXLOC ? a[k].v > b[k].v : a[k].v < b[k].v)                        \
                b[k] = a[k];                                                                 \
            else if (a[k].v == b[k].v && a[k].i < b[k].i)                                    \
                b[k].i = a[k].i;                                                             \
        return 0;                                                                            \
    }

/* Fortran's pairs: the index is of the value's type */
#define LOC2(T)                                                                              \
    {                                                                                        \
        typedef struct { T v, i; } pair_t;                                                   \
        const pair_t *a = in;                                                                \
        pair_t *b = io;                                                                      \
        for (int k = 0; k < n; k++)                                                          \
            if (op == MPI_MAXLOC ? a[k].v > b[k].v : a[k].v < b[k].v)                        \
                b[k] = a[k];                                                                 \
            else if (a[k].v == b[k].v && a[k].i < b[k].i)                                    \
                b[k].i = a[k].i;                                                             \
        return 0;                                                                            \
    }

/* in op io for MAXLOC / MINLOC: 0, or -1 when dt is not a pair type */
static int apply_loc(MPI_Op op, const void *in, void *io, int n, MPI_Datatype dt)
{
    switch (dt) {
    case MPI_2INTEGER: LOC2(int32_t)
    case MPI_2REAL: LOC2(float)
    case MPI_2DOUBLE_PRECISION: LOC2(double)
    case MPI_2INT: LOC(int)
    case MPI_FLOAT_INT: LOC(float)
    case MPI_DOUBLE_INT: LOC(double)
    case MPI_LONG_INT: LOC(long)
    case MPI_SHORT_INT: LOC(short)
    case MPI_LONG_DOUBLE_INT: LOC(long double)
    default:
        return -1;
    }
}

int mpi_op_check(MPI_Op op, MPI_Datatype dt, MPI_Comm comm, const char *call)
{
    int u = user_index(op);
    if (u >= 0 && user_ops[u].used)
        return MPI_SUCCESS;
    if (!predefined(op))
        return mpi_raise(comm, MPI_ERR_OP, "%s: operation %#x is not valid%s", call, (unsigned)op,
                         op == MPI_OP_NULL ? " (MPI_OP_NULL)" : "");
    if (op == MPI_MAXLOC || op == MPI_MINLOC) {
        if (apply_loc(op, NULL, NULL, 0, dt) != 0)
            return mpi_raise(comm, MPI_ERR_OP, "%s: MPI_%s applies to the pair types only "
                             "(MPI_2INT, MPI_DOUBLE_INT, ...), not to datatype %#x", call,
                             op == MPI_MAXLOC ? "MAXLOC" : "MINLOC", dt);
        return MPI_SUCCESS;
    }
    dt = mpi_dt_named(dt); /* an MPI_Type_create_f90_* type: its size-specific type */
    if (!mpi_dt_predefined(dt))
        return mpi_raise(comm, MPI_ERR_OP, "%s: predefined operation %#x on datatype %#x: "
                         "the predefined operations take predefined types only (MPI_MAXLOC / "
                         "MPI_MINLOC: pair types)", call, (unsigned)op, (unsigned)dt);
    /* one element of zeros through the operation: room for the largest
     * (a long double complex), aligned for it */
    _Alignas(32) char x[32] = {0}, y[32] = {0};
    if (apply_predefined(op, x, y, mpi_type_size(dt) ? 1 : 0, dt) != 0)
        return mpi_raise(comm, MPI_ERR_OP, "%s: operation %#x does not apply to datatype %#x",
                         call, (unsigned)op, (unsigned)dt);
    return MPI_SUCCESS;
}

bool mpi_op_valid(MPI_Op op)
{
    int u = user_index(op);
    return u >= 0 ? user_ops[u].used : predefined(op);
}

bool mpi_op_commutes(MPI_Op op)
{
    int u = user_index(op);
    return u < 0 || user_ops[u].commute;
}

void mpi_op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt)
{
    int u = user_index(op);
    if (u >= 0) {
        int n = count;
        MPI_Datatype t = dt;
        user_ops[u].fn((void *)in, inout, &n, &t);
        return;
    }
    /* all checked by mpi_op_check */
    if (op == MPI_MAXLOC || op == MPI_MINLOC) {
        (void)apply_loc(op, in, inout, count, dt);
        return;
    }
    (void)apply_predefined(op, in, inout, count, mpi_dt_named(dt));
}

int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    int e = mpi_check_init("MPI_Op_create");
    if (e != MPI_SUCCESS)
        return e;
    if (user_fn == NULL || op == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_create: NULL function or handle");
    mpi_table_lock(); /* MPI_THREAD_MULTIPLE: the table of user operations */
    for (int i = 0; i < USER_MAX; i++)
        if (!user_ops[i].used) {
            user_ops[i].used = true;
            user_ops[i].fn = user_fn;
            user_ops[i].commute = commute != 0;
            mpi_table_unlock();
            *op = mpi_h_make(MPI_HK_MADE, MPI_HT_OP, (unsigned)i);
            return MPI_SUCCESS;
        }
    mpi_table_unlock();
    return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Op_create: %d operations exist",
                     USER_MAX);
}

int MPI_Op_free(MPI_Op *op)
{
    int e = mpi_check_init("MPI_Op_free");
    if (e != MPI_SUCCESS)
        return e;
    int u = op != NULL ? user_index(*op) : -1;
    if (u < 0 || !user_ops[u].used)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_free: not a user operation");
    mpi_table_lock();
    user_ops[u].used = false;
    mpi_table_unlock();
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
