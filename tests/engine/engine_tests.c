/*
 * engine_tests: the engine suite, one binary, run by a launcher:
 *   ternrun -n 2 ./engine_tests all          every case except peer_killed,
 *                                            peer_exit, peer_exit_sent, peer_rma and
 *                                            peer_crash (a rank ends in them)
 *   ternrun -n 2 ./engine_tests sizes iov    named cases
 * or without one, each rank started by a script with TERN_TEST_ADDR_DIR
 * (and TERN_TEST_RANK, _SIZE, _JOB): wired up by addresses exchanged
 * through files (tests/engine/addr_wire.c, tests/engine/addr_wire.sh).
 * TERN_TEST_NETMOD=shm (or another netmod) makes the harness check that
 * every VC to another rank uses that netmod.  Exit status 0 only when every
 * case passed on this rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "tests/engine/cases.h"

void th_barrier(th_t *t)
{
    tern_status_t st = tern_barrier(t->ctx);
    CHECK_ST(t, st, TERN_OK);
}

static const th_case_t *find(const char *name)
{
    const th_case_t *tables[] = {th_data_cases,   th_error_cases,  th_wait_cases,
                                 th_worker_cases, th_probe_cases,  th_tagged_cases,
                                 th_rma_cases,
                                 th_netmod_cases, th_cma_cases,    th_addr_cases,
                                 th_addr_named_cases};
    for (size_t k = 0; k < sizeof(tables) / sizeof(tables[0]); k++)
        for (const th_case_t *c = tables[k]; c->name; c++)
            if (strcmp(c->name, name) == 0)
                return c;
    return NULL;
}

static int run(th_t *t, const th_case_t *c)
{
    int before = t->failures;
    t->test = c->name;
    c->fn(t);
    th_barrier(t);
    int failed = t->failures - before;
    printf("%s %s (rank %d)\n", failed ? "not ok" : "ok", c->name, t->rank);
    fflush(stdout);
    return failed;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: engine_tests all|CASE...\n");
        return 2;
    }
    th_t t = {0};
    t.test = "init";
    /* A non-dumpable process refuses CMA to peers without CAP_SYS_PTRACE:
     * the forced-refusal test runs the ranks so. */
    if (getenv("TERN_TEST_NONDUMPABLE") != NULL)
        prctl(PR_SET_DUMPABLE, 0);
    tern_status_t st;
    t.by_address = getenv("TERN_TEST_ADDR_DIR") != NULL;
    if (t.by_address) {
        if (th_init_by_address(&t) != 0)
            return 1;
    } else if ((st = tern_init(&t.ctx)) != TERN_OK) {
        fprintf(stderr, "engine_tests: tern_init: %s: %s\n", tern_strerror(st), tern_last_error());
        return 1;
    }
    t.w = tern_context_worker(t.ctx);
    t.rank = tern_rank(t.ctx);
    t.size = tern_size(t.ctx);

    /* TERN_TEST_NETMOD: the netmod every VC to another rank must use, or a
     * comma list (a mixed job: each VC uses one of them, each one is used
     * by some VC of some rank — checked here per rank for "used at all"
     * only when this rank has peers on every kind). */
    const char *want = getenv("TERN_TEST_NETMOD");
    char used[64] = ",";
    for (int r = 0; want && r < t.size; r++) {
        const char *nm = tern_peer_netmod(t.ctx, r);
        if (r == t.rank) {
            CHECK(&t, nm && strcmp(nm, "self") == 0, "VC to self uses %s", nm ? nm : "none");
            continue;
        }
        char key[32];
        snprintf(key, sizeof(key), ",%s,", nm ? nm : "none");
        char list[96];
        snprintf(list, sizeof(list), ",%s,", want);
        CHECK(&t, nm && strstr(list, key) != NULL, "VC to rank %d uses %s, not one of %s", r,
              nm ? nm : "none", want);
        if (nm && strstr(used, key) == NULL && strlen(used) + strlen(nm) + 2 < sizeof(used))
            strcat(strcat(used, nm), ",");
    }
    if (want && strchr(want, ',') != NULL && getenv("TERN_TEST_MIXED_EVERY_RANK") != NULL) {
        char list[96];
        snprintf(list, sizeof(list), "%s", want);
        for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            char key[32];
            snprintf(key, sizeof(key), ",%s,", tok);
            CHECK(&t, strstr(used, key) != NULL, "no VC of rank %d uses %s", t.rank, tok);
        }
    }

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "all") == 0) {
            for (const th_case_t *c = th_data_cases; c->name; c++)
                run(&t, c);
            for (const th_case_t *c = th_error_cases; c->name; c++)
                if (strncmp(c->name, "peer_", 5) != 0) /* a rank ends in them */
                    run(&t, c);
            for (const th_case_t *c = th_wait_cases; c->name; c++)
                run(&t, c);
            for (const th_case_t *c = th_worker_cases; c->name; c++)
                run(&t, c);
            for (const th_case_t *c = th_probe_cases; c->name; c++)
                run(&t, c);
            for (const th_case_t *c = th_tagged_cases; c->name; c++)
                run(&t, c);
            for (const th_case_t *c = th_rma_cases; c->name; c++)
                if (strncmp(c->name, "peer_", 5) != 0)
                    run(&t, c);
            for (const th_case_t *c = th_addr_cases; t.by_address && c->name; c++)
                run(&t, c);
            continue;
        }
        const th_case_t *c = find(argv[i]);
        if (c == NULL) {
            fprintf(stderr, "engine_tests: no case named %s\n", argv[i]);
            t.failures++;
            continue;
        }
        run(&t, c);
    }
    st = tern_finalize(t.ctx);
    if (st != TERN_OK) {
        fprintf(stderr, "engine_tests: tern_finalize: %s\n", tern_last_error());
        t.failures++;
    }
    return t.failures ? 1 : 0;
}
