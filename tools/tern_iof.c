/*
 * tern-iof: attach to a running ternrun and print copies of its ranks'
 * output streams, from the moment of attaching until the job ends.
 *
 *   tern-iof --socket PATH [--ranks all|R[,R...]] [--streams stdout,stderr,diag]
 *            [--tag] [--stdin]
 *
 * PATH is what ternrun announces (ternrun -v, --iof-announce FILE, or
 * TERNRUN_IOF_SOCKET in the ranks' environment).  The bytes are written to
 * stdout raw, or with --tag as "[rank,stream] " lines.  With --stdin the
 * tool's stdin becomes the ranks' stdin (ternrun must run with
 * --stdin-tool); a thread copies it to the socket and shuts the socket's
 * sending side at its EOF.  Exit status 0 only when ternrun said the job
 * ended (the end-of-job frame): 1 when dropped, refused or cut off.
 * Protocol: launcher/iof/iof_tool.h.  libc only.
 */
#define _GNU_SOURCE 1
#include "launcher/iof/iof_tool.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char *const stream_name[] = {"stdin", "stdout", "stderr", "diag"};
#define NSTREAMS 4

static void usage(FILE *f)
{
    fprintf(f, "usage: tern-iof --socket PATH [--ranks all|R[,R...]]\n"
               "                [--streams stdout,stderr,diag] [--tag] [--stdin]\n"
               "Print copies of a running ternrun's output streams (default: all\n"
               "ranks, stdout and stderr) until the job ends.  --stdin: send this\n"
               "tool's stdin to the ranks' stdin (the job must run with\n"
               "ternrun --stdin-tool).  Exit status 0 when the job ended, 1 when\n"
               "this tool was refused, dropped or cut off.\n");
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);

        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* 1: got n bytes, 0: clean EOF before the first byte, -1: error/short */
static int read_all(int fd, void *buf, size_t n)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);

        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return got == 0 && r == 0 ? 0 : -1;
        }
        got += (size_t)r;
    }
    return 1;
}

/* --tag: the prefix goes before each line; line_start per (rank, stream) */
static int put_tagged(bool **line_start, size_t *nls, uint32_t rank, uint32_t tag,
                      const char *p, size_t n)
{
    size_t idx = (size_t)rank * NSTREAMS + tag;
    char prefix[64];
    int plen = snprintf(prefix, sizeof(prefix), "[%u,%s] ", rank,
                        tag < NSTREAMS ? stream_name[tag] : "?");

    if (idx >= *nls) {
        size_t nn = idx + 1 + 64;
        bool *ls = realloc(*line_start, nn * sizeof(*ls));

        if (ls == NULL) {
            return -1;
        }
        for (size_t i = *nls; i < nn; i++) {
            ls[i] = true;
        }
        *line_start = ls;
        *nls = nn;
    }
    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        size_t len = nl ? (size_t)(nl - p) + 1 : n;

        if ((*line_start)[idx] && write_all(STDOUT_FILENO, prefix, (size_t)plen) != 0) {
            return -1;
        }
        if (write_all(STDOUT_FILENO, p, len) != 0) {
            return -1;
        }
        (*line_start)[idx] = nl != NULL;
        p += len;
        n -= len;
    }
    return 0;
}

/* the connection ended without the end-of-job frame */
static void cut_off(const char *where)
{
    fprintf(stderr, "tern-iof: ternrun closed the connection before the end of the job%s: "
                    "this tool was dropped (too slow?) or ternrun was stopped\n",
            where);
}

/* --stdin: our stdin to the socket, then shut its sending side (the ranks'
 * EOF).  A write error means ternrun is gone or the job ended: stop. */
static void *push_stdin(void *arg)
{
    int fd = *(int *)arg;
    char buf[64 * 1024];

    for (;;) {
        ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            fprintf(stderr, "tern-iof: reading stdin: %s: ending the ranks' stdin\n",
                    strerror(errno));
        }
        if (n <= 0) {
            shutdown(fd, SHUT_WR);
            return NULL;
        }
        if (write_all(fd, buf, (size_t)n) != 0) {
            return NULL;
        }
    }
}

