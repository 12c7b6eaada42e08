/* PMIx client: init, job keys, business-card exchange, name service, and
 * the peer deaths the launcher reports. */
#include "pmix/client/client.h"

#include <pmix.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/log.h"

static pmix_proc_t self_proc;

/* ---- peer deaths reported by the launcher --------------------------------
 *
 * death_handler runs on PMIx's progress thread (the producer) and must not
 * touch engine state or wait for the engine; tern_pmix_take_dead runs on the
 * engine's progress paths (the takers, one per worker, each on its thread).
 * No lock; the shared arrays are allocated before the handler is
 * registered, a taker's own on its first call:
 *
 *   producer: record_death(r, code)          taker t: tern_pmix_take_dead
 *     code[r] = code              (relaxed)    n = ndead              (A0)
 *     old = fetch_or(dead[r/64])  (R1)         n == t.ntaken: no news
 *     bit new in old: fetch_add(ndead) (R0)    bits = dead[w]         (A1)
 *                                              code[r] of a new bit   (relaxed)
 *
 * R0/A0 (release RMW / acquire load): a count a taker reads covers every bit
 * set before the increments it includes (every write of ndead is an RMW, so
 * the increments form one release sequence: A0 synchronises with each one up
 * to the value it reads).  R1/A1 (release RMW / acquire load): a bit a taker
 * sees comes with the code stored before it.  A rank's code is
 * written once, before its bit is first set (the first report wins: PMIx
 * runs handlers on its one progress thread), and read only once the bit is
 * seen.  Bits are only ever set; a taker's taken[] (plain memory, written
 * and read by its thread only) says what it was already given and ntaken
 * counts it.  A taker may see a bit before the increment that covers it: it
 * is given the rank once (taken[]), and a later call finds ntaken caught up.
 */
struct tern_pmix_taker {
    uint64_t *taken; /* bit r: rank r already given (NULL until the first call) */
    uint32_t ntaken;
    bool broken;     /* no memory for taken[]: warned, gives nothing */
};

struct tern_pmix_deaths {
    pmix_nspace_t nspace; /* constant once the handler is registered */
    pmix_rank_t size;
    pmix_rank_t self;
    _Atomic uint32_t ndead; /* ranks with their bit set (R0/A0) */
    _Atomic uint64_t *dead; /* bit r: rank r reported dead (R1/A1) */
    _Atomic int *code;      /* per rank: the PMIx status of its first report */
    size_t handler;         /* PMIx's reference of the registration */
    struct tern_pmix_taker takers[TERN_PMIX_MAX_TAKERS];
};

/* What the handler listens to: a process of the job is gone.  The deprecated
 * PMIX_ERR_PROC_ABORTED is the name servers before PMIx 4 used. */
static pmix_status_t death_codes[] = {
    PMIX_EVENT_PROC_TERMINATED,          PMIX_ERR_PROC_TERM_WO_SYNC,  PMIX_ERR_EXIT_NONZERO_TERM,
    PMIX_ERR_PROC_ABORTED_BY_SIG,        PMIX_ERR_PROC_KILLED_BY_CMD, PMIX_ERR_PROC_REQUESTED_ABORT,
    PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED, PMIX_ERR_PROC_ABORTED,
};

static const char *death_how(int code)
{
    switch (code) {
    case PMIX_EVENT_PROC_TERMINATED:
        return "exited";
    case PMIX_ERR_PROC_TERM_WO_SYNC:
        return "exited without finalizing";
    case PMIX_ERR_EXIT_NONZERO_TERM:
        return "exited with a non-zero status";
    case PMIX_ERR_PROC_ABORTED_BY_SIG:
        return "was killed by a signal";
    case PMIX_ERR_PROC_KILLED_BY_CMD:
        return "was killed by the launcher";
    case PMIX_ERR_PROC_REQUESTED_ABORT:
        return "aborted the job";
    case PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED:
        return "was killed by a resource monitor";
    default:
        return "terminated";
    }
}

