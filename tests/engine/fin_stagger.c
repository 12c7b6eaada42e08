/*
 * fin_stagger: a clean finalize at staggered times.
 *   fin_stagger SLEEPER MS
 * Every rank exchanges one message with every other rank (so over tcp each
 * pair has a connection), then rank SLEEPER (-1: none) sleeps MS ms while
 * the others go straight into tern_finalize.  Nothing here fails: a rank
 * that finalizes and closes its connections is no failure, and the script
 * (finalize_tcp.sh, multinode/finalize_hosts.sh) fails on any warning.
 * Exit status 0 when every call returned what it should.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tests/launcher/tern_check.h"

#define TAG 5

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fin_stagger SLEEPER MS\n");
        return 2;
    }
    int sleeper = atoi(argv[1]), ms = atoi(argv[2]);
    tern_context_t *ctx;
    tern_status_t st = tern_init(&ctx);
    if (st != TERN_OK) {
        printf("FAIL: tern_init: %s\n", tern_last_error());
        return 1;
    }
    tern_worker_t *w = tern_context_worker(ctx);
    int me = tern_rank(ctx), n = tern_size(ctx);
    int *in = calloc((size_t)n, sizeof(*in));
    tern_request_t **reqs = calloc(2 * (size_t)n, sizeof(*reqs));
    CHECK(in != NULL && reqs != NULL, "out of memory");
    for (int r = 0; in != NULL && reqs != NULL && r < n; r++) {
        if (r == me)
            continue;
        st = tern_irecv(w, &in[r], sizeof(int), r, TAG, 0, NULL, &reqs[2 * r]);
        CHECK(st == TERN_OK || st == TERN_INPROGRESS, "irecv from rank %d: %s", r,
              tern_strerror(st));
        if (st != TERN_INPROGRESS)
            reqs[2 * r] = NULL;
        st = tern_isend(w, &me, sizeof(me), r, TAG, 0, &reqs[2 * r + 1]);
        CHECK(st == TERN_OK || st == TERN_INPROGRESS, "isend to rank %d: %s", r, tern_strerror(st));
        if (st != TERN_INPROGRESS)
            reqs[2 * r + 1] = NULL;
    }
    if (reqs != NULL) {
        st = tern_waitall(w, reqs, 2 * (size_t)n, NULL);
        CHECK(st == TERN_OK, "exchange: %s", tern_strerror(st));
    }
    for (int r = 0; in != NULL && r < n; r++)
        CHECK(r == me || in[r] == r, "rank %d sent %d", r, in[r]);
    if (me == sleeper) {
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    st = tern_finalize(ctx);
    CHECK(st == TERN_OK, "tern_finalize: %s", tern_strerror(st));
    free(in);
    free(reqs);
    return failures ? 1 : 0;
}
