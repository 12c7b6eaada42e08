/*
 * The settings registry (engine/config.h): every component's table, the
 * engine's first.  Components register from a constructor
 * (TERN_CONFIG_REGISTER), so a library that is loaded brings its settings
 * with it: libtern's own (rcache, iofwd) when libtern loads, the MPI
 * layer's when libtern-mpi does.  Registration happens while the libraries
 * load, before any thread of the program runs; the list is only read
 * afterwards, so it takes no lock.  The netmods' tables stay with their
 * descriptors (engine/netmod.h) and are listed after the components'.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/log.h"
#include "engine/netmod.h"

#define MAX_TABLES 32

static const tern_config_table_t *tables[MAX_TABLES] = {&tern_engine_config_table};
static int ntables = 1;

void tern_config_register(const tern_config_table_t *t)
{
    for (int i = 0; i < ntables; i++)
        if (tables[i] == t || strcmp(tables[i]->owner, t->owner) == 0) {
            tern_warn("settings of %s registered twice: the second table is ignored", t->owner);
            return;
        }
    if (ntables == MAX_TABLES) {
        tern_warn("settings of %s not registered: %d tables already", t->owner, MAX_TABLES);
        return;
    }
    tables[ntables++] = t;
}

/* Netmod i's table, for i counting only the netmods that have one. */
static const tern_config_table_t *netmod_table(int i)
{
    for (int k = 0, n = tern_netmod_count(); k < n; k++) {
        const tern_config_table_t *t = tern_netmod_get(k)->config;
        if (t != NULL && i-- == 0)
            return t;
    }
    return NULL;
}

int tern_config_count(void)
{
    int n = ntables;
    for (int k = 0, nm = tern_netmod_count(); k < nm; k++)
        n += tern_netmod_get(k)->config != NULL;
    return n;
}

const tern_config_table_t *tern_config_get(int i, bool *netmod)
{
    if (netmod != NULL)
        *netmod = i >= ntables;
    if (i < 0)
        return NULL;
    return i < ntables ? tables[i] : netmod_table(i - ntables);
}

tern_status_t tern_config_check_components(void)
{
    for (int i = 1; i < ntables; i++) {
        void *cfg = calloc(1, tables[i]->struct_size);
        if (cfg == NULL)
            return tern_error(TERN_ERR_NO_MEMORY, "settings of %s", tables[i]->owner);
        tern_status_t st = tern_config_load_table(tables[i], cfg, NULL);
        free(cfg);
        if (st != TERN_OK)
            return st;
    }
    return TERN_OK;
}
