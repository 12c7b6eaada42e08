/*
 * verbs netmod: RDMA verbs (libibverbs) over RC queue pairs.
 *
 * Shape (docs/verbs.md has the why):
 *  - Per worker: a protection domain, a send CQ and a receive CQ on one
 *    completion channel, a shared receive queue (SRQ) of seg_size buffers,
 *    and a UD QP that carries the connection manager's datagrams.  The
 *    device context is opened once per process and shared by the workers.
 *  - Per peer (lazily, on first use): one RC QP.  The card in the worker's
 *    address (engine/address.h) carries the port's address (LID / GID,
 *    port, MTU) and the UD QPN; the RC QPN and PSN travel in the
 *    connection manager's REQ / REP datagrams (verbs_cm.c), so no QP exists
 *    for a peer never talked to.  A REQ also names the connector's job and
 *    carries its card, so a process of another job that has our address
 *    (a port's name) reaches us without our having its address.
 *  - Every RC send is a SEND_WITH_IMM of one segment of the VC's byte
 *    stream; the immediate carries the message kind and returned credits.
 *    A sender holds credits for the peer's SRQ buffers (flow control) and
 *    RNR is only the last resort.
 *  - LMT get (RDMA READ by the receiver) and put (RDMA WRITE by the sender,
 *    then DONE), through the engine's registration cache, in windows whose
 *    keys change mid-transfer through COOKIE packets (verbs_lmt.c).
 */
#ifndef TERN_VERBS_INTERNAL_H
#define TERN_VERBS_INTERNAL_H

#include <arpa/inet.h>
#include <assert.h>
#include <infiniband/verbs.h>

#include "engine/netmod.h"
#include "engine/pktq.h"

#define TERN_VERBS_MAGIC 0x42525654u /* "TVRB" */
#define TERN_VERBS_VERSION 3u /* 2: CM messages name jobs and carry the card; 3: the RMA QP */
#define TERN_VERBS_BYTE_ORDER 0x01020304u
#define TERN_VERBS_QKEY 0x7e4e0001u
#define TERN_VERBS_GRH 40u            /* UD receives start with the GRH area */
#define TERN_VERBS_UD_RECVS 64u       /* UD receive buffers (connection manager) */
#define TERN_VERBS_UD_SENDS 32u       /* UD send buffers */
#define TERN_VERBS_RESERVED_RECVS 3u  /* per peer: RTU and credit-only messages */
#define TERN_VERBS_POLL_BATCH 16

/* ---- wire formats -------------------------------------------------------- */

/* Business card: the verbs entry of a worker's address. */
typedef struct tern_verbs_card {
    uint32_t magic;
    uint16_t version;
    uint8_t link_layer;      /* IBV_LINK_LAYER_INFINIBAND / _ETHERNET */
    uint8_t port;
    uint32_t byte_order;     /* TERN_VERBS_BYTE_ORDER as the writer stores it */
    int32_t rank;
    uint16_t lid;
    uint8_t mtu;             /* enum ibv_mtu: the port's active MTU */
    uint8_t gid_index;
    uint32_t ud_qpn;         /* connection manager */
    uint8_t gid[16];
} tern_verbs_card_t;
static_assert(sizeof(tern_verbs_card_t) == 40, "verbs card is a wire format");
static_assert(offsetof(tern_verbs_card_t, gid) == 24, "verbs card layout");

