/*
 * Waiting cases.  block_wake: under TERN_WAIT_MODE=block a worker blocked
 * in tern_recv is woken by the arrival itself, whatever the netmod — not
 * by the TERN_HEALTH_MS timeout that bounds every sleep.  Run with a long
 * TERN_HEALTH_MS (the matrix sets 20000): each receive must complete far
 * below it; an engine that only wakes on the timeout takes 20 s per message.
 * probe_wake: a message that arrived while the caller probed for another
 * tag (the probe's progress queued it unexpected) makes the next
 * tern_worker_wait return at once (the loop of MPI_Comm_accept: probe for
 * each of its tags, then wait): it used to sleep until an unrelated event,
 * for ever on a quiet job.
 * block_storm: every other rank ping-pongs small messages with rank 0,
 * which serves them from any source: thousands of sleeps and wake-ups, so
 * an arrival that lands inside a netmod's last poll before a sleep (tcp
 * once consumed the socket's readiness there without reading it: a 20 s
 * stall in about one run of ten of the engine suite) is hit in a run, not
 * in a month (4000 round trips per rank found it in two runs of three).
 * Block mode only; same bound as block_wake.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/engine/cases.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int case_block_wake(th_t *t)
{
    enum { ROUNDS = 20, LEN = 20000 };
    const char *hs = getenv("TERN_HEALTH_MS");
    double health = hs ? atof(hs) : 100.0;
    static uint8_t buf[LEN];
    if (t->size < 2 || t->rank > 1)
        return 0;
    int peer = 1 - t->rank;
    double worst = 0;
    for (int i = 0; i < ROUNDS; i++) {
        if ((i & 1) == t->rank) {
            /* the receiver is past its spin phase and asleep by now */
            usleep(20000);
            th_fill(buf, LEN, (uint64_t)i);
            CHECK_ST(t, tern_send(t->w, buf, LEN, peer, 3, 0), TERN_OK);
        } else {
            double a = now_ms();
            tern_recv_info_t info;
            CHECK_ST(t, tern_recv(t->w, buf, LEN, peer, 3, 0, &info), TERN_OK);
            double ms = now_ms() - a;
            worst = ms > worst ? ms : worst;
            CHECK(t, th_verify(buf, LEN, (uint64_t)i) == (size_t)-1, "round %d corrupt", i);
        }
    }
    /* 20 ms of sender delay plus a wake-up: a timeout-only engine needs
     * TERN_HEALTH_MS per message.  Half of it is the bound: hundreds of
     * times the wake-up, so a loaded machine does not break it, and still
     * below what a missed wake-up costs. */
    if (health >= 5000)
        CHECK(t, worst < health / 2, "a blocked receive took %.0f ms (TERN_HEALTH_MS=%.0f)",
              worst, health);
    printf("block_wake: rank %d, %s, worst receive %.1f ms (TERN_HEALTH_MS %.0f)\n", t->rank,
           tern_peer_netmod(t->ctx, peer), worst, health);
    fflush(stdout);
    return 0;
}

static int case_block_storm(th_t *t)
{
    enum { ROUNDS = 4000, TAG = 44 };
    const char *hs = getenv("TERN_HEALTH_MS"), *mode = getenv("TERN_WAIT_MODE");
    double health = hs ? atof(hs) : 100.0, worst = 0;
    uint64_t v = 0;
    /* block mode's race only; spinning ranks oversubscribed take ms each */
    if (t->size < 2 || mode == NULL || strcmp(mode, "block") != 0)
        return 0;
    if (t->rank == 0) {
        for (long i = 0; i < (long)ROUNDS * (t->size - 1) && !t->failures; i++) {
            tern_recv_info_t info;
            double a = now_ms();
            CHECK_ST(t, tern_recv(t->w, &v, sizeof(v), TERN_ANY_SOURCE, TAG, 0, &info), TERN_OK);
            double ms = now_ms() - a;
            worst = ms > worst ? ms : worst;
            v++;
            CHECK_ST(t, tern_send(t->w, &v, sizeof(v), info.source, TAG, 0), TERN_OK);
        }
    } else {
        for (int i = 0; i < ROUNDS && !t->failures; i++) {
            double a = now_ms();
            v = ((uint64_t)t->rank << 32) | (uint64_t)i;
            CHECK_ST(t, tern_send(t->w, &v, sizeof(v), 0, TAG, 0), TERN_OK);
            CHECK_ST(t, tern_recv(t->w, &v, sizeof(v), 0, TAG, 0, NULL), TERN_OK);
            CHECK(t, v == (((uint64_t)t->rank << 32) | (uint64_t)i) + 1, "round %d: got %llx", i,
                  (unsigned long long)v);
            double ms = now_ms() - a;
            worst = ms > worst ? ms : worst;
        }
    }
    if (health >= 5000)
        CHECK(t, worst < health / 2, "a blocked receive took %.0f ms (TERN_HEALTH_MS=%.0f)",
              worst, health);
    printf("block_storm: rank %d, worst %s %.1f ms (TERN_HEALTH_MS %.0f)\n", t->rank,
           t->rank == 0 ? "wait for a request" : "round trip", worst, health);
    fflush(stdout);
    return 0;
}

static int case_probe_wake(th_t *t)
{
    enum { GO = 40, MSG = 41, OTHER = 42, ROUNDS = 5 };
    if (t->size < 2 || t->rank > 1)
        return 0;
    int peer = 1 - t->rank, round = 0, flag = 0;
    uint64_t v = 0;
    tern_recv_info_t info;
    if (t->rank == 1) { /* on each go: MSG 100 ms later; a go of -1 ends */
        for (;;) {
            CHECK_ST(t, tern_recv(t->w, &round, sizeof(round), peer, GO, 0, NULL), TERN_OK);
            if (round < 0 || t->failures)
                return 0;
            usleep(100000);
            v = 1000u + (unsigned)round;
            CHECK_ST(t, tern_send(t->w, &v, sizeof(v), peer, MSG, 0), TERN_OK);
        }
    }
    bool tested = false;
    for (round = 0; round < ROUNDS && !tested && !t->failures; round++) {
        CHECK_ST(t, tern_send(t->w, &round, sizeof(round), peer, GO, 0), TERN_OK);
        /* what happened so far is seen: the next wait sleeps until news */
        while (tern_worker_wait(t->w, 0) == TERN_OK)
            ;
        CHECK_ST(t, tern_iprobe(t->w, peer, MSG, 0, &flag, &info), TERN_OK);
        if (!flag) { /* MSG not here yet (else a stalled round: again) */
            usleep(300000); /* it is in the netmod now, not yet taken */
            CHECK_ST(t, tern_iprobe(t->w, peer, OTHER, 0, &flag, &info), TERN_OK);
            CHECK(t, !flag, "a message of tag %d that nobody sent", OTHER);
            /* that probe's progress queued MSG: activity */
            CHECK_ST(t, tern_worker_wait(t->w, 10000), TERN_OK);
            tested = true;
        }
        CHECK_ST(t, tern_recv(t->w, &v, sizeof(v), peer, MSG, 0, NULL), TERN_OK);
        CHECK(t, v == 1000u + (unsigned)round, "round %d: got %llu", round,
              (unsigned long long)v);
    }
    round = -1;
    CHECK_ST(t, tern_send(t->w, &round, sizeof(round), peer, GO, 0), TERN_OK);
    CHECK(t, tested || t->failures, "every round's message came before the probe");
    return 0;
}

const th_case_t th_wait_cases[] = {
    {"block_wake", case_block_wake},
    {"block_storm", case_block_storm},
    {"probe_wake", case_probe_wake},
    {NULL, NULL},
};
