/*
 * PMIx_Spawn: a rank (or a tool) asks ternrun to start a new job.
 *
 * The request arrives on PMIx's progress thread (pmix/server/server_spawn.c
 * has checked and copied it); ternrun_spawn_request queues it and wakes the
 * main thread, which starts it between two rounds of its event loop
 * (ternrun_spawn_run_pending) and answers the client from there, never from
 * inside a PMIx upcall.
 *
 * All or nothing: the programs and working directories are checked before
 * anything starts; if a rank then cannot be started (fork, exec), the ones
 * already started are taken out of the PMIx server and killed, and the
 * client gets the error (PMIX_ERR_JOB_EXE_NOT_FOUND, _WDIR_NOT_FOUND,
 * _FAILED_TO_LAUNCH ...) with a line on ternrun's stderr naming the cause.
 * A spawned job gets the first job's environment (ternrun's, with -x),
 * then its apps' env entries; its output goes through the IOF engine like
 * the first job's, tagged "[job.rank,stream]"; its stdin is /dev/null.
 */
#include "launcher/job.h"
#include "pmix/server/server_module.h"

#include <pmix.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ternrun_spawn_request(void *ctx, struct tern_srv_spawn *req)
{
    struct ternrun_job *job = ctx;
    struct tern_srv_spawn **tail;

    req->next = NULL;
    pthread_mutex_lock(&job->lock);
    for (tail = &job->spawn_queue; *tail != NULL; tail = &(*tail)->next) {
    }
    *tail = req;
    pthread_mutex_unlock(&job->lock);
    ternrun_monitor_wake(job);
    return 0;
}

/* "<prefix>/<sub>:<old>" set as name in env */
static int prepend_path(char ***env, const char *name, const char *prefix, const char *sub)
{
    const char *old = ternrun_env_get(*env, name);
    size_t len = strlen(prefix) + strlen(sub) + (old ? strlen(old) : 0) + 3;
    char *v = malloc(len);
    int rc;

    if (v == NULL) {
        return -1;
    }
    snprintf(v, len, "%s/%s%s%s", prefix, sub, old && *old ? ":" : "", old && *old ? old : "");
    rc = ternrun_env_set(env, name, v);
    free(v);
    return rc;
}

/* the program of app: with a prefix, <prefix>/bin first */
static char *find_app_program(const struct tern_srv_app *app, int *err)
{
    if (app->prefix != NULL && strchr(app->cmd, '/') == NULL) {
        char path[4096];

        snprintf(path, sizeof(path), "%s/bin/%s", app->prefix, app->cmd);
        if (access(path, X_OK) == 0) {
            return strdup(path);
        }
    }
    return ternrun_find_program(app->cmd, err);
}

/* environment of a rank of app: the first job's, then the app's entries */
static char **app_env(struct ternrun_job *job, const struct tern_srv_app *app)
{
    char **env = ternrun_env_build(&job->opt);

    for (size_t i = 0; env != NULL && app->env[i] != NULL; i++) {
        char *eq = strchr(app->env[i], '=');
        char name[256];

        if (eq == NULL || eq == app->env[i] || (size_t)(eq - app->env[i]) >= sizeof(name)) {
            continue; /* not NAME=value: nothing to set */
        }
        snprintf(name, sizeof(name), "%.*s", (int)(eq - app->env[i]), app->env[i]);
        if (ternrun_env_set(&env, name, eq + 1) != 0) {
            ternrun_env_free(env);
            return NULL;
        }
    }
    if (env != NULL && app->prefix != NULL &&
        (prepend_path(&env, "PATH", app->prefix, "bin") != 0 ||
         prepend_path(&env, "LD_LIBRARY_PATH", app->prefix, "lib") != 0)) {
        ternrun_env_free(env);
        return NULL;
    }
    return env;
}

/* check every app and tie the ranks to their program, argv and wdir (under
 * job->lock: PMIx queries read them, the namespace being listed) */
static pmix_status_t prepare_apps(struct ternrun_job *job, struct ternrun_ns *ns,
                                  struct tern_srv_spawn *req)
{
    int rank = 0;

