/*
 * Attributes: keyvals and the values cached on communicators and
 * datatypes (MPI-3.1 chapter 6.7), the MPI-1 forms (MPI_Keyval_create,
 * MPI_Attr_*), and the predefined attributes of every communicator
 * (MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_UNIVERSE_SIZE,
 * MPI_APPNUM, MPI_LASTUSEDCODE).
 *
 * A keyval is an entry of a table that only grows (its handle a made one,
 * mpi/handle.h, whose index is the entry's): its kind (communicator or datatype), its copy
 * and delete functions, its extra state, and whether the user freed it.
 * A freed keyval stays usable by the attributes already set with it (MPI
 * says so: their copy and delete callbacks still run) and is refused for
 * new ones.
 *
 * The values are records in one list, in the order they were set: (kind,
 * object handle, keyval, value).  A process sets a handful of attributes,
 * so a lookup walks the list; deletion runs the delete callbacks newest
 * first (MPI-3.1: in the reverse order of setting).  The list changes under
 * the layer's table lock; the user's callbacks run without it (they may
 * call MPI).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"
#include "mpi/win.h"

#define MAX_KEYVALS 4096

enum attr_kind { KIND_COMM, KIND_TYPE, KIND_WIN };

/* raise to the object's handler: a communicator's or a window's (a
 * datatype has none: MPI_COMM_WORLD's) */
#define RAISE(kind, obj, ...)                                                                    \
    ((kind) == KIND_WIN ? mpi_raise_win((obj), __VA_ARGS__)                                      \
                        : mpi_raise((kind) == KIND_COMM ? (obj) : MPI_COMM_WORLD, __VA_ARGS__))
#define RAISE_CODE(kind, obj, ...)                                                               \
    ((kind) == KIND_WIN                                                                          \
         ? mpi_raise_win_code((obj), __VA_ARGS__)                                                \
         : mpi_raise_code((kind) == KIND_COMM ? (obj) : MPI_COMM_WORLD, __VA_ARGS__))

typedef struct keyval {
    enum attr_kind kind;
    bool freed;
    union {
        MPI_Comm_copy_attr_function *comm;
        MPI_Type_copy_attr_function *type;
        MPI_Win_copy_attr_function *win;
    } copy;
    union {
        MPI_Comm_delete_attr_function *comm;
        MPI_Type_delete_attr_function *type;
        MPI_Win_delete_attr_function *win;
    } del;
    void *extra;
} keyval_t;

typedef struct attr {
    struct attr *next;
    enum attr_kind kind;
    int obj; /* the communicator or datatype handle */
    int keyval;
    void *value;
} attr_t;

static keyval_t *keyvals[MAX_KEYVALS];
static int nkeyvals;
static attr_t *attrs; /* newest first */

