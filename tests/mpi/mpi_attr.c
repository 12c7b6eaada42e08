/*
 * Attributes: the predefined ones (MPI_TAG_UB, MPI_UNIVERSE_SIZE, ...),
 * keyvals with copy and delete callbacks on communicators (MPI_Comm_dup
 * copies as the callback says, MPI_Comm_free and MPI_Comm_delete_attr and
 * a second set delete, a failing delete callback's error comes back), the
 * predefined callbacks, a keyval freed while in use, datatype attributes
 * (MPI_Type_dup, MPI_Type_free), the MPI-1 forms, and MPI_COMM_SELF's
 * attributes deleted at MPI_Finalize: this rank's "ok" line is printed by
 * that delete callback, so a finalize that skips it fails the run.
 */
#include <mpi.h>
#include <stdint.h>

#include "tests/mpi/mpi_check.h"

static int copies, deletes, last_deleted;

static int copy_plus_one(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval;
    copies++;
    CHECK(extra == (void *)&copies, "copy callback: extra state %p", extra);
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    deletes++;
    last_deleted = (int)(intptr_t)value;
    return MPI_SUCCESS;
}

static int refusals;
static int refuse_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    return refusals++ == 0 ? MPI_ERR_OTHER : MPI_SUCCESS; /* once */
}

static int type_copies, type_deletes;
static int type_copy(MPI_Datatype t, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)t, (void)keyval, (void)extra;
    type_copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}
static int type_delete(MPI_Datatype t, int keyval, void *value, void *extra)
{
    (void)t, (void)keyval, (void)value, (void)extra;
    type_deletes++;
    return MPI_SUCCESS;
}

static int at_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    fflush(stdout);
    return MPI_SUCCESS;
}

