/*
 * The schedules of the non-blocking collectives (coll_nb.c runs them; the
 * collectives build them: coll_nb.c, coll_nb_gather.c, coll_alltoall.c,
 * coll_nb_red.c).  A schedule is a list of operations in rounds: the sends
 * and receives of a round are posted together (in the order they were
 * added: receives first where it matters), and once they all completed
 * the round's local steps run in order (reductions, copies, unpacks).
 * Everything a schedule reads after its start (staging buffers, packed
 * send data, the types it unpacks into) is its own, so the caller's
 * arguments (counts, displacements, types) may go as soon as the call
 * returns, and a derived type may be freed while it runs.
 */
#ifndef TERN_MPI_COLL_NB_H
#define TERN_MPI_COLL_NB_H

#include "mpi/coll.h"

#pragma GCC visibility push(hidden)

enum nb_kind { NB_SEND, NB_RECV, NB_REDUCE, NB_COPY, NB_UNPACK };

typedef struct nb_op {
    enum nb_kind kind;
    int round;
    int peer;           /* send, recv: tern peer id (the communicator may be freed first) */
    const char *src;    /* send, reduce (dst = src op dst), copy, unpack (packed bytes) */
    char *dst;          /* recv, reduce, copy, unpack (the user's buffer) */
    size_t len;         /* send, recv, copy, unpack */
    int from, n;        /* reduce: elements [from, from + n) (n < 0: all) */
    int count;          /* unpack: elements of t */
    mpi_dtype_t *t;     /* unpack: referenced until the schedule is freed */
    tern_request_t *r;  /* a send or receive under way */
} nb_op_t;

/* what is left to do once the last round ran */
enum nb_end { END_NONE, END_STORE, END_UNPACK };

typedef struct sched {
    coll_t k;
    /* what nb_add's peers are ranks of: k's communicator's ranks; an
     * intercommunicator's schedule switches between its local group's
     * and its remote group's (coll_nb_inter.c) */
    const int *peers;
    int tag, round;
    nb_op_t *ops;
    int nops, cap, cur, end; /* ops [cur, end): the round under way */
    bool posted, nomem;
    int err;
    coll_red_t red;
    char *work, *tmp;        /* reductions: working buffers; bcast: the staging buffer */
    coll_stage_t stage;
    enum nb_end fin;
    void *user;              /* END_STORE / END_UNPACK into */
    coll_red_t sred;         /* END_STORE: sred's elements at out (red, work by default) */
    char *out;
    int count;
    mpi_dtype_t *dt;         /* END_UNPACK: count of these (referenced) */
    MPI_Datatype held;       /* reductions: a handle of the schedule's own for
                              * red.dt (mpi_dt_hold), or MPI_DATATYPE_NULL */
    char **bufs;             /* nb_buf's, freed with the schedule */
    int nbufs, bufcap;
    char byte;               /* the barrier's messages */
} sched_t;

/* the checks every non-blocking collective starts with (comm, request) */
int nb_begin(coll_t *k, MPI_Comm comm, const char *call, MPI_Request *request);
/* a schedule on k's communicator with the next tag (NULL: raised
 * MPI_ERR_NO_MEM, *e its class) */
sched_t *nb_sched_new(const coll_t *k, int *e);
/* a reduction's schedule with its working buffers (work loaded from user) */
sched_t *nb_red_sched(const coll_t *k, const coll_red_t *r, const void *user, int *e);
/* one operation in the current round; peer: communicator rank */
void nb_add(sched_t *s, enum nb_kind kind, int peer, const void *src, void *dst, size_t len);
void nb_next_round(sched_t *s);
/* scratch of len bytes that lives as long as s (NULL: s->nomem set) */
void *nb_buf(sched_t *s, size_t len);
/* count elements of dt at buf to / from a peer in the current round:
 * a contiguous type in place, another packed now into a buffer of the
 * schedule's (send), or received into one and unpacked by the round's
 * local steps (recv) */
void nb_send_block(sched_t *s, int peer, const void *buf, int count, MPI_Datatype dt);
void nb_recv_block(sched_t *s, int peer, void *buf, int count, MPI_Datatype dt);
/* a local step: len packed bytes at src unpacked into count elements of dt
 * at dst (dt referenced) */
void nb_add_unpack(sched_t *s, const void *src, void *dst, size_t len, int count,
                   MPI_Datatype dt);
/* a rank's own block, from (scount, stype) to (rcount, rtype), now: what
 * fits */
int nb_copy_now(const coll_t *k, const void *src, int scount, MPI_Datatype stype, void *dst,
                int rcount, MPI_Datatype rtype);
/* the rounds of the binomial reduce of s->work to root (s->tmp beside it) */
void nb_reduce_rounds(sched_t *s, int root);
/* the request that carries s (s freed on failure), moved on once */
int nb_start(sched_t *s, MPI_Request *request);
void nb_sched_free(sched_t *s);

/* equal blocks of n for the non-v forms: counts and displacements, size
 * of each, one malloc (NULL: raised MPI_ERR_NO_MEM) */
int *nb_equal_blocks(const coll_t *k, int n, int **displs);

#pragma GCC visibility pop

#endif
