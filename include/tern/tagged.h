/*
 * tern — 64-bit tagged messages, remote immediate data, a completion queue
 * per worker, injected sends, and peek / claim / discard of unexpected
 * messages: what a libfabric provider (FI_TAGGED, FI_MSG, fi_cq) or a
 * runtime with its own request objects needs from the engine.
 *
 * These calls share the matching queues, the connections and the ordering
 * of core.h's: a message sent with either is received with either, in the
 * same space, in send order per (source, space).  A core.h tag t is the
 * 64-bit tag t; a core.h receive with TERN_ANY_TAG accepts the tags
 * 0 .. TERN_TAG_MAX (the 64-bit tag with its low 31 bits ignored and the
 * others zero), so the two families can share a space without a core.h
 * receive ever seeing a tag it cannot report.
 *
 * Matching: a receive (src, want, ignore, space) accepts a message
 * (source, tag, space) when the spaces are equal, src is TERN_ANY_SOURCE
 * or the source, and (tag ^ want) & ~ignore == 0.
 *
 * Completion: an operation given a tern_op_t with TERN_OP_CQ delivers its
 * completion, with op->context, to the completion queue of its worker
 * (tern_cq_read) in the order operations complete, and nothing has to be
 * reaped: the call returns TERN_OK (posted, or done at once: the entry is
 * queued either way) and, when req is non-NULL, sets *req to the pending
 * operation (NULL when it completed within the call), a handle good only
 * for tern_cancel and only until its entry has been read.  Without TERN_OP_CQ the calls return as
 * core.h's do (TERN_OK done at once, TERN_INPROGRESS with *req reaped by
 * tern_wait / tern_test); the full 64-bit tag and the immediate data of a
 * received message then come only through tern_tprobe.
 *
 * Threads: as core.h (one thread at a time per worker).
 */
