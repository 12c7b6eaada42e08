/*
 * tern_spawn: a tern program that starts another tern job with tern_spawn.
 *
 *   tern_spawn parent N   rank 0 spawns N ranks of this program ("child",
 *                         with TERN_SPAWN_VAR=from-parent) and prints
 *                         "spawned JOB"; a missing program must give
 *                         TERN_ERR_NOT_FOUND ("ok missing"), 0 ranks
 *                         TERN_ERR_INVALID_PARAM ("ok zero"); then every
 *                         rank: barrier, finalize
 *   tern_spawn child [APP]
 *                         the spawned job: a ring over its own ranks (each
 *                         sends its rank to the next), prints "child R of N
 *                         got P var V" (and " app APP cwd DIR" with APP)
 *   tern_spawn apps       rank 0 spawns one job of two programs with
 *                         tern_spawn_apps: 1 x "child a" (TERN_SPAWN_VAR=
 *                         first) and 2 x "child b" (TERN_SPAWN_VAR=second,
 *                         in /); no program must give TERN_ERR_INVALID_PARAM
 *                         ("ok apps none"), a missing second program
 *                         TERN_ERR_NOT_FOUND and nothing started ("ok apps
 *                         missing")
 *   tern_spawn failing-parent
 *                         rank 0 spawns 1 x /bin/sleep 600, prints
 *                         "spawned JOB" and exits 1 without finalizing:
 *                         the launcher must end the spawned job too
 *   tern_spawn failed-child SECS
 *                         rank 0 spawns 2 x /bin/false (a job that fails at
 *                         once), then every rank stays SECS seconds and
 *                         prints the CPU time its parent (ternrun) used
 *                         meanwhile: "launcher cpu C ms of W ms"
 *
 * Every failed check prints "FAIL: ..." and makes the exit status 1.
 */
#define _GNU_SOURCE 1

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tern/tern.h>

#include "tests/launcher/tern_check.h"

static void parent(tern_context_t *ctx, int n, const char *self)
{
    if (tern_rank(ctx) == 0) {
        char job[TERN_JOB_NAME_MAX];
        const char *argv[] = {self, "child", NULL};
        /* a spawned job gets the launcher's environment, not ours: pass
         * the library path (libtool's uninstalled binaries need it) */
        char ldpath[4096] = "";
        const char *lp = getenv("LD_LIBRARY_PATH");
        if (lp != NULL)
            snprintf(ldpath, sizeof(ldpath), "LD_LIBRARY_PATH=%s", lp);
        const char *env[] = {"TERN_SPAWN_VAR=from-parent", lp ? ldpath : NULL, NULL};
        tern_status_t st = tern_spawn(ctx, argv, n, env, NULL, job);
        CHECK(st == TERN_OK, "tern_spawn: %s", tern_strerror(st));
        if (st == TERN_OK)
            printf("spawned %s\n", job);

        const char *missing[] = {"/nonexistent/tern-no-such-program", NULL};
        st = tern_spawn(ctx, missing, 1, NULL, NULL, job);
        CHECK(st == TERN_ERR_NOT_FOUND, "missing program: %s", tern_strerror(st));
        if (st == TERN_ERR_NOT_FOUND)
            printf("ok missing: %s\n", tern_last_error());

        st = tern_spawn(ctx, argv, 0, NULL, NULL, job);
        CHECK(st == TERN_ERR_INVALID_PARAM, "0 ranks: %s", tern_strerror(st));
        if (st == TERN_ERR_INVALID_PARAM)
            printf("ok zero\n");
        fflush(stdout);
    }
    tern_status_t st = tern_barrier(ctx);
    CHECK(st == TERN_OK, "barrier: %s", tern_strerror(st));
}

/* one job of two programs (MPMD): they wire up as one job of 3 ranks */
static void apps(tern_context_t *ctx, const char *self)
{
    if (tern_rank(ctx) == 0) {
        char job[TERN_JOB_NAME_MAX];
        const char *a0[] = {self, "child", "a", NULL}, *a1[] = {self, "child", "b", NULL};
        char ldpath[4096] = "";
        const char *lp = getenv("LD_LIBRARY_PATH");
        if (lp != NULL)
            snprintf(ldpath, sizeof(ldpath), "LD_LIBRARY_PATH=%s", lp);
        const char *e0[] = {"TERN_SPAWN_VAR=first", lp ? ldpath : NULL, NULL};
        const char *e1[] = {"TERN_SPAWN_VAR=second", lp ? ldpath : NULL, NULL};
        tern_app_t two[2] = {{.argv = a0, .n = 1, .env = e0},
                             {.argv = a1, .n = 2, .env = e1, .wdir = "/"}};
        tern_status_t st = tern_spawn_apps(ctx, two, 2, job);
        CHECK(st == TERN_OK, "tern_spawn_apps: %s", tern_strerror(st));
        if (st == TERN_OK)
            printf("spawned %s\n", job);
        st = tern_spawn_apps(ctx, two, 0, job);
        CHECK(st == TERN_ERR_INVALID_PARAM, "no program: %s", tern_strerror(st));
        if (st == TERN_ERR_INVALID_PARAM)
            printf("ok apps none\n");
        const char *missing[] = {"/nonexistent/tern-no-such-program", NULL};
        two[1].argv = missing;
        st = tern_spawn_apps(ctx, two, 2, job);
        CHECK(st == TERN_ERR_NOT_FOUND, "a missing second program: %s", tern_strerror(st));
        if (st == TERN_ERR_NOT_FOUND)
            printf("ok apps missing: %s\n", tern_last_error());
        fflush(stdout);
    }
    tern_status_t st = tern_barrier(ctx);
    CHECK(st == TERN_OK, "barrier: %s", tern_strerror(st));
}

