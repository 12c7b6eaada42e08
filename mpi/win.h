/*
 * MPI windows (MPI-3.1 chapter 11) on tern's one-sided API
 * (include/tern/rma.h): state shared by mpi/win*.c; docs/mpi.md
 * "One-sided" says what a user sees.
 *
 * A window has a communicator of its own (a duplicate of the user's, made
 * without the attributes: the synchronisation messages and the key
 * exchange travel there) and, per rank of it, a target: the key of that
 * rank's region, the address displacement 0 stands for, the size and the
 * displacement unit.  MPI_Win_create registers the caller's memory,
 * MPI_Win_allocate the library's (tern_region_alloc: peers on this host
 * reach it directly), MPI_Win_allocate_shared one region of rank 0's that
 * every rank maps (the ranks' parts contiguous, as MPI's default asks), a
 * dynamic window the regions MPI_Win_attach makes, their keys fetched from
 * the target when first used (win_dyn.c).
 *
 * Passive-target locks are a word in a small control region of each rank
 * (allocated: mapped by the peers on its host), changed by tern's atomics:
 * bit 63 the exclusive holder, the low bits the shared holders.  The
 * target's progress applies them when it is not on this host, so a lock,
 * as every operation there, waits for the target to enter the library
 * (MPICH without its asynchronous progress thread does the same).
 *
 * Operations: contiguous on both sides (the usual case) go out as one tern
 * call; otherwise the origin's data is packed into a staging buffer and
 * the target's datatype cut into its blocks, one tern call each.  Calls
 * that did not complete at once are kept as a pending operation (their
 * tern requests, the staging buffer, what to unpack at the end) until a
 * flush, an epoch's end or the R* request's completion takes them.
 */
#ifndef TERN_MPI_WIN_H
#define TERN_MPI_WIN_H

#include "mpi/mpi_internal.h"

#pragma GCC visibility push(hidden)

#define MPI_MAX_WINS 4096

/* the control word (offset 0 of a rank's control region) */
#define WIN_LOCK_EXCL (1ull << 63)
#define WIN_CTL_LEN 64

/* a dynamic window's attached memory, and what an origin knows of a
 * target's (win_dyn.c) */
typedef struct win_seg {
    uint64_t addr, len;
    tern_region_t *reg; /* the attaching rank's own */
    tern_key_t *key;    /* an origin's, of a target's segment */
} win_seg_t;

typedef struct win_target {
    tern_key_t *key; /* NULL: nothing exposed (size 0, or dynamic) */
    uint64_t base;   /* the remote address of displacement 0 */
    MPI_Aint size;
    int disp_unit;
    int proc;         /* its tern peer id */
    int peer;         /* the tern peer id of the region's owner (rank 0's in
                       * a shared window; its own otherwise): flushed */
    tern_key_t *ctl;  /* its control region's key */
    void *local;      /* shared windows: its part, mapped here */
    /* dynamic windows: the segments whose keys were fetched (cleared when
     * an epoch opens) */
    win_seg_t *segs;
    int nsegs, capsegs;
    /* passive target: 0, MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE held by
     * this rank; nocheck: taken with MPI_MODE_NOCHECK (no word changed) */
    int lock;
    bool nocheck;
    bool in_start; /* in the access group of MPI_Win_start */
} win_target_t;

/* An operation whose tern calls did not all complete at once. */
typedef struct win_op {
    int target;            /* window rank */
    tern_worker_t *w;      /* the window's worker */
    int nreq;
    tern_request_t **reqs; /* NULL once each finished */
    tern_status_t st;      /* the first failure */
    void *stage;           /* staging buffer of what comes back (freed at the end) */
    void *stage_in;        /* staging buffer of what goes out (the same) */
    /* unpacked into (buf, count, dt) at the end: a get's or result's */
    void *ubuf;
    int ucount;
    MPI_Datatype udt; /* held (mpi_dt_hold); MPI_DATATYPE_NULL: nothing */
    size_t ulen;
    bool done;
    int refs; /* the window's list and an R* request's */
} win_op_t;

