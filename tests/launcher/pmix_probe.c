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
 *   pmix_probe oversub        print "oversubscribed RANK true|false" (the job's
 *                             PMIX_NODE_OVERSUBSCRIBED)
 *   pmix_probe shm            create /dev/shm/tern-<nspace>-probe<rank> and leave it
 *   pmix_probe sleep SECS     print "ready RANK PID" after a fence, sleep (bounded);
 *                             a SIGTERM/INT/HUP/QUIT prints "signal rank R got NN"
 *   pmix_probe fail RANK      RANK kills itself with SIGKILL after a fence,
 *                             the others sleep (bounded)
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
        /* never completes: the aborting rank does not come.  ternrun
         * takes the ranks it ends out of the PMIx server before it signals
         * them, so the fence may return an error first: wait to be killed
         * all the same */
        fence(0);
    }
    bounded_sleep(60);
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

static int cmd_oversub(void)
{
    pmix_value_t *v = get(PMIX_RANK_WILDCARD, PMIX_NODE_OVERSUBSCRIBED);

    if (v == NULL) {
        return 1;
    }
    if (v->type != PMIX_BOOL) {
        fail("PMIX_NODE_OVERSUBSCRIBED has type %s", PMIx_Data_type_string(v->type));
    } else {
        printf("oversubscribed %u %s\n", (unsigned)me.rank, v->data.flag ? "true" : "false");
    }
    PMIX_VALUE_RELEASE(v);
    return failures ? 1 : 0;
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
    } else if (strcmp(cmd, "oversub") == 0) {
        rc = cmd_oversub();
    } else if (strcmp(cmd, "shm") == 0) {
        rc = cmd_shm();
    } else if (strcmp(cmd, "sleep") == 0 && argc > 2) {
        rc = cmd_sleep(atoi(argv[2]));
    } else if (strcmp(cmd, "fail") == 0 && argc > 2) {
        rc = cmd_fail(atoi(argv[2]));
    } else if (strcmp(cmd, "death") == 0 && argc > 3) {
        rc = cmd_death(atoi(argv[2]), argv[3]);
    } else {
        fprintf(stderr, "usage: pmix_probe keys|pubsub|abort RANK STATUS|affinity|oversub|shm|"
                        "sleep SECS|fail RANK|death RANK HOW\n");
        rc = 2;
    }
    PMIx_Finalize(NULL, 0);
    return rc;
}
