/*
 * tern PMIx host server: PMIx_Query_info.
 *
 * What the PMIx server library cannot answer from its own store reaches the
 * host's .query.  Answered here, from the host's hooks (one node; the first
 * job and the ones spawned from it):
 *   PMIX_QUERY_NAMESPACES            the namespaces, comma-separated
 *   PMIX_QUERY_NAMESPACE_INFO        an array of PMIX_QUERY_NAMESPACE_INFO
 *                                    infos, one per namespace (or the one of
 *                                    the PMIX_NSPACE qualifier), each an array
 *                                    {PMIX_NSPACE, PMIX_CMD_LINE}
 *   PMIX_QUERY_PROC_TABLE,           every rank as a pmix_proc_info_t: host,
 *   PMIX_QUERY_LOCAL_PROC_TABLE      program, pid, state, exit code
 *   PMIX_JOB_SIZE                    ranks of that namespace
 *   PMIX_SERVER_URI                  this server's URI (a PMIX_HOSTNAME or
 *                                    PMIX_NODEID qualifier must name this node)
 *   PMIX_QUERY_NUM_PSETS,            0 and "" (ternrun defines none)
 *   PMIX_QUERY_PSET_NAMES,
 *   PMIX_QUERY_NUM_GROUPS,
 *   PMIX_QUERY_GROUP_NAMES
 *   PMIX_QUERY_SPAWN_SUPPORT         the spawn directives understood
 *                                    (server_spawn.c), comma-separated
 *   PMIX_QUERY_DEBUG_SUPPORT         "" (debugger attach is refused)
 *   PMIX_QUERY_SUPPORTED_KEYS        these keys, comma-separated
 * The namespace of the proc tables and the job size: the PMIX_NSPACE
 * qualifier, else the requester's, else the first job's.
 *
 * The answer is flat, as PMIx 4.2 clients read it (OpenPMIx 4.2's own
 * examples take info[0] and count the results): one info per key answered,
 * its key the query key, in the order of the queries and of their keys.  The
 * PMIX_QUERY_RESULTS form (one array per query) that the 4.2 header
 * describes is not what its library or its clients use: hello crashed on
 * it.  Status: success when every key was answered,
 * PMIX_QUERY_PARTIAL_SUCCESS when some were, PMIX_ERR_NOT_FOUND when none
 * (each key not answered is logged at verbose level 1, with the reason).
 * The answer goes back from a thread of its own (tern_srv_answer_info).
 *
 * Every value is built from types the PMIx library can copy and pack:
 * strings, integers, proc infos and arrays of infos (a pmix_data_array_t of
 * PMIX_DATA_ARRAY is not one of them: OpenPMIx 4.2's copy fails on it and
 * the server crashed).  A qualifier of the wrong type is not guessed at: the
 * key is not answered.
 */
#include "pmix/server/server_internal.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROCS 4096
#define NSPACES_LEN (64 * (PMIX_MAX_NSLEN + 2))
#define CMDLINE_LEN 4096

/* Set once (the host's main thread), read by queries on PMIx's progress
 * thread.  Never replaced nor freed once set: a query that loaded the
 * pointer may still be copying the string, so a second value could only
 * be swapped in by freeing the first under that reader.  (seq_cst
 * compare-exchange and load: the string is written before it is
 * published.) */
static _Atomic(char *) server_uri;

void tern_srv_module_set_uri(const char *uri)
{
    char *copy = uri != NULL ? strdup(uri) : NULL, *kept = NULL;
    if (copy == NULL)
        return;
    if (!atomic_compare_exchange_strong(&server_uri, &kept, copy)) {
        tern_srv_log(0, "PMIX_SERVER_URI is set once: %s ignored, %s kept", copy, kept);
        free(copy);
    }
}

static bool is_key(const char *key, const char *want)
{
    return strncmp(key, want, PMIX_MAX_KEYLEN) == 0;
}

