/*
 * pmix_clients: PMIx clients that ask ternrun what OpenPMIx 4.2's example
 * programs ask (hello, debugger, tool, fault), and read the answers the way
 * those programs do, plus odd queries a launcher must survive.
 *
 * PMIx 4.2 clients read a query's answer flat: one pmix_info_t per key
 * answered, its key the query key, in the order asked (the examples read
 * info[0] and count the results).
 *
 * hello, debugger and tool ask each query twice: as the example does (the
 * point: the answer's shape), then with PMIX_QUERY_REFRESH_CACHE, the
 * documented way to have the host, ternrun's server_query.c, answer rather
 * than the client library's store (with OpenPMIx 4.2.2 both reach ternrun:
 * tests/pmix_query.h says why); the same checks apply to both.
 *
 *   pmix_clients hello      PMIx_Query_info_nb of PMIX_QUERY_NUM_PSETS and
 *                           PMIX_QUERY_PSET_NAMES: exactly 2 results, those
 *                           keys in that order, 0 and "", each printable
 *                           with PMIx_Data_print; "ok hello rank R"
 *   pmix_clients debugger   PMIX_QUERY_SPAWN_SUPPORT and PMIX_QUERY_DEBUG_SUPPORT:
 *                           2 strings; PMIX_QUERY_NAMESPACES: 1 string naming
 *                           the job; "ok debugger rank R"
 *   pmix_clients tool       PMIX_QUERY_NAMESPACE_INFO: info[0] is an array of
 *                           infos, each an array of string infos, one of them
 *                           {PMIX_NSPACE = the job, PMIX_CMD_LINE = this
 *                           program ...}; PMIX_SERVER_URI with a PMIX_HOSTNAME
 *                           qualifier (this host): a URI; PMIX_JOB_SIZE with a
 *                           PMIX_NSPACE qualifier: the job size; "ok tool rank R"
 *   pmix_clients odd        queries that reach the host (PMIX_QUERY_REFRESH_CACHE)
 *                           with unknown keys, an empty key, qualifiers of the
 *                           wrong type, an unknown namespace or host, many
 *                           keys: each answered with a status (no crash, no
 *                           hang), and a plain query still answered after them;
 *                           "ok odd rank R"
 *   pmix_clients fault      like OpenPMIx's fault example: a handler for
 *                           PMIX_ERR_PROC_ABORTED and PMIX_ERR_JOB_TERMINATED
 *                           (PMIX_EVENT_RETURN_OBJECT, PMIX_NSPACE directive),
 *                           a fence, then rank 0 exits 1; the others wait (20 s
 *                           at most) and print "fault rank R: rank A code C exit
 *                           code E" from the event, then end normally
 *
 * Every check prints "FAIL: ..." and makes the exit status 1.
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <pmix.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/pmix_get.h"
#include "tests/pmix_query.h"

/* ---- answers ------------------------------------------------------------ */

/* One PMIx_Query_info_nb answer, as the examples take it: the status and a
 * copy of the infos (PMIX_INFO_XFER), ready when done is set. */
struct answer {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    pmix_status_t status;
    pmix_info_t *info;
    size_t ninfo;
};

static void on_answer(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                      pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    struct answer *a = cbdata;
    pthread_mutex_lock(&a->lock);
    a->status = status;
    if (ninfo > 0 && info != NULL) {
        PMIX_INFO_CREATE(a->info, ninfo);
        a->ninfo = ninfo;
        for (size_t n = 0; n < ninfo; n++)
            PMIX_INFO_XFER(&a->info[n], &info[n]);
    }
    if (release_fn != NULL)
        release_fn(release_cbdata);
    a->done = true;
    pthread_cond_signal(&a->cond);
    pthread_mutex_unlock(&a->lock);
}

/* q's answer (free with answer_free), or NULL (and a failure) when there
 * was none within 30 s */
