/*
 * MPI_Info: ordered (key, value) string pairs.  Nothing in the layer reads
 * hints yet; programs pass info objects to calls that take them, so the
 * objects themselves work as MPI says (a communicator keeps its hints in
 * one: comm_info.c).  An object is an entry of a table:
 * MPI_INFO_ENV is entry 0 and stays (empty: the launcher's command line is
 * not passed on); the others' handles are made ones (mpi/handle.h) whose
 * index is their entry's.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

typedef struct info {
    bool used;
    int n, cap;
    char **key, **val; /* n of each, in the order they were set */
} info_t;

static info_t *infos;
static int ninfos;

/* The table, MPI_INFO_ENV in it, on first use: MPI_MAX_INFOS entries at
 * once, never moved (another thread may use an object meanwhile); taking
 * an entry is the table lock's (MPI_THREAD_MULTIPLE). */
#define MPI_MAX_INFOS 4096

static int info_table(void)
{
    mpi_table_lock();
    if (infos == NULL && (infos = calloc(MPI_MAX_INFOS, sizeof(*infos))) != NULL) {
        ninfos = MPI_MAX_INFOS;
        infos[0].used = true; /* MPI_INFO_ENV */
    }
    mpi_table_unlock();
    return infos != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* a handle's entry; -1: not an info object's (MPI_INFO_NULL neither) */
static int info_slot(MPI_Info info)
{
    unsigned i = mpi_h_index(info);
    if (info == MPI_INFO_ENV)
        return 0;
    if (!mpi_h_is(info, MPI_HK_MADE, MPI_HT_INFO) || i < 1 || i >= (unsigned)ninfos ||
        !infos[i].used)
        return -1;
    return (int)i;
}

/* The object of a handle into *o (the error raised otherwise). */
static int info_get(MPI_Info info, const char *call, info_t **o)
{
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    if (info_table() != MPI_SUCCESS)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: info table", call);
    int s = info_slot(info);
    if (s < 0)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_INFO, "%s: info %#x is not valid%s", call,
                         (unsigned)info, info == MPI_INFO_NULL ? " (MPI_INFO_NULL)" : "");
    *o = &infos[s];
    return MPI_SUCCESS;
}

bool mpi_info_ok(MPI_Info info)
{
    if (info == MPI_INFO_NULL)
        return true;
    return info_table() == MPI_SUCCESS && info_slot(info) >= 0;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* a key MPI allows: non-empty, at most MPI_MAX_INFO_KEY characters */
static int check_key(const char *key, const char *call)
{
    if (key == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, "%s: NULL key", call);
    size_t n = strnlen(key, MPI_MAX_INFO_KEY + 1);
    if (n == 0 || n > MPI_MAX_INFO_KEY)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, "%s: key of %s%zu characters (1 to "
                         "MPI_MAX_INFO_KEY, %d)", call, n > MPI_MAX_INFO_KEY ? "over " : "",
                         n > MPI_MAX_INFO_KEY ? (size_t)MPI_MAX_INFO_KEY : n, MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

static int find(const info_t *o, const char *key)
{
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->key[i], key) == 0)
            return i;
    return -1;
}

/* A new, empty object: its handle, or MPI_INFO_NULL with the error raised. */
static MPI_Info info_new(const char *call)
{
    mpi_table_lock();
    int i = 1; /* 0: MPI_INFO_ENV */
    while (i < ninfos && infos[i].used)
        i++;
    if (i < ninfos)
        infos[i] = (info_t){.used = true};
    mpi_table_unlock();
    if (i == ninfos) {
        mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: all %d info objects are in use", call,
                  MPI_MAX_INFOS);
        return MPI_INFO_NULL;
    }
    return mpi_h_make(MPI_HK_MADE, MPI_HT_INFO, (unsigned)i);
}

/* Set key to val in o (a copy of each); MPI_ERR_NO_MEM when out of memory. */
static int put(info_t *o, const char *key, const char *val)
{
    char *v = dup_str(val);
    if (v == NULL)
        return MPI_ERR_NO_MEM;
    int i = find(o, key);
    if (i >= 0) {
        free(o->val[i]);
        o->val[i] = v;
        return MPI_SUCCESS;
    }
    if (o->n == o->cap) {
        int cap = o->cap ? 2 * o->cap : 8;
        char **k = realloc(o->key, sizeof(*k) * (size_t)cap);
        if (k != NULL)
            o->key = k;
        char **vs = k != NULL ? realloc(o->val, sizeof(*vs) * (size_t)cap) : NULL;
        if (vs == NULL) {
            free(v);
            return MPI_ERR_NO_MEM;
        }
        o->val = vs;
        o->cap = cap;
    }
    char *k = dup_str(key);
    if (k == NULL) {
        free(v);
        return MPI_ERR_NO_MEM;
    }
    o->key[o->n] = k;
    o->val[o->n] = v;
    o->n++;
    return MPI_SUCCESS;
}

static void clear(info_t *o)
{
    for (int i = 0; i < o->n; i++) {
        free(o->key[i]);
        free(o->val[i]);
    }
    free(o->key);
    free(o->val);
}

int mpi_info_update(MPI_Info dst, MPI_Info src)
{
    int d = info_slot(dst), s = info_slot(src);
    if (d < 0 || s < 0)
        return MPI_ERR_INFO;
    for (int i = 0; i < infos[s].n; i++)
        if (put(&infos[d], infos[s].key[i], infos[s].val[i]) != MPI_SUCCESS)
            return MPI_ERR_NO_MEM;
    return MPI_SUCCESS;
}

