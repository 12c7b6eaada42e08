/*
 * dpdk netmod: state shared by its files.  docs/dpdk.md has the design and
 * what was run where.
 *
 * Shape
 *   - EAL: started once per process, at the first worker's init, from the
 *     TERN_DPDK_* settings (dpdk_eal.c); never torn down (EAL cannot start
 *     twice in a process), its runtime directory removed at once.
 *   - Ports (dpdk_port.c): from TERN_DPDK_VDEV, a template expanded per
 *     worker (%w) and, when it names the peer (%p, %l, %h, %R), per peer:
 *     a point-to-point device such as memif gets one port per VC, a shared
 *     medium (af_packet, af_xdp, a NIC) one port per worker whose frames
 *     are told apart by the endpoint ids of the header.  TERN_DPDK_PORT
 *     names a device EAL probed itself (a NIC's PCI address).
 *   - Reliability (dpdk_rel.c): per VC one sequence space, selective repeat
 *     with a cumulative ack + a 64-frame SACK bitmap on every frame, fast
 *     retransmission of SACK holes, a loss probe for the tail, and a
 *     retransmission timer with back-off and a floor (TERN_DPDK_RTO_MIN_US)
 *     above the ~10 ms stalls of a VM.  The receiver delivers in order to
 *     the handler of each frame's type (tern_dpdk_handler_t: DATA to
 *     tern_handle_pkt, LMT to dpdk_lmt.c) and holds what came early (at
 *     most window frames).
 *   - Flow control: the receiver's window (frames) rides on every frame;
 *     a sender never has more than min(its window, the peer's) frames
 *     unacknowledged.  A full window queues the rest of the VC's sendq
 *     (TERN_ERR_AGAIN inside, back-pressure to the engine): the TX ring is
 *     never spun on.
 *   - Sends (dpdk_send.c): eager bytes are copied into pool mbufs, packets
 *     of a sendq packed into frames up to the MTU; the mbuf is kept (one
 *     extra reference) until acked, for retransmission.  LMT put
 *     (dpdk_lmt.c) sends the user's pages zero-copy.
 *   - Faults (dpdk_fault.c): TERN_DPDK_FAULTS injects seeded drops,
 *     hold-backs, duplicates and corruption on TX and RX for the tests.
 *
 * Threads: an instance belongs to its worker; the EAL is the only thing
 * the workers of a process share, behind a mutex taken at init and
 * finalize only.
 */
#ifndef TERN_DPDK_INTERNAL_H
#define TERN_DPDK_INTERNAL_H

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "engine/netmod.h"
#include "engine/pktq.h"
#include "netmods/dpdk/dpdk_wire.h"

#define TERN_DPDK_MAGIC 0x4b445054u /* "TPDK" */
#define TERN_DPDK_CARD_VERSION 1u
#define TERN_DPDK_WINDOW_MAX 1024u
#define TERN_DPDK_BURST 32u

/* ---- settings (dpdk_config.c) ------------------------------------------ */

typedef struct tern_dpdk_config {
    char vdev[TERN_CFG_STR_MAX];      /* TERN_DPDK_VDEV: the port template */
    char port[TERN_CFG_STR_MAX];      /* TERN_DPDK_PORT: a device EAL probes */
    char eal_args[TERN_CFG_STR_MAX];  /* TERN_DPDK_EAL_ARGS: appended */
    char faults[TERN_CFG_STR_MAX];    /* TERN_DPDK_FAULTS */
    uint64_t mtu;                     /* 0: the port's */
    uint64_t window;                  /* frames in flight per VC */
    uint64_t pool;                    /* mbufs per worker */
    uint64_t rx_desc, tx_desc;
    uint64_t rto_min_us, rto_max_ms;
    uint64_t probe_us;                /* tail-loss probe after this quiet */
    uint64_t ack_delay_us;
    uint64_t sleep_us;                /* block mode: longest sleep between polls */
    uint64_t timeout_ms;              /* unacked data this long: peer failed */
    uint64_t keepalive_ms;
    uint64_t connect_ms;              /* a point-to-point link must come up */
    uint64_t csum;
    uint64_t mem_mb;                  /* EAL memory without hugepages */
    uint64_t zcopy;                   /* LMT put from the user's pages */
    uint64_t rx_intr;                 /* block mode: sleep on the port's RX interrupt */
} tern_dpdk_config_t;

