/*
 * ibloop's own tests: one endpoint and one buffer registered with every
 * access (ibloop_test_one.c), shared by the RC and scatter/gather cases.
 */
#ifndef IBLOOP_TEST_ONE_H
#define IBLOOP_TEST_ONE_H

#include "ibloop_test.h"

#define ALL_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
                    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
extern struct ep E;
extern uint8_t *buf;
extern struct ibv_mr *mr;
extern struct xinfo peer;
int setup(const struct ep_opts *o, size_t len); /* E opened, buf of len registered */
int connect_rc(const struct rc_opts *o);        /* exchange addresses, RC to RTS, sync */
int teardown(void);

#endif
