/*
 * ternrun as a PMIx host server: start the server library with tern's module,
 * register the job's namespace with the keys ranks read at start-up, and
 * register each rank as a client before it is forked.
 */
#include "launcher/job.h"
#include "pmix/server/server_module.h"

#include <dirent.h>
#include <errno.h>
#include <hwloc.h>
#include <pmix.h>
#include <pmix_server.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PMIX_OP_TIMEOUT_S 30 /* generous bound on a local server operation */
#define RELEASE_TIMEOUT_S 5  /* deregistering ranks about to be killed: don't hold the kill */

_Static_assert(sizeof(((struct ternrun_ns *)0)->name) == sizeof(pmix_nspace_t),
               "ns->name is passed where PMIx expects a pmix_nspace_t");

/* ---- waiting for a PMIx operation callback ------------------------------ */

struct op_waiter {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    bool done;
    pmix_status_t status;
};

static struct op_waiter *waiter_new(void)
{
    struct op_waiter *w = calloc(1, sizeof(*w));

    if (w != NULL) {
        pthread_mutex_init(&w->mutex, NULL);
        pthread_cond_init(&w->cond, NULL);
    }
    return w;
}

static void waiter_free(struct op_waiter *w)
{
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mutex);
    free(w);
}

static void op_done(pmix_status_t status, void *cbdata)
{
    struct op_waiter *w = cbdata;

    pthread_mutex_lock(&w->mutex);
    w->status = status;
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->mutex);
}

/* Wait for op_done.  On timeout the waiter is deliberately leaked: PMIx may
 * still call op_done with it later. */
static pmix_status_t waiter_wait_for(struct op_waiter *w, const char *what, int secs)
{
    struct timespec deadline;
    pmix_status_t st;
    int rc = 0;

    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += secs;
    pthread_mutex_lock(&w->mutex);
    while (!w->done && rc != ETIMEDOUT) {
        rc = pthread_cond_timedwait(&w->cond, &w->mutex, &deadline);
    }
    st = w->done ? w->status : PMIX_ERR_TIMEOUT;
    pthread_mutex_unlock(&w->mutex);
    if (st == PMIX_ERR_TIMEOUT && !w->done) {
        ternrun_err("%s: no answer from the PMIx server library within %d s", what, secs);
        return st;
    }
    waiter_free(w);
    return st;
}

static pmix_status_t waiter_wait(struct op_waiter *w, const char *what)
{
    return waiter_wait_for(w, what, PMIX_OP_TIMEOUT_S);
}

/* Complete an operation started with waiter w: PMIX_SUCCESS means the
 * callback will come, PMIX_OPERATION_SUCCEEDED that it was done at once. */
static pmix_status_t finish_op(pmix_status_t rc, struct op_waiter *w, const char *what)
{
    if (rc == PMIX_SUCCESS) {
        return waiter_wait(w, what);
    }
    waiter_free(w);
    return rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc;
}

/* ---- module hooks (PMIx progress thread) -------------------------------- */

/* under job->lock */
static struct ternrun_ns *ns_of(struct ternrun_job *job, const char *nspace)
{
    for (int k = 0; k < job->nns; k++) {
        if (strncmp(nspace, job->ns[k]->name, PMIX_MAX_NSLEN) == 0) {
            return job->ns[k];
        }
    }
    return NULL;
}

/* under job->lock */
static struct ternrun_rank *rank_of(struct ternrun_job *job, const pmix_proc_t *proc)
{
    struct ternrun_ns *ns = ns_of(job, proc->nspace);

    if (ns == NULL || proc->rank >= (pmix_rank_t)ns->nranks) {
        return NULL;
    }
    return &ns->ranks[proc->rank];
}

static void hook_connected(void *ctx, const pmix_proc_t *proc)
{
    struct ternrun_job *job = ctx;

    pthread_mutex_lock(&job->lock);
    struct ternrun_rank *r = rank_of(job, proc);
    if (r != NULL) {
        r->connected = true;
    }
    pthread_mutex_unlock(&job->lock);
}

