/*
 * MPI communicators and groups test for tern's MPI layer (tests/mpi/mpi.sh):
 * dup, split (colors, keys, MPI_UNDEFINED), traffic and collectives on the
 * new communicators kept apart from MPI_COMM_WORLD's, compare, groups, and
 * more dup / free cycles than there are context ids.  Plain MPI: passes
 * under MPICH too.  Prints "ok rank R" or "FAIL ..." lines.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/mpi/mpi_check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* dup: same ranks, congruent, its own messages */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int r = -1, s = -1, cmp = -1;
    MPI_Comm_rank(dup, &r);
    MPI_Comm_size(dup, &s);
    CHECK(r == rank && s == size, "dup: rank %d size %d", r, s);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "compare world dup: %d", cmp);
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    /* a receive from anyone on MPI_COMM_WORLD, posted first, must get the
     * world message (rank), never the dup's (rank + 1000) */
    int a = rank + 1000, w = rank, b = -1, c = -1;
    MPI_Request q;
    MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q);
    MPI_Sendrecv(&a, 1, MPI_INT, right, 7, &c, 1, MPI_INT, left, 7, dup, MPI_STATUS_IGNORE);
    CHECK(c == left + 1000, "dup sendrecv got %d", c);
    MPI_Send(&w, 1, MPI_INT, right, 8, MPI_COMM_WORLD);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    CHECK(b == left, "the receive on MPI_COMM_WORLD got %d, not the world message %d", b, left);

    /* split: by parity, reversed order by key */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    int hr, hs, want_size = (size + 1 - rank % 2) / 2;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    CHECK(hs == want_size, "split size %d, expected %d", hs, want_size);
    CHECK(hr == (hs - 1) - rank / 2, "split rank %d (world %d of %d)", hr, rank, size);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
    int want = 0;
    for (int i = rank % 2; i < size; i += 2)
        want += i;
    CHECK(sum == want, "allreduce on the half: %d, expected %d", sum, want);
    int root_world = -1;
    if (hr == 0)
        root_world = rank;
    MPI_Bcast(&root_world, 1, MPI_INT, 0, half);
    CHECK(root_world % 2 == rank % 2 && root_world >= rank, "bcast on the half: %d", root_world);
    MPI_Group wg, hg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(half, &hg);
    int gs = -1, gr = -1;
    MPI_Group_size(hg, &gs);
    MPI_Group_rank(hg, &gr);
    CHECK(gs == hs && gr == hr, "half group size %d rank %d", gs, gr);
    int zero = 0, back = -1;
    MPI_Group_translate_ranks(hg, 1, &zero, wg, &back);
    CHECK(back == root_world, "translate: half rank 0 is world %d, bcast said %d", back, root_world);
    int firsts[2] = {0, size - 1}, sub_r = -2;
    MPI_Group sub;
    MPI_Group_incl(wg, size > 1 ? 2 : 1, firsts, &sub);
    MPI_Group_rank(sub, &sub_r);
    CHECK(sub_r == (rank == 0 ? 0 : rank == size - 1 ? 1 : MPI_UNDEFINED), "incl rank %d", sub_r);
    MPI_Group_free(&sub);
    MPI_Group_free(&hg);
    MPI_Group_free(&wg);
    CHECK(wg == MPI_GROUP_NULL, "group free");

    /* MPI_UNDEFINED: no communicator */
    MPI_Comm none;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &none);
    CHECK((rank == 0) == (none != MPI_COMM_NULL), "split with MPI_UNDEFINED");
    if (none != MPI_COMM_NULL) {
        int ns;
        MPI_Comm_size(none, &ns);
        CHECK(ns == 1, "the one-rank split has %d", ns);
        MPI_Comm_free(&none);
    }

    /* more communicators made and freed than there are context ids */
    for (int i = 0; i < 2100; i++) {
        MPI_Comm t;
        if (MPI_Comm_dup(dup, &t) != MPI_SUCCESS) {
            CHECK(0, "dup %d", i);
            break;
        }
        if (i % 500 == 0)
            MPI_Barrier(t);
        MPI_Comm_free(&t);
        if (t != MPI_COMM_NULL) {
            CHECK(0, "free %d", i);
            break;
        }
    }
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    MPI_Barrier(MPI_COMM_WORLD);
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
