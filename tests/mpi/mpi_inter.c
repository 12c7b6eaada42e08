/*
 * Intercommunicators test for tern's MPI layer (tests/mpi/mpi_inter.sh).
 * MPI_COMM_WORLD's ranks are cut in two groups, A (the first half, one
 * more when odd) and B, joined by MPI_Intercomm_create; on it: the
 * queries (sizes, ranks, local and remote groups, test_inter, compare),
 * point to point naming remote ranks (any source, a rendezvous size,
 * messages kept apart from a dup's), every collective from every root of
 * both groups with MPI_ROOT / MPI_PROC_NULL (the processes of the root's
 * group that are not the root leave their buffers alone), blocking and
 * non-blocking, with a derived type and a non-commutative operation;
 * MPI_Intercomm_merge in both orders; MPI_Comm_dup (attributes copied),
 * _split (colors, keys backwards, a color one group lacks), _create,
 * _idup and _free of intercommunicators; a second intercommunicator of
 * interleaved groups beside the first; the error classes of bad roots,
 * ranks, MPI_ROOT on an intracommunicator, MPI_IN_PLACE, calls MPI
 * defines on one kind only; and more create / free cycles than there are
 * context ids.  At one rank only the errors that need no second group.
 * Plain MPI: passes under MPICH too (what only tern does is under
 * TERN_MPI_H).  Prints "ok rank R of N" or "FAIL ..." lines.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mpi/mpi_check.h"

static int nA, nB, myl; /* the groups' sizes, this process's rank in its own */
static int inA;

static int lsz(void) { return inA ? nA : nB; }
static int rsz(void) { return inA ? nB : nA; }
static int lw(int i) { return inA ? i : nA + i; } /* world rank of local rank i */
static int rw(int j) { return inA ? nA + j : j; } /* world rank of remote rank j */
static int val(int w, int i) { return w * 1000 + i; }

/* an error of class cls (exactly with tern's header, or when exact), and
 * with tern a message naming the call */
static void expect_err(int e, int cls, int exact, const char *call)
{
    int c = -1;
    if (e != MPI_SUCCESS)
        MPI_Error_class(e, &c);
#ifdef TERN_MPI_H
    exact = 1;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (e != MPI_SUCCESS) {
        MPI_Error_string(e, msg, &len);
        CHECK(strstr(msg, call) != NULL, "%s: the message \"%s\" does not name the call", call,
              msg);
    }
#endif
    if (exact)
        CHECK(c == cls, "%s gave class %d, expected %d", call, c, cls);
    else
        CHECK(e != MPI_SUCCESS, "%s succeeded", call);
}

/* the world ranks of a group, in its order */
static void group_world(MPI_Group g, int n, int *out)
{
    MPI_Group wg;
    int *in = malloc(sizeof(int) * (size_t)n);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; i < n; i++)
        in[i] = i;
    MPI_Group_translate_ranks(g, n, in, wg, out);
    MPI_Group_free(&wg);
    free(in);
}

/* ic joins the groups A and B (this process at its rank myl) */
static void expect_inter(MPI_Comm ic, const char *what)
{
    int flag = 0, s = -1, r = -1, rs = -1;
    MPI_Comm_test_inter(ic, &flag);
    MPI_Comm_size(ic, &s);
    MPI_Comm_rank(ic, &r);
    MPI_Comm_remote_size(ic, &rs);
    CHECK(flag && s == lsz() && r == myl && rs == rsz(), "%s: inter %d size %d rank %d remote "
          "%d, expected %d %d %d", what, flag, s, r, rs, lsz(), myl, rsz());
    MPI_Group lg, rg;
    MPI_Comm_group(ic, &lg);
    MPI_Comm_remote_group(ic, &rg);
    int w[64];
    group_world(lg, lsz(), w);
    for (int i = 0; i < lsz(); i++)
        CHECK(w[i] == lw(i), "%s: local rank %d is world %d, expected %d", what, i, w[i], lw(i));
    group_world(rg, rsz(), w);
    for (int j = 0; j < rsz(); j++)
        CHECK(w[j] == rw(j), "%s: remote rank %d is world %d, expected %d", what, j, w[j], rw(j));
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
}

/* ---- point to point -------------------------------------------------------------- */

