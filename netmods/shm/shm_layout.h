/*
 * The node's shared-memory segment — a wire format between processes that
 * may be built separately: everything is addressed by offset from the
 * segment base, never by pointer, and every struct has its size and field
 * offsets pinned by static_assert.  Bump TERN_SHM_VERSION on any change.
 *
 *   [seg_hdr 128 B][doorbell x nlocal, 64 B each][pad to 4 KiB]
 *   [pair region x nlocal*nlocal, pair_size each, 4 KiB aligned]
 *
 * Pair region (s -> r) at off_pairs + (r * nlocal + s) * pair_size, i.e.
 * grouped by reader ("r's inbox"):
 *   +0               fastbox: unit_hdr + (fbox_size - 16) bytes
 *   +pair_off_ring   ring_ctl (producer line, guard line, consumer line)
 *   +pair_off_cells  num_cells cells of cell_size: unit_hdr + data
 *   +pair_off_copy   num_chunks x (chunk_hdr 64 B + chunk_size data):
 *                    the cooperative LMT copy buffer
 *
 * Eager units (a fastbox fill or one ring cell) carry consecutive sequence
 * numbers per pair, so the reader takes them in order from whichever
 * channel holds the next one.
 *
 * Memory ordering — each pairing is labelled where it is used:
 *   R1/A1  producer writes a cell, then store-release ring tail;
 *          consumer load-acquire tail, then reads the cell.
 *   R2/A2  consumer finishes reading a cell, then store-release ring head;
 *          producer load-acquire head before reusing the cell.
 *   R3/A3  fastbox: writer fills it, store-release full=1; reader
 *          load-acquire full, reads, store-release full=0; writer
 *          load-acquire full==0 before refilling.
 *   R4/A4  copy chunk: same as the fastbox with len != 0 as "full".
 */
#ifndef TERN_SHM_LAYOUT_H
#define TERN_SHM_LAYOUT_H

#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define TERN_SHM_MAGIC UINT64_C(0x314d48534e524554) /* "TERNSHM1" */
#define TERN_SHM_VERSION 1u
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
    uint64_t pair_off_ring;
    uint64_t pair_off_cells;
    uint64_t pair_off_copy;
    uint8_t reserved[32];
} tern_shm_seg_hdr_t;

static_assert(sizeof(tern_shm_seg_hdr_t) == 128, "segment header is a wire format");
static_assert(offsetof(tern_shm_seg_hdr_t, fbox_size) == 24, "segment header layout");
static_assert(offsetof(tern_shm_seg_hdr_t, off_doorbells) == 48, "segment header layout");
static_assert(offsetof(tern_shm_seg_hdr_t, pair_off_copy) == 88, "segment header layout");

/* Futex doorbell of one local rank's worker (see engine/progress.c). */
typedef struct tern_shm_doorbell {
    _Atomic uint32_t seq;
    _Atomic uint32_t sleeping;
    uint8_t pad[TERN_CACHE_LINE - 8];
} tern_shm_doorbell_t;

static_assert(sizeof(tern_shm_doorbell_t) == TERN_CACHE_LINE, "doorbell is one cache line");

/* Header of a fastbox or a cell; data follows at +16. */
typedef struct tern_shm_unit_hdr {
    _Atomic uint32_t full;    /* fastbox only: 1 while it holds a unit (R3/A3) */
    uint32_t len;             /* stream bytes in this unit */
    uint32_t seq;             /* unit sequence number of the pair */
    uint32_t reserved;
} tern_shm_unit_hdr_t;

#define TERN_SHM_UNIT_HDR 16
static_assert(sizeof(tern_shm_unit_hdr_t) == TERN_SHM_UNIT_HDR, "unit header is a wire format");
static_assert(offsetof(tern_shm_unit_hdr_t, seq) == 8, "unit header layout");

/* SPSC ring indices: free-running 32-bit, masked on access; producer and
 * consumer lines apart with a guard line between (no false sharing, and
 * none from the adjacent-line prefetcher). */
typedef struct tern_shm_ring_ctl {
    _Atomic uint32_t tail;    /* written by the producer (R1) */
    uint8_t pad0[TERN_CACHE_LINE - 4];
    uint8_t guard[TERN_CACHE_LINE];
    _Atomic uint32_t head;    /* written by the consumer (R2) */
    uint8_t pad1[TERN_CACHE_LINE - 4];
} tern_shm_ring_ctl_t;

static_assert(sizeof(tern_shm_ring_ctl_t) == 3 * TERN_CACHE_LINE, "ring control layout");
static_assert(offsetof(tern_shm_ring_ctl_t, head) == 2 * TERN_CACHE_LINE, "ring control layout");

/* Cooperative LMT chunk header, one line; chunk_size data bytes follow. */
typedef struct tern_shm_chunk_hdr {
    _Atomic uint32_t len;     /* bytes of data; 0 = free (R4/A4) */
    uint32_t reserved;
    uint64_t rreq_id;         /* receive request the chunk belongs to */
    uint8_t pad[TERN_CACHE_LINE - 16];
} tern_shm_chunk_hdr_t;

static_assert(sizeof(tern_shm_chunk_hdr_t) == TERN_CACHE_LINE, "chunk header is one line");

/* Business card of a rank on this netmod (PMIx key "tern.shm"). */
typedef struct tern_shm_card {
    int32_t status;           /* TERN_OK, or why the creator failed */
    int32_t pid;
    uint64_t seg_size;        /* creator only */
    char seg_name[96];        /* creator only: shm_open name */
    char error[256];          /* creator only, when status != TERN_OK */
} tern_shm_card_t;

#endif
