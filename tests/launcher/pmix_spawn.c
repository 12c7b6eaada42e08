/*
 * pmix_spawn: a raw PMIx client for PMIx_Spawn under ternrun.
 *
 *   pmix_spawn parent N DIR   rank 0 spawns N copies of itself ("child") with
 *                             PMIX_WDIR DIR and SPAWN_VAR=from-parent in their
 *                             env; the parent's ranks then PMIx_Connect with the
 *                             new namespace, read the children's key
 *                             "spawn.child" (rank 0 of the children), and
 *                             disconnect.  Children: check PMIX_PARENT_ID, cwd
 *                             and env, put "spawn.child", fence, connect, read
 *                             the parent's "spawn.parent", disconnect.  Prints
 *                             "child R of N" and "ok spawn rank R" lines
 *   pmix_spawn badexe         rank 0 spawns a command that does not exist:
 *                             PMIX_ERR_JOB_EXE_NOT_FOUND, "ok badexe"
 *   pmix_spawn badwdir        PMIX_WDIR that does not exist:
 *                             PMIX_ERR_JOB_WDIR_NOT_FOUND, "ok badwdir"
 *   pmix_spawn partial BAD    two apps: 2 sleepers ("sleeper"), then BAD (an
 *                             executable that exec refuses): the spawn fails,
 *                             the sleepers are killed; "ok partial"
 *   pmix_spawn mpmd           rank 0 spawns two apps of one rank each, "idle
 *                             one" and "idle two"; PMIX_QUERY_NAMESPACE_INFO
 *                             of the new namespace (PMIX_NSPACE qualifier,
 *                             refreshed: ternrun answers) must give the
 *                             command line "SELF idle one : SELF idle two",
 *                             and of its own namespace its argv; "ok mpmd"
 *   pmix_spawn childfail      rank 0 spawns 2 "failer" children, rank 1 of
 *                             which exits with status 3; the parent waits
 *                             (bounded) until the proc table shows both ended,
 *                             checks it got PMIX_ERR_EXIT_NONZERO_TERM and
 *                             PMIX_ERR_PROC_ABORTED for child 1,
 *                             PMIX_ERR_PROC_KILLED_BY_CMD (and no
 *                             PMIX_ERR_PROC_ABORTED) for child 0, torn down
 *                             by ternrun, and PMIX_EVENT_JOB_END with status
 *                             3, and prints "ok childfail"
 *
 * Every check prints "FAIL: ..." and makes the exit status 1.
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <pmix.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/pmix_get.h"
#include "tests/pmix_query.h"

static char self[4096];

/* events the parent got about its children (childfail) */
static _Atomic int ev_nonzero, ev_job_end, ev_job_status = -1, ev_killed, ev_aborted;
static char ev_nonzero_from[PMIX_MAX_NSLEN + 16], ev_aborted_from[PMIX_MAX_NSLEN + 16];

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)source, (void)results, (void)nresults;
    for (size_t i = 0; i < ninfo; i++) {
        if ((status == PMIX_ERR_EXIT_NONZERO_TERM || status == PMIX_ERR_PROC_ABORTED) &&
            PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC)
            snprintf(status == PMIX_ERR_PROC_ABORTED ? ev_aborted_from : ev_nonzero_from,
                     sizeof(ev_nonzero_from), "%s:%u", info[i].value.data.proc->nspace,
                     (unsigned)info[i].value.data.proc->rank);
        if (status == PMIX_EVENT_JOB_END && PMIX_CHECK_KEY(&info[i], PMIX_JOB_TERM_STATUS))
            ev_job_status = info[i].value.data.status;
    }
    if (status == PMIX_ERR_EXIT_NONZERO_TERM)
        ev_nonzero++;
    else if (status == PMIX_EVENT_JOB_END)
        ev_job_end++;
    else if (status == PMIX_ERR_PROC_KILLED_BY_CMD)
        ev_killed++;
    else if (status == PMIX_ERR_PROC_ABORTED)
        ev_aborted++;
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void sleep_ms(int ms)
{
    usleep((useconds_t)ms * 1000);
}

