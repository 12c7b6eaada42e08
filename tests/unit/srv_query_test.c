/*
 * Unit test of ternrun's PMIx query answers (pmix/server/server_query.c)
 * without a PMIx server or a job: the module's .query is called directly,
 * with the hooks of a fake host running two namespaces, and its answer
 * (given from a thread of its own) is awaited, bounded.
 *
 *   - every key's answer (one info, keyed by the query key): the values the
 *     host's hooks give.  The launcher tests ask through the PMIx client
 *     library, which may answer some keys from its own store (OpenPMIx
 *     after 4.2.2: tests/pmix_query.h); here nothing stands between the
 *     query and server_query.c
 *   - PMIX_SERVER_URI: the first tern_srv_module_set_uri is kept and a
 *     second one refused (replacing it freed a string a query could still
 *     be reading)
 *   - PMIX_QUERY_NAMESPACE_INFO: one {PMIX_NSPACE, PMIX_CMD_LINE} array per
 *     namespace, the command line the host's cmdline hook gives; with a
 *     PMIX_NSPACE qualifier only that namespace, without asking the host
 *     for the list of all (an unknown one: not answered); when the array
 *     of one namespace cannot be allocated (the build wraps malloc: the Nth
 *     pmix_data_array_t fails), the key is not answered, rather than
 *     answered with the others only
 */
#include "pmix/server/server_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/unit/expect.h"

/* ---- allocation failures --------------------------------------------------- */

/* > 0: the allocation of the countdown-th pmix_data_array_t from now fails
 * (the module's PMIX_DATA_ARRAY_CREATE; linked with --wrap=malloc and
 * --wrap=calloc: the compiler may turn the macro's malloc(24) + memset into
 * calloc(24, 1), and does in the ASan build) */
static int array_countdown;

static bool fail_array(size_t bytes)
{
    if (bytes == sizeof(pmix_data_array_t) && array_countdown > 0 && --array_countdown == 0) {
        errno = ENOMEM;
        return true;
    }
    return false;
}

void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_malloc(size_t n)
{
    return fail_array(n) ? NULL : __real_malloc(n);
}

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size)
{
    bool whole = size != 0 && n <= SIZE_MAX / size; /* else calloc refuses it itself */
    return whole && fail_array(n * size) ? NULL : __real_calloc(n, size);
}

/* ---- the fake host -------------------------------------------------------- */

static const char *const nspaces[] = {"ns-a", "ns-b"};
static const int nranks[] = {2, 1};

static int host_procs(void *ctx, const char *nspace, struct tern_srv_proc *out, int max)
{
    (void)ctx;
    for (size_t k = 0; k < 2; k++) {
        if (strcmp(nspace, nspaces[k]) != 0)
            continue;
        int n = nranks[k] < max ? nranks[k] : max;
        for (int i = 0; i < n; i++)
            out[i] = (struct tern_srv_proc){.rank = (pmix_rank_t)i,
                                            .pid = 100 + i,
                                            .exe = "prog",
                                            .state = PMIX_PROC_STATE_RUNNING};
        return n;
    }
    return -1;
}

static int nspaces_asked; /* host_nspaces calls */

static void host_nspaces(void *ctx, char *buf, size_t len)
{
    (void)ctx;
    nspaces_asked++;
    snprintf(buf, len, "%s,%s", nspaces[0], nspaces[1]);
}

static const char *const cmdlines[] = {"prog-a x : prog-a2 y", "prog-b"};

static int host_cmdline(void *ctx, const char *nspace, char *buf, size_t len)
{
    (void)ctx;
    for (size_t k = 0; k < 2; k++) {
        if (strcmp(nspace, nspaces[k]) == 0) {
            snprintf(buf, len, "%s", cmdlines[k]);
            return 0;
        }
    }
    return -1;
}

/* ---- asking --------------------------------------------------------------- */

/* One answer, held until answer_done (the module frees it then). */
struct answer {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    pmix_status_t status;
    pmix_info_t *info;
    size_t ninfo;
    pmix_release_cbfunc_t release;
    void *release_data;
};

static void on_answer(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                      pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    struct answer *a = cbdata;
    pthread_mutex_lock(&a->lock);
    a->status = status;
    a->info = info;
    a->ninfo = ninfo;
    a->release = release_fn;
    a->release_data = release_cbdata;
    a->done = true;
    pthread_cond_signal(&a->cond);
    pthread_mutex_unlock(&a->lock);
}

