/*
 * ternrun's side of stdio forwarding: which pipes each rank gets and where
 * its streams go (the engine itself is in iof/).
 *
 *   rank stdout --pipe--> ternrun --> ternrun's stdout  (or DIR/<rank>/stdout)
 *   rank stderr --pipe--> ternrun --> ternrun's stderr  (stdout with
 *                                     --merge-stderr-to-stdout; DIR/<rank>/stderr)
 *   ternrun's stdin --> pipe --> rank 0's stdin (--stdin: all, none or N);
 *   ranks without a pipe read /dev/null.
 *
 * Every pipe is close-on-exec on both ends: the child's ends become its fds
 * 0-2 by dup2 in spawn.c (which clears the flag), so no rank inherits
 * another rank's pipe, and EOF on a rank's output means that the rank (and
 * whatever it started) closed it.
 */
#include "launcher/job.h"
#include "iof/iof.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int open_rank_file(const char *dir, int rank, const char *name)
{
    char path[4096];
    int fd;

    snprintf(path, sizeof(path), "%s/%d", dir, rank);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        ternrun_err("--output-filename: cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof(path), "%s/%d/%s", dir, rank, name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        ternrun_err("--output-filename: cannot create %s: %s", path, strerror(errno));
    }
    return fd;
}

static int pull_files(struct ternrun_job *job)
{
    const char *dir = job->opt.output_dir;
    struct tern_iof_format raw = {0};

    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        ternrun_err("--output-filename: cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    for (int r = 0; r < job->opt.nranks; r++) {
        int out = open_rank_file(dir, r, "stdout"), err = -1;

        if (out < 0) {
            return -1;
        }
        if (tern_iof_pull(job->iof, r, TERN_IOF_STDOUT, out, true, &raw) != 0) {
            close(out);
            return -1;
        }
        if (job->opt.merge_stderr) {
            if (tern_iof_pull(job->iof, r, TERN_IOF_STDERR, out, false, &raw) != 0) {
                return -1;
            }
            continue;
        }
        err = open_rank_file(dir, r, "stderr");
        if (err < 0) {
            return -1;
        }
        if (tern_iof_pull(job->iof, r, TERN_IOF_STDERR, err, true, &raw) != 0) {
            close(err);
            return -1;
        }
    }
    return 0;
}

int ternrun_stdio_init(struct ternrun_job *job)
{
    struct tern_iof_format fmt = {
        .tag = job->opt.tag_output,
        .timestamp = job->opt.timestamp_output,
    };

    job->iof = tern_iof_create(job->opt.nranks, job->opt.iof_raw);
    if (job->iof == NULL) {
        ternrun_err("out of memory for stdio forwarding");
        return -1;
    }
    if (job->opt.output_dir != NULL) {
        return pull_files(job);
    }
    if (tern_iof_pull(job->iof, TERN_IOF_ALL_RANKS, TERN_IOF_STDOUT, STDOUT_FILENO, false,
                      &fmt) != 0 ||
        tern_iof_pull(job->iof, TERN_IOF_ALL_RANKS, TERN_IOF_STDERR,
                      job->opt.merge_stderr ? STDOUT_FILENO : STDERR_FILENO, false, &fmt) != 0) {
        ternrun_err("cannot set up stdio forwarding");
        return -1;
    }
    return 0;
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

    for (int i = 0; i < 3; i++) {
        r->child_fd[i] = -1;
    }
    if (gets_stdin(&job->opt, r->rank)) {
        if (pipe2(p, O_CLOEXEC) != 0) {
            goto err_pipe;
        }
        r->child_fd[0] = p[0];
        if (tern_iof_push(job->iof, STDIN_FILENO, r->rank, p[1]) != 0) {
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
        if (tern_iof_source(job->iof, r->rank, tag, p[0]) != 0) {
            close(p[0]);
            goto err;
        }
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
    for (int i = 0; i < 3; i++) {
        if (r->child_fd[i] >= 0) {
            close(r->child_fd[i]);
            r->child_fd[i] = -1;
        }
    }
}

void ternrun_stdio_rank_exited(struct ternrun_job *job, struct ternrun_rank *r)
{
    if (job->iof != NULL) {
        tern_iof_close(job->iof, r->rank, TERN_IOF_STDIN);
    }
}

void ternrun_stdio_fini(struct ternrun_job *job)
{
    if (job->iof != NULL) {
        tern_iof_flush(job->iof, 1000);
        tern_iof_destroy(job->iof);
        job->iof = NULL;
    }
}