/* The qualifier key of q: NULL when absent, else its value (type unchecked). */
static const pmix_value_t *qualifier(const pmix_query_t *q, const char *key)
{
    for (size_t k = 0; k < q->nqual; k++)
        if (is_key(q->qualifiers[k].key, key))
            return &q->qualifiers[k].value;
    return NULL;
}

/* is nspace one of the host's? */
static bool known_nspace(const char *nspace)
{
    struct tern_srv_proc one;
    if (tern_srv_hooks.procs != NULL)
        return tern_srv_hooks.procs(tern_srv_hooks.ctx, nspace, &one, 1) >= 0;
    return tern_srv_hooks.nspace != NULL && strcmp(nspace, tern_srv_hooks.nspace) == 0;
}

/* the namespace a query is about: its PMIX_NSPACE qualifier, else the
 * requester's, else the job's (OpenPMIx 4.2 passes on a client's query
 * under the server's own name, "pmix-server:<pid>", without qualifier);
 * NULL for a qualifier that is not a string */
static const char *query_nspace(const pmix_query_t *q, const pmix_proc_t *requester)
{
    const pmix_value_t *v = qualifier(q, PMIX_NSPACE);
    if (v != NULL)
        return v->type == PMIX_STRING && v->data.string != NULL ? v->data.string : NULL;
    if (known_nspace(requester->nspace))
        return requester->nspace;
    return tern_srv_hooks.nspace ? tern_srv_hooks.nspace : "";
}

/* the host's namespaces, comma-separated (malloc'd), or NULL */
static char *nspaces_list(void)
{
    char *list = calloc(1, NSPACES_LEN);
    if (list == NULL)
        return NULL;
    if (tern_srv_hooks.nspaces != NULL)
        tern_srv_hooks.nspaces(tern_srv_hooks.ctx, list, NSPACES_LEN);
    else if (tern_srv_hooks.nspace != NULL)
        snprintf(list, NSPACES_LEN, "%s", tern_srv_hooks.nspace);
    return list;
}

