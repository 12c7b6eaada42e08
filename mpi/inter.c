/*
 * Intercommunicators (docs/mpi.md, "Intercommunicators"): the steps of
 * both groups (inter.h), MPI_Intercomm_create, MPI_Intercomm_merge and the
 * queries.  Dup, split and create of an intercommunicator are in
 * inter_make.c, its collectives in coll_inter.c and coll_nb_inter.c.
 *
 * An intercommunicator's entry names its remote group (size, ranks: what
 * point to point names, so its fast path is the intracommunicators'), its
 * rank this process's in the local group, and its local group is a hidden
 * intracommunicator of the same context id, space and worker (the
 * collectives' local steps run on it: their messages come from other
 * processes than the remote group's, so the two never match each other).
 * One context id for both, agreed by both groups: the ands of each
 * group's free masks (an allreduce over the group), swapped by the
 * leaders and anded again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tern/tagged.h>

#include "mpi/comm_ctx.h"
#include "mpi/inter.h"

/* ---- the leaders' link ------------------------------------------------------ */

static tern_status_t link_wait(const mpi_link_t *l, tern_request_t *r)
{
    for (;;) {
        mpi_lock(l->w);
        tern_status_t st = tern_test(l->w, r, NULL);
        mpi_unlock(l->w);
        if (st != TERN_INPROGRESS)
            return st;
        mpi_dyn_pump(); /* a peer of another job may be saying who it is */
        mpi_block();
    }
}

int mpi_link_swap(const mpi_link_t *l, const void *out, size_t len, void *in, MPI_Comm errcomm,
                  const char *call)
{
    tern_request_t *rr = NULL, *sr = NULL;
    mpi_lock(l->w);
    tern_status_t st = tern_trecv(l->w, in, len, l->peer, l->tag, 0, l->space, NULL, &rr);
    mpi_unlock(l->w);
    if (st != TERN_OK && st != TERN_INPROGRESS)
        return mpi_raise_tern(errcomm, st, call);
    mpi_lock(l->w);
    tern_status_t ss = tern_tsend(l->w, out, len, l->peer, l->tag, l->space, NULL, &sr);
    mpi_unlock(l->w);
    if (ss == TERN_INPROGRESS)
        ss = link_wait(l, sr);
    if (ss != TERN_OK && st == TERN_INPROGRESS) { /* the answer may never come */
        mpi_lock(l->w);
        (void)tern_cancel(l->w, rr);
        mpi_unlock(l->w);
    }
    if (st == TERN_INPROGRESS)
        st = link_wait(l, rr);
    if (ss != TERN_OK)
        return mpi_raise(errcomm, mpi_class_of(ss), "%s: the other group's leader (peer %d): %s",
                         call, l->peer, tern_last_error());
    if (st != TERN_OK)
        return mpi_raise(errcomm, mpi_class_of(st), "%s: from the other group's leader (peer "
                         "%d): %s", call, l->peer, tern_last_error());
    return MPI_SUCCESS;
}

int mpi_link_swapv(const mpi_link_t *l, const void *out, size_t olen, void **in, size_t *ilen,
                   MPI_Comm errcomm, const char *call)
{
    uint64_t mine = olen, theirs = 0;
    int e = mpi_link_swap(l, &mine, sizeof(mine), &theirs, errcomm, call);
    if (e != MPI_SUCCESS)
        return e;
    if (theirs > (1u << 30))
        return mpi_raise(errcomm, MPI_ERR_INTERN, "%s: the other group's leader sends %llu "
                         "bytes", call, (unsigned long long)theirs);
    *in = malloc(theirs > 0 ? (size_t)theirs : 1);
    if (*in == NULL)
        return mpi_raise(errcomm, MPI_ERR_NO_MEM, "%s: %llu bytes", call,
                         (unsigned long long)theirs);
    /* two swaps of different lengths: each side sends its own, receives
     * the other's (one swap call would need equal lengths) */
    tern_request_t *rr = NULL, *sr = NULL;
    mpi_lock(l->w);
    tern_status_t st = tern_trecv(l->w, *in, (size_t)theirs, l->peer, l->tag, 0, l->space, NULL,
                                  &rr);
    tern_status_t ss = st == TERN_OK || st == TERN_INPROGRESS
                           ? tern_tsend(l->w, out, olen, l->peer, l->tag, l->space, NULL, &sr)
                           : st;
    if (ss != TERN_OK && ss != TERN_INPROGRESS && st == TERN_INPROGRESS)
        (void)tern_cancel(l->w, rr);
    mpi_unlock(l->w);
    if (ss == TERN_INPROGRESS)
        ss = link_wait(l, sr);
    if (st == TERN_INPROGRESS)
        st = link_wait(l, rr);
    if (ss == TERN_OK && st == TERN_OK) {
        *ilen = (size_t)theirs;
        return MPI_SUCCESS;
    }
    free(*in);
    *in = NULL;
    return mpi_raise(errcomm, mpi_class_of(ss != TERN_OK ? ss : st), "%s: the other group's "
                     "leader (peer %d): %s", call, l->peer, tern_last_error());
}

