/*
 * pmix_probe: a raw PMIx client that checks what ternrun serves.
 *
 *   pmix_probe keys           job/rank keys, then Put/Commit/Fence/Get with peers
 *   pmix_probe pubsub         publish (rank 0) / lookup with PMIX_WAIT / unpublish /
 *                             lookup -> NOT_FOUND; PMIX_WAIT + PMIX_TIMEOUT -> TIMEOUT
 *   pmix_probe abort RANK ST [fence]
 *                             RANK calls PMIx_Abort(ST), the others sleep (bounded),
 *                             or with "fence" wait in a PMIx_Fence it never joins
 *   pmix_probe affinity       print "affinity RANK CPULIST" (sched_getaffinity)
 *   pmix_probe shm            create /dev/shm/tern-<nspace>-probe<rank> and leave it
 *   pmix_probe sleep SECS     print "ready RANK PID" after a fence, sleep (bounded);
 *                             a SIGTERM/INT/HUP/QUIT prints "signal rank R got NN"
 *   pmix_probe fail RANK      RANK kills itself with SIGKILL after a fence,
 *                             the others sleep (bounded)
 *   pmix_probe log            PMIx_Log: "log-stdout rank R" to stdout, "log-stderr rank R"
 *                             to stderr, one tagged ("stdout: ...") with
 *                             PMIX_LOG_TAG_OUTPUT, one to syslog; email -> NOT_SUPPORTED;
 *                             stdout + email -> PARTIAL_SUCCESS; email + stdout with
 *                             PMIX_LOG_ONCE -> success; a number to stdout -> BAD_PARAM
 *   pmix_probe query          after a fence, PMIx_Query_info: the namespaces (its
 *                             own), the proc table (every rank with this host's
 *                             name, a pid - its own where it is the rank - and a
 *                             running or connected state), the job size, no psets;
 *                             an unknown key with a known one -> PARTIAL_SUCCESS;
 *                             prints "ok query rank R"
 *   pmix_probe jobctl         3 ranks, after a fence: rank 0 sends SIGUSR1 to rank 1
 *                             (which prints "signal rank 1 got 10", finalizes) and
 *                             PMIX_JOB_CTRL_KILL to rank 2 (asleep); a checkpoint ->
 *                             NOT_SUPPORTED, a foreign namespace -> NOT_FOUND;
 *                             prints "ok jobctl rank 0"
 *   pmix_probe notify         >= 3 ranks register for a user event code, fence; rank 0
 *                             notifies it to rank 2 only (PMIX_RANGE_CUSTOM), then to
 *                             the namespace; every other rank waits (bounded) for the
 *                             namespace one and prints "notify rank R: custom N
 *                             namespace M" (its counts); rank 0 checks the statuses
 *   pmix_probe connect        every rank: PMIx_Connect / PMIx_Disconnect of the whole
 *                             job; ranks 0 and 1 build group "tern-probe-grp" with
 *                             PMIX_GROUP_ASSIGN_CONTEXT_ID and print "group rank R
 *                             context C", then destruct it; connecting to a proc of
 *                             another namespace must fail at once; "ok connect rank R"
 *   pmix_probe death RANK HOW every rank registers for the process-termination
 *                             events, fences, then RANK ends (HOW: finalize =
 *                             PMIx_Finalize and exit 0, nofinalize = exit 0
 *                             without it, exit3, kill = SIGKILL); the others
 *                             wait (bounded) for the event naming RANK and
 *                             print "event rank R: rank RANK code C (NAME) exit
 *                             code N"
 *
 * Every check prints "FAIL: ..." and makes the exit status 1; success prints
 * one "ok <what> rank R" line.
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <pmix.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/pmix_get.h"

static int init(void)
{
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);

    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "FAIL: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return -1;
    }
    return 0;
}

static void expect_uint(pmix_rank_t rank, const char *key, long want)
{
    long got = get_uint(rank, key);

    if (got != want) {
        fail("%s = %ld, expected %ld", key, got, want);
    }
}

static int fence(int collect)
{
    pmix_info_t info;
    pmix_status_t rc;
    bool flag = true;

    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, collect ? &info : NULL, collect ? 1 : 0);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence: %s", PMIx_Error_string(rc));
        return -1;
    }
    return 0;
}

static int cmd_keys(void)
{
    char host[256] = "", key[64], want[64], *s, *peers;
    long n = get_uint(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    pmix_value_t val, *v;
    size_t off = 0;

    if (n < 1) {
        fail("no usable PMIX_JOB_SIZE");
        return 1;
    }
    expect_uint(PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, n);
    expect_uint(PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, n);
    expect_uint(me.rank, PMIX_LOCAL_RANK, me.rank);
    expect_uint(me.rank, PMIX_NODE_RANK, me.rank);
    expect_uint(me.rank, PMIX_NODEID, 0);
    expect_uint(PMIX_RANK_WILDCARD, PMIX_NODEID, 0);

    peers = get_str(PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS);
    s = calloc(1, (size_t)n * 8 + 1);
    for (long i = 0; s != NULL && i < n; i++) {
        off += (size_t)sprintf(s + off, i ? ",%ld" : "%ld", i);
    }
    if (peers == NULL || s == NULL || strcmp(peers, s) != 0) {
        fail("PMIX_LOCAL_PEERS = '%s', expected '%s'", peers ? peers : "(null)", s ? s : "");
    }
    free(s);
    free(peers);

    gethostname(host, sizeof(host) - 1);
    s = get_str(me.rank, PMIX_HOSTNAME);
    if (s == NULL || strcmp(s, host) != 0) {
        fail("PMIX_HOSTNAME = '%s', expected '%s'", s ? s : "(null)", host);
    }
    free(s);
    s = get_str(PMIX_RANK_WILDCARD, PMIX_HOSTNAME);
    if (s == NULL || strcmp(s, host) != 0) {
        fail("job PMIX_HOSTNAME = '%s', expected '%s'", s ? s : "(null)", host);
    }
    free(s);

    /* modex: every rank puts a key, fences with data collection, reads all */
    snprintf(want, sizeof(want), "card-of-%u", (unsigned)me.rank);
    PMIX_VALUE_LOAD(&val, want, PMIX_STRING);
    if (PMIx_Put(PMIX_GLOBAL, "probe.card", &val) != PMIX_SUCCESS ||
        PMIx_Commit() != PMIX_SUCCESS) {
        fail("PMIx_Put/Commit failed");
    }
    PMIX_VALUE_DESTRUCT(&val);
    if (fence(1) != 0) {
        return 1;
    }
    for (long peer = 0; peer < n; peer++) {
        snprintf(key, sizeof(key), "probe.card");
        snprintf(want, sizeof(want), "card-of-%ld", peer);
        v = get((pmix_rank_t)peer, key);
        if (v == NULL) {
            continue;
        }
        if (v->type != PMIX_STRING || strcmp(v->data.string, want) != 0) {
            fail("peer %ld's probe.card is not '%s'", peer, want);
        }
        PMIX_VALUE_RELEASE(v);
    }
    if (failures == 0) {
        printf("ok keys rank %u size %ld\n", (unsigned)me.rank, n);
    }
    return failures ? 1 : 0;
}

