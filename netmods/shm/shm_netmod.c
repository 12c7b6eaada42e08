/*
 * shm netmod: wire-up, polling, peer health, teardown; the capability tables.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "netmods/shm/shm_internal.h"

#define RECV_BUDGET 32 /* units per peer per poll: fairness between peers */

static bool shm_reachable(tern_context_t *ctx, int rank)
{
    return rank != ctx->rank && tern_ctx_local_index(ctx, rank) >= 0;
}

/* The node's ranks, once known: with a launcher at init, without one at
 * the first vc_init (tern_ctx_local_size is 0 until the addresses are in). */
static tern_status_t know_node(tern_shm_t *s)
{
    s->nlocal = tern_ctx_local_size(s->ctx);
    s->my_idx = tern_ctx_local_rank(s->ctx);
    if (s->nlocal < 1 || s->my_idx < 0)
        return tern_error(TERN_ERR_SHM, "shm: the ranks of this node are not known yet");
    return TERN_OK;
}

static tern_status_t shm_init(tern_worker_t *w, const void *config, void **shared,
                              void **state)
{
    tern_context_t *ctx = w->ctx;
    tern_shm_t *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "shm netmod state");
    *state = s;
    s->ctx = ctx;
    s->worker = w;
    s->widx = w->index;
    s->cfg = config;
    s->wake_fd = -1;
    s->numa_node = -1;
    if (w->index == 0) {
        *shared = s;
    } else {
        /* worker 0's instance maps the segment */
        s->w0 = *shared;
        if (s->w0 == NULL)
            return tern_error(TERN_ERR_SHM, "shm: worker %d before worker 0", w->index);
    }
    tern_status_t st = tern_shm_wake_open(s);
    if (st != TERN_OK || w->index != 0)
        return st;
    /* the name this rank would create the segment under: the card's */
    tern_shm_segment_name(s, s->seg_name, sizeof(s->seg_name));
    /* with a launcher the node's first rank creates it now, and the others
     * attach after the fence (where a failure here is told to them) */
    if (tern_ctx_local_size(ctx) > 0 && tern_ctx_local_rank(ctx) == 0 &&
        (st = know_node(s)) == TERN_OK)
        st = tern_shm_segment_create(s);
    return st;
}

static tern_status_t shm_card(void *state, void *buf, size_t *len)
{
    tern_shm_t *s = state;
    tern_shm_card_t c;
    memset(&c, 0, sizeof(c));
    c.magic = TERN_SHM_CARD_MAGIC;
    c.version = TERN_SHM_CARD_VERSION;
    c.pid = (int32_t)getpid();
    snprintf(c.seg_name, sizeof(c.seg_name), "%s", s->w0 != NULL ? s->w0->seg_name : s->seg_name);
    if (*len < sizeof(c))
        return tern_error(TERN_ERR_INVALID_PARAM, "shm: a card needs %zu bytes", sizeof(c));
    memcpy(buf, &c, sizeof(c));
    *len = sizeof(c);
    return TERN_OK;
}

static tern_status_t card_check(const void *data, size_t len, int rank, tern_shm_card_t *card)
{
    if (data == NULL || len != sizeof(*card))
        return tern_error(TERN_ERR_MALFORMED, "shm card of rank %d has %zu bytes, expected %zu",
                          rank, data == NULL ? (size_t)0 : len, sizeof(*card));
    memcpy(card, data, sizeof(*card));
    if (card->magic != TERN_SHM_CARD_MAGIC || card->version != TERN_SHM_CARD_VERSION ||
        card->pid <= 0 || card->reserved != 0 ||
        memchr(card->seg_name, '\0', sizeof(card->seg_name)) == NULL ||
        strncmp(card->seg_name, "/tern-", 6) != 0 || strchr(card->seg_name + 1, '/') != NULL)
        return tern_error(TERN_ERR_MALFORMED, "shm card of rank %d: not a version-%u shm card "
                          "(magic %#x, pid %d)", rank, TERN_SHM_CARD_VERSION, card->magic,
                          card->pid);
    return TERN_OK;
}

/* First vc_init: attach to the segment (or, without a launcher, create it
 * on the node's first rank) and bind the worker's doorbell. */
