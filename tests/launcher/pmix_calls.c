/*
 * pmix_calls: a raw PMIx client that checks the PMIx calls ternrun's server
 * answers beyond wire-up (pmix_probe checks wire-up, abort and deaths).
 *
 *   pmix_calls log            PMIx_Log: "log-stdout rank R" to stdout, "log-stderr rank R"
 *                             to stderr, one tagged ("stdout: ...") with
 *                             PMIX_LOG_TAG_OUTPUT, one to syslog; email -> NOT_SUPPORTED;
 *                             stdout + email -> PARTIAL_SUCCESS; email + stdout with
 *                             PMIX_LOG_ONCE -> success; a number to stdout -> BAD_PARAM
 *   pmix_calls query          after a fence, PMIx_Query_info: the namespaces (its
 *                             own), the proc table (every rank with this host's
 *                             name, a pid - its own where it is the rank - and a
 *                             running or connected state), the job size, no psets,
 *                             as 4 answers keyed and ordered as asked;
 *                             an unknown key with a known one -> PARTIAL_SUCCESS;
 *                             prints "ok query rank R"
 *   pmix_calls jobctl         3 ranks, after a fence: rank 0 sends SIGUSR1 to rank 1
 *                             (which prints "signal rank 1 got 10", finalizes) and
 *                             PMIX_JOB_CTRL_KILL to rank 2 (asleep); a checkpoint ->
 *                             NOT_SUPPORTED, a foreign namespace -> NOT_FOUND;
 *                             prints "ok jobctl rank 0"
 *   pmix_calls jobctl-fence   ranks >= 1 wait in a fence rank 0 never joins; rank 0
 *                             kills them all at once (PMIX_JOB_CTRL_KILL) and prints
 *                             "ok jobctl-fence rank 0"
 *   pmix_calls notify         >= 3 ranks register for a user event code, fence; rank 0
 *                             notifies it to rank 2 only (PMIX_RANGE_CUSTOM), then to
 *                             the namespace; every other rank waits (bounded) for the
 *                             namespace one and prints "notify rank R: custom N
 *                             namespace M" (its counts); rank 0 checks the statuses
 *   pmix_calls connect        every rank: PMIx_Connect / PMIx_Disconnect of the whole
 *                             job; ranks 0 and 1 build group "tern-probe-grp" with
 *                             PMIX_GROUP_ASSIGN_CONTEXT_ID and print "group rank R
 *                             context C", then destruct it; connecting to a proc of
 *                             another namespace must fail at once; "ok connect rank R"
 *
 * Every check prints "FAIL: ..." and makes the exit status 1; success prints
 * one "ok <what> rank R" line.
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <pmix.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/pmix_get.h"
#include "tests/pmix_query.h"

static int fence(void)
{
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence: %s", PMIx_Error_string(rc));
        return -1;
    }
    return 0;
}

static pmix_status_t log_one(const char *key, const char *msg, const char *key2,
                             const char *msg2, bool once, bool tag)
{
    pmix_info_t data[2], dirs[2];
    size_t nd = 0, ndirs = 0;
    PMIX_INFO_LOAD(&data[nd], key, msg, PMIX_STRING);
    nd++;
    if (key2 != NULL) {
        PMIX_INFO_LOAD(&data[nd], key2, msg2, PMIX_STRING);
        nd++;
    }
    if (once) {
        PMIX_INFO_LOAD(&dirs[ndirs], PMIX_LOG_ONCE, &once, PMIX_BOOL);
        ndirs++;
    }
    if (tag) {
        PMIX_INFO_LOAD(&dirs[ndirs], PMIX_LOG_TAG_OUTPUT, &tag, PMIX_BOOL);
        ndirs++;
    }
    pmix_status_t rc = PMIx_Log(data, nd, ndirs ? dirs : NULL, ndirs);
    for (size_t k = 0; k < nd; k++)
        PMIX_INFO_DESTRUCT(&data[k]);
    for (size_t k = 0; k < ndirs; k++)
        PMIX_INFO_DESTRUCT(&dirs[k]);
    return rc;
}

static void expect_log(pmix_status_t got, pmix_status_t want, const char *what)
{
    if (got != want)
        fail("PMIx_Log %s: %s, expected %s", what, PMIx_Error_string(got),
             PMIx_Error_string(want));
}

static int cmd_log(void)
{
    char out[64], err[64], tagged[64], sys[64];
    snprintf(out, sizeof(out), "log-stdout rank %u", (unsigned)me.rank);
    snprintf(err, sizeof(err), "log-stderr rank %u", (unsigned)me.rank);
    snprintf(tagged, sizeof(tagged), "log-tagged rank %u", (unsigned)me.rank);
    snprintf(sys, sizeof(sys), "tern pmix_calls log-syslog rank %u", (unsigned)me.rank);
    expect_log(log_one(PMIX_LOG_STDOUT, out, NULL, NULL, false, false), PMIX_SUCCESS, "stdout");
    expect_log(log_one(PMIX_LOG_STDERR, err, NULL, NULL, false, false), PMIX_SUCCESS, "stderr");
    expect_log(log_one(PMIX_LOG_STDOUT, tagged, NULL, NULL, false, true), PMIX_SUCCESS,
               "stdout, tagged");
    expect_log(log_one(PMIX_LOG_SYSLOG, sys, NULL, NULL, false, false), PMIX_SUCCESS, "syslog");
    expect_log(log_one(PMIX_LOG_EMAIL, "x", NULL, NULL, false, false), PMIX_ERR_NOT_SUPPORTED,
               "email");
    expect_log(log_one(PMIX_LOG_STDOUT, "log-partial", PMIX_LOG_EMAIL, "x", false, false),
               PMIX_ERR_PARTIAL_SUCCESS, "stdout + email");
    expect_log(log_one(PMIX_LOG_EMAIL, "x", PMIX_LOG_STDOUT, "log-once", true, false),
               PMIX_SUCCESS, "email + stdout, once");
    pmix_info_t num;
    int v = 7;
    PMIX_INFO_LOAD(&num, PMIX_LOG_STDOUT, &v, PMIX_INT);
    expect_log(PMIx_Log(&num, 1, NULL, 0), PMIX_ERR_BAD_PARAM, "a number to stdout");
    PMIX_INFO_DESTRUCT(&num);
    if (failures == 0)
        printf("ok log rank %u\n", (unsigned)me.rank);
    return failures ? 1 : 0;
}

/* the value of the q-th answer, which must be key, of type (PMIX_UNDEF:
 * checked by the caller) */
