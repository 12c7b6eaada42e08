/* Engine cases: data integrity, matching, ordering, unexpected, iovec, self. */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "tests/engine/cases.h"

/* Sizes straddling the fastbox (4 KiB), cell (16 KiB), eager limit (16 KiB)
 * and copy-chunk (64 KiB) boundaries of the defaults, odd sizes, and large. */
static const size_t sizes[] = {
    0, 1, 7, 8, 23, 24, 63, 64, 65, 1000, 4015, 4016, 4017, 4039, 4040, 4041, 4095, 4096,
    4097, 8191, 16327, 16328, 16329, 16383, 16384, 16385, 16423, 16424, 16425, 32768 + 13,
    65535, 65536, 65537, 131072 + 7, 524287, 1048576, 1048576 + 3, 4194304 - 1,
    8388608,
};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define CANARY 64

/* Pairs (r, r^1): even ranks send first.  With `unexpected`, the receiver
 * posts only after a barrier, so every message arrives unexpected. */
static int exchange_sizes(th_t *t, bool unexpected)
{
    /* TH_SIZES_MAX: only the sizes up to it (tests sweeping settings) */
    const char *cap = getenv("TH_SIZES_MAX");
    size_t limit = cap != NULL ? strtoull(cap, NULL, 0) : SIZE_MAX;
    int peer = t->rank ^ 1;
    if (peer >= t->size)
        peer = t->rank; /* odd rank count: the last rank talks to itself */
    size_t max = sizes[NSIZES - 1];
    uint8_t *sbuf = malloc(max), *rbuf = malloc(max + CANARY);
    CHECK(t, sbuf && rbuf, "allocation");
    if (!sbuf || !rbuf)
        return 1;
    for (size_t k = 0; k < NSIZES && sizes[k] <= limit; k++) {
        size_t n = sizes[k];
        uint64_t seed = (uint64_t)t->rank * 1000 + k;
        th_fill(sbuf, n, seed);
        memset(rbuf, 0xA5, max + CANARY);
        tern_request_t *sr = NULL, *rr = NULL;
        tern_recv_info_t info = {0};
        tern_status_t rs, ss;
        if (!unexpected) {
            rs = tern_irecv(t->w, rbuf, n, peer, (int)k, 0, &info, &rr);
            ss = tern_isend(t->w, sbuf, n, peer, (int)k, 0, &sr);
        } else {
            /* The marker follows the message on the same ordered channel:
             * once our marker receive completes, the peer's message (or its
             * RTS) is necessarily in the unexpected queue. */
            int mark = 0, mark_in = 0;
            tern_request_t *mr = NULL;
            ss = tern_isend(t->w, sbuf, n, peer, (int)k, 0, &sr);
            tern_status_t ms = tern_isend(t->w, &mark, sizeof(mark), peer, 1000000 + (int)k, 0, &mr);
            CHECK_ST(t, tern_recv(t->w, &mark_in, sizeof(mark_in), peer, 1000000 + (int)k, 0, NULL),
                     TERN_OK);
            rs = tern_irecv(t->w, rbuf, n, peer, (int)k, 0, &info, &rr);
            CHECK_ST(t, th_finish(t, ms, mr, NULL), TERN_OK);
            if (n <= 1024 && getenv("TERN_EAGER_LIMIT") == NULL)
                CHECK(t, rs == TERN_OK, "unexpected eager of %zu bytes did not complete at once: %s",
                      n, tern_strerror(rs));
        }
        CHECK(t, ss == TERN_OK || ss == TERN_INPROGRESS, "isend %zu: %s", n, tern_strerror(ss));
        rs = th_finish(t, rs, rr, &info);
        ss = th_finish(t, ss, sr, NULL);
        CHECK_ST(t, ss, TERN_OK);
        CHECK_ST(t, rs, TERN_OK);
        size_t bad = th_verify(rbuf, n, (uint64_t)peer * 1000 + k);
        CHECK(t, bad == (size_t)-1, "size %zu: byte %zu differs", n, bad);
        CHECK(t, info.length == n && info.source == peer && info.tag == (int)k,
              "size %zu: info len %zu src %d tag %d", n, info.length, info.source, info.tag);
        for (size_t i = 0; i < CANARY; i++)
            if (rbuf[n + i] != 0xA5) {
                CHECK(t, 0, "size %zu: byte %zu past the message was written", n, i);
                break;
            }
    }
    free(sbuf);
    free(rbuf);
    return 0;
}

