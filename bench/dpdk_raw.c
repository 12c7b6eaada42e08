/*
 * dpdk_raw — the floor under tern's DPDK netmod: raw Ethernet ping-pong
 * between two processes through one DPDK port each, with no reliability
 * layer at all (no window, no acknowledgement, no retransmission).
 *
 * What it measures (the client prints it, the server only echoes):
 *  - latency: for each payload size N (powers of two from --sizes MIN to
 *    MAX), --warmup then --iters round trips.  The client allocates an
 *    mbuf, writes the Ethernet header, its own small header and the padding
 *    (--overhead bytes in all), copies N payload bytes in and sends it; the
 *    server rewrites the frame's type and stamps its own echo count into it
 *    (it swaps nothing: frames go to the broadcast MAC) and sends the same
 *    mbuf back; the client busy-polls rte_eth_rx_burst, checks the sequence
 *    number (a stray or late frame does not count) and copies the payload
 *    out.  One-way latency = half the round trip, timed with rte_rdtsc():
 *    the mean and the median of the per-iteration halves, in microseconds
 *    (the JSON adds min, p99 and max).  Before the first size, 4096 frames
 *    are echoed unmeasured: the first pass over memif's shared rings
 *    page-faults (see prime()).
 *  - bandwidth: the client streams --bw-frames frames carrying the largest
 *    payload the MTU allows (MTU - overhead), in bursts of 32; the server
 *    counts them and answers the end-of-stream frame with its count and the
 *    time between the first and the last frame it saw.  MB/s (1e6 bytes)
 *    of payload and Mpps over that time, and how many frames the server
 *    saw (a lossy link such as af_packet drops some: they are reported).
 *
 * A frame for an N-byte payload is 14 (Ethernet) + OVERHEAD + N bytes,
 * EtherType 0x88B5.  --overhead defaults to 88, what tern's DPDK netmod adds
 * to an N-byte message (its 48-byte frame header and 40-byte packet
 * header), so the sizes compare one to one; this program's own header (24
 * bytes) lives inside the overhead, which therefore is at least 24.
 *
 * Run (memif between two processes, anonymous memory, no NIC):
 *   ./dpdk_raw --role server --core 0 &
 *   ./dpdk_raw --role client --core 1
 * The default device is
 *   net_memif0,role=<role>,id=0,socket=/tmp/dpdk_raw-<uid>.sock,socket-abstract=no
 * any other virtual device works too (both sides send to the broadcast
 * MAC), e.g. a veth pair: --vdev net_af_packet0,iface=vethA on one side and
 * --vdev net_af_packet0,iface=vethB on the other.  Everything after `--` is
 * appended to the EAL arguments, which are
 *   --file-prefix=dpdk_raw-<uid>-<pid> -l <core> --no-pci --no-telemetry
 *   --log-level=error, and --in-memory when free hugepages are mounted,
 *   else --no-huge --no-shconf -m 256.
 *
 * Start-up and shutdown.  The memif client dials only in rte_eth_dev_start
 * and never dials again by itself, so a client whose link is not up is
 * stopped and started again every 200 ms, until --timeout seconds.  Then
 * it says HELLO until the server answers (on af_packet the link is up
 * without a peer).  memif never removes its socket file: the server
 * unlinks it at the first HELLO (the client is connected then) and at
 * exit; a stale file left by a killed server is removed before the port is
 * created (bind would fail on it).  Ports are never closed: closing a memif
 * port while the peer disconnects can crash EAL's interrupt thread.  The
 * client exits first (after the server acknowledged DONE), the server
 * when its link goes down or 300 ms later.  Every wait is bounded; the
 * exit status is non-zero on failure, with the cause on stderr.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#define RAW_ETHERTYPE 0x88B5u
#define RAW_MAGIC 0x54524157u /* "TRAW" */
#define RAW_BURST 32
#define RAW_POOL 8191
#define RAW_DESC 1024
#define RAW_MEM_MB 256
#define RAW_MAX_EAL 64
#define RAW_RESTART_MS 200 /* a memif client without link is restarted */
#define RAW_RESEND_MS 100  /* control frames are repeated until answered */
#define RAW_PONG_MS 200    /* a ping not answered by then is lost */
#define RAW_STALL_S 5      /* no progress for this long ends a phase */
#define RAW_LINGER_MS 300  /* the server answers repeated DONEs this long */
#define RAW_PRIME 4096     /* frames echoed before measuring (see prime()) */

enum raw_type {
    RAW_HELLO = 1,
    RAW_HELLO_ACK,
    RAW_PING,
    RAW_PONG,
    RAW_BW_START,
    RAW_BW_START_ACK,
    RAW_BW_DATA,
    RAW_BW_END,
    RAW_BW_REPORT,
    RAW_DONE,
    RAW_DONE_ACK,
};

/* Right after the Ethernet header, inside the --overhead bytes. */
struct raw_hdr {
    uint32_t magic;
    uint16_t type;
    uint16_t flags;
    uint32_t seq; /* the client's; answers carry the request's */
    uint32_t arg; /* PONG: the server's echo count; BW_*: run, counts */
    uint64_t val; /* BW_REPORT: ns between the first and last frame seen */
} __attribute__((packed));

#define RAW_HDR_SIZE ((uint32_t)sizeof(struct raw_hdr))

struct raw_opts {
    bool server;
    char vdev[512];
    int core;
    uint32_t min_size, max_size;
    uint32_t iters, warmup, bw_frames;
    uint32_t overhead, mtu;
    unsigned timeout_s;
    const char *json;
    int eal_argc; /* after "--" */
    char **eal_argv;
};

struct raw_port {
    uint16_t id;
    char name[RTE_ETH_NAME_MAX_LEN];
    bool memif_client;
    struct rte_mempool *pool;
    struct rte_ether_hdr eth; /* template: broadcast <- this port */
    uint32_t mtu, max_frame;
    uint64_t hz;
};

