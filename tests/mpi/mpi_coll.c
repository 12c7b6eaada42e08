/*
 * MPI collectives test for tern's MPI layer (tests/mpi/mpi.sh): every
 * collective of the layer at several sizes, datatypes, operations and
 * roots, against a serial reference each rank computes itself (every
 * rank's contribution is a function of its rank).  Plain MPI: passes under
 * MPICH too.  Prints "ok rank R" or "FAIL ..." lines.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mpi/mpi_check.h"

/* odd counts too, that the ranks do not divide (mpi.sh runs this a second
 * time with the size thresholds low, so that every algorithm sees each) */
static const int counts[] = {1, 3, 7, 1003, 70000};
#define NCOUNTS (int)(sizeof(counts) / sizeof(counts[0]))

static int64_t val(int r, int i) { return (int64_t)((r + 1) * 7 + i * 13 % 101) - 50; }

/* 2x2 integer matrices mod P: associative, not commutative */
#define P 1000003
static void matmul(void *in, void *io, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int64_t *a = in, *b = io;
    for (int m = 0; m < *len / 4; m++, a += 4, b += 4) {
        int64_t r[4] = {(a[0] * b[0] + a[1] * b[2]) % P, (a[0] * b[1] + a[1] * b[3]) % P,
                        (a[2] * b[0] + a[3] * b[2]) % P, (a[2] * b[1] + a[3] * b[3]) % P};
        memcpy(b, r, sizeof(r));
    }
}
/* a commutative user operation: the predefined ones' paths are not taken */
static void usersum(void *in, void *io, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int64_t *)io)[i] += ((const int64_t *)in)[i];
}
static void mat_of(int r, int64_t m[4]) { m[0] = r + 1; m[1] = 2; m[2] = r % 3; m[3] = 1; }