/* ---- the steps of both groups ---------------------------------------------- */

/* Over L: the hidden local group raises nothing (MPI_ERRORS_RETURN), a
 * user's communicator as its handler says; either way the error comes
 * back and the step fails with it. */
int mpi_sides_swap(const mpi_sides_t *s, const void *mine, size_t len, void **theirs,
                   size_t *tlen)
{
    mpi_comm_t *L = mpi_comm_get(s->L);
    uint64_t n = UINT64_MAX; /* the leader found no way across */
    void *buf = NULL;
    size_t blen = 0;
    if (L->rank == s->leader && s->link != NULL &&
        mpi_link_swapv(s->link, mine, len, &buf, &blen, s->errcomm, s->call) == MPI_SUCCESS)
        n = blen;
    int e = MPI_Bcast(&n, 1, MPI_UINT64_T, s->leader, s->L);
    if (e == MPI_SUCCESS && n == UINT64_MAX)
        e = L->rank == s->leader && s->link != NULL
                ? MPI_ERR_OTHER /* raised by the swap */
                : mpi_raise(s->errcomm, MPI_ERR_OTHER, "%s: %s", s->call, L->rank == s->leader
                            ? "this group's leader has no way to the other's (its arguments "
                              "were refused)"
                            : "this group's leader could not reach the other group's (its "
                              "error says why)");
    if (e == MPI_SUCCESS && L->rank != s->leader && (buf = malloc(n > 0 ? n : 1)) == NULL)
        e = mpi_raise(s->errcomm, MPI_ERR_NO_MEM, "%s: %llu bytes", s->call,
                      (unsigned long long)n);
    if (e == MPI_SUCCESS && n > 0)
        e = MPI_Bcast(buf, (int)n, MPI_BYTE, s->leader, s->L);
    if (e != MPI_SUCCESS) {
        free(buf);
        return e;
    }
    *theirs = buf;
    *tlen = (size_t)n;
    return MPI_SUCCESS;
}

int mpi_sides_and(const void *sides, unsigned char *buf, size_t len)
{
    const mpi_sides_t *s = sides;
    mpi_comm_t *L = mpi_comm_get(s->L);
    unsigned char *b = malloc(len + 1), *t = malloc(len + 1);
    if (b == NULL || t == NULL) {
        free(b);
        free(t);
        return mpi_raise(s->errcomm, MPI_ERR_NO_MEM, "%s", s->call);
    }
    memcpy(b, buf, len);
    b[len] = 0xff; /* cleared when the leaders could not swap */
    int e = MPI_Allreduce(MPI_IN_PLACE, b, (int)len + 1, MPI_UNSIGNED_CHAR, MPI_BAND, s->L);
    if (e == MPI_SUCCESS && L->rank == s->leader) {
        if (s->link != NULL &&
            mpi_link_swap(s->link, b, len + 1, t, s->errcomm, s->call) == MPI_SUCCESS)
            for (size_t i = 0; i <= len; i++)
                b[i] &= t[i];
        else
            b[len] = 0;
    }
    if (e == MPI_SUCCESS)
        e = MPI_Bcast(b, (int)len + 1, MPI_UNSIGNED_CHAR, s->leader, s->L);
    if (e == MPI_SUCCESS && b[len] == 0 && L->rank != s->leader)
        e = mpi_raise(s->errcomm, MPI_ERR_OTHER, "%s: this group's leader could not reach the "
                      "other group's (its error says why)", s->call);
    else if (e == MPI_SUCCESS && b[len] == 0)
        e = MPI_ERR_OTHER; /* raised by the swap, or the missing link's refusal */
    if (e == MPI_SUCCESS)
        memcpy(buf, b, len);
    free(b);
    free(t);
    return e;
}

