/*
 * Tools attached to a running ternrun (tern-iof): the listening socket, the
 * request of a new tool, and its sink.
 *
 * A tool's sink gets framed copies (iof/iof_tool.h) of the bytes its streams
 * give every other sink, and is written like a non-blocking pipe.  It is
 * never counted by flow control: a tool that does not keep up would hold the
 * ranks back, so once it has TERN_IOF_TOOL_MAX bytes pending it is dropped
 * (socket closed, note on stderr) and the job goes on.  A tool that asked
 * for stdin (only when ternrun keeps it open for tools) feeds the ranks'
 * stdin through the same socket (iof/stdin.c).
 */
#include "launcher/iof/iof_internal.h"
#include "launcher/iof/iof_tool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define TOOL_REQ_WAIT_MS 500 /* the request must follow the connect */
#define STR_(x) #x
#define STR(x) STR_(x)

int tern_iof_listen(struct tern_iof *iof, int fd)
{
    int rc = iof_set_nonblock(fd);

    if (rc != 0) {
        return rc;
    }
    iof->listen_fd = fd;
    return 0;
}

void iof_tool_drop(struct iof_sink *s, const char *why)
{
    fprintf(stderr, "ternrun: iof: dropping attached tool (fd %d): %s\n", s->fd, why);
    s->dead = true;
    iof_buf_consume(&s->buf, s->buf.len);
    if (s->fd >= 0) {
        close(s->fd);
    }
    s->fd = s->user_fd = -1;
}

void iof_tool_put(struct iof_sink *s, int rank, enum tern_iof_tag tag, const char *p, size_t n)
{
    struct tern_iof_frame f = {.rank = (uint32_t)rank, .tag = (uint32_t)tag, .len = (uint32_t)n};

    if (s->buf.len + sizeof(f) + n > TERN_IOF_TOOL_MAX) {
        iof_tool_drop(s, "too slow, its buffer is full");
        return;
    }
    if (iof_buf_append(&s->buf, &f, sizeof(f)) != 0 || iof_buf_append(&s->buf, p, n) != 0) {
        iof_tool_drop(s, "out of memory");
    }
}

/* the request line, read within TOOL_REQ_WAIT_MS into req (NUL-terminated
 * at its '\n'); the bytes read past it (the start of a stdin tool's input)
 * are req[*rest, *rest + *extra).  false if no line came, or it holds a NUL. */
static bool read_request(int fd, char *req, size_t size, size_t *rest, size_t *extra)
{
    struct timespec t0, t;
    size_t len = 0;
    char *nl;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (len + 1 < size && memchr(req, '\n', len) == NULL) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        long left;
        ssize_t n;

        clock_gettime(CLOCK_MONOTONIC, &t);
        left = TOOL_REQ_WAIT_MS - ((t.tv_sec - t0.tv_sec) * 1000 +
                                   (t.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
            return false;
        }
        n = read(fd, req + len, size - 1 - len);
        if (n <= 0) {
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
                continue;
            }
            return false;
        }
        len += (size_t)n;
    }
    nl = memchr(req, '\n', len);
    if (nl == NULL || memchr(req, '\0', (size_t)(nl - req)) != NULL) {
        return false;
    }
    *nl = '\0';
    *rest = (size_t)(nl + 1 - req);
    *extra = len - *rest;
    return true;
}

/* refuse a tool: a REFUSED frame with the reason (best effort: the socket
 * is fresh, its buffer empty), then close */
static void refuse(int fd, const char *why)
{
    struct tern_iof_frame f = {.rank = TERN_IOF_FRAME_REFUSED, .len = (uint32_t)strlen(why)};
    struct iovec iov[2] = {{&f, sizeof(f)}, {(void *)why, f.len}};

    fprintf(stderr, "ternrun: iof: refusing a tool: %s\n", why);
    if (writev(fd, iov, 2) < 0) {
        /* the tool is gone already: nothing to tell */
    }
    close(fd);
}

