/*
 * engine/sock unit tests: helpers shared by the case files.  Every case runs
 * on 127.0.0.1 only and bounds every wait by a timeout.
 */
#ifndef TERN_TESTS_SOCK_HARNESS_H
#define TERN_TESTS_SOCK_HARNESS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "engine/sock/sock.h"

/* a case returns 0 on success; CHECK fails it at the first broken expectation */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "  FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, " [last error: %s]\n", tern_last_error());                             \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

#define CHECK_OK(expr)                                                                             \
    do {                                                                                           \
        tern_status_t st_ = (expr);                                                                \
        CHECK(st_ == TERN_OK, "%s returned %s", #expr, tern_strerror(st_));                        \
    } while (0)

#define CHECK_CALL(expr)                                                                           \
    do {                                                                                           \
        if ((expr) != 0)                                                                           \
            CHECK(0, "%s failed", #expr);                                                          \
    } while (0)

#define TMO 5000 /* ms: generous bound for anything that must happen */

/*
 * Wait (at most tmo_ms in total) for the event of sock (NULL: any socket)
 * with op; events of other sockets/ops that arrive meanwhile are kept and
 * handed to later calls.  0 on success.
 */
int expect_event(tern_sock_set_t *set, tern_sock_t *sock, tern_sock_op_t op, int tmo_ms,
                 tern_sock_event_t *ev);
/* No event at all (other than kept ones) for tmo_ms: 0 if none came. */
int expect_no_event(tern_sock_set_t *set, int tmo_ms);
/* Forget the kept events of set (before destroying it). */
void forget_events(tern_sock_set_t *set);

/* A connected TCP pair on 127.0.0.1 in set: *client (connected) and
 * *server (accepted), user pointers client_up / server_up. */
int make_pair(tern_sock_set_t *set, tern_sock_t **client, tern_sock_t **server, void *client_up,
              void *server_up);
/* post_close and wait for its CLOSE (other events kept). */
int close_and_wait(tern_sock_set_t *set, tern_sock_t *s);
/* A raw blocking client socket connected to 127.0.0.1:port, or -1. */
int raw_connect(int port);
/* Read exactly len bytes from a raw blocking fd (0 on success). */
int raw_read_full(int fd, void *buf, size_t len);

long long now_ms(void);
void fill_pattern(unsigned char *p, size_t len, unsigned seed);

/* cases */
int case_listen_connect_accept(void);
int case_connect_tries_addresses_in_order(void);
int case_min_max_read(void);
int case_min_max_write(void);
int case_readv_writev(void);
int case_progress_before_completion(void);
int case_progress_abort(void);
int case_large_transfer(void);
int case_immediate_read_writev(void);
int case_busy_and_invalid(void);
int case_wait_timeout(void);
int case_wakeup_from_thread(void);
int case_post_from_thread_while_waiting(void);
int case_close_interrupts_read(void);
int case_close_interrupts_write(void);
int case_close_interrupts_connect(void);
int case_close_listener_with_queued(void);
int case_port_range_exhausted(void);
int case_port_range_invalid(void);
int case_addr_in_use(void);
int case_conn_refused(void);
int case_peer_reset_mid_message(void);
int case_peer_close_eof(void);
int case_native_socketpair(void);
int case_native_pipe_no_sigpipe(void);
int case_host_description(void);
int case_destroy_with_open_sockets(void);

#endif
