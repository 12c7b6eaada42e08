/*
 * Context: PMIx wire-up, netmod selection per VC, finalize.
 *
 * Wire-up (collective):
 *   PMIx_Init, job keys -> the netmods chosen for this rank's peers are
 *   initialised -> each worker's address (engine/peer.c: every initialised
 *   netmod's card) is put, once per worker ("tern.addr", "tern.addr.<i>"),
 *   with this rank's outcome ("tern.init") -> PMIx_Commit +
 *   PMIx_Fence(collect) -> if every rank succeeded, every peer's address is
 *   read and each VC's netmod gets its card (vc_init) -> outcome
 *   ("tern.wired") -> PMIx_Fence(collect) -> a rank whose node-mate failed
 *   fails too -> wireup_done (shm unlinks the segment name).
 * Without a launcher (TERN_WIREUP_ADDRESS) the same steps are driven by the
 * addresses the caller inserts: engine/wireup_addr.c.
 * Every rank goes through both fences even when its configuration, its own
 * netmod init or a vc_init failed, so a failure is reported everywhere
 * instead of leaving the others blocked in a fence, and the ranks of a node
 * all leave through their error path (nothing left in /dev/shm) without
 * depending on the launcher to kill them.
 *
 * Selection: the registry (engine/netmod.h) lists the built netmods by
 * priority; TERN_NETMODS restricts them.  Each peer's VC goes to the
 * highest-priority allowed netmod that reaches it; only netmods that carry
 * some VC are initialised.  The VC to oneself is the engine's self netmod.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/crash.h"
#include "engine/engine_internal.h"
#include "engine/init_params.h"
#include "engine/match.h"
#include "engine/netmod.h"
#include "engine/rma.h"

#define INIT_KEY "tern.init"   /* outcome of phase 1 */
#define WIRED_KEY "tern.wired" /* outcome of phase 2 */

/* The process's one live context (tern_init twice is refused; tern_finalize
 * of anything else is refused instead of freeing it twice). */
static _Atomic(tern_context_t *) live_context;

/* A rank's outcome of the wire-up, seen by its node's other ranks. */
typedef struct init_card {
    int32_t status;
    char error[252];
} init_card_t;

/* TERN_NETMODS: allowed[i] for registry entry i. */
tern_status_t tern_allowed_netmods(const char *list, bool *allowed)
{
    int n = tern_netmod_count();
    for (int i = 0; i < n; i++)
        allowed[i] = list[0] == '\0';
    if (list[0] == '\0')
        return TERN_OK;
    char buf[TERN_CFG_STR_MAX];
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok != NULL;
         tok = strtok_r(NULL, ", ", &save)) {
        if (strcmp(tok, "self") == 0)
            continue;
        const tern_netmod_desc_t *d = tern_netmod_find(tok);
        if (d == NULL)
            return tern_error(TERN_ERR_INVALID_PARAM,
                              "TERN_NETMODS=\"%s\": no netmod \"%s\" in this build (built: %s)",
                              list, tok, tern_netmod_names());
        for (int i = 0; i < n; i++)
            if (tern_netmod_get(i) == d)
                allowed[i] = true;
    }
    return TERN_OK;
}

void tern_context_use_wait_mode(tern_context_t *ctx, unsigned mode, const char *why)
{
    if (ctx->cfg.wait_mode == mode)
        return;
    tern_warn("TERN_WAIT_MODE differs from this node's: using %s instead of %s (%s)",
              tern_wait_mode_name(mode), tern_wait_mode_name(ctx->cfg.wait_mode), why);
    ctx->cfg.wait_mode = mode;
}

/* Which netmod carries each VC (index into the instances: 0 self, 1 + i
 * registry entry i), the same for every worker.  pick[r] for every rank.
 * wired: the peers' addresses are known (TERN_WIREUP_ADDRESS: worker 0's
 * table, its instances initialised): a netmod counts only when it is and
 * the peer's address has its card. */
