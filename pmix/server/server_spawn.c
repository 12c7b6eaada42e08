/*
 * tern PMIx host server: PMIx_Spawn.
 *
 * The request is checked and copied here, on PMIx's progress thread, and
 * handed to the host (hooks.spawn), which starts the new namespace from its
 * own thread and answers with tern_srv_spawn_done().  What is understood:
 *   per app     cmd, argv, env, cwd, maxprocs; info PMIX_WDIR, PMIX_PREFIX
 *   job info    PMIX_WDIR, PMIX_PREFIX (for apps without their own),
 *               PMIX_BINDTO "core" / "none",
 *               PMIX_MAPBY / PMIX_RANKBY (one node: every rank is on it,
 *               ranked in order; accepted),
 *               PMIX_FWD_STDOUT / STDERR / STDDIAG (the output goes through
 *               the host's IOF in any case: accepted)
 * Any other directive marked required (PMIX_INFO_REQD) refuses the spawn
 * with PMIX_ERR_NOT_SUPPORTED and a line naming it; others are ignored
 * (logged at verbose level 1).  A bad app (no command, maxprocs < 1) is
 * PMIX_ERR_BAD_PARAM.
 */
#include "pmix/server/server_internal.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool is_key(const pmix_info_t *info, const char *key)
{
    return PMIX_CHECK_KEY(info, key);
}

char **tern_srv_strv_dup(char *const *v)
{
    size_t n = 0;
    char **out;

    while (v != NULL && v[n] != NULL) {
        n++;
    }
    out = calloc(n + 1, sizeof(*out));
    for (size_t i = 0; out != NULL && i < n; i++) {
        if ((out[i] = strdup(v[i])) == NULL) {
            for (size_t j = 0; j < i; j++) {
                free(out[j]);
            }
            free(out);
            return NULL;
        }
    }
    return out;
}

static void strv_free(char **v)
{
    for (size_t i = 0; v != NULL && v[i] != NULL; i++) {
        free(v[i]);
    }
    free(v);
}

static void req_free(struct tern_srv_spawn *req)
{
    for (size_t a = 0; req->apps != NULL && a < req->napps; a++) {
        struct tern_srv_app *app = &req->apps[a];
        free(app->cmd);
        strv_free(app->argv);
        strv_free(app->env);
        free(app->wdir);
        free(app->prefix);
    }
    free(req->apps);
    free(req->bind);
    free(req);
}

void tern_srv_spawn_done(struct tern_srv_spawn *req, pmix_status_t status, const char *nspace)
{
    pmix_nspace_t ns;

    PMIX_LOAD_NSPACE(ns, status == PMIX_SUCCESS ? nspace : NULL);
    req->cbfunc(status, ns, req->cbdata);
    req_free(req);
}

/* a string directive's value, or NULL (wrong type: logged) */
static const char *str_value(const pmix_info_t *info)
{
    if (info->value.type == PMIX_STRING && info->value.data.string != NULL) {
        return info->value.data.string;
    }
    tern_srv_log(0, "PMIx spawn: %s must be a string: ignored", info->key);
    return NULL;
}

/* one directive of the job or of an app; false: refuse the spawn */
static bool take_directive(const pmix_info_t *info, char **wdir, char **prefix, char **bind,
                           bool job_level)
{
    const char *v;

    if (is_key(info, PMIX_WDIR) || is_key(info, PMIX_PREFIX)) {
        char **slot = is_key(info, PMIX_WDIR) ? wdir : prefix;
        if ((v = str_value(info)) != NULL) {
            free(*slot);
            *slot = strdup(v);
        }
        return true;
    }
    if (job_level && is_key(info, PMIX_BINDTO)) {
        if ((v = str_value(info)) == NULL) {
            return false;
        }
        /* "core", "core:overload-allowed", "none" ... : the policy part */
        size_t n = strcspn(v, ":");
        if (!(n == 4 && strncmp(v, "core", 4) == 0) && !(n == 4 && strncmp(v, "none", 4) == 0)) {
            tern_srv_log(0, "PMIx spawn: binding '%s' is not supported (core or none)", v);
            return false;
        }
        free(*bind);
        *bind = strndup(v, n);
        return true;
    }
    if (job_level && (is_key(info, PMIX_MAPBY) || is_key(info, PMIX_RANKBY) ||
                      is_key(info, PMIX_FWD_STDOUT) || is_key(info, PMIX_FWD_STDERR) ||
                      is_key(info, PMIX_FWD_STDDIAG))) {
        tern_srv_log(2, "PMIx spawn: %s accepted (one node; output goes through ternrun)",
                     info->key);
        return true;
    }
    if (PMIX_INFO_IS_REQUIRED(info)) {
        tern_srv_log(0, "PMIx spawn: required directive %s is not supported: spawn refused",
                     info->key);
        return false;
    }
    tern_srv_log(1, "PMIx spawn: directive %s ignored", info->key);
    return true;
}