static pmix_status_t spawn(pmix_app_t *apps, size_t napps, pmix_info_t *info, size_t ninfo,
                           char *nspace)
{
    pmix_nspace_t ns = {0};
    pmix_status_t rc = PMIx_Spawn(info, ninfo, apps, napps, ns);
    if (nspace != NULL)
        snprintf(nspace, PMIX_MAX_NSLEN + 1, "%s", ns);
    return rc;
}

static void app_of(pmix_app_t *app, const char *mode, int n, char **env)
{
    PMIX_APP_CONSTRUCT(app);
    app->cmd = strdup(self);
    app->argv = calloc(4, sizeof(char *)); /* room for one more argument */
    app->argv[0] = strdup(self);
    app->argv[1] = strdup(mode);
    app->env = env;
    app->maxprocs = n;
}

static int connect_with(const char *other)
{
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[1], other, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Connect(procs, 2, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Connect with %s: %s", other, PMIx_Error_string(rc));
        return -1;
    }
    return 0;
}

static void disconnect_from(const char *other)
{
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[1], other, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Disconnect(procs, 2, NULL, 0);
    if (rc != PMIX_SUCCESS)
        fail("PMIx_Disconnect from %s: %s", other, PMIx_Error_string(rc));
}

static char *get_string_of(const char *nspace, pmix_rank_t rank, const char *key)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    PMIX_LOAD_PROCID(&p, nspace, rank);
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_STRING) {
        fail("PMIx_Get(%s:%u, %s): %s", nspace, (unsigned)rank, key, PMIx_Error_string(rc));
        return NULL;
    }
    char *s = strdup(v->data.string);
    PMIX_VALUE_RELEASE(v);
    return s;
}

static void put_string(const char *key, const char *val)
{
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, val, PMIX_STRING);
    if (PMIx_Put(PMIX_GLOBAL, key, &v) != PMIX_SUCCESS || PMIx_Commit() != PMIX_SUCCESS)
        fail("put %s", key);
    PMIX_VALUE_DESTRUCT(&v);
}

/* the namespace rank 0 spawned, shared with the job through a fence */
static int share_nspace(char *nspace)
{
    if (me.rank == 0)
        put_string("spawn.nspace", nspace);
    pmix_info_t coll;
    bool yes = true;
    PMIX_INFO_LOAD(&coll, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, &coll, 1);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence: %s", PMIx_Error_string(rc));
        return -1;
    }
    if (me.rank != 0) {
        char *s = get_string_of(me.nspace, 0, "spawn.nspace");
        if (s == NULL)
            return -1;
        snprintf(nspace, PMIX_MAX_NSLEN + 1, "%s", s);
        free(s);
    }
    return 0;
}

static void cmd_parent(int n, const char *dir)
{
    char child[PMIX_MAX_NSLEN + 1] = "";
    put_string("spawn.parent", "parent-value");
    if (me.rank == 0) {
        char **env = calloc(2, sizeof(char *));
        env[0] = strdup("SPAWN_VAR=from-parent");
        pmix_app_t app;
        app_of(&app, "child", n, env);
        pmix_info_t info;
        PMIX_INFO_LOAD(&info, PMIX_WDIR, dir, PMIX_STRING);
        pmix_status_t rc = spawn(&app, 1, &info, 1, child);
        PMIX_INFO_DESTRUCT(&info);
        PMIX_APP_DESTRUCT(&app);
        if (rc != PMIX_SUCCESS || child[0] == '\0') {
            fail("PMIx_Spawn: %s", PMIx_Error_string(rc));
            child[0] = '\0';
        } else if (strcmp(child, me.nspace) == 0) {
            fail("spawned namespace %s is the parent's", child);
        }
        printf("spawned %s\n", child);
    }
    if (share_nspace(child) != 0 || child[0] == '\0')
        return;
    if (connect_with(child) != 0)
        return;
    char *v = get_string_of(child, 0, "spawn.child");
    if (v != NULL && strcmp(v, "child-0") != 0)
        fail("child key: '%s'", v);
    free(v);
    disconnect_from(child);
    printf("ok spawn rank %u\n", (unsigned)me.rank);
}

