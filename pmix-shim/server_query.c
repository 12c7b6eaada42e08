/*
 * tern PMIx host server: PMIx_Query_info.
 *
 * What the PMIx server library cannot answer from its own store reaches the
 * host's .query.  Answered here, from the host's hooks (one node; the first
 * job and the ones spawned from it):
 *   PMIX_QUERY_NAMESPACES            the namespaces, comma-separated
 *   PMIX_QUERY_NAMESPACE_INFO        [ {PMIX_NSPACE} ] per namespace
 *   PMIX_QUERY_PROC_TABLE,           every rank as a pmix_proc_info_t: host,
 *   PMIX_QUERY_LOCAL_PROC_TABLE      program, pid, state, exit code (the
 *                                    PMIX_NSPACE qualifier, else the
 *                                    requester's namespace)
 *   PMIX_JOB_SIZE                    ranks of that namespace
 *   PMIX_QUERY_NUM_PSETS,            0 and "" (ternrun defines none)
 *   PMIX_QUERY_PSET_NAMES,
 *   PMIX_QUERY_NUM_GROUPS,
 *   PMIX_QUERY_GROUP_NAMES
 *   PMIX_QUERY_SPAWN_SUPPORT         the spawn directives understood
 *                                    (server_spawn.c), comma-separated
 *   PMIX_QUERY_DEBUG_SUPPORT         "" (debugger attach is refused)
 * Each query's answer is one PMIX_QUERY_RESULTS array (PMIx 4): its
 * qualifiers first (PMIX_QUERY_QUALIFIERS) when it had any, then one info
 * per key answered.  Status: success when every key was answered,
 * PMIX_QUERY_PARTIAL_SUCCESS when some were, PMIX_ERR_NOT_FOUND when none
 * (each key not answered is logged at verbose level 1).  The answer goes
 * back from a thread of its own (tern_srv_answer_info).
 */
#include "pmix-shim/server_internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROCS 4096

static bool is_key(const char *key, const char *want)
{
    return strncmp(key, want, PMIX_MAX_KEYLEN) == 0;
}

/* the namespace a query is about: its PMIX_NSPACE qualifier, else the
 * requester's, else the job's (OpenPMIx 4.2 passes on a client's query
 * under the server's own name, "pmix-server:<pid>", without qualifier) */
static const char *query_nspace(const pmix_query_t *q, const pmix_proc_t *requester)
{
    for (size_t k = 0; k < q->nqual; k++)
        if (is_key(q->qualifiers[k].key, PMIX_NSPACE) &&
            q->qualifiers[k].value.type == PMIX_STRING)
            return q->qualifiers[k].value.data.string;
    struct tern_srv_proc one;
    if (tern_srv_hooks.procs != NULL &&
        tern_srv_hooks.procs(tern_srv_hooks.ctx, requester->nspace, &one, 1) >= 0)
        return requester->nspace;
    return tern_srv_hooks.nspace ? tern_srv_hooks.nspace : "";
}

#define NSPACES_LEN (64 * (PMIX_MAX_NSLEN + 2))

/* the job's ranks now (malloc'd), or -1 for an unknown namespace */
static int procs_of(const char *nspace, struct tern_srv_proc **out)
{
    *out = NULL;
    if (tern_srv_hooks.procs == NULL)
        return -1;
    struct tern_srv_proc *p = calloc(MAX_PROCS, sizeof(*p));
    if (p == NULL)
        return -1;
    int n = tern_srv_hooks.procs(tern_srv_hooks.ctx, nspace, p, MAX_PROCS);
    if (n < 0) {
        free(p);
        return -1;
    }
    *out = p;
    return n;
}

static bool proc_table(pmix_info_t *res, const char *key, const char *nspace)
{
    struct tern_srv_proc *p;
    int n = procs_of(nspace, &p);
    if (n < 0)
        return false;
    pmix_proc_info_t *pi;
    PMIX_PROC_INFO_CREATE(pi, (size_t)n);
    for (int i = 0; i < n && pi != NULL; i++) {
        PMIX_LOAD_PROCID(&pi[i].proc, nspace, p[i].rank);
        pi[i].hostname = strdup(tern_srv_hooks.hostname ? tern_srv_hooks.hostname : "");
        pi[i].executable_name = strdup(p[i].exe ? p[i].exe : "");
        pi[i].pid = p[i].pid;
        pi[i].state = p[i].state;
        pi[i].exit_code = p[i].exit_code;
    }
    free(p);
    if (pi == NULL && n > 0)
        return false;
    pmix_data_array_t darray = {.type = PMIX_PROC_INFO, .size = (size_t)n, .array = pi};
    PMIX_INFO_LOAD(res, key, &darray, PMIX_DATA_ARRAY); /* copies */
    PMIX_PROC_INFO_FREE(pi, (size_t)n);
    return true;
}