/* wait: 0 no PMIX_WAIT, > 0 PMIX_WAIT, and PMIX_TIMEOUT (seconds) if > 1 */
static pmix_status_t lookup(const char *key, int wait, char *out, size_t outlen)
{
    pmix_pdata_t pd;
    pmix_info_t info[2];
    pmix_status_t rc;
    bool flag = true;
    int timeout = wait - 1;
    size_t ninfo = wait > 1 ? 2 : wait > 0 ? 1 : 0;

    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, key);
    PMIX_INFO_LOAD(&info[0], PMIX_WAIT, &flag, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    rc = PMIx_Lookup(&pd, 1, ninfo ? info : NULL, ninfo);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc == PMIX_SUCCESS) {
        if (pd.value.type == PMIX_STRING && pd.value.data.string != NULL) {
            snprintf(out, outlen, "%s", pd.value.data.string);
        } else {
            snprintf(out, outlen, "(type %s)", PMIx_Data_type_string(pd.value.type));
        }
    }
    PMIX_PDATA_DESTRUCT(&pd);
    return rc;
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
    snprintf(sys, sizeof(sys), "tern pmix_probe log-syslog rank %u", (unsigned)me.rank);
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

/* the value of key in the PMIX_QUERY_RESULTS answers (in any of them: a
 * server may answer some queries itself and pass the others on) */
