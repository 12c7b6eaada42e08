/*
 * Small calls of several chapters that programs reach for:
 * MPI_Reduce_local and MPI_Op_commutative, MPI_Alloc_mem / MPI_Free_mem,
 * MPI_Request_get_status, MPI_Pcontrol, MPI_Aint_add / MPI_Aint_diff,
 * MPI_Type_match_size, and the MPI-1 names MPI-3 removed but MPICH still
 * exports (MPI_Address, MPI_Type_extent / _lb / _ub, MPI_Type_hindexed,
 * MPI_Type_struct, MPI_Errhandler_create / _get / _set), so that programs
 * written against them link.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/coll.h"

/* ---- reductions -------------------------------------------------------------- */

int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                     MPI_Op op)
{
    static const char call[] = "MPI_Reduce_local";
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    coll_t k = {.comm = MPI_COMM_SELF, .c = mpi_comm_get(MPI_COMM_SELF), .call = call};
    coll_red_t r;
    if ((e = coll_red_init(&k, &r, count, datatype, op)) != MPI_SUCCESS)
        return e;
    if (count == 0)
        return MPI_SUCCESS;
    if ((e = mpi_check_buf(MPI_COMM_SELF, inbuf, count, datatype, call)) != MPI_SUCCESS ||
        (e = mpi_check_buf(MPI_COMM_SELF, inoutbuf, count, datatype, call)) != MPI_SUCCESS)
        return e;
    char *a, *b;
    if ((e = coll_red_bufs(&k, &r, inbuf, &a, &b)) != MPI_SUCCESS)
        return e;
    e = coll_red_load(&k, &r, inoutbuf, b);
    if (e == MPI_SUCCESS) {
        coll_red_apply(&r, a, b); /* inoutbuf = inbuf op inoutbuf */
        e = coll_red_store(&k, &r, b, inoutbuf);
    }
    coll_tmp_free(a);
    coll_tmp_free(b);
    return e;
}

int MPI_Op_commutative(MPI_Op op, int *commute)
{
    int e = mpi_check_init("MPI_Op_commutative");
    if (e != MPI_SUCCESS)
        return e;
    if (commute == NULL || !mpi_op_valid(op))
        return mpi_raise(MPI_COMM_WORLD, commute == NULL ? MPI_ERR_ARG : MPI_ERR_OP,
                         "MPI_Op_commutative: %s", commute == NULL ? "NULL pointer"
                                                                   : "not an operation");
    *commute = mpi_op_commutes(op);
    return MPI_SUCCESS;
}

/* ---- memory, requests, profiling, addresses ------------------------------------- */

int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    (void)info;
    int e = mpi_check_init("MPI_Alloc_mem");
    if (e != MPI_SUCCESS)
        return e;
    if (size < 0 || baseptr == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Alloc_mem: size %ld", (long)size);
    /* cache-line aligned: what a registration or a window wants most */
    void *p = NULL;
    if (posix_memalign(&p, 64, size > 0 ? (size_t)size : 1) != 0)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Alloc_mem: %ld bytes",
                         (long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

int MPI_Free_mem(void *base)
{
    int e = mpi_check_init("MPI_Free_mem");
    if (e != MPI_SUCCESS)
        return e;
    free(base);
    return MPI_SUCCESS;
}

int MPI_Pcontrol(const int level, ...)
{
    (void)level; /* for profiling tools: the library itself has nothing to switch */
    return MPI_SUCCESS;
}

MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

int MPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    int e = mpi_check_init("MPI_Type_match_size");
    if (e != MPI_SUCCESS)
        return e;
    if (datatype == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_match_size: NULL pointer");
    /* Fortran's size-specific types, as MPICH answers */
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (typeclass == MPI_TYPECLASS_INTEGER)
        t = size == 1 ? MPI_INTEGER1 : size == 2 ? MPI_INTEGER2 : size == 4 ? MPI_INTEGER4
            : size == 8 ? MPI_INTEGER8 : MPI_DATATYPE_NULL;
    else if (typeclass == MPI_TYPECLASS_REAL)
        t = size == 4 ? MPI_REAL4 : size == 8 ? MPI_REAL8 : size == 16 ? MPI_REAL16
            : MPI_DATATYPE_NULL;
    else if (typeclass == MPI_TYPECLASS_COMPLEX)
        t = size == 8 ? MPI_COMPLEX8 : size == 16 ? MPI_COMPLEX16 : size == 32 ? MPI_COMPLEX32
            : MPI_DATATYPE_NULL;
    else
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_match_size: type class %d",
                         typeclass);
    if (t == MPI_DATATYPE_NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_match_size: no type of class %d "
                         "and %d bytes", typeclass, size);
    *datatype = t;
    return MPI_SUCCESS;
}

/* A status as Fortran's MPI_STATUS_SIZE integers: the C struct's five
 * ints in order (MPICH's layout, MPI_SOURCE at index 2 as MPI_SOURCE's
 * Fortran value says) */
int MPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    if (c_status == NULL || c_status == MPI_STATUS_IGNORE || f_status == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_c2f: no status");
    memcpy(f_status, c_status, sizeof(*c_status));
    return MPI_SUCCESS;
}

int MPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    if (f_status == NULL || c_status == NULL || c_status == MPI_STATUS_IGNORE)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_f2c: no status");
    memcpy(c_status, f_status, sizeof(*c_status));
    return MPI_SUCCESS;
}

/* ---- MPI-1 names ------------------------------------------------------------------ */

int MPI_Address(void *location, MPI_Aint *address)
{
    return MPI_Get_address(location, address);
}

int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_Aint lb;
    return MPI_Type_get_extent(datatype, &lb, extent);
}

int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint ext;
    return MPI_Type_get_extent(datatype, displacement, &ext);
}

int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint lb = 0, ext = 0;
    int e = MPI_Type_get_extent(datatype, &lb, &ext);
    if (e == MPI_SUCCESS && displacement != NULL)
        *displacement = lb + ext;
    return e;
}

int MPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return MPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements,
                                    oldtype, newtype);
}

int MPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                    MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return MPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements,
                                  array_of_types, newtype);
}

int MPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    return MPI_Comm_create_errhandler(function, errhandler);
}

int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return MPI_Comm_get_errhandler(comm, errhandler);
}

int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return MPI_Comm_set_errhandler(comm, errhandler);
}