static void p2p(MPI_Comm ic, const char *what)
{
    int n = rsz();
    /* to every remote process, from every one (any source: the status
     * names the remote rank) */
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * (size_t)n);
    int *in = malloc(sizeof(int) * (size_t)n), out = rank;
    for (int j = 0; j < n; j++) {
        MPI_Irecv(&in[j], 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &rq[j]);
        MPI_Isend(&out, 1, MPI_INT, j, 5, ic, &rq[n + j]);
    }
    MPI_Status *st = malloc(sizeof(MPI_Status) * 2 * (size_t)n);
    MPI_Waitall(2 * n, rq, st);
    int seen = 0;
    for (int j = 0; j < n; j++) {
        int src = st[j].MPI_SOURCE;
        CHECK(src >= 0 && src < n && in[j] == rw(src), "%s: message %d from remote %d is %d",
              what, j, src, in[j]);
        if (src >= 0 && src < n)
            seen |= 1 << src;
    }
    CHECK(seen == (1 << n) - 1, "%s: remote senders seen %#x", what, seen);
    /* a rendezvous size, remote rank 0 <-> this group's rank 0 */
    if (myl == 0) {
        int big = 300000;
        int *b = malloc(sizeof(int) * (size_t)big), *c = malloc(sizeof(int) * (size_t)big);
        for (int i = 0; i < big; i++)
            b[i] = val(rank, i);
        MPI_Status s;
        MPI_Sendrecv(b, big, MPI_INT, 0, 6, c, big, MPI_INT, 0, 6, ic, &s);
        int bad = 0, cnt = -1;
        for (int i = 0; i < big; i++)
            bad += c[i] != val(rw(0), i);
        MPI_Get_count(&s, MPI_INT, &cnt);
        CHECK(bad == 0 && s.MPI_SOURCE == 0 && cnt == big, "%s: 1.2 MB from remote 0: %d bad, "
              "source %d count %d", what, bad, s.MPI_SOURCE, cnt);
        free(b);
        free(c);
    }
    /* MPI_PROC_NULL */
    MPI_Status s;
    int x = 7;
    MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, ic, &s);
    CHECK(x == 7 && s.MPI_SOURCE == MPI_PROC_NULL, "%s: receive from MPI_PROC_NULL", what);
    free(rq);
    free(in);
    free(st);
}

/* ---- collectives ------------------------------------------------------------------- */

/* The roots: group side (0: A, 1: B), rank r there; this process's root
 * argument and the root's world rank. */
static int root_arg(int side, int r, int *root_world)
{
    *root_world = side == 0 ? r : nA + r;
    if ((side == 0) == (inA != 0))
        return myl == r ? MPI_ROOT : MPI_PROC_NULL;
    return r;
}

static void wait_if(int nb, MPI_Request *q)
{
    if (nb)
        MPI_Wait(q, MPI_STATUS_IGNORE);
}

/* a user operation that keeps its left operand: associative, not
 * commutative, so a reduction's result is its first rank's value */
static void keep_left(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, sizeof(int) * (size_t)*len);
}

enum { CNT = 3, BIG = 5000 };

