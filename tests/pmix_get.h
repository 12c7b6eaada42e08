/*
 * PMIx getters shared by the test probes (tests/launcher/pmix_probe.c,
 * tests/multinode/mn_probe.c).  The including file defines, before the
 * include, `me` (its pmix_proc_t) and `fail(fmt, ...)` (records a failed
 * check).  Test code only.
 */
#ifndef TERN_TEST_PMIX_GET_H
#define TERN_TEST_PMIX_GET_H

static pmix_value_t *get(pmix_rank_t rank, const char *key)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    rc = PMIx_Get(&p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Get(%s, rank %d): %s", key, rank == PMIX_RANK_WILDCARD ? -1 : (int)rank,
             PMIx_Error_string(rc));
        return NULL;
    }
    return v;
}

static long get_uint(pmix_rank_t rank, const char *key)
{
    pmix_value_t *v = get(rank, key);
    long out = -1;

    if (v == NULL) {
        return -1;
    }
    switch (v->type) {
    case PMIX_UINT32:
        out = (long)v->data.uint32;
        break;
    case PMIX_UINT16:
        out = v->data.uint16;
        break;
    case PMIX_PROC_RANK:
        out = (long)v->data.rank;
        break;
    default:
        fail("%s has unexpected type %s", key, PMIx_Data_type_string(v->type));
    }
    PMIX_VALUE_RELEASE(v);
    return out;
}

static char *get_str(pmix_rank_t rank, const char *key)
{
    pmix_value_t *v = get(rank, key);
    char *out = NULL;

    if (v == NULL) {
        return NULL;
    }
    if (v->type == PMIX_STRING && v->data.string != NULL) {
        out = strdup(v->data.string);
    } else {
        fail("%s has unexpected type %s", key, PMIx_Data_type_string(v->type));
    }
    PMIX_VALUE_RELEASE(v);
    return out;
}

#endif
