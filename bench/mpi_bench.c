/*
 * mpi_bench — the tern_bench tests (lat, bw, bibw, mr) and an allreduce
 * latency written in plain MPI-3, for comparing tern with an MPI library on
 * the same two cores:
 *
 *   mpiexec -n 2 -bind-to core ./mpi_bench [-t lat,bw,bibw,mr,allreduce|all]
 *                     [-m MIN:MAX] [-i ITERS] [-w WARMUP] [--json FILE] [-q] [-v]
 *
 * Built three times (bench/Makefile.inc): mpi_bench with MPICH's mpicc
 * (configure finds mpicc.mpich), mpi_bench_ompi with Open MPI's
 * (mpicc.openmpi) and mpi_bench_tern with the build tree's ternmpicc (tern's
 * MPI layer).  The options, counts, tables and JSON are tern_bench's
 * (bench_p2p.c), and the loops are the same OSU method as tern_bench_p2p.c:
 *
 *  lat   ping-pong with MPI_Send / MPI_Recv; one-way = round trip / 2.
 *  bw    0 posts a window of BP_WINDOW MPI_Isend, 1 a window of MPI_Irecv;
 *        after MPI_Waitall, 1 sends a 1-byte ack.  MB/s = bytes / time.
 *  bibw  both post BP_WINDOW receives and BP_WINDOW sends, then MPI_Waitall.
 *  mr    the bw loop counted in messages per second (osu_mbw_mr, one pair).
 *  allreduce  MPI_Allreduce with MPI_SUM of SIZE bytes: SIZE / 4 MPI_INTs,
 *        or SIZE MPI_UNSIGNED_CHARs below 4 bytes (MPI_BYTE has no SUM);
 *        us per call, each rank's time averaged over the ranks (as
 *        osu_allreduce's average).  No barrier between calls.
 *
 * Time is taken on rank 0 (allreduce: on each rank) with CLOCK_MONOTONIC
 * (the clock tern_bench uses) from the end of the warm-up to the end of the
 * last round.  Errors are
 * fatal (MPI_ERRORS_ARE_FATAL, the default on MPI_COMM_WORLD).  -v prints
 * each rank's CPU affinity, to check that `-bind-to core` really pinned it.
 * A benchmark prints figures; it asserts nothing about speed.
 */
#include "config.h"

#include "bench/bench_p2p_internal.h"
#include "bench/bench_util_internal.h"

#include <errno.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    MB_TAG_LAT = 1,
    MB_TAG_BW = 2,
    MB_TAG_ACK = 3,
    MB_TAG_BIBW = 4,
    MB_TAG_MR = 5,
};

typedef struct mb_env {
    int rank;
    int peer;
    void *sbuf;
    void *rbuf;
} mb_env_t;

