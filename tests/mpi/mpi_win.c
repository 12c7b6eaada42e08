/*
 * One-sided communication (MPI-3.1 chapter 11), any rank count: windows of
 * every flavor (create, allocate, allocate_shared, dynamic), active target
 * (fence; post / start / complete / wait) and passive target (lock,
 * lock_all, flush), put / get / accumulate / get_accumulate /
 * fetch_and_op / compare_and_swap and the request forms, derived
 * datatypes on both sides, an exclusive lock's mutual exclusion counted,
 * attributes, and the errors a window reports.  Plain MPI: it passes under
 * MPICH too.
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mpi/mpi_check.h"

#define N 64      /* ints per rank's part */
#define ROUNDS 50 /* of each rank's atomic loops */

static int tern; /* the library is tern's: its exact error classes are checked */

/* fence: every rank puts (rank, i) into slot rank of every rank's part, and
 * gets the target's own stamp back; derived types on both sides */
static void test_fence(void)
{
    /* slots 0 .. size - 1 at N, the derived types' 16 ints at 2N */
    int part = N * (size + 2);
    int *mem = malloc(sizeof(int) * (size_t)part), *got = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < part; i++)
        mem[i] = -1;
    mem[0] = 1000 + rank; /* each rank's stamp */
    MPI_Win win;
    MPI_Win_create(mem, (MPI_Aint)sizeof(int) * part, sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &win);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    for (int t = 0; t < size; t++) {
        int v = rank * 100 + t;
        MPI_Put(&v, 1, MPI_INT, t, N + rank, 1, MPI_INT, win);
        MPI_Get(&got[t], 1, MPI_INT, t, 0, 1, MPI_INT, win);
    }
    MPI_Win_fence(0, win);
    for (int r = 0; r < size; r++) {
        CHECK(mem[N + r] == r * 100 + rank, "slot %d holds %d", r, mem[N + r]);
        CHECK(got[r] == 1000 + r, "rank %d's stamp came back as %d", r, got[r]);
    }
    /* derived: 8 ints from a contiguous origin to every other int of the
     * right-hand neighbour's part (a vector), then back the other way into
     * a vector origin from an indexed target */
    MPI_Datatype vec, idx;
    MPI_Type_vector(8, 1, 2, MPI_INT, &vec);
    int bl[3] = {2, 3, 3}, disp[3] = {0, 5, 12};
    MPI_Type_indexed(3, bl, disp, MPI_INT, &idx);
    MPI_Type_commit(&vec);
    MPI_Type_commit(&idx);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, src[8], back[16];
    for (int i = 0; i < 8; i++)
        src[i] = rank * 10 + i;
    for (int i = 0; i < 16; i++)
        back[i] = -7;
    MPI_Put(src, 8, MPI_INT, right, 2 * N, 1, vec, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < 16; i++)
        CHECK(mem[2 * N + i] == (i % 2 == 0 ? left * 10 + i / 2 : -1), "vector put: [%d] = %d",
              i, mem[2 * N + i]);
    MPI_Get(back, 1, vec, right, 2 * N, 1, idx, win); /* 8 ints both sides */
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    int want[8];
    for (int k = 0, b = 0; b < 3; b++)
        for (int j = 0; j < bl[b]; j++, k++)
            want[k] = disp[b] + j; /* offsets into the part */
    for (int k = 0; k < 8; k++) {
        /* the right-hand neighbour's part as it holds it (its left is us) */
        int off = want[k], expect = off % 2 == 0 && off < 16 ? rank * 10 + off / 2 : -1;
        CHECK(back[2 * k] == expect, "indexed get: [%d] = %d, want %d", 2 * k, back[2 * k],
              expect);
        CHECK(back[2 * k + 1] == -7, "indexed get wrote a gap: [%d] = %d", 2 * k + 1,
              back[2 * k + 1]);
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&idx);
    MPI_Win_free(&win);
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free left the handle");
    free(mem);
    free(got);
}

/* passive target on an allocated window: fetch-and-add and accumulate
 * from every rank onto rank 0, one compare-and-swap winner, an exclusive
 * lock's read-modify-write never losing an update */
