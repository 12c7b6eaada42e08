/*
 * Datatypes, second part: MPI_Type_get_envelope / _get_contents of every
 * constructor (the arguments given back, a derived old type returned as a
 * new handle the caller frees, named types refused by _get_contents);
 * MPI_Type_create_hindexed_block; MPI_Type_create_subarray in C and
 * Fortran order against the elements picked by hand; and
 * MPI_Type_create_darray for block, cyclic(k) and none distributions in
 * both orders on several process grids, each process's type computed for
 * every rank of the grid: packing an array of element indices through it
 * must give exactly the elements the distribution's formulas assign to
 * that process, in array order, and every element must belong to exactly
 * one process.  Local computation only; runs at any number of ranks.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mpi/mpi_check.h"

static void envelope(MPI_Datatype t, int want_comb, int ni, int na, int nd, const char *what)
{
    int i = -1, a = -1, d = -1, c = -1;
    MPI_Type_get_envelope(t, &i, &a, &d, &c);
    CHECK(c == want_comb && i == ni && a == na && d == nd, "%s: envelope %d %d %d combiner %d",
          what, i, a, d, c);
}

static void contents(void)
{
    MPI_Datatype v, hv, idx, hidx, blk, hblk, st, rs, dup, sub;
    int lens[3] = {1, 2, 3}, disps[3] = {0, 5, 11};
    MPI_Aint adisps[3] = {0, 40, 88};
    MPI_Type_vector(4, 2, 3, MPI_INT, &v);
    MPI_Type_create_hvector(3, 1, 24, v, &hv);
    MPI_Type_indexed(3, lens, disps, MPI_DOUBLE, &idx);
    MPI_Type_create_hindexed(3, lens, adisps, MPI_SHORT, &hidx);
    MPI_Type_create_indexed_block(3, 2, disps, MPI_CHAR, &blk);
    MPI_Type_create_hindexed_block(3, 2, adisps, MPI_FLOAT, &hblk);
    MPI_Datatype types[3] = {MPI_INT, v, MPI_DOUBLE};
    MPI_Type_create_struct(3, lens, adisps, types, &st);
    MPI_Type_create_resized(v, -4, 100, &rs);
    MPI_Type_dup(st, &dup);
    int sizes[2] = {6, 7}, subs[2] = {2, 3}, starts[2] = {1, 4};
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub);

    envelope(MPI_INT, MPI_COMBINER_NAMED, 0, 0, 0, "MPI_INT");
    envelope(v, MPI_COMBINER_VECTOR, 3, 0, 1, "vector");
    envelope(hv, MPI_COMBINER_HVECTOR, 2, 1, 1, "hvector");
    envelope(idx, MPI_COMBINER_INDEXED, 7, 0, 1, "indexed");
    envelope(hidx, MPI_COMBINER_HINDEXED, 4, 3, 1, "hindexed");
    envelope(blk, MPI_COMBINER_INDEXED_BLOCK, 5, 0, 1, "indexed_block");
    envelope(hblk, MPI_COMBINER_HINDEXED_BLOCK, 2, 3, 1, "hindexed_block");
    envelope(st, MPI_COMBINER_STRUCT, 4, 3, 3, "struct");
    envelope(rs, MPI_COMBINER_RESIZED, 0, 2, 1, "resized");
    envelope(dup, MPI_COMBINER_DUP, 0, 0, 1, "dup");
    envelope(sub, MPI_COMBINER_SUBARRAY, 8, 0, 1, "subarray");

    int ints[16];
    MPI_Aint aints[8];
    MPI_Datatype dts[4];
    MPI_Type_get_contents(v, 16, 8, 4, ints, aints, dts);
    CHECK(ints[0] == 4 && ints[1] == 2 && ints[2] == 3 && dts[0] == MPI_INT, "vector contents");
    MPI_Type_get_contents(hv, 16, 8, 4, ints, aints, dts);
    CHECK(ints[0] == 3 && ints[1] == 1 && aints[0] == 24, "hvector contents");
    int s1 = -1, s2 = -2;
    MPI_Type_size(dts[0], &s1);
    MPI_Type_size(v, &s2);
    CHECK(dts[0] != MPI_INT && s1 == s2, "hvector's old type: a handle to the vector");
    MPI_Type_free(&dts[0]); /* the caller's to free; v itself lives on */
    MPI_Type_size(v, &s2);
    CHECK(s2 == 32, "the vector after freeing the returned handle: size %d", s2);
    MPI_Type_get_contents(idx, 16, 8, 4, ints, aints, dts);
    CHECK(ints[0] == 3 && ints[1] == 1 && ints[3] == 3 && ints[4] == 0 && ints[6] == 11 &&
              dts[0] == MPI_DOUBLE,
          "indexed contents");
    MPI_Type_get_contents(hidx, 16, 8, 4, ints, aints, dts);
    CHECK(ints[0] == 3 && ints[2] == 2 && aints[2] == 88 && dts[0] == MPI_SHORT,
          "hindexed contents");
    MPI_Type_get_contents(blk, 16, 8, 4, ints, aints, dts);
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[4] == 11, "indexed_block contents");
    MPI_Type_get_contents(hblk, 16, 8, 4, ints, aints, dts);
    CHECK(ints[0] == 3 && ints[1] == 2 && aints[1] == 40 && dts[0] == MPI_FLOAT,
          "hindexed_block contents");
    MPI_Type_get_contents(st, 16, 8, 4, ints, aints, dts);
    CHECK(ints[0] == 3 && ints[3] == 3 && aints[1] == 40 && dts[0] == MPI_INT &&
              dts[2] == MPI_DOUBLE,
          "struct contents");
    MPI_Type_free(&dts[1]);
    MPI_Type_get_contents(rs, 16, 8, 4, ints, aints, dts);
    CHECK(aints[0] == -4 && aints[1] == 100, "resized contents");
    MPI_Type_free(&dts[0]);
    MPI_Type_get_contents(sub, 16, 8, 4, ints, aints, dts);
    CHECK(ints[0] == 2 && ints[1] == 6 && ints[2] == 7 && ints[3] == 2 && ints[4] == 3 &&
              ints[5] == 1 && ints[6] == 4 && ints[7] == MPI_ORDER_C && dts[0] == MPI_INT,
          "subarray contents");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Type_get_contents(MPI_INT, 16, 8, 4, ints, aints, dts) != MPI_SUCCESS,
          "contents of a named type");
    CHECK(MPI_Type_get_contents(idx, 2, 8, 4, ints, aints, dts) != MPI_SUCCESS,
          "contents into too small an array");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* the hindexed_block's map: pairs of floats at 0, 40 and 88 bytes */
    MPI_Type_commit(&hblk);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(hblk, &lb, &ext);
    MPI_Type_size(hblk, &s1);
    CHECK(lb == 0 && ext == 96 && s1 == 24, "hindexed_block: lb %ld extent %ld size %d",
          (long)lb, (long)ext, s1);
    MPI_Datatype all[] = {v, hv, idx, hidx, blk, hblk, st, rs, dup, sub};
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
        MPI_Type_free(&all[k]);
}