static void cmd_child(void)
{
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    char parent[PMIX_MAX_NSLEN + 1] = "";
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_PARENT_ID, NULL, 0, &v) != PMIX_SUCCESS || v == NULL ||
        v->type != PMIX_PROC) {
        fail("no PMIX_PARENT_ID");
    } else {
        snprintf(parent, sizeof(parent), "%s", v->data.proc->nspace);
        if (v->data.proc->rank != 0)
            fail("parent rank %u, want 0", (unsigned)v->data.proc->rank);
        PMIX_VALUE_RELEASE(v);
    }
    long size = get_uint(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    char cwd[4096] = "";
    if (getcwd(cwd, sizeof(cwd)) == NULL)
        fail("getcwd: %s", strerror(errno));
    const char *var = getenv("SPAWN_VAR");
    printf("child %u of %ld cwd %s var %s\n", (unsigned)me.rank, size, cwd, var ? var : "(unset)");
    fflush(stdout);
    char val[32];
    snprintf(val, sizeof(val), "child-%u", (unsigned)me.rank);
    put_string("spawn.child", val);
    if (PMIx_Fence(NULL, 0, NULL, 0) != PMIX_SUCCESS)
        fail("child fence");
    if (parent[0] == '\0' || connect_with(parent) != 0)
        return;
    char *pv = get_string_of(parent, 0, "spawn.parent");
    if (pv != NULL && strcmp(pv, "parent-value") != 0)
        fail("parent key: '%s'", pv);
    free(pv);
    disconnect_from(parent);
}

static void expect_spawn_error(const char *what, pmix_app_t *app, pmix_info_t *info, size_t ninfo,
                               pmix_status_t want, size_t napps)
{
    pmix_status_t rc = spawn(app, napps, info, ninfo, NULL);
    if (rc != want)
        fail("%s: PMIx_Spawn returned %s, want %s", what, PMIx_Error_string(rc),
             PMIx_Error_string(want));
    else
        printf("ok %s (%s)\n", what, PMIx_Error_string(rc));
}

/* all ranks of nspace ended, within ~20 s */
static bool wait_ended(const char *nspace, int n)
{
    for (int tries = 0; tries < 200; tries++) {
        pmix_query_t q;
        PMIX_QUERY_CONSTRUCT(&q);
        char *keys[] = {PMIX_QUERY_PROC_TABLE, NULL};
        q.keys = keys;
        pmix_info_t qual;
        PMIX_INFO_LOAD(&qual, PMIX_NSPACE, nspace, PMIX_STRING);
        q.qualifiers = &qual;
        q.nqual = 1;
        pmix_info_t *res = NULL;
        size_t nres = 0;
        pmix_status_t rc = PMIx_Query_info(&q, 1, &res, &nres);
        int ended = 0;
        if (rc == PMIX_SUCCESS && nres == 1 && PMIX_CHECK_KEY(&res[0], PMIX_QUERY_PROC_TABLE) &&
            res[0].value.type == PMIX_DATA_ARRAY && res[0].value.data.darray != NULL &&
            res[0].value.data.darray->type == PMIX_PROC_INFO) {
            pmix_data_array_t *pt = res[0].value.data.darray;
            pmix_proc_info_t *pi = pt->array;
            for (size_t k = 0; k < pt->size; k++)
                ended += pi[k].state >= PMIX_PROC_STATE_TERMINATED;
        }
        PMIX_INFO_FREE(res, nres);
        PMIX_INFO_DESTRUCT(&qual);
        q.keys = NULL;
        q.qualifiers = NULL;
        q.nqual = 0;
        if (ended == n)
            return true;
        sleep_ms(100);
    }
    return false;
}

/* the PMIX_CMD_LINE of the one namespace of a namespace info answer */
static void keep_cmdline(const char *ns, const char *cmd, void *arg)
{
    (void)ns;
    char **out = arg;
    free(*out);
    *out = cmd != NULL ? strdup(cmd) : NULL;
}

/* PMIX_CMD_LINE of nspace by PMIx_Query_info (PMIX_QUERY_NAMESPACE_INFO,
 * PMIX_NSPACE qualifier, refreshed: ternrun's answer), malloc'd, or NULL
 * (and a failure) */
