/*
 * PMIx client side of the wire-up: what the engine needs from the job's
 * PMIx server (ternrun, Slurm, Open MPI's mpirun, PRRTE).  PMIx types stay
 * inside client.c so the engine does not depend on pmix.h.
 *
 * Peer deaths: tern_pmix_init registers a handler for the PMIx
 * process-termination events (PMIX_EVENT_PROC_TERMINATED and the
 * PMIX_ERR_PROC_* / PMIX_ERR_EXIT_NONZERO_TERM family) naming a rank of this
 * job in PMIX_EVENT_AFFECTED_PROC(S).  It runs on PMIx's progress thread and
 * only records the rank (lock-free, see client.c); the engine collects the
 * news with tern_pmix_take_dead from its idle path, each worker on its own
 * thread and for itself.
 */
#ifndef TERN_PMIX_CLIENT_H
#define TERN_PMIX_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tern/core.h>
#include <tern/status.h>

struct tern_pmix_deaths; /* client.c */

typedef struct tern_pmix {
    char nspace[256];
    uint32_t rank;
    uint32_t size;
    uint32_t local_rank;
    uint32_t local_size;
    int *local_peers;      /* global ranks on this node, ascending */
    bool initialized;      /* PMIx_Init succeeded */
    bool singleton;        /* no launcher (a job of one rank, or wired by addresses):
                            * PMIx not used */
    struct tern_pmix_deaths *deaths; /* NULL: no death events (the server refused) */
} tern_pmix_t;

/* A peer the launcher reported dead. */
typedef struct tern_pmix_death {
    int rank;
    const char *how; /* static text: "exited", "exited without finalizing", ... */
} tern_pmix_death_t;

/* A process started without a launcher (no PMIX_NAMESPACE, no
 * PMIX_SERVER_URI* in its environment) becomes a singleton: rank 0 of a job
 * of one, named singleton-<host>-<pid>; put, commit and the fences succeed
 * at once, get finds nothing, the name service, spawn and connect are
 * TERN_ERR_UNSUPPORTED.  A process a launcher started whose server cannot
 * be reached fails with TERN_ERR_PMIX, as before.  standalone: a singleton
 * whatever the environment says (tern_init_standalone).  A context wired
 * by addresses (engine/wireup_addr.c) does not call this: it sets singleton
 * itself, with its own rank, size and job name, and gets the same refusals
 * and no-op fences. */
tern_status_t tern_pmix_init(tern_pmix_t *p, bool standalone);
tern_status_t tern_pmix_finalize(tern_pmix_t *p);

/* Index of rank among the local peers, or -1 if it is on another node. */
int tern_pmix_local_index(const tern_pmix_t *p, int rank);

/* PMIx_Put(PMIX_GLOBAL) of a byte blob under key. */
tern_status_t tern_pmix_put(tern_pmix_t *p, const char *key, const void *data, size_t len);

/* PMIx_Commit then PMIx_Fence over the job (collect: PMIX_COLLECT_DATA). */
tern_status_t tern_pmix_fence(tern_pmix_t *p, bool commit_and_collect);
/* A fence (no data) during which progress(arg) is called over and over:
 * a netmod whose peers need our acknowledgements (dpdk) keeps answering
 * while this rank waits for the others. */
tern_status_t tern_pmix_fence_progress(tern_pmix_t *p, unsigned (*progress)(void *), void *arg);
/* The same among the ranks alive: a rank dying while the others wait in it
 * does not fail it (PMIX_ERR_PARTIAL_SUCCESS), as a rank dead before it
 * began does not (tern_barrier). */
tern_status_t tern_pmix_barrier_survivors(tern_pmix_t *p, unsigned (*progress)(void *), void *arg);
/* A fence (no data, no progress) given up after timeout_ms with
 * TERN_ERR_TIMED_OUT: an exit barrier that must not turn a peer's missing
 * finalize into a hang. */