tern_status_t tern_choose_netmods(tern_context_t *ctx, tern_netmod_inst_t *probe, int *pick,
                                  tern_worker_t *wired)
{
    int nreg = tern_netmod_count();
    bool *allowed = calloc((size_t)nreg + 1, sizeof(*allowed));
    if (allowed == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "netmod table");
    tern_status_t st = tern_allowed_netmods(ctx->cfg.netmods, allowed);
    for (int r = 0; st == TERN_OK && r < ctx->size; r++) {
        pick[r] = r == ctx->rank ? 0 : -1;
        for (int i = 0; pick[r] < 0 && i < nreg; i++) {
            size_t len;
            if (allowed[i] && probe[1 + i].core.reachable(ctx, r) &&
                (wired == NULL || (probe[1 + i].initialized &&
                                   tern_wire_card(wired, r, probe[1 + i].name, &len) != NULL)))
                pick[r] = 1 + i;
        }
        if (pick[r] < 0) {
            /* say why the allowed netmods that could not be used are not */
            char whynot[512] = "";
            size_t n = 0;
            for (int i = 0; i < nreg && n < sizeof(whynot); i++) {
                const tern_netmod_desc_t *d = tern_netmod_get(i);
                const char *why = allowed[i] && d->unavailable ? d->unavailable() : NULL;
                if (why != NULL)
                    n += (size_t)snprintf(whynot + n, sizeof(whynot) - n, "; %s: %s", d->name,
                                          why);
            }
            char cards[160] = "";
            if (wired != NULL) /* what the peer offers decides too */
                tern_wire_names(wired, r, cards, sizeof(cards));
            st = tern_error(TERN_ERR_UNREACHABLE,
                            "no netmod reaches rank %d from rank %d (it is on %s%s%s; netmods "
                            "built: %s%s%s%s)", r, ctx->rank,
                            tern_ctx_local_index(ctx, r) >= 0 ? "this node" : "another node",
                            cards[0] ? "; its address has cards of " : "", cards,
                            tern_netmod_names(), ctx->cfg.netmods[0] ? ", TERN_NETMODS=" : "",
                            ctx->cfg.netmods, whynot);
        }
    }
    free(allowed);
    return st;
}

/*
 * Worker w's netmods: instantiate the registry (configurations validated
 * for every built netmod, used or not), bind each VC to its chosen
 * instance, init the chosen ones.  pick NULL (TERN_WIREUP_ADDRESS: the
 * peers are not known yet): init every allowed netmod this process can use,
 * the VCs to others waiting for their addresses.  On failure some netmods
 * may be initialised: the caller finalizes them.
 */
tern_status_t tern_setup_worker(tern_worker_t *w, const int *pick)
{
    tern_context_t *ctx = w->ctx;
    int nreg = tern_netmod_count();
    w->netmods = calloc((size_t)nreg + 1, sizeof(*w->netmods));
    w->vcs = calloc((size_t)ctx->size, sizeof(*w->vcs));
    if (w->netmods == NULL || w->vcs == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "worker %d: %d VCs", w->index, ctx->size);
    tern_status_t st = tern_netmod_instantiate(&w->netmods[0], &tern_netmod_self);
    for (int i = 0; st == TERN_OK && i < nreg; i++)
        st = tern_netmod_instantiate(&w->netmods[1 + i], tern_netmod_get(i));
    w->num_netmods = 1 + nreg;
    if (st != TERN_OK)
        return st;
    bool needed[TERN_MAX_NETMODS + 1] = {false};
    if (pick == NULL) {
        bool allowed[TERN_MAX_NETMODS + 1];
        if ((st = tern_allowed_netmods(ctx->cfg.netmods, allowed)) != TERN_OK)
            return st;
        needed[0] = true;
        for (int i = 0; i < nreg; i++) {
            const tern_netmod_desc_t *d = tern_netmod_get(i);
            needed[1 + i] = allowed[i] && (d->unavailable == NULL || d->unavailable() == NULL);
        }
    }
    for (int r = 0; r < ctx->size; r++) {
        tern_vc_t *vc = &w->vcs[r];
        vc->rank = r;
        vc->worker = w;
        vc->eager_limit = ctx->cfg.eager_limit;
        tern_list_init(&vc->lmt_wait);
        if (pick == NULL) { /* self now, the others once their addresses are in */
            if (r == ctx->rank)
                vc->nm = &w->netmods[0];
            else
                tern_vc_unwired(vc, "its address is not inserted yet (tern_peer_insert)");
            continue;
        }
        vc->nm = &w->netmods[pick[r]]; /* nm_state once initialised */
        needed[pick[r]] = true;
    }
    for (int i = 0; i < w->num_netmods; i++) {
        tern_netmod_inst_t *n = &w->netmods[i];
        if (!needed[i])
            continue;
        n->initialized = true; /* finalize is called even after a failed init */
        void *no_shared = NULL; /* self shares nothing */
        st = n->core.init(w, n->config, i ? &ctx->nm_shared[i - 1] : &no_shared, &n->state);
        if (st != TERN_OK)
            return st;
        if (n->core.poll != NULL)
            w->pollers[w->num_pollers++] = n;
    }
    for (int r = 0; r < ctx->size; r++)
        if (w->vcs[r].nm != NULL)
            w->vcs[r].nm_state = w->vcs[r].nm->state;
    return TERN_OK;
}