static int case_sizes(th_t *t) { return exchange_sizes(t, false); }
static int case_sizes_unexpected(th_t *t) { return exchange_sizes(t, true); }

/* Rank 0 receives ANY_SOURCE/ANY_TAG; every other rank sends NMSG messages
 * alternating eager and rendezvous sizes, each carrying its sequence number:
 * per source they must arrive in order. */
#define NMSG 40
static int case_wildcard_order(th_t *t)
{
    const size_t big = 100000, small = 16;
    uint8_t *buf = malloc(big);
    CHECK(t, buf != NULL, "allocation");
    if (t->rank == 0) {
        int next[256] = {0};
        int total = (t->size - 1) * NMSG;
        for (int i = 0; i < total; i++) {
            tern_recv_info_t info;
            tern_status_t st = tern_recv(t->w, buf, big, TERN_ANY_SOURCE, TERN_ANY_TAG, 3, &info);
            CHECK_ST(t, st, TERN_OK);
            if (st != TERN_OK)
                break;
            int src = info.source, seq;
            memcpy(&seq, buf, sizeof(seq));
            CHECK(t, src > 0 && src < t->size, "source %d", src);
            CHECK(t, seq == next[src], "from %d: seq %d, expected %d", src, seq, next[src]);
            CHECK(t, info.tag == 100 + seq % 3, "tag %d for seq %d", info.tag, seq);
            CHECK(t, info.length == ((seq & 1) ? big : small), "length %zu", info.length);
            next[src] = seq + 1;
        }
    } else {
        for (int seq = 0; seq < NMSG; seq++) {
            size_t n = (seq & 1) ? big : small;
            memset(buf, seq, n);
            memcpy(buf, &seq, sizeof(seq));
            tern_status_t st = tern_send(t->w, buf, n, 0, 100 + seq % 3, 3);
            CHECK_ST(t, st, TERN_OK);
        }
    }
    free(buf);
    return 0;
}

/* Matching by tag and by space: messages sent in one order, received in
 * another by explicit tag; spaces do not cross-match. */
static int case_tag_select(th_t *t)
{
    if (t->size < 2)
        return 0;
    if (t->rank > 1) {
        th_barrier(t); /* the barrier below is collective */
        return 0;
    }
    int peer = 1 - t->rank;
    if (t->rank == 0) {
        for (int tag = 0; tag < 5; tag++) {
            int v = tag * 10;
            CHECK_ST(t, tern_send(t->w, &v, sizeof(v), peer, tag, 0), TERN_OK);
        }
        int v = 77;
        CHECK_ST(t, tern_send(t->w, &v, sizeof(v), peer, 2, 9), TERN_OK); /* space 9 */
    } else {
        th_barrier(t);
        int v = -1;
        tern_recv_info_t info;
        CHECK_ST(t, tern_recv(t->w, &v, sizeof(v), peer, 2, 9, &info), TERN_OK);
        CHECK(t, v == 77, "space 9 got %d", v);
        for (int tag = 4; tag >= 0; tag--) {
            CHECK_ST(t, tern_recv(t->w, &v, sizeof(v), peer, tag, 0, &info), TERN_OK);
            CHECK(t, v == tag * 10 && info.tag == tag, "tag %d got %d", tag, v);
        }
    }
    if (t->rank == 0)
        th_barrier(t);
    return 0;
}

/* iovec send and receive with different segmentations, eager and LMT. */
static int case_iov(th_t *t)
{
    if (t->size < 2 || t->rank > 1)
        return 0;
    int peer = 1 - t->rank;
    const size_t lens[] = {100, 20000, 3 * 1048576 + 5};
    for (size_t k = 0; k < 3; k++) {
        size_t n = lens[k];
        uint8_t *flat = malloc(n), *buf = malloc(n + 3 * CANARY);
        th_fill(flat, n, 500 + k);
        if (t->rank == 0) {
            /* 5 uneven pieces, one empty */
            size_t cut[6] = {0, n / 7, n / 7, n / 2, n / 2 + 1, n};
            struct iovec iov[5];
            for (int i = 0; i < 5; i++) {
                iov[i].iov_base = buf + cut[i] + (size_t)i * 7;
                iov[i].iov_len = cut[i + 1] - cut[i];
                memcpy(iov[i].iov_base, flat + cut[i], iov[i].iov_len);
            }
            tern_request_t *r;
            tern_status_t st = tern_isendv(t->w, iov, 5, peer, 7, 0, &r);
            CHECK_ST(t, th_finish(t, st, r, NULL), TERN_OK);
        } else {
            memset(buf, 0x5A, n + 3 * CANARY);
            size_t cut[4] = {0, 1, n / 3, n};
            struct iovec iov[3];
            for (int i = 0; i < 3; i++) {
                iov[i].iov_base = buf + cut[i] + (size_t)i * CANARY;
                iov[i].iov_len = cut[i + 1] - cut[i];
            }
            tern_request_t *r;
            tern_recv_info_t info;
            tern_status_t st = tern_irecvv(t->w, iov, 3, peer, 7, 0, &info, &r);
            CHECK_ST(t, th_finish(t, st, r, &info), TERN_OK);
            for (int i = 0; i < 3; i++) {
                CHECK(t, memcmp(iov[i].iov_base, flat + cut[i], iov[i].iov_len) == 0,
                      "iov len %zu piece %d differs", n, i);
                const uint8_t *gap = (const uint8_t *)iov[i].iov_base + iov[i].iov_len;
                for (int g = 0; g < CANARY && i < 2; g++)
                    if (gap[g] != 0x5A) {
                        CHECK(t, 0, "iov len %zu: gap after piece %d written", n, i);
                        break;
                    }
            }
        }
        free(flat);
        free(buf);
    }
    return 0;
}

