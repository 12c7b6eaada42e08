/*
 * A communicator's hints (MPI-3.1 6.4.4): MPI_Comm_set_info,
 * MPI_Comm_get_info, MPI_Comm_dup_with_info.  tern reads none of them
 * (docs/mpi.md), but keeps what it is given and hands it back: an info
 * object of the layer's own per communicator that has hints, cached as an
 * attribute of a keyval of the layer's (attr.c), so MPI_Comm_dup and
 * MPI_Comm_idup duplicate the hints as MPI says (its copy callback),
 * MPI_Comm_split and the other constructors start without any (they copy
 * no attribute), and MPI_Comm_free drops them (its delete callback).
 * MPI_Comm_set_info adds to the hints, replacing the keys it names.
 */
#include <stdint.h>

#include "mpi/mpi_internal.h"

static int hints_keyval = MPI_KEYVAL_INVALID;

/* an info handle as an attribute's value, and back */
static void *as_value(MPI_Info info)
{
    return (void *)(intptr_t)info;
}
static MPI_Info as_info(void *value)
{
    return (MPI_Info)(intptr_t)value;
}

static int copy_cb(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval, (void)extra;
    MPI_Info copy = MPI_INFO_NULL;
    int e = MPI_Info_dup(as_info(in), &copy);
    *(void **)out = as_value(copy);
    *flag = e == MPI_SUCCESS;
    return e;
}

static int delete_cb(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    MPI_Info info = as_info(value);
    return MPI_Info_free(&info);
}

/* comm's hints object (MPI_INFO_NULL: none yet) */
static MPI_Info hints_of(MPI_Comm comm)
{
    mpi_table_lock();
    int k = hints_keyval;
    mpi_table_unlock();
    void *v = NULL;
    int flag = 0;
    if (k == MPI_KEYVAL_INVALID || MPI_Comm_get_attr(comm, k, &v, &flag) != MPI_SUCCESS || !flag)
        return MPI_INFO_NULL;
    return as_info(v);
}

/* An empty hints object on comm (which has none), into *out. */
static int new_hints(MPI_Comm comm, MPI_Info *out, const char *call)
{
    mpi_table_lock();
    bool make = hints_keyval == MPI_KEYVAL_INVALID;
    mpi_table_unlock();
    if (make) { /* the same on every thread that races here: the first wins */
        int k = MPI_KEYVAL_INVALID;
        int e = MPI_Comm_create_keyval(copy_cb, delete_cb, &k, NULL);
        if (e != MPI_SUCCESS)
            return e;
        mpi_table_lock();
        if (hints_keyval == MPI_KEYVAL_INVALID)
            hints_keyval = k;
        mpi_table_unlock();
    }
    MPI_Info info;
    int e = MPI_Info_create(&info);
    if (e != MPI_SUCCESS)
        return mpi_raise(comm, e, "%s: no info object for the hints", call);
    if ((e = MPI_Comm_set_attr(comm, hints_keyval, as_value(info))) != MPI_SUCCESS) {
        MPI_Info_free(&info);
        return e;
    }
    *out = info;
    return MPI_SUCCESS;
}

/* info's keys set in comm's hints (MPI_INFO_NULL: nothing to set) */
static int add_hints(MPI_Comm comm, MPI_Info info, const char *call)
{
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    MPI_Info h = hints_of(comm);
    int e = h != MPI_INFO_NULL ? MPI_SUCCESS : new_hints(comm, &h, call);
    if (e == MPI_SUCCESS && (e = mpi_info_update(h, info)) != MPI_SUCCESS)
        return mpi_raise(comm, e, "%s: no memory for the hints", call);
    return e;
}

static int check_info(MPI_Comm comm, MPI_Info info, const char *call)
{
    int e = mpi_check_comm(comm, call);
    if (e == MPI_SUCCESS && !mpi_info_ok(info))
        e = mpi_raise(comm, MPI_ERR_INFO, "%s: info %#x is not an info object", call,
                      (unsigned)info);
    return e;
}

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    static const char call[] = "MPI_Comm_set_info";
    int e = check_info(comm, info, call);
    return e != MPI_SUCCESS ? e : add_hints(comm, info, call);
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    static const char call[] = "MPI_Comm_get_info";
    int e = mpi_check_comm(comm, call);
    if (e == MPI_SUCCESS && info_used == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: NULL info pointer", call);
    if (e != MPI_SUCCESS)
        return e;
    /* a new object, the caller's to free */
    MPI_Info h = hints_of(comm);
    return h != MPI_INFO_NULL ? MPI_Info_dup(h, info_used) : MPI_Info_create(info_used);
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_dup_with_info";
    int e = check_info(comm, info, call);
    if (e == MPI_SUCCESS && newcomm == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: NULL new communicator pointer", call);
    if (e != MPI_SUCCESS)
        return e;
    /* a dup, its copy of comm's hints replaced by info's */
    if ((e = MPI_Comm_dup(comm, newcomm)) != MPI_SUCCESS)
        return e;
    if (hints_of(*newcomm) != MPI_INFO_NULL)
        e = MPI_Comm_delete_attr(*newcomm, hints_keyval);
    if (e == MPI_SUCCESS)
        e = add_hints(*newcomm, info, call);
    if (e != MPI_SUCCESS)
        MPI_Comm_free(newcomm);
    return e;
}
