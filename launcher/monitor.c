/*
 * The job's life after launch: reap ranks, forward signals, react to aborts
 * and failures, escalate SIGTERM -> SIGKILL, and compute the exit code.
 *
 * The main thread waits in poll() on a signalfd (SIGCHLD, SIGINT, SIGTERM,
 * SIGHUP, SIGQUIT, blocked in every thread since before PMIx started its
 * own), on a pipe the PMIx progress thread writes to when a rank aborts, and
 * on whatever the IOF engine waits for (the ranks' output pipes, its sinks,
 * stdin).  Once every rank is reaped, the engine reads every output pipe to
 * EOF before ternrun exits: what a rank wrote before dying is never lost.
 *
 * Phases:  RUN --(rank fails)--> GRACE --(kill-grace)--> TERM --(1 s)--> KILL
 *          RUN/GRACE --(abort, launch failure)--> TERM --(1 s)--> KILL
 *          any --(signal from the user)--> TERM --(kill-grace)--> KILL
 * After SIGKILL ternrun waits at most KILL_GIVEUP_MS more, then exits anyway:
 * it never hangs once it has given up on the ranks.
 *
 * A rank that called PMIx_Init and exits 0 without PMIx_Finalize while
 * other ranks still run has failed too (as under mpirun): its peers may be
 * waiting for it.  Every exit is told to the other ranks with a PMIx event
 * (nspace.c: ternrun_pmix_notify_exit) as soon as the rank is reaped.
 *
 * Exit code: the worst status of the ranks that failed on their own (exit
 * code, 128+signal, abort status or 1 for abort(0), 1 for an exit without
 * finalizing); ranks that died of ternrun's own SIGTERM/SIGKILL do not
 * count.  If nothing failed but the user signalled ternrun, 128+that signal.
 */
#include "launcher/job.h"
#include "pmix-shim/server_module.h"
#include "iof/iof.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define KILL_GIVEUP_MS 10000
#define POLL_MAX_MS 500 /* also the period of lookup-timeout checks */
#define IOF_IDLE_MS 1000 /* after the job: an output pipe silent this long is
                          * held by a leftover process, stop waiting for EOF */

enum phase { PHASE_RUN, PHASE_GRACE, PHASE_TERM, PHASE_KILL };

struct monitor {
    struct ternrun_job *job;
    int nlive;
    enum phase phase;
    long deadline;   /* next escalation (GRACE, TERM) or give-up (KILL) */
    bool failed;     /* some rank failed on its own */
    int worst;       /* worst status among those */
    int user_sig;    /* first signal received from outside, or 0 */
    int term_sig;    /* the signal PHASE_TERM sent (SIGTERM or a forwarded one) */
    bool gave_up;
};

static sigset_t orig_mask;
static int sig_fd = -1;

const sigset_t *ternrun_orig_sigmask(void)
{
    return &orig_mask;
}

int ternrun_monitor_setup(struct ternrun_job *job)
{
    sigset_t set;
    struct sigaction act;

    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGQUIT);
    if (pthread_sigmask(SIG_BLOCK, &set, &orig_mask) != 0) {
        ternrun_err("cannot block signals");
        return -1;
    }
    /* a closed stdout/stderr must not kill the launcher and orphan the job */
    memset(&act, 0, sizeof(act));
    act.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &act, NULL);
    /* An ignored signal is discarded before signalfd can see it, and shells
     * ignore SIGINT/SIGQUIT in background jobs: take them back (they stay
     * blocked, so the default action never runs).  SIGHUP keeps its
     * disposition so that "nohup ternrun ..." still works. */
    act.sa_handler = SIG_DFL;
    sigaction(SIGINT, &act, NULL);
    sigaction(SIGQUIT, &act, NULL);
    sigaction(SIGTERM, &act, NULL);

    sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sig_fd < 0) {
        ternrun_err("signalfd: %s", strerror(errno));
        return -1;
    }
    if (pipe2(job->wake_fd, O_CLOEXEC | O_NONBLOCK) != 0) {
        ternrun_err("pipe: %s", strerror(errno));
        close(sig_fd);
        sig_fd = -1;
        return -1;
    }
    return 0;
}

void ternrun_monitor_teardown(struct ternrun_job *job)
{
    if (sig_fd >= 0) {
        close(sig_fd);
        sig_fd = -1;
    }
    for (int i = 0; i < 2; i++) {
        if (job->wake_fd[i] >= 0) {
            close(job->wake_fd[i]);
            job->wake_fd[i] = -1;
        }
    }
}

/* Any thread; async-signal-safe. */
void ternrun_monitor_wake(struct ternrun_job *job)
{
    char c = 'w';
    ssize_t n = write(job->wake_fd[1], &c, 1);

    (void)n; /* full pipe: a wake-up is already pending */
}

