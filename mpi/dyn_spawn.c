/*
 * Spawned jobs: MPI_Comm_spawn, MPI_Comm_spawn_multiple,
 * MPI_Comm_get_parent; MPI_Comm_disconnect; the values of MPI_UNIVERSE_SIZE
 * and MPI_APPNUM (docs/mpi.md, "Dynamic processes").
 *
 * The root opens a port of its own (dyn_port.c) and starts the new job
 * with tern_spawn, or tern_spawn_apps for several programs (one job: one
 * MPI_COMM_WORLD), the ranks' environment naming that port
 * (TERN_MPI_PARENT_PORT), their program's number in the call
 * (TERN_MPI_APPNUM) and the parent's universe (TERN_MPI_UNIVERSE_SIZE).
 * Then the parent's processes accept on the port while the children's
 * MPI_Init connects to it over their MPI_COMM_WORLD: the intercommunicator
 * of both is the spawn's result and the children's MPI_Comm_get_parent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi/dyn.h"

static MPI_Comm parent = MPI_COMM_NULL;
static int appnum, universe;

/* the job's size; a spawned job's, its parent's (the same universe for
 * every job of a spawn tree) */
int mpi_dyn_universe(void)
{
    return universe > 0 ? universe : mpi.comms[MPI_COMM_SLOT_WORLD].size;
}

int mpi_dyn_appnum(void)
{
    return appnum;
}

static int env_int(const char *name)
{
    const char *v = getenv(name);
    return v != NULL ? atoi(v) : 0;
}

int mpi_dyn_init(void)
{
    appnum = env_int("TERN_MPI_APPNUM");
    universe = env_int("TERN_MPI_UNIVERSE_SIZE");
    const char *p = getenv("TERN_MPI_PARENT_PORT");
    if (p == NULL || p[0] == '\0')
        return MPI_SUCCESS;
    char port[MPI_MAX_PORT_NAME];
    snprintf(port, sizeof(port), "%s", p);
    return mpi_dyn_connect(port, NULL, 0, MPI_COMM_WORLD, &parent,
                           "MPI_Init (connecting to the parent job)");
}

void mpi_dyn_forget(MPI_Comm comm)
{
    if (comm == parent)
        parent = MPI_COMM_NULL;
}

