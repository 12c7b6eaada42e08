/*
 * Progress and completion.
 *
 * tern_progress polls every netmod once.  While nothing happens, the idle
 * path checks peer health every TERN_HEALTH_MS so a dead peer turns into
 * TERN_ERR_PEER_FAILED instead of a hang; after TERN_SPIN_COUNT empty polls
 * a wait yields or sleeps (engine/wait.c).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

#include "engine/engine_internal.h"
#include "engine/match.h"
#include "engine/netmod.h"

uint64_t tern_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Dead peers: first each netmod's own check (shm drains what a dead local
 * peer wrote before failing its VC), then the deaths the launcher reported
 * through PMIx events (pmix/client/client.c; each worker takes every one for
 * its own VCs), which cover every netmod and peers never connected to.  A
 * peer reported dead has exited, so what it sent is already here (on one
 * host a socket's bytes arrive before the sender's exit) or lost: one more
 * poll takes it in before its VC fails.  After the finalize fence every
 * peer may exit normally: its report then means nothing.
 */
void tern_health_check(tern_worker_t *w)
{
    tern_context_t *ctx = w->ctx;
    uint64_t now = tern_now_ns();
    if (now - w->last_health_ns < ctx->cfg.health_ms * 1000000ull)
        return;
    w->last_health_ns = now;
    for (int i = 0; i < w->num_netmods; i++) {
        tern_netmod_inst_t *n = &w->netmods[i];
        if (n->initialized)
            n->core.check_peers(n->state);
    }
    tern_mem_progress(w); /* memory given back: deregister it */
    tern_pmix_death_t dead[16];
    int nd;
    while (!ctx->finalizing && (nd = tern_pmix_take_dead(&ctx->pmix, w->index, dead, 16)) > 0) {
        for (int i = 0; i < w->num_pollers; i++)
            w->pollers[i]->core.poll(w->pollers[i]->state, TERN_POLL_ALL);
        for (int i = 0; i < nd; i++) {
            tern_vc_t *vc = &w->vcs[dead[i].rank];
            if (vc->nm == NULL || vc->state == TERN_VC_FAILED || vc->state == TERN_VC_CLOSED)
                continue;
            char why[128];
            snprintf(why, sizeof(why), "rank %d %s (reported by the launcher)", dead[i].rank,
                     dead[i].how);
            tern_vc_fail(vc, TERN_ERR_PEER_FAILED, why);
        }
    }
    if (!ctx->finalizing)
        tern_jobs_take_dead(w);
}

/* One poll of every netmod; inline in the waits below, which would
 * otherwise call the exported tern_progress through the PLT on every spin. */
static inline unsigned progress(tern_worker_t *w)
{
    unsigned n = 0;
    for (int i = 0; i < w->num_pollers; i++)
        n += w->pollers[i]->core.poll(w->pollers[i]->state, TERN_POLL_ALL);
    if (TERN_UNLIKELY(!tern_list_empty(&w->cma_queue)))
        n += tern_cma_progress(w); /* a same-host copy: one step */
    if (n != 0) {
        w->idle_polls = 0;
    } else if ((++w->idle_polls & 1023u) == 0) {
        tern_health_check(w);
    }
    return n;
}

unsigned tern_progress(tern_worker_t *w)
{
    if (TERN_UNLIKELY(w == NULL))
        return 0;
    return progress(w);
}

