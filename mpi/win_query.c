/*
 * What a window tells about itself and carries: its predefined attributes
 * (MPI_WIN_BASE, _SIZE, _DISP_UNIT, _CREATE_FLAVOR, _MODEL) and the user's
 * (attr.c keeps those), its info, name, group and error handler.
 */
#include <string.h>

#include "mpi/win.h"

/* MPI_Win_get_attr's predefined values: pointers to them (MPI's C binding),
 * kept per thread beside the window's own fields */
static __thread int flavor_value, model_value, unit_value;
static __thread MPI_Aint size_value;

int MPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    static const char call[] = "MPI_Win_get_attr";
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, call);
    if (e != MPI_SUCCESS)
        return e;
    if (attribute_val == NULL || flag == NULL)
        return mpi_raise_win(win, MPI_ERR_ARG, "%s: NULL %s", call,
                             attribute_val == NULL ? "value pointer" : "flag");
    void *v = NULL;
    switch (win_keyval) {
    case MPI_WIN_BASE:
        v = w->base;
        break;
    case MPI_WIN_SIZE:
        size_value = w->wsize;
        v = &size_value;
        break;
    case MPI_WIN_DISP_UNIT:
        unit_value = w->disp_unit;
        v = &unit_value;
        break;
    case MPI_WIN_CREATE_FLAVOR:
        flavor_value = w->flavor;
        v = &flavor_value;
        break;
    case MPI_WIN_MODEL:
        model_value = w->model;
        v = &model_value;
        break;
    default:
        return mpi_attr_win_get(win, win_keyval, attribute_val, flag);
    }
    *(void **)attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}

static bool win_predefined(int keyval)
{
    return keyval == MPI_WIN_BASE || keyval == MPI_WIN_SIZE || keyval == MPI_WIN_DISP_UNIT ||
           keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL;
}

int MPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, "MPI_Win_set_attr");
    if (e == MPI_SUCCESS && win_predefined(win_keyval))
        e = mpi_raise_win(win, MPI_ERR_KEYVAL, "MPI_Win_set_attr: keyval %#x is predefined (its "
                          "value cannot be set)", (unsigned)win_keyval);
    return e != MPI_SUCCESS ? e : mpi_attr_win_set(win, win_keyval, attribute_val);
}

int MPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, "MPI_Win_delete_attr");
    if (e == MPI_SUCCESS && win_predefined(win_keyval))
        e = mpi_raise_win(win, MPI_ERR_KEYVAL, "MPI_Win_delete_attr: keyval %#x is predefined "
                          "(it cannot be deleted)", (unsigned)win_keyval);
    return e != MPI_SUCCESS ? e : mpi_attr_win_delete(win, win_keyval);
}

int MPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    static const char call[] = "MPI_Win_set_info";
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, call);
    if (e != MPI_SUCCESS)
        return e;
    if (info == MPI_INFO_NULL || !mpi_info_ok(info))
        return mpi_raise_win(win, MPI_ERR_INFO, "%s: %#x is not an info object", call,
                             (unsigned)info);
    /* kept and given back (the hints change nothing in tern) */
    if (w->info == MPI_INFO_NULL)
        return MPI_Info_dup(info, &w->info);
    return mpi_info_update(w->info, info) == MPI_SUCCESS
               ? MPI_SUCCESS
               : mpi_raise_win(win, MPI_ERR_NO_MEM, "%s: no memory", call);
}

int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    static const char call[] = "MPI_Win_get_info";
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, call);
    if (e != MPI_SUCCESS)
        return e;
    if (info_used == NULL)
        return mpi_raise_win(win, MPI_ERR_ARG, "%s: NULL info pointer", call);
    return w->info != MPI_INFO_NULL ? MPI_Info_dup(w->info, info_used)
                                    : MPI_Info_create(info_used);
}

int MPI_Win_set_name(MPI_Win win, const char *win_name)
{
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, "MPI_Win_set_name");
    if (e == MPI_SUCCESS && win_name == NULL)
        e = mpi_raise_win(win, MPI_ERR_ARG, "MPI_Win_set_name: NULL name");
    if (e != MPI_SUCCESS)
        return e;
    size_t n = strnlen(win_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(w->name, win_name, n);
    w->name[n] = '\0';
    return MPI_SUCCESS;
}

int MPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, "MPI_Win_get_name");
    if (e == MPI_SUCCESS && (win_name == NULL || resultlen == NULL))
        e = mpi_raise_win(win, MPI_ERR_ARG, "MPI_Win_get_name: NULL %s",
                          win_name == NULL ? "name buffer" : "result length pointer");
    if (e != MPI_SUCCESS)
        return e;
    size_t n = strlen(w->name);
    memcpy(win_name, w->name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

int MPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, "MPI_Win_get_group");
    if (e == MPI_SUCCESS && group == NULL)
        e = mpi_raise_win(win, MPI_ERR_ARG, "MPI_Win_get_group: NULL group pointer");
    return e != MPI_SUCCESS ? e : MPI_Comm_group(w->comm, group);
}

int MPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                              MPI_Errhandler *errhandler)
{
    /* one table of handler functions: a window's gets a window handle */
    return MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)win_errhandler_fn,
                                      errhandler);
}

int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, "MPI_Win_set_errhandler");
    if (e != MPI_SUCCESS)
        return e;
    if (!mpi_errh_valid(errhandler))
        return mpi_raise_win(win, MPI_ERR_ARG, "MPI_Win_set_errhandler: %#x is not an error "
                             "handler", (unsigned)errhandler);
    w->errh = errhandler;
    return MPI_SUCCESS;
}

int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, "MPI_Win_get_errhandler");
    if (e == MPI_SUCCESS && errhandler == NULL)
        e = mpi_raise_win(win, MPI_ERR_ARG, "MPI_Win_get_errhandler: NULL handler pointer");
    if (e != MPI_SUCCESS)
        return e;
    *errhandler = w->errh;
    mpi_errh_retain(*errhandler); /* the caller's to MPI_Errhandler_free */
    return MPI_SUCCESS;
}

int MPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    mpi_win_t *w;
    int e = mpi_win_check(win, &w, "MPI_Win_call_errhandler");
    if (e != MPI_SUCCESS)
        return e;
    mpi_raise_win_code(win, errorcode, "MPI_Win_call_errhandler: error code %d", errorcode);
    return MPI_SUCCESS; /* MPI: the call succeeds when the handler returns */
}
