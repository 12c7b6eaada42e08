/* Configuration tables: the engine's own, and the loader every table uses. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/cma.h"
#include "engine/log.h"
#include "engine/netmod.h"

#define KiB 1024ull
#define MiB (1024ull * 1024ull)

static const char *const wait_names[] = {"spin", "yield", "block"};

const char *tern_wait_mode_name(uint64_t mode)
{
    return mode <= TERN_WAIT_BLOCK ? wait_names[mode] : "?";
}
/* enum tern_lmt_mode (engine/pkt.h) */
static const char *const lmt_names[] = {"auto", "null", "coop", "get", "put"};

/* TERN_NETMODS is checked against the registry when tern_init selects the
 * netmods (engine/context.c): the table only bounds its length. */
/* TERN_NETMODS: names of registered netmods (or self), comma separated. */
static tern_status_t check_netmods(const char *env, const char *v)
{
    char buf[TERN_CFG_STR_MAX];
    snprintf(buf, sizeof(buf), "%s", v);
    for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok != NULL;
         tok = strtok_r(NULL, ", ", &save))
        if (strcmp(tok, "self") != 0 && tern_netmod_find(tok) == NULL)
            return tern_error(TERN_ERR_INVALID_PARAM,
                              "%s=\"%s\": no netmod \"%s\" in this build (built: %s)", env, v,
                              tok, tern_netmod_names());
    return TERN_OK;
}

static const char *const cma_names[] = {"off", "outside", "all"};

static tern_status_t check_cma_threshold(const char *env, const char *v)
{
    uint64_t n;
    return tern_cma_parse_size(env, v, "auto", &n);
}

static tern_status_t check_fault_cma(const char *env, const char *v)
{
    uint64_t n;
    return tern_cma_parse_size(env, v, "off", &n);
}

#define T tern_config_t
static const tern_config_entry_t engine_entries[] = {
    TERN_CFG_ENTRY_UINT("TERN_EAGER_LIMIT", T, eager_limit, 16 * KiB, 0, 1 * MiB,
                        "largest payload sent eagerly; larger messages use rendezvous (LMT)"),
    TERN_CFG_ENTRY_ENUM("TERN_WAIT_MODE", T, wait_mode, TERN_WAIT_YIELD, wait_names, 3,
                        "how an idle wait waits: spin, yield (spin then sched_yield), block "
                        "(spin then sleep on every netmod's event source at once); unset on an "
                        "oversubscribed node: block"),
    TERN_CFG_ENTRY_UINT("TERN_SPIN_COUNT", T, spin_count, 2000, 1, 100000000,
                        "idle polls before an idle wait yields or blocks; unset on an "
                        "oversubscribed node: 1"),
    TERN_CFG_ENTRY_UINT("TERN_HEALTH_MS", T, health_ms, 100, 1, 60000,
                        "period of the dead-peer check while a wait is idle (ms)"),
    TERN_CFG_ENTRY_ENUM("TERN_LMT_MODE", T, lmt_mode, 0, lmt_names, 5,
                        "rendezvous data movement: auto (each netmod chooses by size), null "
                        "(data on the VC's stream), coop (shared copy buffer), get (receiver "
                        "reads the sender's memory), put (sender writes the receiver's); a mode "
                        "the peer's netmod lacks falls back to its choice"),
    TERN_CFG_ENTRY_UINT("TERN_NUM_WORKERS", T, num_workers, 1, 1, 64,
                        "workers per rank, wired up at tern_init: worker 0 is the context's, "
                        "tern_worker_create hands out the others (one per thread); every rank "
                        "of the job must give the same number"),
    TERN_CFG_ENTRY_UINT("TERN_BACKTRACE", T, backtrace, 1, 0, 1,
                        "1: a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE) writes a backtrace "
                        "to stderr before the process dies as it would have"),
    TERN_CFG_ENTRY_UINT("TERN_LOG", T, log_level, 0, 0, 3,
                        "1: print every error as it is decided; 3: also debug lines "
                        "(--enable-debug-log builds)"),
    TERN_CFG_ENTRY_STRING("TERN_NETMODS", T, netmods, "(all built)", check_netmods,
                          "comma list restricting the netmods (self is always used); unset: "
                          "every built netmod"),
    TERN_CFG_ENTRY_ENUM("TERN_CMA", T, cma, TERN_CMA_ALL, cma_names, 3,
                        "rendezvous data, and puts and gets into regions no mapping serves, to "
                        "a peer on the same host (boot id, pid and network namespaces) copied "
                        "once with CMA (process_vm_readv / _writev) by the engine, whatever "
                        "netmod carries the VC: off, outside (port peers and connected jobs "
                        "only), all; refused or declined: the netmod's own path"),
    TERN_CFG_ENTRY_STRING("TERN_CMA_THRESHOLD", T, cma_threshold, "auto", check_cma_threshold,
                          "smallest rendezvous message that uses the same-host copy (k, m, g "
                          "suffixes); auto: each netmod's own, from measurements (tern_info "
                          "--netmods shows them)"),
    TERN_CFG_ENTRY_STRING("TERN_RMA_CMA_THRESHOLD", T, rma_cma_threshold, "auto",
                          check_cma_threshold,
                          "smallest put or get into a same-host peer's region (one no mapping "
                          "serves) that uses the same-host copy (k, m, g suffixes); auto: each "
                          "netmod's own, from measurements (tern_info --netmods shows them)"),
    TERN_CFG_ENTRY_UINT("TERN_RMA_MAP", T, rma_map, 1, 0, 1,
                        "1: a key of a region a peer on this host allocated (tern_region_alloc, "
                        "MPI_Win_allocate) maps its memory, and one-sided operations on it are "
                        "loads, stores and atomics with no message; 0: they go through the "
                        "target's progress, as for any other region"),
    TERN_CFG_ENTRY_STRING("TERN_FAULT_CMA_EPERM_AFTER", T, fault_cma_after, "off", check_fault_cma,
                          "test hook: the same-host copy's calls fail with EPERM once this many "
                          "bytes of a message have moved (0: at once)"),
    TERN_CFG_ENTRY_UINT("TERN_FAULT_FENCE_LATE_MS", T, fault_fence_late_ms, 0, 0, 5000,
                        "test hook: tern_finalize goes on polling this many ms after its fence "
                        "completes, as a rank does whose launcher releases the fence late "
                        "(one note says so)"),
};
#undef T

