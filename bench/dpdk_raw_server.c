/*
 * dpdk_raw: the server (echoes pings, counts the stream, answers control frames).
 */
#include "bench/dpdk_raw_internal.h"

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
    if (!raw_frame_parse(m, &h)) {
        s->stray++;
        return false;
    }
    struct raw_hdr *w = raw_frame_hdr(m);
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
        raw_unlink_socket(); /* the client is connected */
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

int raw_run_server(const struct raw_opts *o, const struct raw_port *p)
{
    struct raw_server s;
    memset(&s, 0, sizeof(s));
    uint64_t last_rx = rte_rdtsc(), last_link = last_rx;
    uint64_t idle = raw_ms_ticks(p, o->timeout_s * 1000ull);
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
        if (nt != 0 && raw_tx_all(p, tx, nt) != nt)
            raw_tx_failed(p);
        if (n != 0) {
            last_rx = now;
            continue;
        }
        if (s.done && now - s.done_at > raw_ms_ticks(p, RAW_LINGER_MS))
            break;
        if (!s.done && now - last_rx > idle)
            raw_die("no frame from the client for %u s (%s)", o->timeout_s,
                    s.hello ? "it stopped before DONE" : "no HELLO came");
        /* before HELLO, a memif client may still restart (link down, up) */
        if (s.hello && now - last_link > raw_ms_ticks(p, 1)) {
            last_link = now;
            if (!raw_link_up(p) && s.done)
                break; /* the client has gone, as it should */
            if (!raw_link_up(p))
                raw_die("%s: link down before DONE (the client has gone?)", p->name);
        }
    }
    printf("dpdk_raw server: done on %s: %" PRIu64 " pings echoed, %" PRIu32
           " stream frames seen, %" PRIu64 " stray frames\n",
           p->name, s.echoed, s.seen, s.stray);
    if (o->json != NULL)
        raw_report_server_json(o, p, s.echoed, s.seen, s.stray);
    return 0;
}
