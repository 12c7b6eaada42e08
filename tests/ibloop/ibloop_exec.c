/*
 * ibloop: executing send queues -- the requester side of RC and UD.
 *
 * The owner of a QP runs its send queue in order, under the QP lock, inside
 * its own verbs calls (ibv_post_send, ibv_poll_cq) and in a helper thread
 * that only exists to retry WRs waiting on a timer (RNR, no response).
 * A WR either completes, waits (the whole queue behind it waits: RC is
 * strictly ordered), or fails (error completion, QP to the error state,
 * everything behind it flushed).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "ibloop.h"

enum { X_DONE, X_WAIT, X_ERR };

struct xres {
    int outcome;
    uint32_t status;     /* X_ERR */
    int event;           /* X_ERR: async event on our QP, -1 none */
    uint64_t until;      /* X_WAIT */
    uint32_t byte_len;   /* X_DONE */
};

/* The RNR NAK timer of the IB spec, in microseconds (encoding 0..31). */
static const uint32_t rnr_us[32] = {
    655360, 10,    20,    30,    40,    60,     80,     120,    160,   240,   320,
    480,    640,   960,   1280,  1920,  2560,   3840,   5120,   7680,  10240, 15360,
    20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};

uint32_t ibloop_psn_packets(uint64_t len, uint32_t mtu_enum)
{
    uint64_t mtu = 128ull << (mtu_enum ? mtu_enum : ibloop_env()->mtu);
    uint64_t n = (len + mtu - 1) / mtu;

    return n ? (uint32_t)n : 1;
}

/* the whole retry budget of (timeout, retry_cnt), capped by IBLOOP_TIMEOUT_MS */
static uint64_t timeout_ns(const struct ibloop_wire_qp_attr *a)
{
    uint64_t cap = (uint64_t)ibloop_env()->timeout_ms * 1000000ull;
    uint64_t one, total;

    if (a->timeout == 0) /* infinite in IB */
        return cap;
    one = 4096ull << a->timeout;
    total = one * (a->retry_cnt + 1ull);
    return total < cap ? total : cap;
}

static void defer(struct ibloop_deferred *d, uint32_t idx, uint32_t gen, int event)
{
    if (d->n < (int)(sizeof(d->e) / sizeof(d->e[0]))) {
        d->e[d->n].idx = idx;
        d->e[d->n].gen = gen;
        d->e[d->n].event = event;
        d->n++;
    }
}

/* ---- the peer ------------------------------------------------------------ */
struct peer {
    uint32_t idx, gen;
    struct ibloop_wire_qp *q;
    struct ibloop_wire_qp_attr a;
    pid_t pid;
    uint32_t lid;
};

static bool port_up(uint32_t proc)
{
    return !atomic_load(&ibloop_proc(proc)->port_down);
}

/* does the address vector reach host 'lid'? */
static bool av_reaches(const struct ibloop_wire_av *av, uint32_t lid)
{
    if (ibloop_fab.roce)
        return av->is_global && ibloop_gid_is_host(av->dgid, lid);
    if (av->dlid != lid)
        return false;
    return !av->is_global || ibloop_gid_is_host(av->dgid, lid);
}

static bool find_qp(uint32_t qpn, uint32_t type, struct peer *p)
{
    struct ibloop_wire_proc *pw;
    uint32_t st;

    p->idx = qpn & (IBLOOP_NQP - 1);
    p->q = ibloop_qp(p->idx);
    p->gen = atomic_load(&p->q->gen);
    if (!p->gen || p->q->qpn != qpn || p->q->type != type)
        return false;
    st = atomic_load(&p->q->state);
    if (st != IBV_QPS_RTR && st != IBV_QPS_RTS)
        return false;
    pw = ibloop_proc(p->q->proc);
    if (!atomic_load(&pw->gen) || !port_up(p->q->proc))
        return false;
    p->pid = pw->pid;
    p->lid = pw->lid;
    ibloop_qp_attr_read(p->q, &p->a);
    return atomic_load(&p->q->gen) == p->gen;
}

/* An RC responder answers only if it is connected back to us. */
static bool rc_peer(struct ibloop_wire_qp *q, const struct ibloop_wire_qp_attr *a,
                    struct peer *p)
{
    if (!port_up(ibloop_fab.proc) || !find_qp(a->dest_qpn, IBV_QPT_RC, p))
        return false;
    if (!av_reaches(&a->av, p->lid))
        return false;
    return p->a.dest_qpn == q->qpn && av_reaches(&p->a.av, ibloop_fab.lid);
}

