/* shm netmod: per-context and per-VC state (process-private). */
#ifndef TERN_SHM_INTERNAL_H
#define TERN_SHM_INTERNAL_H

#include "engine/netmod.h"
#include "netmods/shm/shm_layout.h"

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
    tern_list_t sendq;        /* eager streams not fully written (req->link) */
    tern_list_t lmt_txq;      /* cooperative sends, CTS order */
    tern_list_t lmt_rxq;      /* cooperative receives, CTS order */
    tern_list_t cma_rxq;      /* CMA gets in progress */
    bool cma_refused;         /* CMA with this peer was refused: copy buffer only */
} tern_shm_vc_t;

typedef struct tern_shm {
    tern_context_t *ctx;
    int my_idx, nlocal;
    bool creator;
    char seg_name[96];
    uint8_t *base;
    size_t size;
    const tern_shm_seg_hdr_t *hdr;
    uint32_t fbox_size, cell_size, num_fbox, num_cells;
    uint32_t fbox_cap, cell_cap, fbox_mask, cell_mask, chunk_mask;
    bool ring_doorbells;      /* segment wait mode is BLOCK */
    tern_shm_vc_t *vcs;       /* by local index; [my_idx] unused */
    int numa_node;            /* where our inbox lives, -1 if unplaced */
} tern_shm_t;

/* segment.c */
tern_status_t tern_shm_segment_create(tern_shm_t *s, tern_shm_card_t *card);
tern_status_t tern_shm_segment_attach(tern_shm_t *s, const tern_shm_card_t *creator);
void tern_shm_segment_unlink(tern_shm_t *s);
void tern_shm_segment_detach(tern_shm_t *s);
void tern_shm_chan_bind(tern_shm_t *s, tern_shm_chan_t *c, int reader, int writer);

/* shm_netmod.c: take geometry from the mapped segment and bind the worker's
 * doorbell; set up the VC to local index idx (process pid). */
tern_status_t tern_shm_use_segment(tern_shm_t *s);
tern_status_t tern_shm_vc_setup(tern_shm_t *s, tern_vc_t *vc, int idx, int pid);

/* placement.c: move our inbox to the NUMA node we are bound to */
void tern_shm_place_inbox(tern_shm_t *s);

/* shm_send.c */
tern_status_t tern_shm_isend_contig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                    size_t hdrlen, const void *data, size_t len);
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

/* shm_lmt.c */
tern_status_t tern_shm_lmt_start_recv(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                      size_t cookie_len);
tern_status_t tern_shm_lmt_start_send(tern_vc_t *vc, tern_request_t *sreq, const void *cookie,
                                      size_t cookie_len);
unsigned tern_shm_lmt_progress(tern_shm_t *s, tern_shm_vc_t *v);
tern_status_t tern_shm_lmt_start_coop_recv(tern_vc_t *vc, tern_request_t *rreq);

/* shm_cma.c */
tern_status_t tern_shm_lmt_initiate(tern_vc_t *vc, tern_request_t *sreq, void *cookie,
                                    size_t *cookie_len);
tern_status_t tern_shm_cma_start_recv(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                      size_t cookie_len);
tern_status_t tern_shm_lmt_handle_cookie(tern_vc_t *vc, tern_request_t *req, const void *cookie,
                                         size_t cookie_len);
tern_status_t tern_shm_lmt_done_send(tern_vc_t *vc, tern_request_t *sreq);
unsigned tern_shm_cma_progress(tern_shm_t *s, tern_shm_vc_t *v);

static inline tern_shm_vc_t *tern_shm_vc(tern_vc_t *vc) { return (tern_shm_vc_t *)vc->nm_vc; }
static inline tern_shm_t *tern_shm_state(tern_vc_t *vc) { return (tern_shm_t *)vc->nm_state; }

#endif