static const pmix_value_t *result(const pmix_info_t *info, size_t ninfo, size_t q, const char *key,
                                  pmix_data_type_t type)
{
    return query_result("PMIx_Query_info", info, ninfo, q, key, type);
}

static int cmd_query(void)
{
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0); /* every rank has connected */
    if (rc != PMIX_SUCCESS)
        fail("PMIx_Fence: %s", PMIx_Error_string(rc));
    pmix_query_t *q;
    PMIX_QUERY_CREATE(q, 4);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACES);
    PMIX_ARGV_APPEND(rc, q[1].keys, PMIX_QUERY_PROC_TABLE);
    PMIX_QUERY_QUALIFIERS_CREATE(&q[1], 1);
    PMIX_INFO_LOAD(&q[1].qualifiers[0], PMIX_NSPACE, me.nspace, PMIX_STRING);
    PMIX_ARGV_APPEND(rc, q[2].keys, PMIX_JOB_SIZE);
    query_refresh(&q[2]); /* a key the client holds: ternrun's answer is wanted */
    PMIX_ARGV_APPEND(rc, q[3].keys, PMIX_QUERY_NUM_PSETS);
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    rc = PMIx_Query_info(q, 4, &info, &ninfo);
    if (rc != PMIX_SUCCESS)
        fail("PMIx_Query_info: %s", PMIx_Error_string(rc));
    if (ninfo != 4)
        fail("PMIx_Query_info: %zu answers to 4 keys", ninfo);
    const pmix_value_t *v = result(info, ninfo, 0, PMIX_QUERY_NAMESPACES, PMIX_STRING);
    if (v == NULL || strstr(v->data.string, me.nspace) == NULL)
        fail("PMIX_QUERY_NAMESPACES: %s", v && v->type == PMIX_STRING ? v->data.string : "none");
    uint32_t size = (uint32_t)get_uint(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    v = result(info, ninfo, 1, PMIX_QUERY_PROC_TABLE, PMIX_DATA_ARRAY);
    if (v == NULL || v->data.darray->type != PMIX_PROC_INFO || v->data.darray->size != size) {
        fail("PMIX_QUERY_PROC_TABLE: no table of %u ranks", size);
    } else {
        const pmix_proc_info_t *pi = v->data.darray->array;
        char host[256] = "";
        gethostname(host, sizeof(host));
        for (uint32_t r = 0; r < size; r++) {
            if (pi[r].proc.rank != r || strcmp(pi[r].proc.nspace, me.nspace) != 0)
                fail("proc table entry %u names %s:%u", r, pi[r].proc.nspace, pi[r].proc.rank);
            if (pi[r].pid <= 0 || (r == me.rank && pi[r].pid != getpid()))
                fail("proc table: rank %u has pid %d (mine %d)", r, (int)pi[r].pid,
                     (int)getpid());
            if (pi[r].state != PMIX_PROC_STATE_RUNNING &&
                pi[r].state != PMIX_PROC_STATE_CONNECTED)
                fail("proc table: rank %u in state %s", r, PMIx_Proc_state_string(pi[r].state));
            if (pi[r].hostname == NULL || strcmp(pi[r].hostname, host) != 0)
                fail("proc table: rank %u on host %s", r, pi[r].hostname ? pi[r].hostname : "?");
            if (pi[r].executable_name == NULL ||
                strstr(pi[r].executable_name, program_invocation_short_name) == NULL)
                fail("proc table: rank %u runs %s", r,
                     pi[r].executable_name ? pi[r].executable_name : "?");
        }
    }
    v = result(info, ninfo, 2, PMIX_JOB_SIZE, PMIX_UINT32);
    if (v == NULL || v->data.uint32 != size)
        fail("PMIX_JOB_SIZE by query: not %u", size);
    v = result(info, ninfo, 3, PMIX_QUERY_NUM_PSETS, PMIX_SIZE);
    if (v == NULL || v->data.size != 0)
        fail("PMIX_QUERY_NUM_PSETS: not 0");
    PMIX_INFO_FREE(info, ninfo);
    PMIX_QUERY_FREE(q, 4);
    /* a key nobody knows, beside one ternrun answers */
    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACES);
    PMIX_ARGV_APPEND(rc, q[0].keys, "tern.no.such.query");
    info = NULL;
    ninfo = 0;
    rc = PMIx_Query_info(q, 1, &info, &ninfo);
    if (rc != PMIX_QUERY_PARTIAL_SUCCESS)
        fail("a known and an unknown key: %s, expected PMIX_QUERY_PARTIAL_SUCCESS",
             PMIx_Error_string(rc));
    PMIX_INFO_FREE(info, ninfo);
    PMIX_QUERY_FREE(q, 1);
    /* nobody leaves before every rank has read the proc table: a rank that
     * ended first would be in it as terminated (seen in a distcheck run) */
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS)
        fail("PMIx_Fence after the queries: %s", PMIx_Error_string(rc));
    if (failures == 0)
        printf("ok query rank %u\n", (unsigned)me.rank);
    return failures ? 1 : 0;
}

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
    (void)sig;
    got_usr1 = 1;
}