static void rooted(MPI_Comm ic, int nb, MPI_Op left, MPI_Datatype vec, const char *what)
{
    MPI_Request q = MPI_REQUEST_NULL;
    int n = rsz();
    int *buf = malloc(sizeof(int) * (size_t)(BIG + 64 * 8 * CNT));
    int *big = malloc(sizeof(int) * (size_t)(2 * n * 8 + 2 * BIG));
    for (int side = 0; side < 2; side++)
        for (int r = 0; r < (side == 0 ? nA : nB); r++) {
            int rootw, root = root_arg(side, r, &rootw);
            int amroot = root == MPI_ROOT, idle = root == MPI_PROC_NULL, skip = 0;
#ifndef TERN_MPI_H
            /* MPICH 4.0.2's MPI_Ibcast on an intercommunicator delivers
             * nothing, or another root's data, from a root that is not its
             * group's rank 0 (the blocking form is right) */
            skip = nb && r != 0;
#endif
            /* bcast, a rendezvous size */
            for (int i = 0; i < BIG && !skip; i++)
                buf[i] = amroot ? val(rank, i) : -1;
            if (nb && !skip)
                MPI_Ibcast(buf, BIG, MPI_INT, root, ic, &q);
            else if (!skip)
                MPI_Bcast(buf, BIG, MPI_INT, root, ic);
            wait_if(nb && !skip, &q);
            int bad = 0;
            for (int i = 0; i < BIG && !skip; i++)
                bad += buf[i] != (idle ? -1 : val(rootw, i));
            CHECK(bad == 0, "%s: bcast from world %d (root %d): %d bad", what, rootw, root, bad);
            /* bcast of a vector type: every other int */
            for (int i = 0; i < 2 * CNT; i++)
                buf[i] = amroot ? val(rank, i) : -1;
            if (nb && !skip)
                MPI_Ibcast(buf, 1, vec, root, ic, &q);
            else if (!skip)
                MPI_Bcast(buf, 1, vec, root, ic);
            wait_if(nb && !skip, &q);
            for (int i = 0; i < 2 * CNT && !skip; i++) {
                int want = idle || (i % 2 && !amroot) ? -1 : val(amroot ? rank : rootw, i);
                CHECK(buf[i] == want, "%s: vector bcast from world %d: [%d] %d, expected %d",
                      what, rootw, i, buf[i], want);
            }
            /* reduce: the other group's sum at the root */
            int sb[CNT], rb[CNT];
            for (int i = 0; i < CNT; i++)
                sb[i] = val(rank, i), rb[i] = -1;
            if (nb)
                MPI_Ireduce(sb, rb, CNT, MPI_INT, MPI_SUM, root, ic, &q);
            else
                MPI_Reduce(sb, rb, CNT, MPI_INT, MPI_SUM, root, ic);
            wait_if(nb, &q);
            for (int i = 0; i < CNT; i++) {
                int want = 0;
                for (int j = 0; j < n; j++)
                    want += val(rw(j), i);
                CHECK(rb[i] == (amroot ? want : -1), "%s: reduce to world %d: [%d] %d", what,
                      rootw, i, rb[i]);
            }
            /* a non-commutative one: the first remote rank's values */
            for (int i = 0; i < CNT; i++)
                rb[i] = -1;
            if (nb)
                MPI_Ireduce(sb, rb, CNT, MPI_INT, left, root, ic, &q);
            else
                MPI_Reduce(sb, rb, CNT, MPI_INT, left, root, ic);
            wait_if(nb, &q);
            for (int i = 0; i < CNT; i++)
                CHECK(rb[i] == (amroot ? val(rw(0), i) : -1), "%s: keep-left reduce to world "
                      "%d: [%d] %d", what, rootw, i, rb[i]);
            /* gather, gatherv (gaps of 2 between blocks, left alone) */
            int m = 8 * n * CNT;
            for (int i = 0; i < m; i++)
                buf[i] = -1;
            if (nb)
                MPI_Igather(sb, CNT, MPI_INT, buf, CNT, MPI_INT, root, ic, &q);
            else
                MPI_Gather(sb, CNT, MPI_INT, buf, CNT, MPI_INT, root, ic);
            wait_if(nb, &q);
            for (int j = 0; amroot && j < n; j++)
                for (int i = 0; i < CNT; i++)
                    CHECK(buf[j * CNT + i] == val(rw(j), i), "%s: gather at world %d: block %d "
                          "[%d] %d", what, rootw, j, i, buf[j * CNT + i]);
            for (int i = 0; !amroot && i < m; i++)
                CHECK(buf[i] == -1, "%s: gather: a non-root's buffer written", what);
            int counts[64], displs[64];
            for (int j = 0, at = 0; j < n; at += counts[j] + 2, j++)
                counts[j] = j % CNT + 1, displs[j] = at;
            for (int i = 0; i < m; i++)
                buf[i] = -1;
            if (nb)
                MPI_Igatherv(sb, myl % CNT + 1, MPI_INT, buf, counts, displs, MPI_INT, root, ic,
                             &q);
            else
                MPI_Gatherv(sb, myl % CNT + 1, MPI_INT, buf, counts, displs, MPI_INT, root, ic);
            wait_if(nb, &q);
            for (int j = 0; amroot && j < n; j++)
                for (int i = -2; i < counts[j]; i++) {
                    int at = displs[j] + i, want = i < 0 ? -1 : val(rw(j), i);
                    if (at >= 0)
                        CHECK(buf[at] == want, "%s: gatherv at world %d: block %d [%d] %d", what,
                              rootw, j, i, buf[at]);
                }
            /* scatter, scatterv */
            for (int j = 0; j < n; j++)
                for (int i = 0; i < CNT; i++)
                    big[j * CNT + i] = amroot ? val(rank, 100 * j + i) : -1;
            for (int i = 0; i < CNT; i++)
                rb[i] = -1;
            if (nb)
                MPI_Iscatter(big, CNT, MPI_INT, rb, CNT, MPI_INT, root, ic, &q);
            else
                MPI_Scatter(big, CNT, MPI_INT, rb, CNT, MPI_INT, root, ic);
            wait_if(nb, &q);
            for (int i = 0; i < CNT; i++)
                CHECK(rb[i] == (root >= 0 ? val(rootw, 100 * myl + i) : -1), "%s: scatter from "
                      "world %d: [%d] %d", what, rootw, i, rb[i]);
            for (int j = 0; j < n; j++)
                for (int i = 0; i < counts[j]; i++)
                    big[displs[j] + i] = amroot ? val(rank, 100 * j + i) : -1;
            for (int i = 0; i < CNT; i++)
                rb[i] = -1;
            if (nb)
                MPI_Iscatterv(big, counts, displs, MPI_INT, rb, myl % CNT + 1, MPI_INT, root, ic,
                              &q);
            else
                MPI_Scatterv(big, counts, displs, MPI_INT, rb, myl % CNT + 1, MPI_INT, root, ic);
            wait_if(nb, &q);
            for (int i = 0; i < CNT; i++) {
                int want = root >= 0 && i <= myl % CNT ? val(rootw, 100 * myl + i) : -1;
                CHECK(rb[i] == want, "%s: scatterv from world %d: [%d] %d, expected %d", what,
                      rootw, i, rb[i], want);
            }
            if (nb)
                MPI_Ibarrier(ic, &q);
            else
                MPI_Barrier(ic);
            wait_if(nb, &q);
        }
    free(buf);
    free(big);
}