/* Producer side (PMIx's progress thread). */
static void record_death(struct tern_pmix_deaths *d, const pmix_proc_t *who, pmix_status_t code)
{
    if (!PMIX_CHECK_NSPACE(who->nspace, d->nspace) || who->rank >= d->size || who->rank == d->self)
        return; /* another job's process, a wildcard, or a report about us */
    size_t w = who->rank / 64;
    uint64_t bit = 1ull << (who->rank % 64);
    if (atomic_load_explicit(&d->dead[w], memory_order_relaxed) & bit)
        return; /* already reported: the first report wins */
    atomic_store_explicit(&d->code[who->rank], code, memory_order_relaxed);
    /* R1: the code is published with the bit (A1 in tern_pmix_take_dead). */
    uint64_t old = atomic_fetch_or_explicit(&d->dead[w], bit, memory_order_release);
    if (!(old & bit))
        /* R0: the bit is published with the count (A0). */
        atomic_fetch_add_explicit(&d->ndead, 1, memory_order_release);
}

/* PMIx event handler: note the affected processes, then let the chain go
 * on (other handlers of the application may want the event too). */
static void death_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                          pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                          pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)source, (void)results, (void)nresults;
    struct tern_pmix_deaths *d = NULL;
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT) &&
            info[i].value.type == PMIX_POINTER)
            d = info[i].value.data.ptr;
    for (size_t i = 0; d != NULL && i < ninfo; i++) {
        const pmix_value_t *v = &info[i].value;
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && v->type == PMIX_PROC &&
            v->data.proc != NULL) {
            record_death(d, v->data.proc, status);
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROCS) &&
                   v->type == PMIX_DATA_ARRAY && v->data.darray != NULL &&
                   v->data.darray->type == PMIX_PROC) {
            const pmix_proc_t *procs = v->data.darray->array;
            for (size_t k = 0; k < v->data.darray->size; k++)
                record_death(d, &procs[k], status);
        }
    }
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void deaths_free(struct tern_pmix_deaths *d)
{
    if (d != NULL) {
        free(d->dead);
        free(d->code);
        for (int t = 0; t < TERN_PMIX_MAX_TAKERS; t++)
            free(d->takers[t].taken);
        free(d);
    }
}

/* The deaths of nspace's size ranks (self: this process's rank there, or
 * PMIX_RANK_INVALID), or NULL.  Without the handler a peer's death is
 * still seen where its netmod can see it (shm's pidfd, a connection's
 * end): warn, do not fail. */
static struct tern_pmix_deaths *watch_deaths(const char *nspace, uint32_t size, pmix_rank_t self)
{
    size_t words = ((size_t)size + 63) / 64;
    struct tern_pmix_deaths *d = calloc(1, sizeof(*d));
    if (d == NULL || (d->dead = calloc(words, sizeof(*d->dead))) == NULL ||
        (d->code = calloc(size, sizeof(*d->code))) == NULL) {
        deaths_free(d);
        tern_warn("no memory to track the deaths of %u ranks of %s: only the netmods will "
                  "notice a dead peer", size, nspace);
        return NULL;
    }
    PMIX_LOAD_NSPACE(d->nspace, nspace);
    d->size = size;
    d->self = self;
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_RETURN_OBJECT, d, PMIX_POINTER);
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_HDLR_NAME, "tern-peer-death", PMIX_STRING);
    /* blocking (no callback): returns the reference, or an error */
    pmix_status_t rc =
        PMIx_Register_event_handler(death_codes, sizeof(death_codes) / sizeof(death_codes[0]), info,
                                    2, death_handler, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc < 0) {
        deaths_free(d);
        tern_warn("PMIx refused the process-termination event handler (%s): only the netmods "
                  "will notice a dead peer of %s",
                  PMIx_Error_string(rc), nspace);
        return NULL;
    }
    d->handler = (size_t)rc;
    return d;
}

static void register_death_handler(tern_pmix_t *p)
{
    p->deaths = watch_deaths(self_proc.nspace, p->size, p->rank);
}

struct tern_pmix_deaths *tern_pmix_watch(tern_pmix_t *p, const char *nspace, int size)
{
    (void)p;
    return watch_deaths(nspace, (uint32_t)size, PMIX_RANK_INVALID);
}

void tern_pmix_unwatch(struct tern_pmix_deaths *d)
{
    if (d == NULL)
        return;
    /* blocking: the handler is not running when it returns */
    PMIx_Deregister_event_handler(d->handler, NULL, NULL);
    deaths_free(d);
}

