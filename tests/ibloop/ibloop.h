/*
 * ibloop: internal declarations shared by the library's files.
 *
 * ibloop is a loopback verbs device built as a replacement libibverbs.so.1:
 * the process that posts a work request (the requester) executes it inside
 * its own verbs calls, moving bytes with process_vm_readv/writev and pushing
 * completions into queues that live in the fabric's shared memory
 * (ibloop_wire.h).  Every exported symbol is an ibv_* API name; everything
 * here is internal (ibloop_ prefix, hidden by the version script).
 */
#ifndef IBLOOP_H
#define IBLOOP_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "ibloop_wire.h"

#define IBLOOP_HIDDEN __attribute__((visibility("hidden")))

/* ---- device limits ------------------------------------------------------
 * The ceilings below size ibloop's own tables and arrays.  What the device
 * reports (ibv_query_device, ibv_query_port) and grants (ibv_create_qp)
 * depends on the mode it follows (IBLOOP_MODE: mlx5, the default, or rxe)
 * and on the IBLOOP_MAX_* / IBLOOP_MTU overrides: struct ibloop_env. */
#define IBLOOP_MAX_QP_WR 16384u
#define IBLOOP_MAX_SGE 32u
#define IBLOOP_MAX_CQE 262143u
#define IBLOOP_MAX_INLINE 1024u
#define IBLOOP_MAX_RD_ATOM 16u
#define IBLOOP_MAX_MSG (1u << 31)
#define IBLOOP_MTU IBV_MTU_4096
#define IBLOOP_MTU_BYTES 4096u
/* mlx5: the largest send WQE (max_wqe_sz_sq of ConnectX-5/6), and the
 * fixed part of a WQE that ibv_create_qp reserves before inline data */
#define IBLOOP_MLX5_MAX_WQE 1024u
#define IBLOOP_MLX5_WQE_OH_RC 192u
#define IBLOOP_MLX5_WQE_OH_UD 64u
/* what the two modes report as vendor */
#define IBLOOP_MLX5_VENDOR_ID 0x02c9u    /* Mellanox */
#define IBLOOP_MLX5_VENDOR_PART 4119u    /* ConnectX-5 (0x1017) */
#define IBLOOP_RXE_VENDOR_ID 0xffffffu   /* rxe's RXE_VENDOR_ID */
#define IBLOOP_GRH_BYTES 40u
#define IBLOOP_PKEY 0xffffu
#define IBLOOP_DEFAULT_QKEY_MSB 0x80000000u

/* ---- environment (parsed once) ---------------------------------------- */
enum { IBLOOP_MODE_MLX5, IBLOOP_MODE_RXE };
#define IBLOOP_MTU_ENUM_BYTES(m) (128u << (m))
#define IBLOOP_INLINE_BY_WQE UINT32_MAX /* mlx5: as much as the WQE holds */

