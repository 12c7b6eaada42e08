/*
 * ibloop: moving bytes between processes ("DMA") with process_vm_readv /
 * process_vm_writev; within one process, plain memcpy.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ibloop.h"

static void iov_advance(struct iovec *v, int *i, int n, size_t by)
{
    while (by && *i < n) {
        if (by < v[*i].iov_len) {
            v[*i].iov_base = (char *)v[*i].iov_base + by;
            v[*i].iov_len -= by;
            return;
        }
        by -= v[*i].iov_len;
        (*i)++;
    }
    while (*i < n && v[*i].iov_len == 0)
        (*i)++;
}

static void copy_local(const struct ibloop_iov *dst, const struct ibloop_iov *src)
{
    struct iovec d[IBLOOP_MAX_SGE + 2], s[IBLOOP_MAX_SGE + 2];
    int di = 0, si = 0;

    memcpy(d, dst->v, sizeof(d[0]) * (size_t)dst->n);
    memcpy(s, src->v, sizeof(s[0]) * (size_t)src->n);
    iov_advance(d, &di, dst->n, 0);
    iov_advance(s, &si, src->n, 0);
    while (di < dst->n && si < src->n) {
        size_t n = d[di].iov_len < s[si].iov_len ? d[di].iov_len : s[si].iov_len;
        memmove(d[di].iov_base, s[si].iov_base, n);
        iov_advance(d, &di, dst->n, n);
        iov_advance(s, &si, src->n, n);
    }
}

static int copy(pid_t pid, const struct ibloop_iov *local,
                const struct ibloop_iov *remote, bool to_remote)
{
    struct iovec l[IBLOOP_MAX_SGE + 2], r[IBLOOP_MAX_SGE + 2];
    int li = 0, ri = 0;
    size_t left = 0;
    ssize_t n;

    if (pid == ibloop_fab.pid) {
        if (to_remote)
            copy_local(remote, local);
        else
            copy_local(local, remote);
        return 0;
    }
    memcpy(l, local->v, sizeof(l[0]) * (size_t)local->n);
    memcpy(r, remote->v, sizeof(r[0]) * (size_t)remote->n);
    for (int i = 0; i < local->n; i++)
        left += l[i].iov_len;
    iov_advance(l, &li, local->n, 0);
    iov_advance(r, &ri, remote->n, 0);
    while (left) {
        if (to_remote)
            n = process_vm_writev(pid, l + li, (unsigned long)(local->n - li),
                                  r + ri, (unsigned long)(remote->n - ri), 0);
        else
            n = process_vm_readv(pid, l + li, (unsigned long)(local->n - li),
                                 r + ri, (unsigned long)(remote->n - ri), 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EPERM) {
            static _Atomic int warned;
            if (!atomic_exchange(&warned, 1))
                ibloop_log("process_vm_%s(pid %d): %s; both processes must be allowed "
                           "to ptrace each other (same user, dumpable, Yama)",
                           to_remote ? "writev" : "readv", (int)pid, strerror(errno));
            return EPERM;
        }
        if (n < 0)
            return errno == ESRCH ? ESRCH : EFAULT;
        if (n == 0)
            return EFAULT;
        left -= (size_t)n;
        iov_advance(l, &li, local->n, (size_t)n);
        iov_advance(r, &ri, remote->n, (size_t)n);
    }
    return 0;
}

int ibloop_copy_to(pid_t pid, const struct ibloop_iov *local,
                   const struct ibloop_iov *remote)
{
    return copy(pid, local, remote, true);
}

int ibloop_copy_from(pid_t pid, const struct ibloop_iov *local,
                     const struct ibloop_iov *remote)
{
    return copy(pid, local, remote, false);
}