tern_status_t tern_pmix_fence_timed(tern_pmix_t *p, unsigned timeout_ms);

/* PMIx_Get of rank's key; *data is malloc'd (caller frees). */
tern_status_t tern_pmix_get(tern_pmix_t *p, int rank, const char *key, void **data, size_t *len);
/* the same from a rank of another job (known to the launcher, e.g. connected) */
tern_status_t tern_pmix_get_of(tern_pmix_t *p, const char *nspace, int rank, const char *key,
                               void **data, size_t *len);

/* Other jobs (tern_connect): job_size_of reads nspace's PMIX_JOB_SIZE
 * (TERN_ERR_NOT_FOUND for a job the launcher does not know); commit makes
 * this rank's puts readable; connect runs PMIx_Connect, PMIx_Disconnect or
 * a PMIx_Fence over every rank of both jobs (collective over both,
 * client_connect.c).  A connect fails with TERN_ERR_PEER_FAILED naming the
 * job, at once, when a rank of it has ended before or while it waits (the
 * launcher's process table says so; without one it waits as PMIx does).
 * progress(arg) (NULL: none), the caller's progress returning the events
 * it handled, runs while the collective is pending, at least every
 * millisecond, as tern_pmix_fence_progress's: what the caller sent before the
 * call may still have to reach a rank that waits for it before it enters
 * (a message that completed at its sender sits in a user-space netmod
 * until the sender's progress puts it on the wire). */
tern_status_t tern_pmix_job_size_of(tern_pmix_t *p, const char *nspace, int *size);
tern_status_t tern_pmix_commit(tern_pmix_t *p);
typedef enum { TERN_PMIX_CONNECT, TERN_PMIX_DISCONNECT, TERN_PMIX_FENCE_BOTH } tern_pmix_collective_t;
tern_status_t tern_pmix_connect(tern_pmix_t *p, const char *nspace, tern_pmix_collective_t what,
                                unsigned (*progress)(void *), void *arg);

tern_status_t tern_pmix_publish(tern_pmix_t *p, const char *key, const char *value);
tern_status_t tern_pmix_lookup(tern_pmix_t *p, const char *key, char **value);
tern_status_t tern_pmix_unpublish(tern_pmix_t *p, const char *key);
void tern_pmix_abort(tern_pmix_t *p, int status, const char *msg);
/* PMIx_Spawn of napps programs as one job: each n ranks of argv[0] (argv
 * NULL-terminated), env entries "NAME=value" (NULL-terminated, or NULL),
 * working directory wdir (or NULL); the new namespace into job[len]. */
tern_status_t tern_pmix_spawn(tern_pmix_t *p, const tern_app_t apps[], int napps, char *job,
                              size_t len);

/* Consumers of the deaths: 0..TERN_PMIX_MAX_TAKERS-1 (the engine: one per
 * worker, by its index; TERN_NUM_WORKERS is at most 64). */
#define TERN_PMIX_MAX_TAKERS 64

/*
 * Ranks reported dead that taker has not been given yet, each once: up to
 * max of them in out[], returns how many (0: no news).  Every taker gets
 * every death.  Takes no lock and never blocks; each taker from one thread
 * at a time.  A death reported during the call may come with the next one.
 */
int tern_pmix_take_dead(tern_pmix_t *p, int taker, tern_pmix_death_t *out, int max);

/* The same for another job's ranks (tern_connect): watch registers a
 * handler for the deaths of nspace's size ranks (NULL: refused, warned:
 * only the netmod will see them); take_dead_of as take_dead; unwatch
 * deregisters and frees (before tern_pmix_finalize). */
struct tern_pmix_deaths *tern_pmix_watch(tern_pmix_t *p, const char *nspace, int size);
int tern_pmix_take_dead_of(struct tern_pmix_deaths *d, int taker, tern_pmix_death_t *out,
                           int max);
void tern_pmix_unwatch(struct tern_pmix_deaths *d);

#endif