static pmix_status_t jobctl(const char *nspace, pmix_rank_t rank, const char *key, int sig)
{
    pmix_proc_t target;
    pmix_info_t dir;
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    bool yes = true;
    PMIX_LOAD_PROCID(&target, nspace, rank);
    if (strcmp(key, PMIX_JOB_CTRL_SIGNAL) == 0)
        PMIX_INFO_LOAD(&dir, key, &sig, PMIX_INT);
    else if (strcmp(key, PMIX_JOB_CTRL_CHECKPOINT) == 0)
        PMIX_INFO_LOAD(&dir, key, "ckpt-1", PMIX_STRING);
    else
        PMIX_INFO_LOAD(&dir, key, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Job_control(&target, 1, &dir, 1, &results, &nresults);
    PMIX_INFO_DESTRUCT(&dir);
    PMIX_INFO_FREE(results, nresults);
    return rc;
}

static int cmd_jobctl(void)
{
    if (me.rank == 1) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_usr1;
        sigaction(SIGUSR1, &sa, NULL);
    }
    if (fence() != 0)
        return 1;
    if (me.rank != 0) {
        /* rank 1 finalizes once SIGUSR1 came; rank 2 waits to be killed */
        for (int i = 0; i < 300 && !got_usr1; i++)
            usleep(100 * 1000);
        if (!got_usr1) {
            fail("rank %u was not signalled within 30 s", (unsigned)me.rank);
            return 1;
        }
        printf("signal rank %u got %d\n", (unsigned)me.rank, SIGUSR1);
        return 0;
    }
    pmix_status_t rc = jobctl(me.nspace, 1, PMIX_JOB_CTRL_SIGNAL, SIGUSR1);
    if (rc != PMIX_SUCCESS)
        fail("SIGUSR1 to rank 1: %s", PMIx_Error_string(rc));
    rc = jobctl(me.nspace, 2, PMIX_JOB_CTRL_KILL, 0);
    if (rc != PMIX_SUCCESS)
        fail("kill rank 2: %s", PMIx_Error_string(rc));
    rc = jobctl(me.nspace, 1, PMIX_JOB_CTRL_CHECKPOINT, 0);
    if (rc != PMIX_ERR_NOT_SUPPORTED)
        fail("checkpoint: %s, expected NOT-SUPPORTED", PMIx_Error_string(rc));
    rc = jobctl("tern-no-such-nspace", 0, PMIX_JOB_CTRL_SIGNAL, SIGUSR1);
    if (rc != PMIX_ERR_NOT_FOUND)
        fail("a foreign namespace: %s, expected NOT-FOUND", PMIx_Error_string(rc));
    if (failures == 0)
        printf("ok jobctl rank 0\n");
    return failures ? 1 : 0;
}

