/*
 * tern's libfabric provider (libtern-fi.so): the objects behind the fids.
 *
 * The provider is built on tern's public API only (include/tern/ headers): a
 * domain holds a reference on the process's one tern context, an endpoint
 * is a tern worker, tagged and msg operations are the engine's 64-bit
 * tagged messages in two matching spaces, and every completion comes back
 * through the worker's CQ (tern_cq_read) with a tfi_op as its context,
 * which says where it goes: the endpoint's transmit or receive CQ, its
 * counters, or nowhere.  Progress is manual: fi_cq_read / fi_cntr_read
 * drain the workers of the endpoints bound to them.
 *
 * Locking: FI_THREAD_SAFE (and FI_THREAD_FID / _ENDPOINT / _COMPLETION,
 * which it covers) takes the domain's mutex around every call into tern
 * and every touch of a CQ, counter or AV of the domain; FI_THREAD_DOMAIN
 * takes none (the application serialises the domain).  EQs belong to the
 * fabric and have a mutex of their own.
 *
 * libfabric.so exports no ofi_* / util_* helpers, so the hints checks, AV,
 * CQ, EQ and counters are written here (docs/libfabric.md).
 */
#ifndef TERN_FI_H
#define TERN_FI_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <tern/tern.h>

#define TFI_NAME "tern"
#define TFI_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* The oldest API a caller may ask for (fi_cq_err_entry has err_data_size,
 * mr_mode is the 1.5 bit mask) and the one the provider implements. */
#define TFI_API_MIN FI_VERSION(1, 5)
#define TFI_API FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

/* Matching spaces: tagged operations in one, msg operations (tag 0,
 * ignore 0) in another, so that a msg receive never takes a tagged
 * message; the provider's own key requests and their answers (fi_rma.c)
 * in two more.  The engine reserves 65535. */
#define TFI_SPACE_TAGGED 1
#define TFI_SPACE_MSG 2
#define TFI_SPACE_KEYREQ 3
#define TFI_SPACE_KEYREP 4

/* What the provider offers (fi_info.c reports and checks these). */
#define TFI_CAPS_PRIMARY (FI_TAGGED | FI_MSG | FI_RMA | FI_ATOMIC | FI_DIRECTED_RECV)
#define TFI_CAPS_MODIFIERS (FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define TFI_CAPS_RMA_MODIFIERS (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define TFI_CAPS_SECONDARY (FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SOURCE)
#define TFI_CAPS (TFI_CAPS_PRIMARY | TFI_CAPS_MODIFIERS | TFI_CAPS_SECONDARY)
#define TFI_TX_CAPS                                                                                \
    (FI_TAGGED | FI_MSG | FI_RMA | FI_ATOMIC | FI_SEND | FI_READ | FI_WRITE | FI_LOCAL_COMM |       \
     FI_REMOTE_COMM)
#define TFI_RX_CAPS                                                                                \
    (FI_TAGGED | FI_MSG | FI_RMA | FI_ATOMIC | FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE |         \
     FI_DIRECTED_RECV | FI_SOURCE | FI_LOCAL_COMM | FI_REMOTE_COMM)
#define TFI_DOMAIN_CAPS (FI_LOCAL_COMM | FI_REMOTE_COMM)
#define TFI_MSG_ORDER FI_ORDER_SAS /* send order per (source, space) */
/* op_flags an endpoint may carry by default: every completion level is
 * met (MATCH, DELIVERY and TRANSMIT by a synchronous send) */
#define TFI_TX_OP_FLAGS                                                                            \
    (FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |                       \
     FI_DELIVERY_COMPLETE | FI_MATCH_COMPLETE)
#define TFI_RX_OP_FLAGS FI_COMPLETION
#define TFI_IOV_LIMIT 1024 /* reported; up to TERN_IOV_MAX accepted */
#define TFI_CQ_DATA_SIZE 8 /* the engine's immediate data: 64 bits */
#define TFI_MR_KEY_SIZE 8
#define TFI_MR_IOV_LIMIT 64
#define TFI_QUEUE_SIZE 65536 /* reported tx/rx depth: tern queues grow */
#define TFI_INJECT_SIZE_DEFAULT 4096
#define TFI_INJECT_SIZE_MAX (1u << 20)

extern struct fi_provider tfi_prov;

