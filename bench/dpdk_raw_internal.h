/*
 * dpdk_raw: what its files share (bench/dpdk_raw.c says what it measures
 * and how it runs).  The program is split by phase:
 *   dpdk_raw.c           diagnostics, the client's sequence of phases, main
 *   dpdk_raw_setup.c     options, EAL, the port (created, configured, link up)
 *   dpdk_raw_frame.c     frames: build, parse, send, control requests
 *   dpdk_raw_pingpong.c  priming and the latency ping-pong
 *   dpdk_raw_stream.c    the bandwidth stream
 *   dpdk_raw_report.c    the JSON results of client and server
 *   dpdk_raw_server.c    the server: echo, count, report
 */
#ifndef TERN_DPDK_RAW_INTERNAL_H
#define TERN_DPDK_RAW_INTERNAL_H

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

extern const char *g_role; /* "server" or "client" once known */
extern char g_sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* a memif server's */

/* ---- dpdk_raw.c: diagnostics ---------------------------------------------- */

/* Print "dpdk_raw ROLE: ..." on stderr and exit 1 (removing the socket). */
void raw_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void raw_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Remove the memif server's socket file, once. */
void raw_unlink_socket(void);

/* ---- dpdk_raw_setup.c: options, EAL, the port ---------------------------- */

void raw_parse_args(int argc, char **argv, struct raw_opts *o);
void raw_eal_start(const struct raw_opts *o);
void raw_port_create(const struct raw_opts *o, struct raw_port *p);
void raw_port_configure(const struct raw_opts *o, struct raw_port *p);
/* Start the port and wait for its link, restarting a memif client. */
void raw_port_start(const struct raw_opts *o, struct raw_port *p);
bool raw_link_up(const struct raw_port *p);

static inline uint64_t raw_ms_ticks(const struct raw_port *p, uint64_t ms)
{
    return p->hz / 1000 * ms;
}

/* ---- dpdk_raw_frame.c: frames ----------------------------------------------- */

struct raw_hdr *raw_frame_hdr(struct rte_mbuf *m);
void raw_frame_fill(const struct raw_port *p, struct rte_mbuf *m, uint32_t overhead, uint16_t type,
                    uint32_t seq, uint32_t arg, const uint8_t *payload, uint32_t len);
bool raw_frame_parse(struct rte_mbuf *m, struct raw_hdr *h);
uint16_t raw_tx_all(const struct raw_port *p, struct rte_mbuf **m, uint16_t n);
/* Die saying why nothing could be sent. */
void raw_tx_failed(const struct raw_port *p) __attribute__((noreturn));
bool raw_request(const struct raw_opts *o, const struct raw_port *p, uint16_t type, uint32_t seq,
                 uint32_t arg, uint16_t want, struct raw_hdr *reply, uint64_t timeout_ms);

/* ---- dpdk_raw_pingpong.c, dpdk_raw_stream.c: the client's measurements --- */

void raw_prime(const struct raw_opts *o, const struct raw_port *p, uint32_t *seq,
               const uint8_t *txbuf, uint32_t len);
/* One size: o->warmup + o->iters round trips (rtt: room for o->iters). */
void raw_latency(const struct raw_opts *o, const struct raw_port *p, uint32_t size, uint32_t *seq,
                 uint64_t *rtt, const uint8_t *txbuf, uint8_t *rxbuf, struct raw_lat *r);
void raw_stream(const struct raw_opts *o, const struct raw_port *p, uint32_t run,
                const uint8_t *txbuf, struct raw_bw *b);

/* ---- dpdk_raw_report.c ------------------------------------------------------ */

void raw_report_json(const struct raw_opts *o, const struct raw_port *p, const struct raw_lat *lat,
                     uint32_t nlat, const struct raw_bw *bw);
void raw_report_server_json(const struct raw_opts *o, const struct raw_port *p, uint64_t echoed,
                            uint32_t seen, uint64_t stray);

/* ---- dpdk_raw_server.c ------------------------------------------------------ */

int raw_run_server(const struct raw_opts *o, const struct raw_port *p);

#endif
