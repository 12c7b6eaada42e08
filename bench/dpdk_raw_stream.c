/*
 * dpdk_raw: the client's bandwidth phase (a stream of MTU-sized frames).
 */
#include "bench/dpdk_raw_internal.h"

void raw_stream(const struct raw_opts *o, const struct raw_port *p, uint32_t run,
                const uint8_t *txbuf, struct raw_bw *b)
{
    memset(b, 0, sizeof(*b));
    b->payload = p->mtu - o->overhead;
    b->frame = p->max_frame;
    struct raw_hdr reply;
    if (!raw_request(o, p, RAW_BW_START, run, o->bw_frames, RAW_BW_START_ACK, &reply,
                     RAW_STALL_S * 1000ull))
        raw_die("bandwidth: the server did not answer the start of the stream in %d s",
                RAW_STALL_S);
    uint64_t t0 = rte_rdtsc();
    while (b->sent < o->bw_frames) {
        struct rte_mbuf *m[RAW_BURST];
        uint32_t left = o->bw_frames - b->sent;
        uint16_t k = (uint16_t)(left < RAW_BURST ? left : RAW_BURST);
        if (rte_pktmbuf_alloc_bulk(p->pool, m, k) != 0)
            raw_die("mbuf pool exhausted");
        for (uint16_t i = 0; i < k; i++)
            raw_frame_fill(p, m[i], o->overhead, RAW_BW_DATA, b->sent + i, run, txbuf, b->payload);
        uint16_t sent = raw_tx_all(p, m, k);
        b->sent += sent;
        if (sent < k && !raw_link_up(p))
            raw_tx_failed(p);
        if (sent < k) {
            raw_warn("bandwidth: transmit ring full for %d s: stream cut at %" PRIu32 " frames",
                     RAW_STALL_S, b->sent);
            break;
        }
    }
    if (!raw_request(o, p, RAW_BW_END, run, b->sent, RAW_BW_REPORT, &reply, RAW_STALL_S * 1000ull))
        raw_die("bandwidth: no report from the server %d s after the stream", RAW_STALL_S);
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
