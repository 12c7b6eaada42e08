/*
 * Non-blocking collectives: each is a schedule, a list of operations in
 * rounds (the sends and receives of a round are posted together; once they
 * all completed, the round's local steps run: reductions, copies,
 * unpacks), carried by a REQ_SCHED request whose progress hook moves it on
 * without ever blocking.  MPI_Test / Wait* drive it (req_poll), and so does every wait
 * of the layer that polls (mpi_block, mt.c: blocking collectives, blocking
 * point to point while schedules are under way): a rank blocked in one
 * may owe its peers the next round of a schedule.  The schedules under way
 * are a list; under MPI_THREAD_MULTIPLE the list and every step of a
 * schedule are nb_lock's (a thread that finds it taken leaves the work to
 * the one holding it).
 *
 * Every schedule takes a tag of its own, NB_TAG_BASE + the communicator's
 * sequence number (every rank starts a communicator's collectives in the
 * same order, so the numbers agree), so that schedules under way together,
 * and the blocking collectives (their tags are below NB_TAG_BASE), never
 * take each other's messages.
 *
 * Algorithms: the blocking ones', chosen the same way: dissemination
 * barrier, binomial or scatter + ring broadcast, binomial reduce,
 * recursive-doubling or Rabenseifner allreduce (the others: coll_nb_gather.c,
 * coll_alltoall.c, coll_nb_red.c, building on coll_nb.h).  A failed tern
 * operation ends the schedule after the round's other operations
 * completed; its class is the request's error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_inter.h"
#include "mpi/coll_nb.h"

int coll_nb_active; /* entries of active[] (nb_lock's under MPI_THREAD_MULTIPLE) */
static mpi_req_t **active;
static int active_cap;
static pthread_mutex_t nb_lock = PTHREAD_MUTEX_INITIALIZER;


static bool active_add(mpi_req_t *q)
{
    if (coll_nb_active == active_cap) {
        int cap = active_cap ? 2 * active_cap : 16;
        mpi_req_t **v = realloc(active, sizeof(*v) * (size_t)cap);
        if (v == NULL)
            return false;
        active = v;
        active_cap = cap;
    }
    active[coll_nb_active++] = q;
    return true;
}

static void active_remove(mpi_req_t *q)
{
    for (int i = 0; i < coll_nb_active; i++)
        if (active[i] == q) {
            active[i] = active[--coll_nb_active];
            return;
        }
}

sched_t *nb_sched_new(const coll_t *k, int *e)
{
    sched_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        *e = mpi_raise(k->comm, MPI_ERR_NO_MEM, "%s: schedule", k->call);
        return NULL;
    }
    s->k = *k;
    s->peers = k->c->ranks;
    s->held = MPI_DATATYPE_NULL;
    s->tag = NB_TAG_BASE + (int)(k->c->nbc_seq++ % NB_TAG_SPAN);
    return s;
}

void nb_sched_free(sched_t *s)
{
    coll_stage_out(&s->stage, NULL, 0, MPI_DATATYPE_NULL, false);
    coll_tmp_free(s->work);
    coll_tmp_free(s->tmp);
    for (int i = 0; i < s->nops; i++)
        if (s->ops[i].kind == NB_UNPACK && s->ops[i].t != NULL)
            mpi_dt_release(s->ops[i].t);
    if (s->dt != NULL)
        mpi_dt_release(s->dt);
    if (s->held != MPI_DATATYPE_NULL)
        mpi_dt_drop(s->held);
    for (int i = 0; i < s->nbufs; i++)
        coll_tmp_free(s->bufs[i]);
    free(s->bufs);
    free(s->ops);
    free(s);
}

void nb_add(sched_t *s, enum nb_kind kind, int peer, const void *src, void *dst, size_t len)
{
    if (s->nops == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        nb_op_t *o = realloc(s->ops, sizeof(*o) * (size_t)cap);
        if (o == NULL) {
            s->nomem = true;
            return;
        }
        s->ops = o;
        s->cap = cap;
    }
    if (kind == NB_SEND || kind == NB_RECV)
        peer = s->peers[peer];
    s->ops[s->nops++] = (nb_op_t){.kind = kind, .round = s->round, .peer = peer, .src = src,
                                  .dst = dst, .len = len, .n = -1};
}

void nb_next_round(sched_t *s) { s->round++; }