static tern_status_t setup_netmods(tern_context_t *ctx)
{
    if (tern_netmod_count() > TERN_MAX_NETMODS)
        return tern_error(TERN_ERR_UNSUPPORTED, "more than %d netmods registered",
                          TERN_MAX_NETMODS);
    int *pick = calloc((size_t)ctx->size, sizeof(*pick));
    if (pick == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "netmod choice for %d ranks", ctx->size);
    int nreg = tern_netmod_count();
    tern_status_t st = TERN_OK;
    tern_netmod_inst_t *probe = calloc((size_t)nreg + 1, sizeof(*probe));
    if (probe == NULL)
        st = tern_error(TERN_ERR_NO_MEMORY, "netmod table");
    for (int i = 0; st == TERN_OK && i < nreg; i++)
        st = tern_netmod_instantiate(&probe[1 + i], tern_netmod_get(i));
    if (st == TERN_OK)
        st = tern_choose_netmods(ctx, probe, pick, NULL);
    for (int i = 0; probe != NULL && i <= nreg; i++)
        tern_netmod_inst_release(&probe[i]);
    free(probe);
    for (int k = 0; st == TERN_OK && k < ctx->num_workers; k++)
        st = tern_setup_worker(&ctx->workers[k], pick);
    free(pick);
    return st;
}

static void free_workers(tern_context_t *ctx)
{
    tern_jobs_free(ctx);
    for (int k = 0; ctx->workers != NULL && k < ctx->num_workers; k++) {
        tern_worker_t *w = &ctx->workers[k];
        tern_worker_fini(w);
        tern_wire_free(w);
        free(w->addr);
        for (int r = 0; w->vcs != NULL && r < ctx->size; r++)
            tern_vc_free_msgs(&w->vcs[r]);
        free(w->vcs);
        free(w->netmods);
        free(w->rma_dirty);
    }
    free(ctx->workers);
    ctx->workers = NULL;
    tern_regions_free(ctx);
}

void tern_finalize_netmods(tern_context_t *ctx)
{
    tern_regions_nm_release(ctx); /* registrations with the netmods, before they go */
    for (int k = ctx->num_workers - 1; k >= 0; k--) {
        tern_worker_t *w = &ctx->workers[k];
        for (int i = w->num_netmods - 1; i >= 0; i--) {
            tern_netmod_inst_t *n = &w->netmods[i];
            tern_mem_release(n); /* deregisters through the netmod: before it goes */
            if (n->initialized)
                n->core.finalize(n->state);
            n->initialized = false;
            tern_netmod_inst_release(n);
        }
        free(w->netmods);
        w->netmods = NULL;
        w->num_netmods = w->num_pollers = 0;
    }
}

/* After a fence: the first failure among the ranks' outcomes under key
 * (every rank, or this node's ranks only). */
static tern_status_t peers_ok(tern_context_t *ctx, const char *key, bool local_only)
{
    uint32_t n = local_only ? ctx->pmix.local_size : (uint32_t)ctx->size;
    for (uint32_t i = 0; i < n; i++) {
        int r = local_only ? ctx->pmix.local_peers[i] : (int)i;
        if (r == ctx->rank)
            continue;
        void *data;
        size_t len;
        tern_status_t st = tern_pmix_get(&ctx->pmix, r, key, &data, &len);
        if (st != TERN_OK)
            return st;
        init_card_t c = {.status = TERN_ERR_MALFORMED, .error = "bad init card"};
        if (len == sizeof(c))
            memcpy(&c, data, sizeof(c));
        free(data);
        c.error[sizeof(c.error) - 1] = '\0';
        if (c.status != TERN_OK)
            return tern_error((tern_status_t)c.status, "rank %d%s failed tern_init: %s", r,
                              tern_pmix_local_index(&ctx->pmix, r) >= 0 ? " on this node" : "",
                              c.error);
    }
    return TERN_OK;
}