/* Connection manager datagram (UD). */
enum tern_verbs_cm_type { TERN_VERBS_CM_REQ = 1, TERN_VERBS_CM_REP = 2 };
typedef struct tern_verbs_cm_msg {
    uint32_t magic;
    uint8_t version;
    uint8_t type;            /* enum tern_verbs_cm_type */
    uint16_t reserved;
    int32_t src_rank;
    int32_t dst_rank;
    uint32_t qpn;            /* the sender's RC QP for this pair */
    uint32_t psn;            /* its first send PSN */
    uint32_t credits;        /* receive buffers the sender grants for data */
    uint8_t rd_atomic;       /* RDMA reads the sender's QP answers at once (responder
                              * resources): the peer's initiator depth is at most this */
    uint8_t reserved2[3];
    uint32_t src_job;        /* the sender's job (tern_job_hash of its name) */
    uint32_t dst_job;        /* the receiver's, as the sender knows it */
    tern_verbs_card_t card;  /* the sender's: an acceptor that has no address of it (a port
                              * peer) answers and connects with this */
    uint32_t rma_qpn;        /* the sender's one-sided QP for this pair, 0: none */
    uint32_t rma_psn;        /* its first send PSN */
} tern_verbs_cm_msg_t;
static_assert(sizeof(tern_verbs_cm_msg_t) == 88, "verbs CM message is a wire format");
static_assert(offsetof(tern_verbs_cm_msg_t, src_job) == 32, "verbs CM message layout");
static_assert(sizeof(tern_verbs_cm_msg_t) + 40 <= 128, "a CM message fits a UD buffer with its GRH");

/* The immediate of every RC send: kind in the top byte, credits below. */
enum tern_verbs_imm_kind {
    TERN_VERBS_IMM_DATA = 1,   /* payload: bytes of the VC's stream */
    TERN_VERBS_IMM_CREDIT = 2, /* no payload: credits only */
    TERN_VERBS_IMM_RTU = 3,    /* first message of the connector: ready to use */
    TERN_VERBS_IMM_RTU_NORMA = 4, /* the same, the connector having no RMA QP (its
                                   * connect failed): the acceptor drops its own */
};
#define TERN_VERBS_IMM(kind, credits) (((uint32_t)(kind) << 24) | ((credits) & 0xffffffu))
#define TERN_VERBS_IMM_KIND(imm) ((imm) >> 24)
#define TERN_VERBS_IMM_CREDITS(imm) ((imm) & 0xffffffu)

/* LMT cookie (RTS, CTS and COOKIE packets). */
enum tern_verbs_cookie_kind {
    TERN_VERBS_COOKIE_KEY = 1,   /* a window: read (get) or write (put) it */
    TERN_VERBS_COOKIE_NEXT = 2,  /* window done up to offset: send the next key */
    TERN_VERBS_COOKIE_COPY = 3,  /* the whole message follows as a DATA packet */
};
typedef struct tern_verbs_cookie {
    uint32_t kind;
    int32_t reserved0;
    uint64_t offset;         /* KEY: window start in the message; NEXT: resume here */
    uint64_t addr;           /* KEY: remote address of the window's first byte */
    uint64_t len;            /* KEY: window bytes */
    uint64_t total;          /* KEY: bytes the owner's buffer takes in all */
    uint64_t req_id;         /* NEXT / COPY from a receiver: its request id */
    uint32_t rkey;
    uint32_t reserved;
} tern_verbs_cookie_t;
static_assert(sizeof(tern_verbs_cookie_t) == 56, "verbs cookie is a wire format");
static_assert(sizeof(tern_verbs_cookie_t) <= TERN_COOKIE_MAX, "verbs cookie fits a packet");

/* The netmod's bytes of a region's key (verbs_rma.c; engine/netmod.h's
 * rma pack): the rkey of the region's one registration (a protection
 * domain every worker of the owner shares), and whether it takes the
 * device's atomics (TERN_VERBS_KEY_AMO: registered with remote atomic
 * access, TERN_REGION_ATOMIC_DEVICE on a device that has them). */
#define TERN_VERBS_REGION_KEY_VERSION 2
#define TERN_VERBS_KEY_AMO 1u
typedef struct tern_verbs_region_key {
    uint16_t version;
    uint16_t flags;
    uint32_t rkey;
} tern_verbs_region_key_t;
static_assert(sizeof(tern_verbs_region_key_t) == 8, "verbs region key is a wire format");
/* A region's registration (the rma table's handle). */
typedef struct tern_verbs_region {
    struct ibv_mr *mr;
    bool amo; /* with remote atomic access */
} tern_verbs_region_t;

/* ---- settings (verbs_config.c) ------------------------------------------ */

