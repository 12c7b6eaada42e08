/*
 * Object names (MPI-3.1 6.8): MPI_Comm_set_name / _get_name and
 * MPI_Type_set_name / _get_name.  As in MPICH: MPI_COMM_WORLD and
 * MPI_COMM_SELF are named so, the predefined datatypes after their MPI_
 * constant ("MPI_INT"; MPI_LONG_LONG, MPI_LONG_LONG_INT's other name, is
 * "MPI_LONG_LONG_INT"; MPI_C_FLOAT_COMPLEX, MPI_C_COMPLEX's, is
 * "MPI_C_COMPLEX"), every other object "" until named; a new
 * communicator or datatype does not take its parent's name (dup included);
 * a name longer than MPI_MAX_OBJECT_NAME - 1 characters is cut; any object
 * may be renamed, the predefined ones too.
 */
#include <string.h>
#include <stdlib.h>

#include "mpi/mpi_internal.h"

#define NAMED(t) {t, #t}
static const struct {
    MPI_Datatype dt;
    const char *name;
} predef[] = {
    NAMED(MPI_CHAR), NAMED(MPI_SIGNED_CHAR), NAMED(MPI_UNSIGNED_CHAR), NAMED(MPI_BYTE),
    NAMED(MPI_SHORT), NAMED(MPI_UNSIGNED_SHORT), NAMED(MPI_INT), NAMED(MPI_UNSIGNED),
    NAMED(MPI_LONG), NAMED(MPI_UNSIGNED_LONG), NAMED(MPI_LONG_LONG_INT),
    NAMED(MPI_UNSIGNED_LONG_LONG), NAMED(MPI_FLOAT), NAMED(MPI_DOUBLE), NAMED(MPI_LONG_DOUBLE),
    NAMED(MPI_INT8_T), NAMED(MPI_INT16_T), NAMED(MPI_INT32_T), NAMED(MPI_INT64_T),
    NAMED(MPI_UINT8_T), NAMED(MPI_UINT16_T), NAMED(MPI_UINT32_T), NAMED(MPI_UINT64_T),
    NAMED(MPI_C_BOOL), NAMED(MPI_WCHAR), NAMED(MPI_AINT), NAMED(MPI_OFFSET), NAMED(MPI_COUNT),
    NAMED(MPI_INTEGER), NAMED(MPI_REAL), NAMED(MPI_DOUBLE_PRECISION), NAMED(MPI_INTEGER4),
    NAMED(MPI_INTEGER8), NAMED(MPI_REAL4), NAMED(MPI_REAL8), NAMED(MPI_LOGICAL),
    NAMED(MPI_CHARACTER), NAMED(MPI_PACKED), NAMED(MPI_2INT), NAMED(MPI_FLOAT_INT),
    NAMED(MPI_DOUBLE_INT), NAMED(MPI_LONG_INT), NAMED(MPI_SHORT_INT),
    NAMED(MPI_LONG_DOUBLE_INT), NAMED(MPI_INTEGER1), NAMED(MPI_INTEGER2), NAMED(MPI_REAL16),
    NAMED(MPI_2INTEGER), NAMED(MPI_2REAL), NAMED(MPI_2DOUBLE_PRECISION),
    NAMED(MPI_C_COMPLEX), NAMED(MPI_C_DOUBLE_COMPLEX), NAMED(MPI_C_LONG_DOUBLE_COMPLEX),
    NAMED(MPI_CXX_BOOL), NAMED(MPI_CXX_FLOAT_COMPLEX), NAMED(MPI_CXX_DOUBLE_COMPLEX),
    NAMED(MPI_CXX_LONG_DOUBLE_COMPLEX), NAMED(MPI_COMPLEX), NAMED(MPI_DOUBLE_COMPLEX),
    NAMED(MPI_COMPLEX8), NAMED(MPI_COMPLEX16), NAMED(MPI_COMPLEX32),
};
#undef NAMED
#define NPREDEF ((int)(sizeof(predef) / sizeof(predef[0])))

/* a predefined type's name once MPI_Type_set_name gave it one (renamed);
 * one thread at a time per object, as MPI asks */
static char new_name[NPREDEF][MPI_MAX_OBJECT_NAME];
static bool renamed[NPREDEF];

static int predef_index(MPI_Datatype dt)
{
    for (int i = 0; i < NPREDEF; i++)
        if (predef[i].dt == dt)
            return i;
    return -1;
}

/* name cut to MPI_MAX_OBJECT_NAME - 1 characters into out */
static void copy_name(char *out, const char *name)
{
    size_t n = strnlen(name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(out, name, n);
    out[n] = '\0';
}

int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    int e = mpi_check_comm(comm, "MPI_Comm_set_name");
    if (e == MPI_SUCCESS && comm_name == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Comm_set_name: NULL name");
    if (e == MPI_SUCCESS)
        copy_name(mpi_comm_get(comm)->name, comm_name);
    return e;
}

int MPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    int e = mpi_check_comm(comm, "MPI_Comm_get_name");
    if (e == MPI_SUCCESS && (comm_name == NULL || resultlen == NULL))
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Comm_get_name: NULL %s",
                      comm_name == NULL ? "name buffer" : "result length pointer");
    if (e != MPI_SUCCESS)
        return e;
    copy_name(comm_name, mpi_comm_get(comm)->name);
    *resultlen = (int)strlen(comm_name);
    return MPI_SUCCESS;
}

/* dt's name slot: a predefined type's index (*t NULL) or a derived type */
static int type_of(MPI_Datatype dt, int *idx, mpi_dtype_t **t, const char *call)
{
    int e = mpi_check_init(call);
    if (e != MPI_SUCCESS)
        return e;
    *idx = predef_index(dt);
    *t = *idx < 0 ? mpi_dt_get(dt) : NULL;
    mpi_dt_view_t v;
    if (*idx < 0 && (*t == NULL || mpi_dt_lookup(dt, &v) == NULL))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "%s: datatype %#x is not valid%s", call,
                         dt, dt == MPI_DATATYPE_NULL ? " (MPI_DATATYPE_NULL)" : "");
    return MPI_SUCCESS;
}

int MPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    static const char call[] = "MPI_Type_set_name";
    int idx;
    mpi_dtype_t *t;
    int e = type_of(datatype, &idx, &t, call);
    if (e == MPI_SUCCESS && type_name == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL name", call);
    if (e != MPI_SUCCESS)
        return e;
    if (t == NULL) {
        copy_name(new_name[idx], type_name);
        renamed[idx] = true;
        return MPI_SUCCESS;
    }
    char *name = malloc(MPI_MAX_OBJECT_NAME);
    if (name == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s", call);
    copy_name(name, type_name);
    free(t->name);
    t->name = name;
    return MPI_SUCCESS;
}

int MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    static const char call[] = "MPI_Type_get_name";
    int idx;
    mpi_dtype_t *t;
    int e = type_of(datatype, &idx, &t, call);
    if (e == MPI_SUCCESS && (type_name == NULL || resultlen == NULL))
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL %s", call,
                      type_name == NULL ? "name buffer" : "result length pointer");
    if (e != MPI_SUCCESS)
        return e;
    const char *name = t != NULL        ? (t->name != NULL ? t->name : "")
                       : renamed[idx] ? new_name[idx]
                                      : predef[idx].name;
    copy_name(type_name, name);
    *resultlen = (int)strlen(type_name);
    return MPI_SUCCESS;
}
