/*
 * libFuzzer harness of what a tcp peer hands us before any packet: its
 * business card (tern_tcp_card_check), the HELLO / VERDICT of the
 * connection handshake (tern_tcp_hello_valid, tern_tcp_verdict_decode) and
 * the card's host list as tern_sock_post_connect parses it ("a,b,c").
 * Byte 0 picks the target, byte 1 a rank (and a job size), the rest is
 * what the peer sent.
 *
 * The host list is fed to the real post_connect.  This binary is linked
 * with -Wl,--wrap=getaddrinfo,--wrap=connect: every lookup is numeric only
 * (AI_NUMERICHOST: no name service, no DNS) and every connect is refused
 * at once, so no packet leaves the process whatever the input names.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "netmods/tcp/tcp_internal.h"
#include "tests/fuzz/seeds.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int __real_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                       struct addrinfo **res);
int __wrap_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                       struct addrinfo **res);
int __wrap_connect(int fd, const struct sockaddr *addr, socklen_t len);

int __wrap_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                       struct addrinfo **res)
{
    struct addrinfo h = {0};
    if (hints != NULL)
        h = *hints;
    h.ai_flags |= AI_NUMERICHOST;
    return __real_getaddrinfo(node, service, &h, res);
}

int __wrap_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    errno = ECONNREFUSED;
    return -1;
}

static void check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_tcp_card: invariant broken: %s (last error: %s)\n", what,
                tern_last_error());
        abort();
    }
}

static void fuzz_card(const uint8_t *p, size_t n, int rank)
{
    tern_tcp_card_t out;
    memset(&out, 0x77, sizeof(out));
    tern_status_t st = tern_tcp_card_check(p, n, rank, &out);
    if (st != TERN_OK) {
        check(st == TERN_ERR_MALFORMED, "a bad card is not MALFORMED");
        const uint8_t *o = (const uint8_t *)&out;
        for (size_t i = 0; i < sizeof(out); i++)
            check(o[i] == 0x77, "a refused card was written out");
        return;
    }
    check(n == sizeof(out) && out.magic == TERN_TCP_MAGIC && out.version == TERN_TCP_VERSION &&
              out.rank == rank, "a card accepted with the wrong size, magic, version or rank");
    check(memchr(out.hosts, '\0', sizeof(out.hosts)) != NULL, "hosts not terminated");
}

static void fuzz_hello(const uint8_t *p, size_t n, int size, int me)
{
    tern_tcp_hello_t h;
    if (n != sizeof(h))
        return; /* the socket layer reads exactly sizeof(h) or fails the read */
    memcpy(&h, p, sizeof(h));
    if (tern_tcp_hello_valid(&h, size, me))
        check(h.magic == TERN_TCP_MAGIC && h.version == TERN_TCP_VERSION && h.rank >= 0 &&
                  h.rank < size && h.rank != me, "a HELLO accepted from outside the job");
}

static void fuzz_verdict(const uint8_t *p, size_t n)
{
    tern_tcp_verdict_t v;
    if (n != sizeof(v))
        return;
    memcpy(&v, p, sizeof(v));
    enum tern_tcp_verdict_kind k = tern_tcp_verdict_decode(&v);
    check(k == (v.magic != TERN_TCP_MAGIC ? TCP_VERDICT_INVALID
                : v.accept               ? TCP_VERDICT_ACCEPT
                                         : TCP_VERDICT_REJECT),
          "a VERDICT decoded wrong");
}

/* The card's host list through post_connect: refused everywhere, so an
 * accepted list ends in one failed CONNECT event, then the CLOSE. */
static void fuzz_hosts(const uint8_t *p, size_t n, int port)
{
    static tern_sock_set_t *set;
    char hosts[sizeof(((tern_tcp_card_t *)0)->hosts)];
    if (set == NULL)
        check(tern_sock_set_create(&set) == TERN_OK, "socket set");
    n = n < sizeof(hosts) - 1 ? n : sizeof(hosts) - 1;
    memcpy(hosts, p, n);
    hosts[n] = '\0';
    tern_sock_t *sock = NULL;
    tern_status_t st = tern_sock_post_connect(set, hosts, hosts, port, &sock);
    if (st != TERN_OK) {
        check(sock == NULL, "a refused connect gave a socket");
        check(st == TERN_ERR_UNREACHABLE || st == TERN_ERR_INVALID_PARAM ||
                  st == TERN_ERR_NO_MEMORY, "post_connect failed with an unexpected status");
        return;
    }
    int connects = 0, closed = 0;
    tern_sock_event_t ev;
    check(tern_sock_post_close(sock) == TERN_OK, "post_close");
    for (int i = 0; i < 8 && !closed; i++) {
        check(tern_sock_wait(set, 0, &ev) == TERN_OK, "an event of the connect");
        check(ev.user_ptr == hosts, "an event of another socket");
        if (ev.op == TERN_SOCK_OP_CONNECT) {
            connects++;
            check(ev.status != TERN_OK, "a connect succeeded with connect() refused");
        }
        closed = ev.op == TERN_SOCK_OP_CLOSE;
    }
    check(closed && connects <= 1, "no CLOSE event, or several CONNECT events");
    check(tern_sock_wait(set, 0, &ev) == TERN_ERR_TIMED_OUT, "events left after CLOSE");
}

static void seed(const char *name, uint8_t target, uint8_t rank, const void *p, size_t n)
{
    uint8_t in[2 + sizeof(tern_tcp_card_t)];
    in[0] = target;
    in[1] = rank;
    memcpy(in + 2, p, n);
    seed_write(name, in, 2 + n);
}

static void write_seeds(void)
{
    tern_tcp_card_t c = {.magic = TERN_TCP_MAGIC, .version = TERN_TCP_VERSION, .rank = 1,
                         .port = 4711, .hosts = "10.0.0.1,fe80::1%lo"};
    seed("card", 0, 1, &c, sizeof(c));
    seed("card_short", 0, 1, &c, 20);
    tern_tcp_hello_t h = {.magic = TERN_TCP_MAGIC, .version = TERN_TCP_VERSION, .rank = 2};
    seed("hello", 1, 3 << 4, &h, sizeof(h)); /* job of 4, we are rank 0 */
    tern_tcp_verdict_t v = {.magic = TERN_TCP_MAGIC, .accept = 1};
    seed("verdict_accept", 2, 0, &v, sizeof(v));
    v.accept = 0;
    seed("verdict_reject", 2, 0, &v, sizeof(v));
    seed("hosts", 3, 0x11, "127.0.0.1,::1", 13);
    seed("hosts_mixed", 3, 0x12, " 10.1.2.3, fe80::1%lo,,name.invalid,::ffff:1.2.3.4", 50);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    seeds_maybe_write(write_seeds);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int rank = data[1] & 15, job = 1 + (data[1] >> 4);
    const uint8_t *p = data + 2;
    size_t n = size - 2;
    switch (data[0] & 3) {
    case 0:
        fuzz_card(p, n, rank);
        break;
    case 1:
        fuzz_hello(p, n, job, rank);
        break;
    case 2:
        fuzz_verdict(p, n);
        break;
    default:
        fuzz_hosts(p, n, data[1] * 257); /* 0: refused, no port */
        break;
    }
    return 0;
}
