/*
 * PMIx client side of the wire-up: what the engine needs from the job's
 * PMIx server (ternrun, Slurm, Open MPI's mpirun, PRRTE).  PMIx types stay
 * inside client.c so the engine does not depend on pmix.h.
 */
#ifndef TERN_PMIX_CLIENT_H
#define TERN_PMIX_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tern/status.h>

typedef struct tern_pmix {
    char nspace[256];
    uint32_t rank;
    uint32_t size;
    uint32_t local_rank;
    uint32_t local_size;
    int *local_peers;      /* global ranks on this node, ascending */
    bool initialized;
} tern_pmix_t;

tern_status_t tern_pmix_init(tern_pmix_t *p);
tern_status_t tern_pmix_finalize(tern_pmix_t *p);

/* Index of rank among the local peers, or -1 if it is on another node. */
int tern_pmix_local_index(const tern_pmix_t *p, int rank);

/* PMIx_Put(PMIX_GLOBAL) of a byte blob under key. */
tern_status_t tern_pmix_put(tern_pmix_t *p, const char *key, const void *data, size_t len);

/* PMIx_Commit then PMIx_Fence over the job (collect: PMIX_COLLECT_DATA). */
tern_status_t tern_pmix_fence(tern_pmix_t *p, bool commit_and_collect);

/* PMIx_Get of rank's key; *data is malloc'd (caller frees). */
tern_status_t tern_pmix_get(tern_pmix_t *p, int rank, const char *key, void **data, size_t *len);

tern_status_t tern_pmix_publish(tern_pmix_t *p, const char *key, const char *value);
tern_status_t tern_pmix_lookup(tern_pmix_t *p, const char *key, char **value);
tern_status_t tern_pmix_unpublish(tern_pmix_t *p, const char *key);
void tern_pmix_abort(tern_pmix_t *p, int status, const char *msg);

#endif