static char *cmdline_of(const char *nspace)
{
    static const char *const keys[] = {PMIX_QUERY_NAMESPACE_INFO, NULL};
    static const pmix_data_type_t types[] = {PMIX_DATA_ARRAY};
    pmix_query_t *q;
    pmix_status_t rc;
    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACE_INFO);
    PMIX_QUERY_QUALIFIERS_CREATE(&q[0], 1);
    PMIX_INFO_LOAD(&q[0].qualifiers[0], PMIX_NSPACE, nspace, PMIX_STRING);
    query_refresh(q);
    pmix_info_t *res = NULL;
    size_t nres = 0;
    char *cmd = NULL;
    rc = PMIx_Query_info(q, 1, &res, &nres);
    if (query_expect_flat("namespace info", rc, res, nres, keys, types)) {
        const pmix_data_array_t *outer = res[0].value.data.darray;
        if (outer == NULL || outer->size != 1)
            fail("namespace info of %s: %zu namespaces", nspace, outer ? outer->size : 0);
        else if (query_nsinfo("namespace info", &res[0].value, keep_cmdline, &cmd) && cmd == NULL)
            fail("namespace info of %s: no PMIX_CMD_LINE", nspace);
    }
    PMIX_INFO_FREE(res, nres);
    PMIX_QUERY_FREE(q, 1);
    return cmd;
}

static void cmd_mpmd(int argc, char **argv)
{
    pmix_app_t apps[2];
    char child[PMIX_MAX_NSLEN + 1] = "", want[3 * sizeof(self)];
    app_of(&apps[0], "idle", 1, NULL);
    apps[0].argv[2] = strdup("one");
    app_of(&apps[1], "idle", 1, NULL);
    apps[1].argv[2] = strdup("two");
    pmix_status_t rc = spawn(apps, 2, NULL, 0, child);
    PMIX_APP_DESTRUCT(&apps[0]);
    PMIX_APP_DESTRUCT(&apps[1]);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Spawn of two apps: %s", PMIx_Error_string(rc));
        return;
    }
    char *cmd = cmdline_of(child);
    snprintf(want, sizeof(want), "%s idle one : %s idle two", self, self);
    if (cmd != NULL && strcmp(cmd, want) != 0)
        fail("command line of %s: \"%s\", expected \"%s\"", child, cmd, want);
    free(cmd);
    cmd = cmdline_of(me.nspace); /* ternrun's command line: this rank's argv */
    want[0] = '\0';
    for (int i = 0, off = 0; i < argc && off < (int)sizeof(want); i++)
        off += snprintf(want + off, sizeof(want) - (size_t)off, i ? " %s" : "%s", argv[i]);
    if (cmd != NULL && strcmp(cmd, want) != 0)
        fail("command line of %s: \"%s\", expected \"%s\"", me.nspace, cmd, want);
    free(cmd);
    if (failures == 0)
        printf("ok mpmd\n");
}

