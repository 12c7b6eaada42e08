/*
 * Collectives over point to point, in the communicator's collective space
 * (its space + 1), so no user message ever matches them.
 */
#include "mpi/mpi_internal.h"

/* Dissemination barrier: ceil(log2 size) rounds; in round k each rank
 * sends to rank + 2^k and receives from rank - 2^k (tag k).  Messages of
 * one source are matched in order, so a fast rank's next barrier cannot be
 * taken for this one's. */
int MPI_Barrier(MPI_Comm comm)
{
    int e = mpi_check_comm(comm, "MPI_Barrier");
    if (e != MPI_SUCCESS)
        return e;
    mpi_comm_t *c = mpi_comm_get(comm);
    uint16_t space = (uint16_t)(c->space + 1);
    for (int k = 0, step = 1; step < c->size; k++, step <<= 1) {
        int to = c->ranks[(c->rank + step) % c->size];
        int from = c->ranks[(c->rank - step + c->size) % c->size];
        char token = 0;
        tern_request_t *r = NULL;
        tern_status_t st = tern_irecv(mpi.w, &token, 1, from, k, space, NULL, &r);
        if (st != TERN_OK && st != TERN_INPROGRESS)
            return mpi_raise_tern(comm, st, "MPI_Barrier");
        tern_status_t ss = tern_send(mpi.w, &token, 1, to, k, space);
        if (st == TERN_INPROGRESS)
            st = tern_wait(mpi.w, r, NULL);
        if (ss != TERN_OK)
            return mpi_raise_tern(comm, ss, "MPI_Barrier");
        if (st != TERN_OK)
            return mpi_raise_tern(comm, st, "MPI_Barrier");
    }
    return MPI_SUCCESS;
}
