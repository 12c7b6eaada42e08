/*
 * ternrun messages: every line starts with "ternrun: " and goes to stderr,
 * so it never mixes into the ranks' stdout.
 */
#include "launcher/job.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

int ternrun_verbose;

static void emit(const char *tag, const char *fmt, va_list ap)
{
    char line[1024];

    vsnprintf(line, sizeof(line), fmt, ap);
    /* one fprintf per line so concurrent writers do not interleave mid-line */
    fprintf(stderr, TERNRUN_NAME ": %s%s\n", tag, line);
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