/* Messages to oneself: eager, rendezvous, unexpected and posted. */
static int case_self(th_t *t)
{
    const size_t lens[] = {0, 5, 70000, 2 * 1048576};
    for (size_t k = 0; k < 4; k++) {
        size_t n = lens[k];
        uint8_t *s = malloc(n + 1), *r = malloc(n + 1);
        th_fill(s, n, 900 + k);
        tern_request_t *sr, *rr;
        tern_recv_info_t info;
        /* unexpected first for even k, posted first for odd k */
        tern_status_t ss, rs;
        if (k % 2 == 0) {
            ss = tern_isend(t->w, s, n, t->rank, 1, 0, &sr);
            rs = tern_irecv(t->w, r, n, t->rank, 1, 0, &info, &rr);
        } else {
            rs = tern_irecv(t->w, r, n, t->rank, 1, 0, &info, &rr);
            ss = tern_isend(t->w, s, n, t->rank, 1, 0, &sr);
        }
        CHECK_ST(t, th_finish(t, rs, rr, &info), TERN_OK);
        CHECK_ST(t, th_finish(t, ss, sr, NULL), TERN_OK);
        CHECK(t, memcmp(s, r, n) == 0, "self message of %zu bytes differs", n);
        free(s);
        free(r);
    }
    return 0;
}

/* All-to-all rounds with windows of nonblocking operations in both
 * directions: with 4 ranks on 2 cores unpinned this must still finish. */
static int case_stress(th_t *t)
{
    enum { ROUNDS = 30, WIN = 8 };
    const size_t n = 3000, big = 40000;
    size_t per = (size_t)t->size * WIN;
    uint8_t *sb = malloc(big * per), *rb = malloc(big * per);
    tern_request_t **reqs = calloc(2 * per, sizeof(*reqs));
    for (int round = 0; round < ROUNDS; round++) {
        size_t len = (round % 5 == 4) ? big : n;
        size_t nr = 0;
        for (int p = 0; p < t->size; p++)
            for (int i = 0; i < WIN; i++) {
                size_t slot = (size_t)p * WIN + (size_t)i;
                tern_status_t st = tern_irecv(t->w, rb + slot * big, len, p, i, 1, NULL, &reqs[nr]);
                CHECK(t, st == TERN_OK || st == TERN_INPROGRESS, "irecv %s", tern_strerror(st));
                nr++;
            }
        for (int p = 0; p < t->size; p++)
            for (int i = 0; i < WIN; i++) {
                size_t slot = (size_t)p * WIN + (size_t)i;
                th_fill(sb + slot * big, len, (uint64_t)(round * 7919 + t->rank * 131 + p * 17 + i));
                tern_status_t st = tern_isend(t->w, sb + slot * big, len, p, i, 1, &reqs[nr]);
                CHECK(t, st == TERN_OK || st == TERN_INPROGRESS, "isend %s", tern_strerror(st));
                nr++;
            }
        CHECK_ST(t, tern_waitall(t->w, reqs, nr, NULL), TERN_OK);
        for (int p = 0; p < t->size; p++)
            for (int i = 0; i < WIN; i++) {
                size_t slot = (size_t)p * WIN + (size_t)i;
                size_t bad = th_verify(rb + slot * big, len,
                                       (uint64_t)(round * 7919 + p * 131 + t->rank * 17 + i));
                CHECK(t, bad == (size_t)-1, "round %d from %d msg %d byte %zu", round, p, i, bad);
            }
    }
    free(sb);
    free(rb);
    free(reqs);
    return 0;
}