int tern_pmix_take_dead(tern_pmix_t *p, int taker, tern_pmix_death_t *out, int max)
{
    return tern_pmix_take_dead_of(p->deaths, taker, out, max);
}

int tern_pmix_take_dead_of(struct tern_pmix_deaths *d, int taker, tern_pmix_death_t *out,
                           int max)
{
    if (d == NULL || max <= 0 || taker < 0 || taker >= TERN_PMIX_MAX_TAKERS)
        return 0;
    struct tern_pmix_taker *t = &d->takers[taker];
    /* A0: pairs with R0 in record_death. */
    if (atomic_load_explicit(&d->ndead, memory_order_acquire) == t->ntaken || t->broken)
        return 0;
    size_t words = ((size_t)d->size + 63) / 64;
    if (t->taken == NULL && (t->taken = calloc(words, sizeof(*t->taken))) == NULL) {
        t->broken = true;
        tern_warn("no memory to track the peer deaths the launcher reports: only the netmods "
                  "will notice a dead peer");
        return 0;
    }
    int n = 0;
    for (size_t w = 0; w < words && n < max; w++) {
        /* A1: pairs with R1 in record_death. */
        uint64_t fresh = atomic_load_explicit(&d->dead[w], memory_order_acquire) & ~t->taken[w];
        while (fresh != 0 && n < max) {
            int b = __builtin_ctzll(fresh);
            int r = (int)(w * 64) + b;
            fresh &= fresh - 1;
            t->taken[w] |= 1ull << b;
            t->ntaken++;
            out[n].rank = r;
            out[n].how = death_how(atomic_load_explicit(&d->code[r], memory_order_relaxed));
            n++;
        }
    }
    return n;
}

static tern_status_t get_u32(const pmix_proc_t *who, const char *key, uint32_t *out)
{
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(who, key, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val == NULL)
        return tern_error(TERN_ERR_PMIX, "PMIx_Get(%s) for %s.%u failed: %s", key, who->nspace,
                          who->rank, PMIx_Error_string(rc));
    tern_status_t st = TERN_OK;
    switch (val->type) {
    case PMIX_UINT32: *out = val->data.uint32; break;
    case PMIX_UINT16: *out = val->data.uint16; break;
    case PMIX_INT: *out = (uint32_t)val->data.integer; break;
    case PMIX_PROC_RANK: *out = val->data.rank; break;
    default:
        st = tern_error(TERN_ERR_PMIX, "PMIx key %s has unexpected type %s", key,
                        PMIx_Data_type_string(val->type));
    }
    PMIX_VALUE_RELEASE(val);
    return st;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static tern_status_t read_local_peers(tern_pmix_t *p)
{
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&wild, self_proc.nspace, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val == NULL || val->type != PMIX_STRING)
        return tern_error(TERN_ERR_PMIX, "PMIx_Get(PMIX_LOCAL_PEERS) failed: %s",
                          PMIx_Error_string(rc));
    p->local_peers = calloc(p->local_size ? p->local_size : 1, sizeof(int));
    if (p->local_peers == NULL) {
        PMIX_VALUE_RELEASE(val);
        return tern_error(TERN_ERR_NO_MEMORY, "local peer list of %u ranks", p->local_size);
    }
    uint32_t n = 0;
    const char *s = val->data.string;
    while (*s && n < p->local_size) {
        char *end;
        long r = strtol(s, &end, 10);
        if (end == s || r < 0 || (uint32_t)r >= p->size)
            break;
        p->local_peers[n++] = (int)r;
        s = (*end == ',') ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            break;
    }
    tern_status_t st = TERN_OK;
    if (n != p->local_size)
        st = tern_error(TERN_ERR_PMIX, "PMIX_LOCAL_PEERS \"%s\" does not list %u ranks < %u",
                        val->data.string, p->local_size, p->size);
    PMIX_VALUE_RELEASE(val);
    qsort(p->local_peers, n, sizeof(int), cmp_int);
    return st;
}

/* Did a launcher start us (its PMIx server's variables are set)? */
static bool launched(void)
{
    extern char **environ;
    if (getenv("PMIX_NAMESPACE") != NULL)
        return true;
    for (char **e = environ; *e != NULL; e++)
        if (strncmp(*e, "PMIX_SERVER_URI", 15) == 0)
            return true;
    return false;
}

