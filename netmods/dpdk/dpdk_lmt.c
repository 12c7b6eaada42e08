/*
 * dpdk netmod: rendezvous (LMT) in put mode.
 *
 * The receiver matches the RTS and answers CTS (its receive's id is the
 * CTS's rreq: no key is needed, the frames carry it).  The sender then
 * frames the message as LMT frames in the VC's sequence space, each with
 * {cookie = that id, offset}, and queues DONE behind the last one; the
 * receiver places each frame's payload as it comes in order (so DONE is
 * handled after all of them) and DONE completes the receive.  The send
 * completes when every frame is acked and the port has let go of the
 * user's pages.
 *
 * Zero-copy: on a port with multi-segment TX each transmission of a frame
 * is a header mbuf chained to an mbuf attached (rte_pktmbuf_attach_extbuf,
 * at most one frame's payload, far below its 64 KiB limit) to the user's
 * pages.  The attachments of a transfer share one rte_mbuf_ext_shared_info
 * allocated with the transfer (not the helper that writes it into the
 * buffer's tail: the tail is the user's), whose reference count is ours
 * (1) plus one per attached mbuf the port has not freed; a retransmission
 * attaches afresh.  The user's range is registered through the engine's
 * cache (rte_extmem_register; a NIC's DMA mapping with rte_dev_dma_map).
 * Without multi-segment TX (af_xdp), with TERN_DPDK_ZCOPY=0, for an iovec
 * message, or when registration fails, frames are copies.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "netmods/dpdk/dpdk_internal.h"

#define FRAME_HDR (TERN_DPDK_ETH_HDR + TERN_DPDK_HDR_SIZE)

static void ext_free_cb(void *addr, void *opaque)
{
    (void)addr;
    (void)opaque; /* our own reference is the last: the transfer frees itself */
}

unsigned tern_dpdk_lmt_modes(void *state)
{
    (void)state;
    return 1u << TERN_LMT_PUT;
}

int tern_dpdk_lmt_choose(tern_vc_t *vc, size_t len)
{
    (void)vc;
    (void)len;
    return TERN_LMT_PUT;
}

static bool contiguous(const tern_request_t *r)
{
    return r->cur.iovcnt <= 1 && r->cur.pos == 0;
}

tern_status_t tern_dpdk_lmt_initiate(tern_vc_t *vc, tern_request_t *sreq, int *mode,
                                     void *cookie, size_t *cookie_len)
{
    (void)vc;
    (void)sreq;
    (void)cookie;
    if (*mode != TERN_LMT_PUT)
        *mode = TERN_LMT_NULL; /* the engine streams it as DATA after the CTS */
    *cookie_len = 0;
    return TERN_OK;
}

tern_status_t tern_dpdk_lmt_start_recv(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                       size_t cookie_len)
{
    (void)cookie;
    if (cookie_len != 0)
        return tern_error(TERN_ERR_MALFORMED, "dpdk RTS from rank %d carries a %zu-byte cookie",
                          vc->rank, cookie_len);
    tern_dpdk_req(rreq)->received = 0;
    tern_dpdk_req(rreq)->active = 1;
    return tern_lmt_send_cts(vc, rreq, NULL, 0);
}

tern_status_t tern_dpdk_lmt_start_send(tern_vc_t *vc, tern_request_t *sreq, const void *cookie,
                                       size_t cookie_len)
{
    tern_dpdk_vc_t *dv = tern_dpdk_vc(vc);
    (void)cookie;
    if (cookie_len != 0)
        return tern_error(TERN_ERR_MALFORMED, "dpdk CTS from rank %d carries a %zu-byte cookie",
                          vc->rank, cookie_len);
    if (vc->state == TERN_VC_FAILED)
        return vc->fail_status;
    tern_dpdk_lmt_tx_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "dpdk LMT transfer");
    t->sreq = sreq;
    t->dv = dv;
    t->cookie = sreq->remote_id;
    t->total = sreq->msg_len;
    t->shinfo.free_cb = ext_free_cb;
    t->shinfo.fcb_opaque = t;
    rte_mbuf_ext_refcnt_set(&t->shinfo, 1);
    if (contiguous(sreq) && sreq->cur.iovcnt == 1)
        t->buf = sreq->cur.iov[0].iov_base;
    t->zcopy = dv->d->cfg->zcopy && dv->port->multiseg && t->buf != NULL && t->total > 0;
    if (t->zcopy && tern_mem_get(vc, t->buf, t->total, &t->mem) != TERN_OK) {
        tern_debug("dpdk: %s; the message to rank %d is copied", tern_last_error(), vc->rank);
        t->zcopy = false;
    }
    tern_dpdk_req(sreq)->tx = t;
    tern_list_push_tail(&dv->lmtq, &t->link);
    dv->d->now_ns = tern_now_ns();
    tern_dpdk_mark_active(dv);
    tern_dpdk_push(dv);
    return TERN_OK;
}

