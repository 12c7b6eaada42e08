/*
 * The line assembler of one output stream.
 *
 * Bytes read from a rank's pipe are cut after the last '\n': everything up
 * to it is a run of complete lines, emitted to every sink of the stream in
 * one go (a sink buffer receives a line entirely before any other stream's
 * bytes, so lines of different ranks never mix).  The rest waits in
 * st->partial for its newline, the end of the stream, or TERN_IOF_LINE_MAX
 * bytes: an over-long line is emitted in TERN_IOF_LINE_MAX pieces.  In raw
 * mode everything read is emitted at once.
 *
 * Tags and timestamps are the sinks' business (iof_sink_put): the assembler
 * only says whether an emitted run starts a line.
 */
#include "launcher/iof/iof_internal.h"

#include <string.h>

static void emit(struct iof_stream *st, const char *ts, const char *p, size_t n)
{
    if (n == 0) {
        return;
    }
    for (size_t i = 0; i < st->nsinks; i++) {
        iof_sink_put(st->sinks[i], st->tagged[i], st, ts, p, n, st->line_start);
    }
    st->line_start = p[n - 1] == '\n';
}

static void emit_partial_pieces(struct iof_stream *st, const char *ts)
{
    struct iof_buf *b = &st->partial;

    while (b->len >= TERN_IOF_LINE_MAX) {
        emit(st, ts, b->data + b->off, TERN_IOF_LINE_MAX);
        iof_buf_consume(b, TERN_IOF_LINE_MAX);
    }
}

void iof_line_feed(struct iof_stream *st, bool raw, const char *ts, const char *p, size_t n)
{
    const char *last_nl;
    size_t whole;

    if (raw) {
        emit(st, ts, p, n);
        return;
    }
    last_nl = memrchr(p, '\n', n);
    if (last_nl == NULL) {
        iof_buf_append(&st->partial, p, n);
        emit_partial_pieces(st, ts);
        return;
    }
    whole = (size_t)(last_nl - p) + 1;
    /* the kept start of the first line, then the rest of it and the lines
     * after it: two appends in a row, nothing can come between them */
    if (st->partial.len > 0) {
        emit(st, ts, st->partial.data + st->partial.off, st->partial.len);
        iof_buf_consume(&st->partial, st->partial.len);
    }
    emit(st, ts, p, whole);
    if (whole < n) {
        iof_buf_append(&st->partial, p + whole, n - whole);
        emit_partial_pieces(st, ts);
    }
}

void iof_line_flush(struct iof_stream *st, const char *ts)
{
    if (st->partial.len > 0) {
        emit(st, ts, st->partial.data + st->partial.off, st->partial.len);
        iof_buf_consume(&st->partial, st->partial.len);
    }
}

/* A stream is read only while every sink it feeds has room. */
bool iof_stream_blocked(const struct iof_stream *st)
{
    for (size_t i = 0; i < st->nsinks; i++) {
        if (iof_sink_full(st->sinks[i])) {
            return true;
        }
    }
    return false;
}