/* ---- gather/scatter lists -------------------------------------------------- */
static int local_iov(struct ibloop_qp *qp, struct ibloop_wire_swqe *w, uint32_t need,
                     struct ibloop_iov *iov)
{
    struct ibloop_wire_sge *s = (struct ibloop_wire_sge *)(w + 1);
    uint64_t va;

    iov->n = 0;
    if (w->flags & IBV_SEND_INLINE) {
        iov->v[0].iov_base = w + 1;
        iov->v[0].iov_len = w->inline_len;
        iov->n = 1;
        return 0;
    }
    for (uint32_t i = 0; i < w->num_sge; i++) {
        if (!s[i].length)
            continue;
        if (ibloop_key_check(s[i].lkey, qp->pd->id, ibloop_fab.proc, s[i].addr,
                             s[i].length, need, &va) != IBLOOP_KEY_OK)
            return -1;
        iov->v[iov->n].iov_base = (void *)(uintptr_t)va;
        iov->v[iov->n].iov_len = s[i].length;
        iov->n++;
    }
    return 0;
}

/* the responder's receive buffers for 'len' bytes from offset 'skip' */
static int recv_iov(const struct ibloop_wire_rwqe *r, const struct peer *p, uint64_t skip,
                    uint64_t len, struct ibloop_iov *iov)
{
    uint64_t va, end = skip + len, pos = 0;

    iov->n = 0;
    for (uint32_t i = 0; i < r->num_sge && pos < end; i++) {
        uint64_t l = r->sge[i].length, from, to;
        if (!l)
            continue;
        if (ibloop_key_check(r->sge[i].lkey, p->q->pd, p->q->proc, r->sge[i].addr, l,
                             IBV_ACCESS_LOCAL_WRITE, &va) != IBLOOP_KEY_OK)
            return -1;
        from = pos > skip ? 0 : skip - pos;
        to = pos + l > end ? end - pos : l;
        if (from < to) {
            iov->v[iov->n].iov_base = (void *)(uintptr_t)(va + from);
            iov->v[iov->n].iov_len = to - from;
            iov->n++;
        }
        pos += l;
    }
    return 0;
}

static uint64_t rwqe_len(const struct ibloop_wire_rwqe *r)
{
    uint64_t t = 0;

    for (uint32_t i = 0; i < r->num_sge; i++)
        t += r->sge[i].length;
    return t;
}

/* ---- receive side helpers ------------------------------------------------- */
union rwqe_buf {
    struct ibloop_wire_rwqe w;
    uint8_t b[sizeof(struct ibloop_wire_rwqe) + IBLOOP_MAX_SGE * sizeof(struct ibloop_wire_sge)];
};

static bool peer_pop(struct peer *p, union rwqe_buf *b)
{
    struct ibloop_wire_rq *rq;
    _Atomic uint32_t *gen;
    uint32_t want, ctx, ctx_gen;
    bool hit = false, ok;

    if (p->q->srq_gen) {
        struct ibloop_wire_srq *s = ibloop_srq(p->q->srq);
        rq = &s->rq;
        gen = &s->gen;
        want = p->q->srq_gen;
        ctx = s->ctx;
        ctx_gen = s->ctx_gen;
    } else {
        rq = &p->q->rq;
        gen = &p->q->gen;
        want = p->gen;
        ctx = ctx_gen = 0;
    }
    ok = ibloop_rq_pop(rq, gen, want, &b->w, &hit);
    if (hit)
        ibloop_async_post(ctx, ctx_gen, IBV_EVENT_SRQ_LIMIT_REACHED, IBLOOP_OBJ_SRQ,
                          p->q->srq, p->q->srq_gen);
    return ok;
}

/* complete a receive on the responder; false if its CQ overflowed */
static void peer_cqe(struct peer *p, struct ibloop_wire_cqe *e, struct ibloop_deferred *d)
{
    e->qp_num = p->q->qpn;
    e->qp_idx = p->idx;
    e->qp_gen = p->gen;
    if (ibloop_cq_push(p->q->recv_cq, p->q->recv_cq_gen, e) == IBLOOP_PUSH_OVERFLOW)
        defer(d, p->idx, p->gen, IBV_EVENT_QP_FATAL);
    else if (atomic_load(&p->q->state) == IBV_QPS_RTR &&
             !atomic_exchange(&p->q->comm_est, 1))
        ibloop_async_post(p->q->ctx, p->q->ctx_gen, IBV_EVENT_COMM_EST, IBLOOP_OBJ_QP,
                          p->idx, p->gen);
}

