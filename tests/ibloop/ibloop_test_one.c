/*
 * ibloop's own tests: what the RC and scatter/gather cases start and end
 * with.  One endpoint, one buffer registered with every access, and the
 * peer's address; each case runs in a process of its own, so these are
 * that process's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibloop_test_one.h"

struct ep E;
uint8_t *buf;
struct ibv_mr *mr;
struct xinfo peer;

int setup(const struct ep_opts *o, size_t len)
{
    TRY(ep_open(&E, o));
    buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
    CHECK(buf, "out of memory");
    memset(buf, 0, len);
    mr = ibv_reg_mr(E.pd, buf, len, ALL_ACCESS);
    CHECK(mr, "ibv_reg_mr: %s", strerror(errno));
    return 0;
}

int connect_rc(const struct rc_opts *o)
{
    struct xinfo mine;

    ep_info(&E, &mine);
    mine.addr = (uintptr_t)buf;
    mine.rkey = mr->rkey;
    mine.len = mr->length;
    TRY(ep_exchange(&E, &mine, &peer));
    TRY(ep_rc_connect(&E, &peer, o));
    return xsync();
}

int teardown(void)
{
    TRY(xsync());
    CHECK(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr");
    free(buf);
    ep_close(&E);
    return 0;
}
