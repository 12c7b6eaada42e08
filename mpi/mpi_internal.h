/*
 * tern's MPI layer: state shared by its files (docs/mpi.md).
 *
 * One tern context per process (tern_init in MPI_Init); the MPI calls use
 * its default worker (MPI_THREAD_SERIALIZED at most so far).  Handles are
 * MPICH's (mpi/handle.h): a communicator's names its slot in mpi.comms, a
 * request's its entry in mpi.reqs.  A communicator's point-to-point traffic
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

#include "mpi/handle.h"

/* Everything declared below is the library's own: hidden, so that calls
 * between its files are direct, not through the PLT (the MPI_* entry
 * points, declared by mpi.h above, stay exported). */
#pragma GCC visibility push(hidden)

#define MPI_SPACE_BASE 16 /* spaces below are tern's users' own */

/* Context ids: id i is the pair of spaces MPI_SPACE_BASE + 2i (point to
 * point) and + 1 (collectives); WORLD has 0, SELF 1.  A new communicator
 * takes the lowest id free on every rank of its parent (an allreduce of
 * the free masks, comm.c). */
#define MPI_CONTEXT_IDS 2048
/* the dynamic processes' own traffic (dyn_*.c): hellos, connection
 * requests and the leaders' messages of the calls of ports, worker 0 */
#define MPI_SPACE_DYN (MPI_SPACE_BASE + 2 * MPI_CONTEXT_IDS)

/* The intercommunicator fields sit in padding the others leave, so that
 * the entry keeps its size (184 bytes): the slot-to-entry multiply on
 * point to point's fast path is one instruction at that size, and every
 * call pays it a few times (mpi_self: 6 instructions a message more at 192). */
typedef struct mpi_comm {
    bool used;
    bool inter;               /* an intercommunicator (inter.c) */
    /* the local group of an intercommunicator as an intracommunicator of
     * the layer's own (its collectives' local steps): same context id,
     * space and worker, never handed out */
    bool hidden;
    bool low;                 /* inter: this side is the low group (agreed at creation) */
    /* in the communicator; an intercommunicator's size and ranks are its
     * remote group's (the ranks point to point names), rank this
     * process's in its local group (inter.c) */
    int size, rank;
    int local;                /* inter: the slot of its hidden local group */
    int *ranks;               /* communicator rank -> tern peer id */
    bool identity;            /* ranks[i] == i (MPI_COMM_WORLD and its dups) */
    int context;              /* context id */
    uint16_t space;           /* point to point; space + 1: collectives */
    /* its worker: mpi_worker_for(context), or worker 0 when a member is
     * of another job (they are reached from worker 0 only: dynamic.c) */
    tern_worker_t *w;
    MPI_Errhandler errh;
    uint32_t nbc_seq;         /* non-blocking collectives started: their tags (coll_nb.c) */
    uint16_t idup_seq;        /* MPI_Comm_idup's started on it: their tags (comm_ctx.h) */
    char name[MPI_MAX_OBJECT_NAME]; /* MPI_Comm_set_name's (names.c); "" unless set */
} mpi_comm_t;

#define MPI_MAX_COMMS 4096
#define MPI_MAX_REQUESTS (1 << 18) /* requests under way at once (request.c) */

/* REQ_TERN: a tern operation under way; REQ_SCHED: an operation driven by
 * its own progress function (non-blocking collectives); REQ_DONE: the
 * final status is in the entry; REQ_PERSIST: a persistent request
 * (MPI_*_init, p2p_modes.c), kept until MPI_Request_free: MPI_Start runs
 * its operation as an ordinary request, inner, whose status it takes;
 * REQ_GREQ: a generalized request (greq.c), its callbacks in aux. */
enum mpi_req_kind { REQ_FREE = 0, REQ_TERN, REQ_DONE, REQ_SCHED, REQ_PERSIST, REQ_GREQ };
/* a persistent request's arguments freed, its type's hold let go (p2p_modes.c) */
void mpi_persist_free(void *aux);
/* greq.c: has MPI_Grequest_complete been called (then query_fn and free_fn
 * have run, the entry's status and err set); MPI_Cancel's call of cancel_fn */
