/*
 * The netmod registry, and the typed defaults for ops a netmod does not
 * provide: each answers TERN_ERR_UNSUPPORTED (or, for a packet the netmod
 * cannot take, TERN_ERR_MALFORMED) naming the netmod and the operation,
 * after rdma-core's dummy_ops: a missing op is an error, never a crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/netmod.h"

/* ---- registry -------------------------------------------------------------
 * Filled by constructors while libtern loads, before any thread can call
 * into it, and read-only afterwards: no lock. */
#define TERN_NETMOD_REGISTRY_MAX 8

static const tern_netmod_desc_t *registry[TERN_NETMOD_REGISTRY_MAX];
static int registry_len;
static char registry_names[TERN_NETMOD_REGISTRY_MAX * 16];

void tern_netmod_register(const tern_netmod_desc_t *d)
{
    if (registry_len == TERN_NETMOD_REGISTRY_MAX || tern_netmod_find(d->name) != NULL) {
        tern_warn("netmod %s not registered (%s)", d->name,
                  registry_len == TERN_NETMOD_REGISTRY_MAX ? "registry full" : "duplicate name");
        return;
    }
    /* insertion by priority, highest first; ties by name for a fixed order */
    int i = registry_len++;
    while (i > 0 && (registry[i - 1]->priority < d->priority ||
                     (registry[i - 1]->priority == d->priority &&
                      strcmp(registry[i - 1]->name, d->name) > 0))) {
        registry[i] = registry[i - 1];
        i--;
    }
    registry[i] = d;
    size_t n = 0;
    registry_names[0] = '\0';
    for (int k = 0; k < registry_len && n < sizeof(registry_names); k++)
        n += (size_t)snprintf(registry_names + n, sizeof(registry_names) - n, "%s%s",
                              k ? " " : "", registry[k]->name);
}

int tern_netmod_count(void) { return registry_len; }

const tern_netmod_desc_t *tern_netmod_get(int i)
{
    return i >= 0 && i < registry_len ? registry[i] : NULL;
}

const tern_netmod_desc_t *tern_netmod_find(const char *name)
{
    for (int i = 0; i < registry_len; i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

const char *tern_netmod_names(void) { return registry_names; }

/* ---- typed defaults ------------------------------------------------------ */

static bool no_reachable(tern_context_t *ctx, int rank) { return false; }
static tern_status_t no_init(tern_worker_t *w, const void *config, void **shared, void **state)
{
    *state = NULL;
    return tern_error(TERN_ERR_UNSUPPORTED, "netmod has no init");
}
static tern_status_t no_finalize(void *state) { return TERN_OK; }
static tern_status_t no_vc_init(void *state, tern_vc_t *vc)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "netmod %s: vc_init not supported", vc->nm->name);
}
static tern_status_t no_wireup_done(void *state) { return TERN_OK; }
static tern_status_t no_vc_destroy(tern_vc_t *vc) { return TERN_OK; }
static tern_status_t no_vc_terminate(tern_vc_t *vc)
{
    vc->state = TERN_VC_CLOSED;
    return TERN_OK;
}
static int no_ordering(void *state) { return 0; } /* unknown: refused */
static tern_status_t no_isend_contig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                     size_t hdrlen, const void *data, size_t len)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "netmod %s: isend_contig not supported", vc->nm->name);
}
static tern_status_t no_istart(tern_vc_t *vc, const void *hdr, size_t hdrlen, const void *data,
                               size_t len, tern_request_t **sreq)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "netmod %s: istart_contig_msg not supported",
                      vc->nm->name);
}
static tern_status_t no_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                  size_t hdrlen)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "netmod %s: send_noncontig not supported",
                      vc->nm->name);
}
static void no_check_peers(void *state) {}
static void no_mem_dereg(void *state, void *memh) {}
static tern_status_t no_rkey_pack(void *state, void *memh, const void *addr, size_t len,
                                  void *buf, size_t *buflen)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "this netmod has no remote keys");
}
static tern_status_t no_rkey_unpack(tern_vc_t *vc, const void *buf, size_t buflen,
                                    tern_rkey_t *rkey)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "netmod %s: no remote keys (from rank %d)",
                      vc->nm->name, vc->rank);
}
static int no_wait_fd(void *state) { return -1; }
static int no_counters(void *state, tern_counter_t *out, int max) { return 0; }
static bool no_arm(void *state) { return true; }
static void no_disarm(void *state) {}

/* LMT slots beside start_recv / start_send: defaults for a netmod that has
 * the two but not these. */
static unsigned no_lmt_modes(void *state) { return 1u << TERN_LMT_COOP; }
static int no_lmt_choose(tern_vc_t *vc, size_t len) { return TERN_LMT_COOP; }
static tern_status_t no_lmt_initiate(tern_vc_t *vc, tern_request_t *sreq, int *mode, void *cookie,
                                     size_t *cookie_len)
{
    *cookie_len = 0;
    return TERN_OK;
}
static tern_status_t no_lmt_cookie(tern_vc_t *vc, tern_request_t *req, const void *cookie,
                                   size_t cookie_len)
{
    return tern_error(TERN_ERR_MALFORMED, "COOKIE packet from rank %d: netmod %s takes none",
                      vc->rank, vc->nm->name);
}
static tern_status_t no_lmt_done(tern_vc_t *vc, tern_request_t *req)
{
    return tern_error(TERN_ERR_MALFORMED, "DONE packet from rank %d: netmod %s expects none "
                      "for a %s request", vc->rank, vc->nm->name,
                      req->kind == TERN_REQ_SEND ? "send" : "receive");
}

