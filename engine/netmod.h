/*
 * The netmod interface (after the Nemesis network-module API) and the
 * registry netmods declare themselves in.
 *
 * A netmod lives in its own folder (netmods/<name>/) and declares itself
 * there with TERN_NETMOD_DEFINE(desc): name, priority, its configuration
 * table and its capability tables.  The engine names no netmod: selection,
 * TERN_NETMODS, tern_info and the test matrix read the registry.
 *
 * Capability tables (as libfabric's fi_ops_* or UCX's md / iface ops): one
 * typedef per operation, one const table per capability.  The core table is
 * required; every other table is optional and a NULL table means the
 * capability is absent (no LMT: the engine's null mode; no wait: no event
 * source; no mem: registers nothing; no conn: reaches no other job and
 * opens no port).  Inside a table every slot is required unless documented
 * "optional" below.  tern_netmod_register checks a descriptor (its ABI
 * number, then every required slot) and refuses it with an error naming
 * the netmod and the slot: a missing op is a load-time error, never a
 * crash or a silent default.
 *
 * A netmod is an ordered byte stream per VC by contract: the engine's
 * packet parser needs it, and no netmod is asked.
 *
 * Addresses (engine/peer.c, docs/addresses.md): a netmod produces its card
 * (card: the bytes a peer needs to reach this instance) and takes a peer's
 * (vc_init, vc_init_remote); it never calls PMIx or sees another netmod's
 * card.  The engine builds each worker's address from its netmods' cards
 * and alone publishes and reads addresses.
 *
 * Wire-up phases, driven by engine/context.c, for every worker:
 *   init            create resources
 *   card            (engine: the worker's address, then with a launcher
 *                   PMIx put + commit + fence; without one the caller
 *                   hands the address around, tern_peer_insert)
 *   vc_init         per peer using this netmod, with the peer's card
 *   (engine: a fence, or a barrier over the new VCs without a launcher)
 *   wireup_done     everyone is attached (shm: unlink the segment name)
 * Without a launcher (TERN_WIREUP_ADDRESS) init runs before the node's
 * ranks are known (tern_ctx_local_size is 0 then): what needs them waits
 * for the first vc_init.
 *
 * Received bytes go to tern_handle_pkt(vc, buf, len) in stream order.
 *
 * Sending: the engine checks the VC before it calls a data op (a FAILED one
 * refuses, naming the netmod and the peer: tern_vc_send_check), so the data
 * ops never check it themselves; a netmod that sends a packet of its own
 * goes through the engine too (tern_send_ctrl, tern_send_noncontig).  What a
 * netmod cannot write at once waits in its engine packet queue
 * (engine/pktq.h).
 *
 * Waiting (TERN_WAIT_MODE=block): a netmod with an event source returns its
 * fd from wait_fd (level-triggered readable when the netmod may have
 * something to do).  Before the engine sleeps it calls arm on every netmod:
 * arm announces the sleep to the peers (shm: a flag they check before ringing
 * the fd) and returns false when work is already pending, which cancels the
 * sleep.  The engine then polls once more and sleeps in epoll_wait on all
 * the fds at once (plus its own eventfd for tern_worker_signal); disarm runs
 * after every arm, slept or not.
 */
#ifndef TERN_ENGINE_NETMOD_H
#define TERN_ENGINE_NETMOD_H

#include "engine/engine_internal.h"

enum tern_poll_dir { TERN_POLL_RECV = 1, TERN_POLL_SEND = 2, TERN_POLL_ALL = 3 };

/* The version of the tables below: a descriptor built against other tables
 * is refused (bump it with any change of a table or an op's signature). */
#define TERN_NETMOD_ABI 6 /* 4: the rma table; 5: rma_cma_threshold; 6: device atomics */

/* ---- core: lifecycle and data path (required) --------------------------- */

/* Does this netmod reach rank from here?  (shm: same node) */
typedef bool tern_nm_reachable_fn(tern_context_t *ctx, int rank);
/* One instance per worker (w->index; worker i pairs with worker i of the
 * peers).  config: the netmod's struct, filled from its table.  *shared:
 * one pointer per context for what the netmod's instances of all workers
 * share (NULL at the first init; the netmod owns it and frees it with its
 * last instance).  Workers are initialised in index order and finalized in
 * reverse. */
