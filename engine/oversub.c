/*
 * Oversubscription: more ranks of the job on a node than CPUs the job may
 * use there.  Idle waits then default to TERN_WAIT_MODE=block with
 * TERN_SPIN_COUNT=1 (sleep after one empty poll), like Open MPI's
 * mpi_yield_when_idle but giving the CPU away for real; a setting the user
 * gave wins.  Local rank 0 says so on one line.
 *
 * Why block, from measurements (issue 21, tests/mpi's mpi_comm, 3 ranks
 * over tcp on a 2-CPU VM, two busy loops on the CPUs, seconds per run):
 *   yield after 2000 polls (the default)  32.6     without the loops  6.2
 *   block after 2000 polls                34.5                        9.4
 *   yield after 100 polls                 13.8
 *   yield after every empty poll       0.9-6.4                        0.2-0.3
 *   block after one empty poll         0.5-0.8                        0.2-0.4
 * A rank that spins burns the time slice the rank it waits for needs, and
 * sched_yield gives little away against CPU-bound tasks under CFS; only
 * sleeping hands the CPU over every time.
 *
 * The CPUs the job may use on this node, by the first source that answers
 * (the same on every rank of the node, so all its ranks choose alike, as
 * shm's one wait mode per node needs):
 *   1. the launcher says whether the node is oversubscribed
 *      (PMIX_NODE_OVERSUBSCRIBED: ternrun, PRRTE);
 *   2. the launcher bound every local rank and says to what (PMIX_CPUSET:
 *      Open MPI's mpirun, ternrun): the union of those bindings;
 *   3. the CPUs of the node this process's cgroup cpuset allows (Slurm's
 *      task/cgroup, containers; the whole machine without one), as hwloc
 *      finds them.
 * Not the process's own affinity mask: a launcher that binds each rank to
 * its cores without saying so (Slurm's task/affinity) would make every
 * fully subscribed node look oversubscribed, and blocking costs latency
 * there.  The price: a job confined by taskset alone (no cgroup) is not
 * seen as oversubscribed; TERN_WAIT_MODE=block says it by hand.
 */
#define _GNU_SOURCE 1
#include "engine/oversub.h"

#include <hwloc.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "pmix/client/node.h"

typedef struct tern_node_load {
    uint32_t ranks;      /* of the job on this node (PMIX_LOCAL_SIZE) */
    int cpus;            /* CPUs the job may use here; -1 when not counted */
    bool oversubscribed; /* ranks > cpus, or the launcher says so */
    const char *how;     /* static text: what decided it */
} tern_node_load_t;

/* 2: the union of the local ranks' PMIX_CPUSETs; -1 unless every one has
 * one that parses ("LIST" or "SOURCE:LIST", hwloc's list format). */
static int bound_cpus(tern_pmix_t *p)
{
    hwloc_bitmap_t all = hwloc_bitmap_alloc(), one = hwloc_bitmap_alloc();
    int n = all != NULL && one != NULL ? 0 : -1;
    for (uint32_t i = 0; n >= 0 && i < p->local_size; i++) {
        char buf[1024];
        if (tern_pmix_cpuset(p, p->local_peers[i], buf, sizeof(buf)) != TERN_OK) {
            n = -1;
            break;
        }
        const char *list = strchr(buf, ':') != NULL ? strchr(buf, ':') + 1 : buf;
        if (hwloc_bitmap_list_sscanf(one, list) != 0 || hwloc_bitmap_iszero(one))
            n = -1;
        else
            hwloc_bitmap_or(all, all, one);
    }
    if (n >= 0)
        n = hwloc_bitmap_weight(all);
    hwloc_bitmap_free(all);
    hwloc_bitmap_free(one);
    return n;
}

/* 3: the PUs hwloc finds allowed to this process (the cgroup cpuset, not
 * its binding); -1 when hwloc cannot tell. */
static int allowed_cpus(void)
{
    hwloc_topology_t topo;
    int n = -1;
    if (hwloc_topology_init(&topo) != 0)
        return -1;
    /* no PCI discovery (10 s under ASan, see netmods/shm/placement.c) */
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(topo) == 0)
        n = hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(topo));
    hwloc_topology_destroy(topo);
    return n;
}