typedef struct tern_verbs_config {
    char device[TERN_CFG_STR_MAX]; /* TERN_VERBS_DEVICE: "name[:port]", "" = first active */
    uint64_t gid_index;            /* TERN_VERBS_GID_INDEX */
    uint64_t seg_size;             /* TERN_VERBS_SEG_SIZE: eager segment / SRQ buffer */
    uint64_t credits;              /* TERN_VERBS_CREDITS: per peer */
    uint64_t credits_max;          /* TERN_VERBS_CREDITS_MAX: a grant grows up to it */
    uint64_t srq_max;              /* TERN_VERBS_SRQ_MAX: receives posted at most */
    uint64_t tx_depth;             /* TERN_VERBS_TX_DEPTH: send queue per QP */
    uint64_t signal_every;         /* TERN_VERBS_SIGNAL_EVERY */
    uint64_t max_inline;           /* TERN_VERBS_INLINE */
    uint64_t put_min;              /* TERN_VERBS_PUT_MIN: put from this size on */
    uint64_t rdma_chunk;           /* TERN_VERBS_RDMA_CHUNK: bytes per RDMA work request */
    uint64_t reg_window;           /* TERN_VERBS_REG_WINDOW: 0 = whole message */
    uint64_t connect_ms;           /* TERN_VERBS_CONNECT_MS */
    uint64_t timeout;              /* TERN_VERBS_TIMEOUT: IB local ACK timeout exponent */
    uint64_t retry_cnt;            /* TERN_VERBS_RETRY_COUNT */
    uint64_t rnr_retry;            /* TERN_VERBS_RNR_RETRY */
    uint64_t keepalive_ms;         /* TERN_VERBS_KEEPALIVE_MS: 0 = off */
    uint64_t rma;                  /* TERN_VERBS_RMA: one-sided by RDMA (0: packets) */
    uint64_t amo;                  /* TERN_VERBS_AMO: device atomics where asked (0: never) */
} tern_verbs_config_t;

extern const tern_config_table_t tern_verbs_config_table;

/* ---- state ---------------------------------------------------------------- */

/* The device as every worker of the process uses it (engine's *shared). */
typedef struct tern_verbs_dev {
    int refs;
    struct ibv_context *ctx;
    struct ibv_device_attr attr;
    struct ibv_port_attr port_attr;
    uint8_t port;
    uint8_t gid_index;
    union ibv_gid gid;
    char name[64];
    struct ibv_pd *pd; /* every worker's: a region has one registration (verbs_rma.c) */
} tern_verbs_dev_t;

/* A registered slab of equal buffers. */
typedef struct tern_verbs_slab {
    uint8_t *mem;
    struct ibv_mr *mr;
    uint32_t size, count;
} tern_verbs_slab_t;

/* What a send-queue entry holds until its completion (signaled or implied
 * by a later signaled one): a bounce buffer, an LMT work request. */
enum tern_verbs_op { OP_NONE = 0, OP_SEND, OP_READ, OP_WRITE, OP_FLUSH };
typedef struct tern_verbs_txe {
    uint8_t op;             /* enum tern_verbs_op */
    uint8_t last;           /* OP_READ / OP_WRITE: last work request of its window */
    int32_t buf;            /* bounce buffer index, -1 none */
    tern_request_t *req;    /* OP_READ / OP_WRITE */
} tern_verbs_txe_t;

enum tern_verbs_conn {
    VC_IDLE = 0,      /* no QP */
    VC_CONNECTING,    /* our REQ is out, waiting for the REP */
    VC_RTU_PENDING,   /* connected to the acceptor's QP; our RTU waits for a send slot */
    VC_ACCEPTED,      /* we answered a REQ: sends wait for the connector's RTU */
    VC_CONNECTED,
    VC_DEAD,          /* failed: the QP is gone */
};

typedef struct tern_verbs tern_verbs_t;

