/*
 * Context ids: choosing one that every member of a new communicator has
 * free, and making the communicator with it (docs/mpi.md, "How it maps
 * onto tern").  Two ways to agree:
 *
 * - over the parent (MPI_Comm_dup, _split, _create, _split_type): an
 *   allreduce (bitwise and) of the ranks' free masks over the parent, as
 *   MPICH does; the members of disjoint new communicators (the colors of
 *   a split) share the id.
 * - among the members only (MPI_Comm_create_group, and MPI_Comm_idup,
 *   which must not block): each member sends its mask to every other one
 *   at once and ands what comes back (mpi_xchg_*).
 *
 * A mask is a snapshot of this rank's free ids, so two agreements under
 * way on one rank could choose the same id.  The blocking ones take turns
 * in rounds (below, "the mask"); an MPI_Comm_idup, which must wait for
 * nothing, checks its choice in a second exchange instead (below,
 * "MPI_Comm_idup").
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi/comm_ctx.h"

#define MASK_BYTES (MPI_CONTEXT_IDS / 8)
/* the ids MPI_Comm_idup chooses from: [IDUP_FIRST, MPI_CONTEXT_IDS); the
 * rounds offer only the ids below, so the two never clash (below) */
#define IDUP_IDS MPI_CTX_IDUP_IDS
#define IDUP_FIRST MPI_CTX_ROUND_IDS
static_assert(IDUP_FIRST % 8 == 0, "the idups' ids start at a byte of the mask");
#define XMASK (MASK_BYTES + 1) /* an exchange's: the free ids, then whether offered */
static_assert(sizeof(mpi.ctx_free) == MASK_BYTES, "the free mask's size");

void mpi_ctx_take(int id)
{
    mpi.ctx_free[id / 8] &= (unsigned char)~(1u << (id % 8));
}

void mpi_ctx_release(int id)
{
    mpi.ctx_free[id / 8] |= (unsigned char)(1u << (id % 8));
}

/* the first id free in mask from id from on (wrapping); -1: none */
static int first_free(const unsigned char *mask, int from)
{
    for (int k = 0; k < MPI_CONTEXT_IDS; k++) {
        int i = (from + k) % MPI_CONTEXT_IDS;
        if (mask[i / 8] & (1u << (i % 8)))
            return i;
    }
    return -1;
}

static int lowest_free(const unsigned char *mask)
{
    return first_free(mask, 0);
}

/* Is a peer of another job among ranks: it is reached from worker 0 only
 * (ports and inserted addresses: dynamic.c), so such a communicator's
 * traffic goes through worker 0 on every member (each member sees one). */
static bool foreign(const int *ranks, int size)
{
    int mine = tern_size(mpi.ctx);
    for (int i = 0; i < size; i++)
        if (ranks[i] >= mine)
            return true;
    return false;
}

/* A free slot of the handle table (table lock held); -1: full */
static int free_slot(int from)
{
    int h = from;
    while (h < mpi.ncomms && mpi.comms[h].used)
        h++;
    if (h == MPI_MAX_COMMS)
        return -1;
    if (h == mpi.ncomms) /* read by lookups without the lock (mpi_comm_slot) */
        __atomic_store_n(&mpi.ncomms, mpi.ncomms + 1, __ATOMIC_RELAXED);
    return h;
}

/* slot h as a communicator of ranks (size; this process at me) with
 * context id id, on worker w (table lock held) */
static void fill(int h, int *ranks, int size, int me, int id, tern_worker_t *w,
                 MPI_Errhandler errh)
{
    bool identity = true;
    for (int i = 0; i < size; i++)
        identity = identity && ranks[i] == i;
    free(mpi.comms[h].ranks); /* a freed communicator's, kept until now */
    /* no name: MPI does not pass one on to a new communicator */
    mpi.comms[h] = (mpi_comm_t){.used = true, .size = size, .rank = me, .ranks = ranks,
                                .identity = identity, .context = id,
                                .space = (uint16_t)(MPI_SPACE_BASE + 2 * id), .w = w,
                                .errh = errh};
}

/* The communicator of ranks (size; this process at me) with context id
 * id, taken here; its handle in *out.  false (ranks freed, msg written):
 * the handle table is full. */
