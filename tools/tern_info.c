/*
 * tern_info: what this build of tern has — version, netmods, and every
 * TERN_* setting with its default, range and the value the environment
 * gives it now.  Needs no PMIx server.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tern/tern.h>

#include "config.h"
#include "engine/config.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tern_info [--all | --netmods | --params]\n");
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
    if (netmods)
        printf("netmods:%s (plus self)\n", TERN_NETMOD_LIST);
    if (!params)
        return 0;
    tern_config_t cfg;
    tern_status_t st = tern_config_load(&cfg);
    if (st != TERN_OK)
        fprintf(stderr, "tern_info: %s\n", tern_last_error());
    printf("%-22s %-10s %-10s %-10s %s\n", "# variable", "value", "default", "range", "meaning");
    for (size_t i = 0; i < tern_config_table_len; i++) {
        const tern_config_entry_t *e = &tern_config_table[i];
        char val[32], def[32], lo[32], hi[32], range[72];
        uint64_t cur = st == TERN_OK ? *(const uint64_t *)(const void *)((const char *)&cfg + e->offset)
                                     : e->def;
        tern_config_format(e, cur, val, sizeof(val));
        tern_config_format(e, e->def, def, sizeof(def));
        tern_config_format(e, e->min, lo, sizeof(lo));
        tern_config_format(e, e->max, hi, sizeof(hi));
        snprintf(range, sizeof(range), "%s..%s%s", lo, hi, (e->flags & TERN_CFG_POW2) ? " pow2" : "");
        printf("%-22s %-10s %-10s %-10s %s\n", e->env, val, def, range, e->desc);
    }
    return st == TERN_OK ? 0 : 1;
}