extern const tern_config_table_t tern_dpdk_config_table;

/* ---- business card ---------------------------------------------------------- */

enum { TERN_DPDK_CAP_MULTISEG = 1u << 0 };

typedef struct tern_dpdk_card {
    uint32_t magic;
    uint32_t version;         /* TERN_DPDK_CARD_VERSION; also the wire version */
    int32_t rank;
    uint32_t nonce;           /* this process's instance: frames name it */
    uint8_t mac[6];           /* the worker's port (shared medium); 0: per peer */
    uint16_t mtu;             /* payload bytes of an Ethernet frame it takes */
    uint32_t max_frame;       /* largest frame its port receives */
    uint32_t caps;            /* TERN_DPDK_CAP_* */
    uint32_t job;
    uint32_t window;          /* frames it accepts early (TERN_DPDK_WINDOW) */
} tern_dpdk_card_t;
static_assert(sizeof(tern_dpdk_card_t) == 40, "dpdk card is a wire format");

/* ---- faults (dpdk_fault.c) ---------------------------------------------------- */

typedef struct tern_dpdk_fault tern_dpdk_fault_t;
/* NULL spec or "": no shim.  TERN_ERR_INVALID_PARAM naming the bad part. */
tern_status_t tern_dpdk_fault_parse(const char *spec, unsigned salt, tern_dpdk_fault_t **out);
void tern_dpdk_fault_free(tern_dpdk_fault_t *f);
/* TX: the frames to send now (in place, returns how many); the shim keeps,
 * frees or copies what it decides.  RX likewise on what rx_burst gave. */
uint16_t tern_dpdk_fault_tx(tern_dpdk_fault_t *f, struct rte_mempool *mp, struct rte_mbuf **m,
                            uint16_t n, uint16_t max);
uint16_t tern_dpdk_fault_rx(tern_dpdk_fault_t *f, struct rte_mempool *mp, struct rte_mbuf **m,
                            uint16_t n, uint16_t max);
typedef struct tern_dpdk_fault_stats {
    uint64_t dropped, held, duplicated, corrupted;
} tern_dpdk_fault_stats_t;
void tern_dpdk_fault_stats(const tern_dpdk_fault_t *f, tern_dpdk_fault_stats_t *s);

/* ---- EAL (dpdk_eal.c) ------------------------------------------------------------ */

/* Start EAL once per process (job and rank name its file prefix); later
 * calls return the first one's result. */
tern_status_t tern_dpdk_eal_start(const tern_dpdk_config_t *cfg, const char *job, int rank);
/* Why dpdk cannot run in this process (NULL: it can). */
const char *tern_dpdk_eal_unavailable(void);

/* ---- ports (dpdk_port.c) ---------------------------------------------------------- */

typedef struct tern_dpdk_port {
    uint16_t id;
    bool created;             /* a vdev we made (uninit at close) */
    bool started;
    bool link_up;
    bool multiseg;            /* RTE_ETH_TX_OFFLOAD_MULTI_SEGS */
    bool intr_conf;           /* configured with intr_conf.rxq (block mode) */
    bool intr_tried;          /* rte_eth_dev_rx_intr_ctl_q was asked, once */
    bool rx_intr;             /* its queue 0 interrupt is in tern_dpdk_t.intr_ep */
    bool intr_on;             /* rte_eth_dev_rx_intr_enable is in force (armed) */
    /* dpdk_devargs.c, for devices whose max_rx_pktlen does not bound their
     * frames (memif, af_packet; 0 for others): */
    uint32_t frame_cap;       /* the largest frame, Ethernet header included */
    uint32_t rx_room;         /* mbuf data room its receive queue needs (0: no more than
                               * its frames') */
    bool client;              /* the connecting side of a point-to-point link */
    char name[RTE_ETH_NAME_MAX_LEN];
    char sock_path[108];      /* a point-to-point server's socket file, until linked */
    struct rte_ether_addr mac;
    uint16_t mtu;
    uint32_t max_frame;
    uint64_t start_deadline_ns; /* point-to-point: retry start until then */
    uint64_t next_start_ns;
    uint64_t started_ns;      /* last (re)start */
    uint64_t link_checked_ns;
    tern_dpdk_fault_t *fault;
} tern_dpdk_port_t;