/* ---- a new intercommunicator from the processes' identities ------------------ */

static bool ident_same(const mpi_ident_t *a, const mpi_ident_t *b)
{
    return a->job == b->job && a->rank == b->rank;
}

static bool ident_less(const mpi_ident_t *a, const mpi_ident_t *b)
{
    return a->job < b->job || (a->job == b->job && a->rank < b->rank);
}

/* what the leaders swap first: the group's size, its leader, then each
 * member's identity in the group's order */
typedef struct group_hdr {
    int32_t n, leader;
} group_hdr_t;

/* The processes of the other side not reached yet (some process of
 * either side has one): every process's port name gathered, swapped, and
 * the low side connects to those it does not reach, the other waits for
 * them.  A process without a port fails everyone. */
static int wire(const mpi_sides_t *s, const mpi_ident_t *rids, int rn, bool low)
{
    mpi_comm_t *L = mpi_comm_get(s->L);
    int n = L->size, e;
    char why[MPI_MAX_ERROR_STRING] = "", *mine = calloc(1, TERN_PORT_NAME_MAX);
    char *names = malloc((size_t)n * TERN_PORT_NAME_MAX);
    if (mine == NULL || names == NULL) {
        free(mine);
        free(names);
        return mpi_raise(s->errcomm, MPI_ERR_NO_MEM, "%s: port names", s->call);
    }
    const char *p = mpi_dyn_self_port(why, sizeof(why));
    if (p != NULL)
        snprintf(mine, TERN_PORT_NAME_MAX, "%s", p);
    e = MPI_Allgather(mine, TERN_PORT_NAME_MAX, MPI_CHAR, names, TERN_PORT_NAME_MAX, MPI_CHAR,
                      s->L);
    void *theirs = NULL;
    size_t tlen = 0;
    if (e == MPI_SUCCESS)
        e = mpi_sides_swap(s, names, (size_t)n * TERN_PORT_NAME_MAX, &theirs, &tlen);
    if (e == MPI_SUCCESS && tlen != (size_t)rn * TERN_PORT_NAME_MAX)
        e = mpi_raise(s->errcomm, MPI_ERR_INTERN, "%s: %zu bytes of port names from the other "
                      "side, for %d processes", s->call, tlen, rn);
    /* every process sees every name: all come to the same verdict */
    for (int i = 0; e == MPI_SUCCESS && i < n + rn; i++) {
        const char *nm = i < n ? names + (size_t)i * TERN_PORT_NAME_MAX
                               : (const char *)theirs + (size_t)(i - n) * TERN_PORT_NAME_MAX;
        if (nm[0] != '\0')
            continue;
        if (i == L->rank)
            e = mpi_raise(s->errcomm, MPI_ERR_UNSUPPORTED_OPERATION, "%s: a process of another "
                          "job must be reached and this one takes no port: %s", s->call, why);
        else
            e = mpi_raise(s->errcomm, MPI_ERR_UNSUPPORTED_OPERATION, "%s: rank %d of %s group "
                          "takes no port (no netmod of it reaches other jobs: TERN_NETMODS?), "
                          "and a process of another job must reach it", s->call,
                          i < n ? i : i - n, i < n ? "this" : "the other");
    }
    if (e == MPI_SUCCESS) {
        e = mpi_dyn_wire(rids, theirs, rn, low, why, sizeof(why));
        if (e != MPI_SUCCESS)
            e = mpi_raise(s->errcomm, e, "%s: %s", s->call, why);
    }
    free(mine);
    free(names);
    free(theirs);
    return e;
}

