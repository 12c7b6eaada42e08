/*
 * tcp_pingpong: plain kernel TCP between two processes (usually on two
 * hosts), the baseline tern's tcp netmod is compared with.
 *
 *   tcp_pingpong -s [-B ADDR] [-p PORT] [--idle SECS]        server
 *   tcp_pingpong -c ADDR [-p PORT] [-t lat|bw|all] [-m MIN] [-M MAX]
 *                [-n ITERS] [-b MIB] [--spin] [--json FILE]   client
 *
 * lat: ping-pong of SIZE-byte messages (MIN..MAX, doubling; default 8 B to
 *      1 MiB), one-way latency = round trip / 2, in microseconds.
 * bw:  the client streams MIB MiB (default 256) in SIZE-byte writes (MIN..MAX,
 *      default 1 KiB to 4 MiB), the server answers one byte when it has read
 *      everything; MB/s = 10^6 bytes per second, from the first write to that
 *      answer.
 * Both ends set TCP_NODELAY.  --spin polls with MSG_DONTWAIT instead of
 * sleeping in recv (what a polling progress engine does); the client tells
 * the server which mode to use.  The server serves one client connection
 * after another until a client sends "quit" (-q) or no client has come for
 * --idle seconds (default 120).  Output: one line per point,
 *   lat SIZE USEC ITERS
 *   bw SIZE MBPS BYTES
 * and with --json FILE ("-": stdout) the same as a JSON document.
 */
#define _GNU_SOURCE 1

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x7463706bu /* "tcpk" */

enum { T_LAT = 1, T_BW = 2, T_QUIT = 3 };

struct hdr {
    uint32_t magic;
    uint32_t type;
    uint32_t spin;
    uint32_t pad;
    uint64_t size;
    uint64_t count; /* lat: iterations incl. warm-up; bw: total bytes */
};

static int spin_mode;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "tcp_pingpong: %s: %s\n", what, strerror(errno));
    exit(1);
}

static uint64_t hton64(uint64_t v)
{
    return ((uint64_t)htonl((uint32_t)v) << 32) | htonl((uint32_t)(v >> 32));
}

/* full send / receive; spin mode never sleeps in the kernel */
static int send_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | (spin_mode ? MSG_DONTWAIT : 0));

        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) {
                continue;
            }
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int recv_all(int fd, void *buf, size_t len)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = recv(fd, p, len, spin_mode ? MSG_DONTWAIT : 0);

        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) {
                continue;
            }
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static void nodelay(int fd)
{
    int one = 1;

    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
        die("TCP_NODELAY");
    }
}

static void *alloc_buf(size_t len)
{
    void *p = NULL;

    if (posix_memalign(&p, 4096, len ? len : 1) != 0) {
        fprintf(stderr, "tcp_pingpong: out of memory (%zu bytes)\n", len);
        exit(1);
    }
    memset(p, 0x5a, len);
    return p;
}

/* ---- server ------------------------------------------------------------ */

static int serve_one(int fd)
{
    struct hdr h;
    char *buf;
    int rc = 0;

    spin_mode = 0;
    if (recv_all(fd, &h, sizeof(h)) != 0 || ntohl(h.magic) != MAGIC) {
        fprintf(stderr, "tcp_pingpong: bad request header\n");
        return 0;
    }
    h.type = ntohl(h.type);
    h.size = hton64(h.size);
    h.count = hton64(h.count);
    if (h.type == T_QUIT) {
        return 1;
    }
    if (h.size > (1u << 30)) {
        fprintf(stderr, "tcp_pingpong: size %llu too large\n", (unsigned long long)h.size);
        return 0;
    }
    spin_mode = ntohl(h.spin) != 0;
    buf = alloc_buf(h.size);
    if (h.type == T_LAT) {
        for (uint64_t i = 0; i < h.count; i++) {
            if (recv_all(fd, buf, h.size) != 0 || send_all(fd, buf, h.size) != 0) {
                perror("tcp_pingpong: server ping-pong");
                break;
            }
        }
    } else if (h.type == T_BW) {
        uint64_t left = h.count;
        char ack = 'k';

        while (left > 0) {
            size_t want = left < h.size ? (size_t)left : (size_t)h.size;
            ssize_t n = recv(fd, buf, want, spin_mode ? MSG_DONTWAIT : 0);

            if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
                continue;
            }
            if (n <= 0) {
                perror("tcp_pingpong: server stream");
                break;
            }
            left -= (uint64_t)n;
        }
        if (left == 0 && send_all(fd, &ack, 1) != 0) {
            perror("tcp_pingpong: server ack");
        }
    }
    free(buf);
    return rc;
}

