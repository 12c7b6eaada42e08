/*
 * dpdk_raw: the client's latency phase (priming, then the ping-pong per size).
 */
#include "bench/dpdk_raw_internal.h"

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
    uint64_t limit = raw_ms_ticks(p, RAW_PONG_MS);
    for (;;) {
        struct rte_mbuf *rx[RAW_BURST];
        uint16_t n = rte_eth_rx_burst(p->id, 0, rx, RAW_BURST);
        uint64_t t1 = 0;
        for (uint16_t i = 0; i < n; i++) {
            struct raw_hdr h;
            if (t1 == 0 && raw_frame_parse(rx[i], &h) && h.type == RAW_PONG && h.seq == seq &&
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
void raw_prime(const struct raw_opts *o, const struct raw_port *p, uint32_t *seq,
               const uint8_t *txbuf, uint32_t len)
{
    uint32_t lost = 0;
    for (uint32_t r = 0; r < RAW_PRIME / RAW_BURST; r++) {
        struct rte_mbuf *m[RAW_BURST];
        uint32_t first = *seq + 1, got = 0;
        if (rte_pktmbuf_alloc_bulk(p->pool, m, RAW_BURST) != 0)
            raw_die("mbuf pool exhausted");
        for (uint32_t i = 0; i < RAW_BURST; i++)
            raw_frame_fill(p, m[i], o->overhead, RAW_PING, ++*seq, 0, txbuf, len);
        if (raw_tx_all(p, m, RAW_BURST) != RAW_BURST)
            raw_tx_failed(p);
        uint64_t t0 = rte_rdtsc();
        while (got < RAW_BURST && rte_rdtsc() - t0 < raw_ms_ticks(p, RAW_PONG_MS)) {
            struct rte_mbuf *rx[RAW_BURST];
            uint16_t n = rte_eth_rx_burst(p->id, 0, rx, RAW_BURST);
            for (uint16_t i = 0; i < n; i++) {
                struct raw_hdr h;
                if (raw_frame_parse(rx[i], &h) && h.type == RAW_PONG && h.seq - first < RAW_BURST)
                    got++;
                rte_pktmbuf_free(rx[i]);
            }
        }
        lost += RAW_BURST - got;
    }
    if (lost > RAW_PRIME / 2)
        raw_die("priming: %" PRIu32 " of %d frames not echoed", lost, RAW_PRIME);
}

void raw_latency(const struct raw_opts *o, const struct raw_port *p, uint32_t size, uint32_t *seq,
                 uint64_t *rtt, const uint8_t *txbuf, uint8_t *rxbuf, struct raw_lat *r)
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
            raw_die("mbuf pool exhausted");
        raw_frame_fill(p, m, o->overhead, RAW_PING, s, 0, txbuf, size);
        if (raw_tx_all(p, &m, 1) != 1)
            raw_tx_failed(p);
        uint64_t t = wait_pong(o, p, s, t0, rxbuf, size, &r->stray);
        if (t == 0) {
            r->lost++;
            if (stall_start == 0)
                stall_start = t0;
            else if (rte_rdtsc() - stall_start > raw_ms_ticks(p, RAW_STALL_S * 1000ull))
                raw_die("size %" PRIu32 ": no pong from the server for %d s (%" PRIu32
                        " pings lost)",
                        size, RAW_STALL_S, r->lost);
            continue;
        }
        stall_start = 0;
        if (i >= o->warmup)
            rtt[r->samples++] = t;
    }
    if (r->samples == 0)
        raw_die("size %" PRIu32 ": no round trip completed", size);
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
