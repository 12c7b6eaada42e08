/*
 * tern — context, worker and tagged point-to-point messaging.
 *
 * A context is one per process (one per job).  tern_init() wires the process
 * up through PMIx: it reads rank, size and the local peers, creates or
 * attaches the node's shared-memory segment, and exchanges the workers'
 * addresses (every netmod's card in one blob per worker; tern_init_ex
 * wires a job up from addresses exchanged by any other means).  A worker is the progress engine of one polling thread: it
 * owns its VCs, netmod instances, queues and request pool, and takes no
 * lock on the fast path.  TERN_NUM_WORKERS (default 1, the same on every
 * rank) workers are wired up at tern_init; worker i of a rank talks to
 * worker i of every other rank (the MPICH VCI model): a message sent on
 * worker i is received on the peer's worker i.  Worker 0 is the context's
 * (tern_context_worker()); tern_worker_create() hands out the others.
 *
 * Threads: one thread at a time may call into a given worker (send,
 * receive, progress, test, wait on its requests); different workers may be
 * driven by different threads at once without any lock.  Safe from any
 * thread at any time: tern_worker_signal, tern_worker_create,
 * tern_worker_destroy, and the context accessors (tern_rank ...).
 * tern_init and tern_finalize are called once, by one thread, when no
 * other thread uses the context.
 *
 * Operations return TERN_OK when they completed at once (no request is
 * created and *req is set to NULL), TERN_INPROGRESS with *req set when they
 * could not, or a negative TERN_ERR_* (no request; an argument error
 * changes nothing at all).
 *
 * Requests belong to the library.  There is no call to free one: the
 * tern_wait, tern_test or tern_waitall that returns a request's final status
 * also frees it, and the handle is invalid from then on.  Every request must
 * be completed that way.  tern_cancel ends a receive that has not matched
 * yet (it completes with TERN_ERR_CANCELED and is still reaped so); a send
 * cannot be cancelled.  A receive's completion information (source, tag,
 * length) comes from that call's info argument.
 *
 * NULL handles: every call returning a status that is given a NULL context,
 * worker, request or request pointer returns TERN_ERR_INVALID_PARAM and
 * changes nothing (a pending request offered with a NULL worker stays
 * pending).  tern_progress(NULL) returns 0, tern_worker_signal(NULL) does
 * nothing, and the context accessors return -1 (tern_rank, tern_local_rank),
 * 0 (tern_size, tern_local_size) or NULL.
 */
#ifndef TERN_CORE_H
#define TERN_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <tern/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tern_context tern_context_t;
typedef struct tern_worker tern_worker_t;
typedef struct tern_job tern_job_t;
typedef struct tern_request tern_request_t;

#define TERN_ANY_SOURCE (-1)
#define TERN_ANY_TAG (-1)
#define TERN_TAG_MAX 0x7fffffff
#define TERN_IOV_MAX (1 << 20) /* most iovec entries one operation takes */

/**
 * Completion information of a receive.  Given to tern_wait/tern_test for a
 * send, it describes the send (source is then the destination rank).
 */
typedef struct tern_recv_info {
    int source;          /* sender rank */
    int tag;             /* tag the message was sent with */
    size_t length;       /* bytes the sender sent (may exceed what was written) */
    tern_status_t status;
} tern_recv_info_t;

/**
 * The version of the libtern this process runs on (not the one it was
 * built against): "MAJOR.MINOR.PATCH", configure's AC_INIT version, a
 * static string.  *major, *minor and *patch get its numbers (each pointer
 * may be NULL).  Safe from any thread, before tern_init too.
 */
const char *tern_version(unsigned *major, unsigned *minor, unsigned *patch);

/**
 * Initialise the process: PMIx client init, wire-up of all netmods.
 * Collective over the job.  On success *ctx owns everything; free it with
 * tern_finalize().  Statuses: TERN_ERR_PMIX (no PMIx server reachable or a
 * key missing), TERN_ERR_NO_SHM_SPACE, TERN_ERR_SHM, TERN_ERR_NO_MEMORY.
 */
