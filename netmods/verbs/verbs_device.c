/*
 * verbs netmod: the device (opened once per process, shared by the
 * workers) and each worker's resources: protection domain, completion
 * channel, send and receive CQs, the shared receive queue, the UD QP of the
 * connection manager and the registered buffer slabs.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netmods/verbs/verbs_internal.h"

tern_status_t tern_verbs_err(tern_status_t st, int rank, const char *call, int err)
{
    if (rank >= 0)
        return tern_error(st, "verbs: %s (rank %d): %s", call, rank, strerror(err));
    return tern_error(st, "verbs: %s: %s", call, strerror(err));
}

/* ---- probe: is there a device with an active port? ------------------------ */

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static bool probe_ok;
static char probe_why[160];

static bool port_active(struct ibv_context *c, uint8_t port)
{
    struct ibv_port_attr pa;
    return ibv_query_port(c, port, &pa) == 0 && pa.state == IBV_PORT_ACTIVE;
}

static void probe(void)
{
    int n = 0;
    /* Before 5.12 a fork() after registration could leave the parent's
     * pinned pages to the child (copy on write): rdma-core's fork support
     * marks registered ranges MADV_DONTFORK.  Newer kernels copy pinned
     * pages at fork and need nothing (IBV_FORK_UNNEEDED).  It must come
     * before any other verbs call of the process: here. */
    if (ibv_is_fork_initialized() == IBV_FORK_DISABLED && ibv_fork_init() != 0)
        tern_warn("verbs: ibv_fork_init failed: a fork() after registering memory may "
                  "corrupt transfers on this kernel");
    errno = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (list == NULL || n == 0) {
        snprintf(probe_why, sizeof(probe_why), "no verbs device (ibv_get_device_list: %s)",
                 list == NULL ? strerror(errno) : "none listed");
        if (list != NULL)
            ibv_free_device_list(list);
        return;
    }
    snprintf(probe_why, sizeof(probe_why), "no verbs device has an active port (%d listed)", n);
    for (int i = 0; i < n && !probe_ok; i++) {
        struct ibv_context *c = ibv_open_device(list[i]);
        struct ibv_device_attr a;
        if (c == NULL)
            continue;
        if (ibv_query_device(c, &a) == 0)
            for (uint8_t p = 1; p <= a.phys_port_cnt && !probe_ok; p++)
                probe_ok = port_active(c, p);
        ibv_close_device(c);
    }
    ibv_free_device_list(list);
}

bool tern_verbs_available(const char **why)
{
    pthread_once(&probe_once, probe);
    if (why != NULL)
        *why = probe_ok ? NULL : probe_why;
    return probe_ok;
}

/* ---- the device ------------------------------------------------------------ */

/* TERN_VERBS_DEVICE "name[:port]" (or the first device with an active port):
 * open it and read what the cards and queue pairs need. */
