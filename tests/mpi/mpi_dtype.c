/*
 * MPI derived datatypes and MAXLOC / MINLOC for tern's MPI layer
 * (tests/mpi/mpi.sh builds it with ternmpicc and runs it at 1 to 4 ranks
 * over shm and tcp).  Plain MPI: it passes under MPICH too.  Every derived
 * type's typemap is also walked by hand here (a list of blocks), and what
 * moves is checked against that reference.  Prints "ok rank R" or
 * "FAIL ..." lines; exits non-zero on a failure.
 */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mpi/mpi_check.h"

/* ---- the reference: a typemap walked by hand ------------------------------ */

typedef struct desc {
    int n;
    long off[4096];
    long len[4096];
    long lb, extent;
} desc_t;

static desc_t *desc_new(long lb, long extent)
{
    desc_t *d = calloc(1, sizeof(*d));
    d->lb = lb;
    d->extent = extent;
    return d;
}

static void add(desc_t *d, long off, long len)
{
    d->off[d->n] = off;
    d->len[d->n++] = len;
}

static long desc_size(const desc_t *d)
{
    long s = 0;
    for (int k = 0; k < d->n; k++)
        s += d->len[k];
    return s;
}

/* count elements at buf, blocks in typemap order, into out */
static size_t ref_pack(const char *buf, int count, const desc_t *d, char *out)
{
    size_t o = 0;
    for (int i = 0; i < count; i++)
        for (int k = 0; k < d->n; k++) {
            memcpy(out + o, buf + i * d->extent + d->off[k], (size_t)d->len[k]);
            o += (size_t)d->len[k];
        }
    return o;
}

static void ref_unpack(const char *in, int count, const desc_t *d, char *buf)
{
    size_t o = 0;
    for (int i = 0; i < count; i++)
        for (int k = 0; k < d->n; k++) {
            memcpy(buf + i * d->extent + d->off[k], in + o, (size_t)d->len[k]);
            o += (size_t)d->len[k];
        }
}

static unsigned char pat(int seed, size_t i) { return (unsigned char)(seed * 37 + i * 11 + (i >> 7)); }

/* a buffer for count elements, with room below (negative lb) */
#define MARGIN 64
typedef struct area {
    char *mem, *buf;
    size_t len;
} area_t;

static area_t area_new(const desc_t *d, int count, int seed)
{
    area_t a;
    a.len = (size_t)(count + 1) * (size_t)(d->extent > 0 ? d->extent : 1) + 2 * MARGIN;
    a.mem = malloc(a.len);
    a.buf = a.mem + MARGIN;
    for (size_t i = 0; i < a.len; i++)
        a.mem[i] = seed < 0 ? (char)0xee : (char)pat(seed, i);
    return a;
}

/* ---- the types under test ---------------------------------------------------- */

typedef struct item {
    const char *name;
    MPI_Datatype t;
    desc_t *d;
    int count;
} item_t;

struct gaps {
    char c;
    double d;
    short s[3];
    int i;
};

static int nitems;
static item_t items[16];

static void item(const char *name, MPI_Datatype t, desc_t *d, int count)
{
    MPI_Type_commit(&t);
    int sz;
    MPI_Aint lb, ext;
    MPI_Type_size(t, &sz);
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK(sz == desc_size(d) && lb == d->lb && ext == d->extent,
          "%s: size %d lb %ld extent %ld, expected %ld %ld %ld", name, sz, (long)lb, (long)ext,
          desc_size(d), d->lb, d->extent);
    items[nitems++] = (item_t){name, t, d, count};
}

