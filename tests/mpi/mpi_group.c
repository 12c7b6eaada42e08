/*
 * MPI groups and object names test for tern's MPI layer (tests/mpi/mpi.sh):
 * every group constructor (incl, excl, range_incl, range_excl, union,
 * intersection, difference) checked member by member and in order through
 * MPI_Group_translate_ranks, MPI_Group_rank / _size / _compare,
 * MPI_GROUP_EMPTY, groups of a split communicator; the error classes of bad
 * ranks, ranges, groups and counts under MPI_ERRORS_RETURN; the names of
 * communicators and datatypes (defaults, set, cut to MPI_MAX_OBJECT_NAME,
 * not passed on by dup or split).  Plain MPI: the classes the standard
 * leaves open (MPICH and Open MPI differ) are checked exactly only with
 * tern's mpi.h (TERN_MPI_H, which gives MPICH's), elsewhere only that the
 * call failed.  Prints "ok rank R" or "FAIL ..." lines.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mpi/mpi_check.h"

/* an error of class cls: exactly (exact, or tern's header: MPICH's
 * classes) or any; with tern also that the message names the call */
static void expect_err(int e, int cls, int exact, const char *call, const char *what)
{
    int c = -1;
    if (e != MPI_SUCCESS)
        MPI_Error_class(e, &c);
#ifdef TERN_MPI_H
    exact = 1;
#endif
    if (exact)
        CHECK(c == cls, "%s: %s gave class %d (code %d), expected %d", call, what, c, e, cls);
    else
        CHECK(e != MPI_SUCCESS, "%s: %s succeeded", call, what);
#ifdef TERN_MPI_H
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (e != MPI_SUCCESS) {
        MPI_Error_string(e, msg, &len);
        CHECK(strstr(msg, call) != NULL, "%s: %s: the message \"%s\" does not name the call",
              call, what, msg);
    }
#else
    (void)call;
#endif
}

/* g is exactly the world ranks want[0..n-1] in that order: its size, its
 * ranks translated to MPI_COMM_WORLD's group, and this rank's place */
static void expect_group(MPI_Group g, MPI_Group world, const int *want, int n, const char *what)
{
    int gs = -1, gr = -2, me = MPI_UNDEFINED;
    MPI_Group_size(g, &gs);
    CHECK(gs == n, "%s: size %d, expected %d", what, gs, n);
    if (gs != n)
        return;
    int *idx = malloc(sizeof(int) * (size_t)(n + 1)), *got = malloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        idx[i] = i;
        if (want[i] == rank)
            me = i;
    }
    MPI_Group_translate_ranks(g, n, idx, world, got);
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: rank %d is world %d, expected %d", what, i, got[i],
              want[i]);
    MPI_Group_rank(g, &gr);
    CHECK(gr == me, "%s: this rank (world %d) is %d in it, expected %d", what, rank, gr, me);
    free(idx);
    free(got);
}

static int compare(MPI_Group a, MPI_Group b)
{
    int r = -1;
    MPI_Group_compare(a, b, &r);
    return r;
}

