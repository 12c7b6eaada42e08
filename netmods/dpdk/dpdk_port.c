/*
 * dpdk netmod: ports.  TERN_DPDK_VDEV is a template expanded for each
 * worker, and for each peer when it names one (a point-to-point device):
 *   %r  this rank            %w  the worker index     %j  the job (hash, hex)
 *   %p  the peer's rank      %l / %h  the lower / higher rank of the pair
 *   %R  "server" for the lower rank of the pair, "client" for the higher
 *   %L  this rank's index on its node                 %%  a percent sign
 * Towards a rank of another job (tern_connect, tern_peer_insert) a rank is
 * named "<job hex>_<rank>", the pair's ends are ordered by (job, rank) and
 * %j is the lower end's job: both sides expand the same names.
 * e.g. memif between every pair of ranks:
 *   net_memif_%w_%p,role=%R,id=0,socket=/tmp/tern-%j-%w-%l-%h.sock,socket-abstract=no
 * and a shared medium, one port per worker:
 *   net_af_packet%w,iface=veth%L
 * The part before the first comma names the device (unique per process).
 *
 * A memif client cannot start before its server listens: its start is
 * retried from the progress loop until TERN_DPDK_CONNECT_MS.  Nor does a
 * connection the client made before its server was configured complete
 * (the handshake runs in the server's interrupt thread, which finds no
 * queues), and DPDK's memif never connects again by itself: a client
 * whose link is not up RESTART_NS after its start is stopped and started
 * again.  Frames sent meanwhile wait in the VC's window (the port takes
 * none).  A link that went down after frames came through it means the
 * peer's end closed: its process ended (memif sees the socket close); the
 * VC fails at once.  Before any frame came, it is the client restarting
 * (its link was late on its side): the server waits for it again.
 *
 * Point-to-point ports are never closed, only abandoned at finalize: the
 * peer's disconnect is handled by EAL's interrupt thread, and DPDK 22.11's
 * memif frees its control channel there while a close in the main thread
 * frees the port under it (SIGSEGV in the interrupt thread, seen here in
 * 1 of ~5 finalizes).  The process's exit closes them.  memif never
 * removes its socket file: the server unlinks it at the first frame from
 * the client (dpdk_rel.c; not when the link comes up: a client restarting
 * then would find no file to dial), else when it abandons the port.  A
 * later tern_init in the same process names its devices anew (_r<n>).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/bpf.h> /* XDP_PACKET_HEADROOM */

#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf_pool_ops.h>

#include "netmods/dpdk/dpdk_internal.h"

#define RESTART_NS 200000000ull

bool tern_dpdk_per_peer(const char *tmpl)
{
    for (const char *p = tmpl; (p = strchr(p, '%')) != NULL; p += 2) {
        if (p[1] == '\0')
            break;
        if (strchr("plhR", p[1]) != NULL)
            return true;
    }
    return false;
}

/* A pair's end: "rank" within this job, "<job hex>_<rank>" across jobs. */
static int end_name(char *out, size_t len, bool cross, uint32_t job, int rank)
{
    return cross ? snprintf(out, len, "%08x_%d", job, rank) : snprintf(out, len, "%d", rank);
}