static void build_items(void)
{
    MPI_Datatype t, t2;
    desc_t *d;

    /* vector: 5 blocks of 3 doubles, stride 7 */
    MPI_Type_vector(5, 3, 7, MPI_DOUBLE, &t);
    d = desc_new(0, (4 * 7 + 3) * 8);
    for (int b = 0; b < 5; b++)
        add(d, b * 7 * 8, 3 * 8);
    item("vector", t, d, 3);

    /* struct with gaps, resized to the C struct */
    {
        int lens[4] = {1, 1, 3, 1};
        MPI_Aint disps[4] = {offsetof(struct gaps, c), offsetof(struct gaps, d),
                             offsetof(struct gaps, s), offsetof(struct gaps, i)};
        MPI_Datatype types[4] = {MPI_CHAR, MPI_DOUBLE, MPI_SHORT, MPI_INT};
        MPI_Type_create_struct(4, lens, disps, types, &t2);
        MPI_Type_create_resized(t2, 0, sizeof(struct gaps), &t);
        MPI_Type_free(&t2);
        d = desc_new(0, sizeof(struct gaps));
        add(d, offsetof(struct gaps, c), 1);
        add(d, offsetof(struct gaps, d), 8);
        add(d, offsetof(struct gaps, s), 6);
        add(d, offsetof(struct gaps, i), 4);
        item("struct", t, d, 4);
    }

    /* resized: two ints every 20 bytes */
    MPI_Type_contiguous(2, MPI_INT, &t2);
    MPI_Type_create_resized(t2, 0, 20, &t);
    MPI_Type_free(&t2);
    d = desc_new(0, 20);
    add(d, 0, 8);
    item("resized", t, d, 6);

    /* negative lb: ints at -8 and 4, resized to [-8, 16) */
    {
        int lens[2] = {1, 1};
        MPI_Aint disps[2] = {-8, 4};
        MPI_Type_create_hindexed(2, lens, disps, MPI_INT, &t2);
        MPI_Type_create_resized(t2, -8, 24, &t);
        MPI_Type_free(&t2);
        d = desc_new(-8, 24);
        add(d, -8, 4);
        add(d, 4, 4);
        item("negative lb", t, d, 3);
    }

    /* indexed, blocks out of address order */
    {
        int lens[3] = {2, 3, 1}, disps[3] = {5, 0, 9};
        MPI_Type_indexed(3, lens, disps, MPI_FLOAT, &t);
        d = desc_new(0, 40);
        add(d, 20, 8);
        add(d, 0, 12);
        add(d, 36, 4);
        item("indexed", t, d, 2);
    }

    /* many blocks: every third int, 1500 of them (staged) */
    MPI_Type_vector(1500, 1, 3, MPI_INT, &t);
    d = desc_new(0, (1499 * 3 + 1) * 4);
    for (int b = 0; b < 1500; b++)
        add(d, b * 12, 4);
    item("many blocks", t, d, 2);

    /* large and many blocks: beyond the eager limit, staged */
    MPI_Type_vector(4000, 1, 2, MPI_DOUBLE, &t);
    d = desc_new(0, (3999 * 2 + 1) * 8);
    for (int b = 0; b < 4000; b++)
        add(d, b * 16, 8);
    item("large staged", t, d, 1);

    /* large, few blocks: beyond the eager limit as an iovec list */
    MPI_Type_create_hvector(4, 3000, 32000, MPI_DOUBLE, &t);
    d = desc_new(0, 3 * 32000 + 24000);
    for (int b = 0; b < 4; b++)
        add(d, b * 32000, 24000);
    item("large iovec", t, d, 2);

    /* indexed block of shorts, within a struct with a vector */
    {
        int disps[3] = {0, 5, 10};
        MPI_Type_create_indexed_block(3, 2, disps, MPI_SHORT, &t2);
        int lens[2] = {2, 1};
        MPI_Aint sd[2] = {0, 64};
        MPI_Datatype types[2] = {t2, MPI_INT};
        MPI_Type_create_struct(2, lens, sd, types, &t);
        MPI_Type_free(&t2);
        /* t2: blocks (0,4) (10,4) (20,4), extent 24; two of them, then the
         * int at 64: ub 68, padded to 4 */
        d = desc_new(0, 68);
        for (int k = 0; k < 2; k++)
            for (int b = 0; b < 3; b++)
                add(d, k * 24 + b * 10, 4);
        add(d, 64, 4);
        item("struct of indexed block", t, d, 3);
    }
}

/* ---- constructors and queries -------------------------------------------------- */

