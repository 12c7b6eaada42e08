/*
 * IOF: stdio forwarding between a launcher and the processes of a job.
 *
 * A stream is identified by (rank, tag).  The launcher gives the engine the
 * parent ends of each rank's pipes; the engine reads them in the launcher's
 * event loop and writes whole lines to sinks (ternrun's stdout/stderr,
 * per-rank files, later tools pulling copies).
 *
 * Lines: the bytes of one rank's stream are cut at '\n' and every complete
 * line is appended to a sink in one piece, so two ranks never interleave
 * within a line.  A partial line is kept until its newline, the end of the
 * stream, or TERN_IOF_LINE_MAX bytes; an over-long line is forwarded in
 * TERN_IOF_LINE_MAX pieces (the only case where another rank's line may come
 * between two parts of a line).  In raw mode (progress bars) the bytes of
 * every read() are forwarded as they come, without waiting for a newline.
 *
 * Flow control: each sink buffers at most about TERN_IOF_SINK_HIGH bytes; a
 * stream is read only while all of its sinks are below that mark, so a rank
 * writing faster than its reader blocks in write(): nothing is dropped and
 * memory stays bounded.  stdin data for a rank is bounded the same way.
 *
 * Single-threaded: every call comes from the launcher's main thread.
 * Status: 0 on success, a negative errno value on failure (logged where it
 * is decided).
 */
#ifndef TERN_IOF_H
#define TERN_IOF_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#define TERN_IOF_LINE_MAX (64 * 1024)   /* longest line kept whole */
#define TERN_IOF_SINK_HIGH (1024 * 1024) /* per-sink buffer high-water mark */
#define TERN_IOF_STDIN_HIGH (256 * 1024) /* per-rank stdin buffer */
#define TERN_IOF_ALL_RANKS (-1)
#define TERN_IOF_PUSH_TOOL (-2) /* tern_iof_push source: an attached tool's stdin */

enum tern_iof_tag {
    TERN_IOF_STDIN = 0,
    TERN_IOF_STDOUT,
    TERN_IOF_STDERR,
    TERN_IOF_INTERNAL, /* tern's own diagnostics, shown apart from the job's output */
    TERN_IOF_NTAGS
};

/* Formatting of one sink. */
struct tern_iof_format {
    bool tag;       /* "[rank,stream] " before each line */
    bool timestamp; /* "YYYY-MM-DDTHH:MM:SS.uuuuuu " (local time of arrival) */
};

struct tern_iof;

/* The name of a tag as printed in "[rank,stream]": stdin/stdout/stderr/diag. */
const char *tern_iof_tag_name(enum tern_iof_tag tag);

/* A new engine for nranks ranks; raw: forward bytes as they come instead of
 * whole lines.  NULL when out of memory. */
struct tern_iof *tern_iof_create(int nranks, bool raw);
/* n more ranks (of a job started later): they get the pulls made for
 * TERN_IOF_ALL_RANKS; tags name them "job.rank".  Returns the engine rank
 * of the first, or -errno. */
int tern_iof_add_ranks(struct tern_iof *iof, int n, int job);
/* Closes every descriptor the engine owns (never fds given with own=false). */
void tern_iof_destroy(struct tern_iof *iof);

/* Source of a stream: fd is the read end of the rank's stdout/stderr (or
 * internal) pipe; the engine owns it from now on and makes it non-blocking. */
int tern_iof_source(struct tern_iof *iof, int rank, enum tern_iof_tag tag, int fd);

/* pull: tie stream (rank, tag) to the local fd, formatted with fmt (fmt.tag
 * applies to this pull; the timestamp setting is the first pull's of fd).  rank may
 * be TERN_IOF_ALL_RANKS.  Several pulls of the same fd share one sink (and
 * its ordering).  own: the engine closes fd in tern_iof_destroy. */
int tern_iof_pull(struct tern_iof *iof, int rank, enum tern_iof_tag tag, int fd, bool own,
                  const struct tern_iof_format *fmt);

/* push: tie the local src_fd to the stdin of rank: what is read from src_fd
 * is written to dst_fd (the write end of the rank's stdin pipe, owned by the
 * engine from now on).  Pushing one src_fd to several ranks reads it once and
 * gives each rank the same bytes.  src_fd is never closed by the engine.
 * src_fd TERN_IOF_PUSH_TOOL keeps the ranks' stdin open for a tool: the
 * first tool that attaches asking for stdin (tern-iof --stdin) feeds it,
 * and the end of that tool's input (or its connection) is the ranks' EOF. */
int tern_iof_push(struct tern_iof *iof, int src_fd, int rank, int dst_fd);

/* close: flush, then end the stream.  STDIN: the pending bytes the pipe
 * takes now without blocking are written, the rest is dropped, and the pipe
 * is closed (the rank sees EOF; a rank that exited gets nothing more).  The
 * normal end of stdin is the pushed source's EOF, which closes each pipe once
 * its bytes are written.  Output tags: what is readable now is forwarded, a
 * partial line is emitted, the source is closed. */
void tern_iof_close(struct tern_iof *iof, int rank, enum tern_iof_tag tag);

/* drain_rank: forward what the rank's output pipes hold now (up to a full
 * sink), without ending its streams: called when the rank exited, before
 * the launcher reports it, so the report comes after the rank's output. */
void tern_iof_drain_rank(struct tern_iof *iof, int rank);

/* note: a message of the launcher's own (whole lines) for fd, queued behind
 * the forwarded bytes the sink of fd still holds, so that it shows after the
 * output that came before it.  false when no sink of fd holds anything: the
 * caller writes the line itself (nothing to keep order with). */
bool tern_iof_note(struct tern_iof *iof, int fd, const char *line, size_t n);

/* flush: block until every sink has written what it holds (sinks whose
 * reader went away are dropped).  Returns 0, or -ETIMEDOUT after timeout_ms
 * (< 0: no limit) with bytes still pending. */
int tern_iof_flush(struct tern_iof *iof, long timeout_ms);

/* complete: the job ended.  Stops stdin, reads every output source to EOF,
 * emits partial lines and flushes the sinks.  A source still open but silent
 * for idle_ms (a leftover grandchild holding the pipe) is closed.  Returns
 * early with -EINTR if stop_fd (>= 0) becomes readable. */
int tern_iof_complete(struct tern_iof *iof, long idle_ms, int stop_fd);

/* listen: tools (tern-iof) connect to the listening Unix socket fd, owned
 * by the engine from now on; see iof/iof_tool.h for the protocol.  A tool
 * gets copies of the streams it asks for from the moment it attached; its
 * buffer is bounded (TERN_IOF_TOOL_MAX) and a tool that falls behind is
 * dropped with a note on stderr: a tool never slows the job.  Tools are
 * closed by tern_iof_destroy (after the final drain); a completed drain
 * (tern_iof_complete returning 0) first sends them an end-of-job frame, so
 * a tool tells the job's end from being dropped. */
int tern_iof_listen(struct tern_iof *iof, int fd);
/* the end-of-job frame to every attached tool (tern_iof_complete does it) */
void tern_iof_end_tools(struct tern_iof *iof);

/* Event-loop integration.  pollfd_max: how many entries poll_prepare may
 * fill.  poll_prepare fills pfd[] with what the engine waits for now and
 * returns the count; after poll(), progress handles those same entries. */
size_t tern_iof_pollfd_max(const struct tern_iof *iof);
size_t tern_iof_poll_prepare(struct tern_iof *iof, struct pollfd *pfd, size_t max);
void tern_iof_progress(struct tern_iof *iof, const struct pollfd *pfd, size_t n);

#endif /* TERN_IOF_H */