tern_status_t tern_dpdk_expand(const char *tmpl, const tern_dpdk_t *d, uint32_t peer_job,
                               int peer, char *out, size_t len)
{
    int me = d->ctx->rank;
    bool cross = peer >= 0 && peer_job != d->job;
    /* the lower end of the pair, ordered by (job, rank) */
    bool me_low = cross ? d->job < peer_job : me < peer;
    size_t n = 0;
    for (const char *p = tmpl; *p && n + 1 < len; p++) {
        if (*p != '%') {
            out[n++] = *p;
            continue;
        }
        char c = *++p;
        int w = -1;
        switch (c) {
        case 'r': w = snprintf(out + n, len - n, "%d", me); break;
        case 'w': w = snprintf(out + n, len - n, "%d", d->worker->index); break;
        case 'j': /* the pair's: the lower end's job */
            w = snprintf(out + n, len - n, "%08x", cross && !me_low ? peer_job : d->job);
            break;
        case 'L':
            if (tern_ctx_local_rank(d->ctx) < 0)
                return tern_error(TERN_ERR_INVALID_PARAM, "TERN_DPDK_VDEV=\"%s\": %%L (this "
                                  "rank's index on its node) is not known before the ranks' "
                                  "addresses are in (a wire-up without a launcher)", tmpl);
            w = snprintf(out + n, len - n, "%d", tern_ctx_local_rank(d->ctx));
            break;
        case '%': w = snprintf(out + n, len - n, "%%"); break;
        case 'p': case 'l': case 'h': case 'R':
            if (peer < 0)
                return tern_error(TERN_ERR_INVALID_PARAM, "TERN_DPDK_VDEV=\"%s\": %%%c "
                                  "without a peer", tmpl, c);
            if (c == 'p')
                w = end_name(out + n, len - n, cross, peer_job, peer);
            else if (c == 'l')
                w = me_low ? end_name(out + n, len - n, cross, d->job, me)
                           : end_name(out + n, len - n, cross, peer_job, peer);
            else if (c == 'h')
                w = me_low ? end_name(out + n, len - n, cross, peer_job, peer)
                           : end_name(out + n, len - n, cross, d->job, me);
            else
                w = snprintf(out + n, len - n, "%s", me_low ? "server" : "client");
            break;
        default:
            return tern_error(TERN_ERR_INVALID_PARAM, "TERN_DPDK_VDEV=\"%s\": unknown "
                              "placeholder %%%c", tmpl, c ? c : ' ');
        }
        if (w < 0 || (size_t)w >= len - n)
            break;
        n += (size_t)w;
    }
    if (n + 1 >= len)
        return tern_error(TERN_ERR_INVALID_PARAM, "TERN_DPDK_VDEV=\"%s\": longer than %zu bytes "
                          "when expanded", tmpl, len - 1);
    out[n] = '\0';
    return TERN_OK;
}

/* The worker's pool, made at the first port: its mbufs hold a whole frame
 * of that port's MTU (no scattered receive).
 *
 * packed: objects back to back, none moved to a page boundary.  af_xdp
 * (22.11) registers as its UMEM the first chunk's start plus n x object
 * size, assuming that.  By default the mempool keeps each object inside
 * one page: with 4 KiB pages (no hugepages) a 2368-byte object takes a
 * page of its own, the pool spans 33.5 MB for a 19.4 MB UMEM, and the
 * kernel drops every frame in an mbuf beyond it as an invalid descriptor
 * (counted in XDP_STATISTICS only, never completed).  Seen: a rank whose
 * pool had cycled to those mbufs sent nothing more for 30 s.  Packed
 * objects may straddle pages, which only a device that DMAs from the
 * buffers (not af_xdp's copy) would mind. */
/* rte_pktmbuf_pool_create's steps, with RTE_MEMPOOL_F_NO_IOVA_CONTIG */
static struct rte_mempool *packed_pool(const char *name, unsigned n, unsigned cache,
                                       uint16_t room, int sock)
{
    struct rte_pktmbuf_pool_private priv = {.mbuf_data_room_size = room};
    struct rte_mempool *mp =
        rte_mempool_create_empty(name, n, (unsigned)(sizeof(struct rte_mbuf) + room), cache,
                                 sizeof(priv), sock, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
    if (mp == NULL)
        return NULL;
    if (rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL) != 0)
        goto fail;
    rte_pktmbuf_pool_init(mp, &priv);
    if (rte_mempool_populate_default(mp) < 0)
        goto fail;
    rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
    return mp;
fail:
    rte_mempool_free(mp);
    return NULL;
}

static void obj_end(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
    (void)idx;
    uintptr_t *end = arg, e = (uintptr_t)obj + mp->elt_size + mp->trailer_size;
    if (e > *end)
        *end = e;
}

/* Every object inside the UMEM af_xdp registers for mp: the first chunk's
 * page-aligned start plus populated_size x the whole object size. */
