/*
 * The engine's same-host copy: rendezvous data moved between two processes
 * of one host with Cross Memory Attach (process_vm_readv / _writev), one
 * copy from the sender's buffer into the receiver's, whatever netmod carries
 * the VC (shm, a tcp port peer, a connected job's rank, a dpdk or verbs
 * peer in the same namespaces).  The netmod's stream carries only the
 * rendezvous packets; its own LMT (or the engine's null mode) is the
 * fallback when CMA cannot be used.
 *
 * Two layers:
 *   engine/cma.c      the cookie wire format and the copy
 *                     step (no VC, no request: unit-tested alone);
 *   engine/cma_lmt.c  the protocol on a VC (modes TERN_LMT_CMA_GET / _PUT of
 *                     engine/pkt.h), its fallback, its progress queue and
 *                     its counters.
 *
 * Host identity: the engine's, as in worker addresses (engine/address.h:
 * the kernel's boot id with the pid and network namespaces' inode numbers).
 * Two processes with equal identities can name each other by pid (same pid
 * namespace of one kernel); separate network namespaces stand for separate
 * hosts (the tests model hosts so, and a process in another network
 * namespace is usually in another container).
 */
#ifndef TERN_ENGINE_CMA_H
#define TERN_ENGINE_CMA_H

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <tern/tern.h>

#include "engine/address.h"
#include "engine/cursor.h"
#include "engine/pkt.h"

/* TERN_CMA: which VCs to a same-host peer the engine's copy serves. */
enum tern_cma_scope { TERN_CMA_OFF = 0, TERN_CMA_OUTSIDE = 1, TERN_CMA_ALL = 2 };

/* TERN_CMA_THRESHOLD=auto: each netmod's cma_threshold (engine/netmod.h);
 * a netmod's TERN_CMA_NEVER: only when TERN_LMT_MODE forces get or put. */
#define TERN_CMA_AUTO UINT64_MAX
#define TERN_CMA_NEVER UINT64_MAX

/* Counters of a worker (tern_worker_counters: "cma.get_bytes" ...). */
enum tern_cma_counter {
    TERN_CMA_C_GET_BYTES = 0, /* bytes this worker read (process_vm_readv) */
    TERN_CMA_C_PUT_BYTES,     /* bytes this worker wrote (process_vm_writev) */
    TERN_CMA_C_GETS,          /* gets it completed */
    TERN_CMA_C_PUTS,          /* puts it completed */
    TERN_CMA_C_REFUSED,       /* transfers the kernel (or the test hook) refused here */
    TERN_CMA_C_DECLINED,      /* offers it declined: another host, TERN_CMA, refused before */
    TERN_CMA_C_FALLBACKS,     /* sends it handed back to the netmod's own path */
    TERN_CMA_NCOUNTERS
};

/* ---- cookies (wire format, host byte order like engine/pkt.h) --------------- */

#define TERN_CMA_MAGIC 0x414d4374u /* "tCMA" */
#define TERN_CMA_VERSION 1
#define TERN_CMA_INLINE 12 /* segments carried in the cookie itself */

enum tern_cma_kind {
    TERN_CMA_OFFER = 1,    /* RTS of a get: the sender's data (pid, host, segments) */
    TERN_CMA_HELLO = 2,    /* RTS of a put: the sender's pid and host, no segments */
    TERN_CMA_KEY = 3,      /* CTS of a put: the receiver's buffer */
    TERN_CMA_REFUSED = 4,  /* COOKIE to the sender: no CMA for this message (note) */
    TERN_CMA_FALLBACK = 5, /* COOKIE to the receiver: the netmod's mode and cookie (note) */
};

/* Why a side did not (or could no longer) copy with CMA. */
enum tern_cma_reason {
    TERN_CMA_R_KERNEL = 1,     /* the kernel (or the test hook) refused: err says why */
    TERN_CMA_R_OTHER_HOST = 2, /* the peer's host identity differs (or is unknown) */
    TERN_CMA_R_OFF = 3,        /* TERN_CMA here does not serve this VC */
    TERN_CMA_R_REFUSED = 4,    /* the kernel refused on this VC before */
};