struct ibloop_env {
    char fabric[65];
    int roce;               /* IBLOOP_LINK_LAYER=ethernet */
    long reg_fail_after;    /* IBLOOP_FAULT_REG_FAIL_AFTER, -1 off */
    long reg_max_bytes;     /* IBLOOP_FAULT_REG_MAX_BYTES, -1 off */
    long drop_cqe;          /* IBLOOP_FAULT_DROP_CQE, 0 off */
    long link_down_after;   /* IBLOOP_FAULT_LINK_DOWN_AFTER, -1 off */
    long link_down_ms;      /* IBLOOP_FAULT_LINK_DOWN_MS, -1 forever */
    long post_refuse_after; /* IBLOOP_FAULT_POST_REFUSE_AFTER, -1 off */
    char stats[256];        /* IBLOOP_STATS: "1" (stderr) or a file; "" off */
    long qp_fail_after;     /* IBLOOP_FAULT_QP_FAIL_AFTER, -1 off */
    long no_device;         /* IBLOOP_FAULT_NO_DEVICE */
    long die_in_lock;       /* IBLOOP_FAULT_DIE_IN_LOCK, 0 off */
    long timeout_ms;        /* IBLOOP_TIMEOUT_MS: cap of transport timeouts */
    int mode;               /* IBLOOP_MODE: IBLOOP_MODE_MLX5 or _RXE */
    uint32_t max_qp_wr;     /* reported limits: the mode's, or IBLOOP_MAX_QP_WR */
    uint32_t max_sge;       /* IBLOOP_MAX_SGE */
    uint32_t max_cqe;       /* IBLOOP_MAX_CQE */
    uint32_t max_inline;    /* IBLOOP_MAX_INLINE, or IBLOOP_INLINE_BY_WQE */
    uint32_t mtu;           /* IBLOOP_MTU: active MTU, enum ibv_mtu */
    int debug;              /* IBLOOP_DEBUG */
};
IBLOOP_HIDDEN const struct ibloop_env *ibloop_env(void);
IBLOOP_HIDDEN void ibloop_log(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
#define IBLOOP_DBG(...)                          \
    do {                                         \
        if (ibloop_env()->debug) ibloop_log(__VA_ARGS__); \
    } while (0)

/* ---- call counters (IBLOOP_STATS, ibloop_stats.c) ----------------------- */
struct ibloop_stats {
    _Atomic uint64_t post_send, send_wrs, post_recv, recv_wrs;
    _Atomic uint64_t poll_cq, poll_empty, cqes, req_notify;
    _Atomic uint64_t reg_mr, dereg_mr;
};
IBLOOP_HIDDEN extern struct ibloop_stats ibloop_stats;
IBLOOP_HIDDEN extern bool ibloop_stats_on; /* written once, before any device */
#define IBLOOP_COUNT(field, n)                                                      \
    do {                                                                            \
        if (ibloop_stats_on)                                                        \
            atomic_fetch_add_explicit(&ibloop_stats.field, (uint64_t)(n),           \
                                      memory_order_relaxed);                        \
    } while (0)

/* ---- the attached fabric (one per process) ---------------------------- */
struct ibloop_fab {
    int fd;
    uint8_t *base;
    struct ibloop_wire_hdr *hdr;
    pid_t pid;
    uint32_t proc, proc_gen;
    uint32_t lid;
    uint64_t netns;
    int roce;
    int users; /* open contexts */
    char path[128];
};
IBLOOP_HIDDEN extern struct ibloop_fab ibloop_fab;

IBLOOP_HIDDEN int ibloop_attach(void);   /* 0 or errno; takes a user ref */
IBLOOP_HIDDEN void ibloop_detach(void);  /* drops a user ref */
IBLOOP_HIDDEN void ibloop_fab_lock(void);
IBLOOP_HIDDEN void ibloop_fab_unlock(void);
IBLOOP_HIDDEN uint32_t ibloop_new_gen(void);
IBLOOP_HIDDEN void ibloop_reclaim_dead(void); /* takes the fabric lock */
IBLOOP_HIDDEN void ibloop_reclaim_ctx(uint32_t ctx); /* fabric lock held */

static inline void *ibloop_at(uint64_t off)
{
    return ibloop_fab.base + off;
}
#define IBLOOP_TABLE(name, type, slot)                                   \
    static inline type *ibloop_##name(uint32_t i)                        \
    {                                                                    \
        return (type *)ibloop_at(ibloop_fab.hdr->off[slot]) + i;         \
    }
IBLOOP_TABLE(proc, struct ibloop_wire_proc, 0)
IBLOOP_TABLE(host, struct ibloop_wire_host, 1)
IBLOOP_TABLE(ctx, struct ibloop_wire_ctx, 2)
IBLOOP_TABLE(qp, struct ibloop_wire_qp, 3)
IBLOOP_TABLE(cq, struct ibloop_wire_cq, 4)
IBLOOP_TABLE(srq, struct ibloop_wire_srq, 5)
IBLOOP_TABLE(chan, struct ibloop_wire_chan, 6)
IBLOOP_TABLE(mr, struct ibloop_wire_mr, 7)

/* table allocation, under the fabric lock; returns index or -1 */
enum { IBLOOP_T_CTX, IBLOOP_T_QP, IBLOOP_T_CQ, IBLOOP_T_SRQ, IBLOOP_T_CHAN };
IBLOOP_HIDDEN int ibloop_tab_alloc(int table);
/* arena, under the fabric lock; returns offset or 0 */
IBLOOP_HIDDEN uint64_t ibloop_arena_alloc(uint64_t bytes, uint32_t *order);
IBLOOP_HIDDEN void ibloop_arena_free(uint64_t off, uint32_t order);

/* robust process-shared locks */
IBLOOP_HIDDEN void ibloop_lock_init(ibloop_lock_t *l);
IBLOOP_HIDDEN void ibloop_lock(ibloop_lock_t *l);
IBLOOP_HIDDEN bool ibloop_trylock(ibloop_lock_t *l);
IBLOOP_HIDDEN void ibloop_unlock(ibloop_lock_t *l);

IBLOOP_HIDDEN uint64_t ibloop_now_ns(void);
IBLOOP_HIDDEN bool ibloop_proc_alive(uint32_t proc);
IBLOOP_HIDDEN uint64_t ibloop_start_time(pid_t pid); /* 0: no such process */
IBLOOP_HIDDEN void ibloop_pidfds_forget(void);
IBLOOP_HIDDEN int ibloop_fab_check(const struct ibloop_wire_hdr *h);
IBLOOP_HIDDEN pid_t ibloop_proc_pid(uint32_t proc);

/* eventfd notification across processes (ibloop_notify.c) */
IBLOOP_HIDDEN int ibloop_efd_create(uint64_t *id);
IBLOOP_HIDDEN void ibloop_token_raise(_Atomic uint32_t *token, uint32_t proc,
                                      int efd, uint64_t efd_id);
IBLOOP_HIDDEN void ibloop_token_drain(int fd, _Atomic uint32_t *token);
IBLOOP_HIDDEN int ibloop_wait_readable(int fd, int timeout_ms);
IBLOOP_HIDDEN void ibloop_notify_forget(void);

/* ---- local objects ----------------------------------------------------- */
struct ibloop_qp;

struct ibloop_context {
    uint32_t idx, gen;              /* wire ctx */
    pthread_mutex_t lock;           /* object lists */
    struct ibloop_qp *qps;
    pthread_mutex_t async_lock;     /* readers of async events */
    /* progress helper thread: retries of blocked send queues */
    pthread_mutex_t thr_lock;
    pthread_cond_t thr_cond;
    pthread_t thr;
    bool thr_started, thr_stop;
    uint64_t thr_wake;              /* earliest deadline, ns (thr_lock) */
    _Atomic int npending;           /* QPs with work left */
    _Atomic int nobjs;              /* live objects (close checks) */
    struct verbs_context vctx;      /* ibv_context is its last member */
};

static inline struct ibloop_context *ibloop_ctx_of(struct ibv_context *c)
{
    return (struct ibloop_context *)((char *)c -
                                     offsetof(struct ibloop_context, vctx.context));
}

struct ibloop_pd {
    struct ibv_pd ibv;
    uint32_t id;
    _Atomic int refs;
};

struct ibloop_mr {
    struct ibv_mr ibv;
    uint32_t idx;
};

struct ibloop_cq;
struct ibloop_chan {
    struct ibv_comp_channel ibv;
    uint32_t idx, gen;
    pthread_mutex_t lock;
    struct ibloop_cq *cqs;
};

struct ibloop_cq {
    struct ibv_cq ibv;
    uint32_t idx, gen;
    pthread_mutex_t poll_lock;
    uint64_t ev_taken;             /* channel events handed out (chan lock) */
    uint32_t async_reported;
    struct ibloop_cq *chan_next;
    _Atomic int refs;              /* QPs using it */
};

struct ibloop_srq {
    struct ibv_srq ibv;
    uint32_t idx, gen;
    struct ibloop_pd *pd;
    uint32_t async_reported;
    _Atomic int refs;
};

struct ibloop_qp {
    struct ibv_qp ibv;
    uint32_t idx, gen;
    struct ibloop_context *ctx;
    struct ibloop_qp *next;        /* ctx->qps */
    struct ibloop_pd *pd;
    struct ibloop_cq *scq, *rcq;
    struct ibloop_srq *srq;
    _Atomic int pending;           /* send queue has blocked work */
    uint32_t async_reported;
    _Atomic bool sq_opened;        /* reached RTS since RESET: mlx5 takes posts
                                    * in ERR only then */
};

struct ibloop_ah {
    struct ibv_ah ibv;
    struct ibloop_wire_av av;
};

#define IBLOOP_CONTAINER(ptr, type) ((type *)(void *)(ptr))

/* Local objects by table index, to turn events into pointers. */
IBLOOP_HIDDEN extern void *ibloop_local_qp[IBLOOP_NQP];
IBLOOP_HIDDEN extern void *ibloop_local_cq[IBLOOP_NCQ];
IBLOOP_HIDDEN extern void *ibloop_local_srq[IBLOOP_NSRQ];

/* ---- cross-file operations -------------------------------------------- */
/* ibloop_cq.c */
enum { IBLOOP_PUSH_OK = 0, IBLOOP_PUSH_GONE = 1, IBLOOP_PUSH_OVERFLOW = 2 };
IBLOOP_HIDDEN int ibloop_cq_push(uint32_t cq, uint32_t cq_gen,
                                 const struct ibloop_wire_cqe *e);
IBLOOP_HIDDEN void ibloop_async_post(uint32_t ctx, uint32_t ctx_gen,
                                     uint32_t type, uint32_t kind,
                                     uint32_t idx, uint32_t gen);
IBLOOP_HIDDEN int ibloop_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
IBLOOP_HIDDEN int ibloop_req_notify_cq(struct ibv_cq *cq, int solicited);
IBLOOP_HIDDEN void ibloop_wait_acks(pthread_mutex_t *m, pthread_cond_t *cond,
                                   const uint32_t *done, uint32_t want,
                                   const uint32_t *done2, uint32_t want2,
                                   const char *what);

/* ibloop_mr.c */
struct ibloop_mr_snap {
    uint32_t proc, pd, access;
    uint64_t addr, length, iova;
};
IBLOOP_HIDDEN bool ibloop_mr_get(uint32_t key, struct ibloop_mr_snap *out);
/* translate [addr, addr+len) of key into the owner's virtual address */
enum { IBLOOP_KEY_OK, IBLOOP_KEY_BAD, IBLOOP_KEY_PD, IBLOOP_KEY_RANGE,
       IBLOOP_KEY_ACCESS };
IBLOOP_HIDDEN int ibloop_key_check(uint32_t key, uint32_t pd, uint32_t proc,
                                   uint64_t addr, uint64_t len,
                                   uint32_t need_access, uint64_t *va);
IBLOOP_HIDDEN long ibloop_reg_count_inc(void);
IBLOOP_HIDDEN int ibloop_av_from_attr(const struct ibv_ah_attr *a,
                                      struct ibloop_wire_av *av);
IBLOOP_HIDDEN void ibloop_av_to_attr(const struct ibloop_wire_av *av,
                                     struct ibv_ah_attr *a);

/* ibloop_qp.c / ibloop_modify.c */
IBLOOP_HIDDEN void ibloop_qp_attr_read(struct ibloop_wire_qp *q,
                                       struct ibloop_wire_qp_attr *out);
IBLOOP_HIDDEN void ibloop_qp_attr_write(struct ibloop_wire_qp *q,
                                        const struct ibloop_wire_qp_attr *a);
IBLOOP_HIDDEN void ibloop_qp_to_err_locked(struct ibloop_wire_qp *q,
                                           int event);
IBLOOP_HIDDEN void ibloop_qp_error(uint32_t idx, uint32_t gen, int event);
IBLOOP_HIDDEN void ibloop_qp_reset_locked(struct ibloop_wire_qp *q);
IBLOOP_HIDDEN void ibloop_sq_flush_locked(struct ibloop_wire_qp *q);
IBLOOP_HIDDEN struct ibv_qp *ibloop_create_qp_ex(struct ibv_context *context,
                                                 struct ibv_qp_init_attr_ex *ie);
IBLOOP_HIDDEN bool ibloop_rq_pop(struct ibloop_wire_rq *rq,
                                 _Atomic uint32_t *gen, uint32_t want_gen,
                                 struct ibloop_wire_rwqe *out,
                                 bool *limit_hit);
IBLOOP_HIDDEN void ibloop_rq_flush_locked(struct ibloop_wire_rq *rq,
                                          struct ibloop_wire_qp *q);
IBLOOP_HIDDEN int ibloop_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a,
                                   int mask);

