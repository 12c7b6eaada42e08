/*
 * iofwd wire format (iofwd/proto.c): every message type round-trips; every
 * field a peer could get wrong is refused with TERN_ERR_MALFORMED naming
 * it; truncated, padded, foreign and future messages are refused; nothing
 * is read past the length given (each case decodes from an exact-size heap
 * copy, so ASan sees any overread).
 */
#include <stdlib.h>
#include <string.h>

#include "iofwd/proto.h"
#include "tests/unit/expect.h"

static tern_status_t decode_exact(const void *buf, size_t len, tern_io_msg_t *out)
{
    void *copy = malloc(len ? len : 1);
    memcpy(copy, buf, len);
    tern_status_t st = tern_io_decode(copy, len, out);
    free(copy);
    return st;
}

static size_t enc(const tern_io_msg_t *m, unsigned char *buf)
{
    size_t n = tern_io_encode(m, buf, TERN_IO_MSG_BYTES);
    EXPECT(n == tern_io_size(m->type) && n > 0, "encode %s: %zu bytes", tern_io_type_name(m->type),
           n);
    return n;
}

/* m encoded, mutated by poke, must be refused naming `field` */
static void expect_refused(const tern_io_msg_t *m, void (*poke)(unsigned char *), const char *field)
{
    unsigned char buf[TERN_IO_MSG_BYTES + 16];
    tern_io_msg_t out;
    size_t n = enc(m, buf);
    poke(buf);
    tern_status_t st = decode_exact(buf, n, &out);
    EXPECT(st == TERN_ERR_MALFORMED && strstr(tern_last_error(), field) != NULL,
           "%s with a bad %s: %s (%s)", tern_io_type_name(m->type), field, tern_strerror(st),
           tern_last_error());
}

static tern_io_msg_t good_connect(void)
{
    tern_io_msg_t m = {.type = TERN_IO_CONNECT};
    strcpy(m.u.connect.job, "ternrun-123");
    m.u.connect.rank = 1;
    m.u.connect.ranks = 4;
    m.u.connect.pid = 4242;
    m.u.connect.buf_addr = 0x7f0000001000ull;
    m.u.connect.buf_len = 64ull << 20;
    m.u.connect.mode = TERN_IO_PER_RANK;
    strcpy(m.u.connect.path, "/tmp/out");
    return m;
}

#define BODY(buf, type, field) ((buf) + sizeof(tern_io_hdr_t) + offsetof(type, field))
static void job_unterminated(unsigned char *b) { memset(BODY(b, tern_io_connect_t, job), 'x', TERN_IO_JOB_MAX); }
static void job_empty(unsigned char *b) { *BODY(b, tern_io_connect_t, job) = 0; }
static void rank_high(unsigned char *b) { uint32_t v = 4; memcpy(BODY(b, tern_io_connect_t, rank), &v, 4); }
static void ranks_zero(unsigned char *b) { memset(BODY(b, tern_io_connect_t, ranks), 0, 4); }
static void pid_neg(unsigned char *b) { int32_t v = -1; memcpy(BODY(b, tern_io_connect_t, pid), &v, 4); }
static void buf_wraps(unsigned char *b) { uint64_t v = ~0ull - 10; memcpy(BODY(b, tern_io_connect_t, buf_addr), &v, 8); }
static void buf_empty(unsigned char *b) { memset(BODY(b, tern_io_connect_t, buf_len), 0, 8); }
static void conn_reserved(unsigned char *b) { memset(BODY(b, tern_io_connect_t, reserved), 1, 1); }
static void mode_bad(unsigned char *b) { uint32_t v = 3; memcpy(BODY(b, tern_io_connect_t, mode), &v, 4); }
static void flags_bad(unsigned char *b) { uint32_t v = 6; memcpy(BODY(b, tern_io_connect_t, flags), &v, 4); }
static void region_set(unsigned char *b) { uint64_t v = 4096; memcpy(BODY(b, tern_io_connect_t, region), &v, 8); }
static void path_relative(unsigned char *b) { memcpy(BODY(b, tern_io_connect_t, path), "out", 4); }
static void path_unterminated(unsigned char *b) { memset(BODY(b, tern_io_connect_t, path), '/', TERN_IO_PATH_MAX); }
static void bad_magic(unsigned char *b) { b[0] ^= 0xff; }
static void bad_version(unsigned char *b) { uint16_t v = 2; memcpy(b + offsetof(tern_io_hdr_t, version), &v, 2); }
static void bad_type(unsigned char *b) { uint16_t v = 99; memcpy(b + offsetof(tern_io_hdr_t, type), &v, 2); }
static void hdr_reserved(unsigned char *b) { b[offsetof(tern_io_hdr_t, reserved)] = 1; }
static void body_len(unsigned char *b) { uint32_t v = 8; memcpy(b + offsetof(tern_io_hdr_t, len), &v, 4); }
static void wr_wraps(unsigned char *b)
{
    uint64_t off = ~0ull - 5, len = 100;
    memcpy(BODY(b, tern_io_write_req_t, offset), &off, 8);
    memcpy(BODY(b, tern_io_write_req_t, len), &len, 8);
}
static void done_status(unsigned char *b) { int32_t v = 3; memcpy(BODY(b, tern_io_write_done_t, status), &v, 4); }
static void done_errno(unsigned char *b) { int32_t v = -5; memcpy(BODY(b, tern_io_write_done_t, err), &v, 4); }
static void err_status(unsigned char *b) { memset(BODY(b, tern_io_error_t, status), 0, 4); }
static void err_msg(unsigned char *b) { memset(BODY(b, tern_io_error_t, msg), 'y', TERN_IO_MSG_MAX); }
static void credits_zero(unsigned char *b) { memset(BODY(b, tern_io_connected_t, credits), 0, 4); }

