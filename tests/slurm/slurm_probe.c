/*
 * slurm_probe: tern under Slurm's srun --mpi=pmix (tests/slurm).
 *
 *   slurm_probe spawn   rank 0 asks for 2 ranks of this program with
 *                       tern_spawn; Slurm's PMIx server cannot start
 *                       processes, so the call must fail with
 *                       TERN_ERR_UNSUPPORTED and a message naming
 *                       PMIx_Spawn, this job and the server's answer
 *                       (NOT-SUPPORTED): "ok spawn refused: MESSAGE".  Then
 *                       every rank: a barrier (the job is still whole),
 *                       finalize, "ok rank R of N"
 *   slurm_probe child   what a spawned rank would run, should a launcher
 *                       ever start it: init and finalize
 *
 * Every failed check prints "FAIL: rank R: ..." and makes the exit status 1.
 */
#define _GNU_SOURCE 1

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <tern/tern.h>

static int me = -1, failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL: rank %d: ", me);                                                         \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static void spawn_refused(tern_context_t *ctx, const char *self)
{
    const char *argv[] = {self, "child", NULL};
    char job[TERN_JOB_NAME_MAX];
    tern_status_t st = tern_spawn(ctx, argv, 2, NULL, NULL, job);
    const char *msg = tern_last_error();

    CHECK(st == TERN_ERR_UNSUPPORTED, "tern_spawn: %s, expected TERN_ERR_UNSUPPORTED (%s)",
          tern_strerror(st), st == TERN_OK ? job : msg);
    if (st != TERN_ERR_UNSUPPORTED)
        return;
    int before = failures;
    /* the message says what was refused, by whom and how */
    CHECK(strstr(msg, "PMIx_Spawn") != NULL, "message does not name PMIx_Spawn: %s", msg);
    CHECK(strstr(msg, "NOT-SUPPORTED") != NULL, "message does not give the answer: %s", msg);
    CHECK(strstr(msg, tern_job_name(ctx)) != NULL, "message does not name job %s: %s",
          tern_job_name(ctx), msg);
    if (failures == before)
        printf("ok spawn refused: %s\n", msg);
}

int main(int argc, char **argv)
{
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    tern_context_t *ctx;
    tern_status_t st;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (len <= 0 || argc != 2) {
        fprintf(stderr, "usage: slurm_probe spawn | child\n");
        return 2;
    }
    self[len] = '\0';
    st = tern_init(&ctx);
    if (st != TERN_OK) {
        printf("FAIL: tern_init: %s (%s)\n", tern_strerror(st), tern_last_error());
        return 1;
    }
    me = tern_rank(ctx);
    int size = tern_size(ctx);
    if (strcmp(argv[1], "spawn") == 0) {
        if (me == 0)
            spawn_refused(ctx, self);
        st = tern_barrier(ctx);
        CHECK(st == TERN_OK, "barrier after the refused spawn: %s", tern_last_error());
    } else if (strcmp(argv[1], "child") != 0) {
        CHECK(0, "unknown mode %s", argv[1]);
    }
    st = tern_finalize(ctx);
    CHECK(st == TERN_OK, "finalize: %s", tern_last_error());
    if (failures == 0)
        printf("ok rank %d of %d\n", me, size);
    return failures ? 1 : 0;
}
