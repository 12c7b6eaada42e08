/*
 * Communicators from groups (MPI_Comm_create, MPI_Comm_create_group), of
 * the processes of one host (MPI_Comm_split_type) and the non-blocking
 * duplicate (MPI_Comm_idup).  The context ids are agreed in comm_ctx.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mpi/comm_ctx.h"

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The group's processes, checked: a valid group (MPI_ERR_GROUP) whose
 * processes are all in comm (MPI_ERR_GROUP, as MPICH), raised on comm;
 * *me this process's rank in it (MPI_UNDEFINED: not a member). */
static int group_of(MPI_Comm comm, MPI_Group group, const int **procs, int *n, int *me,
                    const char *call)
{
    *procs = mpi_group_procs(group, n);
    if (*procs == NULL)
        return mpi_raise(comm, MPI_ERR_GROUP, "%s: group %d is not valid%s", call, group,
                         group == MPI_GROUP_NULL ? " (MPI_GROUP_NULL)" : "");
    mpi_comm_t *c = mpi_comm_get(comm);
    int *sorted = malloc(sizeof(int) * (size_t)c->size);
    if (sorted == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
    memcpy(sorted, c->ranks, sizeof(int) * (size_t)c->size);
    qsort(sorted, (size_t)c->size, sizeof(int), cmp_int);
    int self = c->ranks[c->rank];
    *me = MPI_UNDEFINED;
    for (int i = 0; i < *n; i++) {
        if (bsearch(&(*procs)[i], sorted, (size_t)c->size, sizeof(int), cmp_int) == NULL) {
            free(sorted);
            return mpi_raise(comm, MPI_ERR_GROUP, "%s: rank %d of the group is not a process "
                             "of the communicator (the group must be a subgroup of its group)",
                             call, i);
        }
        if ((*procs)[i] == self)
            *me = i;
    }
    free(sorted);
    return MPI_SUCCESS;
}

static int *copy_ints(const int *p, int n)
{
    int *q = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (q != NULL)
        memcpy(q, p, sizeof(int) * (size_t)n);
    return q;
}

/* Collective over comm.  Each rank may give a different group, the groups
 * of the members of one new communicator being the same (MPI-2.2); a rank
 * outside its group gets MPI_COMM_NULL.  A rank whose arguments are wrong
 * still takes part in the agreement, and every rank then fails. */
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_create";
    int e = mpi_check_comm(comm, call);
    if (e != MPI_SUCCESS)
        return e;
    if (mpi_comm_get(comm)->inter)
        return newcomm == NULL ? mpi_raise(comm, MPI_ERR_ARG, "%s: NULL new communicator "
                                           "pointer", call)
                               : mpi_inter_create(comm, group, newcomm);
    const int *procs = NULL;
    int n = 0, me = MPI_UNDEFINED;
    MPI_Comm unused;
    if (newcomm == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: NULL new communicator pointer", call);
    else
        e = group_of(comm, group, &procs, &n, &me, call);
    int *ranks = NULL;
    if (e == MPI_SUCCESS && me != MPI_UNDEFINED && (ranks = copy_ints(procs, n)) == NULL)
        e = mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
    return mpi_comm_make(comm, ranks, n, me, e, newcomm != NULL ? newcomm : &unused, call);
}

/* Collective over the group's members only (they agree among themselves,
 * comm_ctx.c); tag keeps apart concurrent creations on one comm.  A
 * process outside the group gets MPI_COMM_NULL at once, as in MPICH. */
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_create_group";
    int e = mpi_check_comm(comm, call);
    if (e == MPI_SUCCESS)
        e = mpi_check_intra(comm, call);
    if (e == MPI_SUCCESS && newcomm == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: NULL new communicator pointer", call);
    if (e == MPI_SUCCESS)
        e = mpi_check_tag(comm, tag, false, call);
    const int *procs = NULL;
    int n = 0, me = MPI_UNDEFINED;
    if (e == MPI_SUCCESS)
        e = group_of(comm, group, &procs, &n, &me, call);
    if (e != MPI_SUCCESS)
        return e;
    if (me == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    /* rounds among the members, as mpi_comm_make's (comm_ctx.c) */
    int err = MPI_XCHG_AGAIN;
    for (int round = 0; e == MPI_SUCCESS && err == MPI_XCHG_AGAIN; round++) {
        int *ranks = copy_ints(procs, n);
        if (ranks == NULL) {
            e = mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
            break;
        }
        mpi_ctx_pause(round);
        mpi_xchg_t *x;
        e = mpi_xchg_start(comm, ranks, n, me, 0, MPI_XCHG_TAG_GROUP | (uint32_t)tag, false,
                           newcomm, call, &x);
        if (e != MPI_SUCCESS)
            break;
        while (!mpi_xchg_poll(x, &err))
            mpi_block();
        char msg[MPI_MAX_ERROR_STRING];
        snprintf(msg, sizeof(msg), "%s", mpi_xchg_msg(x));
        mpi_xchg_free(x);
        if (err != MPI_SUCCESS && err != MPI_XCHG_AGAIN)
            e = mpi_raise(comm, err, "%s", msg);
    }
    return e;
}

/* ---- MPI_Comm_split_type ----------------------------------------------------- */

/* Which host this process runs on, as tern's engine tells hosts apart
 * (engine/address.c, tern_host_id_t: the kernel's boot id and the pid and
 * network namespaces; processes with the same identity share /dev/shm and
 * reach each other over shm).  The engine does not export it, so it is
 * read here the same way.  An unknown boot id matches no other process. */
typedef struct host_id {
    char boot[40];            /* /proc/sys/kernel/random/boot_id's text; "": unknown */
    unsigned long long pid_ns, net_ns;
} host_id_t;

static void host_read(host_id_t *h)
{
    memset(h, 0, sizeof(*h));
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f != NULL) {
        if (fgets(h->boot, sizeof(h->boot), f) == NULL)
            h->boot[0] = '\0';
        fclose(f);
    }
    struct stat sb;
    if (stat("/proc/self/ns/pid", &sb) == 0)
        h->pid_ns = (unsigned long long)sb.st_ino;
    if (stat("/proc/self/ns/net", &sb) == 0)
        h->net_ns = (unsigned long long)sb.st_ino;
}

static bool host_same(const host_id_t *a, const host_id_t *b)
{
    return a->boot[0] != '\0' && memcmp(a, b, sizeof(*a)) == 0;
}

/* MPI_COMM_TYPE_SHARED: the processes of comm on this one's host, in key
 * order (then comm's), as a split whose color is the lowest comm rank on
 * the host; MPI_UNDEFINED: MPI_COMM_NULL.  Collective over comm (the
 * identities are gathered, then split); a rank whose arguments are wrong
 * still takes part, and every rank then fails. */
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_split_type";
    int e = mpi_check_comm(comm, call);
    if (e == MPI_SUCCESS)
        e = mpi_check_intra(comm, call);
    if (e != MPI_SUCCESS)
        return e;
    MPI_Comm unused;
    if (newcomm == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: NULL new communicator pointer", call);
    else if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: split_type %d (MPI_COMM_TYPE_SHARED or "
                      "MPI_UNDEFINED)", call, split_type);
    else if (!mpi_info_ok(info))
        e = mpi_raise(comm, MPI_ERR_INFO, "%s: info %d is not an info object", call, info);
    mpi_comm_t *c = mpi_comm_get(comm);
    host_id_t me, *all = malloc(sizeof(host_id_t) * (size_t)c->size);
    if (all == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
    host_read(&me);
    int ge = MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, all, (int)sizeof(me), MPI_BYTE, comm);
    if (ge != MPI_SUCCESS) {
        free(all);
        return ge;
    }
    int color = c->rank;
    for (int i = 0; i < c->rank; i++)
        if (host_same(&all[i], &me)) {
            color = i;
            break;
        }
    free(all);
    if (split_type == MPI_UNDEFINED)
        color = MPI_UNDEFINED;
    return mpi_comm_split_by(comm, color, key, e, newcomm != NULL ? newcomm : &unused, call);
}

/* ---- MPI_Comm_idup -------------------------------------------------------------- */

/* an MPI_Comm_idup under way: the agreement, and the attributes copied
 * when it was called, for the new communicator */
typedef struct idup {
    mpi_xchg_t *x;
    struct attr *attrs;
    MPI_Comm parent, *out;
} idup_t;

/* the request's progress (under the schedules' lock: never blocks) */
static bool idup_progress(mpi_req_t *q)
{
    idup_t *d = q->aux;
    int err;
    if (!mpi_xchg_poll(d->x, &err))
        return false;
    q->err = err;
    if (err != MPI_SUCCESS) {
        snprintf(mpi_last_error, sizeof(mpi_last_error), "%s", mpi_xchg_msg(d->x));
        mpi_attr_comm_discard(d->attrs, d->parent);
    } else {
        mpi_attr_comm_attach(d->attrs, *d->out);
    }
    mpi_status_empty(&q->status, MPI_ANY_SOURCE);
    mpi_xchg_free(d->x);
    free(d);
    q->aux = NULL;
    return true;
}

/* The duplicate's context id is agreed among comm's ranks by messages sent
 * at once (comm_ctx.c), so the call returns without waiting for any other
 * rank or creation; the request completes once every rank took the id, and
 * only then is *newcomm written.  The attributes are copied here, as MPI
 * says (their copy callbacks run in this call), and given to the duplicate
 * when it is made. */
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    static const char call[] = "MPI_Comm_idup";
    int e = mpi_check_comm(comm, call);
    if (e == MPI_SUCCESS && newcomm == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: NULL new communicator pointer", call);
    if (e == MPI_SUCCESS && request == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: NULL request pointer", call);
    if (e != MPI_SUCCESS)
        return e;
    /* an intercommunicator's: every process of both groups takes part,
     * its local group first */
    mpi_comm_t *c = mpi_comm_get(comm);
    const mpi_comm_t *lc = mpi_comm_local(c);
    int n = c->inter ? lc->size + c->size : c->size;
    idup_t *d = calloc(1, sizeof(*d));
    int *ranks = malloc(sizeof(int) * (size_t)n);
    if (ranks == NULL || d == NULL) {
        free(ranks);
        free(d);
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
    }
    memcpy(ranks, lc->ranks, sizeof(int) * (size_t)lc->size);
    if (c->inter)
        memcpy(ranks + lc->size, c->ranks, sizeof(int) * (size_t)c->size);
    *d = (idup_t){.parent = comm, .out = newcomm};
    int ae = mpi_attr_comm_copy_out(comm, &d->attrs);
    if (ae != MPI_SUCCESS) {
        mpi_attr_comm_discard(d->attrs, comm);
        free(ranks);
        free(d);
        return mpi_raise_code(comm, ae, "%s: a copy callback of an attribute failed (%d)",
                              call, ae);
    }
    MPI_Request h;
    if (mpi_req_new(&h) != MPI_SUCCESS) {
        mpi_attr_comm_discard(d->attrs, comm);
        free(ranks);
        free(d);
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s: request table", call);
    }
    mpi_req_t *q = mpi_req_at(h);
    q->kind = REQ_DONE; /* until it carries the agreement */
    /* the idups on one parent are numbered alike on every process (MPI
     * orders a communicator's collective calls) */
    uint64_t tag = MPI_XCHG_TAG_IDUP | (uint64_t)(c->idup_seq++ & 0xffffu) << 44;
    mpi_xchg_t *x = NULL;
    e = mpi_xchg_start(comm, ranks, n, c->rank, c->inter ? lc->size : 0, tag, true, newcomm, call,
                       &x);
    if (e != MPI_SUCCESS) {
        mpi_attr_comm_discard(d->attrs, comm);
        free(d);
        MPI_Request_free(&h);
        return e;
    }
    d->x = x;
    q->comm = comm;
    q->progress = idup_progress;
    q->aux = d;
    q->kind = REQ_SCHED;
    *request = h;
    return MPI_SUCCESS;
}