int mpi_inter_from_idents(const mpi_sides_t *s, int local_err, MPI_Errhandler errh,
                          MPI_Comm *out)
{
    mpi_comm_t *L = mpi_comm_get(s->L);
    int n = L->size, rn = 0, e;
    size_t olen = sizeof(group_hdr_t) + (size_t)n * sizeof(mpi_ident_t), tlen = 0;
    char *mine = malloc(olen);
    void *theirs = NULL;
    int *rranks = NULL, *lranks = NULL;
    if (mine == NULL)
        return mpi_raise(s->errcomm, MPI_ERR_NO_MEM, "%s", s->call);
    mpi_ident_t self, *lids = (mpi_ident_t *)(mine + sizeof(group_hdr_t));
    *(group_hdr_t *)mine = (group_hdr_t){.n = n, .leader = s->leader};
    mpi_ident_self(&self);
    e = MPI_Allgather(&self, (int)sizeof(self), MPI_BYTE, lids, (int)sizeof(self), MPI_BYTE,
                      s->L);
    if (e == MPI_SUCCESS)
        e = mpi_sides_swap(s, mine, olen, &theirs, &tlen);
    const group_hdr_t *h = theirs;
    if (e == MPI_SUCCESS &&
        (tlen < sizeof(*h) || h->n < 1 || h->leader < 0 || h->leader >= h->n ||
         tlen != sizeof(*h) + (size_t)h->n * sizeof(mpi_ident_t)))
        e = mpi_raise(s->errcomm, MPI_ERR_INTERN, "%s: a malformed group description from the "
                      "other side (%zu bytes)", s->call, tlen);
    if (e == MPI_SUCCESS && (rranks = malloc(sizeof(int) * (size_t)h->n)) == NULL)
        e = mpi_raise(s->errcomm, MPI_ERR_NO_MEM, "%s", s->call);
    if (e != MPI_SUCCESS) {
        free(mine);
        free(theirs);
        return e;
    }
    rn = h->n;
    const mpi_ident_t *rids = (const mpi_ident_t *)(h + 1);
    bool overlap = false, low = ident_less(&lids[s->leader], &rids[h->leader]);
    int unknown = 0;
    for (int i = 0; i < rn; i++) {
        rranks[i] = mpi_ident_peer(&rids[i]);
        unknown += rranks[i] < 0;
        for (int j = 0; j < n; j++)
            overlap = overlap || ident_same(&rids[i], &lids[j]);
    }
    /* rounds (comm_ctx.c) of: the free ids and whether offered, whether
     * every process's arguments were good and the groups disjoint, whether
     * every process reaches every other */
    unsigned char agree[2] = {local_err == MPI_SUCCESS && !overlap ? 0xff : 0,
                              unknown == 0 ? 0xff : 0};
    int id = -1;
    e = mpi_ctx_agree(mpi_sides_and, s, agree, sizeof(agree), true, &id);
    if (e == MPI_SUCCESS && agree[0] == 0)
        e = local_err != MPI_SUCCESS ? local_err /* raised by the caller */
            : overlap ? mpi_raise(s->errcomm, MPI_ERR_COMM, "%s: the two groups overlap (a "
                                  "process in both)", s->call)
                      : mpi_raise(s->errcomm, MPI_ERR_OTHER, "%s: another process's arguments "
                                  "were refused (its error says why): no intercommunicator was "
                                  "made", s->call);
    if (e == MPI_SUCCESS && agree[1] == 0) {
        e = wire(s, rids, rn, low);
        for (int i = 0; e == MPI_SUCCESS && i < rn; i++)
            if ((rranks[i] = mpi_ident_peer(&rids[i])) < 0)
                e = mpi_raise(s->errcomm, MPI_ERR_INTERN, "%s: rank %d of the other group was "
                              "not reached", s->call, i);
    }
    if (e == MPI_SUCCESS && id < 0)
        e = mpi_raise(s->errcomm, MPI_ERR_OTHER, "%s: all %d context ids of the blocking "
                      "creations are taken on some process (free communicators)", s->call,
                      MPI_CTX_ROUND_IDS);
    if (e == MPI_SUCCESS && (lranks = malloc(sizeof(int) * (size_t)n)) == NULL)
        e = mpi_raise(s->errcomm, MPI_ERR_NO_MEM, "%s", s->call);
    free(mine);
    free(theirs);
    if (e != MPI_SUCCESS) {
        if (id >= 0)
            mpi_ctx_give_back(id);
        free(rranks);
        return e;
    }
    memcpy(lranks, L->ranks, sizeof(int) * (size_t)n);
    return mpi_inter_install(lranks, n, rranks, rn, L->rank, id, errh, low, out, s->call);
}

