/*
 * Dynamic processes test for tern's MPI layer (tests/mpi/mpi_inter.sh).
 *
 *   mpi_spawn [PART...]   the errors of bad port names and disconnects,
 *                         then each PART in turn (default: within):
 *     within     (2 ranks or more) the two halves of MPI_COMM_WORLD meet
 *                through a port (MPI_Open_port, the name sent over
 *                MPI_COMM_WORLD, MPI_Comm_accept / _connect), a connect
 *                that no accept takes gives up after its info's "timeout"
 *                (MPI_ERR_PORT; the accept then skips its withdrawn
 *                request), a closed port refuses, then ranks 0 and 1 meet
 *                through MPI_Comm_join
 *                over a TCP connection of their own
 *     spawn      MPI_Comm_spawn of 3 children (point to point and
 *                collectives across, MPI_Intercomm_merge,
 *                MPI_Comm_disconnect, their MPI_Comm_get_parent, MPI_APPNUM,
 *                MPI_UNIVERSE_SIZE the parent's), MPI_Comm_spawn_multiple of
 *                two programs into one job (argv, MPI_APPNUM, info "wdir"),
 *                failures (MPI_ERR_SPAWN, errcodes filled, info "host")
 *     refused    (tern, where no netmod takes ports: TERN_NETMODS=shm)
 *                MPI_Comm_spawn fails at once with MPI_ERR_SPAWN
 *     strangers  two jobs spawned apart, which never met, meet through a
 *                port published in the name service (MPI_Publish_name,
 *                _Lookup_name, _Unpublish_name and their errors), then
 *                their rank 0s through MPI_Comm_join
 *
 * The spawned roles (argv[1]): child, multi, server, client.  Every
 * process prints "ok <role> R of N" (the first job's: "ok rank R of N") or
 * "FAIL ..." lines.  Plain MPI.  Debian's MPICH 4.0.2 (ch4:ucx) has no
 * dynamic processes ("not supported with ucx netmod"); Open MPI 4.1
 * passes "spawn" (its runtime here has no accept / connect).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/mpi/mpi_check.h"

static const char *role = "rank";

/* an error of class cls: exactly under tern; another MPI may give another
 * class (Open MPI 4.1 answers MPI_ERR_INTERN for a bad port name) */
static void expect_class(int e, int cls, const char *what)
{
    int c = -1;
    if (e != MPI_SUCCESS)
        MPI_Error_class(e, &c);
#ifndef TERN_MPI_H
    if (cls != MPI_SUCCESS) {
        CHECK(e != MPI_SUCCESS, "%s succeeded", what);
        return;
    }
#endif
    CHECK(c == cls || (c == -1 && cls == MPI_SUCCESS), "%s: class %d, expected %d", what, c,
          cls);
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

/* MPI_UNIVERSE_SIZE (-1: not set) */
static int universe(void)
{
    int *v, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag);
    return flag ? *v : -1;
}

/* Across an intercommunicator: each process sends its world rank to every
 * remote process and gets theirs (any source); a bcast from local rank 0 of
 * side A (a = this side is A), an allreduce, and a merge whose ranks agree. */
