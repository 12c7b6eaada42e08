/*
 * MPI_T's control variables (mpit.h): every TERN_* setting of tern's
 * settings registry (what tern_info lists), named by its variable.
 *
 * - A number is MPI_UNSIGNED_LONG_LONG, a choice among names MPI_INT with
 *   an enumeration of them (its value the name's index), a string
 *   MPI_CHAR, TERN_CFG_STR_MAX of them (NUL-terminated).
 * - The value read is the one in effect: while MPI is initialized, the
 *   engine's as its context loaded them (an oversubscribed node's idle-wait
 *   defaults included), each netmod's as its instances loaded them, the
 *   MPI layer's its own; after MPI_Finalize the same, as they were; before
 *   MPI_Init, and for the other components' tables (which load them when
 *   they need them), what the environment says now.
 * - The engine's and the netmods' settings are read once, at tern_init:
 *   MPI_T_SCOPE_READONLY, MPI_T_cvar_write says MPI_T_ERR_CVAR_SET_NEVER.
 *   The MPI layer's (TERN_MPI_*: the collectives' algorithm thresholds)
 *   are read at each collective call, so they may be written while MPI is
 *   initialized (MPI_T_ERR_CVAR_SET_NOT_NOW before MPI_Init and after
 *   MPI_Finalize), with the same value on every process between the same
 *   two collective calls: MPI_T_SCOPE_ALL_EQ.  A value out of the
 *   setting's range is MPI_T_ERR_INVALID (no MPI_T class says more).
 * - Every one is MPI_T_BIND_NO_OBJECT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpit.h"

/* an enumeration: the control variable it belongs to */
struct MPIR_T_enum_s {
    int cvar;
};
static struct MPIR_T_enum_s *enums; /* one per control variable (used by the enums') */

struct MPIR_T_cvar_handle_s {
    int cvar;
    struct MPIR_T_cvar_handle_s *next;
};
static struct MPIR_T_cvar_handle_s *handles; /* those allocated, not freed */

/* the values in effect after MPI_Finalize (mpit_cvars_freeze), by table */
static void **frozen;

int mpit_cvars_build(void)
{
    int n = 0, ntables = tern_config_count();
    for (int i = 0; i < ntables; i++)
        n += (int)tern_config_get(i, NULL)->num_entries;
    mpit.cvars = calloc((size_t)(n > 0 ? n : 1), sizeof(*mpit.cvars));
    enums = calloc((size_t)(n > 0 ? n : 1), sizeof(*enums));
    frozen = calloc(ntables > 0 ? (size_t)ntables : 1, sizeof(*frozen));
    if (mpit.cvars == NULL || enums == NULL || frozen == NULL)
        return MPI_T_ERR_MEMORY;
    for (int i = 0; i < ntables; i++) {
        const tern_config_table_t *t = tern_config_get(i, NULL);
        for (size_t k = 0; k < t->num_entries; k++) {
            enums[mpit.ncvars].cvar = mpit.ncvars;
            mpit.cvars[mpit.ncvars++] = (mpit_cvar_t){.t = t, .table = i, .e = &t->entries[k]};
        }
    }
    return MPI_SUCCESS;
}

MPI_T_enum mpit_enum_of(int cvar)
{
    return mpit.cvars[cvar].e->type == TERN_CFG_ENUM ? &enums[cvar] : MPI_T_ENUM_NULL;
}

bool mpit_enum_valid(MPI_T_enum h)
{
    /* compared as addresses: a handle that is none of ours is never read */
    for (int i = 0; i < mpit.ncvars; i++)
        if (h == &enums[i])
            return mpit.cvars[i].e->type == TERN_CFG_ENUM;
    return false;
}

int mpit_enum_count(MPI_T_enum h, const char **name, const char *const **items)
{
    const tern_config_entry_t *e = mpit.cvars[h->cvar].e;
    *name = e->env;
    *items = e->names + e->min;
    return (int)(e->max - e->min + 1);
}

/* ---- values ------------------------------------------------------------------ */

