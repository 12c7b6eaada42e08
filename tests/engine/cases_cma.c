/*
 * The engine's same-host copy seen through the public API (run alone,
 * never in "all": it asserts counters only the test scripts set up).
 *
 * cma: ranks 0 and P (TERN_TEST_CMA_PEER, default 1: another host's rank
 * in tests/multinode) exchange, in turn, a contiguous 4 MiB + 3 message
 * (unaligned buffers) and a 40-segment iovec message (more segments than a
 * cookie carries inline), each checked byte for byte, then add up both
 * ranks' cma.* counters (tern_worker_counters of worker 0) and check them
 * against TERN_TEST_CMA, which the script sets to what its settings must
 * give:
 *   get       every byte moved by process_vm_readv, nothing refused
 *   put       every byte moved by process_vm_writev, nothing refused
 *   refused   the kernel (the test hook) refused at least once and the
 *             sender fell back to its netmod's own path
 *   declined  a receiver declined (its TERN_CMA, another host): no byte
 *             moved by CMA, the sender fell back
 *   none      no byte moved by CMA, nothing offered
 *   (unset)   the data only
 * Each rank prints "cma counters rank R: NAME=VALUE ..." for the scripts.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "tests/engine/cases.h"

enum { C_GET_BYTES, C_PUT_BYTES, C_GETS, C_PUTS, C_REFUSED, C_DECLINED, C_FALLBACKS, NC };
static const char *const names[NC] = {"cma.get_bytes", "cma.put_bytes", "cma.gets",     "cma.puts",
                                      "cma.refused",   "cma.declined",  "cma.fallbacks"};

static void read_counters(th_t *t, uint64_t *v)
{
    tern_counter_t c[64];
    int n = tern_worker_counters(t->w, c, 64);
    int found = 0;
    memset(v, 0, NC * sizeof(*v));
    for (int i = 0; i < n && i < 64; i++)
        for (int k = 0; k < NC; k++)
            if (strcmp(c[i].name, names[k]) == 0) {
                v[k] = c[i].value;
                found++;
            }
    CHECK(t, found == NC, "tern_worker_counters lists %d of the %d cma.* counters", found, NC);
}

/* One message of each kind from `from` to the other rank, peer. */
static void exchange(th_t *t, int from, int peer, size_t len, uint64_t seed)
{
    tern_request_t *req;
    tern_recv_info_t info;
    uint8_t *buf = malloc(len + 8);
    CHECK(t, buf != NULL, "allocation of %zu", len);
    if (buf == NULL)
        return;
    if (t->rank == from) {
        th_fill(buf + 3, len, seed);
        tern_status_t st = tern_isend(t->w, buf + 3, len, peer, 70, 0, &req);
        CHECK_ST(t, th_finish(t, st, req, NULL), TERN_OK);
    } else {
        memset(buf, 0xA5, len + 8);
        tern_status_t st = tern_irecv(t->w, buf + 5, len, peer, 70, 0, &info, &req);
        CHECK_ST(t, th_finish(t, st, req, &info), TERN_OK);
        size_t bad = th_verify(buf + 5, len, seed);
        CHECK(t, bad == (size_t)-1 && info.length == len,
              "%zu bytes from rank %d: byte %zu "
              "differs",
              len, peer, bad);
        CHECK(t, buf[4] == 0xA5 && buf[5 + len] == 0xA5, "neighbours of the buffer written");
    }
    /* 40 uneven segments each side, cut differently */
    enum { NSEG = 40 };
    struct iovec iov[NSEG];
    size_t off = 0;
    for (int i = 0; i < NSEG; i++) {
        size_t step = (size_t)i * 13, n = len / NSEG;
        n = i == NSEG - 1 ? len - off : t->rank ? n + step : n - step;
        iov[i].iov_base = buf + off;
        iov[i].iov_len = n;
        off += n;
    }
    if (t->rank == from) {
        th_fill(buf, len, seed + 1);
        tern_status_t st = tern_isendv(t->w, iov, NSEG, peer, 71, 0, &req);
        CHECK_ST(t, th_finish(t, st, req, NULL), TERN_OK);
    } else {
        memset(buf, 0, len);
        tern_status_t st = tern_irecvv(t->w, iov, NSEG, peer, 71, 0, &info, &req);
        CHECK_ST(t, th_finish(t, st, req, &info), TERN_OK);
        size_t bad = th_verify(buf, len, seed + 1);
        CHECK(t, bad == (size_t)-1, "iovec of %zu bytes from rank %d: byte %zu differs", len, peer,
              bad);
    }
    free(buf);
}