/* ibloop_post.c */
IBLOOP_HIDDEN int ibloop_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
                                   struct ibv_send_wr **bad);
IBLOOP_HIDDEN int ibloop_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
                                   struct ibv_recv_wr **bad);
IBLOOP_HIDDEN int ibloop_post_srq_recv(struct ibv_srq *srq,
                                       struct ibv_recv_wr *wr,
                                       struct ibv_recv_wr **bad);

/* ibloop_exec.c */
/* Errors a requester causes on a responder QP are applied after the
 * requester's own QP lock is dropped (one QP lock at a time). */
struct ibloop_deferred {
    int n;
    struct {
        uint32_t idx, gen;
        int event; /* -1: none */
    } e[4];
};
IBLOOP_HIDDEN bool ibloop_sq_exec_locked(struct ibloop_qp *qp,
                                         struct ibloop_deferred *d);
IBLOOP_HIDDEN void ibloop_sq_after(struct ibloop_qp *qp, bool pending,
                                   struct ibloop_deferred *d);
IBLOOP_HIDDEN void ibloop_sq_run(struct ibloop_qp *qp, bool wait_lock);
IBLOOP_HIDDEN void ibloop_ctx_progress(struct ibloop_context *ctx,
                                       bool wait_lock);
IBLOOP_HIDDEN void ibloop_helper_stop(struct ibloop_context *ctx);
IBLOOP_HIDDEN void ibloop_port_check(void);
IBLOOP_HIDDEN int ibloop_port_wait_ms(void); /* -1: no link change due */
IBLOOP_HIDDEN void ibloop_port_reset(void);
IBLOOP_HIDDEN uint32_t ibloop_psn_packets(uint64_t len, uint32_t mtu);

