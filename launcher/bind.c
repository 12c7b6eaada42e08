/*
 * Rank placement with hwloc: rank r is bound to core (r % ncores).  The parent
 * binds the freshly forked child by pid (HWLOC_CPUBIND_PROCESS) before letting
 * it exec, so the child itself runs nothing but async-signal-safe calls.
 *
 * Two capacities, measured differently on purpose:
 *   - binding counts hwloc's cores (PUs where the topology has no cores) of
 *     the whole node: a rank gets a core to itself, not a hyperthread
 *     sharing one with another rank; it ignores ternrun's own affinity
 *     (docs/ternrun.md);
 *   - oversubscription (PMIX_NODE_OVERSUBSCRIBED) counts the PUs ternrun's
 *     affinity mask allows: more runnable ranks than hardware threads
 *     they may use means ranks must give CPUs away when idle, whatever the
 *     binding.  engine/oversub.c measures the same unit where no launcher
 *     says it.
 */
#include "launcher/job.h"

#include <errno.h>
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

/* The running ranks of the jobs other than ns: they share the node with
 * ns's ranks once these start.  Main thread (it writes the states). */
static int others_running(const struct ternrun_job *job, const struct ternrun_ns *ns)
{
    int n = 0;

    for (int i = 0; i < job->nall; i++) {
        const struct ternrun_rank *r = job->all[i];
        n += r->ns != ns && r->state == TERNRUN_RANK_RUNNING;
    }
    return n;
}

/* A spawned job: "core" binds its ranks to the cores after the ones the
 * running ranks use (wrapping around), "none" does not bind, no directive
 * follows ternrun's rule (--bind-to, else bind while the live ranks of all
 * jobs fit the cores). */
int ternrun_bind_assign(struct ternrun_job *job, struct ternrun_ns *ns, const char *bind)
{
    struct ternrun_bind_ctx *b = job->bind;
    int live;

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
    live = others_running(job, ns);
    if (bind == NULL && live + ns->nranks > b->ncores) {
        ternrun_vlog(1, "spawned job %s: not bound (%d live ranks on %d cores)", ns->name,
                     live + ns->nranks, b->ncores);
        return 0;
    }
    b->enabled = true;
    bind_ranks(b, ns, live);
    return 0;
}

/* The PUs ternrun's affinity mask allows (a cgroup cpuset bounds it: what
 * nproc prints), or -1 with errno.  The mask is read into a set the kernel
 * accepts: a fixed cpu_set_t holds 1024 CPUs, and on a machine with more
 * the kernel refuses it (EINVAL) whatever the mask holds, so the set is
 * doubled until it fits. */
static int allowed_pus(void)
{
    for (int ncpus = CPU_SETSIZE; ncpus <= (1 << 22); ncpus *= 2) {
        cpu_set_t *set = CPU_ALLOC(ncpus);
        size_t size = CPU_ALLOC_SIZE(ncpus);
        int n = -1, err;

        if (set == NULL) {
            return -1;
        }
        if (sched_getaffinity(0, size, set) == 0) {
            n = CPU_COUNT_S(size, set);
        }
        err = errno;
        CPU_FREE(set);
        if (n >= 0 || err != EINVAL) {
            errno = err;
            return n;
        }
    }
    errno = EINVAL;
    return -1;
}

bool ternrun_oversubscribed(struct ternrun_job *job, struct ternrun_ns *ns)
{
    int ranks = ns->nranks + others_running(job, ns);
    int pus = allowed_pus();

    if (pus < 0) {
        ternrun_warn("%s: the CPUs allowed to ternrun are unknown (%s): the node is not said to "
                     "be oversubscribed",
                     ns->name, strerror(errno));
        return false;
    }
    ternrun_vlog(1, "%s: %d ranks on the %d CPUs allowed to ternrun: %s", ns->name, ranks, pus,
                 ranks > pus ? "oversubscribed (PMIX_NODE_OVERSUBSCRIBED)" : "not oversubscribed");
    return ranks > pus;
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
