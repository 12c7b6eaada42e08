/*
 * Engine internals shared by engine/ and the netmods: requests, VCs, the
 * worker and the context.  Not installed.
 */
#ifndef TERN_ENGINE_INTERNAL_H
#define TERN_ENGINE_INTERNAL_H

#include <assert.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <tern/tern.h>

#include "engine/cma.h"
#include "engine/config.h"
#include "engine/cursor.h"
#include "engine/list.h"
#include "engine/log.h"
#include "engine/pkt.h"
#include "pmix/client/client.h"

typedef struct tern_vc tern_vc_t;
typedef struct tern_netmod_inst tern_netmod_inst_t; /* engine/netmod.h */

/* A peer's remote key, unpacked by its netmod (rkey_unpack). */
#define TERN_RKEY_MAX 64
typedef struct tern_rkey {
    uint64_t addr, len; /* the range it opens in the peer */
    uint64_t key;       /* the netmod's: shm the pid, verbs the rkey ... */
} tern_rkey_t;

/* ---- requests ------------------------------------------------------------ */

enum tern_req_kind { TERN_REQ_SEND = 1, TERN_REQ_RECV = 2 };

enum tern_req_flags {
    TERN_REQF_COMPLETE = 1u << 0,   /* final status set; user may reap */
    TERN_REQF_UNEXP = 1u << 1,      /* sits in the unexpected queue */
    TERN_REQF_USER = 1u << 2,       /* handed to the user (they reap it) */
    TERN_REQF_RNDV = 1u << 3,       /* unexpected entry is an RTS, not data */
    TERN_REQF_DATA_DONE = 1u << 4,  /* all payload bytes arrived in tmpbuf */
    TERN_REQF_POSTED = 1u << 5,     /* sits in the posted queue */
    TERN_REQF_HAS_ID = 1u << 6,     /* registered in the id table */
    TERN_REQF_VCLIST = 1u << 7,     /* on its VC's rendezvous list (vc_link) */
    TERN_REQF_MPROBED = 1u << 8,    /* an unexpected message a matched probe took: held
                                     * (as if unexpected) until tern_imrecv binds a buffer */
    TERN_REQF_CQ = 1u << 9,         /* completes into the worker's CQ (context), then is
                                     * released: nobody reaps it (engine/cq.c) */
    TERN_REQF_CQ_ERRORS = 1u << 10, /* with CQ: an entry only when it fails */
    TERN_REQF_HAS_DATA = 1u << 11,  /* the message carried immediate data (req->data) */
    TERN_REQF_DISCARD = 1u << 12,   /* a claimed message dropped unread (tern_tmrecv) */
    TERN_REQF_RMA = 1u << 13,       /* a one-sided operation's: its CQ entry's TERN_CQ_*
                                     * flags are in match_ignore (engine/rma.c) */
};

/*
 * A queued send's packet header (engine/pktq.h): the bytes the engine gave
 * the netmod's send op, and how many of them went out.  Owned by the
 * engine's packet queue, apart from the netmod's scratch (req->nm), so a
 * netmod's rendezvous state survives a packet queued on the same request.
 */
#define TERN_PKTQ_HDR_MAX 48
typedef struct tern_pktq_hdr {
    uint8_t bytes[TERN_PKTQ_HDR_MAX];
    uint8_t len;  /* header bytes */
    uint8_t sent; /* of them gone out */
} tern_pktq_hdr_t;
static_assert(TERN_PKT_HDR_SIZE <= TERN_PKTQ_HDR_MAX, "an engine header fits a queued send");

/*
 * A netmod's scratch in a request: raw storage used only through a typed
 * overlay, TERN_REQ_NM(req, type), which fails to compile when type does
 * not fit (size or alignment).  The netmod initialises what it uses when it
 * takes the request.
 */
