/*
 * Non-blocking collectives beyond mpi_nbc.c's (tests/mpi/mpi.sh): Igather(v),
 * Iscatter(v), Iallgather(v), Ialltoall(v, w), Ireduce_scatter(_block),
 * Iscan, Iexscan, and the blocking MPI_Alltoallw, each from every root, at
 * counts 0, 1, 5 and long ones (rendezvous), every element checked against
 * an expectation this rank computes itself (every rank's data is a
 * function of its rank), the gaps between the blocks of the v and w forms
 * left alone; MPI_IN_PLACE in every form that takes it (MPI_Alltoallv's
 * too, with a type whose elements interleave); a derived type freed while
 * the operations using it are under way; several operations outstanding
 * at once completed in reverse order, by MPI_Testall, and beside blocking
 * ones; a non-commutative operation in the scans; the argument errors
 * under MPI_ERRORS_RETURN (their classes, and messages naming the call,
 * checked under tern only: MPI leaves some classes open).  Plain MPI,
 * standard-conforming, but not in tests/ompi's lists: it finds bugs in the
 * libraries there (docs/mpi.md, Tests: Open MPI 4.1.4's libnbc
 * Ialltoallw and in-place Ialltoallv, MPICH 4.0.2's in-place Ialltoallw
 * and Allgatherv displacement at one rank).  Prints "ok rank R of N" or
 * "FAIL ..." lines.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mpi/mpi_check.h"

#define GAP (-7) /* what no collective may write */

/* the x-th value rank r contributes (x < 1000003) */
static int val(int r, int x) { return (r + 1) * 1000003 + x; }

static int *ints(size_t n, int fill)
{
    if (n > ((size_t)1 << 28))
        abort(); /* a negative count gone through size_t */
    int *p = malloc(sizeof(int) * (n ? n : 1));
    for (size_t i = 0; i < n; i++)
        p[i] = fill;
    return p;
}

static void check_ints(const int *got, const int *want, size_t n, const char *what, int arg)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            CHECK(0, "%s (%d) at %zu: %d, expected %d", what, arg, i, got[i], want[i]);
            return;
        }
}

/* wait for the requests from the last to the first */
static void wait_reverse(MPI_Request *rq, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        MPI_Wait(&rq[i], MPI_STATUS_IGNORE);
        CHECK(rq[i] == MPI_REQUEST_NULL, "request %d not reset", i);
    }
}

/* The v forms' layout at the root: rank r's block counts n + r (none for
 * rank 0 when n is 0), the blocks in reverse rank order with one gap
 * between them; *total: ints spanned. */
static void v_layout(int n, int *c, int *d, int *total)
{
    d[size - 1] = 1;
    for (int r = size - 1; r >= 0; r--) {
        c[r] = n + r;
        if (r < size - 1)
            d[r] = d[r + 1] + c[r + 1] + 1;
    }
    *total = d[0] + c[0] + 1;
}

/* ---- gather, scatter ----------------------------------------------------- */

static void gathers(MPI_Comm comm, int n, int root)
{
    int *c = ints((size_t)size, 0), *d = ints((size_t)size, 0), tot;
    v_layout(n, c, d, &tot);
    size_t all = (size_t)size * (size_t)n;
    int *mine = ints((size_t)n + (size_t)size, 0), *g = ints(all, GAP), *gi = ints(all, GAP);
    int *gv = ints((size_t)tot, GAP), *want = ints(all > (size_t)tot ? all : (size_t)tot, GAP);
    for (int i = 0; i < n + size; i++)
        mine[i] = val(rank, i);
    for (int i = 0; rank == root && i < n; i++)
        gi[(size_t)root * (size_t)n + (size_t)i] = val(root, i); /* in place: there already */
    MPI_Request rq[3];
    MPI_Igather(mine, n, MPI_INT, g, n, MPI_INT, root, comm, &rq[0]);
    MPI_Igatherv(mine, c[rank], MPI_INT, gv, c, d, MPI_INT, root, comm, &rq[1]);
    MPI_Igather(rank == root ? MPI_IN_PLACE : mine, n, MPI_INT, gi, n, MPI_INT, root, comm,
                &rq[2]);
    wait_reverse(rq, 3);
    if (rank == root) {
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                want[(size_t)r * (size_t)n + (size_t)i] = val(r, i);
        check_ints(g, want, all, "igather", n);
        check_ints(gi, want, all, "igather in place", n);
        for (int i = 0; i < tot; i++)
            want[i] = GAP;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < c[r]; i++)
                want[d[r] + i] = val(r, i);
        check_ints(gv, want, (size_t)tot, "igatherv", n);
    }
    free(g);
    free(gi);
    free(gv);
    free(want);
    free(mine);
    free(c);
    free(d);
}

