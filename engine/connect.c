/*
 * Other jobs: tern_connect / tern_disconnect (dynamic processes).
 *
 * A connected job's ranks get VCs on every worker, with peer ids after
 * this job's ranks (tern_job_peer), each carried by the highest-priority
 * netmod that both sides allow (TERN_NETMODS), that reaches other jobs (a
 * conn table: tcp, verbs, dpdk) and whose card both workers' addresses
 * have (engine/peer.c).  Such netmods may not have been needed by this
 * job's own ranks (one node: all shm): they are initialised here, on every
 * worker, and the workers' addresses put again with their cards.  The
 * sequence, collective over both jobs:
 *
 *   init the netmods where needed, put the addresses, PMIx_Commit
 *   PMIx_Connect of both jobs
 *   read each of their ranks' addresses (one per worker): its VC
 *   publish the job (jobs[], then njobs with a release store)
 *   PMIx_Fence of both jobs: nobody sends before the other side's VCs exist
 *
 * Peer ids are never reused: a disconnected job keeps its range (and its
 * structure, until tern_finalize) so that a late lookup finds it closed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/address.h"
#include "engine/engine_internal.h"
#include "engine/log.h"
#include "engine/netmod.h"

tern_vc_t *tern_remote_vc(tern_worker_t *w, int peer)
{
    tern_context_t *ctx = w->ctx;
    /* A: pairs with the release store in tern_connect: jobs[i] for i <
     * njobs is fully built when read */
    int n = atomic_load_explicit(&ctx->njobs, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        tern_job_t *job = ctx->jobs[i];
        if (peer >= job->base && peer < job->base + job->size)
            return job->connected ? &job->vcs[w->index][peer - job->base] : NULL;
    }
    return NULL;
}

const char *tern_job_name(const tern_context_t *ctx)
{
    return ctx != NULL ? ctx->pmix.nspace : NULL;
}

int tern_job_size(const tern_job_t *job) { return job != NULL ? job->size : 0; }

int tern_job_peer(const tern_job_t *job, int rank)
{
    if (job == NULL || !job->connected || rank < 0 || rank >= job->size)
        return -1;
    return job->base + rank;
}

/* Netmod nm of worker w, initialised if this job's ranks did not need it. */
tern_status_t tern_netmod_ensure(tern_worker_t *w, int nm)
{
    tern_netmod_inst_t *n = &w->netmods[nm];
    if (n->initialized)
        return TERN_OK;
    n->initialized = true; /* finalize is called even after a failed init */
    tern_status_t st = n->core.init(w, n->config, &w->ctx->nm_shared[nm - 1], &n->state);
    if (st != TERN_OK)
        return st;
    if (n->core.poll != NULL)
        w->pollers[w->num_pollers++] = n;
    return tern_worker_bind_netmod(w, n);
}

void tern_job_free(tern_job_t *job)
{
    tern_pmix_unwatch(job->deaths);
    for (int k = 0; job->vcs != NULL && k < job->ctx->num_workers; k++) {
        for (int r = 0; job->vcs[k] != NULL && r < job->size; r++)
            tern_vc_free_msgs(&job->vcs[k][r]);
        free(job->vcs[k]);
    }
    free(job->vcs);
    free(job);
}

void tern_jobs_free(tern_context_t *ctx)
{
    int n = atomic_load_explicit(&ctx->njobs, memory_order_relaxed);
    for (int i = 0; i < n; i++)
        tern_job_free(ctx->jobs[i]);
    atomic_store_explicit(&ctx->njobs, 0, memory_order_relaxed);
}

void tern_vc_unwired(tern_vc_t *vc, const char *why)
{
    free(vc->fail_msg);
    vc->fail_msg = strdup(why);
    vc->fail_status = TERN_ERR_UNREACHABLE;
    vc->state = TERN_VC_FAILED;
}

void tern_vc_rewire(tern_vc_t *vc)
{
    free(vc->fail_msg);
    vc->fail_msg = NULL;
    vc->fail_status = TERN_OK;
    vc->state = TERN_VC_ACTIVE;
}