struct raw_lat {
    uint32_t size;
    uint32_t frame;
    uint32_t samples, lost, stray;
    double mean_us, median_us, min_us, p99_us, max_us;
};

struct raw_bw {
    uint32_t payload, frame;
    uint32_t sent, seen;
    double seconds, rx_seconds, mbps, mpps;
};

static const char *g_role; /* "server" or "client" once known */
static char g_sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];

static void unlink_socket(void)
{
    if (g_sock_path[0] != '\0')
        unlink(g_sock_path);
    g_sock_path[0] = '\0';
}

static void on_signal(int sig)
{
    if (g_sock_path[0] != '\0')
        unlink(g_sock_path); /* async-signal-safe */
    _exit(128 + sig);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "dpdk_raw%s%s: ", g_role ? " " : "", g_role ? g_role : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1); /* runs unlink_socket; ports are left to the exit */
}

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void warn(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "dpdk_raw%s%s: ", g_role ? " " : "", g_role ? g_role : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---- options ---------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: dpdk_raw --role server|client [options] [-- EAL arguments]\n"
            "  --vdev DEVARGS   the port (default net_memif0,role=<role>,id=0,\n"
            "                   socket=/tmp/dpdk_raw-<uid>.sock,socket-abstract=no)\n"
            "  --core N         the core EAL pins this process to (default: first allowed)\n"
            "  --sizes MIN:MAX  payload bytes, powers of two (default 8:1024)\n"
            "  --iters N        measured round trips per size (default 10000)\n"
            "  --warmup N       unmeasured round trips before them (default 1000)\n"
            "  --bw-frames N    frames of the bandwidth stream, 0: none (default 200000)\n"
            "  --overhead B     frame bytes beyond the Ethernet header and the payload\n"
            "                   (default 88: tern's DPDK netmod; at least %u)\n"
            "  --mtu B          wanted MTU, capped by the port (default 1500)\n"
            "  --timeout S      wait for the link / the peer this long (default 10)\n"
            "  --json FILE      also write the results as JSON\n",
            RAW_HDR_SIZE);
}

static uint32_t parse_u32(const char *opt, const char *s, uint32_t lo, uint32_t hi)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < lo || v > hi)
        die("%s %s: want an integer in [%" PRIu32 ", %" PRIu32 "]", opt, s, lo, hi);
    return (uint32_t)v;
}

static void parse_sizes(struct raw_opts *o, const char *s)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%s", s);
    char *colon = strchr(buf, ':');
    if (colon == NULL)
        die("--sizes %s: want MIN:MAX", s);
    *colon = '\0';
    o->min_size = parse_u32("--sizes", buf, 0, 1u << 20);
    o->max_size = parse_u32("--sizes", colon + 1, 0, 1u << 20);
    if (o->max_size < o->min_size)
        die("--sizes %s: MAX below MIN", s);
}

static int first_allowed_cpu(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            return c;
    return 0;
}

static void parse_args(int argc, char **argv, struct raw_opts *o)
{
    static const struct option longs[] = {
        {"role", required_argument, NULL, 'r'},
        {"vdev", required_argument, NULL, 'v'},
        {"core", required_argument, NULL, 'c'},
        {"sizes", required_argument, NULL, 's'},
        {"iters", required_argument, NULL, 'n'},
        {"warmup", required_argument, NULL, 'w'},
        {"bw-frames", required_argument, NULL, 'b'},
        {"json", required_argument, NULL, 'j'},
        {"overhead", required_argument, NULL, 'o'},
        {"mtu", required_argument, NULL, 'm'},
        {"timeout", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *role = NULL;
    memset(o, 0, sizeof(*o));
    o->core = -1;
    o->min_size = 8;
    o->max_size = 1024;
    o->iters = 10000;
    o->warmup = 1000;
    o->bw_frames = 200000;
    o->overhead = 88;
    o->mtu = RTE_ETHER_MTU;
    o->timeout_s = 10;
    int c;
    while ((c = getopt_long(argc, argv, "+h", longs, NULL)) != -1) {
        switch (c) {
        case 'r':
            role = optarg;
            break;
        case 'v':
            if (strlen(optarg) >= sizeof(o->vdev))
                die("--vdev: longer than %zu bytes", sizeof(o->vdev) - 1);
            snprintf(o->vdev, sizeof(o->vdev), "%s", optarg);
            break;
        case 'c':
            o->core = (int)parse_u32("--core", optarg, 0, RTE_MAX_LCORE - 1);
            break;
        case 's':
            parse_sizes(o, optarg);
            break;
        case 'n':
            o->iters = parse_u32("--iters", optarg, 1, 100000000);
            break;
        case 'w':
            o->warmup = parse_u32("--warmup", optarg, 0, 100000000);
            break;
        case 'b':
            o->bw_frames = parse_u32("--bw-frames", optarg, 0, 1000000000);
            break;
        case 'j':
            o->json = optarg;
            break;
        case 'o':
            o->overhead = parse_u32("--overhead", optarg, RAW_HDR_SIZE, 9000);
            break;
        case 'm':
            o->mtu = parse_u32("--mtu", optarg, 68, 65535);
            break;
        case 't':
            o->timeout_s = parse_u32("--timeout", optarg, 1, 3600);
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            exit(2);
        }
    }
    if (role == NULL || (strcmp(role, "server") != 0 && strcmp(role, "client") != 0)) {
        usage(stderr);
        die("--role server or --role client is required");
    }
    o->server = strcmp(role, "server") == 0;
    g_role = o->server ? "server" : "client";
    if (o->vdev[0] == '\0')
        snprintf(o->vdev, sizeof(o->vdev),
                 "net_memif0,role=%s,id=0,socket=/tmp/dpdk_raw-%u.sock,socket-abstract=no", role,
                 (unsigned)getuid());
    if (o->core < 0)
        o->core = first_allowed_cpu();
    o->eal_argc = argc - optind;
    o->eal_argv = argv + optind;
}

/* ---- EAL -------------------------------------------------------------- */

/* --in-memory needs free hugepages and a hugetlbfs mount. */
static bool hugepages_usable(void)
{
    char line[256];
    long free_pages = 0;
    bool mounted = false;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f == NULL)
        return false;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "HugePages_Free: %ld", &free_pages) == 1)
            break;
    fclose(f);
    if (free_pages <= 0 || (f = fopen("/proc/mounts", "r")) == NULL)
        return false;
    while (!mounted && fgets(line, sizeof(line), f))
        mounted = strstr(line, " hugetlbfs ") != NULL;
    fclose(f);
    return mounted;
}