static void mb_lat_round(const mb_env_t *env, size_t size)
{
    int n = (int)size;

    if (env->rank == 0) {
        MPI_Send(env->sbuf, n, MPI_BYTE, env->peer, MB_TAG_LAT, MPI_COMM_WORLD);
        MPI_Recv(env->rbuf, n, MPI_BYTE, env->peer, MB_TAG_LAT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(env->rbuf, n, MPI_BYTE, env->peer, MB_TAG_LAT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(env->sbuf, n, MPI_BYTE, env->peer, MB_TAG_LAT, MPI_COMM_WORLD);
    }
}

static void mb_bw_round(const mb_env_t *env, size_t size, int tag)
{
    MPI_Request reqs[BP_WINDOW];
    MPI_Status stats[BP_WINDOW]; /* as OSU; MPI_STATUSES_IGNORE trips GCC 12's
                                  * -Wstringop-overflow on mpich's prototype */
    char ack = 0;
    int n = (int)size;

    if (env->rank == 0) {
        for (int j = 0; j < BP_WINDOW; j++) {
            MPI_Isend(env->sbuf, n, MPI_BYTE, env->peer, tag, MPI_COMM_WORLD, &reqs[j]);
        }
        MPI_Waitall(BP_WINDOW, reqs, stats);
        MPI_Recv(&ack, 1, MPI_BYTE, env->peer, MB_TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        for (int j = 0; j < BP_WINDOW; j++) {
            MPI_Irecv(env->rbuf, n, MPI_BYTE, env->peer, tag, MPI_COMM_WORLD, &reqs[j]);
        }
        MPI_Waitall(BP_WINDOW, reqs, stats);
        MPI_Send(&ack, 1, MPI_BYTE, env->peer, MB_TAG_ACK, MPI_COMM_WORLD);
    }
}

static void mb_bibw_round(const mb_env_t *env, size_t size)
{
    MPI_Request reqs[2 * BP_WINDOW];
    MPI_Status stats[2 * BP_WINDOW];
    int n = (int)size;

    /* Receives first, so no message of the window lands unexpected. */
    for (int j = 0; j < BP_WINDOW; j++) {
        MPI_Irecv(env->rbuf, n, MPI_BYTE, env->peer, MB_TAG_BIBW, MPI_COMM_WORLD, &reqs[j]);
    }
    for (int j = 0; j < BP_WINDOW; j++) {
        MPI_Isend(env->sbuf, n, MPI_BYTE, env->peer, MB_TAG_BIBW, MPI_COMM_WORLD,
                  &reqs[BP_WINDOW + j]);
    }
    MPI_Waitall(2 * BP_WINDOW, reqs, stats);
}

static void mb_allreduce_round(const mb_env_t *env, size_t size)
{
    if (size >= sizeof(int)) {
        MPI_Allreduce(env->sbuf, env->rbuf, (int)(size / sizeof(int)), MPI_INT, MPI_SUM,
                      MPI_COMM_WORLD);
    } else {
        MPI_Allreduce(env->sbuf, env->rbuf, (int)size, MPI_UNSIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD);
    }
}

static void mb_round(const mb_env_t *env, bp_test_t test, size_t size)
{
    switch (test) {
    case BP_TEST_LAT:
        mb_lat_round(env, size);
        break;
    case BP_TEST_BW:
        mb_bw_round(env, size, MB_TAG_BW);
        break;
    case BP_TEST_BIBW:
        mb_bibw_round(env, size);
        break;
    case BP_TEST_MR:
        mb_bw_round(env, size, MB_TAG_MR);
        break;
    case BP_TEST_ALLREDUCE:
        mb_allreduce_round(env, size);
        break;
    case BP_TEST_STREAM: /* tern_bench only: bp_parse never selects it here */
    case BP_TEST_COUNT:
        break;
    }
}

static double mb_run(const mb_env_t *env, bp_test_t test, size_t size, long iters, long warmup)
{
    uint64_t t0 = 0, ns;

    for (long i = 0; i < warmup + iters; i++) {
        if (i == warmup) {
            t0 = bench_now_ns();
        }
        mb_round(env, test, size);
    }
    ns = bench_now_ns() - t0;
    if (test == BP_TEST_ALLREDUCE) {
        double mine = bp_value(test, size, iters, ns), sum = 0.0;
        int nranks = 1;

        MPI_Comm_size(MPI_COMM_WORLD, &nranks);
        MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        return env->rank == 0 ? sum / nranks : 0.0;
    }
    return env->rank == 0 ? bp_value(test, size, iters, ns) : 0.0;
}

/* The first line of MPI_Get_library_version ("MPICH Version: 4.0.2"). */
static void mb_library(char *buf, size_t len)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen = 0;
    char *nl;

    MPI_Get_library_version(version, &vlen);
    nl = strchr(version, '\n');
    if (nl != NULL) {
        *nl = '\0';
    }
    if (len == 0) {
        return;
    }
    snprintf(buf, len, "%.*s", (int)(len - 1), version); /* a long version line is cut */
    for (char *p = buf; *p != '\0'; p++) {
        if (*p == '\t') {
            *p = ' ';
        }
    }
}

static void mb_print_affinity(const mb_env_t *env, const char *library)
{
    char cpus[256];
    char host[MPI_MAX_PROCESSOR_NAME];
    int hlen = 0;

    MPI_Get_processor_name(host, &hlen);
    bench_affinity(cpus, sizeof(cpus));
    printf("# mpi_bench rank %d pid %d on %s: cpus allowed %s, running on cpu %d, %s\n", env->rank,
           (int)getpid(), host, cpus, sched_getcpu(), library);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    static bp_result_t res[BP_TEST_COUNT][BP_MAX_SIZES];
    size_t sizes[BP_MAX_SIZES];
    size_t nsizes;
    bp_opts_t o;
    mb_env_t env = {0};
    char library[128];
    FILE *jf = NULL;
    int size = 0;
    int rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &env.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    env.peer = 1 - env.rank;

    rc = bp_parse(argc, argv, "mpi_bench", "mpiexec -n 2 -bind-to core",
                  BP_TESTS_P2P | BP_TEST_BIT(BP_TEST_ALLREDUCE), &o);
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    if (size != 2) {
        if (env.rank == 0) {
            fprintf(stderr, "mpi_bench: needs exactly 2 ranks, job has %d\n", size);
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
        return 2;
    }
    if (o.max > (size_t)0x7fffffff) {
        if (env.rank == 0) {
            fprintf(stderr, "mpi_bench: sizes above 2^31 - 1 bytes need MPI large counts\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
        return 2;
    }
    nsizes = bp_sizes(&o, sizes);
    env.sbuf = bench_alloc(o.max);
    env.rbuf = bench_alloc(o.max);
    if (env.sbuf == NULL || env.rbuf == NULL) {
        fprintf(stderr, "mpi_bench rank %d: cannot allocate 2 x %zu bytes\n", env.rank, o.max);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    mb_library(library, sizeof(library));
    if (env.rank == 0 && o.json != NULL) {
        jf = fopen(o.json, "w");
        if (jf == NULL) {
            fprintf(stderr, "mpi_bench: %s: %s\n", o.json, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 1);
            return 1;
        }
    }

    if (o.verbose) {
        /* One rank after the other, so the lines do not interleave. */
        for (int r = 0; r < 2; r++) {
            if (r == env.rank) {
                mb_print_affinity(&env, library);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }

    for (int t = 0; t < BP_TEST_COUNT; t++) {
        if (!o.run[t]) {
            continue;
        }
        for (size_t i = 0; i < nsizes; i++) {
            bp_result_t *r = &res[t][i];

            r->size = sizes[i];
            bp_counts(&o, (bp_test_t)t, r->size, &r->iters, &r->warmup);
            MPI_Barrier(MPI_COMM_WORLD);
            r->value = mb_run(&env, (bp_test_t)t, r->size, r->iters, r->warmup);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (env.rank == 0) {
            bp_print_table(&o, (bp_test_t)t, "mpi", library, res[t], nsizes);
        }
    }

    if (jf != NULL && bp_write_json(jf, &o, "mpi_bench", library, argc, argv, res, nsizes) != 0) {
        fprintf(stderr, "mpi_bench: %s: %s\n", o.json, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }

    bench_free(env.sbuf);
    bench_free(env.rbuf);
    MPI_Finalize();
    return 0;
}
