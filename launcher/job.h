/*
 * ternrun internal header: the job as the launcher sees it.
 *
 * One struct ternrun_job holds the parsed options, the namespace, the session
 * directory and one struct ternrun_rank per rank.  The main thread owns all of
 * it, except the fields marked "lock": those are written by PMIx server module
 * callbacks on PMIx's progress thread and are guarded by job->lock.
 */
#ifndef TERNRUN_JOB_H
#define TERNRUN_JOB_H

/* must come first in every launcher source: feature macros before libc */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define TERNRUN_NAME "ternrun"
#define TERNRUN_DEFAULT_KILL_GRACE_MS 3000
#define TERNRUN_ABORT_KILL_MS 1000 /* SIGTERM -> SIGKILL after an abort/failure */
#define TERNRUN_MAX_RANKS 4096

enum ternrun_bind {
    TERNRUN_BIND_DEFAULT = 0, /* core if nranks <= ncores, else none */
    TERNRUN_BIND_CORE,
    TERNRUN_BIND_NONE,
};

/* One -x argument: "NAME" (value taken from ternrun's environment) or
 * "NAME=value".  value is NULL when NAME is not set anywhere. */
struct ternrun_export {
    char *name;
    char *value;
};

enum ternrun_stdin {
    TERNRUN_STDIN_RANK = 0, /* one rank: stdin_rank (default 0) */
    TERNRUN_STDIN_ALL,
    TERNRUN_STDIN_NONE,
};

struct ternrun_options {
    int nranks;
    enum ternrun_bind bind;
    long kill_grace_ms;
    const char *tmpdir; /* --tmpdir, or NULL */
    int verbose;
    struct ternrun_export *exports;
    size_t nexports;
    char **argv; /* program and its arguments (points into main's argv) */
    /* stdio forwarding (IOF) */
    bool tag_output;
    bool timestamp_output;
    bool merge_stderr;
    bool iof_raw;
    const char *output_dir; /* --output-filename DIR, or NULL */
    const char *iof_announce; /* --iof-announce FILE, or NULL */
    enum ternrun_stdin stdin_mode;
    int stdin_rank;
    bool stdin_tool; /* --stdin-tool: the ranks' stdin comes from an attached tern-iof */
};

enum ternrun_rank_state {
    TERNRUN_RANK_NOT_STARTED = 0,
    TERNRUN_RANK_RUNNING,
    TERNRUN_RANK_DONE,
};

struct ternrun_rank {
    int rank;
    /* pid, state, wstatus and signalled_by_us: the main thread writes them
     * under lock (after fork, when it signals, at reaping) and reads them
     * without; PMIx queries read them under lock */
    pid_t pid;
    bool own_pgrp;    /* leads its own process group: signal -pid */
    enum ternrun_rank_state state;
    int wstatus;      /* from waitpid, valid when DONE */
    bool signalled_by_us; /* reaped after ternrun sent it a signal */
    int core;         /* core index it is bound to, -1 if unbound */
    char *cpuset;     /* printable cpuset (hwloc list format), or NULL */
    char **env;       /* NULL-terminated, owned */
    int child_fd[4];  /* the rank's stdin/stdout/stderr and INTERNAL (diagnostics)
                         pipe until it is forked, or -1 */
    bool abort_reported; /* main thread only */
    bool pmix_released;  /* main thread only: deregistered from the PMIx server */
    /* lock: */
    bool aborted;
    int abort_status;
    char *abort_msg;
    bool connected; /* called PMIx_Init (client_connected) */
    bool finalized; /* called PMIx_Finalize (client_finalized) */
};

struct ternrun_bind_ctx; /* bind.c */
struct tern_iof;         /* iof/iof.h */

struct ternrun_job {
    struct ternrun_options opt;
    char nspace[256]; /* sized as pmix_nspace_t (checked in nspace.c) */
    char hostname[256];
    char *session_dir; /* our own temp dir (removed at exit) */
    char *exe_path;    /* resolved program path */
    struct ternrun_rank *ranks;
    struct ternrun_bind_ctx *bind;
    pthread_mutex_t lock;
    int wake_fd[2];    /* progress thread -> main loop */
    struct tern_iof *iof; /* stdio forwarding; main thread only */
    char *iof_socket;     /* tools attach here (in session_dir), or NULL */
    bool pmix_up;
    bool nspace_registered;
    bool pmix_abandoned; /* ranks released mid-session: no PMIx_server_finalize */
};

