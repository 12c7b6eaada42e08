/* Error statuses and their messages: port range exhaustion, address in use,
 * connection refused, peer reset mid-message, peer close. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/sock/harness.h"

#define RANGE_LEN 3

int case_port_range_exhausted(void)
{
    tern_sock_set_t *set;
    tern_sock_t *l[RANGE_LEN + 1];
    char range[32], name[48];
    int n = 0, lo = 20000 + (int)(getpid() % 20000);
    snprintf(range, sizeof(range), "%d-%d", lo, lo + RANGE_LEN - 1);
    CHECK_OK(tern_sock_set_create(&set));
    setenv("TERN_PORT_RANGE", range, 1);
    tern_status_t st;
    for (;;) {
        int port = 0;
        st = tern_sock_listen(set, NULL, "127.0.0.1", &port, &l[n]);
        if (st != TERN_OK)
            break;
        CHECK(port >= lo && port < lo + RANGE_LEN, "port %d outside %s", port, range);
        CHECK(n < RANGE_LEN, "more listeners than ports in the range");
        n++;
    }
    /* an explicit port ignores the range */
    int any = 0;
    tern_sock_t *other;
    unsetenv("TERN_PORT_RANGE");
    CHECK(st == TERN_ERR_ADDR_IN_USE, "%s", tern_strerror(st));
    CHECK(n >= 1, "no port of %s was free to begin with", range);
    snprintf(name, sizeof(name), "TERN_PORT_RANGE=%s", range);
    CHECK(strstr(tern_last_error(), name) != NULL && strstr(tern_last_error(), "no free port"),
          "message names the range: %s", tern_last_error());
    CHECK_OK(tern_sock_listen(set, NULL, "127.0.0.1", &any, &other));
    CHECK_CALL(close_and_wait(set, other));
    for (int i = 0; i < n; i++)
        CHECK_CALL(close_and_wait(set, l[i]));
    tern_sock_set_destroy(set);
    return 0;
}

int case_port_range_invalid(void)
{
    tern_sock_set_t *set;
    tern_sock_t *l;
    int port = 0;
    CHECK_OK(tern_sock_set_create(&set));
    setenv("TERN_PORT_RANGE", "5000-oops", 1);
    tern_status_t st = tern_sock_listen(set, NULL, "127.0.0.1", &port, &l);
    unsetenv("TERN_PORT_RANGE");
    CHECK(st == TERN_ERR_INVALID_PARAM, "%s", tern_strerror(st));
    CHECK(strstr(tern_last_error(), "5000-oops") != NULL, "message: %s", tern_last_error());
    tern_sock_set_destroy(set);
    return 0;
}

int case_addr_in_use(void)
{
    tern_sock_set_t *set;
    tern_sock_t *l, *l2;
    char name[32];
    int port = 0;
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_OK(tern_sock_listen(set, NULL, "127.0.0.1", &port, &l));
    int again = port;
    tern_status_t st = tern_sock_listen(set, NULL, "127.0.0.1", &again, &l2);
    CHECK(st == TERN_ERR_ADDR_IN_USE, "%s", tern_strerror(st));
    snprintf(name, sizeof(name), "port %d", port);
    CHECK(strstr(tern_last_error(), name) != NULL && strstr(tern_last_error(), "in use"),
          "message: %s", tern_last_error());
    CHECK(again == port, "port untouched on failure");
    CHECK_CALL(close_and_wait(set, l));
    tern_sock_set_destroy(set);
    return 0;
}

int case_conn_refused(void)
{
    tern_sock_set_t *set;
    tern_sock_t *l, *c;
    tern_sock_event_t ev;
    char name[32];
    int port = 0;
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_OK(tern_sock_listen(set, NULL, "127.0.0.1", &port, &l));
    CHECK_CALL(close_and_wait(set, l)); /* now nothing listens on port */
    CHECK_OK(tern_sock_post_connect(set, NULL, "127.0.0.1", port, &c));
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_CONNECT, TMO, &ev));
    CHECK(ev.status == TERN_ERR_CONN_REFUSED, "%s", tern_strerror(ev.status));
    snprintf(name, sizeof(name), "127.0.0.1:%d", port);
    CHECK(strstr(tern_last_error(), name) != NULL && strstr(tern_last_error(), "refused"),
          "message: %s", tern_last_error());
    CHECK(tern_sock_post_read(c, name, 1, 1, NULL) == TERN_ERR_INVALID_PARAM,
          "read on a failed connect");
    CHECK_CALL(close_and_wait(set, c));
    /* every address refused: the message lists each attempt in order */
    CHECK_OK(tern_sock_post_connect(set, NULL, "127.0.0.3,127.0.0.1", port, &c));
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_CONNECT, TMO, &ev));
    CHECK(ev.status == TERN_ERR_CONN_REFUSED, "%s", tern_strerror(ev.status));
    const char *first = strstr(tern_last_error(), "127.0.0.3:");
    CHECK(first != NULL && strstr(first, name) != NULL, "both attempts in order: %s",
          tern_last_error());
    CHECK_CALL(close_and_wait(set, c));
    tern_sock_set_destroy(set);
    return 0;
}