static const pmix_value_t *result(const pmix_info_t *info, size_t ninfo, size_t q,
                                  const char *key)
{
    (void)q;
    for (size_t i = 0; i < ninfo; i++) {
        if (strcmp(info[i].key, PMIX_QUERY_RESULTS) != 0 ||
            info[i].value.type != PMIX_DATA_ARRAY || info[i].value.data.darray == NULL ||
            info[i].value.data.darray->type != PMIX_INFO)
            continue;
        const pmix_data_array_t *d = info[i].value.data.darray;
        const pmix_info_t *res = d->array;
        for (size_t k = 0; k < d->size; k++)
            if (strcmp(res[k].key, key) == 0)
                return &res[k].value;
    }
    return NULL;
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
    PMIX_ARGV_APPEND(rc, q[3].keys, PMIX_QUERY_NUM_PSETS);
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    rc = PMIx_Query_info(q, 4, &info, &ninfo);
    if (rc != PMIX_SUCCESS)
        fail("PMIx_Query_info: %s", PMIx_Error_string(rc));
    const pmix_value_t *v = result(info, ninfo, 0, PMIX_QUERY_NAMESPACES);
    if (v == NULL || v->type != PMIX_STRING || strstr(v->data.string, me.nspace) == NULL)
        fail("PMIX_QUERY_NAMESPACES: %s", v && v->type == PMIX_STRING ? v->data.string : "none");
    uint32_t size = (uint32_t)get_uint(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    v = result(info, ninfo, 1, PMIX_QUERY_PROC_TABLE);
    if (v == NULL || v->type != PMIX_DATA_ARRAY || v->data.darray->type != PMIX_PROC_INFO ||
        v->data.darray->size != size) {
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
            if (pi[r].executable_name == NULL || strstr(pi[r].executable_name, "pmix_probe") == NULL)
                fail("proc table: rank %u runs %s", r,
                     pi[r].executable_name ? pi[r].executable_name : "?");
        }
    }
    v = result(info, ninfo, 2, PMIX_JOB_SIZE);
    if (v == NULL || v->type != PMIX_UINT32 || v->data.uint32 != size)
        fail("PMIX_JOB_SIZE by query: not %u", size);
    v = result(info, ninfo, 3, PMIX_QUERY_NUM_PSETS);
    if (v == NULL || v->type != PMIX_SIZE || v->data.size != 0)
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
    if (failures == 0)
        printf("ok query rank %u\n", (unsigned)me.rank);
    return failures ? 1 : 0;
}

static int cmd_pubsub(void)
{
    const char *key = "probe-service";
    char got[128] = "";
    pmix_status_t rc;

    if (me.rank == 0) {
        pmix_info_t info;

        /* let the others start waiting first: exercises the deferred answer */
        usleep(300 * 1000);
        PMIX_INFO_LOAD(&info, key, "tcp://probe:1234", PMIX_STRING);
        rc = PMIx_Publish(&info, 1);
        if (rc != PMIX_SUCCESS) {
            fail("PMIx_Publish: %s", PMIx_Error_string(rc));
        }
        rc = PMIx_Publish(&info, 1);
        if (rc == PMIX_SUCCESS) {
            fail("publishing '%s' twice succeeded", key);
        }
        PMIX_INFO_DESTRUCT(&info);
    }
    rc = lookup(key, 1, got, sizeof(got));
    if (rc != PMIX_SUCCESS || strcmp(got, "tcp://probe:1234") != 0) {
        fail("lookup with PMIX_WAIT: %s, value '%s'", PMIx_Error_string(rc), got);
    }
    if (fence(0) != 0) {
        return 1;
    }
    if (me.rank == 0) {
        char *keys[] = {(char *)key, NULL};

        rc = PMIx_Unpublish(keys, NULL, 0);
        if (rc != PMIX_SUCCESS) {
            fail("PMIx_Unpublish: %s", PMIx_Error_string(rc));
        }
    }
    if (fence(0) != 0) {
        return 1;
    }
    rc = lookup(key, 0, got, sizeof(got));
    if (rc != PMIX_ERR_NOT_FOUND) {
        fail("lookup after unpublish answered %s, expected %s", PMIx_Error_string(rc),
             PMIx_Error_string(PMIX_ERR_NOT_FOUND));
    }
    rc = lookup("probe-never-published", 0, got, sizeof(got));
    if (rc != PMIX_ERR_NOT_FOUND) {
        fail("lookup of a missing key answered %s", PMIx_Error_string(rc));
    }
    /* PMIX_WAIT with PMIX_TIMEOUT 1 s on a key nobody publishes */
    rc = lookup("probe-never-published", 2, got, sizeof(got));
    if (rc != PMIX_ERR_TIMEOUT) {
        fail("waiting lookup with a 1 s timeout answered %s, expected %s",
             PMIx_Error_string(rc), PMIx_Error_string(PMIX_ERR_TIMEOUT));
    }
    if (failures == 0) {
        printf("ok pubsub rank %u\n", (unsigned)me.rank);
    }
    return failures ? 1 : 0;
}