/* log.c */
extern int ternrun_verbose;
void ternrun_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
struct tern_iof;
/* main-thread messages go through iof (NULL: straight to stderr); log.c */
void ternrun_log_route(struct tern_iof *iof);
void ternrun_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ternrun_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ternrun_vlog(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
long ternrun_now_ms(void);

/* options.c: returns 0 to run, a positive exit code on a usage error, or -1
 * when the option was --help/--version (already printed: exit 0). */
int ternrun_options_parse(int argc, char **argv, struct ternrun_options *opt);
void ternrun_options_free(struct ternrun_options *opt);

/* env.c */
void ternrun_env_scrub_self(const struct ternrun_options *opt);
char **ternrun_env_build(const struct ternrun_options *opt);
int ternrun_env_set(char ***envp, const char *name, const char *value);
const char *ternrun_env_get(char **env, const char *name);
void ternrun_env_free(char **env);

/* session.c */
int ternrun_session_create(struct ternrun_job *job);
void ternrun_session_remove(struct ternrun_job *job);
int ternrun_shm_cleanup(const char *nspace);

/* bind.c */
int ternrun_bind_init(struct ternrun_job *job);
int ternrun_bind_apply(struct ternrun_job *job, struct ternrun_rank *r);
void ternrun_bind_fini(struct ternrun_job *job);
void *ternrun_bind_cpuset_of(struct ternrun_job *job, const struct ternrun_rank *r);

/* nspace.c */
int ternrun_pmix_start(struct ternrun_job *job);
int ternrun_pmix_register_nspace(struct ternrun_job *job);
int ternrun_pmix_prepare_rank(struct ternrun_job *job, struct ternrun_rank *r);
void ternrun_pmix_stop(struct ternrun_job *job);
/* Before ternrun itself signals its running ranks to end them: take them
 * out of the PMIx server (deregister_client), so that their deaths are not
 * seen as lost connections.  Main thread; waits for the server. */
void ternrun_pmix_release_running(struct ternrun_job *job);

/* How a rank ended, for the PMIx event that tells the other ranks. */
enum ternrun_exit_kind {
    TERNRUN_EXIT_NORMAL,      /* status 0, finalized or never a PMIx client */
    TERNRUN_EXIT_NO_FINALIZE, /* status 0 without PMIx_Finalize after PMIx_Init */
    TERNRUN_EXIT_NONZERO,     /* a non-zero exit status */
    TERNRUN_EXIT_SIGNALLED,   /* killed by a signal ternrun did not send */
    TERNRUN_EXIT_KILLED,      /* ended after ternrun signalled it */
    TERNRUN_EXIT_ABORTED,     /* after PMIx_Abort */
};
/* Notify the job's ranks (PMIx_Notify_event, range namespace) that r has
 * exited: kind picks the status, code is its exit code (or 128+signal).
 * Main thread, after r was reaped; never blocks. */
void ternrun_pmix_notify_exit(struct ternrun_job *job, const struct ternrun_rank *r,
                              enum ternrun_exit_kind kind, int code);

/* stdio.c: init creates the IOF engine and its sinks (ternrun's stdout and
 * stderr, or the --output-filename files); prepare_rank makes the rank's
 * pipes (r->child_fd) and registers the parent ends; after_fork closes the
 * child ends in ternrun; rank_exited stops its stdin. */
int ternrun_stdio_init(struct ternrun_job *job);
/* listen: the socket tools attach to (after the session dir exists) */
int ternrun_stdio_listen(struct ternrun_job *job);
int ternrun_stdio_prepare_rank(struct ternrun_job *job, struct ternrun_rank *r);
void ternrun_stdio_after_fork(struct ternrun_rank *r);
void ternrun_stdio_rank_exited(struct ternrun_job *job, struct ternrun_rank *r);
void ternrun_stdio_fini(struct ternrun_job *job);

/* spawn.c: find_program returns a malloc'd path or NULL with *err set;
 * spawn_rank returns 0, 126/127 if exec failed (the child is still to be
 * reaped), or -1 if no process was started. */
char *ternrun_find_program(const char *prog, int *err);
int ternrun_spawn_rank(struct ternrun_job *job, struct ternrun_rank *r);

/* monitor.c.  setup blocks the signals ternrun handles (call it before any
 * thread exists) and creates the wake-up pipe.  ternrun_monitor runs until
 * every started rank is reaped and returns ternrun's exit code; a non-zero
 * launch_failure kills the started ranks at once and is reported as the
 * job's status. */
int ternrun_monitor_setup(struct ternrun_job *job);
void ternrun_monitor_teardown(struct ternrun_job *job);
const sigset_t *ternrun_orig_sigmask(void);
int ternrun_monitor(struct ternrun_job *job, int launch_failure);
void ternrun_monitor_wake(struct ternrun_job *job);

#endif /* TERNRUN_JOB_H */