static void scatters(MPI_Comm comm, int n, int root)
{
    int *c = ints((size_t)size, 0), *d = ints((size_t)size, 0), tot;
    v_layout(n, c, d, &tot);
    size_t all = (size_t)size * (size_t)n;
    int *src = ints(all, GAP), *srcv = ints((size_t)tot, GAP);
    for (int r = 0; rank == root && r < size; r++) {
        for (int i = 0; i < n; i++)
            src[(size_t)r * (size_t)n + (size_t)i] = val(r, i);
        for (int i = 0; i < c[r]; i++)
            srcv[d[r] + i] = val(r, 500000 + i);
    }
    int *s = ints((size_t)n + 1, GAP), *sv = ints((size_t)c[rank] + 1, GAP);
    int *si = ints((size_t)n + 1, GAP);
    MPI_Request rq[3];
    MPI_Iscatter(src, n, MPI_INT, s, n, MPI_INT, root, comm, &rq[0]);
    MPI_Iscatterv(srcv, c, d, MPI_INT, sv, c[rank], MPI_INT, root, comm, &rq[1]);
    MPI_Iscatter(src, n, MPI_INT, rank == root ? MPI_IN_PLACE : si, n, MPI_INT, root, comm,
                 &rq[2]);
    wait_reverse(rq, 3);
    int *want = ints((size_t)n + (size_t)size + 1, GAP);
    for (int i = 0; i < n; i++)
        want[i] = val(rank, i);
    check_ints(s, want, (size_t)n + 1, "iscatter", n);
    if (rank != root)
        check_ints(si, want, (size_t)n + 1, "iscatter in place", n);
    for (int i = 0; rank == root && i <= n; i++)
        CHECK(si[i] == GAP, "iscatter in place: the root's unused buffer written at %d", i);
    for (int i = 0; i < c[rank]; i++)
        want[i] = val(rank, 500000 + i);
    want[c[rank]] = GAP;
    check_ints(sv, want, (size_t)c[rank] + 1, "iscatterv", n);
    if (rank == root && n > 0) /* the root's send buffers are untouched */
        for (int r = 0; r < size; r++)
            CHECK(src[(size_t)r * (size_t)n] == (n ? val(r, 0) : GAP), "iscatter source");
    free(want);
    free(src);
    free(srcv);
    free(s);
    free(sv);
    free(si);
    free(c);
    free(d);
}

/* ---- allgather ----------------------------------------------------------- */

static void allgathers(MPI_Comm comm, int n)
{
    int *c = ints((size_t)size, 0), *d = ints((size_t)size, 0), tot;
    v_layout(n, c, d, &tot);
    size_t all = (size_t)size * (size_t)n;
    int *mine = ints((size_t)n + (size_t)size, 0), *g = ints(all, GAP), *gi = ints(all, GAP);
    int *gv = ints((size_t)tot, GAP), *gvi = ints((size_t)tot, GAP), *gvn = ints((size_t)tot, GAP);
    int *want = ints(all > (size_t)tot ? all : (size_t)tot, GAP), *dn = ints((size_t)size, 0);
    for (int r = 0; r < size; r++)
        dn[r] = d[r] - tot; /* negative, from the end of gvn */
    for (int i = 0; i < n + size; i++)
        mine[i] = val(rank, i);
    for (int i = 0; i < n; i++)
        gi[(size_t)rank * (size_t)n + (size_t)i] = val(rank, i);
    for (int i = 0; i < c[rank]; i++)
        gvi[d[rank] + i] = val(rank, i);
    MPI_Request rq[5];
    MPI_Iallgather(mine, n, MPI_INT, g, n, MPI_INT, comm, &rq[0]);
    MPI_Iallgatherv(mine, c[rank], MPI_INT, gv, c, d, MPI_INT, comm, &rq[1]);
    MPI_Iallgather(MPI_IN_PLACE, n, MPI_INT, gi, n, MPI_INT, comm, &rq[2]);
    MPI_Iallgatherv(MPI_IN_PLACE, c[rank], MPI_INT, gvi, c, d, MPI_INT, comm, &rq[3]);
    MPI_Iallgatherv(mine, c[rank], MPI_INT, gvn + tot, c, dn, MPI_INT, comm, &rq[4]);
    wait_reverse(rq, 5);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++)
            want[(size_t)r * (size_t)n + (size_t)i] = val(r, i);
    check_ints(g, want, all, "iallgather", n);
    check_ints(gi, want, all, "iallgather in place", n);
    for (int i = 0; i < tot; i++)
        want[i] = GAP;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < c[r]; i++)
            want[d[r] + i] = val(r, i);
    check_ints(gv, want, (size_t)tot, "iallgatherv", n);
    check_ints(gvi, want, (size_t)tot, "iallgatherv in place", n);
    check_ints(gvn, want, (size_t)tot, "iallgatherv, negative displacements", n);
    free(mine);
    free(g);
    free(gi);
    free(gv);
    free(gvi);
    free(gvn);
    free(dn);
    free(want);
    free(c);
    free(d);
}

