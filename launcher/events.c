/*
 * ternrun's PMIx events about its ranks and jobs: a rank's end (every way it
 * can end, launcher/monitor.c says which) and a spawned job's end, told to
 * the namespaces related to the one concerned.  Main thread.
 */
#include "launcher/job.h"

#include <pmix.h>
#include <pmix_server.h>
#include <string.h>

/* ---- exit events -------------------------------------------------------- */

/* The namespaces told of ns's process events, as wildcard procs: ns, its
 * spawner, the jobs it spawned, and the ones connected to it (PMIx_Connect).
 * Returns how many. */
static size_t event_range(struct ternrun_job *job, const struct ternrun_ns *ns,
                          pmix_proc_t out[TERNRUN_MAX_NSPACES])
{
    size_t n = 0;

    pthread_mutex_lock(&job->lock);
    uint64_t conn = ns->connected;
    for (int k = 0; k < job->nns; k++) {
        const struct ternrun_ns *o = job->ns[k];
        bool related = o == ns || k == ns->parent || o->parent == ns->index ||
                       (conn & (UINT64_C(1) << k));
        if (related && o->registered) {
            PMIX_LOAD_PROCID(&out[n], o->name, PMIX_RANK_WILDCARD);
            n++;
        }
    }
    pthread_mutex_unlock(&job->lock);
    return n;
}

/* PMIx_Notify_event(status) about affected to the namespaces of range
 * (wildcard procs), with PMIX_EVENT_AFFECTED_PROC, one more info (key =
 * *value of type) and, if nondefault, PMIX_EVENT_NON_DEFAULT.  source is a
 * proc of the namespace concerned, not ternrun: the server library then
 * sends the event to the clients of the range only, not back up to this
 * host (PMIx_Notify_event from a server with itself as the source also
 * calls module.notify_event).  A range of source's namespace alone is
 * PMIX_RANGE_NAMESPACE, any other a custom range.  PMIX_SUCCESS when the
 * server library took the event. */