#define TERN_REQ_NM_SIZE 80
typedef union tern_req_nm {
    unsigned char bytes[TERN_REQ_NM_SIZE];
    uint64_t align_u64; /* aligned for words and pointers: what netmods keep */
    void *align_ptr;
} tern_req_nm_t;
#define TERN_REQ_NM(req, type)                                                                     \
    ((void)sizeof(struct {                                                                         \
         static_assert(sizeof(type) <= TERN_REQ_NM_SIZE &&                                         \
                           _Alignof(type) <= _Alignof(tern_req_nm_t),                              \
                       #type " does not fit the netmod scratch of a request");                     \
         int unused;                                                                               \
     }),                                                                                           \
     (type *)(void *)(req)->nm.bytes)

/*
 * A request.  Created only when an operation cannot complete at once (and
 * for unexpected messages, which are receive requests without a user yet).
 * Pooled per worker: no malloc per message once the pool is warm.
 */
struct tern_request {
    tern_list_t link;    /* posted / unexpected / netmod queue */
    tern_list_t vc_link; /* VC's list of rendezvous requests */
    tern_worker_t *worker;
    uint8_t kind;
    uint8_t lmt_mode; /* rendezvous: enum tern_lmt_mode of this transfer */
    uint32_t flags;
    tern_status_t status;

    /* matching: what was asked (recv) and what arrived / was sent */
    int match_src; /* may be TERN_ANY_SOURCE */
    uint16_t space;
    int peer;           /* dest (send) or actual source (recv) */
    uint64_t match_tag; /* a receive takes tags t with (t ^ match_tag) & ~match_ignore == 0 */
    uint64_t match_ignore;
    uint64_t tag;   /* actual tag */
    size_t msg_len; /* message length as sent */
    uint64_t data;  /* immediate data: TERN_REQF_HAS_DATA's (recv), to send */
    void *context;  /* TERN_REQF_CQ: the user's, for its completion entry */

    tern_cursor_t cur;      /* user buffer (recv) or source data (send) */
    struct iovec iov1;      /* storage for the contiguous case */
    struct iovec *iov_copy; /* owned copy of a user iovec (isendv/irecvv) */

    tern_vc_t *vc;
    uint64_t remote_id; /* the peer's request id (rendezvous) */
    uint32_t id_index, id_gen;

    void *tmpbuf;    /* unexpected eager payload */
    size_t tmp_have; /* bytes of it received so far */

    /* called once the payload is all in place; default completes the req */
    void (*on_data_avail)(tern_request_t *req);

    tern_pktq_hdr_t pq; /* a queued send's header (engine/pktq.h) */
    tern_req_nm_t nm;   /* the netmod's scratch (LMT progress): TERN_REQ_NM */
};

/* ---- virtual connections -------------------------------------------------- */

enum tern_vc_state { TERN_VC_ACTIVE = 0, TERN_VC_TERMINATING, TERN_VC_CLOSED, TERN_VC_FAILED };

enum tern_rx_state { TERN_RX_HDR = 0, TERN_RX_PAYLOAD, TERN_RX_COOKIE };

/* Stream-parser state: packets may arrive in any number of fragments. */
typedef struct tern_vc_rx {
    enum tern_rx_state state;
    size_t have; /* bytes of header (+cookie) kept */
    uint8_t buf[TERN_PKT_HDR_SIZE + TERN_COOKIE_MAX];
    size_t payload_left;  /* bytes still to stream into sink */
    tern_request_t *sink; /* receive request being filled */
    size_t sink_skip;     /* bytes to drop (truncation) */
} tern_vc_rx_t;

struct tern_vc {
    int rank; /* peer's global rank */
    enum tern_vc_state state;
    tern_status_t fail_status;
    char *fail_msg;         /* why it failed (malloc'd), for every request it fails */
    tern_netmod_inst_t *nm; /* the netmod instance carrying it */
    void *nm_state;         /* the netmod's per-context state */
    void *nm_vc;            /* the netmod's per-VC state */
    tern_worker_t *worker;
    size_t eager_limit; /* largest payload sent eagerly */
    tern_vc_rx_t rx;
    tern_list_t lmt_wait; /* rendezvous requests in flight (vc_link) */
    bool port_peer;       /* its end is how a port peer leaves: no warning */
    bool bye_sent;        /* we said BYE on it (tern_vc_say_bye) */
    bool peer_bye;        /* the peer said BYE: its stream's end is a close */
    bool cma_off;         /* the same-host copy was refused or declined on it:
                           * the netmod's own path from now on (cma_lmt.c) */
    /* one-sided (engine/rma.h).  Origin: operations went to the peer since
     * the last flush.  Target: the first error found in an operation
     * without a result since the peer's last RMA_FLUSH, and its message
     * (malloc'd), for that flush's answer. */
    bool rma_dirty;
    bool rma_pkts;   /* packets since the last flush: it sends RMA_FLUSH */
    bool rma_native; /* the netmod's own operations since: it asks its flush */
    tern_status_t rma_err;
    char *rma_msg;
};

/* ---- worker ---------------------------------------------------------------- */

typedef struct tern_req_slab tern_req_slab_t;

#define TERN_RMA_NCOUNTERS 7 /* enum tern_rma_counter, engine/rma.h */

#define TERN_MAX_NETMODS 8

/*
 * A worker: the progress engine of one thread.  Worker i of a rank talks
 * to worker i of every other rank (the MPICH VCI model): it has its own
 * VCs, netmod instances, queues and request pool, so workers share nothing
 * on the fast path.  Worker 0 is the context's default.
 */
struct tern_worker {
    tern_context_t *ctx;
    int index;                   /* i: pairs with worker i of the peers */
    _Atomic int in_use;          /* handed out (tern_worker_create, or 0) */
    tern_vc_t *vcs;              /* one per rank */
    tern_netmod_inst_t *netmods; /* [0] is self, then by priority */
    int num_netmods;
    tern_netmod_inst_t *pollers[TERN_MAX_NETMODS]; /* those with a poll op */
    int num_pollers;
    tern_list_t posted;     /* posted receives, in post order */
    tern_list_t unexpected; /* unexpected messages, in arrival order */
    tern_list_t free_reqs;  /* request pool */
    tern_req_slab_t *slabs;
    tern_request_t **id_table; /* rendezvous ids -> requests */
    uint32_t id_cap, id_free_head;
    uint32_t *id_next_free;
    uint32_t id_gen;

    /* tern_worker_wait: cross-thread wakeup and block mode (progress.c) */
    _Atomic uint32_t signaled;
    int wake_fd; /* eventfd tern_worker_signal writes */
    int epfd;    /* epoll over wake_fd and the netmods' fds */

    /* addresses (engine/peer.c): this worker's, and the job's ranks' while
     * the wire-up reads them (by rank, NULL until known) */
    void *addr;
    size_t addr_len;
    struct tern_peer_addr **wire;
    int wire_have;

    unsigned idle_polls; /* consecutive polls with no event */
    uint64_t last_health_ns;
    tern_list_t cma_queue;                  /* same-host copies in progress (req->link) */
    uint64_t cma_count[TERN_CMA_NCOUNTERS]; /* their counters (engine/cma.h) */
    unsigned completions;                   /* requests completed, messages queued
                                             * unexpected (wake waits) */
    /* completion queue (engine/cq.c): a ring of entries, room reserved for
     * every pending CQ operation when it is posted, so a completion never
     * needs memory */
    tern_cq_entry_t *cq;
    uint32_t cq_cap, cq_head, cq_count;
    uint32_t cq_reserved; /* pending CQ operations: slots promised */
    unsigned wait_seen;   /* completions when tern_worker_wait last returned */
    /* peers whose VC is rma_dirty: what tern_flush(TERN_ANY_SOURCE) flushes */
    int *rma_dirty;
    int rma_ndirty, rma_cap;
    uint64_t rma_count[TERN_RMA_NCOUNTERS]; /* one-sided counters (engine/rma.h) */
};

tern_request_t *tern_request_alloc_slow(tern_worker_t *w, int kind);
void tern_request_release_slow(tern_request_t *req);

/*
 * Take a request from the worker's pool (inline: it is on every message's
 * path).  Field by field: the netmod area is the netmod's to initialise when
 * it takes the request, and whoever binds a buffer sets iov1/cursor, so
 * there is no 270-byte memset per message.
 */
static inline tern_request_t *tern_request_alloc(tern_worker_t *w, int kind)
{
    if (TERN_UNLIKELY(tern_list_empty(&w->free_reqs)))
        return tern_request_alloc_slow(w, kind);
    tern_list_t *e = w->free_reqs.next;
    tern_list_del(e);
    tern_request_t *r = TERN_CONTAINER_OF(e, tern_request_t, link);
    tern_list_init(&r->vc_link);
    r->worker = w;
    r->kind = (uint8_t)kind;
    r->flags = 0;
    r->status = TERN_INPROGRESS;
    r->match_src = 0;
    r->match_tag = r->match_ignore = 0;
    r->space = 0;
    r->peer = 0;
    r->tag = 0;
    r->msg_len = 0;
    r->cur.iov = NULL;
    r->cur.iovcnt = r->cur.idx = 0;
    r->cur.off = r->cur.total = r->cur.pos = 0;
    r->iov_copy = NULL;
    r->vc = NULL;
    r->remote_id = 0;
    r->lmt_mode = TERN_LMT_NULL;
    r->tmpbuf = NULL;
    r->tmp_have = 0;
    r->on_data_avail = NULL;
    return r;
}

/*
 * The request a netmod's istart_contig_msg creates when it could not send
 * all of hdr + data at once: data (the caller's, valid until completion)
 * with `sent` payload bytes already written.  NULL when out of memory.
 */
static inline tern_request_t *tern_request_alloc_contig_send(tern_vc_t *vc, const void *data,
                                                             size_t len, size_t sent)
{
    tern_request_t *r = tern_request_alloc(vc->worker, TERN_REQ_SEND);
    if (r == NULL)
        return NULL;
    r->vc = vc;
    r->peer = vc->rank;
    r->msg_len = len;
    r->iov1.iov_base = (void *)data;
    r->iov1.iov_len = len;
    tern_cursor_init(&r->cur, &r->iov1, 1);
    if (sent)
        tern_cursor_advance(&r->cur, sent);
    return r;
}

/*
 * Post a receive into the contiguous buffer [buf, buf + len) when nothing
 * unexpected can match it (the caller checked the queue is empty): the
 * common, expected case of tern_irecv and tern_trecv, inline.  flags: the
 * request's completion flags (USER, or CQ ...), POSTED added.  NULL when
 * out of memory (nothing posted).
 */
static inline tern_request_t *tern_recv_post_now(tern_worker_t *w, void *buf, size_t len, int src,
                                                 uint64_t tag, uint64_t ignore, uint16_t space,
                                                 uint32_t flags)
{
    tern_request_t *r = tern_request_alloc(w, TERN_REQ_RECV);
    if (r == NULL)
        return NULL;
    r->peer = r->match_src = src;
    r->tag = r->match_tag = tag;
    r->match_ignore = ignore;
    r->space = space;
    r->iov1.iov_base = buf;
    r->iov1.iov_len = len;
    r->cur.iov = &r->iov1;
    r->cur.iovcnt = 1;
    r->cur.total = len;
    r->flags = flags | TERN_REQF_POSTED;
    tern_list_push_tail(&w->posted, &r->link);
    return r;
}

/* Give a request back to the pool (inline fast path: nothing to undo). */
static inline void tern_request_release(tern_request_t *r)
{
    if (TERN_UNLIKELY((r->flags & (TERN_REQF_HAS_ID | TERN_REQF_VCLIST)) || r->tmpbuf != NULL ||
                      r->iov_copy != NULL)) {
        tern_request_release_slow(r);
        return;
    }
    r->flags = 0;
    tern_list_push_tail(&r->worker->free_reqs, &r->link);
}

/*
 * Complete a request with status (inline fast path: a user's request with
 * nothing to undo).  The slow part drops its id and its VC-list entry, and
 * gives an internal request (a control packet's, nobody reaps it) back to
 * the pool.
 */
void tern_request_complete_slow(tern_request_t *r);
static inline void tern_request_complete(tern_request_t *r, tern_status_t status)
{
    r->status = status;
    r->flags |= TERN_REQF_COMPLETE;
    r->worker->completions++;
    if (TERN_UNLIKELY((r->flags & (TERN_REQF_HAS_ID | TERN_REQF_VCLIST | TERN_REQF_CQ)) ||
                      !(r->flags & (TERN_REQF_USER | TERN_REQF_UNEXP | TERN_REQF_MPROBED))))
        tern_request_complete_slow(r);
}

/* ---- other jobs (tern_connect, engine/connect.c) ------------------------- */

#define TERN_MAX_JOBS 256 /* connected jobs and port peers */

/*
 * Another job this context is connected to: its ranks are the peers
 * base .. base + size - 1 of every worker (peer ids after the job's own
 * ranks, never reused).  Each VC is carried by a netmod that reaches
 * other jobs, chosen from the peer's address (tern_remote_vc_init).  Added
 * by tern_connect, a port or tern_peer_insert, closed by tern_disconnect,
 * freed with the context.
 */
struct tern_job {
    tern_context_t *ctx;
    char name[256];
    int base, size;
    tern_vc_t **vcs;                 /* per worker: size VCs */
    struct tern_pmix_deaths *deaths; /* its ranks' deaths the launcher reports, or NULL */
    bool connected;
    bool port;         /* a port peer (port.c): one rank, worker 0 only */
    bool inserted;     /* tern_peer_insert's: one rank, of addr_job */
    uint32_t addr_job; /* its job's name hash and its rank there */
    int addr_rank;
};

/* ---- context --------------------------------------------------------------- */

/* The engine's own matching space: its barrier without a launcher
 * (engine/barrier.c).  Reserved: a user message in it would disturb it. */
#define TERN_SPACE_ENGINE 0xffffu

struct tern_context {
    tern_pmix_t pmix; /* TERN_WIREUP_ADDRESS: not initialised; its job
                       * name, rank, size and node fields are ours */
    int rank, size;
    int wireup;        /* enum tern_wireup: how the job is wired */
    uint32_t job_hash; /* tern_job_hash of the job's name */
    /* TERN_WIREUP_ADDRESS: TERN_INPROGRESS until the insert that completes
     * the job's addresses has wired it up, then how that went */
    tern_status_t wired;
    char *wire_msg;         /* why the wire-up failed (malloc'd) */
    uint32_t barrier_epoch; /* barriers done (engine/barrier.c) */
    tern_config_t cfg;
    tern_worker_t *workers; /* cfg.num_workers of them; [0] the default */
    int num_workers;
    /* per registered netmod: what its instances of all workers share
     * (shm: the segment mapping); given to each instance's init */
    void *nm_shared[TERN_MAX_NETMODS];
    bool finalizing;
    /* tern_connect: jobs[0 .. njobs) published with a release store of
     * njobs (connect.c), read with an acquire load by tern_remote_vc */
    tern_job_t *jobs[TERN_MAX_JOBS];
    _Atomic int njobs;
    int next_base; /* peer id of the next job's rank 0 */
    /* ports (port.c): one is open (connections naming an unknown job are
     * taken on worker 0's netmods that take ports), and the peers accepted
     * but not yet taken by tern_port_accept */
    bool port_open;
    tern_job_t *accepted[TERN_MAX_JOBS];
    int naccepted;
    /* one-sided: the region table (engine/rma_region.c), made by the first
     * tern_region_create (a compare-and-swap: any thread may), read with
     * acquire loads by targets applying operations */
    _Atomic(struct tern_region_table *) regions;
};

/* tern_init, once PMIx is up and before the netmods: the idle-wait
 * defaults of an oversubscribed node (oversub.c); local rank 0 says so. */
void tern_context_idle_defaults(tern_context_t *ctx);

/* One progress round on every worker; sched_yield when none had work
 * (draining at disconnect / finalize).  context.c */
/* One progress round of every worker of ctx (a tern_context_t *, for
 * the PMIx client's waits): the events handled.  The caller owns the
 * workers (tern_finalize, tern_connect, tern_disconnect). */
unsigned tern_progress_all(void *ctx);
void tern_progress_all_or_yield(tern_context_t *ctx);

/* connect.c, for port.c and tern_peer_insert: a new job of size ranks
 * (VCs on every worker, not wired yet, not yet published), publishing it
 * (peer ids after the last ones), netmod instance nm initialised on worker
 * w if it was not, and undoing a job's VCs. */
tern_job_t *tern_job_new(tern_context_t *ctx, const char *name, int size);
tern_status_t tern_job_publish(tern_context_t *ctx, tern_job_t *job);
tern_status_t tern_netmod_ensure(tern_worker_t *w, int nm);
void tern_job_close_vcs(tern_job_t *job);
void tern_job_free(tern_job_t *job);
/* A VC without a netmod yet (its peer's address is awaited, or its
 * wire-up failed): FAILED with TERN_ERR_UNREACHABLE and why, so that
 * sends and receives naming it are refused; rewire makes it ACTIVE. */
void tern_vc_unwired(tern_vc_t *vc, const char *why);
void tern_vc_rewire(tern_vc_t *vc);

/* connect.c: at tern_finalize, close the connected jobs' VCs (drained
 * first), then free them with the workers */
void tern_jobs_close(tern_context_t *ctx);
void tern_jobs_free(tern_context_t *ctx);
/* health check: fail the VCs to connected jobs' ranks the launcher reports
 * dead (as tern_health_check for the job's own) */
void tern_jobs_take_dead(tern_worker_t *w);

/* ---- addresses (engine/peer.c) ----------------------------------------- */

/* Build worker w's address from the cards of its initialised netmods (of
 * those that take ports only: port_only) into a malloc'd *out; NULL out:
 * into w->addr (the one tern_worker_address gives). */
tern_status_t tern_worker_make_address(tern_worker_t *w, bool port_only, void **out, size_t *len);
/* An address as the wire-up keeps it: a copy of the len bytes at buf,
 * decoded once (what: who gave them, for messages; TERN_ERR_MALFORMED as
 * tern_addr_decode says); tern_peer_addr_of is the decoded view, which
 * points into the copy.  Freed with free(). */
struct tern_peer_addr;
tern_status_t tern_peer_addr_copy(const void *buf, size_t len, const char *what,
                                  struct tern_peer_addr **out);
const struct tern_addr *tern_peer_addr_of(const struct tern_peer_addr *p);
/* The wire-up's table of the job's ranks' addresses on worker w: keep p
 * (always taken: kept, or freed), checked to be an address of this job's
 * rank `rank` for worker w.  rank -1: any, the caller has checked it is
 * one of the job's ranks (tern_peer_insert).  The same address again is
 * no error; another one for the same rank is.  tern_wire_add: the same of
 * a copy of the len bytes at buf, rank >= 0. */
tern_status_t tern_wire_keep(tern_worker_t *w, struct tern_peer_addr *p, int rank,
                             const char *what);
tern_status_t tern_wire_add(tern_worker_t *w, const void *buf, size_t len, int rank,
                            const char *what);
/* vc_init of every VC of worker w with the card of its netmod in the
 * peer's address (the self VC without one). */
tern_status_t tern_wire_init_vcs(tern_worker_t *w);
void tern_wire_free(tern_worker_t *w);
/* A VC to a process of another job, from its address: over the
 * highest-priority netmod of w that reaches other jobs (port_only: that
 * takes ports) and has a card in it; vc->nm set. */
struct tern_addr;
tern_status_t tern_remote_vc_init(tern_worker_t *w, tern_vc_t *vc, const struct tern_addr *a,
                                  bool port_only);
/* n is polled by w from now on (a wire-up without a launcher polls only
 * the netmods its VCs use; another job's VC or a port may need another). */
void tern_worker_poll_netmod(tern_worker_t *w, tern_netmod_inst_t *n);
/* Initialise, on worker w, every allowed netmod this process can use that
 * reaches other jobs (port_only: and takes ports); how many in *n. */
tern_status_t tern_netmods_ensure_conn(tern_worker_t *w, bool port_only, int *n);

/* TERN_WIREUP_ADDRESS (context.c): the job's addresses are all inserted:
 * locality, netmods, VCs, a barrier, wireup_done. */
tern_status_t tern_address_wireup(tern_context_t *ctx);

/* engine/barrier.c: a barrier of the job's ranks over the engine's own
 * connections (worker 0; all_workers: progress the others too). */
tern_status_t tern_engine_barrier(tern_context_t *ctx, bool all_workers);

/* The PMIx key of w's address: "tern.addr" for worker 0, "tern.addr.<i>"
 * for the others (tern_worker_key: base, or "base.<index>"). */
#define TERN_ADDR_KEY "tern.addr"
const char *tern_worker_key(const tern_worker_t *w, const char *base, char *buf, size_t len);

/* context.c, shared with the wire-up without a launcher: */
/* which instance carries each rank's VC (pick[rank]; wired: with the
 * peers' addresses in that worker's table, their cards decide too) */
tern_status_t tern_choose_netmods(tern_context_t *ctx, tern_netmod_inst_t *insts, int *pick,
                                  tern_worker_t *wired);
/* w's netmod instances and VCs; pick NULL: every usable netmod, VCs to
 * the others not wired */
tern_status_t tern_setup_worker(tern_worker_t *w, const int *pick);
tern_status_t tern_wireup_done(tern_context_t *ctx);
void tern_finalize_netmods(tern_context_t *ctx);

/* wireup_addr.c: tern_init_ex's parameters (checked before anything is
 * done), the context of TERN_WIREUP_ADDRESS (job fields from them), its
 * netmods and addresses at tern_init_ex; another job's address inserted. */
struct tern_init_params;
bool tern_init_params_by_address(const struct tern_init_params *p);
tern_status_t tern_address_context(tern_context_t *ctx, const struct tern_init_params *p);
tern_status_t tern_address_setup(tern_context_t *ctx);
tern_status_t tern_insert_other(tern_context_t *ctx, const struct tern_addr *a, int *peer);
/* peer.c: the host identity rank's address names, the netmods it has
 * cards of (for messages; "" when none is known), during the wire-up */
const struct tern_host_id *tern_wire_host(tern_worker_t *w, int rank);
void tern_wire_names(tern_worker_t *w, int rank, char *out, size_t len);

/* TERN_NETMODS: allowed[i] for registry entry i (context.c). */
tern_status_t tern_allowed_netmods(const char *list, bool *allowed);

/* The VC to peer (a rank of this job, or of a connected job), NULL when
 * peer is neither.  Inline: on every send's path. */
tern_vc_t *tern_remote_vc(tern_worker_t *w, int peer);
static inline tern_vc_t *tern_vc_of(tern_worker_t *w, int peer)
{
    if (TERN_LIKELY((unsigned)peer < (unsigned)w->ctx->size))
        return &w->vcs[peer];
    return peer < 0 ? NULL : tern_remote_vc(w, peer);
}

/* ---- engine services for netmods ---------------------------------------- */

/* Initialise worker `index` of ctx (queues, pool, wake-up eventfd); release it. */
tern_status_t tern_worker_init(tern_worker_t *w, tern_context_t *ctx, int index);
void tern_worker_fini(tern_worker_t *w);

/* Block mode: add the netmods' event fds to the worker's epoll set (all
 * initialised ones, or one netmod initialised later). */
tern_status_t tern_worker_bind_events(tern_worker_t *w);
tern_status_t tern_worker_bind_netmod(tern_worker_t *w, tern_netmod_inst_t *n);

/* Feed received stream bytes of vc to the engine (any fragmenting). */
tern_status_t tern_handle_pkt(tern_vc_t *vc, const void *buf, size_t len);

/* Fail vc: every request that depends on it completes with status.  After
 * the peer's BYE, a TERN_ERR_PEER_FAILED (its stream ended) is a close
 * instead: no warning, receives from any source stay posted. */
void tern_vc_fail(tern_vc_t *vc, tern_status_t status, const char *why);
/*
 * The close handshake of netmods whose VCs are connections that can end (tcp,
 * verbs):
 * when the netmod terminates a VC that has a stream (vc_terminate, or a
 * stream set up after it), it says BYE as the last packet of the stream.
 * The peer then knows that the end of the stream is a clean close, not a
 * crash; and tern_finalize, after its fence, reads each such stream up to
 * the peer's own BYE before the netmods close them, so no socket is closed
 * with bytes unread (which would reset the connection and could drop our
 * BYE).  Queued behind the VC's pending sends; once per VC.
 */
tern_status_t tern_vc_say_bye(tern_vc_t *vc);
/* The same netmods, when a VC's connection comes up: a connection made
 * after the VC was terminated (the peer had something for us) says BYE at
 * once, as vc_terminate would have. */
void tern_vc_connection_up(tern_vc_t *vc);
/* Free what a VC holds for messages (why it failed, a one-sided error for
 * the peer's next flush), at its end. */
void tern_vc_free_msgs(tern_vc_t *vc);
/* The process's context (tern_init / tern_init_standalone), or NULL. */
tern_context_t *tern_context_live(void);
/* The same for a VC closed on purpose (tern_disconnect): no warning, and
 * receives from any source are left posted. */
void tern_vc_close(tern_vc_t *vc, const char *why);

/* Check a user iovec (0..TERN_IOV_MAX entries, no NULL base with a length,
 * lengths adding up to at most SSIZE_MAX, so never wrapping) and set *total;
 * TERN_ERR_INVALID_PARAM naming the call (what) and the entry otherwise. */
tern_status_t tern_iov_check(const struct iovec *iov, int iovcnt, const char *what, size_t *total);

/* The same for one contiguous buffer of len bytes: at most SSIZE_MAX, as an
 * iovec's total (readv / writev refuse more with EINVAL: a tcp connection
 * died of it, and shm carried the length to the receiver); what names the
 * call.  TERN_ERR_INVALID_PARAM naming the length otherwise.  Inline: every
 * receive pays one compare, the message is built out of line. */
tern_status_t tern_len_error(size_t len, const char *what);
static inline tern_status_t tern_len_check(size_t len, const char *what)
{
    return TERN_LIKELY(len <= (size_t)SSIZE_MAX) ? TERN_OK : tern_len_error(len, what);
}

/* A malloc'd copy of a user iovec (the caller's array need not outlive the
 * call); NULL with the error recorded. */
struct iovec *tern_iov_dup(const struct iovec *iov, int iovcnt);

/* Point req's cursor at the data: the owned iovec copy, or else iov[0]. */
void tern_request_bind_buffer(tern_request_t *req, const struct iovec *iov, int iovcnt,
                              struct iovec *owned);

/* Give req an id the peer can name it by (rendezvous); lookup validates. */
uint64_t tern_request_register(tern_request_t *req);
/* The id of a registered request: index | generation << 32 (never 0). */
static inline uint64_t tern_request_id(const tern_request_t *r)
{
    return (uint64_t)r->id_index | ((uint64_t)r->id_gen << 32);
}
tern_request_t *tern_request_lookup(tern_worker_t *w, uint64_t id);
void tern_request_unregister(tern_request_t *req);

/* Send a control packet (CTS, DONE, COOKIE) on vc; queued if vc is busy.
 * A failed VC refuses (its netmod and the peer named). */
tern_status_t tern_send_ctrl(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const void *cookie,
                             size_t cookie_len);
/* Send hdr + the payload of sreq's cursor on vc (sreq->vc is vc) through
 * its netmod (the null mode's DATA, a netmod falling back to the stream);
 * completes sreq when sent.  A failed VC refuses as tern_send_ctrl does. */
tern_status_t tern_send_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                  size_t hdrlen);

