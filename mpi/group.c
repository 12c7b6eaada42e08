/*
 * Groups: ordered lists of processes (tern peer ids).  MPI_Group handles
 * index a table; MPI_GROUP_EMPTY is handle 1.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

#define MAX_GROUPS 4096

typedef struct group {
    bool used;
    int size;
    int *procs; /* group rank -> tern peer id */
} group_t;

static group_t groups[MAX_GROUPS] = {[MPI_GROUP_EMPTY] = {.used = true, .size = 0}};

static group_t *group_get(MPI_Group g)
{
    return g > 0 && g < MAX_GROUPS && groups[g].used ? &groups[g] : NULL;
}

static int group_new(int *procs, int size, MPI_Group *out, const char *call)
{
    mpi_table_lock(); /* MPI_THREAD_MULTIPLE: the group table */
    for (int g = 2; g < MAX_GROUPS; g++)
        if (!groups[g].used) {
            groups[g] = (group_t){.used = true, .size = size, .procs = procs};
            mpi_table_unlock();
            *out = g;
            return MPI_SUCCESS;
        }
    mpi_table_unlock();
    free(procs);
    return mpi_raise(MPI_COMM_WORLD, MPI_ERR_OTHER, "%s: %d groups exist", call, MAX_GROUPS);
}

static int check_group(MPI_Group g, const char *call)
{
    int e = mpi_check_init(call);
    if (e == MPI_SUCCESS && group_get(g) == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_GROUP, "%s: group %d is not valid", call, g);
    return e;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    int e = mpi_check_comm(comm, "MPI_Comm_group");
    if (e == MPI_SUCCESS && group == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Comm_group: NULL group pointer");
    if (e != MPI_SUCCESS)
        return e;
    mpi_comm_t *c = mpi_comm_get(comm);
    int *procs = malloc(sizeof(int) * (size_t)(c->size ? c->size : 1));
    if (procs == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Comm_group");
    memcpy(procs, c->ranks, sizeof(int) * (size_t)c->size);
    return group_new(procs, c->size, group, "MPI_Comm_group");
}

int MPI_Group_size(MPI_Group group, int *size)
{
    int e = check_group(group, "MPI_Group_size");
    if (e == MPI_SUCCESS && size != NULL)
        *size = group_get(group)->size;
    return e;
}

int MPI_Group_rank(MPI_Group group, int *rank)
{
    int e = check_group(group, "MPI_Group_rank");
    if (e != MPI_SUCCESS || rank == NULL)
        return e;
    group_t *g = group_get(group);
    int me = tern_rank(mpi.ctx);
    *rank = MPI_UNDEFINED;
    for (int i = 0; i < g->size; i++)
        if (g->procs[i] == me)
            *rank = i;
    return MPI_SUCCESS;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    int e = check_group(group, "MPI_Group_incl");
    if (e != MPI_SUCCESS)
        return e;
    group_t *g = group_get(group);
    if (n < 0 || n > g->size || (n > 0 && ranks == NULL) || newgroup == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Group_incl: %d ranks of a group of %d",
                         n, g->size);
    if (n == 0) {
        *newgroup = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    int *procs = malloc(sizeof(int) * (size_t)n);
    if (procs == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Group_incl");
    for (int i = 0; i < n; i++) {
        bool dup = false;
        for (int j = 0; j < i; j++)
            dup = dup || ranks[j] == ranks[i];
        if (ranks[i] < 0 || ranks[i] >= g->size || dup) {
            free(procs);
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_RANK, "MPI_Group_incl: rank %d (a group of "
                             "%d; each at most once)", ranks[i], g->size);
        }
        procs[i] = g->procs[ranks[i]];
    }
    return group_new(procs, n, newgroup, "MPI_Group_incl");
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                              int ranks2[])
{
    int e = check_group(group1, "MPI_Group_translate_ranks");
    if (e == MPI_SUCCESS)
        e = check_group(group2, "MPI_Group_translate_ranks");
    if (e != MPI_SUCCESS)
        return e;
    group_t *a = group_get(group1), *b = group_get(group2);
    if (n < 0 || (n > 0 && (ranks1 == NULL || ranks2 == NULL)))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Group_translate_ranks: %d ranks", n);
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (ranks1[i] < 0 || ranks1[i] >= a->size)
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_RANK, "MPI_Group_translate_ranks: rank %d "
                             "(a group of %d)", ranks1[i], a->size);
        ranks2[i] = MPI_UNDEFINED;
        for (int j = 0; j < b->size; j++)
            if (b->procs[j] == a->procs[ranks1[i]])
                ranks2[i] = j;
    }
    return MPI_SUCCESS;
}

int MPI_Group_free(MPI_Group *group)
{
    int e = mpi_check_init("MPI_Group_free");
    if (e == MPI_SUCCESS && (group == NULL || group_get(*group) == NULL))
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_GROUP, "MPI_Group_free: not a group");
    if (e != MPI_SUCCESS)
        return e;
    if (*group != MPI_GROUP_EMPTY) {
        free(groups[*group].procs);
        mpi_table_lock();
        groups[*group] = (group_t){0};
        mpi_table_unlock();
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
