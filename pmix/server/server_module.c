/*
 * tern PMIx host-server module: lifecycle, collectives and the typed
 * "not supported" answers.  Publish/lookup live in server_pubsub.c.
 *
 * Return convention of a module function (PMIx server API): PMIX_SUCCESS
 * means "cbfunc has been or will be called"; any error means "cbfunc will
 * not be called, report this status to the client".  Every function here
 * either calls cbfunc before returning PMIX_SUCCESS or returns an error.
 */
#include "pmix/server/server_internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct tern_srv_hooks tern_srv_hooks;

void tern_srv_log(int level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    if (tern_srv_hooks.verbose < level) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", tern_srv_hooks.log_prefix ? tern_srv_hooks.log_prefix : "tern",
            line);
}

long tern_srv_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tern_srv_defer(void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_t t;

    if (pthread_attr_init(&attr) != 0) {
        return -1;
    }
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return rc == 0 ? 0 : -1;
}

/* An answer sent later from its own thread: an op status, or an info
 * status with results (owned here, freed when PMIx releases them). */
struct deferred_answer {
    pmix_op_cbfunc_t op;
    pmix_info_cbfunc_t info_cb;
    void *cbdata;
    pmix_status_t status;
    pmix_info_t *info;
    size_t ninfo;
};

static void answer_release(void *arg)
{
    struct deferred_answer *a = arg;
    PMIX_INFO_FREE(a->info, a->ninfo);
    free(a);
}

static void *answer_main(void *arg)
{
    struct deferred_answer *a = arg;
    if (a->op != NULL) {
        a->op(a->status, a->cbdata);
        answer_release(a);
    } else {
        a->info_cb(a->status, a->info, a->ninfo, a->cbdata, answer_release, a);
    }
    return NULL;
}

static int answer(struct deferred_answer a)
{
    struct deferred_answer *p = malloc(sizeof(*p));
    if (p == NULL)
        return -1;
    *p = a;
    if (tern_srv_defer(answer_main, p) == 0)
        return 0;
    free(p);
    return -1;
}

int tern_srv_answer_op(pmix_op_cbfunc_t cbfunc, void *cbdata, pmix_status_t status)
{
    return answer((struct deferred_answer){.op = cbfunc, .cbdata = cbdata, .status = status});
}

int tern_srv_answer_info(pmix_info_cbfunc_t cbfunc, void *cbdata, pmix_status_t status,
                         pmix_info_t *info, size_t ninfo)
{
    return answer((struct deferred_answer){.info_cb = cbfunc, .cbdata = cbdata,
                                           .status = status, .info = info, .ninfo = ninfo});
}

static const char *rank_str(pmix_rank_t rank, char *buf, size_t len)
{
    if (rank == PMIX_RANK_WILDCARD) {
        return "*";
    }
    snprintf(buf, len, "%u", (unsigned)rank);
    return buf;
}

/* ---- lifecycle ---------------------------------------------------------- */

static pmix_status_t client_connected(const pmix_proc_t *proc, void *server_object,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)server_object;
    tern_srv_log(2, "rank %u of %s connected", (unsigned)proc->rank, proc->nspace);
    if (tern_srv_hooks.connected != NULL) {
        tern_srv_hooks.connected(tern_srv_hooks.ctx, proc);
    }
    if (cbfunc != NULL) {
        cbfunc(PMIX_SUCCESS, cbdata);
    }
    return PMIX_SUCCESS;
}

/* The client blocks in PMIx_Finalize until cbfunc runs: always call it. */
static pmix_status_t client_finalized(const pmix_proc_t *proc, void *server_object,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)server_object;
    tern_srv_log(2, "rank %u of %s finalized", (unsigned)proc->rank, proc->nspace);
    if (tern_srv_hooks.finalized != NULL) {
        tern_srv_hooks.finalized(tern_srv_hooks.ctx, proc);
    }
    if (cbfunc != NULL) {
        cbfunc(PMIX_SUCCESS, cbdata);
    }
    return PMIX_SUCCESS;
}

/* The host learns about the abort before the client is released, so by the
 * time the client can exit the host has already recorded why. */
static pmix_status_t abort_fn(const pmix_proc_t *proc, void *server_object, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)server_object;
    if (procs != NULL && nprocs > 0) {
        /* one job per launcher: aborting a subset still ends the job */
        tern_srv_log(1, "rank %u asked to abort %zu process(es): the whole job is aborted",
                     (unsigned)proc->rank, nprocs);
    }
    if (tern_srv_hooks.aborted != NULL) {
        tern_srv_hooks.aborted(tern_srv_hooks.ctx, proc, status, msg ? msg : "");
    }
    if (cbfunc != NULL) {
        cbfunc(PMIX_SUCCESS, cbdata);
    }
    return PMIX_SUCCESS;
}

/* ---- collectives -------------------------------------------------------- */

/* Called once every local participant has entered the fence.  On one node
 * there is no other server to exchange with: the local contribution is the
 * complete result.  PMIx owns data and keeps it valid during the callback. */
static pmix_status_t fence_nb(const pmix_proc_t procs[], size_t nprocs,
                              const pmix_info_t info[], size_t ninfo, char *data, size_t ndata,
                              pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    (void)procs;
    (void)info;
    (void)ninfo;
    tern_srv_log(2, "fence over %zu proc entr%s, %zu bytes of data", nprocs,
                 nprocs == 1 ? "y" : "ies", ndata);
    if (cbfunc != NULL) {
        cbfunc(PMIX_SUCCESS, data, ndata, cbdata, NULL, NULL);
    }
    return PMIX_SUCCESS;
}

/* PMIx asks the host only for processes it does not serve itself; a
 * single-node launcher has no remote server to ask. */
