/*
 * Groups: ordered lists of processes (tern peer ids).  A created group is
 * an entry of a table; MPI_GROUP_EMPTY has none (it is the empty list and
 * is never freed).  The constructors are in group_ops.c.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

#define MAX_GROUPS 4096

/* A created group's handle is a made one (mpi/handle.h) whose index is its
 * table entry's; MPI_GROUP_NULL and MPI_GROUP_EMPTY are of other kinds. */
static_assert(((unsigned)MPI_GROUP_EMPTY >> 30) != MPI_HK_MADE, "MPI_GROUP_EMPTY is not made");

typedef struct group {
    bool used;
    int size;
    int *procs; /* group rank -> tern peer id */
} group_t;

static group_t groups[MAX_GROUPS];
static const group_t group_empty = {.used = true, .size = 0};
static const int no_procs[1]; /* MPI_GROUP_EMPTY's list */

static const group_t *group_get(MPI_Group g)
{
    if (g == MPI_GROUP_EMPTY)
        return &group_empty;
    unsigned i = mpi_h_index(g);
    if (!mpi_h_is(g, MPI_HK_MADE, MPI_HT_GROUP) || i >= MAX_GROUPS)
        return NULL;
    return groups[i].used ? &groups[i] : NULL;
}

const int *mpi_group_procs(MPI_Group g, int *size)
{
    const group_t *p = group_get(g);
    if (p == NULL)
        return NULL;
    *size = p->size;
    return p->procs != NULL ? p->procs : no_procs; /* non-NULL: a valid group */
}

int mpi_group_new(int *procs, int size, MPI_Group *out, const char *call)
{
    if (size == 0) { /* MPI: an empty result is MPI_GROUP_EMPTY (MPICH's too) */
        free(procs);
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    mpi_table_lock(); /* MPI_THREAD_MULTIPLE: the group table */
    for (int i = 0; i < MAX_GROUPS; i++)
        if (!groups[i].used) {
            groups[i] = (group_t){.used = true, .size = size, .procs = procs};
            mpi_table_unlock();
            *out = mpi_h_make(MPI_HK_MADE, MPI_HT_GROUP, (unsigned)i);
            return MPI_SUCCESS;
        }
    mpi_table_unlock();
    free(procs);
    return mpi_raise(MPI_COMM_WORLD, MPI_ERR_OTHER, "%s: %d groups exist (free some)", call,
                     MAX_GROUPS);
}

int mpi_check_group(MPI_Group g, const char *call)
{
    int e = mpi_check_init(call);
    if (e == MPI_SUCCESS && group_get(g) == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_GROUP, "%s: group %d is not valid%s", call, g,
                      g == MPI_GROUP_NULL ? " (MPI_GROUP_NULL)" : "");
    return e;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    int e = mpi_check_comm(comm, "MPI_Comm_group");
    if (e == MPI_SUCCESS && group == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Comm_group: NULL group pointer");
    if (e != MPI_SUCCESS)
        return e;
    mpi_comm_t *c = mpi_comm_local(mpi_comm_get(comm)); /* an intercommunicator's local group */
    int *procs = malloc(sizeof(int) * (size_t)(c->size ? c->size : 1));
    if (procs == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Comm_group");
    memcpy(procs, c->ranks, sizeof(int) * (size_t)c->size);
    return mpi_group_new(procs, c->size, group, "MPI_Comm_group");
}

int MPI_Group_size(MPI_Group group, int *size)
{
    int e = mpi_check_group(group, "MPI_Group_size");
    if (e == MPI_SUCCESS && size == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Group_size: NULL size pointer");
    if (e == MPI_SUCCESS)
        *size = group_get(group)->size;
    return e;
}

int MPI_Group_rank(MPI_Group group, int *rank)
{
    int e = mpi_check_group(group, "MPI_Group_rank");
    if (e == MPI_SUCCESS && rank == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Group_rank: NULL rank pointer");
    if (e != MPI_SUCCESS)
        return e;
    const group_t *g = group_get(group);
    int me = tern_rank(mpi.ctx);
    *rank = MPI_UNDEFINED;
    for (int i = 0; i < g->size && *rank == MPI_UNDEFINED; i++)
        if (g->procs[i] == me)
            *rank = i;
    return MPI_SUCCESS;
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                              int ranks2[])
{
    static const char call[] = "MPI_Group_translate_ranks";
    int e = mpi_check_group(group1, call);
    if (e == MPI_SUCCESS)
        e = mpi_check_group(group2, call);
    if (e != MPI_SUCCESS)
        return e;
    const group_t *a = group_get(group1), *b = group_get(group2);
    if (n < 0 || (n > 0 && (ranks1 == NULL || ranks2 == NULL)))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: %d ranks%s", call, n,
                         n < 0 ? "" : " and a NULL array");
    for (int i = 0; i < n; i++) /* all checked before any is written */
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= a->size))
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_RANK, "%s: rank %d at %d (the first "
                             "group has %d)", call, ranks1[i], i, a->size);
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) { /* MPI-2.2: translates to itself */
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        ranks2[i] = MPI_UNDEFINED;
        for (int j = 0; j < b->size && ranks2[i] == MPI_UNDEFINED; j++)
            if (b->procs[j] == a->procs[ranks1[i]])
                ranks2[i] = j;
    }
    return MPI_SUCCESS;
}

/* MPI_IDENT: the same processes in the same order; MPI_SIMILAR: the same
 * ones in another order; MPI_UNEQUAL otherwise.  A process is in a group at
 * most once, so "same set" is "same size and each of a in b". */
int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    int e = mpi_check_group(group1, "MPI_Group_compare");
    if (e == MPI_SUCCESS)
        e = mpi_check_group(group2, "MPI_Group_compare");
    if (e == MPI_SUCCESS && result == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Group_compare: NULL result pointer");
    if (e != MPI_SUCCESS)
        return e;
    const group_t *a = group_get(group1), *b = group_get(group2);
    *result = MPI_UNEQUAL;
    if (a->size != b->size)
        return MPI_SUCCESS;
    bool same_order = true, same_set = true;
    for (int i = 0; i < a->size && same_order; i++)
        same_order = a->procs[i] == b->procs[i];
    for (int i = 0; i < a->size && same_set && !same_order; i++) {
        bool found = false;
        for (int j = 0; j < b->size && !found; j++)
            found = a->procs[i] == b->procs[j];
        same_set = found;
    }
    *result = same_order ? MPI_IDENT : same_set ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}

int MPI_Group_free(MPI_Group *group)
{
    int e = mpi_check_init("MPI_Group_free");
    if (e == MPI_SUCCESS && group == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Group_free: NULL group pointer");
    if (e == MPI_SUCCESS)
        e = mpi_check_group(*group, "MPI_Group_free");
    if (e != MPI_SUCCESS)
        return e;
    /* MPI_GROUP_EMPTY may be "freed" (as MPICH allows): the handle only */
    if (*group != MPI_GROUP_EMPTY) {
        group_t *g = &groups[mpi_h_index(*group)];
        free(g->procs);
        mpi_table_lock();
        *g = (group_t){0};
        mpi_table_unlock();
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
