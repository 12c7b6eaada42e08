/*
 * Starting one rank.
 *
 * Everything the child needs (program path, argv, environment, stdin) is
 * prepared before fork(): ternrun has PMIx threads, so between fork() and
 * exec() the child only makes async-signal-safe calls.  The handshake:
 *
 *   parent                          child
 *   fork() ------------------------> setpgid, pdeathsig, signal mask, stdin
 *   setpgid, bind by pid (hwloc)    read(go)  ... blocks
 *   write(go) ---------------------> execve()
 *   read(err): EOF = exec worked <-- on failure: write(err, errno), _exit
 *
 * Both pipes are close-on-exec, so a successful exec closes the error pipe.
 *
 * stdio: r->child_fd[] (prepared by stdio.c: pipes to ternrun's IOF engine,
 * or /dev/null for stdin) become the child's fds 0, 1 and 2; ternrun closes
 * its copies once the child is forked.
 */
#include "launcher/job.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_executable_file(const char *path, int *err)
{
    struct stat st;

    if (stat(path, &st) != 0) {
        *err = errno;
        return false;
    }
    if (S_ISDIR(st.st_mode)) {
        *err = EISDIR;
        return false;
    }
    if (access(path, X_OK) != 0) {
        *err = errno;
        return false;
    }
    return true;
}

char *ternrun_find_program(const char *prog, int *err)
{
    const char *path = getenv("PATH");
    char buf[PATH_MAX];
    int first_err = ENOENT;

    *err = 0;
    if (prog[0] == '\0') {
        *err = ENOENT;
        return NULL;
    }
    if (strchr(prog, '/') != NULL) {
        if (!is_executable_file(prog, err)) {
            return NULL;
        }
        return strdup(prog);
    }
    if (path == NULL || *path == '\0') {
        path = "/usr/local/bin:/usr/bin:/bin";
    }
    /* walk PATH; an empty element means the current directory */
    for (const char *p = path; p != NULL;) {
        const char *colon = strchr(p, ':');
        size_t dlen = colon ? (size_t)(colon - p) : strlen(p);
        int e = 0;

        if (dlen == 0) {
            snprintf(buf, sizeof(buf), "%s", prog);
        } else if ((size_t)snprintf(buf, sizeof(buf), "%.*s/%s", (int)dlen, p, prog) >=
                   sizeof(buf)) {
            p = colon ? colon + 1 : NULL;
            continue;
        }
        if (is_executable_file(buf, &e)) {
            return strdup(buf);
        }
        if (e == EACCES) {
            first_err = EACCES; /* found but not executable: say so */
        }
        p = colon ? colon + 1 : NULL;
    }
    *err = first_err;
    return NULL;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static int child_stdio(const struct ternrun_rank *r)
{
    for (int i = 0; i < 3; i++) {
        int fd = r->child_fd[i];

        if (fd < 0) {
            continue;
        }
        /* dup2 onto itself keeps close-on-exec: clear it by hand */
        if (fd == i ? fcntl(fd, F_SETFD, 0) < 0 : dup2(fd, i) < 0) {
            return errno;
        }
    }
    /* the INTERNAL pipe keeps its number (named in TERN_IOF_INTERNAL_FD) */
    if (r->child_fd[3] >= 0 && fcntl(r->child_fd[3], F_SETFD, 0) < 0) {
        return errno;
    }
    return 0;
}

static void child_exec(struct ternrun_rank *r, int go_rd, int err_wr, pid_t parent)
{
    struct sigaction dfl;
    char c;
    ssize_t n;
    int e;

    if (r->own_pgrp) {
        setpgid(0, 0);
    }
    /* the ranks must not outlive ternrun if it is killed outright */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
        _exit(127);
    }
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &dfl, NULL);
    sigprocmask(SIG_SETMASK, ternrun_orig_sigmask(), NULL);

    do {
        n = read(go_rd, &c, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) {
        _exit(127); /* the parent gave up on this rank */
    }
    /* Nothing of ternrun's but the fds set up below may reach the program:
     * PMIx's sockets to the ranks started before this one were inherited,
     * kept those connections open after their rank died and so delayed
     * and batched the server's lost-connection handling (see nspace.c,
     * ternrun_pmix_release_running).  Close-on-exec for every fd from 3
     * up; child_stdio then dups what the rank gets and clears the flag on
     * the INTERNAL pipe. */
    if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
        e = errno;
        goto fail;
    }
    e = child_stdio(r);
    if (e != 0) {
        goto fail;
    }
    if (r->wdir != NULL && chdir(r->wdir) != 0) {
        e = errno;
        goto fail;
    }
    execve(r->exe, r->argv, r->env);
    e = errno;
fail:
    n = write(err_wr, &e, sizeof(e));
    (void)n;
    _exit(e == ENOENT ? 127 : 126);
}

int ternrun_spawn_rank(struct ternrun_job *job, struct ternrun_rank *r)
{
    int go[2] = {-1, -1}, errp[2] = {-1, -1};
    int child_errno = 0;
    pid_t parent = getpid();
    ssize_t n;
    char c = 'g';
    int ret = -1;

    if (pipe2(go, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
        ternrun_err("cannot start rank %d: pipe: %s", r->rank, strerror(errno));
        goto out;
    }

    r->pid = fork();
    if (r->pid < 0) {
        ternrun_err("cannot start rank %d: fork: %s", r->rank, strerror(errno));
        r->pid = 0;
        goto out;
    }
    if (r->pid == 0) {
        child_exec(r, go[0], errp[1], parent);
    }
    ternrun_stdio_after_fork(r);

    pthread_mutex_lock(&job->lock); /* PMIx queries read pid and state */
    r->state = TERNRUN_RANK_RUNNING;
    pthread_mutex_unlock(&job->lock);
    close(go[0]);
    go[0] = -1;
    close(errp[1]);
    errp[1] = -1;
    if (r->own_pgrp && setpgid(r->pid, r->pid) != 0 && errno != EACCES) {
        ternrun_vlog(1, "setpgid(rank %d): %s", r->rank, strerror(errno));
    }
    ternrun_bind_apply(job, r);

    do {
        n = write(go[1], &c, 1);
    } while (n < 0 && errno == EINTR);
    close(go[1]);
    go[1] = -1;

    do {
        n = read(errp[0], &child_errno, sizeof(child_errno));
    } while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof(child_errno)) {
        char name[300];
        ternrun_err("cannot execute '%s' for %s: %s", r->exe,
                    ternrun_rank_name(r, name, sizeof(name)), strerror(child_errno));
        ret = child_errno == ENOENT ? 127 : 126;
        goto out;
    }
    ternrun_vlog(2, "rank %d started: pid %ld", r->rank, (long)r->pid);
    ret = 0;

out:
    for (int i = 0; i < 2; i++) {
        if (go[i] >= 0) {
            close(go[i]);
        }
        if (errp[i] >= 0) {
            close(errp[i]);
        }
    }
    ternrun_stdio_after_fork(r);
    return ret;
}