static void test_passive(void)
{
    int64_t *mem;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int64_t) * 8, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                     &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    memset(mem, 0, sizeof(int64_t) * 8);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    int64_t one = 1, old = 0, seen_max = -1;
    for (int i = 0; i < ROUNDS; i++) {
        MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, 0, MPI_SUM, win);
        MPI_Win_flush(0, win);
        CHECK(old >= 0 && old < (int64_t)ROUNDS * size, "fetch-and-add gave %lld",
              (long long)old);
        if (old > seen_max)
            seen_max = old;
        double d = 0.5;
        MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, 1, 1, MPI_DOUBLE, MPI_SUM, win);
    }
    int64_t mine = rank + 1, zero = 0, prev = -1;
#ifdef OPEN_MPI
    /* Open MPI 4.1.4's btl ofi dereferences a NULL local handle in its
     * compare-and-swap (mca_btl_ofi_acswap) under osc rdma: not called
     * there (tests/ompi/ompi_osc.sh) */
    (void)mine, (void)zero;
    if (rank == 0) {
        mem[2] = 1;
        prev = 0;
    }
#else
    MPI_Compare_and_swap(&mine, &zero, &prev, MPI_INT64_T, 0, 2, win);
#endif
    MPI_Win_flush_all(win);
    MPI_Win_unlock_all(win);
    int won = prev == 0, winners = 0;
    MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(winners == 1, "%d compare-and-swap winners", winners);
    /* exclusive: get, add, put back under the lock */
    for (int i = 0; i < ROUNDS; i++) {
        int64_t v = -1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Get(&v, 1, MPI_INT64_T, 0, 3, 1, MPI_INT64_T, win);
        MPI_Win_flush(0, win);
        v++;
        MPI_Put(&v, 1, MPI_INT64_T, 0, 3, 1, MPI_INT64_T, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        int64_t total = (int64_t)ROUNDS * size;
        CHECK(mem[0] == total, "counter %lld, want %lld", (long long)mem[0], (long long)total);
        double d;
        memcpy(&d, &mem[1], sizeof(d));
        CHECK(d == 0.5 * ROUNDS * size, "accumulated %g", d);
        CHECK(mem[2] >= 1 && mem[2] <= size, "compare-and-swap left %lld", (long long)mem[2]);
        CHECK(mem[3] == total, "exclusive increments: %lld of %lld (a lock let two in)",
              (long long)mem[3], (long long)total);
        MPI_Win_unlock(0, win);
    }
    MPI_Win_free(&win);
}

/* accumulate variants: MAXLOC on pairs, get_accumulate (NO_OP reads,
 * REPLACE swaps), a strided target type, the request forms */