static tern_status_t singleton_init(tern_pmix_t *p)
{
    char host[64] = "localhost";
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    p->singleton = true;
    snprintf(p->nspace, sizeof(p->nspace), "singleton-%s-%ld", host, (long)getpid());
    p->rank = 0;
    p->size = p->local_size = 1;
    p->local_rank = 0;
    p->local_peers = calloc(1, sizeof(int));
    if (p->local_peers == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "local peer list");
    PMIX_LOAD_PROCID(&self_proc, p->nspace, 0);
    return TERN_OK;
}

/* A singleton is also what a context wired by addresses has (engine/
 * wireup_addr.c): the message names both. */
static tern_status_t singleton_refuses(const char *what)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "%s: there is no launcher (no PMIx server): this "
                      "process was started without a launcher (a job of one rank: start it "
                      "with ternrun, srun --mpi=pmix or mpirun) or wired by addresses "
                      "(TERN_WIREUP_ADDRESS)", what);
}

/* A launcher whose PMIx server lacks an operation answers NOT-SUPPORTED
 * (Slurm's srun --mpi=pmix has neither a name service nor spawn): that is
 * the launcher's limit, not a PMIx failure, and its log says nothing about
 * it, so the message names the call, the job (whose name shows the
 * launcher: slurm.pmix.JOB.STEP) and the answer. */
static tern_status_t launcher_refuses(const tern_pmix_t *p, const char *what, const char *call)
{
    return tern_error(TERN_ERR_UNSUPPORTED,
                      "%s: the launcher's PMIx server (job %s) does not "
                      "support %s: it answered NOT-SUPPORTED",
                      what, p->nspace, call);
}

tern_status_t tern_pmix_init(tern_pmix_t *p, bool standalone)
{
    memset(p, 0, sizeof(*p));
    if (standalone || !launched())
        return singleton_init(p);
    pmix_status_t rc = PMIx_Init(&self_proc, NULL, 0);
    if (rc != PMIX_SUCCESS)
        return tern_error(TERN_ERR_PMIX,
                          "PMIx_Init failed (%s): the launcher's PMIx server cannot be reached "
                          "(PMIX_NAMESPACE / PMIX_SERVER_URI* are set)", PMIx_Error_string(rc));
    p->initialized = true;
    snprintf(p->nspace, sizeof(p->nspace), "%s", self_proc.nspace);
    p->rank = self_proc.rank;

    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, self_proc.nspace, PMIX_RANK_WILDCARD);
    tern_status_t st;
    if ((st = get_u32(&wild, PMIX_JOB_SIZE, &p->size)) != TERN_OK ||
        (st = get_u32(&wild, PMIX_LOCAL_SIZE, &p->local_size)) != TERN_OK ||
        (st = get_u32(&self_proc, PMIX_LOCAL_RANK, &p->local_rank)) != TERN_OK)
        goto err;
    if (p->local_size == 0 || p->local_size > p->size || p->rank >= p->size) {
        st = tern_error(TERN_ERR_PMIX, "inconsistent PMIx job data: rank %u size %u local size %u",
                        p->rank, p->size, p->local_size);
        goto err;
    }
    if ((st = read_local_peers(p)) != TERN_OK)
        goto err;
    if (tern_pmix_local_index(p, (int)p->rank) != (int)p->local_rank) {
        st = tern_error(TERN_ERR_PMIX, "PMIX_LOCAL_RANK %u disagrees with PMIX_LOCAL_PEERS",
                        p->local_rank);
        goto err;
    }
    /* Deaths before this point are not lost: a PMIx server caches the
     * events and delivers them to handlers registered later. */
    register_death_handler(p);
    return TERN_OK;
err:
    tern_pmix_finalize(p);
    return st;
}

