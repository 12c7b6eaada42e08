/*
 * The packet-parser fuzzer (fuzz_pkt.c), its capturing netmod (fuzz_nm.c)
 * and its seeds (fuzz_pkt_seeds.c).
 *
 * An input is
 *   byte 0   setup: SETUP_LMT the netmod has LMT ops (else the null mode),
 *            SETUP_QUEUE it queues sends until ACT_DRAIN (else each
 *            completes as it is handed over)
 *   byte 1   which of the 8 receive slots are posted before any byte
 *   then ops OP_REST: feed the rest at once; 1 .. OP_ACTION - 1: feed that
 *            many bytes; OP_ACTION + a: action a (ACT_*)
 */
#ifndef TERN_TESTS_FUZZ_PKT_H
#define TERN_TESTS_FUZZ_PKT_H

#include <stdbool.h>

#include "engine/engine_internal.h"
#include "engine/netmod.h"

#define SETUP_LMT 1u
#define SETUP_QUEUE 2u
#define OP_REST 0x00
#define OP_ACTION 0xf0
enum fuzz_pkt_action {
    ACT_POST = 0,    /* 0..7: post receive slot a */
    ACT_SEND_RNDV = 8, /* tern_isend above the eager limit: an RTS goes out */
    ACT_SEND_EAGER = 9,
    ACT_DRAIN = 10,  /* the netmod completes every queued send */
    ACT_REAP = 11,   /* 11..15: reap every completed request */
};
/* The first rendezvous id a fresh worker hands out (index 0, generation 1). */
#define FIRST_ID (UINT64_C(1) << 32)

/*
 * The capturing netmod: sends nothing anywhere, completes or queues what
 * the engine hands it, and with LMT ops keeps a minimal per-request state
 * so that CTS / DONE / COOKIE packets a peer sends out of turn are refused
 * as a real netmod does.  It aborts when the engine hands it a request it
 * still holds, or one already complete: the engine must never do either,
 * whatever a peer sent.
 */
/* The instance for the next input, its queue empty: with LMT ops (modes
 * coop, get, put, chosen in turn) or the null mode. */
tern_netmod_inst_t *fuzz_nm_reset(bool lmt, bool queue);
/* Complete every queued send, in order. */
void fuzz_nm_drain(void);

/* Write the seed corpus (seeds.h). */
void fuzz_pkt_write_seeds(void);

#endif