static void eal_start(const struct raw_opts *o)
{
    static char store[16][64];
    char *argv[RAW_MAX_EAL + 1];
    int argc = 0, ns = 0;
#define RAW_ARG(...) (snprintf(argv[argc++] = store[ns++], sizeof(store[0]), __VA_ARGS__))
    RAW_ARG("dpdk_raw");
    RAW_ARG("--file-prefix=dpdk_raw-%u-%ld", (unsigned)getuid(), (long)getpid());
    RAW_ARG("-l");
    RAW_ARG("%d", o->core);
    RAW_ARG("--no-pci");
    RAW_ARG("--no-telemetry");
    RAW_ARG("--log-level=error");
    if (hugepages_usable()) {
        RAW_ARG("--in-memory");
    } else {
        RAW_ARG("--no-huge");
        RAW_ARG("--no-shconf");
        RAW_ARG("-m");
        RAW_ARG("%d", RAW_MEM_MB);
    }
#undef RAW_ARG
    if (argc + o->eal_argc > RAW_MAX_EAL)
        die("more than %d EAL arguments after --", RAW_MAX_EAL - argc);
    for (int i = 0; i < o->eal_argc; i++)
        argv[argc++] = o->eal_argv[i];
    argv[argc] = NULL;
    char line[1024];
    size_t n = 0;
    for (int i = 0; i < argc && n < sizeof(line); i++)
        n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s", i ? " " : "", argv[i]);
    if (rte_eal_init(argc, argv) < 0)
        die("rte_eal_init failed: %s (arguments: %s)", rte_strerror(rte_errno), line);
    /* EAL leaves an empty /var/run/dpdk/<prefix> even with --no-shconf */
    const char *dir = rte_eal_get_runtime_dir();
    if (dir != NULL && dir[0] != '\0' && rmdir(dir) != 0 && errno != ENOENT)
        warn("runtime directory %s stays: %s", dir, strerror(errno));
}

/* ---- the port ----------------------------------------------------------- */

/* The value of KEY=... in a devargs string, or "" (KEY preceded by a comma). */
static void devarg(const char *devargs, const char *key, char *out, size_t len)
{
    size_t kl = strlen(key);
    out[0] = '\0';
    for (const char *p = strchr(devargs, ','); p != NULL; p = strchr(p + 1, ',')) {
        if (strncmp(p + 1, key, kl) == 0 && p[1 + kl] == '=') {
            size_t vl = strcspn(p + 2 + kl, ",");
            if (vl < len) {
                memcpy(out, p + 2 + kl, vl);
                out[vl] = '\0';
            }
            return;
        }
    }
}

/* A memif server binds its socket path when the port is created, which fails
 * on a file left by a killed server: remove it if nobody listens there. */
static void clear_stale_socket(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode))
        return;
    struct sockaddr_un sun;
    memset(&sun, 0, sizeof(sun));
    sun.sun_family = AF_UNIX;
    snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    if (fd < 0)
        return;
    int rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
    int err = errno;
    close(fd);
    if (rc == 0)
        die("%s: another memif server listens there", path);
    if (err == ECONNREFUSED) {
        warn("removing the stale socket %s", path);
        unlink(path);
    }
}

static void port_create(const struct raw_opts *o, struct raw_port *p)
{
    const char *comma = strchr(o->vdev, ',');
    size_t nl = comma ? (size_t)(comma - o->vdev) : strlen(o->vdev);
    if (nl == 0 || nl >= sizeof(p->name))
        die("--vdev %s: bad device name", o->vdev);
    memcpy(p->name, o->vdev, nl);
    p->name[nl] = '\0';
    bool memif = strncmp(p->name, "net_memif", 9) == 0;
    char role[16], sock[sizeof(g_sock_path)], abstract[8];
    devarg(o->vdev, "role", role, sizeof(role));
    devarg(o->vdev, "socket", sock, sizeof(sock));
    devarg(o->vdev, "socket-abstract", abstract, sizeof(abstract));
    p->memif_client = memif && strcmp(role, "client") == 0;
    bool path_socket = memif && sock[0] != '\0' && strcmp(abstract, "no") == 0;
    if (path_socket && strcmp(role, "server") == 0)
        clear_stale_socket(sock);
    int rc = rte_eal_hotplug_add("vdev", p->name, comma ? comma + 1 : "");
    if (rc != 0)
        die("creating the port %s failed: %s (is the PMD installed, are the arguments "
            "right?)",
            o->vdev, rte_strerror(-rc));
    if (path_socket && strcmp(role, "server") == 0)
        snprintf(g_sock_path, sizeof(g_sock_path), "%s", sock);
    if (rte_eth_dev_get_port_by_name(p->name, &p->id) != 0)
        die("no ethdev port named %s after creating it", p->name);
}