tern_job_t *tern_job_new(tern_context_t *ctx, const char *name, int size)
{
    tern_job_t *job = calloc(1, sizeof(*job));
    if (job == NULL)
        return NULL;
    job->ctx = ctx;
    snprintf(job->name, sizeof(job->name), "%s", name);
    job->size = size;
    if (ctx->next_base == 0)
        ctx->next_base = ctx->size;
    job->base = ctx->next_base;
    job->vcs = calloc((size_t)ctx->num_workers, sizeof(*job->vcs));
    for (int k = 0; job->vcs != NULL && k < ctx->num_workers; k++) {
        tern_worker_t *w = &ctx->workers[k];
        job->vcs[k] = calloc((size_t)size, sizeof(**job->vcs));
        if (job->vcs[k] == NULL)
            break;
        for (int r = 0; r < size; r++) {
            tern_vc_t *vc = &job->vcs[k][r];
            vc->rank = job->base + r;
            vc->worker = w;
            vc->eager_limit = ctx->cfg.eager_limit;
            tern_list_init(&vc->lmt_wait);
            /* its netmod comes with its address (tern_remote_vc_init) */
            tern_vc_unwired(vc, "its address was not given (tern_peer_insert)");
            if (vc->fail_msg == NULL)
                break;
        }
    }
    if (job->vcs == NULL || job->vcs[ctx->num_workers - 1] == NULL ||
        job->vcs[ctx->num_workers - 1][size - 1].fail_msg == NULL) {
        tern_job_free(job);
        return NULL;
    }
    return job;
}

void tern_job_close_vcs(tern_job_t *job)
{
    for (int k = 0; k < job->ctx->num_workers; k++)
        for (int r = 0; r < job->size; r++) {
            tern_vc_t *vc = &job->vcs[k][r];
            if (vc->state != TERN_VC_FAILED)
                tern_vc_close(vc, "disconnected (tern_disconnect)");
        }
    tern_pmix_unwatch(job->deaths);
    job->deaths = NULL;
}

tern_status_t tern_job_publish(tern_context_t *ctx, tern_job_t *job)
{
    int njobs = atomic_load_explicit(&ctx->njobs, memory_order_relaxed);
    if (njobs == TERN_MAX_JOBS)
        return tern_error(TERN_ERR_NO_RESOURCE, "%d jobs and port peers connected already",
                          TERN_MAX_JOBS);
    job->connected = true;
    ctx->next_base += job->size;
    ctx->jobs[njobs] = job;
    /* R: pairs with the acquire load in tern_remote_vc */
    atomic_store_explicit(&ctx->njobs, njobs + 1, memory_order_release);
    return TERN_OK;
}

uint32_t tern_job_hash(const char *name)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

/* vc (on worker w) to rank r of job name, from the address it put */
static tern_status_t remote_vc(tern_worker_t *w, tern_vc_t *vc, const char *name, int r)
{
    char buf[64], what[320];
    void *data = NULL;
    size_t len = 0;
    const char *key = tern_worker_key(w, TERN_ADDR_KEY, buf, sizeof(buf));
    tern_status_t st = tern_pmix_get_of(&w->ctx->pmix, name, r, key, &data, &len);
    if (st != TERN_OK)
        return st;
    snprintf(what, sizeof(what), "tern_connect: rank %d of %s (PMIx key %s)", r, name, key);
    tern_addr_t a;
    st = tern_addr_decode(data, len, what, &a);
    if (st == TERN_OK && (a.job != tern_job_hash(name) || a.rank != r || a.worker != w->index))
        st = tern_error(TERN_ERR_MALFORMED, "%s: an address of job %08x rank %d worker %d, not "
                        "of job %08x rank %d worker %d", what, a.job, a.rank, a.worker,
                        tern_job_hash(name), r, w->index);
    /* The netmods tell jobs apart by name hash (tcp's HELLO, verbs' and
     * dpdk's messages).  Only here can another job have ours: an address
     * of our hash is taken as our own (tern_peer_insert), a port of it is
     * refused as ours (tern_port_connect). */
    if (st == TERN_OK && a.job == w->ctx->job_hash)
        st = tern_error(TERN_ERR_UNSUPPORTED, "tern_connect: job %s has the same name hash "
                        "(%08x) as this job, %s: their connections cannot be told apart",
                        name, a.job, w->ctx->pmix.nspace);
    if (st == TERN_OK) {
        tern_vc_rewire(vc);
        st = tern_remote_vc_init(w, vc, &a, false);
        if (st != TERN_OK)
            tern_vc_unwired(vc, "no netmod reaches it");
    }
    free(data);
    return st;
}