/* ---- MPI_Intercomm_create ------------------------------------------------------ */

int mpi_check_intra(MPI_Comm comm, const char *call)
{
    mpi_comm_t *c = mpi_comm_get(comm);
    if (c != NULL && c->inter)
        return mpi_raise(comm, MPI_ERR_COMM, "%s: an intercommunicator (this call takes an "
                         "intracommunicator)", call);
    return MPI_SUCCESS;
}

/* Collective over local_comm and, through the leaders, over the remote
 * group's local_comm.  Arguments every process of local_comm gives alike
 * (local_leader, tag) are refused at once; the leader's own (peer_comm,
 * remote_leader) make it fail after telling its group, whose members then
 * fail too: the remote group, which nobody can reach then, waits. */
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm)
{
    static const char call[] = "MPI_Intercomm_create";
    int e = mpi_check_comm(local_comm, call);
    if (e == MPI_SUCCESS)
        e = mpi_check_intra(local_comm, call);
    if (e == MPI_SUCCESS && newintercomm == NULL)
        e = mpi_raise(local_comm, MPI_ERR_ARG, "%s: NULL new communicator pointer", call);
    if (e != MPI_SUCCESS)
        return e;
    mpi_comm_t *L = mpi_comm_get(local_comm);
    if (local_leader < 0 || local_leader >= L->size)
        return mpi_raise(local_comm, MPI_ERR_RANK, "%s: local leader %d (local_comm has %d)",
                         call, local_leader, L->size);
    if ((e = mpi_check_tag(local_comm, tag, false, call)) != MPI_SUCCESS)
        return e;
    *newintercomm = MPI_COMM_NULL;
    mpi_link_t link;
    int local_err = MPI_SUCCESS;
    bool have_link = false;
    if (L->rank == local_leader) {
        mpi_comm_t *P = mpi_comm_get(peer_comm);
        if (P == NULL)
            local_err = mpi_raise(local_comm, MPI_ERR_COMM, "%s: peer_comm %d is not a "
                                  "communicator", call, peer_comm);
        else if (remote_leader < 0 || remote_leader >= P->size)
            local_err = mpi_raise(local_comm, MPI_ERR_RANK, "%s: remote leader %d (peer_comm "
                                  "has %d%s)", call, remote_leader, P->size,
                                  P->inter ? " in its remote group" : "");
        else if (P->ranks[remote_leader] == L->ranks[L->rank])
            local_err = mpi_raise(local_comm, MPI_ERR_RANK, "%s: remote leader %d of peer_comm "
                                  "is this process (the local leader)", call, remote_leader);
        else {
            link = (mpi_link_t){.w = P->w, .peer = P->ranks[remote_leader],
                                .space = (uint16_t)(P->space + 1),
                                .tag = MPI_XCHG_TAG_INTER | (uint32_t)tag};
            have_link = true;
        }
    }
    mpi_sides_t s = {.L = local_comm, .leader = local_leader, .link = have_link ? &link : NULL,
                     .errcomm = local_comm, .call = call};
    return mpi_inter_from_idents(&s, local_err, L->errh, newintercomm);
}

/* ---- MPI_Intercomm_merge -------------------------------------------------------- */

/* The leaders' link of an intercommunicator (local rank 0 of each group),
 * and the sides of a creation on it. */
void mpi_inter_sides(const mpi_comm_t *c, MPI_Comm comm, const char *call, mpi_link_t *link,
                     mpi_sides_t *s)
{
    *link = (mpi_link_t){.w = c->w, .peer = c->ranks[0], .space = (uint16_t)(c->space + 1),
                         .tag = MPI_XCHG_TAG_INTERCOMM};
    *s = (mpi_sides_t){.L = mpi_comm_handle(c->local), .leader = 0,
                       .link = c->rank == 0 ? link : NULL, .errcomm = comm, .call = call};
}