/* The MTU ethdev accepts: the wanted one within max_mtu and max_rx_pktlen. */
static uint32_t port_mtu(const struct raw_opts *o, const struct rte_eth_dev_info *info)
{
    uint32_t l2 = RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;
    if (info->max_mtu != UINT16_MAX && info->max_rx_pktlen > info->max_mtu)
        l2 = info->max_rx_pktlen - info->max_mtu;
    uint32_t mtu = o->mtu;
    if (mtu > info->max_mtu)
        mtu = info->max_mtu;
    if (info->max_rx_pktlen > l2 && mtu > info->max_rx_pktlen - l2)
        mtu = info->max_rx_pktlen - l2;
    return mtu;
}

static void port_configure(const struct raw_opts *o, struct raw_port *p)
{
    struct rte_eth_dev_info info;
    int rc = rte_eth_dev_info_get(p->id, &info);
    if (rc != 0)
        die("%s: rte_eth_dev_info_get: %s", p->name, rte_strerror(-rc));
    p->mtu = port_mtu(o, &info);
    if (p->mtu < o->overhead)
        die("%s: MTU %" PRIu32 " is below the overhead of %" PRIu32 " bytes", p->name, p->mtu,
            o->overhead);
    p->max_frame = p->mtu + RTE_ETHER_HDR_LEN;
    uint32_t room = RTE_PKTMBUF_HEADROOM + p->max_frame;
    if (room < RTE_MBUF_DEFAULT_BUF_SIZE)
        room = RTE_MBUF_DEFAULT_BUF_SIZE;
    p->pool =
        rte_pktmbuf_pool_create("dpdk_raw", RAW_POOL, 256, 0, (uint16_t)room, (int)rte_socket_id());
    if (p->pool == NULL)
        die("mbuf pool of %d x %" PRIu32 " bytes: %s", RAW_POOL, room, rte_strerror(rte_errno));
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof(conf));
    conf.rxmode.mtu = p->mtu;
    rc = rte_eth_dev_configure(p->id, 1, 1, &conf);
    if (rc != 0)
        die("%s: rte_eth_dev_configure (MTU %" PRIu32 "): %s", p->name, p->mtu, rte_strerror(-rc));
    uint16_t nrx = RAW_DESC, ntx = RAW_DESC;
    rte_eth_dev_adjust_nb_rx_tx_desc(p->id, &nrx, &ntx);
    int sock = rte_eth_dev_socket_id(p->id);
    if (sock < 0)
        sock = (int)rte_socket_id();
    rc = rte_eth_rx_queue_setup(p->id, 0, nrx, (unsigned)sock, NULL, p->pool);
    if (rc == 0)
        rc = rte_eth_tx_queue_setup(p->id, 0, ntx, (unsigned)sock, NULL);
    if (rc != 0)
        die("%s: queue setup (%u rx, %u tx descriptors): %s", p->name, nrx, ntx, rte_strerror(-rc));
    memset(&p->eth.dst_addr, 0xff, sizeof(p->eth.dst_addr));
    rte_eth_macaddr_get(p->id, &p->eth.src_addr);
    p->eth.ether_type = rte_cpu_to_be_16(RAW_ETHERTYPE);
    p->hz = rte_get_tsc_hz();
}

static uint64_t ms_ticks(const struct raw_port *p, uint64_t ms)
{
    return p->hz / 1000 * ms;
}