typedef tern_status_t tern_nm_init_fn(tern_worker_t *w, const void *config, void **shared,
                                      void **state);
typedef tern_status_t tern_nm_finalize_fn(void *state);
/* This instance's card, what a peer's vc_init or vc_init_remote needs to
 * reach it (its own wire format: magic and version of its own, checked by
 * the reader), into buf: *len its room in (TERN_ADDR_CARD_MAX, 1 KiB),
 * its length out.  The same bytes for every peer; asked again when the
 * engine rebuilds the worker's address. */
typedef tern_status_t tern_nm_card_fn(void *state, void *buf, size_t *len);
/* vc to a rank of this job (vc->rank), with the card that rank's address
 * gives for this netmod (NULL, 0 for the VC to oneself).  The card came
 * from another process: checked before use, TERN_ERR_MALFORMED naming the
 * rank otherwise. */
typedef tern_status_t tern_nm_vc_init_fn(void *state, tern_vc_t *vc, const void *card,
                                         size_t len);
typedef tern_status_t tern_nm_wireup_done_fn(void *state);
/* The VC failed (tern_vc_fail): drop its queues, failing the requests only
 * the netmod holds (not those on the VC's rendezvous list: the engine's). */
typedef tern_status_t tern_nm_vc_destroy_fn(tern_vc_t *vc);
/* Never blocks: pending sends finish, then poll reports the VC closed. */
typedef tern_status_t tern_nm_vc_terminate_fn(tern_vc_t *vc);
/* Returns the events handled. */
typedef unsigned tern_nm_poll_fn(void *state, int direction);
/* Check the health of the peers; fail VCs whose peer died.  Idle path. */
typedef void tern_nm_check_peers_fn(void *state);
/* Counters for tern_worker_counters: up to max into out, returns how many
 * the instance has (names static, "<netmod>.<what>"). */
typedef int tern_nm_counters_fn(void *state, tern_counter_t *out, int max);
/* Send hdr + data (the caller's, valid until completion); *sreq = NULL if
 * all went out now, else a new request that completes when it has.  hdr is
 * one engine packet header here and in send_noncontig (hdrlen ==
 * TERN_PKT_HDR_SIZE), which a queued send keeps (engine/pktq.h). */
typedef tern_status_t tern_nm_istart_contig_msg_fn(tern_vc_t *vc, const void *hdr, size_t hdrlen,
                                                   const void *data, size_t len,
                                                   tern_request_t **sreq);
/* Send hdr + the payload described by sreq->cur (sreq->vc is vc); completes
 * sreq when sent.  A contiguous buffer comes as a one-entry cursor. */
typedef tern_status_t tern_nm_send_noncontig_fn(tern_vc_t *vc, tern_request_t *sreq,
                                                const void *hdr, size_t hdrlen);

typedef struct tern_nm_core_ops {
    tern_nm_reachable_fn *reachable;
    tern_nm_init_fn *init;
    tern_nm_finalize_fn *finalize;
    tern_nm_card_fn *card;
    tern_nm_vc_init_fn *vc_init;
    tern_nm_wireup_done_fn *wireup_done;   /* optional: nothing to do */
    tern_nm_vc_destroy_fn *vc_destroy;
    tern_nm_vc_terminate_fn *vc_terminate;
    tern_nm_poll_fn *poll;                 /* optional: never polled (self) */
    tern_nm_check_peers_fn *check_peers;   /* optional: the launcher's reports only */
    tern_nm_counters_fn *counters;         /* optional: no counters */
    tern_nm_istart_contig_msg_fn *istart_contig_msg;
    tern_nm_send_noncontig_fn *send_noncontig;
} tern_nm_core_ops_t;