/* Put this rank's outcome under key and fence (collecting). */
static tern_status_t put_outcome(tern_context_t *ctx, const char *key, tern_status_t st)
{
    init_card_t card = {.status = st};
    if (st != TERN_OK)
        snprintf(card.error, sizeof(card.error), "%s", tern_last_error());
    tern_status_t pst = tern_pmix_put(&ctx->pmix, key, &card, sizeof(card));
    tern_status_t fst = tern_pmix_fence(&ctx->pmix, true);
    if (st != TERN_OK)
        return tern_error(st, "%s", card.error); /* the cause, not the fence's */
    return pst != TERN_OK ? pst : fst;
}

/* Every peer's address on worker w, from PMIx, into the wire-up's table. */
static tern_status_t read_addresses(tern_worker_t *w)
{
    tern_context_t *ctx = w->ctx;
    char buf[64], what[160];
    const char *key = tern_worker_key(w, TERN_ADDR_KEY, buf, sizeof(buf));
    for (int r = 0; r < ctx->size; r++) {
        if (r == ctx->rank)
            continue;
        void *data;
        size_t len;
        tern_status_t st = tern_pmix_get(&ctx->pmix, r, key, &data, &len);
        if (st != TERN_OK)
            return st;
        snprintf(what, sizeof(what), "rank %d's address (PMIx key %s)", r, key);
        st = tern_wire_add(w, data, len, r, what);
        free(data);
        if (st != TERN_OK)
            return st;
    }
    return TERN_OK;
}

static tern_status_t wireup(tern_context_t *ctx, tern_status_t st)
{
    /* Phase 1: netmods chosen and initialised, each worker's address put;
     * every rank reaches the fence and tells how it went. */
    if (st == TERN_OK)
        st = setup_netmods(ctx);
    for (int k = 0; st == TERN_OK && k < ctx->num_workers; k++) {
        tern_worker_t *w = &ctx->workers[k];
        char key[64];
        st = tern_worker_make_address(w, false, NULL, NULL);
        if (st == TERN_OK)
            st = tern_pmix_put(&ctx->pmix, tern_worker_key(w, TERN_ADDR_KEY, key, sizeof(key)),
                               w->addr, w->addr_len);
    }
    st = put_outcome(ctx, INIT_KEY, st);
    if (st == TERN_OK) /* a peer that failed has no address to read */
        st = peers_ok(ctx, INIT_KEY, false);

    /* Phase 2: VCs, with the cards of the peers' addresses; again every
     * rank reaches the fence, and a rank whose node-mate failed fails too
     * (its netmods' shared resources are then released by every rank of
     * the node). */
    for (int k = 0; st == TERN_OK && k < ctx->num_workers; k++) {
        tern_worker_t *w = &ctx->workers[k];
        st = read_addresses(w);
        if (st == TERN_OK)
            st = tern_wire_init_vcs(w);
        if (st == TERN_OK)
            st = tern_worker_bind_events(w);
    }
    st = put_outcome(ctx, WIRED_KEY, st);
    if (st == TERN_OK)
        st = peers_ok(ctx, WIRED_KEY, true);

    /* Phase 3: everyone is attached. */
    for (int k = 0; k < ctx->num_workers; k++)
        tern_wire_free(&ctx->workers[k]);
    if (st == TERN_OK)
        st = tern_wireup_done(ctx);
    return st;
}

tern_status_t tern_wireup_done(tern_context_t *ctx)
{
    tern_status_t st = TERN_OK;
    for (int k = 0; st == TERN_OK && k < ctx->num_workers; k++)
        for (int i = 0; st == TERN_OK && i < ctx->workers[k].num_netmods; i++) {
            tern_netmod_inst_t *n = &ctx->workers[k].netmods[i];
            if (n->initialized)
                st = n->core.wireup_done(n->state);
        }
    return st;
}