/* Pack one element of t over the array of indices; the ints that come out */
static int pack_indices(MPI_Datatype t, const int *array, int *out, int max)
{
    MPI_Type_commit(&t);
    int bytes = 0, pos = 0;
    MPI_Pack_size(1, t, MPI_COMM_SELF, &bytes);
    char *buf = malloc((size_t)bytes + 1);
    MPI_Pack(array, 1, t, buf, bytes, &pos, MPI_COMM_SELF);
    int n = pos / (int)sizeof(int);
    if (n > max)
        n = max;
    memcpy(out, buf, sizeof(int) * (size_t)n);
    free(buf);
    MPI_Type_free(&t);
    return n;
}

/* the linear (memory) index of multi-index g in an array of sizes */
static int linear(int nd, const int *sizes, const int *g, int order)
{
    int l = 0;
    for (int i = 0; i < nd; i++) {
        int d = order == MPI_ORDER_C ? i : nd - 1 - i;
        l = l * sizes[d] + g[d];
    }
    return l;
}

/* the next multi-index in memory order; false after the last */
static int next_index(int nd, const int *sizes, int *g, int order)
{
    for (int i = 0; i < nd; i++) {
        int d = order == MPI_ORDER_C ? nd - 1 - i : i;
        if (++g[d] < sizes[d])
            return 1;
        g[d] = 0;
    }
    return 0;
}

static void subarray(int order)
{
    int sizes[3] = {4, 5, 6}, subs[3] = {2, 3, 2}, starts[3] = {1, 2, 3};
    int n = 4 * 5 * 6, *array = malloc(sizeof(int) * (size_t)n), got[64], want[64], nw = 0;
    for (int i = 0; i < n; i++)
        array[i] = i;
    MPI_Datatype t;
    MPI_Type_create_subarray(3, sizes, subs, starts, order, MPI_INT, &t);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK(lb == 0 && ext == (MPI_Aint)(n * sizeof(int)), "subarray extent %ld", (long)ext);
    int g[3] = {0, 0, 0};
    do {
        int in = 1;
        for (int d = 0; d < 3; d++)
            in &= g[d] >= starts[d] && g[d] < starts[d] + subs[d];
        if (in)
            want[nw++] = linear(3, sizes, g, order);
    } while (next_index(3, sizes, g, order));
    int ng = pack_indices(t, array, got, 64);
    CHECK(ng == nw && memcmp(got, want, sizeof(int) * (size_t)nw) == 0,
          "subarray (order %d): %d elements, want %d", order, ng, nw);
    free(array);
}

