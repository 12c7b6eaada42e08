/*
 * dpdk_raw: frames (build, parse, send) and control requests.
 */
#include "bench/dpdk_raw_internal.h"

struct raw_hdr *raw_frame_hdr(struct rte_mbuf *m)
{
    return rte_pktmbuf_mtod_offset(m, struct raw_hdr *, RTE_ETHER_HDR_LEN);
}

/* Fill m as a frame of `overhead + len` bytes past the Ethernet header. */
void raw_frame_fill(const struct raw_port *p, struct rte_mbuf *m, uint32_t overhead, uint16_t type,
                    uint32_t seq, uint32_t arg, const uint8_t *payload, uint32_t len)
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
bool raw_frame_parse(struct rte_mbuf *m, struct raw_hdr *h)
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
uint16_t raw_tx_all(const struct raw_port *p, struct rte_mbuf **m, uint16_t n)
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
        } else if (now - last > raw_ms_ticks(p, RAW_STALL_S * 1000ull)) {
            break;
        } else if (now - checked > raw_ms_ticks(p, 10)) {
            checked = now;
            if (!raw_link_up(p))
                break;
        }
    }
    if (sent < n)
        rte_pktmbuf_free_bulk(m + sent, (unsigned)(n - sent));
    return sent;
}

void raw_tx_failed(const struct raw_port *p)
{
    if (!raw_link_up(p))
        raw_die("%s: link down (the %s has gone?)", p->name,
                g_role[0] == 's' ? "client" : "server");
    raw_die("%s: cannot send for %d s (transmit ring full)", p->name, RAW_STALL_S);
}

static void send_ctl(const struct raw_opts *o, const struct raw_port *p, uint16_t type,
                     uint32_t seq, uint32_t arg)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
    if (m == NULL)
        raw_die("mbuf pool exhausted");
    raw_frame_fill(p, m, o->overhead, type, seq, arg, NULL, 0);
    if (raw_tx_all(p, &m, 1) != 1)
        raw_tx_failed(p);
}

/* Send a control frame and wait for its answer (type `want`, same seq),
 * repeating it every RAW_RESEND_MS; false after timeout_ms. */
bool raw_request(const struct raw_opts *o, const struct raw_port *p, uint16_t type, uint32_t seq,
                 uint32_t arg, uint16_t want, struct raw_hdr *reply, uint64_t timeout_ms)
{
    uint64_t now = rte_rdtsc(), deadline = now + raw_ms_ticks(p, timeout_ms);
    uint64_t resend = 0;
    while (now < deadline) {
        if (now >= resend) {
            send_ctl(o, p, type, seq, arg);
            resend = now + raw_ms_ticks(p, RAW_RESEND_MS);
        }
        struct rte_mbuf *rx[RAW_BURST];
        uint16_t n = rte_eth_rx_burst(p->id, 0, rx, RAW_BURST);
        bool got = false;
        for (uint16_t i = 0; i < n; i++) {
            struct raw_hdr h;
            if (!got && raw_frame_parse(rx[i], &h) && h.type == want && h.seq == seq) {
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