static void peer_error_cqe(struct peer *p, uint64_t wr_id, uint32_t status,
                           struct ibloop_deferred *d)
{
    struct ibloop_wire_cqe e;

    memset(&e, 0, sizeof(e));
    e.wr_id = wr_id;
    e.status = status;
    e.vendor_err = 0x80 | status;
    peer_cqe(p, &e, d);
    defer(d, p->idx, p->gen, -1);
}

/* ---- RC ------------------------------------------------------------------- */
static struct xres wait_or_fail(struct ibloop_wire_qp *q, const struct ibloop_wire_qp_attr *a,
                                uint64_t now)
{
    struct xres r = {.outcome = X_WAIT, .event = -1};

    if (!q->in_retry) {
        q->in_retry = 1;
        q->retry_deadline = now + timeout_ns(a);
    }
    if (now >= q->retry_deadline) {
        r.outcome = X_ERR;
        r.status = IBV_WC_RETRY_EXC_ERR;
        return r;
    }
    r.until = now + 1000000ull < q->retry_deadline ? now + 1000000ull : q->retry_deadline;
    return r;
}

static struct xres rnr_wait(struct ibloop_wire_qp *q, const struct ibloop_wire_qp_attr *a,
                            const struct peer *p, uint64_t now)
{
    struct xres r = {.outcome = X_WAIT, .event = -1};

    if (a->rnr_retry != 7 && q->rnr_used >= a->rnr_retry) {
        r.outcome = X_ERR;
        r.status = IBV_WC_RNR_RETRY_EXC_ERR;
        return r;
    }
    q->in_retry = 0; /* an RNR NAK is an answer */
    q->rnr_used++;
    r.until = now + rnr_us[p->a.min_rnr_timer & 31] * 1000ull;
    return r;
}

static struct xres err(uint32_t status)
{
    return (struct xres){.outcome = X_ERR, .status = status, .event = -1};
}

static void mr_leave(struct ibloop_wire_mr *m)
{
    if (m != NULL)
        atomic_fetch_sub_explicit(&m->users, 1, memory_order_release);
}

static bool rkey_ok(const struct peer *p, uint32_t rkey, uint64_t addr, uint64_t len,
                    uint32_t access, uint64_t *va)
{
    if (!(p->a.access & access))
        return false;
    return ibloop_key_check(rkey, p->q->pd, p->q->proc, addr, len, access, va) ==
           IBLOOP_KEY_OK;
}

static struct xres exec_rc(struct ibloop_qp *qp, struct ibloop_wire_qp *q,
                           struct ibloop_wire_swqe *w, struct ibloop_deferred *d)
{
    struct ibloop_wire_qp_attr a;
    struct ibloop_iov liov, riov;
    struct ibloop_wire_cqe e;
    union rwqe_buf rb;
    struct peer p;
    uint64_t va = 0, now = ibloop_now_ns();
    bool is_send = w->opcode == IBV_WR_SEND || w->opcode == IBV_WR_SEND_WITH_IMM;
    bool imm = w->opcode == IBV_WR_SEND_WITH_IMM || w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
    bool read = w->opcode == IBV_WR_RDMA_READ;
    bool atomic = w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
                  w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
    struct ibloop_wire_mr *mr_in = NULL; /* the registration this access is inside */
    int rc;

    ibloop_qp_attr_read(q, &a);
    if (w->length > IBLOOP_MAX_MSG)
        return err(IBV_WC_LOC_LEN_ERR);
    if (local_iov(qp, w, read || atomic ? IBV_ACCESS_LOCAL_WRITE : 0, &liov))
        return err(IBV_WC_LOC_PROT_ERR);
    if ((read || atomic) && a.max_rd_atomic == 0)
        return err(IBV_WC_LOC_QP_OP_ERR);
    if (!rc_peer(q, &a, &p) || atomic_load(&p.q->epsn) != q->npsn)
        return wait_or_fail(q, &a, now); /* nobody answers: retry, time out */
    /* with nothing to move no CMA call can find the responder gone, so ask
     * (zero-length sends and writes are how verbs programs probe a peer) */
    if (w->length == 0 && !ibloop_proc_alive(p.q->proc))
        return wait_or_fail(q, &a, now);