tern_status_t tern_pmix_finalize(tern_pmix_t *p)
{
    tern_status_t st = TERN_OK;
    if (p->deaths != NULL) /* blocking: the handler is not running when it returns */
        PMIx_Deregister_event_handler(p->deaths->handler, NULL, NULL);
    if (p->initialized) {
        pmix_status_t rc = PMIx_Finalize(NULL, 0);
        if (rc != PMIX_SUCCESS)
            st = tern_error(TERN_ERR_PMIX, "PMIx_Finalize: %s", PMIx_Error_string(rc));
        p->initialized = false;
    }
    free(p->local_peers);
    p->local_peers = NULL;
    deaths_free(p->deaths);
    p->deaths = NULL;
    return st;
}

int tern_pmix_local_index(const tern_pmix_t *p, int rank)
{
    int lo = 0, hi = (int)p->local_size - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (p->local_peers[mid] == rank)
            return mid;
        if (p->local_peers[mid] < rank)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

tern_status_t tern_pmix_put(tern_pmix_t *p, const char *key, const void *data, size_t len)
{
    if (p->singleton)
        return TERN_OK; /* nobody to read it */
    pmix_value_t val;
    PMIX_VALUE_CONSTRUCT(&val);
    val.type = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = (char *)data;
    val.data.bo.size = len;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &val);
    if (rc != PMIX_SUCCESS)
        return tern_error(TERN_ERR_PMIX, "PMIx_Put(%s, %zu bytes): %s", key, len,
                          PMIx_Error_string(rc));
    return TERN_OK;
}

tern_status_t tern_pmix_fence(tern_pmix_t *p, bool commit_and_collect)
{
    if (p->singleton)
        return TERN_OK;
    pmix_status_t rc;
    if (commit_and_collect) {
        rc = PMIx_Commit();
        if (rc != PMIX_SUCCESS)
            return tern_error(TERN_ERR_PMIX, "PMIx_Commit: %s", PMIx_Error_string(rc));
    }
    pmix_info_t info;
    bool collect = commit_and_collect;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
        return tern_error(TERN_ERR_PMIX, "PMIx_Fence (rank %u): %s", p->rank,
                          PMIx_Error_string(rc));
    return TERN_OK;
}

/* A fence's waiter may leave before PMIx calls back (a timed fence given
 * up), so the state is on the heap and whoever comes second frees it: the
 * exchange in fence_done and the compare-exchange in fence_wait are
 * acq_rel, so status (written before the callback's exchange) is seen by a
 * waiter that finds FENCE_DONE. */
enum { FENCE_PENDING, FENCE_DONE, FENCE_ABANDONED };
typedef struct fence_state {
    _Atomic int state;
    pmix_status_t status;
} fence_state_t;

/* PMIx's progress thread */
static void fence_done(pmix_status_t status, void *cbdata)
{
    fence_state_t *fs = cbdata;
    fs->status = status;
    if (atomic_exchange_explicit(&fs->state, FENCE_DONE, memory_order_acq_rel) ==
        FENCE_ABANDONED)
        free(fs);
}

static uint64_t mono_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

/* A fence (no data of ours, though collected: below); while it is pending,
 * progress(arg) is called over
 * and over (progress NULL: sleep 50 us at a time).  timeout_ms 0: no limit;
 * else given up with TERN_ERR_TIMED_OUT. */
