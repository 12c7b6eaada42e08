/*
 * shm LMT get through CMA: the receiver pulls the sender's data with
 * process_vm_readv straight into its own buffer — one copy, no copy buffer
 * — then answers DONE, which completes the send.
 *
 * The RTS cookie carries the sender's pid and segments (the first 14 inline,
 * the rest read from the sender's iovec array).  Reads go in steps of at
 * most CMA_STEP bytes and CMA_IOV segments per side, within the syscall's
 * IOV_MAX, so a long transfer never holds the progress engine for long.
 *
 * When the kernel refuses (EPERM: no ptrace permission, as in containers;
 * ENOSYS), the refusal is logged once and the transfer falls back to the
 * cooperative copy buffer: CTS if nothing was read yet, else a RESUME
 * cookie naming the offset, so the sender sends only the rest
 * (lmt_handle_cookie mid-transfer).  The pair then stays cooperative.
 *
 * rreq->nm: u64[0] bytes read, u64[1] remote segment index, u64[2] offset in
 * it, u64[3] segment count, u64[4] sender pid; the segment array is
 * rreq->tmpbuf (freed with the request).
 * sreq->nm: u64[1] = 1 when the RTS offered CMA.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "netmods/shm/shm_internal.h"

#define CMA_STEP (4u << 20)
#define CMA_IOV 64

static bool cma_usable(const tern_shm_t *s, const tern_shm_vc_t *v, size_t len)
{
    return s->ctx->cfg.shm_cma && !v->cma_refused && len >= s->ctx->cfg.shm_cma_threshold;
}

tern_status_t tern_shm_lmt_initiate(tern_vc_t *vc, tern_request_t *sreq, void *cookie,
                                    size_t *cookie_len)
{
    tern_shm_t *s = tern_shm_state(vc);
    tern_shm_vc_t *v = tern_shm_vc(vc);
    sreq->nm.u64[1] = 0;
    if (!cma_usable(s, v, sreq->msg_len)) {
        *cookie_len = 0;
        return TERN_OK;
    }
    tern_shm_cma_cookie_t *c = cookie;
    const tern_cursor_t *cur = &sreq->cur;
    c->kind = TERN_SHM_COOKIE_CMA;
    c->pid = (int32_t)getpid();
    c->len = sreq->msg_len;
    c->iovcnt = (uint32_t)cur->iovcnt;
    c->reserved = 0;
    c->iov_addr = (uint64_t)(uintptr_t)cur->iov; /* stays valid until DONE */
    uint32_t inl = c->iovcnt < TERN_SHM_CMA_INLINE ? c->iovcnt : TERN_SHM_CMA_INLINE;
    for (uint32_t i = 0; i < inl; i++) {
        c->seg[i].base = (uint64_t)(uintptr_t)cur->iov[i].iov_base;
        c->seg[i].len = cur->iov[i].iov_len;
    }
    *cookie_len = TERN_SHM_CMA_COOKIE_HDR + inl * sizeof(tern_shm_cma_seg_t);
    sreq->nm.u64[1] = 1;
    return TERN_OK;
}

/* process_vm_readv, or the test hook's refusal after fault_cma_after bytes. */
static ssize_t cma_read(tern_shm_t *s, pid_t pid, const struct iovec *l, int lc,
                        const struct iovec *r, int rc, uint64_t done)
{
    uint64_t limit = s->ctx->cfg.fault_cma_after;
    if (limit != 0 && done >= limit) {
        errno = EPERM;
        return -1;
    }
    return process_vm_readv(pid, l, (unsigned long)lc, r, (unsigned long)rc, 0);
}