static int owner_coord(int gi, int gsize, int dist, int darg, int psize)
{
    if (dist == MPI_DISTRIBUTE_NONE)
        return 0;
    if (dist == MPI_DISTRIBUTE_BLOCK) {
        int blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        return gi / blk;
    }
    int blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    return (gi / blk) % psize;
}

static void darray(int nd, const int *gs, const int *dist, const int *dargs, const int *ps,
                   int order, const char *what)
{
    int n = 1, procs = 1;
    for (int d = 0; d < nd; d++)
        n *= gs[d], procs *= ps[d];
    int *array = malloc(sizeof(int) * (size_t)n), *got = malloc(sizeof(int) * (size_t)n),
        *want = malloc(sizeof(int) * (size_t)n), *seen = calloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++)
        array[i] = i;
    for (int r = 0; r < procs; r++) {
        MPI_Datatype t;
        int e = MPI_Type_create_darray(procs, r, nd, gs, dist, dargs, ps, order, MPI_INT, &t);
        CHECK(e == MPI_SUCCESS, "%s: darray of rank %d", what, r);
        if (e != MPI_SUCCESS)
            continue;
        MPI_Aint lb, ext;
        MPI_Type_get_extent(t, &lb, &ext);
        CHECK(lb == 0 && ext == (MPI_Aint)(n * sizeof(int)), "%s: extent %ld", what, (long)ext);
        int coords[8], rr = r;
        for (int d = nd - 1; d >= 0; d--) {
            coords[d] = rr % ps[d];
            rr /= ps[d];
        }
        int nw = 0, g[8] = {0};
        do {
            int mine = 1;
            for (int d = 0; d < nd; d++)
                mine &= owner_coord(g[d], gs[d], dist[d], dargs[d], ps[d]) == coords[d];
            if (mine)
                want[nw++] = linear(nd, gs, g, order);
        } while (next_index(nd, gs, g, order));
        int ng = pack_indices(t, array, got, n);
        CHECK(ng == nw && memcmp(got, want, sizeof(int) * (size_t)nw) == 0,
              "%s: rank %d has %d elements, want %d%s", what, r, ng, nw,
              ng == nw ? " (other ones or order)" : "");
        for (int k = 0; k < ng; k++)
            seen[got[k]]++;
    }
    for (int i = 0; i < n; i++)
        CHECK(seen[i] == 1, "%s: element %d belongs to %d processes", what, i, seen[i]);
    free(array);
    free(got);
    free(want);
    free(seen);
}

/* MPI_BOTTOM: a struct of absolute addresses, sent around the ring and
 * packed, from variables that are not one buffer */