void *nb_buf(sched_t *s, size_t len)
{
    if (s->nbufs == s->bufcap) {
        int cap = s->bufcap ? 2 * s->bufcap : 8;
        char **v = realloc(s->bufs, sizeof(*v) * (size_t)cap);
        if (v == NULL) {
            s->nomem = true;
            return NULL;
        }
        s->bufs = v;
        s->bufcap = cap;
    }
    char *p = coll_tmp(len);
    if (p == NULL) {
        s->nomem = true;
        return NULL;
    }
    s->bufs[s->nbufs++] = p;
    return p;
}

void nb_add_unpack(sched_t *s, const void *src, void *dst, size_t len, int count,
                   MPI_Datatype dt)
{
    mpi_dtype_t *t = mpi_dt_get(dt); /* a contiguous type is never unpacked: derived */
    int n = s->nops;
    nb_add(s, NB_UNPACK, 0, src, dst, len);
    if (s->nops == n)
        return; /* no memory (s->nomem) */
    mpi_dt_retain(t);
    s->ops[s->nops - 1].count = count;
    s->ops[s->nops - 1].t = t;
}

void nb_send_block(sched_t *s, int peer, const void *buf, int count, MPI_Datatype dt)
{
    size_t len = mpi_dt_pack_size(count, dt);
    if (!mpi_dt_is_contig(dt) && len > 0) {
        char *b = nb_buf(s, len);
        if (b == NULL)
            return;
        mpi_dt_pack(buf, count, dt, b);
        buf = b;
    }
    nb_add(s, NB_SEND, peer, buf, NULL, len);
}

void nb_recv_block(sched_t *s, int peer, void *buf, int count, MPI_Datatype dt)
{
    size_t len = mpi_dt_pack_size(count, dt);
    if (mpi_dt_is_contig(dt) || len == 0) {
        nb_add(s, NB_RECV, peer, NULL, buf, len);
        return;
    }
    char *b = nb_buf(s, len);
    if (b == NULL)
        return;
    nb_add(s, NB_RECV, peer, NULL, b, len);
    nb_add_unpack(s, b, buf, len, count, dt);
}

int nb_copy_now(const coll_t *k, const void *src, int scount, MPI_Datatype stype, void *dst,
                int rcount, MPI_Datatype rtype)
{
    coll_stage_t s;
    int e = coll_stage_in(k, src, scount, stype, true, &s);
    if (e != MPI_SUCCESS)
        return e;
    size_t n = mpi_dt_pack_size(rcount, rtype);
    if (mpi_dt_is_contig(rtype))
        memmove(dst, s.bytes, s.len < n ? s.len : n);
    else
        mpi_dt_unpack(s.bytes, s.len, dst, rcount, rtype);
    coll_stage_out(&s, NULL, 0, stype, false);
    return MPI_SUCCESS;
}

int *nb_equal_blocks(const coll_t *k, int n, int **displs)
{
    int size = k->c->size;
    int *c = malloc(sizeof(int) * (size_t)size * 2);
    if (c == NULL) {
        mpi_raise(k->comm, MPI_ERR_NO_MEM, "%s: counts", k->call);
        return NULL;
    }
    *displs = c + size;
    for (int i = 0; i < size; i++) {
        c[i] = n;
        (*displs)[i] = i * n;
    }
    return c;
}

/* a reduction of elements [from, from + n) only */
static void add_part(sched_t *s, const char *src, char *dst, int from, int n)
{
    nb_add(s, NB_REDUCE, 0, src, dst, 0);
    if (!s->nomem) {
        s->ops[s->nops - 1].from = from;
        s->ops[s->nops - 1].n = n;
    }
}

/* ---- running a schedule ------------------------------------------------- */

static void nb_fail(sched_t *s, tern_status_t st)
{
    if (s->err != MPI_SUCCESS)
        return;
    s->err = mpi_class_of(st);
    snprintf(mpi_last_error, sizeof(mpi_last_error), "%s: %s", s->k.call, tern_last_error());
}

