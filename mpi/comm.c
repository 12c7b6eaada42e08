/*
 * MPI_COMM_WORLD and MPI_COMM_SELF, dup, split and free, rank translation,
 * and the argument checks every call shares (communicator, datatype,
 * count, rank, tag).  Context ids and the making of a communicator are
 * comm_ctx.c's; the other creating calls comm_create.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

int mpi_comms_init(void)
{
    int size = tern_size(mpi.ctx), me = tern_rank(mpi.ctx);
    mpi.comms = calloc(MPI_MAX_COMMS, sizeof(*mpi.comms));
    int *wr = malloc(sizeof(int) * (size_t)size), *sr = malloc(sizeof(int));
    if (mpi.comms == NULL || wr == NULL || sr == NULL) {
        free(wr);
        free(sr);
        return MPI_ERR_NO_MEM;
    }
    mpi.ncomms = MPI_COMM_SLOT_MADE;
    memset(mpi.ctx_free, 0xff, sizeof(mpi.ctx_free));
    for (int i = 0; i < size; i++)
        wr[i] = i;
    sr[0] = me;
    mpi.comms[MPI_COMM_SLOT_WORLD] =
        (mpi_comm_t){.used = true, .size = size, .rank = me, .ranks = wr, .identity = true,
                     .context = 0, .space = MPI_SPACE_BASE, .w = mpi_worker_for(0),
                     .errh = MPI_ERRORS_ARE_FATAL, .name = "MPI_COMM_WORLD"};
    mpi.comms[MPI_COMM_SLOT_SELF] =
        (mpi_comm_t){.used = true, .size = 1, .rank = 0, .ranks = sr, .identity = me == 0,
                     .context = 1, .space = MPI_SPACE_BASE + 2, .w = mpi_worker_for(1),
                     .errh = MPI_ERRORS_ARE_FATAL, .name = "MPI_COMM_SELF"};
    mpi_ctx_take(0);
    mpi_ctx_take(1);
    return MPI_SUCCESS;
}

void mpi_comms_finalize(void)
{
    for (int i = 0; i < mpi.ncomms; i++)
        free(mpi.comms[i].ranks);
    free(mpi.comms);
    mpi.comms = NULL;
    mpi.ncomms = 0;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    int e = mpi_check_comm(comm, "MPI_Comm_dup");
    if (e == MPI_SUCCESS && newcomm == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Comm_dup: NULL new communicator pointer");
    if (e != MPI_SUCCESS)
        return e;
    mpi_comm_t *c = mpi_comm_get(comm);
    if (c->inter) {
        e = mpi_inter_dup(comm, newcomm);
    } else {
        int *ranks = malloc(sizeof(int) * (size_t)c->size);
        if (ranks == NULL)
            return mpi_raise(comm, MPI_ERR_NO_MEM, "MPI_Comm_dup");
        memcpy(ranks, c->ranks, sizeof(int) * (size_t)c->size);
        e = mpi_comm_make(comm, ranks, c->size, c->rank, MPI_SUCCESS, newcomm, "MPI_Comm_dup");
    }
    if (e != MPI_SUCCESS)
        return e;
    /* the attributes, as their copy callbacks decide (attr.c) */
    int ae = mpi_attr_comm_copy(comm, *newcomm);
    if (ae != MPI_SUCCESS) {
        MPI_Comm_free(newcomm);
        return mpi_raise_code(comm, ae, "MPI_Comm_dup: a copy callback of an attribute failed "
                              "(%d)", ae);
    }
    return MPI_SUCCESS;
}

/* (color, key, rank) of every rank of the parent, gathered; the members
 * of one's color ordered by key, then by parent rank.  A rank whose own
 * arguments were refused (local_err) takes part as MPI_UNDEFINED and every
 * rank fails (mpi_comm_make), so no peer waits for it. */
int mpi_comm_split_by(MPI_Comm comm, int color, int key, int local_err, MPI_Comm *newcomm,
                      const char *call)
{
    mpi_comm_t *c = mpi_comm_get(comm);
    if (local_err != MPI_SUCCESS)
        color = MPI_UNDEFINED;
    int n = c->size, mine[3] = {color, key, c->rank};
    int *all = malloc(sizeof(int) * 3 * (size_t)n), *ranks = malloc(sizeof(int) * (size_t)n);
    if (all == NULL || ranks == NULL) {
        free(all);
        free(ranks);
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
    }
    int e = MPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, comm);
    if (e != MPI_SUCCESS) {
        free(all);
        free(ranks);
        return e;
    }
    int m = 0, me = -1;
    if (color != MPI_UNDEFINED) {
        for (int i = 0; i < n; i++) /* insertion by (key, parent rank) */
            if (all[3 * i] == color) {
                int j = m++;
                while (j > 0 && (all[3 * ranks[j - 1] + 1] > all[3 * i + 1]))
                    ranks[j] = ranks[j - 1], j--;
                ranks[j] = i;
            }
        for (int j = 0; j < m; j++) {
            if (ranks[j] == c->rank)
                me = j;
            ranks[j] = c->ranks[ranks[j]]; /* parent rank -> tern peer id */
        }
    } else {
        free(ranks);
        ranks = NULL;
    }
    free(all);
    return mpi_comm_make(comm, ranks, m, me, local_err, newcomm, call);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_split";
    int e = mpi_check_comm(comm, call);
    if (e != MPI_SUCCESS)
        return e;
    MPI_Comm unused;
    if (newcomm == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: NULL new communicator pointer", call);
    else if (color < 0 && color != MPI_UNDEFINED)
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: color %d (a color is >= 0 or MPI_UNDEFINED)",
                      call, color);
    if (mpi_comm_get(comm)->inter)
        return mpi_inter_split(comm, color, key, e, newcomm != NULL ? newcomm : &unused);
    return mpi_comm_split_by(comm, color, key, e, newcomm != NULL ? newcomm : &unused, call);
}