int MPI_Info_create(MPI_Info *info)
{
    int e = mpi_check_init("MPI_Info_create");
    if (e != MPI_SUCCESS)
        return e;
    if (info == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_create: NULL info pointer");
    if (info_table() != MPI_SUCCESS)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Info_create: info table");
    MPI_Info h = info_new("MPI_Info_create");
    if (h == MPI_INFO_NULL)
        return MPI_ERR_NO_MEM;
    *info = h;
    return MPI_SUCCESS;
}

int MPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    const char *call = "MPI_Info_set";
    info_t *o;
    int e = info_get(info, call, &o);
    if (e == MPI_SUCCESS)
        e = check_key(key, call);
    if (e != MPI_SUCCESS)
        return e;
    size_t n = value != NULL ? strnlen(value, MPI_MAX_INFO_VAL + 1) : 0;
    if (n == 0 || n > MPI_MAX_INFO_VAL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_INFO_VALUE, "%s: value of key \"%s\": %s (1 "
                         "to MPI_MAX_INFO_VAL %d characters)", call, key,
                         value == NULL ? "NULL" : n ? "too long" : "empty", MPI_MAX_INFO_VAL);
    if (put(o, key, value) != MPI_SUCCESS)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: key \"%s\"", call, key);
    return MPI_SUCCESS;
}

int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    const char *call = "MPI_Info_get";
    info_t *o;
    int e = info_get(info, call, &o);
    if (e == MPI_SUCCESS)
        e = check_key(key, call);
    if (e != MPI_SUCCESS)
        return e;
    if (valuelen < 0 || value == NULL || flag == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: valuelen %d, value %p, flag %p",
                         call, valuelen, (void *)value, (void *)flag);
    int i = find(o, key);
    *flag = i >= 0;
    if (i >= 0) { /* at most valuelen characters, and the terminating null */
        size_t n = strlen(o->val[i]);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, o->val[i], n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}

int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    const char *call = "MPI_Info_get_valuelen";
    info_t *o;
    int e = info_get(info, call, &o);
    if (e == MPI_SUCCESS)
        e = check_key(key, call);
    if (e != MPI_SUCCESS)
        return e;
    if (valuelen == NULL || flag == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL valuelen or flag", call);
    int i = find(o, key);
    *flag = i >= 0;
    if (i >= 0)
        *valuelen = (int)strlen(o->val[i]);
    return MPI_SUCCESS;
}

int MPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    info_t *o;
    int e = info_get(info, "MPI_Info_get_nkeys", &o);
    if (e != MPI_SUCCESS)
        return e;
    if (nkeys == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_get_nkeys: NULL nkeys");
    *nkeys = o->n;
    return MPI_SUCCESS;
}

int MPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    info_t *o;
    int e = info_get(info, "MPI_Info_get_nthkey", &o);
    if (e != MPI_SUCCESS)
        return e;
    if (key == NULL || n < 0 || n >= o->n)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_get_nthkey: key %d of %d%s", n,
                         o->n, key == NULL ? " (NULL key buffer)" : "");
    strcpy(key, o->key[n]); /* at most MPI_MAX_INFO_KEY characters: the caller's room */
    return MPI_SUCCESS;
}

int MPI_Info_delete(MPI_Info info, const char *key)
{
    const char *call = "MPI_Info_delete";
    info_t *o;
    int e = info_get(info, call, &o);
    if (e == MPI_SUCCESS)
        e = check_key(key, call);
    if (e != MPI_SUCCESS)
        return e;
    int i = find(o, key);
    if (i < 0)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_INFO_NOKEY, "%s: no key \"%s\" in info %d",
                         call, key, info);
    free(o->key[i]);
    free(o->val[i]);
    /* the others keep their order (MPI_Info_get_nthkey) */
    memmove(&o->key[i], &o->key[i + 1], sizeof(o->key[0]) * (size_t)(o->n - i - 1));
    memmove(&o->val[i], &o->val[i + 1], sizeof(o->val[0]) * (size_t)(o->n - i - 1));
    o->n--;
    return MPI_SUCCESS;
}

int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    const char *call = "MPI_Info_dup";
    info_t *o;
    int e = info_get(info, call, &o);
    if (e != MPI_SUCCESS)
        return e;
    if (newinfo == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL new info pointer", call);
    MPI_Info h = info_new(call);
    if (h == MPI_INFO_NULL)
        return MPI_ERR_NO_MEM;
    info_t *d = &infos[mpi_h_index(h)];
    for (int i = 0; i < o->n; i++)
        if (put(d, o->key[i], o->val[i]) != MPI_SUCCESS) {
            clear(d);
            *d = (info_t){0};
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: copying info %#x", call,
                             (unsigned)info);
        }
    *newinfo = h;
    return MPI_SUCCESS;
}

int MPI_Info_free(MPI_Info *info)
{
    const char *call = "MPI_Info_free";
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    if (info == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL info pointer", call);
    info_t *o;
    e = info_get(*info, call, &o);
    if (e != MPI_SUCCESS)
        return e;
    if (*info == MPI_INFO_ENV)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_INFO, "%s: MPI_INFO_ENV is not freed", call);
    clear(o);
    *o = (info_t){0};
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