typedef struct tern_cma_seg {
    uint64_t base, len;
} tern_cma_seg_t;

/* OFFER, HELLO and KEY. */
typedef struct tern_cma_cookie {
    uint32_t magic;      /* TERN_CMA_MAGIC */
    uint8_t kind;        /* enum tern_cma_kind */
    uint8_t version;     /* TERN_CMA_VERSION */
    uint16_t reserved;   /* zero */
    int32_t pid;         /* the process whose memory the segments name */
    uint32_t iovcnt;     /* segments in all; the first min(iovcnt, TERN_CMA_INLINE) inline */
    tern_host_id_t host; /* that process's host (engine/address.h, host byte order) */
    uint64_t len;        /* OFFER: message bytes; KEY: receive buffer bytes; HELLO: message */
    uint64_t iov_addr;   /* its struct iovec array (the segments past the inline ones) */
    tern_cma_seg_t seg[TERN_CMA_INLINE];
} tern_cma_cookie_t;

#define TERN_CMA_COOKIE_HDR 64
static_assert(sizeof(tern_host_id_t) == 32, "the host identity in a CMA cookie");
static_assert(offsetof(tern_cma_cookie_t, seg) == TERN_CMA_COOKIE_HDR, "CMA cookie layout");
static_assert(sizeof(tern_cma_cookie_t) == TERN_COOKIE_MAX, "CMA cookie fills TERN_COOKIE_MAX");

/* REFUSED and FALLBACK; a FALLBACK's netmod cookie (nm_len bytes) follows. */
typedef struct tern_cma_note {
    uint32_t magic; /* TERN_CMA_MAGIC */
    uint8_t kind;   /* TERN_CMA_REFUSED or TERN_CMA_FALLBACK */
    uint8_t version;
    uint8_t mode;    /* FALLBACK: the LMT mode the netmod chose (never a CMA one) */
    uint8_t reason;  /* REFUSED: enum tern_cma_reason */
    int32_t err;     /* REFUSED by the kernel: its errno */
    uint32_t nm_len; /* FALLBACK: bytes of the netmod's cookie after the note */
    uint64_t id;     /* REFUSED: the receive request's id, for the FALLBACK */
} tern_cma_note_t;

#define TERN_CMA_NOTE_SIZE 24
#define TERN_CMA_FALLBACK_NM_MAX (TERN_COOKIE_MAX - TERN_CMA_NOTE_SIZE)
static_assert(sizeof(tern_cma_note_t) == TERN_CMA_NOTE_SIZE, "CMA note is a wire format");

/* Fill c (kind OFFER or KEY) describing the len bytes of cur (from its
 * start) in this process; HELLO: cur may be NULL.  Returns the bytes of
 * the cookie to send. */
size_t tern_cma_cookie_fill(tern_cma_cookie_t *c, enum tern_cma_kind kind, const tern_cursor_t *cur,
                            uint64_t len);

/* Check a received cookie of `kind`, len bytes, and copy it to *c (zeroed
 * past what was sent).  TERN_ERR_MALFORMED names what is wrong; `who`
 * names the peer in the message ("rank 3"). */
tern_status_t tern_cma_cookie_parse(const void *buf, size_t len, enum tern_cma_kind kind,
                                    tern_cma_cookie_t *c, const char *who);

/* ---- the copy --------------------------------------------------------------- */

#define TERN_CMA_STEP (4u << 20) /* bytes per syscall: a step never holds progress long */
#define TERN_CMA_IOV 64          /* segments per side per syscall (<= IOV_MAX) */
#define TERN_CMA_FAULT_OFF UINT64_MAX

/* A transfer between a local cursor and a peer's segments. */
typedef struct tern_cma_xfer {
    pid_t pid;  /* the peer */
    bool write; /* put: process_vm_writev; get: process_vm_readv */
    /* the peer's segments (addresses in its space, never dereferenced
     * here): the cursor only slices and advances them */
    tern_cursor_t peer;
    uint64_t done, want; /* bytes moved so far, bytes to move */
    /* test hook (TERN_FAULT_CMA_EPERM_AFTER): calls fail with EPERM once
     * done has reached it; TERN_CMA_FAULT_OFF never */
    uint64_t fault_after;
} tern_cma_xfer_t;