/* Ranks >= 1 wait in a fence rank 0 never joins; rank 0 kills them all at
 * once with PMIX_JOB_CTRL_KILL (their whole namespace but itself, one
 * target each) and must outlive them: ternrun ends cleanly, status 0. */
static int cmd_jobctl_fence(void)
{
    if (fence() != 0)
        return 1;
    if (me.rank != 0) {
        PMIx_Fence(NULL, 0, NULL, 0); /* never completes, or fails as the server drops us */
        for (int i = 0; i < 300; i++)
            usleep(100 * 1000);
        printf("FAIL: rank %u outlived its kill\n", (unsigned)me.rank);
        return 1;
    }
    long n = get_uint(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    usleep(200 * 1000); /* let them enter the fence */
    pmix_proc_t targets[64];
    pmix_info_t dir;
    bool yes = true;
    size_t nt = 0;
    for (long r = 1; r < n && nt < 64; r++, nt++) /* the macro names its target twice */
        PMIX_LOAD_PROCID(&targets[nt], me.nspace, (pmix_rank_t)r);
    PMIX_INFO_LOAD(&dir, PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Job_control(targets, nt, &dir, 1, &results, &nresults);
    PMIX_INFO_DESTRUCT(&dir);
    PMIX_INFO_FREE(results, nresults);
    if (rc != PMIX_SUCCESS)
        fail("kill ranks 1..%ld: %s", n - 1, PMIx_Error_string(rc));
    if (failures == 0)
        printf("ok jobctl-fence rank 0\n");
    return failures ? 1 : 0;
}

#define TEST_EVENT (PMIX_EXTERNAL_ERR_BASE - 17)
static _Atomic int note_custom, note_ns;

static void on_note(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)status, (void)results, (void)nresults;
    const char *which = "";
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], "tern.test.range") && info[i].value.type == PMIX_STRING)
            which = info[i].value.data.string;
    if (source != NULL && source->rank == 0 && PMIX_CHECK_NSPACE(source->nspace, me.nspace)) {
        if (strcmp(which, "custom") == 0)
            atomic_fetch_add(&note_custom, 1);
        else if (strcmp(which, "namespace") == 0)
            atomic_fetch_add(&note_ns, 1);
    }
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static pmix_status_t notify(pmix_data_range_t range, const char *which, pmix_rank_t only)
{
    pmix_info_t info[2];
    size_t n = 0;
    PMIX_INFO_LOAD(&info[n], "tern.test.range", which, PMIX_STRING);
    n++;
    pmix_proc_t target;
    pmix_data_array_t darray = {.type = PMIX_PROC, .size = 1, .array = &target};
    if (range == PMIX_RANGE_CUSTOM) {
        PMIX_LOAD_PROCID(&target, me.nspace, only);
        PMIX_INFO_LOAD(&info[n], PMIX_EVENT_CUSTOM_RANGE, &darray, PMIX_DATA_ARRAY);
        n++;
    }
    pmix_status_t rc = PMIx_Notify_event(TEST_EVENT, &me, range, info, n, NULL, NULL);
    for (size_t i = 0; i < n; i++)
        PMIX_INFO_DESTRUCT(&info[i]);
    return rc;
}

