/*
 * Engine test harness: every case runs on all ranks of a job started by a
 * launcher (ternrun, srun, mpirun) and is written against the public API
 * only, so the same cases run over every netmod.  TERN_TEST_NETMOD names the
 * netmod the VCs to other ranks must use; the harness checks it.
 */
#ifndef TERN_TEST_HARNESS_H
#define TERN_TEST_HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tern/tern.h>

typedef struct th {
    tern_context_t *ctx;
    tern_worker_t *w;
    int rank, size;
    int by_address;      /* wired by addresses, no launcher (tests/engine/addr_wire.c) */
    int failures;
    const char *test;
} th_t;

#define CHECK(t, cond, ...)                                                              \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            (t)->failures++;                                                             \
            fprintf(stderr, "FAIL [%s] rank %d %s:%d: %s: ", (t)->test, (t)->rank,       \
                    __FILE__, __LINE__, #cond);                                          \
            fprintf(stderr, __VA_ARGS__);                                                \
            fprintf(stderr, " (last error: %s)\n", tern_last_error());                  \
        }                                                                                \
    } while (0)

/* st is evaluated once (it is often the call under test) */
#define CHECK_ST(t, st, want)                                                            \
    do {                                                                                 \
        tern_status_t st_ = (st), want_ = (want);                                        \
        CHECK(t, st_ == want_, "%s: status %d (%s), expected %d (%s)", #st, (int)st_,   \
              tern_strerror(st_), (int)want_, tern_strerror(want_));                     \
    } while (0)

/* Deterministic byte pattern of message `seed`. */
static inline uint8_t th_byte(uint64_t seed, size_t i)
{
    uint64_t x = (seed + 1) * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull;
    return (uint8_t)(x >> 56);
}

static inline void th_fill(void *buf, size_t len, uint64_t seed)
{
    uint8_t *p = buf;
    for (size_t i = 0; i < len; i++)
        p[i] = th_byte(seed, i);
}

/* Index of the first wrong byte, or (size_t)-1 when all match. */
static inline size_t th_verify(const void *buf, size_t len, uint64_t seed)
{
    const uint8_t *p = buf;
    for (size_t i = 0; i < len; i++)
        if (p[i] != th_byte(seed, i))
            return i;
    return (size_t)-1;
}

/* Wait on req when the call did not complete at once. */
static inline tern_status_t th_finish(th_t *t, tern_status_t st, tern_request_t *req,
                                      tern_recv_info_t *info)
{
    if (st == TERN_INPROGRESS)
        return tern_wait(t->w, req, info);
    return st;
}

void th_barrier(th_t *t);

#endif