static void *get(MPI_Comm c, int keyval, int *flag)
{
    void *v = NULL;
    *flag = -1;
    CHECK(MPI_Comm_get_attr(c, keyval, &v, flag) == MPI_SUCCESS, "get_attr %d", keyval);
    return v;
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int flag;

    /* predefined */
    int *ub = get(MPI_COMM_WORLD, MPI_TAG_UB, &flag);
    CHECK(flag && ub != NULL && *ub >= 32767, "MPI_TAG_UB");
    int *us = get(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &flag);
    CHECK(!flag || (us != NULL && *us >= size), "MPI_UNIVERSE_SIZE");
    int *wg = get(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &flag);
    CHECK(!flag || (wg != NULL && (*wg == 0 || *wg == 1)), "MPI_WTIME_IS_GLOBAL");

    /* a keyval with callbacks */
    int kv = MPI_KEYVAL_INVALID;
    CHECK(MPI_Comm_create_keyval(copy_plus_one, count_delete, &kv, &copies) == MPI_SUCCESS,
          "create_keyval");
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    get(a, kv, &flag);
    CHECK(flag == 0, "an attribute never set");
    CHECK(MPI_Comm_set_attr(a, kv, (void *)(intptr_t)10) == MPI_SUCCESS, "set_attr");
    CHECK((intptr_t)get(a, kv, &flag) == 10 && flag, "get after set");
    MPI_Comm_dup(a, &b);
    CHECK(copies == 1 && (intptr_t)get(b, kv, &flag) == 11 && flag, "dup copied: %d copies",
          copies);
    CHECK((intptr_t)get(a, kv, &flag) == 10, "the original unchanged");
    CHECK(MPI_Comm_set_attr(a, kv, (void *)(intptr_t)20) == MPI_SUCCESS, "set again");
    CHECK(deletes == 1 && last_deleted == 10, "set again deleted the old value: %d, %d",
          deletes, last_deleted);
    CHECK(MPI_Comm_delete_attr(a, kv) == MPI_SUCCESS && deletes == 2 && last_deleted == 20,
          "delete_attr");
    get(a, kv, &flag);
    CHECK(flag == 0, "deleted");
    /* freed keyval: the attribute on b stays, its delete still runs */
    CHECK(MPI_Comm_free_keyval(&kv) == MPI_SUCCESS && kv == MPI_KEYVAL_INVALID, "free_keyval");
    MPI_Comm_free(&b);
    CHECK(deletes == 3 && last_deleted == 11, "comm_free deleted b's: %d, %d", deletes,
          last_deleted);
    MPI_Comm_free(&a);

    /* the predefined callbacks */
    int knull = MPI_KEYVAL_INVALID, kdup = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &knull, NULL);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kdup, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, knull, (void *)(intptr_t)7);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kdup, (void *)(intptr_t)8);
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    get(a, knull, &flag);
    CHECK(flag == 0, "MPI_COMM_NULL_COPY_FN copied");
    CHECK((intptr_t)get(a, kdup, &flag) == 8 && flag, "MPI_COMM_DUP_FN did not copy");
    MPI_Comm_free(&a);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, knull);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, kdup);
    MPI_Comm_free_keyval(&knull);
    MPI_Comm_free_keyval(&kdup);

    /* a delete callback that fails: its error comes back, the attribute stays */
    int kr = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, refuse_delete, &kr, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kr, (void *)(intptr_t)3);
    int e = MPI_Comm_delete_attr(MPI_COMM_WORLD, kr), cls = -1;
    MPI_Error_class(e, &cls);
    CHECK(e != MPI_SUCCESS && cls == MPI_ERR_OTHER, "a failing delete callback: %d", e);
    CHECK((intptr_t)get(MPI_COMM_WORLD, kr, &flag) == 3 && flag, "the attribute stayed");
    CHECK(MPI_Comm_delete_attr(MPI_COMM_WORLD, kr) == MPI_SUCCESS, "deleted the second time");

    /* datatypes */
    int tk = MPI_KEYVAL_INVALID;
    MPI_Type_create_keyval(type_copy, type_delete, &tk, NULL);
    MPI_Datatype t, t2;
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_set_attr(t, tk, (void *)(intptr_t)5);
    MPI_Type_dup(t, &t2);
    void *tv = NULL;
    flag = 0;
    MPI_Type_get_attr(t2, tk, &tv, &flag);
    CHECK(flag && (intptr_t)tv == 5 && type_copies == 1, "type attribute copied by Type_dup");
    MPI_Type_free(&t2);
    MPI_Type_free(&t);
    CHECK(type_deletes == 2, "Type_free deleted %d type attributes, want 2", type_deletes);
    MPI_Type_free_keyval(&tk);

    /* MPI-1 */
    int k1 = MPI_KEYVAL_INVALID;
    CHECK(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k1, NULL) == MPI_SUCCESS,
          "Keyval_create");
    MPI_Attr_put(MPI_COMM_WORLD, k1, (void *)(intptr_t)42);
    void *v1 = NULL;
    flag = 0;
    MPI_Attr_get(MPI_COMM_WORLD, k1, &v1, &flag);
    CHECK(flag && (intptr_t)v1 == 42, "Attr_get");
    CHECK(MPI_Attr_delete(MPI_COMM_WORLD, k1) == MPI_SUCCESS, "Attr_delete");
    MPI_Keyval_free(&k1);

    /* misuse */
    int bogus = 12345;
    e = MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL);
    MPI_Error_class(e, &cls);
    CHECK(e != MPI_SUCCESS && cls == MPI_ERR_KEYVAL, "set of MPI_TAG_UB: class %d", cls);
    e = MPI_Comm_free_keyval(&bogus);
    MPI_Error_class(e, &cls);
    CHECK(e != MPI_SUCCESS && cls == MPI_ERR_KEYVAL, "free of a bogus keyval: class %d", cls);

    /* MPI_COMM_SELF's attributes go at MPI_Finalize: the "ok" line with them */
    int kf = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &kf, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, kf, NULL);
    MPI_Comm_free_keyval(&kr);
    MPI_Barrier(MPI_COMM_WORLD);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
