/* The fatal-signal backtrace (crash.h). */
#include "config.h"

#include "engine/crash.h"

#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TERN_CRASH_OFF 1
#endif

#ifndef TERN_CRASH_OFF
static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
static const char *const fatal_names[] = {"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"};
#define NFATAL (sizeof(fatal) / sizeof(fatal[0]))
static struct sigaction previous[NFATAL];
static atomic_bool installed;

/* Only write(2) and backtrace (made ready at install: its first call may
 * load libgcc) besides a snprintf of integers and a pointer. */
static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    size_t i = 0;
    while (i < NFATAL && fatal[i] != sig)
        i++;
    char line[200];
    int n = snprintf(line, sizeof(line),
                     "tern[%d]: fatal signal %d (%s) at address %p in thread %ld; backtrace:\n",
                     (int)getpid(), sig, i < NFATAL ? fatal_names[i] : "?",
                     si ? si->si_addr : NULL, (long)syscall(SYS_gettid));
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line));
        (void)w;
    }
    void *frames[64];
    int k = backtrace(frames, 64);
    backtrace_symbols_fd(frames, k, STDERR_FILENO);
    /* the previous action takes the signal when the faulting instruction
     * runs again on return (or now, for a raised one) */
    if (i < NFATAL)
        sigaction(sig, &previous[i], NULL);
    if (si == NULL || si->si_code <= 0)
        raise(sig);
}
#endif

void tern_crash_install(void)
{
#ifndef TERN_CRASH_OFF
    bool expect = false;
    if (!atomic_compare_exchange_strong(&installed, &expect, true))
        return;
    void *warm[2];
    (void)backtrace(warm, 2);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NFATAL; i++)
        sigaction(fatal[i], &sa, &previous[i]);
#endif
}

void tern_crash_remove(void)
{
#ifndef TERN_CRASH_OFF
    bool expect = true;
    if (!atomic_compare_exchange_strong(&installed, &expect, false))
        return;
    for (size_t i = 0; i < NFATAL; i++) {
        struct sigaction cur;
        /* only where ours is still there (the application may have its own now) */
        if (sigaction(fatal[i], NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
            cur.sa_sigaction == on_fatal)
            sigaction(fatal[i], &previous[i], NULL);
    }
#endif
}
