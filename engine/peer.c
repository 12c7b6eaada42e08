/*
 * Addresses as the engine uses them (docs/addresses.md): a worker's own,
 * built from its netmods' cards; the job's ranks' during the wire-up (from
 * PMIx, or from tern_peer_insert without a launcher); and other jobs'
 * (tern_connect, ports, tern_peer_insert of another job's address), whose
 * VC goes to the best netmod both sides have that reaches other jobs.
 * Netmods never see an address: only their own card in it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/address.h"
#include "engine/engine_internal.h"
#include "engine/netmod.h"

static_assert(TERN_ADDR_MAX <= TERN_ADDRESS_MAX, "tern_worker_address's bound holds every address");

/* A peer's address as kept for the wire-up: the decoded view points into
 * the bytes that follow it. */
struct tern_peer_addr {
    size_t len;
    tern_addr_t a;
    uint8_t bytes[];
};

/* ---- our own ------------------------------------------------------------- */

static bool takes_ports(const tern_netmod_inst_t *n)
{
    return n->initialized && n->conn != NULL &&
           (n->conn->port_unable == NULL || n->conn->port_unable(n->state) == NULL);
}

tern_status_t tern_worker_make_address(tern_worker_t *w, bool port_only, void **out, size_t *len)
{
    tern_context_t *ctx = w->ctx;
    tern_addr_t a;
    memset(&a, 0, sizeof(a));
    a.job = ctx->job_hash;
    a.rank = ctx->rank;
    a.worker = w->index;
    a.host = *tern_host_self();
    a.pid = (int)getpid();
    uint8_t *cards = malloc((size_t)TERN_ADDR_CARDS_MAX * TERN_ADDR_CARD_MAX);
    if (cards == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "worker %d: its address", w->index);
    tern_status_t st = TERN_OK;
    for (int i = 1; i < w->num_netmods && st == TERN_OK; i++) { /* [0] is self: no card */
        tern_netmod_inst_t *n = &w->netmods[i];
        if (!n->initialized || (port_only && !takes_ports(n)))
            continue;
        if (a.ncards == TERN_ADDR_CARDS_MAX) {
            st = tern_error(TERN_ERR_UNSUPPORTED,
                            "worker %d: more than %d netmods for one "
                            "address",
                            w->index, TERN_ADDR_CARDS_MAX);
            break;
        }
        uint8_t *c = cards + (size_t)a.ncards * TERN_ADDR_CARD_MAX;
        size_t clen = TERN_ADDR_CARD_MAX;
        st = n->core.card(n->state, c, &clen);
        if (st != TERN_OK) {
            st = tern_error_wrap(st, "worker %d: the %s card", w->index, n->name);
            break;
        }
        snprintf(a.cards[a.ncards].name, sizeof(a.cards[a.ncards].name), "%s", n->name);
        a.cards[a.ncards].card = c;
        a.cards[a.ncards].len = clen;
        a.ncards++;
    }
    size_t need = 0;
    void *buf = NULL;
    if (st == TERN_OK && (st = tern_addr_encode(&a, NULL, 0, &need)) == TERN_ERR_TRUNCATED) {
        buf = malloc(need);
        st = buf != NULL ? tern_addr_encode(&a, buf, need, &need)
                         : tern_error(TERN_ERR_NO_MEMORY, "worker %d: its address", w->index);
    }
    free(cards);
    if (st != TERN_OK) {
        free(buf);
        return st;
    }
    if (out != NULL) {
        *out = buf;
        *len = need;
    } else {
        free(w->addr);
        w->addr = buf;
        w->addr_len = need;
    }
    return TERN_OK;
}