/* allreduce, allgather(v), alltoall(v, w), reduce_scatter(_block) */
static void all(MPI_Comm ic, int nb, const char *what)
{
    MPI_Request q = MPI_REQUEST_NULL;
    int n = rsz(), sb[BIG], rb[BIG];
    for (int i = 0; i < BIG; i++)
        sb[i] = val(rank, i), rb[i] = -1;
    if (nb)
        MPI_Iallreduce(sb, rb, BIG, MPI_INT, MPI_SUM, ic, &q);
    else
        MPI_Allreduce(sb, rb, BIG, MPI_INT, MPI_SUM, ic);
    wait_if(nb, &q);
    int bad = 0;
    for (int i = 0; i < BIG; i++) {
        int want = 0;
        for (int j = 0; j < n; j++)
            want += val(rw(j), i);
        bad += rb[i] != want;
    }
    CHECK(bad == 0, "%s: allreduce: %d bad", what, bad);
    /* allgather */
    for (int i = 0; i < n * CNT; i++)
        rb[i] = -1;
    if (nb)
        MPI_Iallgather(sb, CNT, MPI_INT, rb, CNT, MPI_INT, ic, &q);
    else
        MPI_Allgather(sb, CNT, MPI_INT, rb, CNT, MPI_INT, ic);
    wait_if(nb, &q);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < CNT; i++)
            CHECK(rb[j * CNT + i] == val(rw(j), i), "%s: allgather block %d [%d] %d", what, j,
                  i, rb[j * CNT + i]);
    /* allgatherv: remote rank j gives j % CNT + 1, blocks backwards */
    int counts[64], displs[64], scounts[64], sdispls[64], rcounts[64], rdispls[64];
    for (int j = 0, at = 0; j < n; j++) {
        counts[n - 1 - j] = (n - 1 - j) % CNT + 1;
        displs[n - 1 - j] = at;
        at += counts[n - 1 - j] + 1;
    }
    for (int i = 0; i < 4 * n * CNT; i++)
        rb[i] = -1;
    if (nb)
        MPI_Iallgatherv(sb, myl % CNT + 1, MPI_INT, rb, counts, displs, MPI_INT, ic, &q);
    else
        MPI_Allgatherv(sb, myl % CNT + 1, MPI_INT, rb, counts, displs, MPI_INT, ic);
    wait_if(nb, &q);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < counts[j]; i++)
            CHECK(rb[displs[j] + i] == val(rw(j), i), "%s: allgatherv block %d [%d] %d", what, j,
                  i, rb[displs[j] + i]);
    /* alltoall: block j to remote j */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < CNT; i++)
            sb[j * CNT + i] = val(rank, 10 * j + i), rb[j * CNT + i] = -1;
    if (nb)
        MPI_Ialltoall(sb, CNT, MPI_INT, rb, CNT, MPI_INT, ic, &q);
    else
        MPI_Alltoall(sb, CNT, MPI_INT, rb, CNT, MPI_INT, ic);
    wait_if(nb, &q);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < CNT; i++)
            CHECK(rb[j * CNT + i] == val(rw(j), 10 * myl + i), "%s: alltoall block %d [%d] %d",
                  what, j, i, rb[j * CNT + i]);
    /* alltoallv, alltoallw: (local s, remote t) moves (s + t) % 3 + 1 */
    for (int w = 0; w < 2; w++) {
        int sat = 0, rat = 0;
        MPI_Datatype st[64], rt[64];
        for (int j = 0; j < n; j++) {
            scounts[j] = rcounts[j] = (myl + j) % 3 + 1;
            sdispls[j] = sat;
            rdispls[j] = rat;
            for (int i = 0; i < scounts[j]; i++)
                sb[sat + i] = val(rank, 10 * j + i);
            sat += scounts[j];
            rat += rcounts[j] + 1;
            st[j] = rt[j] = MPI_INT;
        }
        for (int i = 0; i < rat; i++)
            rb[i] = -1;
        if (w) {
            int sd[64], rd[64];
            for (int j = 0; j < n; j++)
                sd[j] = sdispls[j] * (int)sizeof(int), rd[j] = rdispls[j] * (int)sizeof(int);
            if (nb)
                MPI_Ialltoallw(sb, scounts, sd, st, rb, rcounts, rd, rt, ic, &q);
            else
                MPI_Alltoallw(sb, scounts, sd, st, rb, rcounts, rd, rt, ic);
        } else if (nb) {
            MPI_Ialltoallv(sb, scounts, sdispls, MPI_INT, rb, rcounts, rdispls, MPI_INT, ic, &q);
        } else {
            MPI_Alltoallv(sb, scounts, sdispls, MPI_INT, rb, rcounts, rdispls, MPI_INT, ic);
        }
        wait_if(nb, &q);
        for (int j = 0; j < n; j++)
            for (int i = -1; i < rcounts[j]; i++) {
                int at = rdispls[j] + i, want = i < 0 ? -1 : val(rw(j), 10 * myl + i);
                if (at >= 0)
                    CHECK(rb[at] == want, "%s: alltoall%s block %d [%d] %d, expected %d", what,
                          w ? "w" : "v", j, i, rb[at], want);
            }
    }
    /* reduce_scatter_block: both groups' vectors have nA * nB * 2
     * elements; a process gets its block of the other group's sum */
    int total = nA * nB * 2, rc = total / lsz();
    for (int i = 0; i < total; i++)
        sb[i] = val(rank, i);
    for (int i = 0; i < total; i++)
        rb[i] = -1;
    if (nb)
        MPI_Ireduce_scatter_block(sb, rb, rc, MPI_INT, MPI_SUM, ic, &q);
    else
        MPI_Reduce_scatter_block(sb, rb, rc, MPI_INT, MPI_SUM, ic);
    wait_if(nb, &q);
    for (int i = 0; i < rc; i++) {
        int want = 0;
        for (int j = 0; j < n; j++)
            want += val(rw(j), myl * rc + i);
        CHECK(rb[i] == want, "%s: reduce_scatter_block [%d] %d, expected %d", what, i, rb[i],
              want);
    }
    /* reduce_scatter: the first local rank one more, the last one less */
    int lc[64], off = 0;
    for (int t = 0; t < lsz(); t++)
        lc[t] = rc + (lsz() > 1 && t == 0 ? 1 : 0) - (lsz() > 1 && t == lsz() - 1 ? 1 : 0);
    for (int t = 0; t < myl; t++)
        off += lc[t];
    for (int i = 0; i <= total; i++)
        rb[i] = -1;
    if (nb)
        MPI_Ireduce_scatter(sb, rb, lc, MPI_INT, MPI_SUM, ic, &q);
    else
        MPI_Reduce_scatter(sb, rb, lc, MPI_INT, MPI_SUM, ic);
    wait_if(nb, &q);
    for (int i = 0; i < lc[myl] + 1; i++) { /* the element after the block left alone */
        int want = -1;
        if (i < lc[myl]) {
            want = 0;
            for (int j = 0; j < n; j++)
                want += val(rw(j), off + i);
        }
        CHECK(rb[i] == want, "%s: reduce_scatter [%d] %d, expected %d", what, i, rb[i], want);
    }
}

