/*
 * Logging.  Errors are recorded where they are first decided with
 * tern_error(): the message becomes tern_last_error() of the thread and,
 * with TERN_LOG=1 (or higher), goes to stderr.  Debug logging compiles out
 * unless configured with --enable-debug-log: the hot path pays nothing.
 */
#ifndef TERN_ENGINE_LOG_H
#define TERN_ENGINE_LOG_H

#include <tern/status.h>

/* Record status with a printf-style message naming the cause; returns status. */
tern_status_t tern_error(tern_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A warning printed once per process for the given flag. */
void tern_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A line saying what tern chose for the user ("tern[pid]: note: ..."). */
void tern_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef TERN_DEBUG_LOG
void tern_debug_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define tern_debug(...) tern_debug_print(__VA_ARGS__)
#else
#define tern_debug(...) ((void)0)
#endif

#define TERN_LIKELY(x) __builtin_expect(!!(x), 1)
#define TERN_UNLIKELY(x) __builtin_expect(!!(x), 0)

#endif
