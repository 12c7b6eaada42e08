/*
 * tern_info: what this build of tern has — version, the registered netmods
 * (by priority, with what they reach and their capability tables), and every TERN_* setting of tern's
 * settings registry (engine/config.h: the engine's, the registration
 * cache's, iofwd's, the MPI layer's, each netmod's) with its default,
 * range and the value in effect.  Needs no PMIx server; started by a
 * launcher (ternrun -n 3 tern_info) it asks the launcher about this node,
 * as tern_init does, and shows the idle-wait defaults of an
 * oversubscribed node (engine/oversub.c) in the value column.  Exit status
 * 1 when a setting in the environment is invalid (the message names it).
 *
 * It links libtern and libtern-mpi (whose tables register when they load)
 * and uses their private interface (TERN_PRIVATE_0.0 in engine/libtern.map).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <tern/tern.h>

#include "config.h"
#include "engine/config.h"
#include "engine/netmod.h"
#include "engine/oversub.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tern_info [--all | --netmods | --params]\n");
}

/* Print table t with the values of given (NULL: loaded from the
 * environment here); returns the load status (an invalid value is
 * reported). */
static tern_status_t print_table(const tern_config_table_t *t, bool netmod, const void *given)
{
    void *loaded = NULL;
    const void *cfg = given;
    tern_status_t st = TERN_OK;
    if (cfg == NULL) {
        if ((loaded = calloc(1, t->struct_size)) == NULL)
            return TERN_ERR_NO_MEMORY;
        st = tern_config_load_table(t, loaded, NULL);
        cfg = loaded;
    }
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
    char why[512] = "";
    if (t->explain != NULL && st == TERN_OK)
        t->explain(cfg, why, sizeof(why));
    if (why[0] != '\0')
        printf("# %s\n", why);
    free(loaded);
    return st;
}

/* The capability tables d has, and those it has not (engine/netmod.h). */
static void print_tables(const tern_netmod_desc_t *d)
{
    const struct {
        const char *name;
        bool has;
    } t[] = {{"lmt", d->lmt != NULL},
             {"wait", d->wait != NULL},
             {"mem", d->mem != NULL},
             {"conn", d->conn != NULL}};
    printf("           tables: core");
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (t[i].has)
            printf(" %s%s", t[i].name,
                   strcmp(t[i].name, "mem") == 0 && d->mem->rkey_pack ? " (remote keys)" : "");
    printf("; without:");
    int none = 0;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (!t[i].has)
            printf(" %s", t[i].name), none++;
    printf("%s\n", none ? "" : " -");
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
    printf("tern %s\n", tern_version(NULL, NULL, NULL)); /* the libtern it runs on */
    /* a call into libtern-mpi: it is then loaded (a linker dropping unused
     * libraries keeps it) and its settings are in the registry */
    char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING];
    int mpi_len;
    if (MPI_Get_library_version(mpi_version, &mpi_len) == MPI_SUCCESS)
        printf("mpi: %s\n", mpi_version);
    if (netmods) {
        printf("netmods: %s (plus self)\n", tern_netmod_names());
        for (int i = 0; i < tern_netmod_count(); i++) {
            const tern_netmod_desc_t *d = tern_netmod_get(i);
            printf("  %-8s priority %-4d reaches %s%s\n", d->name, d->priority, d->reach,
                   d->lmt ? "; rendezvous by its own LMT" : "; rendezvous by the null LMT mode");
            print_tables(d);
            /* the engine's same-host copy for this netmod's peers (engine/cma.h) */
            if (d->cma_threshold == TERN_CMA_NEVER)
                printf("           same-host peers: CMA copy when TERN_LMT_MODE forces get/put\n");
            else if (d->cma_threshold == 0)
                printf("           same-host peers: CMA copy for every rendezvous message\n");
            else if (d->cma_threshold % (1u << 20) == 0)
                printf("           same-host peers: CMA copy from %llu MiB\n",
                       (unsigned long long)d->cma_threshold >> 20);
            else
                printf("           same-host peers: CMA copy from %llu bytes\n",
                       (unsigned long long)d->cma_threshold);
            if (d->rma_cma_threshold == 0)
                printf("           same-host peers: CMA copy for every put and get into a region\n");
            else
                printf("           same-host peers: CMA copy for puts and gets into a region from "
                       "%llu bytes\n",
                       (unsigned long long)d->rma_cma_threshold);
            const char *why = d->unavailable != NULL ? d->unavailable() : NULL;
            if (why != NULL)
                printf("           unusable in this process: %s\n", why);
        }
    }
    if (!params)
        return 0;
    /* the engine's settings as tern_init would make them on this node */
    tern_config_t engine_cfg;
    tern_status_t st = tern_config_load(&engine_cfg);
    if (st == TERN_OK) { /* else print_table reports the bad setting */
        tern_pmix_t pmix = {0};
        char what[256];
        if (tern_pmix_init(&pmix, false) == TERN_OK) {
            bool changed = tern_node_idle_defaults(&pmix, &engine_cfg, what, sizeof(what));
            printf("# %s%s\n", what, pmix.singleton ? " (not started by a launcher)" : "");
            if (changed)
                printf("# idle-wait defaults of an oversubscribed node: TERN_WAIT_MODE and "
                       "TERN_SPIN_COUNT below (set them to choose)\n");
            tern_pmix_finalize(&pmix);
        } else {
            printf("# this node's load is unknown: %s\n", tern_last_error());
        }
    }
    printf("%-26s %-12s %-12s %-16s %s\n", "# variable", "value", "default", "range", "meaning");
    for (int i = 0; i < tern_config_count(); i++) {
        bool netmod;
        const tern_config_table_t *t = tern_config_get(i, &netmod);
        /* table 0 is the engine's: shown with the node's idle-wait
         * defaults applied above */
        tern_status_t s1 = print_table(t, netmod, i == 0 && st == TERN_OK ? &engine_cfg : NULL);
        if (st == TERN_OK)
            st = s1;
    }
    return st == TERN_OK ? 0 : 1;
}