/* params: tern_init_ex's, checked (tern_init_params_check); NULL: none */
static tern_status_t init_context(tern_context_t **out, const tern_init_params_t *params,
                                  bool standalone)
{
    bool by_address = tern_init_params_by_address(params);
    if (out == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_init: NULL context pointer");
    tern_context_t *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "context");
    tern_context_t *none = NULL;
    if (!atomic_compare_exchange_strong(&live_context, &none, ctx)) {
        free(ctx);
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_init: this process already has a context (one per process; "
                          "tern_finalize it first)");
    }
    /* A bad setting is reported after PMIx init, through the fences like
     * any other failure: the other ranks must not wait for this one. */
    tern_status_t cfg_st = tern_init_params_load(params, &ctx->cfg);
    if (cfg_st == TERN_OK) /* every other component's (engine/config.h): read when the
                            * component starts, refused now like the engine's */
        cfg_st = tern_config_check_components();
    if (cfg_st == TERN_OK && ctx->cfg.backtrace)
        tern_crash_install();
    char cfg_err[512] = "";
    if (cfg_st != TERN_OK)
        snprintf(cfg_err, sizeof(cfg_err), "%s", tern_last_error());
    /* without a launcher there is nobody to tell: a bad setting fails now */
    tern_status_t st = by_address ? (cfg_st != TERN_OK ? cfg_st
                                                      : tern_address_context(ctx, params))
                                  : tern_pmix_init(&ctx->pmix, standalone);
    if (st != TERN_OK) {
        if (cfg_st != TERN_OK) /* the setting is the cause to report */
            st = tern_error(cfg_st, "%s", cfg_err);
        goto err_free;
    }
    if (cfg_st != TERN_OK)
        tern_error(cfg_st, "%s", cfg_err);
    ctx->rank = (int)ctx->pmix.rank;
    ctx->size = (int)ctx->pmix.size;
    ctx->job_hash = tern_job_hash(ctx->pmix.nspace);
    if (cfg_st == TERN_OK && !by_address) /* before the netmods: shm records the node's mode */
        tern_context_idle_defaults(ctx);
    ctx->num_workers = cfg_st == TERN_OK ? (int)ctx->cfg.num_workers : 1;
    ctx->workers = calloc((size_t)ctx->num_workers, sizeof(*ctx->workers));
    if (ctx->workers == NULL) {
        st = tern_error(TERN_ERR_NO_MEMORY, "%d workers", ctx->num_workers);
        goto err_pmix;
    }
    for (int k = 0; st == TERN_OK && k < ctx->num_workers; k++)
        st = tern_worker_init(&ctx->workers[k], ctx, k);
    if (st != TERN_OK)
        goto err_workers;
    atomic_store(&ctx->workers[0].in_use, 1);
    st = by_address ? tern_address_setup(ctx) : wireup(ctx, cfg_st);
    if (st != TERN_OK)
        goto err_netmods;
    *out = ctx;
    return TERN_OK;

err_netmods:
    snprintf(cfg_err, sizeof(cfg_err), "%s", tern_last_error());
    tern_finalize_netmods(ctx);
    tern_error(st, "%s", cfg_err);
    goto err_workers;
err_workers:
    free_workers(ctx);
err_pmix:
    snprintf(cfg_err, sizeof(cfg_err), "%s", tern_last_error());
    tern_pmix_finalize(&ctx->pmix);
    tern_error(st, "%s", cfg_err);
err_free:
    atomic_store(&live_context, NULL);
    free(ctx);
    tern_crash_remove();
    return st;
}

tern_status_t tern_init(tern_context_t **out) { return init_context(out, NULL, false); }

tern_status_t tern_init_standalone(tern_context_t **out) { return init_context(out, NULL, true); }

tern_status_t tern_init_ex(const tern_init_params_t *params, tern_context_t **out)
{
    bool standalone;
    tern_status_t st = tern_init_params_check(params, &standalone);
    return st != TERN_OK ? st : init_context(out, params, standalone);
}

tern_context_t *tern_context_live(void) { return atomic_load(&live_context); }

unsigned tern_progress_all(void *arg)
{
    tern_context_t *ctx = arg;
    unsigned n = 0;
    for (int k = 0; k < ctx->num_workers; k++)
        n += tern_progress(&ctx->workers[k]);
    return n;
}

static unsigned progress_default(void *arg)
{
    return tern_progress(&((tern_context_t *)arg)->workers[0]);
}

void tern_progress_all_or_yield(tern_context_t *ctx)
{
    if (tern_progress_all(ctx) == 0)
        sched_yield();
}

/*
 * After the finalize fence: every stream we said BYE on (engine_internal.h)
 * is read up to the peer's BYE before the netmods close it.  The peer wrote
 * its BYE before it entered the fence, so it is here or on its way: this
 * ends at once.  Bounded all the same, by peer health (a dead peer fails its
 * VC) and a deadline.
 */