typedef struct tern_dpdk tern_dpdk_t;

/* Expand the template for the instance's worker (peer: -1 for a
 * per-worker port), towards rank `peer` of job peer_job (the hash; this
 * job's, or another's: then a rank is named "<job hex>_<rank>" and the
 * pair's ends are ordered by (job, rank), so both sides expand the same
 * names). */
tern_status_t tern_dpdk_expand(const char *tmpl, const tern_dpdk_t *d, uint32_t peer_job,
                               int peer, char *out, size_t len);
/* Does the template make one port per peer? */
bool tern_dpdk_per_peer(const char *tmpl);
/* Create (vdev) or find (TERN_DPDK_PORT), configure and start a port. */
/* dpdk_devargs.c: p's frame_cap and rx_room from its device
 * arguments args (p->name set), adding to args (cap bytes) what sizes the
 * device's buffers for them. */
tern_status_t tern_dpdk_devargs_frames(tern_dpdk_t *d, tern_dpdk_port_t *p, char *args,
                                       size_t cap);
/* The MTU of the kernel interface if_index (0: none, or unknown). */
unsigned tern_dpdk_kernel_mtu(unsigned if_index);
tern_status_t tern_dpdk_port_open(tern_dpdk_t *d, const char *devargs, bool vdev,
                                  tern_dpdk_port_t *p);
/* Retry a start that failed (memif client before its server), restart a
 * client whose link did not come up; true once up. */
bool tern_dpdk_port_ready(tern_dpdk_t *d, tern_dpdk_port_t *p);
/* Re-read the link of a point-to-point port that was up (at most every
 * 10 ms); true when it went down (the caller fails the VC if frames came
 * through it: the peer's process ended). */
bool tern_dpdk_port_check_link(tern_dpdk_t *d, tern_dpdk_port_t *p);
void tern_dpdk_port_close(tern_dpdk_port_t *p);
/* Let go of a point-to-point port without closing it (see dpdk_port.c). */
void tern_dpdk_port_abandon(tern_dpdk_port_t *p);
/* Send n frames (through the fault shim); returns how many the port took,
 * the rest stay the caller's. */
uint16_t tern_dpdk_port_tx(tern_dpdk_t *d, tern_dpdk_port_t *p, struct rte_mbuf **m, uint16_t n);
uint16_t tern_dpdk_port_rx(tern_dpdk_t *d, tern_dpdk_port_t *p, struct rte_mbuf **m, uint16_t n);

/* ---- per-VC reliability state ------------------------------------------------------ */

/* A frame the sender keeps until it is acked. */
typedef struct tern_dpdk_slot {
    struct rte_mbuf *m;       /* copy frame (one reference ours); NULL: LMT zero-copy */
    void *owner;              /* its type's handler's (LMT: the transfer it belongs to) */
    uint64_t offset;          /* zero-copy: payload offset in the message */
    uint64_t sent_ns;         /* last transmission */
    uint16_t len;             /* payload bytes */
    uint16_t xmits;           /* transmissions so far (saturates) */
    uint8_t type;
    bool sacked;
    bool missing;             /* a SACK block since its last transmission lacked it */
} tern_dpdk_slot_t;

enum tern_dpdk_vc_conn { DPDK_VC_IDLE = 0, DPDK_VC_UP, DPDK_VC_DEAD };