    if ((read || atomic) && p.a.max_dest_rd_atomic == 0) {
        defer(d, p.idx, p.gen, IBV_EVENT_QP_REQ_ERR);
        return err(IBV_WC_REM_INV_REQ_ERR);
    }
    if (atomic && (w->remote_addr & 7)) {
        defer(d, p.idx, p.gen, IBV_EVENT_QP_REQ_ERR);
        return err(IBV_WC_REM_INV_REQ_ERR);
    }
    if (!is_send && (w->length || atomic)) {
        uint32_t acc = read     ? IBV_ACCESS_REMOTE_READ
                       : atomic ? IBV_ACCESS_REMOTE_ATOMIC
                                : IBV_ACCESS_REMOTE_WRITE;
        if (!rkey_ok(&p, w->rkey, w->remote_addr, atomic ? 8 : w->length, acc, &va)) {
            defer(d, p.idx, p.gen, IBV_EVENT_QP_ACCESS_ERR);
            return err(IBV_WC_REM_ACCESS_ERR);
        }
        /* inside the registration until the copy is done (ibloop_wire.h,
         * struct ibloop_wire_mr: users); a deregistration meanwhile wins */
        mr_in = ibloop_mr(w->rkey >> 8);
        atomic_fetch_add(&mr_in->users, 1);
        if (atomic_load(&mr_in->key) != w->rkey) {
            atomic_fetch_sub(&mr_in->users, 1);
            defer(d, p.idx, p.gen, IBV_EVENT_QP_ACCESS_ERR);
            return err(IBV_WC_REM_ACCESS_ERR);
        }
    }
    if ((is_send || imm) && !peer_pop(&p, &rb)) {
        mr_leave(mr_in);
        if (!ibloop_proc_alive(p.q->proc))
            return wait_or_fail(q, &a, now); /* a dead process sends no RNR NAK */
        return rnr_wait(q, &a, &p, now);
    }

    memset(&e, 0, sizeof(e));
    if (is_send) {
        if (rwqe_len(&rb.w) < w->length) {
            peer_error_cqe(&p, rb.w.wr_id, IBV_WC_LOC_LEN_ERR, d);
            return err(IBV_WC_REM_INV_REQ_ERR);
        }
        if (recv_iov(&rb.w, &p, 0, w->length, &riov)) {
            peer_error_cqe(&p, rb.w.wr_id, IBV_WC_LOC_PROT_ERR, d);
            return err(IBV_WC_REM_OP_ERR);
        }
        rc = ibloop_copy_to(p.pid, &liov, &riov);
    } else if (atomic) {
        uint64_t old, nv;
        struct ibloop_iov one = {.n = 1};
        one.v[0].iov_base = (void *)(uintptr_t)va;
        one.v[0].iov_len = 8;
        riov = one;
        one.v[0].iov_base = &old;
        ibloop_lock(&ibloop_fab.hdr->atomic_lock);
        rc = ibloop_copy_from(p.pid, &one, &riov);
        if (!rc) {
            nv = w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ? old + w->compare_add
                 : old == w->compare_add                  ? w->swap
                                                          : old;
            one.v[0].iov_base = &nv;
            rc = nv == old ? 0 : ibloop_copy_to(p.pid, &one, &riov);
        }
        ibloop_unlock(&ibloop_fab.hdr->atomic_lock);
        if (!rc)
            memcpy(liov.v[0].iov_base, &old, 8);
    } else {
        riov.n = w->length ? 1 : 0;
        riov.v[0].iov_base = (void *)(uintptr_t)va;
        riov.v[0].iov_len = w->length;
        rc = read ? ibloop_copy_from(p.pid, &liov, &riov) : ibloop_copy_to(p.pid, &liov, &riov);
    }
    mr_leave(mr_in);
    if (rc == ESRCH || rc == EPERM)
        return wait_or_fail(q, &a, now); /* the responder is gone */
    if (rc) {
        if (is_send)
            peer_error_cqe(&p, rb.w.wr_id, IBV_WC_LOC_PROT_ERR, d);
        else
            defer(d, p.idx, p.gen, IBV_EVENT_QP_ACCESS_ERR);
        return err(is_send ? IBV_WC_REM_OP_ERR : IBV_WC_REM_ACCESS_ERR);
    }
    q->npsn = (q->npsn + ibloop_psn_packets(w->length, a.path_mtu)) & 0xffffff;
    atomic_store(&p.q->epsn, q->npsn);
    if (is_send || imm) {
        e.wr_id = rb.w.wr_id;
        e.opcode = is_send ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM;
        e.byte_len = (uint32_t)w->length;
        e.imm = imm ? w->imm : 0;
        e.wc_flags = imm ? IBV_WC_WITH_IMM : 0;
        e.src_qp = q->qpn;
        e.slid = ibloop_fab.roce ? 0 : (uint16_t)ibloop_fab.lid;
        e.sl = a.av.sl;
        e.solicited = (w->flags & IBV_SEND_SOLICITED) != 0;
        peer_cqe(&p, &e, d);
    }
    return (struct xres){.outcome = X_DONE, .byte_len = (uint32_t)w->length};
}