/* ---- lmt: rendezvous data movement (NULL table: the null LMT mode) -------
 * Modes: engine/pkt.h.  All slots required.  The same-host copy's modes
 * (CMA_GET, CMA_PUT) are the engine's: a netmod never sees them, and its
 * own mode may start after one was refused (initiate and start_recv then
 * run on the rewound request, with no packet of the copy left to come).
 * modes: bit (1 << mode) for each mode the netmod moves data in.
 * choose: the mode for a message of len bytes on vc (TERN_LMT_MODE=auto).
 * initiate: sender, before the RTS: *mode may be lowered to what this
 *   transfer can use (verbs: unregistrable -> NULL); the cookie (GET's key)
 *   goes in the RTS (*cookie_len in: its room, out: its length).
 * start_recv: receiver matched the RTS (rreq->lmt_mode says the mode).
 * start_send: sender got the CTS (PUT: its cookie is the receiver's key).
 * handle_cookie: a COOKIE packet mid-transfer (new key, next window).
 * done_send / done_recv: DONE for a send (GET) or a receive (PUT). */
typedef unsigned tern_nm_lmt_modes_fn(void *state);
typedef int tern_nm_lmt_choose_fn(tern_vc_t *vc, size_t len);
typedef tern_status_t tern_nm_lmt_initiate_fn(tern_vc_t *vc, tern_request_t *sreq, int *mode,
                                              void *cookie, size_t *cookie_len);
typedef tern_status_t tern_nm_lmt_start_recv_fn(tern_vc_t *vc, tern_request_t *rreq,
                                                const void *cookie, size_t cookie_len);
typedef tern_status_t tern_nm_lmt_start_send_fn(tern_vc_t *vc, tern_request_t *sreq,
                                                const void *cookie, size_t cookie_len);
typedef tern_status_t tern_nm_lmt_handle_cookie_fn(tern_vc_t *vc, tern_request_t *req,
                                                   const void *cookie, size_t cookie_len);
typedef tern_status_t tern_nm_lmt_done_send_fn(tern_vc_t *vc, tern_request_t *sreq);
typedef tern_status_t tern_nm_lmt_done_recv_fn(tern_vc_t *vc, tern_request_t *rreq);

typedef struct tern_nm_lmt_ops {
    tern_nm_lmt_modes_fn *modes;
    tern_nm_lmt_choose_fn *choose;
    tern_nm_lmt_initiate_fn *initiate;
    tern_nm_lmt_start_recv_fn *start_recv;
    tern_nm_lmt_start_send_fn *start_send;
    tern_nm_lmt_handle_cookie_fn *handle_cookie;
    tern_nm_lmt_done_send_fn *done_send;
    tern_nm_lmt_done_recv_fn *done_recv;
} tern_nm_lmt_ops_t;

/* ---- wait: the event source of block mode (NULL table: none) -------------
 * See "Waiting" above.  All slots required. */
typedef int tern_nm_wait_fd_fn(void *state);   /* -1: none for this instance */
typedef bool tern_nm_arm_fn(void *state);
typedef void tern_nm_disarm_fn(void *state);

typedef struct tern_nm_wait_ops {
    tern_nm_wait_fd_fn *wait_fd;
    tern_nm_arm_fn *arm;
    tern_nm_disarm_fn *disarm;
} tern_nm_wait_ops_t;

/* ---- mem: registration for zero-copy transfers (NULL table: none) --------
 * Used through the engine's cache (tern_mem_get, engine/mem.c and
 * engine/rcache.h): mem_reg makes [addr, addr + len) (page-aligned)
 * reachable by the peers and returns a handle; mem_dereg undoes it.
 * rkey_pack writes the remote key of [addr, addr + len) inside a
 * registration (at most TERN_RKEY_MAX bytes); rkey_unpack checks a key that
 * vc's peer packed.  rkey_pack and rkey_unpack are optional, as a pair: a
 * netmod that registers only for its own transfers (dpdk) gives neither. */
typedef tern_status_t tern_nm_mem_reg_fn(void *state, void *addr, size_t len, void **memh);
typedef void tern_nm_mem_dereg_fn(void *state, void *memh);
typedef tern_status_t tern_nm_rkey_pack_fn(void *state, void *memh, const void *addr, size_t len,
                                           void *buf, size_t *buflen);
