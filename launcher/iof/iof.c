/*
 * The IOF engine: streams keyed by (rank, tag), the operations of iof.h, and
 * the glue to the launcher's poll() loop.
 *
 * One round of the loop: sources with room in their sinks are watched for
 * POLLIN, sinks with bytes for POLLOUT (POLLED/NONBLOCK sinks; file sinks
 * are written right after reading), pushed sources for POLLIN while their
 * targets have room, targets with bytes for POLLOUT.  Reading a stream and
 * writing its sinks happen in the same round, so a fast pipeline moves data
 * without waiting for the next poll().
 */
#include "launcher/iof/iof_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const tag_names[TERN_IOF_NTAGS] = {
    [TERN_IOF_STDIN] = "stdin",
    [TERN_IOF_STDOUT] = "stdout",
    [TERN_IOF_STDERR] = "stderr",
    [TERN_IOF_INTERNAL] = "diag",
};

const char *tern_iof_tag_name(enum tern_iof_tag tag)
{
    return (unsigned)tag < TERN_IOF_NTAGS ? tag_names[tag] : "?";
}

static long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct iof_stream *stream_of(struct tern_iof *iof, int rank, enum tern_iof_tag tag)
{
    if (rank < 0 || rank >= iof->nranks || (unsigned)tag >= TERN_IOF_NTAGS) {
        return NULL;
    }
    return &iof->streams[(size_t)rank * TERN_IOF_NTAGS + tag];
}

struct tern_iof *tern_iof_create(int nranks, bool raw)
{
    struct tern_iof *iof = calloc(1, sizeof(*iof));

    if (iof == NULL || nranks < 1) {
        free(iof);
        return NULL;
    }
    iof->nranks = nranks;
    iof->raw = raw;
    iof->streams = calloc((size_t)nranks * TERN_IOF_NTAGS, sizeof(*iof->streams));
    iof->targets = calloc((size_t)nranks, sizeof(*iof->targets));
    if (iof->streams == NULL || iof->targets == NULL) {
        free(iof->streams);
        free(iof->targets);
        free(iof);
        return NULL;
    }
    for (int r = 0; r < nranks; r++) {
        for (int t = 0; t < TERN_IOF_NTAGS; t++) {
            struct iof_stream *st = stream_of(iof, r, (enum tern_iof_tag)t);

            st->rank = r;
            st->label = r;
            st->tag = (enum tern_iof_tag)t;
            st->fd = -1;
            st->line_start = true;
        }
        iof->targets[r].fd = -1;
        iof->targets[r].src = -1;
    }
    iof->listen_fd = -1;
    return iof;
}

int tern_iof_add_ranks(struct tern_iof *iof, int n, int job)
{
    int first = iof->nranks;
    size_t ntot = (size_t)(first + n);
    struct iof_stream *streams;
    struct iof_target *targets;

    if (n < 1) {
        return -EINVAL;
    }
    /* nothing keeps a pointer into these arrays between calls: the watch
     * list is rebuilt by every poll_prepare */
    streams = realloc(iof->streams, ntot * TERN_IOF_NTAGS * sizeof(*streams));
    if (streams == NULL) {
        return -ENOMEM;
    }
    iof->streams = streams;
    targets = realloc(iof->targets, ntot * sizeof(*targets));
    if (targets == NULL) {
        return -ENOMEM;
    }
    iof->targets = targets;
    memset(&streams[(size_t)first * TERN_IOF_NTAGS], 0,
           (size_t)n * TERN_IOF_NTAGS * sizeof(*streams));
    memset(&targets[first], 0, (size_t)n * sizeof(*targets));
    iof->nranks = first + n;
    for (int r = first; r < first + n; r++) {
        for (int t = 0; t < TERN_IOF_NTAGS; t++) {
            struct iof_stream *st = stream_of(iof, r, (enum tern_iof_tag)t);

            st->rank = r;
            st->job = job;
            st->label = r - first;
            st->tag = (enum tern_iof_tag)t;
            st->fd = -1;
            st->line_start = true;
        }
        iof->targets[r].fd = -1;
        iof->targets[r].src = -1;
        for (size_t k = 0; k < iof->nall_pulls; k++) {
            struct iof_stream *st = stream_of(iof, r, iof->all_pulls[k].tag);

            st->tagged[st->nsinks] = iof->all_pulls[k].tagged;
            st->sinks[st->nsinks++] = iof->all_pulls[k].sink;
        }
    }
    return first;
}