/* A one-sided operation posted on the RMA QP (verbs_rma.c), by seq. */
typedef struct tern_verbs_rop {
    tern_request_t *req;         /* the engine's (NULL: let go, the VC failed) */
    struct tern_netmod_inst *inst; /* the local buffer's registration (tern_mem_t), */
    struct tern_rcache_region *region; /* NULL: inline, none */
} tern_verbs_rop_t;
/* A flush part waiting for the RMA QP's operations before seq. */
typedef struct tern_verbs_rflush {
    uint64_t seq;
    tern_request_t *part;
} tern_verbs_rflush_t;

typedef struct tern_verbs_vc {
    tern_vc_t *vc;
    tern_verbs_t *v;
    uint32_t peer_job;        /* the peer's job (hash) and its rank there: the CM's names */
    int peer_rank;
    enum tern_verbs_conn conn;
    tern_verbs_card_t card;
    struct ibv_ah *ah;        /* to the peer's UD QP (connection manager) */
    struct ibv_qp *qp;
    uint32_t psn;
    uint32_t remote_qpn;      /* the peer's RC QP, once known */
    uint8_t peer_rd_atomic;   /* its responder resources (REQ / REP) */
    uint32_t req_ms;          /* REQ repeat interval (doubles up to 1 s) */
    uint64_t connect_deadline_ns, next_req_ns;
    /* flow control */
    uint32_t tx_credits;      /* peer SRQ buffers we may still fill */
    uint32_t rx_granted;      /* credits we granted (our share of the SRQ) */
    uint32_t rx_consumed;     /* data messages received, buffers not yet reposted
                               * (the VC stays on the pending list meanwhile) */
    uint32_t credits_out;     /* reposted for this peer, not yet returned */
    bool credit_grace;        /* a credit-only message is due: one more poll for a
                               * data send to carry them instead */
    /* send queue: posted work requests, seq-numbered; txe[seq % tx_depth] */
    tern_verbs_txe_t *txe;
    uint64_t sq_head;         /* next seq to post */
    uint64_t sq_tail;         /* oldest seq not known complete */
    uint32_t unsignaled;      /* posted since the last signaled one */
    tern_pktq_t sendq;        /* packets not fully posted (engine/pktq.h) */
    tern_list_t rdmaq;        /* LMT requests with RDMA work to post (req->link) */
    tern_list_t live_link;    /* tern_verbs_t.live (a working QP) or .retired */
    uint64_t retire_ns;       /* when the QP went to ERR (retired) */
    tern_list_t pend_link;    /* tern_verbs_t.pending */
    bool on_pending;
    bool flush_posted;
    /* one-sided (verbs_rma.c): a QP of its own, so that an operation the
     * peer's device refuses (its region destroyed) fails that QP, not the
     * stream's; every work request on it is signaled */
    struct ibv_qp *rqp;
    uint32_t rpsn;
    bool rma_up;              /* rqp connected and not failed: operations go on it */
    tern_verbs_rop_t *rops;   /* posted operations: rops[seq % tx_depth] */
    uint64_t rhead, rtail;    /* next seq to post, oldest not complete */
    tern_verbs_rflush_t *rflush; /* flush parts waiting, in seq order */
    uint32_t nrflush, rflush_cap;
    tern_status_t rma_err;    /* a write refused since the last flush part: its report */
    /* device atomics (verbs_amo.c): each posted one's old value lands in
     * amo_res[seq % tx_depth] (registered: amo_mr); atomics that may not be
     * posted yet (a full queue, or a failed QP still draining) wait in
     * amo_pend (req->link), in order */
    uint64_t *amo_res;
    struct ibv_mr *amo_mr;
    bool amo_tried;           /* amo_res made (or failed: atomics by packets for good) */
    /* the RMA QP's first failure was a refusal of one of ours (a NAK):
     * RC executed nothing after it, so atomics flushed behind it may go
     * again; any other failure leaves their outcome unknown */
    bool amo_safe;
    tern_list_t amo_pend;
    uint32_t namo_pend;
} tern_verbs_vc_t;