tern_status_t tern_connect(tern_context_t *ctx, const char *name, tern_job_t **out)
{
    if (ctx == NULL || name == NULL || name[0] == '\0' || out == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_connect: NULL context, name or handle");
    *out = NULL;
    if (!ctx->pmix.initialized)
        return tern_error(TERN_ERR_UNSUPPORTED, "tern_connect: not started by a PMIx launcher");
    if (strcmp(name, ctx->pmix.nspace) == 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_connect: %s is this job", name);
    int njobs = atomic_load_explicit(&ctx->njobs, memory_order_relaxed);
    for (int i = 0; i < njobs; i++)
        if (ctx->jobs[i]->connected && strcmp(ctx->jobs[i]->name, name) == 0)
            return tern_error(TERN_ERR_INVALID_PARAM, "tern_connect: already connected to %s",
                              name);
    if (njobs == TERN_MAX_JOBS)
        return tern_error(TERN_ERR_NO_RESOURCE, "tern_connect: %d jobs connected already",
                          TERN_MAX_JOBS);
    if (ctx->next_base == 0)
        ctx->next_base = ctx->size;
    int size = 0;
    tern_status_t st = tern_pmix_job_size_of(&ctx->pmix, name, &size);
    if (st == TERN_OK && (size < 1 || size > (1 << 30) - ctx->next_base))
        st = tern_error(TERN_ERR_MALFORMED, "tern_connect: job %s has %d ranks", name, size);
    /* every netmod that may carry them, then our addresses with their cards */
    for (int k = 0; st == TERN_OK && k < ctx->num_workers; k++) {
        tern_worker_t *w = &ctx->workers[k];
        int n = 0;
        char key[64];
        st = tern_netmods_ensure_conn(w, false, &n);
        if (st == TERN_OK && n == 0)
            st = tern_error(TERN_ERR_UNSUPPORTED, "tern_connect: no netmod here reaches other "
                            "jobs (tcp, verbs and dpdk do; netmods built: %s%s%s)",
                            tern_netmod_names(), ctx->cfg.netmods[0] ? ", TERN_NETMODS=" : "",
                            ctx->cfg.netmods);
        if (st == TERN_OK)
            st = tern_worker_make_address(w, false, NULL, NULL);
        if (st == TERN_OK)
            st = tern_pmix_put(&ctx->pmix, tern_worker_key(w, TERN_ADDR_KEY, key, sizeof(key)),
                               w->addr, w->addr_len);
    }
    if (st == TERN_OK)
        st = tern_pmix_commit(&ctx->pmix);
    tern_job_t *job = NULL;
    if (st == TERN_OK && (job = tern_job_new(ctx, name, size)) == NULL)
        st = tern_error(TERN_ERR_NO_MEMORY, "tern_connect: %d VCs to %s", size, name);
    if (st != TERN_OK) {
        /* the other side is entering the collective: it will see the
         * launcher's error for this rank (connect and fence fail with
         * ours), never a hang */
        return st;
    }
    /* before the connect: the events about its ranks reach us from then on */
    job->deaths = tern_pmix_watch(&ctx->pmix, name, size);
    /* progressing meanwhile: a message this rank sent before the call may
     * be what another rank waits for before it calls (a user-space
     * netmod's frames go out only in our progress) */
    st = tern_pmix_connect(&ctx->pmix, name, TERN_PMIX_CONNECT, tern_progress_all, ctx);
    for (int k = 0; st == TERN_OK && k < ctx->num_workers; k++)
        for (int r = 0; st == TERN_OK && r < size; r++)
            st = remote_vc(&ctx->workers[k], &job->vcs[k][r], name, r);
    if (st != TERN_OK) {
        /* closing the VCs records messages of its own: keep the cause */
        char why[512];
        snprintf(why, sizeof(why), "%s", tern_last_error());
        tern_job_close_vcs(job); /* the netmod forgets the ones it set up */
        tern_job_free(job);
        return tern_error(st, "%s", why);
    }
    tern_job_publish(ctx, job);
    st = tern_pmix_connect(&ctx->pmix, name, TERN_PMIX_FENCE_BOTH, tern_progress_all, ctx);
    if (st != TERN_OK) {
        job->connected = false;
        return st;
    }
    *out = job;
    return TERN_OK;
}

/* Terminate the job's VCs and progress until their queues are out
 * (bounded: a dead peer fails its VC, a stuck one is dropped after 10 s). */
static void drain(tern_job_t *job)
{
    tern_context_t *ctx = job->ctx;
    for (int k = 0; k < ctx->num_workers; k++)
        for (int r = 0; r < job->size; r++)
            if (job->vcs[k][r].state == TERN_VC_ACTIVE)
                job->vcs[k][r].nm->core.vc_terminate(&job->vcs[k][r]);
    uint64_t deadline = tern_now_ns() + 10ull * 1000000000ull;
    for (;;) {
        int busy = -1;
        for (int k = 0; k < ctx->num_workers && busy < 0; k++)
            for (int r = 0; r < job->size && busy < 0; r++)
                if (job->vcs[k][r].state == TERN_VC_TERMINATING)
                    busy = r;
        if (busy < 0)
            return;
        if (tern_now_ns() > deadline) {
            tern_warn("disconnect from %s: sends to its rank %d did not drain in 10 s; they "
                      "are dropped", job->name, busy);
            return;
        }
        tern_progress_all_or_yield(ctx);
    }
}

void tern_jobs_take_dead(tern_worker_t *w)
{
    tern_context_t *ctx = w->ctx;
    /* A: as in tern_remote_vc */
    int n = atomic_load_explicit(&ctx->njobs, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        tern_job_t *job = ctx->jobs[i];
        tern_pmix_death_t dead[16];
        int nd;
        if (!job->connected)
            continue;
        while ((nd = tern_pmix_take_dead_of(job->deaths, w->index, dead, 16)) > 0) {
            /* what it sent before dying is here: take it in first */
            for (int k = 0; k < w->num_pollers; k++)
                w->pollers[k]->core.poll(w->pollers[k]->state, TERN_POLL_ALL);
            for (int d = 0; d < nd; d++) {
                tern_vc_t *vc = &job->vcs[w->index][dead[d].rank];
                if (vc->state == TERN_VC_FAILED || vc->state == TERN_VC_CLOSED)
                    continue;
                char why[320];
                snprintf(why, sizeof(why), "rank %d of job %s %s (reported by the launcher)",
                         dead[d].rank, job->name, dead[d].how);
                tern_vc_fail(vc, TERN_ERR_PEER_FAILED, why);
            }
        }
    }
}

tern_status_t tern_disconnect(tern_job_t *job)
{
    if (job == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_disconnect: NULL job");
    if (!job->connected)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_disconnect: %s is not connected",
                          job->name);
    drain(job);
    tern_status_t st = job->port ? TERN_OK
                                 : tern_pmix_connect(&job->ctx->pmix, job->name,
                                                     TERN_PMIX_DISCONNECT, tern_progress_all,
                                                     job->ctx);
    tern_job_close_vcs(job);
    job->connected = false;
    return st;
}

void tern_jobs_close(tern_context_t *ctx)
{
    int n = atomic_load_explicit(&ctx->njobs, memory_order_relaxed);
    for (int i = 0; i < n; i++)
        if (ctx->jobs[i]->connected) {
            drain(ctx->jobs[i]);
            tern_job_close_vcs(ctx->jobs[i]);
            ctx->jobs[i]->connected = false;
        }
}