static const char *signame(int sig)
{
    const char *s = sigabbrev_np(sig);

    return s ? s : "?";
}

static void signal_live(struct monitor *m, int sig)
{
    ternrun_pmix_release_running(m->job);
    for (int i = 0; i < m->job->opt.nranks; i++) {
        struct ternrun_rank *r = &m->job->ranks[i];

        if (r->state != TERNRUN_RANK_RUNNING) {
            continue;
        }
        /* not reaped yet, so the pid (and its group) cannot have been reused */
        if (kill(r->own_pgrp ? -r->pid : r->pid, sig) != 0 && errno != ESRCH) {
            ternrun_warn("cannot send SIG%s to rank %d (pid %ld): %s", signame(sig), r->rank,
                         (long)r->pid, strerror(errno));
        }
        pthread_mutex_lock(&m->job->lock); /* PMIx queries read it */
        r->signalled_by_us = true;
        pthread_mutex_unlock(&m->job->lock);
    }
}

static void enter_term(struct monitor *m, long kill_after_ms, long now)
{
    ternrun_vlog(1, "sending SIGTERM to %d rank(s)", m->nlive);
    signal_live(m, SIGTERM);
    m->term_sig = SIGTERM;
    m->phase = PHASE_TERM;
    m->deadline = now + kill_after_ms;
}

static void enter_kill(struct monitor *m, long now)
{
    ternrun_vlog(1, "sending SIGKILL to %d rank(s)", m->nlive);
    signal_live(m, SIGKILL);
    m->phase = PHASE_KILL;
    m->deadline = now + KILL_GIVEUP_MS;
}

static void record_failure(struct monitor *m, int code)
{
    if (!m->failed || code > m->worst) {
        m->worst = code;
    }
    m->failed = true;
}

/* A rank failed by itself: the others get --kill-grace to notice. */
static void start_grace(struct monitor *m, long now)
{
    long grace = m->job->opt.kill_grace_ms;

    if (m->phase != PHASE_RUN || m->nlive == 0) {
        return;
    }
    if (grace == 0) {
        enter_term(m, TERNRUN_ABORT_KILL_MS, now);
        return;
    }
    ternrun_vlog(1, "giving the other %d rank(s) %ld.%03ld s to finish", m->nlive, grace / 1000,
                 grace % 1000);
    m->phase = PHASE_GRACE;
    m->deadline = now + grace;
}

static void handle_aborts(struct monitor *m, long now)
{
    struct ternrun_job *job = m->job;

    for (int i = 0; i < job->opt.nranks; i++) {
        struct ternrun_rank *r = &job->ranks[i];
        bool report;
        int status = 0;
        char *msg = NULL;

        if (r->abort_reported) {
            continue;
        }
        pthread_mutex_lock(&job->lock);
        report = r->aborted;
        if (report) {
            status = r->abort_status;
            msg = r->abort_msg;
            r->abort_msg = NULL;
        }
        pthread_mutex_unlock(&job->lock);
        if (!report) {
            continue;
        }
        r->abort_reported = true;
        ternrun_err("rank %d (pid %ld) called PMIx_Abort with status %d: %s", r->rank,
                    (long)r->pid, status, msg && msg[0] ? msg : "(no message)");
        free(msg);
        /* an exit code is 8 bits; an abort must never look like success */
        record_failure(m, (status & 0xff) != 0 ? status & 0xff : 1);
        if (m->phase == PHASE_RUN || m->phase == PHASE_GRACE) {
            if (m->nlive > 0) {
                ternrun_err("aborting the job");
            }
            enter_term(m, TERNRUN_ABORT_KILL_MS, now);
        }
    }
}

/* Every exit is told to the other ranks at once (a PMIx event: tern fails
 * its connections to the rank, whatever the netmod, connected or not). */