static int run_server(const char *bind_addr, int port, int idle)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int one = 1, lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (lfd < 0) {
        die("socket");
    }
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (bind_addr != NULL && inet_pton(AF_INET, bind_addr, &a.sin_addr) != 1) {
        fprintf(stderr, "tcp_pingpong: bad address %s\n", bind_addr);
        return 2;
    }
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(lfd, 8) != 0) {
        die("bind/listen");
    }
    printf("listening on %s:%d\n", bind_addr ? bind_addr : "0.0.0.0", port);
    fflush(stdout);
    for (;;) {
        struct pollfd p = {.fd = lfd, .events = POLLIN};
        int n = poll(&p, 1, idle * 1000), fd, quit;

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            fprintf(stderr, "tcp_pingpong: no client for %d s, exiting\n", idle);
            close(lfd);
            return n == 0 ? 0 : 1;
        }
        fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            continue;
        }
        nodelay(fd);
        quit = serve_one(fd);
        close(fd);
        if (quit) {
            break;
        }
    }
    close(lfd);
    return 0;
}

/* ---- client ------------------------------------------------------------ */

static int dial(const char *addr, int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd;

    if (inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;

        if (getaddrinfo(addr, NULL, &hints, &res) != 0) {
            fprintf(stderr, "tcp_pingpong: cannot resolve %s\n", addr);
            exit(2);
        }
        a.sin_addr = ((struct sockaddr_in *)(void *)res->ai_addr)->sin_addr;
        freeaddrinfo(res);
    }
    /* the server may still be starting: retry, bounded (about 10 s) */
    for (int i = 0; i < 100; i++) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            die("socket");
        }
        if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
            nodelay(fd);
            return fd;
        }
        close(fd);
        if (errno != ECONNREFUSED) {
            break;
        }
        usleep(100 * 1000);
    }
    die("connect");
    return -1;
}

static int request(const char *addr, int port, uint32_t type, uint64_t size, uint64_t count)
{
    struct hdr h = {.magic = htonl(MAGIC),
                    .type = htonl(type),
                    .spin = htonl((uint32_t)spin_mode),
                    .size = hton64(size),
                    .count = hton64(count)};
    int fd = dial(addr, port);
    int saved = spin_mode;

    spin_mode = 0;
    if (send_all(fd, &h, sizeof(h)) != 0) {
        die("send header");
    }
    spin_mode = saved;
    return fd;
}

struct point {
    char test[4];
    uint64_t size;
    double value; /* usec or MB/s */
    uint64_t amount; /* iterations or bytes */
};

static double lat_point(const char *addr, int port, size_t size, uint64_t iters)
{
    uint64_t warm = iters / 10 + 10;
    int fd = request(addr, port, T_LAT, size, iters + warm);
    char *buf = alloc_buf(size);
    double t0 = 0;

    for (uint64_t i = 0; i < iters + warm; i++) {
        if (i == warm) {
            t0 = now_s();
        }
        if (send_all(fd, buf, size) != 0 || recv_all(fd, buf, size) != 0) {
            die("ping-pong");
        }
    }
    double us = (now_s() - t0) * 1e6 / (double)iters / 2.0;
    close(fd);
    free(buf);
    return us;
}

static double bw_point(const char *addr, int port, size_t size, uint64_t total)
{
    int fd = request(addr, port, T_BW, size, total);
    char *buf = alloc_buf(size);
    uint64_t left = total;
    char ack;
    double t0 = now_s();

    while (left > 0) {
        size_t n = left < size ? (size_t)left : size;

        if (send_all(fd, buf, n) != 0) {
            die("stream");
        }
        left -= n;
    }
    if (recv_all(fd, &ack, 1) != 0) {
        die("ack");
    }
    double mbps = (double)total / (now_s() - t0) / 1e6;
    close(fd);
    free(buf);
    return mbps;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: tcp_pingpong -s [-B ADDR] [-p PORT] [--idle SECS]\n"
            "       tcp_pingpong -c ADDR [-p PORT] [-t lat|bw|all] [-m MIN] [-M MAX]\n"
            "                    [-n ITERS] [-b MIB] [--spin] [--json FILE] [-q]\n");
    exit(2);
}