static tern_status_t fence_wait(tern_pmix_t *p, unsigned (*progress)(void *), void *arg,
                                unsigned timeout_ms, bool survivors)
{
    fence_state_t *fs = malloc(sizeof(*fs));
    if (fs == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "PMIx fence state");
    atomic_init(&fs->state, FENCE_PENDING);
    fs->status = PMIX_SUCCESS;
    /* PMIX_COLLECT_DATA true although nothing new is posted: Slurm's
     * pmix plugin (srun --mpi=pmix, Debian's 22.05) completes a fence
     * without data collection on each node alone, so ranks on one node
     * left it while a rank on the other had not entered it (measured with
     * two namespace nodes: 4 ms against a 200 ms late rank; with
     * collection every rank waits).  ternrun and PRRTE synchronise either
     * way; the data gathered is the few addresses the job posted. */
    pmix_info_t info;
    bool collect = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence_nb(NULL, 0, &info, 1, fence_done, fs);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        free(fs);
        if (rc == PMIX_OPERATION_SUCCEEDED)
            return TERN_OK;
        return tern_error(TERN_ERR_PMIX, "PMIx_Fence_nb (rank %u): %s", p->rank,
                          PMIx_Error_string(rc));
    }
    uint64_t deadline = timeout_ms ? mono_ns() + (uint64_t)timeout_ms * 1000000ull : 0;
    /* A: pairs with the exchange in fence_done */
    while (atomic_load_explicit(&fs->state, memory_order_acquire) == FENCE_PENDING) {
        int expect = FENCE_PENDING;
        if (deadline != 0 && mono_ns() > deadline &&
            atomic_compare_exchange_strong_explicit(&fs->state, &expect, FENCE_ABANDONED,
                                                    memory_order_acq_rel,
                                                    memory_order_acquire))
            return tern_error(TERN_ERR_TIMED_OUT, "PMIx_Fence (rank %u): no answer in %u ms",
                              p->rank, timeout_ms);
        if (progress == NULL) {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        } else if (progress(arg) == 0) {
            sched_yield();
        }
    }
    pmix_status_t st = fs->status;
    free(fs);
    /* PARTIAL_SUCCESS: a participant died while the fence waited for it,
     * and the others completed it.  Had the server seen the death before
     * the fence began, the fence would have succeeded among the living:
     * for a barrier of the survivors (tern_barrier) the two are the same
     * outcome, whichever came first (the death itself fails the VCs). */
    if (survivors && st == PMIX_ERR_PARTIAL_SUCCESS)
        st = PMIX_SUCCESS;
    if (st != PMIX_SUCCESS)
        return tern_error(TERN_ERR_PMIX, "PMIx_Fence (rank %u): %s", p->rank,
                          PMIx_Error_string(st));
    return TERN_OK;
}

tern_status_t tern_pmix_fence_progress(tern_pmix_t *p, unsigned (*progress)(void *), void *arg)
{
    if (p->singleton)
        return TERN_OK;
    return fence_wait(p, progress, arg, 0, false);
}

tern_status_t tern_pmix_barrier_survivors(tern_pmix_t *p, unsigned (*progress)(void *), void *arg)
{
    if (p->singleton)
        return TERN_OK;
    return fence_wait(p, progress, arg, 0, true);
}

tern_status_t tern_pmix_fence_timed(tern_pmix_t *p, unsigned timeout_ms)
{
    if (p->singleton)
        return TERN_OK;
    return fence_wait(p, NULL, NULL, timeout_ms ? timeout_ms : 1, false);
}

tern_status_t tern_pmix_get(tern_pmix_t *p, int rank, const char *key, void **data, size_t *len)
{
    return tern_pmix_get_of(p, p->nspace, rank, key, data, len);
}

tern_status_t tern_pmix_get_of(tern_pmix_t *p, const char *nspace, int rank, const char *key,
                               void **data, size_t *len)
{
    pmix_proc_t who;
    pmix_value_t *val = NULL;
    if (p->singleton)
        return tern_error(TERN_ERR_NOT_FOUND, "PMIx_Get(%s) of rank %d of %s: a singleton has "
                          "no peers", key, rank, nspace);
    PMIX_LOAD_PROCID(&who, nspace, (pmix_rank_t)rank);
    pmix_status_t rc = PMIx_Get(&who, key, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val == NULL)
        return tern_error(TERN_ERR_PMIX, "PMIx_Get(%s) of rank %d: %s", key, rank,
                          PMIx_Error_string(rc));
    tern_status_t st = TERN_OK;
    if (val->type != PMIX_BYTE_OBJECT) {
        st = tern_error(TERN_ERR_PMIX, "PMIx key %s of rank %d is not a byte object", key, rank);
    } else if ((*data = malloc(val->data.bo.size ? val->data.bo.size : 1)) == NULL) {
        st = tern_error(TERN_ERR_NO_MEMORY, "copy of PMIx key %s", key);
    } else {
        memcpy(*data, val->data.bo.bytes, val->data.bo.size);
        *len = val->data.bo.size;
    }
    PMIX_VALUE_RELEASE(val);
    return st;
}

