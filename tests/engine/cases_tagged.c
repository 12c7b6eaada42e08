/*
 * Engine cases for include/tern/tagged.h: 64-bit tags with ignore masks,
 * immediate data, the worker's completion queue, injected sends, and peek
 * / claim / discard.  Ranks 0 and 1 take part (rank 1 sends, rank 0
 * receives); the others only join the barriers.  Run over every netmod by
 * the engine suite, eager and rendezvous sizes alike.
 */
#include <time.h>

#include "tests/engine/cases.h"

#define SPACE 7
#define BIG (3u << 20)

static const size_t sizes[] = {0, 8, 16384, 16385, 100000, BIG};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* A tag with bits set where an int tag cannot have them. */
static uint64_t tag_of(size_t i, uint64_t low)
{
    return 0xA5A5000000000000ull | ((uint64_t)i << 32) | low;
}

/* Take n completions from the CQ into out (bounded by the test's timeout). */
static void cq_take(th_t *t, tern_cq_entry_t *out, int n)
{
    int have = 0;
    while (have < n) {
        int k = tern_cq_read(t->w, out + have, n - have);
        CHECK(t, k >= 0, "tern_cq_read: %d", k);
        if (k < 0)
            return;
        have += k;
    }
}

/* The CQ holds nothing more after a round of progress. */
static void cq_empty(th_t *t, const char *when)
{
    tern_cq_entry_t e;
    int k = tern_cq_read(t->w, &e, 1);
    CHECK(t, k == 0, "%s: an unexpected completion (context %p, status %s)", when,
          k > 0 ? e.context : NULL, k > 0 ? tern_strerror(e.status) : "-");
}

/* Rank 1 sends, for each size, a message with data and a wide tag, then
 * one without data; rank 0 posts receives that ignore the low 16 bits
 * first (so both match the first receive's mask: order decides), with CQ
 * contexts, and checks every entry: tag, data, lengths, order. */