/* ---- alltoall ------------------------------------------------------------ */

/* what rank s sends rank d in the v and w forms: cnt(s, d) elements (the
 * same both ways when sym, for the in-place forms), the x-th val(s, d *
 * 100000 + x) */
static int cnt(int s, int d, int n, int sym) { return (sym ? s + d : s + 2 * d) % 3 * n / 2; }
static int a2a_val(int s, int d, int x) { return val(s, d * 100000 + x); }

/* blocks of counts[i] in reverse order, gaps of one between them */
static int rev_displs(const int *counts, int *displs, int unit)
{
    int at = 1;
    for (int i = size - 1; i >= 0; i--) {
        displs[i] = at;
        at += counts[i] * unit + 1;
    }
    return at;
}

static void alltoalls(MPI_Comm comm, int n)
{
    size_t all = (size_t)size * (size_t)n;
    int *s = ints(all, 0), *r = ints(all, GAP), *ri = ints(all, 0);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < n; i++) {
            s[(size_t)p * (size_t)n + (size_t)i] = a2a_val(rank, p, i);
            ri[(size_t)p * (size_t)n + (size_t)i] = a2a_val(rank, p, i);
        }
    int *sc = ints((size_t)size, 0), *sd = ints((size_t)size, 0);
    int *rc = ints((size_t)size, 0), *rd = ints((size_t)size, 0);
    int *ic = ints((size_t)size, 0), *id = ints((size_t)size, 0);
    for (int p = 0; p < size; p++) {
        sc[p] = cnt(rank, p, n, 0);
        rc[p] = cnt(p, rank, n, 0);
        ic[p] = cnt(rank, p, n, 1);
    }
    int stot = rev_displs(sc, sd, 1), rtot = rev_displs(rc, rd, 1), itot = rev_displs(ic, id, 1);
    int *sv = ints((size_t)stot, GAP), *rv = ints((size_t)rtot, GAP), *iv = ints((size_t)itot, GAP);
    for (int p = 0; p < size; p++) {
        for (int i = 0; i < sc[p]; i++)
            sv[sd[p] + i] = a2a_val(rank, p, i);
        for (int i = 0; i < ic[p]; i++)
            iv[id[p] + i] = a2a_val(rank, p, i);
    }
    MPI_Request rq[4];
    MPI_Ialltoall(s, n, MPI_INT, r, n, MPI_INT, comm, &rq[0]);
    MPI_Ialltoallv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, comm, &rq[1]);
    MPI_Ialltoall(MPI_IN_PLACE, n, MPI_INT, ri, n, MPI_INT, comm, &rq[2]);
    MPI_Ialltoallv(MPI_IN_PLACE, sc, sd, MPI_INT, iv, ic, id, MPI_INT, comm, &rq[3]);
    wait_reverse(rq, 4);
    int *want = ints(all, GAP);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < n; i++)
            want[(size_t)p * (size_t)n + (size_t)i] = a2a_val(p, rank, i);
    check_ints(r, want, all, "ialltoall", n);
    check_ints(ri, want, all, "ialltoall in place", n);
    free(want);
    want = ints((size_t)(rtot > itot ? rtot : itot), GAP);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < rc[p]; i++)
            want[rd[p] + i] = a2a_val(p, rank, i);
    check_ints(rv, want, (size_t)rtot, "ialltoallv", n);
    for (int i = 0; i < itot; i++)
        want[i] = GAP;
    for (int p = 0; p < size; p++)
        for (int i = 0; i < ic[p]; i++)
            want[id[p] + i] = a2a_val(p, rank, i);
    check_ints(iv, want, (size_t)itot, "ialltoallv in place", n);
    free(want);
    free(s);
    free(r);
    free(ri);
    free(sv);
    free(rv);
    free(iv);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(ic);
    free(id);
}

/* The w forms: to and from odd ranks the block is 2c ints as c elements
 * of vec (ints 0 and 2 of 3, its middle one a gap), to and from even ones
 * as 2c MPI_INTs; byte displacements, blocks in reverse order.  Blocking
 * (MPI_Alltoallw) or not, in place (sym counts) or not. */
static int vec_slot(int odd, int x) { return odd ? 3 * (x / 2) + 2 * (x % 2) : x; }

