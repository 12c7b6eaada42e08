/*
 * tern's MPI layer: state shared by its files (docs/mpi.md).
 *
 * One tern context per process (tern_init in MPI_Init); the MPI calls use
 * its default worker (MPI_THREAD_SERIALIZED at most so far).  Handles are
 * small ints: a communicator indexes mpi_comms, a request mpi_reqs (+1, so
 * that 0 is MPI_REQUEST_NULL).  A communicator's point-to-point traffic
 * goes in its tern matching space, its collectives' in the next one.
 */
#ifndef TERN_MPI_INTERNAL_H
#define TERN_MPI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>

#include <mpi.h>
#include <tern/tern.h>

#define MPI_SPACE_BASE 16 /* spaces below are tern's users' own */

/* Context ids: id i is the pair of spaces MPI_SPACE_BASE + 2i (point to
 * point) and + 1 (collectives); WORLD has 0, SELF 1.  A new communicator
 * takes the lowest id free on every rank of its parent (an allreduce of
 * the free masks, comm.c). */
#define MPI_CONTEXT_IDS 2048

typedef struct mpi_comm {
    bool used;
    int size, rank;           /* in the communicator */
    int *ranks;               /* communicator rank -> tern peer id */
    bool identity;            /* ranks[i] == i (MPI_COMM_WORLD and its dups) */
    int context;              /* context id */
    uint16_t space;           /* point to point; space + 1: collectives */
    MPI_Errhandler errh;
    uint32_t nbc_seq;         /* non-blocking collectives started: their tags (coll_nb.c) */
} mpi_comm_t;

#define MPI_MAX_COMMS 4096

/* REQ_TERN: a tern operation under way; REQ_SCHED: an operation driven by
 * its own progress function (non-blocking collectives); REQ_DONE: the
 * final status is in the entry. */
enum mpi_req_kind { REQ_FREE = 0, REQ_TERN, REQ_DONE, REQ_SCHED };

typedef struct mpi_req mpi_req_t;
struct mpi_req {
    enum mpi_req_kind kind;
    bool recv, freed;         /* freed: MPI_Request_free, reaped when it completes */
    tern_request_t *r;        /* REQ_TERN */
    MPI_Comm comm;
    MPI_Status status;        /* REQ_DONE: the final status */
    int err;                  /* REQ_DONE: its error class */
    /* REQ_TERN: called once the tern operation finished, the entry's status
     * and err set, before it turns REQ_DONE (unpack a staging buffer, free
     * aux); may change status and err */
    void (*finish)(mpi_req_t *q);
    /* REQ_SCHED: one progress step, never blocking; true once finished,
     * with status and err set (aux released) */
    bool (*progress)(mpi_req_t *q);
    void *aux;                /* the owner's state: staging buffer, schedule */
};

typedef struct mpi_state {
    int init, finalized;      /* 0 / 1 */
    int thread_level;
    pthread_t main_thread;    /* MPI_Init's */
    tern_context_t *ctx;
    tern_worker_t *w;
    mpi_comm_t *comms;        /* by handle: 0 NULL, 1 WORLD, 2 SELF, then created ones */
    int ncomms;
    unsigned char ctx_free[MPI_CONTEXT_IDS / 8]; /* bit set: context id free here */
    mpi_req_t *reqs;
    int nreqs, free_hint;
    int nfreed;               /* entries MPI_Request_free let go, not yet finished */
    char last_error[MPI_MAX_ERROR_STRING];
} mpi_state_t;

extern mpi_state_t mpi;

/* errors.c: the error class of a tern status; raise: record the message,
 * call the communicator's handler (fatal: abort the job), return the class */
int mpi_class_of(tern_status_t st);
int mpi_raise(MPI_Comm comm, int errclass, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* raise for a failed tern call: its class, tern_last_error()'s message */
int mpi_raise_tern(MPI_Comm comm, tern_status_t st, const char *call);

/* checks: an initialised library, a valid communicator, datatype, count,
 * rank (peer or MPI_PROC_NULL; any source allowed when any) and tag */
int mpi_check_init(const char *call);
mpi_comm_t *mpi_comm_get(MPI_Comm comm);
int mpi_check_comm(MPI_Comm comm, const char *call);
int mpi_type_size(MPI_Datatype dt); /* bytes of a predefined type; 0: not one */
/* datatype.c: count elements of dt packed contiguously (buffered sends,
 * staging): their size, pack into out, unpack len bytes of in into buf
 * (what fits; returns bytes taken) */
size_t mpi_dt_pack_size(int count, MPI_Datatype dt);
size_t mpi_dt_pack(const void *buf, int count, MPI_Datatype dt, void *out);
size_t mpi_dt_unpack(const void *in, size_t len, void *buf, int count, MPI_Datatype dt);
/* is dt's typemap one block of mpi_type_size(dt) bytes at offset 0 with
 * extent == size (count of them are count * size contiguous bytes); its
 * extent; dt as n consecutive elements of one predefined type (reductions;
 * -1 when it is not) */
bool mpi_dt_is_contig(MPI_Datatype dt);
MPI_Aint mpi_dt_extent(MPI_Datatype dt);
int mpi_dt_basic(MPI_Datatype dt, MPI_Datatype *basic, int *n);
int mpi_check_buf(MPI_Comm comm, const void *buf, int count, MPI_Datatype dt, const char *call);
int mpi_check_rank(MPI_Comm comm, int rank, bool any, const char *call);
int mpi_check_tag(MPI_Comm comm, int tag, bool any, const char *call);

/* a tern receive's result as an MPI status (source in the communicator) */
void mpi_status_from(MPI_Status *s, mpi_comm_t *c, const tern_recv_info_t *info, int err);
void mpi_status_empty(MPI_Status *s, int source);

/* p2p.c: requests; those MPI_Request_free let go, reaped when finished
 * (wait: all, at MPI_Finalize) */
int mpi_req_new(MPI_Request *out);
mpi_req_t *mpi_req_get(MPI_Request h); /* NULL: not an active handle */
/* start a send (mode: MPI_SEND_STANDARD / _SYNC) or a receive; checks the
 * arguments (raising as call), *out a request (MPI_PROC_NULL: done) */
enum { MPI_SEND_STANDARD, MPI_SEND_SYNC };
int mpi_isend_start(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                    MPI_Comm comm, int mode, MPI_Request *out, const char *call);
int mpi_irecv_start(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
                    MPI_Request *out, const char *call);
void mpi_reap_freed(bool wait);

/* op.c: is op valid for dt (raises otherwise); does it commute; in op inout */
int mpi_op_check(MPI_Op op, MPI_Datatype dt, MPI_Comm comm, const char *call);
bool mpi_op_commutes(MPI_Op op);
void mpi_op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt);

/* coll_nb.c: move the non-blocking collectives under way on, once (cheap
 * when there are none: a loop that blocks waiting for something else
 * should call it, its peers may wait for a schedule's next round); run
 * them to their end (MPI_Finalize) */
void mpi_coll_progress(void);
void mpi_coll_finalize(void);

/* init / finalize of the communicator and request tables (comm.c) */
int mpi_comms_init(void);
void mpi_comms_finalize(void);

#endif
