/* Transfers: connect/accept, min..max ranges, iovs, progress callbacks,
 * 64 MiB byte-exact, the immediate fast path, BUSY / invalid posts. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/sock/harness.h"

static int cup, sup; /* user pointer targets */

int case_listen_connect_accept(void)
{
    tern_sock_set_t *set;
    tern_sock_t *c, *a;
    tern_sock_event_t ev;
    char out[] = "hello, tern", in[sizeof(out)] = {0};
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_CALL(make_pair(set, &c, &a, &cup, &sup));
    CHECK(tern_sock_get_fd(c) >= 0 && tern_sock_get_fd(a) >= 0, "fds");
    CHECK_OK(tern_sock_post_write(c, out, sizeof(out), sizeof(out), NULL));
    CHECK_OK(tern_sock_post_read(a, in, sizeof(in), sizeof(in), NULL));
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_OK && ev.num_bytes == sizeof(out), "read %zu %s", ev.num_bytes,
          tern_strerror(ev.status));
    CHECK(ev.user_ptr == &sup, "read event carries the accepted socket's user_ptr");
    CHECK(memcmp(in, out, sizeof(out)) == 0, "data");
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_WRITE, TMO, &ev));
    CHECK(ev.status == TERN_OK && ev.num_bytes == sizeof(out) && ev.user_ptr == &cup, "write");
    /* and back, with a changed user pointer */
    tern_sock_set_user_ptr(c, &sup);
    CHECK_OK(tern_sock_post_write(a, "x", 1, 1, NULL));
    CHECK_OK(tern_sock_post_read(c, in, 1, 1, NULL));
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_OK && in[0] == 'x' && ev.user_ptr == &sup, "read back");
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_WRITE, TMO, &ev));
    CHECK_CALL(close_and_wait(set, c));
    CHECK_CALL(close_and_wait(set, a));
    CHECK_CALL(expect_no_event(set, 0));

    /* a listener on every address (dual stack) takes IPv4 loopback too */
    tern_sock_t *l;
    int port = 0;
    CHECK_OK(tern_sock_listen(set, NULL, NULL, &port, &l));
    CHECK_OK(tern_sock_post_connect(set, NULL, "127.0.0.1", port, &c));
    CHECK_CALL(expect_event(set, l, TERN_SOCK_OP_ACCEPT, TMO, &ev));
    CHECK_OK(tern_sock_accept(l, set, NULL, &a));
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_CONNECT, TMO, &ev));
    CHECK(ev.status == TERN_OK, "connect to the wildcard listener: %s", tern_strerror(ev.status));
    CHECK_CALL(close_and_wait(set, l));
    CHECK_CALL(close_and_wait(set, c));
    CHECK_CALL(close_and_wait(set, a));
    tern_sock_set_destroy(set);
    return 0;
}

/* 127.0.0.2 is loopback too but the listener is bound to 127.0.0.1 only:
 * the first address is refused, the second accepts.  A read posted before
 * the connect completed starts once connected. */
int case_connect_tries_addresses_in_order(void)
{
    tern_sock_set_t *set;
    tern_sock_t *l, *c, *a;
    tern_sock_event_t ev;
    int port = 0;
    char buf[4];
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_OK(tern_sock_listen(set, NULL, "127.0.0.1", &port, &l));
    CHECK_OK(tern_sock_post_connect(set, NULL, "127.0.0.2, 127.0.0.1", port, &c));
    CHECK_OK(tern_sock_post_read(c, buf, 4, 4, NULL));
    CHECK_CALL(expect_event(set, l, TERN_SOCK_OP_ACCEPT, TMO, &ev));
    CHECK_OK(tern_sock_accept(l, set, NULL, &a));
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_CONNECT, TMO, &ev));
    CHECK(ev.status == TERN_OK, "connect %s", tern_strerror(ev.status));
    CHECK_OK(tern_sock_post_write(a, "abcd", 4, 4, NULL));
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_OK && ev.num_bytes == 4 && memcmp(buf, "abcd", 4) == 0,
          "read posted while connecting");
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_WRITE, TMO, &ev));
    /* a second accept finds nothing */
    tern_sock_t *none;
    CHECK(tern_sock_accept(l, set, NULL, &none) == TERN_ERR_AGAIN, "accept with nothing queued");
    /* only-bad descriptions fail at post time */
    CHECK(tern_sock_post_connect(set, NULL, "no.such.host.invalid", port, &none) ==
              TERN_ERR_UNREACHABLE,
          "unresolvable description");
    CHECK(strstr(tern_last_error(), "no.such.host.invalid") != NULL, "message names it: %s",
          tern_last_error());
    CHECK_CALL(close_and_wait(set, l));
    CHECK_CALL(close_and_wait(set, c));
    CHECK_CALL(close_and_wait(set, a));
    tern_sock_set_destroy(set);
    return 0;
}