static void reductions(void)
{
    for (int ci = 0; ci < NCOUNTS; ci++) {
        int n = counts[ci];
        int64_t *in = malloc(sizeof(int64_t) * (size_t)n), *out = malloc(sizeof(int64_t) * (size_t)n);
        double *din = malloc(sizeof(double) * (size_t)n), *dout = malloc(sizeof(double) * (size_t)n);
        for (int i = 0; i < n; i++) {
            in[i] = val(rank, i);
            din[i] = (double)val(rank, i) * 0.5;
        }
        /* allreduce sum (int64), max (double), in place min */
        MPI_Allreduce(in, out, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) {
            int64_t want = 0;
            for (int r = 0; r < size; r++)
                want += val(r, i);
            if (out[i] != want) {
                CHECK(0, "allreduce sum n=%d i=%d: %lld vs %lld", n, i, (long long)out[i],
                      (long long)want);
                break;
            }
        }
        MPI_Allreduce(din, dout, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) {
            double want = -1e300;
            for (int r = 0; r < size; r++)
                want = (double)val(r, i) * 0.5 > want ? (double)val(r, i) * 0.5 : want;
            if (dout[i] != want) {
                CHECK(0, "allreduce max n=%d i=%d", n, i);
                break;
            }
        }
        memcpy(out, in, sizeof(int64_t) * (size_t)n);
        MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) {
            int64_t want = val(0, i);
            for (int r = 1; r < size; r++)
                want = val(r, i) < want ? val(r, i) : want;
            if (out[i] != want) {
                CHECK(0, "allreduce in-place min n=%d i=%d", n, i);
                break;
            }
        }
        /* reduce to each root (bitwise or of ints), scan (sum) */
        for (int root = 0; root < size; root += size > 2 ? size - 1 : 1) {
            memset(out, 0, sizeof(int64_t) * (size_t)n);
            MPI_Reduce(in, out, n, MPI_LONG, MPI_BOR, root, MPI_COMM_WORLD);
            if (rank == root)
                for (int i = 0; i < n; i++) {
                    int64_t want = 0;
                    for (int r = 0; r < size; r++)
                        want |= val(r, i);
                    if (out[i] != want) {
                        CHECK(0, "reduce bor root %d n=%d i=%d", root, n, i);
                        break;
                    }
                }
        }
        MPI_Scan(in, out, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) {
            int64_t want = 0;
            for (int r = 0; r <= rank; r++)
                want += val(r, i);
            if (out[i] != want) {
                CHECK(0, "scan n=%d i=%d", n, i);
                break;
            }
        }
        /* exscan: rank 0's buffer is undefined (left alone here) */
        for (int i = 0; i < n; i++)
            out[i] = -7;
        MPI_Exscan(in, out, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < n && rank > 0; i++) {
            int64_t want = 0;
            for (int r = 0; r < rank; r++)
                want += val(r, i);
            if (out[i] != want) {
                CHECK(0, "exscan n=%d i=%d", n, i);
                break;
            }
        }
        /* a commutative user op, in place */
        MPI_Op us;
        MPI_Op_create(usersum, 1, &us);
        memcpy(out, in, sizeof(int64_t) * (size_t)n);
        MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_INT64_T, us, MPI_COMM_WORLD);
        MPI_Op_free(&us);
        for (int i = 0; i < n; i++) {
            int64_t want = 0;
            for (int r = 0; r < size; r++)
                want += val(r, i);
            if (out[i] != want) {
                CHECK(0, "allreduce user sum n=%d i=%d", n, i);
                break;
            }
        }
        free(in);
        free(out);
        free(din);
        free(dout);
    }
    /* a non-commutative user operation: the product of the ranks' matrices
     * in rank order, by reduce (to the last rank), allreduce and scan */
    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    int64_t m[8], r[8], want[4] = {1, 0, 0, 1};
    mat_of(rank, m);
    mat_of(rank, m + 4);
    int64_t upto[4] = {1, 0, 0, 1};
    for (int q = 0; q < size; q++) {
        int64_t x[4];
        mat_of(q, x);
        matmul(want, x, (int[]){4}, NULL); /* x = want * x */
        memcpy(want, x, sizeof(x));
        if (q == rank)
            memcpy(upto, want, sizeof(want));
    }
    MPI_Allreduce(m, r, 8, MPI_INT64_T, op, MPI_COMM_WORLD);
    CHECK(memcmp(r, want, sizeof(want)) == 0 && memcmp(r + 4, want, sizeof(want)) == 0,
          "non-commutative allreduce");
    MPI_Reduce(m, r, 8, MPI_INT64_T, op, size - 1, MPI_COMM_WORLD);
    if (rank == size - 1)
        CHECK(memcmp(r, want, sizeof(want)) == 0, "non-commutative reduce to the last rank");
    MPI_Scan(m, r, 4, MPI_INT64_T, op, MPI_COMM_WORLD);
    CHECK(memcmp(r, upto, sizeof(upto)) == 0, "non-commutative scan");
    int64_t below[4] = {1, 0, 0, 1}; /* the product of the ranks before this one */
    for (int q = 0; q < rank; q++) {
        int64_t x[4];
        mat_of(q, x);
        matmul(below, x, (int[]){4}, NULL);
        memcpy(below, x, sizeof(x));
    }
    MPI_Exscan(m, r, 4, MPI_INT64_T, op, MPI_COMM_WORLD);
    if (rank > 0)
        CHECK(memcmp(r, below, sizeof(below)) == 0, "non-commutative exscan");
    /* long enough for the long algorithms: keeps the order still */
    int64_t *lm = malloc(sizeof(int64_t) * 4 * 1001), *lr = malloc(sizeof(int64_t) * 4 * 1001);
    for (int i = 0; i < 1001; i++)
        mat_of(rank, lm + 4 * i);
    MPI_Allreduce(lm, lr, 4 * 1001, MPI_INT64_T, op, MPI_COMM_WORLD);
    for (int i = 0; i < 1001; i++)
        if (memcmp(lr + 4 * i, want, sizeof(want)) != 0) {
            CHECK(0, "long non-commutative allreduce, matrix %d", i);
            break;
        }
    free(lm);
    free(lr);
    MPI_Op_free(&op);
    CHECK(op == MPI_OP_NULL, "op_free");
}