tern_status_t tern_pmix_publish(tern_pmix_t *p, const char *key, const char *value)
{
    if (p->singleton)
        return singleton_refuses("tern_publish");
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, key, value, PMIX_STRING);
    pmix_status_t rc = PMIx_Publish(&info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc == PMIX_ERR_NOT_SUPPORTED)
        return launcher_refuses(p, "tern_publish", "PMIx_Publish (the name service)");
    if (rc != PMIX_SUCCESS)
        return tern_error(TERN_ERR_PMIX, "PMIx_Publish(%s): %s", key, PMIx_Error_string(rc));
    return TERN_OK;
}

tern_status_t tern_pmix_lookup(tern_pmix_t *p, const char *key, char **value)
{
    if (p->singleton)
        return singleton_refuses("tern_lookup");
    pmix_pdata_t pd;
    PMIX_PDATA_CONSTRUCT(&pd);
    snprintf(pd.key, sizeof(pd.key), "%s", key);
    pmix_status_t rc = PMIx_Lookup(&pd, 1, NULL, 0);
    tern_status_t st = TERN_OK;
    if (rc == PMIX_ERR_NOT_FOUND || (rc == PMIX_SUCCESS && pd.value.type == PMIX_UNDEF)) {
        st = tern_error(TERN_ERR_NOT_FOUND, "PMIx_Lookup(%s): nobody published it", key);
    } else if (rc == PMIX_ERR_NOT_SUPPORTED) {
        st = launcher_refuses(p, "tern_lookup", "PMIx_Lookup (the name service)");
    } else if (rc != PMIX_SUCCESS) {
        st = tern_error(TERN_ERR_PMIX, "PMIx_Lookup(%s): %s", key, PMIx_Error_string(rc));
    } else if (pd.value.type != PMIX_STRING) {
        st = tern_error(TERN_ERR_PMIX, "PMIx_Lookup(%s): value is not a string", key);
    } else if ((*value = strdup(pd.value.data.string)) == NULL) {
        st = tern_error(TERN_ERR_NO_MEMORY, "copy of looked-up value");
    }
    PMIX_PDATA_DESTRUCT(&pd);
    return st;
}

tern_status_t tern_pmix_unpublish(tern_pmix_t *p, const char *key)
{
    if (p->singleton)
        return singleton_refuses("tern_unpublish");
    char *keys[2] = {(char *)key, NULL};
    pmix_status_t rc = PMIx_Unpublish(keys, NULL, 0);
    if (rc == PMIX_ERR_NOT_FOUND)
        return tern_error(TERN_ERR_NOT_FOUND, "PMIx_Unpublish(%s): not published", key);
    if (rc == PMIX_ERR_NOT_SUPPORTED)
        return launcher_refuses(p, "tern_unpublish", "PMIx_Unpublish (the name service)");
    if (rc != PMIX_SUCCESS)
        return tern_error(TERN_ERR_PMIX, "PMIx_Unpublish(%s): %s", key, PMIx_Error_string(rc));
    return TERN_OK;
}

void tern_pmix_abort(tern_pmix_t *p, int status, const char *msg)
{
    if (p->singleton) { /* the job is this process */
        fprintf(stderr, "tern: abort (status %d): %s\n", status, msg ? msg : "");
        _exit(status & 0xff ? status & 0xff : 1);
    }
    PMIx_Abort(status, msg, NULL, 0);
}

/* PMIx's spawn errors, as tern statuses */
static tern_status_t spawn_status(pmix_status_t rc)
{
    switch (rc) {
    case PMIX_ERR_JOB_EXE_NOT_FOUND:
    case PMIX_ERR_JOB_WDIR_NOT_FOUND:
    case PMIX_ERR_NOT_FOUND:
        return TERN_ERR_NOT_FOUND;
    case PMIX_ERR_NOT_SUPPORTED:
        return TERN_ERR_UNSUPPORTED;
    case PMIX_ERR_JOB_INSUFFICIENT_RESOURCES:
    case PMIX_ERR_OUT_OF_RESOURCE:
        return TERN_ERR_NO_RESOURCE;
    case PMIX_ERR_NOMEM:
        return TERN_ERR_NO_MEMORY;
    case PMIX_ERR_BAD_PARAM:
        return TERN_ERR_INVALID_PARAM;
    default:
        return TERN_ERR_PMIX;
    }
}