tern_status_t tern_init(tern_context_t **ctx);

/**
 * A context of its own whatever launcher started the process: a job of one
 * rank (as without a launcher), PMIx not used, reaching others through
 * ports only.  For daemons and tools beside a job (the iofwd daemon and
 * client).  The one-context-per-process rule holds as for tern_init.
 */
tern_status_t tern_init_standalone(tern_context_t **ctx);

/* How an idle wait (tern_wait, tern_worker_wait ...) waits: TERN_WAIT_MODE's
 * spin, yield (spin, then sched_yield between polls) and block (spin, then
 * sleep on every netmod's event source at once). */
enum tern_wait_mode { TERN_WAIT_SPIN = 0, TERN_WAIT_YIELD = 1, TERN_WAIT_BLOCK = 2 };

/* How tern_init_ex wires the process up (tern_init_params_t.wireup). */
enum tern_wireup {
    TERN_WIREUP_PMIX = 0,      /* through the launcher's PMIx server, as tern_init */
    TERN_WIREUP_ADDRESS = 1,   /* from peers' worker addresses, no PMIx (rank, size, job) */
    TERN_WIREUP_STANDALONE = 2 /* a job of one rank, PMIx not used, as tern_init_standalone */
};

/* tern_init_params_t.fields: which fields the caller set.  A set field
 * overrides the environment variable of the same setting (which is then
 * not read); an unset one takes the variable, or its default. */
#define TERN_INIT_F_WAIT_MODE (1ull << 0) /* wait_mode, as TERN_WAIT_MODE */
#define TERN_INIT_F_WORKERS (1ull << 1)   /* num_workers, as TERN_NUM_WORKERS */
#define TERN_INIT_F_NETMODS (1ull << 2)   /* netmods, as TERN_NETMODS */
#define TERN_INIT_F_WIREUP (1ull << 3)    /* wireup (and rank, size, job for ADDRESS) */

/**
 * Parameters of tern_init_ex.  Zero it, set struct_size to
 * sizeof(tern_init_params_t), then the fields you choose and their bits in
 * fields; the rest is ignored.  A later tern may add fields at the end (and
 * bits for them): a program built against this header keeps working.
 */
typedef struct tern_init_params {
    size_t struct_size;     /* sizeof(tern_init_params_t) the caller was built with */
    uint64_t fields;        /* TERN_INIT_F_* bits: which fields below are set */
    int wait_mode;          /* TERN_INIT_F_WAIT_MODE: enum tern_wait_mode */
    int num_workers;        /* TERN_INIT_F_WORKERS: 1 .. 64, the same on every rank */
    const char *netmods;    /* TERN_INIT_F_NETMODS: as TERN_NETMODS ("" = every built one) */
    int wireup;             /* TERN_INIT_F_WIREUP: enum tern_wireup (default: PMIX) */
    int rank, size;         /* TERN_INIT_F_WIREUP with TERN_WIREUP_ADDRESS */
    const char *job;        /* TERN_INIT_F_WIREUP with TERN_WIREUP_ADDRESS: the job's name */
} tern_init_params_t;