static void hook_finalized(void *ctx, const pmix_proc_t *proc)
{
    struct ternrun_job *job = ctx;

    pthread_mutex_lock(&job->lock);
    struct ternrun_rank *r = rank_of(job, proc);
    if (r != NULL) {
        r->finalized = true;
    }
    pthread_mutex_unlock(&job->lock);
}

static void hook_aborted(void *ctx, const pmix_proc_t *proc, int status, const char *msg)
{
    struct ternrun_job *job = ctx;

    pthread_mutex_lock(&job->lock);
    struct ternrun_rank *r = rank_of(job, proc);
    if (r == NULL) {
        pthread_mutex_unlock(&job->lock);
        ternrun_warn("abort request from unknown process %s:%u ignored", proc->nspace,
                     (unsigned)proc->rank);
        return;
    }
    if (!r->aborted) {
        r->aborted = true;
        r->abort_status = status;
        r->abort_msg = strdup(msg);
    }
    pthread_mutex_unlock(&job->lock);
    ternrun_monitor_wake(job);
}

/* PMIx_Query_info's proc table: the ranks as they are now (pid, state and
 * wstatus are written under job->lock, see job.h) */
static int hook_procs(void *ctx, const char *nspace, struct tern_srv_proc *out, int max)
{
    struct ternrun_job *job = ctx;

    pthread_mutex_lock(&job->lock);
    struct ternrun_ns *ns = ns_of(job, nspace);
    if (ns == NULL) {
        pthread_mutex_unlock(&job->lock);
        return -1;
    }
    int n = ns->nranks < max ? ns->nranks : max;
    for (int i = 0; i < n; i++) {
        const struct ternrun_rank *r = &ns->ranks[i];
        struct tern_srv_proc *p = &out[i];
        p->rank = (pmix_rank_t)i;
        p->pid = r->state == TERNRUN_RANK_NOT_STARTED ? 0 : r->pid;
        p->exe = r->exe;
        p->exit_code = 0;
        if (r->state == TERNRUN_RANK_NOT_STARTED) {
            p->state = PMIX_PROC_STATE_PREPPED;
        } else if (r->state == TERNRUN_RANK_RUNNING) {
            p->state = r->connected ? PMIX_PROC_STATE_CONNECTED : PMIX_PROC_STATE_RUNNING;
        } else if (WIFSIGNALED(r->wstatus)) {
            p->exit_code = 128 + WTERMSIG(r->wstatus);
            p->state = r->signalled_by_us ? PMIX_PROC_STATE_KILLED_BY_CMD
                                          : PMIX_PROC_STATE_ABORTED_BY_SIG;
        } else {
            p->exit_code = WEXITSTATUS(r->wstatus);
            p->state = r->aborted             ? PMIX_PROC_STATE_ABORTED
                       : p->exit_code != 0    ? PMIX_PROC_STATE_TERM_NON_ZERO
                                              : PMIX_PROC_STATE_TERMINATED;
        }
    }
    pthread_mutex_unlock(&job->lock);
    return n;
}

/* PMIx_Connect / PMIx_Disconnect done among procs: their namespaces are
 * (no longer) told each other's process events.  A disconnect leaves the
 * spawner / spawned relation (see related()). */
static void hook_connection(void *ctx, const pmix_proc_t procs[], size_t nprocs, bool connect)
{
    struct ternrun_job *job = ctx;
    uint64_t set = 0;

    pthread_mutex_lock(&job->lock);
    for (size_t i = 0; i < nprocs; i++) {
        struct ternrun_ns *ns = ns_of(job, procs[i].nspace);
        if (ns != NULL) {
            set |= UINT64_C(1) << ns->index;
        }
    }
    for (int k = 0; k < job->nns; k++) {
        struct ternrun_ns *ns = job->ns[k];
        if (!(set & (UINT64_C(1) << k))) {
            continue;
        }
        if (connect) {
            ns->connected |= set & ~(UINT64_C(1) << k);
        } else {
            ns->connected &= ~set;
        }
    }
    pthread_mutex_unlock(&job->lock);
}

