/*
 * What the PMIx query tests share (tests/launcher/pmix_clients.c,
 * pmix_calls.c, pmix_tool.c, pmix_spawn.c): reading a PMIx_Query_info
 * answer as PMIx 4.2 clients read it, flat (one info per key answered,
 * keyed by the query key, in the order asked), and the array of
 * PMIX_QUERY_NAMESPACE_INFO inside it; PMIX_QUERY_REFRESH_CACHE for a
 * query whose answer must come from the host.  Include after
 * tests/pmix_get.h (fail()).  Test code only.
 */
#ifndef TERN_TEST_PMIX_QUERY_H
#define TERN_TEST_PMIX_QUERY_H

#include <stdbool.h>

/* The q-th info of a flat answer, which must be key, of type (PMIX_UNDEF:
 * any): its value, or NULL and a failure. */
static inline const pmix_value_t *query_result(const char *what, const pmix_info_t *info,
                                               size_t ninfo, size_t q, const char *key,
                                               pmix_data_type_t type)
{
    if (q >= ninfo) {
        fail("%s: answer %zu (%s): only %zu answer(s)", what, q, key, ninfo);
        return NULL;
    }
    if (!PMIX_CHECK_KEY(&info[q], key) || (type != PMIX_UNDEF && info[q].value.type != type)) {
        fail("%s: answer %zu is %s (%s), expected %s (%s)", what, q, info[q].key,
             PMIx_Data_type_string(info[q].value.type), key, PMIx_Data_type_string(type));
        return NULL;
    }
    return &info[q].value;
}

/* A whole answer: status success and exactly the keys (NULL-terminated),
 * in their order, of these types; else false and a failure. */
static inline bool query_expect_flat(const char *what, pmix_status_t status,
                                     const pmix_info_t *info, size_t ninfo, const char *const *keys,
                                     const pmix_data_type_t *types)
{
    size_t n = 0;
    while (keys[n] != NULL)
        n++;
    if (status != PMIX_SUCCESS) {
        fail("%s: %s", what, PMIx_Error_string(status));
        return false;
    }
    if (ninfo != n) {
        fail("%s: %zu results, expected %zu (one per key)%s%s", what, ninfo, n,
             ninfo > 0 ? ", the first " : "", ninfo > 0 ? info[0].key : "");
        return false;
    }
    for (size_t k = 0; k < n; k++)
        if (query_result(what, info, ninfo, k, keys[k], types[k]) == NULL)
            return false;
    return true;
}

/* Called per namespace of a PMIX_QUERY_NAMESPACE_INFO answer, with its
 * PMIX_NSPACE and PMIX_CMD_LINE (NULL when the element has none). */
typedef void query_nsinfo_fn(const char *nspace, const char *cmdline, void *arg);

/* Walk the value of PMIX_QUERY_NAMESPACE_INFO: an array of infos, one per
 * namespace, each an array of infos whose values are all strings (as
 * OpenPMIx's tool example prints them); fn for each.  False and a failure
 * for any other shape (then fn may have been called for the elements
 * before). */
static inline bool query_nsinfo(const char *what, const pmix_value_t *v, query_nsinfo_fn *fn,
                                void *arg)
{
    const pmix_data_array_t *outer = v->type == PMIX_DATA_ARRAY ? v->data.darray : NULL;
    if (outer == NULL || outer->type != PMIX_INFO || outer->size == 0 || outer->array == NULL) {
        fail("%s: not an array of infos", what);
        return false;
    }
    const pmix_info_t *el = outer->array;
    for (size_t n = 0; n < outer->size; n++) {
        const pmix_data_array_t *in =
            el[n].value.type == PMIX_DATA_ARRAY ? el[n].value.data.darray : NULL;
        if (in == NULL || in->type != PMIX_INFO || in->size == 0 || in->array == NULL) {
            fail("%s: element %zu (%s) is not an array of infos", what, n, el[n].key);
            return false;
        }
        const pmix_info_t *it = in->array;
        const char *ns = NULL, *cmd = NULL;
        for (size_t m = 0; m < in->size; m++) {
            if (it[m].value.type != PMIX_STRING || it[m].value.data.string == NULL) {
                fail("%s: element %zu: %s is not a string", what, n, it[m].key);
                return false;
            }
            if (PMIX_CHECK_KEY(&it[m], PMIX_NSPACE))
                ns = it[m].value.data.string;
            else if (PMIX_CHECK_KEY(&it[m], PMIX_CMD_LINE))
                cmd = it[m].value.data.string;
        }
        fn(ns, cmd, arg);
    }
    return true;
}

/* Add PMIX_QUERY_REFRESH_CACHE to the qualifiers of q (one query, its
 * qualifiers from PMIX_QUERY_QUALIFIERS_CREATE or none): the documented
 * way to have the host answer, not the client library's store.  What it
 * changes depends on the library (src/common/pmix_query.c): OpenPMIx 4.2.2
 * hands such a query to the host at once, and the others too after a
 * look at its store (no storage plugin completes them), so every query
 * reaches ternrun; 4.2.9 and 5.x no longer read the qualifier and answer
 * from the store a key found there (job data such as PMIX_JOB_SIZE), so
 * only tests/unit/srv_query_test, which calls ternrun's module directly,
 * checks server_query.c whatever the library. */
static inline void query_refresh(pmix_query_t *q)
{
    size_t n = q->nqual;
    pmix_info_t *quals;
    PMIX_INFO_CREATE(quals, n + 1);
    for (size_t k = 0; k < n; k++)
        PMIX_INFO_XFER(&quals[k], &q->qualifiers[k]);
    bool yes = true;
    PMIX_INFO_LOAD(&quals[n], PMIX_QUERY_REFRESH_CACHE, &yes, PMIX_BOOL);
    if (q->qualifiers != NULL)
        PMIX_INFO_FREE(q->qualifiers, q->nqual);
    q->qualifiers = quals;
    q->nqual = n + 1;
}

#endif