typedef tern_status_t tern_nm_rkey_unpack_fn(tern_vc_t *vc, const void *buf, size_t buflen,
                                             tern_rkey_t *rkey);

typedef struct tern_nm_mem_ops {
    tern_nm_mem_reg_fn *mem_reg;
    tern_nm_mem_dereg_fn *mem_dereg;
    tern_nm_rkey_pack_fn *rkey_pack;       /* optional, with rkey_unpack */
    tern_nm_rkey_unpack_fn *rkey_unpack;   /* optional, with rkey_pack */
} tern_nm_mem_ops_t;

/* ---- conn: other jobs and ports (NULL table: neither) -------------------
 * A process of another job is reached from its address, as one of this
 * job's ranks is: the engine gives the netmod the card that address has
 * for it (tern_connect, tern_port_connect, tern_peer_insert of another
 * job's address; engine/peer.c).
 * vc_init_remote (required): vc (vc->rank its peer id) to rank `rank` of
 *   the job whose name hashes to `job` (tern_job_hash), with its card; get
 *   ready to connect to it on the first send, or to be connected from it
 *   (a connection from it names (job, rank), and finds this VC).  job is
 *   never this job's hash (the engine refuses such a peer).
 *   TERN_ERR_UNREACHABLE when this card cannot be reached from here (the
 *   engine tries the next netmod both have: both sides come to the same).
 * port_unable (optional): NULL when this instance takes connections from
 *   processes it was given no address of (ports: tern_port_open); else
 *   why not (dpdk on point-to-point devices).  NULL slot: it always can.
 *   A connection naming a job it does not know makes the netmod ask
 *   tern_port_incoming for a VC (NULL: refuse it). */
typedef tern_status_t tern_nm_vc_init_remote_fn(void *state, tern_vc_t *vc, uint32_t job,
                                                int rank, const void *card, size_t len);
typedef const char *tern_nm_port_unable_fn(void *state);

typedef struct tern_nm_conn_ops {
    tern_nm_vc_init_remote_fn *vc_init_remote;
    tern_nm_port_unable_fn *port_unable;   /* optional: ports always taken */
} tern_nm_conn_ops_t;

/* ---- rma: one-sided operations in the netmod's own way (NULL table: the
 * engine's path, packets the target's progress applies; engine/rma.h) -----
 * Regions are the context's: reg / dereg / pack run on worker 0's
 * instance, from any thread (the netmod makes them safe: verbs registers
 * with a protection domain every worker's QPs share).
 * reg (state, addr, len, access (TERN_REGION_* bits), *h): make the region
 *   reachable by every worker's peers; *h its handle.  An error leaves the
 *   region to the engine's path (the engine says why in a debug message);
 *   TERN_ERR_UNSUPPORTED (with *h NULL): the netmod serves no region now
 *   (a setting turned it off).
 * dereg (state, h): tern_region_destroy, or finalize.  An operation that
 *   reaches the memory after it is refused by the netmod's device and must
 *   fail that operation only (TERN_ERR_REMOTE_ACCESS), never the VC.
 * pack (state, h, buf, *len): the netmod's bytes of the region's key (in:
 *   room, at most TERN_NM_KEY_MAX; out: length), a wire format of its own;
 *   called once, right after reg (the engine keeps the bytes; a failure
 *   deregisters the region and leaves it to the engine's path).
 * put / get (vc, r, kb, klen): one operation on vc (the key's peer): r's
 *   cursor (one contiguous entry, msg_len bytes) to or from remote address
 *   r->remote_id of the region whose key bytes the netmod packed are kb.
 *   TERN_INPROGRESS: posted, r completes through tern_rma_native_done;
 *   TERN_ERR_UNSUPPORTED: not on this VC now (nothing done: the engine's
 *   path takes it); another error: refused, nothing done.
 * flush (vc, p): TERN_OK when nothing the netmod posted on vc is
 *   outstanding; TERN_INPROGRESS: tern_rma_native_flushed(p, ...) once
 *   everything posted before it has completed.
 * Optional, as a pair: atomics by the device, for regions made with
 * TERN_REGION_ATOMIC_DEVICE (only 8-byte TERN_AMO_ADD and _CSWAP reach
 * them).  Both return TERN_ERR_UNSUPPORTED, always, when the device has no
 * atomics (a property of the device, never of the moment: the same region's
 * atomics must not be split between the device and the CPU).
 * amo (vc, r, kb, klen): one atomic on vc at r->remote_id: operation
 *   r->space & 0xff (tern_amo), operand r->data, compare r->match_tag, the
 *   old value (8 bytes) into r's cursor when r->space has
 *   TERN_RMA_NATIVE_AMO_FETCH.
 *   Posted in the order of the calls, after every atomic before it (a full
 *   queue or a connection not yet up holds it back, never reorders it);
 *   TERN_INPROGRESS, completed through tern_rma_native_done (TERN_ERR_AGAIN:
 *   not carried out, the engine sends it; never for one whose outcome is
 *   unknown: an atomic is not idempotent); TERN_ERR_UNSUPPORTED: the engine
 *   sends it (only when no atomic of the netmod's on vc is outstanding).
 * amo_local (state, h, addr, op, value, compare, *old): the same on this
 *   process's region h at addr, through the device, done at return (the
 *   owner's own atomics, and those peers sent as packets). */