static int case_cma(th_t *t)
{
    const char *p = getenv("TERN_TEST_CMA_PEER");
    int other = p != NULL ? atoi(p) : 1;
    CHECK(t, other > 0 && other < t->size, "TERN_TEST_CMA_PEER=%d: not a rank of %d", other,
          t->size);
    if (other <= 0 || other >= t->size || (t->rank != 0 && t->rank != other))
        return 0;
    int peer = t->rank == 0 ? other : 0;
    const size_t len = 4 * 1048576 + 3;
    exchange(t, 0, peer, len, 900);
    exchange(t, other, peer, len, 910);
    uint64_t mine[NC], theirs[NC], sum[NC];
    read_counters(t, mine);
    printf("cma counters rank %d:", t->rank);
    for (int k = 0; k < NC; k++)
        printf(" %s=%llu", names[k], (unsigned long long)mine[k]);
    printf("\n");
    /* both ranks' counters: who moved the bytes depends on the mode */
    tern_request_t *req;
    tern_status_t st = tern_irecv(t->w, theirs, sizeof(theirs), peer, 72, 0, NULL, &req);
    CHECK_ST(t, tern_send(t->w, mine, sizeof(mine), peer, 72, 0), TERN_OK);
    CHECK_ST(t, th_finish(t, st, req, NULL), TERN_OK);
    for (int k = 0; k < NC; k++)
        sum[k] = mine[k] + theirs[k];
    const uint64_t moved = 4 * len; /* two messages each way */
    const char *want = getenv("TERN_TEST_CMA");
    if (want == NULL)
        return 0;
    if (strcmp(want, "get") == 0 || strcmp(want, "put") == 0) {
        int bytes = strcmp(want, "get") == 0 ? C_GET_BYTES : C_PUT_BYTES;
        int n = strcmp(want, "get") == 0 ? C_GETS : C_PUTS;
        CHECK(t, sum[bytes] >= moved && sum[n] >= 4,
              "%s: %llu bytes in %llu transfers by CMA, "
              "%llu expected",
              want, (unsigned long long)sum[bytes], (unsigned long long)sum[n],
              (unsigned long long)moved);
        CHECK(t, sum[C_REFUSED] == 0 && sum[C_DECLINED] == 0 && sum[C_FALLBACKS] == 0,
              "%s: %llu refused, %llu declined, %llu fell back", want,
              (unsigned long long)sum[C_REFUSED], (unsigned long long)sum[C_DECLINED],
              (unsigned long long)sum[C_FALLBACKS]);
    } else if (strcmp(want, "refused") == 0) {
        CHECK(t, sum[C_REFUSED] >= 1 && sum[C_FALLBACKS] >= 1,
              "refused: %llu refusals, %llu fallbacks", (unsigned long long)sum[C_REFUSED],
              (unsigned long long)sum[C_FALLBACKS]);
    } else if (strcmp(want, "declined") == 0) {
        CHECK(t,
              sum[C_DECLINED] >= 1 && sum[C_FALLBACKS] >= 1 &&
                  sum[C_GET_BYTES] + sum[C_PUT_BYTES] == 0,
              "declined: %llu declined, %llu fallbacks, %llu bytes by CMA",
              (unsigned long long)sum[C_DECLINED], (unsigned long long)sum[C_FALLBACKS],
              (unsigned long long)(sum[C_GET_BYTES] + sum[C_PUT_BYTES]));
    } else if (strcmp(want, "none") == 0) {
        uint64_t any = 0;
        for (int k = 0; k < NC; k++)
            any += sum[k];
        CHECK(t, any == 0,
              "none: the same-host copy was used or offered (%llu get bytes, %llu "
              "put bytes, %llu declined)",
              (unsigned long long)sum[C_GET_BYTES], (unsigned long long)sum[C_PUT_BYTES],
              (unsigned long long)sum[C_DECLINED]);
    } else {
        CHECK(t, 0, "TERN_TEST_CMA=%s: expected get, put, refused, declined or none", want);
    }
    return 0;
}

const th_case_t th_cma_cases[] = {
    {"cma", case_cma},
    {NULL, NULL},
};