static pmix_status_t notify(pmix_status_t status, const pmix_proc_t *source,
                            const pmix_proc_t *affected, const char *key, const void *value,
                            pmix_data_type_t type, bool nondefault, const pmix_proc_t *range,
                            size_t nrange)
{
    bool own = nrange == 1 && PMIX_CHECK_NSPACE(range[0].nspace, source->nspace);
    pmix_info_t info[4];
    size_t ninfo = 0;

    PMIX_INFO_LOAD(&info[ninfo], PMIX_EVENT_AFFECTED_PROC, affected, PMIX_PROC);
    ninfo++;
    PMIX_INFO_LOAD(&info[ninfo], key, value, type);
    ninfo++;
    if (nondefault) {
        PMIX_INFO_LOAD(&info[ninfo], PMIX_EVENT_NON_DEFAULT, &nondefault, PMIX_BOOL);
        ninfo++;
    }
    if (!own) {
        pmix_data_array_t darray = {.type = PMIX_PROC, .size = nrange, .array = (void *)range};
        PMIX_INFO_LOAD(&info[ninfo], PMIX_EVENT_CUSTOM_RANGE, &darray, PMIX_DATA_ARRAY);
        ninfo++;
    }
    /* the server library copies the info before it returns */
    pmix_status_t rc = PMIx_Notify_event(
        status, source, own ? PMIX_RANGE_NAMESPACE : PMIX_RANGE_CUSTOM, info, ninfo, NULL, NULL);
    for (size_t i = 0; i < ninfo; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    return rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc;
}

/* The codes of PMIx 4's process events, one per way a rank can end.  A
 * normal exit is not an error: PMIX_EVENT_NON_DEFAULT keeps it from
 * default handlers, which commonly treat every event as fatal.
 *
 * Every other end (but ranks torn down by ternrun, below) is also told
 * under the PMIx 3 name PMIX_ERR_PROC_ABORTED, which clients written for
 * older servers register for (OpenPMIx 4.2's own fault example, with
 * PMIX_ERR_JOB_TERMINATED: the old name of PMIX_EVENT_JOB_END, below).  It comes second, so a handler registered for
 * both sees the precise code first, and is non-default, so a default
 * handler sees each end once. */
void ternrun_pmix_notify_exit(struct ternrun_job *job, const struct ternrun_rank *r,
                              enum ternrun_exit_kind kind, int code)
{
    static const struct {
        pmix_status_t status;
        const char *name;
    } kinds[] = {
        [TERNRUN_EXIT_NORMAL] = {PMIX_EVENT_PROC_TERMINATED, "PMIX_EVENT_PROC_TERMINATED"},
        [TERNRUN_EXIT_NO_FINALIZE] = {PMIX_ERR_PROC_TERM_WO_SYNC, "PMIX_ERR_PROC_TERM_WO_SYNC"},
        [TERNRUN_EXIT_NONZERO] = {PMIX_ERR_EXIT_NONZERO_TERM, "PMIX_ERR_EXIT_NONZERO_TERM"},
        [TERNRUN_EXIT_SIGNALLED] = {PMIX_ERR_PROC_ABORTED_BY_SIG, "PMIX_ERR_PROC_ABORTED_BY_SIG"},
        [TERNRUN_EXIT_KILLED] = {PMIX_ERR_PROC_KILLED_BY_CMD, "PMIX_ERR_PROC_KILLED_BY_CMD"},
        [TERNRUN_EXIT_ABORTED] = {PMIX_ERR_PROC_REQUESTED_ABORT, "PMIX_ERR_PROC_REQUESTED_ABORT"},
    };
    pmix_proc_t range[TERNRUN_MAX_NSPACES], dead;
    size_t nrange;
    pmix_status_t rc;
    char name[300];

    if (!r->ns->registered || (size_t)kind >= sizeof(kinds) / sizeof(kinds[0])) {
        return;
    }
    PMIX_LOAD_PROCID(&dead, r->ns->name, (pmix_rank_t)r->rank);
    nrange = event_range(job, r->ns, range);
    rc = notify(kinds[kind].status, &dead, &dead, PMIX_EXIT_CODE, &code, PMIX_INT,
                kind == TERNRUN_EXIT_NORMAL, range, nrange);
    if (rc != PMIX_SUCCESS) {
        ternrun_warn("cannot tell the other ranks that %s ended (%s): %s",
                     ternrun_rank_name(r, name, sizeof(name)), kinds[kind].name,
                     PMIx_Error_string(rc));
        return;
    }
    ternrun_vlog(2, "told %zu job(s): rank %d of %s ended (%s, code %d)", nrange, r->rank,
                 r->ns->name, kinds[kind].name, code);
    /* A rank ternrun killed while ending its job (ns phase TERM or KILL:
     * after a failure, an abort, a signal to ternrun) gets no PMIx 3
     * event: what started the teardown was told under both names already
     * (or came from outside), and PMIx 3 clients of the related jobs learn
     * of the job's end by PMIX_ERR_JOB_TERMINATED (= PMIX_EVENT_JOB_END);
     * one more -7 per rank torn down would only repeat it.  A kill asked
     * by PMIx_Job_control while the job runs is told as any other end. */
    if (kind == TERNRUN_EXIT_NORMAL ||
        (kind == TERNRUN_EXIT_KILLED && r->ns->phase >= TERNRUN_PHASE_TERM)) {
        return;
    }
    rc = notify(PMIX_ERR_PROC_ABORTED, &dead, &dead, PMIX_EXIT_CODE, &code, PMIX_INT, true, range,
                nrange);
    if (rc != PMIX_SUCCESS) {
        ternrun_warn("%s ended: told as %s, but not as PMIX_ERR_PROC_ABORTED (for PMIx 3 "
                     "clients): %s",
                     ternrun_rank_name(r, name, sizeof(name)), kinds[kind].name,
                     PMIx_Error_string(rc));
    }
}

void ternrun_pmix_notify_job_end(struct ternrun_job *job, struct ternrun_ns *ns, int status)
{
    pmix_proc_t all[TERNRUN_MAX_NSPACES], range[TERNRUN_MAX_NSPACES], source, affected;
    size_t nall, nrange = 0;
    pmix_status_t rc;

    if (ns->end_told || !ns->registered) {
        return;
    }
    ns->end_told = true;
    /* everyone related but the job itself (its ranks are gone) */
    nall = event_range(job, ns, all);
    for (size_t i = 0; i < nall; i++) {
        if (strncmp(all[i].nspace, ns->name, PMIX_MAX_NSLEN) != 0) {
            range[nrange++] = all[i];
        }
    }
    if (nrange == 0) {
        return;
    }
    PMIX_LOAD_PROCID(&affected, ns->name, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&source, ns->name, 0); /* not ternrun itself: see notify */
    rc = notify(PMIX_EVENT_JOB_END, &source, &affected, PMIX_JOB_TERM_STATUS, &status, PMIX_STATUS,
                false, range, nrange);
    if (rc != PMIX_SUCCESS) {
        ternrun_warn("cannot tell that job %s ended: %s", ns->name, PMIx_Error_string(rc));
    } else {
        ternrun_vlog(2, "told %zu job(s): %s ended (status %d)", nrange, ns->name, status);
    }
}