static int cmd_notify(void)
{
    pmix_status_t code = TEST_EVENT;
    pmix_status_t rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_note, NULL, NULL);
    if (rc < 0) {
        fail("PMIx_Register_event_handler: %s", PMIx_Error_string(rc));
        return 1;
    }
    if (fence() != 0)
        return 1;
    if (me.rank == 0) {
        rc = notify(PMIX_RANGE_CUSTOM, "custom", 2);
        if (rc != PMIX_SUCCESS)
            fail("PMIx_Notify_event to rank 2: %s", PMIx_Error_string(rc));
        rc = notify(PMIX_RANGE_NAMESPACE, "namespace", 0);
        if (rc != PMIX_SUCCESS)
            fail("PMIx_Notify_event to the namespace: %s", PMIx_Error_string(rc));
    } else {
        for (int i = 0; i < 100 && atomic_load(&note_ns) == 0; i++)
            usleep(100 * 1000);
    }
    printf("notify rank %u: custom %d namespace %d\n", (unsigned)me.rank,
           atomic_load(&note_custom), atomic_load(&note_ns));
    return fence() != 0 || failures ? 1 : 0;
}

static int cmd_connect(void)
{
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Connect(&all, 1, NULL, 0);
    if (rc != PMIX_SUCCESS)
        fail("PMIx_Connect of the job: %s", PMIx_Error_string(rc));
    rc = PMIx_Disconnect(&all, 1, NULL, 0);
    if (rc != PMIX_SUCCESS)
        fail("PMIx_Disconnect of the job: %s", PMIx_Error_string(rc));
    if (me.rank <= 1) {
        pmix_proc_t members[2];
        PMIX_LOAD_PROCID(&members[0], me.nspace, 0);
        PMIX_LOAD_PROCID(&members[1], me.nspace, 1);
        pmix_info_t dir;
        bool yes = true;
        PMIX_INFO_LOAD(&dir, PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        rc = PMIx_Group_construct("tern-probe-grp", members, 2, &dir, 1, &results, &nresults);
        PMIX_INFO_DESTRUCT(&dir);
        if (rc != PMIX_SUCCESS)
            fail("PMIx_Group_construct: %s", PMIx_Error_string(rc));
        long ctx = -1;
        for (size_t i = 0; i < nresults; i++)
            if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID) &&
                results[i].value.type == PMIX_SIZE)
                ctx = (long)results[i].value.data.size;
        PMIX_INFO_FREE(results, nresults);
        printf("group rank %u context %ld\n", (unsigned)me.rank, ctx);
        if (ctx <= 0)
            fail("no PMIX_GROUP_CONTEXT_ID for the group");
        rc = PMIx_Group_destruct("tern-probe-grp", NULL, 0);
        if (rc != PMIX_SUCCESS)
            fail("PMIx_Group_destruct: %s", PMIx_Error_string(rc));
    }
    if (me.rank == 0) {
        pmix_proc_t two[2];
        PMIX_LOAD_PROCID(&two[0], me.nspace, 0);
        PMIX_LOAD_PROCID(&two[1], "tern-no-such-nspace", 0);
        pmix_info_t tmo;
        int secs = 5;
        PMIX_INFO_LOAD(&tmo, PMIX_TIMEOUT, &secs, PMIX_INT);
        rc = PMIx_Connect(two, 2, &tmo, 1);
        PMIX_INFO_DESTRUCT(&tmo);
        if (rc == PMIX_SUCCESS)
            fail("PMIx_Connect with a proc of another namespace succeeded");
        else
            printf("foreign connect: %s\n", PMIx_Error_string(rc));
    }
    if (fence() != 0)
        return 1;
    if (failures == 0)
        printf("ok connect rank %u\n", (unsigned)me.rank);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    int rc;

    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_status_t st = PMIx_Init(&me, NULL, 0);
    if (st != PMIX_SUCCESS) {
        fprintf(stderr, "FAIL: PMIx_Init: %s\n", PMIx_Error_string(st));
        return 1;
    }
    if (strcmp(cmd, "log") == 0) {
        rc = cmd_log();
    } else if (strcmp(cmd, "query") == 0) {
        rc = cmd_query();
    } else if (strcmp(cmd, "jobctl") == 0) {
        rc = cmd_jobctl();
    } else if (strcmp(cmd, "jobctl-fence") == 0) {
        rc = cmd_jobctl_fence();
    } else if (strcmp(cmd, "notify") == 0) {
        rc = cmd_notify();
    } else if (strcmp(cmd, "connect") == 0) {
        rc = cmd_connect();
    } else {
        fprintf(stderr, "usage: pmix_calls log|query|jobctl|jobctl-fence|notify|connect\n");
        rc = 2;
    }
    PMIx_Finalize(NULL, 0);
    return rc;
}
