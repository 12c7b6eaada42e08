/*
 * bench_util — small helpers shared by the benchmark programs in bench/:
 * monotonic time, page-aligned buffers, core pinning, and a minimal JSON
 * writer (strings escaped, numbers printed with enough digits).
 *
 * Not part of libtern and not installed.
 */
#ifndef TERN_BENCH_UTIL_INTERNAL_H
#define TERN_BENCH_UTIL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** CLOCK_MONOTONIC in nanoseconds. */
uint64_t bench_now_ns(void);

/** Page-aligned, zero-filled-and-touched buffer of at least len bytes (>= 1
 *  page); NULL on failure.  Free with bench_free(). */
void *bench_alloc(size_t len);
void bench_free(void *buf);

/** Pin the calling thread to one CPU; 0 or -1 with errno set. */
int bench_pin(int cpu);

/** The calling thread's allowed CPUs as a list ("0" or "0,1") into buf
 *  (always terminated; "unknown (reason)" if it cannot be read). */
void bench_affinity(char *buf, size_t len);

/** Parse "MIN:MAX" (each a byte count, optional k/m/g suffix = 2^10/20/30). */
int bench_parse_range(const char *arg, size_t *min, size_t *max);

/** Parse a size with an optional k/m/g suffix; -1 on error. */
int bench_parse_size(const char *arg, size_t *out);

/* ---- run metadata ------------------------------------------------------- */

/** Host name (never NULL, static storage). */
const char *bench_hostname(void);

/** Local date-time, ISO 8601 with offset (static storage). */
const char *bench_date(void);

/** Write argv[0..argc) joined by single spaces, as an escaped JSON string. */
void bench_json_argv(FILE *f, int argc, char **argv);

/** Write s as a quoted JSON string ("null" for NULL). */
void bench_json_str(FILE *f, const char *s);

#endif