/* Is MPI initialized and not finalizing (its context's settings there)? */
static bool mpi_live(void)
{
    return __atomic_load_n(&mpi.init, __ATOMIC_ACQUIRE) && mpi.ctx != NULL && frozen != NULL &&
           !mpit.frozen;
}

void mpit_cvars_freeze(void)
{
    /* the engine's and the netmods' as the context had them */
    for (int i = 0; frozen != NULL && i < tern_config_count(); i++) {
        const tern_config_table_t *t = tern_config_get(i, NULL);
        const void *c = tern_context_config(mpi.ctx, t);
        if (c != NULL && frozen[i] == NULL && (frozen[i] = malloc(t->struct_size)) != NULL)
            memcpy(frozen[i], c, t->struct_size);
    }
}

/* The struct with v's table's values in effect; *loaded: one loaded from
 * the environment here (the caller frees it).  NULL: the environment's
 * value is not valid (the error's message set, in *err). */
static const void *values_of(const mpit_cvar_t *v, void **loaded, int *err)
{
    *loaded = NULL;
    const mpi_config_t *m = mpi_config_struct(v->t);
    if (m != NULL && __atomic_load_n(&mpi.init, __ATOMIC_ACQUIRE))
        return m;
    if (mpi_live()) {
        const void *c = tern_context_config(mpi.ctx, v->t);
        if (c != NULL)
            return c;
    } else if (frozen != NULL && frozen[v->table] != NULL) {
        return frozen[v->table];
    }
    if ((*loaded = calloc(1, v->t->struct_size)) == NULL) {
        *err = mpit_err(MPI_T_ERR_MEMORY, "MPI_T_cvar_read: no memory");
        return NULL;
    }
    if (tern_config_load_table(v->t, *loaded, NULL) != TERN_OK) {
        *err = mpit_err(MPI_T_ERR_INVALID, "MPI_T_cvar_read: %s", tern_last_error());
        return NULL;
    }
    return *loaded;
}

static MPI_Datatype type_of(const tern_config_entry_t *e, int *count)
{
    *count = e->type == TERN_CFG_STRING ? TERN_CFG_STR_MAX : 1;
    return e->type == TERN_CFG_STRING ? MPI_CHAR
           : e->type == TERN_CFG_ENUM ? MPI_INT
                                      : MPI_UNSIGNED_LONG_LONG;
}

/* ---- the calls -------------------------------------------------------------------- */

static int cvar_arg(int i, const char *call)
{
    if (i < 0 || i >= mpit.ncvars)
        return mpit_err(MPI_T_ERR_INVALID_INDEX, "%s: control variable %d (there are %d)", call, i,
                        mpit.ncvars);
    return MPI_SUCCESS;
}

int MPI_T_cvar_get_num(int *num_cvar)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    if (num_cvar == NULL)
        e = mpit_err(MPI_T_ERR_INVALID, "MPI_T_cvar_get_num: NULL num_cvar");
    else
        *num_cvar = mpit.ncvars;
    mpit_leave();
    return e;
}

int MPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                        MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                        int *bind, int *scope)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    if ((e = cvar_arg(cvar_index, "MPI_T_cvar_get_info")) != MPI_SUCCESS) {
        mpit_leave();
        return e;
    }
    const mpit_cvar_t *v = &mpit.cvars[cvar_index];
    bool netmod = false, mine = mpi_config_struct(v->t) != NULL;
    tern_config_get(v->table, &netmod);
    mpit_string(v->e->env, name, name_len);
    if (verbosity != NULL) /* test hooks are for tern's developers */
        *verbosity = strstr(v->e->env, "FAULT") != NULL ? MPI_T_VERBOSITY_MPIDEV_ALL
                     : mine || v->table == 0            ? MPI_T_VERBOSITY_TUNER_BASIC
                                                        : MPI_T_VERBOSITY_TUNER_DETAIL;
    int count;
    if (datatype != NULL)
        *datatype = type_of(v->e, &count);
    if (enumtype != NULL)
        *enumtype = mpit_enum_of(cvar_index);
    if (desc != NULL || desc_len != NULL) { /* its meaning, range and default */
        char range[72], def[TERN_CFG_STR_MAX], text[1024];
        tern_config_format_range(v->e, range, sizeof(range));
        tern_config_format(v->e, NULL, def, sizeof(def));
        snprintf(text, sizeof(text), "%s (%s%s: %s; default %s)", v->e->desc,
                 netmod ? "netmod " : "", v->t->owner, range, def);
        mpit_string(text, desc, desc_len);
    }
    if (bind != NULL)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope != NULL)
        *scope = mine ? MPI_T_SCOPE_ALL_EQ : MPI_T_SCOPE_READONLY;
    mpit_leave();
    return MPI_SUCCESS;
}

int MPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    if (name == NULL || cvar_index == NULL) {
        mpit_leave();
        return mpit_err(MPI_T_ERR_INVALID, "MPI_T_cvar_get_index: NULL argument");
    }
    e = mpit_err(MPI_T_ERR_INVALID_NAME,
                 "MPI_T_cvar_get_index: no control variable \"%s\" "
                 "(tern_info --params lists them)",
                 name);
    for (int i = 0; i < mpit.ncvars; i++)
        if (strcmp(mpit.cvars[i].e->env, name) == 0) {
            *cvar_index = i;
            e = MPI_SUCCESS;
            break;
        }
    mpit_leave();
    return e;
}

int MPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    (void)obj_handle; /* MPI_T_BIND_NO_OBJECT: none */
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    struct MPIR_T_cvar_handle_s *h = NULL;
    if ((e = cvar_arg(cvar_index, "MPI_T_cvar_handle_alloc")) == MPI_SUCCESS &&
        (handle == NULL || count == NULL))
        e = mpit_err(MPI_T_ERR_INVALID, "MPI_T_cvar_handle_alloc: NULL handle or count");
    if (e == MPI_SUCCESS && (h = malloc(sizeof(*h))) == NULL)
        e = mpit_err(MPI_T_ERR_MEMORY, "MPI_T_cvar_handle_alloc: no memory");
    if (e == MPI_SUCCESS) {
        *h = (struct MPIR_T_cvar_handle_s){.cvar = cvar_index, .next = handles};
        handles = h;
        type_of(mpit.cvars[cvar_index].e, count);
        *handle = h;
    }
    mpit_leave();
    return e;
}

/* h's link in the list of handles; NULL: not a handle of ours */
static struct MPIR_T_cvar_handle_s **find_handle(MPI_T_cvar_handle h)
{
    struct MPIR_T_cvar_handle_s **p = &handles;
    while (*p != NULL && *p != h)
        p = &(*p)->next;
    return *p != NULL ? p : NULL;
}

static int handle_err(MPI_T_cvar_handle h, const char *call)
{
    return mpit_err(MPI_T_ERR_INVALID_HANDLE, "%s: %p is not a control variable handle%s", call,
                    (void *)h,
                    h == MPI_T_CVAR_HANDLE_NULL ? " (MPI_T_CVAR_HANDLE_NULL)" : " (freed?)");
}

int MPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    struct MPIR_T_cvar_handle_s **p = handle != NULL ? find_handle(*handle) : NULL;
    if (p == NULL) {
        e = handle_err(handle != NULL ? *handle : NULL, "MPI_T_cvar_handle_free");
    } else {
        struct MPIR_T_cvar_handle_s *h = *p;
        *p = h->next;
        free(h);
        *handle = MPI_T_CVAR_HANDLE_NULL;
    }
    mpit_leave();
    return e;
}

void mpit_cvar_handles_release(void)
{
    while (handles != NULL) {
        struct MPIR_T_cvar_handle_s *h = handles;
        handles = h->next;
        free(h);
    }
}

int MPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    if (find_handle(handle) == NULL || buf == NULL) {
        e = buf == NULL ? mpit_err(MPI_T_ERR_INVALID, "MPI_T_cvar_read: NULL buffer")
                        : handle_err(handle, "MPI_T_cvar_read");
        mpit_leave();
        return e;
    }
    const mpit_cvar_t *v = &mpit.cvars[handle->cvar];
    void *loaded;
    const char *base = values_of(v, &loaded, &e);
    if (base != NULL) {
        const char *at = base + v->e->offset;
        if (v->e->type == TERN_CFG_STRING) {
            size_t n = strnlen(at, TERN_CFG_STR_MAX - 1);
            memcpy(buf, at, n);
            ((char *)buf)[n] = '\0';
        } else {
            uint64_t x = __atomic_load_n((const uint64_t *)(const void *)at, __ATOMIC_RELAXED);
            if (v->e->type == TERN_CFG_ENUM)
                *(int *)buf = (int)x;
            else
                *(unsigned long long *)buf = x;
        }
    }
    free(loaded);
    mpit_leave();
    return e;
}

int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    if (find_handle(handle) == NULL || buf == NULL) {
        e = buf == NULL ? mpit_err(MPI_T_ERR_INVALID, "MPI_T_cvar_write: NULL buffer")
                        : handle_err(handle, "MPI_T_cvar_write");
        mpit_leave();
        return e;
    }
    const mpit_cvar_t *v = &mpit.cvars[handle->cvar];
    mpi_config_t *m = mpi_config_struct(v->t);
    unsigned long long x = 0;
    if (m == NULL || v->e->type != TERN_CFG_UINT) {
        e = mpit_err(MPI_T_ERR_CVAR_SET_NEVER,
                     "MPI_T_cvar_write: %s is read once, when MPI "
                     "starts (set it in the environment)",
                     v->e->env);
    } else if (!__atomic_load_n(&mpi.init, __ATOMIC_ACQUIRE) || mpi.finalized) {
        e = mpit_err(MPI_T_ERR_CVAR_SET_NOT_NOW,
                     "MPI_T_cvar_write: %s may be set while MPI is "
                     "initialized only",
                     v->e->env);
    } else if (memcpy(&x, buf, sizeof(x)), x < v->e->min || x > v->e->max) {
        e = mpit_err(MPI_T_ERR_INVALID,
                     "MPI_T_cvar_write: %s = %llu is out of its range "
                     "%llu..%llu",
                     v->e->env, x, (unsigned long long)v->e->min, (unsigned long long)v->e->max);
    } else {
        /* the collectives read it at each call (mpi/coll_buf.c) */
        __atomic_store_n((uint64_t *)(void *)((char *)m + v->e->offset), (uint64_t)x,
                         __ATOMIC_RELAXED);
    }
    mpit_leave();
    return e;
}

/* ---- enumerations --------------------------------------------------------------- */

int MPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    if (!mpit_enum_valid(enumtype)) {
        e = mpit_err(MPI_T_ERR_INVALID_HANDLE, "MPI_T_enum_get_info: %p is not an enumeration",
                     (void *)enumtype);
    } else {
        const char *n;
        const char *const *items;
        int k = mpit_enum_count(enumtype, &n, &items);
        if (num != NULL)
            *num = k;
        mpit_string(n, name, name_len);
    }
    mpit_leave();
    return e;
}

int MPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    const char *n;
    const char *const *items;
    int k = 0;
    if (!mpit_enum_valid(enumtype))
        e = mpit_err(MPI_T_ERR_INVALID_HANDLE, "MPI_T_enum_get_item: %p is not an enumeration",
                     (void *)enumtype);
    else if (k = mpit_enum_count(enumtype, &n, &items), indx < 0 || indx >= k)
        e = mpit_err(MPI_T_ERR_INVALID_ITEM, "MPI_T_enum_get_item: item %d of %s (it has %d)", indx,
                     n, k);
    else {
        if (value != NULL)
            *value = indx; /* the value a read gives: the index of the name */
        mpit_string(items[indx], name, name_len);
    }
    mpit_leave();
    return e;
}