tern_status_t tern_shm_cma_start_recv(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                      size_t cookie_len)
{
    tern_shm_t *s = tern_shm_state(vc);
    tern_shm_vc_t *v = tern_shm_vc(vc);
    tern_shm_cma_cookie_t c;
    memset(&c, 0, sizeof(c));
    memcpy(&c, cookie, cookie_len < sizeof(c) ? cookie_len : sizeof(c));
    uint32_t inl = c.iovcnt < TERN_SHM_CMA_INLINE ? c.iovcnt : TERN_SHM_CMA_INLINE;
    if (cookie_len < TERN_SHM_CMA_COOKIE_HDR || c.kind != TERN_SHM_COOKIE_CMA ||
        c.pid != v->pid || c.len != rreq->msg_len || c.iovcnt > (1u << 20) ||
        cookie_len != TERN_SHM_CMA_COOKIE_HDR + inl * sizeof(tern_shm_cma_seg_t))
        return tern_error(TERN_ERR_MALFORMED,
                          "CMA cookie from rank %d is malformed (kind %u, pid %d vs %d, %u segments)",
                          vc->rank, c.kind, c.pid, v->pid, c.iovcnt);
    if (tern_lmt_track(vc, rreq) == 0)
        return TERN_ERR_NO_MEMORY;
    struct iovec *segs = malloc(sizeof(*segs) * (c.iovcnt ? c.iovcnt : 1));
    if (segs == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "%u CMA segments", c.iovcnt);
    for (uint32_t i = 0; i < inl; i++) {
        segs[i].iov_base = (void *)(uintptr_t)c.seg[i].base;
        segs[i].iov_len = c.seg[i].len;
    }
    rreq->tmpbuf = segs;
    rreq->nm.u64[0] = rreq->nm.u64[1] = rreq->nm.u64[2] = 0;
    rreq->nm.u64[3] = c.iovcnt;
    rreq->nm.u64[4] = (uint64_t)c.pid;
    if (c.iovcnt > inl) {
        /* the rest of the sender's iovec array, read from the sender */
        struct iovec l = {segs, sizeof(*segs) * c.iovcnt};
        struct iovec r = {(void *)(uintptr_t)c.iov_addr, sizeof(*segs) * c.iovcnt};
        if (cma_read(s, (pid_t)c.pid, &l, 1, &r, 1, 0) != (ssize_t)l.iov_len)
            rreq->nm.u64[3] = UINT64_MAX; /* unreadable: progress falls back */
    }
    tern_list_push_tail(&v->cma_rxq, &rreq->link);
    return TERN_OK;
}

static void cma_finish(tern_vc_t *vc, tern_request_t *r)
{
    free(r->tmpbuf); /* the segment array, not payload: nothing to unpack */
    r->tmpbuf = NULL;
    tern_pkt_hdr_t h = {.type = TERN_PKT_DONE, .sreq = r->remote_id};
    tern_status_t st = tern_send_ctrl(vc, &h, NULL, 0);
    if (st != TERN_OK) {
        tern_request_complete(r, st);
        return;
    }
    tern_recv_data_complete(r);
}

/* The kernel refused: continue through the copy buffer from `done`. */
static tern_status_t cma_fall_back(tern_vc_t *vc, tern_request_t *r, int err)
{
    static bool warned;
    tern_shm_vc_t *v = tern_shm_vc(vc);
    uint64_t done = r->nm.u64[0];
    if (!warned) {
        warned = true;
        tern_warn("CMA (process_vm_readv) from local rank %d refused: %s; large messages on this "
                  "pair now use the cooperative copy buffer (TERN_SHM_CMA=0 silences this)",
                  vc->rank, strerror(err));
    }
    v->cma_refused = true;
    free(r->tmpbuf);
    r->tmpbuf = NULL;
    if (done == 0)
        return tern_shm_lmt_start_coop_recv(vc, r);
    uint64_t id = tern_lmt_track(vc, r);
    if (id == 0)
        return TERN_ERR_NO_MEMORY;
    tern_shm_resume_cookie_t rc = {.kind = TERN_SHM_COOKIE_RESUME, .offset = done, .rreq_id = id};
    tern_pkt_hdr_t h = {.type = TERN_PKT_COOKIE, .sreq = r->remote_id,
                        .cookie_len = (uint32_t)sizeof(rc)};
    r->nm.u64[0] = done; /* the copy-buffer receive counts on from here */
    tern_status_t st = tern_send_ctrl(vc, &h, &rc, sizeof(rc));
    if (st != TERN_OK)
        return st;
    tern_list_push_tail(&v->lmt_rxq, &r->link);
    return TERN_OK;
}

