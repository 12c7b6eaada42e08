/*
 * ofi_ops' one-sided cases (FI_RMA, FI_ATOMIC), both processes at once,
 * each the other's target: registrations for remote access under keys the
 * application picks (mr_mode 0: offsets into the registration), writes and
 * reads in every form, remote CQ data, injects, delivery completion,
 * atomics from both sides on one counter (exact totals), one
 * compare-and-swap winner, and the errors: a key nobody registered, an
 * access past the registration, one through a closed registration.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

#include "tests/ofi/ofi_ops.h"

#define LEN 65536
#define KEY_BASE 0x7e000
#define ROUNDS 200

/* Retry while the provider fetches the peer's key (-FI_EAGAIN), reading
 * the CQ meanwhile (the peer answers from its own progress). */
#define POST(call)                                                                                 \
    ({                                                                                             \
        ssize_t post_r;                                                                            \
        double post_end = now_s() + WAIT_S;                                                        \
        while ((post_r = (call)) == -FI_EAGAIN && now_s() < post_end)                              \
            tep_poll(&T);                                                                          \
        post_r;                                                                                    \
    })

static struct fid_mr *reg(void *buf, size_t len, uint64_t access, uint64_t key)
{
    struct fid_mr *mr = NULL;
    CHECK_RET(fi_mr_reg(T.domain, buf, len, access, 0, key, 0, &mr, NULL), 0, "fi_mr_reg");
    return mr;
}

static unsigned char pattern(int who, size_t i)
{
    return (unsigned char)(who * 101 + i * 7 + 3);
}

/* this process in T's AV (A's counters are everyone's target) */
static fi_addr_t self_addr(void)
{
    static fi_addr_t self = FI_ADDR_NOTAVAIL;
    if (self == FI_ADDR_NOTAVAIL) {
        char name[8192];
        size_t len = sizeof(name);
        CHECK_RET(fi_getname(&T.ep->fid, name, &len), 0, "fi_getname");
        CHECK_RET(fi_av_insert(T.av, name, 1, &self, 0, NULL), 1, "fi_av_insert(self)");
    }
    return self;
}
#define PEER_OR_SELF() (IS_A ? self_addr() : PEER)