#ifndef TERN_TAGGED_H
#define TERN_TAGGED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <tern/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* tern_op_t.flags */
#define TERN_OP_DATA (1u << 0)   /* send: op->data travels with the message as immediate data */
#define TERN_OP_CQ (1u << 1)     /* completion goes to the worker's CQ with op->context */
#define TERN_OP_INJECT (1u << 2) /* send: the buffer may be reused when the call returns */
#define TERN_OP_SYNC (1u << 3)   /* send: complete only once a receive has matched it */
#define TERN_OP_CQ_ERRORS (1u << 4) /* with TERN_OP_CQ: an entry only when it fails
                                     * (libfabric's selective completion) */
#define TERN_OP_DISCARD (1u << 5)   /* tern_tmrecv: drop the claimed message unread */

/**
 * Optional parameters of an operation (NULL: none).  Read during the call
 * only.  Unknown bits in flags are TERN_ERR_INVALID_PARAM.
 */
typedef struct tern_op {
    uint32_t flags;  /* TERN_OP_* */
    uint64_t data;   /* TERN_OP_DATA: 64 bits of remote immediate data */
    void *context;   /* TERN_OP_CQ: handed back in the completion entry */
} tern_op_t;

/* tern_cq_entry_t.flags */
#define TERN_CQ_SEND (1u << 0) /* a send's completion */
#define TERN_CQ_RECV (1u << 1) /* a receive's (or a probe's report of a message) */
#define TERN_CQ_DATA (1u << 2) /* the message carried immediate data (in data) */
/* one-sided (tern/rma.h), as libfabric's FI_WRITE, FI_READ, FI_ATOMIC and
 * FI_REMOTE_WRITE: */
#define TERN_CQ_WRITE (1u << 3)  /* a put's, or an accumulate's without a result */
#define TERN_CQ_READ (1u << 4)   /* a get's, or (with ATOMIC) a fetching operation's */
#define TERN_CQ_ATOMIC (1u << 5) /* an atomic's or an accumulate's */
#define TERN_CQ_FLUSH (1u << 6)  /* a flush's */
#define TERN_CQ_REMOTE_WRITE (1u << 7) /* target: a put with immediate data arrived
                                        * (TERN_CQ_DATA, data, peer, length) */

/**
 * A completion: what finished, with the user's context.  status TERN_OK,
 * or why it failed: TERN_ERR_TRUNCATED (a message longer than the buffer:
 * length bytes were written, msg_len were sent), TERN_ERR_CANCELED
 * (tern_cancel), TERN_ERR_PEER_FAILED (its connection failed) ...
 */
typedef struct tern_cq_entry {
    void *context;        /* op->context of the operation */
    uint32_t flags;       /* TERN_CQ_* */
    tern_status_t status; /* its final status */
    int peer;             /* receive: the sender's peer id; send: the destination */
    uint64_t tag;         /* receive: the message's tag; send: the tag it was sent with */
    uint64_t data;        /* with TERN_CQ_DATA: the immediate data */
    size_t length;        /* receive: bytes written into the buffer; send: bytes sent */
    size_t msg_len;       /* receive: bytes the sender sent (> length: truncated) */
} tern_cq_entry_t;

/**
 * Send len bytes of buf (or the iovec, as tern_isendv) to dest with a
 * 64-bit tag, every value allowed.  op may add immediate data
 * (TERN_OP_DATA), ask for a synchronous send (TERN_OP_SYNC), let the
 * caller reuse buf at once (TERN_OP_INJECT: the bytes not yet out are
 * copied when the send cannot finish within the call; without TERN_OP_CQ
 * an injected send has no completion at all: TERN_OK, *req NULL, and a
 * later failure of its connection is seen by the operations after it) and
 * route its completion to the CQ (TERN_OP_CQ, see above).  Argument errors as tern_isend;
 * TERN_ERR_INVALID_PARAM for unknown op flags or TERN_OP_DISCARD.  An
 * error return posts nothing and produces no entry.
 */
tern_status_t tern_tsend(tern_worker_t *w, const void *buf, size_t len, int dest, uint64_t tag,
                         uint16_t space, const tern_op_t *op, tern_request_t **req);
tern_status_t tern_tsendv(tern_worker_t *w, const struct iovec *iov, int iovcnt, int dest,
                          uint64_t tag, uint16_t space, const tern_op_t *op,
                          tern_request_t **req);

/**
 * Receive into buf (or the iovec) the first message from src (or
 * TERN_ANY_SOURCE) in space whose tag matches want outside the bits of
 * ignore.  With TERN_OP_CQ the entry (source, tag, data, lengths) comes
 * through the CQ.
 * Without: as tern_irecv (the info a completion fills has the tag's low 31
 * bits).  TERN_OP_DATA, _INJECT, _SYNC and _DISCARD are
 * TERN_ERR_INVALID_PARAM here.  tern_cancel cancels one that has not
 * matched (a CQ entry with TERN_ERR_CANCELED, or the request's status).
 */
tern_status_t tern_trecv(tern_worker_t *w, void *buf, size_t len, int src, uint64_t want,
                         uint64_t ignore, uint16_t space, const tern_op_t *op,
                         tern_request_t **req);
tern_status_t tern_trecvv(tern_worker_t *w, const struct iovec *iov, int iovcnt, int src,
                          uint64_t want, uint64_t ignore, uint16_t space, const tern_op_t *op,
                          tern_request_t **req);

/* tern_tprobe flags */
#define TERN_PROBE_CLAIM (1u << 0)   /* take the message: only tern_tmrecv receives it */
#define TERN_PROBE_DISCARD (1u << 1) /* drop the message found (its payload is thrown away) */

/**
 * Look for a message a receive (src, want, ignore, space) would match,
 * making progress once first.  *flag 1 and *entry filled (flags
 * TERN_CQ_RECV [| TERN_CQ_DATA], peer, tag, data, msg_len; length 0,
 * context NULL, status TERN_OK) when there is one, else *flag 0.
 * Without flags the message stays for a receive (a peek);
 * TERN_PROBE_CLAIM takes it and sets *msg for tern_tmrecv (exactly once);
 * TERN_PROBE_DISCARD drops it (msg not touched; may be NULL).  The two
 * together are TERN_ERR_INVALID_PARAM.  entry may be NULL.
 */
tern_status_t tern_tprobe(tern_worker_t *w, int src, uint64_t want, uint64_t ignore,
                          uint16_t space, unsigned flags, int *flag, tern_message_t **msg,
                          tern_cq_entry_t *entry);

/**
 * Receive a message claimed by tern_tprobe (or tern_improbe), with op as
 * for tern_trecv; TERN_OP_DISCARD instead drops it (buf may be NULL, len
 * 0): its completion, if asked for, says length 0 and TERN_OK.
 */
tern_status_t tern_tmrecv(tern_worker_t *w, void *buf, size_t len, tern_message_t *msg,
                          const tern_op_t *op, tern_request_t **req);
tern_status_t tern_tmrecvv(tern_worker_t *w, const struct iovec *iov, int iovcnt,
                           tern_message_t *msg, const tern_op_t *op, tern_request_t **req);

/**
 * Take up to max completions of w, oldest first, into out; makes progress
 * once when none is waiting.  Returns how many (0: none yet), or
 * TERN_ERR_INVALID_PARAM for a NULL worker or out with max > 0.  Each
 * completion is O(1) (no scan over outstanding operations); the queue
 * grows as needed, so none is ever lost.
 */
int tern_cq_read(tern_worker_t *w, tern_cq_entry_t *out, int max);

/** Completions of w waiting in its queue (no progress made). */
size_t tern_cq_count(const tern_worker_t *w);

#ifdef __cplusplus
}
#endif
#endif