static void queries(void)
{
    MPI_Datatype t, t2;
    int sz;
    MPI_Aint lb, ext, tlb, text;

    MPI_Type_contiguous(5, MPI_INT, &t);
    MPI_Type_size(t, &sz);
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK(sz == 20 && lb == 0 && ext == 20, "contiguous: %d %ld %ld", sz, (long)lb, (long)ext);
    MPI_Type_dup(t, &t2);
    MPI_Type_size(t2, &sz);
    MPI_Type_get_extent(t2, &lb, &ext);
    CHECK(sz == 20 && lb == 0 && ext == 20, "dup: %d %ld %ld", sz, (long)lb, (long)ext);
    MPI_Type_free(&t2);
    MPI_Type_free(&t);
    CHECK(t == MPI_DATATYPE_NULL, "free: handle not reset");

    MPI_Type_hvector(3, 2, 40, MPI_INT, &t);
    MPI_Type_size(t, &sz);
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK(sz == 24 && ext == 88, "hvector: %d %ld", sz, (long)ext);
    MPI_Type_free(&t);

    {
        int lens[2] = {2, 1};
        MPI_Aint disps[2] = {16, -8};
        MPI_Type_create_hindexed(2, lens, disps, MPI_DOUBLE, &t);
        MPI_Type_size(t, &sz);
        MPI_Type_get_extent(t, &lb, &ext);
        MPI_Type_get_true_extent(t, &tlb, &text);
        CHECK(sz == 24 && lb == -8 && ext == 40 && tlb == -8 && text == 40,
              "hindexed: %d %ld %ld %ld %ld", sz, (long)lb, (long)ext, (long)tlb, (long)text);
        MPI_Type_free(&t);
    }

    /* resized: the extent moves, the true extent does not */
    MPI_Type_create_resized(MPI_INT, -4, 12, &t);
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    CHECK(lb == -4 && ext == 12 && tlb == 0 && text == 4, "resized: %ld %ld %ld %ld", (long)lb,
          (long)ext, (long)tlb, (long)text);
    /* a vector of it: lb stays the marker's, extent counts the resized ones */
    MPI_Type_vector(2, 1, 2, t, &t2);
    MPI_Type_get_extent(t2, &lb, &ext);
    CHECK(lb == -4 && ext == 36, "vector of resized: %ld %ld", (long)lb, (long)ext);
    MPI_Type_free(&t2);
    MPI_Type_free(&t);

    /* a struct's extent is padded to its alignment */
    {
        int lens[2] = {1, 1};
        MPI_Aint disps[2] = {0, 8};
        MPI_Datatype types[2] = {MPI_DOUBLE, MPI_CHAR};
        MPI_Type_create_struct(2, lens, disps, types, &t);
        MPI_Type_size(t, &sz);
        MPI_Type_get_extent(t, &lb, &ext);
        MPI_Type_get_true_extent(t, &tlb, &text);
        CHECK(sz == 9 && ext == 16 && text == 9, "struct padding: %d %ld %ld", sz, (long)ext,
              (long)text);
        MPI_Type_free(&t);
    }

    /* empty types, also in a message */
    MPI_Type_contiguous(0, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_size(t, &sz);
    CHECK(sz == 0, "empty: size %d", sz);
    {
        int x = 7, y = 9, e;
        MPI_Request r;
        MPI_Irecv(&y, 3, t, 0, 90, MPI_COMM_SELF, &r);
        e = MPI_Send(&x, 2, t, 0, 90, MPI_COMM_SELF);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(e == MPI_SUCCESS && y == 9, "empty type message: %d, %d", e, y);
    }
    MPI_Type_free(&t);

    /* a large contiguous type is one block (quick to build) */
    MPI_Type_contiguous(1 << 28, MPI_CHAR, &t);
    MPI_Type_size(t, &sz);
    CHECK(sz == 1 << 28, "large contiguous: %d", sz);
    MPI_Type_free(&t);

    /* pair types: the C structs */
    MPI_Type_size(MPI_DOUBLE_INT, &sz);
    MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &ext);
    CHECK(sz == 12 && ext == (MPI_Aint)sizeof(struct { double v; int i; }),
          "MPI_DOUBLE_INT: %d %ld", sz, (long)ext);
    MPI_Type_size(MPI_2INT, &sz);
    CHECK(sz == 8, "MPI_2INT: %d", sz);
    MPI_Type_get_extent(MPI_SHORT_INT, &lb, &ext);
    CHECK(ext == (MPI_Aint)sizeof(struct { short v; int i; }), "MPI_SHORT_INT: %ld", (long)ext);
    MPI_Type_get_extent(MPI_LONG_DOUBLE_INT, &lb, &ext);
    CHECK(ext == (MPI_Aint)sizeof(struct { long double v; int i; }), "MPI_LONG_DOUBLE_INT: %ld",
          (long)ext);
}

