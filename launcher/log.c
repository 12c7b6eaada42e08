/*
 * ternrun messages: every line starts with "ternrun: " and goes to stderr,
 * so it never mixes into the ranks' stdout.  Messages of the main thread
 * are queued behind the ranks' stderr bytes that ternrun still holds for
 * the same destination (tern_iof_note), so "rank 1 exited ..." comes after
 * rank 1's last lines; other threads (the PMIx server's) write directly.
 */
#include "launcher/job.h"
#include "launcher/iof/iof.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int ternrun_verbose;

/* Set by the main thread before the PMIx server's thread exists and cleared
 * after it is gone (ternrun.c's order), so other threads only ever read
 * them, and only after pthread_create. */
static struct tern_iof *log_iof;
static pthread_t log_thread;

void ternrun_log_route(struct tern_iof *iof)
{
    log_iof = iof;
    log_thread = pthread_self();
}

static void emit(const char *tag, const char *fmt, va_list ap)
{
    char line[1024], out[1100];
    int n;

    vsnprintf(line, sizeof(line), fmt, ap);
    n = snprintf(out, sizeof(out), TERNRUN_NAME ": %s%s\n", tag, line);
    if (n >= (int)sizeof(out)) {
        n = (int)sizeof(out) - 1;
        out[n - 1] = '\n';
    }
    if (pthread_equal(pthread_self(), log_thread) && log_iof != NULL &&
        tern_iof_note(log_iof, STDERR_FILENO, out, (size_t)n)) {
        return;
    }
    /* one fputs per line so concurrent writers do not interleave mid-line */
    fputs(out, stderr);
}

void ternrun_err(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    emit("", fmt, ap);
    va_end(ap);
}

void ternrun_warn(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    emit("warning: ", fmt, ap);
    va_end(ap);
}

void ternrun_info(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    emit("", fmt, ap);
    va_end(ap);
}

void ternrun_vlog(int level, const char *fmt, ...)
{
    va_list ap;

    if (ternrun_verbose < level) {
        return;
    }
    va_start(ap, fmt);
    emit("", fmt, ap);
    va_end(ap);
}

long ternrun_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *ternrun_rank_name(const struct ternrun_rank *r, char *buf, size_t len)
{
    if (r->ns == NULL || r->ns->index == 0) {
        snprintf(buf, len, "rank %d", r->rank);
    } else {
        snprintf(buf, len, "rank %d of %s", r->rank, r->ns->name);
    }
    return buf;
}
