/* shm netmod: per-context and per-VC state (process-private). */
#ifndef TERN_SHM_INTERNAL_H
#define TERN_SHM_INTERNAL_H

#include "engine/netmod.h"
#include "netmods/shm/shm_layout.h"

/* One direction of a pair, resolved to pointers in this process's mapping. */
typedef struct tern_shm_chan {
    tern_shm_unit_hdr_t *fbox;
    tern_shm_ring_ctl_t *ring;
    uint8_t *cells;
    uint8_t *copy;
    uint32_t seq;             /* next unit sequence number */
    uint32_t idx;             /* private ring index (tail for tx, head for rx) */
    uint32_t other_cache;     /* last seen other index (head for tx, tail for rx) */
    uint32_t chunk;           /* next copy-buffer chunk */
} tern_shm_chan_t;

typedef struct tern_shm_vc {
    tern_vc_t *vc;
    int peer_idx;             /* peer's local index */
    int pid, pidfd;
    tern_shm_chan_t tx;       /* me -> peer (in the peer's inbox) */
    tern_shm_chan_t rx;       /* peer -> me (in my inbox) */
    tern_shm_doorbell_t *peer_doorbell;
    tern_list_t sendq;        /* eager streams not fully written (req->link) */
    tern_list_t lmt_txq;      /* cooperative sends, CTS order */
    tern_list_t lmt_rxq;      /* cooperative receives, CTS order */
} tern_shm_vc_t;

typedef struct tern_shm {
    tern_context_t *ctx;
    int my_idx, nlocal;
    bool creator;
    char seg_name[96];
    uint8_t *base;
    size_t size;
    const tern_shm_seg_hdr_t *hdr;
    uint32_t fbox_cap, cell_cap, cell_mask, chunk_mask;
    bool ring_doorbells;      /* segment wait mode is BLOCK */
    tern_shm_vc_t *vcs;       /* by local index; [my_idx] unused */
    int nactive;              /* VCs not failed/closed */
} tern_shm_t;

/* segment.c */
tern_status_t tern_shm_segment_create(tern_shm_t *s, tern_shm_card_t *card);
tern_status_t tern_shm_segment_attach(tern_shm_t *s, const tern_shm_card_t *creator);
void tern_shm_segment_unlink(tern_shm_t *s);
void tern_shm_segment_detach(tern_shm_t *s);
void tern_shm_chan_bind(tern_shm_t *s, tern_shm_chan_t *c, int reader, int writer);

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

/* shm_lmt.c */
tern_status_t tern_shm_lmt_start_recv(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                      size_t cookie_len);
tern_status_t tern_shm_lmt_start_send(tern_vc_t *vc, tern_request_t *sreq, const void *cookie,
                                      size_t cookie_len);
unsigned tern_shm_lmt_progress(tern_shm_t *s, tern_shm_vc_t *v);

static inline tern_shm_vc_t *tern_shm_vc(tern_vc_t *vc) { return (tern_shm_vc_t *)vc->nm_vc; }
static inline tern_shm_t *tern_shm_state(tern_vc_t *vc) { return (tern_shm_t *)vc->nm_state; }

#endif
