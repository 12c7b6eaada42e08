/*
 * Progress, completion and idle waiting.
 *
 * tern_progress polls every netmod once.  While nothing happens, the idle
 * path (a) checks peer health every TERN_HEALTH_MS so a dead peer turns
 * into TERN_ERR_PEER_FAILED instead of a hang, and (b) after TERN_SPIN_COUNT
 * empty polls yields the core or blocks on the worker's futex doorbell,
 * according to TERN_WAIT_MODE.
 *
 * Doorbell protocol (block mode), a Dekker pair with the netmod's sender:
 *   waiter:  v = load(doorbell); store(sleeping, 1) [seq_cst];
 *            poll again; if nothing: futex_wait(doorbell, v)
 *   sender:  publish message [release]; fence [seq_cst];
 *            if load(sleeping): fetch_add(doorbell); futex_wake
 * Either the waiter's re-poll sees the message, or the sender sees
 * sleeping == 1 and changes the doorbell, so futex_wait cannot sleep
 * through a message.  The futex timeout (TERN_HEALTH_MS) bounds any miss.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "engine/match.h"
#include "engine/netmod.h"

uint64_t tern_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void health_check(tern_worker_t *w)
{
    uint64_t now = tern_now_ns();
    if (now - w->last_health_ns < w->ctx->cfg.health_ms * 1000000ull)
        return;
    w->last_health_ns = now;
    for (int i = 0; i < w->ctx->num_netmods; i++) {
        tern_netmod_inst_t *n = &w->ctx->netmods[i];
        n->ops->check_peers(n->state);
    }
}

unsigned tern_progress(tern_worker_t *w)
{
    tern_context_t *ctx = w->ctx;
    unsigned n = 0;
    for (int i = 0; i < ctx->num_pollers; i++)
        n += ctx->pollers[i].ops->poll(ctx->pollers[i].state, TERN_POLL_ALL);
    if (n != 0) {
        w->idle_polls = 0;
    } else if ((++w->idle_polls & 1023u) == 0) {
        health_check(w);
    }
    return n;
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

/* One idle step after an empty poll; never sleeps past deadline_ns. */
static void idle_step(tern_worker_t *w, uint64_t deadline_ns)
{
    const tern_config_t *cfg = &w->ctx->cfg;
    if (cfg->wait_mode == TERN_WAIT_SPIN || w->idle_polls < cfg->spin_count)
        return; /* spin phase: poll again at once (no pause: it delays arrivals) */
    if (cfg->wait_mode == TERN_WAIT_YIELD) {
        sched_yield();
        return;
    }
    /* TERN_WAIT_BLOCK: see the doorbell protocol above. */
    uint32_t v = atomic_load_explicit(w->doorbell, memory_order_acquire);
    atomic_store_explicit(w->sleeping, 1, memory_order_seq_cst);
    unsigned before = w->completions;
    if (tern_progress(w) == 0 && w->completions == before &&
        !atomic_load_explicit(&w->signaled, memory_order_acquire)) {
        uint64_t ns = cfg->health_ms * 1000000ull, now = tern_now_ns();
        if (deadline_ns != UINT64_MAX)
            ns = deadline_ns <= now ? 0 : (deadline_ns - now < ns ? deadline_ns - now : ns);
        struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull),
                              .tv_nsec = (long)(ns % 1000000000ull)};
        futex(w->doorbell, FUTEX_WAIT, v, &ts);
        health_check(w);
    }
    atomic_store_explicit(w->sleeping, 0, memory_order_relaxed);
}

void tern_worker_signal(tern_worker_t *w)
{
    atomic_store_explicit(&w->signaled, 1, memory_order_release);
    atomic_fetch_add_explicit(w->doorbell, 1, memory_order_seq_cst);
    futex(w->doorbell, FUTEX_WAKE, INT_MAX, NULL);
}

tern_status_t tern_worker_wait(tern_worker_t *w, int timeout_ms)
{
    uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : tern_now_ns() + (uint64_t)timeout_ms * 1000000ull;
    unsigned before = w->completions;
    for (unsigned spins = 0;; spins++) {
        if (atomic_exchange_explicit(&w->signaled, 0, memory_order_acq_rel))
            return TERN_ERR_INTERRUPTED;
        if (tern_progress(w) != 0 || w->completions != before)
            return TERN_OK;
        /* past the spin phase each step may sleep: check the clock each time */
        if (((spins & 255u) == 0 || w->idle_polls >= w->ctx->cfg.spin_count) &&
            tern_now_ns() >= deadline)
            return TERN_ERR_TIMED_OUT;
        idle_step(w, deadline);
    }
}

