/*
 * ibloop: counting what a program asks of the device (IBLOOP_STATS), so
 * that two verbs users can be compared call for call on the same device:
 * ibv_post_send calls and the work requests they carry (on ibloop each
 * call is one doorbell), the same for receives, ibv_poll_cq calls (and how
 * many found nothing) and the completions they returned,
 * ibv_req_notify_cq calls, and memory registrations and deregistrations.
 *
 * The counters are per process, relaxed atomics bumped only when
 * IBLOOP_STATS is set (one predictable branch otherwise).  At exit one line
 * goes to stderr (IBLOOP_STATS=1) or is appended to the file it names:
 *   ibloop-stats pid=<pid> post_send=<n> send_wrs=<n> post_recv=<n>
 *     recv_wrs=<n> poll_cq=<n> poll_empty=<n> cqes=<n> req_notify=<n>
 *     reg_mr=<n> dereg_mr=<n>
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ibloop.h"

struct ibloop_stats ibloop_stats;
bool ibloop_stats_on;

/* a forked child counts its own calls (it opens the device again) */
static void stats_zero(void)
{
    memset((void *)&ibloop_stats, 0, sizeof(ibloop_stats));
}

__attribute__((constructor)) static void ibloop_stats_init(void)
{
    pthread_atfork(NULL, NULL, stats_zero);
}

__attribute__((destructor)) static void ibloop_stats_report(void)
{
    const char *to = ibloop_stats_on ? ibloop_env()->stats : NULL;
    char line[400];
    int n, fd;

    if (!to || !*to)
        return;
#define S(f) (unsigned long long)atomic_load_explicit(&ibloop_stats.f, memory_order_relaxed)
    n = snprintf(line, sizeof(line),
                 "ibloop-stats pid=%d post_send=%llu send_wrs=%llu post_recv=%llu "
                 "recv_wrs=%llu poll_cq=%llu poll_empty=%llu cqes=%llu req_notify=%llu "
                 "reg_mr=%llu dereg_mr=%llu\n",
                 (int)getpid(), S(post_send), S(send_wrs), S(post_recv), S(recv_wrs),
                 S(poll_cq), S(poll_empty), S(cqes), S(req_notify), S(reg_mr), S(dereg_mr));
#undef S
    if (n <= 0 || (size_t)n >= sizeof(line))
        return;
    if (!strcmp(to, "1")) {
        fd = STDERR_FILENO;
    } else {
        fd = open(to, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) {
            ibloop_log("IBLOOP_STATS=%s: cannot open it", to);
            return;
        }
    }
    /* one write: lines of several processes appending never mix */
    if (write(fd, line, (size_t)n) != n)
        ibloop_log("IBLOOP_STATS=%s: short write", to);
    if (fd != STDERR_FILENO)
        close(fd);
}