void tern_iof_destroy(struct tern_iof *iof)
{
    if (iof == NULL) {
        return;
    }
    for (size_t i = 0; i < (size_t)iof->nranks * TERN_IOF_NTAGS; i++) {
        if (iof->streams[i].fd >= 0) {
            close(iof->streams[i].fd);
        }
        iof_buf_free(&iof->streams[i].partial);
    }
    for (int r = 0; r < iof->nranks; r++) {
        iof_target_close(&iof->targets[r]);
    }
    for (size_t i = 0; i < iof->nsinks; i++) {
        iof_sink_free(iof->sinks[i]);
    }
    free(iof->sinks);
    if (iof->listen_fd >= 0) {
        close(iof->listen_fd);
    }
    free(iof->streams);
    free(iof->targets);
    free(iof->watch);
    free(iof);
}

int tern_iof_source(struct tern_iof *iof, int rank, enum tern_iof_tag tag, int fd)
{
    struct iof_stream *st = stream_of(iof, rank, tag);
    int rc;

    if (st == NULL || tag == TERN_IOF_STDIN || st->fd >= 0) {
        return -EINVAL;
    }
    rc = iof_set_nonblock(fd);
    if (rc != 0) {
        fprintf(stderr, "ternrun: iof: rank %d %s: %s\n", rank, tern_iof_tag_name(tag),
                strerror(-rc));
        return rc;
    }
    st->fd = fd;
    st->last_data_ms = now_ms();
    return 0;
}

static struct iof_sink *sink_for_fd(struct tern_iof *iof, int fd, bool own,
                                    const struct tern_iof_format *fmt)
{
    struct iof_sink *s, **tmp;

    struct stat sb;
    bool known = fstat(fd, &sb) == 0;

    /* one sink per destination: "2>&1" must not give two writers that could
     * cut into each other's lines */
    for (size_t i = 0; i < iof->nsinks; i++) {
        s = iof->sinks[i];
        if (s->tool) {
            continue;
        }
        if (s->user_fd == fd ||
            (known && s->has_id && s->dev == sb.st_dev && s->ino == sb.st_ino)) {
            if (own && fd != s->user_fd) {
                close(fd);
            }
            return s;
        }
    }
    tmp = realloc(iof->sinks, (iof->nsinks + 1) * sizeof(*tmp));
    if (tmp == NULL) {
        return NULL;
    }
    iof->sinks = tmp;
    s = iof_sink_new(fd, own, fmt);
    if (s == NULL) {
        return NULL;
    }
    iof->sinks[iof->nsinks++] = s;
    if (fmt->timestamp) {
        iof->any_timestamp = true;
    }
    return s;
}

int tern_iof_pull(struct tern_iof *iof, int rank, enum tern_iof_tag tag, int fd, bool own,
                  const struct tern_iof_format *fmt)
{
    int first = rank, last = rank;
    struct iof_sink *s;

    if (rank == TERN_IOF_ALL_RANKS) {
        first = 0;
        last = iof->nranks - 1;
    }
    if (tag == TERN_IOF_STDIN || stream_of(iof, first, tag) == NULL ||
        stream_of(iof, last, tag) == NULL) {
        return -EINVAL;
    }
    if (rank == TERN_IOF_ALL_RANKS &&
        iof->nall_pulls == sizeof(iof->all_pulls) / sizeof(iof->all_pulls[0])) {
        return -ENOSPC;
    }
    s = sink_for_fd(iof, fd, own, fmt);
    if (s == NULL) {
        fprintf(stderr, "ternrun: iof: out of memory\n");
        return -ENOMEM;
    }
    if (rank == TERN_IOF_ALL_RANKS) {
        iof->all_pulls[iof->nall_pulls].sink = s;
        iof->all_pulls[iof->nall_pulls].tag = tag;
        iof->all_pulls[iof->nall_pulls++].tagged = fmt->tag;
    }
    for (int r = first; r <= last; r++) {
        struct iof_stream *st = stream_of(iof, r, tag);

        if (st->nsinks == IOF_STREAM_SINKS) {
            return -ENOSPC;
        }
        st->tagged[st->nsinks] = fmt->tag;
        st->sinks[st->nsinks++] = s;
    }
    return 0;
}