static bool install(int *ranks, int size, int me, int id, MPI_Errhandler errh, MPI_Comm *out,
                    char *msg, size_t msglen, const char *call)
{
    mpi_table_lock();
    int h = free_slot(MPI_COMM_SLOT_MADE);
    if (h < 0) {
        mpi_ctx_release(id); /* a round took it (mpi_ctx_settle) */
        mpi_table_unlock();
        free(ranks);
        snprintf(msg, msglen, "%s: %d communicators exist (free some)", call, MPI_MAX_COMMS);
        return false;
    }
    fill(h, ranks, size, me, id, foreign(ranks, size) ? mpi.workers[0] : mpi_worker_for(id),
         errh);
    mpi_ctx_take(id);
    mpi_table_unlock();
    *out = mpi_comm_handle(h);
    return true;
}

int mpi_comm_install(int *ranks, int size, int me, int id, MPI_Errhandler errh, MPI_Comm *out,
                     const char *call)
{
    char msg[128];
    if (!install(ranks, size, me, id, errh, out, msg, sizeof(msg), call))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_OTHER, "%s", msg);
    return MPI_SUCCESS;
}

/* mpi_inter_install's work; false (msg written): the table is full */
static bool inter_install(int *lranks, int lsize, int *rranks, int rsize, int me, int id,
                          MPI_Errhandler errh, bool low, MPI_Comm *out, char *msg, size_t msglen,
                          const char *call)
{
    mpi_table_lock();
    int l = free_slot(MPI_COMM_SLOT_MADE), h = l < 0 ? -1 : free_slot(l + 1);
    if (h < 0) {
        if (l >= 0 && l == mpi.ncomms - 1 && !mpi.comms[l].used)
            __atomic_store_n(&mpi.ncomms, mpi.ncomms - 1, __ATOMIC_RELAXED); /* given back */
        mpi_ctx_release(id); /* a round took it (mpi_ctx_settle) */
        mpi_table_unlock();
        free(lranks);
        free(rranks);
        snprintf(msg, msglen, "%s: %d communicators exist (free some)", call, MPI_MAX_COMMS);
        return false;
    }
    /* both on one worker: the collectives' local steps and their remote
     * messages share the intercommunicator's collective space */
    tern_worker_t *w = foreign(lranks, lsize) || foreign(rranks, rsize) ? mpi.workers[0]
                                                                       : mpi_worker_for(id);
    fill(l, lranks, lsize, me, id, w, MPI_ERRORS_RETURN);
    mpi.comms[l].hidden = true;
    fill(h, rranks, rsize, me, id, w, errh);
    mpi.comms[h].inter = true;
    mpi.comms[h].low = low;
    mpi.comms[h].local = l;
    mpi_ctx_take(id);
    mpi_table_unlock();
    *out = mpi_comm_handle(h);
    return true;
}

int mpi_inter_install(int *lranks, int lsize, int *rranks, int rsize, int me, int id,
                      MPI_Errhandler errh, bool low, MPI_Comm *out, const char *call)
{
    char msg[128];
    if (!inter_install(lranks, lsize, rranks, rsize, me, id, errh, low, out, msg, sizeof(msg),
                       call))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_OTHER, "%s", msg);
    return MPI_SUCCESS;
}

/* ---- the mask ---------------------------------------------------------------- */

/*
 * Two agreements under way here at once could each choose an id the other
 * takes, in a different order on another rank.  So one round at a time
 * holds the right to offer the free ids ("the mask", as MPICH calls it;
 * mask_state is the table lock's):
 *
 * - MPI_Comm_dup, _split, _create and _split_type agree over their parent
 *   in rounds (MPICH's protocol): a round offers the free ids if it gets
 *   the mask, else no id and a byte saying so; the allreduce ands both, so
 *   every rank sees alike whether every rank offered, and a round in which
 *   one did not is run again, after a pause of random length (rounds of
 *   two creations that each got the mask on one rank and not on the other
 *   fall out of step).  MPI_Comm_create_group's rounds are exchanges among
 *   the group's members (mpi_xchg_start with rounds), the
 *   intercommunicators' are ands over both groups (mpi_sides_and: inter.c,
 *   inter_make.c, and the dynamic ones through inter.c).  No round waits for
 *   a lock before its exchange, and every member of a round's creation
 *   takes part in it (or will, once the creation before it there ended),
 *   so every round ends.  The mask goes to the first round that asks for
 *   it: MPICH gives it to the lowest parent context id, which hung here
 *   when a thread's MPI_Comm_create_group waited for a lower id on its
 *   rank while the same thread of a rank outside the group, already in
 *   its next creation on that parent, held the mask there.
 * - an MPI_Comm_idup does not take part: it chooses among ids the rounds
 *   never offer (IDUP_FIRST and up), and checks its choice against the
 *   other idups (below).  Waiting for the rounds could hang it: a round
 *   that holds the mask may wait for a peer that waits for this idup.
 *
 * Without MPI_THREAD_MULTIPLE a round always gets the mask (one creation
 * at a time).
 */