static void await_byes(tern_context_t *ctx)
{
    uint64_t deadline = tern_now_ns() + 10ull * 1000000000ull;
    for (;;) {
        int waiting = -1;
        for (int k = 0; k < ctx->num_workers && waiting < 0; k++)
            for (int r = 0; r < ctx->size && waiting < 0; r++) {
                const tern_vc_t *vc = &ctx->workers[k].vcs[r];
                if (vc->bye_sent && !vc->peer_bye && vc->state != TERN_VC_FAILED)
                    waiting = r;
            }
        if (waiting < 0)
            return;
        if (tern_now_ns() > deadline) {
            tern_warn("finalize: rank %d did not say goodbye within 10 s of the finalize "
                      "fence; closing its connection anyway", waiting);
            return;
        }
        tern_progress_all_or_yield(ctx);
    }
}

tern_status_t tern_finalize(tern_context_t *ctx)
{
    if (ctx == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_finalize: NULL context");
    tern_context_t *expect = ctx;
    if (!atomic_compare_exchange_strong(&live_context, &expect, NULL))
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_finalize: %p is not this process's context (finalized twice?)",
                          (void *)ctx);
    /* Connected jobs first: their sends out, their VCs closed. */
    tern_jobs_close(ctx);
    /* Without a launcher the job's ranks synchronise over the VCs they are
     * about to close: every rank has stopped sending before any closes. */
    bool by_address = ctx->wireup == TERN_WIREUP_ADDRESS;
    tern_status_t st = TERN_OK;
    if (by_address && ctx->wired == TERN_OK)
        st = tern_engine_barrier(ctx, true);
    /* Drain: every send the netmods still hold must reach the peers' memory
     * before we leave the fence.  Bounded by peer health: a dead peer fails
     * its VC and the netmod drops the queue. */
    for (int k = 0; k < ctx->num_workers; k++)
        for (int r = 0; r < ctx->size; r++)
            if (ctx->workers[k].vcs[r].state == TERN_VC_ACTIVE)
                ctx->workers[k].vcs[r].nm->core.vc_terminate(&ctx->workers[k].vcs[r]);
    /* A correct program has completed its requests, so this ends at once;
     * an erroneous one (a receive it never posted holds our CTS back) gets a
     * bounded drain and a warning naming the peer, never a hang. */
    uint64_t deadline = tern_now_ns() + 10ull * 1000000000ull;
    for (;;) {
        int busy = -1, busy_w = 0;
        for (int k = 0; k < ctx->num_workers && busy < 0; k++)
            for (int r = 0; r < ctx->size && busy < 0; r++)
                if (ctx->workers[k].vcs[r].state == TERN_VC_TERMINATING)
                    busy = r, busy_w = k;
        if (busy < 0)
            break;
        if (tern_now_ns() > deadline) {
            tern_warn("finalize: sends to rank %d (worker %d) did not drain in 10 s; they are "
                      "dropped", busy, busy_w);
            break;
        }
        tern_progress_all_or_yield(ctx);
    }
    ctx->finalizing = true;
    /* the fence progresses every worker: a peer still draining may need
     * our acknowledgements (dpdk); without a launcher it succeeds at once
     * (the barrier above was the job's) */
    tern_status_t fst = tern_pmix_fence_progress(&ctx->pmix, tern_progress_all, ctx);
    if (st == TERN_OK)
        st = fst;
    /* test hook: this rank learns of the fence's end late, as under a
     * launcher that releases it to the nodes at different times, and goes
     * on polling while the others close (tests/engine/finalize_tcp.sh).
     * The note lets the test see that the delay happened. */
    if (ctx->cfg.fault_fence_late_ms > 0) {
        uint64_t late = tern_now_ns() + ctx->cfg.fault_fence_late_ms * 1000000ull;
        tern_note("test hook TERN_FAULT_FENCE_LATE_MS: polling %llu ms after the finalize fence",
                  (unsigned long long)ctx->cfg.fault_fence_late_ms);
        while (tern_now_ns() < late)
            tern_progress_all_or_yield(ctx);
    }
    await_byes(ctx);
    tern_finalize_netmods(ctx);
    tern_status_t s3 = tern_pmix_finalize(&ctx->pmix);
    if (st == TERN_OK)
        st = s3;
    free_workers(ctx);
    free(ctx);
    tern_crash_remove();
    return st;
}

int tern_rank(const tern_context_t *ctx) { return ctx ? ctx->rank : -1; }
int tern_size(const tern_context_t *ctx) { return ctx ? ctx->size : 0; }
int tern_local_rank(const tern_context_t *ctx) { return ctx ? tern_ctx_local_rank(ctx) : -1; }
int tern_local_size(const tern_context_t *ctx) { return ctx ? tern_ctx_local_size(ctx) : 0; }