/**
 * tern_init with explicit settings: the set fields of params (NULL: none)
 * replace the environment's TERN_WAIT_MODE, TERN_NUM_WORKERS and
 * TERN_NETMODS, so that a program (or a daemon) chooses them without
 * setenv().  Every other setting still comes from the environment.
 * params is read during the call only.  TERN_ERR_INVALID_PARAM, naming the
 * field, for a struct_size this library does not know (smaller than its
 * first version or larger than its own), a bit in fields it does not know,
 * or a value out of range (a netmod not built, workers outside 1 .. 64, an
 * unknown wait mode or wireup, a rank outside 0..size-1, a size below 1 or
 * a missing job name with TERN_WIREUP_ADDRESS); such a call changes
 * nothing.  TERN_WIREUP_PMIX: as tern_init; TERN_WIREUP_STANDALONE: as
 * tern_init_standalone.
 *
 * TERN_WIREUP_ADDRESS wires the process up with no launcher and no PMIx:
 * the caller says which rank of how many it is and names its job (job:
 * 1..255 characters, the same on every rank; a name no other job uses at
 * the same time on these hosts).  Every allowed netmod this process can use
 * is initialised at once, and each worker's address is ready for
 * tern_worker_address: the caller hands the addresses around (a file, a
 * socket, another runtime's modex) and gives every rank's, of every worker,
 * to tern_peer_insert.  The job's own ranks are wired up by the insert
 * that completes the set (see tern_peer_insert); until then sends to them
 * fail, and tern_local_rank / tern_local_size say -1 / 0 (the ranks on this
 * host are known from the addresses).  tern_barrier and tern_finalize then
 * synchronise over the engine's own connections (the job's matching space
 * 65535 is reserved for it), and whatever needs a launcher (tern_connect,
 * tern_spawn, the name service) is TERN_ERR_UNSUPPORTED.
 */
tern_status_t tern_init_ex(const tern_init_params_t *params, tern_context_t **ctx);

/** Collective: drain, barrier, detach, PMIx_Finalize.  Frees ctx. */
tern_status_t tern_finalize(tern_context_t *ctx);

int tern_rank(const tern_context_t *ctx);
int tern_size(const tern_context_t *ctx);
int tern_local_rank(const tern_context_t *ctx);
int tern_local_size(const tern_context_t *ctx);

/** The context's worker (worker 0).  Owned by ctx. */
tern_worker_t *tern_context_worker(tern_context_t *ctx);

/**
 * Take one of the context's other workers (1 .. TERN_NUM_WORKERS-1) for a
 * thread of its own.  Owned by ctx (freed by tern_finalize); give it back
 * with tern_worker_destroy.  TERN_ERR_NO_RESOURCE when all are taken
 * (the message names TERN_NUM_WORKERS).  Safe from any thread.
 */
tern_status_t tern_worker_create(tern_context_t *ctx, tern_worker_t **w);

/**
 * Give a worker from tern_worker_create back (worker 0 cannot be).  Its
 * requests must have completed; its VCs stay wired (a later
 * tern_worker_create may hand it out again).  Safe from any thread.
 */
tern_status_t tern_worker_destroy(tern_worker_t *w);

/** The worker's index i (it pairs with worker i of every rank), -1 for NULL. */
int tern_worker_index(const tern_worker_t *w);

/** Name of the netmod the VC to rank uses ("self", "shm", ...) or NULL. */
const char *tern_peer_netmod(const tern_context_t *ctx, int rank);

/** Job-wide barrier through PMIx_Fence (no data); in a context wired by
 * addresses (TERN_WIREUP_ADDRESS) through messages between the ranks in
 * the reserved space 65535.  The context's default worker (worker 0) makes
 * progress while it waits, so call it from the thread that drives worker 0.
 * TERN_ERR_PEER_FAILED when a rank's connection fails first (by addresses).
 * Through PMIx it is a barrier of the ranks alive: a rank that dies, before
 * it or while the others wait in it, does not fail it (its death fails the
 * VCs to it). */
tern_status_t tern_barrier(tern_context_t *ctx);

/** Abort the whole job through PMIx_Abort with status and message. */
void tern_abort(tern_context_t *ctx, int status, const char *msg);

/* ---- tagged messages ---------------------------------------------------
 * space: an independent matching space (an MPI communicator's context id).
 * Order is kept per (source, space): two sends from one rank in one space
 * that can both match a receive are matched in the order they were posted.
 */

