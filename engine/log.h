/*
 * Logging.  Errors are recorded where they are first decided with
 * tern_error(): the message becomes tern_last_error() of the thread and,
 * with TERN_LOG=1 (or higher), goes to stderr.  Debug logging compiles out
 * unless configured with --enable-debug-log: the hot path pays nothing.
 */
#ifndef TERN_ENGINE_LOG_H
#define TERN_ENGINE_LOG_H

#include <tern/status.h>

/* Record status with a printf-style message naming the cause; returns status.
 * The message is formatted in a buffer of its own before it replaces the
 * thread's last error, so an argument may point into the old one. */
tern_status_t tern_error_impl(tern_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The same with the thread's previous message kept as the cause: the
 * message becomes "<fmt...>: <previous message>" (just "<fmt...>" when
 * this thread recorded none).  For an error decided on top of another:
 * "job X: no such job known to the launcher: PMIx_Get(...) failed: ...". */
tern_status_t tern_error_wrap(tern_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * tern_error(status, fmt, ...): tern_error_impl, with a compile-time guard.
 * Handing tern_last_error() to it as an argument was the way to nest the
 * previous message, and it formatted the thread's buffer into itself
 * (undefined; the messages came out garbled).  tern_error_wrap does that
 * job; so that the pattern cannot come back, inside tern_error's arguments
 * the name tern_last_error is an object of a type that names the fix, not
 * the function: `tern_error(st, "...: %s", tern_last_error())` fails to
 * compile ("called object 'tern_last_error' is not a function").
 */
#define tern_error(...)                                                                            \
    __extension__({                                                                                \
        const struct tern_error_nests_last_error_with_tern_error_wrap {                            \
            char unused;                                                                           \
        } tern_last_error = {0};                                                                   \
        (void)tern_last_error;                                                                     \
        tern_error_impl(__VA_ARGS__);                                                              \
    })

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
