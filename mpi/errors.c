/*
 * MPI error classes, strings and handlers.  Error codes are the classes;
 * the message of the last error (naming the call and tern's cause) is kept
 * and MPI_Error_string of that code returns it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

static const char *const class_text[MPI_ERR_LASTCODE] = {
    [MPI_SUCCESS] = "no error",
    [MPI_ERR_BUFFER] = "invalid buffer pointer",
    [MPI_ERR_COUNT] = "invalid count argument",
    [MPI_ERR_TYPE] = "invalid datatype",
    [MPI_ERR_TAG] = "invalid tag",
    [MPI_ERR_COMM] = "invalid communicator",
    [MPI_ERR_RANK] = "invalid rank",
    [MPI_ERR_REQUEST] = "invalid request",
    [MPI_ERR_ROOT] = "invalid root",
    [MPI_ERR_GROUP] = "invalid group",
    [MPI_ERR_OP] = "invalid reduce operation",
    [MPI_ERR_ARG] = "invalid argument of some other kind",
    [MPI_ERR_UNKNOWN] = "unknown error",
    [MPI_ERR_TRUNCATE] = "message truncated",
    [MPI_ERR_OTHER] = "known error not in this list",
    [MPI_ERR_INTERN] = "internal MPI error",
    [MPI_ERR_IN_STATUS] = "error code is in status",
    [MPI_ERR_PENDING] = "pending request",
    [MPI_ERR_INFO] = "invalid info object",
    [MPI_ERR_INFO_KEY] = "invalid info key",
    [MPI_ERR_INFO_VALUE] = "invalid info value",
    [MPI_ERR_INFO_NOKEY] = "no such key in the info object",
    [MPI_ERR_NO_MEM] = "out of memory",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "operation not supported",
    [MPI_ERR_PROC_FAILED] = "a process failed",
};

int mpi_class_of(tern_status_t st)
{
    switch (st) {
    case TERN_OK:
    case TERN_INPROGRESS:
        return MPI_SUCCESS;
    case TERN_ERR_TRUNCATED:
        return MPI_ERR_TRUNCATE;
    case TERN_ERR_INVALID_RANK:
        return MPI_ERR_RANK;
    case TERN_ERR_INVALID_TAG:
        return MPI_ERR_TAG;
    case TERN_ERR_INVALID_PARAM:
        return MPI_ERR_ARG;
    case TERN_ERR_NO_MEMORY:
        return MPI_ERR_NO_MEM;
    case TERN_ERR_UNSUPPORTED:
        return MPI_ERR_UNSUPPORTED_OPERATION;
    default:
        return tern_status_is_peer_error(st) ? MPI_ERR_PROC_FAILED : MPI_ERR_OTHER;
    }
}

int mpi_raise(MPI_Comm comm, int errclass, const char *fmt, ...)
{
    /* the arguments may be the last message itself (a wait reporting its
     * operation's failure: "MPI_Wait: %s", mpi_last_error): formatted
     * aside first, as vsnprintf's source and target must not overlap */
    char msg[sizeof(mpi_last_error)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    memcpy(mpi_last_error, msg, sizeof(msg));
    mpi_comm_t *c = mpi_comm_get(comm);
    MPI_Errhandler h = c != NULL ? c->errh
                      : mpi.comms != NULL ? mpi.comms[MPI_COMM_WORLD].errh
                                          : MPI_ERRORS_ARE_FATAL;
    if (h == MPI_ERRORS_RETURN && mpi.init)
        return errclass;
    fprintf(stderr, "tern MPI: fatal error (%s): %s\n", class_text[errclass] ? class_text[errclass]
                                                                           : "?", mpi_last_error);
    fflush(stderr);
    if (mpi.ctx != NULL)
        tern_abort(mpi.ctx, errclass ? errclass : 1, mpi_last_error);
    _Exit(errclass ? errclass : 1);
}

int mpi_raise_tern(MPI_Comm comm, tern_status_t st, const char *call)
{
    return mpi_raise(comm, mpi_class_of(st), "%s: %s", call, tern_last_error());
}

int MPI_Error_class(int errorcode, int *errorclass)
{
    if (errorclass == NULL || errorcode < 0 || errorcode >= MPI_ERR_LASTCODE)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_class: code %d", errorcode);
    *errorclass = errorcode;
    return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (string == NULL || resultlen == NULL || errorcode < 0 || errorcode >= MPI_ERR_LASTCODE)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_string: code %d", errorcode);
    const char *t = class_text[errorcode] ? class_text[errorcode] : "unknown error code";
    /* the last error's own message, when it is this class's */
    int n = errorcode != MPI_SUCCESS && mpi_last_error[0]
                ? snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", t, mpi_last_error)
                : snprintf(string, MPI_MAX_ERROR_STRING, "%s", t);
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    int e = mpi_check_comm(comm, "MPI_Comm_set_errhandler");
    if (e != MPI_SUCCESS)
        return e;
    if (errhandler != MPI_ERRORS_ARE_FATAL && errhandler != MPI_ERRORS_RETURN)
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler: handler %d is neither "
                         "MPI_ERRORS_ARE_FATAL nor MPI_ERRORS_RETURN", errhandler);
    mpi_comm_get(comm)->errh = errhandler;
    return MPI_SUCCESS;
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    int e = mpi_check_comm(comm, "MPI_Comm_get_errhandler");
    if (e != MPI_SUCCESS)
        return e;
    if (errhandler == NULL)
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler: NULL handler pointer");
    *errhandler = mpi_comm_get(comm)->errh;
    return MPI_SUCCESS;
}
