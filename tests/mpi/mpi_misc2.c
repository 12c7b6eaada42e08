/*
 * What MPI-3.1 has beyond communication that the other programs leave
 * out:
 * - the complex and Fortran types (MPI_C_*_COMPLEX, MPI_CXX_*, MPI_COMPLEXn,
 *   MPI_INTEGER1/2, MPI_REAL16, MPI_2INTEGER ...): sizes against C's, names,
 *   envelopes, struct padding, a ring of complex numbers, basic elements,
 *   MPI_SUM / MPI_PROD of every complex type by allreduce, MPI_MAXLOC on
 *   Fortran's pairs, MPI_Type_match_size, external32;
 * - MPI_Type_create_f90_integer / _real / _complex: the type of each
 *   (p, r), its envelope and contents, one handle per (p, r), a reduction
 *   and a message of one, the errors;
 * - communicator hints: MPI_Comm_dup_with_info, MPI_Comm_set_info,
 *   MPI_Comm_get_info (a new object each time), carried over by dup and
 *   idup (MPI-3.1 6.4.2; MPICH 4.0 does not), not by split; the errors;
 * - MPI_Comm_idup copies the attributes when it is called: values changed
 *   or deleted afterwards, before the wait, do not reach the duplicate.
 * Plain MPI: the tern-only checks (what MPICH 4.0 does otherwise) are under
 * TERN_MPI_H.  Prints "ok rank R" or "FAIL ..." lines.
 */
#include <complex.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tests/mpi/mpi_check.h"

/* ---- complex and Fortran types ---------------------------------------------- */

static void check_name(MPI_Datatype dt, const char *want)
{
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = -1, ni = -1, na = -1, nd = -1, comb = -1;
    MPI_Type_get_name(dt, name, &len);
    CHECK(strcmp(name, want) == 0 && len == (int)strlen(want), "name of %s: '%s' (%d)", want, name,
          len);
    MPI_Type_get_envelope(dt, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0,
          "%s's envelope: combiner %d, %d %d %d", want, comb, ni, na, nd);
}

static void check_size(MPI_Datatype dt, int want, const char *what)
{
    int s = -1;
    MPI_Aint lb = -1, ext = -1;
    MPI_Type_size(dt, &s);
    MPI_Type_get_extent(dt, &lb, &ext);
    CHECK(s == want && lb == 0 && ext == want, "%s: size %d, extent %ld (want %d)", what, s,
          (long)ext, want);
}

#define TYPE(dt, ctype)                                                                            \
    {                                                                                              \
        dt, #dt, (int)sizeof(ctype)                                                                \
    }
