/*
 * Error handler objects and user error classes, codes and strings.
 *
 * A handler made by MPI_Comm_create_errhandler is an entry of a table that
 * only grows.  It counts the user's references (the create's, and one per
 * MPI_Comm_get_errhandler that returned it); MPI_Errhandler_free drops one,
 * and at none the handle is retired (MPI_Comm_set_errhandler refuses it)
 * but the function stays, because communicators it was set on keep using
 * it until they are freed, and communicators hold no count.  A program
 * makes a handful of handlers; an entry is two words.  Handles of user
 * handlers are made ones (mpi/handle.h) whose index is their entry's.
 *
 * User error classes and codes (MPI_Add_error_class / _code) follow the
 * predefined ones: class or code n > MPI_ERR_LASTCODE is entry
 * n - MPI_ERR_LASTCODE - 1 of a second table, holding its class (a class
 * is its own) and its string (MPI_Add_error_string).
 *
 * Both tables change only under the layer's table lock; readers of an
 * entry made before they were called need no lock (entries never move: the
 * tables are arrays of pointers to entries, and a new entry is published
 * with a release store of the count).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

#define MAX_HANDLERS 4096
#define MAX_USER_CODES 4096

typedef struct errh_entry {
    MPI_Comm_errhandler_function *fn;
    int refs; /* the user's: MPI_Comm_create_errhandler's, each MPI_Comm_get_errhandler's */
} errh_entry_t;

typedef struct user_code {
    int cls;
    char text[MPI_MAX_ERROR_STRING];
} user_code_t;

static errh_entry_t *handlers[MAX_HANDLERS];
static int nhandlers;
static user_code_t *codes[MAX_USER_CODES];
static int ncodes;

/* ---- handlers ------------------------------------------------------------- */

static errh_entry_t *user_handler(MPI_Errhandler h)
{
    unsigned i = mpi_h_index(h);
    if (!mpi_h_is(h, MPI_HK_MADE, MPI_HT_ERRHANDLER) ||
        i >= (unsigned)__atomic_load_n(&nhandlers, __ATOMIC_ACQUIRE))
        return NULL;
    return handlers[i];
}

bool mpi_errh_valid(MPI_Errhandler h)
{
    if (h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN)
        return true;
    const errh_entry_t *e = user_handler(h);
    return e != NULL && __atomic_load_n(&e->refs, __ATOMIC_RELAXED) > 0;
}

void mpi_errh_retain(MPI_Errhandler h)
{
    errh_entry_t *e = user_handler(h);
    if (e != NULL)
        __atomic_fetch_add(&e->refs, 1, __ATOMIC_RELAXED);
}

MPI_Comm_errhandler_function *mpi_errh_function(MPI_Errhandler h)
{
    const errh_entry_t *e = user_handler(h);
    return e != NULL ? e->fn : NULL;
}

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn,
                               MPI_Errhandler *errhandler)
{
    int e = mpi_check_init("MPI_Comm_create_errhandler");
    if (e != MPI_SUCCESS)
        return e;
    if (comm_errhandler_fn == NULL || errhandler == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_create_errhandler: NULL %s",
                         comm_errhandler_fn == NULL ? "function" : "handler pointer");
    errh_entry_t *x = malloc(sizeof(*x));
    if (x == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Comm_create_errhandler: no memory");
    *x = (errh_entry_t){.fn = comm_errhandler_fn, .refs = 1};
    mpi_table_lock();
    int i = nhandlers;
    if (i < MAX_HANDLERS) {
        handlers[i] = x;
        /* R: the entry is complete before a reader sees the count cover it */
        __atomic_store_n(&nhandlers, i + 1, __ATOMIC_RELEASE);
    }
    mpi_table_unlock();
    if (i >= MAX_HANDLERS) {
        free(x);
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_INTERN, "MPI_Comm_create_errhandler: %d "
                         "handlers made already (the most this library keeps)", MAX_HANDLERS);
    }
    *errhandler = mpi_h_make(MPI_HK_MADE, MPI_HT_ERRHANDLER, (unsigned)i);
    return MPI_SUCCESS;
}

int MPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    int e = mpi_check_init("MPI_Errhandler_free");
    if (e != MPI_SUCCESS)
        return e;
    if (errhandler == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Errhandler_free: NULL pointer");
    if (*errhandler != MPI_ERRORS_ARE_FATAL && *errhandler != MPI_ERRORS_RETURN) {
        errh_entry_t *x = user_handler(*errhandler);
        if (x == NULL || __atomic_load_n(&x->refs, __ATOMIC_RELAXED) <= 0)
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Errhandler_free: %d is not an "
                             "error handler (never made, or freed)", *errhandler);
        __atomic_fetch_sub(&x->refs, 1, __ATOMIC_RELAXED); /* communicators keep it */
    }
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    int e = mpi_check_comm(comm, "MPI_Comm_call_errhandler");
    if (e != MPI_SUCCESS)
        return e;
    int cls = MPI_ERR_UNKNOWN;
    if (MPI_Error_class(errorcode, &cls) != MPI_SUCCESS)
        return MPI_ERR_ARG;
    (void)mpi_raise_code(comm, errorcode, "MPI_Comm_call_errhandler: error code %d", errorcode);
    return MPI_SUCCESS; /* the handler returned (MPI_ERRORS_ARE_FATAL does not) */
}

/* ---- user classes, codes and strings -------------------------------------- */

static user_code_t *user_code(int code)
{
    int i = code - MPI_ERR_LASTCODE - 1;
    if (i < 0 || i >= __atomic_load_n(&ncodes, __ATOMIC_ACQUIRE))
        return NULL;
    return codes[i];
}

static int add_code(int cls, int *out, const char *call)
{
    user_code_t *x = calloc(1, sizeof(*x));
    if (x == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory", call);
    mpi_table_lock();
    int i = ncodes;
    if (i < MAX_USER_CODES) {
        x->cls = cls < 0 ? MPI_ERR_LASTCODE + 1 + i : cls; /* a new class is its own */
        codes[i] = x;
        __atomic_store_n(&ncodes, i + 1, __ATOMIC_RELEASE); /* R: as above */
    }
    mpi_table_unlock();
    if (i >= MAX_USER_CODES) {
        free(x);
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_INTERN, "%s: %d classes and codes added "
                         "already (the most this library keeps)", call, MAX_USER_CODES);
    }
    *out = MPI_ERR_LASTCODE + 1 + i;
    return MPI_SUCCESS;
}

int MPI_Add_error_class(int *errorclass)
{
    int e = mpi_check_init("MPI_Add_error_class");
    if (e != MPI_SUCCESS)
        return e;
    if (errorclass == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_class: NULL pointer");
    return add_code(-1, errorclass, "MPI_Add_error_class");
}

int MPI_Add_error_code(int errorclass, int *errorcode)
{
    int e = mpi_check_init("MPI_Add_error_code");
    if (e != MPI_SUCCESS)
        return e;
    if (errorcode == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_code: NULL pointer");
    const user_code_t *c = user_code(errorclass);
    bool is_class = mpi_predef_class(errorclass) ||
                    (c != NULL && c->cls == errorclass);
    if (!is_class)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_code: %d is not an error "
                         "class (a predefined one, or one of MPI_Add_error_class)", errorclass);
    return add_code(errorclass, errorcode, "MPI_Add_error_code");
}

int MPI_Add_error_string(int errorcode, const char *string)
{
    int e = mpi_check_init("MPI_Add_error_string");
    if (e != MPI_SUCCESS)
        return e;
    user_code_t *c = user_code(errorcode);
    if (c == NULL || string == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_string: %s",
                         string == NULL ? "NULL string"
                                        : "the code is not one of MPI_Add_error_class / _code "
                                          "(predefined codes keep their strings)");
    if (strlen(string) >= MPI_MAX_ERROR_STRING)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_string: %zu characters "
                         "(MPI_MAX_ERROR_STRING is %d, the terminating NUL included)",
                         strlen(string), MPI_MAX_ERROR_STRING);
    mpi_table_lock();
    strcpy(c->text, string);
    mpi_table_unlock();
    return MPI_SUCCESS;
}

int mpi_last_user_code(void)
{
    return MPI_ERR_LASTCODE + __atomic_load_n(&ncodes, __ATOMIC_ACQUIRE);
}

bool mpi_user_code(int code, int *cls, const char **text)
{
    const user_code_t *c = user_code(code);
    if (c == NULL)
        return false;
    if (cls != NULL)
        *cls = c->cls;
    if (text != NULL)
        *text = c->text;
    return true;
}