int main(void)
{
    unsigned char buf[TERN_IO_MSG_BYTES + 16];
    tern_io_msg_t out;

    /* round trips */
    tern_io_msg_t all[] = {
        good_connect(),
        {.type = TERN_IO_CONNECTED, .u.connected = {.credits = 8, .staging = 4 << 20}},
        {.type = TERN_IO_WRITE_REQ, .u.write_req = {.seq = 7, .offset = 1 << 30, .len = 5}},
        {.type = TERN_IO_WRITE_DONE, .u.write_done = {.seq = 7, .status = TERN_ERR_IO, .err = 28}},
        {.type = TERN_IO_BYE},
        {.type = TERN_IO_FINISHED, .u.finished = {.status = 0, .bytes = 12345}},
        {.type = TERN_IO_ERROR, .u.error = {.status = TERN_ERR_MALFORMED, .field = 4, .msg = "x"}},
        {.type = TERN_IO_PING},
        {.type = TERN_IO_PONG},
        {.type = TERN_IO_HELD, .u.write_done = {.seq = 9, .status = TERN_ERR_IO, .err = 28}},
    };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        size_t n = enc(&all[i], buf);
        tern_status_t st = decode_exact(buf, n, &out);
        EXPECT(st == TERN_OK && out.type == all[i].type &&
                   memcmp(&out.u, &all[i].u, tern_io_size(all[i].type) - sizeof(tern_io_hdr_t)) == 0,
               "%s round trip: %s (%s)", tern_io_type_name(all[i].type), tern_strerror(st),
               tern_last_error());
        /* every shorter prefix and one byte more are refused */
        for (size_t k = 0; k < n; k++)
            EXPECT(decode_exact(buf, k, &out) == TERN_ERR_MALFORMED, "%s cut to %zu bytes",
                   tern_io_type_name(all[i].type), k);
        buf[n] = 0;
        EXPECT(decode_exact(buf, n + 1, &out) == TERN_ERR_MALFORMED, "%s with a byte more",
               tern_io_type_name(all[i].type));
    }
    EXPECT(tern_io_encode(&all[0], buf, tern_io_size(TERN_IO_CONNECT) - 1) == 0,
           "encode into a buffer one byte short");
    tern_io_msg_t unknown = {.type = TERN_IO_NTYPES};
    EXPECT(tern_io_encode(&unknown, buf, sizeof(buf)) == 0, "encode of an unknown type");
    EXPECT(tern_io_decode(NULL, 16, &out) == TERN_ERR_MALFORMED, "decode of NULL");

    /* each field a peer may get wrong */
    tern_io_msg_t c = good_connect();
    expect_refused(&c, job_unterminated, "job");
    expect_refused(&c, job_empty, "job");
    expect_refused(&c, rank_high, "rank");
    expect_refused(&c, ranks_zero, "rank");
    expect_refused(&c, pid_neg, "pid");
    expect_refused(&c, buf_wraps, "buffer");
    expect_refused(&c, buf_empty, "buffer");
    expect_refused(&c, conn_reserved, "reserved");
    expect_refused(&c, mode_bad, "mode");
    expect_refused(&c, flags_bad, "flags");
    expect_refused(&c, region_set, "region");
    expect_refused(&c, path_relative, "path");
    expect_refused(&c, path_unterminated, "path");
    c.u.connect.mode = TERN_IO_SHARED; /* a shared file needs its region size */
    expect_refused(&c, path_relative, "region");
    c.u.connect.region = 1 << 20;
    expect_refused(&c, path_relative, "path");
    c = good_connect();
    expect_refused(&c, bad_magic, "magic");
    expect_refused(&c, bad_version, "version");
    expect_refused(&c, bad_type, "type");
    expect_refused(&c, hdr_reserved, "reserved");
    expect_refused(&c, body_len, "body");
    expect_refused(&all[1], credits_zero, "credits");
    expect_refused(&all[2], wr_wraps, "offset");
    expect_refused(&all[3], done_status, "status");
    expect_refused(&all[3], done_errno, "errno");
    expect_refused(&all[9], done_status, "status");
    expect_refused(&all[6], err_status, "status");
    expect_refused(&all[6], err_msg, "msg");

    if (failures == 0)
        printf("iofwd_proto_test: all checks passed\n");
    return failures ? 1 : 0;
}