bool tern_iof_note(struct tern_iof *iof, int fd, const char *line, size_t n)
{
    struct stat sb;
    bool known = fstat(fd, &sb) == 0;

    for (size_t i = 0; i < iof->nsinks; i++) {
        struct iof_sink *s = iof->sinks[i];

        if (s->tool || s->dead || s->buf.len == 0) {
            continue;
        }
        if (s->user_fd == fd || (known && s->has_id && s->dev == sb.st_dev && s->ino == sb.st_ino)) {
            iof_buf_append(&s->buf, line, n);
            iof_sink_write(s);
            return true;
        }
    }
    return false;
}

int tern_iof_push(struct tern_iof *iof, int src_fd, int rank, int dst_fd)
{
    struct iof_target *t;
    size_t i;
    int rc;

    if (rank < 0 || rank >= iof->nranks || iof->targets[rank].fd >= 0 ||
        (src_fd < 0 && src_fd != TERN_IOF_PUSH_TOOL)) {
        return -EINVAL;
    }
    for (i = 0; i < iof->npush_src; i++) {
        if (src_fd == TERN_IOF_PUSH_TOOL ? iof->push_src[i].tool
                                         : !iof->push_src[i].tool && iof->push_src[i].fd == src_fd) {
            break;
        }
    }
    if (i == iof->npush_src) {
        if (i == IOF_MAX_PUSH_SRC) {
            return -ENOSPC;
        }
        iof->push_src[i] = (struct iof_push_src){.fd = src_fd < 0 ? -1 : src_fd,
                                                 .tool = src_fd == TERN_IOF_PUSH_TOOL,
                                                 .tty = src_fd >= 0 && isatty(src_fd)};
        iof->npush_src++;
    }
    rc = iof_set_nonblock(dst_fd);
    if (rc != 0) {
        return rc;
    }
    t = &iof->targets[rank];
    t->fd = dst_fd;
    t->src = (int)i;
    t->closing = iof->push_src[i].eof;
    return 0;
}

static void write_sinks(struct tern_iof *iof)
{
    for (size_t i = 0; i < iof->nsinks; i++) {
        if (iof->sinks[i]->buf.len > 0) {
            iof_sink_write(iof->sinks[i]);
        }
    }
}

/* One read from the stream's source: > 0 bytes were read, 0 nothing to read
 * now, < 0 end of stream (source closed). */
static int stream_read(struct tern_iof *iof, struct iof_stream *st)
{
    static char chunk[IOF_READ_CHUNK];
    char ts[64] = "";
    ssize_t n;

    if (st->fd < 0) {
        return -1;
    }
    do {
        n = read(st->fd, chunk, sizeof(chunk));
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN) {
        return 0;
    }
    if (iof->any_timestamp) {
        iof_timestamp(ts, sizeof(ts));
    }
    if (n > 0) {
        st->last_data_ms = now_ms();
        iof_line_feed(st, iof->raw, ts, chunk, (size_t)n);
        return 1;
    }
    if (n < 0) {
        fprintf(stderr, "ternrun: iof: reading rank %d's %s: %s\n", st->rank,
                tern_iof_tag_name(st->tag), strerror(errno));
    }
    iof_line_flush(st, ts);
    close(st->fd);
    st->fd = -1;
    return -1;
}

void tern_iof_drain_rank(struct tern_iof *iof, int rank)
{
    if (rank < 0 || rank >= iof->nranks) {
        return;
    }
    for (int t = TERN_IOF_STDOUT; t < TERN_IOF_NTAGS; t++) {
        struct iof_stream *st = stream_of(iof, rank, (enum tern_iof_tag)t);

        /* flow control still holds: stop at a full sink */
        for (int round = 0; round < 1024 && !iof_stream_blocked(st) && stream_read(iof, st) > 0;
             round++) {
        }
    }
    write_sinks(iof);
}