/* the value MPI_DUP_FN copies: the attribute itself */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag)
{
    (void)oldcomm, (void)keyval, (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* ---- keyvals ---------------------------------------------------------------- */

static keyval_t *keyval_of(int k, enum attr_kind kind)
{
    unsigned i = mpi_h_index(k);
    if (!mpi_h_is(k, MPI_HK_MADE, MPI_HT_KEYVAL) ||
        i >= (unsigned)__atomic_load_n(&nkeyvals, __ATOMIC_ACQUIRE))
        return NULL;
    keyval_t *x = keyvals[i];
    return x->kind == kind ? x : NULL;
}

static int keyval_new(const keyval_t *proto, int *out, const char *call)
{
    if (out == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL keyval pointer", call);
    keyval_t *x = malloc(sizeof(*x));
    if (x == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory", call);
    *x = *proto;
    mpi_table_lock();
    int i = nkeyvals;
    if (i < MAX_KEYVALS) {
        keyvals[i] = x;
        /* R: the entry is complete before a reader sees the count cover it */
        __atomic_store_n(&nkeyvals, i + 1, __ATOMIC_RELEASE);
    }
    mpi_table_unlock();
    if (i >= MAX_KEYVALS) {
        free(x);
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_INTERN, "%s: %d keyvals made already (the "
                         "most this library keeps)", call, MAX_KEYVALS);
    }
    *out = mpi_h_make(MPI_HK_MADE, MPI_HT_KEYVAL, (unsigned)i);
    return MPI_SUCCESS;
}

static int keyval_free(int *k, enum attr_kind kind, const char *call)
{
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    if (k == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL keyval pointer", call);
    keyval_t *x = keyval_of(*k, kind);
    if (x == NULL || x->freed)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_KEYVAL, "%s: keyval %#x is %s", call, (unsigned)*k,
                         mpi_attr_predefined(*k) ? "predefined (it cannot be freed)"
                         : x != NULL              ? "freed already"
                                                  : "not a keyval of this kind");
    x->freed = true; /* the attributes set with it keep it */
    *k = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                           MPI_Comm_delete_attr_function *comm_delete_attr_fn,
                           int *comm_keyval, void *extra_state)
{
    int e = mpi_check_init("MPI_Comm_create_keyval");
    if (e != MPI_SUCCESS)
        return e;
    keyval_t k = {.kind = KIND_COMM, .copy.comm = comm_copy_attr_fn,
                  .del.comm = comm_delete_attr_fn, .extra = extra_state};
    return keyval_new(&k, comm_keyval, "MPI_Comm_create_keyval");
}

int MPI_Comm_free_keyval(int *comm_keyval)
{
    return keyval_free(comm_keyval, KIND_COMM, "MPI_Comm_free_keyval");
}

int MPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                           MPI_Type_delete_attr_function *type_delete_attr_fn,
                           int *type_keyval, void *extra_state)
{
    int e = mpi_check_init("MPI_Type_create_keyval");
    if (e != MPI_SUCCESS)
        return e;
    keyval_t k = {.kind = KIND_TYPE, .copy.type = type_copy_attr_fn,
                  .del.type = type_delete_attr_fn, .extra = extra_state};
    return keyval_new(&k, type_keyval, "MPI_Type_create_keyval");
}

int MPI_Type_free_keyval(int *type_keyval)
{
    return keyval_free(type_keyval, KIND_TYPE, "MPI_Type_free_keyval");
}

int MPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                          MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                          void *extra_state)
{
    int e = mpi_check_init("MPI_Win_create_keyval");
    if (e != MPI_SUCCESS)
        return e;
    /* the copy function is never called: windows are not duplicated */
    keyval_t k = {.kind = KIND_WIN, .copy.win = win_copy_attr_fn, .del.win = win_delete_attr_fn,
                  .extra = extra_state};
    return keyval_new(&k, win_keyval, "MPI_Win_create_keyval");
}

int MPI_Win_free_keyval(int *win_keyval)
{
    return keyval_free(win_keyval, KIND_WIN, "MPI_Win_free_keyval");
}

int MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                      void *extra_state)
{
    /* MPI-1's callbacks have the communicator forms' signatures */
    return MPI_Comm_create_keyval((MPI_Comm_copy_attr_function *)copy_fn,
                                  (MPI_Comm_delete_attr_function *)delete_fn, keyval,
                                  extra_state);
}

int MPI_Keyval_free(int *keyval)
{
    return keyval_free(keyval, KIND_COMM, "MPI_Keyval_free");
}

/* ---- predefined attributes --------------------------------------------------- */

bool mpi_attr_predefined(int keyval)
{
    switch (keyval) {
    case MPI_TAG_UB:
    case MPI_HOST:
    case MPI_IO:
    case MPI_WTIME_IS_GLOBAL:
    case MPI_UNIVERSE_SIZE:
    case MPI_APPNUM:
    case MPI_LASTUSEDCODE:
        return true;
    default:
        return false;
    }
}

/* Their values: ints the caller gets a pointer to (MPI's C binding of
 * MPI_Comm_get_attr for these), kept per thread so that MPI_LASTUSEDCODE
 * can change under a reader of another. */
static __thread int predef_value;

static void *predefined_value(int keyval)
{
    switch (keyval) {
    case MPI_TAG_UB:
        predef_value = MPI_TAG_UB_VALUE;
        break;
    case MPI_HOST:
        predef_value = MPI_PROC_NULL; /* no host process */
        break;
    case MPI_IO:
        predef_value = MPI_ANY_SOURCE; /* every process may do I/O */
        break;
    case MPI_WTIME_IS_GLOBAL:
        predef_value = 0; /* clocks are the nodes' own */
        break;
    case MPI_UNIVERSE_SIZE: /* the job's size; a spawned job's parent's universe */
        predef_value = mpi_dyn_universe();
        break;
    case MPI_APPNUM: /* 0; a spawned process's program in MPI_Comm_spawn_multiple */
        predef_value = mpi_dyn_appnum();
        break;
    default: /* MPI_LASTUSEDCODE */
        predef_value = mpi_last_user_code();
        break;
    }
    return &predef_value;
}