static void constructors(MPI_Group world)
{
    int n = size, *want = malloc(sizeof(int) * (size_t)n), *list = malloc(sizeof(int) * (size_t)n);
    int m;
    MPI_Group rev, evens, odds, g;

    /* incl: the world backwards */
    for (int i = 0; i < n; i++)
        list[i] = n - 1 - i;
    MPI_Group_incl(world, n, list, &rev);
    expect_group(rev, world, list, n, "incl reversed");
    CHECK(compare(rev, world) == (n > 1 ? MPI_SIMILAR : MPI_IDENT), "compare reversed world: %d",
          compare(rev, world));
    /* incl of nothing is MPI_GROUP_EMPTY (MPI-3.1 6.3.2) */
    MPI_Group_incl(world, 0, list, &g);
    CHECK(g == MPI_GROUP_EMPTY, "incl of 0 ranks is not MPI_GROUP_EMPTY");
    /* incl of a group other than the world: rev's ranks 0 and 1 */
    if (n > 1) {
        int two[2] = {1, 0}, w2[2] = {n - 2, n - 1};
        MPI_Group_incl(rev, 2, two, &g);
        expect_group(g, world, w2, 2, "incl of the reversed group");
        MPI_Group_free(&g);
    }

    /* excl: the even ranks out leaves the odd ones, in order */
    m = 0;
    for (int i = 0; i < n; i += 2)
        list[m++] = i;
    MPI_Group_excl(world, m, list, &odds);
    int k = 0;
    for (int i = 1; i < n; i += 2)
        want[k++] = i;
    expect_group(odds, world, want, k, "excl of the evens");
    /* excl of nothing: the same group (a new handle) */
    MPI_Group_excl(world, 0, list, &g);
    CHECK(compare(g, world) == MPI_IDENT, "excl of 0 ranks: compare %d", compare(g, world));
    MPI_Group_free(&g);
    /* excl of everything: empty */
    for (int i = 0; i < n; i++)
        list[i] = i;
    MPI_Group_excl(world, n, list, &g);
    CHECK(compare(g, MPI_GROUP_EMPTY) == MPI_IDENT, "excl of all: compare with empty %d",
          compare(g, MPI_GROUP_EMPTY));
    if (g != MPI_GROUP_EMPTY)
        MPI_Group_free(&g);

    /* range_incl: (0, n-1, 2) are the evens; (n-1, 0, -1) the world backwards;
     * two triplets: odds then evens */
    int r_evens[1][3] = {{0, n - 1, 2}}, r_back[1][3] = {{n - 1, 0, -1}};
    MPI_Group_range_incl(world, 1, r_evens, &evens);
    k = 0;
    for (int i = 0; i < n; i += 2)
        want[k++] = i;
    expect_group(evens, world, want, k, "range_incl evens");
    MPI_Group_range_incl(world, 1, r_back, &g);
    CHECK(compare(g, rev) == MPI_IDENT, "range_incl backwards vs incl reversed: %d",
          compare(g, rev));
    MPI_Group_free(&g);
    if (n > 1) {
        /* the odds' last rank: an end past the last one named is fine */
        int r_two[2][3] = {{1, n - 1, 2}, {0, n, 2}};
        if (n % 2 == 0)
            r_two[1][1] = n - 1; /* 0, 2 .. n-2: the end n would name rank n */
        MPI_Group_range_incl(world, 2, r_two, &g);
        k = 0;
        for (int i = 1; i < n; i += 2)
            want[k++] = i;
        for (int i = 0; i < n; i += 2)
            want[k++] = i;
        expect_group(g, world, want, k, "range_incl odds then evens");
        MPI_Group_free(&g);
    }
    /* range_excl: without the evens, the odds */
    MPI_Group_range_excl(world, 1, r_evens, &g);
    CHECK(compare(g, odds) == MPI_IDENT, "range_excl evens vs excl evens: %d", compare(g, odds));
    MPI_Group_free(&g);
    /* a triplet of one rank, stride -1 (first == last) */
    int r_one[1][3] = {{n - 1, n - 1, -1}};
    MPI_Group_range_excl(world, 1, r_one, &g);
    for (int i = 0; i < n - 1; i++)
        want[i] = i;
    expect_group(g, world, want, n - 1, "range_excl of the last rank");
    if (g != MPI_GROUP_EMPTY)
        MPI_Group_free(&g);

    /* union: the first group's members, then the second's not in it */
    MPI_Group_union(evens, odds, &g);
    k = 0;
    for (int i = 0; i < n; i += 2)
        want[k++] = i;
    for (int i = 1; i < n; i += 2)
        want[k++] = i;
    expect_group(g, world, want, n, "union evens odds");
    MPI_Group_free(&g);
    MPI_Group_union(rev, evens, &g); /* evens all in rev already */
    CHECK(compare(g, rev) == MPI_IDENT, "union reversed evens: %d", compare(g, rev));
    MPI_Group_free(&g);
    MPI_Group_union(MPI_GROUP_EMPTY, odds, &g);
    CHECK(compare(g, odds) == MPI_IDENT, "union empty odds: %d", compare(g, odds));
    if (g != MPI_GROUP_EMPTY)
        MPI_Group_free(&g);

    /* intersection: the first group's members also in the second, in the
     * first's order */
    MPI_Group_intersection(rev, evens, &g);
    k = 0;
    for (int i = n - 1; i >= 0; i--)
        if (i % 2 == 0)
            want[k++] = i;
    expect_group(g, world, want, k, "intersection reversed evens");
    MPI_Group_free(&g);
    MPI_Group_intersection(evens, odds, &g);
    CHECK(g == MPI_GROUP_EMPTY || compare(g, MPI_GROUP_EMPTY) == MPI_IDENT,
          "intersection of evens and odds is not empty");
    if (g != MPI_GROUP_EMPTY)
        MPI_Group_free(&g);

    /* difference: the first group's members not in the second */
    MPI_Group_difference(world, evens, &g);
    CHECK(compare(g, odds) == MPI_IDENT, "difference world evens: %d", compare(g, odds));
    if (g != MPI_GROUP_EMPTY)
        MPI_Group_free(&g);
    MPI_Group_difference(rev, odds, &g);
    expect_group(g, world, want, k, "difference reversed odds"); /* the evens backwards */
    MPI_Group_free(&g);
    MPI_Group_difference(odds, world, &g);
    CHECK(g == MPI_GROUP_EMPTY || compare(g, MPI_GROUP_EMPTY) == MPI_IDENT,
          "difference odds world is not empty");
    if (g != MPI_GROUP_EMPTY)
        MPI_Group_free(&g);

    /* compare */
    if (n > 1)
        CHECK(compare(evens, world) == MPI_UNEQUAL, "compare evens world: %d",
              compare(evens, world));
    CHECK(compare(world, world) == MPI_IDENT, "compare world world");
    CHECK(compare(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY) == MPI_IDENT, "compare empty empty");
    CHECK(compare(world, MPI_GROUP_EMPTY) == MPI_UNEQUAL, "compare world empty");

    /* translate: MPI_PROC_NULL stays, a rank outside the target group is
     * MPI_UNDEFINED */
    int in[2] = {MPI_PROC_NULL, 0}, out[2] = {0, 0};
    MPI_Group_translate_ranks(world, 2, in, evens, out);
    CHECK(out[0] == MPI_PROC_NULL && out[1] == 0, "translate world to evens: %d %d", out[0],
          out[1]);
    if (n > 1) {
        MPI_Group_translate_ranks(odds, 1, &in[1], evens, out);
        CHECK(out[0] == MPI_UNDEFINED, "translate odd 0 to evens: %d", out[0]);
    }

    /* MPI_GROUP_EMPTY: size 0, no rank; a handle that holds it may be freed */
    int es = -1, er = -1;
    MPI_Group_size(MPI_GROUP_EMPTY, &es);
    MPI_Group_rank(MPI_GROUP_EMPTY, &er);
    CHECK(es == 0 && er == MPI_UNDEFINED, "MPI_GROUP_EMPTY: size %d rank %d", es, er);

    MPI_Group_free(&rev);
    MPI_Group_free(&evens);
    MPI_Group_free(&odds);
    CHECK(rev == MPI_GROUP_NULL && evens == MPI_GROUP_NULL && odds == MPI_GROUP_NULL,
          "free sets MPI_GROUP_NULL");
    free(want);
    free(list);
}

