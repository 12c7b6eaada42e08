/*
 * tern — context, worker and tagged point-to-point messaging.
 *
 * A context is one per process (one per job).  tern_init() wires the process
 * up through PMIx: it reads rank, size and the local peers, creates or
 * attaches the node's shared-memory segment, and exchanges every netmod's
 * business card.  A worker is the progress engine of one polling thread: it
 * owns its queues and takes no lock on the fast path.  This release opens
 * the netmods on the context's first worker (tern_context_worker()).
 *
 * Operations return TERN_OK when they completed at once (no request is
 * created and *req is set to NULL), TERN_INPROGRESS with *req set when they
 * could not, or a negative TERN_ERR_*.  Requests belong to the library; the
 * caller gives each one back with tern_request_free() after completion (or
 * lets tern_wait/tern_test with the free flag do it).
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
typedef struct tern_request tern_request_t;

#define TERN_ANY_SOURCE (-1)
#define TERN_ANY_TAG (-1)
#define TERN_TAG_MAX 0x7fffffff
#define TERN_IOV_MAX (1 << 20) /* most iovec entries one operation takes */

/** Completion information of a receive (and, with source = own rank, a send). */
typedef struct tern_recv_info {
    int source;          /* sender rank */
    int tag;             /* tag the message was sent with */
    size_t length;       /* bytes the sender sent (may exceed what was written) */
    tern_status_t status;
} tern_recv_info_t;

/**
 * Initialise the process: PMIx client init, wire-up of all netmods.
 * Collective over the job.  On success *ctx owns everything; free it with
 * tern_finalize().  Statuses: TERN_ERR_PMIX (no PMIx server reachable or a
 * key missing), TERN_ERR_NO_SHM_SPACE, TERN_ERR_SHM, TERN_ERR_NO_MEMORY.
 */
tern_status_t tern_init(tern_context_t **ctx);

/** Collective: drain, barrier, detach, PMIx_Finalize.  Frees ctx. */
tern_status_t tern_finalize(tern_context_t *ctx);

int tern_rank(const tern_context_t *ctx);
int tern_size(const tern_context_t *ctx);
int tern_local_rank(const tern_context_t *ctx);
int tern_local_size(const tern_context_t *ctx);

/** The worker that drives the context's netmods.  Owned by ctx. */
tern_worker_t *tern_context_worker(tern_context_t *ctx);

/** Name of the netmod the VC to rank uses ("self", "shm", ...) or NULL. */
const char *tern_peer_netmod(const tern_context_t *ctx, int rank);

/** Job-wide barrier through PMIx_Fence (no data). */
tern_status_t tern_barrier(tern_context_t *ctx);

/** Abort the whole job through PMIx_Abort with status and message. */
void tern_abort(tern_context_t *ctx, int status, const char *msg);

/* ---- tagged messages ---------------------------------------------------
 * space: an independent matching space (an MPI communicator's context id).
 * Order is kept per (source, space): two sends from one rank in one space
 * that can both match a receive are matched in the order they were posted.
 */

/** Send len bytes from buf to dest.  buf may be reused once complete. */
tern_status_t tern_isend(tern_worker_t *w, const void *buf, size_t len, int dest,
                         int tag, uint16_t space, tern_request_t **req);

/** Send the concatenation of iov[0..iovcnt) to dest. */
tern_status_t tern_isendv(tern_worker_t *w, const struct iovec *iov, int iovcnt,
                          int dest, int tag, uint16_t space, tern_request_t **req);

/**
 * Receive into buf (capacity len) from src (or TERN_ANY_SOURCE) with tag (or
 * TERN_ANY_TAG).  If it completes at once, *info (when non-NULL) is filled.
 * A longer message completes with TERN_ERR_TRUNCATED after writing exactly
 * len bytes; nothing beyond buf+len is touched.
 */
tern_status_t tern_irecv(tern_worker_t *w, void *buf, size_t len, int src, int tag,
                         uint16_t space, tern_recv_info_t *info,
                         tern_request_t **req);

/** Receive scattered into iov[0..iovcnt). */
tern_status_t tern_irecvv(tern_worker_t *w, const struct iovec *iov, int iovcnt,
                          int src, int tag, uint16_t space, tern_recv_info_t *info,
                          tern_request_t **req);

/** Blocking conveniences: post, then wait. */
tern_status_t tern_send(tern_worker_t *w, const void *buf, size_t len, int dest,
                        int tag, uint16_t space);
tern_status_t tern_recv(tern_worker_t *w, void *buf, size_t len, int src, int tag,
                        uint16_t space, tern_recv_info_t *info);

/* ---- progress and completion -------------------------------------------- */

/** Make progress once on every netmod; returns how many events it handled. */
unsigned tern_progress(tern_worker_t *w);

/**
 * Test req: TERN_INPROGRESS while pending, else its final status (info
 * filled when non-NULL).  A completed request is freed by this call.
 */
tern_status_t tern_test(tern_worker_t *w, tern_request_t *req, tern_recv_info_t *info);

/**
 * Progress until req completes; returns its status and frees it.  A peer that
 * dies while req depends on it completes req with TERN_ERR_PEER_FAILED.
 */
tern_status_t tern_wait(tern_worker_t *w, tern_request_t *req, tern_recv_info_t *info);

/** Wait for all of reqs[0..n) (NULL entries skipped); first error returned. */
tern_status_t tern_waitall(tern_worker_t *w, tern_request_t **reqs, size_t n);

/**
 * Block until something may have happened (a message arrived, a request
 * completed, tern_worker_signal() was called) or timeout_ms passed (<0: no
 * limit).  How it waits follows the worker's wait mode (spin by default).
 * Returns TERN_OK on activity, TERN_ERR_INTERRUPTED when woken by a signal,
 * TERN_ERR_TIMED_OUT when the time ran out.
 */
tern_status_t tern_worker_wait(tern_worker_t *w, int timeout_ms);

/** Wake a thread blocked in tern_worker_wait() on w; safe from any thread. */
void tern_worker_signal(tern_worker_t *w);

/* ---- PMIx name service ------------------------------------------------- */

/** Publish key=value (strings) in the job's PMIx name service. */
tern_status_t tern_publish(tern_context_t *ctx, const char *key, const char *value);

/**
 * Look key up; on success *value is a malloc'd string the caller frees.
 * TERN_ERR_NOT_FOUND when nobody published it.
 */
tern_status_t tern_lookup(tern_context_t *ctx, const char *key, char **value);

tern_status_t tern_unpublish(tern_context_t *ctx, const char *key);

#ifdef __cplusplus
}
#endif
#endif
