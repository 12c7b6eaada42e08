/*
 * Context: PMIx wire-up, netmod selection per VC, finalize.
 *
 * Wire-up (collective):
 *   PMIx_Init, job keys -> each netmod's init (puts its card)
 *   -> PMIx_Commit + PMIx_Fence(collect) -> vc_init of every VC with the
 *   peer's card -> PMIx_Fence -> wireup_done (shm unlinks the segment name).
 * Every rank goes through both fences even when its own netmod init or a
 * vc_init failed (a failed creator puts an error card instead), so a
 * failure is reported everywhere instead of leaving the others blocked in
 * a fence.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "engine/match.h"
#include "engine/netmod.h"

void tern_worker_init(tern_worker_t *w, tern_context_t *ctx)
{
    memset(w, 0, sizeof(*w));
    w->ctx = ctx;
    tern_list_init(&w->posted);
    tern_list_init(&w->unexpected);
    tern_list_init(&w->free_reqs);
    w->id_free_head = UINT32_MAX;
    w->doorbell = &w->local_doorbell[0];
    w->sleeping = &w->local_doorbell[1];
    w->last_health_ns = tern_now_ns();
}

static tern_status_t add_netmod(tern_context_t *ctx, tern_netmod_ops_t *ops)
{
    tern_netmod_fill_defaults(ops); /* poll stays NULL: self has nothing to poll */
    tern_netmod_inst_t *n = &ctx->netmods[ctx->num_netmods];
    n->ops = ops;
    tern_status_t st = ops->init(ctx, &n->state);
    ctx->num_netmods++; /* finalize is called even after a failed init */
    if (ops->poll != NULL)
        ctx->pollers[ctx->num_pollers++] = *n;
    return st;
}

enum { NM_SHM = 1, NM_TCP = 2 };

/* TERN_NETMODS: a comma-separated subset of the built netmods (self is
 * always used); unset means all of them. */
static tern_status_t allowed_netmods(unsigned *mask)
{
    const char *env = getenv("TERN_NETMODS");
    if (env == NULL || *env == '\0') {
        *mask = NM_SHM | NM_TCP;
        return TERN_OK;
    }
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", env);
    *mask = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok != NULL;
         tok = strtok_r(NULL, ", ", &save)) {
        if (strcmp(tok, "shm") == 0)
            *mask |= NM_SHM;
#ifdef TERN_HAVE_NETMOD_TCP
        else if (strcmp(tok, "tcp") == 0)
            *mask |= NM_TCP;
#endif
        else if (strcmp(tok, "self") != 0)
            return tern_error(TERN_ERR_INVALID_PARAM,
                              "TERN_NETMODS=\"%s\": no netmod \"%s\" in this build (built:%s)",
                              env, tok, TERN_NETMOD_LIST);
    }
    return TERN_OK;
}

/* Pick the netmod of each VC: self, then shm for local peers, then tcp. */
static tern_status_t select_netmods(tern_context_t *ctx)
{
    for (int r = 0; r < ctx->size; r++) {
        tern_vc_t *vc = &ctx->vcs[r];
        vc->rank = r;
        vc->worker = &ctx->worker;
        vc->eager_limit = ctx->cfg.eager_limit;
        tern_list_init(&vc->lmt_wait);
        for (int i = 0; i < ctx->num_netmods; i++) {
            if (ctx->netmods[i].ops->reachable(ctx, r)) {
                vc->nm = ctx->netmods[i].ops;
                vc->nm_state = ctx->netmods[i].state;
                break;
            }
        }
        if (vc->nm == NULL)
            return tern_error(TERN_ERR_UNSUPPORTED,
                              "no netmod reaches rank %d from rank %d (it is on another node; "
                              "netmods built: %s)",
                              r, ctx->rank, TERN_NETMOD_LIST);
    }
    return TERN_OK;
}

tern_status_t tern_init(tern_context_t **out)
{
    if (out == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_init: NULL context pointer");
    tern_context_t *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "context");
    tern_status_t st = tern_config_load(&ctx->cfg);
    if (st != TERN_OK)
        goto err_free;
    st = tern_pmix_init(&ctx->pmix);
    if (st != TERN_OK)
        goto err_free;
    ctx->rank = (int)ctx->pmix.rank;
    ctx->size = (int)ctx->pmix.size;
    tern_worker_init(&ctx->worker, ctx);
    ctx->vcs = calloc((size_t)ctx->size, sizeof(*ctx->vcs));
    if (ctx->vcs == NULL) {
        st = tern_error(TERN_ERR_NO_MEMORY, "%d VCs", ctx->size);
        goto err_pmix;
    }

    /* Phase 1: every netmod's init; keep going to the fence on failure. */
    unsigned allowed = 0;
    tern_status_t init_st = allowed_netmods(&allowed);
    bool remote = ctx->pmix.local_size < ctx->pmix.size;
    if (init_st == TERN_OK)
        init_st = add_netmod(ctx, &tern_netmod_self_ops);
    if (init_st == TERN_OK && ctx->pmix.local_size > 1 && (allowed & NM_SHM))
        init_st = add_netmod(ctx, &tern_netmod_shm_ops);
#ifdef TERN_HAVE_NETMOD_TCP
    /* tcp for ranks on other nodes, or for everyone when shm is excluded */
    if (init_st == TERN_OK && (allowed & NM_TCP) &&
        (remote || (ctx->pmix.local_size > 1 && !(allowed & NM_SHM))))
        init_st = add_netmod(ctx, &tern_netmod_tcp_ops);
#else
    (void)remote;
#endif
    char init_err[512] = "";
    if (init_st != TERN_OK)
        snprintf(init_err, sizeof(init_err), "%s", tern_last_error());

    st = tern_pmix_fence(&ctx->pmix, true);
    if (st != TERN_OK)
        goto err_netmods;

    /* Phase 2: VCs, with the peers' cards (only if our own init worked;
     * either way we join the second fence, which every rank reaches). */
    char vc_err[512] = "";
    tern_status_t vc_st = init_st;
    if (vc_st == TERN_OK) {
        vc_st = select_netmods(ctx);
        for (int r = 0; vc_st == TERN_OK && r < ctx->size; r++)
            vc_st = ctx->vcs[r].nm->vc_init(ctx->vcs[r].nm_state, &ctx->vcs[r]);
        if (vc_st != TERN_OK)
            snprintf(vc_err, sizeof(vc_err), "%s", tern_last_error());
    } else {
        snprintf(vc_err, sizeof(vc_err), "%s", init_err);
    }
    st = tern_pmix_fence(&ctx->pmix, false);
    if (vc_st != TERN_OK) {
        st = tern_error(vc_st, "%s", vc_err);
        goto err_netmods;
    }
    if (st != TERN_OK)
        goto err_netmods;

    /* Phase 3: everyone is attached. */
    for (int i = 0; i < ctx->num_netmods; i++) {
        st = ctx->netmods[i].ops->wireup_done(ctx->netmods[i].state);
        if (st != TERN_OK)
            goto err_netmods;
    }
    *out = ctx;
    return TERN_OK;

err_netmods:
    snprintf(init_err, sizeof(init_err), "%s", tern_last_error());
    for (int i = ctx->num_netmods - 1; i >= 0; i--)
        ctx->netmods[i].ops->finalize(ctx->netmods[i].state);
    free(ctx->vcs);
    tern_worker_pool_destroy(&ctx->worker);
    tern_error(st, "%s", init_err);
err_pmix:
    tern_pmix_finalize(&ctx->pmix);
err_free:
    free(ctx);
    return st;
}