static struct answer *ask(pmix_query_t *q, size_t nq, const char *what)
{
    struct answer *a = calloc(1, sizeof(*a));
    if (a == NULL) {
        fail("%s: no memory", what);
        return NULL;
    }
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->cond, NULL);
    pmix_status_t rc = PMIx_Query_info_nb(q, nq, on_answer, a);
    if (rc != PMIX_SUCCESS) {
        fail("%s: PMIx_Query_info_nb: %s", what, PMIx_Error_string(rc));
        free(a);
        return NULL;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&a->lock);
    while (!a->done)
        if (pthread_cond_timedwait(&a->cond, &a->lock, &until) == ETIMEDOUT)
            break;
    bool done = a->done;
    pthread_mutex_unlock(&a->lock);
    if (!done) {
        fail("%s: no answer within 30 s", what); /* the callback may still come: keep a */
        return NULL;
    }
    return a;
}

static void answer_free(struct answer *a)
{
    PMIX_INFO_FREE(a->info, a->ninfo);
    pthread_mutex_destroy(&a->lock);
    pthread_cond_destroy(&a->cond);
    free(a);
}

/* a query of the keys (NULL-terminated), with one qualifier when qkey,
 * and PMIX_QUERY_REFRESH_CACHE when refreshed */
static pmix_query_t *query(const char *const *keys, const char *qkey, const void *qval,
                           pmix_data_type_t qtype, bool refreshed)
{
    pmix_query_t *q;
    pmix_status_t rc;
    PMIX_QUERY_CREATE(q, 1);
    for (size_t k = 0; keys[k] != NULL; k++)
        PMIX_ARGV_APPEND(rc, q[0].keys, keys[k]);
    (void)rc;
    if (qkey != NULL) {
        PMIX_QUERY_QUALIFIERS_CREATE(&q[0], 1);
        PMIX_INFO_LOAD(&q[0].qualifiers[0], qkey, qval, qtype);
    }
    if (refreshed)
        query_refresh(q);
    return q;
}

/* the answer is exactly these keys, in this order, of these types */
static bool expect_flat(const struct answer *a, const char *what, const char *const *keys,
                        const pmix_data_type_t *types)
{
    return query_expect_flat(what, a->status, a->info, a->ninfo, keys, types);
}

/* "WHAT" or "WHAT (refreshed)" into buf */
static const char *label(char *buf, size_t len, const char *what, bool refreshed)
{
    snprintf(buf, len, "%s%s", what, refreshed ? " (refreshed)" : "");
    return buf;
}

static void done_line(const char *what)
{
    if (failures == 0)
        printf("ok %s rank %u\n", what, (unsigned)me.rank);
}

/* ---- hello, debugger, tool ---------------------------------------------- */

static void hello_once(bool refreshed)
{
    static const char *const keys[] = {PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES, NULL};
    static const pmix_data_type_t types[] = {PMIX_SIZE, PMIX_STRING};
    char what[64];
    label(what, sizeof(what), "psets", refreshed);
    pmix_query_t *q = query(keys, NULL, NULL, PMIX_UNDEF, refreshed);
    struct answer *a = ask(q, 1, what);
    if (a != NULL) {
        if (expect_flat(a, what, keys, types)) {
            if (a->info[0].value.data.size != 0 || a->info[1].value.data.string == NULL ||
                a->info[1].value.data.string[0] != '\0')
                fail("%s: %zu, \"%s\", expected none", what, a->info[0].value.data.size,
                     a->info[1].value.data.string ? a->info[1].value.data.string : "(null)");
            /* as hello does: the pmix_value_t as the data (so the text is
             * not the value); it crashed on the array of the old answer */
            for (size_t n = 0; n < a->ninfo; n++) {
                char *text = NULL;
                pmix_status_t rc =
                    PMIx_Data_print(&text, NULL, &a->info[n].value, a->info[n].value.type);
                if (rc != PMIX_SUCCESS)
                    fail("PMIx_Data_print of %s: %s", a->info[n].key, PMIx_Error_string(rc));
                else
                    printf("rank %u: %s %s\n", (unsigned)me.rank, a->info[n].key, text);
                free(text);
            }
        }
        answer_free(a);
    }
    PMIX_QUERY_FREE(q, 1);
}

static int cmd_hello(void)
{
    hello_once(false);
    hello_once(true);
    done_line("hello");
    return failures ? 1 : 0;
}