    for (size_t a = 0; a < req->napps; a++) {
        struct tern_srv_app *app = &req->apps[a];
        struct stat st;
        char *exe, *wdir = NULL;
        int err = 0;

        exe = ternrun_ns_keep(ns, find_app_program(app, &err));
        if (exe == NULL) {
            ternrun_err("spawn from %s:%u: cannot run '%s': %s", req->requester.nspace,
                        (unsigned)req->requester.rank, app->cmd,
                        err == ENOENT ? "command not found" : strerror(err ? err : ENOMEM));
            return err == ENOENT || err == 0 ? PMIX_ERR_JOB_EXE_NOT_FOUND
                                             : PMIX_ERR_JOB_FAILED_TO_LAUNCH;
        }
        if (app->wdir != NULL) {
            int e = stat(app->wdir, &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : 0;
            if (e != 0) {
                ternrun_err("spawn from %s:%u: working directory %s: %s", req->requester.nspace,
                            (unsigned)req->requester.rank, app->wdir, strerror(e));
                return PMIX_ERR_JOB_WDIR_NOT_FOUND;
            }
            if ((wdir = ternrun_ns_keep(ns, strdup(app->wdir))) == NULL) {
                return PMIX_ERR_NOMEM;
            }
        }
        pthread_mutex_lock(&job->lock);
        if (ternrun_ns_keep_argv(ns, app->argv) != 0) {
            pthread_mutex_unlock(&job->lock);
            return PMIX_ERR_NOMEM;
        }
        char **argv = app->argv;
        app->argv = NULL; /* now the namespace's */
        for (int i = 0; i < app->maxprocs; i++, rank++) {
            struct ternrun_rank *r = &ns->ranks[rank];
            r->exe = exe;
            r->argv = argv;
            r->wdir = wdir;
            r->appnum = (int)a;
        }
        pthread_mutex_unlock(&job->lock);
    }
    return PMIX_SUCCESS;
}

/* kill what a failed spawn started; the monitor reaps them as collateral */
static void undo(struct ternrun_job *job, struct ternrun_ns *ns)
{
    ternrun_pmix_release_running(job, ns);
    pthread_mutex_lock(&job->lock);
    for (int i = 0; i < ns->nranks; i++) {
        struct ternrun_rank *r = &ns->ranks[i];
        if (r->state == TERNRUN_RANK_RUNNING) {
            kill(r->own_pgrp ? -r->pid : r->pid, SIGKILL);
            r->signalled_by_us = true;
        }
    }
    pthread_mutex_unlock(&job->lock);
}

/* Returns the number of processes forked (to be reaped). */
static int run_one(struct ternrun_job *job, struct tern_srv_spawn *req)
{
    struct ternrun_ns *ns;
    pmix_status_t st;
    int parent = -1, forked = 0, running = 0;

    pthread_mutex_lock(&job->lock);
    for (int k = 0; k < job->nns; k++) {
        if (strncmp(job->ns[k]->name, req->requester.nspace, PMIX_MAX_NSLEN) == 0) {
            parent = k;
        }
    }
    pthread_mutex_unlock(&job->lock);
    if (parent >= 0 && job->ns[parent]->phase != TERNRUN_PHASE_RUN) {
        ternrun_err("spawn from %s:%u refused: its job is being ended", req->requester.nspace,
                    (unsigned)req->requester.rank);
        tern_srv_spawn_done(req, PMIX_ERR_JOB_CANCELED, NULL);
        return 0;
    }
    ns = ternrun_ns_add(job, req->nprocs, parent);
    if (ns == NULL) {
        tern_srv_spawn_done(req, PMIX_ERR_JOB_INSUFFICIENT_RESOURCES, NULL);
        return 0;
    }
    ns->parent_rank = req->requester.rank;
    st = prepare_apps(job, ns, req);
    if (st == PMIX_SUCCESS && ternrun_bind_assign(job, ns, req->bind) != 0) {
        st = PMIX_ERR_NOT_SUPPORTED;
    }
    if (st == PMIX_SUCCESS && ternrun_stdio_add_ns(job, ns) != 0) {
        st = PMIX_ERR_JOB_FAILED_TO_LAUNCH;
    }
    if (st == PMIX_SUCCESS && ternrun_pmix_register_nspace(job, ns) != 0) {
        st = PMIX_ERR_JOB_FAILED_TO_LAUNCH;
    }
    for (int i = 0; i < ns->nranks && st == PMIX_SUCCESS; i++) {
        struct ternrun_rank *r = &ns->ranks[i];
        int rc;

        r->env = app_env(job, &req->apps[r->appnum]);
        if (r->env == NULL || ternrun_pmix_prepare_rank(job, r) != 0 ||
            ternrun_stdio_prepare_rank(job, r) != 0) {
            st = PMIX_ERR_JOB_FAILED_TO_LAUNCH;
            break;
        }
        rc = ternrun_spawn_rank(job, r);
        if (r->state == TERNRUN_RANK_RUNNING) {
            forked++; /* to be reaped, exec'd or not */
        }
        if (rc != 0) {
            st = rc == 127 ? PMIX_ERR_JOB_EXE_NOT_FOUND : PMIX_ERR_JOB_FAILED_TO_LAUNCH;
        } else {
            running++;
        }
    }
    if (st != PMIX_SUCCESS) {
        ternrun_err("spawn from %s:%u failed (%s): %d of its %d process(es) were running, "
                    "killed", req->requester.nspace, (unsigned)req->requester.rank,
                    PMIx_Error_string(st), running, ns->nranks);
        undo(job, ns);
        tern_srv_spawn_done(req, st, NULL);
        return forked;
    }
    ternrun_vlog(1, "spawned %s: %d rank(s) for %s:%u", ns->name, ns->nranks,
                 req->requester.nspace, (unsigned)req->requester.rank);
    tern_srv_spawn_done(req, PMIX_SUCCESS, ns->name);
    return forked;
}

/* the queued requests, in arrival order; the queue is left empty */
static struct tern_srv_spawn *take_queue(struct ternrun_job *job)
{
    struct tern_srv_spawn *q;

    pthread_mutex_lock(&job->lock);
    q = job->spawn_queue;
    job->spawn_queue = NULL;
    pthread_mutex_unlock(&job->lock);
    return q;
}

int ternrun_spawn_run_pending(struct ternrun_job *job)
{
    struct tern_srv_spawn *q = take_queue(job);
    int forked = 0;

    while (q != NULL) {
        struct tern_srv_spawn *next = q->next;
        forked += run_one(job, q);
        q = next;
    }
    return forked;
}

void ternrun_spawn_refuse_pending(struct ternrun_job *job)
{
    struct tern_srv_spawn *q = take_queue(job);

    while (q != NULL) {
        struct tern_srv_spawn *next = q->next;
        tern_srv_spawn_done(q, PMIX_ERR_JOB_CANCELED, NULL);
        q = next;
    }
}