static void types_basic(void)
{
    const struct {
        MPI_Datatype dt;
        const char *name;
        int size;
    } t[] = {
        TYPE(MPI_C_FLOAT_COMPLEX, float _Complex),
        TYPE(MPI_C_DOUBLE_COMPLEX, double _Complex),
        TYPE(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex),
        TYPE(MPI_CXX_BOOL, char),
        TYPE(MPI_CXX_FLOAT_COMPLEX, float _Complex),
        TYPE(MPI_CXX_DOUBLE_COMPLEX, double _Complex),
        TYPE(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex),
        TYPE(MPI_COMPLEX, float _Complex),
        TYPE(MPI_DOUBLE_COMPLEX, double _Complex),
        TYPE(MPI_COMPLEX8, float _Complex),
        TYPE(MPI_COMPLEX16, double _Complex),
        TYPE(MPI_COMPLEX32, _Float128 _Complex),
        TYPE(MPI_INTEGER1, int8_t),
        TYPE(MPI_INTEGER2, int16_t),
        TYPE(MPI_REAL16, _Float128),
        TYPE(MPI_2INTEGER, int[2]),
        TYPE(MPI_2REAL, float[2]),
        TYPE(MPI_2DOUBLE_PRECISION, double[2]),
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        check_size(t[i].dt, t[i].size, t[i].name);
        /* MPI_C_FLOAT_COMPLEX is MPI_C_COMPLEX's handle, named so (as MPICH) */
        check_name(t[i].dt, t[i].dt == MPI_C_FLOAT_COMPLEX ? "MPI_C_COMPLEX" : t[i].name);
    }
    CHECK(MPI_C_COMPLEX == MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX is MPI_C_FLOAT_COMPLEX");

    /* a struct's padding follows the parts' alignment, as C's */
    struct ldc {
        long double _Complex z;
        char c;
    };
    struct pdp {
        double v[2];
        char c;
    };
    int lens[2] = {1, 1};
    MPI_Aint d1[2] = {offsetof(struct ldc, z), offsetof(struct ldc, c)};
    MPI_Aint d2[2] = {offsetof(struct pdp, v), offsetof(struct pdp, c)};
    MPI_Datatype ty1[2] = {MPI_C_LONG_DOUBLE_COMPLEX, MPI_CHAR};
    MPI_Datatype ty2[2] = {MPI_2DOUBLE_PRECISION, MPI_CHAR}, s1, s2;
    MPI_Type_create_struct(2, lens, d1, ty1, &s1);
    MPI_Type_create_struct(2, lens, d2, ty2, &s2);
    MPI_Aint lb, e1 = -1, e2 = -1;
    MPI_Type_get_extent(s1, &lb, &e1);
    MPI_Type_get_extent(s2, &lb, &e2);
    CHECK(e1 == (MPI_Aint)sizeof(struct ldc) && e2 == (MPI_Aint)sizeof(struct pdp),
          "struct extents %ld %ld, C's %zu %zu", (long)e1, (long)e2, sizeof(struct ldc),
          sizeof(struct pdp));
    MPI_Type_free(&s1);
    MPI_Type_free(&s2);

    /* a ring of complex numbers and of pairs; their basic elements */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double _Complex z[3], zin[3];
    int pairs[4] = {rank, 10, rank + 1, 11}, pin[4];
    for (int i = 0; i < 3; i++)
        z[i] = rank + i + (rank - i) * I;
    MPI_Status st;
    MPI_Sendrecv(z, 3, MPI_C_DOUBLE_COMPLEX, next, 5, zin, 3, MPI_C_DOUBLE_COMPLEX, prev, 5,
                 MPI_COMM_WORLD, &st);
    int n = -1, ok = 1;
    MPI_Get_elements(&st, MPI_C_DOUBLE_COMPLEX, &n);
    for (int i = 0; i < 3; i++)
        ok &= zin[i] == prev + i + (prev - i) * I;
    CHECK(ok && n == 3, "complex ring: elements %d, data %s", n, ok ? "ok" : "wrong");
    MPI_Sendrecv(pairs, 2, MPI_2INTEGER, next, 6, pin, 2, MPI_2INTEGER, prev, 6, MPI_COMM_WORLD,
                 &st);
    MPI_Get_elements(&st, MPI_2INTEGER, &n);
    MPI_Get_count(&st, MPI_2INTEGER, &ok);
    CHECK(pin[0] == prev && pin[3] == 11 && n == 4 && ok == 2,
          "MPI_2INTEGER ring: %d %d, %d elements, count %d", pin[0], pin[3], n, ok);

    MPI_Datatype m[4] = {0, 0, 0, 0};
    MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &m[0]);
    MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 1, &m[1]);
    MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &m[2]);
    MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 32, &m[3]);
    CHECK(m[0] == MPI_REAL4 && m[1] == MPI_INTEGER1 && m[2] == MPI_COMPLEX16 &&
              m[3] == MPI_COMPLEX32,
          "type_match_size: %#x %#x %#x %#x", (unsigned)m[0], (unsigned)m[1], (unsigned)m[2],
          (unsigned)m[3]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int e = MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 4, &m[0]), cls = -1;
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_ARG, "no complex of 4 bytes: class %d", cls);

    /* external32: a complex number is its two reals, each big-endian */
    double _Complex one = 1.0 + 2.0 * I;
    unsigned char buf[64];
    const unsigned char want[16] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0};
    MPI_Aint pos = 0, esz = -1;
    MPI_Pack_external("external32", &one, 1, MPI_C_DOUBLE_COMPLEX, buf, sizeof(buf), &pos);
    MPI_Pack_external_size("external32", 1, MPI_C_DOUBLE_COMPLEX, &esz);
    CHECK(pos == 16 && esz == 16 && memcmp(buf, want, 16) == 0, "external32 of 1+2i: %ld bytes",
          (long)pos);
