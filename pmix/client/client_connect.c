/*
 * PMIx client: the collectives over this job and another one (tern_connect,
 * tern_disconnect); a connect must not wait for a job whose ranks have ended.
 *
 * The PMIx server library runs PMIx_Connect, PMIx_Disconnect and PMIx_Fence
 * over two namespaces as a local collective: it waits until every local rank
 * of both has entered, and when all of them are local (one node: ternrun) it
 * completes the collective itself, without calling the host (OpenPMIx 4.2,
 * pmix_server_connect).  A rank that ended before entering never enters, and
 * one that never was a PMIx client (/bin/true) is not even seen to leave:
 * the collective waits forever, and nothing the host can do fails it.  So
 * the client asks the launcher about the other job, which it answers from
 * its own record of the ranks (PMIx_Query_info of PMIX_QUERY_PROC_TABLE):
 *
 *  - before PMIx_Connect: a job with a rank that has ended is refused at
 *    once, TERN_ERR_PEER_FAILED naming the job and how its ranks ended;
 *  - while PMIx_Connect is pending (it is started non-blocking): the table
 *    is read again after 10 ms, then at doubling intervals up to 500 ms,
 *    and a rank of the other job that has ended fails the call the same
 *    way.  The abandoned operation stays allocated for the life of the
 *    process: the PMIx library holds its address and may still call back.
 *
 * The answer to such a query comes on the same connection as a completion
 * the server sent before it, and after it: the operation's state is read
 * again once the answer is in, so a connect that completed just before a
 * rank of the other job ended (a crash right after it) is not taken for a
 * failed one.  The fence and the disconnect that follow a connect are not
 * watched: all their ranks are PMIx clients, whose departures the server
 * library accounts for itself (a disconnect from a job whose ranks had
 * exited returned PARTIAL SUCCESS at once).
 *
 * A launcher that gives no table of the job (an error, another layout) leaves
 * the wait as it was: until the collective completes.
 */
#include "pmix/client/client.h"

#include <errno.h>
#include <pmix.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/log.h"

/* ---- the other job's ranks, as the launcher sees them ------------------- */

typedef struct job_ends {
    size_t nranks;
    size_t nended;
    pmix_rank_t first;     /* the first rank that ended (when nended > 0) */
    pmix_proc_state_t how; /* its state (OpenPMIx 4.2 does not carry the exit code) */
} job_ends_t;

/* a state in which the process is gone for good (a migrating one comes back) */
static bool state_ended(pmix_proc_state_t s)
{
    return s > PMIX_PROC_STATE_UNTERMINATED && s != PMIX_PROC_STATE_MIGRATING;
}

static const char *ended_how(pmix_proc_state_t s)
{
    switch (s) {
    case PMIX_PROC_STATE_TERMINATED:
        return "exited";
    case PMIX_PROC_STATE_TERM_NON_ZERO:
        return "exited with a non-zero status";
    case PMIX_PROC_STATE_TERM_WO_SYNC:
        return "exited without finalizing";
    case PMIX_PROC_STATE_ABORTED:
    case PMIX_PROC_STATE_CALLED_ABORT:
        return "aborted";
    case PMIX_PROC_STATE_ABORTED_BY_SIG:
        return "was killed by a signal";
    case PMIX_PROC_STATE_KILLED_BY_CMD:
        return "was killed by the launcher";
    case PMIX_PROC_STATE_FAILED_TO_START:
    case PMIX_PROC_STATE_FAILED_TO_LAUNCH:
        return "failed to start";
    default:
        return PMIx_Proc_state_string(s);
    }
}

/* The process table in a query's answer: PMIx 4.2 servers (ternrun, Open
 * MPI 4.1's mpirun) answer with the keys themselves, later ones may wrap
 * each query's results in a PMIX_QUERY_RESULTS array. */
static const pmix_value_t *find_table(const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_value_t *v = &info[i].value;
        if (PMIX_CHECK_KEY(&info[i], PMIX_QUERY_PROC_TABLE))
            return v;
        if (PMIX_CHECK_KEY(&info[i], PMIX_QUERY_RESULTS) && v->type == PMIX_DATA_ARRAY &&
            v->data.darray != NULL && v->data.darray->type == PMIX_INFO) {
            const pmix_value_t *in = find_table(v->data.darray->array, v->data.darray->size);
            if (in != NULL)
                return in;
        }
    }
    return NULL;
}

