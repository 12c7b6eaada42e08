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
 *
 * Files, by phase: dpdk_raw_setup.c (options, EAL, port), dpdk_raw_frame.c,
 * dpdk_raw_pingpong.c (latency), dpdk_raw_stream.c (bandwidth),
 * dpdk_raw_report.c (JSON), dpdk_raw_server.c; this one runs them.
 */
#include "bench/dpdk_raw_internal.h"

const char *g_role; /* "server" or "client" once known */
char g_sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];

/* ---- diagnostics ---------------------------------------------------------- */

void raw_unlink_socket(void)
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

void raw_die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "dpdk_raw%s%s: ", g_role ? " " : "", g_role ? g_role : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1); /* runs raw_unlink_socket; ports are left to the exit */
}

void raw_warn(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "dpdk_raw%s%s: ", g_role ? " " : "", g_role ? g_role : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---- client: the phases in order ----------------------------------------- */

static int run_client(const struct raw_opts *o, const struct raw_port *p)
{
    uint32_t seq = 0;
    struct raw_hdr reply;
    if (!raw_request(o, p, RAW_HELLO, ++seq, 0, RAW_HELLO_ACK, &reply, o->timeout_s * 1000ull))
        raw_die("%s: link up but no answer from the server in %u s", p->name, o->timeout_s);
    uint32_t cap = p->mtu - o->overhead; /* the largest payload in a frame */
    if (o->min_size > cap)
        raw_die("--sizes: %" PRIu32 " bytes + %" PRIu32 " overhead exceed the MTU %" PRIu32,
                o->min_size, o->overhead, p->mtu);
    struct raw_lat lat[40];
    uint32_t nlat = 0;
    uint8_t *txbuf = malloc(cap), *rxbuf = malloc(cap);
    uint64_t *rtt = malloc(sizeof(*rtt) * o->iters);
    if (txbuf == NULL || rxbuf == NULL || rtt == NULL)
        raw_die("out of memory");
    for (uint32_t i = 0; i < cap; i++)
        txbuf[i] = (uint8_t)(i * 7 + 1);
    raw_prime(o, p, &seq, txbuf, cap);
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
        raw_latency(o, p, s, &seq, rtt, txbuf, rxbuf, r);
        printf("%6" PRIu32 "  %11.3f  %13.3f\n", s, r->mean_us, r->median_us);
        if (r->lost != 0)
            printf("# size %" PRIu32 ": %" PRIu32 " pings lost, %" PRIu32 " stray frames\n", s,
                   r->lost, r->stray);
        fflush(stdout);
    }
    struct raw_bw bw;
    if (o->bw_frames != 0) {
        raw_stream(o, p, ++seq, txbuf, &bw);
        printf("# bw: payload %" PRIu32 " B (frame %" PRIu32 " B) x %" PRIu32 " sent, %" PRIu32
               " seen by the server in %.4f s: %.1f MB/s, %.3f Mpps\n",
               bw.payload, bw.frame, bw.sent, bw.seen, bw.rx_seconds, bw.mbps, bw.mpps);
    }
    if (o->json != NULL)
        raw_report_json(o, p, lat, nlat, o->bw_frames ? &bw : NULL);
    if (!raw_request(o, p, RAW_DONE, ++seq, 0, RAW_DONE_ACK, &reply, 1000))
        raw_warn("the server did not acknowledge DONE in 1 s");
    free(txbuf);
    free(rxbuf);
    free(rtt);
    return 0;
}

int main(int argc, char **argv)
{
    struct raw_opts o;
    raw_parse_args(argc, argv, &o);
    atexit(raw_unlink_socket);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    raw_eal_start(&o);
    struct raw_port p;
    memset(&p, 0, sizeof(p));
    raw_port_create(&o, &p);
    raw_port_configure(&o, &p);
    raw_port_start(&o, &p);
    int rc = o.server ? raw_run_server(&o, &p) : run_client(&o, &p);
    fflush(stdout);
    /* no rte_eth_dev_close, no rte_eal_cleanup: see the top */
    return rc;
}