void case_rma(void)
{
    unsigned char *mem = malloc(LEN), *src = malloc(LEN), *back = malloc(LEN);
    memset(mem, 0, LEN);
    struct fid_mr *mr = reg(mem, LEN, FI_REMOTE_READ | FI_REMOTE_WRITE, KEY_BASE + ROLE);
    uint64_t pkey = KEY_BASE + !ROLE;
    for (size_t i = 0; i < LEN; i++)
        src[i] = pattern(ROLE, i);
    sync_peer();
    struct fi_context c[8];
    /* plain write of 40000 bytes at offset 1000 (a rendezvous size) */
    CHECK_RET(POST(fi_write(T.ep, src, 40000, NULL, PEER, 1000, pkey, &c[0])), 0, "fi_write");
    wait_ok(&c[0], "fi_write", NULL);
    /* writev of two pieces at offset 50000, delivery complete */
    struct iovec iov[2] = {{src, 100}, {src + 100, 900}};
    struct fi_rma_iov riov = {.addr = 50000, .len = 1000, .key = pkey};
    struct fi_msg_rma m = {.msg_iov = iov, .iov_count = 2, .addr = PEER, .rma_iov = &riov,
                           .rma_iov_count = 1, .context = &c[1]};
    CHECK_RET(POST(fi_writemsg(T.ep, &m, FI_DELIVERY_COMPLETE | FI_COMPLETION)), 0,
              "fi_writemsg");
    wait_ok(&c[1], "fi_writemsg", NULL);
    /* an inject of 64 bytes at offset 60000, the buffer changed at once */
    unsigned char small[64];
    memcpy(small, src, 64);
    CHECK_RET(POST(fi_inject_write(T.ep, small, 64, PEER, 60000, pkey)), 0, "fi_inject_write");
    memset(small, 0xee, 64);
    /* remote CQ data: the peer's receive CQ gets it */
    CHECK_RET(POST(fi_writedata(T.ep, src, 16, NULL, 0xD0D0 + ROLE, PEER, 61000, pkey, &c[2])),
              0, "fi_writedata");
    wait_ok(&c[2], "fi_writedata", NULL);
    /* reading back what this side wrote (ordered after it: one stream) */
    CHECK_RET(POST(fi_read(T.ep, back, 40000, NULL, PEER, 1000, pkey, &c[3])), 0, "fi_read");
    wait_ok(&c[3], "fi_read", NULL);
    CHECK(memcmp(back, src, 40000) == 0, "fi_read returned other bytes than fi_write wrote");
    struct iovec riv[2] = {{back, 500}, {back + 500, 500}};
    CHECK_RET(POST(fi_readv(T.ep, riv, NULL, 2, PEER, 50000, pkey, &c[4])), 0, "fi_readv");
    wait_ok(&c[4], "fi_readv", NULL);
    CHECK(memcmp(back, src, 1000) == 0, "fi_readv returned other bytes");
    /* the peer's remote CQ data, in the receive CQ */
    bool seen = false;
    double end = now_s() + WAIT_S;
    while (!seen && now_s() < end) {
        tep_poll(&T);
        for (int i = 0; i < T.nstash && !seen; i++)
            if ((T.stash[i].flags & FI_REMOTE_CQ_DATA) && (T.stash[i].flags & FI_REMOTE_WRITE)) {
                seen = true;
                CHECK(T.stash[i].data == 0xD0D0u + !ROLE, "remote CQ data %#llx",
                      (unsigned long long)T.stash[i].data);
                T.stash[i] = T.stash[--T.nstash];
            }
    }
    CHECK(seen, "no remote CQ data from the peer's fi_writedata");
    sync_peer(); /* both sides' writes are in place */
    for (size_t i = 0; i < 40000; i++)
        if (mem[1000 + i] != pattern(!ROLE, i)) {
            CHECK(0, "byte %zu of the peer's write: %u", i, mem[1000 + i]);
            break;
        }
    CHECK(mem[999] == 0 && mem[41000] == 0, "the write went past its range");
    CHECK(memcmp(mem + 50000, mem + 1000, 1000) == 0, "the peer's writemsg");
    for (size_t i = 0; i < 64; i++)
        if (mem[60000 + i] != pattern(!ROLE, i)) {
            CHECK(0, "byte %zu of the peer's inject: %u", i, mem[60000 + i]);
            break;
        }
    sync_peer();
    CHECK_RET(fi_close(&mr->fid), 0, "fi_close(mr)");
    free(mem);
    free(src);
    free(back);
    printf("ok rma\n");
}

