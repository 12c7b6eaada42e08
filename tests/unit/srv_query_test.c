/*
 * Unit test of ternrun's PMIx query answers (pmix-shim/server_query.c)
 * without a PMIx server or a job: the module's .query is called directly,
 * with the hooks of a fake host running two namespaces, and its answer
 * (given from a thread of its own) is awaited, bounded.
 *
 *   - PMIX_SERVER_URI: the first tern_srv_module_set_uri is kept and a
 *     second one refused (replacing it freed a string a query could still
 *     be reading)
 */
#include "pmix-shim/server_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/unit/expect.h"

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

static void host_nspaces(void *ctx, char *buf, size_t len)
{
    (void)ctx;
    snprintf(buf, len, "%s,%s", nspaces[0], nspaces[1]);
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
 * module; false (and a failure) when no answer came within 10 s */
static bool ask(struct answer *a, const char *key, const char *qkey, const char *qval)
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
    pmix_status_t rc = module->query(&requester, &q, 1, on_answer, a);
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

static void answer_done(struct answer *a)
{
    if (a->release != NULL)
        a->release(a->release_data);
}

/* ---- the cases ------------------------------------------------------------ */

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

int main(void)
{
    struct tern_srv_hooks hooks = {
        .log_prefix = "srv_query_test",
        .nspace = "ns-a",
        .hostname = "host-a",
        .procs = host_procs,
        .nspaces = host_nspaces,
    };
    module = tern_srv_module_setup(&hooks);
    if (module == NULL || module->query == NULL) {
        fprintf(stderr, "FAIL: no query in the server module\n");
        return 1;
    }
    test_server_uri_once();
    if (failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
