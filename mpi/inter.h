/*
 * What intercommunicator creation shares (inter.c, inter_make.c, the
 * dynamic processes' dyn_*.c): the two groups' steps and the processes'
 * identities.
 *
 * Each side of a new intercommunicator is an intracommunicator L with a
 * leader; only the two leaders talk across, over a link (a peer, a space
 * and a tag they agree on: peer_comm's collective space for
 * MPI_Intercomm_create, an intercommunicator's own for its dup, split,
 * create and merge, the layer's dynamic space for the calls of ports).
 * A step gathers or reduces over L at the leader, the leaders swap, and
 * the leader broadcasts what came back over L.
 */
#ifndef TERN_MPI_INTER_H
#define TERN_MPI_INTER_H

#include "mpi/mpi_internal.h"

#pragma GCC visibility push(hidden)

typedef struct mpi_link {
    tern_worker_t *w;
    int peer;                 /* the other leader's tern peer id */
    uint16_t space;
    uint64_t tag;
} mpi_link_t;

typedef struct mpi_sides {
    MPI_Comm L;               /* this side's group, an intracommunicator */
    int leader;               /* its rank in L */
    const mpi_link_t *link;   /* at the leader: to the other one (NULL: it has none, its
                               * arguments naming it were refused: this side fails) */
    MPI_Comm errcomm;         /* the user's communicator: errors are raised on it */
    const char *call;
} mpi_sides_t;

/* The leaders swap bytes (blocking, the receive posted first): len each
 * way, or (v) any length, *in malloc'd.  Errors raised on errcomm. */
int mpi_link_swap(const mpi_link_t *l, const void *out, size_t len, void *in, MPI_Comm errcomm,
                  const char *call);
int mpi_link_swapv(const mpi_link_t *l, const void *out, size_t olen, void **in, size_t *ilen,
                   MPI_Comm errcomm, const char *call);

/* Every member of L gets the other side's leader's len bytes (*theirs
 * malloc'd, *tlen its length): the leaders swap, the leader broadcasts. */
int mpi_sides_swap(const mpi_sides_t *s, const void *mine, size_t len, void **theirs,
                   size_t *tlen);
/* Every member of both sides (sides: an mpi_sides_t) gets the bitwise and
 * of everyone's len bytes in buf (in place): an mpi_ctx_and_fn. */
int mpi_sides_and(const void *sides, unsigned char *buf, size_t len);

/* A process as every process names it: its job (a 64-bit FNV-1a of the
 * job's name) and its rank there.  16 bytes on the wire. */
typedef struct mpi_ident {
    uint64_t job;
    int32_t rank;
    int32_t zero;
} mpi_ident_t;

/* dyn_peers.c: this process's; the tern peer id of one (-1: a process of
 * another job not reached yet) */
void mpi_ident_self(mpi_ident_t *id);
int mpi_ident_peer(const mpi_ident_t *id);
/* This process's tern port name (its port opened the first time): the
 * address its peers of other jobs connect to.  NULL: none (no netmod here
 * takes ports); why in msg. */
const char *mpi_dyn_self_port(char *msg, size_t msglen);
/* Reach the processes of ids[n] not reached yet (their port names at
 * names + i * TERN_PORT_NAME_MAX): the connecting side connects to each
 * and says who it is, the other waits until each of them has.  Both
 * sides see the same processes as not reached (a pair is reached from
 * both ends or from neither).  MPI_SUCCESS, or an error class with msg. */
int mpi_dyn_wire(const mpi_ident_t *ids, const char *names, int n, bool connector, char *msg,
                 size_t msglen);
/* The hellos that came in (a peer of another job saying who it is):
 * registered.  Every wait of the dynamic calls runs it. */
void mpi_dyn_pump(void);

/* inter.c: the leaders' link of the intercommunicator c (local rank 0 of
 * each group, in its collective space) and the sides of a creation on it
 * (L its hidden local group) */
void mpi_inter_sides(const mpi_comm_t *c, MPI_Comm comm, const char *call, mpi_link_t *link,
                     mpi_sides_t *s);

/* inter.c: a new intercommunicator between L's members and the other
 * side, from their identities (MPI_Intercomm_create, MPI_Comm_accept /
 * _connect): the processes of another job not reached yet are reached
 * (through their ports), the context id is agreed by both sides, and *out
 * made with errh.  local_err: this process's arguments were refused (it
 * was raised): it takes part, every process then fails. */
int mpi_inter_from_idents(const mpi_sides_t *s, int local_err, MPI_Errhandler errh,
                          MPI_Comm *out);

#pragma GCC visibility pop

#endif
