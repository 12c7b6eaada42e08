/* soak: one window of outstanding operations — the sends to a peer, the
 * receives from a peer, or the receives of the wildcard space from any
 * source — posted in stream order within a byte budget and tested oldest
 * first. */
#include <stdlib.h>
#include <string.h>

#include "tests/soak/soak.h"

#define TESTS_PENDING 2 /* incomplete requests tested per window and pass */

/* A wildcard receive finished: the source it names says whose stream it
 * must be next in. */
static void finish_wild(soak_t *s, soak_slot_t *sl, tern_status_t st)
{
    int src = sl->info.source;
    if (st != TERN_OK && st != TERN_ERR_TRUNCATED) {
        s->c.errors++;
        soak_report(s, "receive from any source in space %u failed: %s (%s)",
                    soak_space_value((unsigned)s->wild), tern_strerror(st), tern_last_error());
        return;
    }
    if (src < 0 || src >= s->size || src == s->rank) {
        s->c.corrupt++;
        soak_report(s, "receive from any source in space %u: source %d", sl->m.space, src);
        return;
    }
    uint64_t seq = s->peers[src].wild_next;
    if (seq >= soak_count(s, src, s->rank) + s->o.spaces) {
        s->c.corrupt++;
        soak_report(s, "from %d space %u: a message (tag %d, %zu bytes) past the end marker", src,
                    sl->m.space, sl->info.tag, sl->info.length);
        return;
    }
    soak_msg_t m;
    soak_msg(s, src, s->rank, seq, &m);
    soak_check(s, src, seq, &m, st, &sl->info, sl->buf, sl->m.len);
    s->peers[src].wild_next = soak_wild_next(s, src, seq + 1);
}

/* An operation finished with st: check it, give its buffer back. */
static void finish(soak_t *s, int p, soak_window_t *win, soak_slot_t *sl, tern_status_t st,
                   soak_kind_t kind)
{
    if (kind == SOAK_WILD) {
        finish_wild(s, sl, st);
    } else if (kind == SOAK_RX) {
        soak_check(s, p, sl->seq, &sl->m, st, &sl->info, sl->buf, sl->m.len);
    } else if (st == TERN_OK) {
        s->c.sent += sl->m.marker ? 0 : 1;
    } else {
        s->c.errors++;
        soak_report(s, "send to %d seq %llu (%zu bytes) failed: %s (%s)", p,
                    (unsigned long long)sl->seq, sl->m.len, tern_strerror(st), tern_last_error());
    }
    free(sl->buf);
    sl->buf = NULL;
    win->bytes -= sl->m.len;
    sl->done = true;
}

/* The engine completed sl with st.  A wildcard receive is checked only when
 * every one posted before it is: the k-th posted is matched to the k-th
 * message of the space from any source, but a rendezvous one matched first
 * may complete after eager ones matched later, and the stream each message
 * must be next in is decided in matching order. */
static void complete(soak_t *s, int p, soak_window_t *win, soak_slot_t *sl, tern_status_t st,
                     soak_kind_t kind)
{
    sl->req = NULL;
    sl->st = st;
    sl->complete = true;
    if (kind != SOAK_WILD)
        finish(s, p, win, sl, st, kind);
}

static tern_status_t post_send(soak_t *s, int p, soak_slot_t *sl)
{
    const soak_msg_t *m = &sl->m;
    soak_hdr(s, s->rank, p, sl->seq, m->len, &sl->hdr);
    if (m->iov_send) { /* the header, then the pattern slice in two pieces */
        size_t hl = m->len < SOAK_HDR_SIZE ? m->len : SOAK_HDR_SIZE, rest = m->len - hl;
        size_t cut = m->split < rest ? m->split : rest;
        struct iovec iov[3] = {
            {.iov_base = &sl->hdr, .iov_len = hl},
            {.iov_base = s->pattern + m->pat_off, .iov_len = cut},
            {.iov_base = s->pattern + m->pat_off + cut, .iov_len = rest - cut},
        };
        return tern_isendv(s->w, iov, 3, p, m->tag, m->space, &sl->req);
    }
    sl->buf = malloc(m->len ? m->len : 1);
    if (sl->buf == NULL)
        return TERN_ERR_NO_MEMORY;
    soak_fill(s, sl->buf, &sl->hdr, m);
    return tern_isend(s->w, sl->buf, m->len, p, m->tag, m->space, &sl->req);
}

/* A receive into a buffer of m.len bytes (and a canary) from p, or from any
 * source with any tag in the wildcard space (p < 0). */