static tern_status_t open_chosen(const tern_verbs_config_t *cfg, tern_verbs_dev_t *d)
{
    char want[64] = "";
    unsigned want_port = 0;
    if (cfg->device[0] != '\0') {
        const char *colon = strchr(cfg->device, ':');
        size_t nlen = colon ? (size_t)(colon - cfg->device) : strlen(cfg->device);
        snprintf(want, sizeof(want), "%.*s", (int)nlen, cfg->device);
        if (colon != NULL)
            want_port = (unsigned)strtoul(colon + 1, NULL, 10);
    }
    int n = 0;
    errno = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (list == NULL)
        return tern_error(TERN_ERR_NO_DEVICE, "verbs: ibv_get_device_list: %s", strerror(errno));
    /* why the last candidate was passed over: recorded (and logged) only
     * if none is taken, so that a device found after others is no error */
    char why[192];
    if (want[0])
        snprintf(why, sizeof(why), "no device %s (TERN_VERBS_DEVICE) among the %d listed", want, n);
    else
        snprintf(why, sizeof(why), "none of the %d devices has an active port", n);
    for (int i = 0; i < n && d->ctx == NULL; i++) {
        const char *name = ibv_get_device_name(list[i]);
        if (want[0] && strcmp(name, want) != 0)
            continue;
        struct ibv_context *c = ibv_open_device(list[i]);
        if (c == NULL) {
            snprintf(why, sizeof(why), "ibv_open_device (%s): %s", name, strerror(errno));
            continue;
        }
        if (ibv_query_device(c, &d->attr) != 0) {
            snprintf(why, sizeof(why), "ibv_query_device (%s): %s", name, strerror(errno));
            ibv_close_device(c);
            continue;
        }
        if (want_port > d->attr.phys_port_cnt) {
            snprintf(why, sizeof(why), "TERN_VERBS_DEVICE asks for port %u of %s, which has %u "
                     "port(s)", want_port, name, d->attr.phys_port_cnt);
            ibv_close_device(c);
            continue;
        }
        for (unsigned p = want_port ? want_port : 1;
             p <= (want_port ? want_port : d->attr.phys_port_cnt) && d->ctx == NULL; p++) {
            if (ibv_query_port(c, (uint8_t)p, &d->port_attr) != 0) {
                snprintf(why, sizeof(why), "ibv_query_port (%s port %u): %s", name, p,
                         strerror(errno));
                continue;
            }
            if (d->port_attr.state != IBV_PORT_ACTIVE) {
                snprintf(why, sizeof(why), "port %u of %s is %s", p, name,
                         ibv_port_state_str(d->port_attr.state));
                continue;
            }
            d->ctx = c;
            d->port = (uint8_t)p;
            snprintf(d->name, sizeof(d->name), "%s", name);
        }
        if (d->ctx == NULL)
            ibv_close_device(c);
    }
    ibv_free_device_list(list);
    return d->ctx != NULL ? TERN_OK : tern_error(TERN_ERR_NO_DEVICE, "verbs: %s", why);
}

tern_status_t tern_verbs_dev_open(const tern_verbs_config_t *cfg, tern_verbs_dev_t **out)
{
    (void)tern_verbs_available(NULL); /* fork support first, whatever the caller did */
    tern_verbs_dev_t *d = calloc(1, sizeof(*d));
    if (d == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "verbs device state");
    tern_status_t st = open_chosen(cfg, d);
    if (st != TERN_OK)
        goto err_free;
    d->gid_index = (uint8_t)cfg->gid_index;
    if ((int)cfg->gid_index >= d->port_attr.gid_tbl_len) {
        st = tern_error(TERN_ERR_INVALID_PARAM, "TERN_VERBS_GID_INDEX=%u: port %u of %s has %d "
                        "GIDs", (unsigned)cfg->gid_index, d->port, d->name,
                        d->port_attr.gid_tbl_len);
        goto err_close;
    }
    if (ibv_query_gid(d->ctx, d->port, d->gid_index, &d->gid) != 0) {
        st = tern_verbs_err(TERN_ERR_NO_DEVICE, -1, "ibv_query_gid", errno);
        goto err_close;
    }
    static const uint8_t zero[16];
    if (d->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET && memcmp(d->gid.raw, zero, 16) == 0) {
        st = tern_error(TERN_ERR_NO_DEVICE, "verbs: RoCE port %u of %s has no GID at index %u "
                        "(TERN_VERBS_GID_INDEX)", d->port, d->name, d->gid_index);
        goto err_close;
    }
    /* async events are read from the idle path: never block there */
    int fl = fcntl(d->ctx->async_fd, F_GETFL);
    if (fl < 0 || fcntl(d->ctx->async_fd, F_SETFL, fl | O_NONBLOCK) != 0) {
        st = tern_verbs_err(TERN_ERR_IO, -1, "fcntl(async_fd, O_NONBLOCK)", errno);
        goto err_close;
    }
    /* one protection domain for every worker: a region registered once
     * serves all their QPs (verbs_rma.c) */
    d->pd = ibv_alloc_pd(d->ctx);
    if (d->pd == NULL) {
        st = tern_verbs_err(TERN_ERR_NO_RESOURCE, -1, "ibv_alloc_pd", errno);
        goto err_close;
    }
    d->refs = 1;
    *out = d;
    return TERN_OK;
err_close:
    ibv_close_device(d->ctx);
err_free:
    free(d);
    return st;
}

