/*
 * tern PMIx host server: PMIx_Job_control.
 *
 * One node, so job control is signals, sent by the host's signal hook
 * (ternrun: to each running target, its process group when it leads one):
 *   PMIX_JOB_CTRL_SIGNAL (int)   that signal
 *   PMIX_JOB_CTRL_KILL           SIGKILL        PMIX_JOB_CTRL_TERMINATE  SIGTERM
 *   PMIX_JOB_CTRL_PAUSE          SIGSTOP        PMIX_JOB_CTRL_RESUME     SIGCONT
 * Targets: the given procs (PMIX_RANK_WILDCARD: every rank of that
 * namespace), none: the requester's whole job.  A rank killed or ended
 * this way ends like any other: ternrun's exit status and the others'
 * termination events say so.  Refused, PMIX_ERR_NOT_SUPPORTED and a line
 * naming it: checkpoint, restart, cancel, provisioning, and anything else.
 * A target of another namespace, or a rank the job does not have:
 * PMIX_ERR_NOT_FOUND, nothing sent.  The answer goes back from a thread of
 * its own (as in server_log.c).
 */
#include "pmix/server/server_internal.h"

#include <signal.h>
#include <stdbool.h>
#include <string.h>

static bool is_key(const pmix_info_t *i, const char *key)
{
    return strncmp(i->key, key, PMIX_MAX_KEYLEN) == 0;
}

/* the signal the directives ask for; 0 with *why set: refused */
static int wanted_signal(const pmix_info_t dirs[], size_t n, const char **why)
{
    static const struct {
        const char *key;
        int sig;
    } simple[] = {{PMIX_JOB_CTRL_KILL, SIGKILL},
                  {PMIX_JOB_CTRL_TERMINATE, SIGTERM},
                  {PMIX_JOB_CTRL_PAUSE, SIGSTOP},
                  {PMIX_JOB_CTRL_RESUME, SIGCONT}};
    static const char *const refused[] = {
        PMIX_JOB_CTRL_CHECKPOINT, PMIX_JOB_CTRL_CHECKPOINT_EVENT, PMIX_JOB_CTRL_RESTART,
        PMIX_JOB_CTRL_CANCEL,     PMIX_JOB_CTRL_PROVISION,        PMIX_JOB_CTRL_PREEMPTIBLE};
    int sig = 0;
    *why = NULL;
    for (size_t k = 0; k < n; k++) {
        const pmix_info_t *i = &dirs[k];
        if (is_key(i, PMIX_JOB_CTRL_SIGNAL)) {
            if (i->value.type != PMIX_INT || i->value.data.integer <= 0 ||
                i->value.data.integer >= NSIG) {
                *why = "PMIX_JOB_CTRL_SIGNAL wants a signal number (int)";
                return 0;
            }
            sig = i->value.data.integer;
            continue;
        }
        for (size_t s = 0; s < sizeof(simple) / sizeof(simple[0]); s++)
            if (is_key(i, simple[s].key) &&
                (i->value.type != PMIX_BOOL || i->value.data.flag))
                sig = simple[s].sig;
        for (size_t r = 0; r < sizeof(refused) / sizeof(refused[0]); r++)
            if (is_key(i, refused[r])) {
                *why = refused[r];
                return 0;
            }
    }
    if (sig == 0)
        *why = "no action (signal, kill, terminate, pause or resume)";
    return sig;
}

pmix_status_t tern_srv_job_control(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                                   size_t ntargets, const pmix_info_t directives[],
                                   size_t ndirs, pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    const char *why;
    int sig = wanted_signal(directives, ndirs, &why);
    if (sig == 0) {
        tern_srv_log(0, "PMIx job control from %s:%u: %s: not supported (ternrun sends "
                     "signals: PMIX_JOB_CTRL_SIGNAL, _KILL, _TERMINATE, _PAUSE, _RESUME)",
                     requestor->nspace, (unsigned)requestor->rank, why);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    if (tern_srv_hooks.signal == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    pmix_proc_t all;
    if (ntargets == 0 || targets == NULL) {
        PMIX_LOAD_PROCID(&all, requestor->nspace, PMIX_RANK_WILDCARD);
        targets = &all;
        ntargets = 1;
    }
    int rc = tern_srv_hooks.signal(tern_srv_hooks.ctx, targets, ntargets, sig);
    if (rc < 0) {
        tern_srv_log(0, "PMIx job control from %s:%u: a target is not a rank of this job",
                     requestor->nspace, (unsigned)requestor->rank);
        return PMIX_ERR_NOT_FOUND;
    }
    tern_srv_log(1, "PMIx job control from %s:%u: signal %d to %d rank(s)", requestor->nspace,
                 (unsigned)requestor->rank, sig, rc);
    if (cbfunc == NULL)
        return PMIX_OPERATION_SUCCEEDED;
    if (tern_srv_answer_info(cbfunc, cbdata, PMIX_SUCCESS, NULL, 0) == 0)
        return PMIX_SUCCESS;
    return PMIX_OPERATION_SUCCEEDED; /* sent; no thread to answer from: answered now */
}
