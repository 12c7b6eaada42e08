/*
 * Engine packet header — a wire format shared by every netmod.
 *
 * Each netmod carries an ordered byte stream per VC; the engine's stream
 * parser (handle_pkt.c) cuts it into packets.  A packet is this fixed
 * 40-byte header followed by either a payload (EAGER, DATA: `len` bytes,
 * streamed straight into the matched buffer) or a cookie (RTS, CTS, DONE,
 * COOKIE: `cookie_len` bytes, at most TERN_COOKIE_MAX, accumulated in the VC);
 * BYE is a bare header.
 * All fields are host byte order: the stream never leaves one kind of host
 * in this release (netmods across hosts check the card's byte order).
 */
#ifndef TERN_ENGINE_PKT_H
#define TERN_ENGINE_PKT_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

enum tern_pkt_type {
    TERN_PKT_EAGER = 1,  /* matched message; payload follows */
    TERN_PKT_RTS = 2,    /* rendezvous request-to-send; cookie may follow */
    TERN_PKT_CTS = 3,    /* clear-to-send: receiver matched the RTS */
    TERN_PKT_DONE = 4,   /* LMT transfer finished (side that knows tells the other) */
    TERN_PKT_COOKIE = 5, /* netmod-specific LMT update mid-transfer */
    TERN_PKT_DATA = 6,   /* null-LMT data: payload for receive request rreq */
    TERN_PKT_BYE = 7,    /* the sender has terminated the VC: nothing follows, and the end
                          * of its stream is a close, not a failure (tern_vc_say_bye) */
    /* one-sided, the engine's path (engine/rma.h: the fields of each) */
    TERN_PKT_RMA_PUT = 8,   /* payload into a region */
    TERN_PKT_RMA_GET = 9,   /* bytes of a region wanted: DATA or RMA_RESP answers */
    TERN_PKT_RMA_AMO = 10,  /* an atomic; cookie: its operands */
    TERN_PKT_RMA_ACC = 11,  /* an accumulate; payload: its elements */
    TERN_PKT_RMA_FLUSH = 12, /* answer once everything before is applied */
    TERN_PKT_RMA_RESP = 13, /* the target's answer: status, result or message */
    TERN_PKT_TYPE_MAX = 14
};

/*
 * Rendezvous (LMT) modes.  The sender chooses one per message (TERN_LMT_MODE,
 * or the netmod's choice by size) and names it in the RTS's flags; the
 * receiver follows it.
 *   NULL  CTS, then the data as a DATA packet on the VC's stream (engine)
 *   COOP  the netmod pipelines the data through a buffer both sides copy
 *   GET   the RTS cookie carries the sender's key; the receiver reads, DONE
 *         goes to the sender
 *   PUT   the CTS cookie carries the receiver's key; the sender writes, DONE
 *         goes to the receiver
 *   CMA_GET, CMA_PUT  the same, by the engine's same-host copy
 *         (engine/cma.h) whatever the netmod; a receiver that declines, or a
 *         refusal by the kernel, hands the message to the netmod's own mode
 *         (COOKIE packets REFUSED / FALLBACK).  On the wire only: the
 *         configuration's get and put mean these where the copy applies.
 */
enum tern_lmt_mode {
    TERN_LMT_AUTO = 0, /* configuration only: let the netmod choose by size */
    TERN_LMT_NULL = 1,
    TERN_LMT_COOP = 2,
    TERN_LMT_GET = 3,
    TERN_LMT_PUT = 4,
    TERN_LMT_CMA_GET = 5,
    TERN_LMT_CMA_PUT = 6,
    TERN_LMT_NMODES = 7
};

/* Flag of EAGER and RTS packets: rreq carries 64 bits of immediate data
 * (tern_tsend's TERN_OP_DATA).  In an RTS it sits above the LMT mode. */
#define TERN_PKT_F_DATA 0x80u
#define TERN_PKT_LMT_MASK 0x0fu

typedef struct tern_pkt_hdr {
    uint8_t type;        /* enum tern_pkt_type */
    uint8_t flags;       /* RTS: enum tern_lmt_mode (NULL..CMA_PUT) | F_DATA; EAGER: 0 or
                          * F_DATA; RMA_AMO / RMA_ACC: the operation; else zero */
    uint16_t space;      /* matching space */
    uint32_t cookie_len; /* bytes of cookie after the header */
    uint64_t tag;        /* EAGER/RTS: the 64-bit tag (every value allowed) */
    uint64_t len;        /* EAGER/RTS: message length; DATA: payload length */
    uint64_t sreq;       /* sender's request id (RTS, CTS, DONE-to-sender) */
    uint64_t rreq;       /* receiver's request id (CTS, DATA, DONE-to-receiver); EAGER/RTS
                          * with F_DATA: the immediate data, else zero */
} tern_pkt_hdr_t;

#define TERN_PKT_HDR_SIZE 40
#define TERN_COOKIE_MAX 256

static_assert(sizeof(tern_pkt_hdr_t) == TERN_PKT_HDR_SIZE, "pkt header is a wire format");
static_assert(offsetof(tern_pkt_hdr_t, tag) == 8, "pkt header layout");
static_assert(offsetof(tern_pkt_hdr_t, len) == 16, "pkt header layout");
static_assert(offsetof(tern_pkt_hdr_t, rreq) == 32, "pkt header layout");

#endif
