/*
 * dpdk netmod: the frame format.  A wire format: both ends may be built
 * apart, so every field has a fixed size, offset and byte order (little
 * endian on the wire, converted with rte_cpu_to_le_* / rte_le_to_cpu_*),
 * checked by the static_asserts below.  Changing anything here means a new
 * TERN_DPDK_WIRE_VERSION.
 *
 *   Ethernet header (14 bytes: the peer's MAC, ours, TERN_DPDK_ETHERTYPE)
 *   tern_dpdk_hdr_t (48 bytes)
 *   [LMT frames: tern_dpdk_lmt_ext_t (16 bytes)]
 *   payload (hdr.len bytes)
 *
 * One sequence space per VC (a pair of endpoints: rank << 8 | worker) covers
 * DATA and LMT frames; ACK and PROBE frames carry no sequence number of
 * their own (seq is the sender's next one, for information).  Every frame,
 * data or not, carries the cumulative ack, a selective-ack bitmap and the
 * receive window of the reverse direction.  The bitmap covers 64 frames:
 * the block of the window where the latest early frame arrived (version 2;
 * version 1 had only the first block, so a second hole further on was
 * seen only once the first was repaired: one repair per round trip).
 */
#ifndef TERN_DPDK_WIRE_H
#define TERN_DPDK_WIRE_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

/* IEEE 802 "local experimental EtherType 1": never routed, never
 * mistaken for IP by the kernel of a veth or tap peer. */
#define TERN_DPDK_ETHERTYPE 0x88B5u
#define TERN_DPDK_WIRE_VERSION 2u
#define TERN_DPDK_ETH_HDR 14u

enum tern_dpdk_ftype {
    TERN_DPDK_F_DATA = 1,  /* bytes of the VC's stream (engine packets) */
    TERN_DPDK_F_LMT = 2,   /* rendezvous payload for a receive: ext follows */
    TERN_DPDK_F_ACK = 3,   /* acknowledgement only */
    TERN_DPDK_F_PROBE = 4, /* keepalive: answer with an ACK now */
    TERN_DPDK_F_MAX = 5
};

/* hdr.flags */
#define TERN_DPDK_FL_ACK_NOW 0x01u /* answer with an ACK at once */

typedef struct tern_dpdk_hdr {
    uint8_t version;     /* TERN_DPDK_WIRE_VERSION */
    uint8_t type;        /* enum tern_dpdk_ftype */
    uint16_t len;        /* payload bytes after the header (and LMT extension) */
    uint32_t job;        /* hash of the job's namespace: other jobs' frames are dropped */
    uint32_t src;        /* sending endpoint: rank << 8 | worker */
    uint32_t dst;        /* receiving endpoint */
    uint32_t src_nonce;  /* the sending process's nonce (its card) */
    uint32_t dst_nonce;  /* the receiving process's nonce, as the sender knows it */
    uint32_t seq;        /* DATA / LMT: this frame's number; else the next one */
    uint32_t ack;        /* every seq < ack of the reverse direction arrived */
    uint64_t sack;       /* bit i: seq ack + 1 + 64 * sack_block + i arrived (early) */
    uint16_t window;     /* frames at or after ack the peer may have in flight */
    uint8_t flags;       /* TERN_DPDK_FL_* */
    uint8_t sack_block;  /* which 64 frames after ack sack describes (< window / 64) */
    uint32_t csum;       /* CRC32C of header (csum = 0) and payload, 0: none */
} __attribute__((packed)) tern_dpdk_hdr_t; /* at offset 14 of a frame: unaligned */

typedef struct tern_dpdk_lmt_ext {
    uint64_t cookie;     /* the receive request's id (from the CTS) */
    uint64_t offset;     /* where the payload goes in the message */
} __attribute__((packed)) tern_dpdk_lmt_ext_t;

#define TERN_DPDK_HDR_SIZE 48u
#define TERN_DPDK_LMT_EXT_SIZE 16u

static_assert(sizeof(tern_dpdk_hdr_t) == TERN_DPDK_HDR_SIZE, "dpdk header is a wire format");
static_assert(offsetof(tern_dpdk_hdr_t, job) == 4, "dpdk header layout");
static_assert(offsetof(tern_dpdk_hdr_t, seq) == 24, "dpdk header layout");
static_assert(offsetof(tern_dpdk_hdr_t, ack) == 28, "dpdk header layout");
static_assert(offsetof(tern_dpdk_hdr_t, sack) == 32, "dpdk header layout");
static_assert(offsetof(tern_dpdk_hdr_t, window) == 40, "dpdk header layout");
static_assert(offsetof(tern_dpdk_hdr_t, sack_block) == 43, "dpdk header layout");
static_assert(offsetof(tern_dpdk_hdr_t, csum) == 44, "dpdk header layout");
static_assert(sizeof(tern_dpdk_lmt_ext_t) == TERN_DPDK_LMT_EXT_SIZE, "LMT extension layout");

/* Sequence comparison modulo 2^32 (RFC 1982 style). */
static inline int32_t tern_dpdk_seq_diff(uint32_t a, uint32_t b) { return (int32_t)(a - b); }

#define TERN_DPDK_EP(rank, worker) (((uint32_t)(rank) << 8) | ((uint32_t)(worker) & 0xffu))
#define TERN_DPDK_EP_RANK(ep) ((int)((ep) >> 8))
#define TERN_DPDK_EP_WORKER(ep) ((int)((ep) & 0xffu))

#endif
