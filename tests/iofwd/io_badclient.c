/*
 * A hand-written iofwd client (tests/iofwd/failures.sh): speaks the wire
 * format directly to the daemon in $XDG_RUNTIME_DIR/tern-iofwd/port.
 *
 *   io_badclient bad DIR    malformed and out-of-order requests: each gets
 *                           an ERROR naming the field, PING still a PONG;
 *                           last a CONNECT to a missing directory
 *   io_badclient die DIR    record 0 (5 MiB) written whole, then a write
 *                           of 3 pieces of which one arrives: exits at once
 *                           (the daemon must leave exactly record 0)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iofwd/proto.h"
#include <tern/tern.h>

#include "tests/launcher/tern_check.h"

static tern_context_t *ctx;
static tern_worker_t *w;
static int peer;

static void send_raw(const void *b, size_t n)
{
    tern_status_t st = tern_send(w, b, n, peer, TERN_IO_TAG_CTRL, TERN_IO_SPACE);
    CHECK(st == TERN_OK, "send of %zu bytes", n);
}

static void send_msg(const tern_io_msg_t *m)
{
    unsigned char b[TERN_IO_MSG_BYTES];
    send_raw(b, tern_io_encode(m, b, sizeof(b)));
}

static tern_io_msg_t answer(void)
{
    unsigned char b[TERN_IO_MSG_BYTES];
    tern_recv_info_t info;
    tern_io_msg_t m = {.type = 0};
    tern_status_t st = tern_recv(w, b, sizeof(b), peer, TERN_IO_TAG_CTRL, TERN_IO_SPACE, &info);
    CHECK(st == TERN_OK, "no answer from the daemon");
    if (st == TERN_OK)
        CHECK(tern_io_decode(b, info.length, &m) == TERN_OK, "the daemon's answer is malformed");
    return m;
}

static void expect_error(const char *what, const char *field)
{
    tern_io_msg_t m = answer();
    CHECK(m.type == TERN_IO_ERROR && strstr(m.u.error.msg, field) != NULL,
          "%s: expected an ERROR naming \"%s\", got %s \"%s\"", what, field,
          tern_io_type_name(m.type), m.type == TERN_IO_ERROR ? m.u.error.msg : "");
    if (m.type == TERN_IO_ERROR)
        printf("%s -> ERROR \"%s\"\n", what, m.u.error.msg);
}

static tern_io_msg_t connect_msg(const char *dir)
{
    static char buf[64];
    tern_io_msg_t m = {.type = TERN_IO_CONNECT};
    snprintf(m.u.connect.job, sizeof(m.u.connect.job), "badclient-%d", (int)getpid());
    m.u.connect.ranks = 1;
    m.u.connect.pid = (int32_t)getpid();
    m.u.connect.buf_addr = (uint64_t)(uintptr_t)buf;
    m.u.connect.buf_len = sizeof(buf);
    m.u.connect.mode = TERN_IO_PER_RANK;
    snprintf(m.u.connect.path, sizeof(m.u.connect.path), "%s", dir);
    return m;
}

static void bad(const char *dir)
{
    unsigned char b[4096];
    tern_io_msg_t ping = {.type = TERN_IO_PING};
    size_t n = tern_io_encode(&ping, b, sizeof(b));
    b[0] ^= 0xff;
    send_raw(b, n);
    expect_error("bad magic", "magic");
    b[0] ^= 0xff;
    b[4] = 9; /* version */
    send_raw(b, n);
    expect_error("version 9", "version");
    memset(b, 0, sizeof(b));
    send_raw(b, sizeof(b));
    expect_error("4 KiB message", "longer");
    tern_io_msg_t wr = {.type = TERN_IO_WRITE_REQ, .u.write_req = {.seq = 0, .len = 10}};
    send_msg(&wr);
    expect_error("WRITE_REQ before CONNECT", "before CONNECT");
    tern_io_msg_t done = {.type = TERN_IO_WRITE_DONE};
    send_msg(&done);
    expect_error("WRITE_DONE to the daemon", "not a request");
    tern_io_msg_t c = connect_msg(dir);
    c.u.connect.rank = 5; /* of 1 */
    send_msg(&c);
    expect_error("CONNECT rank 5 of 1", "rank");
    send_msg(&ping);
    tern_io_msg_t m = answer();
    CHECK(m.type == TERN_IO_PONG, "PING after the bad requests: %s", tern_io_type_name(m.type));
    c = connect_msg("/nonexistent-dir");
    send_msg(&c);
    expect_error("CONNECT to a missing directory", "No such file");
}