/* Rendezvous: the receive request matched an RTS; start the transfer.  A
 * start that fails completes the receive with its status (and returns it). */
tern_status_t tern_lmt_recv_matched(tern_request_t *rreq, const void *cookie, size_t cookie_len);

/* Rendezvous bookkeeping: give req an id and put it on vc's list (failing
 * vc completes it).  Returns the id, 0 when out of memory. */
uint64_t tern_lmt_track(tern_vc_t *vc, tern_request_t *req);

/* Rendezvous by the netmod's own LMT (or the null mode), apart from the
 * engine's same-host copy.  Sender: its choice of mode for sreq (TERN_LMT_MODE
 * where it has that mode) and its initiate; *cookie_len in: the room, out:
 * the cookie's length.  Receiver: start rreq->lmt_mode with the sender's
 * cookie (its start_recv, or the null mode's CTS). */
/* The sender's LMT mode for len bytes on vc: TERN_LMT_MODE, the engine's
 * same-host copy, else the netmod's (engine/lmt.c). */
int tern_lmt_choose(tern_vc_t *vc, size_t len);
tern_status_t tern_lmt_netmod_initiate(tern_vc_t *vc, tern_request_t *sreq, int *mode, void *cookie,
                                       size_t *cookie_len);
tern_status_t tern_lmt_recv_start(tern_request_t *rreq, const void *cookie, size_t cookie_len);