static pmix_server_module_t *module;

/* the one key `key` (qualifier qkey = qval when qkey) asked of the
 * module, the fail_array-th pmix_data_array_t it allocates failing (0:
 * none); false (and a failure) when no answer came within 10 s */
static bool ask_failing(struct answer *a, const char *key, const char *qkey, const char *qval,
                        int fail_array)
{
    pmix_proc_t requester;
    pmix_query_t q;
    char *keys[] = {(char *)key, NULL};
    pmix_info_t qual;

    *a = (struct answer){.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    PMIX_LOAD_PROCID(&requester, "a-tool", 0);
    PMIX_QUERY_CONSTRUCT(&q);
    q.keys = keys;
    if (qkey != NULL) {
        PMIX_INFO_LOAD(&qual, qkey, qval, PMIX_STRING);
        q.qualifiers = &qual;
        q.nqual = 1;
    }
    array_countdown = fail_array; /* the answer is built inside .query */
    pmix_status_t rc = module->query(&requester, &q, 1, on_answer, a);
    array_countdown = 0;
    if (qkey != NULL)
        PMIX_INFO_DESTRUCT(&qual);
    if (rc != PMIX_SUCCESS) {
        EXPECT(rc == PMIX_SUCCESS, "query %s: %s", key, PMIx_Error_string(rc));
        return false;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&a->lock);
    while (!a->done && pthread_cond_timedwait(&a->cond, &a->lock, &until) != ETIMEDOUT)
        ;
    bool done = a->done;
    pthread_mutex_unlock(&a->lock);
    EXPECT(done, "query %s: no answer within 10 s", key);
    return done;
}

static bool ask(struct answer *a, const char *key, const char *qkey, const char *qval)
{
    return ask_failing(a, key, qkey, qval, 0);
}

static void answer_done(struct answer *a)
{
    if (a->release != NULL)
        a->release(a->release_data);
}

/* ---- the cases ------------------------------------------------------------ */

/* key (qualifier qkey = qval when qkey) answers one info, keyed key, of
 * type; returns its value for more checks (valid until answer_done), or
 * NULL */
static const pmix_value_t *expect_one(struct answer *a, const char *key, const char *qkey,
                                      const char *qval, pmix_data_type_t type)
{
    if (!ask(a, key, qkey, qval))
        return NULL;
    if (a->status != PMIX_SUCCESS || a->ninfo != 1 || !PMIX_CHECK_KEY(&a->info[0], key) ||
        a->info[0].value.type != type) {
        EXPECT(false, "%s%s%s: %s, %zu result(s), the first %s of type %s (expected %s)", key,
               qkey ? " of " : "", qkey ? qval : "", PMIx_Error_string(a->status), a->ninfo,
               a->ninfo ? a->info[0].key : "-",
               a->ninfo ? PMIx_Data_type_string(a->info[0].value.type) : "-",
               PMIx_Data_type_string(type));
        answer_done(a);
        return NULL;
    }
    return &a->info[0].value;
}

static void expect_string(const char *key, const char *qkey, const char *qval, const char *want)
{
    struct answer a;
    const pmix_value_t *v = expect_one(&a, key, qkey, qval, PMIX_STRING);
    if (v == NULL)
        return;
    EXPECT(strcmp(v->data.string, want) == 0, "%s: \"%s\", expected \"%s\"", key, v->data.string,
           want);
    answer_done(&a);
}

static void expect_size(const char *key, size_t want)
{
    struct answer a;
    const pmix_value_t *v = expect_one(&a, key, NULL, NULL, PMIX_SIZE);
    if (v == NULL)
        return;
    EXPECT(v->data.size == want, "%s: %zu, expected %zu", key, v->data.size, want);
    answer_done(&a);
}

static void expect_job_size(const char *qval, uint32_t want)
{
    struct answer a;
    const pmix_value_t *v =
        expect_one(&a, PMIX_JOB_SIZE, qval ? PMIX_NSPACE : NULL, qval, PMIX_UINT32);
    if (v == NULL)
        return;
    EXPECT(v->data.uint32 == want, "job size of %s: %u, expected %u", qval ? qval : "(none)",
           v->data.uint32, want);
    answer_done(&a);
}

static void test_each_key(void)
{
    struct answer a;

    expect_string(PMIX_QUERY_NAMESPACES, NULL, NULL, "ns-a,ns-b");
    expect_job_size(NULL, 2); /* a requester of no namespace: the first job's */
    expect_job_size("ns-a", 2);
    expect_job_size("ns-b", 1);
    expect_size(PMIX_QUERY_NUM_PSETS, 0);
    expect_size(PMIX_QUERY_NUM_GROUPS, 0);
    expect_string(PMIX_QUERY_PSET_NAMES, NULL, NULL, "");
    expect_string(PMIX_QUERY_GROUP_NAMES, NULL, NULL, "");
    expect_string(PMIX_QUERY_DEBUG_SUPPORT, NULL, NULL, "");
    expect_string(PMIX_QUERY_SPAWN_SUPPORT, NULL, NULL, ""); /* the fake host cannot spawn */

    const pmix_value_t *v = expect_one(&a, PMIX_QUERY_SUPPORTED_KEYS, NULL, NULL, PMIX_STRING);
    if (v != NULL) {
        static const char *const keys[] = {PMIX_QUERY_NAMESPACES,
                                           PMIX_QUERY_NAMESPACE_INFO,
                                           PMIX_QUERY_PROC_TABLE,
                                           PMIX_QUERY_LOCAL_PROC_TABLE,
                                           PMIX_JOB_SIZE,
                                           PMIX_SERVER_URI,
                                           PMIX_QUERY_NUM_PSETS,
                                           PMIX_QUERY_PSET_NAMES,
                                           PMIX_QUERY_NUM_GROUPS,
                                           PMIX_QUERY_GROUP_NAMES,
                                           PMIX_QUERY_SPAWN_SUPPORT,
                                           PMIX_QUERY_DEBUG_SUPPORT,
                                           PMIX_QUERY_SUPPORTED_KEYS};
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
            EXPECT(strstr(v->data.string, keys[k]) != NULL, "supported keys \"%s\" lack %s",
                   v->data.string, keys[k]);
        answer_done(&a);
    }

    static const char *const tables[] = {PMIX_QUERY_PROC_TABLE, PMIX_QUERY_LOCAL_PROC_TABLE};
    for (size_t t = 0; t < 2; t++) {
        v = expect_one(&a, tables[t], PMIX_NSPACE, "ns-a", PMIX_DATA_ARRAY);
        if (v == NULL)
            continue;
        const pmix_data_array_t *d = v->data.darray;
        EXPECT(d != NULL && d->type == PMIX_PROC_INFO && d->size == 2,
               "%s of ns-a: not 2 proc infos", tables[t]);
        for (size_t i = 0; d != NULL && d->type == PMIX_PROC_INFO && i < d->size; i++) {
            const pmix_proc_info_t *pi = &((const pmix_proc_info_t *)d->array)[i];
            EXPECT(PMIX_CHECK_NSPACE(pi->proc.nspace, "ns-a") && pi->proc.rank == i &&
                       pi->pid == (pid_t)(100 + i) && pi->state == PMIX_PROC_STATE_RUNNING &&
                       pi->hostname != NULL && strcmp(pi->hostname, "host-a") == 0 &&
                       pi->executable_name != NULL && strcmp(pi->executable_name, "prog") == 0,
                   "%s entry %zu: %s:%u pid %d state %d host %s exe %s", tables[t], i,
                   pi->proc.nspace, (unsigned)pi->proc.rank, (int)pi->pid, (int)pi->state,
                   pi->hostname ? pi->hostname : "-",
                   pi->executable_name ? pi->executable_name : "-");
        }
        answer_done(&a);
    }
}

static void test_server_uri_once(void)
{
    struct answer a;

    if (!ask(&a, PMIX_SERVER_URI, NULL, NULL))
        return;
    EXPECT(a.status == PMIX_ERR_NOT_FOUND, "URI before it is set: %s", PMIx_Error_string(a.status));
    answer_done(&a);

    tern_srv_module_set_uri("tcp4://127.0.0.1:1111");
    tern_srv_module_set_uri("tcp4://127.0.0.1:2222"); /* refused */
    if (!ask(&a, PMIX_SERVER_URI, NULL, NULL))
        return;
    EXPECT(a.status == PMIX_SUCCESS && a.ninfo == 1, "URI: %s, %zu results",
           PMIx_Error_string(a.status), a.ninfo);
    if (a.ninfo == 1) {
        const pmix_value_t *v = &a.info[0].value;
        EXPECT(v->type == PMIX_STRING && strcmp(v->data.string, "tcp4://127.0.0.1:1111") == 0,
               "URI answered: %s, not the first one set",
               v->type == PMIX_STRING ? v->data.string : "(not a string)");
    }
    answer_done(&a);
}

/* "NSPACE=CMDLINE" of each element of a PMIX_QUERY_NAMESPACE_INFO answer,
 * ';'-separated into buf; false when the answer has another shape */
static bool nsinfo_names(const struct answer *a, char *buf, size_t len)
{
    buf[0] = '\0';
    if (a->ninfo != 1 || a->info[0].value.type != PMIX_DATA_ARRAY)
        return false;
    const pmix_data_array_t *outer = a->info[0].value.data.darray;
    if (outer == NULL || outer->type != PMIX_INFO)
        return false;
    const pmix_info_t *el = outer->array;
    size_t off = 0;
    for (size_t n = 0; n < outer->size; n++) {
        const pmix_data_array_t *in = el[n].value.data.darray;
        if (el[n].value.type != PMIX_DATA_ARRAY || in == NULL || in->type != PMIX_INFO ||
            in->size != 2)
            return false;
        const pmix_info_t *it = in->array;
        if (!PMIX_CHECK_KEY(&it[0], PMIX_NSPACE) || it[0].value.type != PMIX_STRING ||
            !PMIX_CHECK_KEY(&it[1], PMIX_CMD_LINE) || it[1].value.type != PMIX_STRING)
            return false;
        off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s=%s", n ? ";" : "",
                                it[0].value.data.string, it[1].value.data.string);
    }
    return true;
}

