/* shm netmod: per-context and per-VC state (process-private). */
#ifndef TERN_SHM_INTERNAL_H
#define TERN_SHM_INTERNAL_H

#include "engine/netmod.h"
#include "engine/pktq.h"
#include "netmods/shm/shm_layout.h"

/* A peer's wake-up socket address (abstract AF_UNIX name). */
typedef struct tern_shm_wake_addr {
    char name[40];
    unsigned len;             /* bytes of sockaddr_un in use */
} tern_shm_wake_addr_t;

/* One direction of a pair, resolved to pointers in this process's mapping. */
typedef struct tern_shm_chan {
    tern_shm_cons_ctl_t *ctl; /* the reader's consumer indices */
    uint8_t *fbox;
    uint8_t *cells;
    uint8_t *copy;            /* chunk headers */
    uint8_t *copy_data;       /* chunk data, page aligned */
    uint32_t seq;             /* next unit sequence number */
    uint32_t fb_idx;          /* next fastbox slot index (free-running) */
    uint32_t cell_idx;        /* next cell index (free-running) */
    uint32_t fb_head;         /* tx: last seen reader fbox_head; rx: last published */
    uint32_t cell_head;       /* tx: last seen reader cell_head; rx: last published */
    uint32_t chunk;           /* next copy-buffer chunk */
} tern_shm_chan_t;

typedef struct tern_shm_vc {
    tern_vc_t *vc;
    int pid, pidfd;
    tern_shm_chan_t tx;       /* me -> peer (in the peer's inbox) */
    tern_shm_chan_t rx;       /* peer -> me (in my inbox) */
    tern_shm_doorbell_t *peer_doorbell;
    tern_shm_wake_addr_t peer_wake;   /* where to ring the peer's wake-up socket */
    tern_pktq_t sendq;        /* packets not fully written (engine/pktq.h) */
    tern_list_t lmt_txq;      /* cooperative sends, CTS order */
    tern_list_t lmt_rxq;      /* cooperative receives, CTS order */
} tern_shm_vc_t;

/* The shm netmod's settings (shm_config.c: TERN_SHM_*). */
typedef struct tern_shm_config {
    uint64_t fbox_size;       /* TERN_SHM_FBOX_SIZE: bytes per fastbox slot */
    uint64_t num_fbox;        /* TERN_SHM_NUM_FBOX: fastbox slots per peer (power of 2) */
    uint64_t cell_size;       /* TERN_SHM_CELL_SIZE: cell bytes */
    uint64_t num_cells;       /* TERN_SHM_NUM_CELLS: cells per peer (power of 2) */
    uint64_t chunk_size;      /* TERN_SHM_COPY_CHUNK: cooperative LMT chunk, 0 = by cache */
    uint64_t num_chunks;      /* TERN_SHM_COPY_CHUNKS: chunks per peer */
} tern_shm_config_t;

extern const tern_config_table_t tern_shm_config_table;

/* One worker's shm instance.  Worker 0's maps the segment (creating it on
 * local rank 0) and owns the mapping; the other workers' instances use its
 * mapping (w0) for their own channel sets and are finalized before it. */
typedef struct tern_shm {
    tern_context_t *ctx;
    tern_worker_t *worker;
    int widx;                 /* the worker's index: its channel set */
    struct tern_shm *w0;      /* worker 0's instance (NULL in worker 0's) */
    const tern_shm_config_t *cfg;
    int my_idx, nlocal;      /* known at the first vc_init (init, with a launcher) */
    bool creator;
    char seg_name[96];
    uint8_t *base;
    size_t size;
    const tern_shm_seg_hdr_t *hdr;
    uint32_t fbox_size, cell_size, num_fbox, num_cells;
    uint32_t fbox_cap, cell_cap, fbox_mask, cell_mask, chunk_mask;
    bool ring_doorbells;      /* segment wait mode is BLOCK */
    int wake_fd;              /* our wake-up socket (shm_wait.c), -1 if none */
    tern_shm_doorbell_t *my_doorbell;
    tern_shm_vc_t *vcs;       /* by local index; [my_idx] unused */
    int numa_node;            /* where our inbox lives, -1 if unplaced */
} tern_shm_t;

/* How long the node's ranks wait for the first one to create the segment
 * (a wire-up without a launcher: it does when its addresses are in). */
#define TERN_SHM_ATTACH_S 60

/* segment.c */
/* The name this rank would create the node's segment under (its card). */
void tern_shm_segment_name(tern_shm_t *s, char *out, size_t len);
/* Create the node's segment under s->seg_name (the node's first rank). */
tern_status_t tern_shm_segment_create(tern_shm_t *s);
/* Attach to the segment the creator (rank, process pid) names in its card,
 * waiting up to TERN_SHM_ATTACH_S for it to be created while that process
 * lives (without a launcher it creates it when its own addresses are in). */
tern_status_t tern_shm_segment_attach(tern_shm_t *s, const tern_shm_card_t *creator, int rank);
void tern_shm_segment_unlink(tern_shm_t *s);
void tern_shm_segment_detach(tern_shm_t *s);
/* Check a header read from a mapping of `mapped` bytes (named `name` in the
 * messages) before any offset in it is trusted: TERN_ERR_MALFORMED unless it
 * is this version's layout for nlocal ranks.  Fuzzed by tests/fuzz. */
tern_status_t tern_shm_segment_validate(const tern_shm_seg_hdr_t *h, size_t mapped,
                                        uint32_t nlocal, const char *name);
void tern_shm_chan_bind(tern_shm_t *s, tern_shm_chan_t *c, int reader, int writer);

/* shm_netmod.c: take geometry from the mapped segment and bind the worker's
 * doorbell; set up the VC to local index idx (process pid). */