#define TFI_WARN(sub, ...) FI_WARN(&tfi_prov, sub, __VA_ARGS__)
#define TFI_INFO(sub, ...) FI_INFO(&tfi_prov, sub, __VA_ARGS__)

/* ---- settings (fi_prov.c): fi_param, listed by `fi_info -e` -------------- */

struct tfi_settings {
    char *netmods;      /* FI_TERN_NETMODS, or NULL: tern's TERN_NETMODS */
    char *wireup;       /* FI_TERN_WIREUP: auto (default), pmix, address */
    int num_workers;    /* FI_TERN_NUM_WORKERS, or 0: tern's TERN_NUM_WORKERS */
    size_t inject_size; /* FI_TERN_INJECT_SIZE */
};
void tfi_settings(struct tfi_settings *s);

/* ---- the process's tern context (fi_ctx.c) ------------------------------- */

/* Take a reference on the context, creating it on the first: inside a
 * PMIx job (PMIX_RANK and PMIX_NAMESPACE set) with TERN_WIREUP_PMIX,
 * collective over the job; else a job of one rank wired by addresses. */
int tfi_ctx_acquire(tern_context_t **ctx);
/* Drop one; the last tern_finalize()s the context. */
void tfi_ctx_release(void);
bool tfi_ctx_pmix(void);         /* wired through PMIx (the compact names) */
uint32_t tfi_ctx_job_hash(void); /* FNV-1a of tern_job_name() */
/* A worker for an endpoint: worker 0 first, then tern_worker_create. */
int tfi_worker_take(tern_worker_t **w);
void tfi_worker_give(tern_worker_t *w);
/* tern status -> negative libfabric errno (data and control calls) */
int tfi_errno(tern_status_t st);

/* ---- objects ---------------------------------------------------------------- */

struct tfi_fabric {
    struct fid_fabric fabric;
    atomic_int refs; /* domains and EQs open on it */
};

struct tfi_op;
struct tfi_mr;
struct tfi_rkey;

struct tfi_domain {
    struct fid_domain domain;
    struct tfi_fabric *fab;
    tern_context_t *ctx;
    pthread_mutex_t lock;
    bool locked; /* every threading model but FI_THREAD_DOMAIN */
    enum fi_threading threading;
    uint64_t caps;
    int mr_mode;
    uint32_t api_version;
    size_t inject_size;
    atomic_int refs; /* AVs, CQs, counters, endpoints, MRs */
    /* the op pool (fi_ep.c): chunks of ops, a free list */
    struct tfi_op *free_ops;
    void **chunks;
    size_t nchunks;
    /* MR keys (fi_mr.c): the registrations by key, chained */
    struct tfi_mr **mr_buckets;
    size_t nmr, mr_cap;
    uint64_t next_key;
    /* what this domain's initiators know of peers' keys (fi_rma.c), by
     * (peer, key), chained */
    struct tfi_rkey *rkeys[256];
};

static inline void tfi_lock(struct tfi_domain *d)
{
    if (d->locked)
        pthread_mutex_lock(&d->lock);
}
static inline void tfi_unlock(struct tfi_domain *d)
{
    if (d->locked)
        pthread_mutex_unlock(&d->lock);
}

struct tfi_eq;

struct tfi_av_entry {
    int peer;   /* tern peer id, -1: removed */
    size_t len; /* the name as inserted (for fi_av_lookup) */
    void *name;
};

struct tfi_av {
    struct fid_av av;
    struct tfi_domain *dom;
    enum fi_av_type type;
    bool event; /* FI_EVENT: inserts complete on the bound EQ */
    struct tfi_eq *eq;
    struct tfi_av_entry *tab; /* fi_addr_t = index, for FI_AV_MAP and FI_AV_TABLE */
    size_t n, cap;
    fi_addr_t *by_peer; /* peer id -> first fi_addr_t naming it (FI_SOURCE) */
    size_t npeer;
    atomic_int refs; /* endpoints bound */
};

/* The peer of fi_addr (-1: not a valid address of av). */
static inline int tfi_av_peer(const struct tfi_av *av, fi_addr_t a)
{
    return a < av->n ? av->tab[a].peer : -1;
}
static inline fi_addr_t tfi_av_addr(const struct tfi_av *av, int peer)
{
    return peer >= 0 && (size_t)peer < av->npeer ? av->by_peer[peer] : FI_ADDR_NOTAVAIL;
}

