/*
 * What the one-sided engine cases share (cases_rma.c, cases_rma_safety.c,
 * cases_rma_paths.c):
 * a window of one region per rank with every rank's key unpacked, and
 * waiting for an operation or a flush.
 */
#ifndef TERN_TESTS_ENGINE_CASES_RMA_H
#define TERN_TESTS_ENGINE_CASES_RMA_H

#include "tests/engine/cases.h"

#define KEY_SPACE 11
#define KEY_TAG 0x4b4559

/* A region of len bytes on every rank, each rank's key unpacked: the
 * caller's memory (tern_region_create), or with alloc_mode the library's
 * (tern_region_alloc: peers on this host map it). */
typedef struct win {
    uint8_t *mem;
    size_t len;
    int alloc;
    tern_region_t *reg;
    tern_key_t **keys; /* by rank */
} win_t;

/* Windows on allocated regions instead of created ones (the _alloc cases). */
extern int rma_alloc_mode;

/* Open a window of len bytes (filled with fill) with access flags; every
 * rank calls it.  0, or -1 (said why). */
int win_open(th_t *t, win_t *w, size_t len, unsigned flags, uint8_t fill);
/* Free w at once (win_close: after a barrier). */
void win_free(th_t *t, win_t *w);
void win_close(th_t *t, win_t *w);
/* The base address rank's key gives its region. */
uint64_t base_of(const win_t *w, int rank);
/* Wait for the request (*r) of an operation that returned st. */
void done(th_t *t, tern_status_t st, tern_request_t **r, const char *what);
/* Flush to peer (TERN_ANY_SOURCE: to all), checked. */
void flush(th_t *t, int peer);
/* The value of w's counter name (-1: none). */
int64_t rma_counter(tern_worker_t *w, const char *name);

/* The safety cases (cases_rma_safety.c), listed in th_rma_cases. */
int case_rma_errors(th_t *t);
int case_rma_destroy_race(th_t *t);
int case_peer_rma(th_t *t);
int case_rma_stale_key(th_t *t);
int case_rma_acc_refused(th_t *t);
int case_barrier_waits(th_t *t);
/* The paths cases (cases_rma_paths.c). */
int case_rma_soak(th_t *t);
int case_rma_soak_device(th_t *t);
int case_rma_direct(th_t *t);
int case_rma_cma(th_t *t);
int case_rma_cq(th_t *t);
int case_rma_native(th_t *t);
int case_rma_replay(th_t *t);

#endif
