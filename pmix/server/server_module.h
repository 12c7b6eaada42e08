/*
 * tern PMIx host-server module (single node).
 *
 * The module table handed to PMIx_server_init().  PMIx calls its functions on
 * its own progress thread; everything they share with the host (the
 * publish/lookup table, the hooks below) is guarded here or by the host.
 *
 *   client_connected / client_finalized  -> hooks, then release the client
 *   abort                                -> hook (the host kills the job)
 *   fence_nb                             -> one node: the local data is all
 *                                           the data, handed straight back
 *   direct_modex                         -> PMIX_ERR_NOT_FOUND (no remote
 *                                           servers to ask)
 *   publish / lookup / unpublish         -> in-memory table; lookup honours
 *                                           PMIX_WAIT and PMIX_TIMEOUT
 *   log                                  -> stdout, stderr, syslog
 *                                           (server_log.c)
 *   query                                -> namespaces, proc tables, job
 *                                           size, server URI, psets /
 *                                           groups (none), spawn / debug
 *                                           support (none) (server_query.c)
 *   job control                          -> signals (server_jobctl.c)
 *   register / deregister / notify       -> done at once (one node: the
 *   events                                  PMIx library delivers locally)
 *   connect / disconnect, group          -> among the host's namespaces:
 *   construct / destruct                    done at once (server_connect.c)
 *   spawn                                -> checked, copied and handed to the
 *                                           host (server_spawn.c)
 *   listener                             -> PMIX_ERR_NOT_SUPPORTED (PMIx runs
 *                                           its own)
 *
 * Used by ternrun only; not part of libtern.
 */
#ifndef TERN_PMIX_SERVER_MODULE_H
#define TERN_PMIX_SERVER_MODULE_H

#include <pmix_server.h>
#include <stdbool.h>

/* One rank of the host's job, for PMIX_QUERY_PROC_TABLE. */
struct tern_srv_proc {
    pmix_rank_t rank;
    pid_t pid;             /* 0: not started */
    const char *exe;       /* its program (the host's string, valid as long as the rank) */
    pmix_proc_state_t state;
    int exit_code;         /* once terminated: the exit status, 128 + signal */
};

/* One app of a PMIx_Spawn request (pmix_app_t checked and copied). */
struct tern_srv_app {
    char *cmd;
    char **argv;     /* NULL-terminated, argv[0] included (cmd when the client gave none) */
    char **env;      /* "NAME=value" added to the ranks' environment, NULL-terminated */
    char *wdir;      /* PMIX_WDIR of the app or the job, else the cwd the client gave, or NULL */
    char *prefix;    /* PMIX_PREFIX of the app or the job, or NULL */
    int maxprocs;    /* >= 1 */
};

/* A PMIx_Spawn request handed to the host (server_spawn.c): it owns it and
 * answers with tern_srv_spawn_done() from a thread that is not PMIx's. */
struct tern_srv_spawn {
    pmix_proc_t requester;
    struct tern_srv_app *apps;
    size_t napps;
    int nprocs;      /* sum of maxprocs */
    char *bind;      /* PMIX_BINDTO "core" / "none", or NULL: the host's rule */
    pmix_spawn_cbfunc_t cbfunc;
    void *cbdata;
    struct tern_srv_spawn *next; /* for the host's queue */
};

/* Tell the client how its spawn ended (nspace: the new namespace, on
 * success) and free req. */
void tern_srv_spawn_done(struct tern_srv_spawn *req, pmix_status_t status, const char *nspace);

/* A malloc'd copy of a NULL-terminated string vector (an app's argv or env;
 * v NULL: an empty one), or NULL on OOM.  Freed string by string. */
char **tern_srv_strv_dup(char *const *v);

/* Host callbacks.  Any of them may be NULL.  They run on PMIx's progress
 * thread and must be quick and thread-safe; the client is released only
 * after they return. */
struct tern_srv_hooks {
    void *ctx;
    const char *log_prefix; /* e.g. "ternrun"; messages go to stderr */
    int verbose;            /* 0: errors and unsupported requests only */
    void (*connected)(void *ctx, const pmix_proc_t *proc);
    void (*finalized)(void *ctx, const pmix_proc_t *proc);
    void (*aborted)(void *ctx, const pmix_proc_t *proc, int status, const char *msg);
    /* queries (server_query.c): the job's namespace, host and program, and
     * its ranks now: up to max of them in out[], returns how many, -1 for
     * a namespace the host does not have */
    const char *nspace;      /* the first job's (tools are named after it) */
    const char *hostname;
    int (*procs)(void *ctx, const char *nspace, struct tern_srv_proc *out, int max);
    /* every namespace the host runs, comma-separated, into buf */
    void (*nspaces)(void *ctx, char *buf, size_t len);
    /* nspace's command line into buf (PMIX_QUERY_NAMESPACE_INFO): each
     * app's argv, space-separated, the apps separated by " : "; 0, or -1
     * for a namespace the host does not have */
    int (*cmdline)(void *ctx, const char *nspace, char *buf, size_t len);
    /* connect (true) / disconnect (false) of these procs done: the host
     * tells their namespaces' events to each other (server_connect.c) */
    void (*connection)(void *ctx, const pmix_proc_t procs[], size_t nprocs, bool connect);
    /* PMIx_Spawn (server_spawn.c): take req and start it later (0), or
     * refuse at once (-1: req stays the caller's) */
    int (*spawn)(void *ctx, struct tern_srv_spawn *req);
    /* job control (server_jobctl.c): send sig to the targets that run (a
     * rank PMIX_RANK_WILDCARD: all of its namespace); returns how many got
     * it, -1 (nothing sent) when a target is not a rank of the job */
    int (*signal)(void *ctx, const pmix_proc_t targets[], size_t ntargets, int sig);
};

/* Install the hooks (copied) and return the module table to pass to
 * PMIx_server_init().  Call once, before PMIx_server_init(). */
pmix_server_module_t *tern_srv_module_setup(const struct tern_srv_hooks *hooks);

/* The server's URI (PMIX_SERVER_URI), copied, for queries: call once,
 * after PMIx_server_init() returned.  Until then that key is not answered;
 * a later call is refused (logged, its string not kept): queries may be
 * reading the first. */
void tern_srv_module_set_uri(const char *uri);

/* Answer every pending lookup whose PMIX_TIMEOUT has passed with
 * PMIX_ERR_TIMEOUT.  Call now and then from any thread (e.g. the host's main
 * loop); returns the number of pending lookups left. */
int tern_srv_module_expire(void);

/* Answer all pending lookups with PMIX_ERR_NOT_FOUND and empty the publish
 * table.  Call before PMIx_server_finalize(). */
void tern_srv_module_shutdown(void);

#endif /* TERN_PMIX_SERVER_MODULE_H */
