/*
 * Finding the node's iofwd daemon, or starting it (docs/iofwd.md, "Daemon
 * lifecycle").  Under the rendezvous directory's lock a starter reads the
 * port file; a live daemon there is attached to, else one is started and
 * the lock is held until its port file appears, so concurrent starters get
 * one daemon.  The caller keeps the lock until the daemon has answered its
 * CONNECT: a daemon only exits after taking the lock itself, so it cannot
 * leave between a client reading the port and connecting.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/log.h"
#include "iofwd/iofwd_internal.h"
#include "iofwd/start.h"
#include <tern/core.h>

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* TERN_IOFWD, or the daemon's name on PATH */
static const char *daemon_prog(const tern_iofwd_config_t *cfg)
{
    return cfg->daemon[0] != '\0' ? cfg->daemon : "tern-iofwd";
}

static bool alive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

/* The child: the daemon, with the job's diagnostics fd (if any) kept open
 * and every other descriptor beyond stderr closed at exec. */
static void exec_daemon(const tern_iofwd_config_t *cfg, const char *dir, char *const env[])
{
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
    }
    if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
        for (int fd = 3; fd < 1024; fd++)
            fcntl(fd, F_SETFD, FD_CLOEXEC);
    /* internal, not a user setting: the job's diagnostics fd that ternrun
     * gave this rank (engine/status.c), kept open for the daemon */
    const char *diag = getenv("TERN_IOF_INTERNAL_FD");
    if (diag != NULL && atoi(diag) > 2)
        fcntl(atoi(diag), F_SETFD, 0);
    for (int i = 0; env != NULL && env[i] != NULL; i++)
        putenv(env[i]);
    execlp(daemon_prog(cfg), daemon_prog(cfg), "--dir", dir, (char *)NULL);
    fprintf(stderr, "tern: iofwd: cannot run the daemon %s: %s (set TERN_IOFWD)\n",
            daemon_prog(cfg), strerror(errno));
    _exit(127);
}

tern_status_t tern_iofwd_attach(const tern_iofwd_config_t *cfg, char *const env[],
                                tern_iofwd_daemon_t *d)
{
    tern_status_t st = tern_iofwd_dir(d->dir, sizeof(d->dir));
    if (st != TERN_OK)
        return st;
    char path[sizeof(d->dir) + 8];
    snprintf(path, sizeof(path), "%s/lock", d->dir);
    d->lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (d->lock < 0)
        return tern_error(TERN_ERR_IO, "iofwd: open %s: %s", path, strerror(errno));
    while (flock(d->lock, LOCK_EX) != 0)
        if (errno != EINTR) {
            st = tern_error(TERN_ERR_IO, "iofwd: flock %s: %s", path, strerror(errno));
            tern_iofwd_unlock(d);
            return st;
        }
    d->started = false;
    if (tern_iofwd_read_port(d->dir, &d->pid, d->port, sizeof(d->port)) == TERN_OK &&
        alive(d->pid))
        return TERN_OK; /* attach; a stale file (dead daemon) is replaced */
    pid_t pid = fork();
    if (pid < 0) {
        st = tern_error(TERN_ERR_IO, "iofwd: fork: %s", strerror(errno));
        tern_iofwd_unlock(d);
        return st;
    }
    if (pid == 0)
        exec_daemon(cfg, d->dir, env);
    long deadline = now_ms() + (long)cfg->start_ms;
    for (;;) {
        pid_t p;
        if (tern_iofwd_read_port(d->dir, &p, d->port, sizeof(d->port)) == TERN_OK && p == pid) {
            d->pid = pid;
            d->started = true;
            return TERN_OK;
        }
        int ws;
        if (waitpid(pid, &ws, WNOHANG) == pid) {
            st = tern_error(TERN_ERR_IO, "iofwd: the daemon %s (pid %d) %s %d before opening its "
                            "port (its diagnostics say why)", daemon_prog(cfg), (int)pid,
                            WIFEXITED(ws) ? "exited with status" : "was killed by signal",
                            WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws));
            break;
        }
        if (now_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            st = tern_error(TERN_ERR_TIMED_OUT, "iofwd: the daemon %s (pid %d) opened no port "
                            "within %llu ms (TERN_IOFWD_START_MS)", daemon_prog(cfg), (int)pid,
                            (unsigned long long)cfg->start_ms);
            break;
        }
        usleep(2000);
    }
    tern_iofwd_unlock(d);
    return st;
}

void tern_iofwd_unlock(tern_iofwd_daemon_t *d)
{
    if (d->lock >= 0)
        close(d->lock); /* releases the flock */
    d->lock = -1;
}