static tern_status_t attach(tern_shm_t *s)
{
    tern_context_t *ctx = s->ctx;
    tern_status_t st = know_node(s);
    if (st != TERN_OK)
        return st;
    if (s->w0 != NULL) { /* worker 0's mapping, our channel set */
        if (s->w0->base == NULL)
            return tern_error(TERN_ERR_SHM, "shm: worker 0 has no segment for worker %d",
                              s->widx);
        s->base = s->w0->base;
        s->size = s->w0->size;
        s->hdr = s->w0->hdr;
        tern_shm_place_inbox(s);
        return tern_shm_use_segment(s);
    }
    if (s->base == NULL && s->my_idx == 0) {
        st = tern_shm_segment_create(s);
    } else if (s->base == NULL) {
        int creator = tern_ctx_local_peer(ctx, 0);
        size_t len = 0;
        const void *data = tern_wire_card(s->worker, creator, "shm", &len);
        tern_shm_card_t cc;
        st = card_check(data, len, creator, &cc);
        if (st == TERN_OK)
            st = tern_shm_segment_attach(s, &cc, creator);
    }
    if (st != TERN_OK)
        return st;
    tern_shm_place_inbox(s);
    return tern_shm_use_segment(s);
}

tern_status_t tern_shm_use_segment(tern_shm_t *s)
{
    const tern_shm_seg_hdr_t *h = s->hdr;
    s->fbox_size = h->fbox_size;
    s->cell_size = h->cell_size;
    s->num_fbox = h->num_fbox;
    s->num_cells = h->num_cells;
    s->fbox_cap = h->fbox_size - TERN_SHM_UNIT_HDR;
    s->cell_cap = h->cell_size - TERN_SHM_UNIT_HDR;
    s->fbox_mask = h->num_fbox - 1;
    s->cell_mask = h->num_cells - 1;
    s->chunk_mask = h->num_chunks - 1;
    /* One wait mode per node, the segment's: senders ring doorbells only
     * when it is BLOCK, so a rank blocking under another mode would sleep
     * out the futex timeout on every idle wait. */
    if (h->num_workers != (uint32_t)s->ctx->num_workers)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "TERN_NUM_WORKERS=%d here, %u on the shm segment's creator: every "
                          "rank must use the same number", s->ctx->num_workers, h->num_workers);
    tern_context_use_wait_mode(s->ctx, h->wait_mode,
                               "the shm segment's creator (local rank 0) uses it, and shm "
                               "senders wake sleeping peers only in block mode");
    s->ring_doorbells = h->wait_mode == TERN_WAIT_BLOCK;
    s->my_doorbell = (tern_shm_doorbell_t *)(void *)(s->base + h->off_doorbells) +
                     (size_t)s->widx * (size_t)s->nlocal + (size_t)s->my_idx;
    s->vcs = calloc((size_t)s->nlocal, sizeof(*s->vcs));
    if (s->vcs == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "shm VC table");
    return TERN_OK;
}

tern_status_t tern_shm_vc_setup(tern_shm_t *s, tern_vc_t *vc, int idx, int pid)
{
    tern_shm_vc_t *v = &s->vcs[idx];
    v->vc = vc;
    v->pid = pid;
    /* pidfd where the kernel has it (>= 5.3); else kill(pid, 0) probes. */
    v->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (v->pidfd < 0 && errno != ENOSYS && errno != EPERM)
        return tern_error(TERN_ERR_SHM, "pidfd_open(%d) of local rank %d: %s", pid, vc->rank,
                          strerror(errno));
    tern_shm_chan_bind(s, &v->tx, idx, s->my_idx);
    tern_shm_chan_bind(s, &v->rx, s->my_idx, idx);
    v->peer_doorbell = (tern_shm_doorbell_t *)(void *)(s->base + s->hdr->off_doorbells) +
                       (size_t)s->widx * (size_t)s->nlocal + (size_t)idx;
    tern_shm_wake_addr(s, vc->rank, &v->peer_wake);
    tern_pktq_init(&v->sendq);
    tern_list_init(&v->lmt_txq);
    tern_list_init(&v->lmt_rxq);
    vc->nm_vc = v;
    return TERN_OK;
}

static tern_status_t shm_vc_init(void *state, tern_vc_t *vc, const void *data, size_t len)
{
    tern_shm_t *s = state;
    tern_shm_card_t card;
    tern_status_t st = card_check(data, len, vc->rank, &card);
    if (st == TERN_OK && s->vcs == NULL)
        st = attach(s);
    if (st != TERN_OK)
        return st;
    return tern_shm_vc_setup(s, vc, tern_ctx_local_index(s->ctx, vc->rank), card.pid);
}

static tern_status_t shm_wireup_done(void *state)
{
    tern_shm_t *s = state;
    if (s->w0 == NULL)
        tern_shm_segment_unlink(s); /* everyone attached: the name can go */
    return TERN_OK;
}