/* one app of a spawn, copied into a PMIx app; false: no memory */
static bool app_load(pmix_app_t *app, const tern_app_t *a)
{
    size_t nargs = 0, nenv = 0;
    while (a->argv[nargs] != NULL)
        nargs++;
    while (a->env != NULL && a->env[nenv] != NULL)
        nenv++;
    app->maxprocs = a->n;
    app->cmd = strdup(a->argv[0]);
    app->argv = calloc(nargs + 1, sizeof(char *));
    app->env = calloc(nenv + 1, sizeof(char *));
    /* the working directory as the app's own PMIX_WDIR (the server checks it) */
    if (a->wdir != NULL) {
        PMIX_INFO_CREATE(app->info, 1);
        if (app->info != NULL) {
            PMIX_INFO_LOAD(&app->info[0], PMIX_WDIR, a->wdir, PMIX_STRING);
            app->ninfo = 1;
        }
    }
    bool oom = app->cmd == NULL || app->argv == NULL || app->env == NULL ||
               (a->wdir != NULL && app->info == NULL);
    for (size_t i = 0; !oom && i < nargs; i++)
        oom = (app->argv[i] = strdup(a->argv[i])) == NULL;
    for (size_t i = 0; !oom && i < nenv; i++)
        oom = (app->env[i] = strdup(a->env[i])) == NULL;
    return !oom;
}

tern_status_t tern_pmix_spawn(tern_pmix_t *p, const tern_app_t apps[], int napps, char *job,
                              size_t len)
{
    pmix_nspace_t ns = {0};
    tern_status_t st = TERN_OK;

    if (p->singleton)
        return singleton_refuses("tern_spawn");
    pmix_app_t *app = calloc((size_t)napps, sizeof(*app));
    bool oom = app == NULL;
    for (int a = 0; !oom && a < napps; a++) {
        PMIX_APP_CONSTRUCT(&app[a]);
        oom = !app_load(&app[a], &apps[a]);
    }
    char what[320];
    int n = snprintf(what, sizeof(what), "tern_spawn of %d x %s%s%s", apps[0].n,
                     apps[0].argv[0], apps[0].wdir ? " in " : "", apps[0].wdir ? apps[0].wdir : "");
    if (napps > 1 && n > 0 && (size_t)n < sizeof(what))
        snprintf(what + n, sizeof(what) - (size_t)n, " and %d more program(s)", napps - 1);
    if (oom) {
        st = tern_error(TERN_ERR_NO_MEMORY, "tern_spawn: copy of the arguments");
    } else {
        pmix_status_t rc = PMIx_Spawn(NULL, 0, app, (size_t)napps, ns);
        if (rc != PMIX_SUCCESS)
            st = rc == PMIX_ERR_NOT_SUPPORTED
                     ? launcher_refuses(p, what, "PMIx_Spawn")
                     : tern_error(spawn_status(rc), "%s: %s (the launcher's log names the cause)",
                                  what, PMIx_Error_string(rc));
        else if ((size_t)snprintf(job, len, "%s", ns) >= len)
            st = tern_error(TERN_ERR_INVALID_PARAM, "tern_spawn: job name %s longer than %zu bytes",
                            ns, len - 1);
    }
    for (int a = 0; app != NULL && a < napps; a++)
        PMIX_APP_DESTRUCT(&app[a]); /* its info too */
    free(app);
    return st;
}

/* ---- other jobs (tern_connect) ---------------------------------------- */

tern_status_t tern_pmix_job_size_of(tern_pmix_t *p, const char *nspace, int *size)
{
    pmix_proc_t who;
    uint32_t n = 0;
    if (p->singleton)
        return singleton_refuses("tern_connect");
    PMIX_LOAD_PROCID(&who, nspace, PMIX_RANK_WILDCARD);
    tern_status_t st = get_u32(&who, PMIX_JOB_SIZE, &n);
    if (st != TERN_OK)
        return tern_error_wrap(TERN_ERR_NOT_FOUND, "job %s: no such job known to the launcher",
                               nspace);
    *size = (int)n;
    return TERN_OK;
}

tern_status_t tern_pmix_commit(tern_pmix_t *p)
{
    if (p->singleton)
        return TERN_OK;
    pmix_status_t rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS)
        return tern_error(TERN_ERR_PMIX, "PMIx_Commit: %s", PMIx_Error_string(rc));
    return TERN_OK;
}