int MPI_Comm_free(MPI_Comm *comm)
{
    int e = mpi_check_init("MPI_Comm_free");
    if (e == MPI_SUCCESS && (comm == NULL || mpi_comm_get(*comm) == NULL))
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_free: not a communicator");
    if (e == MPI_SUCCESS && (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF))
        e = mpi_raise(*comm, MPI_ERR_COMM, "MPI_Comm_free: MPI_COMM_WORLD and MPI_COMM_SELF "
                      "are not freed");
    if (e != MPI_SUCCESS)
        return e;
    /* its attributes first, their delete callbacks seeing the communicator;
     * a failure of one is returned, the communicator is freed all the same
     * (every attribute is gone: none would be deleted again) */
    int ae = mpi_attr_comm_delete(*comm);
    mpi_comm_t *c = mpi_comm_get(*comm);
    mpi_table_lock();
    mpi_ctx_release(c->context);
    /* MPI lets operations under way on it finish: the entry keeps its
     * ranks (their statuses translate sources with them) until a new
     * communicator takes the slot; an intercommunicator's local group
     * (same context id) goes with it */
    c->used = false;
    if (c->inter)
        mpi.comms[c->local].used = false;
    mpi_table_unlock();
    MPI_Comm was = *comm;
    mpi_dyn_forget(was); /* MPI_Comm_get_parent's, once freed: MPI_COMM_NULL */
    *comm = MPI_COMM_NULL;
    return ae == MPI_SUCCESS ? MPI_SUCCESS
                             : mpi_raise_code(was, ae, "MPI_Comm_free: a delete callback of an "
                                              "attribute failed (%d)", ae);
}

int mpi_check_init(const char *call)
{
    if (!mpi.init || mpi.finalized)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_OTHER, "%s: MPI is %s", call,
                         mpi.finalized ? "finalized" : "not initialized (MPI_Init first)");
    return MPI_SUCCESS;
}

int mpi_check_comm(MPI_Comm comm, const char *call)
{
    int e = mpi_check_init(call);
    if (e == MPI_SUCCESS && mpi_comm_get(comm) == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_COMM, "%s: communicator %d is not valid", call,
                      comm);
    return e;
}

int mpi_check_rank(MPI_Comm comm, int rank, bool any, const char *call)
{
    mpi_comm_t *c = mpi_comm_get(comm);
    if (rank == MPI_PROC_NULL || (any && rank == MPI_ANY_SOURCE) ||
        (rank >= 0 && rank < c->size))
        return MPI_SUCCESS;
    return mpi_raise(comm, MPI_ERR_RANK, "%s: rank %d (the communicator has %d)", call, rank,
                     c->size);
}

int mpi_check_tag(MPI_Comm comm, int tag, bool any, const char *call)
{
    if ((any && tag == MPI_ANY_TAG) || (tag >= 0 && tag <= MPI_TAG_UB_VALUE))
        return MPI_SUCCESS;
    return mpi_raise(comm, MPI_ERR_TAG, "%s: tag %d (0..%d%s)", call, tag, MPI_TAG_UB_VALUE,
                     any ? " or MPI_ANY_TAG" : "");
}

int mpi_comm_rank_of(const mpi_comm_t *c, int peer)
{
    for (int i = 0; i < c->size; i++) /* tern peer id -> communicator rank */
        if (c->ranks[i] == peer)
            return i;
    return peer;
}

void mpi_status_empty(MPI_Status *s, int source)
{
    if (s == MPI_STATUS_IGNORE)
        return;
    s->count_lo = s->count_hi_and_cancelled = 0; /* MPI_ERROR: the caller's (mpi_internal.h) */
    s->MPI_SOURCE = source;
    s->MPI_TAG = MPI_ANY_TAG;
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    int e = mpi_check_comm(comm, "MPI_Comm_rank");
    if (e == MPI_SUCCESS && rank == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Comm_rank: NULL rank pointer");
    if (e == MPI_SUCCESS)
        *rank = mpi_comm_get(comm)->rank;
    return e;
}

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    int e = mpi_check_comm(comm, "MPI_Comm_size");
    if (e == MPI_SUCCESS && size == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Comm_size: NULL size pointer");
    if (e == MPI_SUCCESS) /* an intercommunicator's: its local group's */
        *size = mpi_comm_local(mpi_comm_get(comm))->size;
    return e;
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    int e = mpi_check_comm(comm1, "MPI_Comm_compare");
    if (e == MPI_SUCCESS)
        e = mpi_check_comm(comm2, "MPI_Comm_compare");
    if (e == MPI_SUCCESS && result == NULL)
        e = mpi_raise(comm1, MPI_ERR_ARG, "MPI_Comm_compare: NULL result pointer");
    if (e != MPI_SUCCESS)
        return e;
    mpi_comm_t *a = mpi_comm_get(comm1), *b = mpi_comm_get(comm2);
    if (comm1 == comm2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    *result = MPI_UNEQUAL;
    if (a->inter || b->inter) {
        *result = mpi_inter_compare(a, b);
        return MPI_SUCCESS;
    }
    if (a->size != b->size)
        return MPI_SUCCESS;
    bool same_order = true, same_set = true;
    for (int i = 0; i < a->size; i++) {
        same_order = same_order && a->ranks[i] == b->ranks[i];
        bool found = false;
        for (int j = 0; j < b->size && !found; j++)
            found = a->ranks[i] == b->ranks[j];
        same_set = same_set && found;
    }
    *result = same_order ? MPI_CONGRUENT : same_set ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}
