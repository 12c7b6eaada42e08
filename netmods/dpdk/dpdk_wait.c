/*
 * dpdk netmod: block mode (TERN_WAIT_MODE=block).
 *
 * The engine sleeps on one fd per netmod: here wait_ep, an epoll set of
 * our own holding
 *   - timer_fd, a one-shot timerfd for the netmod's timers (delayed acks,
 *     loss probes, keepalives) and, on a port without a receive interrupt,
 *     the sleep slices;
 *   - intr_ep, the epoll set DPDK adds the ports' RX interrupt fds to
 *     (rte_eth_dev_rx_intr_ctl_q).  Its events carry DPDK's own
 *     rte_epoll_event, so only rte_epoll_wait may read it: it consumes each
 *     interrupt as its kind needs (a VFIO eventfd is read; a vdev's data fd,
 *     net_tap's queue, is left for rx_burst).
 *
 * A port whose PMD has a receive interrupt (a NIC through VFIO, net_tap) is
 * configured with intr_conf.rxq (dpdk_port.c); arm enables queue 0's
 * interrupt and sets the timer only for what the timers need: the worker
 * sleeps until a frame arrives.  The engine polls once more after arm, so a
 * frame that came between the last poll and the enable is not missed.
 * Without one (memif, af_packet and af_xdp have none in 22.11; per-peer
 * ports are memif), arm sets the timer TERN_DPDK_SLEEP_US ahead: a bounded
 * spin with a timer, CPU use falling to one short poll per slice.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_interrupts.h>

#include "netmods/dpdk/dpdk_internal.h"

/* the ports' interrupt set, created on first use and put in wait_ep */
static int intr_set(tern_dpdk_t *d)
{
    if (d->intr_ep >= 0)
        return d->intr_ep;
    d->intr_ep = epoll_create1(EPOLL_CLOEXEC);
    if (d->intr_ep >= 0 && d->wait_ep >= 0) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = d->intr_ep};
        if (epoll_ctl(d->wait_ep, EPOLL_CTL_ADD, d->intr_ep, &ev) != 0)
            tern_warn("dpdk: RX interrupts left out of the wait set: %s", strerror(errno));
    }
    return d->intr_ep;
}

void tern_dpdk_intr_attach(tern_dpdk_t *d, tern_dpdk_port_t *p)
{
    if (!p->intr_conf || p->intr_tried)
        return;
    p->intr_tried = true;
    int ep = intr_set(d);
    if (ep < 0) {
        tern_debug("dpdk %s: no epoll set for RX interrupts (%s): sleep slices", p->name,
                   strerror(errno));
        return;
    }
    int rc = rte_eth_dev_rx_intr_ctl_q(p->id, 0, ep, RTE_INTR_EVENT_ADD, p);
    if (rc != 0) {
        tern_debug("dpdk %s: no RX interrupt (%s): sleep slices of %llu us", p->name,
                   rte_strerror(-rc), (unsigned long long)d->cfg->sleep_us);
        return;
    }
    p->rx_intr = true;
    tern_debug("dpdk %s: block mode sleeps on its RX interrupt", p->name);
}

void tern_dpdk_intr_detach(tern_dpdk_t *d, tern_dpdk_port_t *p)
{
    if (!p->rx_intr)
        return;
    if (p->intr_on)
        rte_eth_dev_rx_intr_disable(p->id, 0);
    rte_eth_dev_rx_intr_ctl_q(p->id, 0, d->intr_ep, RTE_INTR_EVENT_DEL, p);
    p->rx_intr = p->intr_on = false;
}

int tern_dpdk_wait_fd(void *state)
{
    tern_dpdk_t *d = state;
    if (d->wait_ep >= 0)
        return d->wait_ep;
    d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    d->wait_ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = d->timer_fd};
    if (d->timer_fd < 0 || d->wait_ep < 0 ||
        epoll_ctl(d->wait_ep, EPOLL_CTL_ADD, d->timer_fd, &ev) != 0) {
        tern_warn("dpdk: no block-mode wait set (%s): the worker polls", strerror(errno));
        tern_dpdk_wait_close(d);
        return -1;
    }
    if (d->intr_ep >= 0) { /* a port already started with its interrupt */
        ev.data.fd = d->intr_ep;
        if (epoll_ctl(d->wait_ep, EPOLL_CTL_ADD, d->intr_ep, &ev) != 0)
            tern_warn("dpdk: RX interrupts left out of the wait set: %s", strerror(errno));
    }
    return d->wait_ep;
}