/* PMIX_QUERY_NAMESPACES: the namespaces, comma-separated */
static void hook_nspaces(void *ctx, char *buf, size_t len)
{
    struct ternrun_job *job = ctx;
    size_t off = 0;

    buf[0] = '\0';
    pthread_mutex_lock(&job->lock);
    for (int k = 0; k < job->nns && off < len; k++) {
        off += (size_t)snprintf(buf + off, len - off, k ? ",%s" : "%s", job->ns[k]->name);
    }
    pthread_mutex_unlock(&job->lock);
}

/* PMIX_QUERY_NAMESPACE_INFO's PMIX_CMD_LINE: each app's argv (ns->argvs,
 * appended under job->lock), space-separated, the apps separated by " : "
 * (as on an MPMD command line); cut at len */
static int hook_cmdline(void *ctx, const char *nspace, char *buf, size_t len)
{
    struct ternrun_job *job = ctx;
    size_t off = 0;

    buf[0] = '\0';
    pthread_mutex_lock(&job->lock);
    const struct ternrun_ns *ns = ns_of(job, nspace);
    for (size_t a = 0; ns != NULL && a < ns->nargvs && off < len; a++) {
        if (a > 0) {
            off += (size_t)snprintf(buf + off, len - off, " : ");
        }
        for (size_t i = 0; ns->argvs[a][i] != NULL && off < len; i++) {
            off += (size_t)snprintf(buf + off, len - off, i ? " %s" : "%s", ns->argvs[a][i]);
        }
    }
    pthread_mutex_unlock(&job->lock);
    return ns != NULL ? 0 : -1;
}

/* PMIx_Job_control: sig to each running target (its process group when it
 * leads one).  All targets are checked first: one that is not a rank of
 * this job sends nothing.  SIGKILL and SIGTERM mark the rank signalled by
 * ternrun, so its end is "killed by command", not a failure of the job,
 * and are sent by the main thread (monitor.c), after the rank left the
 * PMIx server: several ranks killed at once while others wait in a fence
 * would otherwise hit the OpenPMIx bug ternrun_pmix_release_running
 * describes. */
static int hook_signal(void *ctx, const pmix_proc_t targets[], size_t ntargets, int sig)
{
    struct ternrun_job *job = ctx;
    int sent = 0;

    pthread_mutex_lock(&job->lock); /* pid and state stay as read until we unlock */
    for (size_t t = 0; t < ntargets; t++) {
        struct ternrun_ns *ns = ns_of(job, targets[t].nspace);
        if (ns == NULL ||
            (targets[t].rank != PMIX_RANK_WILDCARD && targets[t].rank >= (pmix_rank_t)ns->nranks)) {
            pthread_mutex_unlock(&job->lock);
            return -1;
        }
    }
    for (int i = 0; i < job->nall; i++) {
        struct ternrun_rank *r = job->all[i];
        bool hit = false;

        for (size_t t = 0; t < ntargets && !hit; t++) {
            hit = strncmp(targets[t].nspace, r->ns->name, PMIX_MAX_NSLEN) == 0 &&
                  (targets[t].rank == PMIX_RANK_WILDCARD || targets[t].rank == (pmix_rank_t)r->rank);
        }
        if (!hit || r->state != TERNRUN_RANK_RUNNING) {
            continue;
        }
        if (sig == SIGKILL || sig == SIGTERM) {
            /* ended by the main thread, which first takes the rank out
             * of the PMIx server (ternrun_pmix_release_running says why) */
            r->kill_sig = sig;
            r->signalled_by_us = true;
            sent++;
            continue;
        }
        /* not reaped (the lock), so the pid cannot have been reused */
        if (kill(r->own_pgrp ? -r->pid : r->pid, sig) == 0) {
            sent++;
        }
    }
    pthread_mutex_unlock(&job->lock);
    ternrun_monitor_wake(job);
    return sent;
}

/* ---- server start / stop ------------------------------------------------ */

/* ternrun -v names the file a PMIx tool attaches with: the server's
 * rendezvous file pmix.<host>.tool.<our pid> in the session directory */