static void alltoallws(MPI_Comm comm, int n, MPI_Datatype vec, int blocking, int inplace)
{
    int *sc = ints((size_t)size, 0), *sd = ints((size_t)size, 0), *sdb = ints((size_t)size, 0);
    int *rc = ints((size_t)size, 0), *rd = ints((size_t)size, 0), *rdb = ints((size_t)size, 0);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)size);
    MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)size);
    int *span = ints((size_t)size, 0), *rspan = ints((size_t)size, 0);
    for (int p = 0; p < size; p++) {
        int cs = cnt(rank, p, n, inplace), cr = cnt(p, rank, n, inplace);
        st[p] = p % 2 ? vec : MPI_INT;
        rt[p] = p % 2 ? vec : MPI_INT;
        sc[p] = p % 2 ? cs : 2 * cs;
        rc[p] = p % 2 ? cr : 2 * cr;
        span[p] = p % 2 ? 3 * cs : 2 * cs;
        rspan[p] = p % 2 ? 3 * cr : 2 * cr;
    }
    int stot = rev_displs(span, sd, 1), rtot = rev_displs(rspan, rd, 1);
    for (int p = 0; p < size; p++) {
        sdb[p] = sd[p] * (int)sizeof(int);
        rdb[p] = rd[p] * (int)sizeof(int);
    }
    int *sb = ints((size_t)stot, GAP), *rb = ints((size_t)rtot, GAP);
    int *out = inplace ? rb : sb, *outd = inplace ? rd : sd;
    for (int p = 0; p < size; p++)
        for (int x = 0; x < 2 * cnt(rank, p, n, inplace); x++)
            out[outd[p] + vec_slot(p % 2, x)] = a2a_val(rank, p, x);
    const void *sendbuf = inplace ? MPI_IN_PLACE : sb;
    if (blocking) {
        MPI_Alltoallw(sendbuf, sc, sdb, st, rb, rc, rdb, rt, comm);
    } else {
        MPI_Request rq;
        MPI_Ialltoallw(sendbuf, sc, sdb, st, rb, rc, rdb, rt, comm, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
    int *want = ints((size_t)rtot, GAP);
    for (int p = 0; p < size; p++)
        for (int x = 0; x < 2 * cnt(p, rank, n, inplace); x++)
            want[rd[p] + vec_slot(p % 2, x)] = a2a_val(p, rank, x);
    check_ints(rb, want, (size_t)rtot, blocking ? (inplace ? "alltoallw in place" : "alltoallw")
                                                : (inplace ? "ialltoallw in place" : "ialltoallw"),
               n);
    free(want);
    free(sb);
    free(rb);
    free(sc);
    free(sd);
    free(sdb);
    free(rc);
    free(rd);
    free(rdb);
    free(st);
    free(rt);
    free(span);
    free(rspan);
}

/* Blocking MPI_Alltoallv in place with a type whose two elements
 * interleave (ints 0, 2 and 1, 3 of each block: extent 1 int, true extent
 * 3): the blocks to send reach beyond count * extent. */
static void alltoallv_inplace_interleaved(MPI_Comm comm)
{
    MPI_Datatype v, it;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)sizeof(int), &it);
    MPI_Type_commit(&it);
    int *c = ints((size_t)size, 2), *d = ints((size_t)size, 0);
    for (int p = 0; p < size; p++)
        d[p] = 4 * p;
    int *b = ints((size_t)size * 4, 0), *want = ints((size_t)size * 4, 0);
    /* element e of the block for p holds ints 4p + e and 4p + e + 2: the
     * values a2a_val(rank, p, 2e) and (.., 2e + 1) in pack order */
    for (int p = 0; p < size; p++)
        for (int e = 0; e < 2; e++) {
            b[4 * p + e] = a2a_val(rank, p, 2 * e);
            b[4 * p + e + 2] = a2a_val(rank, p, 2 * e + 1);
            want[4 * p + e] = a2a_val(p, rank, 2 * e);
            want[4 * p + e + 2] = a2a_val(p, rank, 2 * e + 1);
        }
    MPI_Alltoallv(MPI_IN_PLACE, c, d, it, b, c, d, it, comm);
    check_ints(b, want, (size_t)size * 4, "alltoallv in place, interleaved type", 2);
    MPI_Type_free(&it);
    MPI_Type_free(&v);
    free(b);
    free(want);
    free(c);
    free(d);
}

/* ---- derived types ---------------------------------------------------------- */

/* a sum of ints, or of vec's (ints 0 and 2 of 3) */
static void vsum(void *in, void *io, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = io;
    for (int i = 0; *dt == MPI_INT && i < *len; i++)
        b[i] += a[i];
    for (int e = 0; *dt != MPI_INT && e < *len; e++) {
        b[3 * e] += a[3 * e];
        b[3 * e + 2] += a[3 * e + 2];
    }
}

/* vec (ints 0 and 2 of 3) as the receive type of Iallgather and Igather,
 * the send type of Iscatter and Ialltoall and Iscan's type, freed as soon
 * as they are started: the schedules keep what they need */