static void test_nsinfo_whole_or_nothing(void)
{
    struct answer a;
    char names[256];

    if (!ask(&a, PMIX_QUERY_NAMESPACE_INFO, NULL, NULL))
        return;
    EXPECT(a.status == PMIX_SUCCESS && nsinfo_names(&a, names, sizeof(names)) &&
               strcmp(names, "ns-a=prog-a x : prog-a2 y;ns-b=prog-b") == 0,
           "namespace info: %s, namespaces \"%s\"", PMIx_Error_string(a.status), names);
    answer_done(&a);

    /* the outer array (1st), ns-a's (2nd), ns-b's (3rd) cannot be had */
    for (int nth = 1; nth <= 3; nth++) {
        if (!ask_failing(&a, PMIX_QUERY_NAMESPACE_INFO, NULL, NULL, nth))
            return;
        nsinfo_names(&a, names, sizeof(names));
        EXPECT(a.status == PMIX_ERR_NOT_FOUND && a.ninfo == 0,
               "namespace info, array %d not allocated: %s, %zu result(s) (namespaces \"%s\"), "
               "expected not answered",
               nth, PMIx_Error_string(a.status), a.ninfo, names);
        answer_done(&a);
    }
}

static void test_nsinfo_qualified(void)
{
    struct answer a;
    char names[256];

    nspaces_asked = 0;
    if (!ask(&a, PMIX_QUERY_NAMESPACE_INFO, PMIX_NSPACE, "ns-b"))
        return;
    EXPECT(a.status == PMIX_SUCCESS && nsinfo_names(&a, names, sizeof(names)) &&
               strcmp(names, "ns-b=prog-b") == 0,
           "namespace info of ns-b: %s, \"%s\"", PMIx_Error_string(a.status), names);
    answer_done(&a);
    if (!ask(&a, PMIX_QUERY_NAMESPACE_INFO, PMIX_NSPACE, "ns-none"))
        return;
    EXPECT(a.status == PMIX_ERR_NOT_FOUND && a.ninfo == 0,
           "namespace info of an unknown namespace: %s, %zu result(s)", PMIx_Error_string(a.status),
           a.ninfo);
    answer_done(&a);
    EXPECT(nspaces_asked == 0,
           "the host was asked for all its namespaces %d time(s) to describe "
           "the one of the qualifier",
           nspaces_asked);
}

int main(void)
{
    struct tern_srv_hooks hooks = {
        .log_prefix = "srv_query_test",
        .nspace = "ns-a",
        .hostname = "host-a",
        .procs = host_procs,
        .nspaces = host_nspaces,
        .cmdline = host_cmdline,
    };
    module = tern_srv_module_setup(&hooks);
    if (module == NULL || module->query == NULL) {
        fprintf(stderr, "FAIL: no query in the server module\n");
        return 1;
    }
    test_each_key();
    test_server_uri_once();
    test_nsinfo_whole_or_nothing();
    test_nsinfo_qualified();
    if (failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