static void log_tool_rendezvous(const struct ternrun_job *job)
{
    char suffix[32];
    DIR *d = opendir(job->session_dir);
    struct dirent *e;

    if (d == NULL) {
        return;
    }
    snprintf(suffix, sizeof(suffix), ".tool.%ld", (long)getpid());
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name), sl = strlen(suffix);
        if (strncmp(e->d_name, "pmix.", 5) == 0 && n > sl &&
            strcmp(e->d_name + n - sl, suffix) == 0) {
            ternrun_vlog(1, "PMIx tools attach with PMIX_TOOL_ATTACHMENT_FILE=%s/%s",
                         job->session_dir, e->d_name);
            break;
        }
    }
    closedir(d);
}

/* PMIX_SERVER_URI queries are answered with the URI the server library
 * keeps for itself (the one its tool rendezvous file holds) */
static void set_server_uri(void)
{
    pmix_value_t *v = NULL;
    pmix_proc_t self;
    /* the server's own name ("pmix-server", rank = our pid, in 4.2) */
    pmix_status_t rc = PMIx_Get(NULL, PMIX_PROCID, NULL, 0, &v);

    if (rc == PMIX_SUCCESS && v != NULL && v->type == PMIX_PROC && v->data.proc != NULL) {
        self = *v->data.proc;
        PMIX_VALUE_RELEASE(v);
        rc = PMIx_Get(&self, PMIX_SERVER_URI, NULL, 0, &v);
    }
    if (rc == PMIX_SUCCESS && v != NULL && v->type == PMIX_STRING) {
        ternrun_vlog(2, "PMIx server URI %s", v->data.string);
        tern_srv_module_set_uri(v->data.string);
    } else {
        ternrun_vlog(1, "the PMIx server has no URI (%s): PMIX_SERVER_URI queries are not "
                     "answered", PMIx_Error_string(rc));
    }
    if (v != NULL) {
        PMIX_VALUE_RELEASE(v);
    }
}

int ternrun_pmix_start(struct ternrun_job *job)
{
    struct tern_srv_hooks hooks = {
        .ctx = job,
        .log_prefix = TERNRUN_NAME,
        .verbose = job->opt.verbose,
        .connected = hook_connected,
        .finalized = hook_finalized,
        .aborted = hook_aborted,
        .nspace = job->ns[0]->name,
        .hostname = job->hostname,
        .procs = hook_procs,
        .nspaces = hook_nspaces,
        .cmdline = hook_cmdline,
        .connection = hook_connection,
        .spawn = ternrun_spawn_request,
        .signal = hook_signal,
    };
    pmix_server_module_t *module = tern_srv_module_setup(&hooks);
    pmix_info_t info[3];
    pmix_status_t rc;
    bool tools = true;

    /* tool support: the server writes its rendezvous file pmix.<host>.tool.
     * <pid> in the session directory; a PMIx tool attaches with
     * PMIX_TOOL_ATTACHMENT_FILE naming it (ternrun -v prints the path) */
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, job->session_dir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, job->session_dir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_SERVER_TOOL_SUPPORT, &tools, PMIX_BOOL);
    /* The server's hwloc topology (PMIx loads its own) needs no PCI
     * devices: hwloc's pci component parses pci.ids through libpciaccess
     * with a realloc per line, 10 s of start-up under ASan.  Only for this
     * call: the ranks' environment keeps the user's choice. */
    bool no_pci = getenv("HWLOC_COMPONENTS") == NULL;
    if (no_pci)
        setenv("HWLOC_COMPONENTS", "-pci", 1);
    rc = PMIx_server_init(module, info, 3);
    if (no_pci)
        unsetenv("HWLOC_COMPONENTS");
    for (int i = 0; i < 3; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    if (rc != PMIX_SUCCESS) {
        ternrun_err("cannot start the PMIx server (tmpdir %s): %s", job->session_dir,
                    PMIx_Error_string(rc));
        return -1;
    }
    job->pmix_up = true;
    ternrun_vlog(1, "PMIx server up (%s), namespace %s", PMIx_Get_version(), job->ns[0]->name);
    log_tool_rendezvous(job);
    set_server_uri();
    return 0;
}