int case_min_max_read(void)
{
    tern_sock_set_t *set;
    tern_sock_t *c, *a;
    tern_sock_event_t ev;
    unsigned char out[256], in[256];
    fill_pattern(out, sizeof(out), 1);
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_CALL(make_pair(set, &c, &a, NULL, NULL));

    /* only 10 arrive: min 10 max 100 completes with 10 */
    CHECK_OK(tern_sock_post_write(c, out, 10, 10, NULL));
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_WRITE, TMO, &ev));
    CHECK_OK(tern_sock_post_read(a, in, 10, 100, NULL));
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_OK && ev.num_bytes == 10, "got %zu", ev.num_bytes);
    CHECK(memcmp(in, out, 10) == 0, "data");

    /* 150 arrive: the read takes up to max = 100, then the next gets 50 */
    CHECK_OK(tern_sock_post_write(c, out, 150, 150, NULL));
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_WRITE, TMO, &ev));
    CHECK(ev.num_bytes == 150, "wrote %zu", ev.num_bytes);
    usleep(20000);
    CHECK_OK(tern_sock_post_read(a, in, 10, 100, NULL));
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_OK && ev.num_bytes == 100, "got %zu (max 100)", ev.num_bytes);
    CHECK(memcmp(in, out, 100) == 0, "data");
    CHECK_OK(tern_sock_post_read(a, in, 50, 100, NULL));
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_OK && ev.num_bytes == 50, "got %zu", ev.num_bytes);
    CHECK(memcmp(in, out + 100, 50) == 0, "data");

    /* below min: 10 of min 20 do not complete it; 15 more do (25) */
    CHECK_OK(tern_sock_post_read(a, in, 20, 100, NULL));
    CHECK_OK(tern_sock_post_write(c, out, 10, 10, NULL));
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_WRITE, TMO, &ev));
    CHECK_CALL(expect_no_event(set, 100));
    CHECK_OK(tern_sock_post_write(c, out + 10, 15, 15, NULL));
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_OK && ev.num_bytes == 25, "got %zu", ev.num_bytes);
    CHECK(memcmp(in, out, 25) == 0, "data");
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_WRITE, TMO, &ev));

    CHECK_CALL(close_and_wait(set, c));
    CHECK_CALL(close_and_wait(set, a));
    tern_sock_set_destroy(set);
    return 0;
}

/* A write with min < max completes once min moved and the socket is full. */
int case_min_max_write(void)
{
    tern_sock_set_t *set;
    tern_sock_t *c, *a;
    tern_sock_event_t ev;
    size_t len = 64u << 20;
    unsigned char *big = calloc(1, len);
    CHECK(big != NULL, "alloc");
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_CALL(make_pair(set, &c, &a, NULL, NULL));
    CHECK_OK(tern_sock_post_write(c, big, 1, len, NULL)); /* nobody reads: fills the buffers */
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_WRITE, TMO, &ev));
    CHECK(ev.status == TERN_OK && ev.num_bytes >= 1 && ev.num_bytes < len, "wrote %zu of %zu",
          ev.num_bytes, len);
    CHECK_CALL(close_and_wait(set, c));
    CHECK_CALL(close_and_wait(set, a));
    tern_sock_set_destroy(set);
    free(big);
    return 0;
}

