/*
 * The netmod interface (after the Nemesis network-module API) and the
 * registry netmods declare themselves in.
 *
 * A netmod lives in its own folder (netmods/<name>/) and declares itself
 * there with TERN_NETMOD_DEFINE(desc): name, priority, its configuration
 * table and its const ops table.  The engine names no netmod: selection,
 * TERN_NETMODS, tern_info and the test matrix read the registry.
 *
 * The engine never calls a netmod's table directly: each instance works on
 * a copy (tern_netmod_inst_t.ops) made by tern_netmod_instantiate, which
 * checks the declared size, fills every slot the netmod left NULL with a
 * typed default from netmod.c that answers TERN_ERR_UNSUPPORTED (never a
 * cast stub), and refuses a half-filled LMT set.  A netmod without LMT ops
 * gets the engine's null LMT mode: RTS / CTS / DATA over ordinary sends.
 *
 * Wire-up phases, driven by engine/context.c, for every worker:
 *   init            create resources, PMIx_Put the business card (under
 *                   tern_worker_key(): one per worker where it differs)
 *   get_ordering    must be 1: the engine's parser needs an ordered stream
 *   (engine: PMIx commit + fence)
 *   vc_init         per peer using this netmod, with the peer's card
 *   (engine: fence)
 *   wireup_done     everyone is attached (shm: unlink the segment name)
 *
 * Received bytes go to tern_handle_pkt(vc, buf, len) in stream order.
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

struct tern_netmod_ops {
    size_t size;        /* sizeof(tern_netmod_ops_t) the netmod was built with */
    const char *name;   /* set by the engine in its copy, from the descriptor */

    /* Does this netmod reach rank from here?  (shm: same node) */
    bool (*reachable)(tern_context_t *ctx, int rank);

    /* One instance per worker (w->index; worker i pairs with worker i of the
     * peers).  config: the netmod's struct, filled from its table.
     * *shared: one pointer per context for what the netmod's instances of
     * all workers share (NULL at the first init; the netmod owns it and
     * frees it with its last instance).  Workers are initialised in index
     * order and finalized in reverse. */
    tern_status_t (*init)(tern_worker_t *w, const void *config, void **shared, void **state);
    tern_status_t (*finalize)(void *state);
    tern_status_t (*vc_init)(void *state, tern_vc_t *vc);
    tern_status_t (*wireup_done)(void *state);
    tern_status_t (*vc_destroy)(tern_vc_t *vc);
    /* Never blocks: pending sends finish, then poll reports the VC closed. */
    tern_status_t (*vc_terminate)(tern_vc_t *vc);
    int (*get_ordering)(void *state);   /* 1: ordered stream per VC (required) */

    /* Send hdr+data for the existing request sreq; completes it when sent. */
    tern_status_t (*isend_contig)(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                  size_t hdrlen, const void *data, size_t len);
    /* Send hdr+data; *sreq = NULL if all went out now, else a new request. */
    tern_status_t (*istart_contig_msg)(tern_vc_t *vc, const void *hdr, size_t hdrlen,
                                       const void *data, size_t len, tern_request_t **sreq);
    /* Send hdr + the payload described by sreq->cur; completes sreq when sent. */
    tern_status_t (*send_noncontig)(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                    size_t hdrlen);
    /* NULL: never polled (self).  Returns the events handled. */
    unsigned (*poll)(void *state, int direction);

    /* LMT (rendezvous data movement): start_recv and start_send together, or
     * no LMT slot at all (the null mode).  Modes: engine/pkt.h.
     * lmt_modes: bit (1 << mode) for each mode the netmod moves data in.
     * lmt_choose: the mode for a message of len bytes on vc (TERN_LMT_MODE=auto).
     * lmt_initiate: sender, before the RTS: *mode may be lowered to what
     *   this transfer can use (shm: CMA refused -> COOP); the cookie (GET's
     *   key) goes in the RTS.
     * lmt_start_recv: receiver matched the RTS (rreq->lmt_mode says the mode).
     * lmt_start_send: sender got the CTS (PUT: its cookie is the receiver's key).
     * lmt_handle_cookie: a COOKIE packet mid-transfer (new key, resume offset).
     * lmt_done_send / lmt_done_recv: DONE for a send (GET) or a receive (PUT). */
    unsigned (*lmt_modes)(void *state);
    int (*lmt_choose)(tern_vc_t *vc, size_t len);
    tern_status_t (*lmt_initiate)(tern_vc_t *vc, tern_request_t *sreq, int *mode, void *cookie,
                                  size_t *cookie_len);
    tern_status_t (*lmt_start_recv)(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                    size_t cookie_len);
    tern_status_t (*lmt_start_send)(tern_vc_t *vc, tern_request_t *sreq, const void *cookie,
                                    size_t cookie_len);
    tern_status_t (*lmt_handle_cookie)(tern_vc_t *vc, tern_request_t *req, const void *cookie,
                                       size_t cookie_len);
    tern_status_t (*lmt_done_send)(tern_vc_t *vc, tern_request_t *sreq);
    tern_status_t (*lmt_done_recv)(tern_vc_t *vc, tern_request_t *rreq);

    /* Check the health of the peers; fail VCs whose peer died.  Idle path. */
    void (*check_peers)(void *state);

    /* Event source for block mode (see above); -1: none. */
    int (*wait_fd)(void *state);
    bool (*arm)(void *state);
    void (*disarm)(void *state);

    /* Memory registration for zero-copy transfers, used through the
     * engine's cache (tern_mem_get, engine/mem.c and engine/rcache.h):
     * mem_reg makes [addr, addr + len) (page-aligned) reachable by the
     * peers and returns a handle; mem_dereg undoes it.  rkey_pack writes
     * the remote key of [addr, addr + len) inside a registration (at most
     * TERN_RKEY_MAX bytes); rkey_unpack checks a key that vc's peer packed.
     * A netmod without mem_reg registers nothing (tern_mem_get says so). */
    tern_status_t (*mem_reg)(void *state, void *addr, size_t len, void **memh);
    void (*mem_dereg)(void *state, void *memh);
    tern_status_t (*rkey_pack)(void *state, void *memh, const void *addr, size_t len, void *buf,
                               size_t *buflen);
    tern_status_t (*rkey_unpack)(tern_vc_t *vc, const void *buf, size_t buflen,
                                 tern_rkey_t *rkey);

    /* Counters for tern_worker_counters: up to max into out, returns how
     * many the instance has (names static, "<netmod>.<what>"). */
    int (*counters)(void *state, tern_counter_t *out, int max);

    /* tern_connect (engine/connect.c): vc is the VC to rank `rank` of the
     * other job nspace (vc->rank its peer id); read that rank's card with
     * tern_pmix_get_of and get ready to connect to it, or to be connected
     * from it.  Called after the jobs' PMIx_Connect; the jobs fence before
     * anything is sent.  NULL: this netmod cannot reach other jobs. */
    tern_status_t (*vc_init_remote)(void *state, tern_vc_t *vc, const char *nspace, int rank);

    /* Ports (engine/port.c: tern_port_open / _connect / _accept), worker 0
     * only.  port_card: this instance's card (address) into buf, *len its
     * capacity in, bytes out.  vc_init_card: vc to the process that opened
     * a port with this card, whose job hash and rank it also names;
     * connected on first send.  The acceptor side: when a connection names
     * a job it does not know, the netmod asks tern_port_incoming for a VC
     * (NULL: refuse it).  NULL ops: no ports on this netmod. */
    tern_status_t (*port_card)(void *state, void *buf, size_t *len);
    tern_status_t (*vc_init_card)(void *state, tern_vc_t *vc, const void *card, size_t len,
                                  uint32_t job, int rank);
};