#ifdef TERN_MPI_H /* MPICH 4.0 fails an assertion packing a Fortran pair */
    int pr[2] = {1, 2};
    const unsigned char wantp[8] = {0, 0, 0, 1, 0, 0, 0, 2};
    pos = 0;
    MPI_Pack_external("external32", pr, 1, MPI_2INTEGER, buf, sizeof(buf), &pos);
    CHECK(pos == 8 && memcmp(buf, wantp, 8) == 0, "external32 of MPI_2INTEGER");
    /* long double's x87 format is no binary128 (MPICH sends it anyway) */
    e = MPI_Pack_external_size("external32", 1, MPI_C_LONG_DOUBLE_COMPLEX, &esz);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_TYPE, "external32 of a long double complex: class %d", cls);
#endif
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* rank r's complex operand: small integers, so that sums and products are
 * exact in any order */
#define ZVAL(r) ((r) % 2 ? 1.0 + 1.0 * I : 2.0 - 1.0 * I)

#define COMPLEX_CASE(ctype, dt)                                                                    \
    {                                                                                              \
        ctype a[2] = {ZVAL(rank), rank + 1 + 2.0 * rank * I}, s[2] = {0, 0}, p[2] = {0, 0};        \
        ctype ws = 0, wp = 1;                                                                      \
        for (int r = 0; r < size; r++)                                                             \
            ws += r + 1 + 2.0 * r * I, wp *= ZVAL(r);                                              \
        int e1 = MPI_Allreduce(a, s, 2, dt, MPI_SUM, MPI_COMM_WORLD);                              \
        int e2 = MPI_Allreduce(a, p, 1, dt, MPI_PROD, MPI_COMM_WORLD);                             \
        CHECK(e1 == MPI_SUCCESS && e2 == MPI_SUCCESS && s[1] == ws && p[0] == wp,                  \
              "%s: sum %g%+gi (want %g%+gi), product %g%+gi (want %g%+gi)", #dt,                   \
              (double)creal(s[1]), (double)cimag(s[1]), (double)creal(ws), (double)cimag(ws),      \
              (double)creal(p[0]), (double)cimag(p[0]), (double)creal(wp), (double)cimag(wp));     \
    }