static tern_status_t post_recv(soak_t *s, int p, soak_slot_t *sl)
{
    const soak_msg_t *m = &sl->m;
    sl->buf = malloc(m->len + SOAK_CANARY);
    if (sl->buf == NULL)
        return TERN_ERR_NO_MEMORY;
    memset(sl->buf + m->len, SOAK_CANARY_BYTE, SOAK_CANARY);
    memset(&sl->info, 0, sizeof(sl->info));
    int src = p < 0 ? TERN_ANY_SOURCE : p;
    int tag = m->exact_tag ? m->tag : TERN_ANY_TAG;
    if (m->iov_recv) {
        struct iovec iov[2] = {
            {.iov_base = sl->buf, .iov_len = m->split},
            {.iov_base = sl->buf + m->split, .iov_len = m->len - m->split},
        };
        return tern_irecvv(s->w, iov, 2, src, tag, m->space, &sl->info, &sl->req);
    }
    return tern_irecv(s->w, sl->buf, m->len, src, tag, m->space, &sl->info, &sl->req);
}

/* What slot sl of the window posts next; false when it is not this
 * window's to post (a wildcard-space message of a per-source stream). */
static bool next_op(soak_t *s, int p, soak_window_t *win, soak_slot_t *sl, soak_kind_t kind)
{
    memset(sl, 0, sizeof(*sl));
    sl->seq = win->next;
    if (kind == SOAK_WILD) { /* which message is unknown until it comes */
        sl->m.len = SOAK_WILD_MAX;
        sl->m.space = soak_space_value((unsigned)s->wild);
        sl->m.iov_recv = (win->next & 3) == 1;
        sl->m.split = (size_t)((win->next * 7919) % SOAK_WILD_MAX);
        return true;
    }
    if (kind == SOAK_RX) {
        soak_msg(s, p, s->rank, sl->seq, &sl->m);
        return !sl->m.wild;
    }
    soak_msg(s, s->rank, p, sl->seq, &sl->m);
    return true;
}

/* Post what the window and its byte budget allow; true when one was. */
bool soak_post(soak_t *s, int p, soak_window_t *win, soak_kind_t kind)
{
    bool any = false;
    while (win->next < win->total && win->count < s->o.window) {
        soak_slot_t *sl = &win->ring[(win->head + win->count) % s->o.window];
        if (!next_op(s, p, win, sl, kind)) {
            win->next++;
            continue;
        }
        if (win->count > 0 && win->bytes + sl->m.len > s->o.inflight)
            break; /* a lone message may exceed the budget, never two */
        win->next++;
        any = true;
        if (kind == SOAK_TX && p == 0 && s->rank == s->size - 1 &&
            sl->seq + 1 == s->o.inject_drop) {
            soak_report(s, "injected loss: seq %llu to rank 0 not sent",
                        (unsigned long long)sl->seq);
            continue;
        }
        win->count++;
        win->bytes += sl->m.len;
        tern_status_t st =
            kind == SOAK_TX ? post_send(s, p, sl) : post_recv(s, kind == SOAK_WILD ? -1 : p, sl);
        if (st != TERN_INPROGRESS)
            complete(s, p, win, sl, st, kind); /* done at once, or refused */
    }
    return any;
}

/* Test the window's pending requests oldest first (at most TESTS_PENDING
 * still incomplete), then retire the finished head; true on news. */
bool soak_reap(soak_t *s, int p, soak_window_t *win, soak_kind_t kind)
{
    unsigned pending = 0;
    bool any = false;
    for (unsigned i = 0; i < win->count && pending < TESTS_PENDING; i++) {
        soak_slot_t *sl = &win->ring[(win->head + i) % s->o.window];
        if (sl->complete)
            continue;
        tern_status_t st = tern_test(s->w, sl->req, kind == SOAK_TX ? NULL : &sl->info);
        if (st == TERN_INPROGRESS) {
            pending++;
            continue;
        }
        complete(s, p, win, sl, st, kind);
        any = true;
    }
    while (win->count > 0) {
        soak_slot_t *sl = &win->ring[win->head];
        if (sl->complete && !sl->done) /* a wildcard receive, in posting order */
            finish(s, p, win, sl, sl->st, kind);
        if (!sl->done)
            break;
        win->head = (win->head + 1) % s->o.window;
        win->count--;
    }
    return any;
}

/* Operations of the window not completed: posted and pending (*pending),
 * plus those never posted (for a per-source receive window, not counting
 * the wildcard-space messages it leaves to the wildcard window). */
uint64_t soak_unfinished(const soak_t *s, int p, const soak_window_t *win, soak_kind_t kind,
                         uint64_t *pending)
{
    *pending = 0;
    for (unsigned i = 0; i < win->count; i++)
        *pending += !win->ring[(win->head + i) % s->o.window].complete;
    uint64_t unposted = win->total - win->next;
    soak_msg_t m;
    for (uint64_t q = win->next; kind == SOAK_RX && q < win->total; q++) {
        soak_msg(s, p, s->rank, q, &m);
        unposted -= m.wild;
    }
    return *pending + unposted;
}