/**
 * Send len bytes from buf to dest.  buf may be reused once the send is
 * complete: at once on TERN_OK, else when tern_wait/tern_test returns its
 * status.  A message longer than the eager limit (TERN_EAGER_LIMIT, 16 KiB
 * by default) goes by rendezvous: it completes only after dest has posted a
 * matching receive and the data has moved.  TERN_ERR_INVALID_PARAM for a
 * len past SSIZE_MAX (as for an iovec's total: nothing is sent), for every
 * call of this header that takes a contiguous buffer.
 */
tern_status_t tern_isend(tern_worker_t *w, const void *buf, size_t len, int dest,
                         int tag, uint16_t space, tern_request_t **req);

/**
 * Send the concatenation of iov[0..iovcnt) to dest (iovcnt 0, iov NULL: an
 * empty message).  The iov array is copied; the buffers it names follow the
 * rules of tern_isend.  TERN_ERR_INVALID_PARAM for more than TERN_IOV_MAX
 * entries, a NULL base with a length, or lengths adding up past SSIZE_MAX.
 */
tern_status_t tern_isendv(tern_worker_t *w, const struct iovec *iov, int iovcnt,
                          int dest, int tag, uint16_t space, tern_request_t **req);

/**
 * Receive into buf (capacity len) from src (or TERN_ANY_SOURCE) with tag (or
 * TERN_ANY_TAG).  info is filled only when the receive completes within this
 * call (TERN_OK, or TERN_ERR_TRUNCATED): on TERN_INPROGRESS it is not
 * touched, and the source, tag and length of the message come from the info
 * given to the tern_wait/tern_test that completes *req.
 * A longer message completes with TERN_ERR_TRUNCATED after writing exactly
 * len bytes; nothing beyond buf+len is touched.
 */
tern_status_t tern_irecv(tern_worker_t *w, void *buf, size_t len, int src, int tag,
                         uint16_t space, tern_recv_info_t *info,
                         tern_request_t **req);

/**
 * Receive scattered into iov[0..iovcnt) (iov copied; iovcnt 0: an empty
 * buffer); info and truncation as for tern_irecv, argument checks as for
 * tern_isendv.
 */
tern_status_t tern_irecvv(tern_worker_t *w, const struct iovec *iov, int iovcnt,
                          int src, int tag, uint16_t space, tern_recv_info_t *info,
                          tern_request_t **req);

/**
 * Blocking conveniences: post, then wait; tern_recv fills info as tern_wait
 * does.  A tern_send above the eager limit is a rendezvous: it returns only
 * once dest has posted a matching receive, so two ranks that both
 * tern_send a large message to each other before receiving wait forever.
 */
tern_status_t tern_send(tern_worker_t *w, const void *buf, size_t len, int dest,
                        int tag, uint16_t space);
tern_status_t tern_recv(tern_worker_t *w, void *buf, size_t len, int src, int tag,
                        uint16_t space, tern_recv_info_t *info);

/* ---- progress and completion -------------------------------------------- */

/** Make progress once on every netmod; returns how many events it handled. */
unsigned tern_progress(tern_worker_t *w);

/**
 * Synchronous send (MPI_Ssend / MPI_Issend): as tern_isend / tern_isendv, but
 * by rendezvous whatever the size, so the send completes only once dest has
 * matched it with a receive.
 */
tern_status_t tern_issend(tern_worker_t *w, const void *buf, size_t len, int dest,
                          int tag, uint16_t space, tern_request_t **req);
tern_status_t tern_issendv(tern_worker_t *w, const struct iovec *iov, int iovcnt,
                           int dest, int tag, uint16_t space, tern_request_t **req);
tern_status_t tern_ssend(tern_worker_t *w, const void *buf, size_t len, int dest,
                         int tag, uint16_t space);

/* ---- probes and cancel ---------------------------------------------------- */

/** A message a matched probe took (MPI_Message): received with tern_imrecv only. */
typedef struct tern_message tern_message_t;