/* the job's ranks now (malloc'd), or -1 for an unknown namespace */
static int procs_of(const char *nspace, struct tern_srv_proc **out)
{
    *out = NULL;
    if (tern_srv_hooks.procs == NULL || nspace == NULL)
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

/* res takes darray (its value, then freed with it) */
static void load_darray(pmix_info_t *res, const char *key, pmix_data_array_t *darray)
{
    PMIX_LOAD_KEY(res->key, key);
    res->value.type = PMIX_DATA_ARRAY;
    res->value.data.darray = darray;
}

static bool proc_table(pmix_info_t *res, const char *key, const char *nspace)
{
    struct tern_srv_proc *p;
    int n = procs_of(nspace, &p);
    if (n < 0)
        return false;
    pmix_data_array_t *darray;
    PMIX_DATA_ARRAY_CREATE(darray, (size_t)n, PMIX_PROC_INFO);
    if (darray == NULL || (n > 0 && darray->array == NULL)) {
        free(darray);
        free(p);
        return false;
    }
    pmix_proc_info_t *pi = darray->array;
    for (int i = 0; i < n; i++) {
        PMIX_LOAD_PROCID(&pi[i].proc, nspace, p[i].rank);
        pi[i].hostname = strdup(tern_srv_hooks.hostname ? tern_srv_hooks.hostname : "");
        pi[i].executable_name = strdup(p[i].exe ? p[i].exe : "");
        pi[i].pid = p[i].pid;
        pi[i].state = p[i].state;
        pi[i].exit_code = p[i].exit_code;
    }
    free(p);
    load_darray(res, key, darray);
    return true;
}

/* nspace's command line into buf (the host's cmdline hook; without one,
 * ""); false: not a namespace of the host's */
static bool cmdline_of(const char *nspace, char *buf, size_t len)
{
    buf[0] = '\0';
    if (tern_srv_hooks.cmdline != NULL)
        return tern_srv_hooks.cmdline(tern_srv_hooks.ctx, nspace, buf, len) == 0;
    return known_nspace(nspace);
}

/* PMIX_QUERY_NAMESPACE_INFO: an array of infos, each an array of infos
 * {PMIX_NSPACE, PMIX_CMD_LINE}: strings only, as OpenPMIx's tool example
 * prints every element's value as a string.  The namespaces: the
 * PMIX_NSPACE qualifier's (no list needed), else all of the host's. */
static bool nspace_info(pmix_info_t *res, const char *key, const pmix_query_t *q)
{
    const pmix_value_t *want = qualifier(q, PMIX_NSPACE);
    if (want != NULL && (want->type != PMIX_STRING || want->data.string == NULL))
        return false;
    char *list = NULL, *cmd = malloc(CMDLINE_LEN);
    size_t n = 1;
    if (cmd == NULL || (want == NULL && (list = nspaces_list()) == NULL)) {
        free(cmd);
        return false;
    }
    for (const char *c = list; c != NULL && *c; c++)
        n += *c == ',';
    pmix_data_array_t *outer;
    PMIX_DATA_ARRAY_CREATE(outer, n, PMIX_INFO);
    if (outer == NULL || outer->array == NULL) {
        free(outer);
        free(list);
        free(cmd);
        return false;
    }
    pmix_info_t *el = outer->array;
    size_t k = 0;
    bool whole = true;
    char *save = NULL;
    for (const char *ns = want != NULL ? want->data.string : strtok_r(list, ",", &save);
         ns != NULL && k < n; ns = want != NULL ? NULL : strtok_r(NULL, ",", &save)) {
        if (!cmdline_of(ns, cmd, CMDLINE_LEN))
            continue;
        pmix_data_array_t *one;
        PMIX_DATA_ARRAY_CREATE(one, 2, PMIX_INFO);
        if (one == NULL || one->array == NULL) {
            free(one);
            whole = false; /* a shorter list would pass for every namespace */
            break;
        }
        pmix_info_t *it = one->array;
        PMIX_INFO_LOAD(&it[0], PMIX_NSPACE, ns, PMIX_STRING);
        PMIX_INFO_LOAD(&it[1], PMIX_CMD_LINE, cmd, PMIX_STRING);
        load_darray(&el[k++], key, one);
    }
    free(list);
    free(cmd);
    outer->size = k; /* the infos past k were never loaded */
    if (k == 0 || !whole) {
        PMIX_DATA_ARRAY_FREE(outer);
        return false; /* not a namespace of ours, or no memory for all of them */
    }
    load_darray(res, key, outer);
    return true;
}

/* PMIX_SERVER_URI of this node: a PMIX_HOSTNAME or PMIX_NODEID qualifier
 * naming another node (ternrun runs on one) is not answered */
static bool server_uri_of(pmix_info_t *res, const char *key, const pmix_query_t *q)
{
    const pmix_value_t *host = qualifier(q, PMIX_HOSTNAME), *node = qualifier(q, PMIX_NODEID);
    if (host != NULL && (host->type != PMIX_STRING || host->data.string == NULL ||
                         tern_srv_hooks.hostname == NULL ||
                         strcmp(host->data.string, tern_srv_hooks.hostname) != 0))
        return false;
    if (node != NULL && (node->type != PMIX_UINT32 || node->data.uint32 != 0))
        return false;
    char *uri = atomic_load(&server_uri);
    if (uri == NULL)
        return false;
    PMIX_INFO_LOAD(res, key, uri, PMIX_STRING);
    return true;
}

#define SPAWN_SUPPORT                                                                              \
    PMIX_WDIR "," PMIX_PREFIX "," PMIX_BINDTO "," PMIX_MAPBY "," PMIX_RANKBY "," PMIX_FWD_STDOUT   \
              "," PMIX_FWD_STDERR "," PMIX_FWD_STDDIAG
#define SUPPORTED_KEYS                                                                             \
    PMIX_QUERY_NAMESPACES                                                                          \
        "," PMIX_QUERY_NAMESPACE_INFO "," PMIX_QUERY_PROC_TABLE "," PMIX_QUERY_LOCAL_PROC_TABLE    \
        "," PMIX_JOB_SIZE "," PMIX_SERVER_URI "," PMIX_QUERY_NUM_PSETS "," PMIX_QUERY_PSET_NAMES   \
        "," PMIX_QUERY_NUM_GROUPS "," PMIX_QUERY_GROUP_NAMES "," PMIX_QUERY_SPAWN_SUPPORT          \
        "," PMIX_QUERY_DEBUG_SUPPORT "," PMIX_QUERY_SUPPORTED_KEYS

/* answer one key into res; false: not answered */
static bool answer_key(pmix_info_t *res, const char *key, const pmix_query_t *q,
                       const pmix_proc_t *requester)
{
    if (is_key(key, PMIX_QUERY_NAMESPACES)) {
        char *list = nspaces_list();
        if (list == NULL)
            return false;
        PMIX_INFO_LOAD(res, key, list, PMIX_STRING);
        free(list);
    } else if (is_key(key, PMIX_QUERY_NAMESPACE_INFO)) {
        return nspace_info(res, key, q);
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
    } else if (is_key(key, PMIX_SERVER_URI)) {
        return server_uri_of(res, key, q);
    } else if (is_key(key, PMIX_QUERY_NUM_PSETS) || is_key(key, PMIX_QUERY_NUM_GROUPS)) {
        size_t zero = 0;
        PMIX_INFO_LOAD(res, key, &zero, PMIX_SIZE);
    } else if (is_key(key, PMIX_QUERY_SPAWN_SUPPORT)) {
        PMIX_INFO_LOAD(res, key, tern_srv_hooks.spawn == NULL ? "" : SPAWN_SUPPORT, PMIX_STRING);
    } else if (is_key(key, PMIX_QUERY_SUPPORTED_KEYS)) {
        PMIX_INFO_LOAD(res, key, SUPPORTED_KEYS, PMIX_STRING);
    } else if (is_key(key, PMIX_QUERY_PSET_NAMES) || is_key(key, PMIX_QUERY_GROUP_NAMES) ||
               is_key(key, PMIX_QUERY_DEBUG_SUPPORT)) {
        PMIX_INFO_LOAD(res, key, "", PMIX_STRING);
    } else {
        return false;
    }
    return true;
}

static size_t count_keys(const pmix_query_t *q)
{
    size_t nkeys = 0;
    while (q->keys != NULL && q->keys[nkeys] != NULL)
        nkeys++;
    return nkeys;
}

pmix_status_t tern_srv_query(pmix_proc_t *requester, pmix_query_t *queries, size_t nqueries,
                             pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    if (cbfunc == NULL || (queries == NULL && nqueries > 0))
        return PMIX_ERR_BAD_PARAM;
    size_t asked = 0, answered = 0;
    for (size_t i = 0; i < nqueries; i++)
        asked += count_keys(&queries[i]);
    /* one info per key at most; only the first `answered` are loaded and
     * handed over (PMIX_INFO_FREE destructs that many) */
    pmix_info_t *out = NULL;
    if (asked > 0) {
        PMIX_INFO_CREATE(out, asked);
        if (out == NULL)
            return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < nqueries; i++) {
        const pmix_query_t *q = &queries[i];
        for (size_t k = 0; q->keys != NULL && q->keys[k] != NULL; k++) {
            if (answer_key(&out[answered], q->keys[k], q, requester)) {
                answered++;
            } else {
                tern_srv_log(1,
                             "PMIx query %s from %s:%u: not answered (unknown key, or "
                             "a qualifier naming no namespace or node of ternrun's)",
                             q->keys[k], requester->nspace, (unsigned)requester->rank);
            }
        }
    }
    pmix_status_t st = answered == 0      ? PMIX_ERR_NOT_FOUND
                       : answered < asked ? PMIX_QUERY_PARTIAL_SUCCESS
                                          : PMIX_SUCCESS;
    if (answered == 0) {
        PMIX_INFO_FREE(out, asked);
        out = NULL;
    }
    if (tern_srv_answer_info(cbfunc, cbdata, st, out, answered) == 0)
        return PMIX_SUCCESS;
    PMIX_INFO_FREE(out, answered);
    return PMIX_ERR_OUT_OF_RESOURCE;
}