/* ---- merge, dup, split, create ------------------------------------------------------ */

/* c has n processes, world[] in its order, and this one among them */
static void expect_intra(MPI_Comm c, const int *world, int n, const char *what)
{
    int s = -1, r = -1, flag = 1;
    MPI_Comm_size(c, &s);
    MPI_Comm_rank(c, &r);
    MPI_Comm_test_inter(c, &flag);
    CHECK(!flag && s == n && r >= 0 && r < n && world[r] == rank, "%s: size %d rank %d inter %d",
          what, s, r, flag);
    int *all = malloc(sizeof(int) * (size_t)(s > 0 ? s : 1));
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, c);
    for (int i = 0; i < n && i < s; i++)
        CHECK(all[i] == world[i], "%s: rank %d is world %d, expected %d", what, i, all[i],
              world[i]);
    free(all);
}

static void merges(MPI_Comm ic)
{
    int world[64] = {0}, n = nA + nB;
    MPI_Comm m;
    MPI_Intercomm_merge(ic, !inA, &m); /* A (high false) first */
    for (int i = 0; i < n; i++)
        world[i] = i;
    expect_intra(m, world, n, "merge A first");
    MPI_Comm_free(&m);
    MPI_Intercomm_merge(ic, inA, &m); /* B first */
    for (int i = 0; i < n; i++)
        world[i] = i < nB ? nA + i : i - nB;
    expect_intra(m, world, n, "merge B first");
    MPI_Comm_free(&m);
    /* the same high on both sides: either order, each group in one piece */
    MPI_Intercomm_merge(ic, 0, &m);
    int *all = malloc(sizeof(int) * (size_t)n), s = -1;
    MPI_Comm_size(m, &s);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, m);
    int a_first = all[0] == 0;
    for (int i = 0; i < n && s == n; i++)
        world[i] = a_first ? i : (i < nB ? nA + i : i - nB);
    expect_intra(m, world, n, "merge, both high 0");
    free(all);
    MPI_Comm_free(&m);
}