typedef struct mpi_req mpi_req_t;
bool mpi_greq_poll(mpi_req_t *q);
int mpi_greq_cancel(mpi_req_t *q);

struct mpi_req {
    enum mpi_req_kind kind;
    bool recv, freed;         /* freed: MPI_Request_free, reaped when it completes */
    tern_request_t *r;        /* REQ_TERN */
    tern_worker_t *w;         /* REQ_TERN: the worker r is on */
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
    void *aux;                /* the owner's state: staging buffer, schedule;
                               * REQ_PERSIST: its arguments, freed with it */
    /* REQ_PERSIST: active from MPI_Start until its completion is taken;
     * inner the started operation (MPI_REQUEST_NULL once it finished, its
     * status and err then in this entry) */
    bool active;
    MPI_Request inner;
    int next;                 /* free entries, and freed ones: the next (index + 1) */
};

#define MPI_MAX_WORKERS 64 /* TERN_NUM_WORKERS' bound */

/* TERN_MPI_* (config.c; tern_info lists them), read by MPI_Init */
typedef struct mpi_config {
    uint64_t bcast_long;      /* TERN_MPI_BCAST_LONG: bytes */
    uint64_t bcast_min_procs; /* TERN_MPI_BCAST_MIN_PROCS: ranks */
    uint64_t allreduce_long;  /* TERN_MPI_ALLREDUCE_LONG: bytes */
    uint64_t connect_timeout; /* TERN_MPI_CONNECT_TIMEOUT: seconds (0: none) */
} mpi_config_t;

typedef struct mpi_state {
    int init, finalized;      /* 0 / 1 */
    int thread_level;
    pthread_t main_thread;    /* MPI_Init's */
    tern_context_t *ctx;
    tern_worker_t *w;         /* worker 0 (MPI_COMM_WORLD's) */
    tern_worker_t *workers[MPI_MAX_WORKERS]; /* all the context's (mt.c) */
    pthread_mutex_t wlock[MPI_MAX_WORKERS];  /* MPI_THREAD_MULTIPLE: per worker */
    pthread_mutex_t table_lock; /* MPI_THREAD_MULTIPLE: request table, comm creation */
    int nworkers;
    bool mt;                  /* MPI_THREAD_MULTIPLE provided */
    mpi_comm_t *comms;        /* by slot (mpi_comm_slot) */
    int ncomms;
    unsigned char ctx_free[MPI_CONTEXT_IDS / 8]; /* bit set: context id free here */
    mpi_req_t *reqs;
    int nreqs;
    int free_head;            /* the free entries' list (index + 1; 0: empty) */
    int freed_head;           /* entries MPI_Request_free let go, not yet finished (the same) */
    int nfreed;
    mpi_config_t cfg;
} mpi_state_t;

extern mpi_state_t mpi;
/* the calling thread's last error message (MPI_Error_string) */
extern __thread char mpi_last_error[MPI_MAX_ERROR_STRING];

/* the predefined error classes: MPICH's 0..78 and ULFM's
 * MPIX_ERR_PROC_FAILED (user ones are above MPI_ERR_LASTCODE) */
#define MPI_ERR_CLASS_LAST 78
static inline bool mpi_predef_class(int c)
{
    return (c >= 0 && c <= MPI_ERR_CLASS_LAST) || c == MPIX_ERR_PROC_FAILED;
}
/* errors.c: the error class of a tern status; raise: record the message,
 * call the communicator's handler (fatal: abort the job), return the class */