static void bounded_sleep(int secs)
{
    for (int i = 0; i < secs * 10; i++) {
        usleep(100 * 1000);
    }
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
    if (fence(0) != 0)
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
    if (fence(0) != 0)
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
    return fence(0) != 0 || failures ? 1 : 0;
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
    if (fence(0) != 0)
        return 1;
    if (failures == 0)
        printf("ok connect rank %u\n", (unsigned)me.rank);
    return failures ? 1 : 0;
}

static int cmd_abort(int who, int status, bool in_fence)
{
    if (fence(0) != 0) {
        return 1;
    }
    printf("ready %u %ld\n", (unsigned)me.rank, (long)getpid());
    fflush(stdout);
    if ((int)me.rank == who) {
        PMIx_Abort(status, "probe abort test", NULL, 0);
        /* PMIx_Abort returned: the launcher must kill us anyway */
        bounded_sleep(60);
        return 99;
    }
    if (in_fence) {
        fence(0); /* never completes: the aborting rank does not come */
    } else {
        bounded_sleep(60);
    }
    printf("FAIL: rank %u outlived the abort\n", (unsigned)me.rank);
    return 98;
}

static int cmd_affinity(void)
{
    cpu_set_t set;
    char list[1024] = "";
    size_t off = 0;

    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        fail("sched_getaffinity: %s", strerror(errno));
        return 1;
    }
    for (int c = 0; c < CPU_SETSIZE && off < sizeof(list) - 8; c++) {
        if (CPU_ISSET(c, &set)) {
            off += (size_t)snprintf(list + off, sizeof(list) - off, off ? ",%d" : "%d", c);
        }
    }
    printf("affinity %u %s\n", (unsigned)me.rank, list);
    return 0;
}

static int cmd_shm(void)
{
    char path[512];
    int fd;

    snprintf(path, sizeof(path), "/dev/shm/tern-%s-probe%u", me.nspace, (unsigned)me.rank);
    fd = open(path, O_CREAT | O_RDWR | O_EXCL, 0600);
    if (fd < 0) {
        fail("cannot create %s: %s", path, strerror(errno));
        return 1;
    }
    close(fd);
    printf("created %s\n", path);
    return 0;
}

static char signal_line[64];

/* async-signal-safe: report which signal reached this rank, then exit */
static void on_signal(int sig)
{
    char line[96];
    size_t len = strlen(signal_line);
    ssize_t n;

    memcpy(line, signal_line, len);
    line[len++] = (char)('0' + sig / 10);
    line[len++] = (char)('0' + sig % 10);
    line[len++] = '\n';
    n = write(STDOUT_FILENO, line, len);
    (void)n;
    _exit(128 + sig);
}

static int cmd_sleep(int secs)
{
    struct sigaction sa;
    const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

    snprintf(signal_line, sizeof(signal_line), "signal rank %u got ", (unsigned)me.rank);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        sigaction(sigs[i], &sa, NULL);
    }
    if (fence(0) != 0) {
        return 1;
    }
    printf("ready %u %ld\n", (unsigned)me.rank, (long)getpid());
    fflush(stdout);
    bounded_sleep(secs);
    return 0;
}

static int cmd_fail(int who)
{
    if (fence(0) != 0) {
        return 1;
    }
    printf("ready %u %ld\n", (unsigned)me.rank, (long)getpid());
    fflush(stdout);
    if ((int)me.rank == who) {
        raise(SIGKILL);
    }
    bounded_sleep(60);
    return 0;
}

static const pmix_status_t death_codes[] = {
    PMIX_EVENT_PROC_TERMINATED,   PMIX_ERR_PROC_TERM_WO_SYNC,  PMIX_ERR_EXIT_NONZERO_TERM,
    PMIX_ERR_PROC_ABORTED_BY_SIG, PMIX_ERR_PROC_KILLED_BY_CMD, PMIX_ERR_PROC_REQUESTED_ABORT,
    PMIX_ERR_PROC_ABORTED,
};
static pmix_rank_t death_rank;
static _Atomic int death_seen;   /* 1 once the event about death_rank arrived */
static _Atomic int death_status; /* written before death_seen is set (release) */
static _Atomic int death_exit = -1;