static unsigned long long parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);

    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end != '\0' || end == s) {
        fprintf(stderr, "tcp_pingpong: bad size '%s'\n", s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"spin", no_argument, NULL, 'S'},
                                              {"json", required_argument, NULL, 'J'},
                                              {"idle", required_argument, NULL, 'I'},
                                              {"help", no_argument, NULL, 'h'},
                                              {NULL, 0, NULL, 0}};
    const char *server_addr = NULL, *bind_addr = NULL, *json = NULL, *test = "all";
    int server = 0, port = 13713, idle = 120, quit = 0, c;
    unsigned long long min = 0, max = 0, iters = 0, mib = 256;

    signal(SIGPIPE, SIG_IGN);
    while ((c = getopt_long(argc, argv, "sc:B:p:t:m:M:n:b:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 's': server = 1; break;
        case 'c': server_addr = optarg; break;
        case 'B': bind_addr = optarg; break;
        case 'p': port = atoi(optarg); break;
        case 't': test = optarg; break;
        case 'm': min = parse_size(optarg); break;
        case 'M': max = parse_size(optarg); break;
        case 'n': iters = parse_size(optarg); break;
        case 'b': mib = parse_size(optarg); break;
        case 'q': quit = 1; break;
        case 'S': spin_mode = 1; break;
        case 'J': json = optarg; break;
        case 'I': idle = atoi(optarg); break;
        default: usage();
        }
    }
    if (server) {
        return run_server(bind_addr, port, idle > 0 ? idle : 120);
    }
    if (server_addr == NULL || port <= 0 || port > 65535) {
        usage();
    }
    int do_lat = strcmp(test, "lat") == 0 || strcmp(test, "all") == 0;
    int do_bw = strcmp(test, "bw") == 0 || strcmp(test, "all") == 0;
    if (!do_lat && !do_bw && !quit) {
        usage();
    }

    struct point pts[128];
    size_t npts = 0;
    if (do_lat) {
        unsigned long long lo = min ? min : 8, hi = max ? max : (1u << 20);
        printf("# one-way latency (round trip / 2), %s\n# test size usec iterations\n",
               spin_mode ? "spinning" : "blocking recv");
        for (unsigned long long s = lo; s <= hi && npts < 64; s = s ? s * 2 : 1) {
            /* default: 20000 round trips for small messages, fewer for large
             * ones (about 256 MiB each way), at least 100 */
            unsigned long long n = iters ? iters : 20000;
            if (!iters && s * n > (256ull << 20)) {
                n = (256ull << 20) / s;
            }
            if (n < 100) {
                n = 100;
            }
            double us = lat_point(server_addr, port, (size_t)s, n);
            printf("lat %llu %.3f %llu\n", s, us, n);
            fflush(stdout);
            pts[npts++] = (struct point){"lat", s, us, n};
        }
    }
    if (do_bw) {
        unsigned long long lo = min ? min : 1024, hi = max ? max : (4u << 20);
        unsigned long long total = mib << 20;
        printf("# bandwidth, %llu MiB streamed per size, MB/s = 1e6 B/s\n# test size MBps bytes\n",
               mib);
        for (unsigned long long s = lo; s <= hi && npts < 128; s = s ? s * 2 : 1) {
            double mbps = bw_point(server_addr, port, (size_t)s, total);
            printf("bw %llu %.1f %llu\n", s, mbps, total);
            fflush(stdout);
            pts[npts++] = (struct point){"bw", s, mbps, total};
        }
    }
    if (quit) {
        close(request(server_addr, port, T_QUIT, 0, 0));
    }
    if (json != NULL) {
        FILE *f = strcmp(json, "-") == 0 ? stdout : fopen(json, "w");

        if (f == NULL) {
            die(json);
        }
        fprintf(f, "{\"bench\": \"tcp_pingpong\", \"server\": \"%s\", \"port\": %d, "
                   "\"mode\": \"%s\", \"results\": [",
                server_addr, port, spin_mode ? "spin" : "blocking");
        for (size_t i = 0; i < npts; i++) {
            fprintf(f, "%s\n  {\"test\": \"%s\", \"size\": %llu, \"%s\": %.3f, \"%s\": %llu}",
                    i ? "," : "", pts[i].test, (unsigned long long)pts[i].size,
                    strcmp(pts[i].test, "lat") == 0 ? "usec" : "MBps", pts[i].value,
                    strcmp(pts[i].test, "lat") == 0 ? "iterations" : "bytes",
                    (unsigned long long)pts[i].amount);
        }
        fprintf(f, "\n]}\n");
        if (f != stdout) {
            fclose(f);
        }
    }
    return 0;
}