static int case_tag64(th_t *t)
{
    if (t->size < 2 || t->rank > 1) {
        th_barrier(t);
        return 0;
    }
    uint8_t *buf = malloc(2 * (size_t)BIG);
    CHECK(t, buf != NULL, "allocation");
    for (size_t i = 0; i < NSIZES; i++) {
        size_t n = sizes[i];
        if (t->rank == 1) {
            th_fill(buf, n, 100 + i);
            th_fill(buf + BIG, n, 200 + i);
            tern_op_t op = {.flags = TERN_OP_DATA | TERN_OP_CQ, .data = 0xD00D0000ull + i,
                            .context = (void *)(uintptr_t)(1000 + i)};
            CHECK_ST(t, tern_tsend(t->w, buf, n, 0, tag_of(i, 0x1234), SPACE, &op, NULL),
                     TERN_OK);
            tern_op_t op2 = {.flags = TERN_OP_CQ, .context = (void *)(uintptr_t)(2000 + i)};
            CHECK_ST(t, tern_tsend(t->w, buf + BIG, n, 0, tag_of(i, 0x5678), SPACE, &op2, NULL),
                     TERN_OK);
            tern_cq_entry_t e[2];
            cq_take(t, e, 2);
            for (int k = 0; k < 2; k++) {
                uintptr_t c = (uintptr_t)e[k].context;
                CHECK(t, (c == 1000 + i || c == 2000 + i) && e[k].flags == TERN_CQ_SEND &&
                             e[k].status == TERN_OK && e[k].peer == 0 && e[k].length == n,
                      "send entry %d: context %lu flags %#x status %s peer %d length %zu", k,
                      (unsigned long)c, e[k].flags, tern_strerror(e[k].status), e[k].peer,
                      e[k].length);
            }
        } else {
            memset(buf, 0, 2 * (size_t)BIG);
            /* both ignore the low 16 bits: the first posted takes the first sent */
            tern_op_t op = {.flags = TERN_OP_CQ, .context = (void *)(uintptr_t)(3000 + i)};
            CHECK_ST(t, tern_trecv(t->w, buf, n, 1, tag_of(i, 0), 0xffff, SPACE, &op, NULL),
                     TERN_OK);
            tern_op_t op2 = {.flags = TERN_OP_CQ, .context = (void *)(uintptr_t)(4000 + i)};
            CHECK_ST(t, tern_trecv(t->w, buf + BIG, n, TERN_ANY_SOURCE, tag_of(i, 0x5678), 0,
                                   SPACE, &op2, NULL),
                     TERN_OK);
            tern_cq_entry_t e[2];
            cq_take(t, e, 2);
            for (int k = 0; k < 2; k++) {
                bool first = (uintptr_t)e[k].context == 3000 + i;
                CHECK(t, first || (uintptr_t)e[k].context == 4000 + i, "context %p",
                      e[k].context);
                CHECK(t, e[k].status == TERN_OK && e[k].peer == 1 && e[k].length == n &&
                             e[k].msg_len == n,
                      "size %zu entry %d: status %s peer %d length %zu msg_len %zu", n, k,
                      tern_strerror(e[k].status), e[k].peer, e[k].length, e[k].msg_len);
                if (first)
                    CHECK(t, e[k].tag == tag_of(i, 0x1234) &&
                                 e[k].flags == (TERN_CQ_RECV | TERN_CQ_DATA) &&
                                 e[k].data == 0xD00D0000ull + i,
                          "first: tag %#llx flags %#x data %#llx (the masked receive must "
                          "take the first message sent)",
                          (unsigned long long)e[k].tag, e[k].flags,
                          (unsigned long long)e[k].data);
                else
                    CHECK(t, e[k].tag == tag_of(i, 0x5678) && e[k].flags == TERN_CQ_RECV,
                          "second: tag %#llx flags %#x", (unsigned long long)e[k].tag,
                          e[k].flags);
            }
            CHECK(t, th_verify(buf, n, 100 + i) == (size_t)-1, "size %zu: first differs", n);
            CHECK(t, th_verify(buf + BIG, n, 200 + i) == (size_t)-1, "size %zu: second differs",
                  n);
        }
        cq_empty(t, "after a size");
    }
    /* core.h's TERN_ANY_TAG takes only tags a core.h receive can report: a
     * wide tag goes past it to the tagged receive posted after it */
    if (t->rank == 1) {
        uint64_t v = 77, u = 55;
        tern_request_t *r;
        CHECK_ST(t, th_finish(t, tern_tsend(t->w, &v, sizeof(v), 0, 1ull << 40, SPACE, NULL, &r),
                              r, NULL),
                 TERN_OK);
        CHECK_ST(t, tern_send(t->w, &u, sizeof(u), 0, 5, SPACE), TERN_OK);
    } else {
        uint64_t a = 0, b = 0;
        tern_request_t *ra, *rb;
        tern_recv_info_t info = {.tag = -1};
        /* (either may find its message here already: unexpected) */
        tern_status_t sa = tern_irecv(t->w, &a, sizeof(a), 1, TERN_ANY_TAG, SPACE, &info, &ra);
        tern_status_t sb = tern_trecv(t->w, &b, sizeof(b), 1, 0, ~0ull, SPACE, NULL, &rb);
        CHECK_ST(t, th_finish(t, sb, rb, NULL), TERN_OK);
        CHECK_ST(t, th_finish(t, sa, ra, &info), TERN_OK);
        CHECK(t, a == 55 && b == 77 && info.tag == 5,
              "TERN_ANY_TAG got %llu (tag %d), the all-ignoring receive %llu",
              (unsigned long long)a, info.tag, (unsigned long long)b);
    }
    free(buf);
    th_barrier(t);
    return 0;
}

/* Injected sends: rank 1 injects each size (no completion asked, then with
 * a CQ entry) and scribbles over its buffer at once; rank 0 must see the
 * bytes as they were at the call. */
static int case_inject(th_t *t)
{
    if (t->size < 2 || t->rank > 1) {
        th_barrier(t);
        return 0;
    }
    uint8_t *buf = malloc(BIG);
    CHECK(t, buf != NULL, "allocation");
    for (size_t i = 0; i < NSIZES; i++) {
        size_t n = sizes[i];
        for (int cq = 0; cq < 2; cq++) {
            if (t->rank == 1) {
                th_fill(buf, n, 300 + i);
                tern_op_t op = {.flags = TERN_OP_INJECT | (cq ? TERN_OP_CQ : 0),
                                .context = (void *)(uintptr_t)(5000 + i)};
                CHECK_ST(t, tern_tsend(t->w, buf, n, 0, 9, SPACE, &op, NULL), TERN_OK);
                memset(buf, 0xEE, n); /* the caller's buffer is free at once */
                if (cq) {
                    tern_cq_entry_t e;
                    cq_take(t, &e, 1);
                    CHECK(t, e.context == (void *)(uintptr_t)(5000 + i) && e.status == TERN_OK,
                          "inject entry: context %p status %s", e.context,
                          tern_strerror(e.status));
                }
            } else {
                memset(buf, 0, n);
                CHECK_ST(t, tern_recv(t->w, buf, n, 1, 9, SPACE, NULL), TERN_OK);
                CHECK(t, th_verify(buf, n, 300 + i) == (size_t)-1,
                      "injected %zu bytes (cq %d) differ at %zu", n, cq, th_verify(buf, n, 300 + i));
            }
        }
    }
    if (t->rank == 1) { /* nothing is left behind for the CQ: injects without it have none */
        int v = 0;
        CHECK_ST(t, tern_recv(t->w, &v, sizeof(v), 0, 10, SPACE, NULL), TERN_OK);
        cq_empty(t, "after the injects");
    } else {
        int v = 1;
        CHECK_ST(t, tern_send(t->w, &v, sizeof(v), 1, 10, SPACE), TERN_OK);
    }
    free(buf);
    th_barrier(t);
    return 0;
}