static pmix_status_t direct_modex(const pmix_proc_t *proc, const pmix_info_t info[],
                                  size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    char rb[16];

    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    tern_srv_log(1, "direct modex for %s:%s: not found (single-node launcher, no remote "
                 "servers)", proc->nspace, rank_str(proc->rank, rb, sizeof(rb)));
    return PMIX_ERR_NOT_FOUND;
}

/* ---- events, tools, listener ------------------------------------------- */

/* Events.  The PMIx server library delivers a client's PMIx_Notify_event
 * to the local clients of its range itself (custom ranges too), and the
 * process-termination events ternrun generates go out through
 * PMIx_Notify_event from the host (launcher/nspace.c).  What reaches the
 * host is the part beyond this node, and the codes clients register for:
 * with one node there is nothing beyond it, and ternrun generates no other
 * events than the ones it always sends, so both are done at once. */
static pmix_status_t register_events(pmix_status_t *codes, size_t ncodes,
                                     const pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)codes, (void)info, (void)ninfo, (void)cbfunc, (void)cbdata;
    tern_srv_log(2, "PMIx register_events: %zu code(s)", ncodes);
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t deregister_events(pmix_status_t *codes, size_t ncodes,
                                       pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)codes, (void)cbfunc, (void)cbdata;
    tern_srv_log(2, "PMIx deregister_events: %zu code(s)", ncodes);
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t notify_event(pmix_status_t code, const pmix_proc_t *source,
                                  pmix_data_range_t range, pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)range, (void)info, (void)ninfo, (void)cbfunc, (void)cbdata;
    tern_srv_log(2, "PMIx notify_event %d from %s: delivered on this node by the PMIx "
                 "library, nothing beyond it", (int)code, source ? source->nspace : "?");
    return PMIX_OPERATION_SUCCEEDED;
}

/* A PMIx tool attached (PMIx_tool_init): it is named <job>.tool.<n>, rank
 * 0, unless it brought a name of its own.  What it may then do is what
 * this module serves (queries, log, job control, events, publish /
 * lookup); its IOF is refused (no iof_pull / push_stdin here: tern-iof
 * carries copies of the output, flow-controlled by ternrun, see
 * docs/ternrun.md).  Answered from a thread of its own. */
struct tool_reply {
    pmix_tool_connection_cbfunc_t cbfunc;
    void *cbdata;
    pmix_proc_t proc;
};

static void *tool_reply_thread(void *arg)
{
    struct tool_reply r = *(struct tool_reply *)arg;
    free(arg);
    r.cbfunc(PMIX_SUCCESS, &r.proc, r.cbdata);
    return NULL;
}

static void tool_connected(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
                           void *cbdata)
{
    static _Atomic unsigned tools;
    struct tool_reply *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        cbfunc(PMIX_ERR_NOMEM, NULL, cbdata);
        return;
    }
    r->cbfunc = cbfunc;
    r->cbdata = cbdata;
    unsigned n = atomic_fetch_add(&tools, 1);
    snprintf(r->proc.nspace, sizeof(r->proc.nspace), "%s.tool.%u",
             tern_srv_hooks.nspace ? tern_srv_hooks.nspace : "tern", n);
    r->proc.rank = 0;
    for (size_t k = 0; k < ninfo; k++) {
        if (PMIX_CHECK_KEY(&info[k], PMIX_TOOL_NSPACE) && info[k].value.type == PMIX_STRING)
            PMIX_LOAD_NSPACE(r->proc.nspace, info[k].value.data.string);
        else if (PMIX_CHECK_KEY(&info[k], PMIX_TOOL_RANK) && info[k].value.type == PMIX_UINT32)
            r->proc.rank = info[k].value.data.uint32;
    }
    tern_srv_log(1, "PMIx tool attached as %s:%u", r->proc.nspace, (unsigned)r->proc.rank);
    if (tern_srv_defer(tool_reply_thread, r) == 0)
        return;
    pmix_proc_t proc = r->proc;
    free(r);
    cbfunc(PMIX_SUCCESS, &proc, cbdata);
}

/* Declining makes the PMIx library run its own listener thread. */
static pmix_status_t listener_fn(int listening_sd, pmix_connection_cbfunc_t cbfunc,
                                 void *cbdata)
{
    (void)listening_sd, (void)cbfunc, (void)cbdata;
    tern_srv_log(2, "PMIx listener: not provided by the host, PMIx runs its own");
    return PMIX_ERR_NOT_SUPPORTED;
}

static pmix_server_module_t module = {
    .client_connected = client_connected,
    .client_finalized = client_finalized,
    .abort = abort_fn,
    .fence_nb = fence_nb,
    .direct_modex = direct_modex,
    .publish = tern_srv_publish,
    .lookup = tern_srv_lookup,
    .unpublish = tern_srv_unpublish,
    .spawn = tern_srv_spawn,
    .connect = tern_srv_connect,
    .disconnect = tern_srv_disconnect,
    .register_events = register_events,
    .deregister_events = deregister_events,
    .listener = listener_fn,
    .notify_event = notify_event,
    .query = tern_srv_query,
    .job_control = tern_srv_job_control,
    .tool_connected = tool_connected,
    .group = tern_srv_group,
    .log = tern_srv_log_request,
};

pmix_server_module_t *tern_srv_module_setup(const struct tern_srv_hooks *hooks)
{
    memset(&tern_srv_hooks, 0, sizeof(tern_srv_hooks));
    if (hooks != NULL) {
        tern_srv_hooks = *hooks;
    }
    return &module;
}

int tern_srv_module_expire(void)
{
    return tern_srv_pubsub_expire();
}

void tern_srv_module_shutdown(void)
{
    tern_srv_pubsub_shutdown();
}