static tern_status_t reap(tern_request_t *r, tern_recv_info_t *info)
{
    tern_status_t st = r->status;
    /* A request failed with its VC: its message, not whichever failed last. */
    if (TERN_UNLIKELY(st < 0)) {
        tern_context_t *ctx = r->worker->ctx;
        const tern_vc_t *vc = r->vc ? r->vc
                              : (r->peer >= 0 && r->peer < ctx->size) ? &ctx->vcs[r->peer] : NULL;
        if (vc != NULL && vc->state == TERN_VC_FAILED && vc->fail_msg != NULL &&
            st == vc->fail_status)
            tern_error(st, "%s", vc->fail_msg);
    }
    if (info != NULL) {
        info->source = r->peer;
        info->tag = r->tag;
        info->length = r->msg_len;
        info->status = st;
    }
    tern_request_release(r);
    return st;
}

tern_status_t tern_test(tern_worker_t *w, tern_request_t *req, tern_recv_info_t *info)
{
    if (req == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_test: NULL request");
    if (!(req->flags & TERN_REQF_COMPLETE))
        tern_progress(w);
    if (!(req->flags & TERN_REQF_COMPLETE))
        return TERN_INPROGRESS;
    return reap(req, info);
}

tern_status_t tern_wait(tern_worker_t *w, tern_request_t *req, tern_recv_info_t *info)
{
    if (req == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_wait: NULL request");
    while (!(req->flags & TERN_REQF_COMPLETE)) {
        if (tern_progress(w) == 0 && w->idle_polls >= w->ctx->cfg.spin_count)
            idle_step(w, UINT64_MAX);
    }
    return reap(req, info);
}

tern_status_t tern_waitall(tern_worker_t *w, tern_request_t **reqs, size_t n)
{
    tern_status_t first = TERN_OK;
    for (size_t i = 0; i < n; i++) {
        if (reqs[i] == NULL)
            continue;
        tern_status_t st = tern_wait(w, reqs[i], NULL);
        reqs[i] = NULL;
        if (st != TERN_OK && first == TERN_OK)
            first = st;
    }
    return first;
}

/* Complete every request that depends on vc with status; see engine_internal.h. */
void tern_vc_fail(tern_vc_t *vc, tern_status_t status, const char *why)
{
    if (vc->state == TERN_VC_FAILED)
        return;
    tern_worker_t *w = vc->worker;
    char cause[384];
    snprintf(cause, sizeof(cause), "%s", why); /* why may be tern_last_error() itself */
    vc->state = TERN_VC_FAILED;
    vc->fail_status = status;
    tern_error(status, "connection to rank %d failed: %s", vc->rank, cause);
    vc->fail_msg = strdup(tern_last_error()); /* NULL only costs the detail */
    tern_warn("connection to rank %d failed: %s", vc->rank, cause);
    /* The netmod drops its queues: requests it owns alone fail there. */
    if (vc->nm->vc_destroy != NULL)
        vc->nm->vc_destroy(vc);

    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &vc->lmt_wait)
    {
        tern_request_t *r = TERN_CONTAINER_OF(pos, tern_request_t, vc_link);
        tern_request_complete(r, status);
    }
    /* An eager message being streamed in from vc. */
    tern_request_t *sink = vc->rx.sink;
    vc->rx.sink = NULL;
    vc->rx.state = TERN_RX_HDR;
    vc->rx.have = 0;
    if (sink != NULL) {
        if (sink->flags & TERN_REQF_UNEXP) {
            tern_list_del(&sink->link);
            sink->flags &= ~(uint32_t)TERN_REQF_UNEXP;
            tern_request_release(sink);
        } else {
            tern_request_complete(sink, status);
        }
    }
    /* Posted receives that only vc (or any source) could satisfy. */
    if (!w->ctx->finalizing) {
        tern_list_for_each_safe(pos, tmp, &w->posted)
        {
            tern_request_t *r = TERN_CONTAINER_OF(pos, tern_request_t, link);
            if (r->match_src == vc->rank || r->match_src == TERN_ANY_SOURCE) {
                tern_list_del(pos);
                r->flags &= ~(uint32_t)TERN_REQF_POSTED;
                r->peer = vc->rank;
                tern_request_complete(r, status);
            }
        }
    }
    w->completions++;
}
