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
#define TERNRUN_MAX_RANKS 4096   /* of all jobs together */
#define TERNRUN_MAX_NSPACES 64   /* the first job and the ones spawned from it */

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
    char *mpich_abi_dir; /* --mpich-abi: tern's libmpich.so.12 directory (owned), or NULL */
};

enum ternrun_rank_state {
    TERNRUN_RANK_NOT_STARTED = 0,
    TERNRUN_RANK_RUNNING,
    TERNRUN_RANK_DONE,
};

struct ternrun_ns;

struct ternrun_rank {
    int rank;         /* within its namespace */
    int slot;         /* index in job->all[] (and the IOF engine's rank) */
    struct ternrun_ns *ns;
    const char *exe;  /* resolved program path (owned by ns) */
    char **argv;      /* its app's argv (owned by ns) */
    const char *wdir; /* chdir before exec, or NULL (owned by ns) */
    int appnum;
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
    int kill_sig;   /* SIGKILL / SIGTERM asked by PMIx_Job_control, sent by the
                       main thread (after taking the rank out of the server) */
    bool connected; /* called PMIx_Init (client_connected) */
    bool finalized; /* called PMIx_Finalize (client_finalized) */
};

struct ternrun_bind_ctx; /* bind.c */
struct tern_iof;         /* launcher/iof/iof.h */

/* One PMIx namespace: the job on ternrun's command line (index 0), or one
 * started by a rank's PMIx_Spawn.  Never freed before ternrun exits. */
enum ternrun_phase { TERNRUN_PHASE_RUN, TERNRUN_PHASE_GRACE, TERNRUN_PHASE_TERM,
                     TERNRUN_PHASE_KILL };

struct ternrun_ns {
    int index;
    char name[256];    /* sized as pmix_nspace_t (checked in nspace.c) */
    int nranks;
    struct ternrun_rank *ranks;
    int parent;        /* index of the spawner's namespace, -1 for the first job */
    uint32_t parent_rank;
    char **owned;      /* strings the ranks point to (exe, argv, wdir), freed at exit */
    size_t nowned;
    char ***argvs;     /* lock: one argv per app, in app order, freed at exit */
    size_t nargvs;
    bool registered;   /* with the PMIx server */
    uint64_t connected; /* lock: bit k: connected to job->ns[k] (PMIx_Connect) */
    bool end_told;     /* main thread: PMIX_EVENT_JOB_END sent */
    /* main thread only (monitor.c): how it is being ended */
    int nlive;
    enum ternrun_phase phase;
    long deadline;
    int term_sig;
};

struct tern_srv_spawn; /* pmix/server/server_module.h */

