/*
 * MPI_COMM_WORLD and MPI_COMM_SELF, rank translation, and the argument
 * checks every call shares (communicator, datatype, count, rank, tag).
 */
#include <stdlib.h>

#include "mpi/mpi_internal.h"

int mpi_comms_init(void)
{
    int size = tern_size(mpi.ctx), me = tern_rank(mpi.ctx);
    mpi_comm_t *w = &mpi.comms[MPI_COMM_WORLD], *s = &mpi.comms[MPI_COMM_SELF];
    w->ranks = malloc(sizeof(int) * (size_t)size);
    s->ranks = malloc(sizeof(int));
    if (w->ranks == NULL || s->ranks == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < size; i++)
        w->ranks[i] = i;
    *w = (mpi_comm_t){.used = true, .size = size, .rank = me, .ranks = w->ranks,
                      .space = MPI_SPACE_BASE, .errh = MPI_ERRORS_ARE_FATAL};
    s->ranks[0] = me;
    *s = (mpi_comm_t){.used = true, .size = 1, .rank = 0, .ranks = s->ranks,
                      .space = MPI_SPACE_BASE + 2, .errh = MPI_ERRORS_ARE_FATAL};
    return MPI_SUCCESS;
}

void mpi_comms_finalize(void)
{
    for (int i = 1; i < 3; i++) {
        free(mpi.comms[i].ranks);
        mpi.comms[i] = (mpi_comm_t){0};
    }
}

mpi_comm_t *mpi_comm_get(MPI_Comm comm)
{
    if (comm <= MPI_COMM_NULL || comm > MPI_COMM_SELF || !mpi.comms[comm].used)
        return NULL;
    return &mpi.comms[comm];
}

int mpi_check_init(const char *call)
{
    if (!mpi.init || mpi.finalized)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_OTHER, "%s: MPI is %s", call,
                         mpi.finalized ? "finalized" : "not initialized (MPI_Init first)");
    return MPI_SUCCESS;
}

int mpi_check_comm(MPI_Comm comm, const char *call)
{
    int e = mpi_check_init(call);
    if (e == MPI_SUCCESS && mpi_comm_get(comm) == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_COMM, "%s: communicator %d is not valid", call,
                      comm);
    return e;
}

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

int mpi_check_rank(MPI_Comm comm, int rank, bool any, const char *call)
{
    mpi_comm_t *c = mpi_comm_get(comm);
    if (rank == MPI_PROC_NULL || (any && rank == MPI_ANY_SOURCE) ||
        (rank >= 0 && rank < c->size))
        return MPI_SUCCESS;
    return mpi_raise(comm, MPI_ERR_RANK, "%s: rank %d (the communicator has %d)", call, rank,
                     c->size);
}

int mpi_check_tag(MPI_Comm comm, int tag, bool any, const char *call)
{
    if ((any && tag == MPI_ANY_TAG) || (tag >= 0 && tag <= MPI_TAG_UB_VALUE))
        return MPI_SUCCESS;
    return mpi_raise(comm, MPI_ERR_TAG, "%s: tag %d (0..%d%s)", call, tag, MPI_TAG_UB_VALUE,
                     any ? " or MPI_ANY_TAG" : "");
}

void mpi_status_from(MPI_Status *s, mpi_comm_t *c, const tern_recv_info_t *info, int err)
{
    if (s == MPI_STATUS_IGNORE)
        return;
    int src = info->source;
    for (int i = 0; i < c->size; i++) /* tern peer id -> communicator rank */
        if (c->ranks[i] == info->source) {
            src = i;
            break;
        }
    s->MPI_SOURCE = src;
    s->MPI_TAG = info->tag;
    s->MPI_ERROR = err;
    s->count_lo = (int)(info->length & 0x7fffffff);
    s->count_hi_and_cancelled = (int)((info->length >> 31) << 1);
}

void mpi_status_empty(MPI_Status *s, int source)
{
    if (s == MPI_STATUS_IGNORE)
        return;
    *s = (MPI_Status){.MPI_SOURCE = source, .MPI_TAG = MPI_ANY_TAG, .MPI_ERROR = MPI_SUCCESS};
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    int e = mpi_check_comm(comm, "MPI_Comm_rank");
    if (e == MPI_SUCCESS && rank == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Comm_rank: NULL rank pointer");
    if (e == MPI_SUCCESS)
        *rank = mpi_comm_get(comm)->rank;
    return e;
}

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    int e = mpi_check_comm(comm, "MPI_Comm_size");
    if (e == MPI_SUCCESS && size == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Comm_size: NULL size pointer");
    if (e == MPI_SUCCESS)
        *size = mpi_comm_get(comm)->size;
    return e;
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    int e = mpi_check_comm(comm1, "MPI_Comm_compare");
    if (e == MPI_SUCCESS)
        e = mpi_check_comm(comm2, "MPI_Comm_compare");
    if (e == MPI_SUCCESS && result == NULL)
        e = mpi_raise(comm1, MPI_ERR_ARG, "MPI_Comm_compare: NULL result pointer");
    if (e != MPI_SUCCESS)
        return e;
    mpi_comm_t *a = mpi_comm_get(comm1), *b = mpi_comm_get(comm2);
    if (comm1 == comm2)
        *result = MPI_IDENT;
    else if (a->size == b->size && a->ranks[0] == b->ranks[0]) /* WORLD / SELF of 1 rank */
        *result = MPI_CONGRUENT;
    else
        *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
}
