/*
 * MPI_Comm_dup, MPI_Comm_split, MPI_Comm_create and MPI_Comm_compare of
 * intercommunicators (MPI-3.1 6.4): comm.c and comm_create.c hand an
 * intercommunicator here.  Each is collective over both groups: the
 * group's data gathered over its hidden local group, swapped by the
 * leaders, and one context id agreed by everyone (inter.h).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/comm_ctx.h"
#include "mpi/inter.h"

/* The context id of the new intercommunicator(s): free on every process
 * of both groups, agreed in rounds (comm_ctx.c) and taken on every process
 * (member: it gets one of them; the caller installs it or gives it back);
 * and whether every process's arguments were good (if not, every process
 * fails: local_err where it was refused). */
static int agree_id(const mpi_sides_t *s, int local_err, bool member, int *id)
{
    unsigned char ok = local_err == MPI_SUCCESS ? 0xff : 0;
    int e = mpi_ctx_agree(mpi_sides_and, s, &ok, 1, member, id);
    if (e != MPI_SUCCESS)
        return e;
    if (ok == 0)
        return local_err != MPI_SUCCESS
                   ? local_err
                   : mpi_raise(s->errcomm, MPI_ERR_OTHER, "%s: another process's arguments were "
                               "refused (its error says why): no communicator was made",
                               s->call);
    if (*id < 0)
        return mpi_raise(s->errcomm, MPI_ERR_OTHER, "%s: all %d context ids of the blocking "
                         "creations are taken on some process (free communicators)", s->call,
                         MPI_CTX_ROUND_IDS);
    return MPI_SUCCESS;
}

static int *copy_ints(const int *p, int n)
{
    int *q = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (q != NULL && n > 0)
        memcpy(q, p, sizeof(int) * (size_t)n);
    return q;
}

int mpi_inter_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_dup";
    mpi_comm_t *c = mpi_comm_get(comm);
    const mpi_comm_t *lc = mpi_comm_local(c);
    mpi_link_t link;
    mpi_sides_t s;
    mpi_inter_sides(c, comm, call, &link, &s);
    int id = -1, e = agree_id(&s, MPI_SUCCESS, true, &id);
    int *l = e == MPI_SUCCESS ? copy_ints(lc->ranks, lc->size) : NULL;
    int *r = e == MPI_SUCCESS ? copy_ints(c->ranks, c->size) : NULL;
    if (e == MPI_SUCCESS && (l == NULL || r == NULL)) {
        free(l);
        free(r);
        mpi_ctx_give_back(id);
        e = mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
    }
    if (e == MPI_SUCCESS)
        e = mpi_inter_install(l, lc->size, r, c->size, c->rank, id, c->errh, c->low, newcomm,
                              call);
    return e;
}

/* The members of color among n (color, key) pairs, by key then index, as
 * peers[index] into *out; returns how many (*pos: where index me went,
 * -1 when not among them). */
static int pick(const int *ck, int n, int color, const int *peers, int me, int *out, int *pos)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (ck[2 * i] != color)
            continue;
        int j = m++;
        while (j > 0 && ck[2 * out[j - 1] + 1] > ck[2 * i + 1])
            out[j] = out[j - 1], j--;
        out[j] = i;
    }
    *pos = -1;
    for (int j = 0; j < m; j++) {
        if (out[j] == me)
            *pos = j;
        out[j] = peers[out[j]];
    }
    return m;
}

/* One intercommunicator per color: the local processes of that color and
 * the remote ones of it, each group in key then rank order; MPI_COMM_NULL
 * for MPI_UNDEFINED and for a color either group lacks.  The new
 * intercommunicators are disjoint: they share the context id. */
int mpi_inter_split(MPI_Comm comm, int color, int key, int local_err, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_split";
    mpi_comm_t *c = mpi_comm_get(comm);
    const mpi_comm_t *lc = mpi_comm_local(c);
    mpi_link_t link;
    mpi_sides_t s;
    mpi_inter_sides(c, comm, call, &link, &s);
    if (local_err != MPI_SUCCESS)
        color = MPI_UNDEFINED;
    int n = lc->size, rn = c->size, mine[2] = {color, key}, id = -1;
    int *all = malloc(sizeof(int) * 2 * (size_t)n);
    int *l = malloc(sizeof(int) * (size_t)n), *r = malloc(sizeof(int) * (size_t)rn);
    void *theirs = NULL;
    size_t tlen = 0;
    int e = all != NULL && l != NULL && r != NULL ? MPI_SUCCESS
                                                  : mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
    if (e == MPI_SUCCESS)
        e = MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, s.L);
    if (e == MPI_SUCCESS)
        e = mpi_sides_swap(&s, all, sizeof(int) * 2 * (size_t)n, &theirs, &tlen);
    if (e == MPI_SUCCESS && tlen != sizeof(int) * 2 * (size_t)rn)
        e = mpi_raise(comm, MPI_ERR_INTERN, "%s: %zu bytes of colors from the other group, of "
                      "%d processes", call, tlen, rn);
    int ln = 0, rm = 0, pos = -1, rpos;
    if (e == MPI_SUCCESS && color != MPI_UNDEFINED) {
        ln = pick(all, n, color, lc->ranks, lc->rank, l, &pos);
        rm = pick(theirs, rn, color, c->ranks, -1, r, &rpos);
    }
    if (e == MPI_SUCCESS)
        e = agree_id(&s, local_err, ln > 0 && rm > 0, &id);
    if (e == MPI_SUCCESS && ln > 0 && rm > 0) {
        e = mpi_inter_install(l, ln, r, rm, pos, id, c->errh, c->low, newcomm, call);
        l = r = NULL; /* taken over */
    } else if (e == MPI_SUCCESS) {
        *newcomm = MPI_COMM_NULL; /* a failed call leaves it, as the intracommunicators' */
    }
    free(all);
    free(l);
    free(r);
    free(theirs);
    return e;
}