/* Counters (tern_worker_counters). */
typedef struct tern_verbs_stats {
    uint64_t post_send, post_send_wrs, post_recv, post_recv_wrs, poll_cq, cqes, req_notify,
        inline_sends, credit_msgs, connections, keepalives, rma_posts, rma_failed, amo_posts,
        amo_local, grants_grown;
} tern_verbs_stats_t;

struct tern_verbs {
    tern_context_t *ctx;
    tern_worker_t *worker;
    const tern_verbs_config_t *cfg; /* &cfg_dev */
    tern_verbs_config_t cfg_dev;    /* the settings, fitted to the device's limits */
    tern_verbs_dev_t *dev;
    struct ibv_pd *pd;
    struct ibv_comp_channel *channel;
    struct ibv_cq *scq, *rcq;
    struct ibv_srq *srq;
    struct ibv_qp *ud;
    uint32_t max_inline;      /* what the QPs got */
    bool qps_made;            /* max_inline is known (a QP was created) */
    bool timers_read;         /* the device's transport timers read back (verbs_cm.c) */
    uint32_t scq_size;        /* send CQ entries work requests may occupy */
    uint32_t scq_outstanding; /* posted work requests not known complete, all QPs */
    bool scq_full;            /* data hit the limit: poll flushes the unsignaled tails */
    tern_verbs_slab_t rx;     /* SRQ buffers */
    tern_verbs_slab_t tx;     /* bounce buffers */
    tern_verbs_slab_t udrx, udtx;
    int32_t *tx_free;         /* stack of free bounce buffers */
    uint32_t ntx_free;
    uint32_t ud_tx_next, ud_tx_busy;
    uint32_t srq_posted;      /* receives posted now */
    uint32_t rx_next;         /* buffers [0, rx_next) circulate: posted or to repost */
    uint32_t srq_target;      /* buffers to circulate (grows with the peers' credits) */
    uint32_t ngranted;        /* peers given their share of the SRQ (grant_credits) */
    uint32_t *rx_repost;      /* consumed buffers to post again (batched) */
    uint32_t nrepost;
    bool repost_due;          /* a peer has half its grant waiting for a repost */
    uint32_t job;             /* hash of this job's name */
    tern_verbs_card_t card;   /* ours */
    tern_verbs_vc_t *vcs;     /* by rank */
    tern_verbs_vc_t **remote; /* VCs to other jobs' ranks (own allocations, kept until
                               * finalize: a retired QP still names its VC) */
    int nremote, remote_cap;
    tern_list_t live;         /* VCs with a working QP */
    tern_list_t retired;      /* failed VCs whose QP (in ERR) still drains */
    tern_list_t pending;      /* VCs with queued work (sendq / rdmaq / credits) */
    struct qpn_map *qpns;     /* RC QPN -> VC */
    unsigned polls;
    uint64_t next_keepalive_ns;
    uint64_t rng;             /* PSNs: a generator of our own, not the application's random() */
    uint32_t rma_inflight;    /* one-sided operations posted, not complete (all RMA QPs) */
    uint32_t rma_inline;      /* inline bytes the RMA QPs take */
    bool rma_inline_known;
    /* the owner's device atomics (verbs_amo.c): a QP connected to itself,
     * its CQ, the old value's registered word */
    struct ibv_qp *lb_qp;
    struct ibv_cq *lb_cq;
    struct ibv_mr *lb_mr;
    uint64_t lb_res;
    uint32_t amo_parked;      /* atomics waiting in VCs' amo_pend, all VCs */
    tern_verbs_stats_t stats;
};

static inline tern_verbs_vc_t *tern_verbs_vc(tern_vc_t *vc) { return (tern_verbs_vc_t *)vc->nm_vc; }
static inline tern_verbs_t *tern_verbs_state(tern_vc_t *vc) { return (tern_verbs_t *)vc->nm_state; }