static bool link_up(const struct raw_port *p)
{
    struct rte_eth_link link;
    memset(&link, 0, sizeof(link));
    return rte_eth_link_get_nowait(p->id, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
}

/* A memif client whose server does not listen yet fails to start (an
 * error logged each time): quiet while retrying. */
static int quiet_start(const struct raw_port *p)
{
    int lt = p->memif_client ? rte_log_register("pmd.net.memif") : -1;
    int level = lt >= 0 ? rte_log_get_level((uint32_t)lt) : 0;
    if (lt >= 0)
        rte_log_set_level((uint32_t)lt, RTE_LOG_CRIT);
    int rc = rte_eth_dev_start(p->id);
    if (lt >= 0 && level > 0)
        rte_log_set_level((uint32_t)lt, (uint32_t)level);
    return rc;
}

/* Start the port and wait for its link, restarting a memif client. */
static void port_start(const struct raw_opts *o, struct raw_port *p)
{
    uint64_t t0 = rte_rdtsc(), deadline = t0 + ms_ticks(p, o->timeout_s * 1000ull);
    uint64_t started_at = 0;
    bool started = false;
    int last_rc = 0;
    for (;;) {
        uint64_t now = rte_rdtsc();
        if (started && link_up(p))
            return;
        if (now > deadline)
            break;
        if (started && p->memif_client && now - started_at > ms_ticks(p, RAW_RESTART_MS)) {
            rte_eth_dev_stop(p->id);
            started = false;
        }
        if (!started && now - started_at > ms_ticks(p, RAW_RESTART_MS)) {
            started_at = now;
            last_rc = quiet_start(p);
            started = last_rc == 0;
            if (!started && !p->memif_client)
                die("%s: rte_eth_dev_start: %s", p->name, rte_strerror(-last_rc));
        }
        rte_delay_us_sleep(1000);
    }
    if (!started && p->memif_client)
        die("%s: link not up after %u s (the server's socket cannot be dialled: is the "
            "server running, with the same socket=?)",
            p->name, o->timeout_s);
    if (!started)
        die("%s: link not up after %u s (rte_eth_dev_start: %s)", p->name, o->timeout_s,
            rte_strerror(-last_rc));
    die("%s: link not up after %u s%s", p->name, o->timeout_s,
        o->server ? " (no client connected)" : "");
}

/* ---- frames ------------------------------------------------------------- */

static struct raw_hdr *frame_hdr(struct rte_mbuf *m)
{
    return rte_pktmbuf_mtod_offset(m, struct raw_hdr *, RTE_ETHER_HDR_LEN);
}

/* Fill m as a frame of `overhead + len` bytes past the Ethernet header. */
static void frame_fill(const struct raw_port *p, struct rte_mbuf *m, uint32_t overhead,
                       uint16_t type, uint32_t seq, uint32_t arg, const uint8_t *payload,
                       uint32_t len)
{
    uint32_t flen = RTE_ETHER_HDR_LEN + overhead + len;
    uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
    memcpy(d, &p->eth, RTE_ETHER_HDR_LEN);
    struct raw_hdr h = {.magic = RAW_MAGIC, .type = type, .seq = seq, .arg = arg};
    memcpy(d + RTE_ETHER_HDR_LEN, &h, sizeof(h));
    memset(d + RTE_ETHER_HDR_LEN + RAW_HDR_SIZE, 0, overhead - RAW_HDR_SIZE);
    if (len != 0)
        memcpy(d + RTE_ETHER_HDR_LEN + overhead, payload, len);
    m->data_len = (uint16_t)flen;
    m->pkt_len = flen;
}

/* Our header of m, copied to *h, or false for a frame not of ours. */
static bool frame_parse(struct rte_mbuf *m, struct raw_hdr *h)
{
    struct rte_ether_hdr eb;
    if (rte_pktmbuf_pkt_len(m) < RTE_ETHER_HDR_LEN + RAW_HDR_SIZE)
        return false;
    const struct rte_ether_hdr *e = rte_pktmbuf_read(m, 0, sizeof(eb), &eb);
    if (e->ether_type != rte_cpu_to_be_16(RAW_ETHERTYPE))
        return false;
    const struct raw_hdr *r = rte_pktmbuf_read(m, RTE_ETHER_HDR_LEN, sizeof(*h), h);
    if (r != h)
        memcpy(h, r, sizeof(*h));
    return h->magic == RAW_MAGIC;
}

/* Send n frames, retrying a full ring until RAW_STALL_S without progress
 * or the link is down; what is not sent is freed.  Returns how many were
 * sent. */
static uint16_t tx_all(const struct raw_port *p, struct rte_mbuf **m, uint16_t n)
{
    uint16_t sent = 0;
    uint64_t last = 0, checked = 0;
    while (sent < n) {
        uint16_t k = rte_eth_tx_burst(p->id, 0, m + sent, (uint16_t)(n - sent));
        if (k != 0) {
            sent = (uint16_t)(sent + k);
            last = 0;
            continue;
        }
        uint64_t now = rte_rdtsc();
        if (last == 0) {
            last = checked = now;
        } else if (now - last > ms_ticks(p, RAW_STALL_S * 1000ull)) {
            break;
        } else if (now - checked > ms_ticks(p, 10)) {
            checked = now;
            if (!link_up(p))
                break;
        }
    }
    if (sent < n)
        rte_pktmbuf_free_bulk(m + sent, (unsigned)(n - sent));
    return sent;
}

static void tx_failed(const struct raw_port *p) __attribute__((noreturn));

static void tx_failed(const struct raw_port *p)
{
    if (!link_up(p))
        die("%s: link down (the %s has gone?)", p->name, g_role[0] == 's' ? "client" : "server");
    die("%s: cannot send for %d s (transmit ring full)", p->name, RAW_STALL_S);
}

static void send_ctl(const struct raw_opts *o, const struct raw_port *p, uint16_t type,
                     uint32_t seq, uint32_t arg)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
    if (m == NULL)
        die("mbuf pool exhausted");
    frame_fill(p, m, o->overhead, type, seq, arg, NULL, 0);
    if (tx_all(p, &m, 1) != 1)
        tx_failed(p);
}

/* Send a control frame and wait for its answer (type `want`, same seq),
 * repeating it every RAW_RESEND_MS; false after timeout_ms. */
static bool request(const struct raw_opts *o, const struct raw_port *p, uint16_t type, uint32_t seq,
                    uint32_t arg, uint16_t want, struct raw_hdr *reply, uint64_t timeout_ms)
{
    uint64_t now = rte_rdtsc(), deadline = now + ms_ticks(p, timeout_ms);
    uint64_t resend = 0;
    while (now < deadline) {
        if (now >= resend) {
            send_ctl(o, p, type, seq, arg);
            resend = now + ms_ticks(p, RAW_RESEND_MS);
        }
        struct rte_mbuf *rx[RAW_BURST];
        uint16_t n = rte_eth_rx_burst(p->id, 0, rx, RAW_BURST);
        bool got = false;
        for (uint16_t i = 0; i < n; i++) {
            struct raw_hdr h;
            if (!got && frame_parse(rx[i], &h) && h.type == want && h.seq == seq) {
                *reply = h;
                got = true;
            }
            rte_pktmbuf_free(rx[i]);
        }
        if (got)
            return true;
        now = rte_rdtsc();
    }
    return false;
}

/* ---- client ------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Wait for the PONG of `seq`; its round trip in ticks from t0, or 0 when
 * none came within RAW_PONG_MS. */
static uint64_t wait_pong(const struct raw_opts *o, const struct raw_port *p, uint32_t seq,
                          uint64_t t0, uint8_t *rxbuf, uint32_t len, uint32_t *stray)
{
    uint64_t limit = ms_ticks(p, RAW_PONG_MS);
    for (;;) {
        struct rte_mbuf *rx[RAW_BURST];
        uint16_t n = rte_eth_rx_burst(p->id, 0, rx, RAW_BURST);
        uint64_t t1 = 0;
        for (uint16_t i = 0; i < n; i++) {
            struct raw_hdr h;
            if (t1 == 0 && frame_parse(rx[i], &h) && h.type == RAW_PONG && h.seq == seq &&
                rte_pktmbuf_pkt_len(rx[i]) >= RTE_ETHER_HDR_LEN + o->overhead + len) {
                /* deliver the payload, as a receiver must */
                const void *d =
                    rte_pktmbuf_read(rx[i], RTE_ETHER_HDR_LEN + o->overhead, len, rxbuf);
                if (d != rxbuf && len != 0)
                    memcpy(rxbuf, d, len);
                t1 = rte_rdtsc();
            } else {
                (*stray)++;
            }
            rte_pktmbuf_free(rx[i]);
        }
        if (t1 != 0)
            return t1 - t0;
        if (rte_rdtsc() - t0 > limit)
            return 0;
    }
}

