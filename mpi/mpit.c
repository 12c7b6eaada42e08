/*
 * The tool information interface (mpit.h): MPI_T_init_thread /
 * MPI_T_finalize, its strings and errors, and the categories.
 *
 * MPI_T may be used before MPI_Init and after MPI_Finalize (MPI-3.1
 * 14.3.4): nothing here needs the MPI layer initialized.  The control
 * variables and categories are built at the first MPI_T_init_thread (the
 * settings registry is complete once the libraries are loaded) and kept;
 * the performance variables join their categories when MPI_Init made them
 * known (mpit_pvar.c), which MPI_T_category_changed reports.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/netmod.h"
#include "mpi/mpit.h"

mpit_state_t mpit = {.lock = PTHREAD_MUTEX_INITIALIZER};

int mpit_enter(void)
{
    pthread_mutex_lock(&mpit.lock);
    if (mpit.refs > 0) {
        mpit_pvars_refresh();
        return MPI_SUCCESS;
    }
    pthread_mutex_unlock(&mpit.lock);
    return mpit_err(MPI_T_ERR_NOT_INITIALIZED, "the tool information interface is not "
                                               "initialized (MPI_T_init_thread)");
}

void mpit_leave(void)
{
    pthread_mutex_unlock(&mpit.lock);
}

int mpit_err(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(mpi_last_error, sizeof(mpi_last_error), fmt, ap);
    va_end(ap);
    return code;
}

void mpit_string(const char *src, char *name, int *len)
{
    if (len == NULL)
        return;
    size_t n = strlen(src);
    if (name == NULL || *len <= 0) {
        *len = (int)n + 1;
        return;
    }
    if (n > (size_t)*len - 1)
        n = (size_t)*len - 1;
    memcpy(name, src, n);
    name[n] = '\0';
    *len = (int)n + 1;
}

/* ---- categories ------------------------------------------------------------ */

static char *dup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *dup_printf(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return strdup(buf);
}

static int find_cat(const char *name)
{
    for (int i = 0; i < mpit.ncats; i++)
        if (strcmp(mpit.cats[i].name, name) == 0)
            return i;
    return -1;
}

/* a new category (the caller holds the lock); -1: no memory */
static int add_cat(char *name, char *desc)
{
    mpit_cat_t *c = realloc(mpit.cats, sizeof(*c) * (size_t)(mpit.ncats + 1));
    if (c == NULL || name == NULL || desc == NULL) {
        if (c != NULL)
            mpit.cats = c;
        free(name);
        free(desc);
        return -1;
    }
    mpit.cats = c;
    c[mpit.ncats] = (mpit_cat_t){.name = name, .desc = desc};
    mpit.changed++;
    return mpit.ncats++;
}

static int add_index(int **list, int *n, int index)
{
    int *l = realloc(*list, sizeof(int) * (size_t)(*n + 1));
    if (l == NULL)
        return MPI_T_ERR_MEMORY;
    l[(*n)++] = index;
    *list = l;
    return MPI_SUCCESS;
}

/* what a netmod reaches ("?": no netmod of that name) */
static const char *reach_of(const char *netmod)
{
    for (int k = 0; k < tern_netmod_count(); k++)
        if (strcmp(tern_netmod_get(k)->name, netmod) == 0)
            return tern_netmod_get(k)->reach;
    return "?";
}

int mpit_cat_of_table(int table)
{
    bool netmod = false;
    const tern_config_table_t *t = tern_config_get(table, &netmod);
    int c = find_cat(t->owner);
    if (c >= 0)
        return c;
    return add_cat(strdup(t->owner),
                   netmod ? dup_printf("netmod %s (reaches %s): its TERN_* settings and its "
                                       "counters",
                                       t->owner, reach_of(t->owner))
                          : dup_printf("tern's %s: its TERN_* settings", t->owner));
}

int mpit_cat_of_prefix(const char *counter)
{
    const char *dot = strchr(counter, '.');
    size_t n = dot != NULL ? (size_t)(dot - counter) : strlen(counter);
    char name[64];
    snprintf(name, sizeof(name), "%.*s", (int)n, counter);
    int c = find_cat(name);
    if (c >= 0)
        return c;
    return add_cat(strdup(name), dup_printf("the counters of tern's %s", name));
}

int mpit_cat_add_pvar(int c, int index)
{
    int e = add_index(&mpit.cats[c].pvars, &mpit.cats[c].npvars, index);
    if (e == MPI_SUCCESS)
        mpit.changed++;
    return e;
}

/* The categories of the settings tables (their control variables), then
 * those of the netmods without settings and of the same-host copy, empty
 * until MPI_Init makes their counters known. */