/* The local group's members in group (a subgroup of the local group, the
 * same on every local process) with the remote group's own choice; a
 * process outside its group, or a group either side leaves empty, gets
 * MPI_COMM_NULL (MPI-2.2). */
int mpi_inter_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_create";
    mpi_comm_t *c = mpi_comm_get(comm);
    const mpi_comm_t *lc = mpi_comm_local(c);
    mpi_link_t link;
    mpi_sides_t s;
    mpi_inter_sides(c, comm, call, &link, &s);
    int gn = 0, local_err = MPI_SUCCESS, pos = -1, id = -1;
    const int *procs = mpi_group_procs(group, &gn);
    if (procs == NULL) {
        local_err = mpi_raise(comm, MPI_ERR_GROUP, "%s: group %d is not valid%s", call, group,
                              group == MPI_GROUP_NULL ? " (MPI_GROUP_NULL)" : "");
        gn = 0;
    }
    int *sel = malloc(sizeof(int) * (size_t)(gn > 0 ? gn : 1)); /* local ranks, group order */
    if (sel == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
    for (int i = 0; i < gn && local_err == MPI_SUCCESS; i++) {
        sel[i] = -1;
        for (int j = 0; j < lc->size && sel[i] < 0; j++)
            if (lc->ranks[j] == procs[i])
                sel[i] = j;
        if (sel[i] < 0)
            local_err = mpi_raise(comm, MPI_ERR_GROUP, "%s: rank %d of the group is not a "
                                  "process of the local group", call, i);
        else if (sel[i] == lc->rank)
            pos = i;
    }
    if (local_err != MPI_SUCCESS)
        gn = 0;
    void *theirs = NULL;
    size_t tlen = 0;
    int e = mpi_sides_swap(&s, sel, sizeof(int) * (size_t)gn, &theirs, &tlen);
    int rn = (int)(tlen / sizeof(int));
    for (int i = 0; e == MPI_SUCCESS && i < rn; i++)
        if (((int *)theirs)[i] < 0 || ((int *)theirs)[i] >= c->size)
            e = mpi_raise(comm, MPI_ERR_INTERN, "%s: the other group names its rank %d", call,
                          ((int *)theirs)[i]);
    bool member = pos >= 0 && gn > 0 && rn > 0;
    if (e == MPI_SUCCESS)
        e = agree_id(&s, local_err, member, &id);
    if (e == MPI_SUCCESS && !member)
        *newcomm = MPI_COMM_NULL; /* a failed call leaves it, as the intracommunicators' */
    if (e == MPI_SUCCESS && member) {
        int *l = malloc(sizeof(int) * (size_t)gn), *r = malloc(sizeof(int) * (size_t)rn);
        if (l == NULL || r == NULL) {
            free(l);
            free(r);
            mpi_ctx_give_back(id);
            e = mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
        } else {
            for (int i = 0; i < gn; i++)
                l[i] = lc->ranks[sel[i]];
            for (int i = 0; i < rn; i++)
                r[i] = c->ranks[((int *)theirs)[i]];
            e = mpi_inter_install(l, gn, r, rn, pos, id, c->errh, c->low, newcomm, call);
        }
    }
    free(sel);
    free(theirs);
    return e;
}

/* MPI_IDENT is the caller's (the same handle); then MPI_CONGRUENT,
 * MPI_SIMILAR, MPI_UNEQUAL in that order of likeness */
static int groups_cmp(const int *x, int nx, const int *y, int ny)
{
    if (nx != ny)
        return MPI_UNEQUAL;
    bool order = true, set = true;
    for (int i = 0; i < nx; i++) {
        order = order && x[i] == y[i];
        bool found = false;
        for (int j = 0; j < ny && !found; j++)
            found = x[i] == y[j];
        set = set && found;
    }
    return order ? MPI_CONGRUENT : set ? MPI_SIMILAR : MPI_UNEQUAL;
}

/* Two intercommunicators: their local groups and their remote groups
 * compared, the result the less alike of the two; an intercommunicator
 * and an intracommunicator are MPI_UNEQUAL. */
int mpi_inter_compare(const mpi_comm_t *a, const mpi_comm_t *b)
{
    if (!a->inter || !b->inter)
        return MPI_UNEQUAL;
    const mpi_comm_t *la = &mpi.comms[a->local], *lb = &mpi.comms[b->local];
    int l = groups_cmp(la->ranks, la->size, lb->ranks, lb->size);
    int r = groups_cmp(a->ranks, a->size, b->ranks, b->size);
    return l > r ? l : r;
}