static void derived(MPI_Comm comm, int n, MPI_Datatype base_vec)
{
    MPI_Datatype vec;
    MPI_Type_dup(base_vec, &vec);
    size_t all = (size_t)size * (size_t)n;
    int *mine = ints(2 * (size_t)n, 0), *ag = ints(3 * all, GAP), *g = ints(3 * all, GAP);
    int *sv = ints(3 * all, GAP), *s = ints(2 * (size_t)n + 1, GAP);
    int *av = ints(3 * all, GAP), *a = ints(2 * all, GAP);
    int *sin = ints(3 * (size_t)n, GAP), *sout = ints(3 * (size_t)n, GAP);
    for (int x = 0; x < 2 * n; x++) {
        mine[x] = val(rank, x);
        sin[vec_slot(1, x)] = rank * 1000 + x;
    }
    MPI_Op sumop;
    MPI_Op_create(vsum, 1, &sumop);
    for (int p = 0; p < size; p++)
        for (int x = 0; x < 2 * n; x++) {
            sv[(size_t)p * 3 * (size_t)n + (size_t)vec_slot(1, x)] = val(p, 300000 + x);
            av[(size_t)p * 3 * (size_t)n + (size_t)vec_slot(1, x)] = a2a_val(rank, p, x);
        }
    int root = size - 1;
    MPI_Request rq[5];
    MPI_Iallgather(mine, 2 * n, MPI_INT, ag, n, vec, comm, &rq[0]);
    MPI_Igather(mine, 2 * n, MPI_INT, g, n, vec, root, comm, &rq[1]);
    MPI_Iscatter(sv, n, vec, s, 2 * n, MPI_INT, root, comm, &rq[2]);
    MPI_Ialltoall(av, n, vec, a, 2 * n, MPI_INT, comm, &rq[3]);
    MPI_Iscan(sin, sout, n, vec, sumop, comm, &rq[4]);
    MPI_Type_free(&vec);
    wait_reverse(rq, 5);
    int *want = ints(3 * all + 3 * (size_t)n + 1, GAP);
    for (int p = 0; p < size; p++)
        for (int x = 0; x < 2 * n; x++)
            want[(size_t)p * 3 * (size_t)n + (size_t)vec_slot(1, x)] = val(p, x);
    check_ints(ag, want, 3 * all, "iallgather into a vector type", n);
    if (rank == root)
        check_ints(g, want, 3 * all, "igather into a vector type", n);
    for (int x = 0; x < 2 * n; x++)
        want[x] = val(rank, 300000 + x);
    want[2 * n] = GAP;
    check_ints(s, want, 2 * (size_t)n + 1, "iscatter from a vector type", n);
    for (int p = 0; p < size; p++)
        for (int x = 0; x < 2 * n; x++)
            want[(size_t)p * 2 * (size_t)n + (size_t)x] = a2a_val(p, rank, x);
    check_ints(a, want, 2 * all, "ialltoall from a vector type", n);
    for (int x = 0; x < 3 * n; x++)
        want[x] = GAP;
    for (int x = 0; x < 2 * n; x++)
        want[vec_slot(1, x)] = 1000 * rank * (rank + 1) / 2 + (rank + 1) * x;
    check_ints(sout, want, 3 * (size_t)n, "iscan of a vector type", n);
    MPI_Op_free(&sumop);
    free(sin);
    free(sout);
    free(want);
    free(mine);
    free(ag);
    free(g);
    free(sv);
    free(s);
    free(av);
    free(a);
}

/* ---- reductions ---------------------------------------------------------- */

static int64_t rval(int r, int i) { return (int64_t)(r + 1) * 1000 + i % 977 - 300; }

/* 2x2 integer matrices mod P: associative, not commutative; datatype mat
 * (4 int64) or int64 (len counting those) */
#define P 1000003
static MPI_Datatype mat;
static void matmul(void *in, void *io, int *len, MPI_Datatype *dt)
{
    int64_t *a = in, *b = io;
    int nm = *dt == mat ? *len : *len / 4;
    for (int m = 0; m < nm; m++, a += 4, b += 4) {
        int64_t r[4] = {(a[0] * b[0] + a[1] * b[2]) % P, (a[0] * b[1] + a[1] * b[3]) % P,
                        (a[2] * b[0] + a[3] * b[2]) % P, (a[2] * b[1] + a[3] * b[3]) % P};
        memcpy(b, r, sizeof(r));
    }
}
static void mat_of(int r, int i, int64_t m[4])
{
    m[0] = r + 1 + i;
    m[1] = 2;
    m[2] = (r + i) % 3;
    m[3] = 1;
}