static void movement(void)
{
    for (int ci = 0; ci < NCOUNTS; ci++) {
        int n = counts[ci];
        int *mine = malloc(sizeof(int) * (size_t)n), *all = malloc(sizeof(int) * (size_t)n * (size_t)size);
        int *all2 = malloc(sizeof(int) * (size_t)n * (size_t)size);
        for (int i = 0; i < n; i++)
            mine[i] = (int)val(rank, i);
        for (int root = 0; root < size; root += size > 2 ? size - 1 : 1) {
            /* bcast */
            int *b = malloc(sizeof(int) * (size_t)n);
            for (int i = 0; i < n; i++)
                b[i] = rank == root ? (int)val(root, i) : -1;
            MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD);
            for (int i = 0; i < n; i++)
                if (b[i] != (int)val(root, i)) {
                    CHECK(0, "bcast root %d n=%d i=%d", root, n, i);
                    break;
                }
            free(b);
            /* gather, then scatter it back */
            memset(all, 0xff, sizeof(int) * (size_t)n * (size_t)size);
            MPI_Gather(mine, n, MPI_INT, all, n, MPI_INT, root, MPI_COMM_WORLD);
            if (rank == root)
                for (int r = 0; r < size; r++)
                    for (int i = 0; i < n; i++)
                        if (all[r * n + i] != (int)val(r, i)) {
                            CHECK(0, "gather root %d block %d", root, r);
                            r = size;
                            break;
                        }
            int *back = malloc(sizeof(int) * (size_t)n);
            MPI_Scatter(all, n, MPI_INT, back, n, MPI_INT, root, MPI_COMM_WORLD);
            CHECK(memcmp(back, mine, sizeof(int) * (size_t)n) == 0, "scatter root %d n=%d", root, n);
            free(back);
        }
        /* allgather (and in place) */
        MPI_Allgather(mine, n, MPI_INT, all, n, MPI_INT, MPI_COMM_WORLD);
        memcpy(all2 + rank * n, mine, sizeof(int) * (size_t)n);
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all2, n, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                if (all[r * n + i] != (int)val(r, i) || all2[r * n + i] != (int)val(r, i)) {
                    CHECK(0, "allgather n=%d block %d", n, r);
                    r = size;
                    break;
                }
        /* alltoall: block j of rank r is val(r * 1000 + j, i) */
        for (int j = 0; j < size; j++)
            for (int i = 0; i < n; i++)
                all[j * n + i] = (int)val(rank * 1000 + j, i);
        MPI_Alltoall(all, n, MPI_INT, all2, n, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                if (all2[r * n + i] != (int)val(r * 1000 + rank, i)) {
                    CHECK(0, "alltoall n=%d from %d", n, r);
                    r = size;
                    break;
                }
        free(mine);
        free(all);
        free(all2);
    }
    /* v forms: rank r contributes r + 1 ints */
    int *rc = malloc(sizeof(int) * (size_t)size), *dis = malloc(sizeof(int) * (size_t)size);
    int total = 0;
    for (int r = 0; r < size; r++) {
        rc[r] = r + 1;
        dis[r] = total;
        total += r + 1;
    }
    int *mine = malloc(sizeof(int) * (size_t)(rank + 1)), *all = malloc(sizeof(int) * (size_t)total);
    for (int i = 0; i <= rank; i++)
        mine[i] = rank * 100 + i;
    MPI_Allgatherv(mine, rank + 1, MPI_INT, all, rc, dis, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i <= r; i++)
            CHECK(all[dis[r] + i] == r * 100 + i, "allgatherv block %d", r);
    memset(all, 0, sizeof(int) * (size_t)total);
    MPI_Gatherv(mine, rank + 1, MPI_INT, all, rc, dis, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < size; r++)
            CHECK(all[dis[r] + r] == r * 100 + r, "gatherv block %d", r);
    int *back = malloc(sizeof(int) * (size_t)(rank + 1));
    MPI_Scatterv(all, rc, dis, MPI_INT, back, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(memcmp(back, mine, sizeof(int) * (size_t)(rank + 1)) == 0, "scatterv");
    /* alltoallv: rank r sends j + 1 ints to rank j */
    int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
    int *rcv = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
    int st = 0, rt = 0;
    for (int j = 0; j < size; j++) {
        sc[j] = j + 1;
        sd[j] = st;
        st += j + 1;
        rcv[j] = rank + 1;
        rd[j] = rt;
        rt += rank + 1;
    }
    int *sbuf = malloc(sizeof(int) * (size_t)st), *rbuf = malloc(sizeof(int) * (size_t)rt);
    for (int j = 0; j < size; j++)
        for (int i = 0; i <= j; i++)
            sbuf[sd[j] + i] = rank * 1000 + j * 10 + i;
    MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rcv, rd, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i <= rank; i++)
            CHECK(rbuf[rd[r] + i] == r * 1000 + rank * 10 + i, "alltoallv from %d", r);
    /* reduce_scatter_block: block j of the sum goes to rank j */
    int *vec = malloc(sizeof(int) * (size_t)size * 3), blk[3];
    for (int i = 0; i < size * 3; i++)
        vec[i] = rank + i;
    MPI_Reduce_scatter_block(vec, blk, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++)
        CHECK(blk[i] == size * (size - 1) / 2 + size * (rank * 3 + i), "reduce_scatter_block %d", i);
    /* reduce_scatter: rank r gets r + 2 elements of the sum (and in place) */
    int tot = 0, *cnt = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; r++) {
        cnt[r] = r + 2;
        tot += r + 2;
    }
    int *rsv = malloc(sizeof(int) * (size_t)tot), *rso = malloc(sizeof(int) * (size_t)tot);
    int first = 0;
    for (int r = 0; r < rank; r++)
        first += r + 2;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < tot; i++)
            rsv[i] = rank * 3 + i;
        if (pass == 0)
            MPI_Reduce_scatter(rsv, rso, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Reduce_scatter(MPI_IN_PLACE, rsv, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        const int *got = pass == 0 ? rso : rsv;
        for (int i = 0; i < rank + 2; i++)
            CHECK(got[i] == 3 * size * (size - 1) / 2 + size * (first + i),
                  "reduce_scatter%s %d: %d", pass ? " in place" : "", i, got[i]);
    }
    free(cnt);
    free(rsv);
    free(rso);
    free(vec);
    free(rc);
    free(dis);
    free(mine);
    free(all);
    free(back);
    free(sc);
    free(sd);
    free(rcv);
    free(rd);
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    reductions();
    movement();
    MPI_Barrier(MPI_COMM_WORLD);
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
