/*
 * ternrun: the single-node launcher of tern.
 *
 *   ternrun [options] -n N program [args...]
 *
 * Starts N copies of program as one job, like mpirun on one node: ternrun is
 * the job's PMIx server (wire-up for tern, or any PMIx client), binds each
 * rank to a core, forwards signals, kills the job when a rank aborts or
 * fails, cleans up after it and exits with the worst rank status.  Ranks
 * may start more jobs with PMIx_Spawn (dynamic.c); ternrun runs them too.
 *
 * Sequence: parse options -> scrub inherited PMIX_* -> block signals (before
 * any thread exists) -> session dir -> topology -> PMIx server -> namespace
 * -> per rank: register client, setup_fork, stdio pipes, fork, bind, exec ->
 * monitor (reaps ranks and forwards their stdio, then drains it) -> PMIx
 * finalize -> remove session dir and the job's /dev/shm leftovers.
 */
#include "launcher/job.h"
#include "pmix/server/server_module.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int launch(struct ternrun_job *job)
{
    struct ternrun_ns *ns = job->ns[0];

    for (int i = 0; i < ns->nranks; i++) {
        struct ternrun_rank *r = &ns->ranks[i];
        int rc;

        r->env = ternrun_env_build(&job->opt);
        if (r->env == NULL || ternrun_pmix_prepare_rank(job, r) != 0 ||
            ternrun_stdio_prepare_rank(job, r) != 0) {
            return 1;
        }
        rc = ternrun_spawn_rank(job, r);
        if (rc != 0) {
            return rc > 0 ? rc : 1;
        }
    }
    return 0;
}

static void free_job(struct ternrun_job *job)
{
    ternrun_ns_free_all(job);
    ternrun_options_free(&job->opt);
    pthread_mutex_destroy(&job->lock);
}

/* Closed 0/1/2 would be reused by the first pipes ternrun creates and then
 * mix up the ranks' stdio in spawn.c: fill the holes with /dev/null. */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int nfd = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);

            if (nfd >= 0 && nfd != fd) {
                close(nfd); /* defensive: holes are filled lowest first */
            }
        }
    }
}

int main(int argc, char **argv)
{
    struct ternrun_job job;
    int code = 1, err, launch_failure;

    ensure_std_fds();
    memset(&job, 0, sizeof(job));
    job.wake_fd[0] = job.wake_fd[1] = -1;
    pthread_mutex_init(&job.lock, NULL);

    code = ternrun_options_parse(argc, argv, &job.opt);
    if (code != 0) {
        free_job(&job);
        return code < 0 ? 0 : code;
    }
    code = 1;
    ternrun_verbose = job.opt.verbose;

    /* before PMIx reads its environment: never talk to an outer server */
    ternrun_env_scrub_self(&job.opt);

    char *exe = ternrun_find_program(job.opt.argv[0], &err);
    if (exe == NULL) {
        ternrun_err("cannot run '%s': %s", job.opt.argv[0],
                    err == ENOENT ? "command not found" : strerror(err));
        code = err == ENOENT ? 127 : 126;
        goto out_free;
    }

    if (gethostname(job.hostname, sizeof(job.hostname) - 1) != 0 || job.hostname[0] == '\0') {
        snprintf(job.hostname, sizeof(job.hostname), "localhost");
    }
    /* the first job: namespace ternrun-<pid> */
    struct ternrun_ns *ns = ternrun_ns_add(&job, job.opt.nranks, -1);
    if (ns == NULL || ternrun_ns_keep(ns, exe) == NULL) {
        if (ns == NULL) {
            free(exe);
        }
        goto out_free;
    }
    /* its argv as a spawned job's: the namespace's own (PMIx queries
     * read it from there) */
    char **args = tern_srv_strv_dup(job.opt.argv);
    pthread_mutex_lock(&job.lock);
    if (args == NULL || ternrun_ns_keep_argv(ns, args) != 0) {
        pthread_mutex_unlock(&job.lock);
        ternrun_err("out of memory");
        ternrun_env_free(args); /* a NULL-terminated array of strings too */
        goto out_free;
    }
    for (int i = 0; i < ns->nranks; i++) {
        ns->ranks[i].exe = exe;
        ns->ranks[i].argv = args;
    }
    pthread_mutex_unlock(&job.lock);

    if (ternrun_monitor_setup(&job) != 0) {
        goto out_free;
    }
    if (ternrun_stdio_init(&job) != 0) {
        goto out_monitor;
    }
    if (ternrun_session_create(&job) != 0) {
        goto out_monitor;
    }
    if (ternrun_stdio_listen(&job) != 0) {
        goto out_session;
    }
    if (ternrun_bind_init(&job) != 0) {
        goto out_session;
    }
    if (ternrun_pmix_start(&job) != 0) {
        goto out_bind;
    }
    if (ternrun_pmix_register_nspace(&job, ns) != 0) {
        goto out_pmix;
    }

    launch_failure = launch(&job);
    code = ternrun_monitor(&job, launch_failure);

out_pmix:
    ternrun_pmix_stop(&job);
out_bind:
    ternrun_bind_fini(&job);
out_session:
    ternrun_session_remove(&job);
    for (int k = 0; k < job.nns; k++) {
        ternrun_shm_cleanup(job.ns[k]->name);
    }
out_monitor:
    ternrun_stdio_fini(&job);
    ternrun_monitor_teardown(&job);
out_free:
    free_job(&job);
    return code;
}