/* ---- values -------------------------------------------------------------------- */

static attr_t *find(enum attr_kind kind, int obj, int keyval)
{
    for (attr_t *a = attrs; a != NULL; a = a->next)
        if (a->kind == kind && a->obj == obj && a->keyval == keyval)
            return a;
    return NULL;
}

/* Run keyval's delete callback on (obj, value); its error, or MPI_SUCCESS. */
static int run_delete(const keyval_t *k, int obj, int keyval, void *value)
{
    if (k->kind == KIND_COMM)
        return k->del.comm != NULL ? k->del.comm(obj, keyval, value, k->extra) : MPI_SUCCESS;
    if (k->kind == KIND_WIN)
        return k->del.win != NULL ? k->del.win(obj, keyval, value, k->extra) : MPI_SUCCESS;
    return k->del.type != NULL ? k->del.type(obj, keyval, value, k->extra) : MPI_SUCCESS;
}

static int attr_set(enum attr_kind kind, int obj, int keyval, void *value, const char *call)
{
    keyval_t *k = keyval_of(keyval, kind);
    if (k == NULL || k->freed)
        return RAISE(kind, obj, MPI_ERR_KEYVAL,
                         "%s: keyval %d is %s", call, keyval,
                         mpi_attr_predefined(keyval) ? "predefined (its value cannot be set)"
                         : k != NULL                  ? "freed"
                                                      : "not a keyval of this kind of object");
    mpi_table_lock();
    attr_t *a = find(kind, obj, keyval);
    void *old = a != NULL ? a->value : NULL;
    bool had = a != NULL;
    mpi_table_unlock();
    if (had) { /* MPI: the old value is deleted first, with its callback */
        int e = run_delete(k, obj, keyval, old);
        if (e != MPI_SUCCESS)
            return RAISE_CODE(kind, obj, e,
                                  "%s: the delete callback of keyval %d failed (%d)", call,
                                  keyval, e);
        mpi_table_lock();
        if ((a = find(kind, obj, keyval)) != NULL)
            a->value = value;
        mpi_table_unlock();
        if (a != NULL)
            return MPI_SUCCESS;
    }
    a = malloc(sizeof(*a));
    if (a == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory", call);
    *a = (attr_t){.kind = kind, .obj = obj, .keyval = keyval, .value = value};
    mpi_table_lock();
    a->next = attrs;
    attrs = a;
    mpi_table_unlock();
    return MPI_SUCCESS;
}

static int attr_get(enum attr_kind kind, int obj, int keyval, void *value, int *flag,
                    const char *call)
{
    if (value == NULL || flag == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL %s", call,
                         value == NULL ? "value pointer" : "flag");
    if (kind == KIND_COMM && mpi_attr_predefined(keyval)) {
        *(void **)value = predefined_value(keyval);
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (keyval_of(keyval, kind) == NULL)
        return RAISE(kind, obj, MPI_ERR_KEYVAL,
                         "%s: keyval %d is not a keyval of this kind of object", call, keyval);
    mpi_table_lock();
    const attr_t *a = find(kind, obj, keyval);
    *flag = a != NULL;
    if (a != NULL)
        *(void **)value = a->value;
    mpi_table_unlock();
    return MPI_SUCCESS;
}

static int attr_delete(enum attr_kind kind, int obj, int keyval, const char *call)
{
    keyval_t *k = keyval_of(keyval, kind);
    if (k == NULL)
        return RAISE(kind, obj, MPI_ERR_KEYVAL,
                         "%s: keyval %d is %s", call, keyval,
                         mpi_attr_predefined(keyval) ? "predefined (it cannot be deleted)"
                                                     : "not a keyval of this kind of object");
    mpi_table_lock();
    attr_t **p = &attrs;
    while (*p != NULL && !((*p)->kind == kind && (*p)->obj == obj && (*p)->keyval == keyval))
        p = &(*p)->next;
    attr_t *a = *p;
    mpi_table_unlock();
    if (a == NULL)
        return RAISE(kind, obj, MPI_ERR_KEYVAL,
                         "%s: no attribute of keyval %d on this object", call, keyval);
    int e = run_delete(k, obj, keyval, a->value);
    if (e != MPI_SUCCESS) /* MPI: the attribute stays */
        return RAISE_CODE(kind, obj, e,
                              "%s: the delete callback of keyval %d failed (%d)", call, keyval,
                              e);
    mpi_table_lock();
    for (p = &attrs; *p != NULL && *p != a; p = &(*p)->next)
        ;
    if (*p == a)
        *p = a->next;
    mpi_table_unlock();
    free(a);
    return MPI_SUCCESS;
}

/* ---- the hooks of the objects' life ---------------------------------------- */

/* The copies of what obj carries, as each keyval's copy callback decides,
 * into *chain: records linked newest first, not in the list yet (their
 * object unset).  The first failure is returned, with what was copied. */
static int copy_out(enum attr_kind kind, int obj, attr_t **chain)
{
    *chain = NULL;
    /* oldest first, so the copies keep the order of setting */
    int n = 0;
    mpi_table_lock();
    for (const attr_t *a = attrs; a != NULL; a = a->next)
        n += a->kind == kind && a->obj == obj;
    attr_t **list = n > 0 ? malloc(sizeof(*list) * (size_t)n) : NULL;
    int m = 0;
    if (list != NULL)
        for (attr_t *a = attrs; a != NULL; a = a->next)
            if (a->kind == kind && a->obj == obj)
                list[m++] = a;
    mpi_table_unlock();
    if (n > 0 && list == NULL)
        return MPI_ERR_NO_MEM;
    int result = MPI_SUCCESS;
    for (int i = m - 1; i >= 0 && result == MPI_SUCCESS; i--) {
        int keyval = list[i]->keyval;
        keyval_t *k = keyvals[mpi_h_index(keyval)];
        void *out = NULL;
        int flag = 0, e = MPI_SUCCESS;
        if (kind == KIND_COMM && k->copy.comm != NULL)
            e = k->copy.comm(obj, keyval, k->extra, list[i]->value, &out, &flag);
        else if (kind == KIND_TYPE && k->copy.type != NULL)
            e = k->copy.type(obj, keyval, k->extra, list[i]->value, &out, &flag);
        if (e != MPI_SUCCESS) {
            result = e;
        } else if (flag) {
            attr_t *a = malloc(sizeof(*a));
            if (a == NULL) {
                result = MPI_ERR_NO_MEM;
                break;
            }
            *a = (attr_t){.kind = kind, .keyval = keyval, .value = out, .next = *chain};
            *chain = a;
        }
    }
    free(list);
    return result;
}

/* chain's records onto nobj, newest in the list (they were set last) */
static void attach(attr_t *chain, int nobj)
{
    if (chain == NULL)
        return;
    attr_t *last = chain;
    for (attr_t *a = chain; a != NULL; a = a->next) {
        a->obj = nobj;
        last = a;
    }
    mpi_table_lock();
    last->next = attrs;
    attrs = chain;
    mpi_table_unlock();
}

/* Copy what obj carries onto nobj (a dup); the first failure is returned
 * (what was copied stays, for the caller to delete with the new object). */
static int copy_all(enum attr_kind kind, int obj, int nobj)
{
    attr_t *chain;
    int e = copy_out(kind, obj, &chain);
    attach(chain, nobj);
    return e;
}

/* Delete everything obj carries, newest first; the first callback error
 * is returned (the others still run, and every record goes). */
static int delete_all(enum attr_kind kind, int obj)
{
    int result = MPI_SUCCESS;
    for (;;) {
        mpi_table_lock();
        attr_t **p = &attrs;
        while (*p != NULL && !((*p)->kind == kind && (*p)->obj == obj))
            p = &(*p)->next;
        attr_t *a = *p;
        if (a != NULL)
            *p = a->next;
        mpi_table_unlock();
        if (a == NULL)
            return result;
        int e = run_delete(keyvals[mpi_h_index(a->keyval)], obj, a->keyval, a->value);
        if (e != MPI_SUCCESS && result == MPI_SUCCESS)
            result = e;
        free(a);
    }
}

int mpi_attr_comm_copy(MPI_Comm comm, MPI_Comm newcomm)
{
    return copy_all(KIND_COMM, comm, newcomm);
}

int mpi_attr_comm_copy_out(MPI_Comm comm, struct attr **copies)
{
    return copy_out(KIND_COMM, comm, copies);
}

void mpi_attr_comm_attach(struct attr *copies, MPI_Comm newcomm)
{
    attach(copies, newcomm);
}

void mpi_attr_comm_discard(struct attr *copies, MPI_Comm comm)
{
    while (copies != NULL) {
        attr_t *a = copies;
        copies = a->next;
        (void)run_delete(keyvals[mpi_h_index(a->keyval)], comm, a->keyval, a->value);
        free(a);
    }
}

int mpi_attr_comm_delete(MPI_Comm comm)
{
    return delete_all(KIND_COMM, comm);
}

int mpi_attr_type_copy(MPI_Datatype type, MPI_Datatype newtype)
{
    return copy_all(KIND_TYPE, type, newtype);
}

int mpi_attr_type_delete(MPI_Datatype type)
{
    return delete_all(KIND_TYPE, type);
}

int mpi_attr_win_delete_all(MPI_Win win)
{
    return delete_all(KIND_WIN, win);
}

int mpi_attr_win_set(MPI_Win win, int keyval, void *value)
{
    return attr_set(KIND_WIN, win, keyval, value, "MPI_Win_set_attr");
}

int mpi_attr_win_get(MPI_Win win, int keyval, void *value, int *flag)
{
    return attr_get(KIND_WIN, win, keyval, value, flag, "MPI_Win_get_attr");
}

int mpi_attr_win_delete(MPI_Win win, int keyval)
{
    return attr_delete(KIND_WIN, win, keyval, "MPI_Win_delete_attr");
}

/* ---- the calls ------------------------------------------------------------------ */

int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    int e = mpi_check_comm(comm, "MPI_Comm_set_attr");
    return e != MPI_SUCCESS ? e
                            : attr_set(KIND_COMM, comm, comm_keyval, attribute_val,
                                       "MPI_Comm_set_attr");
}

int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    int e = mpi_check_comm(comm, "MPI_Comm_get_attr");
    return e != MPI_SUCCESS ? e
                            : attr_get(KIND_COMM, comm, comm_keyval, attribute_val, flag,
                                       "MPI_Comm_get_attr");
}