/* Receiver side: register rreq and send CTS (+cookie) for its RTS. */
tern_status_t tern_lmt_send_cts(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                size_t cookie_len);

/* Complete a receive: status from truncation, then on_data_avail chain. */
void tern_recv_data_complete(tern_request_t *rreq);

/* The worker's completion queue (engine/cq.c).  reserve before posting a
 * TERN_OP_CQ operation (its only failure point), then exactly one of put
 * (its entry), unreserve (no entry after all) or, for a request flagged
 * TERN_REQF_CQ, its completion (tern_cq_complete does put or unreserve). */
/* The ring grown to hold one more promised slot, and that slot promised. */
tern_status_t tern_cq_reserve_grow(tern_worker_t *w);
static inline tern_status_t tern_cq_reserve(tern_worker_t *w)
{
    if (TERN_UNLIKELY(w->cq_count + w->cq_reserved >= w->cq_cap))
        return tern_cq_reserve_grow(w);
    w->cq_reserved++;
    return TERN_OK;
}
static inline void tern_cq_unreserve(tern_worker_t *w)
{
    assert(w->cq_reserved > 0);
    w->cq_reserved--;
}
/* The next entry of the ring, in a slot promised before (the caller fills it). */
static inline tern_cq_entry_t *tern_cq_slot(tern_worker_t *w)
{
    assert(w->cq_reserved > 0 && w->cq_count < w->cq_cap);
    w->cq_reserved--;
    return &w->cq[(w->cq_head + w->cq_count++) & (w->cq_cap - 1)];
}
static inline void tern_cq_put(tern_worker_t *w, const tern_cq_entry_t *e)
{
    *tern_cq_slot(w) = *e;
}
void tern_cq_entry_of(const tern_request_t *r, tern_status_t st, tern_cq_entry_t *e);
void tern_cq_complete(tern_request_t *r);
void tern_cq_destroy(tern_worker_t *w);
/* recv.c, shared with probe.c: argument checks of a receive from src with
 * tag; the info of a receive r that ended with st; a receive for message u
 * (NULL: post one) into iov (owned: the copy it keeps, or NULL). */
