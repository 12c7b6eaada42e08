/*
 * What the collectives' files share (coll.c: blocking collectives and the
 * pieces below; coll_long.c: the long-message algorithms; coll_nb.c: the
 * non-blocking collectives' schedules).
 */
#ifndef TERN_MPI_COLL_H
#define TERN_MPI_COLL_H

#include <limits.h>

#include "mpi/mpi_internal.h"

/* Tags in a communicator's collective space: the blocking collectives'
 * (the barrier's rounds take 0..31), and from NB_TAG_BASE one per
 * non-blocking collective, from the communicator's sequence number. */
enum { TAG_BCAST = 40, TAG_REDUCE, TAG_ALLREDUCE, TAG_GATHER, TAG_SCATTER, TAG_ALLGATHER,
       TAG_ALLTOALL, TAG_SCAN, TAG_INTER_BARRIER, TAG_INTER_RED_SCAT };
#define NB_TAG_BASE 0x10000
#define NB_TAG_SPAN 0x100000 /* tags NB_TAG_BASE + seq mod this */

typedef struct coll {
    MPI_Comm comm;
    mpi_comm_t *c;
    uint16_t space;
    tern_worker_t *w;         /* the communicator's */
    const char *call;
} coll_t;

int coll_start(coll_t *k, MPI_Comm comm, const char *call);
int coll_check_root(const coll_t *k, int root);
int coll_fail(const coll_t *k, tern_status_t st);
/* blocking point to point in the collective space (progressing the
 * schedules under way meanwhile); sendrecv posts its receive first */
int coll_send(const coll_t *k, const void *buf, size_t len, int to, int tag);
int coll_recv(const coll_t *k, void *buf, size_t len, int from, int tag);
int coll_sendrecv(const coll_t *k, const void *sbuf, size_t slen, int to, void *rbuf,
                  size_t rlen, int from, int tag);
void *coll_tmp(size_t len); /* malloc, never of 0 bytes; large ones from a cache */
void coll_tmp_free(void *p); /* free, or back to the cache */
/* a buffer argument of k's call (MPI_IN_PLACE accepted) */
int coll_check_buf(const coll_t *k, const void *buf, int count, MPI_Datatype dt);
/* counts (returned, malloc'd with *displs after them) of size equal
 * blocks of n, for the non-v forms; NULL: no memory */
int *coll_equal_blocks(int size, int n, int **displs);

/* coll_buf.c: size thresholds (docs/mpi.md), the settings MPI_Init read
 * (mpi.cfg): TERN_MPI_BCAST_LONG, TERN_MPI_BCAST_MIN_PROCS,
 * TERN_MPI_ALLREDUCE_LONG */
enum { THR_BCAST_LONG, THR_BCAST_MIN_PROCS, THR_ALLREDUCE_LONG, THR_N };
size_t coll_threshold(int which);

/* count elements of dt at buf as bytes: in place when contiguous, else a
 * staging buffer (packed from buf when pack), unpacked to buf at the end
 * when unpack, then freed */
typedef struct coll_stage {
    char *bytes;
    size_t len;
    bool staged;
} coll_stage_t;
int coll_stage_in(const coll_t *k, const void *buf, int count, MPI_Datatype dt, bool pack,
                  coll_stage_t *s);
void coll_stage_out(coll_stage_t *s, void *buf, int count, MPI_Datatype dt, bool unpack);
/* count elements of dt at buf to / from peer (a rank of k's communicator,
 * its remote group's on an intercommunicator), staged when not contiguous */
int coll_block_send(const coll_t *k, const void *buf, int count, MPI_Datatype dt, int to, int tag);
/* A gather's or a scatter's arguments, as the two mirror each other: each
 * process's own block (one: a gather's send buffer, a scatter's receive
 * buffer) and the root's blocks, one per process (many: count, or counts
 * and displs in extents of the type).  Only the receiving side's buffer is
 * written (gather: many; scatter: one). */
typedef struct coll_rooted {
    const char *call;
    bool gather; /* to the root; else from it */
    void *one;
    int one_count;
    MPI_Datatype one_type;
    void *many;
    int many_count;
    const int *counts, *displs;
    MPI_Datatype many_type;
} coll_rooted_t;
int coll_block_recv(const coll_t *k, void *buf, int count, MPI_Datatype dt, int from, int tag);
/* widen [*lo, *hi) to the bytes count elements of dt at offset at touch
 * (true bounds: an element may reach past its extent, or before its lb) */
void coll_span(int count, MPI_Datatype dt, MPI_Aint at, MPI_Aint *lo, MPI_Aint *hi);

/* A reduction's working buffer: n elements of t (the type op is applied
 * to) at stride ext, len bytes.  DIRECT: the user's own layout (t is the
 * datatype, or the pair type of MAXLOC-like types); PACK: a type made of
 * predefined elements, packed to them; IMAGE: any other type with a user
 * op, an image of count extents made by pack / unpack. */
enum { RED_DIRECT, RED_PACK, RED_IMAGE };
typedef struct coll_red {
    int how;
    MPI_Datatype dt, t;
    int count, n;
    size_t ext, len;
    MPI_Op op;
} coll_red_t;

/* checks op against dt (raising as k's call) and fills r */
int coll_red_init(const coll_t *k, coll_red_t *r, int count, MPI_Datatype dt, MPI_Op op);
/* the checks every reduction makes (root COLL_ALL_RANKS: all ranks
 * receive), then coll_red_init */
#define COLL_ALL_RANKS INT_MIN
int coll_red_args(coll_t *k, MPI_Comm comm, const char *call, const void *sendbuf,
                  const void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                  coll_red_t *r);
/* two working buffers of r->len bytes, the first loaded from user (unless
 * NULL) */
int coll_red_bufs(const coll_t *k, const coll_red_t *r, const void *user, char **a, char **b);
/* count elements of the user's dt at user into work (len bytes), and back */
int coll_red_load(const coll_t *k, const coll_red_t *r, const void *user, void *work);
int coll_red_store(const coll_t *k, const coll_red_t *r, const void *work, void *user);
/* in op inout over elements [from, from + n) of the working buffers */
void coll_red_apply(const coll_red_t *r, const void *in, void *inout);
void coll_red_apply_part(const coll_red_t *r, const char *in, char *inout, int from, int n);

/* coll_long.c: scatter + ring allgather broadcast of len bytes; the
 * Rabenseifner allreduce of work (commutative op, r->n >= the largest
 * power of two <= size) with tmp of r->len bytes */
int coll_bcast_long(const coll_t *k, void *buf, size_t len, int root);
int coll_allreduce_long(const coll_t *k, const coll_red_t *r, char *work, char *tmp);
/* is the long algorithm the one for len bytes / for r (the blocking and
 * the non-blocking collectives choose alike); the byte where the bcast's
 * piece i of len bytes starts (size pieces, the last ones short or empty);
 * the first element of block blk when n elements are cut into pof2 blocks
 * (the first n % pof2 one longer) */
bool coll_bcast_is_long(const coll_t *k, size_t len);
size_t coll_bcast_piece(size_t len, int size, int i);
bool coll_allreduce_is_long(const coll_t *k, const coll_red_t *r);
int coll_block_first(int n, int pof2, int blk);

#endif