/* Peek, claim and discard, with the CQ: rank 1 sends, per size, A (data),
 * B, C and then D; rank 0 peeks A (it stays), claims B and receives it,
 * discards C unread, takes A then D with receives that would also accept C
 * (so C must be gone). */
/* Probe (tern_tprobe with these arguments) until flag: the message is on
 * its way.  Bounded by 60 s, a hang catcher, not a speed bound (a count of
 * probes was: a loaded machine ran out of a million of them before the
 * sender was scheduled). */
static tern_status_t probe_until(th_t *t, uint64_t tag, uint64_t ignore, int flags, int *flag,
                                 tern_message_t **msg, tern_cq_entry_t *e)
{
    time_t deadline = time(NULL) + 60;
    tern_status_t st = TERN_OK;
    *flag = 0;
    while (st == TERN_OK && !*flag && time(NULL) < deadline)
        st = tern_tprobe(t->w, 1, tag, ignore, SPACE, flags, flag, msg, e);
    return st;
}

static int case_claim(th_t *t)
{
    if (t->size < 2 || t->rank > 1) {
        th_barrier(t);
        return 0;
    }
    uint8_t *buf = malloc(BIG);
    CHECK(t, buf != NULL, "allocation");
    for (size_t i = 0; i < NSIZES; i++) {
        size_t n = sizes[i];
        if (t->rank == 1) {
            for (int m = 0; m < 4; m++) {
                th_fill(buf, n, 400 + 10 * i + (size_t)m);
                tern_op_t op = {.flags = TERN_OP_INJECT | (m == 0 ? TERN_OP_DATA : 0),
                                .data = 42 + i};
                CHECK_ST(t, tern_tsend(t->w, buf, n, 0, 0x100ull + (uint64_t)m, SPACE, &op, NULL),
                         TERN_OK);
            }
            int go;
            CHECK_ST(t, tern_recv(t->w, &go, sizeof(go), 0, 11, SPACE, NULL), TERN_OK);
            continue;
        }
        tern_cq_entry_t e;
        int flag = 0;
        tern_message_t *msg = NULL;
        /* A: a peek finds it and leaves it (the wide mask takes any of the four) */
        CHECK_ST(t, probe_until(t, 0x100, 0xff, 0, &flag, NULL, &e), TERN_OK);
        CHECK(t, flag && e.tag == 0x100 && (e.flags & TERN_CQ_DATA) && e.data == 42 + i &&
                     e.msg_len == n,
              "peek: flag %d tag %#llx flags %#x data %llu msg_len %zu", flag,
              (unsigned long long)e.tag, e.flags, (unsigned long long)e.data, e.msg_len);
        /* B: claimed by tag, received through the CQ */
        CHECK_ST(t, probe_until(t, 0x101, 0, TERN_PROBE_CLAIM, &flag, &msg, &e), TERN_OK);
        CHECK(t, flag && msg != NULL && e.tag == 0x101 && !(e.flags & TERN_CQ_DATA),
              "claim: flag %d tag %#llx", flag, (unsigned long long)e.tag);
        if (msg != NULL) {
            memset(buf, 0, n);
            tern_op_t op = {.flags = TERN_OP_CQ, .context = &msg};
            CHECK_ST(t, tern_tmrecv(t->w, buf, n, msg, &op, NULL), TERN_OK);
            cq_take(t, &e, 1);
            CHECK(t, e.context == &msg && e.status == TERN_OK && e.length == n && e.tag == 0x101,
                  "claimed receive: status %s length %zu", tern_strerror(e.status), e.length);
            CHECK(t, th_verify(buf, n, 400 + 10 * i + 1) == (size_t)-1, "claimed B differs");
            /* received: it cannot be received twice */
            CHECK_ST(t, tern_tmrecv(t->w, buf, n, msg, &op, NULL), TERN_ERR_INVALID_PARAM);
        }
        /* C: dropped unread */
        CHECK_ST(t, probe_until(t, 0x102, 0, TERN_PROBE_DISCARD, &flag, NULL, &e), TERN_OK);
        CHECK(t, flag && e.tag == 0x102, "discard: flag %d", flag);
        /* A, then D: receives that would take C as well */
        for (int m = 0; m < 4; m += 3) {
            memset(buf, 0, n);
            tern_op_t op = {.flags = TERN_OP_CQ, .context = buf};
            CHECK_ST(t, tern_trecv(t->w, buf, n, 1, 0x100, 0xff, SPACE, &op, NULL), TERN_OK);
            cq_take(t, &e, 1);
            CHECK(t, e.status == TERN_OK && e.tag == 0x100ull + (uint64_t)m && e.length == n,
                  "after the discard: got tag %#llx, wanted %#x (status %s)",
                  (unsigned long long)e.tag, 0x100 + m, tern_strerror(e.status));
            CHECK(t, th_verify(buf, n, 400 + 10 * i + (size_t)m) == (size_t)-1,
                  "message %d of %zu bytes differs", m, n);
        }
        int go = 1;
        CHECK_ST(t, tern_send(t->w, &go, sizeof(go), 1, 11, SPACE), TERN_OK);
        cq_empty(t, "after peek/claim/discard");
    }
    free(buf);
    th_barrier(t);
    return 0;
}

