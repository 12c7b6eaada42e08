/*
 * Communicator creation's shared steps (comm_ctx.c), for the creating
 * calls of comm.c and comm_create.c.
 */
#ifndef TERN_MPI_COMM_CTX_H
#define TERN_MPI_COMM_CTX_H

#include "mpi/mpi_internal.h"

#pragma GCC visibility push(hidden)

/* A creation on this rank begins: the MPI_Comm_idup's under way here run
 * to their end first (their context ids must be known before another is
 * chosen).  MPI_THREAD_MULTIPLE: refused (MPI_ERR_UNSUPPORTED_OPERATION,
 * raised on parent) while another thread creates one.  end: over. */
int mpi_create_begin(MPI_Comm parent, const char *call);
void mpi_create_end(void);

/* The context id agreement of n processes (procs: tern peer ids, this one
 * at me) that leaves out parent's other ranks (MPI_Comm_create_group,
 * MPI_Comm_idup): each sends its free ids to every other one at start, on
 * parent's worker, in its collective space with tag (above the 31 bits
 * the collectives' tags take), and needs nothing more of the others once
 * they started theirs, so a peer never waits for this one's progress.
 * Once every mask is in, the communicator of procs (taken over) is made,
 * with parent's error handler, its handle in *out (MPI_COMM_NULL when the
 * agreement failed).  pending: an MPI_Comm_idup's (mpi_ctx_drain
 * completes it; the caller's poll then sees it done). */
typedef struct mpi_xchg mpi_xchg_t;
int mpi_xchg_start(MPI_Comm parent, int *procs, int n, int me, uint64_t tag, bool pending,
                   MPI_Comm *out, const char *call, mpi_xchg_t **x);
/* Moved on once, never blocking; true once done, with *err its class
 * (not raised: mpi_xchg_msg says why it failed).  Then its owner frees it
 * (a done one is out of the pending list). */
bool mpi_xchg_poll(mpi_xchg_t *x, int *err);
const char *mpi_xchg_msg(const mpi_xchg_t *x);
void mpi_xchg_free(mpi_xchg_t *x);

/* tags of the agreement in a parent's collective space (>= 2^32) */
#define MPI_XCHG_TAG_IDUP (1ull << 32)
#define MPI_XCHG_TAG_GROUP (2ull << 32) /* | MPI_Comm_create_group's tag */

#pragma GCC visibility pop

#endif