/* Ask the launcher for nspace's process table (never from PMIx's cache).
 * TERN_OK with *out filled, or TERN_ERR_UNSUPPORTED when it gives none:
 * not an error of the caller's, so none is recorded. */
static tern_status_t query_ends(const char *nspace, job_ends_t *out)
{
    pmix_query_t *q;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    pmix_status_t rc;
    bool refresh = true;

    PMIX_QUERY_CREATE(q, 1);
    if (q == NULL)
        return TERN_ERR_UNSUPPORTED;
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_PROC_TABLE);
    PMIX_QUERY_QUALIFIERS_CREATE(&q[0], 2);
    if (rc != PMIX_SUCCESS || q[0].qualifiers == NULL) {
        PMIX_QUERY_FREE(q, 1);
        return TERN_ERR_UNSUPPORTED;
    }
    PMIX_INFO_LOAD(&q[0].qualifiers[0], PMIX_NSPACE, nspace, PMIX_STRING);
    PMIX_INFO_LOAD(&q[0].qualifiers[1], PMIX_QUERY_REFRESH_CACHE, &refresh, PMIX_BOOL);
    rc = PMIx_Query_info(q, 1, &info, &ninfo);
    PMIX_QUERY_FREE(q, 1);
    tern_status_t st = TERN_ERR_UNSUPPORTED;
    const pmix_value_t *v = rc == PMIX_SUCCESS ? find_table(info, ninfo) : NULL;
    if (v != NULL && v->type == PMIX_DATA_ARRAY && v->data.darray != NULL &&
        v->data.darray->type == PMIX_PROC_INFO && v->data.darray->size > 0) {
        const pmix_proc_info_t *pi = v->data.darray->array;
        size_t i;
        *out = (job_ends_t){.nranks = v->data.darray->size};
        for (i = 0; i < out->nranks && PMIX_CHECK_NSPACE(pi[i].proc.nspace, nspace); i++) {
            if (state_ended(pi[i].state) && out->nended++ == 0) {
                out->first = pi[i].proc.rank;
                out->how = pi[i].state;
            }
        }
        if (i == out->nranks) /* else not the table asked for: no answer */
            st = TERN_OK;
    }
    if (info != NULL)
        PMIX_INFO_FREE(info, ninfo);
    return st;
}

/* TERN_ERR_PEER_FAILED naming nspace and how its ranks ended */
static tern_status_t job_ended(const char *call, const char *nspace, const job_ends_t *e,
                               bool waited)
{
    char first[160];
    snprintf(first, sizeof(first), "rank %u %s", (unsigned)e->first, ended_how(e->how));
    const char *when = waited ? " while the call waited for it" : "";
    if (e->nended == e->nranks)
        return tern_error(TERN_ERR_PEER_FAILED,
                          "%s with job %s: the job has ended%s (all its %zu rank(s); %s)", call,
                          nspace, when, e->nranks, first);
    return tern_error(TERN_ERR_PEER_FAILED,
                      "%s with job %s: %zu of its %zu ranks have ended%s (%s): a collective "
                      "over both jobs needs every rank",
                      call, nspace, e->nended, e->nranks, when, first);
}

/* ---- one collective in flight ------------------------------------------- */

typedef struct coll_op {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* on CLOCK_MONOTONIC */
    bool done;           /* lock */
    pmix_status_t status;
    struct coll_op *next; /* on the list of abandoned ones */
} coll_op_t;

/* Abandoned operations: never freed (the list keeps them reachable). */
static _Atomic(coll_op_t *) abandoned;

/* PMIx's progress thread */
static void coll_done(pmix_status_t status, void *cbdata)
{
    coll_op_t *op = cbdata;
    pthread_mutex_lock(&op->lock);
    op->status = status;
    op->done = true;
    pthread_cond_signal(&op->cond);
    pthread_mutex_unlock(&op->lock);
}

static coll_op_t *coll_new(void)
{
    coll_op_t *op = calloc(1, sizeof(*op));
    pthread_condattr_t ca;
    if (op == NULL)
        return NULL;
    pthread_mutex_init(&op->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&op->cond, &ca);
    pthread_condattr_destroy(&ca);
    return op;
}

static void coll_free(coll_op_t *op)
{
    pthread_cond_destroy(&op->cond);
    pthread_mutex_destroy(&op->lock);
    free(op);
}

static void coll_abandon(coll_op_t *op)
{
    op->next = atomic_load_explicit(&abandoned, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&abandoned, &op->next, op, memory_order_release,
                                                  memory_order_relaxed)) {
    }
}