#define TERN_NM_KEY_MAX 48
#define TERN_RMA_NATIVE_AMO 0x100       /* an amo request's mark in r->space */
#define TERN_RMA_NATIVE_AMO_FETCH 0x200 /* ... and the old value is wanted */
typedef tern_status_t tern_nm_rma_reg_fn(void *state, void *addr, size_t len, unsigned access,
                                         void **h);
typedef void tern_nm_rma_dereg_fn(void *state, void *h);
typedef tern_status_t tern_nm_rma_pack_fn(void *state, void *h, void *buf, size_t *len);
typedef tern_status_t tern_nm_rma_op_fn(tern_vc_t *vc, tern_request_t *r, const void *kb,
                                        size_t klen);
typedef tern_status_t tern_nm_rma_flush_fn(tern_vc_t *vc, tern_request_t *p);
typedef tern_status_t tern_nm_rma_amo_local_fn(void *state, void *h, uint64_t addr, int op,
                                               uint64_t value, uint64_t compare, uint64_t *old);

typedef struct tern_nm_rma_ops {
    tern_nm_rma_reg_fn *reg;
    tern_nm_rma_dereg_fn *dereg;
    tern_nm_rma_pack_fn *pack;
    tern_nm_rma_op_fn *put;
    tern_nm_rma_op_fn *get;
    tern_nm_rma_flush_fn *flush;
    tern_nm_rma_op_fn *amo;                  /* optional (with amo_local) */
    tern_nm_rma_amo_local_fn *amo_local;
} tern_nm_rma_ops_t;

/* engine/rma_native.c, for a netmod's rma table (from its poll):
 * A posted operation r ended with st: TERN_OK, its refusal (the message
 * set by tern_error), or TERN_ERR_AGAIN: the device did not carry it out
 * (its queue pair failed for another operation's sake), so the engine sends
 * it on its own path now, in the order such calls come. */
void tern_rma_native_done(tern_request_t *r, tern_status_t st);
/* The flush part p ended: st the first refusal of an operation before it
 * (TERN_OK: none); replayed: operations before it were handed back
 * (TERN_ERR_AGAIN above), so p waits for the engine's flush behind them. */
void tern_rma_native_flushed(tern_request_t *p, tern_status_t st, bool replayed);

/* engine/port.c: a connection from (job, rank), unknown so far, reached
 * worker w's instance of a netmod: the VC that will carry it (a new
 * one-rank peer, queued for tern_port_accept), or NULL when no port is
 * open there (nm_state: the instance's state; its port_unable must say
 * NULL).  vc->nm / nm_state are set; the netmod sets nm_vc. */
tern_vc_t *tern_port_incoming(tern_worker_t *w, void *nm_state, uint32_t job, int rank);

/* engine/peer.c: a netmod's table of its VCs to other jobs' ranks (n
 * entries of elem bytes, room for *cap) with room for one more: table
 * itself, or grown (16 at first, then doubled; *cap updated).  NULL when
 * out of memory: table is unchanged and still the caller's. */
