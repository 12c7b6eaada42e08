/*
 * What the tern test programs under ternrun share (tern_spawn.c,
 * tern_connect.c, tern_port.c): a failure count and CHECK, which prints
 * "FAIL: <message> (<tern_last_error()>)" on stdout.  Test code only.
 */
#ifndef TERN_TEST_TERN_CHECK_H
#define TERN_TEST_TERN_CHECK_H

#include <stdio.h>

#include <tern/tern.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL: ");                                                                      \
            printf(__VA_ARGS__);                                                                   \
            printf(" (%s)\n", tern_last_error());                                                  \
            fflush(stdout);                                                                        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#endif
