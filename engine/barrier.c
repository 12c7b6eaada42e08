/*
 * The engine's own barrier, over its connections: what tern_barrier,
 * tern_finalize and the end of the wire-up use in a context wired by
 * addresses, where there is no launcher to fence with.
 *
 * A dissemination barrier (Hensgen, Finkel and Manber): in round k rank r
 * sends an empty message to r + 2^k and receives one from r - 2^k (mod
 * size), ceil(log2(size)) rounds; once they are done every rank has
 * entered the barrier.  Messages go on worker 0 in the reserved space
 * TERN_SPACE_ENGINE, tagged with the barrier's number and the round, so
 * barriers in a row never mix and no user receive (which names its space)
 * can take them.  A peer whose connection fails fails the barrier with the
 * VC's status and message, never a hang.
 */
#include <sched.h>

#include "engine/engine_internal.h"

/* wait for req on worker 0; all: progress every worker meanwhile (a peer
 * finalizing may need our other workers' acknowledgements) */
static tern_status_t finish(tern_context_t *ctx, tern_status_t st, tern_request_t *req, bool all)
{
    tern_worker_t *w0 = &ctx->workers[0];
    if (st != TERN_INPROGRESS)
        return st;
    if (!all || ctx->num_workers == 1)
        return tern_wait(w0, req, NULL);
    for (;;) {
        st = tern_test(w0, req, NULL);
        if (st != TERN_INPROGRESS)
            return st;
        unsigned n = 0;
        for (int k = 1; k < ctx->num_workers; k++)
            n += tern_progress(&ctx->workers[k]);
        if (n == 0)
            sched_yield();
    }
}

tern_status_t tern_engine_barrier(tern_context_t *ctx, bool all_workers)
{
    tern_worker_t *w = &ctx->workers[0];
    int n = ctx->size, me = ctx->rank;
    uint32_t epoch = ctx->barrier_epoch++ & 0xffffffu;
    char none = 0, sink = 0;
    for (int k = 0, d = 1; d < n; k++, d <<= 1) {
        int to = (me + d) % n, from = (me - d % n + n) % n;
        int tag = (int)(epoch << 6 | (uint32_t)k); /* k < 31: d < 2^31 */
        tern_request_t *sr = NULL, *rr = NULL;
        tern_status_t st = tern_irecv(w, &sink, 0, from, tag, TERN_SPACE_ENGINE, NULL, &rr);
        if (st < 0)
            return tern_error_wrap(st, "barrier: receive from rank %d", from);
        tern_status_t sst = tern_isend(w, &none, 0, to, tag, TERN_SPACE_ENGINE, &sr);
        if (sst < 0) {
            tern_error_wrap(sst, "barrier: send to rank %d", to);
            if (st == TERN_INPROGRESS) /* it can only fail or wait forever: cancel it */
                if (tern_cancel(w, rr) == TERN_OK)
                    tern_wait(w, rr, NULL);
            return sst;
        }
        sst = finish(ctx, sst, sr, all_workers);
        st = finish(ctx, st, rr, all_workers);
        if (sst != TERN_OK)
            return sst;
        if (st != TERN_OK)
            return st;
    }
    return TERN_OK;
}