static bool umem_covers(struct rte_mempool *mp)
{
    struct rte_mempool_memhdr *mh = STAILQ_FIRST(&mp->mem_list);
    if (mp->nb_mem_chunks != 1 || mh == NULL)
        return false;
    uintptr_t base = (uintptr_t)mh->addr & ~(uintptr_t)(getpagesize() - 1), end = 0;
    uint64_t umem = (uintptr_t)mh->addr - base +
                    (uint64_t)mp->populated_size * rte_mempool_calc_obj_size(mp->elt_size,
                                                                             mp->flags, NULL);
    rte_mempool_obj_iter(mp, obj_end, &end);
    return end - base <= umem;
}

static tern_status_t pool_for(tern_dpdk_t *d, uint32_t max_frame, bool packed)
{
    if (d->pool != NULL)
        return TERN_OK;
    char name[RTE_MEMPOOL_NAMESIZE];
    snprintf(name, sizeof(name), "tern%d_%d", d->ctx->rank, d->worker->index);
    uint32_t room = RTE_PKTMBUF_HEADROOM + max_frame;
    if (room < RTE_MBUF_DEFAULT_BUF_SIZE)
        room = RTE_MBUF_DEFAULT_BUF_SIZE;
    unsigned n = (unsigned)d->cfg->pool, cache = 256;
    int sock = (int)rte_socket_id();
    d->pool = packed ? packed_pool(name, n, cache, (uint16_t)room, sock)
                     : rte_pktmbuf_pool_create(name, n, cache, 0, (uint16_t)room, sock);
    if (d->pool == NULL)
        return tern_error(TERN_ERR_NO_RESOURCE, "dpdk: mbuf pool of %u x %u bytes: %s (more "
                          "TERN_DPDK_MEM_MB or hugepages, or a smaller TERN_DPDK_POOL)", n, room,
                          rte_strerror(rte_errno));
    if (packed && !umem_covers(d->pool)) /* the kernel would drop frames in the others */
        return tern_error(TERN_ERR_NO_RESOURCE, "dpdk: the mbuf pool of %u x %u bytes for "
                          "af_xdp is not one packed block (%u memory chunks): the UMEM af_xdp "
                          "makes of it would miss mbufs (more TERN_DPDK_MEM_MB, or a smaller "
                          "TERN_DPDK_POOL)", n, room, d->pool->nb_mem_chunks);
    return TERN_OK;
}

static tern_status_t find_port(const char *name, uint16_t *id)
{
    if (rte_eth_dev_get_port_by_name(name, id) == 0)
        return TERN_OK;
    uint16_t pid;
    RTE_ETH_FOREACH_DEV(pid)
    {
        struct rte_eth_dev_info info;
        if (rte_eth_dev_info_get(pid, &info) == 0 && info.device != NULL &&
            strcmp(rte_dev_name(info.device), name) == 0) {
            *id = pid;
            return TERN_OK;
        }
    }
    return tern_error(TERN_ERR_UNSUPPORTED, "dpdk: no port named %s (%u ports: is the device "
                      "bound to a DPDK driver?)", name, rte_eth_dev_count_avail());
}