static void dups(MPI_Comm ic)
{
    int key, v = 42, *got = NULL, flag = 0, cmp = -1;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(ic, key, &v);
    MPI_Comm d;
    MPI_Comm_dup(ic, &d);
    expect_inter(d, "dup");
    MPI_Comm_get_attr(d, key, &got, &flag);
    CHECK(flag && got == &v, "dup: the attribute was not copied (flag %d)", flag);
    MPI_Comm_compare(ic, d, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "compare intercommunicator and its dup: %d", cmp);
    MPI_Comm_compare(ic, ic, &cmp);
    CHECK(cmp == MPI_IDENT, "compare an intercommunicator with itself: %d", cmp);
    MPI_Comm_compare(ic, MPI_COMM_WORLD, &cmp);
    CHECK(cmp == MPI_UNEQUAL, "compare an intercommunicator and MPI_COMM_WORLD: %d", cmp);
    /* messages apart: a receive on d from the other leader, posted first,
     * gets the message it sent on d, not the one on ic (any tag: the other
     * processes' p2p() below sends on d with tag 5 from other sources) */
    if (myl == 0) {
        int a = -1, b = -1, x = rank + 1000, y = rank;
        MPI_Request q[1];
        MPI_Irecv(&a, 1, MPI_INT, 0, MPI_ANY_TAG, d, &q[0]);
        MPI_Send(&y, 1, MPI_INT, 0, 1, ic);
        MPI_Send(&x, 1, MPI_INT, 0, 1, d);
        MPI_Recv(&b, 1, MPI_INT, 0, 1, ic, MPI_STATUS_IGNORE);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        CHECK(a == rw(0) + 1000 && b == rw(0), "dup: messages crossed (%d, %d)", a, b);
    }
    p2p(d, "dup");
    MPI_Comm_free(&d);
    CHECK(d == MPI_COMM_NULL, "free: handle not MPI_COMM_NULL");
    MPI_Comm_free_keyval(&key);
    /* idup */
    MPI_Request q;
    MPI_Comm_idup(ic, &d, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    expect_inter(d, "idup");
    p2p(d, "idup");
    MPI_Comm_free(&d);
}

static void splits(MPI_Comm ic)
{
    /* color: local rank parity, keys backwards: each new intercommunicator
     * joins the processes of one parity of both groups, in reverse order */
    MPI_Comm s;
    int color = myl % 2;
    MPI_Comm_split(ic, color, -myl, &s);
    int ln = 0, rn = 0;
    for (int i = 0; i < lsz(); i++)
        ln += i % 2 == color;
    for (int j = 0; j < rsz(); j++)
        rn += j % 2 == color;
    if (rn == 0) {
        CHECK(s == MPI_COMM_NULL, "split: color %d lacks a remote group, yet a communicator",
              color);
    } else {
        int sz = -1, r = -1, rs = -1;
        MPI_Comm_size(s, &sz);
        MPI_Comm_rank(s, &r);
        MPI_Comm_remote_size(s, &rs);
        int want_r = 0; /* the local ranks of my color above mine come first */
        for (int i = myl + 1; i < lsz(); i++)
            want_r += i % 2 == color;
        CHECK(sz == ln && rs == rn && r == want_r, "split: size %d remote %d rank %d, expected "
              "%d %d %d", sz, rs, r, ln, rn, want_r);
        /* remote rank 0 of it: the highest remote rank of my color */
        int top = rsz() - 1;
        while (top % 2 != color)
            top--;
        int got = -1;
        MPI_Sendrecv(&rank, 1, MPI_INT, 0, 2, &got, 1, MPI_INT, 0, 2, s, MPI_STATUS_IGNORE);
        if (r == 0)
            CHECK(got == rw(top), "split: remote rank 0 is world %d, expected %d", got, rw(top));
        int sum = -1, want = 0;
        for (int j = 0; j < rsz(); j++)
            if (j % 2 == color)
                want += rw(j);
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, s);
        CHECK(sum == want, "split: allreduce %d, expected %d", sum, want);
        MPI_Comm_free(&s);
    }
    /* MPI_UNDEFINED everywhere but local rank 0 of each group */
    MPI_Comm_split(ic, myl == 0 ? 0 : MPI_UNDEFINED, 0, &s);
    if (myl == 0) {
        int rs = -1;
        MPI_Comm_remote_size(s, &rs);
        CHECK(rs == 1, "split of the leaders: remote size %d", rs);
        MPI_Comm_free(&s);
    } else {
        CHECK(s == MPI_COMM_NULL, "split: MPI_UNDEFINED gave a communicator");
    }
    /* create: the local group without its last process (when it has two) */
    MPI_Group lg, sub;
    MPI_Comm_group(ic, &lg);
    int last = lsz() - 1;
    if (lsz() > 1)
        MPI_Group_excl(lg, 1, &last, &sub);
    else
        MPI_Group_incl(lg, 1, &last, &sub);
    MPI_Comm c;
    MPI_Comm_create(ic, sub, &c);
    if (lsz() > 1 && myl == last) {
        CHECK(c == MPI_COMM_NULL, "create: a process left out got a communicator");
    } else {
        int sz = -1, rs = -1;
        MPI_Comm_size(c, &sz);
        MPI_Comm_remote_size(c, &rs);
        CHECK(sz == (lsz() > 1 ? lsz() - 1 : 1) && rs == (rsz() > 1 ? rsz() - 1 : 1),
              "create: size %d remote %d", sz, rs);
        MPI_Barrier(c);
        MPI_Comm_free(&c);
    }
    MPI_Group_free(&sub);
    MPI_Group_free(&lg);
}