/* ibloop_xfer.c: moving bytes between processes */
struct ibloop_iov {
    int n;
    struct iovec v[IBLOOP_MAX_SGE + 2];
};
IBLOOP_HIDDEN int ibloop_copy_to(pid_t pid, const struct ibloop_iov *local,
                                 const struct ibloop_iov *remote);
IBLOOP_HIDDEN int ibloop_copy_from(pid_t pid, const struct ibloop_iov *local,
                                   const struct ibloop_iov *remote);

/* ibloop_device.c */
IBLOOP_HIDDEN void ibloop_gid(uint32_t lid, int index, union ibv_gid *gid);
IBLOOP_HIDDEN int ibloop_gid_count(void);
IBLOOP_HIDDEN bool ibloop_gid_is_host(const uint8_t dgid[16], uint32_t lid);
IBLOOP_HIDDEN int ibloop_query_port(struct ibv_context *c, uint8_t port,
                                    struct ibv_port_attr *a, size_t len);
IBLOOP_HIDDEN void ibloop_fill_ops(struct ibloop_context *ctx);
IBLOOP_HIDDEN int ibloop_query_device_ex(struct ibv_context *context,
                                         const struct ibv_query_device_ex_input *in,
                                         struct ibv_device_attr_ex *attr,
                                         size_t size);

/* fault counters */
IBLOOP_HIDDEN void ibloop_fault_count_send(void);
IBLOOP_HIDDEN bool ibloop_fault_post_refused(void);
IBLOOP_HIDDEN bool ibloop_fault_drop_cqe(void);
IBLOOP_HIDDEN bool ibloop_fault_link_should_be_down(void);
IBLOOP_HIDDEN void ibloop_fault_die_in_lock(void);
IBLOOP_HIDDEN void ibloop_fault_reset(void);

#endif
