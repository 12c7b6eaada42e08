/*
 * MPI environment: init (tern_init: the launcher's PMIx wire-up), finalize,
 * abort, clocks, names and versions.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi/mpi_internal.h"

mpi_state_t mpi;
__thread char mpi_last_error[MPI_MAX_ERROR_STRING];

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    if (mpi.init)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI_Init: called twice");
    if (mpi.finalized)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI_Init: MPI was finalized");
    tern_status_t st = tern_init(&mpi.ctx);
    if (st != TERN_OK) {
        mpi.ctx = NULL;
        return mpi_raise(MPI_COMM_WORLD, mpi_class_of(st), "MPI_Init: %s", tern_last_error());
    }
    mpi.w = tern_context_worker(mpi.ctx);
    int e = mpi_config_load(); /* tern_init checked them: fails only if they changed since */
    if (e != MPI_SUCCESS)
        return e;
    e = mpi_workers_init();
    if (e != MPI_SUCCESS)
        return mpi_raise(MPI_COMM_WORLD, e, "MPI_Init: worker locks");
    e = mpi_reqs_init();
    if (e != MPI_SUCCESS)
        return mpi_raise(MPI_COMM_WORLD, e, "MPI_Init: request table");
    e = mpi_dt_init();
    if (e != MPI_SUCCESS)
        return mpi_raise(MPI_COMM_WORLD, e, "MPI_Init: datatype table");
    e = mpi_comms_init();
    if (e != MPI_SUCCESS)
        return mpi_raise(MPI_COMM_WORLD, e, "MPI_Init: communicator tables");
    /* every level is provided; MPI_THREAD_MULTIPLE turns the worker and
     * table locks on (mt.c) */
    mpi.thread_level = required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE : required;
    if (mpi.thread_level < MPI_THREAD_SINGLE)
        mpi.thread_level = MPI_THREAD_SINGLE;
    mpi.mt = mpi.thread_level == MPI_THREAD_MULTIPLE;
    if (provided != NULL)
        *provided = mpi.thread_level;
    mpi.main_thread = pthread_self();
    mpi.init = 1;
    /* a spawned job connects to its parent (MPI_Comm_get_parent's) */
    return mpi_dyn_init();
}

int MPI_Init(int *argc, char ***argv)
{
    return MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, NULL);
}

int MPI_Finalize(void)
{
    int e = mpi_check_init("MPI_Finalize");
    if (e != MPI_SUCCESS)
        return e;
    /* MPI: the attributes of MPI_COMM_SELF are deleted first (libraries
     * hang their clean-up on them), then MPI_COMM_WORLD's */
    int ae = mpi_attr_comm_delete(MPI_COMM_SELF);
    int we = mpi_attr_comm_delete(MPI_COMM_WORLD);
    if (ae == MPI_SUCCESS)
        ae = we;
    mpi_bsend_drain(); /* MPI: buffered messages are delivered */
    mpi_dyn_finalize(); /* connections waiting on ports: refused */
    mpi_coll_finalize();
    mpi_ctx_drain(); /* MPI_Comm_idup's never waited for: their messages */
    mpi_reap_freed(true);
    mpi_t_finalize_hook(); /* MPI_T's counters and settings as they end */
    mpi_workers_finalize();
    tern_status_t st = tern_finalize(mpi.ctx); /* drains, then a barrier */
    mpi.ctx = NULL;
    mpi.w = NULL;
    mpi_comms_finalize();
    mpi.finalized = 1;
    if (st == TERN_OK)
        return ae; /* a delete callback's error, or MPI_SUCCESS */
    return mpi_raise(MPI_COMM_WORLD, mpi_class_of(st), "MPI_Finalize: %s", tern_last_error());
}

int MPI_Initialized(int *flag)
{
    if (flag == NULL)
        return MPI_ERR_ARG;
    *flag = mpi.init;
    return MPI_SUCCESS;
}

int MPI_Finalized(int *flag)
{
    if (flag == NULL)
        return MPI_ERR_ARG;
    *flag = mpi.finalized;
    return MPI_SUCCESS;
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
    (void)comm; /* the whole job, as MPICH and Open MPI do */
    char msg[64];
    snprintf(msg, sizeof(msg), "MPI_Abort with error code %d", errorcode);
    if (mpi.ctx != NULL)
        tern_abort(mpi.ctx, errorcode, msg);
    _exit(errorcode ? errorcode : 1);
}

double MPI_Wtime(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double MPI_Wtick(void)
{
    struct timespec r;
    clock_getres(CLOCK_MONOTONIC, &r);
    return (double)r.tv_sec + (double)r.tv_nsec * 1e-9;
}

int MPI_Get_processor_name(char *name, int *resultlen)
{
    if (name == NULL || resultlen == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Get_processor_name: NULL argument");
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
        snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int MPI_Get_version(int *version, int *subversion)
{
    if (version == NULL || subversion == NULL)
        return MPI_ERR_ARG;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int MPI_Get_library_version(char *version, int *resultlen)
{
    if (version == NULL || resultlen == NULL)
        return MPI_ERR_ARG;
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "tern MPI %s (MPI %d.%d subset on tern's engine; docs/mpi.md)", PACKAGE_VERSION,
                     MPI_VERSION, MPI_SUBVERSION);
    *resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1;
    return MPI_SUCCESS;
}

int MPI_Query_thread(int *provided)
{
    int e = mpi_check_init("MPI_Query_thread");
    if (e == MPI_SUCCESS && provided != NULL)
        *provided = mpi.thread_level;
    return e;
}

int MPI_Is_thread_main(int *flag)
{
    int e = mpi_check_init("MPI_Is_thread_main");
    if (e == MPI_SUCCESS && flag != NULL)
        *flag = pthread_equal(pthread_self(), mpi.main_thread) != 0;
    return e;
}