static void debugger_once(bool refreshed)
{
    static const char *const keys[] = {PMIX_QUERY_SPAWN_SUPPORT, PMIX_QUERY_DEBUG_SUPPORT, NULL};
    static const pmix_data_type_t types[] = {PMIX_STRING, PMIX_STRING};
    char what[64];
    label(what, sizeof(what), "capabilities", refreshed);
    pmix_query_t *q = query(keys, NULL, NULL, PMIX_UNDEF, refreshed);
    struct answer *a = ask(q, 1, what);
    if (a != NULL) {
        if (expect_flat(a, what, keys, types)) {
            if (strstr(a->info[0].value.data.string, PMIX_WDIR) == NULL)
                fail("%s: spawn support \"%s\" does not name %s", what,
                     a->info[0].value.data.string, PMIX_WDIR);
            if (a->info[1].value.data.string[0] != '\0')
                fail("%s: debug support \"%s\", expected none", what, a->info[1].value.data.string);
        }
        answer_free(a);
    }
    PMIX_QUERY_FREE(q, 1);

    static const char *const nskeys[] = {PMIX_QUERY_NAMESPACES, NULL};
    static const pmix_data_type_t nstypes[] = {PMIX_STRING};
    label(what, sizeof(what), "namespaces", refreshed);
    q = query(nskeys, NULL, NULL, PMIX_UNDEF, refreshed);
    a = ask(q, 1, what);
    if (a != NULL) {
        if (expect_flat(a, what, nskeys, nstypes) &&
            strstr(a->info[0].value.data.string, me.nspace) == NULL)
            fail("%s: \"%s\" do not name %s", what, a->info[0].value.data.string, me.nspace);
        answer_free(a);
    }
    PMIX_QUERY_FREE(q, 1);
}

static int cmd_debugger(void)
{
    debugger_once(false);
    debugger_once(true);
    done_line("debugger");
    return failures ? 1 : 0;
}

/* PMIX_QUERY_NAMESPACE_INFO, element by element: this job's must carry
 * this program's command line */
struct nsinfo_seen {
    const char *what;
    bool mine;
};

static void on_nsinfo(const char *ns, const char *cmd, void *arg)
{
    struct nsinfo_seen *seen = arg;
    if (ns == NULL || strcmp(ns, me.nspace) != 0)
        return;
    seen->mine = true;
    if (cmd == NULL || strstr(cmd, "pmix_clients tool") == NULL)
        fail("%s of %s: command line \"%s\"", seen->what, ns, cmd ? cmd : "(none)");
}

