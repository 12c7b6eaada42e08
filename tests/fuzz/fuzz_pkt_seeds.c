/* Seeds of fuzz_pkt (input format: fuzz_pkt.h; written as seeds.h says). */
#include "tests/fuzz/fuzz_pkt.h"
#include "tests/fuzz/seeds.h"

struct input {
    uint8_t b[32768];
    size_t n;
};

static void put(struct input *in, const void *p, size_t n)
{
    if (in->n + n > sizeof(in->b))
        abort();
    memcpy(in->b + in->n, p, n);
    in->n += n;
}

static void start(struct input *in, uint8_t setup, uint8_t posted)
{
    in->n = 0;
    put(in, &setup, 1);
    put(in, &posted, 1);
}

static void act(struct input *in, int a)
{
    uint8_t op = (uint8_t)(OP_ACTION + a);
    put(in, &op, 1);
}

/* A packet (header, then cookie or payload of blen bytes of a pattern),
 * fed in fragments of step bytes. */
static void pkt(struct input *in, tern_pkt_hdr_t h, size_t blen, size_t step)
{
    uint8_t p[TERN_PKT_HDR_SIZE + 20000];
    memcpy(p, &h, sizeof(h));
    for (size_t i = 0; i < blen; i++)
        p[sizeof(h) + i] = (uint8_t)(i * 7 + 3);
    for (size_t off = 0, n = sizeof(h) + blen; off < n;) {
        uint8_t k = (uint8_t)(n - off < step ? n - off : step);
        put(in, &k, 1);
        put(in, p + off, k);
        off += k;
    }
}

static tern_pkt_hdr_t eager(int tag, uint16_t space, size_t len)
{
    return (tern_pkt_hdr_t){.type = TERN_PKT_EAGER, .space = space, .tag = tag, .len = len};
}

static tern_pkt_hdr_t rts(int mode, int tag, size_t len, uint32_t clen)
{
    return (tern_pkt_hdr_t){.type = TERN_PKT_RTS, .flags = (uint8_t)mode, .tag = tag, .len = len,
                            .sreq = 0x77, .cookie_len = clen};
}

static tern_pkt_hdr_t ctl(int type, uint64_t sreq, uint64_t rreq, uint32_t clen)
{
    return (tern_pkt_hdr_t){.type = (uint8_t)type, .sreq = sreq, .rreq = rreq, .cookie_len = clen};
}