int main(int argc, char **argv)
{
    pmix_status_t rc;
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len <= 0 || argc < 2) {
        fprintf(stderr,
                "usage: pmix_spawn parent|child|badexe|badwdir|partial|mpmd|childfail ...\n");
        return 2;
    }
    self[len] = '\0';
    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("FAIL: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    const char *mode = argv[1];
    if (strcmp(mode, "parent") == 0 && argc == 4) {
        cmd_parent(atoi(argv[2]), argv[3]);
    } else if (strcmp(mode, "child") == 0) {
        cmd_child();
    } else if (strcmp(mode, "badexe") == 0) {
        pmix_app_t app;
        PMIX_APP_CONSTRUCT(&app);
        app.cmd = strdup("/nonexistent/tern-no-such-program");
        app.maxprocs = 1;
        expect_spawn_error("badexe", &app, NULL, 0, PMIX_ERR_JOB_EXE_NOT_FOUND, 1);
        PMIX_APP_DESTRUCT(&app);
    } else if (strcmp(mode, "badwdir") == 0) {
        pmix_app_t app;
        app_of(&app, "child", 1, NULL);
        pmix_info_t info;
        PMIX_INFO_LOAD(&info, PMIX_WDIR, "/nonexistent/tern-no-such-dir", PMIX_STRING);
        expect_spawn_error("badwdir", &app, &info, 1, PMIX_ERR_JOB_WDIR_NOT_FOUND, 1);
        PMIX_INFO_DESTRUCT(&info);
        PMIX_APP_DESTRUCT(&app);
    } else if (strcmp(mode, "partial") == 0 && argc == 3) {
        pmix_app_t apps[2];
        app_of(&apps[0], "sleeper", 2, NULL);
        PMIX_APP_CONSTRUCT(&apps[1]);
        apps[1].cmd = strdup(argv[2]);
        apps[1].maxprocs = 1;
        expect_spawn_error("partial", apps, NULL, 0, PMIX_ERR_JOB_FAILED_TO_LAUNCH, 2);
        PMIX_APP_DESTRUCT(&apps[0]);
        PMIX_APP_DESTRUCT(&apps[1]);
    } else if (strcmp(mode, "sleeper") == 0) {
        printf("sleeper %u up\n", (unsigned)me.rank);
        fflush(stdout);
        for (int i = 0; i < 300; i++)
            sleep_ms(100);
        printf("FAIL: sleeper %u outlived its failed spawn\n", (unsigned)me.rank);
        return 1;
    } else if (strcmp(mode, "mpmd") == 0) {
        cmd_mpmd(argc, argv);
    } else if (strcmp(mode, "idle") == 0) {
        /* a rank of an app of mpmd: nothing to do */
    } else if (strcmp(mode, "childfail") == 0) {
        pmix_app_t app;
        char child[PMIX_MAX_NSLEN + 1] = "";
        pmix_status_t codes[] = {PMIX_ERR_EXIT_NONZERO_TERM, PMIX_EVENT_JOB_END,
                                 PMIX_ERR_PROC_KILLED_BY_CMD, PMIX_ERR_PROC_ABORTED};
        rc = PMIx_Register_event_handler(codes, 4, NULL, 0, on_event, NULL, NULL);
        if (rc < 0)
            fail("PMIx_Register_event_handler: %s", PMIx_Error_string(rc));
        app_of(&app, "failer", 2, NULL);
        rc = spawn(&app, 1, NULL, 0, child);
        PMIX_APP_DESTRUCT(&app);
        if (rc != PMIX_SUCCESS)
            fail("PMIx_Spawn: %s", PMIx_Error_string(rc));
        else if (!wait_ended(child, 2))
            fail("the failed child job did not end");
        for (int i = 0; i < 100 && (ev_nonzero == 0 || ev_job_end == 0 || ev_killed == 0); i++)
            sleep_ms(100);
        printf("events: exit-nonzero %d from %s, job-end %d status %d, killed %d, "
               "PMIx 3 aborted %d from %s\n",
               ev_nonzero, ev_nonzero_from, ev_job_end, ev_job_status, ev_killed, ev_aborted,
               ev_aborted_from);
        char want[PMIX_MAX_NSLEN + 16];
        snprintf(want, sizeof(want), "%s:1", child);
        if (ev_nonzero != 1 || strcmp(ev_nonzero_from, want) != 0)
            fail("PMIX_ERR_EXIT_NONZERO_TERM: %d, from '%s' (want 1 from %s)", ev_nonzero,
                 ev_nonzero_from, want);
        if (ev_job_end != 1 || ev_job_status != 3)
            fail("PMIX_EVENT_JOB_END: %d, status %d (want 1, 3)", ev_job_end, ev_job_status);
        /* child 0, torn down by ternrun: the precise code only; the PMIx 3
         * name once, for the failure */
        if (ev_killed != 1)
            fail("PMIX_ERR_PROC_KILLED_BY_CMD: %d (want 1: child 0 torn down)", ev_killed);
        if (ev_aborted != 1 || strcmp(ev_aborted_from, want) != 0)
            fail("PMIX_ERR_PROC_ABORTED: %d, from '%s' (want 1 from %s: the failure, not "
                 "the teardown)",
                 ev_aborted, ev_aborted_from, want);
        if (failures == 0)
            printf("ok childfail\n");
    } else if (strcmp(mode, "failer") == 0) {
        if (me.rank == 1) {
            printf("failer 1 exits 3\n");
            fflush(stdout);
            _exit(3);
        }
        for (int i = 0; i < 300; i++) /* killed when its job fails */
            sleep_ms(100);
        printf("FAIL: failer %u outlived its job's failure\n", (unsigned)me.rank);
        return 1;
    } else {
        fail("unknown mode %s", mode);
    }
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS)
        fail("PMIx_Finalize: %s", PMIx_Error_string(rc));
    return failures ? 1 : 0;
}