/* The job as netmods see it: the PMIx fields (filled from tern_init_ex's
 * parameters and the ranks' addresses without a launcher). */
const char *tern_ctx_job(const tern_context_t *ctx) { return ctx->pmix.nspace; }
uint32_t tern_ctx_job_hash(const tern_context_t *ctx) { return ctx->job_hash; }
int tern_ctx_local_size(const tern_context_t *ctx) { return (int)ctx->pmix.local_size; }
int tern_ctx_local_rank(const tern_context_t *ctx)
{
    return ctx->pmix.local_size > 0 ? (int)ctx->pmix.local_rank : -1;
}
int tern_ctx_local_peer(const tern_context_t *ctx, int i)
{
    return i >= 0 && (uint32_t)i < ctx->pmix.local_size ? ctx->pmix.local_peers[i] : -1;
}
int tern_ctx_local_index(const tern_context_t *ctx, int rank)
{
    return ctx->pmix.local_size > 0 ? tern_pmix_local_index(&ctx->pmix, rank) : -1;
}

tern_status_t tern_ctx_exit_fence(tern_context_t *ctx, unsigned timeout_ms)
{
    return tern_pmix_fence_timed(&ctx->pmix, timeout_ms);
}
tern_worker_t *tern_context_worker(tern_context_t *ctx) { return ctx ? &ctx->workers[0] : NULL; }

const char *tern_peer_netmod(const tern_context_t *ctx, int rank)
{
    if (ctx == NULL)
        return NULL;
    const tern_vc_t *vc = tern_vc_of(&ctx->workers[0], rank);
    return vc != NULL && vc->nm != NULL ? vc->nm->name : NULL;
}

const char *tern_worker_key(const tern_worker_t *w, const char *base, char *buf, size_t len)
{
    if (w->index == 0)
        return base;
    snprintf(buf, len, "%s.%d", base, w->index);
    return buf;
}