/* engine/port.c: a connection from (job, rank), unknown so far, reached
 * worker w's instance of a netmod: the VC that will carry it (a new
 * one-rank peer, queued for tern_port_accept), or NULL when no port is
 * open there.  vc->nm / nm_state are set; the netmod sets nm_vc. */
tern_vc_t *tern_port_incoming(tern_worker_t *w, const tern_netmod_ops_t *nm, void *nm_state,
                              uint32_t job, int rank);

/* 32-bit FNV-1a of a job name (tcp's HELLO, port names) */
uint32_t tern_job_hash(const char *name);

/* What a netmod declares about itself (TERN_NETMOD_DEFINE). */
typedef struct tern_netmod_desc {
    const char *name;
    /* Among the allowed netmods that reach a peer, the highest priority
     * carries its VC (shm 100 > tcp 10; self is the engine's own). */
    int priority;
    const char *reach;                  /* for tern_info: "same node", "any rank" */
    const tern_netmod_ops_t *ops;
    const tern_config_table_t *config;  /* its TERN_* variables; NULL: none */
    /* NULL, or why this process cannot use it at all (verbs: no device);
     * for tern_info and for the error when no netmod reaches a peer.
     * NULL function: always usable. */
    const char *(*unavailable)(void);
} tern_netmod_desc_t;