int case_readv_writev(void)
{
    tern_sock_set_t *set;
    tern_sock_t *c, *a;
    tern_sock_event_t ev;
    unsigned char out[1000], in[1000];
    fill_pattern(out, sizeof(out), 2);
    memset(in, 0, sizeof(in));
    struct iovec wv[3] = {{out, 7}, {out + 7, 0}, {out + 7, 993}};
    struct iovec rv[12];
    for (int i = 0; i < 10; i++)
        rv[i] = (struct iovec){in + i * 90, 90}; /* 12 entries: past the inline copy */
    rv[10] = (struct iovec){in + 900, 1};
    rv[11] = (struct iovec){in + 901, 99};
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_CALL(make_pair(set, &c, &a, NULL, NULL));
    CHECK_OK(tern_sock_post_readv(a, rv, 12, NULL));
    memset(rv, 0, sizeof(rv)); /* the iov array is copied at post */
    CHECK_OK(tern_sock_post_writev(c, wv, 3, NULL));
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_OK && ev.num_bytes == 1000, "readv %zu", ev.num_bytes);
    CHECK(memcmp(in, out, 1000) == 0, "data");
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_WRITE, TMO, &ev));
    CHECK(ev.status == TERN_OK && ev.num_bytes == 1000, "writev %zu", ev.num_bytes);
    CHECK_CALL(close_and_wait(set, c));
    CHECK_CALL(close_and_wait(set, a));
    tern_sock_set_destroy(set);
    return 0;
}

/* ---- progress callbacks ---------------------------------------------------- */

struct progress_log {
    size_t calls, bytes;
    bool completed; /* set when the completion event was returned */
    bool late;      /* a callback ran after completion */
    size_t abort_after;
};

static tern_status_t log_progress(size_t n, void *up)
{
    struct progress_log *l = up;
    l->late |= l->completed;
    l->calls++;
    l->bytes += n;
    if (l->abort_after && l->bytes >= l->abort_after)
        return TERN_ERR_MALFORMED;
    return TERN_OK;
}

static int transfer_with_progress(size_t len)
{
    tern_sock_set_t *set;
    tern_sock_t *c, *a;
    tern_sock_event_t ev;
    struct progress_log wl = {0}, rl = {0};
    unsigned char *out = malloc(len), *in = malloc(len);
    CHECK(out && in, "alloc");
    fill_pattern(out, len, 3);
    memset(in, 0, len);
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_CALL(make_pair(set, &c, &a, &wl, &rl));
    CHECK_OK(tern_sock_post_read(a, in, len, len, log_progress));
    CHECK_OK(tern_sock_post_write(c, out, len, len, log_progress));
    for (int done = 0; done < 2;) {
        CHECK_OK(tern_sock_wait(set, TMO, &ev));
        CHECK(ev.op == TERN_SOCK_OP_READ || ev.op == TERN_SOCK_OP_WRITE, "op %d", (int)ev.op);
        CHECK(ev.status == TERN_OK && ev.num_bytes == len, "op %d: %zu of %zu, %s", (int)ev.op,
              ev.num_bytes, len, tern_strerror(ev.status));
        struct progress_log *l = ev.user_ptr;
        CHECK(l->bytes == len, "callbacks saw %zu of %zu bytes before completion", l->bytes, len);
        l->completed = true;
        done++;
    }
    CHECK(!wl.late && !rl.late, "a callback ran after its completion event");
    CHECK(rl.calls >= 1 && wl.calls >= 1, "callbacks ran (r %zu w %zu)", rl.calls, wl.calls);
    CHECK(memcmp(in, out, len) == 0, "byte-exact");
    CHECK_CALL(close_and_wait(set, c));
    CHECK_CALL(close_and_wait(set, a));
    tern_sock_set_destroy(set);
    free(out);
    free(in);
    return 0;
}

int case_progress_before_completion(void)
{
    return transfer_with_progress(1u << 20);
}
int case_large_transfer(void)
{
    return transfer_with_progress(64u << 20);
}

