/*
 * Group constructors: from a group's ranks (incl, excl and their range
 * forms) and from two groups (union, intersection, difference), with
 * MPI-3.1's rules and MPICH's error classes: a bad rank in a list is
 * MPI_ERR_RANK (out of range or given twice), a bad range triplet is
 * MPI_ERR_ARG (a rank out of range, stride 0, the wrong direction, a rank
 * twice), a negative count MPI_ERR_ARG.  An empty result is
 * MPI_GROUP_EMPTY.  Errors are raised on MPI_COMM_WORLD (no communicator
 * is involved), and nothing is created when one is found.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

/* the group, its processes and size; the argument checks every call makes */
static int begin(MPI_Group group, MPI_Group *newgroup, const char *call, const int **procs,
                 int *size)
{
    int e = mpi_check_group(group, call);
    if (e == MPI_SUCCESS && newgroup == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL new group pointer", call);
    if (e == MPI_SUCCESS)
        *procs = mpi_group_procs(group, size);
    return e;
}

static int *alloc_ints(int n)
{
    return malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
}

static int nomem(const char *call)
{
    return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory for the new group", call);
}

/* ranks[0..n-1]: each a rank of a group of size, at most once; picked[r]
 * set for each (picked: size entries, zeroed) */
static int check_ranks(int size, int n, const int ranks[], bool *picked, const char *call)
{
    if (n < 0)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: n %d is negative", call, n);
    if (n > 0 && ranks == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL ranks array (n %d)", call, n);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= size)
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_RANK, "%s: ranks[%d] is %d: not a rank of "
                             "the group (0..%d)", call, i, ranks[i], size - 1);
        if (picked[ranks[i]])
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_RANK, "%s: ranks[%d] is %d, given "
                             "before: each rank at most once", call, i, ranks[i]);
        picked[ranks[i]] = true;
    }
    return MPI_SUCCESS;
}

/* The ranks n triplets (first, last, stride) name, in order, into out
 * (*count of them; out has room for size); picked[r] set for each. */
static int expand_ranges(int size, int n, int ranges[][3], bool *picked, int *out, int *count,
                         const char *call)
{
    *count = 0;
    if (n < 0)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: n %d is negative", call, n);
    if (n > 0 && ranges == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL ranges array (n %d)", call, n);
    for (int i = 0; i < n; i++) {
        long long first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0)
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: ranges[%d] has stride 0", call,
                             i);
        if (first < 0 || first >= size)
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: ranges[%d] starts at %lld: not "
                             "a rank of the group (0..%d)", call, i, first, size - 1);
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: ranges[%d] goes from %lld to "
                             "%lld by %lld: the stride points away from the last rank", call, i,
                             first, last, stride);
        /* the last rank the triplet names (MPI: each named rank must be valid) */
        long long end = first + stride * ((last - first) / stride);
        if (end < 0 || end >= size)
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: ranges[%d] reaches rank %lld: "
                             "not a rank of the group (0..%d)", call, i, end, size - 1);
        for (long long r = first; stride > 0 ? r <= end : r >= end; r += stride) {
            if (picked[r])
                return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: ranges[%d] names rank %lld, "
                                 "named before: each rank at most once", call, i, r);
            picked[r] = true;
            out[(*count)++] = (int)r;
        }
    }
    return MPI_SUCCESS;
}

/* a group of the processes of procs at the given ranks (n of them), or
 * (excl) of those whose picked entry is clear, in group order */
static int make(const int *procs, int size, const int *ranks, int n, const bool *picked,
                bool excl, MPI_Group *newgroup, const char *call)
{
    int *p = alloc_ints(excl ? size - n : n), m = 0;
    if (p == NULL)
        return nomem(call);
    if (excl) {
        for (int r = 0; r < size; r++)
            if (!picked[r])
                p[m++] = procs[r];
    } else {
        for (int i = 0; i < n; i++)
            p[m++] = procs[ranks[i]];
    }
    return mpi_group_new(p, m, newgroup, call);
}