void tern_verbs_dev_close(tern_verbs_dev_t *d)
{
    if (d == NULL || --d->refs > 0)
        return;
    if (d->pd != NULL && ibv_dealloc_pd(d->pd) != 0)
        tern_warn("verbs %s: ibv_dealloc_pd: a registration or a QP still uses it", d->name);
    ibv_close_device(d->ctx);
    free(d);
}

/* ---- registered slabs ------------------------------------------------------ */

tern_status_t tern_verbs_slab_init(tern_verbs_t *v, tern_verbs_slab_t *s, uint32_t size,
                                   uint32_t count, const char *what)
{
    s->size = size;
    s->count = count;
    if (posix_memalign((void **)&s->mem, 4096, (size_t)size * count) != 0) {
        s->mem = NULL;
        return tern_error(TERN_ERR_NO_MEMORY, "verbs %s: %u x %u bytes", what, count, size);
    }
    s->mr = ibv_reg_mr(v->pd, s->mem, (size_t)size * count, IBV_ACCESS_LOCAL_WRITE);
    if (s->mr == NULL)
        return tern_error(TERN_ERR_NO_RESOURCE, "verbs: ibv_reg_mr of the %s (%u x %u bytes): "
                          "%s", what, count, size, strerror(errno));
    return TERN_OK;
}

void tern_verbs_slab_fini(tern_verbs_slab_t *s)
{
    if (s->mr != NULL)
        ibv_dereg_mr(s->mr);
    free(s->mem);
    memset(s, 0, sizeof(*s));
}

/* ---- worker resources ---------------------------------------------------------- */

tern_status_t tern_verbs_srq_post(tern_verbs_t *v, const uint32_t *idx, uint32_t first,
                                  uint32_t n)
{
    struct ibv_recv_wr wr[32], *bad = NULL;
    struct ibv_sge sge[32];
    for (uint32_t done = 0; done < n;) {
        uint32_t k = n - done > 32 ? 32 : n - done;
        for (uint32_t i = 0; i < k; i++) {
            uint32_t b = idx != NULL ? idx[done + i] : first + done + i;
            sge[i] = (struct ibv_sge){(uintptr_t)tern_verbs_slab_buf(&v->rx, b), v->rx.size,
                                      v->rx.mr->lkey};
            wr[i] = (struct ibv_recv_wr){.wr_id = TERN_VERBS_WR(WR_SRQ, b),
                                         .next = i + 1 < k ? &wr[i + 1] : NULL,
                                         .sg_list = &sge[i], .num_sge = 1};
        }
        v->stats.post_recv++;
        v->stats.post_recv_wrs += k;
        int rc = ibv_post_srq_recv(v->srq, wr, &bad);
        if (rc != 0)
            return tern_verbs_err(TERN_ERR_NO_RESOURCE, -1, "ibv_post_srq_recv", rc);
        v->srq_posted += k;
        done += k;
    }
    return TERN_OK;
}

/* Bring buffers into circulation up to srq_target: a buffer is posted
 * once here, then reposted by poll each time it is consumed. */
tern_status_t tern_verbs_srq_fill(tern_verbs_t *v)
{
    if (v->rx_next >= v->srq_target)
        return TERN_OK;
    uint32_t n = v->srq_target - v->rx_next;
    tern_status_t st = tern_verbs_srq_post(v, NULL, v->rx_next, n);
    if (st == TERN_OK)
        v->rx_next += n;
    return st;
}