tern_status_t tern_shm_use_segment(tern_shm_t *s);
tern_status_t tern_shm_vc_setup(tern_shm_t *s, tern_vc_t *vc, int idx, int pid);

/* shm_wait.c: the event source of block mode */
tern_status_t tern_shm_wake_open(tern_shm_t *s);
void tern_shm_wake_addr(tern_shm_t *s, int rank, tern_shm_wake_addr_t *a);
void tern_shm_wake_close(tern_shm_t *s);
int tern_shm_wait_fd(void *state);
bool tern_shm_arm(void *state);
void tern_shm_disarm(void *state);

/* shm_chunk.c: the copy chunk of TERN_SHM_COPY_CHUNK=0, from the cache
 * hierarchy (the rule and its reasons are at the top of that file).  rule:
 * l2_per_core 0 when unknown, pairs 0 when not known yet (no budget
 * applied).  auto: hwloc's L2 through the rule, with the reason in words. */
typedef struct tern_shm_chunk_choice {
    uint64_t bytes;
    char why[320];
} tern_shm_chunk_choice_t;
uint64_t tern_shm_chunk_rule(uint64_t l2_per_core, uint64_t pairs, uint64_t num_chunks);
uint64_t tern_shm_l2_per_core(void);
void tern_shm_chunk_auto(tern_shm_chunk_choice_t *out, uint64_t pairs, uint64_t num_chunks);

/* placement.c: move our inbox to the NUMA node we are bound to */
void tern_shm_place_inbox(tern_shm_t *s);

/* shm_send.c */
tern_status_t tern_shm_istart_contig_msg(tern_vc_t *vc, const void *hdr, size_t hdrlen,
                                         const void *data, size_t len, tern_request_t **sreq);
tern_status_t tern_shm_send_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                      size_t hdrlen);
unsigned tern_shm_progress_sendq(tern_shm_t *s, tern_shm_vc_t *v);
void tern_shm_ring_doorbell(tern_shm_t *s, tern_shm_vc_t *v);

/* shm_recv.c */
unsigned tern_shm_poll_recv(tern_shm_t *s, tern_shm_vc_t *v, unsigned budget);

/* Cheap idle check of the two rings' next slots (relaxed: poll_recv does
 * the acquire).  A stamp of index + 1 means a unit is there. */
static inline bool tern_shm_rx_ready(const tern_shm_t *s, tern_shm_vc_t *v)
{
    const tern_shm_chan_t *c = &v->rx;
    const tern_shm_unit_hdr_t *fb = (const tern_shm_unit_hdr_t *)(const void *)(
        c->fbox + (size_t)(c->fb_idx & s->fbox_mask) * s->fbox_size);
    const tern_shm_unit_hdr_t *cell = (const tern_shm_unit_hdr_t *)(const void *)(
        c->cells + (size_t)(c->cell_idx & s->cell_mask) * s->cell_size);
    return atomic_load_explicit(&((tern_shm_unit_hdr_t *)fb)->stamp, memory_order_relaxed) ==
               c->fb_idx + 1 ||
           atomic_load_explicit(&((tern_shm_unit_hdr_t *)cell)->stamp, memory_order_relaxed) ==
               c->cell_idx + 1;
}

/* shm's scratch in a request (TERN_REQ_NM) while the copy buffer moves it. */
typedef struct tern_shm_req {
    uint64_t done;      /* bytes moved so far */
} tern_shm_req_t;

/* Bytes the sender puts in one chunk for a message of len when it is the
 * last one queued: a quarter of the message (a power of two, at least 16
 * KiB), at most a whole chunk.  The receiver copies a chunk out only once
 * it is full, so a lone message that fits one chunk would be copied in,
 * then out, with no overlap; in pieces both cores copy at once.  With more
 * messages queued behind it the pipeline is full anyway and the sender
 * fills whole chunks (fewer handshakes).  bench/RESULTS.md, issue 22:
 * 64 KiB latency 0.83x, 32-64 KiB streaming bandwidth unchanged. */
size_t tern_shm_coop_piece(uint32_t chunk_size, uint64_t len);

static inline tern_shm_req_t *tern_shm_req(tern_request_t *r)
{
    return TERN_REQ_NM(r, tern_shm_req_t);
}

/* shm_lmt.c: the cooperative copy buffer, shm's only LMT mode (the engine's
 * same-host copy, engine/cma.h, does the single-copy get and put) */
unsigned tern_shm_lmt_modes(void *state);
int tern_shm_lmt_choose(tern_vc_t *vc, size_t len);
tern_status_t tern_shm_lmt_initiate(tern_vc_t *vc, tern_request_t *sreq, int *mode, void *cookie,
                                    size_t *cookie_len);
tern_status_t tern_shm_lmt_start_recv(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                      size_t cookie_len);
tern_status_t tern_shm_lmt_start_send(tern_vc_t *vc, tern_request_t *sreq, const void *cookie,
                                      size_t cookie_len);
tern_status_t tern_shm_lmt_handle_cookie(tern_vc_t *vc, tern_request_t *req, const void *cookie,
                                         size_t cookie_len);
tern_status_t tern_shm_lmt_done_send(tern_vc_t *vc, tern_request_t *sreq);
tern_status_t tern_shm_lmt_done_recv(tern_vc_t *vc, tern_request_t *rreq);
unsigned tern_shm_lmt_progress(tern_shm_t *s, tern_shm_vc_t *v);

static inline tern_shm_vc_t *tern_shm_vc(tern_vc_t *vc) { return (tern_shm_vc_t *)vc->nm_vc; }
static inline tern_shm_t *tern_shm_state(tern_vc_t *vc) { return (tern_shm_t *)vc->nm_state; }

#endif
