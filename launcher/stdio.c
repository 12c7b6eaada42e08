/*
 * ternrun's side of stdio forwarding: which pipes each rank gets and where
 * its streams go (the engine itself is in launcher/iof/).
 *
 *   rank stdout --pipe--> ternrun --> ternrun's stdout  (or DIR/<rank>/stdout)
 *   rank stderr --pipe--> ternrun --> ternrun's stderr  (stdout with
 *                                     --merge-stderr-to-stdout; DIR/<rank>/stderr)
 *   ternrun's stdin --> pipe --> rank 0's stdin (--stdin: all, none or N);
 *   ranks without a pipe read /dev/null.  With --stdin-tool the source is
 *   not ternrun's stdin but the attached "tern-iof --stdin" (launcher/iof/tool.c).
 *   tern's diagnostics --pipe (fd in TERN_IOF_INTERNAL_FD)--> ternrun's
 *                                     stderr as "[rank,diag] " lines
 *                                     (DIR/<rank>/diag)
 *
 * Every pipe is close-on-exec on both ends: the child's ends become its fds
 * 0-2 by dup2 in spawn.c (which clears the flag), so no rank inherits
 * another rank's pipe, and EOF on a rank's output means that the rank (and
 * whatever it started) closed it.  The INTERNAL pipe is the exception: the
 * child clears close-on-exec on its write end, which keeps its number, and
 * that end is non-blocking so that a diagnostic never stalls a rank (the
 * library falls back to stderr when the pipe is full).
 */
#include "launcher/job.h"
#include "launcher/iof/iof.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* DIR/<rank> for the first job, DIR/<job>.<rank> for a spawned one */
static int open_rank_file(const char *dir, const struct ternrun_rank *r, const char *name)
{
    char path[4096], label[32];
    int fd;

    if (r->ns->index == 0) {
        snprintf(label, sizeof(label), "%d", r->rank);
    } else {
        snprintf(label, sizeof(label), "%d.%d", r->ns->index, r->rank);
    }
    snprintf(path, sizeof(path), "%s/%s", dir, label);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        ternrun_err("--output-filename: cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof(path), "%s/%s/%s", dir, label, name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        ternrun_err("--output-filename: cannot create %s: %s", path, strerror(errno));
    }
    return fd;
}

/* DIR/<label>/<name> opened and tied to rank r's stream tag; fd in *fd */
static int pull_file(struct ternrun_job *job, const struct ternrun_rank *r, enum tern_iof_tag tag,
                     const char *name, int *fd)
{
    static const struct tern_iof_format raw = {0};

    *fd = open_rank_file(job->opt.output_dir, r, name);
    if (*fd < 0) {
        return -1;
    }
    if (tern_iof_pull(job->iof, r->slot, tag, *fd, true, &raw) != 0) {
        close(*fd);
        return -1;
    }
    return 0;
}

/* --output-filename: the files of ns's ranks */
static int pull_files(struct ternrun_job *job, const struct ternrun_ns *ns)
{
    static const struct tern_iof_format raw = {0};
    const char *dir = job->opt.output_dir;

    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        ternrun_err("--output-filename: cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    for (int i = 0; i < ns->nranks; i++) {
        const struct ternrun_rank *r = &ns->ranks[i];
        int out, fd;

        if (pull_file(job, r, TERN_IOF_STDOUT, "stdout", &out) != 0 ||
            pull_file(job, r, TERN_IOF_INTERNAL, "diag", &fd) != 0) {
            return -1;
        }
        /* merged: stderr shares stdout's file (and sink, so lines stay whole) */
        if (job->opt.merge_stderr
                ? tern_iof_pull(job->iof, r->slot, TERN_IOF_STDERR, out, false, &raw) != 0
                : pull_file(job, r, TERN_IOF_STDERR, "stderr", &fd) != 0) {
            return -1;
        }
    }
    return 0;
}

int ternrun_stdio_add_ns(struct ternrun_job *job, struct ternrun_ns *ns)
{
    /* the ranks' slots exist already (ternrun_ns_add); with output to the
     * terminal they were given the all-ranks pulls there */
    return job->opt.output_dir != NULL ? pull_files(job, ns) : 0;
}

int ternrun_stdio_init(struct ternrun_job *job)
{
    struct tern_iof_format fmt = {
        .tag = job->opt.tag_output,
        .timestamp = job->opt.timestamp_output,
    };
    /* diagnostics are always told apart from the job's own stderr */
    struct tern_iof_format diag = {.tag = true, .timestamp = job->opt.timestamp_output};

    job->iof = tern_iof_create(job->ns[0]->nranks, job->opt.iof_raw);
    if (job->iof == NULL) {
        ternrun_err("out of memory for stdio forwarding");
        return -1;
    }
    if (job->opt.output_dir != NULL) {
        return pull_files(job, job->ns[0]);
    }
    if (tern_iof_pull(job->iof, TERN_IOF_ALL_RANKS, TERN_IOF_STDOUT, STDOUT_FILENO, false,
                      &fmt) != 0 ||
        tern_iof_pull(job->iof, TERN_IOF_ALL_RANKS, TERN_IOF_STDERR,
                      job->opt.merge_stderr ? STDOUT_FILENO : STDERR_FILENO, false, &fmt) != 0 ||
        tern_iof_pull(job->iof, TERN_IOF_ALL_RANKS, TERN_IOF_INTERNAL, STDERR_FILENO, false,
                      &diag) != 0) {
        ternrun_err("cannot set up stdio forwarding");
        return -1;
    }
    ternrun_log_route(job->iof);
    return 0;
}