static void reduce_scatters(MPI_Comm comm, int n)
{
    int *c = ints((size_t)size, 0), total = 0;
    for (int p = 0; p < size; p++)
        total += c[p] = (p + n) % 3 * n; /* some ranks get none */
    int64_t *in = malloc(sizeof(int64_t) * (size_t)(total + size * n + 1));
    int64_t *ip = malloc(sizeof(int64_t) * (size_t)(total + 1));
    int64_t *out = malloc(sizeof(int64_t) * (size_t)(c[rank] + 1));
    int64_t *blk = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int64_t *bip = malloc(sizeof(int64_t) * (size_t)(size * n + 1));
    for (int i = 0; i < total || i < size * n; i++)
        in[i] = rval(rank, i);
    for (int i = 0; i < total; i++)
        ip[i] = rval(rank, i);
    for (int i = 0; i < size * n; i++)
        bip[i] = rval(rank, i);
    out[c[rank]] = GAP;
    blk[n] = GAP;
    MPI_Request rq[4];
    MPI_Ireduce_scatter(in, out, c, MPI_INT64_T, MPI_SUM, comm, &rq[0]);
    MPI_Ireduce_scatter(MPI_IN_PLACE, ip, c, MPI_INT64_T, MPI_SUM, comm, &rq[1]);
    MPI_Ireduce_scatter_block(in, blk, n, MPI_INT64_T, MPI_SUM, comm, &rq[2]);
    MPI_Ireduce_scatter_block(MPI_IN_PLACE, bip, n, MPI_INT64_T, MPI_SUM, comm, &rq[3]);
    wait_reverse(rq, 4);
    int first = 0;
    for (int p = 0; p < rank; p++)
        first += c[p];
    for (int i = 0; i < c[rank]; i++) {
        int64_t want = 0;
        for (int r = 0; r < size; r++)
            want += rval(r, first + i);
        CHECK(out[i] == want, "ireduce_scatter (%d) at %d: %lld vs %lld", n, i,
              (long long)out[i], (long long)want);
        CHECK(ip[i] == want, "ireduce_scatter in place (%d) at %d", n, i);
        if (out[i] != want || ip[i] != want)
            break;
    }
    CHECK(out[c[rank]] == GAP, "ireduce_scatter wrote past its block");
    for (int i = 0; i < n; i++) {
        int64_t want = 0;
        for (int r = 0; r < size; r++)
            want += rval(r, rank * n + i);
        CHECK(blk[i] == want && bip[i] == want, "ireduce_scatter_block (%d) at %d", n, i);
        if (blk[i] != want || bip[i] != want)
            break;
    }
    CHECK(blk[n] == GAP, "ireduce_scatter_block wrote past its block");
    free(in);
    free(ip);
    free(out);
    free(blk);
    free(bip);
    free(c);
}

/* Iscan and Iexscan: a sum, in place too, and the matrices in rank order
 * (as mat elements and as int64s) */
static void scans(MPI_Comm comm, int n, MPI_Op matop)
{
    int64_t *in = malloc(sizeof(int64_t) * (size_t)(4 * n + 1));
    int64_t *sc = malloc(sizeof(int64_t) * (size_t)(4 * n + 1));
    int64_t *ex = malloc(sizeof(int64_t) * (size_t)(4 * n + 1));
    int64_t *ip = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int64_t *ms = malloc(sizeof(int64_t) * (size_t)(4 * n + 1));
    int64_t *mx = malloc(sizeof(int64_t) * (size_t)(4 * n + 1));
    int64_t *m = malloc(sizeof(int64_t) * (size_t)(4 * n + 1));
    for (int i = 0; i < n; i++) {
        in[i] = ip[i] = rval(rank, i);
        mat_of(rank, i, m + 4 * i);
    }
    for (int i = 0; i < 4 * n + 1; i++)
        ex[i] = mx[i] = GAP;
    MPI_Request rq[5];
    MPI_Status sts[5];
    MPI_Iscan(in, sc, n, MPI_INT64_T, MPI_SUM, comm, &rq[0]);
    MPI_Iexscan(in, ex, n, MPI_INT64_T, MPI_SUM, comm, &rq[1]);
    MPI_Iscan(MPI_IN_PLACE, ip, n, MPI_INT64_T, MPI_SUM, comm, &rq[2]);
    MPI_Iscan(m, ms, n, mat, matop, comm, &rq[3]);
    MPI_Iexscan(m, mx, 4 * n, MPI_INT64_T, matop, comm, &rq[4]);
    int flag = 0;
    while (!flag)
        MPI_Testall(5, rq, &flag, sts);
    for (int i = 0; i < n; i++) {
        int64_t below = 0, want[4] = {1, 0, 0, 1}, wex[4];
        for (int r = 0; r < rank; r++)
            below += rval(r, i);
        for (int r = 0; r <= rank; r++) {
            int64_t x[4];
            if (r == rank)
                memcpy(wex, want, sizeof(wex));
            mat_of(r, i, x);
            int four = 4;
            MPI_Datatype i64 = MPI_INT64_T;
            matmul(want, x, &four, &i64); /* x = want * x */
            memcpy(want, x, sizeof(x));
        }
        int ok = sc[i] == below + rval(rank, i) && ip[i] == sc[i] &&
                 (rank == 0 || ex[i] == below) && memcmp(ms + 4 * i, want, sizeof(want)) == 0 &&
                 (rank == 0 || memcmp(mx + 4 * i, wex, sizeof(wex)) == 0);
        CHECK(ok, "iscan / iexscan (%d) at %d: %lld %lld %lld", n, i, (long long)sc[i],
              (long long)ip[i], (long long)ex[i]);
        if (!ok)
            break;
    }
    if (rank == 0) /* exscan: rank 0's receive buffer is left alone */
        CHECK(n == 0 || (ex[0] == GAP && mx[0] == GAP), "iexscan wrote rank 0's buffer");
    free(in);
    free(sc);
    free(ex);
    free(ip);
    free(ms);
    free(mx);
    free(m);
}