typedef struct tern_dpdk_vc {
    tern_vc_t *vc;
    tern_dpdk_t *d;
    tern_dpdk_card_t card;    /* card.job, card.rank: the peer's job (hash) and rank there */
    enum tern_dpdk_vc_conn conn;
    tern_dpdk_port_t *port;   /* its own (per peer) or the worker's */
    tern_dpdk_port_t own;     /* per-peer port storage */
    struct rte_ether_addr peer_mac;
    uint32_t peer_ep, my_ep;
    uint16_t payload_max;     /* DATA payload bytes per frame towards this peer */

    /* send side */
    tern_pktq_t sendq;        /* engine packets not yet all in frames (engine/pktq.h) */
    tern_list_t lmtq;         /* LMT transfers with frames to make */
    tern_list_t lmt_sent;     /* LMT transfers all framed, waiting for acks */
    uint32_t snd_una, snd_nxt;    /* oldest unacked, next new */
    uint32_t snd_high;        /* highest seq ever transmitted + 1 */
    uint32_t peer_window;
    tern_dpdk_slot_t *slots;  /* window entries, by seq % window */
    uint64_t last_ack_ns;     /* when snd_una last moved (or the first send) */
    uint64_t rto_ns;          /* current timeout, backed off */
    uint8_t probes;           /* loss probes since snd_una last moved (each waits twice as long) */
    uint32_t sack_high;       /* one past the highest SACKed frame (== snd_una: none) */
    uint32_t rcv_latest;      /* receiver: the latest early frame (its SACK block is sent) */
    uint32_t rcv_prev_block;  /* an earlier early frame whose block is owed one more SACK */
    bool prev_block_owed;
    uint64_t srtt_ns;         /* smoothed round trip of first transmissions */
    uint64_t min_rtt_ns;      /* least round trip seen (RACK's reordering window) */
    uint64_t min_rtt_at_ns;   /* when min_rtt_ns was taken: older than 1 s is renewed */

    /* receive side */
    uint32_t rcv_nxt;
    struct rte_mbuf **ooo;    /* early frames, by seq % window */
    uint32_t ooo_count;
    uint32_t unacked_rx;      /* frames taken since our last ack went out */
    uint64_t ack_due_ns;      /* a delayed ack is owed by then (0: none) */
    bool ack_now;
    uint64_t last_rx_ns;
    uint64_t probe_sent_ns;   /* keepalive */

    tern_list_t active_link;  /* tern_dpdk_t.active: unacked data or owed ack */
    bool on_active;
    tern_list_t live_link;    /* tern_dpdk_t.live: has exchanged frames */
    bool on_live;
} tern_dpdk_vc_t;

/*
 * The reliability layer's upper side.  dpdk_rel.c moves frames (sequence
 * numbers, window, acks, retransmission) and knows nothing of what they
 * carry: each frame type of the VC's sequence space belongs to the layer
 * above that registered a handler for it at init (DATA: the engine's packet
 * stream, dpdk_netmod.c; LMT: rendezvous payload, dpdk_lmt.c).  ACK and
 * PROBE are the reliability layer's own; a received frame of any other type
 * without a handler is malformed.  Handlers run on the worker's thread.
 */
typedef struct tern_dpdk_handler {
    /* bytes of the type's own header between tern_dpdk_hdr_t and the
     * payload (LMT: tern_dpdk_lmt_ext_t); hdr.len counts the payload only */
    uint16_t ext_size;
    /* An in-order frame: its ext_size header bytes at ext and len payload
     * bytes (both in the frame: unaligned, valid during the call only). */
    void (*rx)(tern_dpdk_vc_t *dv, const void *ext, const void *payload, uint16_t len);
    /* A transmission of a slot of this type that kept no mbuf (slot.m NULL:
     * the layer keeps the payload, as zero-copy LMT does); NULL when out of
     * mbufs (the timers try again).  Needed only by a type that queues such
     * slots. */
    struct rte_mbuf *(*frame)(tern_dpdk_vc_t *dv, const tern_dpdk_slot_t *s);
    /* The slot's frame was acknowledged (optional); its mbuf is freed after. */
    void (*acked)(tern_dpdk_vc_t *dv, tern_dpdk_slot_t *s);
} tern_dpdk_handler_t;

typedef struct tern_dpdk_stats {
    uint64_t tx_frames, rx_frames, tx_bursts, rx_bursts, tx_full;
    uint64_t acks_sent, retransmits, fast_retransmits, probes, timeouts;
    uint64_t dup_frames, ooo_frames, bad_frames, csum_errors, window_full;
    uint64_t zcopy_frames, copy_frames;
    uint64_t gbn_frames; /* what go-back-N would have sent again instead (the choice's figure) */
    uint64_t sleeps;        /* block mode: arms that let the worker sleep (if its last poll
                             * finds nothing) */
    uint64_t intr_wakeups;  /* ... after which the RX interrupt had fired */
    uint64_t slice_wakeups; /* ... after which the sleep-slice timer had fired */
} tern_dpdk_stats_t;