static void seq_and_die(const char *dir)
{
    tern_io_msg_t c = connect_msg(dir);
    send_msg(&c);
    tern_io_msg_t m = answer();
    CHECK(m.type == TERN_IO_CONNECTED, "CONNECT answered with %s", tern_io_type_name(m.type));
    if (m.type != TERN_IO_CONNECTED)
        return;
    size_t staging = m.u.connected.staging, len = 5u << 20;
    char *data = malloc(3 * staging + len);
    memset(data, 'a', 3 * staging + len);
    tern_io_msg_t wr = {.type = TERN_IO_WRITE_REQ, .u.write_req = {.seq = 3, .len = 1}};
    send_msg(&wr);
    expect_error("WRITE_REQ seq 3 first", "expected seq 0");
    /* record 0, whole */
    wr.u.write_req = (tern_io_write_req_t){.seq = 0, .offset = 0, .len = len};
    send_msg(&wr);
    for (size_t o = 0; o < len; o += staging)
        CHECK(tern_send(w, data + o, len - o < staging ? len - o : staging, peer,
                        TERN_IO_TAG_DATA, TERN_IO_SPACE) == TERN_OK, "record 0 piece");
    m = answer();
    CHECK(m.type == TERN_IO_HELD && m.u.write_done.status == TERN_OK, "record 0 not held");
    m = answer();
    CHECK(m.type == TERN_IO_WRITE_DONE && m.u.write_done.status == TERN_OK,
          "record 0 not written");
    /* record 1: 3 pieces announced, one sent (and pulled), then gone */
    wr.u.write_req = (tern_io_write_req_t){.seq = 1, .offset = len, .len = 3 * staging};
    send_msg(&wr);
    CHECK(tern_send(w, data, staging, peer, TERN_IO_TAG_DATA, TERN_IO_SPACE) == TERN_OK,
          "record 1 piece 0");
    printf("record 1: one piece of three pulled; exiting\n");
    fflush(stdout);
    _exit(failures ? 1 : 0);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    char path[512], line[TERN_PORT_NAME_MAX + 32], *sp;
    snprintf(path, sizeof(path), "%s/tern-iofwd/port", getenv("XDG_RUNTIME_DIR"));
    FILE *f = fopen(path, "r");
    CHECK(f != NULL && fgets(line, sizeof(line), f) != NULL, "no daemon port in %s", path);
    if (f == NULL || (sp = strchr(line, ' ')) == NULL)
        return 1;
    fclose(f);
    sp[1 + strcspn(sp + 1, "\n")] = '\0';
    tern_job_t *job;
    CHECK(tern_init_standalone(&ctx) == TERN_OK, "tern_init_standalone");
    w = tern_context_worker(ctx);
    CHECK(tern_port_connect(ctx, sp + 1, &job) == TERN_OK, "tern_port_connect");
    peer = tern_job_peer(job, 0);
    if (strcmp(argv[1], "bad") == 0) {
        bad(argv[2]);
    } else {
        seq_and_die(argv[2]);
    }
    printf("%s\n", failures ? "FAIL" : "ok badclient");
    tern_disconnect(job);
    tern_finalize(ctx);
    return failures ? 1 : 0;
}
