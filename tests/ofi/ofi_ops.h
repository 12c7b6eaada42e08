/*
 * ofi_ops: two processes (A and B, started by tests/ofi/ofi_ops.sh) that
 * exchange fi_getname's names through files and run the data cases of
 * ofi_ops_cases.c against each other.  Test code only.
 */
#ifndef TERN_TEST_OFI_OPS_H
#define TERN_TEST_OFI_OPS_H

#include "tests/ofi/ofi_util.h"

extern struct tep T;   /* this process's endpoint */
extern fi_addr_t PEER; /* the other process, in T's AV */
extern int ROLE;       /* 0: A, 1: B */
#define IS_A (ROLE == 0)
#define WAIT_S 60.0 /* hang guard of one completion */

/* Both sides: meet (a tagged message each way). */
void sync_peer(void);
/* Wait for ctx's completion; FAIL naming what when it does not come. */
struct fi_cq_err_entry wait_ok(void *ctx, const char *what, fi_addr_t *src);
/* Reopen T's endpoint and CQ with another format / bind flags. */
void reopen(enum fi_cq_format format, uint64_t bind_flags);

typedef void (*ops_case_fn)(void);
struct ops_case {
    const char *name;
    ops_case_fn fn;
};
extern const struct ops_case ops_cases[];
/* ofi_ops_rma.c: the one-sided cases */
void case_rma(void);
void case_atomic(void);
void case_rma_errors(void);

#endif