/* ts + ms */
static struct timespec ts_after(struct timespec ts, long ms)
{
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Wait for op; watch: read nspace's table while it is pending; progress
 * (when not NULL): the caller's, run again whenever it found work and at
 * least every millisecond.  TERN_OK once op completed (its status in
 * op), else the error, op abandoned. */
static tern_status_t coll_wait(coll_op_t *op, const char *call, const char *nspace, bool watch,
                               unsigned (*progress)(void *), void *arg)
{
    long wait_ms = 10;
    struct timespec now, query_at, until;
    clock_gettime(CLOCK_MONOTONIC, &now);
    query_at = ts_after(now, wait_ms);
    pthread_mutex_lock(&op->lock);
    while (!op->done) {
        if (progress != NULL) {
            pthread_mutex_unlock(&op->lock);
            unsigned work = progress(arg);
            pthread_mutex_lock(&op->lock);
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (op->done)
                break;
            if (work > 0 && (!watch || ts_before(&now, &query_at)))
                continue; /* more may be coming: progress again at once */
        }
        if (!watch && progress == NULL) {
            pthread_cond_wait(&op->cond, &op->lock);
            continue;
        }
        until = progress != NULL ? ts_after(now, 1) : query_at;
        if (watch && ts_before(&query_at, &until))
            until = query_at;
        if (pthread_cond_timedwait(&op->cond, &op->lock, &until) != ETIMEDOUT || op->done)
            continue;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!watch || ts_before(&now, &query_at))
            continue;
        pthread_mutex_unlock(&op->lock);
        job_ends_t e;
        tern_status_t st = query_ends(nspace, &e);
        pthread_mutex_lock(&op->lock);
        if (op->done) /* completed before the answer came: it stands */
            break;
        if (st != TERN_OK) {
            watch = false; /* no table: wait as PMIx would */
        } else if (e.nended > 0) {
            pthread_mutex_unlock(&op->lock);
            coll_abandon(op);
            return job_ended(call, nspace, &e, true);
        }
        wait_ms = wait_ms * 2 < 500 ? wait_ms * 2 : 500;
        clock_gettime(CLOCK_MONOTONIC, &now);
        query_at = ts_after(now, wait_ms);
    }
    pthread_mutex_unlock(&op->lock);
    return TERN_OK;
}

/* ---- tern_connect's collectives ----------------------------------------- */

tern_status_t tern_pmix_connect(tern_pmix_t *p, const char *nspace, tern_pmix_collective_t what,
                                unsigned (*progress)(void *), void *arg)
{
    pmix_proc_t procs[2];
    pmix_status_t rc;
    const char *name = "PMIx_Connect", *call = "tern_connect";
    bool watch = false; /* the connect only: see the top of the file */
    PMIX_LOAD_PROCID(&procs[0], p->nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[1], nspace, PMIX_RANK_WILDCARD);
    if (what == TERN_PMIX_CONNECT) {
        /* a job that has ended: refused before the server holds us */
        job_ends_t e;
        watch = query_ends(nspace, &e) == TERN_OK;
        if (watch && e.nended > 0)
            return job_ended(call, nspace, &e, false);
    }
    coll_op_t *op = coll_new();
    if (op == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "%s with job %s: operation state", call, nspace);
    switch (what) {
    case TERN_PMIX_CONNECT:
        rc = PMIx_Connect_nb(procs, 2, NULL, 0, coll_done, op);
        break;
    case TERN_PMIX_DISCONNECT:
        name = "PMIx_Disconnect";
        rc = PMIx_Disconnect_nb(procs, 2, NULL, 0, coll_done, op);
        break;
    default:
        name = "PMIx_Fence";
        rc = PMIx_Fence_nb(procs, 2, NULL, 0, coll_done, op);
        break;
    }
    if (rc == PMIX_SUCCESS) {
        tern_status_t st = coll_wait(op, call, nspace, watch, progress, arg);
        if (st != TERN_OK)
            return st; /* op abandoned */
        rc = op->status;
    } else if (rc == PMIX_OPERATION_SUCCEEDED) {
        rc = PMIX_SUCCESS;
    }
    coll_free(op);
    if (rc != PMIX_SUCCESS)
        return tern_error(rc == PMIX_ERR_NOT_SUPPORTED ? TERN_ERR_UNSUPPORTED : TERN_ERR_PMIX,
                          "%s of %s with %s: %s", name, p->nspace, nspace, PMIx_Error_string(rc));
    return TERN_OK;
}