static void types_reduce(void)
{
    COMPLEX_CASE(float _Complex, MPI_C_FLOAT_COMPLEX)
    COMPLEX_CASE(double _Complex, MPI_C_DOUBLE_COMPLEX)
    COMPLEX_CASE(long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX)
    COMPLEX_CASE(float _Complex, MPI_CXX_FLOAT_COMPLEX)
    COMPLEX_CASE(double _Complex, MPI_CXX_DOUBLE_COMPLEX)
    COMPLEX_CASE(long double _Complex, MPI_CXX_LONG_DOUBLE_COMPLEX)
    COMPLEX_CASE(float _Complex, MPI_COMPLEX)
    COMPLEX_CASE(double _Complex, MPI_DOUBLE_COMPLEX)
    COMPLEX_CASE(double _Complex, MPI_COMPLEX16)
#ifdef TERN_MPI_H /* MPICH 4.0 (Debian) has no binary128 reductions */
    COMPLEX_CASE(_Float128 _Complex, MPI_COMPLEX32)
    _Float128 q = rank + 0.5, qs = 0, want = 0;
    for (int r = 0; r < size; r++)
        want += r + 0.5;
    MPI_Allreduce(&q, &qs, 1, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD);
    CHECK(qs == want, "MPI_REAL16 sum: %g (want %g)", (double)qs, (double)want);
#endif
    /* no order on complex numbers */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    double _Complex z = 1, out;
    int e = MPI_Allreduce(&z, &out, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_MAX of complex numbers: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* MAXLOC / MINLOC on Fortran's pairs: value rank % 3, index rank; the
     * lowest index wins a tie */
    int best = size > 2 ? 2 : size - 1, least = 0;
    int32_t pi[2] = {rank % 3, rank}, po[2] = {-1, -1}, pm[2] = {-1, -1};
    float pf[2] = {(float)(rank % 3), (float)rank}, pfo[2] = {-1, -1};
    double pd[2] = {rank % 3, rank}, pdo[2] = {-1, -1};
    MPI_Allreduce(pi, po, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD);
    MPI_Allreduce(pi, pm, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD);
    MPI_Allreduce(pf, pfo, 1, MPI_2REAL, MPI_MAXLOC, MPI_COMM_WORLD);
    MPI_Allreduce(pd, pdo, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD);
    CHECK(po[0] == best && po[1] == best && pm[0] == 0 && pm[1] == least && pfo[0] == best &&
              pfo[1] == best && pdo[0] == best && pdo[1] == best,
          "Fortran pairs: maxloc %d@%d minloc %d@%d, 2REAL %g@%g, 2DOUBLE %g@%g", po[0], po[1],
          pm[0], pm[1], pfo[0], pfo[1], pdo[0], pdo[1]);
}

/* ---- MPI_Type_create_f90_* ---------------------------------------------------- */

static void check_f90(MPI_Datatype t, int combiner, int ni, const int *ints, int size_want,
                      const char *what)
{
    int n[3] = {-1, -1, -1}, comb = -1, got[2] = {-2, -2}, s = -1;
    MPI_Type_get_envelope(t, &n[0], &n[1], &n[2], &comb);
    CHECK(comb == combiner && n[0] == ni && n[1] == 0 && n[2] == 0,
          "%s: combiner %d (want %d), %d %d %d", what, comb, combiner, n[0], n[1], n[2]);
    MPI_Type_get_contents(t, 2, 0, 0, got, NULL, NULL);
    CHECK(got[0] == ints[0] && (ni < 2 || got[1] == ints[1]), "%s: contents %d %d", what, got[0],
          got[1]);
    MPI_Type_size(t, &s);
    CHECK(s == size_want, "%s: size %d (want %d)", what, s, size_want);
}

static void f90_types(void)
{
    MPI_Datatype r6, r6b, r15, c15, i9, i2;
    MPI_Type_create_f90_real(6, MPI_UNDEFINED, &r6);
    MPI_Type_create_f90_real(6, MPI_UNDEFINED, &r6b);
    MPI_Type_create_f90_real(15, 300, &r15);
    MPI_Type_create_f90_complex(15, MPI_UNDEFINED, &c15);
    MPI_Type_create_f90_integer(9, &i9);
    MPI_Type_create_f90_integer(2, &i2);
    check_f90(r6, MPI_COMBINER_F90_REAL, 2, (int[]){6, MPI_UNDEFINED}, 4, "f90_real(6)");
    check_f90(r15, MPI_COMBINER_F90_REAL, 2, (int[]){15, 300}, 8, "f90_real(15, 300)");
    check_f90(c15, MPI_COMBINER_F90_COMPLEX, 2, (int[]){15, MPI_UNDEFINED}, 16, "f90_complex(15)");
    check_f90(i9, MPI_COMBINER_F90_INTEGER, 1, (int[]){9}, 4, "f90_integer(9)");
    check_f90(i2, MPI_COMBINER_F90_INTEGER, 1, (int[]){2}, 1, "f90_integer(2)");
    CHECK(r6 == r6b && r6 != r15, "one handle per (p, r)");

    /* they carry data and take the predefined operations */
    double d = rank + 1, ds = 0;
    double _Complex z = rank + 1.0 * I, zs = 0;
    MPI_Allreduce(&d, &ds, 1, r15, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&z, &zs, 1, c15, MPI_SUM, MPI_COMM_WORLD);
    CHECK(ds == size * (size + 1) / 2.0 && zs == size * (size - 1) / 2.0 + size * I,
          "f90 reductions: %g, %g%+gi", ds, creal(zs), cimag(zs));
    int32_t v[2] = {rank, -rank}, vin[2] = {0, 0};
    MPI_Sendrecv(v, 2, i9, (rank + 1) % size, 7, vin, 2, i9, (rank + size - 1) % size, 7,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(vin[0] == (rank + size - 1) % size && vin[1] == -vin[0], "f90 integer ring");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t;
    int cls[3] = {-1, -1, -1};
    MPI_Error_class(MPI_Type_create_f90_real(40, MPI_UNDEFINED, &t), &cls[0]);
    MPI_Error_class(MPI_Type_create_f90_integer(19, &t), &cls[1]);
    MPI_Error_class(MPI_Type_create_f90_complex(MPI_UNDEFINED, 5000, &t), &cls[2]);
    CHECK(cls[0] != MPI_SUCCESS && cls[1] != MPI_SUCCESS && cls[2] != MPI_SUCCESS,
          "no such kinds: classes %d %d %d", cls[0], cls[1], cls[2]);
#ifdef TERN_MPI_H
    /* MPICH returns other classes, has no binary128 REAL(16) kind, makes a
     * type of no demand at all, and frees these (then fails on reuse) */
    CHECK(cls[0] == MPI_ERR_ARG && cls[1] == MPI_ERR_ARG && cls[2] == MPI_ERR_ARG,
          "no such kinds: MPI_ERR_ARG");
    MPI_Datatype r33;
    MPI_Type_create_f90_real(MPI_UNDEFINED, 4931, &r33);
    check_f90(r33, MPI_COMBINER_F90_REAL, 2, (int[]){MPI_UNDEFINED, 4931}, 16, "f90_real(-, 4931)");
    int c = -1;
    MPI_Error_class(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t), &c);
    CHECK(c == MPI_ERR_ARG, "f90_real of neither p nor r: class %d", c);
    MPI_Error_class(MPI_Type_free(&r6), &c);
    CHECK(c == MPI_ERR_TYPE && r6 == r6b, "MPI_Type_free of an f90 type: class %d", c);
    MPI_Datatype dup;
    MPI_Type_dup(r15, &dup);
    MPI_Type_free(&dup);
    check_f90(r15, MPI_COMBINER_F90_REAL, 2, (int[]){15, 300}, 8, "f90_real after a dup");
#endif
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* ---- communicator hints ------------------------------------------------------- */

/* value of key in comm's hints ("" when it has none), and their number */
static int hint(MPI_Comm comm, const char *key, char *val, int len)
{
    MPI_Info info = MPI_INFO_NULL;
    int flag = 0, n = -1;
    val[0] = '\0';
    MPI_Comm_get_info(comm, &info);
    MPI_Info_get(info, key, len - 1, val, &flag);
    if (!flag)
        val[0] = '\0';
    MPI_Info_get_nkeys(info, &n);
    /* a new object each time: changing it changes nothing */
    MPI_Info_set(info, key, "changed");
    MPI_Info_free(&info);
    return n;
}

static void comm_hints(void)
{
    /* mpi_assert_no_any_tag is a hint MPICH knows (it keeps only those);
     * tern keeps every key */
    MPI_Info info, more;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Info_set(info, "tern_test_key", "forty-two");
    MPI_Comm c, d, s, id;
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c);
    MPI_Info_free(&info); /* the communicator keeps its own copy */
    char v[64], w[64];
    int n = hint(c, "mpi_assert_no_any_tag", v, sizeof(v));
    CHECK(strcmp(v, "true") == 0, "dup_with_info: mpi_assert_no_any_tag '%s'", v);
    hint(c, "mpi_assert_no_any_tag", v, sizeof(v));
    CHECK(strcmp(v, "true") == 0, "the hints after changing what get_info gave: '%s'", v);
    MPI_Info_create(&more);
    MPI_Info_set(more, "mpi_assert_no_any_source", "true");
    MPI_Comm_set_info(c, more);
    MPI_Info_free(&more);
    hint(c, "mpi_assert_no_any_source", w, sizeof(w));
    hint(c, "mpi_assert_no_any_tag", v, sizeof(v));
    CHECK(strcmp(v, "true") == 0 && strcmp(w, "true") == 0, "set_info: '%s' '%s'", v, w);
    MPI_Comm_dup(c, &d);
    MPI_Request req;
    MPI_Comm_idup(c, &id, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
#ifdef TERN_MPI_H
    /* MPI-3.1 6.4.2: a dup (and so an idup) duplicates the hints, which
     * MPICH 4.0 does not do; tern keeps every key, and a split starts
     * without hints */
    hint(d, "mpi_assert_no_any_source", w, sizeof(w));
    CHECK(strcmp(w, "true") == 0, "a dup's hints: '%s'", w);
    hint(id, "mpi_assert_no_any_tag", v, sizeof(v));
    CHECK(strcmp(v, "true") == 0, "an idup's hints: '%s'", v);
    n = hint(c, "tern_test_key", v, sizeof(v));
    CHECK(n == 3 && strcmp(v, "forty-two") == 0, "tern keeps every hint: %d, '%s'", n, v);
    n = hint(d, "tern_test_key", v, sizeof(v));
    CHECK(n == 3 && strcmp(v, "forty-two") == 0, "a dup's hints: %d, '%s'", n, v);
    MPI_Comm_split(c, 0, rank, &s);
    n = hint(s, "tern_test_key", v, sizeof(v));
    CHECK(n == 0, "a split's hints: %d", n);
    MPI_Comm_free(&s);
    n = hint(MPI_COMM_WORLD, "tern_test_key", v, sizeof(v));
    CHECK(n == 0, "MPI_COMM_WORLD's hints: %d", n);
    /* MPI_INFO_NULL sets nothing */
    MPI_Comm_set_info(c, MPI_INFO_NULL);
    n = hint(c, "tern_test_key", v, sizeof(v));
    CHECK(n == 3, "set_info(MPI_INFO_NULL): %d hints", n);
#else
    (void)n, (void)s;
#endif
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls[3] = {-1, -1, -1};
    MPI_Error_class(MPI_Comm_set_info(c, (MPI_Info)0x1c001234), &cls[0]);
    MPI_Error_class(MPI_Comm_get_info(c, NULL), &cls[1]);
    MPI_Error_class(MPI_Comm_get_info(MPI_COMM_NULL, &info), &cls[2]);
    CHECK(cls[0] != MPI_SUCCESS && cls[1] != MPI_SUCCESS && cls[2] == MPI_ERR_COMM,
          "hints' errors: %d %d %d", cls[0], cls[1], cls[2]);
#ifdef TERN_MPI_H
    CHECK(cls[0] == MPI_ERR_INFO && cls[1] == MPI_ERR_ARG, "hints' error classes");
#endif
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_free(&id);
    MPI_Comm_free(&d);
    MPI_Comm_free(&c);
}

/* ---- MPI_Comm_idup copies the attributes at the call ----------------------------- */

static int copies, deletes;
static int count_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval, (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}
static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static void idup_attrs(void)
{
    static int a, b, x;
    int k1, k2, k3;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k1, NULL);
    MPI_Comm_create_keyval(count_copy, count_delete, &k2, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k3, NULL);
    MPI_Comm base, nc;
    MPI_Comm_dup(MPI_COMM_WORLD, &base);
    MPI_Comm_set_attr(base, k1, &a);
    MPI_Comm_set_attr(base, k2, &x);
    MPI_Comm_set_attr(base, k3, &x);
    copies = deletes = 0;
    MPI_Request req;
    MPI_Comm_idup(base, &nc, &req);
    int copied_at_call = copies;
    /* after the call: none of this may reach the duplicate */
    MPI_Comm_set_attr(base, k1, &b);
    MPI_Comm_delete_attr(base, k2);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    void *v1 = NULL, *v2 = NULL, *v3 = NULL;
    int f1 = 0, f2 = 0, f3 = 1;
    MPI_Comm_get_attr(nc, k1, &v1, &f1);
    MPI_Comm_get_attr(nc, k2, &v2, &f2);
    MPI_Comm_get_attr(nc, k3, &v3, &f3);
    CHECK(f1 && v1 == &a, "idup: MPI_COMM_DUP_FN's attribute %s the value at the call",
          !f1        ? "missing, not"
          : v1 == &b ? "has the value set after the call, not"
                     : "is not");
    CHECK(f2 && v2 == &x && copied_at_call == 1,
          "idup: the copy callback ran %d times in the call (want 1), attribute %s", copied_at_call,
          f2 ? "copied" : "missing");
    CHECK(!f3, "idup: MPI_COMM_NULL_COPY_FN's attribute was copied");
    int before = deletes;
    MPI_Comm_free(&nc);
    CHECK(deletes == before + 1, "freeing the idup ran %d delete callbacks (want 1)",
          deletes - before);
    MPI_Comm_free(&base);
    MPI_Comm_free_keyval(&k1);
    MPI_Comm_free_keyval(&k2);
    MPI_Comm_free_keyval(&k3);
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    types_basic();
    types_reduce();
    f90_types();
    comm_hints();
    idup_attrs();
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (failures == 0)
        printf("ok rank %d of %d%s\n", rank, size, all ? " (others failed)" : "");
    MPI_Finalize();
    return failures != 0;
}
