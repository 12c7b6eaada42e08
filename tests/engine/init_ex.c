/*
 * init_ex: tern_init_ex's parameters (include/tern/core.h), under a
 * launcher at 2 ranks (init_ex.sh runs it with TERN_NUM_WORKERS=1,
 * TERN_WAIT_MODE=spin and TERN_NETMODS=nosuch in the environment).
 *   1. bad parameters: each refused with TERN_ERR_INVALID_PARAM (the
 *      address wire-up: TERN_ERR_UNSUPPORTED) naming the field, and no
 *      context made (a later call succeeds);
 *   2. tern_init_ex with 3 workers, netmods "tcp" and block waits: the
 *      fields win over the variables, which are not read (TERN_NETMODS's
 *      bad value is no error): the peer's VC is tcp, two more workers can
 *      be taken and not a third, and an idle tern_worker_wait sleeps in
 *      epoll_wait (another thread sees it there in /proc, then wakes it:
 *      no timing involved; a spinning wait is never seen there and the
 *      check fails when the bound of the wait, 20 s, has passed).
 * Prints "ok rank R" when every check passed.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tests/launcher/tern_check.h"

/* tern_init_ex must fail with want, its message containing what */
static void expect_bad(const tern_init_params_t *p, tern_status_t want, const char *what,
                       const char *label)
{
    tern_context_t *ctx = NULL;
    tern_status_t st = tern_init_ex(p, &ctx);
    CHECK(st == want, "%s: tern_init_ex returned %d (%s), expected %d", label, st,
          tern_strerror(st), want);
    CHECK(strstr(tern_last_error(), what) != NULL, "%s: the message does not name %s", label, what);
    CHECK(ctx == NULL, "%s: a context was returned", label);
}

static void bad_params(void)
{
    const tern_init_params_t ok = {.struct_size = sizeof(tern_init_params_t)};
    tern_init_params_t p;
    p = ok, p.struct_size = 0;
    expect_bad(&p, TERN_ERR_INVALID_PARAM, "struct_size", "struct_size 0");
    p = ok, p.struct_size = sizeof(p) - sizeof(void *);
    expect_bad(&p, TERN_ERR_INVALID_PARAM, "struct_size", "struct_size too small");
    p = ok, p.struct_size = sizeof(p) + 8;
    expect_bad(&p, TERN_ERR_INVALID_PARAM, "struct_size", "struct_size too large");
    p = ok, p.fields = 1ull << 20;
    expect_bad(&p, TERN_ERR_INVALID_PARAM, "fields", "unknown field bit");
    p = ok, p.fields = TERN_INIT_F_WAIT_MODE, p.wait_mode = 3;
    expect_bad(&p, TERN_ERR_INVALID_PARAM, "wait_mode=3: allowed 0 .. 2", "wait_mode 3");
    p = ok, p.fields = TERN_INIT_F_WAIT_MODE, p.wait_mode = -1;
    expect_bad(&p, TERN_ERR_INVALID_PARAM, "wait_mode=-1", "wait_mode -1");
    p = ok, p.fields = TERN_INIT_F_WORKERS, p.num_workers = 0;
    expect_bad(&p, TERN_ERR_INVALID_PARAM, "num_workers=0 out of range: allowed 1 .. 64",
               "num_workers 0");
    p = ok, p.fields = TERN_INIT_F_WORKERS, p.num_workers = 65;
    expect_bad(&p, TERN_ERR_INVALID_PARAM, "num_workers=65", "num_workers 65");
    p = ok, p.fields = TERN_INIT_F_NETMODS, p.netmods = NULL;
    expect_bad(&p, TERN_ERR_INVALID_PARAM, "params->netmods is NULL", "netmods NULL");
    p = ok, p.fields = TERN_INIT_F_NETMODS, p.netmods = "tcp,nosuch";
    expect_bad(&p, TERN_ERR_INVALID_PARAM, "params->netmods=\"tcp,nosuch\": no netmod \"nosuch\"",
               "netmods nosuch");
    p = ok, p.fields = TERN_INIT_F_WIREUP, p.wireup = 7;
    expect_bad(&p, TERN_ERR_INVALID_PARAM, "wireup=7", "wireup 7");
    /* the address wire-up needs a rank of a size and the job's name */
    p = ok, p.fields = TERN_INIT_F_WIREUP, p.wireup = TERN_WIREUP_ADDRESS;
    expect_bad(&p, TERN_ERR_INVALID_PARAM, "params->rank=0 of params->size=0", "wireup address");
    p.size = 2, p.rank = 2;
    expect_bad(&p, TERN_ERR_INVALID_PARAM, "params->rank=2 of params->size=2", "address rank 2 of 2");
    p.rank = 1, p.job = "";
    expect_bad(&p, TERN_ERR_INVALID_PARAM, "params->job is empty", "address empty job");
    /* a bad field among good ones: refused all the same */
    p = ok, p.fields = TERN_INIT_F_WORKERS | TERN_INIT_F_WAIT_MODE, p.num_workers = 2,
    p.wait_mode = 9;
    expect_bad(&p, TERN_ERR_INVALID_PARAM, "wait_mode=9", "good workers, bad wait_mode");
    tern_status_t st = tern_init_ex(&ok, NULL);
    CHECK(st == TERN_ERR_INVALID_PARAM && strstr(tern_last_error(), "NULL context pointer"),
          "tern_init_ex with a NULL context pointer: %d", st);
}