static void post(sched_t *s)
{
    for (int i = s->cur; i < s->end && s->err == MPI_SUCCESS; i++) {
        nb_op_t *o = &s->ops[i];
        tern_status_t st = TERN_OK;
        o->r = NULL;
        mpi_lock(s->k.w);
        if (o->kind == NB_SEND)
            st = tern_isend(s->k.w, o->src, o->len, o->peer, s->tag, s->k.space, &o->r);
        else if (o->kind == NB_RECV)
            st = tern_irecv(s->k.w, o->dst, o->len, o->peer, s->tag, s->k.space, NULL, &o->r);
        mpi_unlock(s->k.w);
        if (st != TERN_INPROGRESS)
            o->r = NULL; /* done at once (or failed) */
        if (st != TERN_OK && st != TERN_INPROGRESS)
            nb_fail(s, st);
    }
    s->posted = true;
}

/* the round's sends and receives: all completed? */
static bool round_done(sched_t *s)
{
    bool done = true;
    for (int i = s->cur; i < s->end; i++) {
        nb_op_t *o = &s->ops[i];
        if (o->r == NULL)
            continue;
        mpi_lock(s->k.w);
        tern_status_t st = tern_test(s->k.w, o->r, NULL);
        mpi_unlock(s->k.w);
        if (st == TERN_INPROGRESS) {
            done = false;
            continue;
        }
        o->r = NULL;
        if (st != TERN_OK)
            nb_fail(s, st);
    }
    return done;
}

static void local_steps(sched_t *s)
{
    for (int i = s->cur; i < s->end; i++) {
        nb_op_t *o = &s->ops[i];
        if (o->kind == NB_REDUCE && o->n < 0)
            coll_red_apply(&s->red, o->src, o->dst);
        else if (o->kind == NB_REDUCE)
            coll_red_apply_part(&s->red, o->src, o->dst, o->from, o->n);
        else if (o->kind == NB_COPY && o->len > 0)
            memcpy(o->dst, o->src, o->len);
        else if (o->kind == NB_UNPACK)
            mpi_dt_unpack_t(o->src, o->len, o->dst, o->count, o->t);
    }
}

static void finish(sched_t *s)
{
    if (s->err == MPI_SUCCESS && s->fin == END_STORE)
        s->err = coll_red_store(&s->k, &s->sred, s->out, s->user);
    if (s->err == MPI_SUCCESS && s->fin == END_UNPACK && s->stage.staged)
        mpi_dt_unpack_t(s->stage.bytes, s->stage.len, s->user, s->count, s->dt);
}

/* (nb_lock held) */
static bool nb_progress(mpi_req_t *q)
{
    sched_t *s = q->aux;
    if (s == NULL)
        return true; /* finished by another thread's mpi_coll_progress */
    for (;;) {
        if (!s->posted) {
            if (s->cur == s->nops || s->err != MPI_SUCCESS)
                break;
            s->end = s->cur;
            while (s->end < s->nops && s->ops[s->end].round == s->ops[s->cur].round)
                s->end++;
            post(s);
        }
        if (!round_done(s))
            return false;
        if (s->err == MPI_SUCCESS)
            local_steps(s);
        s->cur = s->end;
        s->posted = false;
    }
    finish(s);
    q->err = s->err;
    mpi_status_empty(&q->status, MPI_ANY_SOURCE);
    nb_sched_free(s);
    q->aux = NULL;
    active_remove(q);
    return true;
}

bool mpi_sched_poll(mpi_req_t *q)
{
    mpi_mt_lock(&nb_lock);
    bool done = q->progress(q);
    mpi_mt_unlock(&nb_lock);
    return done;
}

/* Every schedule under way, one step each (from the last: a finished one
 * leaves the list).  Their requests stay REQ_SCHED: only the owner's
 * req_poll turns them REQ_DONE, and a finished schedule answers true
 * again there. */
bool mpi_coll_progress(void)
{
    if (mpi.mt && pthread_mutex_trylock(&nb_lock) != 0)
        return false; /* another thread moves them on */
    bool moved = false;
    for (int i = coll_nb_active - 1; i >= 0; i--) {
        if (i >= coll_nb_active)
            continue;
        sched_t *s = active[i]->aux;
        int cur = s->cur;
        moved = nb_progress(active[i]) || s->cur != cur || moved;
    }
    if (mpi.mt)
        pthread_mutex_unlock(&nb_lock);
    return moved;
}

void mpi_coll_finalize(void)
{
    while (coll_nb_active > 0) /* the peers may wait for these rounds */
        mpi_block(); /* moves them on */
    free(active);
    active = NULL;
    active_cap = 0;
    coll_tmp_drain();
}