enum { MASK_FREE, MASK_ROUND };
static int mask_state; /* MASK_* */

/* A round's offer on this rank (mask: MASK_BYTES + 1, the free ids then
 * whether offered); true: this rank holds the mask until the settle. */
static bool mpi_ctx_offer(unsigned char *mask)
{
    mpi_table_lock();
    bool own = !mpi.mt || mask_state == MASK_FREE;
    if (own) {
        memcpy(mask, mpi.ctx_free, IDUP_FIRST / 8);
        memset(mask + IDUP_FIRST / 8, 0, MASK_BYTES - IDUP_FIRST / 8); /* the idups' */
        mask_state = MASK_ROUND;
    } else {
        memset(mask, 0, MASK_BYTES);
    }
    mask[MASK_BYTES] = own ? 0xff : 0;
    mpi_table_unlock();
    return own;
}

/* The round's end on this rank: the id chosen (mask: the and of every
 * offer; -1: no id free on some rank) taken when this rank is a member,
 * the mask given back.  false: some rank did not offer, run it again. */
static bool mpi_ctx_settle(bool own, const unsigned char *mask, bool member, int *id)
{
    bool all = mask[MASK_BYTES] != 0;
    mpi_table_lock();
    *id = all ? lowest_free(mask) : -1;
    if (all && *id >= 0 && member)
        mpi_ctx_take(*id); /* before the mask goes: the next offer lacks it */
    if (own)
        mask_state = MASK_FREE;
    mpi_table_unlock();
    return all;
}

void mpi_ctx_give_back(int id)
{
    mpi_table_lock();
    mpi_ctx_release(id);
    mpi_table_unlock();
}

/* 1 to 8, unlike the other ranks' and threads' (xorshift per thread) */
static unsigned pause_length(void)
{
    static __thread uint32_t seed;
    if (seed == 0)
        seed = (uint32_t)(uintptr_t)&seed ^ (uint32_t)tern_rank(mpi.ctx) * 2654435761u ^ 1u;
    seed ^= seed << 13;
    seed ^= seed >> 17;
    seed ^= seed << 5;
    return (seed & 7u) + 1;
}

void mpi_ctx_pause(int round)
{
    if (round == 0)
        return;
    for (unsigned i = pause_length(); i > 0; i--)
        mpi_block_ms(1); /* bounded: every rank may pause at once, nothing in flight */
}

/* ---- the rounds ------------------------------------------------------------ */

/* mpi_ctx_agree's and over a parent intracommunicator: one allreduce */
static int and_over(const void *parent, unsigned char *buf, size_t len)
{
    return MPI_Allreduce(MPI_IN_PLACE, buf, (int)len, MPI_UNSIGNED_CHAR, MPI_BAND,
                         *(const MPI_Comm *)parent);
}

int mpi_ctx_agree(mpi_ctx_and_fn *and_fn, const void *arg, unsigned char *extra, size_t nextra,
                  bool member, int *id)
{
    unsigned char buf[MASK_BYTES + 1 + MPI_CTX_EXTRA_MAX];
    int e;
    *id = -1;
    for (int round = 0;; round++) {
        mpi_ctx_pause(round); /* let the round that holds the mask here end */
        bool own = mpi_ctx_offer(buf);
        if (nextra > 0) /* extra may be NULL then: memcpy must not see it */
            memcpy(buf + MASK_BYTES + 1, extra, nextra);
        e = and_fn(arg, buf, MASK_BYTES + 1 + nextra);
        bool give_up = e != MPI_SUCCESS || (nextra > 0 && buf[MASK_BYTES + 1] == 0);
        if (give_up)
            buf[MASK_BYTES] = 0; /* nothing taken: the mask back */
        if (mpi_ctx_settle(own, buf, member, id) || give_up)
            break;
    }
    if (e == MPI_SUCCESS && nextra > 0)
        memcpy(extra, buf + MASK_BYTES + 1, nextra);
    return e;
}

