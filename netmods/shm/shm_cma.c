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
 * sreq->nm: u64[TERN_SHM_LMT_STATE] = GET_OFFERED when the RTS offered CMA.
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

bool tern_shm_cma_allowed(const tern_shm_t *s, const tern_shm_vc_t *v)
{
    return s->cfg->cma && !v->cma_refused;
}

size_t tern_shm_cma_cookie(void *cookie, uint32_t kind, const tern_cursor_t *cur, uint64_t len)
{
    tern_shm_cma_cookie_t *c = cookie;
    c->kind = kind;
    c->pid = (int32_t)getpid();
    c->len = len;
    c->iovcnt = (uint32_t)cur->iovcnt;
    c->reserved = 0;
    c->iov_addr = (uint64_t)(uintptr_t)cur->iov; /* stays valid until DONE */
    uint32_t inl = c->iovcnt < TERN_SHM_CMA_INLINE ? c->iovcnt : TERN_SHM_CMA_INLINE;
    for (uint32_t i = 0; i < inl; i++) {
        c->seg[i].base = (uint64_t)(uintptr_t)cur->iov[i].iov_base;
        c->seg[i].len = cur->iov[i].iov_len;
    }
    return TERN_SHM_CMA_COOKIE_HDR + inl * sizeof(tern_shm_cma_seg_t);
}

unsigned tern_shm_lmt_modes(void *state)
{
    const tern_shm_t *s = state;
    unsigned m = 1u << TERN_LMT_COOP;
    if (s->cfg->cma)
        m |= 1u << TERN_LMT_GET | 1u << TERN_LMT_PUT;
    return m;
}

/* By size (TERN_LMT_MODE=auto): the CMA get from TERN_SHM_CMA_THRESHOLD on
 * (while the kernel allows it with this peer), the copy buffer below. */
int tern_shm_lmt_choose(tern_vc_t *vc, size_t len)
{
    const tern_shm_t *s = tern_shm_state(vc);
    if (tern_shm_cma_allowed(s, tern_shm_vc(vc)) && len >= s->cfg->cma_threshold)
        return TERN_LMT_GET;
    return TERN_LMT_COOP;
}

tern_status_t tern_shm_lmt_initiate(tern_vc_t *vc, tern_request_t *sreq, int *mode, void *cookie,
                                    size_t *cookie_len)
{
    tern_shm_t *s = tern_shm_state(vc);
    tern_shm_vc_t *v = tern_shm_vc(vc);
    tern_shm_req(sreq)->state = TERN_SHM_LMT_PLAIN;
    *cookie_len = 0;
    if ((*mode == TERN_LMT_GET || *mode == TERN_LMT_PUT) && !tern_shm_cma_allowed(s, v))
        *mode = TERN_LMT_COOP; /* refused with this peer before: the copy buffer */
    if (*mode != TERN_LMT_GET)
        return TERN_OK;
    *cookie_len = tern_shm_cma_cookie(cookie, TERN_SHM_COOKIE_CMA, &sreq->cur, sreq->msg_len);
    tern_shm_req(sreq)->state = TERN_SHM_LMT_GET_OFFERED;
    return TERN_OK;
}

/* process_vm_writev (write) or process_vm_readv, or the test hook's
 * refusal after fault_cma_after bytes of the message. */
static ssize_t cma_xfer(tern_shm_t *s, pid_t pid, const struct iovec *l, int lc,
                        const struct iovec *r, int rc, uint64_t done, bool write)
{
    uint64_t limit = s->cfg->fault_cma_after;
    if (limit != 0 && done >= limit) {
        errno = EPERM;
        return -1;
    }
    return write ? process_vm_writev(pid, l, (unsigned long)lc, r, (unsigned long)rc, 0)
                 : process_vm_readv(pid, l, (unsigned long)lc, r, (unsigned long)rc, 0);
}

ssize_t tern_shm_cma_read(tern_shm_t *s, pid_t pid, const struct iovec *l, int lc,
                          const struct iovec *r, int rc, uint64_t done)
{
    return cma_xfer(s, pid, l, lc, r, rc, done, false);
}