void ternrun_pmix_stop(struct ternrun_job *job)
{
    if (!job->pmix_up) {
        return;
    }
    /* pending lookups of ranks that are gone get an answer, the table goes */
    tern_srv_module_shutdown();
    for (int k = 0; k < job->nns; k++) {
        ternrun_pmix_deregister_nspace(job, job->ns[k]);
    }
    PMIx_server_finalize();
    job->pmix_up = false;
}

/* OpenPMIx 4.2 (unchanged up to 4.2.9) completes a purely local
 * collective that a dead client was part of from its lost-connection
 * handler (ptl_base_sendrecv.c) without marking it done: when another
 * participant's connection drops in the same round of its event loop,
 * before that completion (thread-shifted) has run, the tracker is
 * completed and released twice (seen with a debug build of 4.2.2:
 * "_mdxcbfunc: Assertion PMIX_OBJ_MAGIC_ID"; in the packaged one a
 * SIGSEGV or a hang, in the progress thread or in PMIx_server_finalize).
 * That is what happens when a rank aborts while the others wait in a fence
 * it never joins and ternrun ends them all at once.  A deregistered
 * client's socket is closed by the server without that handler running,
 * so the ranks ternrun is about to signal are deregistered first; only
 * deaths ternrun did not cause go through that path.  (It took the ranks
 * no longer inheriting ternrun's PMIx sockets, spawn.c, for the close to
 * end the connection.)  Deregistered ranks see the server gone: a pending
 * fence returns an error just before the signal arrives. */
void ternrun_pmix_release_rank(struct ternrun_job *job, struct ternrun_rank *r)
{
    struct op_waiter *w;
    pmix_proc_t proc;

    (void)job;
    if (!r->ns->registered || r->state != TERNRUN_RANK_RUNNING || r->pmix_released ||
        (w = waiter_new()) == NULL) {
        return;
    }
    r->pmix_released = true;
    PMIX_LOAD_PROCID(&proc, r->ns->name, (pmix_rank_t)r->rank);
    PMIx_server_deregister_client(&proc, op_done, w);
    waiter_wait_for(w, "deregistering a rank", RELEASE_TIMEOUT_S);
}

void ternrun_pmix_release_running(struct ternrun_job *job, const struct ternrun_ns *ns)
{
    struct op_waiter *w[64];
    int nw = 0;

    for (int i = 0; i < job->nall; i++) {
        struct ternrun_rank *r = job->all[i];
        pmix_proc_t proc;

        if (!r->ns->registered || (ns != NULL && r->ns != ns) ||
            r->state != TERNRUN_RANK_RUNNING || r->pmix_released) {
            continue;
        }
        if (nw == (int)(sizeof(w) / sizeof(w[0]))) { /* wait for a batch */
            for (int k = 0; k < nw; k++) {
                waiter_wait_for(w[k], "deregistering a rank", RELEASE_TIMEOUT_S);
            }
            nw = 0;
        }
        if ((w[nw] = waiter_new()) == NULL) {
            break;
        }
        r->pmix_released = true;
        PMIX_LOAD_PROCID(&proc, r->ns->name, (pmix_rank_t)r->rank);
        PMIx_server_deregister_client(&proc, op_done, w[nw++]);
    }
    for (int k = 0; k < nw; k++) {
        waiter_wait_for(w[k], "deregistering a rank", RELEASE_TIMEOUT_S);
    }
}

/* ---- namespace ---------------------------------------------------------- */

static pmix_status_t add_u32(void *list, const char *key, uint32_t v)
{
    return PMIx_Info_list_add(list, key, &v, PMIX_UINT32);
}

/* the first rank of r's app in its namespace */
static int app_first(const struct ternrun_rank *r)
{
    int i = r->rank;

    while (i > 0 && r->ns->ranks[i - 1].appnum == r->appnum) {
        i--;
    }
    return i;
}

/* PMIX_PROC_DATA for one rank: PMIX_RANK must come first.  Local rank:
 * within its namespace; node and global rank: its slot among every rank
 * ternrun started (unique on the node). */