void *tern_remote_table_room(void *table, int n, int *cap, size_t elem);

/* 32-bit FNV-1a of a job name (tcp's HELLO, port names) */
uint32_t tern_job_hash(const char *name);

/* What a netmod declares about itself (TERN_NETMOD_DEFINE). */
typedef struct tern_netmod_desc {
    int abi;                            /* TERN_NETMOD_ABI: the tables it was built with */
    const char *name;
    /* Among the allowed netmods that reach a peer, the highest priority
     * carries its VC (shm 100 > tcp 10; self is the engine's own). */
    int priority;
    const char *reach;                  /* for tern_info: "same node", "any rank" */
    /* The smallest rendezvous message the engine's same-host copy
     * (engine/cma.h) carries to a peer of this netmod on the same host,
     * where it beats the netmod's own LMT (measured; TERN_CMA_THRESHOLD
     * overrides it for every netmod): 0 every one, TERN_CMA_NEVER none
     * unless TERN_LMT_MODE forces get or put. */
    uint64_t cma_threshold;
    /* The smallest put or get the same-host copy makes into a region of a
     * peer of this netmod on the same host (engine/rma.h), where one CMA
     * syscall beats the engine's packets through the target (measured;
     * TERN_RMA_CMA_THRESHOLD overrides it): 0 every one. */
    uint64_t rma_cma_threshold;
    const tern_config_table_t *config;  /* its TERN_* variables; NULL: none */
    /* NULL, or why this process cannot use it at all (verbs: no device);
     * for tern_info and for the error when no netmod reaches a peer.
     * NULL function: always usable. */
    const char *(*unavailable)(void);
    const tern_nm_core_ops_t *core;     /* required */
    const tern_nm_lmt_ops_t *lmt;       /* NULL: the engine's null LMT mode */
    const tern_nm_wait_ops_t *wait;     /* NULL: no event source */
    const tern_nm_mem_ops_t *mem;       /* NULL: registers nothing */
    const tern_nm_conn_ops_t *conn;     /* NULL: no other jobs, no ports */
    const tern_nm_rma_ops_t *rma;       /* NULL: one-sided by the engine's path */
} tern_netmod_desc_t;

/* Check desc: its ABI number, a core table, every required slot of each
 * table it gives.  TERN_ERR_UNSUPPORTED naming the netmod and what is
 * missing otherwise. */
tern_status_t tern_netmod_check(const tern_netmod_desc_t *desc);

/* Add desc to the registry (at load time, from TERN_NETMOD_DEFINE) once
 * tern_netmod_check accepts it; a refused one is left out with a warning
 * naming the cause, and its error is returned. */
tern_status_t tern_netmod_register(const tern_netmod_desc_t *desc);

/* Registered netmods, highest priority first. */
int tern_netmod_count(void);
const tern_netmod_desc_t *tern_netmod_get(int i);
const tern_netmod_desc_t *tern_netmod_find(const char *name);

/* "shm tcp": the registered names, for messages. */
const char *tern_netmod_names(void);

/* Declare a netmod from its own folder: registered when libtern loads. */
#define TERN_NETMOD_DEFINE(desc_)                                                    \
    static void __attribute__((constructor)) tern_netmod_register_##desc_(void)     \
    {                                                                                \
        (void)tern_netmod_register(&(desc_));                                        \
    }

/* One netmod as a worker uses it; vc->nm points at it. */
struct tern_netmod_inst {
    /* by value and first: a send is vc->nm->core.istart_contig_msg, one load */
    tern_nm_core_ops_t core;            /* optional slots given typed no-ops, poll kept NULL */
    const tern_nm_lmt_ops_t *lmt;       /* the descriptor's tables (NULL: absent) */
    const tern_nm_wait_ops_t *wait;
    const tern_nm_mem_ops_t *mem;
    const tern_nm_conn_ops_t *conn;
    const tern_nm_rma_ops_t *rma;
    const tern_netmod_desc_t *desc;
    const char *name;
    void *state;
    void *config;                       /* its config struct (malloc'd) */
    bool initialized;                   /* init was called: finalize is due */
    struct tern_rcache *rcache;         /* registrations (tern_mem_get), made on first use */
};