/* the group of a split communicator, and many groups made and freed */
static void of_communicators(MPI_Group world)
{
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Group hg, wg2;
    MPI_Comm_group(half, &hg);
    int *want = malloc(sizeof(int) * (size_t)size), k = 0;
    for (int i = rank % 2; i < size; i += 2)
        want[k++] = i;
    expect_group(hg, world, want, k, "group of the split half");
    free(want);
    MPI_Comm_group(MPI_COMM_WORLD, &wg2);
    CHECK(compare(wg2, world) == MPI_IDENT, "two groups of MPI_COMM_WORLD: %d",
          compare(wg2, world));
    MPI_Group_free(&wg2);
    MPI_Group_free(&hg);
    MPI_Comm_free(&half);
    /* more groups made and freed than any table has entries */
    for (int i = 0; i < 5000; i++) {
        MPI_Group g;
        int one = 0;
        if (MPI_Group_incl(world, 1, &one, &g) != MPI_SUCCESS || MPI_Group_free(&g) !=
            MPI_SUCCESS) {
            CHECK(0, "group %d made and freed", i);
            break;
        }
    }
}

static void errors(MPI_Group world)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Group g = MPI_GROUP_NULL, null = MPI_GROUP_NULL;
    int bad = size, neg = -1, twice[2] = {0, 0}, cmp;
    /* a rank out of range: MPI_ERR_RANK (MPICH and Open MPI alike) */
    expect_err(MPI_Group_incl(world, 1, &bad, &g), MPI_ERR_RANK, 1, "MPI_Group_incl",
               "rank = size");
    expect_err(MPI_Group_incl(world, 1, &neg, &g), MPI_ERR_RANK, 1, "MPI_Group_incl", "rank -1");
    expect_err(MPI_Group_excl(world, 1, &bad, &g), MPI_ERR_RANK, 1, "MPI_Group_excl",
               "rank = size");
