/*
 * What the launcher tells about this node's load, for the idle-wait
 * defaults (engine/oversub.c).  Apart from client.c: only these two keys,
 * both optional (a launcher that does not give them is normal).
 */
#ifndef TERN_PMIX_NODE_H
#define TERN_PMIX_NODE_H

#include <stddef.h>

#include "pmix/client/client.h"

/* PMIX_NODE_OVERSUBSCRIBED of this job on this node: 1 or 0 as the
 * launcher says (ternrun, PRRTE), -1 when it says nothing. */
int tern_pmix_node_oversubscribed(tern_pmix_t *p);

/* PMIX_CPUSET of rank (the binding the launcher applied at launch: "0-3",
 * "hwloc:0-3") into buf; TERN_ERR_NOT_FOUND when the launcher did not bind
 * it or does not say, TERN_ERR_TRUNCATED when buf is too small. */
tern_status_t tern_pmix_cpuset(tern_pmix_t *p, int rank, char *buf, size_t len);

#endif
