/*
 * Unit test of the small-message fast path over shm, two ranks in one
 * process sharing one segment: istart_contig_msg writes the packet into
 * the peer's next fastbox slot, poll_recv hands it to the engine, whose
 * eager fast path copies it into the posted receive and completes it.
 *
 * Besides the data and the statuses, it checks what the path must not do
 * for a small message (the calls are wrapped at link time and counted):
 * call memcpy (a library call for 8 bytes costs more than the copy, on
 * every message's critical path), or make an out-of-line completion call
 * for a whole, untruncated receive: neither the general completion
 * (tern_recv_data_complete) nor the request's slow completion
 * (tern_request_complete_slow: ids, VC lists, internal requests).  A
 * truncated receive must still take the general completion and say
 * TRUNCATED.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "netmods/shm/shm_internal.h"

#include "tests/unit/expect.h"

/* link: -Wl,--wrap=memcpy,--wrap=tern_recv_data_complete,--wrap=tern_request_complete_slow
 * complete_calls counts both completion calls. */
static int memcpy_calls, complete_calls;
void *__real_memcpy(void *dst, const void *src, size_t n);
void *__wrap_memcpy(void *dst, const void *src, size_t n);
void *__wrap_memcpy(void *dst, const void *src, size_t n)
{
    memcpy_calls++;
    return __real_memcpy(dst, src, n);
}
void __real_tern_recv_data_complete(tern_request_t *r);
void __wrap_tern_recv_data_complete(tern_request_t *r);
void __wrap_tern_recv_data_complete(tern_request_t *r)
{
    complete_calls++;
    __real_tern_recv_data_complete(r);
}
void __real_tern_request_complete_slow(tern_request_t *r);
void __wrap_tern_request_complete_slow(tern_request_t *r);
void __wrap_tern_request_complete_slow(tern_request_t *r)
{
    complete_calls++;
    __real_tern_request_complete_slow(r);
}

/* Call counts are a property of optimised code (an -O0 build calls memcpy
 * for fixed sizes too; sanitizers replace it): checked only there. */
#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define COUNTS_CHECKED 1
#else
#define COUNTS_CHECKED 0
#endif

typedef struct rank {
    tern_context_t ctx;
    tern_worker_t w;
    tern_vc_t vcs[2];
    tern_shm_t shm;
} rank_t;

static rank_t ranks[2];
static tern_shm_config_t cfg = {.fbox_size = 512,
                                .num_fbox = 4,
                                .cell_size = 16384,
                                .num_cells = 4,
                                .chunk_size = 65536,
                                .num_chunks = 2};

static int setup(void)
{
    for (int i = 0; i < 2; i++) {
        rank_t *r = &ranks[i];
        memset(r, 0, sizeof(*r));
        snprintf(r->ctx.pmix.nspace, sizeof(r->ctx.pmix.nspace), "shm_fastpath_test.%d",
                 (int)getpid());
        if (tern_config_load(&r->ctx.cfg) != TERN_OK)
            return -1;
        r->ctx.cfg.wait_mode = TERN_WAIT_YIELD;
        r->ctx.rank = i;
        r->ctx.size = 2;
        r->ctx.workers = &r->w;
        r->ctx.num_workers = 1;
        if (tern_worker_init(&r->w, &r->ctx, 0) != TERN_OK)
            return -1;
        r->w.vcs = r->vcs;
        for (int p = 0; p < 2; p++) {
            r->vcs[p].rank = p;
            r->vcs[p].worker = &r->w;
            r->vcs[p].eager_limit = r->ctx.cfg.eager_limit;
            tern_list_init(&r->vcs[p].lmt_wait);
        }
        r->shm.ctx = &r->ctx;
        r->shm.worker = &r->w;
        r->shm.cfg = &cfg;
        r->shm.my_idx = i;
        r->shm.nlocal = 2;
        r->shm.wake_fd = -1;
        r->shm.numa_node = -1;
    }
    tern_shm_segment_name(&ranks[0].shm, ranks[0].shm.seg_name, sizeof(ranks[0].shm.seg_name));
    if (tern_shm_segment_create(&ranks[0].shm) != TERN_OK)
        return -1;
    ranks[1].shm.base = ranks[0].shm.base; /* the same mapping serves both */
    ranks[1].shm.size = ranks[0].shm.size;
    ranks[1].shm.hdr = ranks[0].shm.hdr;
    for (int i = 0; i < 2; i++) {
        rank_t *r = &ranks[i];
        tern_vc_t *vc = &r->vcs[1 - i];
        if (tern_shm_use_segment(&r->shm) != TERN_OK ||
            tern_shm_vc_setup(&r->shm, vc, 1 - i, (int)getpid()) != TERN_OK)
            return -1;
        vc->nm_state = &r->shm;
    }
    return 0;
}