tern_status_t tern_worker_address(tern_worker_t *w, void *buf, size_t *len)
{
    if (w == NULL || len == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_worker_address: NULL worker or length");
    if (w->addr == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_worker_address: worker %d has no "
                          "address (its context failed to start)",
                          w->index);
    if (buf == NULL || *len < w->addr_len) {
        tern_status_t st = tern_error(TERN_ERR_TRUNCATED,
                                      "tern_worker_address: %zu bytes of "
                                      "room, worker %d's address has %zu",
                                      buf ? *len : 0, w->index, w->addr_len);
        *len = w->addr_len;
        return st;
    }
    memcpy(buf, w->addr, w->addr_len);
    *len = w->addr_len;
    return TERN_OK;
}

/* ---- the job's ranks, during the wire-up ------------------------------------ */

tern_status_t tern_peer_addr_copy(const void *buf, size_t len, const char *what,
                                  struct tern_peer_addr **out)
{
    struct tern_peer_addr *p = malloc(sizeof(*p) + len);
    if (p == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "%s: a copy of %zu bytes", what, len);
    if (len > 0) /* buf may be NULL for an empty address: decode refuses it */
        memcpy(p->bytes, buf, len);
    p->len = len;
    tern_status_t st = tern_addr_decode(p->bytes, len, what, &p->a); /* the view into our copy */
    if (st != TERN_OK) {
        free(p);
        return st;
    }
    *out = p;
    return TERN_OK;
}

const tern_addr_t *tern_peer_addr_of(const struct tern_peer_addr *p)
{
    return &p->a;
}

tern_status_t tern_wire_keep(tern_worker_t *w, struct tern_peer_addr *p, int rank, const char *what)
{
    tern_context_t *ctx = w->ctx;
    const tern_addr_t *a = &p->a;
    tern_status_t st = TERN_OK;
    if (a->job != ctx->job_hash)
        st = tern_error(TERN_ERR_INVALID_PARAM,
                        "%s: an address of job %08x, not of this "
                        "job (%s, %08x)",
                        what, a->job, ctx->pmix.nspace, ctx->job_hash);
    else if (rank >= 0 && a->rank != rank)
        st = tern_error(TERN_ERR_MALFORMED, "%s: rank %d's address names rank %d", what, rank,
                        a->rank);
    else if (a->worker != w->index)
        st = tern_error(TERN_ERR_INVALID_PARAM,
                        "%s: the address of worker %d given for "
                        "worker %d",
                        what, a->worker, w->index);
    else if (a->rank == ctx->rank) { /* ours: nothing to keep, if it is ours */
        if (a->pid != (int)getpid() || !tern_host_same(&a->host, tern_host_self()))
            st = tern_error(TERN_ERR_INVALID_PARAM,
                            "%s: an address of rank %d (this "
                            "process's) from another process (pid %d)",
                            what, a->rank, a->pid);
    } else if (w->wire == NULL && /* a->rank is one of ours: it is rank, or the caller's */
               (w->wire = calloc((size_t)ctx->size, sizeof(*w->wire))) == NULL) {
        st = tern_error(TERN_ERR_NO_MEMORY, "addresses of %d ranks", ctx->size);
    } else if (w->wire[a->rank] != NULL) {
        const struct tern_peer_addr *old = w->wire[a->rank];
        if (old->len != p->len || memcmp(old->bytes, p->bytes, p->len) != 0)
            st = tern_error(TERN_ERR_INVALID_PARAM,
                            "%s: another address of rank %d (worker %d) "
                            "than the one inserted before (pid %d, now pid %d)",
                            what, a->rank, a->worker, old->a.pid, a->pid);
    } else {
        w->wire[a->rank] = p;
        w->wire_have++;
        return TERN_OK;
    }
    free(p); /* refused, ours or the same again: not kept */
    return st;
}

tern_status_t tern_wire_add(tern_worker_t *w, const void *buf, size_t len, int rank,
                            const char *what)
{
    struct tern_peer_addr *p = NULL;
    tern_status_t st = tern_peer_addr_copy(buf, len, what, &p);
    return st != TERN_OK ? st : tern_wire_keep(w, p, rank, what);
}

const void *tern_wire_card(tern_worker_t *w, int rank, const char *netmod, size_t *len)
{
    if (w->wire == NULL || rank < 0 || rank >= w->ctx->size || w->wire[rank] == NULL)
        return NULL;
    return tern_addr_card(&w->wire[rank]->a, netmod, len);
}

void tern_wire_names(tern_worker_t *w, int rank, char *out, size_t len)
{
    out[0] = '\0';
    if (w->wire != NULL && rank >= 0 && rank < w->ctx->size && w->wire[rank] != NULL)
        tern_addr_names(&w->wire[rank]->a, out, len);
}

const tern_host_id_t *tern_wire_host(tern_worker_t *w, int rank)
{
    if (rank == w->ctx->rank)
        return tern_host_self();
    if (w->wire == NULL || rank < 0 || rank >= w->ctx->size || w->wire[rank] == NULL)
        return NULL;
    return &w->wire[rank]->a.host;
}

tern_status_t tern_wire_init_vcs(tern_worker_t *w)
{
    tern_context_t *ctx = w->ctx;
    for (int r = 0; r < ctx->size; r++) {
        tern_vc_t *vc = &w->vcs[r];
        tern_netmod_inst_t *n = vc->nm;
        size_t clen = 0;
        const void *card = NULL;
        if (r != ctx->rank) {
            card = tern_wire_card(w, r, n->name, &clen);
            if (card == NULL) {
                char has[128] = "no address";
                if (w->wire != NULL && w->wire[r] != NULL)
                    tern_addr_names(&w->wire[r]->a, has, sizeof(has));
                return tern_error(TERN_ERR_UNREACHABLE,
                                  "rank %d's address (worker %d) has no "
                                  "%s card (it has: %s): do the ranks allow different netmods "
                                  "(TERN_NETMODS)?",
                                  r, w->index, n->name, has);
            }
        }
        tern_status_t st = n->core.vc_init(n->state, vc, card, clen);
        if (st != TERN_OK)
            return st;
        if (r != ctx->rank)
            tern_cma_vc_host(vc, tern_wire_host(w, r)); /* the same-host copy's scope */
    }
    return TERN_OK;
}

void tern_wire_free(tern_worker_t *w)
{
    for (int r = 0; w->wire != NULL && r < w->ctx->size; r++)
        free(w->wire[r]);
    free(w->wire);
    w->wire = NULL;
    w->wire_have = 0;
}

/* ---- other jobs --------------------------------------------------------------- */

void tern_worker_poll_netmod(tern_worker_t *w, tern_netmod_inst_t *n)
{
    if (n->core.poll == NULL)
        return;
    for (int i = 0; i < w->num_pollers; i++)
        if (w->pollers[i] == n)
            return;
    w->pollers[w->num_pollers++] = n;
}

tern_status_t tern_netmods_ensure_conn(tern_worker_t *w, bool port_only, int *count)
{
    int nreg = tern_netmod_count();
    bool allowed[TERN_MAX_NETMODS + 1];
    tern_status_t st = tern_allowed_netmods(w->ctx->cfg.netmods, allowed);
    *count = 0;
    for (int i = 0; st == TERN_OK && i < nreg; i++) {
        const tern_netmod_desc_t *d = tern_netmod_get(i);
        if (!allowed[i] || d->conn == NULL || (d->unavailable != NULL && d->unavailable() != NULL))
            continue;
        st = tern_netmod_ensure(w, 1 + i);
        if (st == TERN_OK && (!port_only || takes_ports(&w->netmods[1 + i])))
            ++*count;
    }
    return st;
}

tern_status_t tern_remote_vc_init(tern_worker_t *w, tern_vc_t *vc, const tern_addr_t *a,
                                  bool port_only)
{
    char why[512] = "", ours[128] = "";
    size_t nw = 0, no = 0;
    for (int i = 1; i < w->num_netmods; i++) {
        tern_netmod_inst_t *n = &w->netmods[i];
        if (!n->initialized || n->conn == NULL || (port_only && !takes_ports(n)))
            continue;
        if (no < sizeof(ours))
            no += (size_t)snprintf(ours + no, sizeof(ours) - no, "%s%s", no ? " " : "", n->name);
        size_t clen = 0;
        const void *card = tern_addr_card(a, n->name, &clen);
        if (card == NULL)
            continue;
        vc->nm = n;
        vc->nm_state = n->state;
        tern_status_t st = n->conn->vc_init_remote(n->state, vc, a->job, a->rank, card, clen);
        if (st == TERN_OK) {
            tern_cma_vc_host(vc, &a->host); /* the same-host copy's scope */
            tern_worker_poll_netmod(w, n);
            return TERN_OK;
        }
        vc->nm = NULL;
        vc->nm_state = NULL;
        if (st != TERN_ERR_UNREACHABLE)
            return st;
        if (nw < sizeof(why)) /* both sides come to the same: try the next */
            nw += (size_t)snprintf(why + nw, sizeof(why) - nw, "; %s: %s", n->name,
                                   tern_last_error());
    }
    char theirs[128];
    tern_addr_names(a, theirs, sizeof(theirs));
    return tern_error(TERN_ERR_UNREACHABLE,
                      "no netmod reaches rank %d of job %08x (worker %d): "
                      "its address has cards of %s; this process has %s%s%s%s%s",
                      a->rank, a->job, a->worker, theirs, no ? ours : "none",
                      port_only ? " that take ports" : " that reach other jobs",
                      w->ctx->cfg.netmods[0] ? ", TERN_NETMODS=" : "", w->ctx->cfg.netmods, why);
}

/* tern_peer_insert of another job's address: a one-rank peer of its own per
 * (job, rank), its VC on the worker the address names (the others' wait
 * for theirs).  A refused address leaves nothing behind: a new peer is
 * published only once its VC is made. */
tern_status_t tern_insert_other(tern_context_t *ctx, const tern_addr_t *a, int *peer)
{
    if (a->worker >= ctx->num_workers)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_peer_insert: an address of worker %d; "
                          "this context has %d (TERN_NUM_WORKERS)",
                          a->worker, ctx->num_workers);
    tern_job_t *j = NULL;
    int njobs = atomic_load_explicit(&ctx->njobs, memory_order_relaxed);
    for (int i = 0; i < njobs && j == NULL; i++)
        if (ctx->jobs[i]->inserted && ctx->jobs[i]->connected && ctx->jobs[i]->addr_job == a->job &&
            ctx->jobs[i]->addr_rank == a->rank)
            j = ctx->jobs[i];
    bool fresh = j == NULL;
    if (fresh) {
        char name[64];
        snprintf(name, sizeof(name), "peer:%08x:%d", a->job, a->rank);
        if (njobs == TERN_MAX_JOBS)
            return tern_error(TERN_ERR_NO_RESOURCE,
                              "tern_peer_insert: %d jobs and peers "
                              "connected already",
                              TERN_MAX_JOBS);
        if ((j = tern_job_new(ctx, name, 1)) == NULL)
            return tern_error(TERN_ERR_NO_MEMORY, "tern_peer_insert: a VC");
        j->inserted = true;
        j->addr_job = a->job;
        j->addr_rank = a->rank;
    }
    tern_worker_t *w = &ctx->workers[a->worker];
    tern_vc_t *vc = &j->vcs[a->worker][0];
    if (vc->nm != NULL) { /* the same peer's worker again */
        *peer = j->base;
        return TERN_OK;
    }
    int n = 0;
    tern_status_t st = tern_netmods_ensure_conn(w, false, &n);
    if (st == TERN_OK) {
        tern_vc_rewire(vc);
        st = tern_remote_vc_init(w, vc, a, false);
    }
    if (st == TERN_OK && fresh)
        st = tern_job_publish(ctx, j);
    if (st != TERN_OK) {
        char why[512];
        snprintf(why, sizeof(why), "%s", tern_last_error());
        if (fresh) {
            tern_job_close_vcs(j); /* the netmod forgets it */
            tern_job_free(j);
        } else {
            tern_vc_unwired(vc, why);
        }
        return tern_error(st, "%s", why);
    }
    *peer = j->base;
    return TERN_OK;
}

void *tern_remote_table_room(void *table, int n, int *cap, size_t elem)
{
    if (n < *cap)
        return table;
    int grown = *cap ? 2 * *cap : 16;
    void *t = realloc(table, (size_t)grown * elem);
    if (t != NULL)
        *cap = grown;
    return t;
}
