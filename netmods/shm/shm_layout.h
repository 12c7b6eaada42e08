/*
 * The node's shared-memory segment — a wire format between processes that
 * may be built separately: everything is addressed by offset from the
 * segment base, never by pointer, and every struct has its size and field
 * offsets pinned by static_assert.  Bump TERN_SHM_VERSION on any change.
 *
 *   [seg_hdr 128 B][doorbell x num_workers*nlocal, 64 B each][pad to 4 KiB]
 *   [pair region x num_workers*nlocal*nlocal, pair_size each, 4 KiB aligned]
 *
 * Worker w of each rank has its own channel set (worker w talks to worker
 * w).  Doorbell of (w, r) at off_doorbells + (w * nlocal + r) * 64; pair
 * region (s -> r) of worker w at off_pairs + ((w * nlocal + r) * nlocal + s)
 * * pair_size, i.e. grouped by reader ("r's inbox", placed on r's NUMA node):
 *   +0               cons_ctl: the reader's consumer indices (+ guard line)
 *   +pair_off_fbox   num_fbox fastbox slots of fbox_size: unit_hdr + data
 *   +pair_off_cells  num_cells cells of cell_size: unit_hdr + data
 *   +pair_off_copy   num_chunks chunk headers (64 B each), then, 4 KiB
 *                    aligned, num_chunks x chunk_size data: the cooperative
 *                    LMT copy buffer (chunk data page-aligned, so copies
 *                    from and to page-aligned buffers stay aligned)
 *
 * Fastbox slots and cells are two SPSC rings of stamped slots.  The writer
 * fills slot i of a ring (index i free-running) and then stamps it with
 * i + 1; the reader polls the stamp of its next slot and never writes a
 * slot, so a message costs the one cache-line transfer the writer's store
 * causes (no line bounces back for a "consumed" flag).  The reader
 * publishes how far it has consumed in cons_ctl, on its own line, once per
 * poll batch; the writer reads it only when its cached copy says the ring
 * is full.  A stale slot holds stamp i + 1 - n (n = ring size), never the
 * expected i + 1, so no lap confusion is possible with 32-bit indices.
 *
 * Eager units (one fastbox slot or one cell) carry consecutive sequence
 * numbers per pair, so the reader takes them in order from whichever ring
 * holds the next one: small packets go to the fastbox ring, larger ones
 * are cut into cells.
 *
 * Memory ordering — each pairing is labelled where it is used:
 *   R1/A1  writer fills a slot, then store-release its stamp;
 *          reader load-acquire the stamp, then reads the slot.
 *   R2/A2  reader finishes reading slots, then store-release its consumer
 *          index; writer load-acquire the index before reusing those slots.
 *   R4/A4  copy chunk: writer fills, store-release len != 0; reader
 *          load-acquire len, copies out, store-release len = 0; writer
 *          load-acquire len == 0 before refilling.
 */
#ifndef TERN_SHM_LAYOUT_H
#define TERN_SHM_LAYOUT_H

#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define TERN_SHM_MAGIC UINT64_C(0x314d48534e524554) /* "TERNSHM1" */
#define TERN_SHM_VERSION 6u
#define TERN_CACHE_LINE 64
#define TERN_SHM_ALIGN 4096u

typedef struct tern_shm_seg_hdr {
    uint64_t magic;           /* written last by the creator */
    uint32_t version;
    uint32_t nlocal;
    uint64_t total_size;
    uint32_t fbox_size;
    uint32_t cell_size;
    uint32_t num_cells;       /* power of two */
    uint32_t chunk_size;
    uint32_t num_chunks;      /* power of two */
    uint32_t wait_mode;       /* enum tern_wait_mode: senders ring doorbells if BLOCK */
    uint64_t off_doorbells;
    uint64_t off_pairs;
    uint64_t pair_size;
    uint64_t pair_off_fbox;
    uint64_t pair_off_cells;
    uint64_t pair_off_copy;
    uint32_t num_fbox;        /* power of two */
    uint32_t num_workers;     /* channel sets: worker i of each rank talks to worker i */
    uint8_t reserved[24];
} tern_shm_seg_hdr_t;

static_assert(sizeof(tern_shm_seg_hdr_t) == 128, "segment header is a wire format");
static_assert(offsetof(tern_shm_seg_hdr_t, fbox_size) == 24, "segment header layout");
static_assert(offsetof(tern_shm_seg_hdr_t, off_doorbells) == 48, "segment header layout");
static_assert(offsetof(tern_shm_seg_hdr_t, pair_off_copy) == 88, "segment header layout");
static_assert(offsetof(tern_shm_seg_hdr_t, num_fbox) == 96, "segment header layout");

/* Doorbell of one local rank's worker (netmods/shm/shm_wait.c): sleeping
 * is set while the rank may sleep in block mode; seq counts the rings. */
