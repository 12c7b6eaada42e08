/*
 * dpdk_raw: options, EAL and the port, up to a link that is up.
 */
#include "bench/dpdk_raw_internal.h"

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
        raw_die("%s %s: want an integer in [%" PRIu32 ", %" PRIu32 "]", opt, s, lo, hi);
    return (uint32_t)v;
}

static void parse_sizes(struct raw_opts *o, const char *s)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%s", s);
    char *colon = strchr(buf, ':');
    if (colon == NULL)
        raw_die("--sizes %s: want MIN:MAX", s);
    *colon = '\0';
    o->min_size = parse_u32("--sizes", buf, 0, 1u << 20);
    o->max_size = parse_u32("--sizes", colon + 1, 0, 1u << 20);
    if (o->max_size < o->min_size)
        raw_die("--sizes %s: MAX below MIN", s);
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

void raw_parse_args(int argc, char **argv, struct raw_opts *o)
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
                raw_die("--vdev: longer than %zu bytes", sizeof(o->vdev) - 1);
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
        raw_die("--role server or --role client is required");
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

void raw_eal_start(const struct raw_opts *o)
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
        raw_die("more than %d EAL arguments after --", RAW_MAX_EAL - argc);
    for (int i = 0; i < o->eal_argc; i++)
        argv[argc++] = o->eal_argv[i];
    argv[argc] = NULL;
    char line[1024];
    size_t n = 0;
    for (int i = 0; i < argc && n < sizeof(line); i++)
        n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s", i ? " " : "", argv[i]);
    if (rte_eal_init(argc, argv) < 0)
        raw_die("rte_eal_init failed: %s (arguments: %s)", rte_strerror(rte_errno), line);
    /* EAL leaves an empty /var/run/dpdk/<prefix> even with --no-shconf */
    const char *dir = rte_eal_get_runtime_dir();
    if (dir != NULL && dir[0] != '\0' && rmdir(dir) != 0 && errno != ENOENT)
        raw_warn("runtime directory %s stays: %s", dir, strerror(errno));
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
        raw_die("%s: another memif server listens there", path);
    if (err == ECONNREFUSED) {
        raw_warn("removing the stale socket %s", path);
        unlink(path);
    }
}

void raw_port_create(const struct raw_opts *o, struct raw_port *p)
{
    const char *comma = strchr(o->vdev, ',');
    size_t nl = comma ? (size_t)(comma - o->vdev) : strlen(o->vdev);
    if (nl == 0 || nl >= sizeof(p->name))
        raw_die("--vdev %s: bad device name", o->vdev);
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
        raw_die("creating the port %s failed: %s (is the PMD installed, are the arguments "
                "right?)",
                o->vdev, rte_strerror(-rc));
    if (path_socket && strcmp(role, "server") == 0)
        snprintf(g_sock_path, sizeof(g_sock_path), "%s", sock);
    if (rte_eth_dev_get_port_by_name(p->name, &p->id) != 0)
        raw_die("no ethdev port named %s after creating it", p->name);
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

void raw_port_configure(const struct raw_opts *o, struct raw_port *p)
{
    struct rte_eth_dev_info info;
    int rc = rte_eth_dev_info_get(p->id, &info);
    if (rc != 0)
        raw_die("%s: rte_eth_dev_info_get: %s", p->name, rte_strerror(-rc));
    p->mtu = port_mtu(o, &info);
    if (p->mtu < o->overhead)
        raw_die("%s: MTU %" PRIu32 " is below the overhead of %" PRIu32 " bytes", p->name, p->mtu,
                o->overhead);
    p->max_frame = p->mtu + RTE_ETHER_HDR_LEN;
    uint32_t room = RTE_PKTMBUF_HEADROOM + p->max_frame;
    if (room < RTE_MBUF_DEFAULT_BUF_SIZE)
        room = RTE_MBUF_DEFAULT_BUF_SIZE;
    p->pool =
        rte_pktmbuf_pool_create("dpdk_raw", RAW_POOL, 256, 0, (uint16_t)room, (int)rte_socket_id());
    if (p->pool == NULL)
        raw_die("mbuf pool of %d x %" PRIu32 " bytes: %s", RAW_POOL, room, rte_strerror(rte_errno));
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof(conf));
    conf.rxmode.mtu = p->mtu;
    rc = rte_eth_dev_configure(p->id, 1, 1, &conf);
    if (rc != 0)
        raw_die("%s: rte_eth_dev_configure (MTU %" PRIu32 "): %s", p->name, p->mtu,
                rte_strerror(-rc));
    uint16_t nrx = RAW_DESC, ntx = RAW_DESC;
    rte_eth_dev_adjust_nb_rx_tx_desc(p->id, &nrx, &ntx);
    int sock = rte_eth_dev_socket_id(p->id);
    if (sock < 0)
        sock = (int)rte_socket_id();
    rc = rte_eth_rx_queue_setup(p->id, 0, nrx, (unsigned)sock, NULL, p->pool);
    if (rc == 0)
        rc = rte_eth_tx_queue_setup(p->id, 0, ntx, (unsigned)sock, NULL);
    if (rc != 0)
        raw_die("%s: queue setup (%u rx, %u tx descriptors): %s", p->name, nrx, ntx,
                rte_strerror(-rc));
    memset(&p->eth.dst_addr, 0xff, sizeof(p->eth.dst_addr));
    rte_eth_macaddr_get(p->id, &p->eth.src_addr);
    p->eth.ether_type = rte_cpu_to_be_16(RAW_ETHERTYPE);
    p->hz = rte_get_tsc_hz();
}

bool raw_link_up(const struct raw_port *p)
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
void raw_port_start(const struct raw_opts *o, struct raw_port *p)
{
    uint64_t t0 = rte_rdtsc(), deadline = t0 + raw_ms_ticks(p, o->timeout_s * 1000ull);
    uint64_t started_at = 0;
    bool started = false;
    int last_rc = 0;
    for (;;) {
        uint64_t now = rte_rdtsc();
        if (started && raw_link_up(p))
            return;
        if (now > deadline)
            break;
        if (started && p->memif_client && now - started_at > raw_ms_ticks(p, RAW_RESTART_MS)) {
            rte_eth_dev_stop(p->id);
            started = false;
        }
        if (!started && now - started_at > raw_ms_ticks(p, RAW_RESTART_MS)) {
            started_at = now;
            last_rc = quiet_start(p);
            started = last_rc == 0;
            if (!started && !p->memif_client)
                raw_die("%s: rte_eth_dev_start: %s", p->name, rte_strerror(-last_rc));
        }
        rte_delay_us_sleep(1000);
    }
    if (!started && p->memif_client)
        raw_die("%s: link not up after %u s (the server's socket cannot be dialled: is the "
                "server running, with the same socket=?)",
                p->name, o->timeout_s);
    if (!started)
        raw_die("%s: link not up after %u s (rte_eth_dev_start: %s)", p->name, o->timeout_s,
                rte_strerror(-last_rc));
    raw_die("%s: link not up after %u s%s", p->name, o->timeout_s,
            o->server ? " (no client connected)" : "");
}