static void test_accumulate(void)
{
    struct {
        double v;
        int i;
    } *pair, mine = {(double)(rank * 7 % 5), rank}, best = {0, 0};
    double *vals;
    MPI_Win win, vwin;
    MPI_Win_allocate(sizeof(*pair), sizeof(*pair), MPI_INFO_NULL, MPI_COMM_WORLD, &pair, &win);
    MPI_Win_allocate(sizeof(double) * 16, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &vals,
                     &vwin);
    pair->v = -1;
    pair->i = -1;
    for (int i = 0; i < 16; i++)
        vals[i] = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_fence(0, win);
    MPI_Accumulate(&mine, 1, MPI_DOUBLE_INT, 0, 0, 1, MPI_DOUBLE_INT, MPI_MAXLOC, win);
    MPI_Win_fence(0, win);
    MPI_Get_accumulate(NULL, 0, MPI_DOUBLE_INT, &best, 1, MPI_DOUBLE_INT, 0, 0, 1,
                       MPI_DOUBLE_INT, MPI_NO_OP, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    double bv = -1;
    int bi = -1;
    for (int r = 0; r < size; r++)
        if ((double)(r * 7 % 5) > bv) {
            bv = r * 7 % 5;
            bi = r;
        }
    CHECK(best.v == bv && best.i == bi, "MAXLOC gave (%g, %d), want (%g, %d)", best.v, best.i,
          bv, bi);
    /* every other double of rank 0's, times 2, from everyone; the result
     * forms return what was there */
    MPI_Datatype every2;
    MPI_Type_vector(8, 1, 2, MPI_DOUBLE, &every2);
    MPI_Type_commit(&every2);
    double two[8], before[8];
    for (int i = 0; i < 8; i++)
        two[i] = 2;
    MPI_Win_lock_all(0, vwin);
    MPI_Request rq[2];
    MPI_Raccumulate(two, 8, MPI_DOUBLE, 0, 0, 1, every2, MPI_PROD, vwin, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    MPI_Win_flush(0, vwin);
    MPI_Win_unlock_all(vwin);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, vwin);
    double swap[2] = {-3, -4};
    MPI_Rget_accumulate(NULL, 0, MPI_DOUBLE, before, 8, MPI_DOUBLE, 0, 0, 1, every2, MPI_NO_OP,
                        vwin, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    double got_odd[2];
    MPI_Rget(got_odd, 2, MPI_DOUBLE, 0, 1, 2, MPI_DOUBLE, vwin, &rq[1]);
    MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
    double want = 1;
    for (int r = 0; r < size; r++)
        want *= 2;
    for (int i = 0; i < 8; i++)
        CHECK(before[i] == want, "strided accumulate: element %d is %g, want %g", 2 * i,
              before[i], want);
    CHECK(got_odd[0] == 1 && got_odd[1] == want, "neighbours: %g %g", got_odd[0], got_odd[1]);
    MPI_Win_unlock_all(vwin);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1) { /* replace two values, get the old ones back */
        double old[2];
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, vwin);
        MPI_Get_accumulate(swap, 2, MPI_DOUBLE, old, 2, MPI_DOUBLE, 0, 14, 2, MPI_DOUBLE,
                           MPI_REPLACE, vwin);
        MPI_Win_unlock(0, vwin);
        CHECK(old[0] == want && old[1] == 1, "replace returned %g %g", old[0], old[1]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(vals[14] == -3 && vals[15] == -4, "after replace: %g %g", vals[14], vals[15]);
    MPI_Type_free(&every2);
    MPI_Win_free(&vwin);
    MPI_Win_free(&win);
}

/* post / start / complete / wait: each rank exposes to its left-hand
 * neighbour and accesses its right-hand one */
static void test_pscw(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size, mem[4] = {0, 0, 0, 0};
    MPI_Group world, gl, gr;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &gl);
    MPI_Group_incl(world, 1, &right, &gr);
    MPI_Win win;
    MPI_Win_create(mem, sizeof(mem), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int round = 1; round <= 3; round++) {
        MPI_Win_post(gl, 0, win);
        MPI_Win_start(gr, 0, win);
        int v[2] = {rank * 10 + round, -round};
        MPI_Put(v, 2, MPI_INT, right, 1, 2, MPI_INT, win);
        MPI_Win_complete(win);
        if (round == 3) {
            int flag = 0;
            for (int i = 0; i < 1000000 && !flag; i++)
                MPI_Win_test(win, &flag);
            CHECK(flag, "MPI_Win_test never saw the completion");
        } else {
            MPI_Win_wait(win);
        }
        CHECK(mem[1] == left * 10 + round && mem[2] == -round, "round %d: %d %d", round, mem[1],
              mem[2]);
    }
    MPI_Win_free(&win);
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
    MPI_Group_free(&world);
}

/* a shared window: every rank's part in one mapping, contiguous; loads
 * and stores between MPI_Win_sync and barriers */
static void test_shared(void)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nr, ns;
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &ns);
    int *mine;
    MPI_Win win;
    MPI_Aint len = (MPI_Aint)sizeof(int) * (size_t)(nr + 1);
    /* tern with TERN_RMA_MAP=0 maps no peer's memory: the window is refused */
    const char *map = getenv("TERN_RMA_MAP");
    bool unmapped = tern && map != NULL && strcmp(map, "0") == 0;
    if (unmapped)
        MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    int e = MPI_Win_allocate_shared(len, sizeof(int), MPI_INFO_NULL, node, &mine, &win);
    if (unmapped) {
        int cls = MPI_SUCCESS;
        MPI_Error_class(e, &cls);
        CHECK(ns == 1 ? e == MPI_SUCCESS : cls == MPI_ERR_RMA_SHARED,
              "a shared window without mappings: %d", cls);
        if (e == MPI_SUCCESS)
            MPI_Win_free(&win);
        MPI_Comm_free(&node);
        return;
    }
    MPI_Win_lock_all(0, win);
    for (int i = 0; i <= nr; i++)
        mine[i] = nr * 100 + i;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    int *base0 = NULL;
    MPI_Aint sz;
    int du;
    MPI_Win_shared_query(win, 0, &sz, &du, &base0);
    CHECK(sz == (MPI_Aint)sizeof(int) && du == (int)sizeof(int), "rank 0's part: %ld, %d",
          (long)sz, du);
    for (int r = 0, at = 0; r < ns; at += r + 1, r++) {
        int *p = NULL;
        MPI_Win_shared_query(win, r, &sz, &du, &p);
        CHECK(p == base0 + at, "rank %d's part is at %p, not right after its neighbour's (%p)",
              r, (void *)p, (void *)(base0 + at));
        for (int i = 0; i <= r && p != NULL; i++)
            CHECK(p[i] == r * 100 + i, "rank %d's [%d] = %d", r, i, p[i]);
        int v = -1, far = r; /* through MPI too */
        MPI_Get(&v, 1, MPI_INT, far, far, 1, MPI_INT, win);
        MPI_Win_flush(far, win);
        CHECK(v == far * 100 + far, "MPI_Get from rank %d: %d", far, v);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
}

