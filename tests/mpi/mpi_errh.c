/*
 * Error handler objects and user error classes, codes and strings:
 * MPI_Comm_create_errhandler on a duplicate of MPI_COMM_WORLD, called for
 * a bad rank with the right communicator and code, and the call returning
 * that code; MPI_Comm_get_errhandler / MPI_Errhandler_free (the handler
 * stays on the communicator after the user's handle is freed);
 * MPI_Add_error_class / _code / _string, MPI_Error_class and
 * MPI_Error_string of them, MPI_Comm_call_errhandler with a user code.
 */
#include <mpi.h>
#include <string.h>

#include "tests/mpi/mpi_check.h"

static int calls, last_code;
static MPI_Comm last_comm = MPI_COMM_NULL;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_code = *code;
    last_comm = *comm;
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
    CHECK(MPI_Comm_create_errhandler(handler, &eh) == MPI_SUCCESS, "create_errhandler");
    CHECK(MPI_Comm_set_errhandler(dup, eh) == MPI_SUCCESS, "set_errhandler");
    CHECK(MPI_Comm_get_errhandler(dup, &got) == MPI_SUCCESS && got == eh, "get_errhandler");
    CHECK(MPI_Errhandler_free(&got) == MPI_SUCCESS && got == MPI_ERRHANDLER_NULL,
          "free of get's handle");

    /* a send to a rank that does not exist: the handler, then the code */
    int x = 1, cls = -1;
    int e = MPI_Send(&x, 1, MPI_INT, size, 0, dup);
    MPI_Error_class(e, &cls);
    CHECK(calls == 1, "handler called %d times for a bad rank", calls);
    CHECK(cls == MPI_ERR_RANK, "bad rank: class %d", cls);
    CHECK(last_code == e, "the handler got code %d, the call returned %d", last_code, e);
    int cmp = MPI_UNEQUAL;
    MPI_Comm_compare(last_comm, dup, &cmp);
    CHECK(cmp == MPI_IDENT, "the handler got another communicator");

    /* a class, a code of it, a string */
    int ucls = -1, ucode = -1, c2 = -1, len = 0;
    char text[MPI_MAX_ERROR_STRING];
    CHECK(MPI_Add_error_class(&ucls) == MPI_SUCCESS, "add_error_class");
    CHECK(MPI_Add_error_code(ucls, &ucode) == MPI_SUCCESS && ucode != ucls, "add_error_code");
    CHECK(MPI_Add_error_string(ucode, "the widget is on fire") == MPI_SUCCESS,
          "add_error_string");
    CHECK(MPI_Error_class(ucode, &c2) == MPI_SUCCESS && c2 == ucls, "class of a user code: %d",
          c2);
    CHECK(MPI_Error_string(ucode, text, &len) == MPI_SUCCESS &&
              strcmp(text, "the widget is on fire") == 0 && len == (int)strlen(text),
          "string of a user code: '%s' (%d)", text, len);
    /* a predefined class takes a code too */
    int rcode = -1;
    CHECK(MPI_Add_error_code(MPI_ERR_OTHER, &rcode) == MPI_SUCCESS, "code of MPI_ERR_OTHER");
    CHECK(MPI_Error_class(rcode, &c2) == MPI_SUCCESS && c2 == MPI_ERR_OTHER,
          "class of a code of MPI_ERR_OTHER: %d", c2);

    /* MPI_Comm_call_errhandler with the user code */
    CHECK(MPI_Comm_call_errhandler(dup, ucode) == MPI_SUCCESS, "call_errhandler returned");
    CHECK(calls == 2 && last_code == ucode, "call_errhandler: %d calls, code %d", calls,
          last_code);

    /* the user's handle freed: the communicator keeps its handler */
    CHECK(MPI_Errhandler_free(&eh) == MPI_SUCCESS && eh == MPI_ERRHANDLER_NULL, "free");
    e = MPI_Send(&x, 1, MPI_INT, size, 0, dup);
    CHECK(calls == 3 && e != MPI_SUCCESS, "after MPI_Errhandler_free: %d calls", calls);
#ifdef TERN_MPI_H /* tern's and MPICH's answers; Open MPI 4.1 gives others */
    /* a class is a code, its own class */
    CHECK(MPI_Error_class(ucls, &c2) == MPI_SUCCESS && c2 == ucls, "a user class's own class");
    MPI_Errhandler stale = MPI_ERRHANDLER_NULL;
    MPI_Comm_create_errhandler(handler, &stale);
    MPI_Errhandler keep = stale;
    MPI_Errhandler_free(&stale);
    e = MPI_Comm_set_errhandler(MPI_COMM_WORLD, keep);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_ARG, "set of a freed handler: class %d", cls);
    e = MPI_Add_error_code(ucode + 1000, &c2);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_ARG, "add_error_code of no class: class %d", cls);
    e = MPI_Add_error_string(MPI_ERR_RANK, "no");
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_ARG, "add_error_string of a predefined code: class %d", cls);
    CHECK(calls == 3, "the world's MPI_ERRORS_RETURN called the dup's handler");
#endif
    MPI_Comm_free(&dup);
    MPI_Barrier(MPI_COMM_WORLD);
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