tern_status_t tern_shm_cma_take_cookie(tern_vc_t *vc, tern_request_t *r, const void *cookie,
                                       size_t cookie_len, uint32_t kind, uint64_t *peer_len)
{
    tern_shm_t *s = tern_shm_state(vc);
    tern_shm_vc_t *v = tern_shm_vc(vc);
    tern_shm_cma_cookie_t c;
    memset(&c, 0, sizeof(c));
    memcpy(&c, cookie, cookie_len < sizeof(c) ? cookie_len : sizeof(c));
    uint32_t inl = c.iovcnt < TERN_SHM_CMA_INLINE ? c.iovcnt : TERN_SHM_CMA_INLINE;
    if (cookie_len < TERN_SHM_CMA_COOKIE_HDR || c.kind != kind || c.pid != v->pid ||
        c.iovcnt > (1u << 20) ||
        cookie_len != TERN_SHM_CMA_COOKIE_HDR + inl * sizeof(tern_shm_cma_seg_t))
        return tern_error(TERN_ERR_MALFORMED,
                          "CMA cookie from rank %d is malformed (kind %u, pid %d vs %d, %u segments)",
                          vc->rank, c.kind, c.pid, v->pid, c.iovcnt);
    struct iovec *segs = malloc(sizeof(*segs) * (c.iovcnt ? c.iovcnt : 1));
    if (segs == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "%u CMA segments", c.iovcnt);
    for (uint32_t i = 0; i < inl; i++) {
        segs[i].iov_base = (void *)(uintptr_t)c.seg[i].base;
        segs[i].iov_len = c.seg[i].len;
    }
    r->tmpbuf = segs;
    tern_shm_req(r)->done = tern_shm_req(r)->seg_idx = tern_shm_req(r)->seg_off = 0;
    tern_shm_req(r)->nseg = c.iovcnt;
    tern_shm_req(r)->pid = (uint64_t)c.pid;
    if (c.iovcnt > inl) {
        /* the rest of the peer's iovec array, read from the peer */
        struct iovec l = {segs, sizeof(*segs) * c.iovcnt};
        struct iovec rv = {(void *)(uintptr_t)c.iov_addr, sizeof(*segs) * c.iovcnt};
        if (tern_shm_cma_read(s, (pid_t)c.pid, &l, 1, &rv, 1, 0) != (ssize_t)l.iov_len)
            tern_shm_req(r)->nseg = UINT64_MAX; /* unreadable: the first step falls back */
    }
    *peer_len = c.len;
    return TERN_OK;
}