tern_status_t tern_dpdk_lmt_handle_cookie(tern_vc_t *vc, tern_request_t *req, const void *cookie,
                                          size_t cookie_len)
{
    (void)req;
    (void)cookie;
    return tern_error(TERN_ERR_MALFORMED, "dpdk: COOKIE packet (%zu bytes) from rank %d: put "
                      "mode has none", cookie_len, vc->rank);
}

tern_status_t tern_dpdk_lmt_done_send(tern_vc_t *vc, tern_request_t *sreq)
{
    (void)sreq;
    return tern_error(TERN_ERR_MALFORMED, "dpdk: DONE to a sender from rank %d: in put mode "
                      "the sender finishes", vc->rank);
}

tern_status_t tern_dpdk_lmt_done_recv(tern_vc_t *vc, tern_request_t *rreq)
{
    if (rreq->lmt_mode != TERN_LMT_PUT || tern_dpdk_req(rreq)->active != 1)
        return tern_error(TERN_ERR_MALFORMED, "dpdk DONE from rank %d for a receive that "
                          "expects no frames", vc->rank);
    if (tern_dpdk_req(rreq)->received != rreq->msg_len)
        return tern_error(TERN_ERR_MALFORMED, "dpdk DONE from rank %d after %llu of %llu bytes",
                          vc->rank, (unsigned long long)tern_dpdk_req(rreq)->received,
                          (unsigned long long)rreq->msg_len);
    tern_dpdk_req(rreq)->active = 0;
    /* the sender's request ends only with our ack, and we may stop polling
     * once the user has this receive: ack now, not after a delay */
    tern_dpdk_vc(vc)->ack_now = true;
    tern_dpdk_mark_active(tern_dpdk_vc(vc));
    tern_recv_data_complete(rreq); /* TRUNCATED when the message was longer */
    return TERN_OK;
}

/* ---- sender ---------------------------------------------------------------- */

static struct rte_mbuf *copy_frame(tern_dpdk_vc_t *dv, tern_dpdk_lmt_tx_t *t, uint64_t off,
                                   uint16_t len)
{
    struct rte_mbuf *m = tern_dpdk_frame_alloc(dv, TERN_DPDK_F_LMT);
    if (m == NULL)
        return NULL;
    uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, len);
    if (t->buf != NULL) {
        memcpy(p, t->buf + off, len);
    } else {
        tern_cursor_t c = t->sreq->cur; /* from the start, to off */
        c.idx = 0;
        c.off = 0;
        c.pos = 0;
        tern_cursor_advance(&c, off);
        tern_cursor_pack(&c, p, len);
    }
    return m;
}

static void fill_lmt_hdr(struct rte_mbuf *m, const tern_dpdk_lmt_tx_t *t, uint64_t off,
                         uint16_t len)
{
    tern_dpdk_hdr_t *h = rte_pktmbuf_mtod_offset(m, tern_dpdk_hdr_t *, TERN_DPDK_ETH_HDR);
    h->len = rte_cpu_to_le_16(len);
    tern_dpdk_lmt_ext_t ext = {.cookie = rte_cpu_to_le_64(t->cookie),
                               .offset = rte_cpu_to_le_64(off)};
    memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, FRAME_HDR), &ext, sizeof(ext));
}