static void tool_once(bool refreshed)
{
    static const char *const nskeys[] = {PMIX_QUERY_NAMESPACE_INFO, NULL};
    static const pmix_data_type_t nstypes[] = {PMIX_DATA_ARRAY};
    char what[64];
    label(what, sizeof(what), "namespace info", refreshed);
    pmix_query_t *q = query(nskeys, NULL, NULL, PMIX_UNDEF, refreshed);
    struct answer *a = ask(q, 1, what);
    if (a != NULL) {
        struct nsinfo_seen seen = {.what = what};
        if (expect_flat(a, what, nskeys, nstypes) &&
            query_nsinfo(what, &a->info[0].value, on_nsinfo, &seen) && !seen.mine)
            fail("%s does not name %s", what, me.nspace);
        answer_free(a);
    }
    PMIX_QUERY_FREE(q, 1);

    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    static const char *const urikeys[] = {PMIX_SERVER_URI, NULL};
    static const pmix_data_type_t uritypes[] = {PMIX_STRING};
    label(what, sizeof(what), "server URI", refreshed);
    q = query(urikeys, PMIX_HOSTNAME, host, PMIX_STRING, refreshed);
    a = ask(q, 1, what);
    if (a != NULL) {
        if (expect_flat(a, what, urikeys, uritypes) &&
            strstr(a->info[0].value.data.string, "://") == NULL)
            fail("%s: \"%s\"", what, a->info[0].value.data.string);
        answer_free(a);
    }
    PMIX_QUERY_FREE(q, 1);

    uint32_t size = (uint32_t)get_uint(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    static const char *const sizekeys[] = {PMIX_JOB_SIZE, NULL};
    static const pmix_data_type_t sizetypes[] = {PMIX_UINT32};
    label(what, sizeof(what), "job size", refreshed);
    q = query(sizekeys, PMIX_NSPACE, me.nspace, PMIX_STRING, refreshed);
    a = ask(q, 1, what);
    if (a != NULL) {
        if (expect_flat(a, what, sizekeys, sizetypes) && a->info[0].value.data.uint32 != size)
            fail("%s by query %u, expected %u", what, a->info[0].value.data.uint32, size);
        answer_free(a);
    }
    PMIX_QUERY_FREE(q, 1);
}

static int cmd_tool(void)
{
    tool_once(false);
    tool_once(true);
    done_line("tool");
    return failures ? 1 : 0;
}

/* ---- odd queries -------------------------------------------------------- */

/* an odd query, refreshed (it is ternrun's answer that matters): no crash,
 * no hang, and the status want */
static void odd(const char *what, const char *const *keys, const char *qkey, const void *qval,
                pmix_data_type_t qtype, pmix_status_t want)
{
    pmix_query_t *q = query(keys, qkey, qval, qtype, true);
    struct answer *a = ask(q, 1, what);
    if (a != NULL) {
        if (a->status != want)
            fail("%s: %s, expected %s", what, PMIx_Error_string(a->status),
                 PMIx_Error_string(want));
        printf("rank %u: %s: %s, %zu result(s)\n", (unsigned)me.rank, what,
               PMIx_Error_string(a->status), a->ninfo);
        answer_free(a);
    }
    PMIX_QUERY_FREE(q, 1);
}

static int cmd_odd(void)
{
    static const char *const unknown[] = {"tern.no.such.query", NULL};
    static const char *const empty[] = {"", NULL};
    static const char *const ptable[] = {PMIX_QUERY_PROC_TABLE, NULL};
    static const char *const nsinfo[] = {PMIX_QUERY_NAMESPACE_INFO, NULL};
    static const char *const size[] = {PMIX_JOB_SIZE, NULL};
    static const char *const uri[] = {PMIX_SERVER_URI, NULL};
    static const char *const mixed[] = {PMIX_QUERY_NAMESPACES, "tern.no.such.query", NULL};
    int seven = 7;
    odd("an unknown key", unknown, NULL, NULL, PMIX_UNDEF, PMIX_ERR_NOT_FOUND);
    odd("an empty key", empty, NULL, NULL, PMIX_UNDEF, PMIX_ERR_NOT_FOUND);
    odd("a known and an unknown key", mixed, NULL, NULL, PMIX_UNDEF, PMIX_QUERY_PARTIAL_SUCCESS);
    odd("the proc table of an unknown namespace", ptable, PMIX_NSPACE, "tern-no-such-ns",
        PMIX_STRING, PMIX_ERR_NOT_FOUND);
    odd("the proc table, a number as namespace", ptable, PMIX_NSPACE, &seven, PMIX_INT,
        PMIX_ERR_NOT_FOUND);
    odd("the namespace info of an unknown namespace", nsinfo, PMIX_NSPACE, "tern-no-such-ns",
        PMIX_STRING, PMIX_ERR_NOT_FOUND);
    odd("the job size, a number as namespace", size, PMIX_NSPACE, &seven, PMIX_INT,
        PMIX_ERR_NOT_FOUND);
    odd("the server URI of another host", uri, PMIX_HOSTNAME, "tern-no-such-host", PMIX_STRING,
        PMIX_ERR_NOT_FOUND);
    odd("the server URI, a number as host", uri, PMIX_HOSTNAME, &seven, PMIX_INT,
        PMIX_ERR_NOT_FOUND);

    /* many keys, known and not, in one query */
    const char *many[65];
    for (int k = 0; k < 64; k++)
        many[k] = k % 2 ? PMIX_QUERY_NAMESPACE_INFO : "tern.no.such.query";
    many[64] = NULL;
    odd("64 keys", many, NULL, NULL, PMIX_UNDEF, PMIX_QUERY_PARTIAL_SUCCESS);

    /* the server is still there and answers */
    static const char *const ns[] = {PMIX_QUERY_NAMESPACES, NULL};
    static const pmix_data_type_t nstypes[] = {PMIX_STRING};
    pmix_query_t *q = query(ns, NULL, NULL, PMIX_UNDEF, true);
    struct answer *a = ask(q, 1, "namespaces after the odd queries");
    if (a != NULL) {
        expect_flat(a, "namespaces after the odd queries", ns, nstypes);
        answer_free(a);
    }
    PMIX_QUERY_FREE(q, 1);
    done_line("odd");
    return failures ? 1 : 0;
}

/* ---- fault -------------------------------------------------------------- */

struct fault_seen {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool seen;
    pmix_status_t status;
    pmix_rank_t rank;
    int exit_code;
};

static void on_fault(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t *results, size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)source, (void)results, (void)nresults;
    struct fault_seen *f = NULL;
    pmix_rank_t rank = PMIX_RANK_UNDEF;
    int code = -1;
    for (size_t n = 0; n < ninfo; n++) {
        if (PMIX_CHECK_KEY(&info[n], PMIX_EVENT_RETURN_OBJECT))
            f = info[n].value.data.ptr;
        else if (PMIX_CHECK_KEY(&info[n], PMIX_EXIT_CODE) && info[n].value.type == PMIX_INT)
            code = info[n].value.data.integer;
        else if (PMIX_CHECK_KEY(&info[n], PMIX_EVENT_AFFECTED_PROC) &&
                 info[n].value.type == PMIX_PROC && info[n].value.data.proc != NULL)
            rank = info[n].value.data.proc->rank;
    }
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    if (f == NULL)
        return;
    pthread_mutex_lock(&f->lock);
    if (!f->seen) {
        f->seen = true;
        f->status = status;
        f->rank = rank;
        f->exit_code = code;
        pthread_cond_signal(&f->cond);
    }
    pthread_mutex_unlock(&f->lock);
}