tern_status_t tern_finalize(tern_context_t *ctx)
{
    if (ctx == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_finalize: NULL context");
    tern_worker_t *w = &ctx->worker;
    /* Drain: every send the netmods still hold must reach the peers' memory
     * before we leave the fence.  Bounded by peer health: a dead peer fails
     * its VC and the netmod drops the queue. */
    for (int i = 0; i < ctx->num_netmods; i++) {
        tern_netmod_inst_t *n = &ctx->netmods[i];
        for (int r = 0; r < ctx->size; r++)
            if (ctx->vcs[r].nm == n->ops && ctx->vcs[r].state == TERN_VC_ACTIVE)
                n->ops->vc_terminate(&ctx->vcs[r]);
    }
    /* A correct program has completed its requests, so this ends at once;
     * an erroneous one (a receive it never posted holds our CTS back) gets a
     * bounded drain and a warning naming the peer, never a hang. */
    uint64_t deadline = tern_now_ns() + 10ull * 1000000000ull;
    for (;;) {
        int busy = -1;
        for (int r = 0; r < ctx->size && busy < 0; r++)
            if (ctx->vcs[r].state == TERN_VC_TERMINATING)
                busy = r;
        if (busy < 0)
            break;
        if (tern_now_ns() > deadline) {
            tern_warn("finalize: sends to rank %d did not drain in 10 s; they are dropped", busy);
            break;
        }
        if (tern_progress(w) == 0)
            sched_yield();
    }
    ctx->finalizing = true;
    tern_status_t st = tern_pmix_fence(&ctx->pmix, false);
    for (int i = ctx->num_netmods - 1; i >= 0; i--) {
        tern_status_t s2 = ctx->netmods[i].ops->finalize(ctx->netmods[i].state);
        if (st == TERN_OK)
            st = s2;
    }
    tern_status_t s3 = tern_pmix_finalize(&ctx->pmix);
    if (st == TERN_OK)
        st = s3;
    tern_worker_pool_destroy(w);
    for (int r = 0; r < ctx->size; r++)
        free(ctx->vcs[r].fail_msg);
    free(ctx->vcs);
    free(ctx);
    return st;
}

int tern_rank(const tern_context_t *ctx) { return ctx->rank; }
int tern_size(const tern_context_t *ctx) { return ctx->size; }
int tern_local_rank(const tern_context_t *ctx) { return (int)ctx->pmix.local_rank; }
int tern_local_size(const tern_context_t *ctx) { return (int)ctx->pmix.local_size; }
tern_worker_t *tern_context_worker(tern_context_t *ctx) { return &ctx->worker; }

const char *tern_peer_netmod(const tern_context_t *ctx, int rank)
{
    if (rank < 0 || rank >= ctx->size || ctx->vcs[rank].nm == NULL)
        return NULL;
    return ctx->vcs[rank].nm->name;
}

tern_status_t tern_barrier(tern_context_t *ctx) { return tern_pmix_fence(&ctx->pmix, false); }

void tern_abort(tern_context_t *ctx, int status, const char *msg)
{
    tern_pmix_abort(&ctx->pmix, status, msg);
    _Exit(status ? status : 1); /* PMIx_Abort returned: the launcher did not kill us */
}

tern_status_t tern_publish(tern_context_t *ctx, const char *key, const char *value)
{
    if (key == NULL || value == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_publish: NULL key or value");
    return tern_pmix_publish(&ctx->pmix, key, value);
}

tern_status_t tern_lookup(tern_context_t *ctx, const char *key, char **value)
{
    if (key == NULL || value == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_lookup: NULL key or value pointer");
    return tern_pmix_lookup(&ctx->pmix, key, value);
}

tern_status_t tern_unpublish(tern_context_t *ctx, const char *key)
{
    if (key == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_unpublish: NULL key");
    return tern_pmix_unpublish(&ctx->pmix, key);
}