/**
 * Is a message from src (or TERN_ANY_SOURCE) with tag (or TERN_ANY_TAG) in
 * space here?  Makes progress once; *flag 1 with info's source, tag and
 * length filled when one is (it stays for a receive), else 0.  tern_probe
 * waits for one (TERN_ERR_PEER_FAILED when src's connection fails first).
 */
tern_status_t tern_iprobe(tern_worker_t *w, int src, int tag, uint16_t space, int *flag,
                          tern_recv_info_t *info);
tern_status_t tern_probe(tern_worker_t *w, int src, int tag, uint16_t space,
                         tern_recv_info_t *info);

/**
 * Matched probe (MPI_Improbe / MPI_Mprobe): as tern_iprobe, but the message
 * is taken: no other receive can match it, and tern_imrecv / tern_imrecvv
 * (exactly once) receive it, with the returns of tern_irecv.
 */
tern_status_t tern_improbe(tern_worker_t *w, int src, int tag, uint16_t space, int *flag,
                           tern_message_t **msg, tern_recv_info_t *info);
tern_status_t tern_mprobe(tern_worker_t *w, int src, int tag, uint16_t space,
                          tern_message_t **msg, tern_recv_info_t *info);
tern_status_t tern_imrecv(tern_worker_t *w, void *buf, size_t len, tern_message_t *msg,
                          tern_recv_info_t *info, tern_request_t **req);
tern_status_t tern_imrecvv(tern_worker_t *w, const struct iovec *iov, int iovcnt,
                           tern_message_t *msg, tern_recv_info_t *info, tern_request_t **req);

/**
 * Cancel a receive: one that has not matched completes with
 * TERN_ERR_CANCELED (reap it with tern_wait / tern_test); one that has goes
 * on and completes as it would have.  TERN_ERR_UNSUPPORTED for a send.
 */
tern_status_t tern_cancel(tern_worker_t *w, tern_request_t *req);

/**
 * Test req, making progress once if it is still pending: TERN_INPROGRESS
 * while pending (info not touched), else its final status, with info filled
 * when non-NULL.  A completed request is freed by this call.
 */
tern_status_t tern_test(tern_worker_t *w, tern_request_t *req, tern_recv_info_t *info);

/**
 * Progress until req completes; returns its status (info filled when
 * non-NULL) and frees it.  A peer that dies while req depends on it
 * completes req with TERN_ERR_PEER_FAILED.
 */
tern_status_t tern_wait(tern_worker_t *w, tern_request_t *req, tern_recv_info_t *info);

/**
 * Wait for all of reqs[0..n) (NULL entries skipped); each is freed and its
 * entry set to NULL.  Returns TERN_OK when every one succeeded, else the
 * first error in array order (every request is still waited for and
 * freed).  infos (NULL: not wanted) has room for n entries: infos[i] gets
 * what tern_wait's info would for reqs[i], its status included, so each
 * request's own status is there (MPI_Waitall's statuses); a NULL reqs[i]
 * gets source TERN_ANY_SOURCE, tag TERN_ANY_TAG, length 0, status TERN_OK.
 * tern_last_error() then tells the last failure met.
 */
tern_status_t tern_waitall(tern_worker_t *w, tern_request_t **reqs, size_t n,
                           tern_recv_info_t *infos);

/**
 * Block until something may have happened (a message arrived, a request
 * completed, tern_worker_signal() was called) or timeout_ms passed (<0: no
 * limit).  How it waits follows TERN_WAIT_MODE: yield by default (poll
 * TERN_SPIN_COUNT times, then sched_yield() between polls), spin (poll
 * only), or block (poll TERN_SPIN_COUNT times, then sleep on every netmod's
 * event source and the worker's wake-up at once).
 * A request of w that completed, or a message that arrived unexpected (no
 * receive posted for it), since the previous tern_worker_wait on w returned
 * counts as activity: a loop that tests its requests, or probes for
 * messages, and then waits misses none that completed or arrived while it
 * was testing or probing (a probe for one tag progresses w and may queue
 * the message another probe of the loop wants).
 * Returns TERN_OK on activity, TERN_ERR_INTERRUPTED when woken by a signal,
 * TERN_ERR_TIMED_OUT when the time ran out.
 */
