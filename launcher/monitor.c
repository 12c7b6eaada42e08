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
 * Phases, per namespace (the first job, and each job a rank spawned):
 *          RUN --(rank fails)--> GRACE --(kill-grace)--> TERM --(1 s)--> KILL
 *          RUN/GRACE --(abort, launch failure)--> TERM --(1 s)--> KILL
 *          any --(signal from the user)--> TERM --(kill-grace)--> KILL
 * A namespace that fails or aborts is ended with the jobs spawned from it
 * (transitively), not with the job that spawned it: the spawner's ranks
 * are told by PMIx events and go on.  A signal from the user ends them all.
 * After SIGKILL ternrun waits at most KILL_GIVEUP_MS more, then exits anyway:
 * it never hangs once it has given up on the ranks.
 *
 * A rank that called PMIx_Init and exits 0 without PMIx_Finalize while
 * other ranks still run has failed too (as under mpirun): its peers may be
 * waiting for it.  Every exit is told to the other ranks with a PMIx event
 * (nspace.c: ternrun_pmix_notify_exit) as soon as the rank is reaped.
 *
 * Exit code: the worst status of the ranks, of every job, that failed on
 * their own (exit code, 128+signal, abort status or 1 for abort(0), 1 for
 * an exit without finalizing); ranks that died of ternrun's own SIGTERM /
 * SIGKILL do not count.  If nothing failed but the user signalled ternrun,
 * 128+that signal.  ternrun waits for every job, spawned ones included.
 */
#include "launcher/job.h"
#include "pmix/server/server_module.h"
#include "launcher/iof/iof.h"

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

#define PHASE_RUN TERNRUN_PHASE_RUN
#define PHASE_GRACE TERNRUN_PHASE_GRACE
#define PHASE_TERM TERNRUN_PHASE_TERM
#define PHASE_KILL TERNRUN_PHASE_KILL

/* per namespace: ns->nlive, ns->phase, ns->deadline (next escalation, or
 * the give-up in KILL) and ns->term_sig (the signal TERM sent) */
