/*
 * The smallest MPI program that shows a build works: every rank passes its
 * rank to the next around the ring and the ranks sum them.  Plain MPI, C and
 * C++ alike (tests/mpi/wrappers.sh builds it with the build tree's ternmpicc
 * and, copied to a .cc file, with ternmpicxx).  Prints "ok rank R of N".
 */
#include <mpi.h>
#include <stdio.h>

#include "mpi_check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, next, 5, &got, 1, MPI_INT, prev, 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK(got == prev, "got %d from the ring, expected %d", got, prev);
    int sum = -1;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size - 1) / 2, "allreduce gave %d", sum);

    MPI_Finalize();
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    return failures != 0;
}
