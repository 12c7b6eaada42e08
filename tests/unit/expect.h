/* EXPECT for the unit tests (no job): count and report a failed condition. */
#ifndef TERN_TEST_UNIT_EXPECT_H
#define TERN_TEST_UNIT_EXPECT_H

#include <stdio.h>

static int failures;
#define EXPECT(cond, ...)                                                        \
    do {                                                                         \
        if (!(cond)) {                                                           \
            failures++;                                                          \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);      \
            fprintf(stderr, __VA_ARGS__);                                        \
            fputc('\n', stderr);                                                 \
        }                                                                        \
    } while (0)

#endif
