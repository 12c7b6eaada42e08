/*
 * IOF engine internals: byte buffers, sinks, streams, stdin targets.
 * Private to iof/; the launcher uses iof/iof.h only.
 */
#ifndef TERN_IOF_INTERNAL_H
#define TERN_IOF_INTERNAL_H

#include "launcher/iof/iof.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define IOF_READ_CHUNK (64 * 1024) /* bytes taken from a pipe per read() */
#define IOF_STREAM_SINKS 16        /* sinks one stream can feed (tools included) */
#define IOF_MAX_PUSH_SRC 4         /* distinct local fds pushed to stdin */

/* A FIFO of bytes: data[off, off+len) is pending.  Grows on demand; callers
 * bound it (flow control), the buffer itself never refuses. */
struct iof_buf {
    char *data;
    size_t off, len, cap;
};

int iof_buf_append(struct iof_buf *b, const void *p, size_t n);
void iof_buf_consume(struct iof_buf *b, size_t n);
void iof_buf_free(struct iof_buf *b);

enum iof_sink_mode {
    IOF_SINK_FILE,    /* regular file or block device: write() never waits long */
    IOF_SINK_NONBLOCK, /* our own non-blocking description of a pipe */
    IOF_SINK_POLLED,  /* shared tty/socket: write a PIPE_BUF chunk after POLLOUT */
};

struct iof_sink {
    int fd;        /* where bytes are written */
    int user_fd;   /* the fd given to pull (to share sinks) */
    bool own;      /* close user_fd at destroy */
    bool dead;     /* reader went away: bytes are dropped */
    bool tool;     /* an attached tool: framed copies, dropped when too slow */
    bool has_id;   /* dev/ino known: the destination's identity */
    dev_t dev;
    ino_t ino;
    enum iof_sink_mode mode;
    struct tern_iof_format fmt;
    struct iof_buf buf;
};

struct iof_stream;

/* sink.c */
struct iof_sink *iof_sink_new(int fd, bool own, const struct tern_iof_format *fmt);
void iof_sink_free(struct iof_sink *s);
/* append p[0,n) of stream (rank, tag); line_start: p begins a line.  ts is
 * the arrival timestamp text (used when fmt.timestamp); tagged: prefix
 * "[rank,stream] ", "[job.rank,stream] " for a spawned job (the fmt.tag of
 * the pull that tied the stream to s). */
void iof_sink_put(struct iof_sink *s, bool tagged, const struct iof_stream *st, const char *ts,
                  const char *p, size_t n, bool line_start);
/* write what can be written without blocking for long; true if bytes remain */
bool iof_sink_write(struct iof_sink *s);
bool iof_sink_full(const struct iof_sink *s);
bool iof_sink_pending(const struct iof_sink *s);

struct iof_stream {
    int rank;  /* slot: the engine's rank */
    int job;   /* for tags: the job it belongs to (0: the first) */
    int label; /* and its rank there */
    enum tern_iof_tag tag;
    int fd; /* source, -1 when not attached or at EOF */
    long last_data_ms;
    struct iof_sink *sinks[IOF_STREAM_SINKS];
    bool tagged[IOF_STREAM_SINKS]; /* fmt.tag of each pull */
    size_t nsinks;
    struct iof_buf partial; /* line assembler: bytes after the last '\n' */
    bool line_start;        /* the next byte emitted begins a line */
};

/* line.c: feed bytes read from the stream's source; flush emits the partial
 * line (end of stream). */
void iof_line_feed(struct iof_stream *st, bool raw, const char *ts, const char *p, size_t n);
void iof_line_flush(struct iof_stream *st, const char *ts);
bool iof_stream_blocked(const struct iof_stream *st);

struct iof_push_src {
    int fd;   /* -1: a tool source with no tool attached yet */
    bool eof;
    bool tty; /* read only while our process group is in the foreground */
    bool tool; /* TERN_IOF_PUSH_TOOL: fed by the attached tool whose sink is owner */
    struct iof_sink *owner; /* that tool's sink (same socket), NULL when none */
};

struct iof_target {
    int fd;   /* write end of the rank's stdin pipe, -1 when closed */
    int src;  /* index in push_src */
    bool closing; /* close once buf is written */
    struct iof_buf buf;
};

enum iof_watch_kind { IOF_W_STREAM, IOF_W_SINK, IOF_W_PUSH_SRC, IOF_W_TARGET, IOF_W_LISTEN };

struct iof_watch {
    enum iof_watch_kind kind;
    void *obj;
};

struct tern_iof {
    int nranks;
    bool raw;
    bool any_timestamp;
    struct iof_stream *streams; /* nranks * TERN_IOF_NTAGS */
    struct iof_sink **sinks;
    size_t nsinks;
    struct iof_push_src push_src[IOF_MAX_PUSH_SRC];
    size_t npush_src;
    struct iof_target *targets; /* one per rank */
    struct iof_watch *watch;
    size_t nwatch_cap;
    int listen_fd; /* tools connect here (tool.c), -1 if none */
    /* pulls of TERN_IOF_ALL_RANKS, so ranks added later get them too */
    struct {
        struct iof_sink *sink;
        enum tern_iof_tag tag;
        bool tagged;
    } all_pulls[8];
    size_t nall_pulls;
};

/* tool.c */
void iof_tool_accept(struct tern_iof *iof);
void iof_tool_put(struct iof_sink *s, int rank, enum tern_iof_tag tag, const char *p, size_t n);
void iof_tool_drop(struct iof_sink *s, const char *why);
/* forget the stdin tool if it was dropped (call before using push_src) */
void iof_tool_release_stdin(struct tern_iof *iof);

/* stdin.c */
void iof_push_read(struct tern_iof *iof, struct iof_push_src *ps);
/* append p[0,n) (n == 0: the end of the source) to every target fed by ps */
void iof_push_data(struct tern_iof *iof, struct iof_push_src *ps, const char *p, size_t n);
bool iof_push_can_read(const struct tern_iof *iof, const struct iof_push_src *ps);
void iof_target_write(struct iof_target *t);
void iof_target_close(struct iof_target *t);

void iof_timestamp(char *buf, size_t len);
int iof_set_nonblock(int fd);

#endif /* TERN_IOF_INTERNAL_H */