pmix_status_t tern_srv_spawn(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                             const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                             void *cbdata)
{
    char *wdir = NULL, *prefix = NULL;
    struct tern_srv_spawn *req;
    pmix_status_t rc = PMIX_ERR_NOMEM;

    if (cbfunc == NULL || tern_srv_hooks.spawn == NULL) {
        tern_srv_log(0, "PMIx spawn requested by %s:%u: this server cannot start processes",
                     proc->nspace, (unsigned)proc->rank);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    if (napps == 0 || apps == NULL) {
        tern_srv_log(0, "PMIx spawn from %s:%u without any app", proc->nspace,
                     (unsigned)proc->rank);
        return PMIX_ERR_BAD_PARAM;
    }
    req = calloc(1, sizeof(*req));
    if (req == NULL || (req->apps = calloc(napps, sizeof(*req->apps))) == NULL) {
        free(req);
        return PMIX_ERR_NOMEM;
    }
    req->requester = *proc;
    req->napps = napps;
    req->cbfunc = cbfunc;
    req->cbdata = cbdata;
    for (size_t i = 0; i < ninfo; i++) {
        if (!take_directive(&job_info[i], &wdir, &prefix, &req->bind, true)) {
            rc = PMIX_ERR_NOT_SUPPORTED;
            goto fail;
        }
    }
    for (size_t a = 0; a < napps; a++) {
        const pmix_app_t *in = &apps[a];
        struct tern_srv_app *app = &req->apps[a];

        if (in->cmd == NULL || in->cmd[0] == '\0' || in->maxprocs < 1) {
            tern_srv_log(0, "PMIx spawn from %s:%u: app %zu has %s", proc->nspace,
                         (unsigned)proc->rank, a,
                         in->maxprocs < 1 ? "maxprocs < 1" : "no command");
            rc = PMIX_ERR_BAD_PARAM;
            goto fail;
        }
        if (in->maxprocs > 4096 - req->nprocs) {
            tern_srv_log(0, "PMIx spawn from %s:%u: %d processes asked: too many",
                         proc->nspace, (unsigned)proc->rank, req->nprocs + in->maxprocs);
            rc = PMIX_ERR_JOB_INSUFFICIENT_RESOURCES;
            goto fail;
        }
        app->maxprocs = in->maxprocs;
        req->nprocs += in->maxprocs;
        if ((app->cmd = strdup(in->cmd)) == NULL) {
            goto fail;
        }
        if (in->argv != NULL && in->argv[0] != NULL) {
            app->argv = tern_srv_strv_dup(in->argv);
        } else {
            char *one[] = {in->cmd, NULL};
            app->argv = tern_srv_strv_dup(one);
        }
        app->env = tern_srv_strv_dup(in->env);
        if (app->argv == NULL || app->env == NULL) {
            goto fail;
        }
        for (size_t i = 0; i < in->ninfo; i++) {
            if (!take_directive(&in->info[i], &app->wdir, &app->prefix, &req->bind, false)) {
                rc = PMIX_ERR_NOT_SUPPORTED;
                goto fail;
            }
        }
        if (app->wdir == NULL) {
            const char *w = wdir != NULL ? wdir : in->cwd;
            if (w != NULL && w[0] != '\0' && (app->wdir = strdup(w)) == NULL) {
                goto fail;
            }
        }
        if (app->prefix == NULL && prefix != NULL && (app->prefix = strdup(prefix)) == NULL) {
            goto fail;
        }
    }
    free(wdir);
    free(prefix);
    tern_srv_log(1, "PMIx spawn from %s:%u: %zu app(s), %d process(es)", proc->nspace,
                 (unsigned)proc->rank, napps, req->nprocs);
    if (tern_srv_hooks.spawn(tern_srv_hooks.ctx, req) == 0) {
        return PMIX_SUCCESS;
    }
    rc = PMIX_ERR_OUT_OF_RESOURCE;
fail:
    free(wdir);
    free(prefix);
    req_free(req);
    return rc;
}