const tern_config_table_t tern_engine_config_table = {
    .owner = "engine",
    .entries = engine_entries,
    .num_entries = sizeof(engine_entries) / sizeof(engine_entries[0]),
    .struct_size = sizeof(tern_config_t),
};

static tern_status_t parse_uint(const tern_config_entry_t *e, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    uint64_t mult = 1;
    if (end != s && (*end == 'k' || *end == 'K'))
        mult = KiB, end++;
    else if (end != s && (*end == 'm' || *end == 'M'))
        mult = MiB, end++;
    if (errno || end == s || *end != '\0' || s[0] == '-')
        return tern_error(
            TERN_ERR_INVALID_PARAM,
            "%s=\"%s\": not a non-negative number (allowed %" PRIu64 " .. %" PRIu64 "%s)", e->env,
            s, e->min, e->max, e->type == TERN_CFG_POW2 ? ", a power of two" : "");
    if (v > e->max / mult + 1)
        v = e->max + 1; /* out of range below; avoids overflow */
    else
        v *= mult;
    if (v < e->min || v > e->max)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "%s=%s out of range: allowed %" PRIu64 " .. %" PRIu64 "%s", e->env, s,
                          e->min, e->max, e->type == TERN_CFG_POW2 ? ", a power of two" : "");
    if (e->type == TERN_CFG_POW2 && (v & (v - 1)))
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "%s=%s must be a power of two (allowed %" PRIu64 " .. %" PRIu64 ")",
                          e->env, s, e->min, e->max);
    *out = v;
    return TERN_OK;
}

static tern_status_t parse_enum(const tern_config_entry_t *e, const char *s, uint64_t *out)
{
    char names[128];
    size_t n = 0;
    for (uint64_t i = e->min; i <= e->max; i++) {
        if (strcasecmp(s, e->names[i]) == 0) {
            *out = i;
            return TERN_OK;
        }
        if (n < sizeof(names))
            n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", i > e->min ? ", " : "",
                                  e->names[i]);
    }
    return tern_error(TERN_ERR_INVALID_PARAM, "%s=\"%s\": expected one of %s", e->env, s, names);
}

static tern_status_t load_one(const tern_config_entry_t *e, const char *s, void *slot)
{
    if (e->type == TERN_CFG_STRING) {
        char *dst = slot;
        dst[0] = '\0';
        if (s == NULL)
            return TERN_OK;
        if (strlen(s) >= TERN_CFG_STR_MAX)
            return tern_error(TERN_ERR_INVALID_PARAM, "%s is longer than %d bytes", e->env,
                              TERN_CFG_STR_MAX - 1);
        if (e->check != NULL) {
            tern_status_t st = e->check(e->env, s);
            if (st != TERN_OK)
                return st;
        }
        memcpy(dst, s, strlen(s) + 1);
        return TERN_OK;
    }
    uint64_t *v = slot;
    *v = e->def;
    if (s == NULL)
        return TERN_OK;
    return e->type == TERN_CFG_ENUM ? parse_enum(e, s, v) : parse_uint(e, s, v);
}

