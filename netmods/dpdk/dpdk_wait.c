/*
 * dpdk netmod: block mode (TERN_WAIT_MODE=block).  None of the virtual
 * devices here gives a receive interrupt the netmod could sleep on for
 * every PMD (af_packet and af_xdp have none in 22.11), so the worker
 * sleeps in slices: arm sets a one-shot timerfd TERN_DPDK_SLEEP_US ahead
 * (sooner when an ack or a retransmission is due), the engine's epoll
 * wakes on it (or on another netmod's fd, or tern_worker_signal), and the
 * re-poll looks at the ports.  A bounded spin with a timer: CPU use while
 * blocked falls to one short poll per slice.
 */
#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "netmods/dpdk/dpdk_internal.h"

int tern_dpdk_wait_fd(void *state)
{
    tern_dpdk_t *d = state;
    if (d->timer_fd < 0)
        d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    return d->timer_fd;
}

bool tern_dpdk_arm(void *state)
{
    tern_dpdk_t *d = state;
    if (d->timer_fd < 0)
        return true;
    uint64_t ns = d->cfg->sleep_us * 1000ull;
    if (!tern_list_empty(&d->active)) {
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
    return timerfd_settime(d->timer_fd, 0, &its, NULL) == 0;
}

void tern_dpdk_disarm(void *state)
{
    tern_dpdk_t *d = state;
    if (d->timer_fd < 0)
        return;
    struct itimerspec off;
    memset(&off, 0, sizeof(off));
    timerfd_settime(d->timer_fd, 0, &off, NULL);
    uint64_t ticks;
    ssize_t rc = read(d->timer_fd, &ticks, sizeof(ticks));
    (void)rc; /* EAGAIN: it had not fired */
}
