/* soak: the progress loop over every window (per peer a window of sends
 * and one of receives, plus the wildcard space's receives from any source)
 * until every stream is done or the time is up; then a done exchange so no
 * rank leaves its peers without progress. */
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/soak/soak.h"

#define DONE_TAG 2
#define IDLE_PASSES 64 /* passes without news before waiting in the engine */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool finished(const soak_window_t *win)
{
    return win->next == win->total && win->count == 0;
}

/* Every rank tells every peer it is done and waits for theirs: once a rank
 * has all of them, no peer needs its progress any more (tern_barrier is a
 * PMIx fence and drives nothing). */
static bool done_exchange(soak_t *s, double deadline)
{
    int n = s->size, one = 1, *in = calloc((unsigned)n, sizeof(int));
    tern_request_t **reqs = calloc(2 * (size_t)(unsigned)n, sizeof(*reqs));
    if (in == NULL || reqs == NULL) {
        free(in);
        free(reqs);
        return false;
    }
    for (int p = 0; p < n; p++) {
        if (p == s->rank)
            continue;
        tern_status_t st =
            tern_irecv(s->w, &in[p], sizeof(int), p, DONE_TAG, SOAK_CTL_SPACE, NULL, &reqs[2 * p]);
        tern_status_t st2 =
            tern_isend(s->w, &one, sizeof(one), p, DONE_TAG, SOAK_CTL_SPACE, &reqs[2 * p + 1]);
        if (st < 0 || st2 < 0)
            soak_report(s, "done exchange with %d: %s / %s", p, tern_strerror(st),
                        tern_strerror(st2));
    }
    bool all = false;
    while (!all && now() < deadline) {
        all = true;
        for (int i = 0; i < 2 * n; i++) {
            if (reqs[i] == NULL)
                continue;
            tern_status_t st = tern_test(s->w, reqs[i], NULL);
            if (st == TERN_INPROGRESS) {
                all = false;
                continue;
            }
            reqs[i] = NULL;
            if (st != TERN_OK)
                soak_report(s, "done exchange with %d: %s", i / 2, tern_strerror(st));
        }
        if (!all)
            sched_yield();
    }
    for (int i = 0; i < 2 * n; i++)
        if (reqs[i] != NULL)
            soak_report(s, "no done message %s rank %d in time", i % 2 ? "to" : "from", i / 2);
    free(reqs);
    if (all)
        free(in);
    else
        s->done_in = in; /* pending receives may still write it */
    return all;
}

static int setup(soak_t *s)
{
    s->peers = calloc((size_t)s->size, sizeof(*s->peers));
    s->wild = s->o.spaces >= 2 ? (int)s->o.spaces - 1 : -1;
    s->wild_rx.ring = calloc(s->o.window, sizeof(soak_slot_t));
    if (s->peers == NULL || s->wild_rx.ring == NULL)
        return -1;
    for (int p = 0; p < s->size; p++) {
        if (p == s->rank)
            continue;
        soak_peer_t *pe = &s->peers[p];
        pe->tx.ring = calloc(s->o.window, sizeof(soak_slot_t));
        pe->rx.ring = calloc(s->o.window, sizeof(soak_slot_t));
        if (pe->tx.ring == NULL || pe->rx.ring == NULL)
            return -1;
        pe->tx.total = soak_count(s, s->rank, p) + s->o.spaces;
        pe->rx.total = soak_count(s, p, s->rank) + s->o.spaces;
        pe->wild_next = soak_wild_next(s, p, 0);
        for (uint64_t q = pe->wild_next; q < pe->rx.total; q = soak_wild_next(s, p, q + 1))
            s->wild_rx.total++;
    }
    return 0;
}

/* What was not completed, as lost receives and failed sends. */
static void tally(soak_t *s)
{
    uint64_t pending, open, pend_total = 0;
    if ((open = soak_unfinished(s, -1, &s->wild_rx, SOAK_WILD, &pending)) > 0)
        soak_report(s, "%llu receives from any source not completed", (unsigned long long)open);
    s->c.lost += open;
    pend_total += pending;
    for (int p = 0; p < s->size; p++) {
        if (p == s->rank)
            continue;
        uint64_t rx = soak_unfinished(s, p, &s->peers[p].rx, SOAK_RX, &pending);
        pend_total += pending;
        uint64_t tx = soak_unfinished(s, p, &s->peers[p].tx, SOAK_TX, &pending);
        pend_total += pending;
        if (rx || tx)
            soak_report(s, "with rank %d: %llu receives and %llu sends not completed", p,
                        (unsigned long long)rx, (unsigned long long)tx);
        s->c.lost += rx;
        s->c.errors += tx;
    }
    s->pending = pend_total > 0;
}

int soak_run(soak_t *s)
{
    if (setup(s) != 0)
        return -1;
    double start = now(), deadline = start + s->o.timeout, t = start;
    double next_note = s->o.progress > 0 ? start + s->o.progress : deadline;
    unsigned idle = 0;
    bool all_done = false;
    while (!all_done && (t = now()) < deadline) {
        if (t >= next_note) { /* a long run shows it moves, and which rank stalls */
            printf("soak: rank %d: after %.0f s: sent %" PRIu64 " received %" PRIu64 " (%" PRIu64
                   " bytes)\n",
                   s->rank, t - start, s->c.sent, s->c.received, s->c.bytes);
            fflush(stdout);
            next_note += s->o.progress;
        }
        bool news = false;
        all_done = true;
        for (int i = 1; i < s->size; i++) {
            int p = (s->rank + i) % s->size;
            soak_peer_t *pe = &s->peers[p];
            news |= soak_post(s, p, &pe->tx, SOAK_TX);
            news |= soak_post(s, p, &pe->rx, SOAK_RX);
            news |= soak_reap(s, p, &pe->tx, SOAK_TX);
            news |= soak_reap(s, p, &pe->rx, SOAK_RX);
            all_done &= finished(&pe->tx) && finished(&pe->rx);
        }
        news |= soak_post(s, -1, &s->wild_rx, SOAK_WILD);
        news |= soak_reap(s, -1, &s->wild_rx, SOAK_WILD);
        all_done &= finished(&s->wild_rx);
        if (news) {
            idle = 0;
        } else if (++idle >= IDLE_PASSES) { /* the engine's idle wait, bounded */
            tern_status_t st = tern_worker_wait(s->w, 10);
            if (st != TERN_OK && st != TERN_ERR_TIMED_OUT && st != TERN_ERR_INTERRUPTED) {
                s->c.errors++;
                soak_report(s, "tern_worker_wait: %s (%s)", tern_strerror(st), tern_last_error());
            }
        }
    }
    s->elapsed = now() - start;
    if (!all_done)
        soak_report(s, "timed out after %.0f s", s->o.timeout);
    tally(s);
    if (!done_exchange(s, start + s->o.timeout + SOAK_DONE_GRACE)) {
        s->c.errors++;
        s->pending = true;
    }
    return 0;
}

/* With operations still pending nothing is freed: the engine may still
 * write into their buffers and infos (s is static: they stay reachable). */
void soak_free(soak_t *s)
{
    if (s->pending)
        return;
    free(s->wild_rx.ring);
    for (int p = 0; s->peers != NULL && p < s->size; p++) {
        free(s->peers[p].tx.ring);
        free(s->peers[p].rx.ring);
    }
    free(s->peers);
    free(s->pattern);
}
