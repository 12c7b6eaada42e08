/*
 * Rank placement with hwloc: rank r is bound to core (r % ncores).  The parent
 * binds the freshly forked child by pid (HWLOC_CPUBIND_PROCESS) before letting
 * it exec, so the child itself runs nothing but async-signal-safe calls.
 */
#include "launcher/job.h"

#include <hwloc.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

struct ternrun_bind_ctx {
    hwloc_topology_t topo;
    int ncores;
    hwloc_obj_type_t unit; /* HWLOC_OBJ_CORE, or PU if the topology has no cores */
    bool enabled;
};

static int load_topology(struct ternrun_bind_ctx *b)
{
    if (hwloc_topology_init(&b->topo) != 0) {
        return -1;
    }
    /* cores and PUs only: no PCI discovery (libpciaccess parses pci.ids
     * with a realloc per line, 10 s under ASan) */
    hwloc_topology_set_io_types_filter(b->topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(b->topo) != 0) {
        hwloc_topology_destroy(b->topo);
        b->topo = NULL;
        return -1;
    }
    b->unit = HWLOC_OBJ_CORE;
    b->ncores = hwloc_get_nbobjs_by_type(b->topo, HWLOC_OBJ_CORE);
    if (b->ncores <= 0) {
        b->unit = HWLOC_OBJ_PU;
        b->ncores = hwloc_get_nbobjs_by_type(b->topo, HWLOC_OBJ_PU);
    }
    return b->ncores > 0 ? 0 : -1;
}

static void bind_ranks(struct ternrun_bind_ctx *b, struct ternrun_ns *ns, int first_core)
{
    for (int r = 0; r < ns->nranks; r++) {
        int core = (first_core + r) % b->ncores;
        hwloc_obj_t obj = hwloc_get_obj_by_type(b->topo, b->unit, (unsigned)core);

        ns->ranks[r].core = core;
        if (obj != NULL && hwloc_bitmap_list_asprintf(&ns->ranks[r].cpuset, obj->cpuset) < 0) {
            ns->ranks[r].cpuset = NULL;
        }
    }
}

int ternrun_bind_init(struct ternrun_job *job)
{
    struct ternrun_bind_ctx *b = calloc(1, sizeof(*b));
    struct ternrun_ns *ns = job->ns[0];
    int n = ns->nranks;

    if (b == NULL) {
        ternrun_err("out of memory");
        return -1;
    }
    job->bind = b;
    if (job->opt.bind == TERNRUN_BIND_NONE) {
        ternrun_vlog(1, "binding: none (--bind-to none)");
        return 0;
    }
    if (load_topology(b) != 0) {
        if (job->opt.bind == TERNRUN_BIND_CORE) {
            ternrun_err("--bind-to core: cannot read the node topology with hwloc");
            return -1;
        }
        ternrun_warn("cannot read the node topology with hwloc: ranks are not bound");
        return 0;
    }
    if (job->opt.bind == TERNRUN_BIND_DEFAULT && n > b->ncores) {
        ternrun_vlog(1, "binding: none (%d ranks on %d cores; use --bind-to core to force)",
                     n, b->ncores);
        return 0;
    }
    if (n > b->ncores) {
        ternrun_warn("--bind-to core with %d ranks on %d cores: bindings wrap around, "
                     "several ranks share a core", n, b->ncores);
    }
    b->enabled = true;
    bind_ranks(b, ns, 0);
    return 0;
}

/* A spawned job: "core" binds its ranks to the cores after the ones the
 * running ranks use (wrapping around), "none" does not bind, no directive
 * follows ternrun's rule (--bind-to, else bind while the live ranks of all
 * jobs fit the cores). */
int ternrun_bind_assign(struct ternrun_job *job, struct ternrun_ns *ns, const char *bind)
{
    struct ternrun_bind_ctx *b = job->bind;
    int live = 0;

    if (bind != NULL && strcmp(bind, "none") == 0) {
        return 0;
    }
    if (bind != NULL && strcmp(bind, "core") != 0) {
        ternrun_err("spawn: binding '%s' is not supported (core or none)", bind);
        return -1;
    }
    if (b == NULL || b->topo == NULL || (bind == NULL && !b->enabled)) {
        if (bind != NULL && (b == NULL || b->topo == NULL)) {
            ternrun_err("spawn: binding to cores asked, but the topology is unknown");
            return -1;
        }
        return 0;
    }
    for (int i = 0; i < job->nall; i++) {
        const struct ternrun_rank *r = job->all[i];
        live += r->ns != ns && r->state == TERNRUN_RANK_RUNNING;
    }
    if (bind == NULL && live + ns->nranks > b->ncores) {
        ternrun_vlog(1, "spawned job %s: not bound (%d live ranks on %d cores)", ns->name,
                     live + ns->nranks, b->ncores);
        return 0;
    }
    b->enabled = true;
    bind_ranks(b, ns, live);
    return 0;
}

bool ternrun_oversubscribed(struct ternrun_job *job, struct ternrun_ns *ns)
{
    cpu_set_t mine;
    int ranks = ns->nranks, cpus;

    for (int i = 0; i < job->nall; i++) {
        const struct ternrun_rank *r = job->all[i];
        ranks += r->ns != ns && r->state == TERNRUN_RANK_RUNNING;
    }
    if (sched_getaffinity(0, sizeof(mine), &mine) != 0) {
        ternrun_vlog(1, "%s: CPUs allowed to ternrun unknown (%m): not said to be "
                     "oversubscribed", ns->name);
        return false;
    }
    cpus = CPU_COUNT(&mine);
    ternrun_vlog(1, "%s: %d ranks on the %d CPUs allowed to ternrun: %s", ns->name, ranks, cpus,
                 ranks > cpus ? "oversubscribed (PMIX_NODE_OVERSUBSCRIBED)" : "not oversubscribed");
    return ranks > cpus;
}

void *ternrun_bind_cpuset_of(struct ternrun_job *job, const struct ternrun_rank *r)
{
    struct ternrun_bind_ctx *b = job->bind;
    hwloc_obj_t obj;

    if (b == NULL || !b->enabled || r->core < 0) {
        return NULL;
    }
    obj = hwloc_get_obj_by_type(b->topo, b->unit, (unsigned)r->core);
    return obj ? obj->cpuset : NULL;
}

int ternrun_bind_apply(struct ternrun_job *job, struct ternrun_rank *r)
{
    struct ternrun_bind_ctx *b = job->bind;
    hwloc_const_cpuset_t set = ternrun_bind_cpuset_of(job, r);

    if (set == NULL) {
        ternrun_vlog(1, "%s rank %d (pid %ld): not bound", r->ns->name, r->rank, (long)r->pid);
        return 0;
    }
    if (hwloc_set_proc_cpubind(b->topo, r->pid, set, HWLOC_CPUBIND_PROCESS) != 0) {
        ternrun_warn("cannot bind rank %d to core %d: %m", r->rank, r->core);
        return -1;
    }
    ternrun_vlog(1, "rank %d (pid %ld): bound to %s %d (cpus %s)", r->rank, (long)r->pid,
                 b->unit == HWLOC_OBJ_CORE ? "core" : "pu", r->core,
                 r->cpuset ? r->cpuset : "?");
    return 0;
}

void ternrun_bind_fini(struct ternrun_job *job)
{
    struct ternrun_bind_ctx *b = job->bind;

    if (b == NULL) {
        return;
    }
    if (b->topo != NULL) {
        hwloc_topology_destroy(b->topo);
    }
    free(b);
    job->bind = NULL;
}