struct monitor {
    struct ternrun_job *job;
    int nlive;       /* of all namespaces */
    bool failed;     /* some rank failed on its own */
    int worst;       /* worst status among those */
    int user_sig;    /* first signal received from outside, or 0 */
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

static void signal_ns(struct monitor *m, struct ternrun_ns *ns, int sig)
{
    ternrun_pmix_release_running(m->job, ns);
    for (int i = 0; i < ns->nranks; i++) {
        struct ternrun_rank *r = &ns->ranks[i];

        if (r->state != TERNRUN_RANK_RUNNING) {
            continue;
        }
        /* not reaped yet, so the pid (and its group) cannot have been reused */
        if (kill(r->own_pgrp ? -r->pid : r->pid, sig) != 0 && errno != ESRCH) {
            char name[300];
            ternrun_warn("cannot send SIG%s to %s (pid %ld): %s", signame(sig),
                         ternrun_rank_name(r, name, sizeof(name)), (long)r->pid,
                         strerror(errno));
        }
        pthread_mutex_lock(&m->job->lock); /* PMIx queries read it */
        r->signalled_by_us = true;
        pthread_mutex_unlock(&m->job->lock);
    }
}

static void signal_all(struct monitor *m, int sig)
{
    for (int k = 0; k < m->job->nns; k++) {
        signal_ns(m, m->job->ns[k], sig);
    }
}

/* ns and the jobs spawned from it that are not yet being ended: SIGTERM */
static void enter_term(struct monitor *m, struct ternrun_ns *ns, long kill_after_ms, long now)
{
    for (int k = ns->index; k < m->job->nns; k++) {
        struct ternrun_ns *d = m->job->ns[k];

        if (!ternrun_ns_descends(m->job, d, ns) || d->phase >= PHASE_TERM) {
            continue;
        }
        if (d->nlive > 0) {
            ternrun_vlog(1, "sending SIGTERM to %d rank(s) of %s", d->nlive, d->name);
        }
        signal_ns(m, d, SIGTERM);
        d->term_sig = SIGTERM;
        d->phase = PHASE_TERM;
        d->deadline = now + kill_after_ms;
    }
}

static void enter_kill(struct monitor *m, struct ternrun_ns *ns, long now)
{
    ternrun_vlog(1, "sending SIGKILL to %d rank(s) of %s", ns->nlive, ns->name);
    signal_ns(m, ns, SIGKILL);
    ns->phase = PHASE_KILL;
    ns->deadline = now + KILL_GIVEUP_MS;
}

static void record_failure(struct monitor *m, int code)
{
    if (!m->failed || code > m->worst) {
        m->worst = code;
    }
    m->failed = true;
}

/* ranks running in ns and in the jobs spawned from it: what its grace and
 * its SIGTERM (enter_term) reach */
static int live_with_spawned(const struct monitor *m, const struct ternrun_ns *ns)
{
    int live = 0;

    for (int k = ns->index; k < m->job->nns; k++) {
        if (ternrun_ns_descends(m->job, m->job->ns[k], ns)) {
            live += m->job->ns[k]->nlive;
        }
    }
    return live;
}

/* A rank failed by itself: the other ranks of its namespace (and of the
 * jobs it spawned) get --kill-grace to notice. */
static void start_grace(struct monitor *m, struct ternrun_ns *ns, long now)
{
    long grace = m->job->opt.kill_grace_ms;
    int live = live_with_spawned(m, ns);

    if (ns->phase != PHASE_RUN || live == 0) {
        return;
    }
    if (grace == 0) {
        enter_term(m, ns, TERNRUN_ABORT_KILL_MS, now);
        return;
    }
    ternrun_vlog(1, "giving the other %d rank(s) %ld.%03ld s to finish", live, grace / 1000,
                 grace % 1000);
    ns->phase = PHASE_GRACE;
    ns->deadline = now + grace;
}

static void handle_aborts(struct monitor *m, long now)
{
    struct ternrun_job *job = m->job;

    for (int i = 0; i < job->nall; i++) {
        struct ternrun_rank *r = job->all[i];
        bool report;
        int status = 0;
        char *msg = NULL;
        char name[300];

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
        ternrun_err("%s (pid %ld) called PMIx_Abort with status %d: %s",
                    ternrun_rank_name(r, name, sizeof(name)), (long)r->pid, status,
                    msg && msg[0] ? msg : "(no message)");
        free(msg);
        /* an exit code is 8 bits; an abort must never look like success */
        record_failure(m, (status & 0xff) != 0 ? status & 0xff : 1);
        if (r->ns->phase == PHASE_RUN || r->ns->phase == PHASE_GRACE) {
            if (r->ns->nlive > 0 && r->ns->index == 0) {
                ternrun_err("aborting the job");
            } else if (r->ns->nlive > 0) {
                ternrun_err("aborting job %s", r->ns->name);
            }
            enter_term(m, r->ns, TERNRUN_ABORT_KILL_MS, now);
        }
    }
}

/* The kills PMIx_Job_control asked for (nspace.c, hook_signal): each
 * rank out of the PMIx server first, then the signal. */
static void send_asked_kills(struct monitor *m)
{
    struct ternrun_job *job = m->job;

    for (int i = 0; i < job->nall; i++) {
        struct ternrun_rank *r = job->all[i];
        int sig;

        pthread_mutex_lock(&job->lock);
        sig = r->kill_sig;
        r->kill_sig = 0;
        pthread_mutex_unlock(&job->lock);
        if (sig == 0 || r->state != TERNRUN_RANK_RUNNING) {
            continue;
        }
        ternrun_pmix_release_rank(job, r);
        /* not reaped (main thread), so the pid cannot have been reused */
        if (kill(r->own_pgrp ? -r->pid : r->pid, sig) != 0 && errno != ESRCH) {
            char name[300];
            ternrun_warn("cannot send SIG%s to %s (pid %ld): %s", signame(sig),
                         ternrun_rank_name(r, name, sizeof(name)), (long)r->pid, strerror(errno));
        }
    }
}

/* Every exit is told to the other ranks at once (a PMIx event: tern fails
 * its connections to the rank, whatever the netmod, connected or not). */
static void rank_exited(struct monitor *m, struct ternrun_rank *r, int wstatus, long now)
{
    bool aborted, collateral, connected, finalized;
    struct ternrun_ns *ns = r->ns;
    char name[300];
    int code;

    ternrun_rank_name(r, name, sizeof(name));
    pthread_mutex_lock(&m->job->lock); /* PMIx queries read state and wstatus */
    r->state = TERNRUN_RANK_DONE;
    r->wstatus = wstatus;
    pthread_mutex_unlock(&m->job->lock);
    m->nlive--;
    ns->nlive--;
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
        ternrun_vlog(1, "%s (pid %ld) exited after its abort", name, (long)r->pid);
        return;
    }

