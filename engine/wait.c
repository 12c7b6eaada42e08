/*
 * Idle waiting, owned by the engine: the worker's wake-up eventfd, its epoll
 * set over every netmod's event source, the idle step of tern_wait /
 * tern_worker_wait, and tern_worker_signal.
 *
 * Block mode (TERN_WAIT_MODE=block), after TERN_SPIN_COUNT empty polls:
 *   1. arm every netmod (shm: set the flag its senders check; tcp: collect
 *      pending socket events).  An arm that finds work cancels the sleep.
 *   2. poll once more; anything found (or a completion, or a signal)
 *      cancels the sleep.
 *   3. epoll_wait on the worker's set: the eventfd of tern_worker_signal and
 *      each netmod's fd; the timeout is TERN_HEALTH_MS (or the caller's
 *      deadline), after which peer health is checked.
 *   4. disarm every netmod (drains its fd), whatever happened.
 * Why no wake-up is lost: each netmod's arm/ring pair is a Dekker pair
 * (shm: the waiter's seq_cst store of its flag before its re-poll, the
 * sender's seq_cst fence after publishing before it reads the flag), so
 * either the re-poll of step 2 sees the message or the sender sees the flag
 * and makes the fd readable; the fds are level-triggered, so a ring that
 * lands before epoll_wait still wakes it.  Socket arrivals need no flag:
 * the kernel makes the fd readable whenever data arrives after the re-poll,
 * provided the re-poll reads every socket after it last takes the fd's
 * readiness (an edge taken after a read is an arrival left unread: tcp's
 * poll collects socket events first for this).
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "engine/match.h"
#include "engine/netmod.h"

#define WAIT_EVENTS 16

tern_status_t tern_worker_init(tern_worker_t *w, tern_context_t *ctx, int index)
{
    memset(w, 0, sizeof(*w));
    w->ctx = ctx;
    w->index = index;
    tern_list_init(&w->posted);
    tern_list_init(&w->unexpected);
    tern_list_init(&w->free_reqs);
    tern_list_init(&w->cma_queue);
    w->id_free_head = UINT32_MAX;
    w->last_health_ns = tern_now_ns();
    w->epfd = -1;
    w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->wake_fd < 0)
        return tern_error(TERN_ERR_IO, "eventfd for the worker's wake-up: %s", strerror(errno));
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (w->epfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->wake_fd, &ev) != 0) {
        int err = errno;
        tern_worker_fini(w);
        return tern_error(TERN_ERR_IO, "epoll set of the worker: %s", strerror(err));
    }
    return TERN_OK;
}

void tern_worker_fini(tern_worker_t *w)
{
    tern_worker_pool_destroy(w);
    if (w->epfd >= 0)
        close(w->epfd);
    if (w->wake_fd >= 0)
        close(w->wake_fd);
    w->epfd = w->wake_fd = -1;
}

tern_status_t tern_worker_bind_netmod(tern_worker_t *w, tern_netmod_inst_t *n)
{
    int fd = n->wait != NULL ? n->wait->wait_fd(n->state) : -1;
    if (fd < 0)
        return TERN_OK;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = n};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
        return tern_error(TERN_ERR_IO, "netmod %s: adding its event fd %d to the worker's "
                          "epoll set: %s", n->name, fd, strerror(errno));
    return TERN_OK;
}

tern_status_t tern_worker_bind_events(tern_worker_t *w)
{
    for (int i = 0; i < w->num_netmods; i++) {
        tern_netmod_inst_t *n = &w->netmods[i];
        if (!n->initialized)
            continue;
        tern_status_t st = tern_worker_bind_netmod(w, n);
        if (st != TERN_OK)
            return st;
    }
    return TERN_OK;
}

static void disarm_all(tern_worker_t *w, int upto)
{
    for (int i = 0; i < upto; i++)
        if (w->netmods[i].initialized && w->netmods[i].wait != NULL)
            w->netmods[i].wait->disarm(w->netmods[i].state);
}

/* Block mode: sleep until a netmod's fd or the wake-up fd fires, the health
 * period ends, or deadline_ns.  Returns the events its own progress round
 * (the one after arming, which closes the race with an arrival) handled:
 * then it did not sleep, and the caller must count them as activity. */