static int by_ranks(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup, bool excl,
                    const char *call)
{
    const int *procs;
    int size;
    int e = begin(group, newgroup, call, &procs, &size);
    if (e != MPI_SUCCESS)
        return e;
    bool *picked = calloc((size_t)(size > 0 ? size : 1), sizeof(bool));
    if (picked == NULL)
        return nomem(call);
    e = check_ranks(size, n, ranks, picked, call);
    if (e == MPI_SUCCESS)
        e = make(procs, size, ranks, n, picked, excl, newgroup, call);
    free(picked);
    return e;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return by_ranks(group, n, ranks, newgroup, false, "MPI_Group_incl");
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return by_ranks(group, n, ranks, newgroup, true, "MPI_Group_excl");
}

static int by_ranges(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup, bool excl,
                     const char *call)
{
    const int *procs;
    int size;
    int e = begin(group, newgroup, call, &procs, &size);
    if (e != MPI_SUCCESS)
        return e;
    bool *picked = calloc((size_t)(size > 0 ? size : 1), sizeof(bool));
    int *ranks = alloc_ints(size), count = 0;
    if (picked == NULL || ranks == NULL)
        e = nomem(call);
    if (e == MPI_SUCCESS)
        e = expand_ranges(size, n, ranges, picked, ranks, &count, call);
    if (e == MPI_SUCCESS)
        e = make(procs, size, ranks, count, picked, excl, newgroup, call);
    free(picked);
    free(ranks);
    return e;
}

int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return by_ranges(group, n, ranges, newgroup, false, "MPI_Group_range_incl");
}

int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return by_ranges(group, n, ranges, newgroup, true, "MPI_Group_range_excl");
}

/* ---- from two groups ------------------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

enum { UNION, INTERSECTION, DIFFERENCE };

/* Union: group1's processes, then group2's not in group1; intersection:
 * group1's that are in group2; difference: group1's not in group2; each in
 * the order of the group it comes from (MPI-3.1 6.3.2).  Membership in a
 * sorted copy (bsearch): n log n for large groups. */
static int combine(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup, int op,
                   const char *call)
{
    const int *a, *b;
    int na, nb;
    int e = begin(group1, newgroup, call, &a, &na);
    if (e == MPI_SUCCESS)
        e = mpi_check_group(group2, call);
    if (e != MPI_SUCCESS)
        return e;
    b = mpi_group_procs(group2, &nb);
    /* the group searched: group1 for union's second part, group2 otherwise */
    const int *look = op == UNION ? a : b;
    int nlook = op == UNION ? na : nb;
    int *sorted = alloc_ints(nlook), *p = alloc_ints(na + nb), m = 0;
    if (sorted == NULL || p == NULL) {
        free(sorted);
        free(p);
        return nomem(call);
    }
    memcpy(sorted, look, sizeof(int) * (size_t)nlook);
    qsort(sorted, (size_t)nlook, sizeof(int), cmp_int);
    if (op == UNION) {
        memcpy(p, a, sizeof(int) * (size_t)na);
        m = na;
        for (int i = 0; i < nb; i++)
            if (bsearch(&b[i], sorted, (size_t)nlook, sizeof(int), cmp_int) == NULL)
                p[m++] = b[i];
    } else {
        for (int i = 0; i < na; i++) {
            bool in_b = bsearch(&a[i], sorted, (size_t)nlook, sizeof(int), cmp_int) != NULL;
            if (in_b == (op == INTERSECTION))
                p[m++] = a[i];
        }
    }
    free(sorted);
    return mpi_group_new(p, m, newgroup, call);
}

int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return combine(group1, group2, newgroup, UNION, "MPI_Group_union");
}

int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return combine(group1, group2, newgroup, INTERSECTION, "MPI_Group_intersection");
}

int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return combine(group1, group2, newgroup, DIFFERENCE, "MPI_Group_difference");
}
