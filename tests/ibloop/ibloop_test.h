/*
 * ibloop's own tests: shared declarations.
 *
 * Every case runs as two processes, side A and side B, forked by a
 * coordinator that never touches verbs itself (so each side parses its own
 * IBLOOP_* environment).  The sides talk over a socketpair; every wait has a
 * timeout, and the coordinator kills a case that overruns.
 */
#ifndef IBLOOP_TEST_H
#define IBLOOP_TEST_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

/* ---- the running side ---------------------------------------------------- */
struct side {
    int fd;        /* socketpair to the other side */
    int role;      /* 0: A, 1: B */
    char *err;     /* failure reason, shared with the coordinator */
    pid_t peer;    /* the other side's pid */
};

extern struct side *me;

void fail_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The provider ibloop follows (IBLOOP_MODE), and the error number its
 * ibv_post_send gives for a WR beyond what the QP was granted (too many
 * SGEs, too much inline data, or a QP not yet in RTS). */
static inline bool mode_rxe(void)
{
    const char *m = getenv("IBLOOP_MODE");
    return m && !strcasecmp(m, "rxe");
}
#define POST_OVER_ERRNO (mode_rxe() ? EINVAL : ENOMEM)
#define IBLOOP_TEST_MAX_INLINE 1024

#define CHECK(cond, ...)                                  \
    do {                                                  \
        if (!(cond)) {                                    \
            fail_at(__FILE__, __LINE__, __VA_ARGS__);     \
            return -1;                                    \
        }                                                 \
    } while (0)
#define TRY(expr)              \
    do {                       \
        if ((expr) < 0)        \
            return -1;         \
    } while (0)

/* ---- exchange with the other side ----------------------------------------- */
struct xinfo {
    uint32_t lid, qpn, psn, rkey;
    uint64_t addr, len;
    uint8_t gid[16];
    uint32_t extra[4];
};
int xsend(const void *p, size_t n);
int xrecv(void *p, size_t n, int timeout_ms);
int xsync(void); /* both sides reach this point */

/* ---- endpoints ------------------------------------------------------------ */
struct ep_opts {
    enum ibv_qp_type type;  /* default RC */
    bool srq, channel, sig_all;
    int cqe;                /* default 256 */
    uint32_t send_wr, recv_wr, send_sge, recv_sge, inline_data;
};

struct ep {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_comp_channel *ch;
    struct ibv_cq *scq, *rcq;
    struct ibv_srq *srq;
    struct ibv_qp *qp;
    struct ibv_qp_init_attr ia;
    struct ibv_port_attr port;
    union ibv_gid gid;
    int gid_index;
    bool roce;
    uint32_t psn;
};

struct rc_opts {
    int access;               /* qp_access_flags; default all remote */
    uint8_t min_rnr_timer;    /* default 1 (10 us) */
    uint8_t rnr_retry;        /* default 7 */
    uint8_t timeout;          /* default 14 */
    uint8_t retry_cnt;        /* default 7 */
    uint8_t max_rd_atomic;    /* default 4 */
    bool set;                 /* false: all defaults */
};

int ep_open(struct ep *e, const struct ep_opts *o);
void ep_close(struct ep *e);
void ep_info(const struct ep *e, struct xinfo *x);
int ep_rc_connect(struct ep *e, const struct xinfo *peer, const struct rc_opts *o);
int ep_ud_ready(struct ep *e);
int ep_exchange(struct ep *e, struct xinfo *mine, struct xinfo *peer);
struct ibv_ah *ep_ah(struct ep *e, const struct xinfo *peer);

/* ---- work requests and completions --------------------------------------- */
int post_recv1(struct ep *e, uint64_t wr_id, void *buf, uint32_t len, uint32_t lkey);
int post_send1(struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op, void *buf,
               uint32_t len, uint32_t lkey, unsigned flags);
int post_rdma(struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op, void *buf,
              uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey);
/* wait for one completion; -1 on timeout (and CHECK-style failure) */
int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms);
int expect_wc(struct ibv_cq *cq, enum ibv_wc_status st, uint64_t wr_id, int timeout_ms);
/* no completion arrives within ms */
int expect_none(struct ibv_cq *cq, int ms);
uint64_t now_us(void);
void fill_pattern(void *p, size_t n, uint32_t seed);
size_t check_pattern(const void *p, size_t n, uint32_t seed); /* index of 1st bad or n */

/* ---- the cases ------------------------------------------------------------- */
struct tcase {
    const char *name;
    int (*a)(void);
    int (*b)(void);
    const char *env_a, *env_b; /* "VAR=val VAR2=val" set before the side starts */
    int timeout_s;
    const char *group;         /* e.g. "fault": only when named or group-selected */
    bool b_killed;             /* side B is expected to die by SIGKILL */
};

extern const struct tcase cases_rc[], cases_sge[], cases_err[], cases_ud[], cases_ev[];

#endif