static tern_status_t ud_qp_create(tern_verbs_t *v)
{
    struct ibv_qp_init_attr ia = {
        .send_cq = v->scq, .recv_cq = v->rcq, .qp_type = IBV_QPT_UD,
        .cap = {.max_send_wr = TERN_VERBS_UD_SENDS, .max_recv_wr = TERN_VERBS_UD_RECVS,
                .max_send_sge = 1, .max_recv_sge = 1},
        .sq_sig_all = 1,
    };
    v->ud = ibv_create_qp(v->pd, &ia);
    if (v->ud == NULL)
        return tern_verbs_err(TERN_ERR_NO_RESOURCE, -1, "ibv_create_qp (UD)", errno);
    if (ia.cap.max_send_wr < TERN_VERBS_UD_SENDS || ia.cap.max_recv_wr < TERN_VERBS_UD_RECVS)
        return tern_error(TERN_ERR_NO_RESOURCE, "verbs %s: ibv_create_qp (UD) granted %u sends "
                          "and %u receives (%u and %u asked)", v->dev->name,
                          ia.cap.max_send_wr, ia.cap.max_recv_wr, TERN_VERBS_UD_SENDS,
                          TERN_VERBS_UD_RECVS);
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0,
                            .port_num = v->dev->port, .qkey = TERN_VERBS_QKEY};
    int rc = ibv_modify_qp(v->ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
    if (rc == 0) {
        a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR};
        rc = ibv_modify_qp(v->ud, &a, IBV_QP_STATE);
    }
    if (rc == 0) {
        a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .sq_psn = 0};
        rc = ibv_modify_qp(v->ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
    }
    if (rc != 0)
        return tern_verbs_err(TERN_ERR_NO_RESOURCE, -1, "ibv_modify_qp (UD to RTS)", rc);
    return tern_verbs_post_ud_recvs(v, 0, TERN_VERBS_UD_RECVS);
}

/* The settings fitted to what the device reports: a send queue of at most
 * max_qp_wr (a power of two, as TERN_VERBS_TX_DEPTH is), a completion every
 * half queue at least, an SRQ within max_srq_wr and, with the UD receives,
 * within one CQ.  Each cut is a warning (HCAs take the defaults: only small
 * devices see one). */
static tern_status_t fit_to_device(tern_verbs_t *v)
{
    tern_verbs_config_t *c = &v->cfg_dev;
    const struct ibv_device_attr *a = &v->dev->attr;
    if (a->max_sge > 0 && a->max_sge < 2)
        return tern_error(TERN_ERR_UNSUPPORTED, "verbs %s: %d scatter/gather entries per work "
                          "request; inline sends of header and data need 2", v->dev->name,
                          a->max_sge);
    /* the connection manager's UD QP has fixed queues */
    uint32_t ud_wr = TERN_VERBS_UD_SENDS > TERN_VERBS_UD_RECVS ? TERN_VERBS_UD_SENDS
                                                                : TERN_VERBS_UD_RECVS;
    if (a->max_qp_wr > 0 && (uint32_t)a->max_qp_wr < ud_wr)
        return tern_error(TERN_ERR_UNSUPPORTED, "verbs %s: %d work requests per queue (%u "
                          "needed)", v->dev->name, a->max_qp_wr, ud_wr);
    if (a->max_qp_wr > 0 && c->tx_depth > (uint64_t)a->max_qp_wr) {
        uint64_t d = 1;
        while (d * 2 <= (uint64_t)a->max_qp_wr)
            d *= 2;
        tern_warn("verbs %s: send queues of %llu work requests (TERN_VERBS_TX_DEPTH=%llu is "
                  "more than max_qp_wr %d)", v->dev->name, (unsigned long long)d,
                  (unsigned long long)c->tx_depth, a->max_qp_wr);
        c->tx_depth = d;
    }
    if (c->signal_every > c->tx_depth / 2)
        c->signal_every = c->tx_depth / 2;
    /* a CQ holds the shared receives and the UD ones, and at least 64 of
     * each (TERN_VERBS_SRQ_MAX's minimum) */
    if (a->max_cqe > 0 && (uint64_t)a->max_cqe < 64 + TERN_VERBS_UD_RECVS)
        return tern_error(TERN_ERR_UNSUPPORTED, "verbs %s: %d completions per CQ (%u needed)",
                          v->dev->name, a->max_cqe, 64 + TERN_VERBS_UD_RECVS);
    uint64_t srq_cap = a->max_srq_wr > 0 ? (uint64_t)a->max_srq_wr : c->srq_max;
    if (a->max_cqe > 0 && (uint64_t)a->max_cqe < srq_cap + TERN_VERBS_UD_RECVS)
        srq_cap = (uint64_t)a->max_cqe - TERN_VERBS_UD_RECVS;
    if (c->srq_max > srq_cap) {
        tern_warn("verbs %s: %llu shared receives (TERN_VERBS_SRQ_MAX=%llu is more than the "
                  "device's max_srq_wr %d / max_cqe %d take)", v->dev->name,
                  (unsigned long long)srq_cap, (unsigned long long)c->srq_max, a->max_srq_wr,
                  a->max_cqe);
        c->srq_max = srq_cap;
    }
    return TERN_OK;
}

