/*
 * The process-wide memory monitor: a userfaultfd with the UNMAP, REMOVE and
 * REMAP events, ranges registered in write-protect mode and never
 * write-protected, and a thread that reads the events and publishes the
 * ranges in the broadcast ring of rcache_monitor.h (ordering labels there).
 * engine/rcache.h explains the choice.
 *
 * The monitor thread must never block on anything a thread blocked in
 * munmap could hold: it takes no lock, allocates nothing and unmaps
 * nothing, and every signal is blocked in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/log.h"
#include "engine/rcache_monitor.h"

/* Newer than the uapi headers of older distributions. */
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
#define UFFD_FEATURE_WP_HUGETLBFS_SHMEM (1u << 12)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1u << 15)
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif

static const uint64_t memmon_required =
    UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_REMAP;
/* WP_ASYNC: a write-protect fault never waits for us, and any memory type
 * (file-backed too) can be registered in WP mode.  WP_HUGETLBFS_SHMEM: WP
 * mode on shmem and hugetlbfs. */
static const uint64_t memmon_optional = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_HUGETLBFS_SHMEM;

/* A reader waits at most this long for a batch being published before it
 * drops everything instead (safe, and only if the monitor stalls). */
#define MEMMON_WAIT_NS 1000000000ull

struct tern_memmon tern_memmon;

static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static tern_status_t start_status = TERN_ERR_UNSUPPORTED;
static char start_why[200];
static int mon_fd = -1;
static uintptr_t page_size;

/* A userfaultfd, in the least privileged way first: user-mode-only faults
 * need no privilege even when vm.unprivileged_userfaultfd is 0 (we handle
 * no fault at all); /dev/userfaultfd (Linux 6.1) is governed by its mode. */
static int uffd_open(int *err)
{
    const int flags = O_CLOEXEC | O_NONBLOCK;
    int fd = (int)syscall(SYS_userfaultfd, flags | UFFD_USER_MODE_ONLY);
    if (fd < 0 && errno == EINVAL) /* before Linux 5.11: no such flag */
        fd = (int)syscall(SYS_userfaultfd, flags);
    if (fd >= 0)
        return fd;
    *err = errno;
    int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
    if (dev >= 0) {
        fd = ioctl(dev, USERFAULTFD_IOC_NEW, flags);
        close(dev);
    }
    return fd;
}

/* The handshake: ask what the kernel offers (an fd takes one UFFDIO_API),
 * then open the fd we keep with what we need. */
static int uffd_setup(void)
{
    int err = 0, fd = uffd_open(&err);
    if (fd < 0) {
        snprintf(start_why, sizeof(start_why), "userfaultfd: %s", strerror(err));
        return -1;
    }
    struct uffdio_api api = {.api = UFFD_API, .features = 0};
    if (ioctl(fd, UFFDIO_API, &api) != 0) {
        snprintf(start_why, sizeof(start_why), "UFFDIO_API: %s", strerror(errno));
        goto err_close;
    }
    uint64_t have = api.features;
    if ((have & memmon_required) != memmon_required) {
        snprintf(start_why, sizeof(start_why),
                 "userfaultfd lacks the unmap/remove/remap events (features %#llx)",
                 (unsigned long long)have);
        goto err_close;
    }
    close(fd);
    if ((fd = uffd_open(&err)) < 0) {
        snprintf(start_why, sizeof(start_why), "userfaultfd: %s", strerror(err));
        return -1;
    }
    api = (struct uffdio_api){.api = UFFD_API,
                              .features = memmon_required | (have & memmon_optional)};
    if (ioctl(fd, UFFDIO_API, &api) != 0) {
        snprintf(start_why, sizeof(start_why), "UFFDIO_API: %s", strerror(errno));
        goto err_close;
    }
    if (!(api.ioctls & (1ull << _UFFDIO_REGISTER))) {
        snprintf(start_why, sizeof(start_why), "userfaultfd offers no UFFDIO_REGISTER");
        goto err_close;
    }
    return fd;

err_close:
    close(fd);
    return -1;
}

/* Append one range to the ring (the batch's head is stored after). */
static void publish(uint64_t *h, uintptr_t start, uintptr_t end)
{
    struct tern_memmon *m = &tern_memmon;
    atomic_store_explicit(&m->reserve, *h + 1, memory_order_relaxed); /* R3 */
    atomic_thread_fence(memory_order_release);                        /* R3 */
    tern_memmon_slot_t *s = &m->ring[*h & (TERN_MEMMON_RING - 1)];
    atomic_store_explicit(&s->start, start, memory_order_relaxed);
    atomic_store_explicit(&s->end, end, memory_order_relaxed);
    ++*h;
}

/* No range is ever write-protected and none is registered for missing
 * pages, so no fault should reach us; if one does (someone else's
 * UFFDIO_WRITEPROTECT on our fd), let the thread go rather than hang it. */
static void release_fault(int fd, const struct uffd_msg *msg)
{
    uintptr_t page = (uintptr_t)msg->arg.pagefault.address & ~(page_size - 1);
    if (msg->arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP) {
        struct uffdio_writeprotect wp = {.range = {page, page_size}, .mode = 0};
        (void)ioctl(fd, UFFDIO_WRITEPROTECT, &wp); /* unprotect and wake */
    } else {
        struct uffdio_range r = {page, page_size};
        (void)ioctl(fd, UFFDIO_WAKE, &r);
    }
}