/* ---- several at once, beside blocking ones --------------------------------- */

static void overlapped(MPI_Comm comm)
{
    int n = 1000;
    size_t all = (size_t)size * (size_t)n;
    int *mine = ints((size_t)n, 0), *ag = ints(all, GAP), *s = ints(all, 0), *a = ints(all, GAP);
    int *bag = ints(all, GAP);
    for (int i = 0; i < n; i++)
        mine[i] = val(rank, i);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < n; i++)
            s[(size_t)p * (size_t)n + (size_t)i] = a2a_val(rank, p, i);
    int64_t x = rank + 1, sum = 0;
    MPI_Request rq[4];
    MPI_Iallgather(mine, n, MPI_INT, ag, n, MPI_INT, comm, &rq[0]);
    MPI_Ialltoall(s, n, MPI_INT, a, n, MPI_INT, comm, &rq[1]);
    MPI_Iscan(&x, &sum, 1, MPI_INT64_T, MPI_SUM, comm, &rq[2]);
    MPI_Ibarrier(comm, &rq[3]);
    /* blocking ones meanwhile, on the same communicator */
    MPI_Allgather(mine, n, MPI_INT, bag, n, MPI_INT, comm);
    wait_reverse(rq, 4);
    int *want = ints(all, GAP);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < n; i++)
            want[(size_t)p * (size_t)n + (size_t)i] = val(p, i);
    check_ints(ag, want, all, "overlapped iallgather", n);
    check_ints(bag, want, all, "blocking allgather among non-blocking ones", n);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < n; i++)
            want[(size_t)p * (size_t)n + (size_t)i] = a2a_val(p, rank, i);
    check_ints(a, want, all, "overlapped ialltoall", n);
    CHECK(sum == (int64_t)(rank + 1) * (rank + 2) / 2, "overlapped iscan: %lld", (long long)sum);
    free(want);
    free(mine);
    free(ag);
    free(s);
    free(a);
    free(bag);
}

static int is_tern(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(v, &len);
    return strncmp(v, "tern", 4) == 0;
}

/* ---- argument errors ----------------------------------------------------- */

/* tern's class; another library only has to fail (MPI leaves some of the
 * classes to the implementation: MPICH 4.0's MPI_Iexscan of count -2 is
 * MPI_ERR_OTHER) */
static int class_is(int cls, int want) { return is_tern() ? cls == want : cls != MPI_SUCCESS; }

static int class_of(int e)
{
    int cls = e;
    if (e != MPI_SUCCESS)
        MPI_Error_class(e, &cls);
    return cls;
}

/* every rank makes the same bad call (a call that fails at some ranks
 * only would leave the others' operation waiting), then a good one */