/* wr_id of a work request: kind in the top byte. */
enum tern_verbs_wr_kind { WR_RC = 1, WR_SRQ = 2, WR_UD_RECV = 3, WR_UD_SEND = 4, WR_RMA = 5 };
#define TERN_VERBS_WR(kind, val) (((uint64_t)(kind) << 56) | ((uint64_t)(val) & ((1ull << 56) - 1)))
#define TERN_VERBS_WR_KIND(id) ((unsigned)((id) >> 56))
#define TERN_VERBS_WR_VAL(id) ((id) & ((1ull << 56) - 1))

/* ---- verbs_device.c ----------------------------------------------------- */

/* Is a verbs device usable in this process?  (Probed once; why on no.) */
bool tern_verbs_available(const char **why);
tern_status_t tern_verbs_dev_open(const tern_verbs_config_t *cfg, tern_verbs_dev_t **dev);
void tern_verbs_dev_close(tern_verbs_dev_t *dev);
tern_status_t tern_verbs_slab_init(tern_verbs_t *v, tern_verbs_slab_t *s, uint32_t size,
                                   uint32_t count, const char *what);
void tern_verbs_slab_fini(tern_verbs_slab_t *s);
static inline uint8_t *tern_verbs_slab_buf(const tern_verbs_slab_t *s, uint32_t i)
{
    return s->mem + (size_t)i * s->size;
}
/* Worker resources: PD, channel, CQs, SRQ, UD QP, buffers. */
tern_status_t tern_verbs_worker_open(tern_verbs_t *v);
void tern_verbs_worker_close(tern_verbs_t *v);
/* Post n receive buffers to the SRQ, 32 per ibv_post_srq_recv: indices
 * idx[0..n) or, with idx NULL, first..first+n. */
tern_status_t tern_verbs_srq_post(tern_verbs_t *v, const uint32_t *idx, uint32_t first,
                                  uint32_t n);
/* Bring SRQ buffers into circulation until srq_target circulate. */
tern_status_t tern_verbs_srq_fill(tern_verbs_t *v);
/* A message naming a failed verbs call for rank (or -1). */
tern_status_t tern_verbs_err(tern_status_t st, int rank, const char *call, int err);
/* Read and report the device's async events (worker 0). */
void tern_verbs_async_events(tern_verbs_t *v);

/* ---- verbs_qpn.c: RC QPN -> VC -------------------------------------------- */
struct qpn_map *tern_verbs_qpn_map_new(int capacity);
void tern_verbs_qpn_map_free(struct qpn_map *m);
/* map qpn to tv, growing *m when half full (TERN_ERR_NO_MEMORY) */
tern_status_t tern_verbs_qpn_put(struct qpn_map **m, uint32_t qpn, tern_verbs_vc_t *tv);
void tern_verbs_qpn_del(struct qpn_map *m, uint32_t qpn);
tern_verbs_vc_t *tern_verbs_qpn_get(const struct qpn_map *m, uint32_t qpn);

/* ---- verbs_cm.c: connections ---------------------------------------------- */
tern_status_t tern_verbs_card_check(const void *data, size_t len, int rank,
                                    const tern_verbs_dev_t *dev, tern_verbs_card_t *out);
/* A VC to rank of another job (its name hash), with its card. */
tern_status_t tern_verbs_remote_add(tern_verbs_t *v, tern_vc_t *vc, uint32_t job, int rank,
                                    const tern_verbs_card_t *card);
/* The state of a VC: its lists empty, the peer named. */
void tern_verbs_vc_setup(tern_verbs_t *v, tern_verbs_vc_t *tv, tern_vc_t *vc, uint32_t job,
                         int rank);
tern_status_t tern_verbs_connect(tern_verbs_vc_t *tv);
void tern_verbs_cm_recv(tern_verbs_t *v, const void *buf, size_t len, uint32_t src_qpn);
void tern_verbs_cm_timers(tern_verbs_t *v, uint64_t now);
void tern_verbs_connected(tern_verbs_vc_t *tv);
tern_status_t tern_verbs_send_rtu(tern_verbs_vc_t *tv);
void tern_verbs_qp_drop(tern_verbs_vc_t *tv);
/* A failed VC's QP: to ERR, drained, destroyed later by tern_verbs_reap. */
void tern_verbs_qp_retire(tern_verbs_vc_t *tv);
#define TERN_VERBS_RETIRE_NS (100ull * 1000000ull)
void tern_verbs_reap(tern_verbs_t *v, uint64_t now);
tern_status_t tern_verbs_post_ud_recvs(tern_verbs_t *v, uint32_t first, uint32_t n);

