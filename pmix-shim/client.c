/* PMIx client: init, job keys, business-card exchange, name service. */
#include "pmix-shim/client.h"

#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/log.h"

static pmix_proc_t self_proc;

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

tern_status_t tern_pmix_init(tern_pmix_t *p)
{
    memset(p, 0, sizeof(*p));
    pmix_status_t rc = PMIx_Init(&self_proc, NULL, 0);
    if (rc != PMIX_SUCCESS)
        return tern_error(TERN_ERR_PMIX,
                          "PMIx_Init failed (%s): start the program with ternrun, srun --mpi=pmix "
                          "or mpirun", PMIx_Error_string(rc));
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
    return TERN_OK;
err:
    tern_pmix_finalize(p);
    return st;
}

tern_status_t tern_pmix_finalize(tern_pmix_t *p)
{
    tern_status_t st = TERN_OK;
    if (p->initialized) {
        pmix_status_t rc = PMIx_Finalize(NULL, 0);
        if (rc != PMIX_SUCCESS)
            st = tern_error(TERN_ERR_PMIX, "PMIx_Finalize: %s", PMIx_Error_string(rc));
        p->initialized = false;
    }
    free(p->local_peers);
    p->local_peers = NULL;
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

tern_status_t tern_pmix_get(tern_pmix_t *p, int rank, const char *key, void **data, size_t *len)
{
    pmix_proc_t who;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&who, p->nspace, (pmix_rank_t)rank);
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
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, key, value, PMIX_STRING);
    pmix_status_t rc = PMIx_Publish(&info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
        return tern_error(TERN_ERR_PMIX, "PMIx_Publish(%s): %s", key, PMIx_Error_string(rc));
    return TERN_OK;
}

tern_status_t tern_pmix_lookup(tern_pmix_t *p, const char *key, char **value)
{
    pmix_pdata_t pd;
    PMIX_PDATA_CONSTRUCT(&pd);
    snprintf(pd.key, sizeof(pd.key), "%s", key);
    pmix_status_t rc = PMIx_Lookup(&pd, 1, NULL, 0);
    tern_status_t st = TERN_OK;
    if (rc == PMIX_ERR_NOT_FOUND || (rc == PMIX_SUCCESS && pd.value.type == PMIX_UNDEF)) {
        st = tern_error(TERN_ERR_NOT_FOUND, "PMIx_Lookup(%s): nobody published it", key);
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
    char *keys[2] = {(char *)key, NULL};
    pmix_status_t rc = PMIx_Unpublish(keys, NULL, 0);
    if (rc == PMIX_ERR_NOT_FOUND)
        return tern_error(TERN_ERR_NOT_FOUND, "PMIx_Unpublish(%s): not published", key);
    if (rc != PMIX_SUCCESS)
        return tern_error(TERN_ERR_PMIX, "PMIx_Unpublish(%s): %s", key, PMIx_Error_string(rc));
    return TERN_OK;
}

void tern_pmix_abort(tern_pmix_t *p, int status, const char *msg)
{
    PMIx_Abort(status, msg, NULL, 0);
}