/* Large messages (the CMA get and cooperative paths) from and into
 * unaligned buffers, up to 64 MiB, and iovecs with thousands of segments
 * (more than a cookie holds inline and more than one syscall's slice). */
static int case_large(th_t *t)
{
    if (t->size < 2)
        return 0;
    if (t->rank > 1)
        return 0;
    int peer = 1 - t->rank;
    const size_t lens[] = {65535, 65536, 65537, 1048576 + 3, 5 * 1048576 + 1, 64 * 1048576 + 5};
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        size_t n = lens[k], so = k % 7 + 1, ro = k % 5 + 3;
        uint8_t *sb = malloc(n + so), *rb = malloc(n + ro + CANARY);
        CHECK(t, sb && rb, "allocation of %zu", n);
        if (!sb || !rb)
            return 1;
        th_fill(sb + so, n, 7000 + k + (uint64_t)t->rank);
        memset(rb, 0xC3, n + ro + CANARY);
        tern_request_t *sr, *rr;
        tern_recv_info_t info;
        tern_status_t rs = tern_irecv(t->w, rb + ro, n, peer, 60, 0, &info, &rr);
        tern_status_t ss = tern_isend(t->w, sb + so, n, peer, 60, 0, &sr);
        CHECK_ST(t, th_finish(t, ss, sr, NULL), TERN_OK);
        CHECK_ST(t, th_finish(t, rs, rr, &info), TERN_OK);
        size_t bad = th_verify(rb + ro, n, 7000 + k + (uint64_t)peer);
        CHECK(t, bad == (size_t)-1, "%zu bytes (offsets %zu/%zu): byte %zu differs", n, so, ro, bad);
        CHECK(t, rb[ro - 1] == 0xC3 && rb[ro + n] == 0xC3, "%zu bytes: neighbours written", n);
        free(sb);
        free(rb);
    }
    /* 3000 uneven send segments into 1500 receive segments */
    enum { NS = 3000, NR = 1500 };
    size_t total = 0;
    struct iovec *siov = malloc(NS * sizeof(*siov)), *riov = malloc(NR * sizeof(*riov));
    for (int i = 0; i < NS; i++)
        total += (size_t)(i % 13) * 97 + 1;
    uint8_t *flat = malloc(total), *sbuf = malloc(total + NS), *rbuf = malloc(total + NR * 2);
    th_fill(flat, total, 8000 + (uint64_t)t->rank);
    size_t off = 0;
    for (int i = 0; i < NS; i++) {
        size_t len = (size_t)(i % 13) * 97 + 1;
        siov[i].iov_base = sbuf + off + (size_t)i; /* a one-byte gap between segments */
        siov[i].iov_len = len;
        memcpy(siov[i].iov_base, flat + off, len);
        off += len;
    }
    size_t per = total / NR;
    for (int i = 0; i < NR; i++) {
        riov[i].iov_base = rbuf + (size_t)i * per + (size_t)i * 2;
        riov[i].iov_len = i == NR - 1 ? total - per * (NR - 1) : per;
    }
    tern_request_t *sr, *rr;
    tern_status_t rs = tern_irecvv(t->w, riov, NR, peer, 61, 0, NULL, &rr);
    tern_status_t ss = tern_isendv(t->w, siov, NS, peer, 61, 0, &sr);
    CHECK_ST(t, th_finish(t, ss, sr, NULL), TERN_OK);
    CHECK_ST(t, th_finish(t, rs, rr, NULL), TERN_OK);
    th_fill(flat, total, 8000 + (uint64_t)peer);
    for (int i = 0; i < NR; i++)
        if (memcmp(riov[i].iov_base, flat + (size_t)i * per, riov[i].iov_len) != 0) {
            CHECK(t, 0, "iovec of %zu bytes: receive segment %d differs", total, i);
            break;
        }
    free(siov);
    free(riov);
    free(flat);
    free(sbuf);
    free(rbuf);
    return 0;
}

const th_case_t th_data_cases[] = {
    {"large", case_large},
    {"sizes", case_sizes},
    {"sizes_unexpected", case_sizes_unexpected},
    {"wildcard_order", case_wildcard_order},
    {"tag_select", case_tag_select},
    {"iov", case_iov},
    {"self", case_self},
    {"stress", case_stress},
    {NULL, NULL},
};