/* Before the engine sends on vc: a failed VC refuses, with a message naming
 * the netmod and the peer (inline: one compare per packet). */
tern_status_t tern_vc_send_refused(const tern_vc_t *vc);
static inline tern_status_t tern_vc_send_check(const tern_vc_t *vc)
{
    return TERN_LIKELY(vc->state != TERN_VC_FAILED) ? TERN_OK : tern_vc_send_refused(vc);
}

/* A registration of memory with a VC's netmod (engine/mem.c). */
typedef struct tern_mem {
    tern_netmod_inst_t *inst;
    struct tern_rcache_region *region;
} tern_mem_t;

/* Register [addr, addr + len) for vc's peers through the netmod instance's
 * registration cache.  TERN_ERR_UNSUPPORTED when the netmod registers
 * nothing; the cache's or the netmod's error otherwise. */
tern_status_t tern_mem_get(tern_vc_t *vc, const void *addr, size_t len, tern_mem_t *mem);
void tern_mem_put(tern_mem_t *mem);
/* The remote key of [addr, addr + len) inside mem, for a peer;
 * TERN_ERR_UNSUPPORTED when the netmod has no remote keys. */
tern_status_t tern_mem_rkey(const tern_mem_t *mem, const void *addr, size_t len, void *buf,
                            size_t *buflen);
/* Release an instance's cache (before its netmod is finalized); the idle
 * path applies the memory monitor's news. */
void tern_mem_release(tern_netmod_inst_t *inst);
void tern_mem_progress(tern_worker_t *w);

/*
 * Prepare inst from desc (a registered netmod, or the engine's self):
 * tern_netmod_check, the core table copied with its optional slots
 * defaulted, configuration loaded and validated.  TERN_ERR_UNSUPPORTED /
 * TERN_ERR_INVALID_PARAM name the cause.
 */
tern_status_t tern_netmod_instantiate(tern_netmod_inst_t *inst, const tern_netmod_desc_t *desc);
void tern_netmod_inst_release(tern_netmod_inst_t *inst);

/* The engine's own self netmod (engine/self.c): the VC to one's own rank.
 * Not registered: every worker's instance 0. */
extern const tern_netmod_desc_t tern_netmod_self;

/* Services for netmods. */

/* The node's netmods need one wait mode on every rank (shm: senders ring a
 * sleeping peer only in block mode): a netmod that learns the mode its node
 * uses sets it with a warning naming why. */
void tern_context_use_wait_mode(tern_context_t *ctx, unsigned mode, const char *why);

/* The job as a netmod sees it (it never sees PMIx): its name and the hash
 * of it (tern_job_hash), the ranks on this node (local index i: rank
 * tern_ctx_local_peer; tern_ctx_local_index of a rank: -1 when it is on
 * another node).  Without a launcher the node's ranks are known from the
 * ranks' addresses once all are inserted: before, local size is 0 and
 * local rank -1. */
const char *tern_ctx_job(const tern_context_t *ctx);
uint32_t tern_ctx_job_hash(const tern_context_t *ctx);
int tern_ctx_local_rank(const tern_context_t *ctx);
int tern_ctx_local_size(const tern_context_t *ctx);
int tern_ctx_local_peer(const tern_context_t *ctx, int i);
int tern_ctx_local_index(const tern_context_t *ctx, int rank);

/* During the wire-up (vc_init): the card rank's address gives netmod
 * `netmod` on worker w (shm: the segment's creator's), or NULL. */
const void *tern_wire_card(tern_worker_t *w, int rank, const char *netmod, size_t *len);

/* An exit barrier with the job's other ranks, without progress and given
 * up after timeout_ms (TERN_ERR_TIMED_OUT): dpdk's finalize, so no rank
 * leaves while a peer still polls a link to it.  Without a launcher to
 * fence with (TERN_WIREUP_ADDRESS, a singleton) it succeeds at once. */
tern_status_t tern_ctx_exit_fence(tern_context_t *ctx, unsigned timeout_ms);

#endif