struct tern_dpdk {
    tern_context_t *ctx;
    tern_worker_t *worker;
    const tern_dpdk_config_t *cfg;
    uint32_t job;
    uint32_t nonce;
    bool per_peer;
    tern_dpdk_port_t port;    /* the worker's port (shared medium) */
    struct rte_mempool *pool;
    tern_dpdk_card_t card;    /* ours */
    tern_dpdk_vc_t *vcs;      /* by rank */
    tern_dpdk_vc_t **remote;  /* VCs to other jobs' ranks (own allocations, kept until
                               * finalize: frames in flight may still name them) */
    int nremote, remote_cap;
    tern_dpdk_vc_t **by_port; /* per-peer ports: VC by DPDK port id */
    tern_list_t active;
    tern_list_t live;
    tern_list_t reap;         /* LMT transfers done but the PMD holds their pages */
    bool finalizing;          /* the engine has dropped the registration cache */
    uint64_t now_ns;          /* refreshed once per poll */
    int timer_fd;             /* block mode: the sleep slices (dpdk_wait.c) */
    int wait_ep;              /* block mode: the fd the engine sleeps on (timer_fd, intr_ep) */
    int intr_ep;              /* the ports' RX interrupts (DPDK's rte_epoll events) */
    bool intr_armed;          /* arm chose the interrupt: disarm consumes it */
    const tern_dpdk_handler_t *up[TERN_DPDK_F_MAX]; /* by frame type (dpdk_rel.c) */
    tern_dpdk_stats_t stats;
};

static inline tern_dpdk_vc_t *tern_dpdk_vc(tern_vc_t *vc) { return (tern_dpdk_vc_t *)vc->nm_vc; }

/* ---- dpdk_rel.c: frames, acks, retransmission ----------------------------------------- */

/* Frames of `type` go up to h from now on (at init, before any frame
 * moves; h is kept, not copied). */
void tern_dpdk_rel_handler(tern_dpdk_t *d, uint8_t type, const tern_dpdk_handler_t *h);

/* A new frame from the pool with Ethernet + tern headers for dv (type,
 * payload len filled by the caller); NULL when the pool is empty. */
struct rte_mbuf *tern_dpdk_frame_alloc(tern_dpdk_vc_t *dv, uint8_t type);
/* Fill the acknowledgement fields and the checksum, just before sending. */
void tern_dpdk_frame_seal(tern_dpdk_vc_t *dv, struct rte_mbuf *m);
/* Is there room in the window for one more frame? */
bool tern_dpdk_window_open(const tern_dpdk_vc_t *dv);
/* Put a sealed-to-be frame in the window under snd_nxt and transmit it
 * (a copy frame's mbuf: the slot keeps a reference).  TERN_OK even when
 * the port takes nothing now: the timers send it again. */
tern_status_t tern_dpdk_frame_queue(tern_dpdk_vc_t *dv, tern_dpdk_slot_t slot);
/* Handle one received frame (ours: checked, the mbuf consumed). */
void tern_dpdk_rx_frame(tern_dpdk_t *d, struct rte_mbuf *m);
/* dpdk_netmod.c: the VC to rank of another job (hash), NULL when none; on
 * a shared medium a first DATA frame from a process we have no address of
 * (a client of our port) makes one through tern_port_incoming, from what
 * the frame says (its MAC, nonce and window). */
tern_dpdk_vc_t *tern_dpdk_remote_vc(tern_dpdk_t *d, uint32_t job, int rank,
                                    const struct rte_mbuf *m);
/* Holes below SACKed frames out for srtt + the reordering window. */
void tern_dpdk_rack_timer(tern_dpdk_vc_t *dv);
/* Timers of every active VC: retransmissions, probes, delayed acks. */
void tern_dpdk_timers(tern_dpdk_t *d);
/* Send an ACK or a PROBE frame now. */
void tern_dpdk_send_ctrl(tern_dpdk_vc_t *dv, uint8_t type, uint8_t flags);
void tern_dpdk_mark_active(tern_dpdk_vc_t *dv);
void tern_dpdk_vc_lost(tern_dpdk_vc_t *dv, tern_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A point-to-point link that was up went down: the VC fails. */
void tern_dpdk_link_lost(tern_dpdk_vc_t *dv);
/* Free what the VC holds (window, early frames). */
void tern_dpdk_rel_drop(tern_dpdk_vc_t *dv);
/* Nothing unacked, nothing queued. */
bool tern_dpdk_vc_idle(const tern_dpdk_vc_t *dv);

/* ---- dpdk_send.c ------------------------------------------------------------------------ */

tern_status_t tern_dpdk_istart_contig_msg(tern_vc_t *vc, const void *hdr, size_t hdrlen,
                                          const void *data, size_t len, tern_request_t **sreq);
tern_status_t tern_dpdk_send_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                       size_t hdrlen);
/* Move the VC's queued packets into frames while the window allows. */
void tern_dpdk_push(tern_dpdk_vc_t *dv);
/* Transmit the frames queued but never sent. */
void tern_dpdk_flush(tern_dpdk_vc_t *dv);