int mpi_class_of(tern_status_t st);
int mpi_raise(MPI_Comm comm, int errclass, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* raise with an error code (a user code of MPI_Add_error_code too) */
int mpi_raise_code(MPI_Comm comm, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* raise for a failed tern call: its class, tern_last_error()'s message */
int mpi_raise_tern(MPI_Comm comm, tern_status_t st, const char *call);
/* errhandler.c: handler objects and user codes */
bool mpi_errh_valid(MPI_Errhandler h); /* one MPI_Comm_set_errhandler takes */
void mpi_errh_retain(MPI_Errhandler h); /* a user reference more (get_errhandler) */
MPI_Comm_errhandler_function *mpi_errh_function(MPI_Errhandler h); /* NULL: predefined */
/* a code of MPI_Add_error_class / _code: its class and string (either may be NULL) */
bool mpi_user_code(int code, int *cls, const char **text);
int mpi_last_user_code(void); /* MPI_LASTUSEDCODE */
/* attr.c: predefined keyvals; the attributes of a dup copied (the first
 * copy callback's error), of a freed object deleted (the first delete
 * callback's error) */
bool mpi_attr_predefined(int keyval);
int mpi_attr_comm_copy(MPI_Comm comm, MPI_Comm newcomm);
/* MPI_Comm_idup's copy: made at the call (the copy callbacks run then;
 * their first error, *copies what was copied), attached to the duplicate
 * once it exists, or their delete callbacks run (with comm) if it never
 * does */
struct attr;
int mpi_attr_comm_copy_out(MPI_Comm comm, struct attr **copies);
void mpi_attr_comm_attach(struct attr *copies, MPI_Comm newcomm);
void mpi_attr_comm_discard(struct attr *copies, MPI_Comm comm);
int mpi_attr_comm_delete(MPI_Comm comm);
int mpi_attr_type_copy(MPI_Datatype type, MPI_Datatype newtype);
int mpi_attr_type_delete(MPI_Datatype type);

/* checks: an initialised library, a valid communicator, datatype, count,
 * rank (peer or MPI_PROC_NULL; any source allowed when any) and tag */
int mpi_check_init(const char *call);
/* Communicator slots: a handle's index is its slot, WORLD 0 and SELF 1
 * (predefined handles), made ones from 2.  A handle's slot, -1 when it is
 * not one's (a lookup on every call: one shift, two compares); a slot's
 * handle.  ncomms grows under the table lock while other threads look
 * handles up: a relaxed atomic (a plain load on x86), enough since a
 * thread that uses a handle another made was handed it after the store. */
#define MPI_COMM_SLOT_WORLD 0
#define MPI_COMM_SLOT_SELF 1
#define MPI_COMM_SLOT_MADE 2
static inline int mpi_comm_slot(MPI_Comm comm)
{
    unsigned t = (unsigned)comm >> 26, i = mpi_h_index(comm);
    bool made = i >= MPI_COMM_SLOT_MADE;
    return t == ((made ? MPI_HK_MADE : MPI_HK_BUILTIN) << 4 | MPI_HT_COMM) &&
                   i < (unsigned)__atomic_load_n(&mpi.ncomms, __ATOMIC_RELAXED)
               ? (int)i
               : -1;
}
static inline MPI_Comm mpi_comm_handle(int slot)
{
    return mpi_h_make(slot < MPI_COMM_SLOT_MADE ? MPI_HK_BUILTIN : MPI_HK_MADE, MPI_HT_COMM,
                      (unsigned)slot);
}
/* a communicator's entry; NULL: not a valid handle (nor before MPI_Init,
 * ncomms 0) */
static inline mpi_comm_t *mpi_comm_get(MPI_Comm comm)
{
    int s = mpi_comm_slot(comm);
    return s >= 0 && mpi.comms[s].used ? &mpi.comms[s] : NULL;
}
/* the entry of a handle that was valid, freed since or not (a request's:
 * a freed communicator's entry keeps its ranks until the slot is reused) */
static inline const mpi_comm_t *mpi_comm_entry(MPI_Comm comm)
{
    return &mpi.comms[mpi_h_index(comm)];
}
int mpi_check_comm(MPI_Comm comm, const char *call);
/* An intercommunicator's local group (its hidden intracommunicator); c
 * itself for an intracommunicator. */
static inline mpi_comm_t *mpi_comm_local(mpi_comm_t *c)
{
    return c->inter ? &mpi.comms[c->local] : c;
}
/* inter.c: MPI_ERR_COMM (raised, naming call) for an intercommunicator:
 * the calls MPI defines on intracommunicators only */
int mpi_check_intra(MPI_Comm comm, const char *call);
/* the intercommunicator forms of MPI_Comm_dup, _split, _create and
 * _compare (comm valid and an intercommunicator; split: local_err as
 * mpi_comm_make's); inter_make.c */
int mpi_inter_dup(MPI_Comm comm, MPI_Comm *newcomm);
int mpi_inter_split(MPI_Comm comm, int color, int key, int local_err, MPI_Comm *newcomm);
int mpi_inter_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm);
int mpi_inter_compare(const mpi_comm_t *a, const mpi_comm_t *b);
/* dyn_spawn.c: MPI_Init's part (a spawned job connects to its parent);
 * a communicator freed (the parent's handle forgotten) */
int mpi_dyn_init(void);
void mpi_dyn_forget(MPI_Comm comm);
/* MPI_UNIVERSE_SIZE and MPI_APPNUM's values (a spawned job's from its
 * parent) */
int mpi_dyn_universe(void);
int mpi_dyn_appnum(void);
/* dyn_port.c: at MPI_Finalize, refuse the connections waiting on ports */
void mpi_dyn_finalize(void);
/* context ids (comm_ctx.c): taken / given back on this rank (the table
 * lock held, or not MPI_THREAD_MULTIPLE) */
void mpi_ctx_take(int id);
void mpi_ctx_release(int id);
/* A new communicator of parent's processes ranks (size tern peer ids, this
 * process at me; NULL: not a member, *out MPI_COMM_NULL), collective over
 * parent: a context id free on every rank of parent, then the handle.
 * ranks is taken over (freed on failure).  local_err: this rank's own
 * arguments were refused with that class (already raised): it still takes
 * part, so that no peer waits for it, and every rank then fails
 * (comm_ctx.c). */
int mpi_comm_make(MPI_Comm parent, int *ranks, int size, int me, int local_err, MPI_Comm *out,
                  const char *call);
/* MPI_Comm_split's work (comm.c) for split and split_type: comm valid,
 * local_err as mpi_comm_make's */
int mpi_comm_split_by(MPI_Comm comm, int color, int key, int local_err, MPI_Comm *newcomm,
                      const char *call);
/* MPI_Comm_idup's under way on this rank, run to their end (MPI_Finalize;
 * every creation does it first: comm_ctx.c) */
void mpi_ctx_drain(void);
/* groups (group.c): a group's processes (tern peer ids, group order) and
 * their number; NULL: not a valid group (MPI_GROUP_EMPTY is valid: an
 * empty list).  A new group of size procs (taken over; size 0:
 * MPI_GROUP_EMPTY, procs freed). */
const int *mpi_group_procs(MPI_Group g, int *size);
int mpi_check_group(MPI_Group g, const char *call);
int mpi_group_new(int *procs, int size, MPI_Group *out, const char *call);
/* info.c: MPI_INFO_NULL or an info object that exists */
bool mpi_info_ok(MPI_Info info);
/* every (key, value) of src set in dst (both objects that exist, not
 * MPI_INFO_NULL; else MPI_ERR_INFO); MPI_ERR_NO_MEM, raising nothing */
int mpi_info_update(MPI_Info dst, MPI_Info src);
/* bytes of a valid type, derived too (0: not a valid type, or an empty one) */
int mpi_type_size(MPI_Datatype dt);
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
/* a valid datatype, committed when derived; count >= 0; buf when needed */
int mpi_check_buf(MPI_Comm comm, const void *buf, int count, MPI_Datatype dt, const char *call);
int mpi_check_rank(MPI_Comm comm, int rank, bool any, const char *call);
int mpi_check_tag(MPI_Comm comm, int tag, bool any, const char *call);
/* all of a send's (recv false) or receive's arguments, as the start calls
 * check them (p2p.c; persistent and buffered modes check before they pack
 * or keep anything) */
int mpi_check_p2p(MPI_Comm comm, const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                  bool recv, const char *call);

/* ---- derived datatypes (datatype.c, dtype_build.c) ------------------------
 * A derived type's handle is a made one (mpi/handle.h) whose index is its
 * entry in a table; the pair types are its first entries, built at
 * MPI_Init and never freed: MPI_FLOAT_INT .. MPI_LONG_DOUBLE_INT are made
 * handles 0-4 in MPICH's header, and MPI_2INT, a predefined handle there,
 * is entry 5.  A type is kept
 * flattened: the (offset, length) blocks of one element in typemap order,
 * adjacent ones merged, and the runs of basic elements (Get_elements). */
#define MPI_DT_NPAIRS 6          /* the pair types' table entries */
#define MPI_DT_2INT_ENTRY 5
/* more iovec entries than this for one operation: pack into a staging
 * buffer instead (docs/mpi.md) */
#define MPI_DT_IOV_LIMIT 512

typedef struct mpi_dt_block {
    MPI_Aint off, len;
} mpi_dt_block_t;

typedef struct mpi_dt_run {
    MPI_Datatype type;        /* predefined */
    MPI_Aint n;
} mpi_dt_run_t;

typedef struct mpi_dtype {
    int refs;                 /* the handle's, and pending operations' */
    bool committed, pair;     /* pair: a predefined pair type (not freed) */
    bool permanent;           /* an MPI_Type_create_f90_* type (dtype_kinds.c): not freed */
    bool lb_mark, ub_mark;    /* bounds set explicitly (MPI_Type_create_resized) */
    bool has_pair;            /* pair types inside: no single basic type */
    int align;                /* strictest basic alignment (struct padding) */
    MPI_Aint size, lb, extent, true_lb, true_extent;
    MPI_Aint nelems;          /* basic elements in one element */
    int nblocks, nruns;
    mpi_dt_block_t *blocks;
    mpi_dt_run_t *runs;
    struct mpi_dt_env *env;   /* how it was made (dtype_env.c); NULL: named */
    char *name;               /* MPI_Type_set_name's (names.c), malloc'ed; NULL: none */
} mpi_dtype_t;

/* buf + off as an address: buf may be MPI_BOTTOM (NULL) with off an
 * absolute address (MPI_Get_address), which pointer arithmetic on NULL
 * would not allow */
static inline char *mpi_addr(const void *buf, MPI_Aint off)
{
    return (char *)((uintptr_t)buf + (uintptr_t)off);
}

/* Bytes of a predefined type, read off its handle (0x4c00SSII: SS the
 * size, II the type); 0: not a predefined type.  MPI_2INT is the pair
 * entry's, MPI_LB / MPI_UB have no size. */
static inline int mpi_predef_size(MPI_Datatype dt)
{
    /* predefined datatype, bits 25-16 clear: 0x4c00 in the high half */
    return ((unsigned)dt >> 16) == 0x4c00u && dt != MPI_2INT ? (int)(((unsigned)dt >> 8) & 0xff)
                                                             : 0;
}
static inline bool mpi_dt_predefined(MPI_Datatype dt)
{
    return mpi_predef_size(dt) != 0;
}
/* dtype_kinds.c: a predefined type's basic elements (2 of *part for
 * Fortran's MPI_2INTEGER ..., else 1 of itself); the bytes of its parts
 * (a complex number's real, a pair's value; else its size): its alignment
 * and external32's byte-swap unit; the size-specific type an
 * MPI_Type_create_f90_* type stands for (dt itself for any other) */
int mpi_predef_parts(MPI_Datatype dt, MPI_Datatype *part);
int mpi_predef_unit(MPI_Datatype dt);
MPI_Datatype mpi_dt_named(MPI_Datatype dt);
/* the derived (or pair) type of a handle; NULL: not one, or freed */
int mpi_dt_init(void); /* MPI_Init: the table, the pair types */
mpi_dtype_t *mpi_dt_get(MPI_Datatype dt);
/* any valid type: a derived one, or a predefined one described in *v (one
 * block, one run); NULL: not a valid type */
typedef struct mpi_dt_view {
    mpi_dtype_t t;
    mpi_dt_block_t b;
    mpi_dt_run_t r;
} mpi_dt_view_t;
const mpi_dtype_t *mpi_dt_lookup(MPI_Datatype dt, mpi_dt_view_t *v);
/* a table entry for t (refs 1, taken over): its handle, or 0 (no memory) */
MPI_Datatype mpi_dt_register(mpi_dtype_t *t);
/* A handle of the request's own for the type of dt (a derived one: the
 * same type under a second handle, referenced), so that MPI_Type_free of
 * the user's handle cannot take it from a persistent request; dt itself
 * for a predefined type; MPI_DATATYPE_NULL when out of memory. */
MPI_Datatype mpi_dt_hold(MPI_Datatype dt);
void mpi_dt_drop(MPI_Datatype h); /* mpi_dt_hold's handle let go */
void mpi_dt_retain(mpi_dtype_t *t);
void mpi_dt_release(mpi_dtype_t *t); /* freed at 0 */
void mpi_dt_destroy(mpi_dtype_t *t);
/* dtype_env.c: record how h was made (MPI_Type_get_envelope / _contents),
 * referencing its derived old types; MPI_ERR_NO_MEM */
struct mpi_dt_env;
int mpi_dt_set_env(MPI_Datatype h, int combiner, int ni, const int *ints, int na,
                   const MPI_Aint *aints, int nd, const MPI_Datatype *types);
void mpi_dt_env_free(struct mpi_dt_env *env);
/* dtype_build.c: the pair types, built into the table's first entries */
int mpi_dt_build_pairs(void);
/* count elements of t at buf as an iovec list for tern (cross-element
 * merged): *iov (malloc'ed, or one), *n; false when it would take more than
 * MPI_DT_IOV_LIMIT entries (stage instead) or memory ran out (*n -1) */
struct iovec;
bool mpi_dt_iov(const void *buf, int count, const mpi_dtype_t *t, struct iovec **iov,
                struct iovec *one, int *n);
size_t mpi_dt_pack_t(const void *buf, int count, const mpi_dtype_t *t, void *out);
size_t mpi_dt_unpack_t(const void *in, size_t len, void *buf, int count, const mpi_dtype_t *t);

/*
 * Statuses.  MPI_ERROR is the caller's: a call that completes one
 * operation (MPI_Recv, MPI_Wait, MPI_Probe, MPI_Mprobe, MPI_Mrecv, ...)
 * returns its error and leaves the field as it was, as MPICH does; only the
 * calls that complete several (Waitall, Testall, Waitsome, Testsome) write
 * it, each status's own class.  So these helpers write the other four
 * fields and never MPI_ERROR.
 */
/* a tern receive's result as an MPI status (source in the communicator) */
int mpi_comm_rank_of(const mpi_comm_t *c, int peer); /* comm.c: the rank of a tern peer id */
static inline void mpi_status_from(MPI_Status *s, const mpi_comm_t *c,
                                   const tern_recv_info_t *info)
{
    if (s == MPI_STATUS_IGNORE)
        return;
    s->count_lo = (int)(info->length & 0x7fffffff);
    s->count_hi_and_cancelled = (int)((info->length >> 31) << 1);
    s->MPI_SOURCE = c->identity ? info->source : mpi_comm_rank_of(c, info->source);
    s->MPI_TAG = info->tag;
}
/* *src into *dst but its MPI_ERROR (dst may be MPI_STATUS_IGNORE) */
static inline void mpi_status_copy(MPI_Status *dst, const MPI_Status *src)
{
    if (dst == MPI_STATUS_IGNORE)
        return;
    dst->count_lo = src->count_lo;
    dst->count_hi_and_cancelled = src->count_hi_and_cancelled;
    dst->MPI_SOURCE = src->MPI_SOURCE;
    dst->MPI_TAG = src->MPI_TAG;
}
void mpi_status_empty(MPI_Status *s, int source);

/* request.c: requests; those MPI_Request_free let go, reaped when finished
 * (wait: all, at MPI_Finalize) */
int mpi_reqs_init(void); /* MPI_Init: the table, reserved */
/* the handle of entry i; of entry 0: every send that completed at once */
#define MPI_REQ_HANDLE(i) ((MPI_Request)(0xac000000u | (unsigned)(i)))
#define MPI_REQ_SENT MPI_REQ_HANDLE(0)
/* the entry of a handle mpi_req_new (or mpi_req_get) vouched for */
static inline mpi_req_t *mpi_req_at(MPI_Request h)
{
    return &mpi.reqs[mpi_h_index(h)];
}
int mpi_req_new(MPI_Request *out);
mpi_req_t *mpi_req_get(MPI_Request h); /* NULL: not an active handle */
/* progress *h once (wait: until it finishes); true once it has: its status
 * and error class out, the entry freed, *h MPI_REQUEST_NULL (a persistent
 * one stays, inactive).  Raises nothing: for the layer's own requests
 * (buffered sends). */
bool mpi_req_complete(MPI_Request *h, bool wait, MPI_Status *status, int *err);
/* p2p.c: start a send (mode: MPI_SEND_STANDARD / _SYNC) or a receive;
 * checks the arguments (raising as call), *out a request (MPI_PROC_NULL:
 * done) */
enum { MPI_SEND_STANDARD, MPI_SEND_SYNC };
int mpi_isend_start(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                    MPI_Comm comm, int mode, MPI_Request *out, const char *call);
int mpi_irecv_start(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
                    MPI_Request *out, const char *call);
/* receive a matched probe's message into a derived type (mprobe.c) */
int mpi_dt_mrecv_start(void *buf, int count, MPI_Datatype dt, tern_message_t *m, MPI_Comm comm,
                       MPI_Request *out, const char *call);
void mpi_reap_freed(bool wait);
/* every operation under way on comm run to its end, the entries kept for
 * their owners (MPI_Comm_disconnect) */
void mpi_reqs_settle(MPI_Comm comm);

/* p2p_modes.c: wait for the buffered sends in flight (MPI_Finalize) */
void mpi_bsend_drain(void);

/* op.c: is op valid for dt (raises otherwise); does it commute; in op inout */
int mpi_op_check(MPI_Op op, MPI_Datatype dt, MPI_Comm comm, const char *call);
bool mpi_op_commutes(MPI_Op op);
bool mpi_op_valid(MPI_Op op); /* a predefined operation, or one made and not freed */
void mpi_op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt);