int MPI_Comm_get_parent(MPI_Comm *comm)
{
    int e = mpi_check_init("MPI_Comm_get_parent");
    if (e == MPI_SUCCESS && comm == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_get_parent: NULL pointer");
    if (e == MPI_SUCCESS)
        *comm = parent;
    return e;
}

/* ---- spawning ---------------------------------------------------------------------- */

#define ENV_MAX 3

typedef struct app {
    const char **argv;
    char *env[ENV_MAX + 1];
    char wdir[MPI_MAX_INFO_VAL + 1];
} app_t;

/* an info key's value ("" when absent) */
static void info_value(MPI_Info info, const char *key, char *val, size_t len)
{
    int flag = 0;
    val[0] = '\0';
    if (info != MPI_INFO_NULL && MPI_Info_get(info, key, (int)len - 1, val, &flag) == MPI_SUCCESS &&
        !flag)
        val[0] = '\0';
}

/* "host" names this node (tern's launcher starts processes on its own
 * node): its name, its name before the first dot, or localhost */
static bool this_host(const char *h)
{
    char me[256];
    if (strcmp(h, "localhost") == 0 || gethostname(me, sizeof(me)) != 0)
        return strcmp(h, "localhost") == 0;
    me[sizeof(me) - 1] = '\0';
    size_t n = strcspn(me, ".");
    return strcmp(h, me) == 0 || (strlen(h) == n && strncmp(h, me, n) == 0);
}

/* The root's part: arguments checked, the job started; an error class
 * raised on comm (MPI_ERR_SPAWN when it could not be started). */
static int start(const char *call, int count, char *cmds[], char **argvs[], const int maxprocs[],
                 const MPI_Info infos[], MPI_Comm comm, const char *port)
{
    if (count < 1 || cmds == NULL || maxprocs == NULL)
        return mpi_raise(comm, MPI_ERR_ARG, "%s: %d programs, or NULL arrays", call, count);
    app_t *apps = calloc((size_t)count, sizeof(*apps));
    tern_app_t *ta = calloc((size_t)count, sizeof(*ta));
    int e = apps != NULL && ta != NULL ? MPI_SUCCESS
                                       : mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
    int total = 0;
    for (int i = 0; i < count && e == MPI_SUCCESS; i++) {
        MPI_Info info = infos != NULL ? infos[i] : MPI_INFO_NULL;
        char host[MPI_MAX_INFO_VAL + 1];
        if (cmds[i] == NULL || cmds[i][0] == '\0')
            e = mpi_raise(comm, MPI_ERR_ARG, "%s: program %d is NULL or empty", call, i);
        else if (maxprocs[i] < 1 || maxprocs[i] > (1 << 20) - total)
            e = mpi_raise(comm, MPI_ERR_ARG, "%s: %d processes of %s", call, maxprocs[i],
                          cmds[i]);
        else if (!mpi_info_ok(info))
            e = mpi_raise(comm, MPI_ERR_INFO, "%s: info %d of program %d is not an info object",
                          call, info, i);
        if (e != MPI_SUCCESS)
            break;
        info_value(info, "host", host, sizeof(host));
        info_value(info, "wdir", apps[i].wdir, sizeof(apps[i].wdir));
        if (host[0] != '\0' && !this_host(host)) {
            e = mpi_raise(comm, MPI_ERR_SPAWN, "%s: info host=%s: tern's launcher starts "
                          "processes on its own node only", call, host);
            break;
        }
        int nargs = 0;
        char **argv = argvs != MPI_ARGVS_NULL ? argvs[i] : MPI_ARGV_NULL;
        while (argv != MPI_ARGV_NULL && argv[nargs] != NULL)
            nargs++;
        if ((apps[i].argv = calloc((size_t)nargs + 2, sizeof(char *))) == NULL) {
            e = mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
            break;
        }
        apps[i].argv[0] = cmds[i];
        for (int a = 0; a < nargs; a++)
            apps[i].argv[a + 1] = argv[a];
        if (asprintf(&apps[i].env[0], "TERN_MPI_PARENT_PORT=%s", port) < 0 ||
            asprintf(&apps[i].env[1], "TERN_MPI_APPNUM=%d", i) < 0 ||
            asprintf(&apps[i].env[2], "TERN_MPI_UNIVERSE_SIZE=%d", mpi_dyn_universe()) < 0) {
            apps[i].env[0] = apps[i].env[1] = apps[i].env[2] = NULL;
            e = mpi_raise(comm, MPI_ERR_NO_MEM, "%s", call);
            break;
        }
        ta[i] = (tern_app_t){.argv = apps[i].argv, .n = maxprocs[i],
                             .env = (const char *const *)apps[i].env,
                             .wdir = apps[i].wdir[0] ? apps[i].wdir : NULL};
        total += maxprocs[i];
    }
    if (e == MPI_SUCCESS) {
        char job[TERN_JOB_NAME_MAX];
        tern_status_t st = tern_spawn_apps(mpi.ctx, ta, count, job);
        if (st != TERN_OK)
            e = mpi_raise(comm, MPI_ERR_SPAWN, "%s: %s", call, tern_last_error());
    }
    for (int i = 0; apps != NULL && i < count; i++) {
        free(apps[i].argv);
        for (int k = 0; k < ENV_MAX; k++)
            free(apps[i].env[k]);
    }
    free(apps);
    free(ta);
    return e;
}

/* Collective over comm: the root starts the job, every process learns how
 * that went (array_of_errcodes, one code per process started, filled at
 * every process that gives one), then all accept the children's
 * connection on the root's port. */
static int spawn(const char *call, int count, char *cmds[], char **argvs[],
                 const int maxprocs[], const MPI_Info infos[], int root, MPI_Comm comm,
                 MPI_Comm *intercomm, int errcodes[])
{
    int e = mpi_check_comm(comm, call);
    if (e == MPI_SUCCESS)
        e = mpi_check_intra(comm, call);
    if (e == MPI_SUCCESS && intercomm == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: NULL intercommunicator pointer", call);
    if (e == MPI_SUCCESS && (root < 0 || root >= mpi_comm_get(comm)->size))
        e = mpi_raise(comm, MPI_ERR_ROOT, "%s: root %d (the communicator has %d)", call, root,
                      mpi_comm_get(comm)->size);
    if (e != MPI_SUCCESS)
        return e;
    *intercomm = MPI_COMM_NULL;
    char port[MPI_MAX_PORT_NAME] = "";
    int st[2] = {MPI_SUCCESS, 0}; /* the root's outcome, and how many processes */
    if (mpi_comm_get(comm)->rank == root) {
        /* the children's connections come through this process's port:
         * without one (no netmod takes ports) they could not, and the
         * parent would wait for ever */
        char why[MPI_MAX_ERROR_STRING];
        /* as many codes as processes asked for, started or not */
        for (int i = 0; count > 0 && maxprocs != NULL && i < count; i++)
            st[1] += maxprocs[i] > 0 && maxprocs[i] <= (1 << 20) ? maxprocs[i] : 0;
        if (mpi_dyn_self_port(why, sizeof(why)) == NULL)
            st[0] = mpi_raise(comm, MPI_ERR_SPAWN, "%s: the children could not connect to this "
                              "process: %s", call, why);
        else if ((st[0] = mpi_dyn_open_port(port, call)) == MPI_SUCCESS &&
                 (st[0] = start(call, count, cmds, argvs, maxprocs, infos, comm, port)) !=
                     MPI_SUCCESS)
            mpi_dyn_close_port(port);
    }
    e = MPI_Bcast(st, 2, MPI_INT, root, comm);
    if (e != MPI_SUCCESS)
        return e;
    for (int i = 0; errcodes != MPI_ERRCODES_IGNORE && i < st[1]; i++)
        errcodes[i] = st[0] == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_SPAWN;
    if (st[0] != MPI_SUCCESS)
        return mpi_comm_get(comm)->rank == root
                   ? st[0]
                   : mpi_raise(comm, st[0], "%s: the root (rank %d) could not start the "
                               "processes (its error says why)", call, root);
    e = mpi_dyn_accept(port, root, comm, intercomm, call);
    if (mpi_comm_get(comm)->rank == root)
        mpi_dyn_close_port(port);
    return e;
}

int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                   MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    char *cmds[1] = {(char *)(uintptr_t)command};
    char **argvs[1] = {argv};
    return spawn("MPI_Comm_spawn", 1, cmds, argvs, &maxprocs, &info, root, comm, intercomm,
                 array_of_errcodes);
}

int MPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                            const int array_of_maxprocs[], const MPI_Info array_of_info[],
                            int root, MPI_Comm comm, MPI_Comm *intercomm,
                            int array_of_errcodes[])
{
    return spawn("MPI_Comm_spawn_multiple", count, array_of_commands, array_of_argv,
                 array_of_maxprocs, array_of_info, root, comm, intercomm, array_of_errcodes);
}

/* ---- disconnect ----------------------------------------------------------------- */

/* Its operations under way run to their end here, every process of both
 * groups gets there (a barrier), then it is freed.  The connections to
 * processes of other jobs stay (tern_finalize closes them; a later
 * communicator with the same process uses them again). */
int MPI_Comm_disconnect(MPI_Comm *comm)
{
    static const char call[] = "MPI_Comm_disconnect";
    int e = mpi_check_init(call);
    if (e == MPI_SUCCESS && (comm == NULL || mpi_comm_get(*comm) == NULL))
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_COMM, "%s: not a communicator", call);
    if (e == MPI_SUCCESS && (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF))
        e = mpi_raise(*comm, MPI_ERR_COMM, "%s: MPI_COMM_WORLD and MPI_COMM_SELF are not "
                      "disconnected", call);
    if (e != MPI_SUCCESS)
        return e;
    mpi_reqs_settle(*comm);
    if ((e = MPI_Barrier(*comm)) != MPI_SUCCESS)
        return e;
    return MPI_Comm_free(comm);
}
