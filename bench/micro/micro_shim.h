/*
 * bench/micro: the C side of the micro-benchmarks, shared with the C++ side.
 *
 * The engine's internal headers use C11 _Atomic, which g++ rejects, so the
 * Google Benchmark code (C++) cannot include them.  This header gives it
 * exactly what it needs:
 *   - set-up and tear-down of a job-less engine (micro_shim.c): a two-rank
 *     context without PMIx whose VC to rank 1 is fed by hand, as in
 *     tests/unit/parser_test.c, and a single-process shm loopback on it;
 *   - the prototypes of the internal engine functions the benchmarks call
 *     directly, with the engine's types left incomplete.  micro_shim.c
 *     includes this header after the engine's own, so a prototype that
 *     drifts from engine/engine_internal.h is a compile error there.
 * Every timed operation is a call into libtern; this file only builds the
 * scene (no wrapper layer around the measured calls).
 */
#ifndef TERN_MICRO_SHIM_H
#define TERN_MICRO_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tern/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- engine internals called directly (see engine/engine_internal.h) ---- */

typedef struct tern_vc tern_vc_t;

tern_status_t tern_handle_pkt(tern_vc_t *vc, const void *buf, size_t len);
/* The engine's pool operations are static inline (C only); these two are
 * their out-of-line instances for the C++ side (micro_shim.c). */
tern_request_t *micro_request_alloc(tern_worker_t *w, int kind);
void micro_request_release(tern_request_t *req);
uint64_t tern_request_register(tern_request_t *req);
tern_request_t *tern_request_lookup(tern_worker_t *w, uint64_t id);
void tern_request_unregister(tern_request_t *req);

/* enum tern_req_kind and TERN_PKT_HDR_SIZE (checked in micro_shim.c) */
#define MICRO_REQ_SEND 1
#define MICRO_REQ_RECV 2
#define MICRO_PKT_HDR_SIZE 40

/* ---- a job-less engine -------------------------------------------------- */

typedef struct micro_engine micro_engine_t;

/*
 * A context of two ranks (we are rank 0) with the configuration from the
 * environment, one worker, and VCs whose netmod swallows every packet sent
 * (CTS and the like).  Bytes "from rank 1" are fed with
 * tern_handle_pkt(micro_vc(e, 1), ...).  NULL with tern_last_error() set
 * when the configuration is invalid.  Free with micro_engine_free(), which
 * also frees every request still queued.
 */
micro_engine_t *micro_engine_new(void);
void micro_engine_free(micro_engine_t *e);
tern_worker_t *micro_worker(micro_engine_t *e);
tern_vc_t *micro_vc(micro_engine_t *e, int rank);

/* Write an eager packet (header + len bytes of payload) to out; returns
 * MICRO_PKT_HDR_SIZE + len. */
size_t micro_eager_pkt(void *out, int tag, size_t len);

/* ---- shm loopback --------------------------------------------------------- */

/*
 * Turn e's VC to rank 1 into a shm VC over a real node segment made by
 * netmods/shm/segment.c (its name unlinked at once) whose receive side
 * reads the very pair its send side writes: tern_isend(w, ..., 1, ...)
 * pushes units into the pair, tern_progress(w) pops them into
 * tern_handle_pkt and the matching receive.  fbox_size: fastbox slot bytes
 * (0: the configuration's).  fastbox false: the sender puts every unit in a
 * cell.  TERN_ERR_* with tern_last_error() set on failure; the segment goes
 * with micro_engine_free().
 */
tern_status_t micro_shm_loopback(micro_engine_t *e, size_t fbox_size, bool fastbox);

#ifdef __cplusplus
}
#endif
#endif