/* One step: at most TERN_CMA_STEP bytes and TERN_CMA_IOV segments per side
 * between cur (advanced) and the peer's segments, never past want.
 * Returns the bytes moved (> 0), 0 when done == want, or -errno: the
 * syscall's (-EPERM, -EACCES, -ENOSYS: a refusal; -ESRCH: the peer is gone;
 * -EFAULT: a range is not mapped), -EMSGSIZE when the segments end before
 * want bytes (or the cursor does). */
ssize_t tern_cma_step(tern_cma_xfer_t *x, tern_cursor_t *cur);

/* A refusal by the kernel (or the hook): the caller falls back. */
static inline bool tern_cma_refusal(ssize_t err)
{
    return err == -EPERM || err == -EACCES || err == -ENOSYS;
}

/* Read a peer's iovec array of n entries at addr into out (the segments
 * past a cookie's inline ones).  0 or -errno, as tern_cma_step. */
int tern_cma_read_iov(pid_t pid, uint64_t addr, struct iovec *out, uint64_t n,
                      uint64_t fault_after);

/* "auto" / "off" (UINT64_MAX) or a byte count with an optional k/m/g
 * suffix: TERN_CMA_THRESHOLD and TERN_FAULT_CMA_EPERM_AFTER.  word is the
 * one word allowed.  TERN_ERR_INVALID_PARAM naming env otherwise. */
tern_status_t tern_cma_parse_size(const char *env, const char *value, const char *word,
                                  uint64_t *out);

/* ---- the protocol on a VC (engine/cma_lmt.c) ------------------------------------ */

typedef struct tern_vc tern_vc_t;

/* May a rendezvous to vc's peer be offered to the same-host copy?  TERN_CMA
 * serves the VC, it is not self, nothing was refused or declined on it, and
 * this process knows its host (a boot id). */
bool tern_cma_usable(const tern_vc_t *vc);
/* The kernel (or the test hook) refused a copy with vc's peer (pid; err
 * its errno): warned once per process, counted (cma.refused), and vc is
 * off the copy from now on (rendezvous and one-sided alike). */
void tern_cma_kernel_refused(tern_vc_t *vc, pid_t pid, bool write, int err);
/* The smallest message TERN_LMT_MODE=auto gives it (TERN_CMA_THRESHOLD, or
 * the VC's netmod's own). */
uint64_t tern_cma_threshold(const tern_vc_t *vc);

/* Sender, mode TERN_LMT_CMA_GET or _PUT: the RTS cookie (TERN_COOKIE_MAX
 * bytes of room) and the request's state. */
tern_status_t tern_cma_initiate(tern_vc_t *vc, tern_request_t *sreq, int mode, void *cookie,
                                size_t *cookie_len);
/* Receiver: an RTS in a CMA mode matched rreq. */
tern_status_t tern_cma_start_recv(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                  size_t cookie_len);
/* Sender: the CTS of a CMA put (its cookie: the receiver's KEY). */
tern_status_t tern_cma_start_send(tern_vc_t *vc, tern_request_t *sreq, const void *cookie,
                                  size_t cookie_len);
/* DONE and COOKIE packets to a request in a CMA mode. */
tern_status_t tern_cma_done(tern_vc_t *vc, tern_request_t *req);
tern_status_t tern_cma_handle_cookie(tern_vc_t *vc, tern_request_t *req, const void *cookie,
                                     size_t cookie_len);
/* One step of the transfer at the head of w->cma_queue (not empty);
 * returns the work done. */
unsigned tern_cma_progress(tern_worker_t *w);
/* vc's peer named its host in its address (engine/address.h; NULL: no
 * address): another host turns the copy off on vc before anything is
 * offered, where a receiver would only decline it. */
void tern_cma_vc_host(tern_vc_t *vc, const tern_host_id_t *peer);
/* vc is failing: its transfers leave the queue (the engine fails them). */
void tern_cma_vc_drop(tern_vc_t *vc);
/* The worker's cma.* counters: up to max into out; returns how many exist. */
int tern_cma_counters(tern_worker_t *w, tern_counter_t *out, int max);

#endif