tern_status_t tern_recv_check_args(tern_worker_t *w, int src, int tag, tern_request_t **req);
tern_status_t tern_recv_check_src(tern_worker_t *w, int src);
/* Send side (engine/send.c): dest's VC is there and active; post a send. */
tern_status_t tern_send_check_dest(tern_worker_t *w, int dest);
tern_status_t tern_send_post(tern_worker_t *w, const struct iovec *iov, int iovcnt, bool contig,
                             size_t len, int dest, uint64_t tag, uint16_t space, bool sync,
                             uint8_t pflags, uint64_t data, tern_request_t **req);
/* Receive the matched-probe message msg (engine/probe.c). */
tern_status_t tern_mrecv(tern_worker_t *w, const struct iovec *iov, int iovcnt, bool contig,
                         tern_message_t *msg, tern_recv_info_t *info, tern_cq_entry_t *done,
                         tern_request_t **req);
/* Match the unexpected queue, else post: a receive (src, tag, ignore,
 * space) into iov (contig: iov is the caller's single entry, not copied). */
tern_status_t tern_recv_post(tern_worker_t *w, const struct iovec *iov, int iovcnt, bool contig,
                             int src, uint64_t tag, uint64_t ignore, uint16_t space,
                             tern_recv_info_t *info, tern_cq_entry_t *done, tern_request_t **req);
void tern_recv_fill_info(tern_recv_info_t *info, const tern_request_t *r, tern_status_t st);
/* done: when non-NULL and the receive completes within the call, its CQ
 * entry (context not set) */
tern_status_t tern_recv_bind(tern_worker_t *w, tern_request_t *u, const struct iovec *iov,
                             int iovcnt, struct iovec *owned, int src, uint64_t tag,
                             uint64_t ignore, uint16_t space, tern_recv_info_t *info,
                             tern_cq_entry_t *done, tern_request_t **req);

uint64_t tern_now_ns(void);

/* Idle path (progress.c, wait.c): peer health every TERN_HEALTH_MS; one
 * idle step after an empty poll by the wait mode, never past deadline_ns. */
void tern_health_check(tern_worker_t *w);
/* One idle step of a wait; returns the events a progress round inside it
 * handled (block mode), which the caller counts as activity. */
unsigned tern_idle_step(tern_worker_t *w, uint64_t deadline_ns);

#endif