struct ternrun_job {
    struct ternrun_options opt;
    char hostname[256];
    char *session_dir; /* our own temp dir (removed at exit) */
    /* the namespaces and, flat, every rank of them: main thread appends
     * under lock (PMIx hooks read them under lock) */
    struct ternrun_ns *ns[TERNRUN_MAX_NSPACES];
    int nns;
    struct ternrun_rank **all;
    int nall;
    struct ternrun_bind_ctx *bind;
    pthread_mutex_t lock;
    int wake_fd[2];    /* progress thread -> main loop */
    struct tern_iof *iof; /* stdio forwarding; main thread only */
    char *iof_socket;     /* tools attach here (in session_dir), or NULL */
    struct tern_srv_spawn *spawn_queue; /* lock: PMIx_Spawn requests to run */
    bool pmix_up;
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
/* "rank 3" for the first job, "rank 3 of <nspace>" for a spawned one */
const char *ternrun_rank_name(const struct ternrun_rank *r, char *buf, size_t len);

/* options.c: returns 0 to run, a positive exit code on a usage error, or -1
 * when the option was --help/--version (already printed: exit 0). */
int ternrun_options_parse(int argc, char **argv, struct ternrun_options *opt);
void ternrun_options_free(struct ternrun_options *opt);

/* mpich_abi.c: --mpich-abi.  resolve sets opt->mpich_abi_dir, or prints why
 * it cannot and returns -1; env prepends it to *envp's LD_LIBRARY_PATH
 * (nothing without --mpich-abi), -1 when out of memory. */
int ternrun_mpich_abi_resolve(struct ternrun_options *opt);
int ternrun_mpich_abi_env(const struct ternrun_options *opt, char ***envp);

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

/* jobs.c: a new namespace of nranks ranks (slots in job->all and in the
 * IOF engine, rank fields initialised), spawned by parent (-1: the first
 * job); NULL with an error printed.  free_all at exit. */
struct ternrun_ns *ternrun_ns_add(struct ternrun_job *job, int nranks, int parent);
/* keep s until exit (ns->owned); returns s, NULL if s was NULL or on OOM */
char *ternrun_ns_keep(struct ternrun_ns *ns, char *s);
/* the next app's argv (NULL-terminated, malloc'd strings), kept until
 * exit; the caller holds job->lock (PMIx queries read ns->argvs).  0, or
 * -1 on OOM (argv stays the caller's) */
int ternrun_ns_keep_argv(struct ternrun_ns *ns, char **argv);
void ternrun_ns_free_all(struct ternrun_job *job);
/* is ns d the namespace a or spawned (transitively) from it? */
bool ternrun_ns_descends(const struct ternrun_job *job, const struct ternrun_ns *d,
                         const struct ternrun_ns *a);

/* bind.c: init reads the topology and binds the first job as --bind-to
 * says; assign gives the ranks of a spawned namespace cores (bind: "core",
 * "none" or NULL for ternrun's own rule, counted over all live ranks) */
int ternrun_bind_init(struct ternrun_job *job);
int ternrun_bind_assign(struct ternrun_job *job, struct ternrun_ns *ns, const char *bind);
int ternrun_bind_apply(struct ternrun_job *job, struct ternrun_rank *r);
void ternrun_bind_fini(struct ternrun_job *job);
void *ternrun_bind_cpuset_of(struct ternrun_job *job, const struct ternrun_rank *r);
/* More ranks on this node (ns's and the other jobs' running ones) than CPUs
 * (PUs) allowed to ternrun (its affinity, however many CPUs the machine
 * has): ns's PMIX_NODE_OVERSUBSCRIBED, by which tern's ranks choose to block
 * when idle (engine/oversub.c).  Binding counts cores instead (bind.c). */
bool ternrun_oversubscribed(struct ternrun_job *job, struct ternrun_ns *ns);

/* nspace.c */
int ternrun_pmix_start(struct ternrun_job *job);
/* register ns with its job keys (spawned: PMIX_PARENT_ID too) */
int ternrun_pmix_register_nspace(struct ternrun_job *job, struct ternrun_ns *ns);
void ternrun_pmix_deregister_nspace(struct ternrun_job *job, struct ternrun_ns *ns);
int ternrun_pmix_prepare_rank(struct ternrun_job *job, struct ternrun_rank *r);
void ternrun_pmix_stop(struct ternrun_job *job);
/* Before ternrun itself signals its running ranks to end them: take them
 * out of the PMIx server (deregister_client), so that their deaths are not
 * seen as lost connections.  ns: the ranks of that namespace, NULL: all.
 * Main thread; waits for the server. */
void ternrun_pmix_release_running(struct ternrun_job *job, const struct ternrun_ns *ns);
/* The same for one rank (main thread). */
void ternrun_pmix_release_rank(struct ternrun_job *job, struct ternrun_rank *r);

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
/* Once every rank of a spawned namespace has ended: PMIX_EVENT_JOB_END to
 * its spawner's and connected namespaces, with PMIX_JOB_TERM_STATUS (0 or
 * the worst exit code).  Main thread. */
void ternrun_pmix_notify_job_end(struct ternrun_job *job, struct ternrun_ns *ns, int status);

/* stdio.c: init creates the IOF engine and its sinks (ternrun's stdout and
 * stderr, or the --output-filename files); prepare_rank makes the rank's
 * pipes (r->child_fd) and registers the parent ends; after_fork closes the
 * child ends in ternrun; rank_exited stops its stdin. */
int ternrun_stdio_init(struct ternrun_job *job);
/* listen: the socket tools attach to (after the session dir exists) */
int ternrun_stdio_listen(struct ternrun_job *job);
int ternrun_stdio_prepare_rank(struct ternrun_job *job, struct ternrun_rank *r);
/* a spawned namespace's output files (--output-filename) */
int ternrun_stdio_add_ns(struct ternrun_job *job, struct ternrun_ns *ns);
void ternrun_stdio_after_fork(struct ternrun_rank *r);
void ternrun_stdio_rank_exited(struct ternrun_job *job, struct ternrun_rank *r);
void ternrun_stdio_fini(struct ternrun_job *job);

/* dynamic.c: PMIx_Spawn.  request is the server module's hook (PMIx
 * thread: queues and wakes the main thread); run_pending starts the queued
 * jobs (main thread) and returns how many processes it forked; refuse
 * answers what is still queued when ternrun stops. */
struct tern_srv_spawn;
int ternrun_spawn_request(void *ctx, struct tern_srv_spawn *req);
int ternrun_spawn_run_pending(struct ternrun_job *job);
void ternrun_spawn_refuse_pending(struct ternrun_job *job);

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
