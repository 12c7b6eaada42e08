/*
 * ibloop: waking a completion channel or an async fd in any process.
 *
 * Both fds are eventfds owned by the process that created them.  Another
 * process of the fabric reaches one with pidfd_open + pidfd_getfd (allowed
 * wherever process_vm_writev is, also across network namespaces), checks
 * that the fd it got is the same eventfd (the eventfd-id of fdinfo, unique
 * system-wide), and caches it.  No file is created for this.
 *
 * The token protocol keeps the eventfd readable exactly while events are
 * pending, so poll/epoll level-triggered readiness is right:
 *   producer: publish the event, then if exchange(token, 1) was 0 write 1;
 *   consumer (local lock held): take an event; when none is left, read the
 *   eventfd empty, store token = 0, and look again (re-raising if any).
 * The exchange and the store are seq_cst (S1): either the producer's
 * exchange sees 0 and writes, or the consumer's re-check after its store
 * sees the producer's event.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ibloop.h"

static uint64_t efd_id(int fd)
{
    char path[64], buf[512], *p;
    ssize_t n;
    int f;

    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
    f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0)
        return 0;
    n = read(f, buf, sizeof(buf) - 1);
    close(f);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    p = strstr(buf, "eventfd-id:");
    if (!p)
        return 0;
    return strtoull(p + 11, NULL, 10) + 1; /* ids start at 0 */
}

static bool is_eventfd(int fd)
{
    char path[64], link[64];
    ssize_t n;

    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    n = readlink(path, link, sizeof(link) - 1);
    if (n <= 0)
        return false;
    link[n] = 0;
    return strcmp(link, "anon_inode:[eventfd]") == 0;
}

int ibloop_efd_create(uint64_t *id)
{
    int fd = eventfd(0, EFD_CLOEXEC);

    if (fd >= 0)
        *id = efd_id(fd);
    return fd;
}

#define NCACHE 64
static struct {
    uint32_t proc, proc_gen;
    int efd;
    uint64_t id;
    int fd; /* -1: unused */
} cache[NCACHE];
static unsigned cache_next;
static bool cache_init;
static pthread_mutex_t cache_mutex = PTHREAD_MUTEX_INITIALIZER;

void ibloop_notify_forget(void)
{
    for (int i = 0; i < NCACHE; i++) {
        if (cache_init && cache[i].fd >= 0)
            close(cache[i].fd);
        cache[i].fd = -1;
    }
    cache_init = true;
    pthread_mutex_init(&cache_mutex, NULL);
}

/* called with cache_mutex held */
static int remote_fd(uint32_t proc, int efd, uint64_t id)
{
    struct ibloop_wire_proc *w = ibloop_proc(proc);
    uint32_t gen = atomic_load(&w->gen);
    int pfd, fd, slot;

    if (!cache_init) {
        for (int i = 0; i < NCACHE; i++)
            cache[i].fd = -1;
        cache_init = true;
    }
    for (int i = 0; i < NCACHE; i++)
        if (cache[i].fd >= 0 && cache[i].proc == proc &&
            cache[i].proc_gen == gen && cache[i].efd == efd && cache[i].id == id)
            return cache[i].fd;
    pfd = (int)syscall(SYS_pidfd_open, w->pid, 0);
    if (pfd < 0)
        return -1;
    fd = (int)syscall(SYS_pidfd_getfd, pfd, efd, 0);
    close(pfd);
    if (fd < 0) {
        IBLOOP_DBG("pidfd_getfd(pid %d, fd %d): %s", (int)w->pid, efd,
                   strerror(errno));
        return -1;
    }
    if ((id && efd_id(fd) != id) || (!id && !is_eventfd(fd))) {
        close(fd); /* the owner closed it and reused the number */
        return -1;
    }
    slot = (int)(cache_next++ % NCACHE);
    if (cache[slot].fd >= 0)
        close(cache[slot].fd);
    cache[slot].proc = proc;
    cache[slot].proc_gen = gen;
    cache[slot].efd = efd;
    cache[slot].id = id;
    cache[slot].fd = fd;
    return fd;
}

void ibloop_token_raise(_Atomic uint32_t *token, uint32_t proc, int efd,
                        uint64_t efd_id_)
{
    uint64_t one = 1;
    ssize_t n = -1;
    int fd;

    /* S1 */
    if (atomic_exchange(token, 1) != 0)
        return;
    if (proc == ibloop_fab.proc) {
        n = write(efd, &one, sizeof(one));
    } else {
        pthread_mutex_lock(&cache_mutex);
        fd = remote_fd(proc, efd, efd_id_);
        if (fd >= 0)
            n = write(fd, &one, sizeof(one));
        pthread_mutex_unlock(&cache_mutex);
    }
    if (n != (ssize_t)sizeof(one))
        atomic_store(token, 0); /* nobody to wake; let a later event retry */
}

void ibloop_token_drain(int fd, _Atomic uint32_t *token)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    uint64_t v;

    if (poll(&p, 1, 0) > 0 && read(fd, &v, sizeof(v)) < 0)
        v = 0;
    atomic_store(token, 0); /* S1 */
}

int ibloop_wait_readable(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int fl = fcntl(fd, F_GETFL);

    if (fl >= 0 && (fl & O_NONBLOCK)) {
        errno = EAGAIN;
        return -1;
    }
    return poll(&p, 1, timeout_ms);
}