static tern_status_t configure(tern_dpdk_t *d, tern_dpdk_port_t *p)
{
    struct rte_eth_dev_info info;
    int rc = rte_eth_dev_info_get(p->id, &info);
    if (rc != 0)
        return tern_error(TERN_ERR_IO, "dpdk %s: rte_eth_dev_info_get: %s", p->name,
                          rte_strerror(-rc));
    /* memif and af_packet report a 1518-byte max_rx_pktlen whatever their
     * buffers: what bounds a frame there is dpdk_devargs.c's frame_cap, and
     * ethdev is told 1500 */
    bool capped = p->frame_cap != 0;
    uint32_t max_rx = capped ? p->frame_cap : info.max_rx_pktlen;
    uint32_t mtu = d->cfg->mtu ? (uint32_t)d->cfg->mtu
                               : tern_dpdk_kernel_mtu(info.if_index); /* (<= 9600) */
    if (mtu == 0)
        mtu = RTE_ETHER_MTU;
    if (!capped && mtu > info.max_mtu)
        mtu = info.max_mtu;
    if (mtu + RTE_ETHER_HDR_LEN > max_rx)
        mtu = max_rx - RTE_ETHER_HDR_LEN;
    if (mtu < TERN_DPDK_HDR_SIZE + TERN_DPDK_LMT_EXT_SIZE + 64)
        return tern_error(TERN_ERR_UNSUPPORTED, "dpdk %s: MTU %u is too small", p->name, mtu);
    p->multiseg = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0;
    /* af_xdp's kernel side writes a frame XDP_PACKET_HEADROOM (256) past
     * where the mbuf's headroom ends: that much more room, or a frame near
     * the MTU is dropped before the port sees it (seen at MTU 3400) */
    bool af_xdp = strcmp(info.driver_name, "net_af_xdp") == 0;
    uint32_t xdp_room = af_xdp ? XDP_PACKET_HEADROOM : 0;
    /* and its UMEM chunk (one pool object) must fit a page */
    while (af_xdp && mtu > RTE_ETHER_MTU &&
           rte_mempool_calc_obj_size(sizeof(struct rte_mbuf) + RTE_PKTMBUF_HEADROOM + mtu +
                                         RTE_ETHER_HDR_LEN + xdp_room,
                                     RTE_MEMPOOL_F_NO_IOVA_CONTIG, NULL) > (uint32_t)getpagesize())
        mtu -= 2;
    uint32_t room_need = mtu + RTE_ETHER_HDR_LEN + xdp_room;
    if (p->rx_room > room_need)
        room_need = p->rx_room;
    tern_status_t st = pool_for(d, room_need, af_xdp);
    if (st != TERN_OK)
        return st;
    uint32_t room = rte_pktmbuf_data_room_size(d->pool) - RTE_PKTMBUF_HEADROOM - xdp_room;
    if (mtu + RTE_ETHER_HDR_LEN > room)
        mtu = room - RTE_ETHER_HDR_LEN; /* a later per-peer port with a larger MTU */
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof(conf));
    conf.rxmode.mtu = capped && mtu > RTE_ETHER_MTU ? RTE_ETHER_MTU : mtu; /* ethdev checks */
    if (p->multiseg)
        conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
    /* block mode sleeps on queue 0's RX interrupt where the PMD has one
     * (dpdk_wait.c); a device that refuses the setting is configured
     * without it and keeps the sleep slices */
    conf.intr_conf.rxq = d->ctx->cfg.wait_mode == TERN_WAIT_BLOCK && d->cfg->rx_intr;
    rc = rte_eth_dev_configure(p->id, 1, 1, &conf);
    if (rc != 0 && conf.intr_conf.rxq) {
        conf.intr_conf.rxq = 0;
        rc = rte_eth_dev_configure(p->id, 1, 1, &conf);
    }
    p->intr_conf = conf.intr_conf.rxq != 0;
    if (rc != 0 && conf.rxmode.mtu != RTE_ETHER_MTU) {
        /* the device keeps its own MTU (af_packet): take it */
        conf.rxmode.mtu = 0;
        rc = rte_eth_dev_configure(p->id, 1, 1, &conf);
        uint16_t m = 0;
        if (rc == 0 && rte_eth_dev_get_mtu(p->id, &m) == 0 && m != 0)
            mtu = m;
    }
    if (rc != 0)
        return tern_error(TERN_ERR_IO, "dpdk %s: rte_eth_dev_configure: %s", p->name,
                          rte_strerror(-rc));
    uint16_t nrx = (uint16_t)d->cfg->rx_desc, ntx = (uint16_t)d->cfg->tx_desc;
    rte_eth_dev_adjust_nb_rx_tx_desc(p->id, &nrx, &ntx);
    int sock = rte_eth_dev_socket_id(p->id);
    if (sock < 0)
        sock = (int)rte_socket_id();
    rc = rte_eth_rx_queue_setup(p->id, 0, nrx, (unsigned)sock, NULL, d->pool);
    if (rc == 0)
        rc = rte_eth_tx_queue_setup(p->id, 0, ntx, (unsigned)sock, NULL);
    if (rc != 0)
        return tern_error(TERN_ERR_IO, "dpdk %s: queue setup (%u rx, %u tx descriptors): %s%s",
                          p->name, nrx, ntx, rte_strerror(-rc),
                          af_xdp ? " (af_xdp: a veth takes an XDP program only with an MTU up "
                                   "to about 3500 on both ends; see the PMD's messages)"
                                 : "");
    rte_eth_macaddr_get(p->id, &p->mac);
    p->mtu = (uint16_t)mtu;
    p->max_frame = mtu + RTE_ETHER_HDR_LEN;
    return TERN_OK;
}