static tern_status_t count_progress(size_t n, void *up)
{
    *(size_t *)up += n;
    return TERN_OK;
}

/* The peer (a raw socket) sends half of a 100-byte message, then resets
 * (SO_LINGER 0 + close) while our read waits for the rest. */
int case_peer_reset_mid_message(void)
{
    tern_sock_set_t *set;
    tern_sock_t *l, *a;
    tern_sock_event_t ev;
    char in[100], name[32];
    size_t seen = 0;
    int port = 0;
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_OK(tern_sock_listen(set, NULL, "127.0.0.1", &port, &l));
    int fd = raw_connect(port);
    CHECK(fd >= 0, "raw connect");
    CHECK_CALL(expect_event(set, l, TERN_SOCK_OP_ACCEPT, TMO, &ev));
    CHECK_OK(tern_sock_accept(l, set, &seen, &a));
    CHECK_OK(tern_sock_post_read(a, in, 100, 100, count_progress));
    memset(in, 'h', 50);
    CHECK(write(fd, in, 50) == 50, "raw write");
    for (long long t0 = now_ms(); seen < 50 && now_ms() - t0 < TMO;)
        CHECK_CALL(expect_no_event(set, 10));
    CHECK(seen == 50, "half of the message arrived (%zu)", seen);
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(fd);
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_ERR_CONN_RESET && ev.num_bytes == 50, "%s after %zu",
          tern_strerror(ev.status), ev.num_bytes);
    snprintf(name, sizeof(name), "127.0.0.1:");
    CHECK(strstr(tern_last_error(), name) && strstr(tern_last_error(), "reset"), "message: %s",
          tern_last_error());
    CHECK_CALL(close_and_wait(set, a));
    CHECK_CALL(close_and_wait(set, l));
    tern_sock_set_destroy(set);
    return 0;
}

int case_peer_close_eof(void)
{
    tern_sock_set_t *set;
    tern_sock_t *c, *a;
    tern_sock_event_t ev;
    char in[100];
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_CALL(make_pair(set, &c, &a, NULL, NULL));
    /* below min at EOF: CONN_CLOSED with what arrived */
    CHECK_OK(tern_sock_post_read(a, in, 100, 100, NULL));
    CHECK_OK(tern_sock_post_write(c, "0123456789", 10, 10, NULL));
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_WRITE, TMO, &ev));
    CHECK_CALL(close_and_wait(set, c));
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_ERR_CONN_CLOSED && ev.num_bytes == 10, "%s after %zu",
          tern_strerror(ev.status), ev.num_bytes);
    CHECK(memcmp(in, "0123456789", 10) == 0, "data before EOF");
    CHECK(strstr(tern_last_error(), "127.0.0.1:") && strstr(tern_last_error(), "EOF"),
          "message: %s", tern_last_error());
    CHECK_CALL(close_and_wait(set, a));

    /* min reached at EOF: OK, and the next read reports CONN_CLOSED */
    CHECK_CALL(make_pair(set, &c, &a, NULL, NULL));
    CHECK_OK(tern_sock_post_write(c, "abcde", 5, 5, NULL));
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_WRITE, TMO, &ev));
    CHECK_CALL(close_and_wait(set, c));
    usleep(20000);
    CHECK_OK(tern_sock_post_read(a, in, 1, 100, NULL));
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_OK && ev.num_bytes == 5, "%s %zu", tern_strerror(ev.status),
          ev.num_bytes);
    CHECK_OK(tern_sock_post_read(a, in, 1, 100, NULL));
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_ERR_CONN_CLOSED && ev.num_bytes == 0, "%s", tern_strerror(ev.status));
    CHECK_CALL(close_and_wait(set, a));
    tern_sock_set_destroy(set);
    return 0;
}