int nb_start(sched_t *s, MPI_Request *request)
{
    const coll_t k = s->k;
    MPI_Request h;
    if (s->nomem) {
        nb_sched_free(s);
        return mpi_raise(k.comm, MPI_ERR_NO_MEM, "%s: schedule", k.call);
    }
    int e = mpi_req_new(&h);
    if (e != MPI_SUCCESS) {
        nb_sched_free(s);
        return mpi_raise(k.comm, e, "%s: request table", k.call);
    }
    mpi_req_t *q = mpi_req_at(h);
    q->comm = k.comm;
    q->progress = nb_progress;
    q->aux = s;
    mpi_mt_lock(&nb_lock);
    bool listed = active_add(q);
    mpi_mt_unlock(&nb_lock);
    if (!listed) {
        nb_sched_free(s);
        q->aux = NULL;
        q->kind = REQ_DONE;
        MPI_Request_free(&h);
        return mpi_raise(k.comm, MPI_ERR_NO_MEM, "%s: schedule list", k.call);
    }
    q->kind = REQ_SCHED;
    if (mpi_sched_poll(q))
        q->kind = REQ_DONE;
    *request = h;
    return MPI_SUCCESS;
}

int nb_begin(coll_t *k, MPI_Comm comm, const char *call, MPI_Request *request)
{
    int e = coll_start(k, comm, call);
    if (e == MPI_SUCCESS && request == NULL)
        e = mpi_raise(comm, MPI_ERR_REQUEST, "%s: NULL request pointer", call);
    return e;
}

/* ---- the collectives ------------------------------------------------------ */

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_ibarrier(comm, request);
    coll_t k;
    int e = nb_begin(&k, comm, "MPI_Ibarrier", request);
    if (e != MPI_SUCCESS)
        return e;
    sched_t *s = nb_sched_new(&k, &e);
    if (s == NULL)
        return e;
    static const char zero;
    int size = k.c->size, rank = k.c->rank;
    for (int step = 1; step < size; step <<= 1, nb_next_round(s)) { /* dissemination */
        nb_add(s, NB_RECV, (rank - step + size) % size, NULL, &s->byte, 1);
        nb_add(s, NB_SEND, (rank + step) % size, &zero, NULL, 1);
    }
    return nb_start(s, request);
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_ibcast(buffer, count, datatype, root, comm, request);
    coll_t k;
    int e = nb_begin(&k, comm, "MPI_Ibcast", request);
    if (e == MPI_SUCCESS)
        e = coll_check_root(&k, root);
    if (e == MPI_SUCCESS)
        e = mpi_check_buf(comm, buffer, count, datatype, k.call);
    if (e != MPI_SUCCESS)
        return e;
    sched_t *s = nb_sched_new(&k, &e);
    if (s == NULL)
        return e;
    int size = k.c->size, rank = k.c->rank, rel = (rank - root + size) % size;
    if ((e = coll_stage_in(&k, buffer, count, datatype, rank == root, &s->stage)) !=
        MPI_SUCCESS) {
        nb_sched_free(s);
        return e;
    }
    if (rank != root && s->stage.staged) { /* the type may be freed meanwhile */
        s->fin = END_UNPACK;
        s->user = buffer;
        s->count = count;
        s->dt = mpi_dt_get(datatype);
        mpi_dt_retain(s->dt);
    }
    char *buf = s->stage.bytes;
    size_t len = s->stage.len;
    /* binomial: from the parent, then to the children together; long: a
     * subtree's pieces only (coll_long.c), then the ring */
    bool lng = coll_bcast_is_long(&k, len);
    int mask = 1;
    for (; mask < size; mask <<= 1)
        if (rel & mask) {
            size_t a = lng ? coll_bcast_piece(len, size, rel) : 0;
            size_t b = lng ? coll_bcast_piece(len, size, rel + mask < size ? rel + mask : size)
                           : len;
            nb_add(s, NB_RECV, (rank - mask + size) % size, NULL, buf + a, b - a);
            nb_next_round(s);
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        int lo = rel + mask, hi = lo + mask < size ? lo + mask : size;
        if (lo >= size)
            continue;
        size_t a = lng ? coll_bcast_piece(len, size, lo) : 0;
        size_t b = lng ? coll_bcast_piece(len, size, hi) : len;
        nb_add(s, NB_SEND, (rank + mask) % size, buf + a, NULL, b - a);
    }
    nb_next_round(s);
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    for (int i = 0; lng && i < size - 1; i++, nb_next_round(s)) {
        int sp = (rel - i + size) % size, rp = (rel - i - 1 + size) % size;
        size_t s0 = coll_bcast_piece(len, size, sp), r0 = coll_bcast_piece(len, size, rp);
        nb_add(s, NB_RECV, left, NULL, buf + r0, coll_bcast_piece(len, size, rp + 1) - r0);
        nb_add(s, NB_SEND, right, buf + s0, NULL, coll_bcast_piece(len, size, sp + 1) - s0);
    }
    return nb_start(s, request);
}