/* Every slot, positionally on purpose: -Wmissing-field-initializers flags a
 * new slot that has no default here.  poll and the LMT pair stay NULL. */
static const tern_netmod_ops_t default_ops = {
    sizeof(tern_netmod_ops_t),
    NULL,               /* name */
    no_reachable,
    no_init,
    no_finalize,
    no_vc_init,
    no_wireup_done,
    no_vc_destroy,
    no_vc_terminate,
    no_ordering,
    no_isend_contig,
    no_istart,
    no_noncontig,
    NULL,               /* poll: never polled */
    no_lmt_modes,
    no_lmt_choose,
    no_lmt_initiate,
    NULL,               /* lmt_start_recv */
    NULL,               /* lmt_start_send */
    no_lmt_cookie,
    no_lmt_done,
    no_lmt_done,
    no_check_peers,
    no_wait_fd,
    no_arm,
    no_disarm,
    NULL,               /* mem_reg: the netmod registers nothing (tern_mem_get says so) */
    no_mem_dereg,
    no_rkey_pack,
    no_rkey_unpack,
    no_counters,
    NULL,               /* vc_init_remote: other jobs are not reached */
    NULL,               /* port_card: no ports */
    NULL,               /* vc_init_card */
};

/* The slots of ops, in declaration order, as generic pointers. */
#define NM_SLOTS(X)                                                                      \
    X(reachable) X(init) X(finalize) X(vc_init) X(wireup_done) X(vc_destroy)             \
    X(vc_terminate) X(get_ordering) X(isend_contig) X(istart_contig_msg)                 \
    X(send_noncontig) X(poll) X(lmt_modes) X(lmt_choose) X(lmt_initiate) X(lmt_start_recv) X(lmt_start_send)        \
    X(lmt_handle_cookie) X(lmt_done_send) X(lmt_done_recv) X(check_peers) X(wait_fd)      \
    X(arm) X(disarm) X(mem_dereg) X(rkey_pack) X(rkey_unpack) X(counters)

tern_status_t tern_netmod_instantiate(tern_netmod_inst_t *inst, const tern_netmod_desc_t *desc,
                                      const char *name, const tern_netmod_ops_t *ops)
{
    memset(inst, 0, sizeof(*inst));
    inst->desc = desc;
    inst->name = name;
    /* An ops table from a newer engine has slots we cannot honour; an older
     * one is copied as far as it goes and the rest defaulted. */
    if (ops->size > sizeof(tern_netmod_ops_t) || ops->size < offsetof(tern_netmod_ops_t, init))
        return tern_error(TERN_ERR_UNSUPPORTED,
                          "netmod %s: ops table of %zu bytes, this engine knows %zu", name,
                          ops->size, sizeof(tern_netmod_ops_t));
    memcpy(&inst->ops, ops, ops->size);
    memset((char *)&inst->ops + ops->size, 0, sizeof(tern_netmod_ops_t) - ops->size);
    tern_netmod_ops_t *o = &inst->ops;
    o->size = sizeof(*o);
    o->name = name;

    bool any_lmt = o->lmt_modes || o->lmt_choose || o->lmt_initiate || o->lmt_start_recv || o->lmt_start_send ||
                   o->lmt_handle_cookie || o->lmt_done_send || o->lmt_done_recv;
    if (any_lmt && (o->lmt_start_recv == NULL || o->lmt_start_send == NULL))
        return tern_error(TERN_ERR_UNSUPPORTED,
                          "netmod %s: half an LMT set (lmt_start_recv %s, lmt_start_send %s); "
                          "give both or no LMT op at all", name,
                          o->lmt_start_recv ? "given" : "missing",
                          o->lmt_start_send ? "given" : "missing");
    inst->has_lmt = any_lmt;
#define FILL(slot)                                                                       \
    if (o->slot == NULL)                                                                 \
        o->slot = default_ops.slot;
    NM_SLOTS(FILL)
#undef FILL
    if (!any_lmt) /* the null mode: the engine checks has_lmt, no LMT slot is called */
        o->lmt_modes = NULL, o->lmt_choose = NULL, o->lmt_initiate = NULL,
        o->lmt_handle_cookie = NULL, o->lmt_done_send = NULL, o->lmt_done_recv = NULL;

    if (desc != NULL && desc->config != NULL) {
        inst->config = calloc(1, desc->config->struct_size);
        if (inst->config == NULL)
            return tern_error(TERN_ERR_NO_MEMORY, "netmod %s: configuration", name);
        return tern_config_load_table(desc->config, inst->config, NULL);
    }
    return TERN_OK;
}

void tern_netmod_inst_release(tern_netmod_inst_t *inst)
{
    free(inst->config);
    inst->config = NULL;
}
