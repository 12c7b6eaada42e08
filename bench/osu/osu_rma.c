/*
 * OSU-style one-sided benchmarks (bench/osu, issue 25), in the manner of
 * the OSU micro-benchmarks 5.x one-sided tests (their output format,
 * options and method as documented, not their code).  One source: each
 * osu_<test>.c defines OSU_RMA_<TEST> and includes this file.
 *
 *   latency   osu_put_latency, osu_get_latency, osu_acc_latency,
 *             osu_get_acc_latency, osu_fop_latency, osu_cas_latency:
 *             rank 0 issues one operation to rank 1 and completes it
 *             (the synchronisation below), averaged over the iterations;
 *             fence and pscw ping-pong (each rank in turn) and halve
 *   bandwidth osu_put_bw, osu_get_bw: rank 0 issues OSU_WINDOW operations
 *             of each size, then completes them; osu_put_bibw: both ranks
 *             at once (fence or pscw), both directions counted
 *
 *   mpiexec -n 2 ./osu_put_latency [-w create|allocate|dynamic]
 *       [-s lock|flush|flush_local|lock_all|fence|pscw] [common options]
 *
 * -w: how the window is made (default allocate); -s: how operations are
 * completed (default flush; bibw: fence).  fop and cas run one 8-byte
 * element (the size column says 8).  MB = 1e6 bytes.
 */
#include "osu_common.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum rma_kind { PUT_LAT, GET_LAT, ACC_LAT, GACC_LAT, FOP_LAT, CAS_LAT, PUT_BW, GET_BW, PUT_BIBW };
enum win_kind { WIN_CREATE, WIN_ALLOCATE, WIN_DYNAMIC };
enum sync_kind { SYNC_LOCK, SYNC_FLUSH, SYNC_FLUSH_LOCAL, SYNC_LOCK_ALL, SYNC_FENCE, SYNC_PSCW };

#if defined(OSU_RMA_PUT_LATENCY)
#define KIND PUT_LAT
#define NAME "Put Latency"
#elif defined(OSU_RMA_GET_LATENCY)
#define KIND GET_LAT
#define NAME "Get Latency"
#elif defined(OSU_RMA_ACC_LATENCY)
#define KIND ACC_LAT
#define NAME "Accumulate Latency"
#elif defined(OSU_RMA_GET_ACC_LATENCY)
#define KIND GACC_LAT
#define NAME "Get_accumulate Latency"
#elif defined(OSU_RMA_FOP_LATENCY)
#define KIND FOP_LAT
#define NAME "Fetch_and_op Latency"
#elif defined(OSU_RMA_CAS_LATENCY)
#define KIND CAS_LAT
#define NAME "Compare_and_swap Latency"
#elif defined(OSU_RMA_PUT_BW)
#define KIND PUT_BW
#define NAME "Put Bandwidth"
#elif defined(OSU_RMA_GET_BW)
#define KIND GET_BW
#define NAME "Get Bandwidth"
#elif defined(OSU_RMA_PUT_BIBW)
#define KIND PUT_BIBW
#define NAME "Put Bi-directional Bandwidth"
#else
#error "define the test (OSU_RMA_PUT_LATENCY ...)"
#endif

static const char *const win_names[] = {"create", "allocate", "dynamic"};
static const char *const win_calls[] = {"MPI_Win_create", "MPI_Win_allocate",
                                        "MPI_Win_create_dynamic"};
static const char *const sync_names[] = {"lock", "flush", "flush_local", "lock_all", "fence",
                                         "pscw"};
static const char *const sync_calls[] = {"MPI_Win_lock/unlock", "MPI_Win_flush",
                                         "MPI_Win_flush_local", "MPI_Win_lock_all/flush",
                                         "MPI_Win_fence", "Post/Start/Complete/Wait"};

static int rank, peer;
static MPI_Win win;
static MPI_Aint disp0; /* the peer's displacement 0 (a dynamic window's: its address) */
static MPI_Group peer_group;
static char *sbuf, *rbuf, *cbuf;

