/*
 * Datatypes: the predefined ones (a handle's low byte is its size, its
 * next bits an index) and the packing helpers the rest of the layer uses
 * (buffered sends, collectives' staging).  Derived types: issue 13.
 */
#include <string.h>

#include "mpi/mpi_internal.h"

/* the predefined types: index (high bits) -> size (low byte) */
int mpi_type_size(MPI_Datatype dt)
{
    int idx = dt >> 8, size = dt & 0xff;
    if (idx < 1 || idx > 0x25 || (dt & ~0xffff) != 0)
        return 0;
    return size;
}

int MPI_Type_size(MPI_Datatype datatype, int *size)
{
    int e = mpi_check_init("MPI_Type_size");
    if (e != MPI_SUCCESS)
        return e;
    int s = mpi_type_size(datatype);
    if (s == 0)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Type_size: datatype %#x is not a "
                         "predefined type (derived types are not supported yet)", datatype);
    if (size == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_size: NULL size pointer");
    *size = s;
    return MPI_SUCCESS;
}

int mpi_check_buf(MPI_Comm comm, const void *buf, int count, MPI_Datatype dt, const char *call)
{
    if (count < 0)
        return mpi_raise(comm, MPI_ERR_COUNT, "%s: count %d", call, count);
    if (mpi_type_size(dt) == 0)
        return mpi_raise(comm, MPI_ERR_TYPE, "%s: datatype %#x is not a predefined type "
                         "(derived types are not supported yet)", call, dt);
    if (buf == NULL && count > 0)
        return mpi_raise(comm, MPI_ERR_BUFFER, "%s: NULL buffer for %d elements", call, count);
    return MPI_SUCCESS;
}

size_t mpi_dt_pack_size(int count, MPI_Datatype dt)
{
    return (size_t)count * (size_t)mpi_type_size(dt);
}

size_t mpi_dt_pack(const void *buf, int count, MPI_Datatype dt, void *out)
{
    size_t n = mpi_dt_pack_size(count, dt);
    if (n)
        memcpy(out, buf, n);
    return n;
}

size_t mpi_dt_unpack(const void *in, size_t len, void *buf, int count, MPI_Datatype dt)
{
    size_t n = mpi_dt_pack_size(count, dt);
    if (len < n)
        n = len;
    if (n)
        memcpy(buf, in, n);
    return n;
}

bool mpi_dt_is_contig(MPI_Datatype dt)
{
    return mpi_type_size(dt) > 0;
}

MPI_Aint mpi_dt_extent(MPI_Datatype dt)
{
    return mpi_type_size(dt);
}

int mpi_dt_basic(MPI_Datatype dt, MPI_Datatype *basic, int *n)
{
    if (mpi_type_size(dt) == 0)
        return -1;
    *basic = dt;
    *n = 1;
    return 0;
}
