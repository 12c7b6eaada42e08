/*
 * The netmod registry, the check of a netmod's capability tables, and the
 * typed no-ops of the core table's optional slots.
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

tern_status_t tern_netmod_register(const tern_netmod_desc_t *d)
{
    tern_status_t st = tern_netmod_check(d);
    if (st == TERN_OK && (registry_len == TERN_NETMOD_REGISTRY_MAX || tern_netmod_find(d->name)))
        st = tern_error(TERN_ERR_UNSUPPORTED, "netmod %s: %s", d->name,
                        registry_len == TERN_NETMOD_REGISTRY_MAX ? "the registry is full"
                                                                 : "a netmod has that name");
    if (st != TERN_OK) {
        tern_warn("netmod not registered: %s", tern_last_error());
        return st;
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
    return TERN_OK;
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

tern_status_t tern_vc_send_refused(const tern_vc_t *vc)
{
    return tern_error(vc->fail_status, "%s send to rank %d: connection failed", vc->nm->name,
                      vc->rank);
}

/* ---- the check ------------------------------------------------------------
 * Each table's slots as (name, given) pairs, so the message names the
 * missing one.  A slot added to a table must be added here too. */

typedef struct slot {
    const char *name;
    bool given;
} slot_t;

#define SLOT(t, s) {#s, (t)->s != NULL}

/* The first slot of slots[0 .. n) not given, or NULL. */
static const char *first_missing(const slot_t *slots, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!slots[i].given)
            return slots[i].name;
    return NULL;
}

static tern_status_t missing(const char *nm, const char *table, const char *slot,
                             const char *why)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "netmod %s: %s table without %s (%s)", nm, table,
                      slot, why);
}

tern_status_t tern_netmod_check(const tern_netmod_desc_t *d)
{
    const char *nm = d->name != NULL ? d->name : "(unnamed)";
    if (d->abi != TERN_NETMOD_ABI)
        return tern_error(TERN_ERR_UNSUPPORTED,
                          "netmod %s: built for netmod ABI %d, this engine has ABI %d", nm,
                          d->abi, TERN_NETMOD_ABI);
    if (d->name == NULL || d->name[0] == '\0')
        return tern_error(TERN_ERR_UNSUPPORTED, "a netmod descriptor has no name");
    if (d->core == NULL)
        return tern_error(TERN_ERR_UNSUPPORTED, "netmod %s: no core table (it is required)", nm);
    const tern_nm_core_ops_t *c = d->core;
    const slot_t core[] = {SLOT(c, reachable),     SLOT(c, init),
                           SLOT(c, finalize),      SLOT(c, card),
                           SLOT(c, vc_init),
                           SLOT(c, vc_destroy),    SLOT(c, vc_terminate),
                           SLOT(c, istart_contig_msg), SLOT(c, send_noncontig)};
    const char *m = first_missing(core, sizeof(core) / sizeof(core[0]));
    if (m != NULL)
        return missing(nm, "core", m, "a required slot");
    if (d->lmt != NULL) {
        const tern_nm_lmt_ops_t *l = d->lmt;
        const slot_t lmt[] = {SLOT(l, modes),      SLOT(l, choose),        SLOT(l, initiate),
                              SLOT(l, start_recv), SLOT(l, start_send),    SLOT(l, handle_cookie),
                              SLOT(l, done_send),  SLOT(l, done_recv)};
        if ((m = first_missing(lmt, sizeof(lmt) / sizeof(lmt[0]))) != NULL)
            return missing(nm, "lmt", m, "an LMT table has every slot; without one the "
                                         "netmod gets the null LMT mode");
    }
    if (d->wait != NULL) {
        const tern_nm_wait_ops_t *w = d->wait;
        const slot_t wait[] = {SLOT(w, wait_fd), SLOT(w, arm), SLOT(w, disarm)};
        if ((m = first_missing(wait, sizeof(wait) / sizeof(wait[0]))) != NULL)
            return missing(nm, "wait", m, "a wait table has every slot");
    }
    if (d->mem != NULL) {
        const tern_nm_mem_ops_t *r = d->mem;
        const slot_t mem[] = {SLOT(r, mem_reg), SLOT(r, mem_dereg)};
        if ((m = first_missing(mem, sizeof(mem) / sizeof(mem[0]))) != NULL)
            return missing(nm, "mem", m, "a required slot");
        if ((r->rkey_pack == NULL) != (r->rkey_unpack == NULL))
            return missing(nm, "mem", r->rkey_pack == NULL ? "rkey_pack" : "rkey_unpack",
                           "remote keys are packed and unpacked, or neither");
    }
    if (d->rma != NULL) {
        const tern_nm_rma_ops_t *k = d->rma;
        const slot_t rma[] = {SLOT(k, reg), SLOT(k, dereg), SLOT(k, pack),
                              SLOT(k, put), SLOT(k, get),   SLOT(k, flush)};
        if ((m = first_missing(rma, sizeof(rma) / sizeof(rma[0]))) != NULL)
            return missing(nm, "rma", m, "an rma table has every slot");
        if ((k->amo == NULL) != (k->amo_local == NULL))
            return missing(nm, "rma", k->amo == NULL ? "amo" : "amo_local",
                           "device atomics are amo and amo_local, or neither");
    }
    if (d->conn != NULL) {
        const tern_nm_conn_ops_t *k = d->conn;
        const slot_t conn[] = {SLOT(k, vc_init_remote)};
        if ((m = first_missing(conn, sizeof(conn) / sizeof(conn[0]))) != NULL)
            return missing(nm, "conn", m, "a required slot");
    }
    return TERN_OK;
}

/* ---- the core table's optional slots ---------------------------------------
 * Typed no-ops (never casts), so the engine calls them without a test;
 * poll stays NULL (the engine polls only the instances that have one). */

static tern_status_t no_wireup_done(void *state)
{
    (void)state;
    return TERN_OK;
}
static void no_check_peers(void *state) { (void)state; }
static int no_counters(void *state, tern_counter_t *out, int max)
{
    (void)state, (void)out, (void)max;
    return 0;
}

tern_status_t tern_netmod_instantiate(tern_netmod_inst_t *inst, const tern_netmod_desc_t *desc)
{
    memset(inst, 0, sizeof(*inst));
    tern_status_t st = tern_netmod_check(desc);
    if (st != TERN_OK)
        return st;
    inst->desc = desc;
    inst->name = desc->name;
    inst->core = *desc->core;
    if (inst->core.wireup_done == NULL)
        inst->core.wireup_done = no_wireup_done;
    if (inst->core.check_peers == NULL)
        inst->core.check_peers = no_check_peers;
    if (inst->core.counters == NULL)
        inst->core.counters = no_counters;
    inst->lmt = desc->lmt;
    inst->wait = desc->wait;
    inst->mem = desc->mem;
    inst->rma = desc->rma;
    inst->conn = desc->conn;
    if (desc->config != NULL) {
        inst->config = calloc(1, desc->config->struct_size);
        if (inst->config == NULL)
            return tern_error(TERN_ERR_NO_MEMORY, "netmod %s: configuration", desc->name);
        return tern_config_load_table(desc->config, inst->config, NULL);
    }
    return TERN_OK;
}

void tern_netmod_inst_release(tern_netmod_inst_t *inst)
{
    free(inst->config);
    inst->config = NULL;
}
