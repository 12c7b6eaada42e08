/* post_close interrupting a posted read, a posted write, a pending connect
 * and a listener with queued connections: each with its distinct status. */
#include <stdlib.h>
#include <unistd.h>

#include "tests/sock/harness.h"

int case_close_interrupts_read(void)
{
    tern_sock_set_t *set;
    tern_sock_t *c, *a;
    tern_sock_event_t ev;
    char in[100];
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_CALL(make_pair(set, &c, &a, NULL, NULL));
    CHECK_OK(tern_sock_post_read(a, in, 100, 100, NULL));
    CHECK_OK(tern_sock_post_write(c, "abc", 3, 3, NULL));
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_WRITE, TMO, &ev));
    CHECK_CALL(expect_no_event(set, 50)); /* 3 of min 100 arrive: not complete */
    CHECK_OK(tern_sock_post_close(a));
    CHECK_OK(tern_sock_wait(set, TMO, &ev));
    CHECK(ev.op == TERN_SOCK_OP_READ && ev.sock == a, "first the read (op %d)", (int)ev.op);
    CHECK(ev.status == TERN_SOCK_ERR_CLOSED && ev.num_bytes == 3, "%s, %zu bytes",
          tern_strerror(ev.status), ev.num_bytes);
    CHECK(strstr(tern_last_error(), "post_close") != NULL &&
              strstr(tern_last_error(), "127.0.0.1:"),
          "message: %s", tern_last_error());
    CHECK_OK(tern_sock_wait(set, TMO, &ev));
    CHECK(ev.op == TERN_SOCK_OP_CLOSE && ev.sock == a && ev.status == TERN_OK, "then CLOSE");
    CHECK_CALL(close_and_wait(set, c));
    tern_sock_set_destroy(set);
    return 0;
}

int case_close_interrupts_write(void)
{
    tern_sock_set_t *set;
    tern_sock_t *c, *a;
    tern_sock_event_t ev;
    size_t len = 64u << 20;
    unsigned char *big = calloc(1, len);
    CHECK(big != NULL, "alloc");
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_CALL(make_pair(set, &c, &a, NULL, NULL));
    CHECK_OK(tern_sock_post_write(c, big, len, len, NULL)); /* the peer never reads */
    CHECK_CALL(expect_no_event(set, 100));
    CHECK_OK(tern_sock_post_close(c));
    CHECK_OK(tern_sock_wait(set, TMO, &ev));
    CHECK(ev.op == TERN_SOCK_OP_WRITE && ev.sock == c, "first the write (op %d)", (int)ev.op);
    CHECK(ev.status == TERN_SOCK_ERR_CLOSED, "%s", tern_strerror(ev.status));
    CHECK(ev.num_bytes > 0 && ev.num_bytes < len, "partial: %zu", ev.num_bytes);
    CHECK_OK(tern_sock_wait(set, TMO, &ev));
    CHECK(ev.op == TERN_SOCK_OP_CLOSE && ev.sock == c, "then CLOSE");
    CHECK_CALL(close_and_wait(set, a));
    tern_sock_set_destroy(set);
    free(big);
    return 0;
}

int case_close_interrupts_connect(void)
{
    tern_sock_set_t *set;
    tern_sock_t *l, *c;
    tern_sock_event_t ev;
    int port = 0;
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_OK(tern_sock_listen(set, NULL, "127.0.0.1", &port, &l));
    CHECK_OK(tern_sock_post_connect(set, NULL, "127.0.0.1", port, &c));
    CHECK_OK(tern_sock_post_close(c)); /* before any wait: the connect is still pending */
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_CONNECT, TMO, &ev));
    CHECK(ev.status == TERN_SOCK_ERR_CLOSED, "%s", tern_strerror(ev.status));
    CHECK(strstr(tern_last_error(), "127.0.0.1:") != NULL, "message: %s", tern_last_error());
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_CLOSE, TMO, &ev));
    CHECK_CALL(close_and_wait(set, l));
    forget_events(set); /* the listener may have reported the connection */
    tern_sock_set_destroy(set);
    return 0;
}

/* Listener in set ls, clients in set cs: the clients' connects complete
 * (queued in the kernel), nobody accepts, the listener is closed. */
int case_close_listener_with_queued(void)
{
    tern_sock_set_t *ls, *cs;
    tern_sock_t *l, *c[2];
    tern_sock_event_t ev;
    char in[2][8];
    int port = 0;
    CHECK_OK(tern_sock_set_create(&ls));
    CHECK_OK(tern_sock_set_create(&cs));
    CHECK_OK(tern_sock_listen(ls, NULL, "127.0.0.1", &port, &l));
    for (int i = 0; i < 2; i++) {
        CHECK_OK(tern_sock_post_connect(cs, NULL, "127.0.0.1", port, &c[i]));
        CHECK_CALL(expect_event(cs, c[i], TERN_SOCK_OP_CONNECT, TMO, &ev));
        CHECK(ev.status == TERN_OK, "queued connect %s", tern_strerror(ev.status));
        CHECK_OK(tern_sock_post_read(c[i], in[i], 8, 8, NULL));
    }
    CHECK_OK(tern_sock_post_close(l));
    CHECK_OK(tern_sock_wait(ls, TMO, &ev));
    CHECK(ev.op == TERN_SOCK_OP_ACCEPT && ev.status == TERN_SOCK_ERR_CLOSED,
          "pending ACCEPT: op %d %s", (int)ev.op, tern_strerror(ev.status));
    CHECK(strstr(tern_last_error(), "127.0.0.1:") != NULL, "message: %s", tern_last_error());
    CHECK_OK(tern_sock_wait(ls, TMO, &ev));
    CHECK(ev.op == TERN_SOCK_OP_CLOSE && ev.status == TERN_OK, "then CLOSE");
    for (int i = 0; i < 2; i++) {
        CHECK_CALL(expect_event(cs, c[i], TERN_SOCK_OP_READ, TMO, &ev));
        CHECK(ev.status == TERN_ERR_CONN_RESET && ev.num_bytes == 0, "queued client %d: %s", i,
              tern_strerror(ev.status));
        CHECK_CALL(close_and_wait(cs, c[i]));
    }
    tern_sock_set_destroy(cs);
    tern_sock_set_destroy(ls);
    return 0;
}