/* The first pass over memif's shared rings page-faults in both processes
 * (here ~25 us on every other frame, 4 KiB pages of 2 KiB slots, for the
 * first 1024 frames each way), and so do fresh mbufs: before measuring,
 * RAW_PRIME frames of the largest payload are echoed, RAW_BURST at a time. */
static void prime(const struct raw_opts *o, const struct raw_port *p, uint32_t *seq,
                  const uint8_t *txbuf, uint32_t len)
{
    uint32_t lost = 0;
    for (uint32_t r = 0; r < RAW_PRIME / RAW_BURST; r++) {
        struct rte_mbuf *m[RAW_BURST];
        uint32_t first = *seq + 1, got = 0;
        if (rte_pktmbuf_alloc_bulk(p->pool, m, RAW_BURST) != 0)
            die("mbuf pool exhausted");
        for (uint32_t i = 0; i < RAW_BURST; i++)
            frame_fill(p, m[i], o->overhead, RAW_PING, ++*seq, 0, txbuf, len);
        if (tx_all(p, m, RAW_BURST) != RAW_BURST)
            tx_failed(p);
        uint64_t t0 = rte_rdtsc();
        while (got < RAW_BURST && rte_rdtsc() - t0 < ms_ticks(p, RAW_PONG_MS)) {
            struct rte_mbuf *rx[RAW_BURST];
            uint16_t n = rte_eth_rx_burst(p->id, 0, rx, RAW_BURST);
            for (uint16_t i = 0; i < n; i++) {
                struct raw_hdr h;
                if (frame_parse(rx[i], &h) && h.type == RAW_PONG && h.seq - first < RAW_BURST)
                    got++;
                rte_pktmbuf_free(rx[i]);
            }
        }
        lost += RAW_BURST - got;
    }
    if (lost > RAW_PRIME / 2)
        die("priming: %" PRIu32 " of %d frames not echoed", lost, RAW_PRIME);
}

static void latency_one(const struct raw_opts *o, const struct raw_port *p, uint32_t size,
                        uint32_t *seq, uint64_t *rtt, const uint8_t *txbuf, uint8_t *rxbuf,
                        struct raw_lat *r)
{
    memset(r, 0, sizeof(*r));
    r->size = size;
    r->frame = RTE_ETHER_HDR_LEN + o->overhead + size;
    uint64_t total = (uint64_t)o->warmup + o->iters, stall_start = 0;
    for (uint64_t i = 0; i < total; i++) {
        uint32_t s = ++*seq;
        uint64_t t0 = rte_rdtsc();
        struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
        if (m == NULL)
            die("mbuf pool exhausted");
        frame_fill(p, m, o->overhead, RAW_PING, s, 0, txbuf, size);
        if (tx_all(p, &m, 1) != 1)
            tx_failed(p);
        uint64_t t = wait_pong(o, p, s, t0, rxbuf, size, &r->stray);
        if (t == 0) {
            r->lost++;
            if (stall_start == 0)
                stall_start = t0;
            else if (rte_rdtsc() - stall_start > ms_ticks(p, RAW_STALL_S * 1000ull))
                die("size %" PRIu32 ": no pong from the server for %d s (%" PRIu32 " pings lost)",
                    size, RAW_STALL_S, r->lost);
            continue;
        }
        stall_start = 0;
        if (i >= o->warmup)
            rtt[r->samples++] = t;
    }
    if (r->samples == 0)
        die("size %" PRIu32 ": no round trip completed", size);
    double sum = 0;
    for (uint32_t i = 0; i < r->samples; i++)
        sum += (double)rtt[i];
    qsort(rtt, r->samples, sizeof(*rtt), cmp_u64);
    double med = ((double)rtt[(r->samples - 1) / 2] + (double)rtt[r->samples / 2]) / 2;
    double us_per_tick = 1e6 / (double)p->hz;
    r->mean_us = sum / r->samples / 2 * us_per_tick;
    r->median_us = med / 2 * us_per_tick;
    r->min_us = (double)rtt[0] / 2 * us_per_tick;
    r->p99_us = (double)rtt[(uint64_t)(r->samples - 1) * 99 / 100] / 2 * us_per_tick;
    r->max_us = (double)rtt[r->samples - 1] / 2 * us_per_tick;
}

