/* Native fd adoption (socketpair, pipe), the host description, destroying a
 * set with sockets still open. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/sock/harness.h"

int case_native_socketpair(void)
{
    tern_sock_set_t *set;
    tern_sock_t *s;
    tern_sock_event_t ev;
    int sv[2];
    char in[16];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_OK(tern_sock_native_to_sock(set, sv[0], &sv, &s));
    CHECK(tern_sock_get_fd(s) == sv[0], "same fd");
    CHECK(fcntl(sv[0], F_GETFL) & O_NONBLOCK, "made non-blocking");
    CHECK(fcntl(sv[0], F_GETFD) & FD_CLOEXEC, "made close-on-exec");
    CHECK(write(sv[1], "native", 6) == 6, "raw write");
    CHECK_OK(tern_sock_post_read(s, in, 6, sizeof(in), NULL));
    CHECK_CALL(expect_event(set, s, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_OK && ev.num_bytes == 6 && memcmp(in, "native", 6) == 0, "read");
    CHECK(ev.user_ptr == &sv, "user_ptr");
    CHECK_OK(tern_sock_post_write(s, "back", 4, 4, NULL));
    CHECK_CALL(expect_event(set, s, TERN_SOCK_OP_WRITE, TMO, &ev));
    CHECK(raw_read_full(sv[1], in, 4) == 0 && memcmp(in, "back", 4) == 0, "raw read");
    close(sv[1]);
    CHECK_OK(tern_sock_post_read(s, in, 1, 1, NULL));
    CHECK_CALL(expect_event(set, s, TERN_SOCK_OP_READ, TMO, &ev));
    CHECK(ev.status == TERN_ERR_CONN_CLOSED, "peer closed: %s", tern_strerror(ev.status));
    CHECK_CALL(close_and_wait(set, s));
    CHECK(fcntl(sv[0], F_GETFD) < 0, "closed by post_close");
    tern_sock_set_destroy(set);
    return 0;
}

/* A write to a pipe whose reader is gone fails with CONN_CLOSED (EPIPE)
 * instead of killing the process with SIGPIPE. */
int case_native_pipe_no_sigpipe(void)
{
    tern_sock_set_t *set;
    tern_sock_t *s;
    tern_sock_event_t ev;
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    close(p[0]);
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_OK(tern_sock_native_to_sock(set, p[1], NULL, &s));
    CHECK_OK(tern_sock_post_write(s, "lost", 4, 4, NULL));
    CHECK_CALL(expect_event(set, s, TERN_SOCK_OP_WRITE, TMO, &ev));
    CHECK(ev.status == TERN_ERR_CONN_CLOSED, "%s", tern_strerror(ev.status));
    CHECK(strstr(tern_last_error(), "Broken pipe") != NULL, "message: %s", tern_last_error());
    CHECK_CALL(close_and_wait(set, s));
    tern_sock_set_destroy(set);
    return 0;
}

int case_host_description(void)
{
    char desc[4096], tiny[4];
    CHECK_OK(tern_sock_get_host_description(desc, sizeof(desc)));
    printf("  host description: %s\n", desc);
    char padded[sizeof(desc) + 2];
    snprintf(padded, sizeof(padded), ",%s,", desc);
    CHECK(strstr(padded, ",127.0.0.1,") != NULL, "lists 127.0.0.1");
    /* every IPv4 address of an interface that is up is listed, and no
     * loopback address comes before a non-loopback one */
    struct ifaddrs *list;
    CHECK(getifaddrs(&list) == 0, "getifaddrs");
    const char *first_lo = strstr(padded, ",127.0.0.1,");
    for (struct ifaddrs *ifa = list; ifa; ifa = ifa->ifa_next) {
        char text[INET_ADDRSTRLEN + 2], addr[INET_ADDRSTRLEN];
        if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET || !(ifa->ifa_flags & IFF_UP))
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)ifa->ifa_addr)->sin_addr, addr, sizeof(addr));
        snprintf(text, sizeof(text), ",%s,", addr);
        const char *at = strstr(padded, text);
        if (at == NULL) {
            freeifaddrs(list);
            CHECK(0, "%s (%s) missing", addr, ifa->ifa_name);
        }
        if (!(ifa->ifa_flags & IFF_LOOPBACK) && at > first_lo) {
            freeifaddrs(list);
            CHECK(0, "%s listed after loopback", addr);
        }
    }
    freeifaddrs(list);
    CHECK(tern_sock_get_host_description(tiny, sizeof(tiny)) == TERN_ERR_TRUNCATED,
          "too small a buffer");
    return 0;
}

/* Destroying a set closes and frees what is left (ASan checks the leaks). */
int case_destroy_with_open_sockets(void)
{
    tern_sock_set_t *set;
    tern_sock_t *c, *a, *l, *pending;
    char in[8];
    int port = 0;
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_CALL(make_pair(set, &c, &a, NULL, NULL));
    CHECK_OK(tern_sock_post_read(a, in, 8, 8, NULL));
    CHECK_OK(tern_sock_post_write(c, "1234", 4, 4, NULL));
    CHECK_OK(tern_sock_listen(set, NULL, NULL, &port, &l));
    CHECK_OK(tern_sock_post_connect(set, NULL, "127.0.0.1", port, &pending));
    CHECK_OK(tern_sock_post_close(c)); /* CLOSE queued, never returned */
    forget_events(set);
    tern_sock_set_destroy(set);
    return 0;
}