sched_t *nb_red_sched(const coll_t *k, const coll_red_t *r, const void *user, int *e)
{
    sched_t *s = nb_sched_new(k, e);
    if (s == NULL)
        return NULL;
    s->red = s->sred = *r;
    if ((*e = coll_red_bufs(k, r, user, &s->work, &s->tmp)) != MPI_SUCCESS) {
        s->work = s->tmp = NULL;
        nb_sched_free(s);
        return NULL;
    }
    s->out = s->work;
    if (!mpi_dt_predefined(r->dt)) { /* the store at the end needs the type, freed or not */
        s->held = mpi_dt_hold(r->dt);
        if (s->held == MPI_DATATYPE_NULL) {
            nb_sched_free(s);
            *e = mpi_raise(k->comm, MPI_ERR_NO_MEM, "%s: datatype table", k->call);
            return NULL;
        }
        s->red.dt = s->sred.dt = s->held;
    }
    return s;
}

/* the exchanges of coll.c's allreduce_rd between the pof2 ranks, as rounds */
static void iallreduce_rd(sched_t *s, int newrank, int pof2, int rem)
{
    int rank = s->k.c->rank;
    bool commute = mpi_op_commutes(s->red.op);
    for (int mask = 1; mask < pof2; mask <<= 1, nb_next_round(s)) {
        int newdst = newrank ^ mask, dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
        nb_add(s, NB_RECV, dst, NULL, s->tmp, s->red.len);
        nb_add(s, NB_SEND, dst, s->work, NULL, s->red.len);
        if (commute || dst < rank) {
            nb_add(s, NB_REDUCE, 0, s->tmp, s->work, 0);
        } else {
            nb_add(s, NB_REDUCE, 0, s->work, s->tmp, 0); /* tmp = work op tmp */
            nb_add(s, NB_COPY, 0, s->tmp, s->work, s->red.len);
        }
    }
}

/* the byte where block blk of a working buffer cut in pof2 starts */
static size_t blk_off(const sched_t *s, int pof2, int blk)
{
    return (size_t)coll_block_first(s->red.n, pof2, blk) * s->red.ext;
}

/* one swap with dst: blocks [slo, shi) of s->work go, [rlo, rhi) arrive
 * in into, then (reduce) are reduced into s->work */
static void swap(sched_t *s, int pof2, int dst, int slo, int shi, char *into, int rlo, int rhi,
                 bool reduce)
{
    size_t r0 = blk_off(s, pof2, rlo), s0 = blk_off(s, pof2, slo);
    nb_add(s, NB_RECV, dst, NULL, into + r0, blk_off(s, pof2, rhi) - r0);
    nb_add(s, NB_SEND, dst, s->work + s0, NULL, blk_off(s, pof2, shi) - s0);
    if (reduce) {
        int from = coll_block_first(s->red.n, pof2, rlo);
        add_part(s, s->tmp, s->work, from, coll_block_first(s->red.n, pof2, rhi) - from);
    }
    nb_next_round(s);
}

/* those of coll_long.c's Rabenseifner allreduce: blocks [lo, hi) of the
 * pof2 are still reduced here, halved each round, then grown back */
static void iallreduce_long(sched_t *s, int newrank, int pof2, int rem)
{
    int lo = 0, hi = pof2;
    for (int mask = pof2 / 2; mask > 0; mask >>= 1) {
        int newdst = newrank ^ mask, dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
        int mid = (lo + hi) / 2;
        bool upper = newrank & mask; /* keeps [mid, hi), gives [lo, mid) */
        int klo = upper ? mid : lo, khi = upper ? hi : mid;
        swap(s, pof2, dst, upper ? lo : mid, upper ? mid : hi, s->tmp, klo, khi, true);
        lo = klo;
        hi = khi;
    }
    for (int mask = 1; mask < pof2; mask <<= 1) {
        int newdst = newrank ^ mask, dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
        bool upper = newrank & mask; /* the partner holds the mask blocks below */
        int olo = upper ? lo - mask : hi, ohi = upper ? lo : hi + mask;
        swap(s, pof2, dst, lo, hi, s->work, olo, ohi, false);
        lo = upper ? olo : lo;
        hi = upper ? hi : ohi;
    }
}