/* Stream o->bw_frames frames of `payload` bytes in bursts of RAW_BURST. */
static void bandwidth(const struct raw_opts *o, const struct raw_port *p, uint32_t run,
                      const uint8_t *txbuf, struct raw_bw *b)
{
    memset(b, 0, sizeof(*b));
    b->payload = p->mtu - o->overhead;
    b->frame = p->max_frame;
    struct raw_hdr reply;
    if (!request(o, p, RAW_BW_START, run, o->bw_frames, RAW_BW_START_ACK, &reply,
                 RAW_STALL_S * 1000ull))
        die("bandwidth: the server did not answer the start of the stream in %d s", RAW_STALL_S);
    uint64_t t0 = rte_rdtsc();
    while (b->sent < o->bw_frames) {
        struct rte_mbuf *m[RAW_BURST];
        uint32_t left = o->bw_frames - b->sent;
        uint16_t k = (uint16_t)(left < RAW_BURST ? left : RAW_BURST);
        if (rte_pktmbuf_alloc_bulk(p->pool, m, k) != 0)
            die("mbuf pool exhausted");
        for (uint16_t i = 0; i < k; i++)
            frame_fill(p, m[i], o->overhead, RAW_BW_DATA, b->sent + i, run, txbuf, b->payload);
        uint16_t sent = tx_all(p, m, k);
        b->sent += sent;
        if (sent < k && !link_up(p))
            tx_failed(p);
        if (sent < k) {
            warn("bandwidth: transmit ring full for %d s: stream cut at %" PRIu32 " frames",
                 RAW_STALL_S, b->sent);
            break;
        }
    }
    if (!request(o, p, RAW_BW_END, run, b->sent, RAW_BW_REPORT, &reply, RAW_STALL_S * 1000ull))
        die("bandwidth: no report from the server %d s after the stream", RAW_STALL_S);
    uint64_t t1 = rte_rdtsc();
    b->seen = reply.arg;
    b->seconds = (double)(t1 - t0) / (double)p->hz;
    b->rx_seconds = (double)reply.val / 1e9;
    /* the receiver's clock, first to last frame seen: not inflated by a
     * repeated BW_END when the first was lost; the client's from the first
     * send to the report when fewer than 2 frames arrived */
    double frames = b->seen, secs = b->seconds;
    if (b->seen >= 2 && b->rx_seconds > 0) {
        frames = b->seen - 1;
        secs = b->rx_seconds;
    }
    b->mbps = frames * b->payload / secs / 1e6;
    b->mpps = frames / secs / 1e6;
}

static void write_json(const struct raw_opts *o, const struct raw_port *p,
                       const struct raw_lat *lat, uint32_t nlat, const struct raw_bw *bw)
{
    FILE *f = fopen(o->json, "w");
    if (f == NULL)
        die("%s: %s", o->json, strerror(errno));
    fprintf(f, "{\n  \"benchmark\": \"dpdk_raw\",\n  \"port\": \"%s\",\n", p->name);
    fprintf(f, "  \"mtu\": %" PRIu32 ",\n  \"overhead\": %" PRIu32 ",\n", p->mtu, o->overhead);
    fprintf(f, "  \"iterations\": %" PRIu32 ",\n  \"warmup\": %" PRIu32 ",\n", o->iters, o->warmup);
    fprintf(f, "  \"latency\": [");
    for (uint32_t i = 0; i < nlat; i++)
        fprintf(f,
                "%s\n    {\"size\": %" PRIu32 ", \"frame\": %" PRIu32 ", \"lat_mean_us\": "
                "%.4f, \"lat_median_us\": %.4f, \"lat_min_us\": %.4f, \"lat_p99_us\": "
                "%.4f, \"lat_max_us\": %.4f, \"samples\": %" PRIu32 ", \"lost\": %" PRIu32 "}",
                i ? "," : "", lat[i].size, lat[i].frame, lat[i].mean_us, lat[i].median_us,
                lat[i].min_us, lat[i].p99_us, lat[i].max_us, lat[i].samples, lat[i].lost);
    fprintf(f, "\n  ]");
    if (bw != NULL)
        fprintf(f,
                ",\n  \"bandwidth\": {\"payload\": %" PRIu32 ", \"frame\": %" PRIu32
                ", \"frames_sent\": %" PRIu32 ", \"frames_seen\": %" PRIu32
                ", \"seconds\": %.6f, \"rx_seconds\": %.6f, \"MB_per_s\": %.2f"
                ", \"Mpps\": %.4f}",
                bw->payload, bw->frame, bw->sent, bw->seen, bw->seconds, bw->rx_seconds, bw->mbps,
                bw->mpps);
    fprintf(f, "\n}\n");
    if (fclose(f) != 0)
        die("%s: %s", o->json, strerror(errno));
}

static int run_client(const struct raw_opts *o, const struct raw_port *p)
{
    uint32_t seq = 0;
    struct raw_hdr reply;
    if (!request(o, p, RAW_HELLO, ++seq, 0, RAW_HELLO_ACK, &reply, o->timeout_s * 1000ull))
        die("%s: link up but no answer from the server in %u s", p->name, o->timeout_s);
    uint32_t cap = p->mtu - o->overhead; /* the largest payload in a frame */
    if (o->min_size > cap)
        die("--sizes: %" PRIu32 " bytes + %" PRIu32 " overhead exceed the MTU %" PRIu32,
            o->min_size, o->overhead, p->mtu);
    struct raw_lat lat[40];
    uint32_t nlat = 0;
    uint8_t *txbuf = malloc(cap), *rxbuf = malloc(cap);
    uint64_t *rtt = malloc(sizeof(*rtt) * o->iters);
    if (txbuf == NULL || rxbuf == NULL || rtt == NULL)
        die("out of memory");
    for (uint32_t i = 0; i < cap; i++)
        txbuf[i] = (uint8_t)(i * 7 + 1);
    prime(o, p, &seq, txbuf, cap);
    printf("# dpdk_raw: %s, MTU %" PRIu32 ", overhead %" PRIu32 " B, %" PRIu32 " iters + %" PRIu32
           " warmup, one-way = RTT/2\n",
           p->name, p->mtu, o->overhead, o->iters, o->warmup);
    printf("# size  lat_mean_us  lat_median_us\n");
    fflush(stdout);
    for (uint32_t s = o->min_size; s <= o->max_size && nlat < RTE_DIM(lat); s = s ? s * 2 : 1) {
        if (s > cap) {
            printf("# sizes above %" PRIu32 " do not fit the MTU %" PRIu32 " with %" PRIu32
                   " bytes overhead\n",
                   cap, p->mtu, o->overhead);
            break;
        }
        struct raw_lat *r = &lat[nlat++];
        latency_one(o, p, s, &seq, rtt, txbuf, rxbuf, r);
        printf("%6" PRIu32 "  %11.3f  %13.3f\n", s, r->mean_us, r->median_us);
        if (r->lost != 0)
            printf("# size %" PRIu32 ": %" PRIu32 " pings lost, %" PRIu32 " stray frames\n", s,
                   r->lost, r->stray);
        fflush(stdout);
    }
    struct raw_bw bw;
    if (o->bw_frames != 0) {
        bandwidth(o, p, ++seq, txbuf, &bw);
        printf("# bw: payload %" PRIu32 " B (frame %" PRIu32 " B) x %" PRIu32 " sent, %" PRIu32
               " seen by the server in %.4f s: %.1f MB/s, %.3f Mpps\n",
               bw.payload, bw.frame, bw.sent, bw.seen, bw.rx_seconds, bw.mbps, bw.mpps);
    }
    if (o->json != NULL)
        write_json(o, p, lat, nlat, o->bw_frames ? &bw : NULL);
    if (!request(o, p, RAW_DONE, ++seq, 0, RAW_DONE_ACK, &reply, 1000))
        warn("the server did not acknowledge DONE in 1 s");
    free(txbuf);
    free(rxbuf);
    free(rtt);
    return 0;
}