tern_status_t tern_verbs_worker_open(tern_verbs_t *v)
{
    tern_status_t fst = fit_to_device(v);
    if (fst != TERN_OK)
        return fst;
    const tern_verbs_config_t *cfg = v->cfg;
    const struct ibv_device_attr *a = &v->dev->attr;
    uint32_t srq_max = (uint32_t)cfg->srq_max;
    v->pd = v->dev->pd; /* the device's: shared with the other workers */
    v->channel = ibv_create_comp_channel(v->dev->ctx);
    if (v->channel == NULL)
        return tern_verbs_err(TERN_ERR_NO_RESOURCE, -1, "ibv_create_comp_channel", errno);
    int fl = fcntl(v->channel->fd, F_GETFL);
    if (fl < 0 || fcntl(v->channel->fd, F_SETFL, fl | O_NONBLOCK) != 0)
        return tern_verbs_err(TERN_ERR_IO, -1, "fcntl(channel fd, O_NONBLOCK)", errno);
    /* every posted send work request may produce a completion (errors
     * flush them all): posting stops at scq_size outstanding, so the send
     * CQ never overflows; the receive CQ holds every posted receive */
    v->scq_size = (uint32_t)cfg->tx_depth * 16 + TERN_VERBS_UD_SENDS;
    if (a->max_cqe > 0 && v->scq_size > (uint32_t)a->max_cqe)
        v->scq_size = (uint32_t)a->max_cqe;
    uint32_t rcq_size = srq_max + TERN_VERBS_UD_RECVS;
    v->scq = ibv_create_cq(v->dev->ctx, (int)v->scq_size, v, v->channel, 0);
    v->rcq = v->scq ? ibv_create_cq(v->dev->ctx, (int)rcq_size, v, v->channel, 0) : NULL;
    if (v->scq == NULL || v->rcq == NULL)
        return tern_verbs_err(TERN_ERR_NO_RESOURCE, -1, "ibv_create_cq", errno);
    v->scq_size -= TERN_VERBS_UD_SENDS; /* room kept for the connection manager */
    struct ibv_srq_init_attr sa = {.attr = {.max_wr = srq_max, .max_sge = 1}};
    v->srq = ibv_create_srq(v->pd, &sa);
    if (v->srq == NULL)
        return tern_verbs_err(TERN_ERR_NO_RESOURCE, -1, "ibv_create_srq", errno);
    tern_status_t st = tern_verbs_slab_init(v, &v->rx, (uint32_t)cfg->seg_size, srq_max,
                                            "receive buffers");
    uint32_t ntx = (uint32_t)cfg->tx_depth < 64 ? 64 : (uint32_t)cfg->tx_depth;
    if (st == TERN_OK)
        st = tern_verbs_slab_init(v, &v->tx, (uint32_t)cfg->seg_size, ntx, "send buffers");
    if (st == TERN_OK)
        st = tern_verbs_slab_init(v, &v->udrx, 128, TERN_VERBS_UD_RECVS, "UD receive buffers");
    if (st == TERN_OK)
        st = tern_verbs_slab_init(v, &v->udtx, 128, TERN_VERBS_UD_SENDS, "UD send buffers");
    if (st != TERN_OK)
        return st;
    v->tx_free = malloc(ntx * sizeof(*v->tx_free));
    v->rx_repost = malloc(srq_max * sizeof(*v->rx_repost));
    if (v->tx_free == NULL || v->rx_repost == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "verbs buffer tables");
    for (uint32_t i = 0; i < ntx; i++)
        v->tx_free[i] = (int32_t)(ntx - 1 - i);
    v->ntx_free = ntx;
    v->rx.count = srq_max;
    /* a first share so the first peers need not wait for a refill */
    v->srq_target = srq_max < 64 ? srq_max : 64;
    st = tern_verbs_srq_fill(v);
    if (st != TERN_OK)
        return st;
    return ud_qp_create(v);
}