/* "ranks=..." and "streams=..." of the request into want[rank][tag] */
static int parse_request(struct tern_iof *iof, char *req, bool *want, bool *stdin_wanted)
{
    bool ranks[TERN_IOF_NTAGS] = {0}, all = false, any_rank = false, *rsel;
    char *save = NULL, *word;

    rsel = calloc((size_t)iof->nranks, sizeof(*rsel));
    if (rsel == NULL) {
        return -ENOMEM;
    }
    *stdin_wanted = false;
    if (strncmp(req, TERN_IOF_TOOL_MAGIC " ", strlen(TERN_IOF_TOOL_MAGIC) + 1) != 0) {
        free(rsel);
        return -EPROTO;
    }
    for (word = strtok_r(req + strlen(TERN_IOF_TOOL_MAGIC), " ", &save); word != NULL;
         word = strtok_r(NULL, " ", &save)) {
        char *save2 = NULL, *item;

        if (strncmp(word, "ranks=", 6) == 0) {
            for (item = strtok_r(word + 6, ",", &save2); item; item = strtok_r(NULL, ",", &save2)) {
                char *end;
                long r = strtol(item, &end, 10);

                if (strcmp(item, "all") == 0) {
                    all = true;
                } else if (*end == '\0' && end != item && r >= 0 && r < iof->nranks) {
                    rsel[r] = any_rank = true;
                } else {
                    free(rsel);
                    return -EINVAL;
                }
            }
        } else if (strncmp(word, "streams=", 8) == 0) {
            for (item = strtok_r(word + 8, ",", &save2); item; item = strtok_r(NULL, ",", &save2)) {
                int t;

                for (t = TERN_IOF_STDOUT; t < TERN_IOF_NTAGS; t++) {
                    if (strcmp(item, tern_iof_tag_name((enum tern_iof_tag)t)) == 0) {
                        ranks[t] = true;
                        break;
                    }
                }
                if (t == TERN_IOF_NTAGS) {
                    free(rsel);
                    return -EINVAL;
                }
            }
        } else if (strcmp(word, "stdin=1") == 0) {
            *stdin_wanted = true;
        } else {
            free(rsel);
            return -EINVAL;
        }
    }
    for (int r = 0; r < iof->nranks; r++) {
        for (int t = 0; t < TERN_IOF_NTAGS; t++) {
            want[(size_t)r * TERN_IOF_NTAGS + t] = (all || !any_rank || rsel[r]) && ranks[t];
        }
    }
    free(rsel);
    return 0;
}

/* forget the tools that were dropped: their slots in the streams are reused */
static void purge_dead_tools(struct tern_iof *iof)
{
    for (size_t i = 0; i < (size_t)iof->nranks * TERN_IOF_NTAGS; i++) {
        struct iof_stream *st = &iof->streams[i];
        size_t k = 0;

        for (size_t j = 0; j < st->nsinks; j++) {
            if (!(st->sinks[j]->tool && st->sinks[j]->dead)) {
                st->tagged[k] = st->tagged[j];
                st->sinks[k++] = st->sinks[j];
            }
        }
        st->nsinks = k;
    }
    size_t k = 0;

    for (size_t i = 0; i < iof->nsinks; i++) {
        if (iof->sinks[i]->tool && iof->sinks[i]->dead) {
            iof_sink_free(iof->sinks[i]);
        } else {
            iof->sinks[k++] = iof->sinks[i];
        }
    }
    iof->nsinks = k;
}

/* the source a stdin tool feeds (ternrun --stdin-tool), NULL if none */
static struct iof_push_src *tool_stdin(struct tern_iof *iof)
{
    for (size_t i = 0; i < iof->npush_src; i++) {
        if (iof->push_src[i].tool) {
            return &iof->push_src[i];
        }
    }
    return NULL;
}

void iof_tool_release_stdin(struct tern_iof *iof)
{
    struct iof_push_src *ps = tool_stdin(iof);

    if (ps != NULL && ps->owner != NULL && ps->owner->dead) {
        /* dropped (gone, or too slow at reading its output): its socket is
         * closed already (iof_tool_drop) and what it had sent but we had
         * not read is lost with it, so its input ends here, as when it
         * shuts down: the ranks get EOF rather than wait for more */
        fprintf(stderr, "ternrun: iof: the tool feeding stdin was dropped: ending the ranks' "
                        "stdin\n");
        ps->fd = -1;
        ps->owner = NULL;
        iof_push_data(iof, ps, NULL, 0);
    }
}

