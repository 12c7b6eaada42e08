/*
 * Communicator creation's shared steps (comm_ctx.c), for the creating
 * calls of comm.c and comm_create.c.
 */
#ifndef TERN_MPI_COMM_CTX_H
#define TERN_MPI_COMM_CTX_H

#include "mpi/mpi_internal.h"

#pragma GCC visibility push(hidden)

/* The context id agreement of n processes (procs: tern peer ids, this one
 * at me) that leaves out parent's other ranks (MPI_Comm_create_group,
 * MPI_Comm_idup): each sends its free ids to every other one at start, on
 * parent's worker, in its collective space with tag (above the 31 bits
 * the collectives' tags take; bits 35 and up are the agreement's own), and
 * (create_group) needs nothing more of the others once they started
 * theirs, so a peer never waits for this one's progress (an idup's second
 * exchange does: every wait steps the idups, mpi_ctx_step_all).  Once
 * every mask is in, the
 * communicator of procs (taken over) is made, with parent's error
 * handler, its handle in *out (MPI_COMM_NULL when the agreement failed).
 * lsize > 0: parent is an intercommunicator, procs its local group (lsize
 * of them, this one at me) then its remote group, and the new
 * communicator is an intercommunicator of the same groups and side.
 * idup: an MPI_Comm_idup's, which waits for nothing: it checks its choice
 * in a second exchange and runs again when members' choices clashed
 * (comm_ctx.c); mpi_ctx_drain completes it.  Else a round of the
 * protocol mpi_comm_make runs (comm_ctx.c; a round some member could not
 * offer in ends with MPI_XCHG_AGAIN: pause with mpi_ctx_pause, start
 * another). */
typedef struct mpi_xchg mpi_xchg_t;
int mpi_xchg_start(MPI_Comm parent, int *procs, int n, int me, int lsize, uint64_t tag, bool idup,
                   MPI_Comm *out, const char *call, mpi_xchg_t **x);
#define MPI_XCHG_AGAIN (-1)
/* an MPI_Comm_idup waits out a pause between attempts: a wait must not
 * sleep for longer than a millisecond (mt.c) */
bool mpi_ctx_pausing(void);
/* Step every MPI_Comm_idup under way here once, from any wait (its peers
 * may be waiting for its second exchange); true when one moved on.  Under
 * MPI_THREAD_MULTIPLE, false at once if another thread steps them. */
bool mpi_ctx_step_all(void);
/* before round number round of a creation (0: none): a pause of random
 * length, progressing */
void mpi_ctx_pause(int round);
/* The context id agreement in rounds (comm_ctx.c): each round, this rank
 * offers its free ids when it holds the mask, with nextra (at most
 * MPI_CTX_EXTRA_MAX) bytes of its own after them, and and_fn (arg) ands
 * the whole over every process (an intercommunicator's: both groups).  It
 * ends with a round every process offered in (the lowest id free
 * everywhere taken here when member, -1 when none is free on some
 * process), or one given up: and_fn failed, or extra[0] (when nextra > 0)
 * is 0 on some process (nothing taken).  extra then holds the and of
 * everyone's; *id goes to mpi_comm_install / mpi_inter_install, or back
 * (mpi_ctx_give_back) if the creation fails before.  and_fn's status. */
typedef int mpi_ctx_and_fn(const void *arg, unsigned char *buf, size_t len);
#define MPI_CTX_EXTRA_MAX 2
int mpi_ctx_agree(mpi_ctx_and_fn *and_fn, const void *arg, unsigned char *extra, size_t nextra,
                  bool member, int *id);
void mpi_ctx_give_back(int id);
/* Moved on once, never blocking; true once done, with *err its class
 * (not raised: mpi_xchg_msg says why it failed).  Then its owner frees it
 * (a done one is out of the pending list). */
bool mpi_xchg_poll(mpi_xchg_t *x, int *err);
const char *mpi_xchg_msg(const mpi_xchg_t *x);
void mpi_xchg_free(mpi_xchg_t *x);

/* a mask of context ids: bit set, free */
#define MPI_CTX_MASK_BYTES (MPI_CONTEXT_IDS / 8)
/* the ids the rounds choose from, [0, MPI_CTX_ROUND_IDS); the rest are
 * MPI_Comm_idup's (comm_ctx.c) */
#define MPI_CTX_IDUP_IDS 512
#define MPI_CTX_ROUND_IDS (MPI_CONTEXT_IDS - MPI_CTX_IDUP_IDS)

/* A new communicator with context id id (taken here), its handle in *out:
 * an intracommunicator of ranks (size tern peer ids, this process at me),
 * or an intercommunicator of the local group lranks (this process at me)
 * and the remote group rranks, low its side's flag (inter.c).  The rank
 * lists are taken over (freed on failure: MPI_ERR_OTHER raised on
 * MPI_COMM_WORLD, the handle table being full).  Either goes through
 * worker 0 when a member is of another job. */
int mpi_comm_install(int *ranks, int size, int me, int id, MPI_Errhandler errh, MPI_Comm *out,
                     const char *call);
int mpi_inter_install(int *lranks, int lsize, int *rranks, int rsize, int me, int id,
                      MPI_Errhandler errh, bool low, MPI_Comm *out, const char *call);

/* tags of the agreement in a parent's collective space (>= 2^32) */
#define MPI_XCHG_TAG_IDUP (1ull << 32) /* | the idup's number on its parent << 44 */
#define MPI_XCHG_TAG_GROUP (2ull << 32) /* | MPI_Comm_create_group's tag */
/* the leaders' messages of MPI_Intercomm_create in peer_comm's collective
 * space: | the call's tag */
#define MPI_XCHG_TAG_INTER (3ull << 32)
/* the leaders' messages of a creation on an intercommunicator (its dup,
 * split, create, merge), in its collective space */
#define MPI_XCHG_TAG_INTERCOMM (4ull << 32)

#pragma GCC visibility pop

#endif