void case_atomic(void)
{
    int64_t *ctr = calloc(4, sizeof(int64_t));
    struct fid_mr *mr = reg(ctr, 4 * sizeof(int64_t), FI_REMOTE_READ | FI_REMOTE_WRITE,
                            KEY_BASE + 16 + ROLE);
    uint64_t akey = KEY_BASE + 16; /* A's counters: both sides add to them */
    size_t count = 0;
    CHECK_RET(fi_atomicvalid(T.ep, FI_INT64, FI_SUM, &count), 0, "fi_atomicvalid sum");
    CHECK(count >= 1, "fi_atomicvalid count %zu", count);
    CHECK_RET(fi_compare_atomicvalid(T.ep, FI_INT64, FI_CSWAP, &count), 0, "cswap valid");
    CHECK_RET(fi_compare_atomicvalid(T.ep, FI_INT64, FI_CSWAP_NE, &count), -FI_EOPNOTSUPP,
              "cswap_ne valid");
    CHECK_RET(fi_atomicvalid(T.ep, FI_DOUBLE, FI_BAND, &count), -FI_EOPNOTSUPP, "band double");
    CHECK_RET(fi_fetch_atomicvalid(T.ep, FI_UINT32, FI_ATOMIC_READ, &count), 0, "read valid");
    sync_peer();
    int64_t one = 1, old = 0, max_old = -1;
    struct fi_context c[4];
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_RET(POST(fi_fetch_atomic(T.ep, &one, 1, NULL, &old, NULL, PEER_OR_SELF(), 0, akey,
                                       FI_INT64, FI_SUM, &c[0])),
                  0, "fi_fetch_atomic");
        wait_ok(&c[0], "fi_fetch_atomic", NULL);
        CHECK(old >= 0 && old < 2 * ROUNDS, "fetch-and-add gave %lld", (long long)old);
        if (old > max_old)
            max_old = old;
        double half = 0.5;
        CHECK_RET(POST(fi_atomic(T.ep, &half, 1, NULL, PEER_OR_SELF(), 8, akey, FI_DOUBLE, FI_SUM,
                                 &c[1])),
                  0, "fi_atomic");
        wait_ok(&c[1], "fi_atomic", NULL);
    }
    int64_t mine = ROLE + 1, zero = 0, prev = -1;
    CHECK_RET(POST(fi_compare_atomic(T.ep, &mine, 1, NULL, &zero, NULL, &prev, NULL,
                                     PEER_OR_SELF(), 16, akey, FI_INT64, FI_CSWAP, &c[2])),
              0, "fi_compare_atomic");
    wait_ok(&c[2], "fi_compare_atomic", NULL);
    sync_peer(); /* every atomic is applied */
    int64_t sum = -1;
    CHECK_RET(POST(fi_fetch_atomic(T.ep, NULL, 1, NULL, &sum, NULL, PEER_OR_SELF(), 0, akey,
                                   FI_INT64, FI_ATOMIC_READ, &c[3])),
              0, "fi_fetch_atomic read");
    wait_ok(&c[3], "fi_fetch_atomic read", NULL);
    CHECK(sum == 2 * ROUNDS, "the counter holds %lld, want %d", (long long)sum, 2 * ROUNDS);
    if (IS_A) {
        double d;
        memcpy(&d, &ctr[1], sizeof(d));
        CHECK(d == 0.5 * 2 * ROUNDS, "the double sum holds %g", d);
        CHECK(ctr[2] == 1 || ctr[2] == 2, "compare-and-swap left %lld", (long long)ctr[2]);
    }
    /* one winner: the peer learns which by a sync and a read */
    int64_t winner = -1;
    CHECK_RET(POST(fi_fetch_atomic(T.ep, NULL, 1, NULL, &winner, NULL, PEER_OR_SELF(), 16, akey,
                                   FI_INT64, FI_ATOMIC_READ, &c[3])),
              0, "read the winner");
    wait_ok(&c[3], "read the winner", NULL);
    CHECK((prev == 0) == (winner == mine), "compare-and-swap: old %lld, winner %lld, mine %lld",
          (long long)prev, (long long)winner, (long long)mine);
    sync_peer();
    CHECK_RET(fi_close(&mr->fid), 0, "fi_close(mr)");
    free(ctr);
    printf("ok atomic\n");
}

void case_rma_errors(void)
{
    unsigned char *mem = calloc(1, 4096), buf[64] = {0};
    struct fid_mr *mr = reg(mem, 4096, FI_REMOTE_READ | FI_REMOTE_WRITE, KEY_BASE + 32 + ROLE);
    uint64_t pkey = KEY_BASE + 32 + !ROLE;
    sync_peer();
    struct fi_context c[2];
    /* a key nobody registered */
    CHECK_RET(POST(fi_write(T.ep, buf, 8, NULL, PEER, 0, 0xbad0bad0ull, &c[0])), -FI_EKEYREJECTED,
              "fi_write with an unknown key");
    /* past the end of the registration: refused before anything moves (the
     * key knows the registration's length) */
    CHECK_RET(POST(fi_write(T.ep, buf, 64, NULL, PEER, 4090, pkey, &c[0])), -FI_EINVAL,
              "fi_write past the end");
    CHECK_RET(POST(fi_read(T.ep, buf, 8, NULL, PEER, 4096, pkey, &c[0])), -FI_EINVAL,
              "fi_read past the end");
    struct fi_cq_err_entry e;
    sync_peer();
    /* through a closed registration: refused, nothing written */
    CHECK_RET(fi_close(&mr->fid), 0, "fi_close(mr)");
    sync_peer();
    memset(buf, 0x55, sizeof(buf));
    ssize_t r = POST(fi_write(T.ep, buf, 8, NULL, PEER, 0, pkey, &c[1]));
    if (r == 0) {
        e = wait_ok(&c[1], "fi_write after the close", NULL);
        CHECK(e.err != 0, "a write through a closed registration completed without an error");
    } else {
        CHECK(r == -FI_EKEYREJECTED, "fi_write after the close: %zd", r);
    }
    sync_peer();
    CHECK(mem[0] == 0, "a write through a closed registration reached the memory");
    free(mem);
    printf("ok rma_errors\n");
}