void tern_verbs_worker_close(tern_verbs_t *v)
{
    tern_verbs_lb_close(v);
    if (v->ud != NULL)
        ibv_destroy_qp(v->ud);
    if (v->srq != NULL)
        ibv_destroy_srq(v->srq);
    tern_verbs_slab_fini(&v->rx);
    tern_verbs_slab_fini(&v->tx);
    tern_verbs_slab_fini(&v->udrx);
    tern_verbs_slab_fini(&v->udtx);
    if (v->scq != NULL)
        ibv_destroy_cq(v->scq);
    if (v->rcq != NULL)
        ibv_destroy_cq(v->rcq);
    if (v->channel != NULL)
        ibv_destroy_comp_channel(v->channel);
    free(v->tx_free);
    free(v->rx_repost);
    v->ud = NULL;
    v->srq = NULL;
    v->scq = v->rcq = NULL;
    v->channel = NULL;
    v->pd = NULL;
}

/* ---- async events ------------------------------------------------------------- */

/* The device context, and so its async fd, is the process's: worker 0
 * reads the events (from its idle path) and reports them all.  It fails
 * only VCs of its own: a QP error of another worker's QP is reported, and
 * that worker's VC fails through the error completions the QP in error
 * state produces on its own CQs, on its own thread. */
void tern_verbs_async_events(tern_verbs_t *v)
{
    struct ibv_async_event ev;
    for (int k = 0; k < 16 && ibv_get_async_event(v->dev->ctx, &ev) == 0; k++) {
        tern_verbs_vc_t *tv = NULL;
        switch (ev.event_type) {
        case IBV_EVENT_QP_FATAL:
        case IBV_EVENT_QP_REQ_ERR:
        case IBV_EVENT_QP_ACCESS_ERR:
        case IBV_EVENT_PATH_MIG_ERR:
            tv = tern_verbs_qpn_get(v->qpns, ev.element.qp->qp_num);
            if (tv != NULL && ev.element.qp == tv->rqp) {
                /* the one-sided QP: a refused operation (verbs_rma.c), ours or
                 * the peer's; its completions say the rest */
                tern_debug("verbs %s: async event %s on the one-sided QP %u (rank %d)",
                           v->dev->name, ibv_event_type_str(ev.event_type),
                           ev.element.qp->qp_num, tv->vc->rank);
                tern_verbs_rma_down(tv, ibv_event_type_str(ev.event_type));
                break;
            }
            tern_warn("verbs %s: async event %s on QP %u%s", v->dev->name,
                      ibv_event_type_str(ev.event_type), ev.element.qp->qp_num,
                      tv ? "" : " (another worker's, or already gone)");
            if (tv != NULL && tv->vc->state != TERN_VC_FAILED) {
                char why[160];
                snprintf(why, sizeof(why), "verbs %s: async event %s on its RC QP %u",
                         v->dev->name, ibv_event_type_str(ev.event_type),
                         ev.element.qp->qp_num);
                tern_vc_fail(tv->vc, TERN_ERR_PEER_FAILED, why);
            }
            break;
        case IBV_EVENT_PORT_ERR:
        case IBV_EVENT_PORT_ACTIVE:
        case IBV_EVENT_LID_CHANGE:
        case IBV_EVENT_GID_CHANGE:
            tern_warn("verbs %s: async event %s on port %d", v->dev->name,
                      ibv_event_type_str(ev.event_type), ev.element.port_num);
            break;
        case IBV_EVENT_QP_LAST_WQE_REACHED:
            /* a QP on the SRQ went to ERR: ours, retired when its VC ended
             * (a disconnect, a port peer leaving); tern_verbs_reap destroys
             * it once drained */
            tern_debug("verbs %s: QP %u retired: its last WQE is reached", v->dev->name,
                       ev.element.qp->qp_num);
            break;
        case IBV_EVENT_CQ_ERR:
            tern_warn("verbs %s: async event %s (a completion queue overran)", v->dev->name,
                      ibv_event_type_str(ev.event_type));
            break;
        case IBV_EVENT_DEVICE_FATAL:
            tern_warn("verbs %s: async event %s: the device is unusable", v->dev->name,
                      ibv_event_type_str(ev.event_type));
            break;
        default:
            tern_warn("verbs %s: async event %s", v->dev->name,
                      ibv_event_type_str(ev.event_type));
            break;
        }
        ibv_ack_async_event(&ev);
    }
}