/* a dynamic window: memory attached, its address sent, put into and read
 * back, detached */
static void test_dynamic(void)
{
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int buf[16];
    for (int i = 0; i < 16; i++)
        buf[i] = -1;
    MPI_Win_attach(win, buf, sizeof(buf));
    MPI_Aint mine, *addrs = malloc(sizeof(MPI_Aint) * (size_t)size);
    MPI_Get_address(buf, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Win_lock_all(0, win);
    int v[3] = {rank, rank + 1, rank + 2}, w[3] = {0, 0, 0};
    MPI_Put(v, 3, MPI_INT, right, addrs[right] + 4 * (MPI_Aint)sizeof(int), 3, MPI_INT, win);
    MPI_Win_flush(right, win);
    MPI_Get(w, 3, MPI_INT, right, addrs[right] + 4 * (MPI_Aint)sizeof(int), 3, MPI_INT, win);
    MPI_Win_flush(right, win);
    CHECK(w[0] == rank && w[2] == rank + 2, "read back %d %d %d", w[0], w[1], w[2]);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(buf[4] == left && buf[6] == left + 2 && buf[3] == -1 && buf[7] == -1,
          "attached memory: %d %d %d %d", buf[3], buf[4], buf[6], buf[7]);
    /* a lock of a second target while a long put to the first is under
     * way (opening that epoch must not take the first one's key from it) */
    if (size > 2) {
        enum { BIG = 65536 };
        int *big = malloc(sizeof(int) * BIG), *src = malloc(sizeof(int) * BIG);
        for (int i = 0; i < BIG; i++) {
            big[i] = -1;
            src[i] = rank * 1000000 + i;
        }
        MPI_Win_attach(win, big, (MPI_Aint)sizeof(int) * BIG);
        MPI_Get_address(big, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
        MPI_Put(src, BIG, MPI_INT, right, addrs[right], BIG, MPI_INT, win);
        MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
        int peek = 0;
        MPI_Get(&peek, 1, MPI_INT, left, addrs[left], 1, MPI_INT, win);
        MPI_Win_unlock(left, win);
        MPI_Win_unlock(right, win);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(big[0] == left * 1000000 && big[BIG - 1] == left * 1000000 + BIG - 1,
              "the long put under a second lock: %d ... %d", big[0], big[BIG - 1]);
        MPI_Win_detach(win, big);
        free(big);
        free(src);
    }
    MPI_Win_detach(win, buf);
    MPI_Win_free(&win);
    free(addrs);
}

static int deleted;
static int del_fn(MPI_Win win, int keyval, void *value, void *extra)
{
    (void)win, (void)keyval, (void)extra;
    deleted += value == (void *)&deleted;
    return MPI_SUCCESS;
}

/* the predefined attributes, a user attribute, name, group, info */
static void test_attrs(void)
{
    double *mem;
    MPI_Win win;
    MPI_Win_allocate(sizeof(double) * 4, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    void *base;
    MPI_Aint *wsize;
    int *unit, *flavor, *model, flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
    CHECK(flag && base == mem, "MPI_WIN_BASE %p, memory at %p", base, (void *)mem);
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag);
    CHECK(flag && *wsize == 32, "MPI_WIN_SIZE %ld", (long)*wsize);
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag);
    CHECK(flag && *unit == 8, "MPI_WIN_DISP_UNIT %d", *unit);
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "flavor %d", *flavor);
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
    CHECK(flag && (*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE), "model %d", *model);
    int key;
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &key, NULL);
    MPI_Win_set_attr(win, key, &deleted);
    void *v = NULL;
    MPI_Win_get_attr(win, key, &v, &flag);
    CHECK(flag && v == &deleted, "user attribute: %d %p", flag, v);
    MPI_Win_set_name(win, "tern-window");
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    MPI_Win_get_name(win, name, &len);
    CHECK(strcmp(name, "tern-window") == 0 && len == 11, "name '%s'", name);
    MPI_Group g;
    int gs = 0;
    MPI_Win_get_group(win, &g);
    MPI_Group_size(g, &gs);
    CHECK(gs == size, "group of %d", gs);
    MPI_Group_free(&g);
    MPI_Info info;
    MPI_Win_get_info(win, &info);
    CHECK(info != MPI_INFO_NULL, "no info");
    MPI_Info_free(&info);
    MPI_Win_free(&win);
    CHECK(deleted == 1, "the delete callback ran %d times", deleted);
    MPI_Win_free_keyval(&key);
}

