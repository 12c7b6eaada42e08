/*
 * tern_info: what this build of tern has — version, the registered netmods
 * (by priority, with what they reach), and every TERN_* setting of the
 * engine and of each netmod with its default, range and the value the
 * environment gives it now.  Needs no PMIx server.  Exit status 1 when a
 * setting in the environment is invalid (the message names it).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tern/tern.h>

#include "config.h"
#include "engine/config.h"
#include "engine/netmod.h"
#include "engine/rcache.h"
#include "iofwd/iofwd_internal.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tern_info [--all | --netmods | --params]\n");
}

/* Print table t; returns its load status (an invalid value is reported). */
static tern_status_t print_table(const tern_config_table_t *t, bool netmod)
{
    void *cfg = calloc(1, t->struct_size);
    if (cfg == NULL)
        return TERN_ERR_NO_MEMORY;
    tern_status_t st = tern_config_load_table(t, cfg, NULL);
    if (st != TERN_OK)
        fprintf(stderr, "tern_info: %s\n", tern_last_error());
    printf("## %s%s\n", netmod ? "netmod " : "", t->owner);
    for (size_t i = 0; i < t->num_entries; i++) {
        const tern_config_entry_t *e = &t->entries[i];
        char val[TERN_CFG_STR_MAX], def[64], range[72];
        tern_config_format(e, st == TERN_OK ? cfg : NULL, val, sizeof(val));
        tern_config_format(e, NULL, def, sizeof(def));
        tern_config_format_range(e, range, sizeof(range));
        printf("%-26s %-12s %-12s %-16s %s\n", e->env, val, def, range, e->desc);
    }
    free(cfg);
    return st;
}

int main(int argc, char **argv)
{
    int netmods = 1, params = 1;
    if (argc > 1) {
        if (strcmp(argv[1], "--netmods") == 0)
            params = 0;
        else if (strcmp(argv[1], "--params") == 0)
            netmods = 0;
        else if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[1], "--all") != 0) {
            usage(stderr);
            return 2;
        }
    }
    printf("tern %s\n", PACKAGE_VERSION);
    if (netmods) {
        printf("netmods: %s (plus self)\n", tern_netmod_names());
        for (int i = 0; i < tern_netmod_count(); i++) {
            const tern_netmod_desc_t *d = tern_netmod_get(i);
            printf("  %-8s priority %-4d reaches %s%s\n", d->name, d->priority, d->reach,
                   d->ops->lmt_start_recv ? "; rendezvous by its own LMT" : "; rendezvous by the null LMT mode");
            const char *why = d->unavailable != NULL ? d->unavailable() : NULL;
            if (why != NULL)
                printf("           unusable in this process: %s\n", why);
        }
    }
    if (!params)
        return 0;
    printf("%-26s %-12s %-12s %-16s %s\n", "# variable", "value", "default", "range", "meaning");
    tern_status_t st = print_table(&tern_engine_config_table, false);
    tern_status_t s1 = print_table(&tern_rcache_config_table, false);
    if (st == TERN_OK)
        st = s1;
    s1 = print_table(&tern_iofwd_config_table, false);
    if (st == TERN_OK)
        st = s1;
    for (int i = 0; i < tern_netmod_count(); i++) {
        const tern_netmod_desc_t *d = tern_netmod_get(i);
        if (d->config != NULL) {
            tern_status_t s2 = print_table(d->config, true);
            if (st == TERN_OK)
                st = s2;
        }
    }
    return st == TERN_OK ? 0 : 1;
}