void tern_iof_close(struct tern_iof *iof, int rank, enum tern_iof_tag tag)
{
    struct iof_stream *st;

    if (tag == TERN_IOF_STDIN) {
        if (rank >= 0 && rank < iof->nranks) {
            iof_target_write(&iof->targets[rank]);
            iof_target_close(&iof->targets[rank]);
        }
        return;
    }
    st = stream_of(iof, rank, tag);
    if (st == NULL || st->fd < 0) {
        return;
    }
    /* what is in the pipe now; bounded by the pipe's capacity as long as the
     * writers are gone, and by a round limit otherwise */
    for (int round = 0; round < 1024 && stream_read(iof, st) > 0; round++) {
        write_sinks(iof);
    }
    if (st->fd >= 0) {
        char ts[64] = "";

        if (iof->any_timestamp) {
            iof_timestamp(ts, sizeof(ts));
        }
        iof_line_flush(st, ts);
        close(st->fd);
        st->fd = -1;
    }
    write_sinks(iof);
}

size_t tern_iof_pollfd_max(const struct tern_iof *iof)
{
    return (size_t)iof->nranks * (TERN_IOF_NTAGS + 1) + iof->nsinks + iof->npush_src + 1;
}

static void watch(struct tern_iof *iof, struct pollfd *pfd, size_t *n, int fd, short events,
                  enum iof_watch_kind kind, void *obj)
{
    pfd[*n].fd = fd;
    pfd[*n].events = events;
    pfd[*n].revents = 0;
    iof->watch[*n].kind = kind;
    iof->watch[*n].obj = obj;
    (*n)++;
}

size_t tern_iof_poll_prepare(struct tern_iof *iof, struct pollfd *pfd, size_t max)
{
    size_t n = 0, need = tern_iof_pollfd_max(iof);

    iof_tool_release_stdin(iof);
    if (iof->nwatch_cap < need) {
        struct iof_watch *w = realloc(iof->watch, need * sizeof(*w));

        if (w == NULL) {
            return 0;
        }
        iof->watch = w;
        iof->nwatch_cap = need;
    }
    if (max > need) {
        max = need;
    }
    for (size_t i = 0; i < (size_t)iof->nranks * TERN_IOF_NTAGS && n < max; i++) {
        struct iof_stream *st = &iof->streams[i];

        if (st->fd >= 0 && !iof_stream_blocked(st)) {
            watch(iof, pfd, &n, st->fd, POLLIN, IOF_W_STREAM, st);
        }
    }
    for (size_t i = 0; i < iof->nsinks && n < max; i++) {
        struct iof_sink *s = iof->sinks[i];

        if (iof_sink_pending(s) && s->mode != IOF_SINK_FILE) {
            watch(iof, pfd, &n, s->fd, POLLOUT, IOF_W_SINK, s);
        }
    }
    for (size_t i = 0; i < iof->npush_src && n < max; i++) {
        if (iof->push_src[i].fd >= 0 && iof_push_can_read(iof, &iof->push_src[i])) {
            watch(iof, pfd, &n, iof->push_src[i].fd, POLLIN, IOF_W_PUSH_SRC, &iof->push_src[i]);
        }
    }
    for (int r = 0; r < iof->nranks && n < max; r++) {
        struct iof_target *t = &iof->targets[r];

        if (t->fd >= 0 && t->buf.len > 0) {
            watch(iof, pfd, &n, t->fd, POLLOUT, IOF_W_TARGET, t);
        }
    }
    if (iof->listen_fd >= 0 && n < max) {
        watch(iof, pfd, &n, iof->listen_fd, POLLIN, IOF_W_LISTEN, NULL);
    }
    return n;
}