static void bottom(void)
{
    static int a[3];
    static double b[2];
    int ra[3] = {-1, -1, -1};
    double rb[2] = {-1, -1};
    for (int i = 0; i < 3; i++)
        a[i] = rank * 10 + i;
    b[0] = rank + 0.5;
    b[1] = rank + 0.25;
    MPI_Aint addr[2], raddr[2];
    MPI_Get_address(a, &addr[0]);
    MPI_Get_address(b, &addr[1]);
    MPI_Get_address(ra, &raddr[0]);
    MPI_Get_address(rb, &raddr[1]);
    int lens[2] = {3, 2};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, st, rt;
    MPI_Type_create_struct(2, lens, addr, types, &st);
    MPI_Type_create_struct(2, lens, raddr, types, &rt);
    MPI_Type_commit(&st);
    MPI_Type_commit(&rt);
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    MPI_Sendrecv(MPI_BOTTOM, 1, st, right, 90, MPI_BOTTOM, 1, rt, left, 90, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK(ra[0] == left * 10 && ra[2] == left * 10 + 2 && rb[0] == left + 0.5 &&
              rb[1] == left + 0.25,
          "MPI_BOTTOM ring: %d %d %g %g", ra[0], ra[2], rb[0], rb[1]);
#ifdef TERN_MPI_H /* MPICH 4.0's MPI_Pack refuses a NULL inbuf, MPI_BOTTOM too */
    char packed[64];
    int pos = 0;
    MPI_Pack(MPI_BOTTOM, 1, st, packed, sizeof(packed), &pos, MPI_COMM_SELF);
    int pa[3];
    memcpy(pa, packed, sizeof(pa));
    CHECK(pos == 28 && pa[1] == rank * 10 + 1, "MPI_Pack from MPI_BOTTOM: %d bytes", pos);
#endif
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
}

/* external32: big-endian bytes, the round trip, a derived type */
static void external32(void)
{
    int iv[2] = {0x01020304, -2};
    double dv = 1.0; /* 0x3ff0000000000000 */
    unsigned char buf[64];
    MPI_Aint pos = 0, sz = -1;
    MPI_Pack_external_size("external32", 2, MPI_INT, &sz);
    CHECK(sz == 8, "external size of 2 ints: %ld", (long)sz);
    MPI_Pack_external("external32", iv, 2, MPI_INT, buf, sizeof(buf), &pos);
    MPI_Pack_external("external32", &dv, 1, MPI_DOUBLE, buf, sizeof(buf), &pos);
    CHECK(pos == 16 && buf[0] == 1 && buf[1] == 2 && buf[2] == 3 && buf[3] == 4 &&
              buf[4] == 0xff && buf[7] == 0xfe && buf[8] == 0x3f && buf[9] == 0xf0 &&
              buf[15] == 0,
          "external32 bytes: %02x %02x %02x %02x / %02x %02x", buf[0], buf[1], buf[2], buf[3],
          buf[8], buf[9]);
    int ib[2] = {0, 0};
    double db = 0;
    MPI_Aint upos = 0;
    MPI_Unpack_external("external32", buf, pos, &upos, ib, 2, MPI_INT);
    MPI_Unpack_external("external32", buf, pos, &upos, &db, 1, MPI_DOUBLE);
    CHECK(upos == 16 && ib[0] == iv[0] && ib[1] == -2 && db == 1.0, "external32 round trip");
    /* a vector of shorts: every other one, big-endian */
    short s[6] = {0x0102, 9, 0x0304, 9, 0x0506, 9}, r[6] = {0};
    MPI_Datatype v;
    MPI_Type_vector(3, 1, 2, MPI_SHORT, &v);
    MPI_Type_commit(&v);
    pos = 0;
    MPI_Pack_external("external32", s, 1, v, buf, sizeof(buf), &pos);
    CHECK(pos == 6 && buf[0] == 1 && buf[1] == 2 && buf[4] == 5 && buf[5] == 6,
          "external32 of a vector: %ld bytes", (long)pos);
    upos = 0;
    MPI_Unpack_external("external32", buf, pos, &upos, r, 1, v);
    CHECK(r[0] == 0x0102 && r[2] == 0x0304 && r[4] == 0x0506 && r[1] == 0, "vector unpacked");
    MPI_Type_free(&v);
#ifdef TERN_MPI_H /* MPICH 4.0 takes "native" and does not check outsize here */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    pos = 0;
    CHECK(MPI_Pack_external("native", iv, 2, MPI_INT, buf, sizeof(buf), &pos) != MPI_SUCCESS,
          "a representation other than external32 accepted");
    pos = 60;
    CHECK(MPI_Pack_external("external32", iv, 2, MPI_INT, buf, sizeof(buf), &pos) !=
              MPI_SUCCESS,
          "external32 past the end of the buffer accepted");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
#endif
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    contents();
    bottom();
    external32();
    subarray(MPI_ORDER_C);
    subarray(MPI_ORDER_FORTRAN);
    const int D = MPI_DISTRIBUTE_DFLT_DARG, B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC,
              N = MPI_DISTRIBUTE_NONE;
    for (int o = 0; o < 2; o++) {
        int order = o == 0 ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        int g1[2] = {10, 7}, d1[2] = {B, B}, a1[2] = {D, D}, p1[2] = {3, 2};
        darray(2, g1, d1, a1, p1, order, "block x block");
        int d2[2] = {C, C}, a2[2] = {2, D};
        darray(2, g1, d2, a2, p1, order, "cyclic(2) x cyclic");
        int g3[3] = {5, 6, 9}, d3[3] = {N, C, B}, a3[3] = {D, 4, 3}, p3[3] = {1, 2, 3};
        darray(3, g3, d3, a3, p3, order, "none x cyclic(4) x block(3)");
        int g4[1] = {17}, d4[1] = {C}, a4[1] = {3}, p4[1] = {4};
        darray(1, g4, d4, a4, p4, order, "cyclic(3) of 17 over 4");
        int d5[1] = {B}, a5[1] = {5};
        darray(1, g4, d5, a5, p4, order, "block(5) of 17 over 4");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