    collateral = r->signalled_by_us;
    /* As mpirun: a PMIx client that ends without PMIx_Finalize while the
     * others of its job run has left them waiting for it; a rank that never
     * called PMIx_Init (a plain program) may exit as it likes, and so may
     * the last rank of a job (nobody is left to wait for it). */
    if (code == 0 && connected && !finalized && !collateral && ns->nlive > 0) {
        ternrun_pmix_notify_exit(m->job, r, TERNRUN_EXIT_NO_FINALIZE, code);
        ternrun_err("%s exited without finalizing (pid %ld, exit status 0) while %d "
                    "other rank(s) still run: the job fails",
                    name, (long)r->pid, ns->nlive);
        record_failure(m, 1);
        start_grace(m, ns, now);
        return;
    }
    ternrun_pmix_notify_exit(m->job, r,
                             code == 0              ? TERNRUN_EXIT_NORMAL
                             : collateral           ? TERNRUN_EXIT_KILLED
                             : WIFSIGNALED(wstatus) ? TERNRUN_EXIT_SIGNALLED
                                                    : TERNRUN_EXIT_NONZERO,
                             code);
    if (code == 0) {
        ternrun_vlog(1, "%s (pid %ld) exited normally", name, (long)r->pid);
        return;
    }
    if (collateral) {
        if (WIFSIGNALED(wstatus)) {
            ternrun_vlog(1, "%s (pid %ld) terminated by SIG%s", name, (long)r->pid,
                         signame(WTERMSIG(wstatus)));
        } else {
            ternrun_vlog(1, "%s (pid %ld) exited with status %d after being signalled", name,
                         (long)r->pid, code);
        }
        return;
    }
    if (WIFSIGNALED(wstatus)) {
        ternrun_err("%s (pid %ld) was killed by signal %d (SIG%s: %s)%s", name, (long)r->pid,
                    WTERMSIG(wstatus), signame(WTERMSIG(wstatus)), strsignal(WTERMSIG(wstatus)),
                    WCOREDUMP(wstatus) ? ", core dumped" : "");
    } else {
        ternrun_err("%s (pid %ld) exited with status %d", name, (long)r->pid, code);
    }
    record_failure(m, code);
    start_grace(m, ns, now);
}

/* A job whose last rank ended: its spawner and connected jobs are told
 * (PMIX_EVENT_JOB_END) with its worst failure (0: none; ranks ternrun
 * killed do not count).  A spawn that failed told its requester already. */
static void handle_exit(struct monitor *m, struct ternrun_rank *r, int wstatus, long now)
{
    struct ternrun_ns *ns = r->ns;
    int worst = 0;

    rank_exited(m, r, wstatus, now);
    if (ns->nlive > 0) {
        return;
    }
    pthread_mutex_lock(&m->job->lock); /* aborted, abort_status */
    for (int i = 0; i < ns->nranks; i++) {
        const struct ternrun_rank *o = &ns->ranks[i];
        int code;

        if (o->state != TERNRUN_RANK_DONE) {
            pthread_mutex_unlock(&m->job->lock);
            return; /* never started: a failed spawn */
        }
        code = WIFEXITED(o->wstatus) ? WEXITSTATUS(o->wstatus) : 128 + WTERMSIG(o->wstatus);
        if (o->aborted) {
            code = (o->abort_status & 0xff) ? o->abort_status & 0xff : 1;
        } else if (o->signalled_by_us) {
            code = 0;
        }
        worst = code > worst ? code : worst;
    }
    pthread_mutex_unlock(&m->job->lock);
    ternrun_pmix_notify_job_end(m->job, ns, worst);
}

static struct ternrun_rank *rank_by_pid(struct ternrun_job *job, pid_t pid)
{
    for (int i = 0; i < job->nall; i++) {
        if (job->all[i]->state == TERNRUN_RANK_RUNNING && job->all[i]->pid == pid) {
            return job->all[i];
        }
    }
    return NULL;
}