static bool try_start(tern_dpdk_t *d, tern_dpdk_port_t *p, uint64_t now)
{
    if (p->started && !p->link_up && p->client && now - p->started_ns > RESTART_NS) {
        tern_debug("dpdk %s: no link %llu ms after the start: restarting", p->name,
                   (unsigned long long)((now - p->started_ns) / 1000000));
        rte_eth_dev_stop(p->id);
        p->started = false;
    }
    if (!p->started) {
        p->started_ns = now;
        /* a client before its server fails to dial: retried, not logged */
        /* (net_tap: its start asks EAL's multi-process channel, which
         * --in-memory / --no-shconf turn off, and logs that it failed) */
        int lt = p->client ? rte_log_register("pmd.net.memif")
                 : strncmp(p->name, "net_tap", 7) == 0 ? rte_log_register("pmd.net.tap") : -1;
        int level = lt >= 0 ? rte_log_get_level((uint32_t)lt) : 0;
        if (lt >= 0)
            rte_log_set_level((uint32_t)lt, RTE_LOG_CRIT);
        int rc = rte_eth_dev_start(p->id);
        if (lt >= 0)
            rte_log_set_level((uint32_t)lt, (uint32_t)level);
        if (rc != 0) {
            tern_debug("dpdk %s: start: %s (retried)", p->name, rte_strerror(-rc));
            return false;
        }
        tern_debug("dpdk %s: started", p->name);
        p->started = true;
        tern_dpdk_intr_attach(d, p);
    }
    struct rte_eth_link link;
    if (rte_eth_link_get_nowait(p->id, &link) == 0 && link.link_status == RTE_ETH_LINK_UP)
        p->link_up = true;
    return p->link_up;
}

tern_status_t tern_dpdk_port_open(tern_dpdk_t *d, const char *devargs, bool vdev,
                                  tern_dpdk_port_t *p)
{
    memset(p, 0, sizeof(*p));
    p->client = strstr(devargs, "role=client") != NULL;
    p->id = RTE_MAX_ETHPORTS;
    const char *comma = strchr(devargs, ',');
    size_t nlen = comma ? (size_t)(comma - devargs) : strlen(devargs);
    if (nlen >= sizeof(p->name))
        return tern_error(TERN_ERR_INVALID_PARAM, "dpdk: device name of %s is too long", devargs);
    memcpy(p->name, devargs, nlen);
    p->name[nlen] = '\0';
    const char *sock = strstr(devargs, "socket=");
    if (p->client == false && strstr(devargs, "role=server") != NULL && sock != NULL) {
        size_t sl = strcspn(sock + 7, ",");
        if (sl < sizeof(p->sock_path)) {
            memcpy(p->sock_path, sock + 7, sl);
            p->sock_path[sl] = '\0';
        }
    }
    uint16_t existing;
    for (int k = 1; vdev && rte_eth_dev_get_port_by_name(p->name, &existing) == 0 && k < 1000;
         k++) {
        /* an abandoned port of an earlier tern_init keeps the name */
        if (nlen + 8 >= sizeof(p->name))
            return tern_error(TERN_ERR_INVALID_PARAM, "dpdk: device name of %s is too long",
                              devargs);
        snprintf(p->name + nlen, sizeof(p->name) - nlen, "_r%d", k);
    }
    char args[512];
    snprintf(args, sizeof(args), "%s", comma ? comma + 1 : "");
    if (vdev) {
        tern_status_t st = tern_dpdk_devargs_frames(d, p, args, sizeof(args));
        if (st != TERN_OK)
            return st;
        int rc = rte_eal_hotplug_add("vdev", p->name, args);
        if (rc != 0)
            return tern_error(TERN_ERR_UNSUPPORTED, "dpdk: creating %s failed (%s): is its "
                              "driver installed (Debian: dpdk), are its arguments right?",
                              devargs, rte_strerror(-rc));
        p->created = true;
    }
    tern_status_t st = find_port(p->name, &p->id);
    if (st == TERN_OK)
        st = configure(d, p);
    if (st == TERN_OK) {
        st = tern_dpdk_fault_parse(d->cfg->faults, (unsigned)d->ctx->rank * 131u + p->id,
                                   &p->fault);
    }
    if (st != TERN_OK) {
        tern_dpdk_port_close(p);
        return st;
    }
    uint64_t now = tern_now_ns();
    p->start_deadline_ns = now + d->cfg->connect_ms * 1000000ull;
    try_start(d, p, now);
    return TERN_OK;
}