/* The intracommunicator of both groups: the group that gave high false
 * first; both alike, the low one first (MPI leaves the order open then).
 * The context id is agreed by both groups. */
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char call[] = "MPI_Intercomm_merge";
    int e = mpi_check_comm(intercomm, call);
    mpi_comm_t *c = e == MPI_SUCCESS ? mpi_comm_get(intercomm) : NULL;
    if (e == MPI_SUCCESS && !c->inter)
        e = mpi_raise(intercomm, MPI_ERR_COMM, "%s: an intracommunicator (this call takes an "
                      "intercommunicator)", call);
    if (e == MPI_SUCCESS && newintracomm == NULL)
        e = mpi_raise(intercomm, MPI_ERR_ARG, "%s: NULL new communicator pointer", call);
    if (e != MPI_SUCCESS)
        return e;
    *newintracomm = MPI_COMM_NULL;
    mpi_link_t link;
    mpi_sides_t s;
    mpi_inter_sides(c, intercomm, call, &link, &s);
    unsigned char mine = high ? 1 : 0;
    void *theirs = NULL;
    size_t tlen = 0;
    int id = -1;
    e = mpi_sides_swap(&s, &mine, 1, &theirs, &tlen);
    if (e == MPI_SUCCESS && tlen != 1)
        e = mpi_raise(intercomm, MPI_ERR_INTERN, "%s: %zu bytes from the other leader", call,
                      tlen);
    if (e == MPI_SUCCESS)
        e = mpi_ctx_agree(mpi_sides_and, &s, NULL, 0, true, &id);
    if (e == MPI_SUCCESS && id < 0)
        e = mpi_raise(intercomm, MPI_ERR_OTHER, "%s: all %d context ids of the blocking "
                      "creations are taken on some process (free communicators)", call,
                      MPI_CTX_ROUND_IDS);
    bool first = e == MPI_SUCCESS && (mine != *(unsigned char *)theirs ? !mine : c->low);
    free(theirs);
    const mpi_comm_t *lc = mpi_comm_local(c);
    int n = lc->size + c->size, *ranks = e == MPI_SUCCESS ? malloc(sizeof(int) * (size_t)n) : NULL;
    if (e == MPI_SUCCESS && ranks == NULL) {
        mpi_ctx_give_back(id);
        e = mpi_raise(intercomm, MPI_ERR_NO_MEM, "%s", call);
    }
    if (e == MPI_SUCCESS) {
        const mpi_comm_t *a = first ? lc : c, *b = first ? c : lc;
        memcpy(ranks, a->ranks, sizeof(int) * (size_t)a->size);
        memcpy(ranks + a->size, b->ranks, sizeof(int) * (size_t)b->size);
        e = mpi_comm_install(ranks, n, first ? c->rank : c->size + c->rank, id, c->errh,
                             newintracomm, call);
    }
    return e;
}

/* ---- queries --------------------------------------------------------------------- */

int MPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    int e = mpi_check_comm(comm, "MPI_Comm_test_inter");
    if (e == MPI_SUCCESS && flag == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Comm_test_inter: NULL flag pointer");
    if (e == MPI_SUCCESS)
        *flag = mpi_comm_get(comm)->inter;
    return e;
}

static int inter_only(MPI_Comm comm, const void *out, const char *call)
{
    int e = mpi_check_comm(comm, call);
    if (e == MPI_SUCCESS && !mpi_comm_get(comm)->inter)
        e = mpi_raise(comm, MPI_ERR_COMM, "%s: an intracommunicator (it has no remote group)",
                      call);
    if (e == MPI_SUCCESS && out == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: NULL result pointer", call);
    return e;
}

int MPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    int e = inter_only(comm, size, "MPI_Comm_remote_size");
    if (e == MPI_SUCCESS)
        *size = mpi_comm_get(comm)->size;
    return e;
}

int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    static const char call[] = "MPI_Comm_remote_group";
    int e = inter_only(comm, group, call);
    if (e != MPI_SUCCESS)
        return e;
    const mpi_comm_t *c = mpi_comm_get(comm);
    int *procs = malloc(sizeof(int) * (size_t)c->size);
    if (procs == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
    memcpy(procs, c->ranks, sizeof(int) * (size_t)c->size);
    return mpi_group_new(procs, c->size, group, call);
}