typedef struct mpi_win {
    MPI_Win handle;
    MPI_Comm comm; /* the window's own */
    tern_worker_t *w;
    int size, rank;
    int flavor;
    /* this rank's part, as the attributes give it */
    void *base;
    MPI_Aint wsize;
    int disp_unit;
    int model; /* MPI_WIN_UNIFIED */
    tern_region_t *region; /* NULL: nothing registered here */
    tern_region_t *ctl_region;
    uint64_t *ctl; /* this rank's control word */
    win_target_t *t; /* by window rank */
    /* pending operations; under MPI_THREAD_MULTIPLE the list (and a
     * dynamic window's key caches) under mu, which a flush holds while it
     * waits (other threads' operations on the window wait for it) */
    pthread_mutex_t mu;
    win_op_t **ops;
    int nops, capops;
    /* epochs */
    bool fence;       /* a fence epoch is open */
    bool lock_all;    /* MPI_Win_lock_all held */
    int nlocked;      /* targets locked one by one */
    int nstart;       /* the access group of MPI_Win_start (0: none) */
    int *post_grp;    /* the exposure group of MPI_Win_post (window ranks) */
    int npost, post_done; /* its size; completions received */
    bool posted;
    /* dynamic windows: the segments attached here */
    win_seg_t *own;
    int nown, capown;
    MPI_Errhandler errh;
    MPI_Info info; /* MPI_Win_set_info's (a duplicate), or MPI_INFO_NULL */
    char name[MPI_MAX_OBJECT_NAME];
} mpi_win_t;

/* win.c: the window of a handle (NULL: not one that exists) */
mpi_win_t *mpi_win_get(MPI_Win win);
/* the window of a handle, raising MPI_ERR_WIN as call when it is none */
int mpi_win_check(MPI_Win win, mpi_win_t **out, const char *call);

/* The window's own messages, on its communicator's tern space (no user
 * traffic there): PSCW's tokens (win_sync.c) and a dynamic window's key
 * requests and replies (win_dyn.c). */
enum { TAG_POST = 1, TAG_DONE = 2, TAG_KEYREQ = 3, TAG_KEYREP = 4 };
static inline uint16_t win_space(const mpi_win_t *w)
{
    return mpi_comm_get(w->comm)->space;
}
/* errors.c: raise to the window's handler (MPI_COMM_WORLD's when the
 * handle is no window) */
int mpi_raise_win(MPI_Win win, int errclass, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int mpi_raise_win_code(MPI_Win win, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* win_sync.c: every pending operation to target (-1: all) run to its end
 * (local completion; *st the first failure); then, remote: tern_flush to
 * the target (-1: every peer).  MPI_SUCCESS or the error raised. */
int mpi_win_complete_ops(mpi_win_t *win, int target, bool remote, const char *call);
/* an operation's pending record: poll once (wait: until done); true once
 * done (its unpacking done, st its status) */
bool mpi_win_op_poll(win_op_t *op, bool wait);
void mpi_win_op_release(win_op_t *op);
/* may an operation go to target now (an access epoch to it is open)? */
bool mpi_win_may_access(const mpi_win_t *win, int target);

/* win_dyn.c: the key and remote address for [addr, addr + len) of a
 * dynamic window's target (fetched from it when not known); MPI_SUCCESS or
 * the error raised.  The segments known of every target forgotten (an
 * epoch opens); a window's own segments destroyed (MPI_Win_free). */
int mpi_win_dyn_key(mpi_win_t *win, int target, uint64_t addr, uint64_t len,
                    const tern_key_t **key, const char *call);
/* forget target's segments (-1: every target's), its pending operations
 * completed here first: their keys go with them */
void mpi_win_dyn_forget(mpi_win_t *win, int target);
void mpi_win_dyn_free(mpi_win_t *win);
/* a new dynamic window: its key requests answered from now on */
void mpi_win_dyn_register(mpi_win_t *win);

/* attr.c: a window's attributes (the predefined ones are win.c's) */
int mpi_attr_win_set(MPI_Win win, int keyval, void *value);
int mpi_attr_win_get(MPI_Win win, int keyval, void *value, int *flag);
int mpi_attr_win_delete(MPI_Win win, int keyval);
int mpi_attr_win_delete_all(MPI_Win win);

#pragma GCC visibility pop

#endif