bool tern_dpdk_port_ready(tern_dpdk_t *d, tern_dpdk_port_t *p)
{
    if (p->link_up)
        return true;
    if (d->now_ns < p->next_start_ns)
        return false;
    p->next_start_ns = d->now_ns + 1000000; /* a memif client retries every 1 ms */
    return try_start(d, p, d->now_ns);
}

bool tern_dpdk_port_check_link(tern_dpdk_t *d, tern_dpdk_port_t *p)
{
    if (!p->link_up || d->now_ns - p->link_checked_ns < 10000000ull)
        return false;
    p->link_checked_ns = d->now_ns;
    struct rte_eth_link link;
    if (rte_eth_link_get_nowait(p->id, &link) != 0 || link.link_status != RTE_ETH_LINK_DOWN)
        return false;
    tern_debug("dpdk %s: link down", p->name);
    p->link_up = false;
    p->started_ns = d->now_ns; /* a client restarts RESTART_NS from now */
    p->start_deadline_ns = d->now_ns + d->cfg->connect_ms * 1000000ull;
    return true;
}

void tern_dpdk_port_close(tern_dpdk_port_t *p)
{
    if (p->id >= RTE_MAX_ETHPORTS)
        goto out;
    /* nothing polls it any more (the caller's worker is finalizing) */
    if (p->started)
        rte_eth_dev_stop(p->id);
    rte_eth_dev_close(p->id);
    if (p->created)
        rte_eal_hotplug_remove("vdev", p->name);
out:
    tern_dpdk_fault_free(p->fault);
    p->fault = NULL;
    p->id = RTE_MAX_ETHPORTS;
    p->started = p->link_up = false;
}

void tern_dpdk_port_abandon(tern_dpdk_port_t *p)
{
    if (p->sock_path[0] != '\0')
        unlink(p->sock_path);
    p->sock_path[0] = '\0';
    tern_dpdk_fault_free(p->fault);
    p->fault = NULL;
    p->id = RTE_MAX_ETHPORTS;
}

uint16_t tern_dpdk_port_tx(tern_dpdk_t *d, tern_dpdk_port_t *p, struct rte_mbuf **m, uint16_t n)
{
    d->stats.tx_bursts++;
    if (p->fault == NULL) {
        uint16_t k = rte_eth_tx_burst(p->id, 0, m, n);
        if (k < n)
            d->stats.tx_full++;
        return k;
    }
    /* the shim consumes them all; what the port refuses is a loss */
    struct rte_mbuf *out[2 * TERN_DPDK_BURST + 8];
    uint16_t cnt = n < TERN_DPDK_BURST ? n : TERN_DPDK_BURST;
    if (cnt > 0) /* n = 0: only what the shim holds back (m may be NULL) */
        memcpy(out, m, cnt * sizeof(*m));
    uint16_t k = tern_dpdk_fault_tx(p->fault, d->pool, out, cnt, RTE_DIM(out));
    uint16_t sent = k ? rte_eth_tx_burst(p->id, 0, out, k) : 0;
    if (sent < k)
        d->stats.tx_full++;
    for (uint16_t i = sent; i < k; i++)
        rte_pktmbuf_free(out[i]);
    return cnt;
}

uint16_t tern_dpdk_port_rx(tern_dpdk_t *d, tern_dpdk_port_t *p, struct rte_mbuf **m, uint16_t n)
{
    uint16_t k = rte_eth_rx_burst(p->id, 0, m, p->fault ? n / 2 : n);
    if (p->fault != NULL)
        k = tern_dpdk_fault_rx(p->fault, d->pool, m, k, n);
    return k;
}
