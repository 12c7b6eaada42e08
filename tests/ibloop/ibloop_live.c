/*
 * ibloop: is a process of the fabric alive?  A pidfd per peer process,
 * opened once and checked against the start time recorded when the process
 * attached (pids are reused quickly), polled for exit.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ibloop.h"

uint64_t ibloop_start_time(pid_t pid)
{
    char path[64], buf[1024], *p;
    unsigned long long st = 0;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    p = strrchr(buf, ')');
    if (!p)
        return 0;
    /* fields after the comm: state is field 3, starttime field 22 */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
                      "%*d %*d %*d %*d %*d %*d %llu", &st) != 1)
        return 0;
    return st;
}

static struct {
    uint32_t gen;
    int fd;
} pidfds[IBLOOP_NPROC];
static pthread_mutex_t pidfd_mutex = PTHREAD_MUTEX_INITIALIZER;

pid_t ibloop_proc_pid(uint32_t proc)
{
    return ibloop_proc(proc)->pid;
}

bool ibloop_proc_alive(uint32_t proc)
{
    struct ibloop_wire_proc *w = ibloop_proc(proc);
    uint32_t gen = atomic_load(&w->gen);
    struct pollfd pfd;
    bool alive;
    int fd;

    if (!gen)
        return false;
    if (w->pid == ibloop_fab.pid)
        return true;
    pthread_mutex_lock(&pidfd_mutex);
    if (pidfds[proc].gen != gen) {
        if (pidfds[proc].gen)
            close(pidfds[proc].fd);
        pidfds[proc].gen = 0;
        fd = (int)syscall(SYS_pidfd_open, w->pid, 0);
        if (fd >= 0 && ibloop_start_time(w->pid) != w->start_time) {
            close(fd);
            fd = -1;
        }
        if (fd < 0) {
            pthread_mutex_unlock(&pidfd_mutex);
            return errno != ESRCH && fd != -1;
        }
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        pidfds[proc].gen = gen;
        pidfds[proc].fd = fd;
    }
    pfd.fd = pidfds[proc].fd;
    pfd.events = POLLIN;
    alive = poll(&pfd, 1, 0) == 0;
    pthread_mutex_unlock(&pidfd_mutex);
    return alive;
}

void ibloop_pidfds_forget(void)
{
    for (uint32_t i = 0; i < IBLOOP_NPROC; i++) {
        if (pidfds[i].gen)
            close(pidfds[i].fd);
        pidfds[i].gen = 0;
    }
    pthread_mutex_init(&pidfd_mutex, NULL);
}

