/*
 * Wire-up without a launcher (tern_init_ex with TERN_WIREUP_ADDRESS) and
 * tern_peer_insert.
 *
 * The caller says which rank of how many this process is and names the
 * job.  tern_init_ex initialises every allowed netmod this process can use
 * (the peers are unknown: any may be needed) and builds each worker's
 * address.  The caller hands the addresses around by any means and inserts
 * every rank's, for every worker.  The insert that completes the set does
 * what the PMIx wire-up's second phase does (context.c):
 *   the node's ranks, from the addresses' host identities (engine/address.h)
 *   -> each peer's netmod: the highest-priority allowed one that reaches it
 *   and whose card its address has -> vc_init with that card -> the
 *   netmods no VC uses are polled no more -> a barrier over the new VCs
 *   (engine/barrier.c: every rank has its VCs before anyone goes on, which
 *   is what shm needs before the segment's name can go) -> wireup_done.
 * An address of another job gives a peer of its own (one rank, ids after
 * the job's ranks), whose VC goes over the best netmod both addresses
 * have that reaches other jobs (engine/peer.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/address.h"
#include "engine/engine_internal.h"
#include "engine/netmod.h"

/* ---- tern_init_ex's parameters ------------------------------------------- */

bool tern_init_params_by_address(const tern_init_params_t *p)
{
    return p != NULL && (p->fields & TERN_INIT_F_WIREUP) && p->wireup == TERN_WIREUP_ADDRESS;
}

tern_status_t tern_address_context(tern_context_t *ctx, const tern_init_params_t *p)
{
    /* PMIx is not used: the pmix layer's singleton mode, in which every
     * tern_pmix_* call that needs a launcher refuses and the fences
     * succeed at once (pmix/client/client.h); its job fields are ours. */
    tern_pmix_t *j = &ctx->pmix;
    memset(j, 0, sizeof(*j));
    j->singleton = true;
    snprintf(j->nspace, sizeof(j->nspace), "%s", p->job);
    j->rank = (uint32_t)p->rank;
    j->size = (uint32_t)p->size;
    j->local_rank = UINT32_MAX; /* the node's ranks: once the addresses are in */
    ctx->wireup = TERN_WIREUP_ADDRESS;
    ctx->wired = TERN_INPROGRESS;
    return TERN_OK;
}

/* ---- tern_init_ex: netmods up, addresses ready ------------------------------- */

tern_status_t tern_address_setup(tern_context_t *ctx)
{
    if (tern_netmod_count() > TERN_MAX_NETMODS)
        return tern_error(TERN_ERR_UNSUPPORTED, "more than %d netmods registered",
                          TERN_MAX_NETMODS);
    tern_status_t st = TERN_OK;
    for (int k = 0; st == TERN_OK && k < ctx->num_workers; k++) {
        tern_worker_t *w = &ctx->workers[k];
        st = tern_setup_worker(w, NULL);
        if (st == TERN_OK)
            st = tern_worker_bind_events(w);
        if (st == TERN_OK)
            st = tern_worker_make_address(w, false, NULL, NULL);
    }
    if (st == TERN_OK && ctx->size == 1) /* nobody to wait for */
        st = tern_address_wireup(ctx);
    return st;
}

/* ---- the insert that completes the job ---------------------------------------- */

/* The node's ranks: those whose address names this host (engine/address.h). */
static tern_status_t find_node(tern_context_t *ctx)
{
    tern_worker_t *w0 = &ctx->workers[0];
    int *local = calloc((size_t)ctx->size, sizeof(*local));
    if (local == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "the node's ranks");
    uint32_t n = 0, me = 0;
    for (int r = 0; r < ctx->size; r++) {
        const tern_host_id_t *h = tern_wire_host(w0, r);
        if (r == ctx->rank || (h != NULL && tern_host_same(h, tern_host_self()))) {
            if (r == ctx->rank)
                me = n;
            local[n++] = r;
        }
    }
    free(ctx->pmix.local_peers);
    ctx->pmix.local_peers = local;
    ctx->pmix.local_size = n;
    ctx->pmix.local_rank = me;
    return TERN_OK;
}

/* Poll only the netmods some VC uses: the others, initialised for peers
 * that never came, would cost every progress call (tcp's socket events).
 * One that later carries another job's VC is polled again (peer.c). */
static void trim_pollers(tern_worker_t *w)
{
    int n = 0;
    for (int i = 0; i < w->num_pollers; i++) {
        bool used = false;
        for (int r = 0; r < w->ctx->size && !used; r++)
            used = w->vcs[r].nm == w->pollers[i];
        if (used)
            w->pollers[n++] = w->pollers[i];
    }
    w->num_pollers = n;
}