/* answer one key into res; false: not answered */
static bool answer_key(pmix_info_t *res, const char *key, const pmix_query_t *q,
                       const pmix_proc_t *requester)
{
    if (is_key(key, PMIX_QUERY_NAMESPACES) || is_key(key, PMIX_QUERY_NAMESPACE_INFO)) {
        char *list = calloc(1, NSPACES_LEN);
        if (list == NULL)
            return false;
        if (tern_srv_hooks.nspaces != NULL)
            tern_srv_hooks.nspaces(tern_srv_hooks.ctx, list, NSPACES_LEN);
        else if (tern_srv_hooks.nspace != NULL)
            snprintf(list, NSPACES_LEN, "%s", tern_srv_hooks.nspace);
        if (is_key(key, PMIX_QUERY_NAMESPACES)) {
            PMIX_INFO_LOAD(res, key, list, PMIX_STRING);
            free(list);
            return true;
        }
        size_t n = 1;
        for (const char *c = list; *c; c++)
            n += *c == ',';
        pmix_data_array_t *inner = calloc(n, sizeof(*inner));
        pmix_info_t *one = NULL;
        PMIX_INFO_CREATE(one, n);
        if (inner == NULL || one == NULL) {
            free(inner);
            PMIX_INFO_FREE(one, n);
            free(list);
            return false;
        }
        size_t k = 0;
        for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok != NULL && k < n;
             tok = strtok_r(NULL, ",", &save), k++) {
            PMIX_INFO_LOAD(&one[k], PMIX_NSPACE, tok, PMIX_STRING);
            inner[k] = (pmix_data_array_t){.type = PMIX_INFO, .size = 1, .array = &one[k]};
        }
        pmix_data_array_t outer = {.type = PMIX_DATA_ARRAY, .size = k, .array = inner};
        PMIX_INFO_LOAD(res, key, &outer, PMIX_DATA_ARRAY); /* copies */
        PMIX_INFO_FREE(one, n);
        free(inner);
        free(list);
    } else if (is_key(key, PMIX_QUERY_PROC_TABLE) || is_key(key, PMIX_QUERY_LOCAL_PROC_TABLE)) {
        return proc_table(res, key, query_nspace(q, requester));
    } else if (is_key(key, PMIX_JOB_SIZE)) {
        struct tern_srv_proc *p;
        int n = procs_of(query_nspace(q, requester), &p);
        free(p);
        if (n < 0)
            return false;
        uint32_t size = (uint32_t)n;
        PMIX_INFO_LOAD(res, key, &size, PMIX_UINT32);
    } else if (is_key(key, PMIX_QUERY_NUM_PSETS) || is_key(key, PMIX_QUERY_NUM_GROUPS)) {
        size_t zero = 0;
        PMIX_INFO_LOAD(res, key, &zero, PMIX_SIZE);
    } else if (is_key(key, PMIX_QUERY_SPAWN_SUPPORT)) {
        PMIX_INFO_LOAD(res, key,
                       tern_srv_hooks.spawn == NULL ? ""
                           : PMIX_WDIR "," PMIX_PREFIX "," PMIX_BINDTO "," PMIX_MAPBY ","
                             PMIX_RANKBY "," PMIX_FWD_STDOUT "," PMIX_FWD_STDERR ","
                             PMIX_FWD_STDDIAG,
                       PMIX_STRING);
    } else if (is_key(key, PMIX_QUERY_PSET_NAMES) || is_key(key, PMIX_QUERY_GROUP_NAMES) ||
               is_key(key, PMIX_QUERY_DEBUG_SUPPORT)) {
        PMIX_INFO_LOAD(res, key, "", PMIX_STRING);
    } else {
        return false;
    }
    return true;
}

pmix_status_t tern_srv_query(pmix_proc_t *requester, pmix_query_t *queries, size_t nqueries,
                             pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    if (cbfunc == NULL)
        return PMIX_ERR_BAD_PARAM;
    pmix_info_t *out = NULL;
    PMIX_INFO_CREATE(out, nqueries);
    if (out == NULL && nqueries > 0)
        return PMIX_ERR_NOMEM;
    size_t asked = 0, answered = 0;
    for (size_t i = 0; i < nqueries; i++) {
        const pmix_query_t *q = &queries[i];
        size_t nkeys = 0;
        while (q->keys != NULL && q->keys[nkeys] != NULL)
            nkeys++;
        size_t nres = (q->nqual > 0 ? 1 : 0), n = 0;
        pmix_info_t *res;
        PMIX_INFO_CREATE(res, nres + nkeys);
        if (res == NULL) {
            PMIX_INFO_FREE(out, nqueries);
            return PMIX_ERR_NOMEM;
        }
        if (q->nqual > 0) {
            pmix_data_array_t quals = {.type = PMIX_INFO, .size = q->nqual,
                                       .array = q->qualifiers};
            PMIX_INFO_LOAD(&res[n++], PMIX_QUERY_QUALIFIERS, &quals, PMIX_DATA_ARRAY);
        }
        for (size_t k = 0; k < nkeys; k++) {
            asked++;
            if (answer_key(&res[n], q->keys[k], q, requester)) {
                n++;
                answered++;
            } else {
                tern_srv_log(1, "PMIx query %s from %s:%u: not answered", q->keys[k],
                             requester->nspace, (unsigned)requester->rank);
            }
        }
        pmix_data_array_t darray = {.type = PMIX_INFO, .size = n, .array = res};
        PMIX_INFO_LOAD(&out[i], PMIX_QUERY_RESULTS, &darray, PMIX_DATA_ARRAY);
        PMIX_INFO_FREE(res, nres + nkeys);
    }
    pmix_status_t st = answered == 0 ? PMIX_ERR_NOT_FOUND
                       : answered < asked ? PMIX_QUERY_PARTIAL_SUCCESS
                                          : PMIX_SUCCESS;
    if (tern_srv_answer_info(cbfunc, cbdata, st, out, nqueries) == 0)
        return PMIX_SUCCESS;
    PMIX_INFO_FREE(out, nqueries);
    return PMIX_ERR_OUT_OF_RESOURCE;
}