static unsigned shm_poll(void *state, int direction)
{
    tern_shm_t *s = state;
    unsigned n = 0;
    if (TERN_UNLIKELY(s->vcs == NULL))
        return 0;
    for (int i = 0; i < s->nlocal; i++) {
        tern_shm_vc_t *v = &s->vcs[i];
        if (v->vc == NULL || v->vc->state == TERN_VC_FAILED)
            continue;
        unsigned got = tern_shm_rx_ready(s, v) ? tern_shm_poll_recv(s, v, RECV_BUDGET) : 0;
        if (!tern_list_empty(&v->lmt_rxq) || !tern_list_empty(&v->lmt_txq))
            got += tern_shm_lmt_progress(s, v);
        /* Block mode: consuming freed fastbox/cells/chunks the peer may be
         * asleep waiting for; wake it (the send side rings on publish). */
        if (got && s->ring_doorbells)
            tern_shm_ring_doorbell(s, v);
        n += got;
        if (!tern_pktq_empty(&v->sendq))
            n += tern_shm_progress_sendq(s, v);
        if (v->vc->state == TERN_VC_TERMINATING && tern_pktq_empty(&v->sendq) &&
            tern_list_empty(&v->lmt_txq))
            v->vc->state = TERN_VC_CLOSED;
    }
    return n;
}

/* Idle path: a peer whose pidfd is readable has exited.  Take everything it
 * wrote before dying, then fail the VC so waits on it return an error. */
static void shm_check_peers(void *state)
{
    tern_shm_t *s = state;
    for (int i = 0; s->vcs != NULL && i < s->nlocal; i++) {
        tern_shm_vc_t *v = &s->vcs[i];
        if (v->vc == NULL || v->vc->state == TERN_VC_FAILED)
            continue;
        if (v->pidfd >= 0) {
            struct pollfd p = {.fd = v->pidfd, .events = POLLIN};
            if (poll(&p, 1, 0) != 1)
                continue;
        } else if (kill(v->pid, 0) == 0 || errno != ESRCH) {
            continue;
        }
        for (int k = 0; k < 1024 && tern_shm_poll_recv(s, v, RECV_BUDGET) > 0; k++)
            ;
        tern_shm_lmt_progress(s, v);
        char why[128];
        snprintf(why, sizeof(why), "local rank %d (pid %d) exited", v->vc->rank, v->pid);
        tern_vc_fail(v->vc, TERN_ERR_PEER_FAILED, why);
    }
}

static tern_status_t shm_vc_terminate(tern_vc_t *vc)
{
    tern_shm_vc_t *v = tern_shm_vc(vc);
    if (vc->state != TERN_VC_ACTIVE)
        return TERN_OK;
    vc->state = tern_pktq_empty(&v->sendq) && tern_list_empty(&v->lmt_txq) ? TERN_VC_CLOSED
                                                                           : TERN_VC_TERMINATING;
    return TERN_OK;
}

/* Drop the VC's queues.  Rendezvous requests (on the engine's VC list) are
 * failed by the engine; the rest only this netmod knows, so it fails them. */
static void drop_queue(tern_list_t *q, tern_status_t status)
{
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, q)
    {
        tern_request_t *r = TERN_CONTAINER_OF(pos, tern_request_t, link);
        tern_list_del(pos);
        if (!(r->flags & TERN_REQF_VCLIST))
            tern_request_complete(r, status);
    }
}

static tern_status_t shm_vc_destroy(tern_vc_t *vc)
{
    tern_shm_vc_t *v = tern_shm_vc(vc);
    if (v == NULL)
        return TERN_OK;
    tern_pktq_fail_all(&v->sendq, vc->fail_status);
    drop_queue(&v->lmt_txq, vc->fail_status);
    drop_queue(&v->lmt_rxq, vc->fail_status);
    return TERN_OK;
}

static tern_status_t shm_finalize(void *state)
{
    tern_shm_t *s = state;
    if (s == NULL)
        return TERN_OK;
    for (int i = 0; s->vcs != NULL && i < s->nlocal; i++)
        if (s->vcs[i].vc != NULL && s->vcs[i].pidfd >= 0)
            close(s->vcs[i].pidfd);
    free(s->vcs);
    tern_shm_wake_close(s);
    if (s->w0 == NULL) /* the mapping is worker 0's, finalized last */
        tern_shm_segment_detach(s);
    free(s);
    return TERN_OK;
}

/* Registration: nothing to pin for CMA; the engine's cache still tracks
 * the range (so an unmapped buffer never keeps a key) and the key says
 * where the memory is. */
