/*
 * tern_init_ex's parameters (include/tern/core.h): checked whole before
 * anything is done (an argument error changes nothing), then laid over the
 * engine's settings in place of the environment variables they stand for.
 * The ranges are the engine table's own (engine/config.c), so a field
 * accepts exactly what its variable accepts.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "engine/init_params.h"
#include "engine/log.h"

/* The first version's size (its last field is job): the smallest
 * struct_size a caller can have been built with. */
#define PARAMS_V1_SIZE (offsetof(tern_init_params_t, job) + sizeof(const char *))

#define KNOWN_FIELDS                                                                               \
    (TERN_INIT_F_WAIT_MODE | TERN_INIT_F_WORKERS | TERN_INIT_F_NETMODS | TERN_INIT_F_WIREUP)

/* The engine table's entry for the tern_config_t field at offset. */
static const tern_config_entry_t *entry_at(size_t offset)
{
    const tern_config_table_t *t = &tern_engine_config_table;
    for (size_t i = 0; i < t->num_entries; i++)
        if (t->entries[i].offset == offset)
            return &t->entries[i];
    return NULL;
}

static tern_status_t check_wait_mode(int mode)
{
    const tern_config_entry_t *e = entry_at(offsetof(tern_config_t, wait_mode));
    if (mode >= 0 && (uint64_t)mode >= e->min && (uint64_t)mode <= e->max)
        return TERN_OK;
    return tern_error(TERN_ERR_INVALID_PARAM,
                      "tern_init_ex: params->wait_mode=%d: allowed %d .. %d (TERN_WAIT_SPIN, "
                      "TERN_WAIT_YIELD, TERN_WAIT_BLOCK)",
                      mode, (int)e->min, (int)e->max);
}

static tern_status_t check_workers(int n)
{
    const tern_config_entry_t *e = entry_at(offsetof(tern_config_t, num_workers));
    if (n >= 0 && (uint64_t)n >= e->min && (uint64_t)n <= e->max)
        return TERN_OK;
    return tern_error(TERN_ERR_INVALID_PARAM,
                      "tern_init_ex: params->num_workers=%d out of range: allowed %d .. %d", n,
                      (int)e->min, (int)e->max);
}

static tern_status_t check_netmods(const char *list)
{
    const tern_config_entry_t *e = entry_at(offsetof(tern_config_t, netmods));
    if (list == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_init_ex: params->netmods is NULL "
                                                  "(\"\" means every built netmod)");
    if (strlen(list) >= TERN_CFG_STR_MAX)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_init_ex: params->netmods is longer than %d bytes",
                          TERN_CFG_STR_MAX - 1);
    return e->check != NULL ? e->check("tern_init_ex: params->netmods", list) : TERN_OK;
}

static tern_status_t check_wireup(const tern_init_params_t *p)
{
    switch (p->wireup) {
    case TERN_WIREUP_PMIX:
    case TERN_WIREUP_STANDALONE:
        return TERN_OK;
    case TERN_WIREUP_ADDRESS:
        if (p->size < 1 || p->rank < 0 || p->rank >= p->size)
            return tern_error(TERN_ERR_INVALID_PARAM,
                              "tern_init_ex: params->rank=%d of params->size=%d: the rank is "
                              "0 .. size - 1",
                              p->rank, p->size);
        if (p->job == NULL || p->job[0] == '\0' || strlen(p->job) >= TERN_JOB_NAME_MAX)
            return tern_error(TERN_ERR_INVALID_PARAM,
                              "tern_init_ex: params->job is %s: TERN_WIREUP_ADDRESS needs the "
                              "job's name (1 .. %d characters, the same on every rank)",
                              p->job == NULL ? "NULL" : "empty or too long",
                              TERN_JOB_NAME_MAX - 1);
        return TERN_OK;
    default:
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_init_ex: params->wireup=%d: allowed TERN_WIREUP_PMIX (%d), "
                          "TERN_WIREUP_ADDRESS (%d), TERN_WIREUP_STANDALONE (%d)",
                          p->wireup, TERN_WIREUP_PMIX, TERN_WIREUP_ADDRESS, TERN_WIREUP_STANDALONE);
    }
}

tern_status_t tern_init_params_check(const tern_init_params_t *p, bool *standalone)
{
    *standalone = false;
    if (p == NULL)
        return TERN_OK;
    if (p->struct_size < PARAMS_V1_SIZE || p->struct_size > sizeof(*p))
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_init_ex: params->struct_size=%zu: this tern takes %zu .. %zu "
                          "(set it to sizeof(tern_init_params_t))",
                          p->struct_size, (size_t)PARAMS_V1_SIZE, sizeof(*p));
    if (p->fields & ~(uint64_t)KNOWN_FIELDS)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_init_ex: params->fields=%#llx has bits this tern does not know "
                          "(%#llx; known: TERN_INIT_F_* = %#llx)",
                          (unsigned long long)p->fields,
                          (unsigned long long)(p->fields & ~(uint64_t)KNOWN_FIELDS),
                          (unsigned long long)KNOWN_FIELDS);
    tern_status_t st = TERN_OK;
    if (st == TERN_OK && (p->fields & TERN_INIT_F_WAIT_MODE))
        st = check_wait_mode(p->wait_mode);
    if (st == TERN_OK && (p->fields & TERN_INIT_F_WORKERS))
        st = check_workers(p->num_workers);
    if (st == TERN_OK && (p->fields & TERN_INIT_F_NETMODS))
        st = check_netmods(p->netmods);
    if (st == TERN_OK && (p->fields & TERN_INIT_F_WIREUP)) {
        st = check_wireup(p);
        *standalone = st == TERN_OK && p->wireup == TERN_WIREUP_STANDALONE;
    }
    return st;
}

tern_status_t tern_init_params_load(const tern_init_params_t *p, tern_config_t *cfg)
{
    const tern_config_table_t *t = &tern_engine_config_table;
    uint64_t given = 0;
    if (p != NULL && (p->fields & TERN_INIT_F_WAIT_MODE))
        given |= tern_config_table_bit(t, offsetof(tern_config_t, wait_mode));
    if (p != NULL && (p->fields & TERN_INIT_F_WORKERS))
        given |= tern_config_table_bit(t, offsetof(tern_config_t, num_workers));
    if (p != NULL && (p->fields & TERN_INIT_F_NETMODS))
        given |= tern_config_table_bit(t, offsetof(tern_config_t, netmods));
    tern_status_t st = tern_config_load_given(t, cfg, given, &cfg->env_set);
    if (st == TERN_OK)
        st = tern_config_derive(cfg);
    if (st != TERN_OK || p == NULL)
        return st;
    if (p->fields & TERN_INIT_F_WAIT_MODE)
        cfg->wait_mode = (uint64_t)p->wait_mode;
    if (p->fields & TERN_INIT_F_WORKERS)
        cfg->num_workers = (uint64_t)p->num_workers;
    if (p->fields & TERN_INIT_F_NETMODS)
        snprintf(cfg->netmods, sizeof(cfg->netmods), "%s", p->netmods);
    return TERN_OK;
}