/* ---- errors --------------------------------------------------------------------------- */

static void errors_any(void)
{
    int x = 0, n = -1;
    expect_err(MPI_Bcast(&x, 1, MPI_INT, MPI_ROOT, MPI_COMM_WORLD), MPI_ERR_ROOT, 1,
               "MPI_Bcast");
    expect_err(MPI_Reduce(&x, &n, 1, MPI_INT, MPI_SUM, MPI_ROOT, MPI_COMM_WORLD), MPI_ERR_ROOT, 1,
               "MPI_Reduce");
    MPI_Comm m;
#ifdef TERN_MPI_H
    /* MPICH 4.0.2 answers the first two, and asserts in the third */
    expect_err(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), MPI_ERR_COMM, 1,
               "MPI_Comm_remote_size");
    MPI_Group g;
    expect_err(MPI_Comm_remote_group(MPI_COMM_WORLD, &g), MPI_ERR_COMM, 1,
               "MPI_Comm_remote_group");
    expect_err(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &m), MPI_ERR_COMM, 1,
               "MPI_Intercomm_merge");
#endif
    expect_err(MPI_Intercomm_create(MPI_COMM_WORLD, size, MPI_COMM_WORLD, 0, 1, &m),
               MPI_ERR_RANK, 0, "MPI_Intercomm_create");
    int flag = 1;
    MPI_Comm_test_inter(MPI_COMM_WORLD, &flag);
    CHECK(!flag, "MPI_COMM_WORLD is an intercommunicator");
}

