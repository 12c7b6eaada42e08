/* Status texts, the per-thread last error, logging. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tern/status.h>

#include "engine/log.h"
#include "engine/sock/sock.h"

/* Indexed by -status: every public code, gaps NULL. */
static const char *const status_text[-TERN_ERR_LAST] = {
    [0] = "success",
    [-TERN_ERR_INVALID_PARAM] = "invalid parameter",
    [-TERN_ERR_INVALID_RANK] = "invalid rank",
    [-TERN_ERR_INVALID_TAG] = "invalid tag",
    [-TERN_ERR_TRUNCATED] = "message truncated",
    [-TERN_ERR_AGAIN] = "resource temporarily unavailable, retry",
    [-TERN_ERR_NO_MEMORY] = "out of memory",
    [-TERN_ERR_NO_SHM_SPACE] = "not enough space in /dev/shm",
    [-TERN_ERR_NO_RESOURCE] = "out of device or system resources",
    [-TERN_ERR_PEER_FAILED] = "peer process failed",
    [-TERN_ERR_UNREACHABLE] = "peer unreachable",
    [-TERN_ERR_CONN_REFUSED] = "connection refused",
    [-TERN_ERR_CONN_RESET] = "connection reset by peer",
    [-TERN_ERR_CONN_CLOSED] = "connection closed by peer",
    [-TERN_ERR_HOST_UNREACH] = "host unreachable",
    [-TERN_ERR_REMOTE_ACCESS] = "remote memory access refused",
    [-TERN_ERR_MALFORMED] = "malformed packet or segment",
    [-TERN_ERR_PMIX] = "PMIx error",
    [-TERN_ERR_SHM] = "shared memory error",
    [-TERN_ERR_IO] = "I/O error",
    [-TERN_ERR_NO_DEVICE] = "no usable device",
    [-TERN_ERR_ADDR_IN_USE] = "address already in use",
    [-TERN_ERR_UNSUPPORTED] = "operation not supported",
    [-TERN_ERR_TIMED_OUT] = "timed out",
    [-TERN_ERR_INTERRUPTED] = "interrupted by tern_worker_signal",
    [-TERN_ERR_NOT_FOUND] = "not found",
    [-TERN_ERR_CANCELED] = "canceled",
};

const char *tern_strerror(tern_status_t status)
{
    if (status == TERN_INPROGRESS)
        return "in progress";
    if (status <= 0 && status > TERN_ERR_LAST && status_text[-status] != NULL)
        return status_text[-status];
    /* engine/sock's private statuses reach logs and tcp's messages, never users */
    switch ((int)status) {
    case TERN_SOCK_ERR_BUSY:
        return "socket operation already outstanding";
    case TERN_SOCK_ERR_CLOSED:
        return "socket closed while the operation was pending";
    default:
        return "unknown status";
    }
}

static _Thread_local char last_error[512];

const char *tern_last_error(void)
{
    return last_error[0] ? last_error : "no error recorded";
}

/* Read once; threads of several workers may get here at once: each may
 * compute it, all compute the same value (relaxed is enough).  Raw getenv:
 * errors are logged before tern_init and outside any context; TERN_LOG is
 * in the engine's table all the same (validated by tern_init, listed by
 * tern_info). */
static int log_level(void)
{
    static _Atomic int level = -1;
    int l = atomic_load_explicit(&level, memory_order_relaxed);
    if (l < 0) {
        const char *s = getenv("TERN_LOG");
        l = s ? atoi(s) : 0;
        atomic_store_explicit(&level, l, memory_order_relaxed);
    }
    return l;
}

/* One diagnostic line.  Under ternrun it goes to the INTERNAL stream: the fd
 * named by TERN_IOF_INTERNAL_FD (a non-blocking pipe that ternrun shows
 * apart from the job's output).  One write() per line (lines are shorter
 * than PIPE_BUF, so they never mix with another thread's); if the variable
 * does not name an fd open for writing, or the write fails or would block,
 * the line goes to stderr as without ternrun. */
static void emit_line(const char *line, size_t len)
{
    /* internal, not a user setting (no registry entry): ternrun sets it for
     * its ranks (launcher/stdio.c) */
    const char *s = getenv("TERN_IOF_INTERNAL_FD");

    if (s != NULL && *s != '\0') {
        char *end;
        long fd = strtol(s, &end, 10);
        int fl;

        if (*end == '\0' && fd > 2 && fd < 1L << 30 && (fl = fcntl((int)fd, F_GETFL)) >= 0 &&
            (fl & O_ACCMODE) != O_RDONLY) {
            ssize_t w;

            do {
                w = write((int)fd, line, len);
            } while (w < 0 && errno == EINTR);
            if (w == (ssize_t)len) {
                return;
            }
            if (w > 0) { /* cannot happen for a pipe below PIPE_BUF: finish on stderr */
                line += w;
                len -= (size_t)w;
            }
        }
    }
    fwrite(line, 1, len, stderr);
    fflush(stderr);
}

/* Replace the thread's message by msg and log it.  msg is never last_error
 * itself: callers format into a buffer of their own first. */
static tern_status_t record(tern_status_t status, const char *msg)
{
    snprintf(last_error, sizeof(last_error), "%s", msg);
    if (log_level() >= 1) {
        char line[768];
        int n = snprintf(line, sizeof(line), "tern[%d]: error: %s (%s)\n", (int)getpid(),
                         last_error, tern_strerror(status));

        if (n >= (int)sizeof(line)) {
            n = (int)sizeof(line) - 1;
            line[n - 1] = '\n';
        }
        emit_line(line, (size_t)n);
    }
    return status;
}

/* Formatted apart, then copied: an argument pointing into last_error (the
 * previous message, however it was obtained) is read whole before anything
 * is written there.  vsnprintf into its own source is undefined and came
 * out garbled. */
tern_status_t tern_error_impl(tern_status_t status, const char *fmt, ...)
{
    char msg[sizeof(last_error)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return record(status, msg);
}

tern_status_t tern_error_wrap(tern_status_t status, const char *fmt, ...)
{
    char msg[sizeof(last_error)];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof(msg) - 3 && last_error[0] != '\0') {
        /* as much of the cause as fits: a long chain loses its tail */
        size_t at = (size_t)n, room = sizeof(msg) - at - 3;
        size_t len = strnlen(last_error, room);
        memcpy(msg + at, ": ", 2);
        memcpy(msg + at + 2, last_error, len);
        msg[at + 2 + len] = '\0';
    }
    return record(status, msg);
}

static void emit_tagged(const char *tag, const char *fmt, va_list ap)
{
    char buf[512], line[600];
    int n;
    vsnprintf(buf, sizeof(buf), fmt, ap);
    n = snprintf(line, sizeof(line), "tern[%d]: %s: %s\n", (int)getpid(), tag, buf);
    if (n >= (int)sizeof(line)) {
        n = (int)sizeof(line) - 1;
        line[n - 1] = '\n';
    }
    emit_line(line, (size_t)n);
}

void tern_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit_tagged("warning", fmt, ap);
    va_end(ap);
}

void tern_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit_tagged("note", fmt, ap);
    va_end(ap);
}

#ifdef TERN_DEBUG_LOG
void tern_debug_print(const char *fmt, ...)
{
    if (log_level() < 3)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tern[%d]: ", (int)getpid());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
#endif