static void node_load(tern_pmix_t *p, tern_node_load_t *out)
{
    *out = (tern_node_load_t){.ranks = p->local_size, .cpus = -1, .how = "one rank"};
    if (p->local_size <= 1)
        return; /* a rank alone never waits for a neighbour's CPU time */
    int said = tern_pmix_node_oversubscribed(p);
    if (said >= 0) {
        out->oversubscribed = said == 1;
        out->how = "the launcher's PMIX_NODE_OVERSUBSCRIBED";
        return;
    }
    /* the ranks' CPUs include this rank's: as many ranks as it has CPUs
     * never oversubscribe the node (and cost no topology load) */
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof(mine), &mine) == 0 &&
        (uint32_t)CPU_COUNT(&mine) >= p->local_size) {
        out->cpus = CPU_COUNT(&mine);
        out->how = "this rank's CPU affinity";
        return;
    }
    out->cpus = bound_cpus(p);
    out->how = "the union of the local ranks' bindings (PMIX_CPUSET)";
    if (out->cpus < 0) {
        out->cpus = allowed_cpus();
        out->how = "the CPUs this process's cpuset allows";
    }
    out->oversubscribed = out->cpus > 0 && p->local_size > (uint32_t)out->cpus;
}

static bool idle_defaults(tern_config_t *cfg, const tern_node_load_t *load)
{
    if (!load->oversubscribed)
        return false;
    bool changed = false;
    if (!tern_config_table_is_set(&tern_engine_config_table, cfg->env_set,
                                  offsetof(tern_config_t, wait_mode)) &&
        cfg->wait_mode != TERN_WAIT_BLOCK) {
        cfg->wait_mode = TERN_WAIT_BLOCK;
        changed = true;
    }
    if (!tern_config_table_is_set(&tern_engine_config_table, cfg->env_set,
                                  offsetof(tern_config_t, spin_count)) &&
        cfg->spin_count != 1) {
        cfg->spin_count = 1;
        changed = true;
    }
    return changed;
}

static void describe(const tern_node_load_t *load, char *buf, size_t len)
{
    if (load->ranks <= 1)
        snprintf(buf, len, "%u rank of the job on this node: not oversubscribed", load->ranks);
    else if (load->cpus >= 0)
        snprintf(buf, len, "%u ranks of the job on this node, %d CPUs for them (%s): %s",
                 load->ranks, load->cpus, load->how,
                 load->oversubscribed ? "oversubscribed" : "not oversubscribed");
    else
        snprintf(buf, len, "%u ranks of the job on this node, %s (%s)", load->ranks,
                 load->oversubscribed ? "oversubscribed" : "not oversubscribed", load->how);
}

bool tern_node_idle_defaults(tern_pmix_t *p, tern_config_t *cfg, char *what, size_t len)
{
    tern_node_load_t load;
    node_load(p, &load);
    describe(&load, what, len);
    return idle_defaults(cfg, &load);
}

void tern_context_idle_defaults(tern_context_t *ctx)
{
    if (tern_config_table_is_set(&tern_engine_config_table, ctx->cfg.env_set,
                                 offsetof(tern_config_t, wait_mode)) &&
        tern_config_table_is_set(&tern_engine_config_table, ctx->cfg.env_set,
                                 offsetof(tern_config_t, spin_count)))
        return; /* the user chose both: nothing to find out */
    char what[256];
    if (!tern_node_idle_defaults(&ctx->pmix, &ctx->cfg, what, sizeof(what)) ||
        ctx->pmix.local_rank != 0)
        return;
    tern_note("%s; idle waits use TERN_WAIT_MODE=%s TERN_SPIN_COUNT=%llu, which keep an "
              "oversubscribed node moving (set them to choose)",
              what, tern_wait_mode_name(ctx->cfg.wait_mode),
              (unsigned long long)ctx->cfg.spin_count);
}
