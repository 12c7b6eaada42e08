/*
 * ibloop's own tests: the coordinator.
 *
 *   ibloop_test [--list] [--all] [name|group ...]
 *
 * With no names, runs every case that has no group; a name runs that case,
 * a group name ("fault", "netns", ...) runs the cases of the group.  Prints
 * "ok <name>" or "FAIL <name>: why" per case; exits 1 if any failed.
 * The library under test is whatever libibverbs.so.1 the dynamic linker
 * finds: run.sh points LD_LIBRARY_PATH at ibloop.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ibloop_test.h"

#define ERRLEN 1024

struct side *me;

void fail_at(const char *file, int line, const char *fmt, ...)
{
    char msg[ERRLEN - 64];
    va_list ap;

    if (me->err[0])
        return; /* keep the first reason */
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(me->err, ERRLEN, "%c: %s:%d: %s", me->role ? 'B' : 'A',
             strrchr(file, '/') ? strrchr(file, '/') + 1 : file, line, msg);
}

int xsend(const void *p, size_t n)
{
    const char *c = p;

    while (n) {
        ssize_t k = write(me->fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        CHECK(k > 0, "exchange write: %s", strerror(errno));
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

int xrecv(void *p, size_t n, int timeout_ms)
{
    char *c = p;
    uint64_t end = now_us() + (uint64_t)timeout_ms * 1000;

    while (n) {
        struct pollfd pfd = {.fd = me->fd, .events = POLLIN};
        uint64_t t = now_us();
        ssize_t k;
        CHECK(t < end, "timeout waiting for the other side");
        if (poll(&pfd, 1, (int)((end - t) / 1000) + 1) <= 0)
            continue;
        k = read(me->fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        CHECK(k > 0, "the other side is gone (%s)", k ? strerror(errno) : "EOF");
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

int xsync(void)
{
    char b = 's';

    TRY(xsend(&b, 1));
    TRY(xrecv(&b, 1, 20000));
    CHECK(b == 's', "exchange out of step");
    return 0;
}

/* ---- running a case ------------------------------------------------------- */
static void set_env(const char *spec)
{
    char buf[512], *save = NULL, *tok;

    if (!spec)
        return;
    snprintf(buf, sizeof(buf), "%s", spec);
    for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (eq) {
            *eq = 0;
            setenv(tok, eq + 1, 1);
        }
    }
}

static pid_t start_side(const struct tcase *c, int role, int fd, char *err)
{
    pid_t pid = fork();
    struct side s = {.fd = fd, .role = role, .err = err};
    pid_t peer;
    int rc;

    if (pid)
        return pid;
    me = &s;
    set_env(role ? c->env_b : c->env_a);
    s.peer = 0;
    peer = getpid();
    if (xsend(&peer, sizeof(peer)) || xrecv(&peer, sizeof(peer), 10000))
        exit(1);
    s.peer = peer;
    rc = role ? c->b() : c->a();
    if (rc && !err[0])
        snprintf(err, ERRLEN, "%c: failed without a reason", role ? 'B' : 'A');
    exit(rc ? 1 : 0);
}

static bool run_case(const struct tcase *c)
{
    char *err = mmap(NULL, 2 * ERRLEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                     -1, 0);
    int sv[2], st[2] = {0, 0};
    pid_t pid[2];
    bool done[2] = {false, false}, ok = true;
    uint64_t end = now_us() + (uint64_t)(c->timeout_s ? c->timeout_s : 60) * 1000000;

    if (err == MAP_FAILED || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
        printf("FAIL %s: harness: %s\n", c->name, strerror(errno));
        return false;
    }
    memset(err, 0, 2 * ERRLEN);
    fflush(stdout);
    pid[0] = start_side(c, 0, sv[0], err);
    pid[1] = start_side(c, 1, sv[1], err + ERRLEN);
    close(sv[0]);
    close(sv[1]);
    while (!done[0] || !done[1]) {
        for (int i = 0; i < 2; i++)
            if (!done[i] && waitpid(pid[i], &st[i], WNOHANG) == pid[i])
                done[i] = true;
        if (now_us() > end) {
            for (int i = 0; i < 2; i++)
                if (!done[i]) {
                    kill(pid[i], SIGKILL);
                    waitpid(pid[i], &st[i], 0);
                    snprintf(err + i * ERRLEN, ERRLEN, "%c: timed out after %d s",
                             i ? 'B' : 'A', c->timeout_s ? c->timeout_s : 60);
                    st[i] = 1;
                    done[i] = true;
                }
        }
        if (!done[0] || !done[1])
            usleep(2000);
    }
    for (int i = 0; i < 2; i++) {
        bool side_ok = WIFEXITED(st[i]) && WEXITSTATUS(st[i]) == 0;
        if (i == 1 && c->b_killed && WIFSIGNALED(st[i]) && WTERMSIG(st[i]) == SIGKILL &&
            !err[ERRLEN])
            side_ok = true;
        if (!side_ok) {
            printf("%s %s: %s\n", ok ? "FAIL" : "#   and", c->name,
                   err[i * ERRLEN] ? err + i * ERRLEN
                   : WIFSIGNALED(st[i]) ? strsignal(WTERMSIG(st[i]))
                                        : "exited with an error");
            ok = false;
        }
    }
    if (ok)
        printf("ok %s\n", c->name);
    fflush(stdout);
    munmap(err, 2 * ERRLEN);
    return ok;
}

static const struct tcase *const tables[] = {cases_rc, cases_sge, cases_err, cases_ud,
                                             cases_ev};

int main(int argc, char **argv)
{
    bool list = false, all = false;
    int fails = 0, ran = 0, named = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--list"))
            list = true;
        else if (!strcmp(argv[i], "--all"))
            all = true;
        else
            named++;
    }
    for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
        for (const struct tcase *c = tables[t]; c->name; c++) {
            bool want = all || (!named && !c->group);
            for (int i = 1; i < argc; i++)
                if (!strcmp(argv[i], c->name) || (c->group && !strcmp(argv[i], c->group)))
                    want = true;
            if (list) {
                printf("%s%s%s\n", c->name, c->group ? " group=" : "",
                       c->group ? c->group : "");
                continue;
            }
            if (!want)
                continue;
            ran++;
            if (!run_case(c))
                fails++;
        }
    if (!list && named && !ran) {
        fprintf(stderr, "no case matches\n");
        return 2;
    }
    if (!list)
        printf("# %d case(s), %d failed\n", ran, fails);
    return fails ? 1 : 0;
}