/* ---- point to point ---------------------------------------------------------- */

static int partner(void) { return (rank ^ 1) < size ? rank ^ 1 : rank; }

/* send as it, receive as bytes; send bytes, receive as it; it both ways */
static void exchange(const item_t *it, int tag)
{
    int p = partner(), n = it->count;
    size_t bytes = (size_t)desc_size(it->d) * (size_t)n;
    area_t src = area_new(it->d, n, rank + tag), mine = area_new(it->d, n, p + tag);
    char *packed = malloc(bytes + 1), *expect = malloc(bytes + 1), *in = malloc(bytes + 1);
    ref_pack(mine.buf, n, it->d, expect); /* what the partner sends */
    MPI_Request r;
    MPI_Status st;
    int e, got;

    /* 1: as the type -> bytes (blocking send) */
    MPI_Irecv(in, (int)bytes, MPI_BYTE, p, tag, MPI_COMM_WORLD, &r);
    e = MPI_Send(src.buf, n, it->t, p, tag, MPI_COMM_WORLD);
    CHECK(e == MPI_SUCCESS, "%s: send: %d", it->name, e);
    MPI_Wait(&r, &st);
    MPI_Get_count(&st, MPI_BYTE, &got);
    CHECK(got == (int)bytes && memcmp(in, expect, bytes) == 0, "%s: sent as the type, "
          "received as %d bytes (expected %zu): data differs", it->name, got, bytes);

    /* 2: bytes -> as the type (blocking receive): gaps untouched */
    ref_pack(src.buf, n, it->d, packed);
    area_t dst = area_new(it->d, n, -1), want = area_new(it->d, n, -1);
    ref_unpack(expect, n, it->d, want.buf);
    MPI_Isend(packed, (int)bytes, MPI_BYTE, p, tag + 1, MPI_COMM_WORLD, &r);
    e = MPI_Recv(dst.buf, n, it->t, p, tag + 1, MPI_COMM_WORLD, &st);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Get_count(&st, it->t, &got);
    CHECK(e == MPI_SUCCESS && got == n, "%s: received as the type: %d, count %d", it->name, e,
          got);
    CHECK(memcmp(dst.mem, want.mem, dst.len) == 0, "%s: received as the type: data differs",
          it->name);

    /* 3: the type both ways, non-blocking */
    memset(dst.mem, 0xee, dst.len);
    MPI_Request rr[2];
    MPI_Status sts[2];
    MPI_Irecv(dst.buf, n, it->t, p, tag + 2, MPI_COMM_WORLD, &rr[0]);
    MPI_Isend(src.buf, n, it->t, p, tag + 2, MPI_COMM_WORLD, &rr[1]);
    e = MPI_Waitall(2, rr, sts);
    CHECK(e == MPI_SUCCESS && memcmp(dst.mem, want.mem, dst.len) == 0,
          "%s: both as the type: %d, data differs", it->name, e);

    free(src.mem);
    free(mine.mem);
    free(dst.mem);
    free(want.mem);
    free(packed);
    free(expect);
    free(in);
}

/* a longer message than the receive's type holds: MPI_ERR_TRUNCATE */
static void truncation(const item_t *it, int tag)
{
    int p = partner(), n = it->count, cls = -1;
    area_t src = area_new(it->d, n + 1, rank), dst = area_new(it->d, n + 1, -1);
    MPI_Request r, s;
    MPI_Irecv(dst.buf, n, it->t, p, tag, MPI_COMM_WORLD, &r);
    MPI_Isend(src.buf, n + 1, it->t, p, tag, MPI_COMM_WORLD, &s);
    int e = MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "%s: truncated receive: class %d", it->name, cls);
    /* and blocking */
    MPI_Isend(src.buf, n + 1, it->t, p, tag + 1, MPI_COMM_WORLD, &s);
    e = MPI_Recv(dst.buf, n, it->t, p, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    cls = -1;
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "%s: truncated MPI_Recv: class %d", it->name, cls);
    free(src.mem);
    free(dst.mem);
}