int ternrun_stdio_listen(struct ternrun_job *job)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int fd;

    if (snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/iof.sock", job->session_dir) >=
        (int)sizeof(addr.sun_path)) {
        ternrun_warn("session directory path too long for a socket: tern-iof cannot attach");
        return 0;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(fd, 16) != 0) {
        ternrun_err("cannot listen on %s: %s", addr.sun_path, strerror(errno));
        goto err;
    }
    if (tern_iof_listen(job->iof, fd) != 0) {
        goto err;
    }
    job->iof_socket = strdup(addr.sun_path);
    if (job->iof_socket == NULL) {
        ternrun_err("out of memory");
        return -1;
    }
    ternrun_vlog(1, "tern-iof attaches at %s", job->iof_socket);
    if (job->opt.iof_announce != NULL) {
        FILE *f = fopen(job->opt.iof_announce, "we");

        if (f == NULL || fprintf(f, "%s\n", job->iof_socket) < 0 || fclose(f) != 0) {
            ternrun_err("--iof-announce: cannot write %s: %s", job->opt.iof_announce,
                        strerror(errno));
            return -1;
        }
    }
    return 0;

err:
    if (fd >= 0) {
        close(fd);
    }
    return -1;
}

static bool gets_stdin(const struct ternrun_options *opt, int rank)
{
    switch (opt->stdin_mode) {
    case TERNRUN_STDIN_ALL:
        return true;
    case TERNRUN_STDIN_NONE:
        return false;
    case TERNRUN_STDIN_RANK:
        return rank == opt->stdin_rank;
    }
    return false;
}

int ternrun_stdio_prepare_rank(struct ternrun_job *job, struct ternrun_rank *r)
{
    int p[2];

    char num[16];

    for (int i = 0; i < 4; i++) {
        r->child_fd[i] = -1;
    }
    /* stdin goes to the first job's ranks only (as mpirun): a spawned
     * job's ranks read /dev/null */
    if (r->ns->index == 0 && gets_stdin(&job->opt, r->rank)) {
        if (pipe2(p, O_CLOEXEC) != 0) {
            goto err_pipe;
        }
        r->child_fd[0] = p[0];
        if (tern_iof_push(job->iof, job->opt.stdin_tool ? TERN_IOF_PUSH_TOOL : STDIN_FILENO,
                          r->slot, p[1]) != 0) {
            close(p[1]);
            goto err;
        }
    } else {
        r->child_fd[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (r->child_fd[0] < 0) {
            ternrun_err("cannot open /dev/null for rank %d's stdin: %s", r->rank,
                        strerror(errno));
            goto err;
        }
    }
    for (int i = 1; i < 3; i++) {
        enum tern_iof_tag tag = i == 1 ? TERN_IOF_STDOUT : TERN_IOF_STDERR;

        if (pipe2(p, O_CLOEXEC) != 0) {
            goto err_pipe;
        }
        r->child_fd[i] = p[1];
        if (tern_iof_source(job->iof, r->slot, tag, p[0]) != 0) {
            close(p[0]);
            goto err;
        }
    }
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        goto err_pipe;
    }
    r->child_fd[3] = p[1];
    if (tern_iof_source(job->iof, r->slot, TERN_IOF_INTERNAL, p[0]) != 0) {
        close(p[0]);
        goto err;
    }
    snprintf(num, sizeof(num), "%d", p[1]);
    if (ternrun_env_set(&r->env, "TERN_IOF_INTERNAL_FD", num) != 0 ||
        (job->iof_socket != NULL &&
         ternrun_env_set(&r->env, "TERNRUN_IOF_SOCKET", job->iof_socket) != 0)) {
        ternrun_err("out of memory for rank %d's environment", r->rank);
        goto err;
    }
    return 0;

err_pipe:
    ternrun_err("cannot create rank %d's stdio pipes: %s", r->rank, strerror(errno));
err:
    ternrun_stdio_after_fork(r);
    return -1;
}

void ternrun_stdio_after_fork(struct ternrun_rank *r)
{
    for (int i = 0; i < 4; i++) {
        if (r->child_fd[i] >= 0) {
            close(r->child_fd[i]);
            r->child_fd[i] = -1;
        }
    }
}

void ternrun_stdio_rank_exited(struct ternrun_job *job, struct ternrun_rank *r)
{
    if (job->iof != NULL) {
        tern_iof_close(job->iof, r->slot, TERN_IOF_STDIN);
        tern_iof_drain_rank(job->iof, r->slot);
    }
}

void ternrun_stdio_fini(struct ternrun_job *job)
{
    if (job->iof != NULL) {
        ternrun_log_route(NULL);
        tern_iof_flush(job->iof, 1000);
        tern_iof_destroy(job->iof);
        job->iof = NULL;
    }
    if (job->iof_socket != NULL) {
        unlink(job->iof_socket);
        free(job->iof_socket);
        job->iof_socket = NULL;
    }
}