tern_status_t tern_config_load_given(const tern_config_table_t *t, void *config, uint64_t given,
                                     uint64_t *env_set)
{
    uint64_t set = 0;
    for (size_t i = 0; i < t->num_entries; i++) {
        const tern_config_entry_t *e = &t->entries[i];
        bool is_given = i < 64 && ((given >> i) & 1);
        const char *s = is_given ? NULL : getenv(e->env);
        if (s != NULL && *s == '\0')
            s = NULL; /* set but empty: the default */
        tern_status_t st = load_one(e, s, (char *)config + e->offset);
        if (st != TERN_OK)
            return st;
        if ((s != NULL || is_given) && i < 64)
            set |= 1ull << i;
    }
    if (env_set != NULL)
        *env_set = set;
    return t->validate != NULL ? t->validate(config) : TERN_OK;
}

tern_status_t tern_config_load_table(const tern_config_table_t *t, void *config,
                                     uint64_t *env_set)
{
    return tern_config_load_given(t, config, 0, env_set);
}

tern_status_t tern_config_load(tern_config_t *cfg)
{
    tern_status_t st = tern_config_load_table(&tern_engine_config_table, cfg, &cfg->env_set);
    return st != TERN_OK ? st : tern_config_derive(cfg);
}

tern_status_t tern_config_derive(tern_config_t *cfg)
{
    tern_status_t st = TERN_OK;
    /* checked by the table; "" (unset) is the word */
    cfg->cma_threshold_bytes = cfg->fault_cma_after_bytes = UINT64_MAX;
    cfg->rma_cma_threshold_bytes = UINT64_MAX;
    if (cfg->cma_threshold[0] != '\0')
        st = tern_cma_parse_size("TERN_CMA_THRESHOLD", cfg->cma_threshold, "auto",
                                 &cfg->cma_threshold_bytes);
    if (st == TERN_OK && cfg->rma_cma_threshold[0] != '\0')
        st = tern_cma_parse_size("TERN_RMA_CMA_THRESHOLD", cfg->rma_cma_threshold, "auto",
                                 &cfg->rma_cma_threshold_bytes);
    if (st == TERN_OK && cfg->fault_cma_after[0] != '\0')
        st = tern_cma_parse_size("TERN_FAULT_CMA_EPERM_AFTER", cfg->fault_cma_after, "off",
                                 &cfg->fault_cma_after_bytes);
    return st;
}

uint64_t tern_config_table_bit(const tern_config_table_t *t, size_t field)
{
    for (size_t i = 0; i < t->num_entries && i < 64; i++)
        if (t->entries[i].offset == field)
            return 1ull << i;
    return 0;
}

int tern_config_table_is_set(const tern_config_table_t *t, uint64_t env_set, size_t field)
{
    return (env_set & tern_config_table_bit(t, field)) != 0;
}

void tern_config_format(const tern_config_entry_t *e, const void *config, char *buf, size_t len)
{
    if (e->type == TERN_CFG_STRING) {
        const char *v = config ? (const char *)config + e->offset : "";
        snprintf(buf, len, "%s", *v ? v : (e->sdef ? e->sdef : ""));
        return;
    }
    uint64_t v = config ? *(const uint64_t *)(const void *)((const char *)config + e->offset)
                        : e->def;
    if (e->type == TERN_CFG_ENUM && v >= e->min && v <= e->max)
        snprintf(buf, len, "%s", e->names[v]);
    else
        snprintf(buf, len, "%" PRIu64, v);
}

void tern_config_format_range(const tern_config_entry_t *e, char *buf, size_t len)
{
    buf[0] = '\0';
    switch (e->type) {
    case TERN_CFG_STRING:
        snprintf(buf, len, "string");
        break;
    case TERN_CFG_ENUM: /* "first..last" like the numbers; the meaning lists them all */
        snprintf(buf, len, "%s..%s", e->names[e->min], e->names[e->max]);
        break;
    default:
        snprintf(buf, len, "%" PRIu64 "..%" PRIu64 "%s", e->min, e->max,
                 e->type == TERN_CFG_POW2 ? " pow2" : "");
    }
}
