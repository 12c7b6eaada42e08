/*
 * What the MPI test programs share (tests/mpi/mpi_*.c): this rank, the
 * size, a failure count and CHECK, which prints "FAIL rank R line L: ...".
 * Plain C and MPI: the programs build with MPICH's mpicc too.
 */
#ifndef TERN_TEST_MPI_CHECK_H
#define TERN_TEST_MPI_CHECK_H

#include <stdio.h>

static int rank, size, failures;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            printf("FAIL rank %d line %d: ", rank, __LINE__);                             \
            printf(__VA_ARGS__);                                                          \
            printf("\n");                                                                 \
            fflush(stdout);                                                               \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

#endif