tern_status_t tern_shm_cma_start_recv(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                      size_t cookie_len)
{
    uint64_t len;
    if (tern_lmt_track(vc, rreq) == 0)
        return TERN_ERR_NO_MEMORY;
    tern_status_t st =
        tern_shm_cma_take_cookie(vc, rreq, cookie, cookie_len, TERN_SHM_COOKIE_CMA, &len);
    if (st != TERN_OK)
        return st;
    if (len != rreq->msg_len)
        return tern_error(TERN_ERR_MALFORMED, "CMA cookie from rank %d: %llu bytes, RTS says %zu",
                          vc->rank, (unsigned long long)len, rreq->msg_len);
    tern_list_push_tail(&tern_shm_vc(vc)->cma_rxq, &rreq->link);
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

void tern_shm_cma_refused(tern_vc_t *vc, const char *call, int err)
{
    static atomic_bool warned; /* once per process, whichever worker sees it */
    if (!atomic_exchange_explicit(&warned, true, memory_order_relaxed)) {
        tern_warn("CMA (%s) with local rank %d refused: %s; large messages on this "
                  "pair now use the cooperative copy buffer (TERN_SHM_CMA=0 silences this)",
                  call, vc->rank, strerror(err));
    }
    tern_shm_vc(vc)->cma_refused = true;
}

/* The kernel refused: continue through the copy buffer from `done`. */
static tern_status_t cma_fall_back(tern_vc_t *vc, tern_request_t *r, int err)
{
    uint64_t done = tern_shm_req(r)->done;
    tern_shm_cma_refused(vc, "process_vm_readv", err);
    free(r->tmpbuf);
    r->tmpbuf = NULL;
    if (done == 0)
        return tern_shm_lmt_start_coop_recv(vc, r);
    uint64_t id = tern_lmt_track(vc, r);
    if (id == 0)
        return TERN_ERR_NO_MEMORY;
    tern_shm_req(r)->done = done; /* the copy-buffer receive counts on from here */
    return tern_shm_resume_coop_recv(vc, r, id, done);
}

tern_status_t tern_shm_resume_coop_recv(tern_vc_t *vc, tern_request_t *r, uint64_t id,
                                        uint64_t offset)
{
    tern_shm_resume_cookie_t rc = {.kind = TERN_SHM_COOKIE_RESUME, .offset = offset, .rreq_id = id};
    tern_pkt_hdr_t h = {.type = TERN_PKT_COOKIE, .sreq = r->remote_id,
                        .cookie_len = (uint32_t)sizeof(rc)};
    tern_status_t st = tern_send_ctrl(vc, &h, &rc, sizeof(rc));
    if (st != TERN_OK)
        return st;
    /* in the copy-buffer queue in the order of this stream's CTS / RESUME
     * packets, which the sender serves its queue in */
    tern_list_push_tail(&tern_shm_vc(vc)->lmt_rxq, &r->link);
    return TERN_OK;
}

ssize_t tern_shm_cma_step(tern_shm_t *s, tern_request_t *r, bool write)
{
    const struct iovec *segs = r->tmpbuf;
    uint64_t nseg = tern_shm_req(r)->nseg;
    pid_t pid = (pid_t)tern_shm_req(r)->pid;
    struct iovec l[CMA_IOV], rv[CMA_IOV];
    if (nseg == UINT64_MAX)
        return -EPERM; /* the peer's iovec array could not be read */
    size_t lbytes, rbytes = 0;
    int lc = tern_cursor_slice(&r->cur, l, CMA_IOV, CMA_STEP, &lbytes);
    int rc = 0;
    uint64_t idx = tern_shm_req(r)->seg_idx, off = tern_shm_req(r)->seg_off;
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
    if (rbytes == 0)
        return -EMSGSIZE;
    /* both sides must describe the same byte count: trim the local slice */
    size_t keep = rbytes;
    int k = 0;
    for (; k < lc && keep > 0; k++) {
        if (l[k].iov_len > keep)
            l[k].iov_len = keep;
        keep -= l[k].iov_len;
    }
    lc = k;
    ssize_t got = cma_xfer(s, pid, l, lc, rv, rc, tern_shm_req(r)->done, write);
    if (got < 0)
        return -errno;
    if (got == 0)
        return -EFAULT; /* no progress: the peer's segments are not accessible */
    /* advance both positions by what the kernel moved */
    tern_cursor_advance(&r->cur, (size_t)got);
    tern_shm_req(r)->done += (uint64_t)got;
    for (uint64_t moved = (uint64_t)got; moved > 0 && tern_shm_req(r)->seg_idx < nseg;) {
        size_t room = segs[tern_shm_req(r)->seg_idx].iov_len - tern_shm_req(r)->seg_off;
        size_t n = moved < room ? moved : room;
        tern_shm_req(r)->seg_off += n;
        moved -= n;
        if (tern_shm_req(r)->seg_off == segs[tern_shm_req(r)->seg_idx].iov_len) {
            tern_shm_req(r)->seg_idx++;
            tern_shm_req(r)->seg_off = 0;
        }
    }
    return got;
}

bool tern_shm_cma_fail(tern_vc_t *vc, ssize_t err, const char *call, pid_t pid)
{
    if (err == -EPERM || err == -ENOSYS || err == -EACCES)
        return false; /* refused: the caller falls back to the copy buffer */
    char why[160];
    if (err == -EMSGSIZE)
        snprintf(why, sizeof(why), "CMA segments of pid %d shorter than the message", (int)pid);
    else
        snprintf(why, sizeof(why), "%s with pid %d: %s", call, (int)pid, strerror((int)-err));
    tern_vc_fail(vc, err == -ESRCH ? TERN_ERR_PEER_FAILED : TERN_ERR_MALFORMED, why);
    return true;
}

unsigned tern_shm_cma_drive(tern_shm_t *s, tern_vc_t *vc, tern_request_t *r, uint64_t want,
                            const tern_shm_cma_dir_t *d)
{
    ssize_t got = tern_shm_req(r)->done < want ? tern_shm_cma_step(s, r, d->write) : 0;
    if (got < 0) {
        if (tern_shm_cma_fail(vc, got, d->call, (pid_t)tern_shm_req(r)->pid))
            return 1;
        tern_list_del(&r->link);
        tern_status_t st = d->fall_back(vc, r, (int)-got);
        if (st != TERN_OK)
            tern_vc_fail(vc, st, tern_last_error());
        return 1;
    }
    if (tern_shm_req(r)->done >= want) {
        tern_list_del(&r->link);
        d->finish(vc, r);
    }
    return 1;
}

/* One step of the CMA get at the head of the queue.  Returns work done. */
unsigned tern_shm_cma_progress(tern_shm_t *s, tern_shm_vc_t *v)
{
    static const tern_shm_cma_dir_t get = {false, "process_vm_readv", cma_fall_back, cma_finish};
    tern_request_t *r = TERN_CONTAINER_OF(v->cma_rxq.next, tern_request_t, link);
    uint64_t want = r->msg_len < r->cur.total ? r->msg_len : r->cur.total;
    return tern_shm_cma_drive(s, v->vc, r, want, &get);
}

/*
 * RESUME cookies: a CMA transfer was refused mid-way and continues through
 * the copy buffer from `offset`.
 *   to a sender (GET refused at the receiver, or the receiver's answer to a
 *     sender's PUT refusal): send the rest from offset; the receiver already
 *     queued its side, in this stream's order.
 *   to a receiver (PUT refused at the sender): queue the copy-buffer receive
 *     from offset and answer with RESUME, so both queues keep one order.
 */
tern_status_t tern_shm_lmt_handle_cookie(tern_vc_t *vc, tern_request_t *r, const void *cookie,
                                         size_t cookie_len)
{
    tern_shm_vc_t *v = tern_shm_vc(vc);
    tern_shm_resume_cookie_t rc;
    if (cookie_len != sizeof(rc))
        return tern_error(TERN_ERR_MALFORMED, "COOKIE from rank %d: not a resume cookie", vc->rank);
    memcpy(&rc, cookie, sizeof(rc));
    bool send = r->kind == TERN_REQ_SEND;
    uint64_t state = tern_shm_req(r)->state;
    bool ok = send ? (state == TERN_SHM_LMT_GET_OFFERED || state == TERN_SHM_LMT_PUT_PARKED)
                   : state == TERN_SHM_LMT_PUT_OFFERED;
    uint64_t limit = send ? r->msg_len : r->cur.total;
    if (rc.kind != TERN_SHM_COOKIE_RESUME || rc.offset > limit || rc.rreq_id == 0 || !ok)
        return tern_error(TERN_ERR_MALFORMED, "resume cookie from rank %d: offset %llu of %zu "
                          "for a %s in state %llu", vc->rank, (unsigned long long)rc.offset,
                          (size_t)limit, send ? "send" : "receive", (unsigned long long)state);
    v->cma_refused = true;
    if (!send) {
        if (rc.rreq_id != tern_request_id(r))
            return tern_error(TERN_ERR_MALFORMED, "resume cookie from rank %d names another "
                              "receive", vc->rank);
        tern_shm_req(r)->state = TERN_SHM_LMT_PLAIN;
        tern_cursor_advance(&r->cur, (size_t)rc.offset);
        tern_shm_req(r)->done = rc.offset;
        return tern_shm_resume_coop_recv(vc, r, rc.rreq_id, rc.offset);
    }
    if (state == TERN_SHM_LMT_GET_OFFERED) /* a put's cursor is already there */
        tern_cursor_advance(&r->cur, (size_t)rc.offset);
    tern_shm_req(r)->state = TERN_SHM_LMT_PLAIN;
    r->remote_id = rc.rreq_id;
    tern_shm_req(r)->done = rc.offset;
    tern_list_push_tail(&v->lmt_txq, &r->link);
    return TERN_OK;
}

tern_status_t tern_shm_lmt_done_send(tern_vc_t *vc, tern_request_t *sreq)
{
    if (tern_shm_req(sreq)->state != TERN_SHM_LMT_GET_OFFERED)
        return tern_error(TERN_ERR_MALFORMED, "DONE from rank %d for a send that offered no CMA",
                          vc->rank);
    tern_request_complete(sreq, TERN_OK);
    return TERN_OK;
}