#ifdef TERN_MPI_H /* a rank twice: erroneous; MPICH 4.0 does not see it */
    expect_err(MPI_Group_incl(world, 2, twice, &g), MPI_ERR_RANK, 1, "MPI_Group_incl",
               "a rank twice");
    expect_err(MPI_Group_excl(world, 2, twice, &g), MPI_ERR_RANK, 1, "MPI_Group_excl",
               "a rank twice");
    expect_err(MPI_Group_translate_ranks(world, 1, &bad, world, twice), MPI_ERR_RANK, 1,
               "MPI_Group_translate_ranks", "rank = size");
#endif
#ifndef OPEN_MPI /* Open MPI 4.1 hands n -1 to calloc (an ASan abort in tests/ompi) */
    expect_err(MPI_Group_incl(world, -1, twice, &g), MPI_ERR_ARG, 0, "MPI_Group_incl", "n -1");
#else
    (void)twice;
#endif
    /* bad triplets: MPICH's MPI_ERR_ARG (Open MPI: MPI_ERR_RANK) */
    int stride0[1][3] = {{0, 0, 0}}, past[1][3] = {{0, size, 1}}, start[1][3] = {{size, 0, -1}};
    int away[1][3] = {{0, size - 1, -1}}, dup[2][3] = {{0, 0, 1}, {0, 0, 1}};
    expect_err(MPI_Group_range_incl(world, 1, stride0, &g), MPI_ERR_ARG, 0,
               "MPI_Group_range_incl", "stride 0");
    expect_err(MPI_Group_range_incl(world, 1, past, &g), MPI_ERR_ARG, 0, "MPI_Group_range_incl",
               "an end past the group");
    expect_err(MPI_Group_range_excl(world, 1, start, &g), MPI_ERR_ARG, 0,
               "MPI_Group_range_excl", "a start past the group");
    if (size > 1)
        expect_err(MPI_Group_range_incl(world, 1, away, &g), MPI_ERR_ARG, 0,
                   "MPI_Group_range_incl", "a stride away from the end");
    expect_err(MPI_Group_range_incl(world, 2, dup, &g), MPI_ERR_ARG, 0, "MPI_Group_range_incl",
               "a rank twice");
    /* not a group: MPI_ERR_GROUP */
    int one = 0, sz;
    expect_err(MPI_Group_incl(MPI_GROUP_NULL, 1, &one, &g), MPI_ERR_GROUP, 1, "MPI_Group_incl",
               "MPI_GROUP_NULL");
    expect_err(MPI_Group_union(world, MPI_GROUP_NULL, &g), MPI_ERR_GROUP, 1, "MPI_Group_union",
               "MPI_GROUP_NULL");
    expect_err(MPI_Group_intersection(MPI_GROUP_NULL, world, &g), MPI_ERR_GROUP, 1,
               "MPI_Group_intersection", "MPI_GROUP_NULL");
    expect_err(MPI_Group_difference(world, MPI_GROUP_NULL, &g), MPI_ERR_GROUP, 1,
               "MPI_Group_difference", "MPI_GROUP_NULL");
    expect_err(MPI_Group_compare(world, MPI_GROUP_NULL, &cmp), MPI_ERR_GROUP, 1,
               "MPI_Group_compare", "MPI_GROUP_NULL");
    expect_err(MPI_Group_size(MPI_GROUP_NULL, &sz), MPI_ERR_GROUP, 1, "MPI_Group_size",
               "MPI_GROUP_NULL");
    expect_err(MPI_Group_free(&null), MPI_ERR_GROUP, 1, "MPI_Group_free", "MPI_GROUP_NULL");
    /* a freed group's handle is MPI_GROUP_NULL: freeing it again fails */
    MPI_Group_incl(world, 1, &one, &g);
    MPI_Group_free(&g);
    expect_err(MPI_Group_free(&g), MPI_ERR_GROUP, 1, "MPI_Group_free", "a freed group");
    /* MPI_GROUP_EMPTY in a variable may be freed (MPICH and Open MPI) */
    MPI_Group e = MPI_GROUP_EMPTY;
    CHECK(MPI_Group_free(&e) == MPI_SUCCESS && e == MPI_GROUP_NULL, "free of MPI_GROUP_EMPTY");
    int es = -1;
    MPI_Group_size(MPI_GROUP_EMPTY, &es);
    CHECK(es == 0, "MPI_GROUP_EMPTY after a free of it: size %d", es);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* ---- names ---------------------------------------------------------------- */