/* ---- verbs_send.c: the stream and the send queue ------------------------ */
tern_status_t tern_verbs_istart_contig_msg(tern_vc_t *vc, const void *hdr, size_t hdrlen,
                                           const void *data, size_t len, tern_request_t **sreq);
tern_status_t tern_verbs_send_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                        size_t hdrlen);
/* Move queued work of tv to the send queue as far as credits and slots go. */
unsigned tern_verbs_progress_vc(tern_verbs_vc_t *tv);
/* Post one work request (with its txe) on tv's QP; TERN_ERR_AGAIN when the
 * send queue or the send CQ is full.  POST_SIGNAL asks for a completion;
 * POST_CONTROL (flush / keepalive, RTU: always signaled) may use the last
 * TERN_VERBS_SCQ_RESERVE slots of the send CQ, which data never takes, so a
 * full CQ can always be drained by a flush. */
enum { TERN_VERBS_POST_SIGNAL = 1, TERN_VERBS_POST_CONTROL = 2 };
#define TERN_VERBS_SCQ_RESERVE 64u
/* What an ibv_post_send error means where the netmod checked the queue's
 * room first (it counts every work request until its completion is polled,
 * as the device does): a refusal, never "full".  mlx5 answers ENOMEM for
 * more than a full queue (inline data or SGEs beyond what the QP was
 * granted, a QP not yet in RTS), rxe EINVAL; the text names both. */
const char *tern_verbs_post_refused(int rc);
tern_status_t tern_verbs_post(tern_verbs_vc_t *tv, struct ibv_send_wr *wr, tern_verbs_txe_t txe,
                              unsigned flags);
/* Flush every QP with an unsignaled tail (the send CQ's data slots ran out). */
void tern_verbs_flush_all(tern_verbs_t *v);
/* A signaled completion of seq on tv: everything up to it is done. */
void tern_verbs_sq_complete(tern_verbs_vc_t *tv, uint64_t seq, tern_status_t st,
                            const char *why);
/* A credit-only message when enough credits wait to go back (and no data
 * send carried them within a poll); 1 while one is held back (the poll
 * made progress: the engine must not sleep on it), else 0. */
unsigned tern_verbs_return_credits(tern_verbs_vc_t *tv, bool force);
/* A larger grant for a peer streaming one way, from SRQ room no other
 * peer's share can need (verbs_cm.c): the credits added, their buffers
 * posted. */
uint32_t tern_verbs_grow_grant(tern_verbs_vc_t *tv);
/* Post a zero-length signaled RDMA write so unsignaled work completes. */
tern_status_t tern_verbs_flush(tern_verbs_vc_t *tv);
/* Keepalive: the same write on every connected QP that has none in flight,
 * so a peer that died while nothing was sent to it fails its VC (RC retry
 * exceeded) even where the launcher reports no deaths. */
void tern_verbs_keepalive(tern_verbs_t *v, uint64_t now);
void tern_verbs_mark_pending(tern_verbs_vc_t *tv);
bool tern_verbs_vc_idle(const tern_verbs_vc_t *tv);

/* ---- verbs_poll.c ------------------------------------------------------------ */
unsigned tern_verbs_poll(void *state, int direction);
/* Fail tv naming the work completion. */
void tern_verbs_fail_wc(tern_verbs_vc_t *tv, const struct ibv_wc *wc, const char *what);

/* ---- verbs_lmt.c ------------------------------------------------------------- */
unsigned tern_verbs_lmt_modes(void *state);
int tern_verbs_lmt_choose(tern_vc_t *vc, size_t len);
tern_status_t tern_verbs_lmt_initiate(tern_vc_t *vc, tern_request_t *sreq, int *mode,
                                      void *cookie, size_t *cookie_len);