/* ---- UD ------------------------------------------------------------------- */
static void fill_grh(uint8_t grh[40], const struct ibloop_wire_av *av, uint64_t len)
{
    union ibv_gid sgid;
    uint32_t vtf = 6u << 28 | (uint32_t)av->traffic_class << 20 | (av->flow_label & 0xfffff);

    memset(grh, 0, 40);
    ibloop_gid(ibloop_fab.lid, (int)av->sgid_index, &sgid);
    if (ibloop_fab.roce && av->sgid_index == 1) {
        /* RoCE v2 over IPv4: the IPv4 header sits in the last 20 bytes */
        uint8_t *ip = grh + 20;
        uint16_t tot = (uint16_t)(20 + 8 + 12 + len + 4);
        ip[0] = 0x45;
        ip[1] = av->traffic_class;
        ip[2] = (uint8_t)(tot >> 8);
        ip[3] = (uint8_t)tot;
        ip[8] = av->hop_limit ? av->hop_limit : 64;
        ip[9] = 17;
        memcpy(ip + 12, sgid.raw + 12, 4);
        memcpy(ip + 16, av->dgid + 12, 4);
        return;
    }
    vtf = htobe32(vtf);
    memcpy(grh, &vtf, 4);
    grh[4] = (uint8_t)(len >> 8);
    grh[5] = (uint8_t)len;
    grh[6] = 0x1b;
    grh[7] = av->hop_limit;
    memcpy(grh + 8, sgid.raw, 16);
    memcpy(grh + 24, av->dgid, 16);
}

static struct xres exec_ud(struct ibloop_qp *qp, struct ibloop_wire_qp *q,
                           struct ibloop_wire_swqe *w, struct ibloop_deferred *d)
{
    struct xres done = {.outcome = X_DONE, .byte_len = (uint32_t)w->length};
    struct ibloop_wire_qp_attr a;
    struct ibloop_iov liov, riov, src;
    struct ibloop_wire_cqe e;
    union rwqe_buf rb;
    struct peer p;
    uint8_t grh[40];
    bool has_grh = w->av.is_global || ibloop_fab.roce;
    uint32_t qkey;

    ibloop_qp_attr_read(q, &a);
    if (w->length > IBLOOP_MTU_ENUM_BYTES(ibloop_env()->mtu))
        return err(IBV_WC_LOC_LEN_ERR);
    if (local_iov(qp, w, 0, &liov))
        return err(IBV_WC_LOC_PROT_ERR);
    qkey = (w->remote_qkey & IBLOOP_DEFAULT_QKEY_MSB) ? a.qkey : w->remote_qkey;
    /* a datagram nobody takes is dropped: the sender never knows */
    if (!port_up(ibloop_fab.proc) || !find_qp(w->remote_qpn, IBV_QPT_UD, &p) ||
        !av_reaches(&w->av, p.lid) || p.a.qkey != qkey || !peer_pop(&p, &rb))
        return done;
    if (rwqe_len(&rb.w) < IBLOOP_GRH_BYTES + w->length) {
        peer_error_cqe(&p, rb.w.wr_id, IBV_WC_LOC_LEN_ERR, d);
        return done;
    }
    if (recv_iov(&rb.w, &p, has_grh ? 0 : IBLOOP_GRH_BYTES,
                 (has_grh ? IBLOOP_GRH_BYTES : 0) + w->length, &riov)) {
        peer_error_cqe(&p, rb.w.wr_id, IBV_WC_LOC_PROT_ERR, d);
        return done;
    }
    src.n = 0;
    if (has_grh) {
        fill_grh(grh, &w->av, w->length);
        src.v[0].iov_base = grh;
        src.v[0].iov_len = sizeof(grh);
        src.n = 1;
    }
    for (int i = 0; i < liov.n; i++)
        src.v[src.n++] = liov.v[i];
    if (ibloop_copy_to(p.pid, &src, &riov))
        return done;
    memset(&e, 0, sizeof(e));
    e.wr_id = rb.w.wr_id;
    e.opcode = IBV_WC_RECV;
    e.byte_len = (uint32_t)(w->length + IBLOOP_GRH_BYTES);
    e.imm = w->opcode == IBV_WR_SEND_WITH_IMM ? w->imm : 0;
    e.wc_flags = (has_grh ? IBV_WC_GRH : 0) |
                 (w->opcode == IBV_WR_SEND_WITH_IMM ? IBV_WC_WITH_IMM : 0);
    e.src_qp = q->qpn;
    e.slid = ibloop_fab.roce ? 0 : (uint16_t)ibloop_fab.lid;
    e.sl = w->av.sl;
    e.solicited = (w->flags & IBV_SEND_SOLICITED) != 0;
    peer_cqe(&p, &e, d);
    return done;
}