/* -w and -s taken out of argv (the rest goes to osu_parse); -1: bad */
static int take_opt(int *argc, char **argv, const char *flag, const char *const *names, int n,
                    int dflt)
{
    int v = dflt;
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], flag) != 0)
            continue;
        v = -1;
        for (int k = 0; i + 1 < *argc && k < n; k++)
            if (strcmp(argv[i + 1], names[k]) == 0)
                v = k;
        int drop = i + 1 < *argc ? 2 : 1;
        memmove(&argv[i], &argv[i + drop], sizeof(char *) * (size_t)(*argc - i - drop + 1));
        *argc -= drop;
        i--;
    }
    return v;
}

static void *win_make(int wk, size_t len)
{
    void *base = NULL;
    MPI_Aint mine = 0;
    if (wk == WIN_ALLOCATE) {
        MPI_Win_allocate((MPI_Aint)len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        memset(base, 1, len);
    } else {
        base = osu_alloc(len);
        if (wk == WIN_CREATE) {
            MPI_Win_create(base, (MPI_Aint)len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        } else {
            MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
            MPI_Win_attach(win, base, (MPI_Aint)len);
            MPI_Get_address(base, &mine);
        }
    }
    MPI_Sendrecv(&mine, 1, MPI_AINT, peer, 9, &disp0, 1, MPI_AINT, peer, 9, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    return base;
}

/* one operation of s bytes to target */
static void op(size_t s, int target)
{
    switch (KIND) {
    case PUT_LAT: case PUT_BW: case PUT_BIBW:
        MPI_Put(sbuf, (int)s, MPI_CHAR, target, disp0, (int)s, MPI_CHAR, win);
        break;
    case GET_LAT: case GET_BW:
        MPI_Get(rbuf, (int)s, MPI_CHAR, target, disp0, (int)s, MPI_CHAR, win);
        break;
    case ACC_LAT:
        MPI_Accumulate(sbuf, (int)s, MPI_CHAR, target, disp0, (int)s, MPI_CHAR, MPI_SUM, win);
        break;
    case GACC_LAT:
        MPI_Get_accumulate(sbuf, (int)s, MPI_CHAR, rbuf, (int)s, MPI_CHAR, target, disp0, (int)s,
                           MPI_CHAR, MPI_SUM, win);
        break;
    case FOP_LAT:
        MPI_Fetch_and_op(sbuf, rbuf, MPI_LONG_LONG, target, disp0, MPI_SUM, win);
        break;
    case CAS_LAT:
        MPI_Compare_and_swap(sbuf, cbuf, rbuf, MPI_LONG_LONG, target, disp0, win);
        break;
    }
}

/* n operations of s bytes, timed over iters rounds after warmup: seconds */
static double run(int sk, size_t s, int n, long warmup, long iters)
{
    double t0 = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (sk == SYNC_FENCE || sk == SYNC_PSCW) {
        bool both = KIND == PUT_BIBW || n == 1; /* latency: a ping-pong */
        if (sk == SYNC_FENCE)
            MPI_Win_fence(0, win);
        for (long i = 0; i < warmup + iters; i++) {
            if (i == warmup)
                t0 = MPI_Wtime();
            for (int turn = 0; turn < 2; turn++) {
                bool mine = KIND == PUT_BIBW || rank == turn;
                if (!both && turn == 1)
                    break;
                if (sk == SYNC_FENCE) {
                    for (int k = 0; mine && k < n; k++)
                        op(s, peer);
                    MPI_Win_fence(0, win);
                } else if (mine) {
                    if (KIND == PUT_BIBW)
                        MPI_Win_post(peer_group, 0, win);
                    MPI_Win_start(peer_group, 0, win);
                    for (int k = 0; k < n; k++)
                        op(s, peer);
                    MPI_Win_complete(win);
                    if (KIND == PUT_BIBW)
                        MPI_Win_wait(win);
                } else {
                    MPI_Win_post(peer_group, 0, win);
                    MPI_Win_wait(win);
                }
                if (KIND == PUT_BIBW)
                    break;
            }
        }
        if (sk == SYNC_FENCE)
            MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    } else if (rank == 0) {
        if (sk == SYNC_FLUSH || sk == SYNC_FLUSH_LOCAL)
            MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
        else if (sk == SYNC_LOCK_ALL)
            MPI_Win_lock_all(0, win);
        for (long i = 0; i < warmup + iters; i++) {
            if (i == warmup)
                t0 = MPI_Wtime();
            if (sk == SYNC_LOCK)
                MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
            for (int k = 0; k < n; k++)
                op(s, peer);
            if (sk == SYNC_LOCK)
                MPI_Win_unlock(peer, win);
            else if (sk == SYNC_FLUSH_LOCAL)
                MPI_Win_flush_local(peer, win);
            else
                MPI_Win_flush(peer, win);
        }
        if (sk == SYNC_FLUSH || sk == SYNC_FLUSH_LOCAL)
            MPI_Win_unlock(peer, win);
        else if (sk == SYNC_LOCK_ALL)
            MPI_Win_unlock_all(win);
    }
    double t = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    return t;
}

int main(int argc, char **argv)
{
    bool bw = KIND == PUT_BW || KIND == GET_BW || KIND == PUT_BIBW;
    bool atomic = KIND == FOP_LAT || KIND == CAS_LAT;
    osu_opts_t o = {.min = 0,
                    .max = 1 << 22,
                    .iters = bw ? 100 : 10000,
                    .iters_large = bw ? 20 : 100, /* as OSU's one-sided tests */
                    .warmup = bw ? 10 : 100,
                    .warmup_large = bw ? 2 : 10};
    int size, rc;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int wk = take_opt(&argc, argv, "-w", win_names, 3, WIN_ALLOCATE);
    int sk = take_opt(&argc, argv, "-s", sync_names, 6,
                      KIND == PUT_BIBW ? SYNC_FENCE : SYNC_FLUSH);
    if ((rc = osu_parse(argc, argv, &o)) != 0) {
        MPI_Finalize();
        return rc == 1 ? 0 : rc;
    }
    osu_require(size == 2, rank, "the one-sided benchmarks need exactly 2 ranks");
    osu_require(wk >= 0, rank, "-w takes create, allocate or dynamic");
    osu_require(sk >= 0, rank, "-s takes lock, flush, flush_local, lock_all, fence or pscw");
    osu_require(KIND != PUT_BIBW || sk == SYNC_FENCE || sk == SYNC_PSCW, rank,
                "osu_put_bibw: -s fence or pscw (both ranks put at once)");
    if (atomic)
        o.min = o.max = 8;
    peer = 1 - rank;
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &peer, &peer_group);
    MPI_Group_free(&world);
    size_t len = o.max > 0 ? o.max : 1;
    sbuf = osu_alloc(len);
    rbuf = osu_alloc(len);
    cbuf = osu_alloc(len);
    void *mem = win_make(wk, len);

    char extra[128];
    snprintf(extra, sizeof(extra), "Window creation: %s\n# Synchronization: %s", win_calls[wk],
             sync_calls[sk]);
    osu_header(rank, "OSU-style MPI_" NAME " Test (tern bench/osu)", extra,
               bw ? "Size      Bandwidth (MB/s)" : "Size          Latency (us)");
    for (size_t s = o.min; s <= o.max; s = osu_next_size(s)) {
        long iters = osu_iters(&o, s), warmup = osu_warmup(&o, s);
        int n = bw ? OSU_WINDOW : 1;
        double t = run(sk, s, n, warmup, iters);
        if (rank != 0)
            continue;
        bool pingpong = !bw && (sk == SYNC_FENCE || sk == SYNC_PSCW);
        if (bw)
            printf("%-10zu%18.2f\n", s,
                   (double)s * n * (double)iters * (KIND == PUT_BIBW ? 2 : 1) / t / 1e6);
        else
            printf("%-10zu%18.2f\n", s, t * 1e6 / (double)iters / (pingpong ? 2.0 : 1.0));
        fflush(stdout);
    }
    if (wk == WIN_DYNAMIC)
        MPI_Win_detach(win, mem);
    MPI_Win_free(&win);
    if (wk != WIN_ALLOCATE)
        free(mem);
    MPI_Group_free(&peer_group);
    free(sbuf);
    free(rbuf);
    free(cbuf);
    MPI_Finalize();
    return 0;
}
