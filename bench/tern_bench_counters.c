/*
 * tern_bench --counters: what the netmod asked of its device library per
 * message (verbs: ibv_post_send, ibv_post_srq_recv, ibv_poll_cq ...), from
 * tern_worker_counters.  A message is one rank 0 sent or received: a
 * latency round is 2 (ping and pong), a bandwidth window 64 + the ack,
 * a bi-directional window 128, a stream's iteration 64 (its two acks
 * left out).  Warm-up rounds count too: the figures are
 * per message, and warm-up messages take the same path.
 */
#include "config.h"

#include "bench/tern_bench_internal.h"

#include <stdio.h>
#include <string.h>

int tb_counters_take(tern_worker_t *w, tern_counter_t *out)
{
    int n = tern_worker_counters(w, out, TB_MAX_COUNTERS);
    return n < 0 ? 0 : n > TB_MAX_COUNTERS ? TB_MAX_COUNTERS : n;
}

double tb_messages_per_round(bp_test_t t)
{
    switch (t) {
    case BP_TEST_LAT:
        return 2.0;
    case BP_TEST_BIBW:
        return 2.0 * BP_WINDOW;
    case BP_TEST_STREAM:
        return BP_WINDOW; /* the two acks of the run left out */
    default:
        return BP_WINDOW + 1.0;
    }
}

void tb_counters_print(bp_test_t t, const tb_counts_t *c, const bp_result_t *res, size_t nsizes)
{
    if (nsizes == 0 || c[0].n == 0) {
        printf("# counters: this netmod counts nothing\n");
        return;
    }
    printf("# netmod calls per message handled by rank 0 (%g messages a round, warm-up "
           "included)\n# %-10s", tb_messages_per_round(t), "size");
    for (int k = 0; k < c[0].n; k++) {
        const char *name = strchr(c[0].after[k].name, '.');
        printf(" %12s", name ? name + 1 : c[0].after[k].name);
    }
    printf("\n");
    for (size_t i = 0; i < nsizes; i++) {
        double msgs = (double)(res[i].iters + res[i].warmup) * tb_messages_per_round(t);
        printf("  %-10zu", res[i].size);
        for (int k = 0; k < c[i].n; k++)
            printf(" %12.3f", (double)(c[i].after[k].value - c[i].before[k].value) / msgs);
        printf("\n");
    }
}