/* ---- dpdk_wait.c ---------------------------------------------------------------------- */

int tern_dpdk_wait_fd(void *state);
bool tern_dpdk_arm(void *state);
void tern_dpdk_disarm(void *state);
/* A started port configured for interrupts: put its RX interrupt in
 * d->intr_ep (once; a PMD without one keeps the sleep slices). */
void tern_dpdk_intr_attach(tern_dpdk_t *d, tern_dpdk_port_t *p);
/* Before a port closes: take its interrupt out of d->intr_ep. */
void tern_dpdk_intr_detach(tern_dpdk_t *d, tern_dpdk_port_t *p);
/* Close the block-mode fds. */
void tern_dpdk_wait_close(tern_dpdk_t *d);

/* ---- dpdk_lmt.c ------------------------------------------------------------------------- */

typedef struct tern_dpdk_lmt_tx {
    tern_list_t link;         /* dv->lmtq, then dv->lmt_sent, then d->reap */
    tern_request_t *sreq;
    tern_dpdk_vc_t *dv;
    uint64_t cookie;          /* the receive's id */
    uint64_t total, next;     /* bytes; next to frame */
    uint64_t acked;           /* bytes acknowledged */
    const uint8_t *buf;       /* the user's (contiguous) message */
    tern_mem_t mem;           /* its registration (zero-copy) */
    /* one reference ours, one per external mbuf not yet freed (the PMD's) */
    struct rte_mbuf_ext_shared_info shinfo;
    bool zcopy;
} tern_dpdk_lmt_tx_t;

/* dpdk's scratch in a request (TERN_REQ_NM) during a put */
typedef struct tern_dpdk_req {
    uint64_t received;        /* receiver: bytes placed so far */
    uint64_t active;          /* receiver: 1 while frames may come */
    tern_dpdk_lmt_tx_t *tx;   /* sender: its transfer, NULL once done or detached */
} tern_dpdk_req_t;

static inline tern_dpdk_req_t *tern_dpdk_req(tern_request_t *r)
{
    return TERN_REQ_NM(r, tern_dpdk_req_t);
}

unsigned tern_dpdk_lmt_modes(void *state);
int tern_dpdk_lmt_choose(tern_vc_t *vc, size_t len);
tern_status_t tern_dpdk_lmt_initiate(tern_vc_t *vc, tern_request_t *sreq, int *mode,
                                     void *cookie, size_t *cookie_len);
tern_status_t tern_dpdk_lmt_start_recv(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                       size_t cookie_len);
tern_status_t tern_dpdk_lmt_start_send(tern_vc_t *vc, tern_request_t *sreq, const void *cookie,
                                       size_t cookie_len);
tern_status_t tern_dpdk_lmt_handle_cookie(tern_vc_t *vc, tern_request_t *req, const void *cookie,
                                          size_t cookie_len);
tern_status_t tern_dpdk_lmt_done_send(tern_vc_t *vc, tern_request_t *sreq);
tern_status_t tern_dpdk_lmt_done_recv(tern_vc_t *vc, tern_request_t *rreq);
/* Register the LMT frames' handler with d's reliability layer (at init). */
void tern_dpdk_lmt_attach(tern_dpdk_t *d);
/* Make one LMT frame of the head transfer (false: out of mbufs). */
bool tern_dpdk_lmt_push(tern_dpdk_vc_t *dv);
/* Completions whose PMD references are gone (checked from poll). */
void tern_dpdk_lmt_reap(tern_dpdk_t *d);
void tern_dpdk_lmt_drop(tern_dpdk_vc_t *dv);

#endif
