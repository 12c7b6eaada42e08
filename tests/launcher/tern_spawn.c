/*
 * tern_spawn: a tern program that starts another tern job with tern_spawn.
 *
 *   tern_spawn parent N   rank 0 spawns N ranks of this program ("child",
 *                         with TERN_SPAWN_VAR=from-parent) and prints
 *                         "spawned JOB"; a missing program must give
 *                         TERN_ERR_NOT_FOUND ("ok missing"), 0 ranks
 *                         TERN_ERR_INVALID_PARAM ("ok zero"); then every
 *                         rank: barrier, finalize
 *   tern_spawn child      the spawned job: a ring over its own ranks (each
 *                         sends its rank to the next), prints "child R of N
 *                         got P var V"
 *
 * Every failed check prints "FAIL: ..." and makes the exit status 1.
 */
#define _GNU_SOURCE 1

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void child(tern_context_t *ctx)
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
    printf("child %d of %d got %d var %s\n", me, n, got, var ? var : "(unset)");
    fflush(stdout);
    CHECK(got == (me + n - 1) % n, "ring: got %d", got);
}

int main(int argc, char **argv)
{
    tern_context_t *ctx;
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (len <= 0 || argc < 2) {
        fprintf(stderr, "usage: tern_spawn parent N | child\n");
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
        child(ctx);
    } else {
        printf("FAIL: unknown mode %s\n", argv[1]);
        failures++;
    }
    st = tern_finalize(ctx);
    CHECK(st == TERN_OK, "finalize: %s", tern_strerror(st));
    return failures ? 1 : 0;
}