static void *monitor_main(void *arg)
{
    struct tern_memmon *m = &tern_memmon;
    const int fd = mon_fd;
    uint64_t h = atomic_load_explicit(&m->head, memory_order_relaxed);
    struct uffd_msg msg[32];
    (void)arg;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        atomic_fetch_or_explicit(&m->state, TERN_MEMMON_READING, memory_order_seq_cst); /* S0 */
        atomic_thread_fence(memory_order_seq_cst);                                      /* S0 */
        ssize_t n = read(fd, msg, sizeof(msg)); /* releases the unmapping threads */
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            break;
        for (ssize_t i = 0; n > 0 && i < n / (ssize_t)sizeof(msg[0]); i++) {
            const struct uffd_msg *e = &msg[i];
            switch (e->event) {
            case UFFD_EVENT_UNMAP:
            case UFFD_EVENT_REMOVE:
                publish(&h, (uintptr_t)e->arg.remove.start, (uintptr_t)e->arg.remove.end);
                break;
            case UFFD_EVENT_REMAP: /* the old addresses no longer map those pages */
                publish(&h, (uintptr_t)e->arg.remap.from,
                        (uintptr_t)(e->arg.remap.from + e->arg.remap.len));
                break;
            case UFFD_EVENT_PAGEFAULT:
                release_fault(fd, e);
                break;
            default:
                break;
            }
        }
        atomic_store_explicit(&m->head, h, memory_order_release);                         /* R1 */
        atomic_fetch_and_explicit(&m->state, ~TERN_MEMMON_READING, memory_order_release); /* R2 */
    }
    /* Not expected: readers drop what they cache and stop caching.  The fd
     * stays open (closing it could hand its number to someone else). */
    atomic_fetch_or_explicit(&m->state, TERN_MEMMON_DEAD, memory_order_seq_cst);
    atomic_fetch_and_explicit(&m->state, ~TERN_MEMMON_READING, memory_order_release);
    return NULL;
}

/* In a child of fork there is no monitor thread, and the child's mappings
 * left the userfaultfd (no UFFD_FEATURE_EVENT_FORK): caches stop caching. */
static void monitor_atfork_child(void)
{
    atomic_fetch_or_explicit(&tern_memmon.state, TERN_MEMMON_LOST, memory_order_relaxed);
    if (mon_fd >= 0) {
        close(mon_fd);
        mon_fd = -1;
    }
}

static void start_monitor(void)
{
    page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    if ((mon_fd = uffd_setup()) < 0)
        return;
    /* before the thread exists: a fork can never see it without the handler */
    int rc = pthread_atfork(NULL, NULL, monitor_atfork_child);
    if (rc != 0) {
        snprintf(start_why, sizeof(start_why), "pthread_atfork: %s", strerror(rc));
        goto err_close;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread inherits: no signal runs there */
    pthread_t t;
    rc = pthread_create(&t, NULL, monitor_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(start_why, sizeof(start_why), "monitor thread: %s", strerror(rc));
        goto err_close;
    }
    pthread_detach(t);
    pthread_setname_np(t, "tern-memmon");
    start_status = TERN_OK;
    return;

err_close:
    close(mon_fd);
    mon_fd = -1;
}

tern_status_t tern_memmon_start(void)
{
    pthread_once(&start_once, start_monitor);
    if (start_status != TERN_OK)
        return tern_error(start_status, "memory monitor: %s", start_why);
    return TERN_OK;
}

bool tern_memmon_watch(uintptr_t start, uintptr_t end)
{
    if (mon_fd < 0 || (atomic_load_explicit(&tern_memmon.state, memory_order_relaxed) &
                       (TERN_MEMMON_LOST | TERN_MEMMON_DEAD)))
        return false;
    struct uffdio_register r = {.range = {start, end - start}, .mode = UFFDIO_REGISTER_MODE_WP};
    if (ioctl(mon_fd, UFFDIO_REGISTER, &r) == 0)
        return true;
    tern_debug("memory monitor: cannot watch %#lx-%#lx: %s", (unsigned long)start,
               (unsigned long)end, strerror(errno));
    return false;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

tern_memmon_drain_t tern_memmon_drain(uint64_t *cursor,
                                      void (*fn)(void *arg, uintptr_t start, uintptr_t end),
                                      void *arg)
{
    struct tern_memmon *m = &tern_memmon;
    uint64_t since = 0;
    for (unsigned spins = 0;; spins++) {
        uint32_t st = atomic_load_explicit(&m->state, memory_order_acquire); /* A2 */
        if (st & TERN_MEMMON_LOST)
            return TERN_MEMMON_FORKED;
        if (st & TERN_MEMMON_DEAD)
            return TERN_MEMMON_STOPPED;
        if (!(st & TERN_MEMMON_READING))
            break;
        /* The monitor is between read() and publishing, where it never
         * blocks: wait for the batch, which may hold our own munmap. */
        if (spins < 100)
            continue;
        if (since == 0)
            since = now_ns();
        else if (now_ns() - since > MEMMON_WAIT_NS) {
            *cursor = atomic_load_explicit(&m->head, memory_order_acquire);
            return TERN_MEMMON_OVERFLOW;
        }
        sched_yield();
    }
    uint64_t head = atomic_load_explicit(&m->head, memory_order_acquire); /* A1 */
    uint64_t c = *cursor;
    *cursor = head;
    if (head - c > TERN_MEMMON_RING)
        return TERN_MEMMON_OVERFLOW;
    for (; c != head; c++) {
        tern_memmon_slot_t *s = &m->ring[c & (TERN_MEMMON_RING - 1)];
        uintptr_t start = atomic_load_explicit(&s->start, memory_order_relaxed);
        uintptr_t end = atomic_load_explicit(&s->end, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire); /* A3 */
        if (atomic_load_explicit(&m->reserve, memory_order_relaxed) - c > TERN_MEMMON_RING)
            return TERN_MEMMON_OVERFLOW; /* the slot was being overwritten */
        fn(arg, start, end);
    }
    return TERN_MEMMON_DRAINED;
}
