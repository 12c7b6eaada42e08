/* The launcher's word on this node's load: see node.h. */
#include "pmix/client/node.h"

#include <pmix.h>
#include <stdio.h>
#include <string.h>

#include "engine/log.h"

/* A key the launcher may not have: PMIX_OPTIONAL, so that PMIx answers from
 * what it holds instead of asking the server for a key nobody will put. */
static pmix_value_t *get_optional(tern_pmix_t *p, pmix_rank_t rank, const char *key)
{
    pmix_proc_t who;
    pmix_info_t info;
    bool optional = true;
    pmix_value_t *val = NULL;
    if (!p->initialized || p->singleton)
        return NULL;
    PMIX_LOAD_PROCID(&who, p->nspace, rank);
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
    pmix_status_t rc = PMIx_Get(&who, key, &info, 1, &val);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        if (val != NULL)
            PMIX_VALUE_RELEASE(val);
        return NULL;
    }
    return val;
}

int tern_pmix_node_oversubscribed(tern_pmix_t *p)
{
    pmix_value_t *val = get_optional(p, PMIX_RANK_WILDCARD, PMIX_NODE_OVERSUBSCRIBED);
    int out = -1;
    if (val != NULL && val->type == PMIX_BOOL)
        out = val->data.flag ? 1 : 0;
    if (val != NULL)
        PMIX_VALUE_RELEASE(val);
    return out;
}

tern_status_t tern_pmix_cpuset(tern_pmix_t *p, int rank, char *buf, size_t len)
{
    pmix_value_t *val = get_optional(p, (pmix_rank_t)rank, PMIX_CPUSET);
    tern_status_t st = TERN_OK;
    if (val == NULL || val->type != PMIX_STRING || val->data.string == NULL)
        st = tern_error(TERN_ERR_NOT_FOUND, "no PMIX_CPUSET for rank %d", rank);
    else if ((size_t)snprintf(buf, len, "%s", val->data.string) >= len)
        st = tern_error(TERN_ERR_TRUNCATED, "PMIX_CPUSET of rank %d is longer than %zu bytes", rank,
                        len - 1);
    if (val != NULL)
        PMIX_VALUE_RELEASE(val);
    return st;
}