tern_status_t tern_worker_create(tern_context_t *ctx, tern_worker_t **out)
{
    if (ctx == NULL || out == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_worker_create: NULL context or result");
    for (int k = 1; k < ctx->num_workers; k++) {
        int free_slot = 0;
        /* acq_rel: the creating thread sees the worker as tern_init left it */
        if (atomic_compare_exchange_strong_explicit(&ctx->workers[k].in_use, &free_slot, 1,
                                                    memory_order_acq_rel,
                                                    memory_order_relaxed)) {
            *out = &ctx->workers[k];
            return TERN_OK;
        }
    }
    return tern_error(TERN_ERR_NO_RESOURCE,
                      "tern_worker_create: all %d workers are in use (worker 0 is the "
                      "context's); start the job with TERN_NUM_WORKERS=%d or more",
                      ctx->num_workers, ctx->num_workers + 1);
}

tern_status_t tern_worker_destroy(tern_worker_t *w)
{
    if (w == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_worker_destroy: NULL worker");
    if (w->index == 0)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_worker_destroy: worker 0 belongs to the context");
    /* release: what the thread did on it is visible to the next creator */
    int was = atomic_exchange_explicit(&w->in_use, 0, memory_order_acq_rel);
    if (!was)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_worker_destroy: worker %d is not in use",
                          w->index);
    return TERN_OK;
}

int tern_worker_index(const tern_worker_t *w) { return w ? w->index : -1; }

const void *tern_context_config(tern_context_t *ctx, const tern_config_table_t *t)
{
    if (ctx == NULL || t == NULL)
        return NULL;
    if (t == &tern_engine_config_table)
        return &ctx->cfg;
    /* a netmod's: the instances of every worker loaded the same table */
    const tern_worker_t *w = &ctx->workers[0];
    for (int i = 0; i < w->num_netmods; i++)
        if (w->netmods[i].initialized && w->netmods[i].desc->config == t)
            return w->netmods[i].config;
    return NULL;
}

int tern_worker_counters(tern_worker_t *w, tern_counter_t *out, int max)
{
    if (w == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_worker_counters: NULL worker");
    int n = 0;
    for (int i = 0; i < w->num_netmods; i++) {
        tern_netmod_inst_t *nm = &w->netmods[i];
        if (!nm->initialized)
            continue;
        int room = max > n ? max - n : 0;
        n += nm->core.counters(nm->state, room > 0 && out != NULL ? out + n : NULL,
                              out != NULL ? room : 0);
    }
    /* then the engine's same-host copy (cma.*) */
    int room = max > n ? max - n : 0;
    n += tern_cma_counters(w, room > 0 && out != NULL ? out + n : NULL, out != NULL ? room : 0);
    /* and the one-sided path's (rma.*) */
    room = max > n ? max - n : 0;
    n += tern_rma_counters(w, room > 0 && out != NULL ? out + n : NULL, out != NULL ? room : 0);
    return n;
}

tern_status_t tern_barrier(tern_context_t *ctx)
{
    if (ctx == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_barrier: NULL context");
    if (ctx->wireup == TERN_WIREUP_ADDRESS) {
        if (ctx->wired != TERN_OK)
            return tern_error(ctx->wired == TERN_INPROGRESS ? TERN_ERR_INVALID_PARAM : ctx->wired,
                              "tern_barrier: the job is not wired up%s%s",
                              ctx->wired == TERN_INPROGRESS
                                  ? " (insert every rank's address first: tern_peer_insert)"
                                  : ": ",
                              ctx->wired == TERN_INPROGRESS || ctx->wire_msg == NULL
                                  ? ""
                                  : ctx->wire_msg);
        return tern_engine_barrier(ctx, false);
    }
    /* worker 0 (the caller's) progresses during the fence: sends that
     * completed locally may still need it (dpdk retransmits, acks) */
    return tern_pmix_barrier_survivors(&ctx->pmix, progress_default, ctx);
}

/* Without a launcher (a singleton, or wired by addresses) the pmix layer
 * refuses what needs one and its abort ends this process only. */
void tern_abort(tern_context_t *ctx, int status, const char *msg)
{
    if (ctx != NULL)
        tern_pmix_abort(&ctx->pmix, status, msg);
    _Exit(status ? status : 1); /* PMIx_Abort returned: the launcher did not kill us */
}

tern_status_t tern_publish(tern_context_t *ctx, const char *key, const char *value)
{
    if (ctx == NULL || key == NULL || value == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_publish: NULL context, key or value");
    return tern_pmix_publish(&ctx->pmix, key, value);
}

tern_status_t tern_lookup(tern_context_t *ctx, const char *key, char **value)
{
    if (ctx == NULL || key == NULL || value == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_lookup: NULL context, key or value pointer");
    return tern_pmix_lookup(&ctx->pmix, key, value);
}

tern_status_t tern_unpublish(tern_context_t *ctx, const char *key)
{
    if (ctx == NULL || key == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_unpublish: NULL context or key");
    return tern_pmix_unpublish(&ctx->pmix, key);
}

tern_status_t tern_spawn(tern_context_t *ctx, const char *const argv[], int n,
                         const char *const env[], const char *wdir, char job[TERN_JOB_NAME_MAX])
{
    if (ctx == NULL || argv == NULL || argv[0] == NULL || argv[0][0] == '\0' || job == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_spawn: NULL context, program or job buffer");
    if (n < 1)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_spawn: %d ranks (at least 1)", n);
    job[0] = '\0';
    tern_app_t app = {.argv = argv, .n = n, .env = env, .wdir = wdir};
    return tern_pmix_spawn(&ctx->pmix, &app, 1, job, TERN_JOB_NAME_MAX);
}

tern_status_t tern_spawn_apps(tern_context_t *ctx, const tern_app_t apps[], int napps,
                              char job[TERN_JOB_NAME_MAX])
{
    if (ctx == NULL || apps == NULL || napps < 1 || job == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_spawn_apps: NULL context, apps or job buffer, or %d programs",
                          napps);
    for (int i = 0; i < napps; i++) {
        if (apps[i].argv == NULL || apps[i].argv[0] == NULL || apps[i].argv[0][0] == '\0')
            return tern_error(TERN_ERR_INVALID_PARAM, "tern_spawn_apps: program %d is NULL or "
                              "empty", i);
        if (apps[i].n < 1)
            return tern_error(TERN_ERR_INVALID_PARAM, "tern_spawn_apps: %d ranks of %s (at "
                              "least 1)", apps[i].n, apps[i].argv[0]);
    }
    job[0] = '\0';
    return tern_pmix_spawn(&ctx->pmix, apps, napps, job, TERN_JOB_NAME_MAX);
}