/* user + system CPU time of process pid in ms (/proc/PID/stat fields 14
 * and 15), or -1 */
static long cpu_ms(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    unsigned long ut = 0, st = 0;
    if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
                            &st) != 2)
        return -1;
    return (long)((ut + st) * 1000 / (unsigned long)sysconf(_SC_CLK_TCK));
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* a spawned job that fails at once must leave the launcher idle: ternrun
 * used to poll with a zero timeout for as long as the first job ran */
static void failed_child(tern_context_t *ctx, int secs)
{
    if (tern_rank(ctx) == 0) {
        char job[TERN_JOB_NAME_MAX];
        const char *argv[] = {"/bin/false", NULL};
        tern_status_t st = tern_spawn(ctx, argv, 2, NULL, NULL, job);
        CHECK(st == TERN_OK, "tern_spawn /bin/false: %s", tern_strerror(st));
        if (st == TERN_OK)
            printf("spawned %s\n", job);
        fflush(stdout);
    }
    long c0 = cpu_ms(getppid()), t0 = now_ms();
    sleep((unsigned)secs);
    long c1 = cpu_ms(getppid()), t1 = now_ms();
    CHECK(c0 >= 0 && c1 >= 0, "cannot read the launcher's CPU time");
    printf("launcher cpu %ld ms of %ld ms (rank %d)\n", c1 - c0, t1 - t0, tern_rank(ctx));
    fflush(stdout);
    tern_status_t st = tern_barrier(ctx);
    CHECK(st == TERN_OK, "barrier: %s", tern_strerror(st));
}

/* a spawner that fails leaves its spawned job to the launcher's grace */
static void failing_parent(tern_context_t *ctx)
{
    if (tern_rank(ctx) == 0) {
        char job[TERN_JOB_NAME_MAX];
        const char *argv[] = {"/bin/sleep", "600", NULL};
        tern_status_t st = tern_spawn(ctx, argv, 1, NULL, NULL, job);
        CHECK(st == TERN_OK, "tern_spawn /bin/sleep: %s", tern_strerror(st));
        if (st == TERN_OK)
            printf("spawned %s\n", job);
        fflush(stdout);
    }
    _exit(1);
}

static void child(tern_context_t *ctx, const char *app)
{
    tern_worker_t *w = tern_context_worker(ctx);
    int me = tern_rank(ctx), n = tern_size(ctx), got = -1;
    tern_request_t *rreq = NULL;
    tern_status_t st;

    st = tern_irecv(w, &got, sizeof(got), (me + n - 1) % n, 7, 0, NULL, &rreq);
    CHECK(st == TERN_OK || st == TERN_INPROGRESS, "irecv: %s", tern_strerror(st));
    st = tern_send(w, &me, sizeof(me), (me + 1) % n, 7, 0);
    CHECK(st == TERN_OK, "send: %s", tern_strerror(st));
    if (rreq != NULL) {
        st = tern_wait(w, rreq, NULL);
        CHECK(st == TERN_OK, "wait: %s", tern_strerror(st));
    }
    const char *var = getenv("TERN_SPAWN_VAR");
    char cwd[4096] = "?";
    if (app != NULL && getcwd(cwd, sizeof(cwd)) == NULL)
        snprintf(cwd, sizeof(cwd), "?");
    printf("child %d of %d got %d var %s%s%s%s%s\n", me, n, got, var ? var : "(unset)",
           app ? " app " : "", app ? app : "", app ? " cwd " : "", app ? cwd : "");
    fflush(stdout);
    CHECK(got == (me + n - 1) % n, "ring: got %d", got);
}

int main(int argc, char **argv)
{
    tern_context_t *ctx;
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (len <= 0 || argc < 2) {
        fprintf(stderr, "usage: tern_spawn parent N | child [APP] | apps | failing-parent | "
                        "failed-child SECS\n");
        return 2;
    }
    self[len] = '\0';
    tern_status_t st = tern_init(&ctx);
    if (st != TERN_OK) {
        printf("FAIL: tern_init: %s (%s)\n", tern_strerror(st), tern_last_error());
        return 1;
    }
    if (strcmp(argv[1], "parent") == 0 && argc == 3) {
        parent(ctx, atoi(argv[2]), self);
    } else if (strcmp(argv[1], "child") == 0) {
        child(ctx, argc > 2 ? argv[2] : NULL);
    } else if (strcmp(argv[1], "apps") == 0) {
        apps(ctx, self);
    } else if (strcmp(argv[1], "failing-parent") == 0) {
        failing_parent(ctx);
    } else if (strcmp(argv[1], "failed-child") == 0 && argc == 3) {
        failed_child(ctx, atoi(argv[2]));
    } else {
        printf("FAIL: unknown mode %s\n", argv[1]);
        failures++;
    }
    st = tern_finalize(ctx);
    CHECK(st == TERN_OK, "finalize: %s", tern_strerror(st));
    return failures ? 1 : 0;
}