/* A completion as the provider queues it: the fields of every format,
 * the source, and the error fields when err != 0. */
struct tfi_cqe {
    void *context;
    uint64_t flags;
    size_t len;
    void *buf;
    uint64_t data;
    uint64_t tag;
    fi_addr_t src;
    size_t olen;
    int err;        /* positive FI_E*, 0: success */
    int prov_errno; /* the tern status */
};

struct tfi_ep;

struct tfi_cq {
    struct fid_cq cq;
    struct tfi_domain *dom;
    enum fi_cq_format format;
    enum fi_wait_obj wait_obj;
    struct tfi_cqe *ring; /* grows: no completion is ever lost */
    size_t cap, head, count;
    struct tfi_ep **eps; /* endpoints bound (progressed by fi_cq_read) */
    size_t neps, epcap;
    bool delivered; /* the last read returned completions (fi_cq.c: no poll right after) */
    atomic_bool signaled;
    atomic_int refs;
};

struct tfi_cntr {
    struct fid_cntr cntr;
    struct tfi_domain *dom;
    enum fi_wait_obj wait_obj;
    _Atomic uint64_t value, err;
    struct tfi_ep **eps;
    size_t neps, epcap;
    atomic_int refs;
};

struct tfi_eq_ev;
struct tfi_eq {
    struct fid_eq eq;
    struct tfi_fabric *fab;
    enum fi_wait_obj wait_obj;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct tfi_eq_ev *first, *last;
    char errbuf[128];
    atomic_int refs;
};
/* Queue an event (fi_av.c's FI_AV_COMPLETE) or an error entry. */
int tfi_eq_post(struct tfi_eq *eq, uint32_t event, const void *buf, size_t len, bool err);

/* tfi_op.kind */
#define TFI_OP_RECV (1u << 0)   /* a receive (else a send) */
#define TFI_OP_POOLED (1u << 1) /* from the domain's pool (else a static "silent" op) */
#define TFI_OP_COMP (1u << 2)   /* a successful completion is reported */
#define TFI_OP_KEYSVC (1u << 3) /* the endpoint's receive of key requests (fi_rma.c) */
#define TFI_OP_KEYREP (1u << 4) /* an answer to this side's key request: aux its rkey */
#define TFI_OP_QUIET (1u << 5)  /* a failure is dropped: another op of the same call reports it */

/* One posted operation: the context of its engine operation.  It is on its
 * endpoint's list of outstanding operations only while the engine holds it
 * (the post returned a request); one that completed within the call has
 * its entry in the worker's CQ already, and links to itself. */
struct tfi_op {
    void *context;              /* the application's */
    struct tfi_ep *ep;          /* NULL once its endpoint is closed */
    uint64_t flags;             /* completion flags: FI_SEND / FI_RECV | FI_TAGGED / FI_MSG */
    unsigned kind;              /* TFI_OP_* */
    tern_request_t *req;        /* pending receive: for tern_cancel */
    void *aux;                  /* an inject's bounce buffer (freed at completion), a key
                                 * answer's rkey */
    struct tfi_op *prev, *next; /* the endpoint's outstanding ops; the free list (next) */
};

/* How the plain calls of one direction (fi_tsend, fi_trecv, fi_send ...:
 * the endpoint's op_flags, one contiguous buffer) complete, worked out
 * when the endpoint is enabled or its op_flags change (tfi_ep_plan). */
struct tfi_plan {
    bool plain;      /* the plain calls may take tfi_send_plain / tfi_recv_plain */
    uint32_t tflags; /* TERN_OP_CQ, with TERN_OP_CQ_ERRORS when no record is kept */
    unsigned kind;   /* a pooled record's TFI_OP_*; 0: no record (a static op) */
};

struct tfi_ep {
    struct fid_ep ep;
    struct tfi_domain *dom;
    tern_worker_t *w;
    struct tfi_av *av;
    struct tfi_cq *tx_cq, *rx_cq;
    bool tx_selective, rx_selective;
    struct tfi_cntr *tx_cntr, *rx_cntr;
    struct tfi_eq *eq;
    bool enabled;
    uint64_t caps;
    uint64_t tx_op_flags, rx_op_flags;
    size_t inject_size;
    size_t max_msg_size;
    struct tfi_plan tx, rx;
    struct tfi_op outstanding; /* sentinel of the outstanding ops' list */
    /* the key requests peers send this endpoint (fi_rma.c): the receive
     * posted for the next one, its buffer */
    struct tfi_op *keysvc;
    uint64_t keyreq;
    bool closing; /* fi_close: the key service posts no more receives */
};