void tern_iof_progress(struct tern_iof *iof, const struct pollfd *pfd, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        void *obj = iof->watch[i].obj;

        if (pfd[i].revents == 0) {
            continue;
        }
        switch (iof->watch[i].kind) {
        case IOF_W_STREAM:
            stream_read(iof, obj);
            break;
        case IOF_W_SINK:
            iof_sink_write(obj);
            break;
        case IOF_W_PUSH_SRC:
            /* a stdin tool dropped earlier in this pass: its fd is closed */
            iof_tool_release_stdin(iof);
            if (((struct iof_push_src *)obj)->fd >= 0) {
                iof_push_read(iof, obj);
            }
            break;
        case IOF_W_TARGET:
            iof_target_write(obj);
            break;
        case IOF_W_LISTEN:
            iof_tool_accept(iof);
            break;
        }
    }
    write_sinks(iof);
}

static bool sinks_pending(const struct tern_iof *iof, bool tools)
{
    for (size_t i = 0; i < iof->nsinks; i++) {
        if ((tools || !iof->sinks[i]->tool) && iof_sink_pending(iof->sinks[i])) {
            return true;
        }
    }
    return false;
}

int tern_iof_flush(struct tern_iof *iof, long timeout_ms)
{
    long deadline = timeout_ms < 0 ? 0 : now_ms() + timeout_ms;

    write_sinks(iof);
    while (sinks_pending(iof, true)) {
        struct pollfd pfd[64];
        size_t n = 0;
        long wait = -1;

        for (size_t i = 0; i < iof->nsinks && n < 64; i++) {
            if (iof_sink_pending(iof->sinks[i])) {
                pfd[n].fd = iof->sinks[i]->fd;
                pfd[n].events = POLLOUT;
                n++;
            }
        }
        if (timeout_ms >= 0) {
            wait = deadline - now_ms();
            if (wait <= 0) {
                return -ETIMEDOUT;
            }
        }
        if (poll(pfd, n, wait > 1000 || wait < 0 ? 1000 : (int)wait) < 0 && errno != EINTR) {
            return -errno;
        }
        write_sinks(iof);
    }
    return 0;
}

int tern_iof_complete(struct tern_iof *iof, long idle_ms, int stop_fd)
{
    size_t max = tern_iof_pollfd_max(iof) + 1;
    struct pollfd *pfd = calloc(max, sizeof(*pfd));
    int rc = 0;

    long start = now_ms();

    for (int r = 0; r < iof->nranks; r++) {
        tern_iof_close(iof, r, TERN_IOF_STDIN);
    }
    /* silence is counted from the end of the job */
    for (size_t i = 0; i < (size_t)iof->nranks * TERN_IOF_NTAGS; i++) {
        iof->streams[i].last_data_ms = start;
    }
    if (pfd == NULL) {
        return -ENOMEM;
    }
    for (;;) {
        size_t n;
        long now = now_ms(), wait = idle_ms;
        bool open = false;

        /* a source silent for idle_ms while it could be read is abandoned */
        for (size_t i = 0; i < (size_t)iof->nranks * TERN_IOF_NTAGS; i++) {
            struct iof_stream *st = &iof->streams[i];

            if (st->fd < 0) {
                continue;
            }
            if (iof_stream_blocked(st)) {
                st->last_data_ms = now;
            } else if (now - st->last_data_ms >= idle_ms) {
                tern_iof_close(iof, st->rank, st->tag);
                continue;
            } else if (st->last_data_ms + idle_ms - now < wait) {
                wait = st->last_data_ms + idle_ms - now;
            }
            open = true;
        }
        /* tools get what is left in tern_iof_flush, within its timeout */
        if (!open && !sinks_pending(iof, false)) {
            break;
        }
        n = tern_iof_poll_prepare(iof, pfd, max - 1);
        if (stop_fd >= 0) {
            pfd[n].fd = stop_fd;
            pfd[n].events = POLLIN;
            pfd[n].revents = 0;
        }
        if (poll(pfd, n + (stop_fd >= 0), (int)wait) < 0 && errno != EINTR) {
            rc = -errno;
            break;
        }
        if (stop_fd >= 0 && pfd[n].revents != 0) {
            rc = -EINTR;
            break;
        }
        tern_iof_progress(iof, pfd, n);
    }
    free(pfd);
    if (rc == 0) {
        tern_iof_end_tools(iof);
    }
    return rc;
}