/* why a tool asking for stdin cannot have it, NULL if it can */
static const char *stdin_refusal(struct tern_iof *iof)
{
    struct iof_push_src *ps = tool_stdin(iof);

    if (ps == NULL) {
        return "stdin is not open for tools: start ternrun with --stdin-tool";
    }
    if (ps->eof) {
        return "the ranks' stdin has ended already";
    }
    if (ps->owner != NULL) {
        return "another attached tool is feeding stdin";
    }
    return NULL;
}

void iof_tool_accept(struct tern_iof *iof)
{
    static const struct tern_iof_format none = {0};
    struct tern_iof_frame hello = {.rank = TERN_IOF_FRAME_ATTACHED};
    char req[TERN_IOF_TOOL_REQ_MAX], why[TERN_IOF_TOOL_REQ_MAX + 64];
    struct iof_push_src *ps = NULL;
    struct iof_sink *s, **tmp;
    bool *want, stdin_wanted;
    size_t rest, extra;
    int fd;

    fd = accept4(iof->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) {
        return;
    }
    iof_tool_release_stdin(iof);
    want = calloc((size_t)iof->nranks * TERN_IOF_NTAGS, sizeof(*want));
    if (want == NULL) {
        refuse(fd, "ternrun is out of memory");
        return;
    }
    if (!read_request(fd, req, sizeof(req), &rest, &extra)) {
        free(want);
        refuse(fd, "no request line within " STR(TOOL_REQ_WAIT_MS) " ms, or a malformed one");
        return;
    }
    if (parse_request(iof, req, want, &stdin_wanted) != 0) {
        snprintf(why, sizeof(why), "bad request \"%s\" (ranks out of range?)", req);
        free(want);
        refuse(fd, why);
        return;
    }
    if (stdin_wanted) {
        const char *no = stdin_refusal(iof);

        if (no != NULL) {
            free(want);
            refuse(fd, no);
            return;
        }
        ps = tool_stdin(iof);
    }
    purge_dead_tools(iof);
    for (size_t i = 0; i < (size_t)iof->nranks * TERN_IOF_NTAGS; i++) {
        if (want[i] && iof->streams[i].nsinks == IOF_STREAM_SINKS) {
            free(want);
            refuse(fd, "too many tools attached to one stream");
            return;
        }
    }
    tmp = realloc(iof->sinks, (iof->nsinks + 1) * sizeof(*tmp));
    if (tmp == NULL) {
        free(want);
        refuse(fd, "ternrun is out of memory");
        return;
    }
    iof->sinks = tmp;
    if (iof_set_nonblock(fd) != 0 || (s = iof_sink_new(fd, true, &none)) == NULL) {
        free(want);
        refuse(fd, "ternrun cannot set up the connection");
        return;
    }
    s->tool = true;
    s->mode = IOF_SINK_NONBLOCK;
    iof->sinks[iof->nsinks++] = s;
    iof_buf_append(&s->buf, &hello, sizeof(hello));
    for (size_t i = 0; i < (size_t)iof->nranks * TERN_IOF_NTAGS; i++) {
        struct iof_stream *st = &iof->streams[i];

        if (want[i]) {
            st->tagged[st->nsinks] = false;
            st->sinks[st->nsinks++] = s;
        }
    }
    free(want);
    if (ps != NULL) {
        /* from now on the socket's input is the ranks' stdin; what came
         * with the request line is its first bytes */
        ps->fd = fd;
        ps->owner = s;
        if (extra > 0) {
            iof_push_data(iof, ps, req + rest, extra);
        }
    }
    iof_sink_write(s);
}

void tern_iof_end_tools(struct tern_iof *iof)
{
    struct tern_iof_frame end = {.rank = TERN_IOF_FRAME_END};

    for (size_t i = 0; i < iof->nsinks; i++) {
        struct iof_sink *s = iof->sinks[i];

        if (s->tool && !s->dead) {
            /* past the bound too: the last frame is never what drops a tool */
            iof_buf_append(&s->buf, &end, sizeof(end));
            iof_sink_write(s);
        }
    }
}