static void reap(struct monitor *m, long now)
{
    /* each waitpid reaps one child: bounded by the number of children */
    for (int i = 0; i <= m->job->nall; i++) {
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

/* a signal from the user ends every job */
static void handle_user_signal(struct monitor *m, int sig, long now)
{
    bool forwarded = false;

    if (m->user_sig == 0) {
        m->user_sig = sig;
    }
    for (int k = 0; k < m->job->nns; k++) {
        struct ternrun_ns *ns = m->job->ns[k];

        if (ns->phase == PHASE_RUN || ns->phase == PHASE_GRACE) {
            if (!forwarded) {
                ternrun_err("received SIG%s, forwarding it to %d rank(s)", signame(sig),
                            m->nlive);
                forwarded = true;
            }
            signal_ns(m, ns, sig);
            ns->term_sig = sig;
            ns->phase = PHASE_TERM;
            ns->deadline = now + m->job->opt.kill_grace_ms;
        } else if (ns->phase == PHASE_TERM) {
            if (!forwarded) {
                ternrun_err("received SIG%s again, killing %d rank(s)", signame(sig), m->nlive);
                forwarded = true;
            }
            enter_kill(m, ns, now);
        }
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

/* Has ns's deadline still something to end?  A grace covers the jobs ns
 * spawned too (start_grace, enter_term); TERM and KILL only ns's own ranks
 * (enter_term gave each spawned job a TERM phase of its own).  With nothing
 * left the deadline neither fires nor bounds the poll: a spawned job that
 * failed at once used to stay in TERM with a past deadline (a zero poll
 * timeout, a core spinning for as long as the other jobs ran). */
static bool escalating(const struct monitor *m, const struct ternrun_ns *ns)
{
    switch (ns->phase) {
    case PHASE_GRACE:
        return live_with_spawned(m, ns) > 0;
    case PHASE_TERM:
    case PHASE_KILL:
        return ns->nlive > 0;
    default:
        return false;
    }
}

static void check_deadline(struct monitor *m, struct ternrun_ns *ns, long now)
{
    if (!escalating(m, ns) || now < ns->deadline) {
        return;
    }
    switch (ns->phase) {
    case PHASE_GRACE:
        ternrun_err("rank(s) still running %ld ms after the failure: terminating them",
                    m->job->opt.kill_grace_ms);
        enter_term(m, ns, TERNRUN_ABORT_KILL_MS, now);
        break;
    case PHASE_TERM: /* escalating: ns->nlive > 0 */
        ternrun_err("%d rank(s) did not exit after SIG%s: sending SIGKILL", ns->nlive,
                    signame(ns->term_sig));
        enter_kill(m, ns, now);
        break;
    case PHASE_KILL:
        ternrun_err("%d rank(s) still not reaped %d s after SIGKILL: giving up on them",
                    ns->nlive, KILL_GIVEUP_MS / 1000);
        m->gave_up = true;
        break;
    case PHASE_RUN:
        break;
    }
}

/* ranks running, per namespace and in all (after a spawn) */
static void count_live(struct monitor *m)
{
    m->nlive = 0;
    for (int k = 0; k < m->job->nns; k++) {
        struct ternrun_ns *ns = m->job->ns[k];

        ns->nlive = 0;
        for (int i = 0; i < ns->nranks; i++) {
            ns->nlive += ns->ranks[i].state == TERNRUN_RANK_RUNNING;
        }
        m->nlive += ns->nlive;
    }
}

int ternrun_monitor(struct ternrun_job *job, int launch_failure)
{
    struct monitor m = {.job = job};
    struct pollfd *pfd = NULL;
    size_t npfd = 0;

    count_live(&m);
    if (launch_failure != 0) {
        record_failure(&m, launch_failure);
        if (m.nlive > 0) {
            enter_term(&m, job->ns[0], TERNRUN_ABORT_KILL_MS, ternrun_now_ms());
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
                signal_all(&m, SIGKILL);
                m.gave_up = true;
                break;
            }
            pfd = tmp;
            npfd = need;
        }
        pfd[0] = (struct pollfd){.fd = sig_fd, .events = POLLIN};
        pfd[1] = (struct pollfd){.fd = job->wake_fd[0], .events = POLLIN};
        niof = tern_iof_poll_prepare(job->iof, pfd + 2, npfd - 2);
        for (int k = 0; k < job->nns; k++) {
            const struct ternrun_ns *ns = job->ns[k];
            if (escalating(&m, ns) && ns->deadline - now < timeout) {
                timeout = ns->deadline > now ? ns->deadline - now : 0;
            }
        }
        int prc = poll(pfd, 2 + niof, (int)timeout);

        if (prc < 0 && errno != EINTR) {
            ternrun_err("poll: %s: killing the job", strerror(errno));
            signal_all(&m, SIGKILL);
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
            send_asked_kills(&m);
            drain_signals(&m, now);
            reap(&m, now);
            if (ternrun_spawn_run_pending(job) > 0) {
                count_live(&m);
            }
        }
        for (int k = 0; k < job->nns; k++) {
            check_deadline(&m, job->ns[k], now);
        }
        tern_srv_module_expire();
    }
    free(pfd);
    ternrun_spawn_refuse_pending(job);

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