static int errh_calls;
static void win_errh(MPI_Win *win, int *code, ...)
{
    (void)win, (void)code;
    errh_calls++;
}

/* what a window reports (MPI_ERRORS_RETURN set on it) */
static void test_errors(void)
{
    int mem[4] = {0}, v = 1, cls = 0;
    MPI_Win win, other;
    MPI_Win_create(mem, sizeof(mem), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int e;
    if (tern) {
        e = MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win); /* no epoch */
        MPI_Error_class(e, &cls);
        CHECK(e != MPI_SUCCESS && cls == MPI_ERR_RMA_SYNC, "put without an epoch: %d", cls);
    }
    e = MPI_Win_lock(12345, 0, 0, win);
    MPI_Error_class(e, &cls);
    CHECK(e != MPI_SUCCESS && (cls == MPI_ERR_LOCKTYPE || (!tern && cls == MPI_ERR_ARG)),
          "lock type 12345: %d", cls); /* MPICH says MPI_ERR_ARG */
    e = MPI_Win_unlock(0, win);
    MPI_Error_class(e, &cls);
    CHECK(e != MPI_SUCCESS && cls == MPI_ERR_RMA_SYNC, "unlock without lock: %d", cls);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    if (tern) { /* erroneous programs: MPICH writes past the end */
        e = MPI_Put(&v, 1, MPI_INT, 0, 4, 1, MPI_INT, win); /* one past the end */
        MPI_Error_class(e, &cls);
        CHECK(e != MPI_SUCCESS && cls == MPI_ERR_RMA_RANGE, "put past the end: %d", cls);
    }
    e = MPI_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win);
    MPI_Error_class(e, &cls);
    CHECK(e != MPI_SUCCESS && cls == MPI_ERR_RANK, "rank %d: %d", size, cls);
    MPI_Win_unlock(0, win);
    MPI_Aint sz;
    int du;
    void *p;
    e = MPI_Win_shared_query(win, 0, &sz, &du, &p);
    MPI_Error_class(e, &cls);
    CHECK(e != MPI_SUCCESS && cls == MPI_ERR_RMA_FLAVOR, "shared query of a created window: %d",
          cls);
    /* a user handler gets the window's errors */
    MPI_Errhandler h;
    MPI_Win_create_errhandler(win_errh, &h);
    MPI_Win_set_errhandler(win, h);
    MPI_Win_unlock(0, win);
    CHECK(errh_calls == 1, "the window's handler ran %d times", errh_calls);
    MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
    CHECK(errh_calls == 2, "MPI_Win_call_errhandler: the handler ran %d times", errh_calls);
    MPI_Errhandler_free(&h);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    /* windows with nothing in them: size 0 on every rank */
    MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &other);
    MPI_Win_set_errhandler(other, MPI_ERRORS_RETURN);
    MPI_Win_fence(0, other);
    if (tern) {
        e = MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, other);
        MPI_Error_class(e, &cls);
        CHECK(e != MPI_SUCCESS && cls == MPI_ERR_RMA_RANGE, "put into a window of size 0: %d",
              cls);
    }
    e = MPI_Put(&v, 0, MPI_INT, 0, 0, 0, MPI_INT, other);
    CHECK(e == MPI_SUCCESS, "a put of nothing failed");
    MPI_Win_fence(0, other);
    MPI_Win_free(&other);
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    tern = strstr(lib, "tern") != NULL;
    test_fence();
    test_passive();
    test_accumulate();
    test_pscw();
    test_shared();
    test_dynamic();
    test_attrs();
    test_errors();
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (failures == 0)
        printf("ok rank %d\n", rank);
    MPI_Finalize();
    return all != 0;
}