/* A transmission of a zero-copy slot (the reliability layer keeps no mbuf
 * for it), first or again; NULL when out of mbufs. */
static struct rte_mbuf *lmt_frame(tern_dpdk_vc_t *dv, const tern_dpdk_slot_t *s)
{
    tern_dpdk_lmt_tx_t *t = s->owner;
    struct rte_mbuf *h = tern_dpdk_frame_alloc(dv, TERN_DPDK_F_LMT);
    if (h == NULL)
        return NULL;
    struct rte_mbuf *e = rte_pktmbuf_alloc(dv->d->pool);
    if (e == NULL) {
        rte_pktmbuf_free(h);
        return NULL;
    }
    void *addr = (void *)(uintptr_t)(t->buf + s->offset);
    rte_iova_t iova = rte_eal_iova_mode() == RTE_IOVA_VA ? (rte_iova_t)(uintptr_t)addr
                                                         : rte_mem_virt2iova(addr);
    rte_mbuf_ext_refcnt_update(&t->shinfo, 1);
    rte_pktmbuf_attach_extbuf(e, addr, iova, s->len, &t->shinfo);
    e->data_len = s->len;
    e->pkt_len = s->len;
    fill_lmt_hdr(h, t, s->offset, s->len);
    if (rte_pktmbuf_chain(h, e) != 0) {
        rte_pktmbuf_free(e);
        rte_pktmbuf_free(h);
        return NULL;
    }
    dv->d->stats.zcopy_frames++;
    return h;
}

static void finish(tern_dpdk_lmt_tx_t *t)
{
    /* in finalize the engine has already destroyed the registration cache
     * (it deregisters through the netmod, before the netmod goes) */
    if (t->zcopy && !t->dv->d->finalizing)
        tern_mem_put(&t->mem);
    free(t);
}

/* The transfer is over and the port holds none of its pages: the send
 * completes (the user's buffer is theirs again only now). */
static void complete(tern_dpdk_lmt_tx_t *t)
{
    tern_request_t *sreq = t->sreq;
    t->sreq = NULL;
    finish(t);
    if (sreq == NULL)
        return; /* its VC failed: the engine completed it */
    tern_dpdk_req(sreq)->tx = NULL;
    if (!(sreq->flags & TERN_REQF_COMPLETE))
        tern_request_complete(sreq, TERN_OK);
}

bool tern_dpdk_lmt_push(tern_dpdk_vc_t *dv)
{
    tern_dpdk_lmt_tx_t *t = TERN_CONTAINER_OF(dv->lmtq.next, tern_dpdk_lmt_tx_t, link);
    uint64_t left = t->total - t->next;
    uint16_t room = (uint16_t)(dv->payload_max - TERN_DPDK_LMT_EXT_SIZE);
    uint16_t len = left < room ? (uint16_t)left : room;
    tern_dpdk_slot_t s = {.owner = t, .offset = t->next, .len = len, .type = TERN_DPDK_F_LMT};
    if (!t->zcopy) {
        s.m = copy_frame(dv, t, t->next, len);
        if (s.m == NULL)
            return false;
        fill_lmt_hdr(s.m, t, t->next, len);
        dv->d->stats.copy_frames++;
    }
    tern_dpdk_frame_queue(dv, s);
    t->next += len;
    if (t->next < t->total)
        return true;
    /* all framed: DONE follows the last frame in the sequence space */
    tern_list_del(&t->link);
    tern_list_push_tail(&dv->lmt_sent, &t->link);
    tern_pkt_hdr_t done = {.type = TERN_PKT_DONE, .rreq = t->cookie};
    tern_status_t st = tern_send_ctrl(dv->vc, &done, NULL, 0);
    if (st != TERN_OK)
        tern_dpdk_vc_lost(dv, st, "dpdk: DONE to rank %d: %s", dv->vc->rank, tern_last_error());
    return st == TERN_OK;
}