/* One step of the CMA get at the head of the queue.  Returns work done. */
unsigned tern_shm_cma_progress(tern_shm_t *s, tern_shm_vc_t *v)
{
    tern_request_t *r = TERN_CONTAINER_OF(v->cma_rxq.next, tern_request_t, link);
    tern_vc_t *vc = v->vc;
    uint64_t want = r->msg_len < r->cur.total ? r->msg_len : r->cur.total;
    const struct iovec *segs = r->tmpbuf;
    uint64_t nseg = r->nm.u64[3];
    pid_t pid = (pid_t)r->nm.u64[4];
    struct iovec l[CMA_IOV], rv[CMA_IOV];
    ssize_t got = 0;
    int err = 0;

    if (nseg == UINT64_MAX) {
        err = EPERM; /* the sender's iovec array could not be read */
    } else if (r->nm.u64[0] < want) {
        size_t lbytes, rbytes = 0;
        int lc = tern_cursor_slice(&r->cur, l, CMA_IOV, CMA_STEP, &lbytes);
        int rc = 0;
        uint64_t idx = r->nm.u64[1], off = r->nm.u64[2];
        for (; idx < nseg && rc < CMA_IOV && rbytes < lbytes; idx++, off = 0) {
            size_t n = segs[idx].iov_len - off;
            if (n == 0)
                continue;
            if (n > lbytes - rbytes)
                n = lbytes - rbytes;
            rv[rc].iov_base = (char *)segs[idx].iov_base + off;
            rv[rc].iov_len = n;
            rbytes += n;
            rc++;
        }
        if (rbytes == 0) {
            tern_vc_fail(vc, TERN_ERR_MALFORMED, "CMA segments shorter than the message");
            return 1;
        }
        /* both sides must describe the same byte count: trim the local slice */
        size_t keep = rbytes;
        int k = 0;
        for (; k < lc && keep > 0; k++) {
            if (l[k].iov_len > keep)
                l[k].iov_len = keep;
            keep -= l[k].iov_len;
        }
        lc = k;
        got = cma_read(s, pid, l, lc, rv, rc, r->nm.u64[0]);
        if (got < 0)
            err = errno;
        else if (got == 0)
            err = EFAULT; /* no progress: the sender's segments are not readable */
    }
    if (err == EPERM || err == ENOSYS || err == EACCES) {
        tern_list_del(&r->link);
        tern_status_t st = cma_fall_back(vc, r, err);
        if (st != TERN_OK)
            tern_vc_fail(vc, st, tern_last_error());
        return 1;
    }
    if (err != 0) {
        char why[160];
        snprintf(why, sizeof(why), "process_vm_readv from pid %d: %s", (int)pid, strerror(err));
        tern_vc_fail(vc, err == ESRCH ? TERN_ERR_PEER_FAILED : TERN_ERR_MALFORMED, why);
        return 1;
    }
    /* advance both positions by what the kernel moved */
    tern_cursor_advance(&r->cur, (size_t)got);
    r->nm.u64[0] += (uint64_t)got;
    for (uint64_t moved = (uint64_t)got; moved > 0 && r->nm.u64[1] < nseg;) {
        size_t room = segs[r->nm.u64[1]].iov_len - r->nm.u64[2];
        size_t n = moved < room ? moved : room;
        r->nm.u64[2] += n;
        moved -= n;
        if (r->nm.u64[2] == segs[r->nm.u64[1]].iov_len) {
            r->nm.u64[1]++;
            r->nm.u64[2] = 0;
        }
    }
    if (r->nm.u64[0] >= want) {
        tern_list_del(&r->link);
        cma_finish(vc, r);
    }
    return 1;
}

/* Sender: the receiver lost CMA mid-transfer; send the rest from offset. */
tern_status_t tern_shm_lmt_handle_cookie(tern_vc_t *vc, tern_request_t *sreq, const void *cookie,
                                         size_t cookie_len)
{
    tern_shm_vc_t *v = tern_shm_vc(vc);
    tern_shm_resume_cookie_t rc;
    if (sreq->kind != TERN_REQ_SEND || cookie_len != sizeof(rc))
        return tern_error(TERN_ERR_MALFORMED, "COOKIE from rank %d: not a resume cookie", vc->rank);
    memcpy(&rc, cookie, sizeof(rc));
    if (rc.kind != TERN_SHM_COOKIE_RESUME || rc.offset > sreq->msg_len || rc.rreq_id == 0 ||
        !sreq->nm.u64[1])
        return tern_error(TERN_ERR_MALFORMED, "resume cookie from rank %d: offset %llu of %zu",
                          vc->rank, (unsigned long long)rc.offset, sreq->msg_len);
    v->cma_refused = true;
    sreq->remote_id = rc.rreq_id;
    tern_cursor_advance(&sreq->cur, (size_t)rc.offset);
    sreq->nm.u64[0] = rc.offset;
    tern_list_push_tail(&v->lmt_txq, &sreq->link);
    return TERN_OK;
}

tern_status_t tern_shm_lmt_done_send(tern_vc_t *vc, tern_request_t *sreq)
{
    if (!sreq->nm.u64[1])
        return tern_error(TERN_ERR_MALFORMED, "DONE from rank %d for a send that offered no CMA",
                          vc->rank);
    tern_request_complete(sreq, TERN_OK);
    return TERN_OK;
}