static void across(MPI_Comm ic, int a, const char *what)
{
    int ln = -1, rn = -1, me = -1, flag = 0;
    MPI_Comm_size(ic, &ln);
    MPI_Comm_rank(ic, &me);
    MPI_Comm_remote_size(ic, &rn);
    MPI_Comm_test_inter(ic, &flag);
    CHECK(flag && ln > 0 && rn > 0, "%s: inter %d, sizes %d / %d", what, flag, ln, rn);
    if (!flag || ln <= 0 || rn <= 0)
        return;
    /* the remote world ranks, known by asking */
    int *rw = malloc(sizeof(int) * (size_t)rn), *got = malloc(sizeof(int) * (size_t)rn);
    MPI_Allgather(&rank, 1, MPI_INT, rw, 1, MPI_INT, ic);
    MPI_Request *q = malloc(sizeof(MPI_Request) * 2 * (size_t)rn);
    MPI_Status *st = malloc(sizeof(MPI_Status) * 2 * (size_t)rn);
    for (int j = 0; j < rn; j++) {
        MPI_Irecv(&got[j], 1, MPI_INT, MPI_ANY_SOURCE, 9, ic, &q[j]);
        MPI_Isend(&rank, 1, MPI_INT, j, 9, ic, &q[rn + j]);
    }
    MPI_Waitall(2 * rn, q, st);
    for (int j = 0; j < rn; j++)
        CHECK(st[j].MPI_SOURCE >= 0 && st[j].MPI_SOURCE < rn && got[j] == rw[st[j].MPI_SOURCE],
              "%s: from remote %d got %d", what, st[j].MPI_SOURCE, got[j]);
    /* a bcast from side A's rank 0, of 100000 ints (a rendezvous) */
    int n = 100000, *buf = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        buf[i] = a && me == 0 ? i * 3 : -1;
    MPI_Bcast(buf, n, MPI_INT, a ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, ic);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += buf[i] != (a && me != 0 ? -1 : i * 3);
    CHECK(bad == 0, "%s: bcast: %d bad", what, bad);
    int sum = -1, want = 0;
    for (int j = 0; j < rn; j++)
        want += rw[j] + 1;
    int mine = rank + 1;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, ic);
    CHECK(sum == want, "%s: allreduce %d, expected %d", what, sum, want);
    MPI_Comm m;
    MPI_Intercomm_merge(ic, !a, &m);
    int ms = -1, mr = -1;
    MPI_Comm_size(m, &ms);
    MPI_Comm_rank(m, &mr);
    CHECK(ms == ln + rn && mr == (a ? me : rn + me), "%s: merged size %d rank %d", what, ms, mr);
    int total = -1;
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, m);
    MPI_Comm_free(&m);
    free(rw);
    free(got);
    free(q);
    free(st);
    free(buf);
}

/* ---- within the job ----------------------------------------------------------------- */

/* a TCP connection between this process and peer (world rank) of comm:
 * the lower one listens on 127.0.0.1 and sends its port over comm */
static int tcp_pair(int peer, MPI_Comm comm, int listener)
{
    int fd = -1;
    if (listener) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof(a);
        if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 1) != 0 ||
            getsockname(l, (struct sockaddr *)&a, &len) != 0) {
            CHECK(0, "listen: %s", strerror(errno));
            int zero = 0;
            MPI_Send(&zero, 1, MPI_INT, peer, 4, comm);
            return -1;
        }
        int port = ntohs(a.sin_port);
        MPI_Send(&port, 1, MPI_INT, peer, 4, comm);
        fd = accept(l, NULL, NULL);
        close(l);
    } else {
        int port = 0;
        MPI_Recv(&port, 1, MPI_INT, peer, 4, comm, MPI_STATUS_IGNORE);
        if (port == 0)
            return -1;
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
            close(fd);
            fd = -1;
        }
    }
    CHECK(fd >= 0, "tcp pair with %d: %s", peer, strerror(errno));
    return fd;
}

/* join over fd with the process whose world rank is other */
static void join(int fd, int other, const char *what)
{
    MPI_Comm j = MPI_COMM_NULL;
    int e = MPI_Comm_join(fd, &j);
    CHECK(e == MPI_SUCCESS && j != MPI_COMM_NULL, "%s: MPI_Comm_join: %d", what, e);
    if (e != MPI_SUCCESS)
        return;
    int rs = -1, them = -1;
    MPI_Comm_remote_size(j, &rs);
    CHECK(rs == 1, "%s: join remote size %d", what, rs);
    MPI_Sendrecv(&rank, 1, MPI_INT, 0, 1, &them, 1, MPI_INT, 0, 1, j, MPI_STATUS_IGNORE);
    CHECK(them == other, "%s: join: the other end says %d, expected %d", what, them, other);
    MPI_Comm_disconnect(&j);
    CHECK(j == MPI_COMM_NULL, "%s: disconnect left a handle", what);
}