static void errors_inter(MPI_Comm ic)
{
    int x = 0, y = 0;
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    expect_err(MPI_Bcast(&x, 1, MPI_INT, rsz(), ic), MPI_ERR_ROOT, 1, "MPI_Bcast");
    expect_err(MPI_Gather(&x, 1, MPI_INT, &y, 1, MPI_INT, -5, ic), MPI_ERR_ROOT, 1,
               "MPI_Gather");
    expect_err(MPI_Send(&x, 1, MPI_INT, rsz(), 0, ic), MPI_ERR_RANK, 1, "MPI_Send");
    expect_err(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM, 1, "MPI_Scan");
    expect_err(MPI_Allreduce(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_BUFFER, 0,
               "MPI_Allreduce");
    MPI_Comm c;
    int dims[1] = {1}, periods[1] = {0};
    expect_err(MPI_Cart_create(ic, 1, dims, periods, 0, &c), MPI_ERR_COMM, 1,
               "MPI_Cart_create");
#ifdef TERN_MPI_H
    /* one process's bad color fails the split on every process of both
     * groups (the agreement's round given up), and takes no context id:
     * the dup after it works (MPICH leaves the others waiting) */
    c = MPI_COMM_WORLD;
    int e = MPI_Comm_split(ic, rank == 0 ? -7 : 0, 0, &c);
    expect_err(e, rank == 0 ? MPI_ERR_ARG : MPI_ERR_OTHER, 1, "MPI_Comm_split");
    CHECK(c == MPI_COMM_WORLD, "a failed split of an intercommunicator changed its output");
    MPI_Comm d;
    CHECK(MPI_Comm_dup(ic, &d) == MPI_SUCCESS, "the dup after a failed split");
    int rs = -1;
    MPI_Comm_remote_size(d, &rs);
    CHECK(rs == rsz(), "the dup after a failed split: remote size %d", rs);
    MPI_Comm_free(&d);
    MPI_Group lg;
    MPI_Comm_group(ic, &lg);
    c = MPI_COMM_WORLD;
    e = MPI_Comm_create(ic, rank == 0 ? MPI_GROUP_NULL : lg, &c);
    expect_err(e, rank == 0 ? MPI_ERR_GROUP : MPI_ERR_OTHER, 1, "MPI_Comm_create");
    CHECK(c == MPI_COMM_WORLD, "a failed create of an intercommunicator changed its output");
    MPI_Group_free(&lg);
#endif
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    errors_any();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (size >= 2 && size <= 64) {
        nA = (size + 1) / 2;
        nB = size - nA;
        inA = rank < nA;
        myl = inA ? rank : rank - nA;
        MPI_Comm local, ic;
        MPI_Comm_split(MPI_COMM_WORLD, !inA, rank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, inA ? nA : 0, 17, &ic);
        expect_inter(ic, "intercomm_create");
        /* a second one beside it, of the processes by parity (its leaders
         * world ranks 1 and 0): messages on one never meet the other's */
        MPI_Comm par, ic2;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &par);
        MPI_Intercomm_create(par, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 18, &ic2);
        int rs2 = -1, got = -1;
        MPI_Comm_remote_size(ic2, &rs2);
        CHECK(rs2 == (rank % 2 ? (size + 1) / 2 : size / 2), "second: remote size %d", rs2);
        if (rank < 2) { /* the leaders: local rank 0 of each */
            MPI_Sendrecv(&rank, 1, MPI_INT, 0, 3, &got, 1, MPI_INT, 0, 3, ic2,
                         MPI_STATUS_IGNORE);
            CHECK(got == !rank, "second: remote rank 0 is world %d", got);
        }
        p2p(ic, "intercomm_create");
        MPI_Op left;
        MPI_Op_create(keep_left, 0, &left);
        MPI_Datatype vec;
        MPI_Type_vector(CNT, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        for (int nb = 0; nb < 2; nb++) {
            rooted(ic, nb, left, vec, nb ? "non-blocking" : "blocking");
            all(ic, nb, nb ? "non-blocking" : "blocking");
        }
        MPI_Type_free(&vec);
        MPI_Op_free(&left);
        merges(ic);
        dups(ic);
        splits(ic);
        errors_inter(ic);
        MPI_Comm_free(&ic2);
        MPI_Comm_free(&par);
        /* more intercommunicators made and freed than there are context
         * ids (tern: 2048), each checked now and then */
        int cycles = 2100;
#ifndef TERN_MPI_H
        cycles = 100;
#endif
        for (int i = 0; i < cycles; i++) {
            MPI_Comm t = MPI_COMM_NULL, u = MPI_COMM_NULL;
            int e = MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, inA ? nA : 0, 19, &t);
            if (e == MPI_SUCCESS && i % 2)
                e = MPI_Intercomm_merge(t, !inA, &u);
            if (e != MPI_SUCCESS || t == MPI_COMM_NULL) {
                CHECK(0, "cycle %d: error %d", i, e);
                break;
            }
            if (i % 500 == 0)
                MPI_Barrier(t);
            if (u != MPI_COMM_NULL)
                MPI_Comm_free(&u);
            MPI_Comm_free(&t);
        }
        MPI_Comm_free(&ic);
        MPI_Comm_free(&local);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