/* ---- agreement over the parent -------------------------------------------- */

/* The rounds over the parent, with one more byte: whether every rank's
 * arguments were good (0xff) or not (0). */
int mpi_comm_make(MPI_Comm parent, int *ranks, int size, int me, int local_err, MPI_Comm *out,
                  const char *call)
{
    unsigned char ok = local_err == MPI_SUCCESS ? 0xff : 0;
    int id = -1, e = mpi_ctx_agree(and_over, &parent, &ok, 1, ranks != NULL, &id);
    if (e == MPI_SUCCESS && local_err != MPI_SUCCESS)
        e = local_err; /* raised already, by the caller */
    else if (e == MPI_SUCCESS && ok == 0)
        e = mpi_raise(parent, MPI_ERR_OTHER, "%s: another rank's arguments were refused (its "
                      "error says why): no communicator was made", call);
    if (e != MPI_SUCCESS) {
        free(ranks);
        return e;
    }
    if (ranks == NULL) { /* not a member (MPI_UNDEFINED color, not in the group) */
        *out = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if (id < 0) {
        free(ranks);
        return mpi_raise(parent, MPI_ERR_OTHER, "%s: all %d context ids of the blocking "
                         "creations are taken on some rank (free communicators)", call,
                         MPI_CTX_ROUND_IDS);
    }
    char msg[128];
    if (!install(ranks, size, me, id, mpi_comm_get(parent)->errh, out, msg, sizeof(msg), call))
        return mpi_raise(parent, MPI_ERR_OTHER, "%s", msg);
    return MPI_SUCCESS;
}

/* ---- agreement among the members ------------------------------------------ */

/*
 * MPI_Comm_idup: its agreement must wait for nothing (no round, no other
 * idup), so it offers a snapshot of its free ids (of those the rounds never
 * offer: IDUP_FIRST and up) at once and checks its choice in a second
 * exchange.  Once every member's mask came in, each takes the first id
 * free in all of them (the candidate) if it is still free there (another
 * idup may have taken it), and tells every other member whether it did.
 * If every member took it, it is the new communicator's.  If not, those
 * that took it give it back, and the agreement runs again after a pause
 * of random length (1-8 ms; polls meanwhile only read the clock, and a
 * process that would sleep in tern wakes every millisecond:
 * mpi_ctx_pausing).  Two idups under way on a rank at once (two threads',
 * or one thread's started before it waited for the other) whose
 * candidates clash both run again; so that they seldom do, the search for
 * a candidate starts at an id drawn from the parent's context id, the
 * idup's number on it and the attempt (alike on every member), not at the
 * first.  The second exchange needs every member to step its idup again:
 * every wait steps them all (mpi_ctx_step_all, from mpi_block), and a
 * wait polls rather than sleep in tern while one is under way
 * (mpi_polling).  An attempt's messages carry a tag of their own (the
 * idup's number on its parent, the attempt, the exchange), so no
 * attempt's receive takes another's message.
 */
struct mpi_xchg {
    tern_worker_t *w;
    uint16_t space;
    uint64_t tag;
    int n, me;
    int *procs;               /* the new communicator's ranks (tern peer ids) */
    int lsize;                /* an intercommunicator's: procs[0, lsize) its local group,
                               * the rest its remote group; 0: an intracommunicator */
    bool low;                 /* an intercommunicator's side */
    MPI_Errhandler errh;
    MPI_Comm *out;
    const char *call;
    bool idup;                /* an MPI_Comm_idup's (above); else a round of mpi_comm_make's
                               * protocol (MPI_Comm_create_group) */
    bool own;                 /* a round: this rank's offer holds the mask */
    unsigned char mine[MASK_BYTES + 1]; /* the free ids, and whether they were offered */
    unsigned char *theirs;    /* n of them (this rank's entry unused) */
    tern_request_t **reqs;    /* receives 0..n-1, sends n..2n-1; NULL: none, or reaped */
    int left;                 /* requests not reaped yet */
    tern_status_t failed;     /* the first failure (TERN_OK: none) */
    bool done;
    int err;
    char msg[MPI_MAX_ERROR_STRING];
    /* idup: the exchange under way (1: the masks, 2: whether each took
     * the candidate), the attempt, the candidate, whether this rank took
     * it (ok: as sent) and every member's answer; the next attempt's
     * start (CLOCK_MONOTONIC ms; 0: none waiting) */
    int phase;
    unsigned attempt;
    int from; /* where the search for a candidate starts (attempt 0) */
    int cand;
    bool took;
    unsigned char ok;
    unsigned char *oks;
    double retry_at;
    bool pending;             /* in the list of MPI_Comm_idup's under way */
    mpi_xchg_t *next;
};

/* MPI_Comm_idup's under way on this rank; with MPI_THREAD_MULTIPLE the
 * list and every step of an exchange in it are xchg_lock's (the idup's
 * request is polled under the non-blocking collectives' lock, which is
 * taken before this one, never after). */
static mpi_xchg_t *pending_head;
static pthread_mutex_t xchg_lock = PTHREAD_MUTEX_INITIALIZER;

int mpi_idups_active;  /* written under xchg_lock, read anywhere (mpi_internal.h) */
static int pausing; /* idups between attempts (atomic) */

bool mpi_ctx_pausing(void)
{
    return __atomic_load_n(&pausing, __ATOMIC_RELAXED) > 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void fail(mpi_xchg_t *x, tern_status_t st)
{
    if (x->failed != TERN_OK)
        return;
    x->failed = st;
    snprintf(x->msg, sizeof(x->msg), "%s: the context id agreement failed: %s", x->call,
             tern_last_error());
    /* the receives not matched yet may never be: end them (reaped below) */
    mpi_lock(x->w);
    for (int i = 0; i < x->n; i++)
        if (x->reqs[i] != NULL)
            (void)tern_cancel(x->w, x->reqs[i]);
    mpi_unlock(x->w);
}

/* Post the receives of every other member's len bytes (member i's at
 * in + i * len) and the sends of out to each, with the tag of this
 * attempt's exchange (xchg_lock held).  A failure to post fails x; the
 * requests posted are reaped by the polls. */
static void post(mpi_xchg_t *x, const void *out, size_t len, unsigned char *in)
{
    uint64_t tag = x->tag | (uint64_t)(x->phase == 2) << 35 | (uint64_t)(x->attempt & 0xffu) << 36;
    mpi_lock(x->w);
    for (int i = 0; i < x->n && x->failed == TERN_OK; i++) {
        if (i == x->me)
            continue;
        tern_status_t st = tern_trecv(x->w, in + (size_t)i * len, len, x->procs[i], tag, 0,
                                      x->space, NULL, &x->reqs[i]);
        if (st == TERN_INPROGRESS)
            x->left++;
        else
            x->reqs[i] = NULL;
        if (st == TERN_INPROGRESS || st == TERN_OK)
            st = tern_tsend(x->w, out, len, x->procs[i], tag, x->space, NULL, &x->reqs[x->n + i]);
        if (st == TERN_INPROGRESS)
            x->left++;
        else
            x->reqs[x->n + i] = NULL;
        if (st != TERN_OK && st != TERN_INPROGRESS) {
            mpi_unlock(x->w);
            fail(x, st);
            mpi_lock(x->w);
        }
    }
    mpi_unlock(x->w);
}

/* an idup's offer: every free id of the idups' */
static void snapshot(mpi_xchg_t *x)
{
    memset(x->mine, 0, IDUP_FIRST / 8);
    mpi_table_lock();
    memcpy(x->mine + IDUP_FIRST / 8, mpi.ctx_free + IDUP_FIRST / 8, MASK_BYTES - IDUP_FIRST / 8);
    mpi_table_unlock();
    x->mine[MASK_BYTES] = 0xff;
}

static void and_masks(mpi_xchg_t *x)
{
    for (int i = 0; i < x->n; i++)
        if (i != x->me)
            for (int b = 0; b < XMASK; b++)
                x->mine[b] &= x->theirs[(size_t)i * XMASK + b];
}

static void give_back_candidate(mpi_xchg_t *x)
{
    if (x->took)
        mpi_ctx_give_back(x->cand);
    x->took = false;
}

static void finish(mpi_xchg_t *x)
{
    x->done = true;
    *x->out = MPI_COMM_NULL;
    int id = -1;
    bool again = false;
    if (x->idup) {
        if (x->failed != TERN_OK)
            give_back_candidate(x);
        else
            id = x->cand; /* taken on every member */
    } else {
        if (x->failed == TERN_OK)
            and_masks(x);
        else
            x->mine[MASK_BYTES] = 0; /* nothing taken */
        again = !mpi_ctx_settle(x->own, x->mine, true, &id);
    }
    if (x->failed != TERN_OK) {
        x->err = mpi_class_of(x->failed);
        free(x->procs);
    } else if (again) {
        x->err = MPI_XCHG_AGAIN; /* a member did not offer: the caller runs it again */
        free(x->procs);
    } else {
        if (id < 0 && x->idup) {
            free(x->procs);
            snprintf(x->msg, sizeof(x->msg), "%s: all %d context ids kept for MPI_Comm_idup "
                     "(%d-%d) are taken on some member (free communicators)", x->call, IDUP_IDS,
                     IDUP_FIRST, MPI_CONTEXT_IDS - 1);
            x->err = MPI_ERR_OTHER;
        } else if (id < 0) {
            free(x->procs);
            snprintf(x->msg, sizeof(x->msg), "%s: all %d context ids of the blocking creations "
                     "are taken on some member (free communicators)", x->call,
                     MPI_CTX_ROUND_IDS);
            x->err = MPI_ERR_OTHER;
        } else if (x->lsize > 0) {
            int *l = malloc(sizeof(int) * (size_t)x->lsize);
            int *r = malloc(sizeof(int) * (size_t)(x->n - x->lsize));
            if (l == NULL || r == NULL) {
                free(l);
                free(r);
                snprintf(x->msg, sizeof(x->msg), "%s: no memory", x->call);
                x->err = MPI_ERR_NO_MEM;
            } else {
                memcpy(l, x->procs, sizeof(int) * (size_t)x->lsize);
                memcpy(r, x->procs + x->lsize, sizeof(int) * (size_t)(x->n - x->lsize));
                if (!inter_install(l, x->lsize, r, x->n - x->lsize, x->me, id, x->errh, x->low,
                                   x->out, x->msg, sizeof(x->msg), x->call))
                    x->err = MPI_ERR_OTHER;
            }
            free(x->procs);
        } else if (!install(x->procs, x->n, x->me, id, x->errh, x->out, x->msg, sizeof(x->msg),
                            x->call)) {
            x->err = MPI_ERR_OTHER;
        }
        if (x->err == MPI_ERR_NO_MEM)
            mpi_ctx_give_back(id); /* the round or the check took it */
    }
    x->procs = NULL;
    if (x->pending) { /* out of the list */
        mpi_xchg_t **p = &pending_head;
        while (*p != x)
            p = &(*p)->next;
        *p = x->next;
        x->pending = false;
        __atomic_store_n(&mpi_idups_active, mpi_idups_active - 1, __ATOMIC_RELAXED);
    }
}

/* An idup's exchange ended well: after the masks, take the candidate
 * and send whether it was taken; after the answers, true if every
 * member took it, else give it back and wait for the next attempt. */
static bool idup_next(mpi_xchg_t *x)
{
    if (x->phase == 1) {
        and_masks(x);
        x->cand = first_free(x->mine, IDUP_FIRST + (int)(((unsigned)x->from + x->attempt * 131u) %
                                                         IDUP_IDS));
        if (x->cand < 0)
            return true; /* none free on some member: finish says so */
        mpi_table_lock();
        x->took = mpi.ctx_free[x->cand / 8] >> (x->cand % 8) & 1u; /* no other idup's */
        if (x->took)
            mpi_ctx_take(x->cand);
        mpi_table_unlock();
        x->ok = x->took ? 0xff : 0;
        x->phase = 2;
        post(x, &x->ok, 1, x->oks);
        return false;
    }
    bool all = x->ok != 0;
    for (int i = 0; i < x->n; i++)
        all = all && (i == x->me || x->oks[i] != 0);
    if (all)
        return true;
    give_back_candidate(x);
    x->phase = 1;
    x->attempt++;
    x->retry_at = now_ms() + pause_length();
    __atomic_fetch_add(&pausing, 1, __ATOMIC_RELAXED);
    return false;
}

/* one step (xchg_lock held) */
static bool step(mpi_xchg_t *x)
{
    if (x->done)
        return true;
    if (x->retry_at != 0) { /* an idup between attempts */
        if (now_ms() < x->retry_at)
            return false;
        x->retry_at = 0;
        __atomic_fetch_sub(&pausing, 1, __ATOMIC_RELAXED);
        snapshot(x);
        post(x, x->mine, XMASK, x->theirs);
    }
    for (;;) {
        for (int i = 0; i < 2 * x->n && x->left > 0; i++) {
            if (x->reqs[i] == NULL)
                continue;
            mpi_lock(x->w);
            tern_status_t st = tern_test(x->w, x->reqs[i], NULL);
            mpi_unlock(x->w);
            if (st == TERN_INPROGRESS)
                continue;
            x->reqs[i] = NULL;
            x->left--;
            if (st != TERN_OK && st != TERN_ERR_CANCELED)
                fail(x, st);
        }
        if (x->left > 0)
            return false;
        if (!x->idup || x->failed != TERN_OK || idup_next(x))
            break;
        if (x->retry_at != 0)
            return false;
    }
    finish(x);
    return true;
}

bool mpi_xchg_poll(mpi_xchg_t *x, int *err)
{
    mpi_mt_lock(&xchg_lock);
    bool done = step(x);
    mpi_mt_unlock(&xchg_lock);
    if (done)
        *err = x->err;
    return done;
}

const char *mpi_xchg_msg(const mpi_xchg_t *x)
{
    return x->msg;
}

void mpi_xchg_free(mpi_xchg_t *x)
{
    if (x == NULL)
        return;
    free(x->procs);
    free(x->theirs);
    free(x->oks);
    free(x->reqs);
    free(x);
}

/* Step every idup in the list once (xchg_lock held); true when one moved
 * on (ended, or went to its next exchange or attempt). */
static bool step_list(void)
{
    bool moved = false;
    for (mpi_xchg_t *x = pending_head, *next; x != NULL; x = next) {
        next = x->next; /* step unlinks x when done */
        int phase = x->phase;
        unsigned attempt = x->attempt;
        moved = step(x) || x->phase != phase || x->attempt != attempt || moved;
    }
    return moved;
}

bool mpi_ctx_step_all(void)
{
    if (mpi.mt && pthread_mutex_trylock(&xchg_lock) != 0)
        return false; /* another thread steps them */
    bool moved = step_list();
    if (mpi.mt)
        pthread_mutex_unlock(&xchg_lock);
    return moved;
}

void mpi_ctx_drain(void)
{
    for (;;) {
        mpi_mt_lock(&xchg_lock);
        (void)step_list(); /* each one: the peers may end theirs in another order */
        bool none = pending_head == NULL;
        mpi_mt_unlock(&xchg_lock);
        if (none)
            return;
        mpi_block();
    }
}

int mpi_xchg_start(MPI_Comm parent, int *procs, int n, int me, int lsize, uint64_t tag,
                   bool idup, MPI_Comm *out, const char *call, mpi_xchg_t **xp)
{
    mpi_comm_t *c = mpi_comm_get(parent);
    mpi_xchg_t *x = malloc(sizeof(*x));
    unsigned char *theirs = malloc((size_t)n * XMASK), *oks = idup ? malloc((size_t)n) : NULL;
    tern_request_t **reqs = calloc(2 * (size_t)n, sizeof(*reqs));
    if (x == NULL || theirs == NULL || reqs == NULL || (idup && oks == NULL)) {
        free(procs);
        free(x);
        free(theirs);
        free(oks);
        free(reqs);
        return mpi_raise(parent, MPI_ERR_NO_MEM, "%s: no memory for the context id agreement",
                         call);
    }
    *x = (mpi_xchg_t){.w = c->w, .space = (uint16_t)(c->space + 1), .tag = tag, .n = n,
                      .me = me, .procs = procs, .lsize = lsize, .low = c->low, .errh = c->errh,
                      .out = out, .call = call, .idup = idup, .theirs = theirs, .oks = oks,
                      .reqs = reqs, .failed = TERN_OK, .phase = 1,
                      .from = (int)(((unsigned)c->context * 389u + (unsigned)(tag >> 44) * 97u) %
                                    IDUP_IDS)};
    if (idup)
        snapshot(x);
    else
        x->own = mpi_ctx_offer(x->mine);
    mpi_mt_lock(&xchg_lock);
    post(x, x->mine, XMASK, x->theirs);
    if (idup) {
        x->pending = true;
        x->next = pending_head;
        pending_head = x;
        __atomic_store_n(&mpi_idups_active, mpi_idups_active + 1, __ATOMIC_RELAXED);
    }
    mpi_mt_unlock(&xchg_lock);
    *xp = x;
    return MPI_SUCCESS;
}