/* ---- the send queue ---------------------------------------------------------- */
static uint32_t wc_opcode(uint32_t op)
{
    switch (op) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
        return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ:
        return IBV_WC_RDMA_READ;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
        return IBV_WC_COMP_SWAP;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
        return IBV_WC_FETCH_ADD;
    default:
        return IBV_WC_SEND;
    }
}

/* our own completion; false if our send CQ overflowed */
static bool send_cqe(struct ibloop_qp *qp, struct ibloop_wire_qp *q,
                     struct ibloop_wire_swqe *w, uint64_t sq_idx, const struct xres *r)
{
    struct ibloop_wire_cqe e;

    memset(&e, 0, sizeof(e));
    e.wr_id = w->wr_id;
    e.qp_num = q->qpn;
    e.qp_idx = qp->idx;
    e.qp_gen = qp->gen;
    e.is_send = 1;
    e.sq_idx = sq_idx;
    if (r->outcome == X_ERR) {
        e.status = r->status;
        e.vendor_err = 0x80 | r->status;
    } else {
        e.opcode = wc_opcode(w->opcode);
        e.byte_len = r->byte_len;
        if (ibloop_fault_drop_cqe()) {
            IBLOOP_DBG("fault: dropping a send completion (IBLOOP_FAULT_DROP_CQE)");
            return true;
        }
    }
    return ibloop_cq_push(q->send_cq, q->send_cq_gen, &e) != IBLOOP_PUSH_OVERFLOW;
}

bool ibloop_sq_exec_locked(struct ibloop_qp *qp, struct ibloop_deferred *d)
{
    struct ibloop_wire_qp *q = ibloop_qp(qp->idx);

    for (;;) {
        uint32_t st = atomic_load(&q->state);
        struct ibloop_wire_swqe *w;
        struct xres r;

        if (st == IBV_QPS_ERR) {
            ibloop_sq_flush_locked(q);
            return false;
        }
        if (st != IBV_QPS_RTS || q->sq_head == q->sq_tail)
            return false;
        if (q->next_try && ibloop_now_ns() < q->next_try)
            return true;
        w = ibloop_at(q->sq_ring + (q->sq_head & (q->sq_size - 1)) * q->sq_stride);
        r = q->type == IBV_QPT_RC ? exec_rc(qp, q, w, d) : exec_ud(qp, q, w, d);
        if (r.outcome == X_WAIT) {
            q->next_try = r.until;
            return true;
        }
        q->next_try = 0;
        q->in_retry = 0;
        q->rnr_used = 0;
        q->sq_head++;
        if (r.outcome == X_ERR) {
            IBLOOP_DBG("QP %#x: WR %#llx failed: %s", q->qpn, (unsigned long long)w->wr_id,
                       ibv_wc_status_str(r.status));
            send_cqe(qp, q, w, q->sq_head, &r);
            ibloop_qp_to_err_locked(q, r.event);
            return false;
        }
        if ((w->flags & IBV_SEND_SIGNALED) && !send_cqe(qp, q, w, q->sq_head, &r)) {
            ibloop_qp_to_err_locked(q, IBV_EVENT_QP_FATAL);
            return false;
        }
    }
}