int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    int e = mpi_check_comm(comm, "MPI_Comm_delete_attr");
    return e != MPI_SUCCESS ? e : attr_delete(KIND_COMM, comm, comm_keyval, "MPI_Comm_delete_attr");
}

int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    int e = mpi_check_comm(comm, "MPI_Attr_put");
    return e != MPI_SUCCESS ? e : attr_set(KIND_COMM, comm, keyval, attribute_val, "MPI_Attr_put");
}

int MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    int e = mpi_check_comm(comm, "MPI_Attr_get");
    return e != MPI_SUCCESS ? e
                            : attr_get(KIND_COMM, comm, keyval, attribute_val, flag,
                                       "MPI_Attr_get");
}

int MPI_Attr_delete(MPI_Comm comm, int keyval)
{
    int e = mpi_check_comm(comm, "MPI_Attr_delete");
    return e != MPI_SUCCESS ? e : attr_delete(KIND_COMM, comm, keyval, "MPI_Attr_delete");
}

static int check_type(MPI_Datatype type, const char *call)
{
    int e = mpi_check_init(call);
    if (e == MPI_SUCCESS && mpi_type_size(type) == 0 && mpi_dt_get(type) == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "%s: datatype %#x is not valid", call,
                      (unsigned)type);
    return e;
}

int MPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    int e = check_type(datatype, "MPI_Type_set_attr");
    return e != MPI_SUCCESS ? e
                            : attr_set(KIND_TYPE, datatype, type_keyval, attribute_val,
                                       "MPI_Type_set_attr");
}

int MPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    int e = check_type(datatype, "MPI_Type_get_attr");
    return e != MPI_SUCCESS ? e
                            : attr_get(KIND_TYPE, datatype, type_keyval, attribute_val, flag,
                                       "MPI_Type_get_attr");
}

int MPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    int e = check_type(datatype, "MPI_Type_delete_attr");
    return e != MPI_SUCCESS ? e
                            : attr_delete(KIND_TYPE, datatype, type_keyval,
                                          "MPI_Type_delete_attr");
}