/* non-blocking collectives under way (coll_nb.c; read unlocked only below
 * MPI_THREAD_MULTIPLE: mpi_polling is true there whatever it says) */
extern int coll_nb_active;
/* MPI_Comm_idup's under way (comm_ctx.c; written under its lock with
 * __atomic stores, read with __atomic loads) */
extern int mpi_idups_active;
/* dynamic windows that exist (win_dyn.c; __atomic): while there are,
 * blocking waits poll, and answer the key requests of their origins
 * (mpi_win_dyn_serve, from mpi_progress_pending; true when it answered) */
extern int mpi_win_dyn_active;
bool mpi_win_dyn_serve(void);

/* mt.c: workers and threads.  A communicator's worker; take every worker
 * of the context (init) and give them back; wait a little for progress. */
int mpi_workers_init(void);
void mpi_workers_finalize(void);
tern_worker_t *mpi_worker_for(int context);
void mpi_block(void);
/* mpi_block, sleeping at most ms (< 0: no limit) */
void mpi_block_ms(int ms);
/* Must a wait poll (several workers, or several threads, or a
 * non-blocking collective or MPI_Comm_idup that the peers may wait for)
 * rather than sleep in tern? */
static inline bool mpi_polling(void)
{
    return mpi.mt || mpi.nworkers > 1 || coll_nb_active > 0 ||
           __atomic_load_n(&mpi_idups_active, __ATOMIC_RELAXED) > 0 ||
           __atomic_load_n(&mpi_win_dyn_active, __ATOMIC_RELAXED) > 0;
}
/* Move on what peers may be waiting for, from a call that does not block
 * (the test family, the probes, MPI_Request_get_status; mpi_block too): the
 * non-blocking collectives' schedules and the MPI_Comm_idup's under way.
 * True when one moved on. */