int main(int argc, char **argv)
{
    const char *path = NULL, *ranks = "all", *streams = "stdout,stderr";
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    bool tag = false, want_stdin = false, *line_start = NULL;
    pthread_t pusher;
    size_t nls = 0, cap = 0;
    char req[TERN_IOF_TOOL_REQ_MAX], *data = NULL;
    int fd, n, rc = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "--tag") == 0) {
            tag = true;
        } else if (strcmp(a, "--stdin") == 0) {
            want_stdin = true;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (i + 1 < argc && strcmp(a, "--socket") == 0) {
            path = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--ranks") == 0) {
            ranks = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--streams") == 0) {
            streams = argv[++i];
        } else {
            fprintf(stderr, "tern-iof: unknown option or missing value: %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (path == NULL) {
        path = getenv("TERNRUN_IOF_SOCKET");
    }
    if (path == NULL) {
        fprintf(stderr, "tern-iof: --socket PATH is required\n");
        usage(stderr);
        return 2;
    }
    if (strchr(ranks, ' ') || strchr(streams, ' ') ||
        snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path) >= (int)sizeof(addr.sun_path)) {
        fprintf(stderr, "tern-iof: bad --socket, --ranks or --streams\n");
        return 2;
    }
    n = snprintf(req, sizeof(req), "%s ranks=%s streams=%s%s\n", TERN_IOF_TOOL_MAGIC, ranks,
                 streams, want_stdin ? " stdin=1" : "");
    if (n >= (int)sizeof(req)) {
        fprintf(stderr, "tern-iof: --ranks or --streams too long\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN); /* a closed socket is an EPIPE, handled */
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        fprintf(stderr, "tern-iof: cannot connect to %s: %s\n", path, strerror(errno));
        return 1;
    }
    if (write_all(fd, req, (size_t)n) != 0) {
        fprintf(stderr, "tern-iof: cannot send the request: %s\n", strerror(errno));
        return 1;
    }
    for (;;) {
        struct tern_iof_frame f;
        int r = read_all(fd, &f, sizeof(f));

        if (r <= 0) {
            cut_off("");
            rc = 1;
            break;
        }
        if (f.rank == TERN_IOF_FRAME_ATTACHED) {
            fprintf(stderr, "tern-iof: attached to %s\n", path);
            if (want_stdin && pthread_create(&pusher, NULL, push_stdin, &fd) == 0) {
                pthread_detach(pusher);
            } else if (want_stdin) {
                fprintf(stderr, "tern-iof: cannot start the stdin thread\n");
                rc = 1;
                break;
            }
            continue;
        }
        if (f.rank == TERN_IOF_FRAME_END) {
            /* the last frame: the job ended and all was sent.  Stop here,
             * not at the EOF that follows: a socket closed with our unread
             * stdin bytes in it ends in ECONNRESET instead */
            break;
        }
        if (f.len > cap) {
            char *d = realloc(data, f.len + 1);

            if (d == NULL) {
                fprintf(stderr, "tern-iof: out of memory\n");
                rc = 1;
                break;
            }
            data = d;
            cap = f.len;
        }
        if (f.len > 0 && read_all(fd, data, f.len) != 1) {
            cut_off(" (in the middle of a frame)");
            rc = 1;
            break;
        }
        if (f.rank == TERN_IOF_FRAME_REFUSED) {
            fprintf(stderr, "tern-iof: ternrun refused this tool: %.*s\n", (int)f.len,
                    f.len ? data : "");
            rc = 1;
            break;
        }
        if ((tag ? put_tagged(&line_start, &nls, f.rank, f.tag, data, f.len)
                 : write_all(STDOUT_FILENO, data, f.len)) != 0) {
            fprintf(stderr, "tern-iof: cannot write output: %s\n", strerror(errno));
            rc = 1;
            break;
        }
    }
    free(data);
    free(line_start);
    close(fd);
    return rc;
}