/* A frame of a transfer (zero-copy or copied) was acknowledged. */
static void lmt_acked(tern_dpdk_vc_t *dv, tern_dpdk_slot_t *s)
{
    tern_dpdk_lmt_tx_t *t = s->owner;
    t->acked += s->len;
    if (t->acked < t->total || t->next < t->total)
        return;
    tern_list_del(&t->link);
    if (t->zcopy && rte_mbuf_ext_refcnt_read(&t->shinfo) > 1)
        tern_list_push_tail(&dv->d->reap, &t->link); /* the port still has pages of it */
    else
        complete(t);
}

void tern_dpdk_lmt_reap(tern_dpdk_t *d)
{
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &d->reap)
    {
        tern_dpdk_lmt_tx_t *t = TERN_CONTAINER_OF(pos, tern_dpdk_lmt_tx_t, link);
        if (rte_mbuf_ext_refcnt_read(&t->shinfo) == 1) {
            tern_list_del(pos);
            complete(t);
        }
    }
}

/* The VC failed: its transfers end (the engine fails their requests). */
void tern_dpdk_lmt_drop(tern_dpdk_vc_t *dv)
{
    tern_list_t *lists[2] = {&dv->lmtq, &dv->lmt_sent};
    for (int i = 0; i < 2; i++) {
        tern_list_t *l;
        while ((l = tern_list_pop_head(lists[i])) != NULL) {
            tern_dpdk_lmt_tx_t *t = TERN_CONTAINER_OF(l, tern_dpdk_lmt_tx_t, link);
            if (t->sreq != NULL)
                tern_dpdk_req(t->sreq)->tx = NULL;
            t->sreq = NULL;
            if (t->zcopy && rte_mbuf_ext_refcnt_read(&t->shinfo) > 1)
                tern_list_push_tail(&dv->d->reap, &t->link);
            else
                finish(t);
        }
    }
}

/* ---- receiver -------------------------------------------------------------- */

/* An LMT frame arrived in order: its payload goes to the receive its
 * extension names, at the offset it names (the next bytes expected). */
static void lmt_rx(tern_dpdk_vc_t *dv, const void *extp, const void *payload, uint16_t len)
{
    tern_vc_t *vc = dv->vc;
    tern_dpdk_lmt_ext_t e;
    memcpy(&e, extp, sizeof(e));
    e.cookie = rte_le_to_cpu_64(e.cookie);
    e.offset = rte_le_to_cpu_64(e.offset);
    const tern_dpdk_lmt_ext_t *ext = &e;
    tern_request_t *r = tern_request_lookup(vc->worker, ext->cookie);
    if (r == NULL || r->kind != TERN_REQ_RECV || r->vc != vc || r->lmt_mode != TERN_LMT_PUT ||
        tern_dpdk_req(r)->active != 1) {
        tern_dpdk_vc_lost(dv, TERN_ERR_MALFORMED, "dpdk: LMT frame from rank %d names unknown "
                          "receive %#llx", vc->rank, (unsigned long long)ext->cookie);
        return;
    }
    uint64_t have = tern_dpdk_req(r)->received;
    if (ext->offset != have || len > r->msg_len - have) {
        tern_dpdk_vc_lost(dv, TERN_ERR_MALFORMED, "dpdk: LMT frame from rank %d: bytes %llu..%llu "
                          "of a %llu-byte message, %llu expected next", vc->rank,
                          (unsigned long long)ext->offset,
                          (unsigned long long)(ext->offset + len),
                          (unsigned long long)r->msg_len, (unsigned long long)have);
        return;
    }
    /* bytes past a short receive buffer are dropped (TRUNCATED at DONE) */
    tern_cursor_unpack(&r->cur, payload, len);
    tern_dpdk_req(r)->received = have + len;
}

/* ---- the reliability layer's handler for LMT frames ---------------------------- */

static const tern_dpdk_handler_t lmt_handler = {
    .ext_size = TERN_DPDK_LMT_EXT_SIZE,
    .rx = lmt_rx,
    .frame = lmt_frame,
    .acked = lmt_acked,
};

void tern_dpdk_lmt_attach(tern_dpdk_t *d)
{
    tern_dpdk_rel_handler(d, TERN_DPDK_F_LMT, &lmt_handler);
}