tern_status_t tern_verbs_lmt_start_recv(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                        size_t cookie_len);
tern_status_t tern_verbs_lmt_start_send(tern_vc_t *vc, tern_request_t *sreq, const void *cookie,
                                        size_t cookie_len);
tern_status_t tern_verbs_lmt_handle_cookie(tern_vc_t *vc, tern_request_t *req, const void *cookie,
                                           size_t cookie_len);
tern_status_t tern_verbs_lmt_done_send(tern_vc_t *vc, tern_request_t *sreq);
tern_status_t tern_verbs_lmt_done_recv(tern_vc_t *vc, tern_request_t *rreq);
/* Post tv's queued RDMA work; an RDMA window's last completion. */
unsigned tern_verbs_lmt_progress(tern_verbs_vc_t *tv);
void tern_verbs_lmt_window_done(tern_verbs_vc_t *tv, tern_request_t *r);
/* tv fails: drop the registrations of its LMT requests. */
void tern_verbs_lmt_drop(tern_verbs_vc_t *tv);

/* ---- verbs_rma.c: one-sided operations (the rma table) -------------------- */
extern const tern_nm_rma_ops_t tern_verbs_rma_ops;
/* ---- verbs_amo.c: device atomics (TERN_REGION_ATOMIC_DEVICE) ------------- */
/* Does this process's device do atomics, and may we (TERN_VERBS_AMO)? */
bool tern_verbs_amo_ok(const tern_verbs_t *v);
tern_status_t tern_verbs_amo(tern_vc_t *vc, tern_request_t *r, const void *kb, size_t klen);
tern_status_t tern_verbs_amo_local(void *state, void *h, uint64_t addr, int op, uint64_t value,
                                   uint64_t compare, uint64_t *old);
/* The RMA QP's atomics: scratch made with it, pending ones posted as room
 * comes or handed back once a failed QP has drained, all let go. */
void tern_verbs_amo_drain(tern_verbs_vc_t *tv);
/* From the poll: every VC's waiting atomics (the send CQ had no room). */
void tern_verbs_amo_drain_all(tern_verbs_t *v);
void tern_verbs_amo_fail(tern_verbs_vc_t *tv, tern_status_t st);
void tern_verbs_amo_free(tern_verbs_vc_t *tv);
void tern_verbs_lb_close(tern_verbs_t *v);
/* Parts of flushes whose operations have all completed (all: every one);
 * replayed: operations they counted went as packets, so each part answers
 * by an RMA_FLUSH behind them (verbs_rma.c). */
void tern_verbs_rma_parts_done(tern_verbs_vc_t *tv, bool all, bool replayed);
/* The address vector of a peer's card (verbs_cm.c). */
void tern_verbs_fill_ah(const tern_verbs_t *v, const tern_verbs_card_t *c, struct ibv_ah_attr *ah);
/* Deregister an MR (a cache entry's or a region's): mem_dereg and dereg
 * of the tables; a failure is warned. */
void tern_verbs_mr_dereg(void *state, void *mr);
/* tv's RMA QP: made beside its RC QP (none when TERN_VERBS_RMA=0 or the
 * device refuses: one-sided goes by packets), connected to the peer's
 * (REQ / REP carry it), dropped with it. */
void tern_verbs_rma_create(tern_verbs_vc_t *tv);
void tern_verbs_rma_connect(tern_verbs_vc_t *tv, uint32_t qpn, uint32_t psn);
void tern_verbs_rma_drop(tern_verbs_vc_t *tv);
/* A completion of the RMA QP; the VC failed: its operations and flush
 * parts end with st (the engine's status of the VC). */
void tern_verbs_rma_wc(tern_verbs_vc_t *tv, const struct ibv_wc *wc);
void tern_verbs_rma_fail(tern_verbs_vc_t *tv, tern_status_t st);
/* The RMA QP is unusable (why): to ERR, one-sided by packets from now on. */
void tern_verbs_rma_down(tern_verbs_vc_t *tv, const char *why);

#endif