/* ---- server ------------------------------------------------------------- */

struct raw_server {
    uint64_t echoed, stray;
    uint32_t run, seen;
    uint64_t first, last; /* tsc of the run's first and last frame */
    bool hello, done;
    uint64_t done_at;
};

/* Handle one frame; true when m is to be sent back (rewritten in place). */
static bool serve_one(const struct raw_port *p, struct raw_server *s, struct rte_mbuf *m,
                      uint64_t now)
{
    struct raw_hdr h;
    if (!frame_parse(m, &h)) {
        s->stray++;
        return false;
    }
    struct raw_hdr *w = frame_hdr(m);
    switch (h.type) {
    case RAW_PING:
        w->type = RAW_PONG;
        w->arg = (uint32_t)++s->echoed;
        return true;
    case RAW_BW_DATA:
        if (h.arg == s->run) {
            if (s->seen++ == 0)
                s->first = now;
            s->last = now;
        }
        return false;
    case RAW_HELLO:
        s->hello = true;
        unlink_socket(); /* the client is connected */
        w->type = RAW_HELLO_ACK;
        return true;
    case RAW_BW_START:
        if (h.seq != s->run) {
            s->run = h.seq;
            s->seen = 0;
        }
        w->type = RAW_BW_START_ACK;
        return true;
    case RAW_BW_END: {
        uint64_t ns = s->seen > 1 ? (s->last - s->first) * 1000000000ull / p->hz : 0;
        w->type = RAW_BW_REPORT;
        w->arg = h.seq == s->run ? s->seen : 0;
        memcpy(&w->val, &ns, sizeof(ns));
        return true;
    }
    case RAW_DONE:
        if (!s->done)
            s->done_at = now;
        s->done = true;
        w->type = RAW_DONE_ACK;
        return true;
    default:
        s->stray++;
        return false;
    }
}

static int run_server(const struct raw_opts *o, const struct raw_port *p)
{
    struct raw_server s;
    memset(&s, 0, sizeof(s));
    uint64_t last_rx = rte_rdtsc(), last_link = last_rx;
    uint64_t idle = ms_ticks(p, o->timeout_s * 1000ull);
    for (;;) {
        struct rte_mbuf *rx[RAW_BURST], *tx[RAW_BURST];
        uint16_t n = rte_eth_rx_burst(p->id, 0, rx, RAW_BURST), nt = 0;
        uint64_t now = rte_rdtsc();
        for (uint16_t i = 0; i < n; i++) {
            if (serve_one(p, &s, rx[i], now))
                tx[nt++] = rx[i];
            else
                rte_pktmbuf_free(rx[i]);
        }
        if (nt != 0 && tx_all(p, tx, nt) != nt)
            tx_failed(p);
        if (n != 0) {
            last_rx = now;
            continue;
        }
        if (s.done && now - s.done_at > ms_ticks(p, RAW_LINGER_MS))
            break;
        if (!s.done && now - last_rx > idle)
            die("no frame from the client for %u s (%s)", o->timeout_s,
                s.hello ? "it stopped before DONE" : "no HELLO came");
        /* before HELLO, a memif client may still restart (link down, up) */
        if (s.hello && now - last_link > ms_ticks(p, 1)) {
            last_link = now;
            if (!link_up(p) && s.done)
                break; /* the client has gone, as it should */
            if (!link_up(p))
                die("%s: link down before DONE (the client has gone?)", p->name);
        }
    }
    printf("dpdk_raw server: done on %s: %" PRIu64 " pings echoed, %" PRIu32
           " stream frames seen, %" PRIu64 " stray frames\n",
           p->name, s.echoed, s.seen, s.stray);
    if (o->json != NULL) {
        FILE *f = fopen(o->json, "w");
        if (f == NULL)
            die("%s: %s", o->json, strerror(errno));
        fprintf(f,
                "{\"benchmark\": \"dpdk_raw\", \"role\": \"server\", \"port\": \"%s\", "
                "\"echoed\": %" PRIu64 ", \"stream_seen\": %" PRIu32 ", \"stray\": %" PRIu64 "}\n",
                p->name, s.echoed, s.seen, s.stray);
        if (fclose(f) != 0)
            die("%s: %s", o->json, strerror(errno));
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct raw_opts o;
    parse_args(argc, argv, &o);
    atexit(unlink_socket);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    eal_start(&o);
    struct raw_port p;
    memset(&p, 0, sizeof(p));
    port_create(&o, &p);
    port_configure(&o, &p);
    port_start(&o, &p);
    int rc = o.server ? run_server(&o, &p) : run_client(&o, &p);
    fflush(stdout);
    /* no rte_eth_dev_close, no rte_eal_cleanup: see the top */
    return rc;
}