static int cmd_fault(void)
{
    static struct fault_seen f = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                  .cond = PTHREAD_COND_INITIALIZER};
    pmix_status_t codes[2] = {PMIX_ERR_PROC_ABORTED, PMIX_ERR_JOB_TERMINATED};
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_RETURN_OBJECT, &f, PMIX_POINTER);
    PMIX_INFO_LOAD(&info[1], PMIX_NSPACE, me.nspace, PMIX_STRING);
    /* blocking (no callback): returns the reference, or an error */
    pmix_status_t rc = PMIx_Register_event_handler(codes, 2, info, 2, on_fault, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc < 0) {
        fail("PMIx_Register_event_handler: %s", PMIx_Error_string(rc));
        return 1;
    }
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence: %s", PMIx_Error_string(rc));
        return 1;
    }
    if (me.rank == 0) {
        fflush(stdout);
        _exit(1);
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&f.lock);
    while (!f.seen)
        if (pthread_cond_timedwait(&f.cond, &f.lock, &until) == ETIMEDOUT)
            break;
    bool seen = f.seen;
    pthread_mutex_unlock(&f.lock);
    if (!seen) {
        fail("no PMIX_ERR_PROC_ABORTED / PMIX_ERR_JOB_TERMINATED within 20 s");
        return 1;
    }
    printf("fault rank %u: rank %d code %d (%s) exit code %d\n", (unsigned)me.rank,
           f.rank == PMIX_RANK_UNDEF ? -1 : (int)f.rank, f.status, PMIx_Error_string(f.status),
           f.exit_code);
    return 0;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("FAIL: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    int status;
    if (strcmp(cmd, "hello") == 0) {
        status = cmd_hello();
    } else if (strcmp(cmd, "debugger") == 0) {
        status = cmd_debugger();
    } else if (strcmp(cmd, "tool") == 0) {
        status = cmd_tool();
    } else if (strcmp(cmd, "odd") == 0) {
        status = cmd_odd();
    } else if (strcmp(cmd, "fault") == 0) {
        status = cmd_fault();
    } else {
        fprintf(stderr, "usage: pmix_clients hello|debugger|tool|odd|fault\n");
        status = 2;
    }
    PMIx_Finalize(NULL, 0);
    return status;
}