static void errors(MPI_Comm comm)
{
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *x = ints((size_t)size * 2, 1), *y = ints((size_t)size * 2, GAP);
    int *c = ints((size_t)size, 1), *d = ints((size_t)size, 0);
    MPI_Datatype *t = malloc(sizeof(MPI_Datatype) * (size_t)size);
    for (int p = 0; p < size; p++) {
        d[p] = p;
        t[p] = MPI_INT;
    }
    MPI_Request rq = MPI_REQUEST_NULL;
    int e = MPI_Iallgather(x, -1, MPI_INT, y, 1, MPI_INT, comm, &rq), cls = class_of(e);
    CHECK(class_is(cls, MPI_ERR_COUNT), "iallgather count -1: class %d", cls);
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    if (is_tern()) { /* the message names the call and the cause */
        MPI_Error_string(e, msg, &len);
        CHECK(strstr(msg, "MPI_Iallgather") != NULL && strstr(msg, "-1") != NULL,
              "iallgather count -1: message '%s'", msg);
        /* only the send buffer may be MPI_IN_PLACE (MPI leaves the class open) */
        e = MPI_Ialltoall(x, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, comm, &rq);
        MPI_Error_string(e, msg, &len);
        CHECK(class_of(e) == MPI_ERR_BUFFER && strstr(msg, "MPI_Ialltoall") != NULL,
              "ialltoall into MPI_IN_PLACE: class %d '%s'", class_of(e), msg);
    }
    cls = class_of(MPI_Ialltoall(x, 1, MPI_DATATYPE_NULL, y, 1, MPI_INT, comm, &rq));
    CHECK(class_is(cls, MPI_ERR_TYPE), "ialltoall MPI_DATATYPE_NULL: class %d", cls);
    cls = class_of(MPI_Igather(x, 1, MPI_INT, y, 1, MPI_INT, size, comm, &rq));
    CHECK(class_is(cls, MPI_ERR_ROOT), "igather root %d: class %d", size, cls);
    cls = class_of(MPI_Iscatterv(x, c, d, MPI_INT, y, 1, MPI_INT, -1, comm, &rq));
    CHECK(class_is(cls, MPI_ERR_ROOT), "iscatterv root -1: class %d", cls);
    cls = class_of(MPI_Iscan(x, y, 1, MPI_INT, MPI_OP_NULL, comm, &rq));
    CHECK(class_is(cls, MPI_ERR_OP), "iscan MPI_OP_NULL: class %d", cls);
    cls = class_of(MPI_Iexscan(x, y, -2, MPI_INT, MPI_SUM, comm, &rq));
    CHECK(class_is(cls, MPI_ERR_COUNT), "iexscan count -2: class %d", cls);
    cls = class_of(MPI_Ireduce_scatter_block(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL, &rq));
    CHECK(class_is(cls, MPI_ERR_COMM), "ireduce_scatter_block MPI_COMM_NULL: class %d", cls);
    c[0] = -1;
    cls = class_of(MPI_Ialltoallv(x, c, d, MPI_INT, y, c, d, MPI_INT, comm, &rq));
    CHECK(class_is(cls, MPI_ERR_COUNT), "ialltoallv count -1: class %d", cls);
    cls = class_of(MPI_Ireduce_scatter(x, y, c, MPI_INT, MPI_SUM, comm, &rq));
    CHECK(class_is(cls, MPI_ERR_COUNT), "ireduce_scatter count -1: class %d", cls);
    c[0] = 1;
    t[size - 1] = MPI_DATATYPE_NULL;
    for (int p = 0; p < size; p++)
        d[p] = p * (int)sizeof(int);
    cls = class_of(MPI_Ialltoallw(x, c, d, t, y, c, d, t, comm, &rq));
    CHECK(class_is(cls, MPI_ERR_TYPE), "ialltoallw MPI_DATATYPE_NULL: class %d", cls);
    cls = class_of(MPI_Alltoallw(x, c, d, t, y, c, d, t, comm));
    CHECK(class_is(cls, MPI_ERR_TYPE), "alltoallw MPI_DATATYPE_NULL: class %d", cls);
    CHECK(rq == MPI_REQUEST_NULL, "a failed call set the request");
    if (is_tern()) { /* erroneous MPI: a failure inside a schedule, reported by the wait */
        MPI_Igather(x, 2, MPI_INT, y, 1, MPI_INT, 0, comm, &rq); /* one int short */
        e = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        if (rank == 0 && size > 1) {
            MPI_Error_string(e, msg, &len);
            CHECK(class_of(e) == MPI_ERR_TRUNCATE && strstr(msg, "MPI_Igather") != NULL &&
                      strstr(msg, "truncated") != NULL,
                  "igather truncated at the root: class %d '%s'", class_of(e), msg);
        } else {
            CHECK(e == MPI_SUCCESS, "igather's senders: %d", e);
        }
    }
    /* the sequence of collectives still agrees: a good one works */
    for (int p = 0; p < size; p++)
        x[p] = val(rank, p);
    MPI_Iallgather(x, 1, MPI_INT, y, 1, MPI_INT, comm, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    for (int p = 0; p < size; p++)
        CHECK(y[p] == val(p, 0), "iallgather after the errors: %d from %d", y[p], p);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(x);
    free(y);
    free(c);
    free(d);
    free(t);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Datatype v;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Type_contiguous(4, MPI_INT64_T, &mat);
    MPI_Type_commit(&mat);
    MPI_Op matop;
    MPI_Op_create(matmul, 0, &matop);
    static const int ns[] = {0, 1, 5, 20000};
    for (int k = 0; k < (int)(sizeof(ns) / sizeof(ns[0])); k++) {
        int n = ns[k];
        for (int root = 0; root < size; root++) {
            gathers(comm, n, root);
            scatters(comm, n, root);
        }
        allgathers(comm, n);
        alltoalls(comm, n);
        for (int w = 0; w < 4; w++)
            alltoallws(comm, n, v, w & 1, w >> 1);
        derived(comm, n, v);
        reduce_scatters(comm, n);
        scans(comm, n, matop);
    }
    alltoallv_inplace_interleaved(comm);
    overlapped(comm);
    overlapped(MPI_COMM_WORLD);
    errors(comm);
    MPI_Op_free(&matop);
    MPI_Type_free(&mat);
    MPI_Type_free(&v);
    MPI_Comm_free(&comm);
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
