/*
 * engine/sock unit tests: runs every case (or those named on the command
 * line) and prints one line per case.  A watchdog alarm bounds the run.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/sock/harness.h"

/* ---- kept events ---------------------------------------------------------- */

#define KEPT_MAX 64
static struct {
    tern_sock_set_t *set;
    tern_sock_event_t ev;
} kept[KEPT_MAX];
static int nkept;

static bool take_kept(tern_sock_set_t *set, tern_sock_t *sock, tern_sock_op_t op,
                      tern_sock_event_t *ev)
{
    for (int i = 0; i < nkept; i++) {
        if (kept[i].set == set && kept[i].ev.op == op &&
            (sock == NULL || kept[i].ev.sock == sock)) {
            *ev = kept[i].ev;
            memmove(&kept[i], &kept[i + 1], sizeof(kept[0]) * (size_t)(nkept - i - 1));
            nkept--;
            return true;
        }
    }
    return false;
}

long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int expect_event(tern_sock_set_t *set, tern_sock_t *sock, tern_sock_op_t op, int tmo_ms,
                 tern_sock_event_t *ev)
{
    long long deadline = now_ms() + tmo_ms;
    if (take_kept(set, sock, op, ev))
        return 0;
    for (;;) {
        long long left = deadline - now_ms();
        CHECK(left > 0, "no event op %d within %d ms", (int)op, tmo_ms);
        tern_sock_event_t e;
        tern_status_t st = tern_sock_wait(set, (int)left, &e);
        CHECK(st == TERN_OK || st == TERN_ERR_TIMED_OUT, "wait: %s", tern_strerror(st));
        if (st != TERN_OK)
            continue;
        if (e.op == op && (sock == NULL || e.sock == sock)) {
            *ev = e;
            return 0;
        }
        CHECK(nkept < KEPT_MAX, "too many unexpected events");
        kept[nkept].set = set;
        kept[nkept].ev = e;
        nkept++;
    }
}

int expect_no_event(tern_sock_set_t *set, int tmo_ms)
{
    tern_sock_event_t e;
    tern_status_t st = tern_sock_wait(set, tmo_ms, &e);
    CHECK(st == TERN_ERR_TIMED_OUT, "unexpected event op %d status %s", (int)e.op,
          tern_strerror(e.status));
    return 0;
}

void forget_events(tern_sock_set_t *set)
{
    for (int i = 0; i < nkept;) {
        if (kept[i].set == set) {
            memmove(&kept[i], &kept[i + 1], sizeof(kept[0]) * (size_t)(nkept - i - 1));
            nkept--;
        } else {
            i++;
        }
    }
}

/* ---- helpers --------------------------------------------------------------- */

int close_and_wait(tern_sock_set_t *set, tern_sock_t *s)
{
    tern_sock_event_t ev;
    CHECK_OK(tern_sock_post_close(s));
    CHECK_CALL(expect_event(set, s, TERN_SOCK_OP_CLOSE, TMO, &ev));
    CHECK(ev.status == TERN_OK, "close status %s", tern_strerror(ev.status));
    return 0;
}

int make_pair(tern_sock_set_t *set, tern_sock_t **client, tern_sock_t **server, void *client_up,
              void *server_up)
{
    tern_sock_t *l, *c, *a;
    tern_sock_event_t ev;
    int port = 0;
    CHECK_OK(tern_sock_listen(set, NULL, "127.0.0.1", &port, &l));
    CHECK(port > 0, "bound port %d", port);
    CHECK_OK(tern_sock_post_connect(set, client_up, "127.0.0.1", port, &c));
    CHECK_CALL(expect_event(set, l, TERN_SOCK_OP_ACCEPT, TMO, &ev));
    CHECK(ev.status == TERN_OK, "accept notification %s", tern_strerror(ev.status));
    CHECK_OK(tern_sock_accept(l, set, server_up, &a));
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_CONNECT, TMO, &ev));
    CHECK(ev.status == TERN_OK, "connect %s", tern_strerror(ev.status));
    CHECK(ev.user_ptr == client_up, "connect event user_ptr");
    CHECK_CALL(close_and_wait(set, l));
    *client = c;
    *server = a;
    return 0;
}

int raw_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

int raw_read_full(int fd, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n <= 0 && !(n < 0 && errno == EINTR))
            return -1;
        if (n > 0)
            got += (size_t)n;
    }
    return 0;
}

void fill_pattern(unsigned char *p, size_t len, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (unsigned char)(x >> 16);
    }
}

/* ---- the table ------------------------------------------------------------- */

static const struct {
    const char *name;
    int (*fn)(void);
} cases[] = {
    {"listen_connect_accept", case_listen_connect_accept},
    {"connect_tries_addresses_in_order", case_connect_tries_addresses_in_order},
    {"min_max_read", case_min_max_read},
    {"min_max_write", case_min_max_write},
    {"readv_writev", case_readv_writev},
    {"progress_before_completion", case_progress_before_completion},
    {"progress_abort", case_progress_abort},
    {"large_transfer_64MiB", case_large_transfer},
    {"immediate_read_writev", case_immediate_read_writev},
    {"busy_and_invalid", case_busy_and_invalid},
    {"wait_timeout", case_wait_timeout},
    {"wakeup_from_thread", case_wakeup_from_thread},
    {"post_from_thread_while_waiting", case_post_from_thread_while_waiting},
    {"close_interrupts_read", case_close_interrupts_read},
    {"close_interrupts_write", case_close_interrupts_write},
    {"close_interrupts_connect", case_close_interrupts_connect},
    {"close_listener_with_queued", case_close_listener_with_queued},
    {"port_range_exhausted", case_port_range_exhausted},
    {"port_range_invalid", case_port_range_invalid},
    {"addr_in_use", case_addr_in_use},
    {"conn_refused", case_conn_refused},
    {"peer_reset_mid_message", case_peer_reset_mid_message},
    {"peer_close_eof", case_peer_close_eof},
    {"native_socketpair", case_native_socketpair},
    {"native_pipe_no_sigpipe", case_native_pipe_no_sigpipe},
    {"host_description", case_host_description},
    {"destroy_with_open_sockets", case_destroy_with_open_sockets},
};

int main(int argc, char **argv)
{
    int failed = 0, ran = 0;
    alarm(120); /* watchdog: a hang fails the run instead of blocking make check */
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        bool selected = argc < 2;
        for (int a = 1; a < argc; a++)
            selected |= strcmp(argv[a], cases[i].name) == 0;
        if (!selected)
            continue;
        long long t0 = now_ms();
        int rc = cases[i].fn();
        ran++;
        failed += rc != 0;
        printf("%s %s (%lld ms)\n", rc ? "FAIL" : "ok  ", cases[i].name, now_ms() - t0);
        fflush(stdout);
    }
    if (ran == 0) {
        fprintf(stderr, "no case matched\n");
        return 2;
    }
    printf("%d of %d cases failed\n", failed, ran);
    return failed ? 1 : 0;
}