static void expect_comm_name(MPI_Comm c, const char *want, const char *what)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_Comm_get_name(c, name, &len);
    CHECK(strcmp(name, want) == 0 && len == (int)strlen(want), "%s: name \"%s\" (%d), expected "
          "\"%s\"", what, name, len, want);
}

static void expect_type_name(MPI_Datatype t, const char *want, const char *what)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_Type_get_name(t, name, &len);
    CHECK(strcmp(name, want) == 0 && len == (int)strlen(want), "%s: name \"%s\" (%d), expected "
          "\"%s\"", what, name, len, want);
}

static void names(void)
{
#ifdef TERN_MPI_H
    CHECK(MPI_MAX_OBJECT_NAME == 128, "MPI_MAX_OBJECT_NAME %d (MPICH's is 128)",
          MPI_MAX_OBJECT_NAME);
#endif
    expect_comm_name(MPI_COMM_WORLD, "MPI_COMM_WORLD", "MPI_COMM_WORLD");
    expect_comm_name(MPI_COMM_SELF, "MPI_COMM_SELF", "MPI_COMM_SELF");
    MPI_Comm d, d2, s;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    expect_comm_name(d, "", "a dup of MPI_COMM_WORLD");
    MPI_Comm_set_name(d, "mine");
    expect_comm_name(d, "mine", "a named dup");
    MPI_Comm_dup(d, &d2);
    expect_comm_name(d2, "", "a dup of a named communicator");
    MPI_Comm_split(d, 0, 0, &s);
    expect_comm_name(s, "", "a split of a named communicator");
    /* a long name is cut to MPI_MAX_OBJECT_NAME - 1 characters */
    char longname[3 * MPI_MAX_OBJECT_NAME], name[MPI_MAX_OBJECT_NAME];
    memset(longname, 'n', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    int len = -1;
    MPI_Comm_set_name(d2, longname);
    MPI_Comm_get_name(d2, name, &len);
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && strncmp(name, longname, (size_t)len) == 0 &&
          name[len] == '\0', "a long communicator name: %d characters", len);
    /* MPI_COMM_WORLD renamed, and back */
    MPI_Comm_set_name(MPI_COMM_WORLD, "the world");
    expect_comm_name(MPI_COMM_WORLD, "the world", "MPI_COMM_WORLD renamed");
    MPI_Comm_set_name(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    /* the name is this rank's own: another rank names its dup otherwise */
    char mine[32];
    snprintf(mine, sizeof(mine), "rank %d", rank);
    MPI_Comm_set_name(d, mine);
    MPI_Barrier(d);
    expect_comm_name(d, mine, "a name per rank");
    MPI_Comm_free(&s);
    MPI_Comm_free(&d2);
    MPI_Comm_free(&d);

    /* predefined datatypes: their MPI_ constant's name */
    static const struct {
        MPI_Datatype t;
        const char *name;
    } predef[] = {
        {MPI_CHAR, "MPI_CHAR"}, {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR"},
        {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR"}, {MPI_BYTE, "MPI_BYTE"},
        {MPI_SHORT, "MPI_SHORT"}, {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT"},
        {MPI_INT, "MPI_INT"}, {MPI_UNSIGNED, "MPI_UNSIGNED"}, {MPI_LONG, "MPI_LONG"},
        {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG"}, {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT"},
        {MPI_LONG_LONG, "MPI_LONG_LONG_INT"}, /* the same type (MPICH and Open MPI) */
        {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG"}, {MPI_FLOAT, "MPI_FLOAT"},
        {MPI_DOUBLE, "MPI_DOUBLE"}, {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE"},
        {MPI_INT8_T, "MPI_INT8_T"}, {MPI_INT16_T, "MPI_INT16_T"}, {MPI_INT32_T, "MPI_INT32_T"},
        {MPI_INT64_T, "MPI_INT64_T"}, {MPI_UINT8_T, "MPI_UINT8_T"},
        {MPI_UINT16_T, "MPI_UINT16_T"}, {MPI_UINT32_T, "MPI_UINT32_T"},
        {MPI_UINT64_T, "MPI_UINT64_T"}, {MPI_C_BOOL, "MPI_C_BOOL"}, {MPI_WCHAR, "MPI_WCHAR"},
        {MPI_AINT, "MPI_AINT"}, {MPI_OFFSET, "MPI_OFFSET"}, {MPI_COUNT, "MPI_COUNT"},
        {MPI_INTEGER, "MPI_INTEGER"}, {MPI_REAL, "MPI_REAL"},
        {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION"}, {MPI_INTEGER4, "MPI_INTEGER4"},
        {MPI_INTEGER8, "MPI_INTEGER8"}, {MPI_REAL4, "MPI_REAL4"}, {MPI_REAL8, "MPI_REAL8"},
        {MPI_LOGICAL, "MPI_LOGICAL"}, {MPI_CHARACTER, "MPI_CHARACTER"},
        {MPI_PACKED, "MPI_PACKED"}, {MPI_2INT, "MPI_2INT"}, {MPI_FLOAT_INT, "MPI_FLOAT_INT"},
        {MPI_DOUBLE_INT, "MPI_DOUBLE_INT"}, {MPI_LONG_INT, "MPI_LONG_INT"},
        {MPI_SHORT_INT, "MPI_SHORT_INT"}, {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT"},
    };
    for (size_t i = 0; i < sizeof(predef) / sizeof(predef[0]); i++)
        expect_type_name(predef[i].t, predef[i].name, predef[i].name);
    /* a predefined type renamed, and back */
    MPI_Type_set_name(MPI_INT, "an int");
    expect_type_name(MPI_INT, "an int", "MPI_INT renamed");
    MPI_Type_set_name(MPI_INT, "MPI_INT");
    /* derived: no name, then the one set; a long one is cut */
    MPI_Datatype v, vd;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    expect_type_name(v, "", "a new vector type");
    MPI_Type_set_name(v, "vector of 2");
    expect_type_name(v, "vector of 2", "a named vector type");
    MPI_Type_dup(v, &vd);
#ifdef TERN_MPI_H /* as MPICH; Open MPI names it "Dup " + the name */
    expect_type_name(vd, "", "a dup of a named type");
#endif
    MPI_Type_set_name(vd, longname);
    MPI_Type_get_name(vd, name, &len);
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && strncmp(name, longname, (size_t)len) == 0,
          "a long type name: %d characters", len);
    expect_type_name(v, "vector of 2", "the type a named dup came from");
    MPI_Type_free(&vd);
    MPI_Type_free(&v);

    /* errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    expect_err(MPI_Comm_set_name(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, 1, "MPI_Comm_set_name",
               "a NULL name");
    expect_err(MPI_Comm_get_name(MPI_COMM_WORLD, NULL, &len), MPI_ERR_ARG, 1,
               "MPI_Comm_get_name", "a NULL buffer");
    expect_err(MPI_Comm_get_name(MPI_COMM_WORLD, name, NULL), MPI_ERR_ARG, 1,
               "MPI_Comm_get_name", "a NULL length");
    expect_err(MPI_Comm_set_name(MPI_COMM_NULL, "x"), MPI_ERR_COMM, 1, "MPI_Comm_set_name",
               "MPI_COMM_NULL");
    expect_err(MPI_Comm_get_name(MPI_COMM_NULL, name, &len), MPI_ERR_COMM, 1,
               "MPI_Comm_get_name", "MPI_COMM_NULL");
    expect_err(MPI_Type_set_name(MPI_INT, NULL), MPI_ERR_ARG, 1, "MPI_Type_set_name",
               "a NULL name");
    expect_err(MPI_Type_get_name(MPI_INT, NULL, &len), MPI_ERR_ARG, 1, "MPI_Type_get_name",
               "a NULL buffer");
    expect_err(MPI_Type_set_name(MPI_DATATYPE_NULL, "x"), MPI_ERR_TYPE, 1, "MPI_Type_set_name",
               "MPI_DATATYPE_NULL");
    expect_err(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len), MPI_ERR_TYPE, 1,
               "MPI_Type_get_name", "MPI_DATATYPE_NULL");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    constructors(world);
    of_communicators(world);
    errors(world);
    names();
    MPI_Group_free(&world);
    MPI_Barrier(MPI_COMM_WORLD);
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