static void teardown(void)
{
    for (int i = 0; i < 2; i++) {
        tern_shm_t *s = &ranks[i].shm;
        if (s->vcs != NULL && s->vcs[1 - i].pidfd >= 0)
            close(s->vcs[1 - i].pidfd);
        free(s->vcs);
        tern_worker_fini(&ranks[i].w);
    }
    tern_shm_segment_detach(&ranks[0].shm);
}

/* One message of len bytes from rank `from` into a receive of cap bytes:
 * the status the receive completes with; the calls counted meanwhile. */
static tern_status_t one(int from, size_t len, size_t cap, int *memcpys, int *completes)
{
    rank_t *src = &ranks[from], *dst = &ranks[1 - from];
    uint8_t out[1024], in[1024];
    for (size_t i = 0; i < len; i++)
        out[i] = (uint8_t)(len * 3 + i * 7 + 1);
    memset(in, 0xee, sizeof(in));
    tern_request_t *rreq = NULL, *sreq = NULL;
    if (tern_irecv(&dst->w, in, cap, from, 7, 0, NULL, &rreq) != TERN_INPROGRESS)
        return TERN_ERR_INVALID_PARAM; /* reported by the caller */
    tern_pkt_hdr_t h = {.type = TERN_PKT_EAGER, .tag = 7, .len = len};
    memcpy_calls = complete_calls = 0;
    tern_status_t st =
        tern_shm_istart_contig_msg(&src->vcs[1 - from], &h, sizeof(h), out, len, &sreq);
    unsigned got = tern_shm_poll_recv(&dst->shm, &dst->shm.vcs[from], 32);
    *memcpys = memcpy_calls;
    *completes = complete_calls;
    EXPECT(st == TERN_OK && sreq == NULL, "send of %zu bytes: %s", len, tern_strerror(st));
    EXPECT(got == 1, "%zu bytes: %u units received", len, got);
    EXPECT(rreq->flags & TERN_REQF_COMPLETE, "%zu bytes: receive not complete", len);
    size_t n = len < cap ? len : cap;
    EXPECT(memcmp(in, out, n) == 0, "%zu bytes into %zu: data differ", len, cap);
    EXPECT(in[n] == 0xee, "%zu bytes into %zu: byte %zu written past the message", len, cap, n);
    tern_recv_info_t info;
    st = tern_test(&dst->w, rreq, &info);
    EXPECT(info.length == len && info.source == from && info.tag == 7, "%zu bytes: info", len);
    return st;
}

int main(void)
{
    if (setup() != 0) {
        fprintf(stderr, "setup: %s\n", tern_last_error());
        teardown();
        return 1;
    }
    int m, c;
    /* every small size, both directions, around the ring several times */
    for (size_t len = 0; len <= 64; len++) {
        for (int from = 0; from < 2; from++) {
            tern_status_t st = one(from, len, sizeof(uint8_t[1024]) - 1, &m, &c);
            EXPECT(st == TERN_OK, "%zu bytes from %d: %s", len, from, tern_strerror(st));
            if (COUNTS_CHECKED && len <= 16)
                EXPECT(m == 0, "%zu bytes: %d calls to memcpy on the fast path", len, m);
            EXPECT(c == 0, "%zu bytes: general completion taken %d times", len, c);
        }
    }
    /* the largest that fits a fastbox slot (512 - 16 header - 40 packet header) */
    EXPECT(one(0, 456, 1000, &m, &c) == TERN_OK && c == 0, "456 bytes");
    /* truncated: the general completion, which says so */
    tern_status_t st = one(1, 8, 4, &m, &c);
    EXPECT(st == TERN_ERR_TRUNCATED, "8 bytes into 4: %s", tern_strerror(st));
    EXPECT(c == 1, "truncated: general completion taken %d times", c);
    if (!COUNTS_CHECKED)
        printf("# calls to memcpy not counted in this build (unoptimised or sanitized)\n");
    teardown();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