/* Failures through the CQ: a truncated receive, a cancelled one, a
 * selective-completion receive (no entry when it succeeds, one when it
 * fails), and argument errors that post nothing and leave no entry. */
static int case_cq_errors(th_t *t)
{
    if (t->size < 2 || t->rank > 1) {
        th_barrier(t);
        return 0;
    }
    uint8_t *buf = malloc(100000);
    CHECK(t, buf != NULL, "allocation");
    if (t->rank == 1) {
        th_fill(buf, 100000, 600);
        for (int m = 0; m < 4; m++) /* 8 B, 100000 B, 8 B, 8 B */
            CHECK_ST(t, tern_send(t->w, buf, m == 1 ? 100000 : 8, 0, 20 + m, SPACE), TERN_OK);
    } else {
        tern_cq_entry_t e;
        /* truncated, eager and rendezvous */
        for (int m = 0; m < 2; m++) {
            tern_op_t op = {.flags = TERN_OP_CQ, .context = buf};
            CHECK_ST(t, tern_trecv(t->w, buf, 4, 1, 20 + m, 0, SPACE, &op, NULL), TERN_OK);
            cq_take(t, &e, 1);
            size_t sent = m ? 100000 : 8;
            CHECK(t, e.status == TERN_ERR_TRUNCATED && e.length == 4 && e.msg_len == sent,
                  "truncated: status %s length %zu msg_len %zu", tern_strerror(e.status),
                  e.length, e.msg_len);
        }
        /* selective: success says nothing, failure an entry */
        tern_op_t sel = {.flags = TERN_OP_CQ | TERN_OP_CQ_ERRORS, .context = &sel};
        CHECK_ST(t, tern_trecv(t->w, buf, 8, 1, 22, 0, SPACE, &sel, NULL), TERN_OK);
        CHECK_ST(t, tern_trecv(t->w, buf, 2, 1, 23, 0, SPACE, &sel, NULL), TERN_OK);
        cq_take(t, &e, 1);
        CHECK(t, e.context == &sel && e.status == TERN_ERR_TRUNCATED,
              "selective: the truncated one's entry, got status %s", tern_strerror(e.status));
        /* cancel a CQ receive by its handle */
        tern_request_t *r = NULL;
        tern_op_t op = {.flags = TERN_OP_CQ, .context = &r};
        CHECK_ST(t, tern_trecv(t->w, buf, 8, 1, 99, 0, SPACE, &op, &r), TERN_OK);
        CHECK(t, r != NULL, "a pending CQ receive gives its handle");
        if (r != NULL) {
            CHECK_ST(t, tern_cancel(t->w, r), TERN_OK);
            cq_take(t, &e, 1);
            CHECK(t, e.context == &r && e.status == TERN_ERR_CANCELED && e.length == 0,
                  "cancelled: status %s", tern_strerror(e.status));
        }
        /* argument errors: nothing posted, nothing queued */
        tern_op_t bad = {.flags = 1u << 30};
        CHECK_ST(t, tern_trecv(t->w, buf, 8, 1, 0, 0, SPACE, &bad, &r), TERN_ERR_INVALID_PARAM);
        CHECK_ST(t, tern_tsend(t->w, buf, 8, 1, 0, SPACE, &bad, &r), TERN_ERR_INVALID_PARAM);
        tern_op_t half = {.flags = TERN_OP_CQ_ERRORS};
        CHECK_ST(t, tern_trecv(t->w, buf, 8, 1, 0, 0, SPACE, &half, &r), TERN_ERR_INVALID_PARAM);
        tern_op_t data_recv = {.flags = TERN_OP_DATA | TERN_OP_CQ};
        CHECK_ST(t, tern_trecv(t->w, buf, 8, 1, 0, 0, SPACE, &data_recv, &r),
                 TERN_ERR_INVALID_PARAM);
        CHECK_ST(t, tern_tsend(t->w, buf, 8, 1, 0, SPACE, NULL, NULL), TERN_ERR_INVALID_PARAM);
        tern_op_t cq = {.flags = TERN_OP_CQ};
        CHECK_ST(t, tern_tsend(t->w, buf, 8, 99999, 0, SPACE, &cq, NULL), TERN_ERR_INVALID_RANK);
        CHECK_ST(t, tern_trecv(t->w, NULL, 8, 1, 0, 0, SPACE, &cq, NULL), TERN_ERR_INVALID_PARAM);
        int flag;
        tern_message_t *msg;
        CHECK_ST(t, tern_tprobe(t->w, 1, 0, 0, SPACE, TERN_PROBE_CLAIM | TERN_PROBE_DISCARD,
                                &flag, &msg, NULL),
                 TERN_ERR_INVALID_PARAM);
        CHECK_ST(t, tern_tprobe(t->w, 1, 0, 0, SPACE, TERN_PROBE_CLAIM, &flag, NULL, NULL),
                 TERN_ERR_INVALID_PARAM);
        CHECK_ST(t, tern_tmrecv(t->w, buf, 8, (tern_message_t *)buf, &cq, NULL),
                 TERN_ERR_INVALID_PARAM);
        CHECK(t, tern_cq_read(NULL, &e, 1) == TERN_ERR_INVALID_PARAM, "cq_read(NULL)");
        CHECK(t, tern_cq_read(t->w, NULL, 1) == TERN_ERR_INVALID_PARAM, "cq_read into NULL");
        cq_empty(t, "after the argument errors");
        CHECK(t, tern_cq_count(t->w) == 0, "cq_count %zu", tern_cq_count(t->w));
    }
    free(buf);
    th_barrier(t);
    return 0;
}