bool mpi_progress_pending(void);
/* MPI_THREAD_MULTIPLE: w's lock around each tern call on w */
static inline void mpi_lock(tern_worker_t *w)
{
    if (mpi.mt)
        pthread_mutex_lock(&mpi.wlock[tern_worker_index(w)]);
}
static inline void mpi_unlock(tern_worker_t *w)
{
    if (mpi.mt)
        pthread_mutex_unlock(&mpi.wlock[tern_worker_index(w)]);
}
/* MPI_THREAD_MULTIPLE: a mutex of the layer's own state (below it none
 * is taken) */
static inline void mpi_mt_lock(pthread_mutex_t *m)
{
    if (mpi.mt)
        pthread_mutex_lock(m);
}
static inline void mpi_mt_unlock(pthread_mutex_t *m)
{
    if (mpi.mt)
        pthread_mutex_unlock(m);
}
static inline void mpi_table_lock(void)
{
    if (mpi.mt)
        pthread_mutex_lock(&mpi.table_lock);
}
static inline void mpi_table_unlock(void)
{
    if (mpi.mt)
        pthread_mutex_unlock(&mpi.table_lock);
}
/* tern_wait / tern_send / tern_recv, polling when mpi_polling() */
tern_status_t mpi_wait_tern(tern_worker_t *w, tern_request_t *r, tern_recv_info_t *info);
tern_status_t mpi_send_tern(tern_worker_t *w, const void *buf, size_t len, int dest, int tag,
                            uint16_t space);