/* coll.c's allreduce as rounds: recursive doubling or, for long vectors,
 * Rabenseifner's (the same choice), the ranks beyond pof2 folded in */
int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
    coll_t k;
    coll_red_t r;
    int e = nb_begin(&k, comm, "MPI_Iallreduce", request);
    if (e == MPI_SUCCESS)
        e = coll_red_args(&k, comm, k.call, sendbuf, recvbuf, count, datatype, op, COLL_ALL_RANKS,
                          &r);
    if (e != MPI_SUCCESS)
        return e;
    sched_t *s = nb_red_sched(&k, &r, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, &e);
    if (s == NULL)
        return e;
    s->fin = END_STORE;
    s->user = recvbuf;
    int size = k.c->size, rank = k.c->rank, pof2 = 1;
    while (pof2 * 2 <= size)
        pof2 *= 2;
    int rem = size - pof2, newrank = rank - rem;
    if (rank < 2 * rem) { /* fold in the ranks beyond pof2 */
        if (rank % 2 == 0) {
            nb_add(s, NB_SEND, rank + 1, s->work, NULL, r.len);
            newrank = -1;
        } else {
            nb_add(s, NB_RECV, rank - 1, NULL, s->tmp, r.len);
            nb_add(s, NB_REDUCE, 0, s->tmp, s->work, 0); /* work = lower op work */
            newrank = rank / 2;
        }
        nb_next_round(s);
    }
    if (newrank >= 0 && coll_allreduce_is_long(&k, &r))
        iallreduce_long(s, newrank, pof2, rem);
    else if (newrank >= 0)
        iallreduce_rd(s, newrank, pof2, rem);
    if (rank < 2 * rem) {
        if (rank % 2)
            nb_add(s, NB_SEND, rank - 1, s->work, NULL, r.len);
        else
            nb_add(s, NB_RECV, rank + 1, NULL, s->work, r.len);
    }
    return nb_start(s, request);
}

/* the binomial reduce of coll.c's reduce_tree, as rounds */
void nb_reduce_rounds(sched_t *s, int root)
{
    int size = s->k.c->size, rank = s->k.c->rank;
    size_t len = s->red.len;
    int tree_root = mpi_op_commutes(s->red.op) ? root : 0; /* non-commutative: 0 hands it on */
    int rel = (rank - tree_root + size) % size;
    for (int mask = 1; mask < size; mask <<= 1, nb_next_round(s)) {
        if (rel & mask) {
            nb_add(s, NB_SEND, ((rel & ~mask) + tree_root) % size, s->work, NULL, len);
            nb_next_round(s);
            break;
        }
        if ((rel | mask) >= size)
            continue;
        nb_add(s, NB_RECV, ((rel | mask) + tree_root) % size, NULL, s->tmp, len);
        nb_add(s, NB_REDUCE, 0, s->work, s->tmp, 0); /* tmp = work op tmp (lower op higher) */
        nb_add(s, NB_COPY, 0, s->tmp, s->work, len);
    }
    if (tree_root != root && rank == 0)
        nb_add(s, NB_SEND, root, s->work, NULL, len);
    else if (tree_root != root && rank == root)
        nb_add(s, NB_RECV, 0, NULL, s->work, len);
    nb_next_round(s);
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request)
{
    if (mpi_comm_is_inter(comm))
        return coll_inter_ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
    coll_t k;
    coll_red_t r;
    int e = nb_begin(&k, comm, "MPI_Ireduce", request);
    if (e == MPI_SUCCESS)
        e = coll_red_args(&k, comm, k.call, sendbuf, recvbuf, count, datatype, op, root, &r);
    if (e != MPI_SUCCESS)
        return e;
    sched_t *s = nb_red_sched(&k, &r, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, &e);
    if (s == NULL)
        return e;
    if (k.c->rank == root) {
        s->fin = END_STORE;
        s->user = recvbuf;
    }
    nb_reduce_rounds(s, root);
    return nb_start(s, request);
}