/* a type freed while a receive with it is pending */
static void free_while_pending(void)
{
    int p = partner(), n = 2000;
    MPI_Datatype t;
    MPI_Type_vector(n, 1, 2, MPI_INT, &t); /* staged: more blocks than an iovec list takes */
    MPI_Type_commit(&t);
    int *out = malloc(sizeof(int) * (size_t)n), *in = malloc(sizeof(int) * 2 * (size_t)n);
    for (int i = 0; i < n; i++)
        out[i] = p * 100000 + i;
    for (int i = 0; i < 2 * n; i++)
        in[i] = -1;
    MPI_Request r;
    MPI_Irecv(in, 1, t, p, 60, MPI_COMM_WORLD, &r);
    MPI_Type_free(&t);
    for (int i = 0; i < n; i++)
        out[i] = rank * 100000 + i;
    MPI_Send(out, n, MPI_INT, p, 60, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += in[2 * i] != p * 100000 + i || in[2 * i + 1] != -1;
    CHECK(bad == 0, "type freed while pending: %d elements differ", bad);
    free(out);
    free(in);
}

/* ---- pack, counts, errors ---------------------------------------------------- */

static void pack_unpack(void)
{
    const item_t *a = &items[0], *b = &items[1];
    int sa, sb, pos = 0;
    MPI_Pack_size(a->count, a->t, MPI_COMM_WORLD, &sa);
    MPI_Pack_size(b->count, b->t, MPI_COMM_WORLD, &sb);
    CHECK(sa >= desc_size(a->d) * a->count && sb >= desc_size(b->d) * b->count,
          "pack size %d %d", sa, sb);
    char *packed = malloc((size_t)(sa + sb));
    area_t xa = area_new(a->d, a->count, 3), xb = area_new(b->d, b->count, 4);
    MPI_Pack(xa.buf, a->count, a->t, packed, sa + sb, &pos, MPI_COMM_WORLD);
    MPI_Pack(xb.buf, b->count, b->t, packed, sa + sb, &pos, MPI_COMM_WORLD);
    CHECK(pos <= sa + sb && pos > 0, "pack position %d", pos);
    area_t ya = area_new(a->d, a->count, -1), yb = area_new(b->d, b->count, -1);
    area_t wa = area_new(a->d, a->count, -1), wb = area_new(b->d, b->count, -1);
    int end = pos;
    pos = 0;
    MPI_Unpack(packed, end, &pos, ya.buf, a->count, a->t, MPI_COMM_WORLD);
    MPI_Unpack(packed, end, &pos, yb.buf, b->count, b->t, MPI_COMM_WORLD);
    CHECK(pos == end, "unpack position %d, packed %d", pos, end);
    /* the expected: the blocks copied, the gaps as they were */
    char *tmp = malloc((size_t)(sa + sb));
    ref_pack(xa.buf, a->count, a->d, tmp);
    ref_unpack(tmp, a->count, a->d, wa.buf);
    ref_pack(xb.buf, b->count, b->d, tmp);
    ref_unpack(tmp, b->count, b->d, wb.buf);
    CHECK(memcmp(ya.mem, wa.mem, ya.len) == 0 && memcmp(yb.mem, wb.mem, yb.len) == 0,
          "pack / unpack round trip differs");
    /* packed, sent as MPI_PACKED to the partner, unpacked there */
    int p = partner(), got = -1;
    char *in = malloc((size_t)end);
    area_t pa = area_new(a->d, a->count, p + 50), za = area_new(a->d, a->count, -1);
    area_t va = area_new(a->d, a->count, -1);
    pos = 0;
    MPI_Pack(pa.buf, a->count, a->t, packed, sa + sb, &pos, MPI_COMM_WORLD); /* the partner's */
    ref_pack(pa.buf, a->count, a->d, tmp);
    ref_unpack(tmp, a->count, a->d, va.buf);
    pos = 0;
    area_t xs = area_new(a->d, a->count, rank + 50);
    MPI_Pack(xs.buf, a->count, a->t, packed, sa + sb, &pos, MPI_COMM_WORLD);
    MPI_Status st;
    MPI_Request r;
    MPI_Irecv(in, end, MPI_PACKED, p, 95, MPI_COMM_WORLD, &r);
    MPI_Send(packed, pos, MPI_PACKED, p, 95, MPI_COMM_WORLD);
    MPI_Wait(&r, &st);
    MPI_Get_count(&st, MPI_PACKED, &got);
    int upos = 0;
    MPI_Unpack(in, got, &upos, za.buf, a->count, a->t, MPI_COMM_WORLD);
    CHECK(got == pos && upos == got && memcmp(za.mem, va.mem, za.len) == 0,
          "MPI_PACKED message: %d bytes (packed %d), unpacked %d, data %s", got, pos, upos,
          memcmp(za.mem, va.mem, za.len) ? "differs" : "right");
    free(in);
    free(pa.mem);
    free(za.mem);
    free(va.mem);
    free(xs.mem);
    free(tmp);
    free(packed);
    free(xa.mem);
    free(xb.mem);
    free(ya.mem);
    free(yb.mem);
    free(wa.mem);
    free(wb.mem);
}

struct id {
    int i;
    double d;
};

static void counts(void)
{
    int p = partner(), got;
    MPI_Status st;
    MPI_Datatype t3, s;
    MPI_Type_contiguous(3, MPI_INT, &t3);
    MPI_Type_commit(&t3);
    int out[16], in[16];
    for (int i = 0; i < 16; i++)
        out[i] = i;
    /* 7 ints into three of three */
    MPI_Request r;
    MPI_Irecv(in, 3, t3, p, 70, MPI_COMM_WORLD, &r);
    MPI_Send(out, 7, MPI_INT, p, 70, MPI_COMM_WORLD);
    MPI_Wait(&r, &st);
    MPI_Get_count(&st, t3, &got);
    CHECK(got == MPI_UNDEFINED, "count of 7 ints as 3-int elements: %d", got);
    MPI_Get_elements(&st, t3, &got);
    CHECK(got == 7, "elements of 7 ints as 3-int elements: %d", got);
    CHECK(in[6] == 6, "partial element: %d", in[6]);

    /* {int, double}: one and a half elements, three basic ones */
    int lens[2] = {1, 1};
    MPI_Aint disps[2] = {offsetof(struct id, i), offsetof(struct id, d)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, lens, disps, types, &s);
    MPI_Type_commit(&s);
    struct id a[3] = {{1, 1.5}, {2, 2.5}, {3, 3.5}}, b[3];
    memset(b, 0, sizeof(b));
    MPI_Irecv(b, 3, s, p, 71, MPI_COMM_WORLD, &r);
    MPI_Send(a, 2, s, p, 71, MPI_COMM_WORLD);
    MPI_Wait(&r, &st);
    MPI_Get_count(&st, s, &got);
    CHECK(got == 2, "count of 2 structs: %d", got);
    MPI_Get_elements(&st, s, &got);
    CHECK(got == 4, "elements of 2 structs: %d", got);
    CHECK(b[1].i == 2 && b[1].d == 2.5 && b[2].i == 0, "structs received: %d %g %d", b[1].i,
          b[1].d, b[2].i);
    char raw[16];
    memcpy(raw, &a[0].i, 4);
    memcpy(raw + 4, &a[0].d, 8);
    memcpy(raw + 12, &a[1].i, 4);
    MPI_Irecv(b, 3, s, p, 72, MPI_COMM_WORLD, &r);
    MPI_Send(raw, 16, MPI_BYTE, p, 72, MPI_COMM_WORLD);
    MPI_Wait(&r, &st);
    MPI_Get_count(&st, s, &got);
    CHECK(got == MPI_UNDEFINED, "count of 1.5 structs: %d", got);
    MPI_Get_elements(&st, s, &got);
    CHECK(got == 3, "elements of 1.5 structs: %d", got);
    CHECK(b[0].d == 1.5 && b[1].i == 2, "1.5 structs received: %g %d", b[0].d, b[1].i);
    MPI_Type_free(&s);
    MPI_Type_free(&t3);
}

static void errors(void)
{
    MPI_Datatype t;
    MPI_Type_contiguous(2, MPI_INT, &t); /* not committed */
    int buf[2] = {1, 2}, in[2], cls = -1;
    MPI_Request r;
    int e = MPI_Isend(buf, 1, t, 0, 80, MPI_COMM_SELF, &r);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_TYPE, "send of an uncommitted type: class %d", cls);
    if (e == MPI_SUCCESS) { /* it went: take it */
        MPI_Recv(in, 2, MPI_INT, 0, 80, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Type_free(&t);
    int x = 1, y = 0;
    e = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    cls = -1;
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_MAXLOC on MPI_INT: class %d", cls);
}

/* ---- MAXLOC / MINLOC ---------------------------------------------------------- */

/* every rank's value at i; ties across ranks on every third element */
static int val(int r, int i) { return i % 3 == 0 ? 5 : (r * 7 + i * 3) % 11; }

#define LOC_TEST(T, DT)                                                                       \
    do {                                                                                      \
        typedef struct { T v; int i; } pair_t;                                                \
        pair_t *in = malloc(sizeof(pair_t) * (size_t)n), *out = malloc(sizeof(pair_t) * (size_t)n); \
        for (int op = 0; op < 2; op++)                                                        \
            for (int all = 0; all < 2; all++) {                                               \
                for (int i = 0; i < n; i++) {                                                 \
                    in[i].v = (T)val(rank, i);                                                \
                    in[i].i = rank * 1000 + i % 1000;                                         \
                    out[i].v = (T)-1;                                                         \
                    out[i].i = -1;                                                            \
                }                                                                             \
                int root = size - 1, e;                                                       \
                MPI_Op o = op ? MPI_MINLOC : MPI_MAXLOC;                                      \
                e = all ? MPI_Allreduce(in, out, n, DT, o, MPI_COMM_WORLD)                    \
                        : MPI_Reduce(in, out, n, DT, o, root, MPI_COMM_WORLD);                \
                CHECK(e == MPI_SUCCESS, "%s %s %s: %d", #DT, op ? "MINLOC" : "MAXLOC",        \
                      all ? "allreduce" : "reduce", e);                                       \
                if (!all && rank != root)                                                     \
                    continue;                                                                 \
                int bad = 0;                                                                  \
                for (int i = 0; i < n; i++) {                                                 \
                    int best = 0;                                                             \
                    for (int r = 1; r < size; r++)                                            \
                        if (op ? val(r, i) < val(best, i) : val(r, i) > val(best, i))         \
                            best = r;                                                         \
                    bad += out[i].v != (T)val(best, i) || out[i].i != best * 1000 + i % 1000; \
                }                                                                             \
                CHECK(bad == 0, "%s %s %s count %d: %d elements differ", #DT,                 \
                      op ? "MINLOC" : "MAXLOC", all ? "allreduce" : "reduce", n, bad);        \
            }                                                                                 \
        free(in);                                                                             \
        free(out);                                                                            \
    } while (0)

/* reduce-scatter of MPI_DOUBLE_INT (its size is less than its extent) */
static void loc_scatter(void)
{
    typedef struct { double v; int i; } pair_t;
    int n = 3 * size;
    pair_t *in = malloc(sizeof(pair_t) * (size_t)n), out[3];
    for (int i = 0; i < n; i++) {
        in[i].v = val(rank, i);
        in[i].i = rank;
    }
    int e = MPI_Reduce_scatter_block(in, out, 3, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    int bad = 0;
    for (int k = 0; k < 3; k++) {
        int i = rank * 3 + k, best = 0;
        for (int r = 1; r < size; r++)
            if (val(r, i) > val(best, i))
                best = r;
        bad += out[k].v != val(best, i) || out[k].i != best;
    }
    CHECK(e == MPI_SUCCESS && bad == 0, "reduce_scatter_block MAXLOC: %d, %d differ", e, bad);
    free(in);
}

static void loc(void)
{
    static const int ns[] = {1, 5, 1000};
    for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
        int n = ns[k];
        LOC_TEST(int, MPI_2INT);
        LOC_TEST(float, MPI_FLOAT_INT);
        LOC_TEST(double, MPI_DOUBLE_INT);
        LOC_TEST(long, MPI_LONG_INT);
        LOC_TEST(short, MPI_SHORT_INT);
        LOC_TEST(long double, MPI_LONG_DOUBLE_INT);
    }
}

/* elements of three ints, summed by a user operation */
static void sum3(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    for (int i = 0; i < *len * 3; i++)
        ((int *)inout)[i] += ((const int *)in)[i];
}

/* a user operation on a derived type; a predefined one is refused (as MPI
 * says: predefined operations take predefined types) */
static void derived_reduce(void)
{
    MPI_Datatype t;
    MPI_Type_contiguous(3, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Op op;
    MPI_Op_create(sum3, 1, &op);
    int in[12], out[12], cls = -1;
    for (int i = 0; i < 12; i++)
        in[i] = rank + i;
    int e = MPI_Allreduce(in, out, 4, t, op, MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < 12; i++)
        bad += out[i] != size * (size - 1) / 2 + size * i;
    CHECK(e == MPI_SUCCESS && bad == 0, "allreduce of 3-int elements: %d, %d differ", e, bad);
    e = MPI_Reduce(in, out, 4, t, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_SUM on a derived type: class %d", cls);
    MPI_Op_free(&op);
    MPI_Type_free(&t);
}

/* Collectives with a non-contiguous type (every other int of a row): a
 * broadcast, a gather, an allgather and an alltoall of it, received as
 * the type and as plain ints, against what the layout says; the gaps
 * keep their sentinel. */
static void coll_derived(void)
{
    enum { N = 6 };
    MPI_Datatype every_other;
    MPI_Type_vector(N, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int row[2 * N], want;
    for (int root = 0; root < size; root++) { /* bcast: the type on both sides */
        for (int i = 0; i < 2 * N; i++)
            row[i] = rank == root ? 1000 * root + i : -1;
        MPI_Bcast(row, 1, every_other, root, MPI_COMM_WORLD);
        for (int i = 0; i < 2 * N; i++) {
            want = i % 2 == 0 || rank == root ? 1000 * root + i : -1;
            CHECK(row[i] == want, "bcast root %d: element %d is %d, not %d", root, i, row[i],
                  want);
        }
    }
    int *mine = malloc(sizeof(int) * 2 * N), *all = malloc(sizeof(int) * (size_t)size * N);
    int *all2 = malloc(sizeof(int) * (size_t)size * 2 * N);
    for (int i = 0; i < 2 * N; i++)
        mine[i] = 100 * rank + i;
    /* gather and allgather: sent as the type, received as ints */
    MPI_Gather(mine, 1, every_other, all, N, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 0; rank == 0 && r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK(all[r * N + i] == 100 * r + 2 * i, "gather: rank %d element %d is %d", r, i,
                  all[r * N + i]);
    for (int i = 0; i < size * 2 * N; i++)
        all2[i] = -7;
    /* allgather: sent as ints, received as the type (every other int) */
    int packed[N];
    for (int i = 0; i < N; i++)
        packed[i] = 100 * rank + i;
    MPI_Allgather(packed, N, MPI_INT, all2, 1, every_other, MPI_COMM_WORLD);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(every_other, &lb, &ext);
    int stride = (int)(ext / (MPI_Aint)sizeof(int)); /* 2N - 1: the vector's extent */
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK(all2[r * stride + 2 * i] == 100 * r + i, "allgather: rank %d element %d is %d",
                  r, i, all2[r * stride + 2 * i]);
    for (int r = 0; r < size; r++) /* the gaps between a rank's elements */
        for (int i = 0; i + 1 < N; i++)
            CHECK(all2[r * stride + 2 * i + 1] == -7, "allgather: gap %d of rank %d written (%d)",
                  i, r,
                  all2[r * stride + 2 * i + 1]);
    /* alltoall: one element of the type to every rank */
    int *sbuf = malloc(sizeof(int) * (size_t)size * 2 * N);
    for (int i = 0; i < size * 2 * N; i++)
        sbuf[i] = 10000 * rank + i;
    MPI_Alltoall(sbuf, 1, every_other, all, N, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK(all[r * N + i] == 10000 * r + rank * stride + 2 * i,
                  "alltoall: from rank %d element %d is %d", r, i, all[r * N + i]);
    free(sbuf);
    free(mine);
    free(all);
    free(all2);
    MPI_Type_free(&every_other);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    queries();
    build_items();
    for (int k = 0; k < nitems; k++)
        exchange(&items[k], 100 + 10 * k);
    truncation(&items[0], 300); /* an iovec list */
    truncation(&items[5], 310); /* staged */
    free_while_pending();
    pack_unpack();
    counts();
    errors();
    loc();
    loc_scatter();
    derived_reduce();
    coll_derived();
    for (int k = 0; k < nitems; k++) {
        MPI_Type_free(&items[k].t);
        free(items[k].d);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (failures == 0)
        printf("ok rank %d\n", rank);
    MPI_Finalize();
    return failures != 0;
}