tern_status_t tern_worker_wait(tern_worker_t *w, int timeout_ms);

/** Wake a thread blocked in tern_worker_wait() on w; safe from any thread. */
void tern_worker_signal(tern_worker_t *w);

/* ---- counters ---------------------------------------------------------- */

/** A named event count of a worker's netmods (e.g. "verbs.post_send") or
 *  of the engine's same-host copy (e.g. "cma.get_bytes"). */
typedef struct tern_counter {
    const char *name; /* static string, prefixed with the netmod's name or "cma" */
    uint64_t value;   /* since tern_init */
} tern_counter_t;

/**
 * The counters of w: its netmods' (what each calls in its device library:
 * verbs counts ibv_post_send, ibv_post_srq_recv, ibv_poll_cq ...), then
 * the engine's same-host copy's (cma.get_bytes and cma.put_bytes: bytes
 * this worker moved with process_vm_readv / _writev; cma.gets, cma.puts:
 * transfers it completed; cma.refused: transfers the kernel refused here;
 * cma.declined: offers it declined (its TERN_CMA, another host);
 * cma.fallbacks: sends it handed back to the netmod's own path), then the
 * one-sided path's (rma.direct: operations done on memory this process
 * reaches directly, no message; rma.sent: operations sent to their
 * target; rma.applied: peers' operations this worker applied as their
 * target; rma.flushes: flush messages sent), for
 * benchmarks that report calls per message and tests.  Fills up to max entries of
 * out (out may be NULL when max is 0) and returns how many counters exist,
 * or a negative TERN_ERR_INVALID_PARAM for a NULL worker.  Same thread as
 * the worker's other calls.
 */
int tern_worker_counters(tern_worker_t *w, tern_counter_t *out, int max);

/* ---- PMIx name service ------------------------------------------------- */

/**
 * Publish key=value (strings) in the job's PMIx name service.
 * TERN_ERR_UNSUPPORTED when there is none: a singleton, or a launcher
 * whose PMIx server has no name service (Slurm's srun --mpi=pmix); the
 * same for tern_lookup and tern_unpublish.
 */
tern_status_t tern_publish(tern_context_t *ctx, const char *key, const char *value);

/**
 * Look key up; on success *value is a malloc'd string the caller frees.
 * TERN_ERR_NOT_FOUND when nobody published it.
 */
tern_status_t tern_lookup(tern_context_t *ctx, const char *key, char **value);

tern_status_t tern_unpublish(tern_context_t *ctx, const char *key);

/* ---- dynamic processes --------------------------------------------------- */

/** Longest job name tern_spawn writes, with its terminating NUL. */
#define TERN_JOB_NAME_MAX 256

/**
 * Start n ranks of the program argv[0] (argv NULL-terminated; looked up in
 * PATH by the launcher) as a new job, through the launcher's PMIx_Spawn.
 * env: "NAME=value" entries added to the new ranks' environment (NULL-
 * terminated, or NULL); wdir: their working directory, or NULL.  Called by
 * one rank (not collective).  On success the job's name (its PMIx
 * namespace) is in job[TERN_JOB_NAME_MAX].  All or nothing: when a rank
 * cannot start, none runs, and the status says why: TERN_ERR_NOT_FOUND (no
 * such program or directory), TERN_ERR_UNSUPPORTED (the launcher cannot
 * spawn: a singleton, Slurm's srun --mpi=pmix), TERN_ERR_NO_RESOURCE,
 * TERN_ERR_PMIX (anything else); the launcher's log names the cause.  The
 * new job is a tern job of its own (its ranks call tern_init); its end and
 * its ranks' failures reach this job as PMIx events, never as a failure of
 * this job.
 */