static tern_status_t shm_mem_reg(void *state, void *addr, size_t len, void **memh)
{
    *memh = addr;
    return TERN_OK;
}

static void shm_mem_dereg(void *state, void *memh) {}

static tern_status_t shm_rkey_pack(void *state, void *memh, const void *addr, size_t len,
                                   void *buf, size_t *buflen)
{
    tern_shm_rkey_t k = {.kind = TERN_SHM_RKEY_KIND, .pid = (int32_t)getpid(),
                         .addr = (uint64_t)(uintptr_t)addr, .len = len};
    if (*buflen < sizeof(k))
        return tern_error(TERN_ERR_INVALID_PARAM, "shm remote key: %zu bytes of room, needs %zu",
                          *buflen, sizeof(k));
    memcpy(buf, &k, sizeof(k));
    *buflen = sizeof(k);
    return TERN_OK;
}

static tern_status_t shm_rkey_unpack(tern_vc_t *vc, const void *buf, size_t buflen,
                                     tern_rkey_t *rkey)
{
    tern_shm_rkey_t k;
    if (buflen != sizeof(k))
        return tern_error(TERN_ERR_MALFORMED, "shm remote key from rank %d: %zu bytes", vc->rank,
                          buflen);
    memcpy(&k, buf, sizeof(k));
    if (k.kind != TERN_SHM_RKEY_KIND || k.pid != tern_shm_vc(vc)->pid || k.len == 0 ||
        k.addr + k.len < k.addr)
        return tern_error(TERN_ERR_REMOTE_ACCESS,
                          "shm remote key from rank %d (pid %d) names pid %d, %llu bytes at "
                          "%#llx: not a key of that process", vc->rank, tern_shm_vc(vc)->pid,
                          k.pid, (unsigned long long)k.len, (unsigned long long)k.addr);
    *rkey = (tern_rkey_t){.addr = k.addr, .len = k.len, .key = (uint64_t)k.pid};
    return TERN_OK;
}

static const tern_nm_core_ops_t shm_core = {
    .reachable = shm_reachable,
    .init = shm_init,
    .finalize = shm_finalize,
    .card = shm_card,
    .vc_init = shm_vc_init,
    .wireup_done = shm_wireup_done,
    .vc_destroy = shm_vc_destroy,
    .vc_terminate = shm_vc_terminate,
    .poll = shm_poll,
    .check_peers = shm_check_peers,
    .istart_contig_msg = tern_shm_istart_contig_msg,
    .send_noncontig = tern_shm_send_noncontig,
};

static const tern_nm_lmt_ops_t shm_lmt = {
    .modes = tern_shm_lmt_modes,
    .choose = tern_shm_lmt_choose,
    .initiate = tern_shm_lmt_initiate,
    .start_recv = tern_shm_lmt_start_recv,
    .start_send = tern_shm_lmt_start_send,
    .handle_cookie = tern_shm_lmt_handle_cookie,
    .done_send = tern_shm_lmt_done_send,
    .done_recv = tern_shm_lmt_done_recv,
};

static const tern_nm_wait_ops_t shm_wait = {
    .wait_fd = tern_shm_wait_fd,
    .arm = tern_shm_arm,
    .disarm = tern_shm_disarm,
};

static const tern_nm_mem_ops_t shm_mem = {
    .mem_reg = shm_mem_reg,
    .mem_dereg = shm_mem_dereg,
    .rkey_pack = shm_rkey_pack,
    .rkey_unpack = shm_rkey_unpack,
};

static const tern_netmod_desc_t shm_netmod = {
    .abi = TERN_NETMOD_ABI,
    .name = "shm",
    .priority = 100,
    .reach = "ranks on the same node",
    /* the copy buffer beat the single-copy CMA get at every size measured
     * here (both cores copy, the chunks stay in cache): CMA only for the
     * largest messages, which leave the sender's core free */
    .cma_threshold = 256u << 20,
    /* one-sided: below 8 KiB a put or get through the rings and the
     * target's progress beat the syscall (bench/RESULTS.md, 2026-11-28
     * 22:14: put + flush 0.58 us by packets, 1.08 us by the copy at 8 B);
     * from 8 KiB the copy wins in latency and bandwidth */
    .rma_cma_threshold = 8u << 10,
    .config = &tern_shm_config_table,
    .core = &shm_core,
    .lmt = &shm_lmt,
    .wait = &shm_wait,
    .mem = &shm_mem,
};
TERN_NETMOD_DEFINE(shm_netmod)