typedef struct tern_shm_doorbell {
    _Atomic uint32_t seq;
    _Atomic uint32_t sleeping;
    uint8_t pad[TERN_CACHE_LINE - 8];
} tern_shm_doorbell_t;

static_assert(sizeof(tern_shm_doorbell_t) == TERN_CACHE_LINE, "doorbell is one cache line");

/* Header of a fastbox slot or a cell; data follows at +16 + pad.  The
 * writer pads units that carry a large payload so the payload starts on a
 * 64-byte boundary (copies between aligned buffers stay fast); small
 * packets are not padded, so an 8-byte message stays in one cache line. */
typedef struct tern_shm_unit_hdr {
    _Atomic uint32_t stamp;   /* ring index + 1 once filled (R1/A1) */
    uint32_t len;             /* stream bytes in this unit */
    uint32_t seq;             /* unit sequence number of the pair */
    uint32_t pad;             /* bytes skipped before the data, < 64 */
} tern_shm_unit_hdr_t;

#define TERN_SHM_PAD_MIN_PAYLOAD 1024 /* payloads from this size are aligned */

#define TERN_SHM_UNIT_HDR 16
static_assert(sizeof(tern_shm_unit_hdr_t) == TERN_SHM_UNIT_HDR, "unit header is a wire format");
static_assert(offsetof(tern_shm_unit_hdr_t, seq) == 8, "unit header layout");

/* The reader's consumer indices of one pair (written only by the reader,
 * R2), then a guard line so the writer's slots never share its line or the
 * adjacent-line prefetch pair. */
typedef struct tern_shm_cons_ctl {
    _Atomic uint32_t fbox_head;
    _Atomic uint32_t cell_head;
    uint8_t pad0[TERN_CACHE_LINE - 8];
    uint8_t guard[TERN_CACHE_LINE];
} tern_shm_cons_ctl_t;

static_assert(sizeof(tern_shm_cons_ctl_t) == 2 * TERN_CACHE_LINE, "consumer control layout");
static_assert(offsetof(tern_shm_cons_ctl_t, cell_head) == 4, "consumer control layout");

/* Cooperative LMT chunk header, one line; chunk_size data bytes follow. */
typedef struct tern_shm_chunk_hdr {
    _Atomic uint32_t len;     /* bytes of data; 0 = free (R4/A4) */
    uint32_t reserved;
    uint64_t rreq_id;         /* receive request the chunk belongs to */
    uint8_t pad[TERN_CACHE_LINE - 16];
} tern_shm_chunk_hdr_t;

static_assert(sizeof(tern_shm_chunk_hdr_t) == TERN_CACHE_LINE, "chunk header is one line");

/* Offset in a pair region of the first chunk's data (page aligned). */
static inline uint64_t tern_shm_copy_data_off(const tern_shm_seg_hdr_t *h)
{
    return (h->pair_off_copy + (uint64_t)h->num_chunks * sizeof(tern_shm_chunk_hdr_t) + 4095u) &
           ~(uint64_t)4095u;
}

/* shm's remote key: CMA needs no registration and pins nothing, so a key
 * is where the memory is (pid, address, length); the peer reaches it with
 * process_vm_readv / process_vm_writev, as the kernel allows. */
#define TERN_SHM_RKEY_KIND 0x31594b52u /* "RKY1" */
typedef struct tern_shm_rkey {
    uint32_t kind;            /* TERN_SHM_RKEY_KIND */
    int32_t pid;              /* the process the memory is in */
    uint64_t addr;
    uint64_t len;
} tern_shm_rkey_t;

static_assert(sizeof(tern_shm_rkey_t) == 24, "shm remote key layout");

/* Business card of a rank on this netmod: its entry in the worker's
 * address (engine/address.h).  Every rank names the segment it would
 * create; the node's first rank (its lowest) creates it under that name,
 * and the others attach to the name in its card.  The name carries a
 * random nonce of the creator's, so a stale segment of an earlier job of
 * the same name is never taken for it (without a launcher, ranks attach
 * as soon as they see the name). */
#define TERN_SHM_CARD_MAGIC 0x4d485354u /* "TSHM" */
#define TERN_SHM_CARD_VERSION 1u
typedef struct tern_shm_card {
    uint32_t magic;           /* TERN_SHM_CARD_MAGIC */
    uint32_t version;         /* TERN_SHM_CARD_VERSION */
    int32_t pid;
    uint32_t reserved;        /* 0 */
    char seg_name[96];        /* shm_open name of the segment it would create */
} tern_shm_card_t;

static_assert(sizeof(tern_shm_card_t) == 112, "shm card is a wire format");
static_assert(offsetof(tern_shm_card_t, seg_name) == 16, "shm card layout");

#endif