void fuzz_pkt_write_seeds(void)
{
    enum { WHOLE = OP_ACTION - 1 };
    static struct input in;

    start(&in, 0, 0xff); /* every slot posted, eager packets matching them */
    pkt(&in, eager(0, 0, 8), 8, WHOLE);
    pkt(&in, eager(1, 0, 64), 64, WHOLE);
    pkt(&in, eager(2, 0, 16), 16, WHOLE);
    pkt(&in, eager(5, 0, 0), 0, WHOLE);
    pkt(&in, eager(9, 3, 50), 50, 13);
    act(&in, ACT_REAP);
    seed_write("eager_posted", in.b, in.n);

    start(&in, 0, 0x08); /* fragments; then an unexpected one a later post takes */
    pkt(&in, eager(4, 0, 300), 300, 7);
    pkt(&in, eager(4, 0, 2000), 2000, 200);
    act(&in, ACT_POST + 4);
    act(&in, ACT_REAP);
    seed_write("eager_fragments", in.b, in.n);

    start(&in, 0, 0); /* unexpected first, then posted */
    pkt(&in, eager(1, 0, 64), 64, WHOLE);
    pkt(&in, eager(2, 0, 20), 20, 1);
    pkt(&in, eager(0, 0, 8), 8, WHOLE);
    for (int k = 0; k < 3; k++)
        act(&in, ACT_POST + k);
    act(&in, ACT_REAP);
    seed_write("unexpected_then_posted", in.b, in.n);

    start(&in, 0, 0x08); /* null mode: RTS, our CTS, DATA */
    pkt(&in, rts(TERN_LMT_NULL, 9, 3000, 0), 0, WHOLE);
    pkt(&in, (tern_pkt_hdr_t){.type = TERN_PKT_DATA, .len = 3000, .rreq = FIRST_ID}, 3000,
        WHOLE);
    act(&in, ACT_REAP);
    seed_write("rndv_recv_null", in.b, in.n);

    start(&in, SETUP_QUEUE, 0); /* null mode send: our RTS, their CTS, our DATA */
    act(&in, ACT_SEND_RNDV);
    act(&in, ACT_DRAIN);
    pkt(&in, ctl(TERN_PKT_CTS, FIRST_ID, 0x55, 0), 0, WHOLE);
    act(&in, ACT_DRAIN);
    act(&in, ACT_REAP);
    seed_write("rndv_send_null", in.b, in.n);

    start(&in, SETUP_LMT, 0x08); /* netmod LMT receive: RTS, COOKIE, DONE */
    pkt(&in, rts(TERN_LMT_COOP, 9, 20000, 8), 8, WHOLE);
    pkt(&in, ctl(TERN_PKT_COOKIE, 0, FIRST_ID, 8), 8, WHOLE);
    pkt(&in, ctl(TERN_PKT_DONE, 0, FIRST_ID, 0), 0, 5);
    act(&in, ACT_REAP);
    seed_write("rndv_recv_lmt", in.b, in.n);

    start(&in, SETUP_LMT | SETUP_QUEUE, 0); /* netmod LMT send: CTS, COOKIE, DONE */
    act(&in, ACT_SEND_RNDV);
    act(&in, ACT_DRAIN);
    pkt(&in, ctl(TERN_PKT_CTS, FIRST_ID, 0x55, 8), 8, WHOLE);
    pkt(&in, ctl(TERN_PKT_COOKIE, FIRST_ID, 0, 8), 8, WHOLE);
    pkt(&in, ctl(TERN_PKT_DONE, FIRST_ID, 0, 0), 0, WHOLE);
    act(&in, ACT_REAP);
    seed_write("rndv_send_lmt", in.b, in.n);

    start(&in, SETUP_LMT, 0); /* an unexpected RTS with a cookie, matched later */
    pkt(&in, rts(TERN_LMT_GET, 2, 30000, 16), 16, 3);
    act(&in, ACT_POST + 4);
    pkt(&in, ctl(TERN_PKT_DONE, 0, FIRST_ID, 0), 0, WHOLE);
    act(&in, ACT_REAP);
    seed_write("unexpected_rts_lmt", in.b, in.n);

    start(&in, 0, 0x03); /* the peer's BYE (a bare header), fragmented, between packets */
    pkt(&in, eager(0, 0, 8), 8, WHOLE);
    pkt(&in, ctl(TERN_PKT_BYE, 0, 0, 0), 0, 11);
    pkt(&in, eager(1, 0, 8), 8, WHOLE);
    act(&in, ACT_REAP);
    seed_write("bye", in.b, in.n);

    start(&in, 0, 0x03); /* one-sided operations on no region: refused, the VC lives */
    pkt(&in, (tern_pkt_hdr_t){.type = TERN_PKT_RMA_PUT, .tag = 0x1000, .len = 8,
                              .rreq = 1ull << 32}, 8, 5);
    pkt(&in, (tern_pkt_hdr_t){.type = TERN_PKT_RMA_ACC, .space = TERN_DT_INT32, .tag = 0x1000,
                              .len = 8, .rreq = 1ull << 32}, 8, WHOLE);
    pkt(&in, (tern_pkt_hdr_t){.type = TERN_PKT_RMA_AMO, .space = 8, .cookie_len = 16,
                              .rreq = 1ull << 32}, 16, 7);
    pkt(&in, (tern_pkt_hdr_t){.type = TERN_PKT_RMA_GET, .len = 8, .rreq = 1ull << 32,
                              .sreq = 0x77}, 0, WHOLE);
    pkt(&in, ctl(TERN_PKT_RMA_FLUSH, 0x78, 0, 0), 0, WHOLE);
    pkt(&in, eager(0, 0, 8), 8, WHOLE);
    act(&in, ACT_REAP);
    seed_write("rma_refused", in.b, in.n);

    start(&in, 0, 0x11); /* a malformed header fails the VC and its receives */
    pkt(&in, eager(0, 0, 8), 8, WHOLE);
    pkt(&in, (tern_pkt_hdr_t){.type = 99}, 0, WHOLE);
    act(&in, ACT_REAP);
    seed_write("malformed", in.b, in.n);
}