static int build(void)
{
    int e = mpit_cvars_build();
    for (int i = 0; i < mpit.ncvars && e == MPI_SUCCESS; i++) {
        int c = mpit_cat_of_table(mpit.cvars[i].table);
        e = c < 0 ? MPI_T_ERR_MEMORY : add_index(&mpit.cats[c].cvars, &mpit.cats[c].ncvars, i);
    }
    for (int k = 0; k < tern_netmod_count() && e == MPI_SUCCESS; k++) {
        const tern_netmod_desc_t *d = tern_netmod_get(k);
        if (find_cat(d->name) < 0 &&
            add_cat(strdup(d->name),
                    dup_printf("netmod %s (reaches %s): its counters", d->name, d->reach)) < 0)
            e = MPI_T_ERR_MEMORY;
    }
    if (e == MPI_SUCCESS && find_cat("cma") < 0 &&
        add_cat(strdup("cma"), strdup("the engine's same-host copy of rendezvous data "
                                      "(CMA: process_vm_readv / _writev): its counters")) < 0)
        e = MPI_T_ERR_MEMORY;
    return e;
}

/* ---- init and finalize --------------------------------------------------------- */

int MPI_T_init_thread(int required, int *provided)
{
    if (provided == NULL)
        return mpit_err(MPI_T_ERR_INVALID, "MPI_T_init_thread: NULL provided");
    pthread_mutex_lock(&mpit.lock);
    int e = MPI_SUCCESS;
    if (!mpit.built) {
        e = build();
        mpit.built = e == MPI_SUCCESS;
    }
    if (e == MPI_SUCCESS)
        mpit.refs++;
    pthread_mutex_unlock(&mpit.lock);
    if (e != MPI_SUCCESS)
        return mpit_err(e, "MPI_T_init_thread: no memory for the variables' lists");
    /* every call holds mpit.lock: every level is provided */
    *provided = required < MPI_THREAD_SINGLE     ? MPI_THREAD_SINGLE
                : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                 : required;
    return MPI_SUCCESS;
}

int MPI_T_finalize(void)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    /* the last one: the sessions and handles go (the lists stay) */
    if (--mpit.refs == 0) {
        mpit_pvars_release();
        mpit_cvar_handles_release();
    }
    mpit_leave();
    return MPI_SUCCESS;
}

/* ---- the categories' calls ----------------------------------------------------------- */

static int cat_arg(int cat_index, const char *call)
{
    if (cat_index < 0 || cat_index >= mpit.ncats)
        return mpit_err(MPI_T_ERR_INVALID_INDEX, "%s: category %d (there are %d)", call, cat_index,
                        mpit.ncats);
    return MPI_SUCCESS;
}

int MPI_T_category_get_num(int *num_cat)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    if (num_cat == NULL)
        e = mpit_err(MPI_T_ERR_INVALID, "MPI_T_category_get_num: NULL num_cat");
    else
        *num_cat = mpit.ncats;
    mpit_leave();
    return e;
}

int MPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                            int *num_cvars, int *num_pvars, int *num_categories)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    if ((e = cat_arg(cat_index, "MPI_T_category_get_info")) == MPI_SUCCESS) {
        const mpit_cat_t *c = &mpit.cats[cat_index];
        mpit_string(c->name, name, name_len);
        mpit_string(c->desc, desc, desc_len);
        if (num_cvars != NULL)
            *num_cvars = c->ncvars;
        if (num_pvars != NULL)
            *num_pvars = c->npvars;
        if (num_categories != NULL)
            *num_categories = 0; /* none has subcategories */
    }
    mpit_leave();
    return e;
}

int MPI_T_category_get_index(const char *name, int *cat_index)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    int c = name != NULL ? find_cat(name) : -1;
    if (name == NULL || cat_index == NULL)
        e = mpit_err(MPI_T_ERR_INVALID, "MPI_T_category_get_index: NULL argument");
    else if (c < 0)
        e = mpit_err(MPI_T_ERR_INVALID_NAME, "MPI_T_category_get_index: no category \"%s\"", name);
    else
        *cat_index = c;
    mpit_leave();
    return e;
}

/* up to len of list's n indices into indices */
static int copy_list(int cat_index, int len, int indices[], const int *list, int n,
                     const char *call)
{
    int e = cat_arg(cat_index, call);
    if (e == MPI_SUCCESS && len > 0 && indices == NULL)
        e = mpit_err(MPI_T_ERR_INVALID, "%s: NULL indices", call);
    for (int i = 0; e == MPI_SUCCESS && i < n && i < len; i++)
        indices[i] = list[i];
    return e;
}

int MPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    e = cat_arg(cat_index, "MPI_T_category_get_cvars");
    if (e == MPI_SUCCESS)
        e = copy_list(cat_index, len, indices, mpit.cats[cat_index].cvars,
                      mpit.cats[cat_index].ncvars, "MPI_T_category_get_cvars");
    mpit_leave();
    return e;
}

int MPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    e = cat_arg(cat_index, "MPI_T_category_get_pvars");
    if (e == MPI_SUCCESS)
        e = copy_list(cat_index, len, indices, mpit.cats[cat_index].pvars,
                      mpit.cats[cat_index].npvars, "MPI_T_category_get_pvars");
    mpit_leave();
    return e;
}

int MPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    e = copy_list(cat_index, len, indices, NULL, 0, "MPI_T_category_get_categories");
    mpit_leave();
    return e;
}

int MPI_T_category_changed(int *update_number)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    if (update_number == NULL)
        e = mpit_err(MPI_T_ERR_INVALID, "MPI_T_category_changed: NULL update_number");
    else
        *update_number = mpit.changed;
    mpit_leave();
    return e;
}
