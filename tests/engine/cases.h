#ifndef TERN_TEST_CASES_H
#define TERN_TEST_CASES_H

#include <stdbool.h>

#include "tests/engine/harness.h"

typedef struct th_case {
    const char *name;
    int (*fn)(th_t *t);
} th_case_t;

extern const th_case_t th_data_cases[];
extern const th_case_t th_error_cases[];
extern const th_case_t th_wait_cases[];
extern const th_case_t th_worker_cases[];
extern const th_case_t th_probe_cases[];   /* probes, matched probes, cancel, ssend */
extern const th_case_t th_tagged_cases[];  /* tagged.h: 64-bit tags, data, CQ, inject */
extern const th_case_t th_rma_cases[];     /* rma.h: one-sided (peer_rma run alone) */
extern const th_case_t th_netmod_cases[]; /* run alone, never in "all" */
extern const th_case_t th_cma_cases[];    /* run alone: the same-host copy's counters */
extern const th_case_t th_addr_cases[];   /* without a launcher: in "all" then */
extern const th_case_t th_addr_named_cases[]; /* without a launcher, by name */

/* tests/engine/addr_wire.c: tern_init_ex(TERN_WIREUP_ADDRESS), the
 * addresses through files (TERN_TEST_ADDR_DIR); 0 or -1 (said why). */
int th_init_by_address(th_t *t);

#endif