static void within(void)
{
    char port[MPI_MAX_PORT_NAME];
    int half = size / 2, lower = rank < half;
    MPI_Comm local, ic;
    MPI_Comm_split(MPI_COMM_WORLD, lower, rank, &local);
    /* the upper half's rank 0 (world half) opens the port, sends its name
     * to the lower half's rank 0; their groups accept / connect */
    if (rank == half) {
        MPI_Open_port(MPI_INFO_NULL, port);
        MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, half, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (lower)
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, local, &ic);
    else
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, local, &ic);
    across(ic, !lower, "ports within the job");
    MPI_Comm_disconnect(&ic);
    /* a port closed (its name sent only then) refuses a connection while
     * its process accepts on another port, which the group then connects
     * to */
    char port2[MPI_MAX_PORT_NAME];
    if (rank == half) {
        MPI_Close_port(port);
        MPI_Open_port(MPI_INFO_NULL, port2);
        MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
        MPI_Send(port2, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, half, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(port2, MPI_MAX_PORT_NAME, MPI_CHAR, half, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (lower) {
#ifdef TERN_MPI_H /* another MPI may wait for an answer there */
        MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
        /* nobody accepts yet (the upper half waits for our word): the
         * connect gives up after its info's timeout, MPI_ERR_PORT; the
         * accept below then skips the withdrawn request */
        MPI_Info to;
        MPI_Info_create(&to);
        MPI_Info_set(to, "timeout", "1");
        expect_class(MPI_Comm_connect(port2, to, 0, local, &ic), MPI_ERR_PORT,
                     "connect with no accept within its timeout");
        CHECK(ic == MPI_COMM_NULL, "a connect that timed out gave a communicator");
        MPI_Info_set(to, "timeout", "-3");
        expect_class(MPI_Comm_connect(port2, to, 0, local, &ic), MPI_ERR_INFO_VALUE,
                     "connect with a negative timeout");
        MPI_Info_free(&to);
        if (rank == 0)
            MPI_Send(&rank, 1, MPI_INT, half, 5, MPI_COMM_WORLD);
        expect_class(MPI_Comm_connect(port, MPI_INFO_NULL, 0, local, &ic), MPI_ERR_PORT,
                     "connect to a closed port");
        CHECK(ic == MPI_COMM_NULL, "connect to a closed port gave a communicator");
        MPI_Comm_set_errhandler(local, MPI_ERRORS_ARE_FATAL);
#endif
        MPI_Comm_connect(port2, MPI_INFO_NULL, 0, local, &ic);
    } else {
#ifdef TERN_MPI_H
        int go = -1;
        if (rank == half)
            MPI_Recv(&go, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#endif
        MPI_Comm_accept(port2, MPI_INFO_NULL, 0, local, &ic);
    }
    int rs = -1;
    MPI_Comm_remote_size(ic, &rs);
    CHECK(rs == (lower ? size - half : half), "the second port: remote size %d", rs);
    MPI_Comm_disconnect(&ic);
    if (rank == half)
        MPI_Close_port(port2);
    MPI_Comm_free(&local);
    /* join: world ranks 0 and 1 over a TCP connection of theirs */
    if (rank < 2) {
        int fd = tcp_pair(!rank, MPI_COMM_WORLD, rank == 0);
        if (fd >= 0) {
            join(fd, !rank, "join within the job");
            close(fd);
        }
    }
}

static void errors(void)
{
    char port[MPI_MAX_PORT_NAME];
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    expect_class(MPI_Comm_connect("no such port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &c),
                 MPI_ERR_PORT, "connect to a name that is no port");
    CHECK(c == MPI_COMM_NULL, "a failed connect gave a communicator");
#ifdef TERN_MPI_H
    /* MPICH 4.0.2 waits for a connection on a name that is not its port */
    expect_class(MPI_Comm_accept("no such port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &c),
                 MPI_ERR_PORT, "accept on a name that is no port");
    expect_class(MPI_Close_port("tern-mpi:0123456789abcdef:0:1:-"), MPI_ERR_PORT,
                 "close a port of another process");
    expect_class(MPI_Comm_get_parent(NULL), MPI_ERR_ARG, "get_parent(NULL)");
#endif
    MPI_Open_port(MPI_INFO_NULL, port);
    expect_class(MPI_Close_port(port), MPI_SUCCESS, "close an open port");
    expect_class(MPI_Comm_disconnect(&c), MPI_ERR_COMM, "disconnect MPI_COMM_NULL");
#ifdef TERN_MPI_H /* MPICH 4.0.2 disconnects it, then asserts in MPI_Finalize */
    MPI_Comm w = MPI_COMM_WORLD;
    expect_class(MPI_Comm_disconnect(&w), MPI_ERR_COMM, "disconnect MPI_COMM_WORLD");
#endif
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* ---- jobs of its own ---------------------------------------------------------------- */

static char self[PATH_MAX];

static void spawn_children(void)
{
    char *args[] = {"child", NULL};
    int codes[3] = {-1, -1, -1}, e;
    MPI_Comm ic;
    e = MPI_Comm_spawn(self, args, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, codes);
    CHECK(e == MPI_SUCCESS, "MPI_Comm_spawn: %d", e);
    if (e != MPI_SUCCESS)
        return;
    for (int i = 0; i < 3; i++)
        CHECK(codes[i] == MPI_SUCCESS, "spawn: errcode %d is %d", i, codes[i]);
    int rs = -1;
    MPI_Comm_remote_size(ic, &rs);
    CHECK(rs == 3, "spawn: remote size %d", rs);
    int u = universe();
    MPI_Bcast(&u, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
    across(ic, 1, "spawn (parent)");
    MPI_Comm_disconnect(&ic);
    CHECK(ic == MPI_COMM_NULL, "disconnect left a handle");

    /* two programs, one job: 1 x "multi a", 2 x "multi b" in / */
    char *cmds[2] = {self, self};
    char *a0[] = {"multi", "a", NULL}, *a1[] = {"multi", "b", NULL};
    char **argvs[2] = {a0, a1};
    int np[2] = {1, 2}, mcodes[3];
    MPI_Info infos[2];
    MPI_Info_create(&infos[1]);
    MPI_Info_set(infos[1], "wdir", "/");
    infos[0] = MPI_INFO_NULL;
    e = MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &ic, mcodes);
    MPI_Info_free(&infos[1]);
    CHECK(e == MPI_SUCCESS, "MPI_Comm_spawn_multiple: %d", e);
    if (e != MPI_SUCCESS)
        return;
    MPI_Comm_remote_size(ic, &rs);
    CHECK(rs == 3, "spawn_multiple: remote size %d", rs);
    MPI_Bcast(&u, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
    across(ic, 1, "spawn_multiple (parent)");
    MPI_Comm_disconnect(&ic);

    /* failures: every errcode MPI_ERR_SPAWN, no communicator (Open MPI
     * 4.1 ends the job instead) */
#ifdef TERN_MPI_H
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bad[2] = {-1, -1};
    e = MPI_Comm_spawn("/nonexistent/tern-no-such-program", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0,
                       MPI_COMM_WORLD, &ic, bad);
    expect_class(e, MPI_ERR_SPAWN, "spawn of a missing program");
    CHECK(ic == MPI_COMM_NULL && bad[0] == MPI_ERR_SPAWN && bad[1] == MPI_ERR_SPAWN,
          "spawn of a missing program: errcodes %d %d", bad[0], bad[1]);
    MPI_Info h;
    MPI_Info_create(&h);
    MPI_Info_set(h, "host", "tern-no-such-host.invalid");
    e = MPI_Comm_spawn(self, args, 1, h, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
    expect_class(e, MPI_ERR_SPAWN, "spawn on another host");
    MPI_Info_free(&h);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
#endif
}

/* where no netmod takes ports (TERN_NETMODS=shm): the children could not
 * connect to their parent, so the spawn is refused at once, MPI_ERR_SPAWN
 * and every errcode so, rather than a parent waiting for ever (tern) */
static void refused(void)
{
    char *args[] = {"child", NULL};
    int codes[2] = {-1, -1};
    MPI_Comm ic = MPI_COMM_WORLD;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int e = MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, codes);
    expect_class(e, MPI_ERR_SPAWN, "spawn where no netmod takes ports");
    CHECK(ic == MPI_COMM_NULL && codes[0] == MPI_ERR_SPAWN && codes[1] == MPI_ERR_SPAWN,
          "refused spawn: errcodes %d %d", codes[0], codes[1]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* a server job and a client job, spawned apart (each from rank 0 alone,
 * over MPI_COMM_SELF), meet through a port in the name service; their
 * rank 0s then join over a TCP connection published the same way */
static void spawn_strangers(void)
{
    if (rank != 0)
        return;
    MPI_Comm s, c;
    char *sa[] = {"server", NULL}, *ca[] = {"client", NULL};
    MPI_Comm_spawn(self, sa, 2, MPI_INFO_NULL, 0, MPI_COMM_SELF, &s, MPI_ERRCODES_IGNORE);
    MPI_Comm_spawn(self, ca, 2, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c, MPI_ERRCODES_IGNORE);
    MPI_Comm_disconnect(&s);
    MPI_Comm_disconnect(&c);
}

/* a lookup retried while the other job has not published yet (bounded) */
static int lookup(const char *service, char *port)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int e = MPI_ERR_NAME;
    for (int i = 0; i < 3000 && e != MPI_SUCCESS; i++) {
        e = MPI_Lookup_name(service, MPI_INFO_NULL, port);
        if (e != MPI_SUCCESS)
            sleep_ms(10);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    CHECK(e == MPI_SUCCESS, "lookup of %s: %d", service, e);
    return e;
}

static void server(void)
{
    char port[MPI_MAX_PORT_NAME] = "", where[64];
    MPI_Comm ic;
    if (rank == 0) {
        MPI_Open_port(MPI_INFO_NULL, port);
        MPI_Publish_name("tern-mpi-spawn-test", MPI_INFO_NULL, port);
        /* a second publish of the same name is refused */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        expect_class(MPI_Publish_name("tern-mpi-spawn-test", MPI_INFO_NULL, port),
                     MPI_ERR_SERVICE, "publish twice");
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic);
    across(ic, 1, "ports between jobs (server)");
    MPI_Comm_disconnect(&ic);
    if (rank == 0) {
        MPI_Unpublish_name("tern-mpi-spawn-test", MPI_INFO_NULL, port);
        MPI_Close_port(port);
        /* join with the client's rank 0: a TCP listener published */
        int l = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof(a);
        if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 1) != 0 ||
            getsockname(l, (struct sockaddr *)&a, &len) != 0) {
            CHECK(0, "listen: %s", strerror(errno));
            snprintf(where, sizeof(where), "0");
        } else {
            snprintf(where, sizeof(where), "%d", ntohs(a.sin_port));
        }
        MPI_Publish_name("tern-mpi-join-test", MPI_INFO_NULL, where);
        int fd = l >= 0 ? accept(l, NULL, NULL) : -1;
        if (l >= 0)
            close(l);
        if (fd >= 0) {
            join(fd, 0, "join between jobs (server)");
            close(fd);
        }
        MPI_Unpublish_name("tern-mpi-join-test", MPI_INFO_NULL, where);
    }
}

static void client(void)
{
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm ic;
    int e = MPI_SUCCESS;
    if (rank == 0) {
        e = lookup("tern-mpi-spawn-test", port);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        char none[MPI_MAX_PORT_NAME];
        expect_class(MPI_Lookup_name("tern-mpi-no-such-service", MPI_INFO_NULL, none),
                     MPI_ERR_NAME, "lookup of a name nobody published");
        expect_class(MPI_Unpublish_name("tern-mpi-no-such-service", MPI_INFO_NULL, port),
                     MPI_ERR_SERVICE, "unpublish of a name nobody published");
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    MPI_Bcast(&e, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (e != MPI_SUCCESS)
        return;
    MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic);
    across(ic, 0, "ports between jobs (client)");
    MPI_Comm_disconnect(&ic);
    if (rank == 0) {
        char where[MPI_MAX_PORT_NAME];
        if (lookup("tern-mpi-join-test", where) != MPI_SUCCESS)
            return;
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(where))};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
            CHECK(0, "connect to the server's listener: %s", strerror(errno));
        } else {
            join(fd, 0, "join between jobs (client)");
        }
        if (fd >= 0)
            close(fd);
    }
}

static void child(MPI_Comm parent, const char *what, int want_app)
{
    int *v, flag = 0, prs = -1, theirs = -2, mine = universe();
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag);
    CHECK(flag && *v == want_app, "%s: MPI_APPNUM %d (flag %d), expected %d", what,
          flag ? *v : -1, flag, want_app);
    /* the parent's universe is its children's */
    MPI_Bcast(&theirs, 1, MPI_INT, 0, parent);
    CHECK(mine == theirs, "%s: MPI_UNIVERSE_SIZE %d, the parent's %d", what, mine, theirs);
    MPI_Comm_remote_size(parent, &prs);
    CHECK(prs >= 1, "%s: the parent has %d", what, prs);
    across(parent, 0, what);
    MPI_Comm_disconnect(&parent);
    MPI_Comm p2;
    MPI_Comm_get_parent(&p2);
    CHECK(p2 == MPI_COMM_NULL, "%s: get_parent after disconnect", what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    const char *mode = argc > 1 ? argv[1] : "";
    if (parent == MPI_COMM_NULL) {
        if (realpath(argv[0], self) == NULL)
            snprintf(self, sizeof(self), "%s", argv[0]);
        errors();
        for (int i = 1; i < (argc > 1 ? argc : 2); i++) {
            const char *part = argc > 1 ? argv[i] : "within";
            if (strcmp(part, "within") == 0 && size >= 2)
                within();
            else if (strcmp(part, "spawn") == 0)
                spawn_children();
            else if (strcmp(part, "strangers") == 0)
                spawn_strangers();
            else if (strcmp(part, "refused") == 0)
                refused();
            else if (strcmp(part, "within") != 0)
                CHECK(0, "unknown part %s", part);
        }
    } else if (strcmp(mode, "child") == 0) {
        role = "child";
        child(parent, "child", 0);
    } else if (strcmp(mode, "multi") == 0) {
        role = "multi";
        int b = argc > 2 && strcmp(argv[2], "b") == 0;
        char cwd[PATH_MAX] = "";
        CHECK(size == 3, "multi: one job of 3, not %d", size);
        CHECK(argc == 3 && (b ? rank >= 1 : rank == 0), "multi: argv %s at rank %d",
              argc > 2 ? argv[2] : "(none)", rank);
        if (b)
            CHECK(getcwd(cwd, sizeof(cwd)) != NULL && strcmp(cwd, "/") == 0,
                  "multi b: in %s, not /", cwd);
        child(parent, "multi", b);
    } else if (strcmp(mode, "server") == 0 || strcmp(mode, "client") == 0) {
        role = mode;
        MPI_Comm_disconnect(&parent); /* the jobs meet without their parent */
        if (strcmp(mode, "server") == 0)
            server();
        else
            client();
    } else {
        CHECK(0, "spawned with mode \"%s\"", mode);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (failures == 0)
        printf("ok %s %d of %d\n", role, rank, size);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