/* ---- shared helpers ---------------------------------------------------------- */

/* fi_info.c */
int tfi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                const struct fi_info *hints, struct fi_info **info);
/* Check an fi_info given to fi_domain / fi_endpoint as it would be as hints
 * (0, or -FI_ENODATA naming the field in the log). */
int tfi_check_info(uint32_t version, const struct fi_info *info);

/* fi_fabric.c */
int tfi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
int tfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq,
                void *context);

/* fi_domain.c */
int tfi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
                    void *context);
struct tfi_op *tfi_op_get(struct tfi_domain *d);
void tfi_op_put(struct tfi_domain *d, struct tfi_op *op);

/* fi_av.c */
int tfi_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **av,
                void *context);
/* fi_getname's bytes for worker w: a compact name in a PMIx job, else
 * tern's address wrapped in the provider's header. */
int tfi_name(tern_context_t *ctx, tern_worker_t *w, void *addr, size_t *addrlen);
/* Is addr[0..len) one whole name of the provider's formats? */
bool tfi_name_valid(const void *addr, size_t len);

/* fi_cq.c */
int tfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq,
                void *context);
int tfi_cq_push(struct tfi_cq *cq, const struct tfi_cqe *e);
int tfi_cq_attach(struct tfi_cq *cq, struct tfi_ep *ep);
void tfi_cq_detach(struct tfi_cq *cq, struct tfi_ep *ep);
/* Drain ep's worker once and route what completed (domain lock held). */
void tfi_ep_progress(struct tfi_ep *ep);
/* Route one engine completion e of ep's worker (domain lock held): also an
 * operation's failure the provider makes itself (a flush refused at the
 * call after its write went out) */
void tfi_ep_complete(struct tfi_ep *ep, const tern_cq_entry_t *e);
/* tern status -> positive FI errno of a completion error entry */
int tfi_cq_err(tern_status_t st);

/* fi_cntr.c */
int tfi_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **cntr,
                  void *context);
int tfi_cntr_attach(struct tfi_cntr *c, struct tfi_ep *ep);
void tfi_cntr_detach(struct tfi_cntr *c, struct tfi_ep *ep);

/* fi_mr.c */
extern struct fi_ops_mr tfi_mr_ops;
void tfi_mr_keys_free(struct tfi_domain *d);
/* A registration open for remote access under key: its packed tern key
 * (out, *len in and out) and the offset addresses count from; false: no
 * such key, or not remotely accessible (domain lock held). */
bool tfi_mr_remote(struct tfi_domain *d, uint64_t key, void *out, size_t *len, uint64_t *offset);

/* fi_rma.c: one-sided on tern's <tern/rma.h>.  A peer's key (64 bits) is
 * resolved into the tern key of its region by asking the peer once (a
 * tagged request the peer's endpoint answers from its progress), kept by
 * (peer, key); an operation whose key is still being fetched returns
 * -FI_EAGAIN, as libfabric lets an initiator do. */
struct tfi_rkey {
    struct tfi_rkey *next;
    int peer;
    uint64_t key;
    int state;          /* 0 fetching, 1 known, -1 refused by the peer */
    tern_key_t *tkey;   /* known: the region's key */
    uint64_t offset;    /* the peer's registration offset (offset addressing) */
    void *answer;       /* fetching: the answer's buffer */
};
/* Post ep's receive of key requests (fi_enable); answer one and post the
 * next (its completion, domain lock held); forget the known keys (domain
 * close). */
int tfi_keysvc_start(struct tfi_ep *ep);
void tfi_keysvc_answer(struct tfi_ep *ep, struct tfi_op *op, const tern_cq_entry_t *e);
void tfi_keyrep_done(struct tfi_ep *ep, struct tfi_op *op, const tern_cq_entry_t *e);
void tfi_rkeys_free(struct tfi_domain *d);
/* The tern key and remote address for (peer, key, addr) of ep's domain:
 * 0, -FI_EAGAIN while the key is being fetched (progress, then call
 * again), -FI_EKEYREJECTED when the peer has no such key (domain lock
 * held). */