static pmix_status_t add_proc_data(struct ternrun_job *job, void *joblist, struct ternrun_rank *r)
{
    void *list = PMIx_Info_list_start();
    pmix_rank_t prank = (pmix_rank_t)r->rank, grank = (pmix_rank_t)r->slot;
    pmix_rank_t arank = (pmix_rank_t)(r->rank - app_first(r));
    uint16_t lrank = (uint16_t)r->rank, nrank = (uint16_t)r->slot;
    uint32_t appnum = (uint32_t)r->appnum;
    hwloc_const_cpuset_t set = ternrun_bind_cpuset_of(job, r);
    pmix_data_array_t darray;
    pmix_status_t rc;

    if (list == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if ((rc = PMIx_Info_list_add(list, PMIX_RANK, &prank, PMIX_PROC_RANK)) != PMIX_SUCCESS ||
        (rc = PMIx_Info_list_add(list, PMIX_GLOBAL_RANK, &grank, PMIX_PROC_RANK)) != PMIX_SUCCESS ||
        (rc = PMIx_Info_list_add(list, PMIX_APP_RANK, &arank, PMIX_PROC_RANK)) != PMIX_SUCCESS ||
        (rc = PMIx_Info_list_add(list, PMIX_LOCAL_RANK, &lrank, PMIX_UINT16)) != PMIX_SUCCESS ||
        (rc = PMIx_Info_list_add(list, PMIX_NODE_RANK, &nrank, PMIX_UINT16)) != PMIX_SUCCESS ||
        (rc = PMIx_Info_list_add(list, PMIX_HOSTNAME, job->hostname, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = add_u32(list, PMIX_NODEID, 0)) != PMIX_SUCCESS ||
        (rc = PMIx_Info_list_add(list, PMIX_APPNUM, &appnum, PMIX_UINT32)) != PMIX_SUCCESS) {
        goto out;
    }
    if (set != NULL) {
        pmix_cpuset_t cpuset = {.source = "hwloc", .bitmap = (void *)set};
        char *str = NULL;

        if (PMIx_server_generate_cpuset_string(&cpuset, &str) == PMIX_SUCCESS && str != NULL) {
            rc = PMIx_Info_list_add(list, PMIX_CPUSET, str, PMIX_STRING);
            free(str);
            str = NULL;
        }
        if (rc == PMIX_SUCCESS &&
            PMIx_server_generate_locality_string(&cpuset, &str) == PMIX_SUCCESS && str != NULL) {
            rc = PMIx_Info_list_add(list, PMIX_LOCALITY_STRING, str, PMIX_STRING);
            free(str);
        }
        if (rc != PMIX_SUCCESS) {
            goto out;
        }
    }
    rc = PMIx_Info_list_convert(list, &darray);
    if (rc == PMIX_SUCCESS) {
        rc = PMIx_Info_list_add(joblist, PMIX_PROC_DATA, &darray, PMIX_DATA_ARRAY);
        PMIx_Data_array_destruct(&darray);
    }
out:
    PMIx_Info_list_release(list);
    return rc;
}

/* "0,1,...,n-1" */
static char *local_peers(int n)
{
    size_t len = (size_t)n * 6 + 1, off = 0;
    char *s = malloc(len);

    if (s == NULL) {
        return NULL;
    }
    s[0] = '\0';
    for (int i = 0; i < n && off < len; i++) {
        off += (size_t)snprintf(s + off, len - off, i ? ",%d" : "%d", i);
    }
    return s;
}

/* PMIX_NODE_MAP / PMIX_PROC_MAP.  The ppn input is the explicit rank list
 * "0,1,...": PMIx 4.2 copies a range such as "0-3" verbatim into the local
 * peers it derives from the map, and then counts it as one peer. */
/* PMIX_APP_INFO: per app, its number, size and leader */
static pmix_status_t add_app_info(const struct ternrun_ns *ns, void *joblist)
{
    pmix_status_t rc = PMIX_SUCCESS;

    for (int i = 0; i < ns->nranks && rc == PMIX_SUCCESS;) {
        int app = ns->ranks[i].appnum, n = 0;
        uint32_t appnum = (uint32_t)app;
        pmix_rank_t ldr = (pmix_rank_t)i;
        void *list = PMIx_Info_list_start();
        pmix_data_array_t darray;

        while (i + n < ns->nranks && ns->ranks[i + n].appnum == app) {
            n++;
        }
        if (list == NULL) {
            return PMIX_ERR_NOMEM;
        }
        if ((rc = add_u32(list, PMIX_APPNUM, appnum)) == PMIX_SUCCESS &&
            (rc = add_u32(list, PMIX_APP_SIZE, (uint32_t)n)) == PMIX_SUCCESS &&
            (rc = PMIx_Info_list_add(list, PMIX_APPLDR, &ldr, PMIX_PROC_RANK)) == PMIX_SUCCESS &&
            (rc = PMIx_Info_list_convert(list, &darray)) == PMIX_SUCCESS) {
            rc = PMIx_Info_list_add(joblist, PMIX_APP_INFO, &darray, PMIX_DATA_ARRAY);
            PMIx_Data_array_destruct(&darray);
        }
        PMIx_Info_list_release(list);
        i += n;
    }
    return rc;
}

static pmix_status_t add_maps(struct ternrun_job *job, void *list, const char *peers)
{
    char *regex = NULL, *ppn = NULL;
    pmix_status_t rc;

    rc = PMIx_generate_regex(job->hostname, &regex);
    if (rc != PMIX_SUCCESS) {
        ternrun_err("PMIx_generate_regex(%s): %s", job->hostname, PMIx_Error_string(rc));
        goto out;
    }
    rc = PMIx_generate_ppn(peers, &ppn);
    if (rc != PMIX_SUCCESS) {
        ternrun_err("PMIx_generate_ppn(%s): %s", peers, PMIx_Error_string(rc));
        goto out;
    }
    if ((rc = PMIx_Info_list_add(list, PMIX_NODE_MAP, regex, PMIX_REGEX)) != PMIX_SUCCESS) {
        goto out;
    }
    rc = PMIx_Info_list_add(list, PMIX_PROC_MAP, ppn, PMIX_REGEX);
out:
    free(regex);
    free(ppn);
    return rc;
}

int ternrun_pmix_register_nspace(struct ternrun_job *job, struct ternrun_ns *ns)
{
    uint32_t n = (uint32_t)ns->nranks, univ = 0;
    pmix_rank_t zero_rank = 0;
    bool oversub = ternrun_oversubscribed(job, ns);
    void *list = PMIx_Info_list_start();
    char *peers = local_peers(ns->nranks);
    pmix_data_array_t darray = {0};
    struct op_waiter *w = NULL;
    pmix_status_t rc = PMIX_ERR_NOMEM;
    int ret = -1;

    for (int k = 0; k < job->nns; k++) {
        univ += (uint32_t)job->ns[k]->nranks;
    }
    if (list == NULL || peers == NULL) {
        goto err_nomem;
    }
    if ((rc = add_u32(list, PMIX_UNIV_SIZE, univ)) != PMIX_SUCCESS ||
        (rc = add_u32(list, PMIX_JOB_SIZE, n)) != PMIX_SUCCESS ||
        (rc = add_u32(list, PMIX_MAX_PROCS, n)) != PMIX_SUCCESS ||
        (rc = add_u32(list, PMIX_LOCAL_SIZE, n)) != PMIX_SUCCESS ||
        (rc = add_u32(list, PMIX_NODE_SIZE, univ)) != PMIX_SUCCESS ||
        (rc = add_u32(list, PMIX_NUM_NODES, 1)) != PMIX_SUCCESS ||
        (rc = PMIx_Info_list_add(list, PMIX_NODE_OVERSUBSCRIBED, &oversub, PMIX_BOOL)) !=
            PMIX_SUCCESS ||
        (rc = add_u32(list, PMIX_NODEID, 0)) != PMIX_SUCCESS ||
        (rc = add_u32(list, PMIX_JOB_NUM_APPS,
                      (uint32_t)ns->ranks[ns->nranks - 1].appnum + 1)) != PMIX_SUCCESS ||
        (rc = PMIx_Info_list_add(list, PMIX_LOCAL_PEERS, peers, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = PMIx_Info_list_add(list, PMIX_LOCALLDR, &zero_rank, PMIX_PROC_RANK)) != PMIX_SUCCESS ||
        (rc = PMIx_Info_list_add(list, PMIX_JOBID, ns->name, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = PMIx_Info_list_add(list, PMIX_HOSTNAME, job->hostname, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = add_maps(job, list, peers)) != PMIX_SUCCESS ||
        (rc = add_app_info(ns, list)) != PMIX_SUCCESS) {
        goto err_pmix;
    }
    /* one app: its keys at job level too (what clients of a plain job read) */
    if (ns->ranks[ns->nranks - 1].appnum == 0 &&
        ((rc = add_u32(list, PMIX_APP_SIZE, n)) != PMIX_SUCCESS ||
         (rc = PMIx_Info_list_add(list, PMIX_APPLDR, &zero_rank, PMIX_PROC_RANK)) !=
             PMIX_SUCCESS)) {
        goto err_pmix;
    }
    if (ns->parent >= 0) {
        pmix_proc_t parent;

        PMIX_LOAD_PROCID(&parent, job->ns[ns->parent]->name, ns->parent_rank);
        if ((rc = PMIx_Info_list_add(list, PMIX_PARENT_ID, &parent, PMIX_PROC)) != PMIX_SUCCESS) {
            goto err_pmix;
        }
    }
    for (int i = 0; i < ns->nranks; i++) {
        if ((rc = add_proc_data(job, list, &ns->ranks[i])) != PMIX_SUCCESS) {
            goto err_pmix;
        }
    }
    if ((rc = PMIx_Info_list_convert(list, &darray)) != PMIX_SUCCESS) {
        goto err_pmix;
    }
    if ((w = waiter_new()) == NULL) {
        goto err_nomem;
    }
    rc = PMIx_server_register_nspace(ns->name, ns->nranks, darray.array, darray.size, op_done, w);
    rc = finish_op(rc, w, "registering the namespace");
    if (rc != PMIX_SUCCESS) {
        goto err_pmix;
    }
    ns->registered = true;
    ret = 0;
    goto out;

err_nomem:
    ternrun_err("out of memory registering namespace %s", ns->name);
    goto out;
err_pmix:
    ternrun_err("cannot register namespace %s with PMIx: %s", ns->name, PMIx_Error_string(rc));
out:
    if (darray.array != NULL) {
        PMIx_Data_array_destruct(&darray);
    }
    if (list != NULL) {
        PMIx_Info_list_release(list);
    }
    free(peers);
    return ret;
}

void ternrun_pmix_deregister_nspace(struct ternrun_job *job, struct ternrun_ns *ns)
{
    struct op_waiter *w;

    (void)job;
    if (!ns->registered || (w = waiter_new()) == NULL) {
        return;
    }
    PMIx_server_deregister_nspace(ns->name, op_done, w);
    waiter_wait(w, "deregistering a namespace");
    ns->registered = false;
}

int ternrun_pmix_prepare_rank(struct ternrun_job *job, struct ternrun_rank *r)
{
    struct op_waiter *w = waiter_new();
    pmix_proc_t proc;
    pmix_status_t rc;

    if (w == NULL) {
        ternrun_err("out of memory registering rank %d", r->rank);
        return -1;
    }
    PMIX_LOAD_PROCID(&proc, r->ns->name, (pmix_rank_t)r->rank);
    rc = PMIx_server_register_client(&proc, getuid(), getgid(), r, op_done, w);
    rc = finish_op(rc, w, "registering a rank");
    if (rc != PMIX_SUCCESS) {
        ternrun_err("cannot register rank %d with PMIx: %s", r->rank, PMIx_Error_string(rc));
        return -1;
    }
    rc = PMIx_server_setup_fork(&proc, &r->env);
    if (rc != PMIX_SUCCESS) {
        ternrun_err("cannot set up the PMIx environment of rank %d: %s", r->rank,
                    PMIx_Error_string(rc));
        return -1;
    }
    return 0;
}