/* A callback returning an error aborts the op with that status. */
int case_progress_abort(void)
{
    tern_sock_set_t *set;
    tern_sock_t *c, *a;
    tern_sock_event_t ev;
    struct progress_log rl = {.abort_after = 1};
    char in[100];
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_CALL(make_pair(set, &c, &a, NULL, &rl));
    CHECK_OK(tern_sock_post_read(a, in, 100, 100, log_progress));
    CHECK_OK(tern_sock_post_write(c, "0123456789", 10, 10, NULL));
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_ERR_MALFORMED && ev.num_bytes == 10, "%s %zu", tern_strerror(ev.status),
          ev.num_bytes);
    CHECK(strstr(tern_last_error(), "progress callback") != NULL, "message: %s", tern_last_error());
    CHECK_CALL(close_and_wait(set, c));
    CHECK_CALL(close_and_wait(set, a));
    tern_sock_set_destroy(set);
    return 0;
}

/* tern_sock_read / tern_sock_writev move what the socket takes now. */
int case_immediate_read_writev(void)
{
    tern_sock_set_t *set;
    tern_sock_t *c, *a;
    char in[64];
    size_t nb = 99;
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_CALL(make_pair(set, &c, &a, NULL, NULL));
    CHECK_OK(tern_sock_read(a, in, sizeof(in), &nb));
    CHECK(nb == 0, "nothing to read yet: %zu", nb);
    struct iovec iov[2] = {{"head", 4}, {"payload", 7}};
    CHECK_OK(tern_sock_writev(c, iov, 2, &nb));
    CHECK(nb == 11, "wrote %zu", nb);
    size_t got = 0;
    for (long long t0 = now_ms(); got < 11 && now_ms() - t0 < TMO;) {
        CHECK_OK(tern_sock_read(a, in + got, sizeof(in) - got, &nb));
        got += nb;
    }
    CHECK(got == 11 && memcmp(in, "headpayload", 11) == 0, "got %zu", got);
    /* a posted read excludes the immediate one */
    CHECK_OK(tern_sock_post_read(a, in, 1, 1, NULL));
    CHECK(tern_sock_read(a, in, 1, &nb) == TERN_SOCK_ERR_BUSY, "read while a read is posted");
    CHECK_CALL(close_and_wait(set, c));
    tern_sock_event_t ev;
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_ERR_CONN_CLOSED, "peer closed: %s", tern_strerror(ev.status));
    CHECK(tern_sock_read(a, in, 1, &nb) == TERN_ERR_CONN_CLOSED, "immediate read at EOF");
    CHECK_CALL(close_and_wait(set, a));
    tern_sock_set_destroy(set);
    return 0;
}

int case_busy_and_invalid(void)
{
    tern_sock_set_t *set;
    tern_sock_t *c, *a;
    tern_sock_event_t ev;
    char in[8];
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_CALL(make_pair(set, &c, &a, NULL, NULL));
    CHECK(tern_sock_post_read(a, in, 0, 8, NULL) == TERN_ERR_INVALID_PARAM, "min 0");
    CHECK(tern_sock_post_read(a, in, 9, 8, NULL) == TERN_ERR_INVALID_PARAM, "min > max");
    CHECK(tern_sock_post_readv(a, NULL, 0, NULL) == TERN_ERR_INVALID_PARAM, "empty iov");
    CHECK_OK(tern_sock_post_read(a, in, 1, 8, NULL));
    CHECK(tern_sock_post_read(a, in, 1, 8, NULL) == TERN_SOCK_ERR_BUSY, "second read");
    CHECK_OK(tern_sock_post_write(c, "z", 1, 1, NULL));
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK_OK(tern_sock_post_read(a, in, 1, 8, NULL)); /* free again once returned */
    CHECK_OK(tern_sock_post_close(a));
    CHECK(tern_sock_post_close(a) == TERN_ERR_INVALID_PARAM, "double close");
    CHECK(tern_sock_post_write(a, "z", 1, 1, NULL) == TERN_ERR_INVALID_PARAM, "write after close");
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_CLOSE, TMO, &ev));
    CHECK_CALL(close_and_wait(set, c));
    forget_events(set);
    tern_sock_set_destroy(set);
    return 0;
}