static void handle_exit(struct monitor *m, struct ternrun_rank *r, int wstatus, long now)
{
    bool aborted, collateral, connected, finalized;
    int code;

    pthread_mutex_lock(&m->job->lock); /* PMIx queries read state and wstatus */
    r->state = TERNRUN_RANK_DONE;
    r->wstatus = wstatus;
    pthread_mutex_unlock(&m->job->lock);
    m->nlive--;
    ternrun_stdio_rank_exited(m->job, r);

    pthread_mutex_lock(&m->job->lock);
    aborted = r->aborted;
    connected = r->connected;
    finalized = r->finalized;
    pthread_mutex_unlock(&m->job->lock);
    code = WIFEXITED(wstatus)     ? WEXITSTATUS(wstatus)
           : WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus)
                                  : 1;
    if (aborted) {
        ternrun_pmix_notify_exit(m->job, r, TERNRUN_EXIT_ABORTED, code);
        handle_aborts(m, now); /* make sure it is reported, then done */
        ternrun_vlog(1, "rank %d (pid %ld) exited after its abort", r->rank, (long)r->pid);
        return;
    }

    collateral = r->signalled_by_us;
    /* As mpirun: a PMIx client that ends without PMIx_Finalize while the
     * others run has left them waiting for it; a rank that never called
     * PMIx_Init (a plain program) may exit as it likes, and so may the last
     * rank (nobody is left to wait for it). */
    if (code == 0 && connected && !finalized && !collateral && m->nlive > 0) {
        ternrun_pmix_notify_exit(m->job, r, TERNRUN_EXIT_NO_FINALIZE, code);
        ternrun_err("rank %d exited without finalizing (pid %ld, exit status 0) while %d "
                    "other rank(s) still run: the job fails",
                    r->rank, (long)r->pid, m->nlive);
        record_failure(m, 1);
        start_grace(m, now);
        return;
    }
    ternrun_pmix_notify_exit(m->job, r,
                             code == 0              ? TERNRUN_EXIT_NORMAL
                             : collateral           ? TERNRUN_EXIT_KILLED
                             : WIFSIGNALED(wstatus) ? TERNRUN_EXIT_SIGNALLED
                                                    : TERNRUN_EXIT_NONZERO,
                             code);
    if (code == 0) {
        ternrun_vlog(1, "rank %d (pid %ld) exited normally", r->rank, (long)r->pid);
        return;
    }
    if (collateral) {
        if (WIFSIGNALED(wstatus)) {
            ternrun_vlog(1, "rank %d (pid %ld) terminated by SIG%s", r->rank, (long)r->pid,
                         signame(WTERMSIG(wstatus)));
        } else {
            ternrun_vlog(1, "rank %d (pid %ld) exited with status %d after being signalled",
                         r->rank, (long)r->pid, code);
        }
        return;
    }
    if (WIFSIGNALED(wstatus)) {
        ternrun_err("rank %d (pid %ld) was killed by signal %d (SIG%s: %s)%s", r->rank,
                    (long)r->pid, WTERMSIG(wstatus), signame(WTERMSIG(wstatus)),
                    strsignal(WTERMSIG(wstatus)), WCOREDUMP(wstatus) ? ", core dumped" : "");
    } else {
        ternrun_err("rank %d (pid %ld) exited with status %d", r->rank, (long)r->pid, code);
    }
    record_failure(m, code);
    start_grace(m, now);
}

static struct ternrun_rank *rank_by_pid(struct ternrun_job *job, pid_t pid)
{
    for (int i = 0; i < job->opt.nranks; i++) {
        if (job->ranks[i].state == TERNRUN_RANK_RUNNING && job->ranks[i].pid == pid) {
            return &job->ranks[i];
        }
    }
    return NULL;
}

static void reap(struct monitor *m, long now)
{
    /* each waitpid reaps one child: bounded by the number of children */
    for (int i = 0; i <= m->job->opt.nranks; i++) {
        int wstatus;
        pid_t pid = waitpid(-1, &wstatus, WNOHANG);
        struct ternrun_rank *r;

        if (pid <= 0) {
            return;
        }
        r = rank_by_pid(m->job, pid);
        if (r != NULL) {
            handle_exit(m, r, wstatus, now);
        }
    }
}

static void handle_user_signal(struct monitor *m, int sig, long now)
{
    if (m->user_sig == 0) {
        m->user_sig = sig;
    }
    if (m->phase == PHASE_RUN || m->phase == PHASE_GRACE) {
        ternrun_err("received SIG%s, forwarding it to %d rank(s)", signame(sig), m->nlive);
        signal_live(m, sig);
        m->term_sig = sig;
        m->phase = PHASE_TERM;
        m->deadline = now + m->job->opt.kill_grace_ms;
    } else if (m->phase == PHASE_TERM) {
        ternrun_err("received SIG%s again, killing %d rank(s)", signame(sig), m->nlive);
        enter_kill(m, now);
    }
}

static void drain_signals(struct monitor *m, long now)
{
    struct signalfd_siginfo si[8];

    for (int round = 0; round < 16; round++) {
        ssize_t n = read(sig_fd, si, sizeof(si));

        if (n <= 0) {
            return;
        }
        for (size_t i = 0; i < (size_t)n / sizeof(si[0]); i++) {
            if (si[i].ssi_signo != SIGCHLD) {
                handle_user_signal(m, (int)si[i].ssi_signo, now);
            }
        }
    }
}

static void drain_wake(struct ternrun_job *job)
{
    char buf[64];

    for (int round = 0; round < 16; round++) {
        if (read(job->wake_fd[0], buf, sizeof(buf)) <= 0) {
            return;
        }
    }
}