tern_status_t mpi_recv_tern(tern_worker_t *w, void *buf, size_t len, int src, int tag,
                            uint16_t space, tern_recv_info_t *info);
/* coll_nb.c: move the non-blocking collectives under way on, once (cheap
 * when there are none: a loop that blocks waiting for something else
 * should call it, its peers may wait for a schedule's next round); run
 * them to their end (MPI_Finalize) */
bool mpi_coll_progress(void); /* true: a schedule moved a round on or ended */
/* one step of a REQ_SCHED request's schedule (req_poll); true: finished */
bool mpi_sched_poll(mpi_req_t *q);
void mpi_coll_finalize(void);
void coll_tmp_drain(void); /* coll.c: the scratch buffers kept (mpi_coll_finalize) */

/* request.c: the zero entry a new one is copied from (zeroing it any
 * other way comes out as rep stos: 10 % of a 4-byte message's receive);
 * below MPI_THREAD_MULTIPLE, the first free entry as mpi_req_new gives it,
 * without its reaping or growth (MPI_REQUEST_NULL: none: mpi_req_new) */
extern const mpi_req_t mpi_req_zero;
static inline MPI_Request mpi_req_pop(void)
{
    int i1 = mpi.mt ? 0 : mpi.free_head; /* entry + 1; 0: none */
    if (i1 == 0)
        return MPI_REQUEST_NULL;
    mpi.free_head = mpi.reqs[i1 - 1].next;
    mpi.reqs[i1 - 1] = mpi_req_zero;
    return MPI_REQ_HANDLE(i1 - 1);
}

/* config.c: mpi.cfg from the environment (MPI_SUCCESS, or the error raised) */
int mpi_config_load(void);
/* mpit_pvar.c: MPI_Finalize, before the workers go: MPI_T's variables
 * keep the values they have now */
void mpi_t_finalize_hook(void);

/* init / finalize of the communicator and request tables (comm.c) */
int mpi_comms_init(void);
void mpi_comms_finalize(void);

#pragma GCC visibility pop

#endif