static void on_death(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t *results, size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    bool about_it = false;
    int code = -1;

    (void)id, (void)source, (void)results, (void)nresults;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC &&
            PMIX_CHECK_NSPACE(info[i].value.data.proc->nspace, me.nspace) &&
            info[i].value.data.proc->rank == death_rank) {
            about_it = true;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) && info[i].value.type == PMIX_INT) {
            code = info[i].value.data.integer;
        }
    }
    if (about_it && !atomic_load(&death_seen)) {
        atomic_store(&death_status, status);
        atomic_store(&death_exit, code);
        atomic_store_explicit(&death_seen, 1, memory_order_release);
    }
    if (cbfunc != NULL) {
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
    }
}

static int cmd_death(int who, const char *how)
{
    pmix_status_t rc;

    death_rank = (pmix_rank_t)who;
    rc = PMIx_Register_event_handler((pmix_status_t *)death_codes,
                                     sizeof(death_codes) / sizeof(death_codes[0]), NULL, 0,
                                     on_death, NULL, NULL);
    if (rc < 0) {
        fail("PMIx_Register_event_handler: %s", PMIx_Error_string(rc));
        return 1;
    }
    if (fence(0) != 0) {
        return 1;
    }
    if ((int)me.rank == who) {
        fflush(stdout);
        if (strcmp(how, "finalize") == 0) {
            PMIx_Finalize(NULL, 0);
            _exit(0);
        } else if (strcmp(how, "nofinalize") == 0) {
            _exit(0);
        } else if (strcmp(how, "exit3") == 0) {
            _exit(3);
        } else if (strcmp(how, "kill") == 0) {
            raise(SIGKILL);
        }
        fail("unknown way to end: %s", how);
        return 1;
    }
    for (int i = 0; i < 200 && !atomic_load_explicit(&death_seen, memory_order_acquire); i++) {
        usleep(100 * 1000);
    }
    if (!atomic_load_explicit(&death_seen, memory_order_acquire)) {
        fail("no termination event about rank %d within 20 s", who);
        return 1;
    }
    printf("event rank %u: rank %d code %d (%s) exit code %d\n", (unsigned)me.rank, who,
           atomic_load(&death_status), PMIx_Error_string(atomic_load(&death_status)),
           atomic_load(&death_exit));
    return 0;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    int rc;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (init() != 0) {
        return 1;
    }
    if (strcmp(cmd, "keys") == 0) {
        rc = cmd_keys();
    } else if (strcmp(cmd, "pubsub") == 0) {
        rc = cmd_pubsub();
    } else if (strcmp(cmd, "abort") == 0 && argc > 3) {
        rc = cmd_abort(atoi(argv[2]), atoi(argv[3]), argc > 4 && strcmp(argv[4], "fence") == 0);
    } else if (strcmp(cmd, "affinity") == 0) {
        rc = cmd_affinity();
    } else if (strcmp(cmd, "shm") == 0) {
        rc = cmd_shm();
    } else if (strcmp(cmd, "sleep") == 0 && argc > 2) {
        rc = cmd_sleep(atoi(argv[2]));
    } else if (strcmp(cmd, "fail") == 0 && argc > 2) {
        rc = cmd_fail(atoi(argv[2]));
    } else if (strcmp(cmd, "connect") == 0) {
        rc = cmd_connect();
    } else if (strcmp(cmd, "notify") == 0) {
        rc = cmd_notify();
    } else if (strcmp(cmd, "jobctl") == 0) {
        rc = cmd_jobctl();
    } else if (strcmp(cmd, "query") == 0) {
        rc = cmd_query();
    } else if (strcmp(cmd, "log") == 0) {
        rc = cmd_log();
    } else if (strcmp(cmd, "death") == 0 && argc > 3) {
        rc = cmd_death(atoi(argv[2]), argv[3]);
    } else {
        fprintf(stderr, "usage: pmix_probe keys|pubsub|abort RANK STATUS|affinity|shm|"
                        "sleep SECS|fail RANK|death RANK HOW|log|query|jobctl|notify|connect\n");
        rc = 2;
    }
    PMIx_Finalize(NULL, 0);
    return rc;
}