tern_status_t tern_spawn(tern_context_t *ctx, const char *const argv[], int n,
                         const char *const env[], const char *wdir, char job[TERN_JOB_NAME_MAX]);

/** One program of tern_spawn_apps: n ranks of argv[0] (argv NULL-terminated),
 * env entries added to their environment (NULL-terminated, or NULL), their
 * working directory wdir (NULL: the launcher's). */
typedef struct tern_app {
    const char *const *argv;
    int n;
    const char *const *env;
    const char *wdir;
} tern_app_t;

/**
 * Start napps programs as one new job (MPMD, through one PMIx_Spawn of
 * napps apps): its ranks 0 .. apps[0].n - 1 run apps[0], the next apps[1].n
 * apps[1], and so on; they wire up as one job.  Otherwise as tern_spawn
 * (called by one rank, all or nothing, the same statuses), which is
 * tern_spawn_apps of one program.  TERN_ERR_INVALID_PARAM for no program,
 * a NULL or empty argv[0] or fewer than 1 rank of one.
 */
tern_status_t tern_spawn_apps(tern_context_t *ctx, const tern_app_t apps[], int napps,
                              char job[TERN_JOB_NAME_MAX]);

/** This job's name (its PMIx namespace), for the other side's tern_connect. */
const char *tern_job_name(const tern_context_t *ctx);

/**
 * Wire this job to the ranks of job `name` (a job tern_spawn started, or one
 * found with tern_lookup).  Collective over every rank of both jobs: each
 * side calls tern_connect with the other's name.  On success *job is a
 * handle whose ranks are reached with the usual calls: the peer id of its
 * rank r is tern_job_peer(*job, r) (ids after this job's own ranks), to be
 * used as dest / src of tern_isend, tern_irecv ..., and the source of a
 * message received from it.  Each of the other job's VCs (on every worker)
 * is carried by the highest-priority netmod both sides allow that reaches
 * other jobs (verbs, dpdk, tcp) and whose card the rank's address has, so
 * the death of one of its ranks fails only the VC to that rank
 * (TERN_ERR_PEER_FAILED).
 * TERN_ERR_NOT_FOUND for a job the launcher does not know,
 * TERN_ERR_PEER_FAILED naming the job when a rank of it has ended (it can
 * no longer take part): at once when it ended before the call, as soon as
 * it ends while the call waits for the other side (the launcher's process
 * table says so; with a launcher that has none the call waits as PMIx
 * does), TERN_ERR_UNSUPPORTED when no built and allowed netmod reaches
 * other jobs or the launcher cannot connect jobs.  Not thread-safe: no
 * other thread may use the context's workers during the call.
 */
tern_status_t tern_connect(tern_context_t *ctx, const char *name, tern_job_t **job);

/** Ranks of a connected job (0 for NULL). */
int tern_job_size(const tern_job_t *job);

/** Peer id of rank of a connected job; -1 when out of range or disconnected. */
int tern_job_peer(const tern_job_t *job, int rank);

/**
 * Close the VCs to job's ranks once the sends queued on them are out, then
 * disconnect the jobs (collective over both, like tern_connect).  Its peer
 * ids are invalid afterwards (TERN_ERR_INVALID_RANK); the handle stays
 * readable until tern_finalize.  Not thread-safe, as tern_connect.
 */
tern_status_t tern_disconnect(tern_job_t *job);

/* ---- addresses: wire-up by any means --------------------------------------- */

/** Largest address tern_worker_address writes. */
#define TERN_ADDRESS_MAX 8192

