/*
 * MPI error classes, strings and handlers.  Error codes are the classes
 * (user classes and codes: errhandler.c); the message of the last error
 * (naming the call and tern's cause) is kept and MPI_Error_string of that
 * code returns it.  An error goes to its communicator's handler: fatal
 * (abort the job), return, or a user function (errhandler.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"
#include "mpi/win.h"

static const char *const class_text[MPIX_ERR_PROC_FAILED + 1] = {
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
    [MPI_ERR_TOPOLOGY] = "invalid topology",
    [MPI_ERR_DIMS] = "invalid dimension argument",
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
    [MPI_ERR_NAME] = "invalid service name (MPI_Lookup_name: not published)",
    [MPI_ERR_NO_MEM] = "out of memory",
    [MPI_ERR_PORT] = "invalid port name",
    [MPI_ERR_SERVICE] = "invalid service name (publishing refused)",
    [MPI_ERR_SPAWN] = "error in spawning processes",
    [MPI_ERR_KEYVAL] = "invalid attribute key (keyval)",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "operation not supported",
    [MPI_ERR_WIN] = "invalid window",
    [MPI_ERR_BASE] = "invalid base address",
    [MPI_ERR_LOCKTYPE] = "invalid lock type",
    [MPI_ERR_RMA_CONFLICT] = "conflicting accesses to a window",
    [MPI_ERR_RMA_SYNC] = "wrong synchronisation of one-sided calls",
    [MPI_ERR_SIZE] = "invalid size",
    [MPI_ERR_DISP] = "invalid displacement",
    [MPI_ERR_ASSERT] = "invalid assert argument",
    [MPI_ERR_RMA_RANGE] = "target memory is not part of the window",
    [MPI_ERR_RMA_ATTACH] = "memory cannot be attached",
    [MPI_ERR_RMA_SHARED] = "memory cannot be shared",
    [MPI_ERR_RMA_FLAVOR] = "the window's flavor does not allow the call",
    /* the tool information interface's (MPI_T) */
    [MPI_T_ERR_MEMORY] = "MPI_T: out of memory",
    [MPI_T_ERR_NOT_INITIALIZED] = "MPI_T: the interface is not initialized",
    [MPI_T_ERR_CANNOT_INIT] = "MPI_T: the interface cannot be initialized",
    [MPI_T_ERR_INVALID_INDEX] = "MPI_T: invalid index",
    [MPI_T_ERR_INVALID_ITEM] = "MPI_T: invalid item index",
    [MPI_T_ERR_INVALID_HANDLE] = "MPI_T: invalid handle",
    [MPI_T_ERR_OUT_OF_HANDLES] = "MPI_T: no more handles",
    [MPI_T_ERR_OUT_OF_SESSIONS] = "MPI_T: no more sessions",
    [MPI_T_ERR_INVALID_SESSION] = "MPI_T: invalid session",
    [MPI_T_ERR_CVAR_SET_NOT_NOW] = "MPI_T: the control variable cannot be set now",
    [MPI_T_ERR_CVAR_SET_NEVER] = "MPI_T: the control variable cannot be set",
    [MPI_T_ERR_PVAR_NO_STARTSTOP] = "MPI_T: the performance variable cannot be started or "
                                    "stopped",
    [MPI_T_ERR_PVAR_NO_WRITE] = "MPI_T: the performance variable cannot be written or reset",
    [MPI_T_ERR_PVAR_NO_ATOMIC] = "MPI_T: the performance variable cannot be read and reset "
                                 "atomically",
    [MPI_T_ERR_INVALID_NAME] = "MPI_T: no variable or category of that name",
    [MPI_T_ERR_INVALID] = "MPI_T: invalid argument",
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
    case TERN_ERR_REMOTE_ACCESS: /* a window's memory refused by its target */
        return MPI_ERR_RMA_RANGE;
    default:
        return tern_status_is_peer_error(st) ? MPI_ERR_PROC_FAILED : MPI_ERR_OTHER;
    }
}

static const char *class_name(int cls)
{
    const char *t = NULL;
    if (cls >= 0 && cls < (int)(sizeof(class_text) / sizeof(class_text[0])))
        t = class_text[cls];
    else
        mpi_user_code(cls, NULL, &t);
    return t != NULL && t[0] != '\0' ? t : "?";
}

/* Handler h for code, the message formatted; a user function gets which
 * (a communicator or window handle): returns code when the handler
 * returns. */