/* The thread sleeping in tern_worker_wait, seen from another one. */
typedef struct watch {
    tern_worker_t *w;
    pid_t tid; /* the waiting thread */
    bool seen; /* it was seen in epoll_wait */
} watch_t;

static bool in_epoll(pid_t tid)
{
    char path[64], chan[64] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", (int)tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    if (fgets(chan, sizeof(chan), f) == NULL)
        chan[0] = '\0';
    fclose(f);
    return strstr(chan, "epoll") != NULL;
}

static void *watcher(void *arg)
{
    watch_t *wa = arg;
    const struct timespec ms = {0, 1000000};
    /* bounded: 20000 looks 1 ms apart at least; the waiter gives up after
     * 20 s anyway */
    for (int i = 0; i < 20000 && !wa->seen; i++) {
        wa->seen = in_epoll(wa->tid);
        if (!wa->seen)
            nanosleep(&ms, NULL);
    }
    tern_worker_signal(wa->w);
    return NULL;
}

static void overrides(void)
{
    tern_init_params_t p = {.struct_size = sizeof(p),
                            .fields = TERN_INIT_F_WORKERS | TERN_INIT_F_NETMODS |
                                      TERN_INIT_F_WAIT_MODE | TERN_INIT_F_WIREUP,
                            .num_workers = 3,
                            .netmods = "tcp",
                            .wait_mode = TERN_WAIT_BLOCK,
                            .wireup = TERN_WIREUP_PMIX};
    tern_context_t *ctx = NULL;
    tern_status_t st = tern_init_ex(&p, &ctx);
    CHECK(st == TERN_OK, "tern_init_ex with 3 workers, netmods tcp, block waits");
    if (st != TERN_OK)
        return;
    int me = tern_rank(ctx), n = tern_size(ctx);
    const char *nm = tern_peer_netmod(ctx, (me + 1) % n);
    CHECK(n == 2 && nm != NULL && strcmp(nm, "tcp") == 0,
          "params->netmods \"tcp\": the peer's VC is on %s", nm ? nm : "(none)");
    tern_worker_t *w1 = NULL, *w2 = NULL, *w3 = NULL;
    CHECK(tern_worker_create(ctx, &w1) == TERN_OK, "worker 1 of params->num_workers 3");
    CHECK(tern_worker_create(ctx, &w2) == TERN_OK, "worker 2 of params->num_workers 3");
    st = tern_worker_create(ctx, &w3);
    CHECK(st == TERN_ERR_NO_RESOURCE, "a fourth worker: %d, expected TERN_ERR_NO_RESOURCE", st);
    /* the wait mode: an idle wait on worker 1 (no traffic there) */
    watch_t wa = {.w = w1, .tid = (pid_t)syscall(SYS_gettid)};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, watcher, &wa) == 0, "watcher thread");
    tern_worker_wait(w1, 20000);
    pthread_join(t, NULL);
    CHECK(wa.seen, "params->wait_mode TERN_WAIT_BLOCK: the idle wait was never seen asleep in "
                   "epoll_wait (TERN_WAIT_MODE=spin in the environment won?)");
    if (w1 != NULL)
        tern_worker_destroy(w1);
    if (w2 != NULL)
        tern_worker_destroy(w2);
    CHECK(tern_finalize(ctx) == TERN_OK, "tern_finalize");
    if (failures == 0)
        printf("ok rank %d\n", me);
}

int main(void)
{
    bad_params();
    overrides();
    return failures == 0 ? 0 : 1;
}