/* Add desc to the registry (at load time, from TERN_NETMOD_DEFINE). */
void tern_netmod_register(const tern_netmod_desc_t *desc);

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
        tern_netmod_register(&(desc_));                                              \
    }

/* One netmod as a context uses it. */
typedef struct tern_netmod_inst {
    tern_netmod_ops_t ops;              /* checked copy, defaults filled */
    const tern_netmod_desc_t *desc;     /* NULL for self */
    const char *name;
    void *state;
    void *config;                       /* its config struct (malloc'd) */
    bool has_lmt;
    bool initialized;                   /* init was called: finalize is due */
    struct tern_rcache *rcache;         /* registrations (tern_mem_get), made on first use */
} tern_netmod_inst_t;

/* The instance whose ops vc->nm points to (ops is its first member). */
static inline tern_netmod_inst_t *tern_vc_netmod(const tern_vc_t *vc)
{
    return TERN_CONTAINER_OF(vc->nm, tern_netmod_inst_t, ops);
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
/* The remote key of [addr, addr + len) inside mem, for a peer. */
tern_status_t tern_mem_rkey(const tern_mem_t *mem, const void *addr, size_t len, void *buf,
                            size_t *buflen);
/* Release an instance's cache (before its netmod is finalized); the idle
 * path applies the memory monitor's news. */
void tern_mem_release(tern_netmod_inst_t *inst);
void tern_mem_progress(tern_worker_t *w);

/*
 * Prepare inst from desc (or from the engine's self ops when desc is NULL):
 * size check, defaults, LMT completeness, configuration loaded and
 * validated.  TERN_ERR_UNSUPPORTED / TERN_ERR_INVALID_PARAM name the cause.
 */
tern_status_t tern_netmod_instantiate(tern_netmod_inst_t *inst, const tern_netmod_desc_t *desc,
                                      const char *name, const tern_netmod_ops_t *ops);
void tern_netmod_inst_release(tern_netmod_inst_t *inst);

/* True when the instance has LMT operations (otherwise the null mode). */
static inline bool tern_netmod_has_lmt(const tern_netmod_ops_t *ops)
{
    return ops->lmt_start_recv != NULL;
}

/* The engine's own self netmod (engine/self.c): the VC to one's own rank. */
extern const tern_netmod_ops_t tern_netmod_self_ops;

/* Services for netmods. */

/* The node's netmods need one wait mode on every rank (shm: senders ring a
 * sleeping peer only in block mode): a netmod that learns the mode its node
 * uses sets it with a warning naming why. */
void tern_context_use_wait_mode(tern_context_t *ctx, unsigned mode, const char *why);

/* The PMIx key of w's card: base for worker 0, "base.<index>" for others. */
const char *tern_worker_key(const tern_worker_t *w, const char *base, char *buf, size_t len);

#endif