static void check_deadline(struct monitor *m, long now)
{
    if (m->nlive == 0 || now < m->deadline) {
        return;
    }
    switch (m->phase) {
    case PHASE_GRACE:
        ternrun_err("%d rank(s) still running %ld ms after the failure: terminating them",
                    m->nlive, m->job->opt.kill_grace_ms);
        enter_term(m, TERNRUN_ABORT_KILL_MS, now);
        break;
    case PHASE_TERM:
        ternrun_err("%d rank(s) did not exit after SIG%s: sending SIGKILL", m->nlive,
                    signame(m->term_sig));
        enter_kill(m, now);
        break;
    case PHASE_KILL:
        ternrun_err("%d rank(s) still not reaped %d s after SIGKILL: giving up on them",
                    m->nlive, KILL_GIVEUP_MS / 1000);
        m->gave_up = true;
        break;
    case PHASE_RUN:
        break;
    }
}

int ternrun_monitor(struct ternrun_job *job, int launch_failure)
{
    struct monitor m = {.job = job, .phase = PHASE_RUN};
    struct pollfd *pfd = NULL;
    size_t npfd = 0;

    for (int i = 0; i < job->opt.nranks; i++) {
        if (job->ranks[i].state == TERNRUN_RANK_RUNNING) {
            m.nlive++;
        }
    }
    if (launch_failure != 0) {
        record_failure(&m, launch_failure);
        if (m.nlive > 0) {
            enter_term(&m, TERNRUN_ABORT_KILL_MS, ternrun_now_ms());
        }
    }

    while (m.nlive > 0 && !m.gave_up) {
        long now = ternrun_now_ms();
        long timeout = POLL_MAX_MS;
        size_t niof = 0, need = 2 + tern_iof_pollfd_max(job->iof);

        if (need > npfd) {
            struct pollfd *tmp = realloc(pfd, need * sizeof(*pfd));

            if (tmp == NULL) {
                ternrun_err("out of memory in the event loop: killing the job");
                signal_live(&m, SIGKILL);
                m.gave_up = true;
                break;
            }
            pfd = tmp;
            npfd = need;
        }
        pfd[0] = (struct pollfd){.fd = sig_fd, .events = POLLIN};
        pfd[1] = (struct pollfd){.fd = job->wake_fd[0], .events = POLLIN};
        niof = tern_iof_poll_prepare(job->iof, pfd + 2, npfd - 2);
        if (m.phase != PHASE_RUN && m.deadline - now < timeout) {
            timeout = m.deadline > now ? m.deadline - now : 0;
        }
        int prc = poll(pfd, 2 + niof, (int)timeout);

        if (prc < 0 && errno != EINTR) {
            ternrun_err("poll: %s: killing the job", strerror(errno));
            signal_live(&m, SIGKILL);
            m.gave_up = true;
            break;
        }
        tern_iof_progress(job->iof, pfd + 2, niof);
        now = ternrun_now_ms();
        /* while output streams, most wake-ups are for the IOF alone: the
         * signal, wake and child checks (three syscalls) run only when
         * their fds said so, and on every timeout or interruption as a
         * safety net (a SIGCHLD is on sig_fd, an abort writes wake_fd) */
        if (prc <= 0 || pfd[0].revents != 0 || pfd[1].revents != 0) {
            drain_wake(job);
            handle_aborts(&m, now);
            drain_signals(&m, now);
            reap(&m, now);
        }
        check_deadline(&m, now);
        tern_srv_module_expire();
    }
    free(pfd);

    /* the ranks are gone: forward everything they wrote.  Only a signal
     * from the user stops the wait: sig_fd also carries SIGCHLD, and one
     * still queued after the last waitpid would cut the dead ranks' last
     * output (seen as a flaky loss in tests/iof/lost_output.sh), so the
     * drain watches a signalfd of the user signals alone (they stay
     * blocked; a signalfd selects from the pending ones). */
    sigset_t user;
    sigemptyset(&user);
    sigaddset(&user, SIGINT);
    sigaddset(&user, SIGTERM);
    sigaddset(&user, SIGHUP);
    sigaddset(&user, SIGQUIT);
    int user_fd = signalfd(-1, &user, SFD_CLOEXEC | SFD_NONBLOCK);
    if (tern_iof_complete(job->iof, IOF_IDLE_MS, user_fd) == -EINTR) {
        ternrun_err("signal received while forwarding the ranks' last output: not waiting");
    }
    if (user_fd >= 0) {
        close(user_fd);
    }

    if (m.failed) {
        return m.worst;
    }
    if (m.user_sig != 0) {
        return 128 + m.user_sig;
    }
    return m.gave_up ? 1 : 0;
}