static unsigned block(tern_worker_t *w, uint64_t deadline_ns)
{
    tern_context_t *ctx = w->ctx;
    int armed = 0;
    bool sleep_ok = true;
    for (; armed < w->num_netmods && sleep_ok; armed++)
        if (w->netmods[armed].initialized && w->netmods[armed].wait != NULL)
            sleep_ok = w->netmods[armed].wait->arm(w->netmods[armed].state);
    unsigned before = w->completions, events = 0;
    if (sleep_ok && (events = tern_progress(w)) == 0 && w->completions == before &&
        !atomic_load_explicit(&w->signaled, memory_order_acquire)) {
        uint64_t ms = ctx->cfg.health_ms, now = tern_now_ns();
        if (deadline_ns != UINT64_MAX) {
            uint64_t left = deadline_ns <= now ? 0 : (deadline_ns - now + 999999) / 1000000;
            ms = left < ms ? left : ms;
        }
        struct epoll_event evs[WAIT_EVENTS];
        int n = epoll_wait(w->epfd, evs, WAIT_EVENTS, (int)ms);
        for (int i = 0; i < n; i++)
            if (evs[i].data.ptr == NULL) { /* tern_worker_signal: reset the eventfd */
                uint64_t v;
                ssize_t rc = read(w->wake_fd, &v, sizeof(v));
                (void)rc;
            }
        if (n == 0)
            tern_health_check(w);
    }
    disarm_all(w, armed);
    return events;
}

unsigned tern_idle_step(tern_worker_t *w, uint64_t deadline_ns)
{
    const tern_config_t *cfg = &w->ctx->cfg;
    if (cfg->wait_mode == TERN_WAIT_SPIN || w->idle_polls < cfg->spin_count)
        return 0; /* spin phase: poll again at once (no pause: it delays arrivals) */
    if (cfg->wait_mode == TERN_WAIT_YIELD) {
        sched_yield();
        return 0;
    }
    return block(w, deadline_ns);
}

void tern_worker_signal(tern_worker_t *w)
{
    if (w == NULL)
        return;
    /* R: the flag is published before the eventfd write that wakes the
     * waiter, whose exchange in tern_worker_wait (A) then sees it. */
    atomic_store_explicit(&w->signaled, 1, memory_order_release);
    uint64_t one = 1;
    ssize_t rc = write(w->wake_fd, &one, sizeof(one)); /* EAGAIN: already pending */
    (void)rc;
}

tern_status_t tern_worker_wait(tern_worker_t *w, int timeout_ms)
{
    if (w == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_worker_wait: NULL worker");
    uint64_t deadline = timeout_ms < 0 ? UINT64_MAX
                                       : tern_now_ns() + (uint64_t)timeout_ms * 1000000ull;
    /* A request that completed since the last wait returned (while the
     * caller was testing others, say) counts as activity: the caller's
     * test-then-wait loop sees it at once instead of after the timeout. */
    tern_status_t st = TERN_OK;
    for (unsigned spins = 0;; spins++) {
        /* A: pairs with tern_worker_signal's release store. */
        if (atomic_exchange_explicit(&w->signaled, 0, memory_order_acq_rel)) {
            st = TERN_ERR_INTERRUPTED;
            break;
        }
        if (tern_progress(w) != 0 || w->completions != w->wait_seen)
            break;
        /* past the spin phase each step may sleep: check the clock each time */
        if (((spins & 255u) == 0 || w->idle_polls >= w->ctx->cfg.spin_count) &&
            tern_now_ns() >= deadline) {
            st = TERN_ERR_TIMED_OUT;
            break;
        }
        /* block mode's own progress round (after arming) may take what
         * arrives, an unexpected message say: that is activity too, or a
         * probe-then-wait caller would sleep with its message queued */
        if (tern_idle_step(w, deadline) != 0)
            break;
    }
    w->wait_seen = w->completions;
    return st;
}