/* Many completions in flight at once: the ring grows and keeps them all,
 * in the order they complete (receives posted in order, matched in order). */
static int case_cq_many(th_t *t)
{
    enum { N = 3000 };
    if (t->size < 2 || t->rank > 1) {
        th_barrier(t);
        return 0;
    }
    static uint32_t vals[N];
    if (t->rank == 1) {
        for (uint32_t k = 0; k < N; k++) {
            tern_op_t op = {.flags = TERN_OP_INJECT | TERN_OP_DATA, .data = k};
            CHECK_ST(t, tern_tsend(t->w, &k, sizeof(k), 0, 30, SPACE, &op, NULL), TERN_OK);
        }
    } else {
        for (uint32_t k = 0; k < N; k++) {
            tern_op_t op = {.flags = TERN_OP_CQ, .context = &vals[k]};
            CHECK_ST(t, tern_trecv(t->w, &vals[k], sizeof(vals[k]), 1, 30, 0, SPACE, &op, NULL),
                     TERN_OK);
        }
        static tern_cq_entry_t e[N];
        cq_take(t, e, N);
        for (uint32_t k = 0; k < N; k++)
            if (e[k].context != &vals[k] || e[k].data != k || vals[k] != k) {
                CHECK(t, 0, "completion %u: context %p (want %p) data %llu value %u", k,
                      e[k].context, (void *)&vals[k], (unsigned long long)e[k].data, vals[k]);
                break;
            }
    }
    th_barrier(t);
    return 0;
}

const th_case_t th_tagged_cases[] = {
    {"tag64", case_tag64},   {"inject", case_inject},     {"claim", case_claim},
    {"cq_errors", case_cq_errors}, {"cq_many", case_cq_many}, {NULL, NULL},
};