static tern_status_t reap(tern_request_t *r, tern_recv_info_t *info)
{
    tern_status_t st = r->status;
    /* A request failed with its VC: its message, not whichever failed last. */
    if (TERN_UNLIKELY(st < 0)) {
        const tern_vc_t *vc = r->vc ? r->vc : tern_vc_of(r->worker, r->peer);
        if (vc != NULL && vc->state == TERN_VC_FAILED && vc->fail_msg != NULL &&
            st == vc->fail_status)
            tern_error(st, "%s", vc->fail_msg);
        else if (st == TERN_ERR_CANCELED)
            tern_error(st, "receive from %s %d (tag %llu) cancelled before it matched",
                       r->peer == TERN_ANY_SOURCE ? "any rank," : "rank", r->peer,
                       (unsigned long long)r->tag);
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
    if (w == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_test: NULL worker");
    if (req == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_test: NULL request");
    if (!(req->flags & TERN_REQF_COMPLETE))
        progress(w);
    if (!(req->flags & TERN_REQF_COMPLETE))
        return TERN_INPROGRESS;
    return reap(req, info);
}

tern_status_t tern_wait(tern_worker_t *w, tern_request_t *req, tern_recv_info_t *info)
{
    if (w == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_wait: NULL worker");
    if (req == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_wait: NULL request");
    while (!(req->flags & TERN_REQF_COMPLETE)) {
        if (progress(w) == 0 && w->idle_polls >= w->ctx->cfg.spin_count)
            tern_idle_step(w, UINT64_MAX);
    }
    return reap(req, info);
}

tern_status_t tern_waitall(tern_worker_t *w, tern_request_t **reqs, size_t n,
                           tern_recv_info_t *infos)
{
    if (w == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_waitall: NULL worker");
    if (reqs == NULL && n > 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_waitall: NULL array of %zu requests", n);
    tern_status_t first = TERN_OK;
    for (size_t i = 0; i < n; i++) {
        if (reqs[i] == NULL) {
            if (infos != NULL) /* nothing to wait for: an empty, successful entry */
                infos[i] = (tern_recv_info_t){.source = TERN_ANY_SOURCE, .tag = TERN_ANY_TAG};
            continue;
        }
        tern_status_t st = tern_wait(w, reqs[i], infos != NULL ? &infos[i] : NULL);
        reqs[i] = NULL;
        if (st != TERN_OK && first == TERN_OK)
            first = st;
    }
    return first;
}

/* Complete every request that depends on vc with status; see engine_internal.h. */
static void vc_end(tern_vc_t *vc, tern_status_t status, const char *why, bool failed);

void tern_vc_free_msgs(tern_vc_t *vc)
{
    free(vc->fail_msg);
    free(vc->rma_msg);
    vc->fail_msg = vc->rma_msg = NULL;
}

void tern_vc_fail(tern_vc_t *vc, tern_status_t status, const char *why)
{
    vc_end(vc, status, why, true);
}

/* A VC closed on purpose (tern_disconnect: its queues drained): no
 * warning, and receives from any source stay posted. */
void tern_vc_close(tern_vc_t *vc, const char *why)
{
    vc_end(vc, TERN_ERR_PEER_FAILED, why, false);
}

tern_status_t tern_vc_say_bye(tern_vc_t *vc)
{
    if (vc->bye_sent || vc->state == TERN_VC_FAILED)
        return TERN_OK;
    vc->bye_sent = true;
    tern_pkt_hdr_t h = {.type = TERN_PKT_BYE};
    return tern_send_ctrl(vc, &h, NULL, 0);
}

void tern_vc_connection_up(tern_vc_t *vc)
{
    if (vc->state == TERN_VC_TERMINATING || vc->state == TERN_VC_CLOSED)
        tern_vc_say_bye(vc); /* a failure fails the VC, with its message */
}

static void vc_end(tern_vc_t *vc, tern_status_t status, const char *why, bool failed)
{
    if (vc->state == TERN_VC_FAILED)
        return;
    tern_worker_t *w = vc->worker;
    char cause[384];
    snprintf(cause, sizeof(cause), "%s", why); /* why may be tern_last_error() itself */
    /* The peer said BYE before its stream ended: it closed after terminating
     * the VC (finalize, disconnect), it did not crash. */
    if (failed && vc->peer_bye && status == TERN_ERR_PEER_FAILED) {
        failed = false;
        snprintf(cause, sizeof(cause), "rank %d said goodbye (it finalized), then closed: %s",
                 vc->rank, why);
    }
    vc->state = TERN_VC_FAILED;
    vc->fail_status = status;
    tern_error(status, "connection to rank %d %s: %s", vc->rank, failed ? "failed" : "closed",
               cause);
    vc->fail_msg = strdup(tern_last_error()); /* NULL only costs the detail */
    if (failed && !vc->port_peer)
        tern_warn("connection to rank %d failed: %s", vc->rank, cause);
    tern_cma_vc_drop(vc); /* its same-host copies stop; failed with the list below */
    /* The netmod drops its queues: requests it owns alone fail there. */
    if (vc->nm != NULL) /* NULL: never wired, nothing queued */
        vc->nm->core.vc_destroy(vc);

    /* The request being streamed into from vc, detached first: one that is
     * on the VC's list as well (a rendezvous receive's or a get's DATA) is
     * completed there, once, and may be gone after it (a CQ request's
     * completion releases it). */
    tern_request_t *sink = vc->rx.sink;
    vc->rx.sink = NULL;
    vc->rx.state = TERN_RX_HDR;
    vc->rx.have = 0;
    if (sink != NULL && (sink->flags & TERN_REQF_VCLIST))
        sink = NULL;
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &vc->lmt_wait)
    {
        tern_request_t *r = TERN_CONTAINER_OF(pos, tern_request_t, vc_link);
        tern_request_complete(r, status);
    }
    /* An eager message (or a one-sided payload) being streamed in. */
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
            if (r->match_src == vc->rank || (failed && r->match_src == TERN_ANY_SOURCE)) {
                tern_list_del(pos);
                r->flags &= ~(uint32_t)TERN_REQF_POSTED;
                r->peer = vc->rank;
                tern_request_complete(r, status);
            }
        }
    }
    w->completions++;
}