static void wire_failed(tern_context_t *ctx, tern_status_t st)
{
    char why[512];
    snprintf(why, sizeof(why), "%s", tern_last_error());
    free(ctx->wire_msg);
    ctx->wire_msg = strdup(why);
    ctx->wired = st;
    for (int k = 0; k < ctx->num_workers; k++)
        for (int r = 0; r < ctx->size; r++) {
            tern_vc_t *vc = &ctx->workers[k].vcs[r];
            if (r == ctx->rank)
                continue;
            if (vc->nm != NULL && vc->state == TERN_VC_ACTIVE)
                tern_vc_fail(vc, st, why);
            else if (vc->nm == NULL) /* never wired: its reason is the wire-up's */
                tern_vc_unwired(vc, why);
        }
    tern_error(st, "%s", why);
}

tern_status_t tern_address_wireup(tern_context_t *ctx)
{
    tern_status_t st = find_node(ctx);
    int *pick = calloc((size_t)ctx->size, sizeof(*pick));
    if (st == TERN_OK && pick == NULL)
        st = tern_error(TERN_ERR_NO_MEMORY, "netmod choice for %d ranks", ctx->size);
    if (st == TERN_OK)
        st = tern_choose_netmods(ctx, ctx->workers[0].netmods, pick, &ctx->workers[0]);
    for (int k = 0; st == TERN_OK && k < ctx->num_workers; k++) {
        tern_worker_t *w = &ctx->workers[k];
        for (int r = 0; r < ctx->size; r++) {
            tern_vc_t *vc = &w->vcs[r];
            vc->nm = &w->netmods[pick[r]];
            vc->nm_state = vc->nm->state;
            tern_vc_rewire(vc);
        }
        st = tern_wire_init_vcs(w);
        trim_pollers(w);
    }
    free(pick);
    if (st == TERN_OK)
        st = tern_engine_barrier(ctx, true);
    for (int k = 0; k < ctx->num_workers; k++)
        tern_wire_free(&ctx->workers[k]);
    if (st == TERN_OK)
        st = tern_wireup_done(ctx);
    if (st != TERN_OK) {
        wire_failed(ctx, st);
        return st;
    }
    ctx->wired = TERN_OK;
    return TERN_OK;
}

/* ---- tern_peer_insert ----------------------------------------------------------- */

static bool job_complete(const tern_context_t *ctx)
{
    for (int k = 0; k < ctx->num_workers; k++)
        if (ctx->workers[k].wire_have < ctx->size - 1)
            return false;
    return true;
}

/* p: the address, copied and decoded (always taken) */
static tern_status_t insert_own(tern_context_t *ctx, struct tern_peer_addr *p, int *peer)
{
    const tern_addr_t *a = tern_peer_addr_of(p);
    int rank = a->rank, worker = a->worker;
    tern_status_t st = TERN_OK;
    if (rank >= ctx->size || worker >= ctx->num_workers) {
        st = tern_error(TERN_ERR_INVALID_PARAM,
                        "tern_peer_insert: an address of rank %d, "
                        "worker %d of this job; it has ranks 0..%d and %d workers "
                        "(TERN_NUM_WORKERS is the same on every rank)",
                        rank, worker, ctx->size - 1, ctx->num_workers);
    } else if (ctx->wired == TERN_INPROGRESS) {
        st = tern_wire_keep(&ctx->workers[worker], p, -1, "tern_peer_insert");
        p = NULL;
        if (st == TERN_OK && job_complete(ctx))
            st = tern_address_wireup(ctx);
    } else if (ctx->wired != TERN_OK) {
        st = tern_error(ctx->wired, "tern_peer_insert: the job's wire-up failed: %s",
                        ctx->wire_msg != NULL ? ctx->wire_msg : "");
    }
    free(p); /* wired already (with a launcher, or complete): nothing to keep */
    if (st == TERN_OK)
        *peer = rank;
    return st;
}

tern_status_t tern_peer_insert(tern_context_t *ctx, const void *addr, size_t len, int *peer)
{
    if (ctx == NULL || addr == NULL || peer == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_peer_insert: NULL context, address or "
                                                  "peer id pointer");
    struct tern_peer_addr *p = NULL;
    tern_status_t st = tern_peer_addr_copy(addr, len, "tern_peer_insert", &p);
    if (st != TERN_OK)
        return st;
    if (tern_peer_addr_of(p)->job == ctx->job_hash)
        return insert_own(ctx, p, peer);
    st = tern_insert_other(ctx, tern_peer_addr_of(p), peer); /* the netmods copy the card */
    free(p);
    return st;
}
