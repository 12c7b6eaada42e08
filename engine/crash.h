/*
 * Fatal signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE): with TERN_BACKTRACE=1
 * (the default) tern_init installs a handler that writes the signal, the
 * faulting address, the thread and a backtrace to stderr, then puts the
 * previous action back (the application's handler, or the default: the
 * process dies as it would have).  As UCX's UCX_HANDLE_ERRORS=bt.  Not in
 * ASan / TSan builds, whose own reports say more.  tern_finalize removes it.
 */
#ifndef TERN_CRASH_H
#define TERN_CRASH_H

void tern_crash_install(void);
void tern_crash_remove(void);

#endif