void tern_dpdk_wait_close(tern_dpdk_t *d)
{
    if (d->wait_ep >= 0)
        close(d->wait_ep);
    if (d->timer_fd >= 0)
        close(d->timer_fd);
    if (d->intr_ep >= 0)
        close(d->intr_ep);
    d->wait_ep = d->timer_fd = d->intr_ep = -1;
}

/* How long the netmod's own timers let the worker sleep on an interrupt:
 * an ack owed now or frames the port would not take (0: work now, or the
 * ack delay), a delayed ack (until it is due), unacknowledged data (the
 * loss probe's wait), else keepalives and the silence check. */
static uint64_t timers_ns(const tern_dpdk_t *d)
{
    uint64_t ns = (d->cfg->keepalive_ms ? d->cfg->keepalive_ms : 1000) * 1000000ull;
    for (const tern_list_t *pos = d->active.next; pos != &d->active; pos = pos->next) {
        const tern_dpdk_vc_t *dv = TERN_CONTAINER_OF(pos, const tern_dpdk_vc_t, active_link);
        uint64_t t = ns;
        if (dv->ack_now)
            return 0;
        if (!tern_pktq_empty(&dv->sendq) || !tern_list_empty(&dv->lmtq) ||
            dv->snd_high != dv->snd_nxt)
            t = d->cfg->ack_delay_us * 1000ull; /* a full port: retried like the slices */
        else if (dv->ack_due_ns != 0)
            t = dv->ack_due_ns > d->now_ns ? dv->ack_due_ns - d->now_ns : 0;
        else if (dv->snd_una != dv->snd_nxt)
            t = d->cfg->probe_us * 1000ull;
        if (t == 0)
            return 0;
        ns = t < ns ? t : ns;
    }
    return ns;
}

bool tern_dpdk_arm(void *state)
{
    tern_dpdk_t *d = state;
    if (d->timer_fd < 0)
        return true;
    uint64_t ns = d->cfg->sleep_us * 1000ull;
    /* interrupts only when every port this worker polls has one, and no
     * zero-copy send waits for the PMD to let go of its pages (no
     * interrupt says that) */
    bool intr = !d->per_peer && d->port.rx_intr && tern_list_empty(&d->reap);
    /* -ENOTSUP: no enable step, the fd signals by itself (net_tap's queue) */
    int rc = intr ? rte_eth_dev_rx_intr_enable(d->port.id, 0) : -1;
    if (rc == 0 || rc == -ENOTSUP) {
        d->port.intr_on = rc == 0;
        d->intr_armed = true;
        ns = timers_ns(d);
        if (ns == 0)
            return false;
    } else if (!tern_list_empty(&d->active)) {
        /* an ack owed or frames unacknowledged: wake for the timers */
        uint64_t t = d->cfg->ack_delay_us * 1000ull;
        if (t == 0)
            return false;
        ns = t < ns ? t : ns;
    }
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    its.it_value.tv_sec = (time_t)(ns / 1000000000ull);
    its.it_value.tv_nsec = (long)(ns % 1000000000ull);
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
        its.it_value.tv_nsec = 1000;
    if (timerfd_settime(d->timer_fd, 0, &its, NULL) != 0)
        return false;
    d->stats.sleeps++;
    return true;
}

void tern_dpdk_disarm(void *state)
{
    tern_dpdk_t *d = state;
    if (d->timer_fd < 0)
        return;
    if (d->port.rx_intr) {
        if (d->port.intr_on)
            rte_eth_dev_rx_intr_disable(d->port.id, 0);
        /* consume what fired, slept on or not (an edge left pending would
         * wake every later sleep at once); rte_epoll_wait reads each kind
         * of interrupt fd as it needs */
        struct rte_epoll_event evs[4];
        if (rte_epoll_wait(d->intr_ep, evs, 4, 0) > 0 && d->intr_armed)
            d->stats.intr_wakeups++;
        d->port.intr_on = d->intr_armed = false;
    }
    /* read before stopping it: timerfd_settime clears the expiry count */
    uint64_t ticks;
    if (read(d->timer_fd, &ticks, sizeof(ticks)) == (ssize_t)sizeof(ticks))
        d->stats.slice_wakeups++; /* EAGAIN: it had not fired */
    struct itimerspec off;
    memset(&off, 0, sizeof(off));
    timerfd_settime(d->timer_fd, 0, &off, NULL);
}