static int raise_h(MPI_Errhandler h, int which, int code, const char *fmt, va_list ap)
{
    /* formatted aside first: an argument may be mpi_last_error itself (a
     * wait adding its name to the message of the operation that failed) */
    char msg[sizeof(mpi_last_error)];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    memcpy(mpi_last_error, msg, sizeof(msg));
    if (h == MPI_ERRORS_RETURN && mpi.init)
        return code;
    MPI_Comm_errhandler_function *fn = mpi.init ? mpi_errh_function(h) : NULL;
    if (fn != NULL) {
        int arg = code;
        fn(&which, &arg); /* the handler may look at both; MPI gives it copies */
        return code;
    }
    int cls = code;
    mpi_user_code(code, &cls, NULL);
    fprintf(stderr, "tern MPI: fatal error (%s): %s\n", class_name(cls), mpi_last_error);
    fflush(stderr);
    if (mpi.ctx != NULL)
        tern_abort(mpi.ctx, cls > 0 && cls < 256 ? cls : 1, mpi_last_error);
    _Exit(cls > 0 && cls < 256 ? cls : 1);
}

/* The handler of comm (or of MPI_COMM_WORLD when comm is not one). */
static int raise_v(MPI_Comm comm, int code, const char *fmt, va_list ap)
{
    mpi_comm_t *c = mpi_comm_get(comm);
    MPI_Errhandler h = c != NULL ? c->errh
                      : mpi.comms != NULL ? mpi.comms[MPI_COMM_SLOT_WORLD].errh
                                          : MPI_ERRORS_ARE_FATAL;
    return raise_h(h, c != NULL ? comm : MPI_COMM_WORLD, code, fmt, ap);
}

/* The handler of win (or MPI_COMM_WORLD's when win is no window). */
static int raise_win_v(MPI_Win win, int code, const char *fmt, va_list ap)
{
    const mpi_win_t *w = mpi_win_get(win);
    if (w == NULL)
        return raise_v(MPI_COMM_WORLD, code, fmt, ap);
    return raise_h(w->errh, win, code, fmt, ap);
}

int mpi_raise_win(MPI_Win win, int errclass, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = raise_win_v(win, errclass, fmt, ap);
    va_end(ap);
    return r;
}

int mpi_raise_win_code(MPI_Win win, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = raise_win_v(win, code, fmt, ap);
    va_end(ap);
    return r;
}

int mpi_raise(MPI_Comm comm, int errclass, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = raise_v(comm, errclass, fmt, ap);
    va_end(ap);
    return r;
}

int mpi_raise_code(MPI_Comm comm, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = raise_v(comm, code, fmt, ap);
    va_end(ap);
    return r;
}

int mpi_raise_tern(MPI_Comm comm, tern_status_t st, const char *call)
{
    return mpi_raise(comm, mpi_class_of(st), "%s: %s", call, tern_last_error());
}

int MPI_Error_class(int errorcode, int *errorclass)
{
    int cls = errorcode;
    bool ok = mpi_predef_class(errorcode) || mpi_user_code(errorcode, &cls, NULL);
    if (errorclass == NULL || !ok)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_class: code %d (predefined "
                         "codes are 0..%d and %d, then those MPI_Add_error_class / _code made)",
                         errorcode, MPI_ERR_CLASS_LAST, MPIX_ERR_PROC_FAILED);
    *errorclass = cls;
    return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char *string, int *resultlen)
{
    const char *user = NULL;
    bool is_user = errorcode > MPI_ERR_LASTCODE && mpi_user_code(errorcode, NULL, &user);
    if (string == NULL || resultlen == NULL || (!mpi_predef_class(errorcode) && !is_user))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_string: code %d", errorcode);
    int n;
    if (is_user) {
        n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", user); /* "" until one is added */
    } else {
        const char *t = errorcode < (int)(sizeof(class_text) / sizeof(class_text[0])) &&
                                class_text[errorcode]
                            ? class_text[errorcode]
                            : "unknown error code";
        /* the last error's own message, when it is this class's */
        n = errorcode != MPI_SUCCESS && mpi_last_error[0]
                ? snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", t, mpi_last_error)
                : snprintf(string, MPI_MAX_ERROR_STRING, "%s", t);
    }
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    int e = mpi_check_comm(comm, "MPI_Comm_set_errhandler");
    if (e != MPI_SUCCESS)
        return e;
    if (!mpi_errh_valid(errhandler))
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler: %d is not an error "
                         "handler (MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN or one of "
                         "MPI_Comm_create_errhandler, not freed)", errhandler);
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
    mpi_errh_retain(*errhandler); /* the caller's to MPI_Errhandler_free */
    return MPI_SUCCESS;
}