/**
 * The address of worker w: an opaque, versioned blob that names this
 * process, its job, rank and worker, and carries the card of every netmod
 * the worker has (as ucp_worker_get_address or fi_getname).  Another
 * process that inserts it (tern_peer_insert) can reach this worker,
 * whatever carried it there.  Written into buf (capacity *len); *len is
 * set to its size.  TERN_ERR_TRUNCATED (nothing written, *len the size
 * needed) when buf is NULL or too small.  An address stays valid until
 * tern_finalize; it changes when a netmod is added to the worker (for
 * tern_connect or a port), so take it when you hand it out.
 */
tern_status_t tern_worker_address(tern_worker_t *w, void *buf, size_t *len);

/**
 * Insert a peer's address (from its tern_worker_address) and get its peer
 * id, the dest / src of tern_isend, tern_irecv ... (as fi_av_insert or
 * ucp_ep_create):
 *  - a rank of this job: *peer is that rank.  In a context of
 *    TERN_WIREUP_ADDRESS every rank's address, of every worker (i of
 *    TERN_NUM_WORKERS, worker i's goes to worker i), is inserted once; the
 *    insert that completes the set wires the job up: it chooses each peer's
 *    netmod (shm with the ranks on this host, as tern_init does), connects
 *    and waits for every other rank to have done the same (a barrier over
 *    the new connections, which also gives the node's ranks their shared
 *    segment).  Its own address is accepted too.  Elsewhere (tern_init) the
 *    job is wired already and the insert only checks the address.
 *  - a process of another job (a different job name): a peer of its own,
 *    one rank of one worker, with an id after this job's ranks; the VC
 *    goes over the highest-priority netmod both addresses have that reaches
 *    other jobs, and is made by the first send; the other process inserts
 *    this one's address too.  The same address inserted again gives the
 *    same id.  Its VC fails when the netmod sees the peer gone (there is no
 *    launcher to tell) and is closed by tern_finalize.
 * TERN_ERR_MALFORMED naming the cause for what is not an address of this
 * version (wrong magic or version, truncated, damaged); TERN_ERR_UNREACHABLE
 * when no allowed netmod of this process reaches it (naming its netmods and
 * this process's); TERN_ERR_INVALID_PARAM for an address of this job whose
 * rank or worker is out of range, or that contradicts one inserted before.
 * A failed wire-up fails every insert after it.  Not thread-safe: no other
 * thread may use the context's workers during the call.
 */
tern_status_t tern_peer_insert(tern_context_t *ctx, const void *addr, size_t len, int *peer);

/* ---- ports: one process to another, no collective ------------------------ */

/** Longest port name tern_port_open writes, with its terminating NUL. */
#define TERN_PORT_NAME_MAX 1024

/**
 * Open a port other processes (of any job, or singletons) connect to; its
 * name, to hand them (a file, argv, tern_publish), in port.  Connections
 * are taken with tern_port_accept.  Ports use worker 0 and the netmods that
 * take ports (tcp, verbs, dpdk on a shared medium): the name is worker 0's
 * address with their cards (docs/addresses.md).  TERN_ERR_UNSUPPORTED
 * naming why when no allowed netmod takes ports.
 */
tern_status_t tern_port_open(tern_context_t *ctx, char port[TERN_PORT_NAME_MAX]);

/**
 * Connect to the process that opened port.  Not collective: *peer is a
 * one-rank job, tern_job_peer(*peer, 0) its peer id on worker 0.  The
 * connection is made by the first send; the other side's tern_port_accept
 * sees this process once it arrives.  TERN_ERR_INVALID_PARAM for a name
 * that is not a port name of this version (or this job's own).
 */
tern_status_t tern_port_connect(tern_context_t *ctx, const char *port, tern_job_t **peer);

/**
 * Take the next process that connected to this process's port: *peer a
 * one-rank job as for tern_port_connect.  Makes progress on worker 0 once;
 * TERN_ERR_AGAIN when nobody came yet (call again).  tern_disconnect(peer)
 * closes it (no collective for port peers).
 */
tern_status_t tern_port_accept(tern_context_t *ctx, tern_job_t **peer);

#ifdef __cplusplus
}
#endif
#endif