int tfi_rkey_resolve(struct tfi_ep *ep, int peer, uint64_t key, uint64_t addr,
                     const tern_key_t **tkey, uint64_t *raddr);
/* A refused access through (peer, key): forget it (the region may have
 * been registered again under the key) */
void tfi_rkey_drop(struct tfi_domain *d, int peer, uint64_t key);
/* The end of a one-sided post: flush behind it (fop) when asked, the
 * record tracked or dropped, ep's domain unlocked; the call's return. */
ssize_t tfi_onesided_end(struct tfi_ep *ep, struct tfi_op *rec, tern_status_t st, bool flush,
                         int peer, tern_op_t *fop, void *bounce);

/* fi_ep.c */
int tfi_endpoint(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep,
                 void *context);
/* Work out ep->tx and ep->rx again (fi_enable, FI_SETOPSFLAG). */
void tfi_ep_plan(struct tfi_ep *ep);

/* op is held by the engine: on ep's outstanding list (fi_close, fi_cancel) */
static inline void tfi_ep_track(struct tfi_ep *ep, struct tfi_op *op)
{
    op->next = ep->outstanding.next;
    op->prev = &ep->outstanding;
    op->next->prev = op;
    ep->outstanding.next = op;
}
/* op's completion arrived (a no-op for one never tracked: it links to itself) */
static inline void tfi_ep_untrack(struct tfi_op *op)
{
    op->prev->next = op->next;
    op->next->prev = op->prev;
    op->next = op->prev = op;
}

/* fi_tagged.c, fi_msg.c, fi_rma.c, fi_atomic.c: the ops tables;
 * fi_stubs.c: "not supported" */
extern struct fi_ops_tagged tfi_tagged_ops;
extern struct fi_ops_msg tfi_msg_ops;
extern struct fi_ops_rma tfi_rma_ops;
extern struct fi_ops_atomic tfi_atomic_ops;
extern struct fi_ops_collective tfi_no_collective_ops;
extern struct fi_ops_cm tfi_cm_ops;

/* fi_xfer.c: the send and receive paths both ops tables share */
struct tfi_xfer {
    const struct iovec *iov; /* or buf, len */
    size_t iov_count;
    const void *buf;
    size_t len;
    fi_addr_t addr;
    uint64_t tag, ignore;
    uint16_t space;
    void *context;
    uint64_t data;
    uint64_t flags;   /* FI_* operation flags in effect (op_flags or the *msg call's) */
    bool inject_only; /* fi_inject / fi_tinject: no completion at all */
};
ssize_t tfi_send(struct tfi_ep *ep, const struct tfi_xfer *x);
ssize_t tfi_recv(struct tfi_ep *ep, const struct tfi_xfer *x);
/* The plain calls (one buffer, the endpoint's op_flags; the caller checked
 * the capability of the space): without building a tfi_xfer when
 * ep->tx.plain / ep->rx.plain, else through tfi_send / tfi_recv.
 * tflags: TERN_OP_DATA or 0. */
ssize_t tfi_send_plain(struct tfi_ep *ep, const void *buf, size_t len, fi_addr_t dest, uint64_t tag,
                       uint16_t space, void *context, uint64_t data, uint32_t tflags,
                       bool inject_only);
ssize_t tfi_recv_plain(struct tfi_ep *ep, void *buf, size_t len, fi_addr_t src, uint64_t tag,
                       uint64_t ignore, uint16_t space, void *context);
/* The completion record of an operation (domain lock held): a pooled op
 * when it reports (a success entry or a counter), else a static op and
 * TERN_OP_CQ_ERRORS in op->flags; NULL when out of memory.  Sets
 * TERN_OP_CQ and op->context. */
struct tfi_op *tfi_record(struct tfi_ep *ep, const struct tfi_xfer *x, bool recv, tern_op_t *op);
void tfi_record_drop(struct tfi_ep *ep, struct tfi_op *rec);
/* The source a receive matches: the peer of addr with FI_DIRECTED_RECV,
 * else TERN_ANY_SOURCE (fi_tagged(3): without the capability the address
 * is ignored); -FI_EINVAL for an address not in the AV. */
int tfi_recv_source(struct tfi_ep *ep, fi_addr_t addr, int *src);

/* FNV-1a, 32 bits (the job hash of the compact names) */
uint32_t tfi_hash(const char *s);

#endif
