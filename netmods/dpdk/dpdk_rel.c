/*
 * dpdk netmod: frames, acknowledgements and retransmission (selective
 * repeat).  One sequence space per VC; see dpdk_internal.h for the shape.
 *
 * Sender.  Frames [snd_una, snd_nxt) sit in the window (slots, by seq %
 * window): a copy frame keeps its mbuf (one reference ours; each
 * transmission hands the port another), a slot without one (zero-copy
 * LMT) keeps where its payload is, and its type's handler builds each
 * transmission (tern_dpdk_handler_t.frame).  snd_high is the first
 * never transmitted (the port may refuse a burst: the rest waits).  An ack
 * releases every slot below it; SACK bits mark later ones received.  A
 * hole below frames that did arrive is sent again once frames sent a
 * reordering window after it arrived, or it has been out srtt + that
 * window (rack_retransmit); a tail left unacknowledged
 * for TERN_DPDK_PROBE_US has its last frame sent again (a loss probe: the
 * duplicate it makes gets an immediate ack whose SACK names the holes);
 * the oldest frame unacknowledged for rto is sent again and rto doubles up
 * to TERN_DPDK_RTO_MAX_MS (reset when the ack moves).  No ack progress for
 * TERN_DPDK_TIMEOUT_MS with data outstanding fails the VC.
 *
 * Retransmissions are built afresh (a copy of the kept frame with current
 * ack fields): the port may still hold the earlier transmission.
 *
 * Receiver.  The frame at rcv_nxt goes up at once (to its type's handler:
 * tern_dpdk_handler_t), then every early frame that now follows; an early
 * frame (within the window) waits in ooo[].  An early frame, a duplicate
 * or a PROBE is answered with an ack at once; in-order frames are acked
 * when a frame goes back anyway, after a quarter window, or
 * TERN_DPDK_ACK_DELAY_US later.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_hash_crc.h>
#ifdef __SSE4_2__
#include <nmmintrin.h>
#endif

#include "netmods/dpdk/dpdk_internal.h"

#define FRAME_HDR (TERN_DPDK_ETH_HDR + TERN_DPDK_HDR_SIZE)

static inline tern_dpdk_hdr_t *hdr_of(struct rte_mbuf *m)
{
    return rte_pktmbuf_mtod_offset(m, tern_dpdk_hdr_t *, TERN_DPDK_ETH_HDR);
}

static inline tern_dpdk_slot_t *slot(tern_dpdk_vc_t *dv, uint32_t seq)
{
    return &dv->slots[seq & (dv->d->cfg->window - 1)];
}

void tern_dpdk_rel_handler(tern_dpdk_t *d, uint8_t type, const tern_dpdk_handler_t *h)
{
    assert(type < TERN_DPDK_F_MAX && type != TERN_DPDK_F_ACK && type != TERN_DPDK_F_PROBE);
    d->up[type] = h;
}

/* The frame types this layer sends and takes itself: not in the sequence
 * space, no payload. */
static inline bool own_type(uint8_t type)
{
    return type == TERN_DPDK_F_ACK || type == TERN_DPDK_F_PROBE;
}

void tern_dpdk_mark_active(tern_dpdk_vc_t *dv)
{
    if (dv->on_active)
        return;
    dv->on_active = true;
    tern_list_push_tail(&dv->d->active, &dv->active_link);
}

bool tern_dpdk_vc_idle(const tern_dpdk_vc_t *dv)
{
    return dv->snd_una == dv->snd_nxt && tern_pktq_empty(&dv->sendq) &&
           tern_list_empty(&dv->lmtq);
}

void tern_dpdk_vc_lost(tern_dpdk_vc_t *dv, tern_status_t st, const char *fmt, ...)
{
    char why[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    dv->conn = DPDK_VC_DEAD;
    /* what the port itself saw: a PMD that stopped sending or receiving
     * shows here (frames out / refused, in / missed / no mbuf) */
    struct rte_eth_stats ps = {0};
    if (dv->port->id < RTE_MAX_ETHPORTS)
        (void)rte_eth_stats_get(dv->port->id, &ps);
    tern_warn("dpdk: VC to rank %d lost (%s): pool %u of %u mbufs free, port %s link %s: "
              "%llu frames out, %llu refused, %llu in, %llu missed, %llu without mbuf; "
              "snd %u..%u (high %u), rcv_nxt %u, %u early", dv->vc->rank, tern_strerror(st),
              rte_mempool_avail_count(dv->d->pool), (unsigned)dv->d->cfg->pool,
              dv->port->name, dv->port->link_up ? "up" : "down",
              (unsigned long long)ps.opackets, (unsigned long long)ps.oerrors,
              (unsigned long long)ps.ipackets, (unsigned long long)ps.imissed,
              (unsigned long long)ps.rx_nombuf, dv->snd_una, dv->snd_nxt, dv->snd_high,
              dv->rcv_nxt, dv->ooo_count);
    tern_vc_fail(dv->vc, st, why);
}

void tern_dpdk_link_lost(tern_dpdk_vc_t *dv)
{
    tern_dpdk_vc_lost(dv, TERN_ERR_PEER_FAILED, "dpdk: the link %s to rank %d went down (the "
                      "peer's end closed: its process ended?)", dv->port->name, dv->vc->rank);
}

struct rte_mbuf *tern_dpdk_frame_alloc(tern_dpdk_vc_t *dv, uint8_t type)
{
    tern_dpdk_t *d = dv->d;
    struct rte_mbuf *m = rte_pktmbuf_alloc(d->pool);
    if (m == NULL)
        return NULL;
    const tern_dpdk_handler_t *up = d->up[type];
    size_t len = FRAME_HDR + (up != NULL ? up->ext_size : 0);
    uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)p;
    eth->dst_addr = dv->peer_mac;
    eth->src_addr = dv->port->mac;
    eth->ether_type = rte_cpu_to_be_16(TERN_DPDK_ETHERTYPE);
    tern_dpdk_hdr_t *h = (tern_dpdk_hdr_t *)(p + TERN_DPDK_ETH_HDR);
    memset(h, 0, sizeof(*h));
    h->version = TERN_DPDK_WIRE_VERSION;
    h->type = type;
    h->job = rte_cpu_to_le_32(d->job);
    h->src = rte_cpu_to_le_32(dv->my_ep);
    h->dst = rte_cpu_to_le_32(dv->peer_ep);
    h->src_nonce = rte_cpu_to_le_32(d->nonce);
    h->dst_nonce = rte_cpu_to_le_32(dv->card.nonce);
    h->seq = rte_cpu_to_le_32(dv->snd_nxt);
    return m;
}

/* SACK bitmap of what waits early, for the block of 64 frames (counted
 * from rcv_nxt + 1) that holds seq: bit i is seq rcv_nxt + 1 + 64 * *block
 * + i.  Acks name the block of the latest early frame, and once more the
 * block the arrivals just left (the sender takes a frame it never heard of
 * below SACKed ones for lost). */
static uint64_t sack_bits(const tern_dpdk_vc_t *dv, uint32_t seq, uint8_t *block)
{
    *block = 0;
    if (dv->ooo_count == 0)
        return 0;
    uint32_t w = (uint32_t)dv->d->cfg->window;
    int32_t off = tern_dpdk_seq_diff(seq, dv->rcv_nxt + 1);
    uint32_t b = off > 0 && (uint32_t)off < w - 1 ? (uint32_t)off / 64 : 0;
    uint32_t first = 64 * b, last = first + 64 < w - 1 ? first + 64 : w - 1;
    uint64_t bits = 0;
    for (uint32_t i = first; i < last; i++)
        if (dv->ooo[(dv->rcv_nxt + 1 + i) & (w - 1)] != NULL)
            bits |= 1ull << (i - first);
    *block = (uint8_t)b;
    return bits;
}

/* CRC32C over len bytes at any alignment (a frame's header sits at an
 * odd offset: DPDK's rte_hash_crc loads 8 bytes unaligned, which UBSan
 * rightly rejects). */
static uint32_t crc32c(const uint8_t *p, uint32_t len, uint32_t crc)
{
#ifdef __SSE4_2__
    uint64_t c = crc;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
    }
    crc = (uint32_t)c;
    for (; len > 0; p++, len--)
        crc = _mm_crc32_u8(crc, *p);
    return crc;
#else
    uint8_t tmp[256];
    while (len > 0) {
        uint32_t n = len < sizeof(tmp) ? len : (uint32_t)sizeof(tmp);
        memcpy(tmp, p, n); /* aligned for rte_hash_crc */
        crc = rte_hash_crc(tmp, n, crc);
        p += n;
        len -= n;
    }
    return crc;
#endif
}

static uint32_t frame_crc(struct rte_mbuf *m)
{
    uint32_t crc = 0xffffffffu;
    uint32_t off = TERN_DPDK_ETH_HDR;
    for (struct rte_mbuf *s = m; s != NULL; s = s->next) {
        uint32_t len = rte_pktmbuf_data_len(s);
        if (len > off)
            crc = crc32c(rte_pktmbuf_mtod_offset(s, const uint8_t *, off), len - off, crc);
        off = off > len ? off - len : 0;
    }
    return crc != 0 ? crc : 1;
}

void tern_dpdk_frame_seal(tern_dpdk_vc_t *dv, struct rte_mbuf *m)
{
    tern_dpdk_hdr_t *h = hdr_of(m);
    h->ack = rte_cpu_to_le_32(dv->rcv_nxt);
    uint8_t block;
    uint32_t which = dv->rcv_latest;
    bool again = false;
    if (dv->prev_block_owed) {
        which = dv->rcv_prev_block;
        dv->prev_block_owed = false;
        again = true; /* the latest block's turn: the next frame */
    }
    h->sack = rte_cpu_to_le_64(sack_bits(dv, which, &block));
    h->sack_block = block;
    h->window = rte_cpu_to_le_16((uint16_t)(dv->d->cfg->window - dv->ooo_count));
    h->csum = 0;
    if (dv->d->cfg->csum)
        h->csum = rte_cpu_to_le_32(frame_crc(m));
    dv->unacked_rx = 0;
    dv->ack_due_ns = 0;
    dv->ack_now = again;
}

bool tern_dpdk_window_open(const tern_dpdk_vc_t *dv)
{
    uint32_t inflight = dv->snd_nxt - dv->snd_una;
    uint32_t limit = (uint32_t)dv->d->cfg->window;
    if (dv->peer_window < limit)
        limit = dv->peer_window;
    return inflight < limit;
}

/* The frame for one transmission of s (seq): the kept one with a new
 * reference the first time, else a fresh copy (or a fresh zero-copy chain). */
static struct rte_mbuf *frame_for(tern_dpdk_vc_t *dv, tern_dpdk_slot_t *s, uint32_t seq)
{
    struct rte_mbuf *m;
    if (s->m == NULL) {
        m = dv->d->up[s->type]->frame(dv, s);
        if (m != NULL)
            hdr_of(m)->seq = rte_cpu_to_le_32(seq);
        return m;
    }
    if (s->xmits == 0) {
        rte_pktmbuf_refcnt_update(s->m, 1);
        return s->m;
    }
    m = rte_pktmbuf_copy(s->m, dv->d->pool, 0, UINT32_MAX);
    return m;
}

/* Transmit [from, to) of the window in bursts; stops where the port stops
 * taking.  Returns how many went. */
static uint32_t transmit(tern_dpdk_vc_t *dv, uint32_t from, uint32_t to, bool retrans)
{
    tern_dpdk_t *d = dv->d;
    struct rte_mbuf *burst[TERN_DPDK_BURST];
    uint32_t seqs[TERN_DPDK_BURST];
    uint32_t done = 0;
    if (dv->port->link_up == false && !tern_dpdk_port_ready(d, dv->port))
        return 0;
    while (tern_dpdk_seq_diff(to, from) > 0) {
        uint16_t n = 0;
        for (uint32_t q = from; tern_dpdk_seq_diff(to, q) > 0 && n < TERN_DPDK_BURST; q++) {
            tern_dpdk_slot_t *s = slot(dv, q);
            if (retrans && s->sacked)
                continue;
            struct rte_mbuf *m = frame_for(dv, s, q);
            if (m == NULL)
                break;
            /* a kept frame is sealed in place only before its first
             * transmission; later ones are copies */
            tern_dpdk_frame_seal(dv, m);
            burst[n] = m;
            seqs[n++] = q;
        }
        if (n == 0)
            break;
        uint16_t k = tern_dpdk_port_tx(d, dv->port, burst, n);
        for (uint16_t i = 0; i < k; i++) {
            tern_dpdk_slot_t *s = slot(dv, seqs[i]);
            if (s->xmits > 0)
                d->stats.retransmits++;
            if (s->xmits < UINT16_MAX)
                s->xmits++;
            s->missing = false; /* until a SACK block lacks this transmission too */
            s->sent_ns = d->now_ns;
        }
        d->stats.tx_frames += k;
        for (uint16_t i = k; i < n; i++)
            rte_pktmbuf_free(burst[i]); /* our extra reference, or the copy */
        done += k;
        if (k < n)
            break;
        from = seqs[n - 1] + 1;
    }
    return done;
}

/* Send what is queued but never sent. */
void tern_dpdk_flush(tern_dpdk_vc_t *dv)
{
    if (dv->snd_high == dv->snd_nxt)
        return;
    uint32_t k = transmit(dv, dv->snd_high, dv->snd_nxt, false);
    dv->snd_high += k;
}

tern_status_t tern_dpdk_frame_queue(tern_dpdk_vc_t *dv, tern_dpdk_slot_t s)
{
    tern_dpdk_slot_t *e = slot(dv, dv->snd_nxt);
    if (dv->snd_una == dv->snd_nxt)
        dv->last_ack_ns = dv->d->now_ns; /* the silence clock starts now */
    s.xmits = 0;
    s.sacked = false;
    s.missing = false;
    s.sent_ns = 0;
    *e = s;
    if (s.m != NULL)
        hdr_of(s.m)->seq = rte_cpu_to_le_32(dv->snd_nxt);
    dv->snd_nxt++;
    tern_dpdk_mark_active(dv);
    if (dv->snd_nxt - dv->snd_high >= TERN_DPDK_BURST)
        tern_dpdk_flush(dv);
    return TERN_OK;
}

static void release_slot(tern_dpdk_vc_t *dv, tern_dpdk_slot_t *s)
{
    if (s->m != NULL) {
        rte_pktmbuf_free(s->m);
        s->m = NULL;
    }
    const tern_dpdk_handler_t *up = dv->d->up[s->type];
    if (up->acked != NULL)
        up->acked(dv, s); /* LMT: zero-copy or copied, the transfer counts it */
    s->owner = NULL;
}

/* ---- acknowledgements in ------------------------------------------------- */

/*
 * Time-based loss detection (after RACK, RFC 8985).  A frame the receiver
 * said it lacks (the ack's hole, or a frame of a reported SACK block
 * without its bit) is lost when a frame sent a reordering window REORDER
 * after it has arrived, or, from the timers, when it has been out for
 * srtt + REORDER (the window may be full and nothing newer go out), twice
 * that for each earlier retransmission.  It is sent again at once; a
 * retransmission lost again is found the same way, so only a lost tail
 * waits for the probe or the timeout.
 */
/* RACK's reordering window: a quarter of the least round trip (RFC 8985),
 * at least 2 us, at most a quarter of TERN_DPDK_PROBE_US.  Not the smoothed
 * one: at full rate the round trip is mostly the window queued ahead of the
 * ack (about 60 us for 256 frames on memif), and a quarter of that before
 * each retransmission stalled the full window once per loss (1 % loss gave
 * 0.46 x the lossless bandwidth). */
static inline uint64_t reorder_window(const tern_dpdk_vc_t *dv)
{
    uint64_t hi = dv->d->cfg->probe_us * 250ull, reo = dv->min_rtt_ns / 4;
    if (reo < 2000)
        reo = 2000;
    return reo < hi ? reo : hi;
}

static void rack_retransmit(tern_dpdk_vc_t *dv, uint64_t delivered_ns)
{
    if (tern_dpdk_seq_diff(dv->sack_high, dv->snd_una) <= 0)
        return;
    uint64_t reo = reorder_window(dv);
    uint64_t now = dv->d->now_ns;
    for (uint32_t q = dv->snd_una; q != dv->sack_high; q++) {
        tern_dpdk_slot_t *s = slot(dv, q);
        if (s->sacked || s->xmits == 0)
            continue;
        /* only what the receiver said it lacks: the ack's hole, or a frame
         * of a SACK block without its bit.  A frame in a block not reported
         * (a SACK names one block of 64 at a time) may well have arrived:
         * taking it for lost made 6 in 7 fast retransmissions of the fault
         * soak spurious (13,204 duplicates for 2,203 drops) */
        if (q != dv->snd_una && !s->missing)
            continue;
        /* by age, each retransmission waits twice as long as the one
         * before (without that, a peer that took nothing had the oldest
         * frame sent again every srtt + REORDER, 256 times in 3 ms) */
        unsigned k = s->xmits - 1u < 10u ? s->xmits - 1u : 10u;
        if (s->sent_ns + reo > delivered_ns && now < s->sent_ns + ((dv->srtt_ns + reo) << k))
            continue;
        if (transmit(dv, q, q + 1, true) != 1)
            break; /* the port is full: the timers go on */
        dv->d->stats.fast_retransmits++;
        if (q == dv->snd_una) /* go-back-N would resend all that was sent from here */
            dv->d->stats.gbn_frames += dv->snd_high - q;
    }
}

void tern_dpdk_rack_timer(tern_dpdk_vc_t *dv) { rack_retransmit(dv, 0); }

static void handle_ack(tern_dpdk_vc_t *dv, const tern_dpdk_hdr_t *h)
{
    uint32_t ack = rte_le_to_cpu_32(h->ack);
    uint64_t sack = rte_le_to_cpu_64(h->sack);
    int32_t adv = tern_dpdk_seq_diff(ack, dv->snd_una);
    if (adv < 0 || tern_dpdk_seq_diff(ack, dv->snd_high) > 0)
        return; /* old (reordered), or acks what was never sent: ignored */
    dv->peer_window = rte_le_to_cpu_16(h->window);
    uint64_t now = dv->d->now_ns;
    uint64_t delivered_ns = 0; /* latest transmission known to have arrived */
    if (adv > 0) {
        tern_dpdk_slot_t *last = slot(dv, ack - 1);
        if (last->xmits == 1 && last->sent_ns != 0 && now > last->sent_ns) {
            uint64_t rtt = now - last->sent_ns; /* srtt += (rtt - srtt) / 8 */
            dv->srtt_ns = dv->srtt_ns ? dv->srtt_ns - dv->srtt_ns / 8 + rtt / 8 : rtt;
            if (dv->min_rtt_ns == 0 || rtt < dv->min_rtt_ns ||
                now - dv->min_rtt_at_ns > 1000000000ull) { /* a path that got slower */
                dv->min_rtt_ns = rtt;
                dv->min_rtt_at_ns = now;
            }
        }
        for (uint32_t q = dv->snd_una; q != ack; q++) {
            tern_dpdk_slot_t *s = slot(dv, q);
            if (s->sent_ns > delivered_ns)
                delivered_ns = s->sent_ns;
            release_slot(dv, s);
        }
        dv->snd_una = ack;
        dv->last_ack_ns = now;
        dv->rto_ns = dv->d->cfg->rto_min_us * 1000ull;
        dv->probes = 0;
        if (tern_dpdk_seq_diff(dv->sack_high, ack) < 0)
            dv->sack_high = ack;
    }
    if (sack != 0) {
        uint32_t base = ack + 1 + 64u * h->sack_block;
        for (int i = 0; i < 64; i++) {
            uint32_t q = base + (uint32_t)i;
            if (tern_dpdk_seq_diff(q, dv->snd_high) >= 0)
                break;
            tern_dpdk_slot_t *s = slot(dv, q);
            if (!(sack & (1ull << i))) {
                s->missing = !s->sacked;
                continue;
            }
            s->sacked = true;
            if (s->sent_ns > delivered_ns)
                delivered_ns = s->sent_ns;
            if (tern_dpdk_seq_diff(q + 1, dv->sack_high) > 0)
                dv->sack_high = q + 1;
        }
    }
    rack_retransmit(dv, delivered_ns);
    if (adv > 0 && (!tern_pktq_empty(&dv->sendq) || !tern_list_empty(&dv->lmtq)))
        tern_dpdk_mark_active(dv);
}

/* ---- frames in ---------------------------------------------------------- */

/* Up to the handler of its type (frame_ok saw one), then freed. */
static void deliver(tern_dpdk_vc_t *dv, struct rte_mbuf *m)
{
    tern_dpdk_hdr_t *h = hdr_of(m);
    const tern_dpdk_handler_t *up = dv->d->up[h->type];
    const uint8_t *p = rte_pktmbuf_mtod_offset(m, const uint8_t *, FRAME_HDR);
    up->rx(dv, p, p + up->ext_size, rte_le_to_cpu_16(h->len));
    rte_pktmbuf_free(m);
}

static bool vc_usable(const tern_dpdk_vc_t *dv)
{
    return dv->conn == DPDK_VC_UP && dv->vc->state != TERN_VC_FAILED;
}

static void rx_data(tern_dpdk_vc_t *dv, struct rte_mbuf *m, uint32_t seq)
{
    tern_dpdk_t *d = dv->d;
    uint32_t w = (uint32_t)d->cfg->window;
    int32_t off = tern_dpdk_seq_diff(seq, dv->rcv_nxt);
    if (off < 0) {
        d->stats.dup_frames++;
        dv->ack_now = true; /* our ack may have been lost */
        rte_pktmbuf_free(m);
        return;
    }
    if ((uint32_t)off >= w) {
        d->stats.bad_frames++; /* beyond the window we offered */
        dv->ack_now = true;
        rte_pktmbuf_free(m);
        return;
    }
    if (off > 0) {
        struct rte_mbuf **e = &dv->ooo[seq & (w - 1)];
        if (*e != NULL) {
            d->stats.dup_frames++;
            rte_pktmbuf_free(m);
        } else {
            *e = m;
            if (dv->ooo_count > 0 && !dv->prev_block_owed &&
                (seq - dv->rcv_nxt - 1) / 64 != (dv->rcv_latest - dv->rcv_nxt - 1) / 64) {
                dv->rcv_prev_block = dv->rcv_latest;
                dv->prev_block_owed = true;
            }
            dv->ooo_count++;
            dv->rcv_latest = seq;
            d->stats.ooo_frames++;
        }
        dv->ack_now = true;
        return;
    }
    dv->rcv_nxt++;
    dv->unacked_rx++;
    deliver(dv, m);
    while (dv->ooo_count > 0 && vc_usable(dv)) {
        struct rte_mbuf **e = &dv->ooo[dv->rcv_nxt & (w - 1)];
        if (*e == NULL)
            break;
        struct rte_mbuf *x = *e;
        *e = NULL;
        dv->ooo_count--;
        dv->rcv_nxt++;
        dv->unacked_rx++;
        deliver(dv, x);
    }
    if (!vc_usable(dv))
        return;
    if (dv->unacked_rx >= w / 4 || d->ctx->finalizing || dv->vc->state != TERN_VC_ACTIVE)
        dv->ack_now = true;
    else if (dv->ack_due_ns == 0)
        dv->ack_due_ns = d->now_ns + d->cfg->ack_delay_us * 1000ull;
}

/* Is m a well-formed frame for this endpoint, from a rank of this job or
 * of another job we know?  *dvp: its VC. */
static bool frame_ok(tern_dpdk_t *d, struct rte_mbuf *m, tern_dpdk_vc_t **dvp)
{
    if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0) {
        tern_debug("dpdk: a %u-byte frame in %u segments does not fit one receive mbuf",
                   rte_pktmbuf_pkt_len(m), m->nb_segs);
        d->stats.bad_frames++; /* larger than a receive mbuf: a smaller MTU is needed */
        return false;
    }
    uint32_t plen = rte_pktmbuf_data_len(m);
    if (plen < FRAME_HDR)
        goto bad;
    const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
    if (eth->ether_type != rte_cpu_to_be_16(TERN_DPDK_ETHERTYPE))
        return false;
    tern_dpdk_hdr_t *h = hdr_of(m);
    uint32_t job = rte_le_to_cpu_32(h->job);
    if (job != d->job && rte_le_to_cpu_32(h->dst_nonce) != d->nonce)
        return false; /* another job's, on a shared medium */
    uint32_t src = rte_le_to_cpu_32(h->src);
    int rank = TERN_DPDK_EP_RANK(src);
    if (h->version != TERN_DPDK_WIRE_VERSION || h->type == 0 || h->type >= TERN_DPDK_F_MAX ||
        h->sack_block >= TERN_DPDK_WINDOW_MAX / 64 || rte_le_to_cpu_32(h->dst) != TERN_DPDK_EP(d->ctx->rank, d->worker->index) ||
        rank < 0 || (job == d->job && rank >= d->ctx->size) ||
        TERN_DPDK_EP_WORKER(src) != d->worker->index || rte_le_to_cpu_32(h->dst_nonce) != d->nonce)
        goto bad;
    const tern_dpdk_handler_t *up = d->up[h->type];
    if (!own_type(h->type) && up == NULL)
        goto bad; /* a type nothing above takes */
    uint32_t need = FRAME_HDR + (up != NULL ? up->ext_size : 0) + rte_le_to_cpu_16(h->len);
    if (plen < need || (own_type(h->type) && h->len)) {
        tern_debug("dpdk: frame of %u bytes from rank %d (seq %u) carries %u", plen, rank,
                   rte_le_to_cpu_32(h->seq), need);
        goto bad;
    }
    m->data_len = (uint16_t)need; /* Ethernet padding is not ours */
    m->pkt_len = need;
    if (h->csum != 0 || d->cfg->csum) {
        uint32_t got = rte_le_to_cpu_32(h->csum);
        h->csum = 0;
        if (got == 0 || frame_crc(m) != got) {
            d->stats.csum_errors++;
            return false;
        }
        h->csum = rte_cpu_to_le_32(got);
    }
    /* whole and ours: now its VC (which may be made for it, a port's) */
    tern_dpdk_vc_t *dv = job == d->job ? &d->vcs[rank] : tern_dpdk_remote_vc(d, job, rank, m);
    if (dv == NULL || dv->vc == NULL || rte_le_to_cpu_32(h->src_nonce) != dv->card.nonce)
        goto bad;
    *dvp = dv;
    return true;
bad:
    d->stats.bad_frames++;
    return false;
}

void tern_dpdk_rx_frame(tern_dpdk_t *d, struct rte_mbuf *m)
{
    tern_dpdk_vc_t *dv = NULL;
    d->stats.rx_frames++;
    if (!frame_ok(d, m, &dv) || dv->conn == DPDK_VC_DEAD || dv->vc->state == TERN_VC_FAILED) {
        rte_pktmbuf_free(m);
        return;
    }
    if (dv->conn == DPDK_VC_IDLE)
        dv->conn = DPDK_VC_UP;
    if (!dv->on_live) {
        dv->on_live = true;
        tern_list_push_tail(&d->live, &dv->live_link);
        /* a client that has sent a frame never dials again (its link going
         * down now is its end): a memif server's socket file can go, so a
         * job killed later leaves none */
        if (dv->port == &dv->own && dv->own.sock_path[0] != '\0') {
            unlink(dv->own.sock_path);
            dv->own.sock_path[0] = '\0';
        }
    }
    dv->last_rx_ns = d->now_ns;
    tern_dpdk_hdr_t *h = hdr_of(m);
    handle_ack(dv, h);
    if (h->flags & TERN_DPDK_FL_ACK_NOW)
        dv->ack_now = true;
    if (!own_type(h->type))
        rx_data(dv, m, rte_le_to_cpu_32(h->seq));
    else
        rte_pktmbuf_free(m);
    if (dv->ack_now || dv->ack_due_ns)
        tern_dpdk_mark_active(dv);
}

/* ---- acknowledgements out, timers --------------------------------------- */

void tern_dpdk_send_ctrl(tern_dpdk_vc_t *dv, uint8_t type, uint8_t flags)
{
    tern_dpdk_t *d = dv->d;
    if (!dv->port->link_up && !tern_dpdk_port_ready(d, dv->port))
        return;
    struct rte_mbuf *m = tern_dpdk_frame_alloc(dv, type);
    if (m == NULL)
        return; /* out of mbufs: the next timer tries again */
    hdr_of(m)->flags = flags;
    tern_dpdk_frame_seal(dv, m);
    if (tern_dpdk_port_tx(d, dv->port, &m, 1) == 1) {
        d->stats.tx_frames++;
        if (type == TERN_DPDK_F_ACK)
            d->stats.acks_sent++;
        else
            d->stats.probes++;
    } else {
        rte_pktmbuf_free(m);
        dv->ack_now = type == TERN_DPDK_F_ACK; /* try again */
    }
}

/* Time from t to now, 0 if t is later: a send inside a timer pass (push:
 * the DONE after an LMT goes through the engine's send, which reads the
 * clock) stamps frames after the pass's now.  Unsigned, that difference was
 * ~2^64: a timeout fired at once (seen: "sent 18446744073709549 us ago"),
 * and the silence check could fail the VC. */
static inline uint64_t since(uint64_t now, uint64_t t) { return now > t ? now - t : 0; }

static void vc_timers(tern_dpdk_vc_t *dv)
{
    tern_dpdk_t *d = dv->d;
    const tern_dpdk_config_t *cfg = d->cfg;
    if (!tern_pktq_empty(&dv->sendq) || !tern_list_empty(&dv->lmtq))
        tern_dpdk_push(dv);
    uint64_t now = d->now_ns; /* after the push: it may read the clock */
    if (dv->conn == DPDK_VC_DEAD || dv->vc->state == TERN_VC_FAILED)
        return;
    if (dv->port != &d->port && !dv->port->link_up && !tern_dpdk_port_ready(d, dv->port) &&
        now > dv->port->start_deadline_ns && dv->snd_nxt != dv->snd_una) {
        tern_dpdk_vc_lost(dv, TERN_ERR_PEER_FAILED, "dpdk: port %s to rank %d did not come "
                          "up within %llu ms (is the peer running, with the same "
                          "TERN_DPDK_VDEV?)", dv->port->name, dv->vc->rank,
                          (unsigned long long)cfg->connect_ms);
        return;
    }
    tern_dpdk_flush(dv);
    if (dv->port != &d->port && tern_dpdk_port_check_link(d, dv->port) && dv->on_live) {
        tern_dpdk_link_lost(dv);
        return;
    }
    if (dv->snd_una != dv->snd_high) {
        if (since(now, dv->last_ack_ns) > cfg->timeout_ms * 1000000ull) {
            tern_dpdk_slot_t *s = slot(dv, dv->snd_una);
            tern_dpdk_vc_lost(dv, TERN_ERR_PEER_FAILED, "dpdk: rank %d acknowledged nothing "
                              "for %llu ms (TERN_DPDK_TIMEOUT_MS): %u frames outstanding, the "
                              "oldest (seq %u) sent %u times", dv->vc->rank,
                              (unsigned long long)((now - dv->last_ack_ns) / 1000000),
                              dv->snd_nxt - dv->snd_una, dv->snd_una, s->xmits);
            return;
        }
        tern_dpdk_rack_timer(dv);
        tern_dpdk_slot_t *old = slot(dv, dv->snd_una);
        if (old->xmits > 0 && since(now, old->sent_ns) >= dv->rto_ns) {
            tern_debug("dpdk: timeout to rank %d: snd %u..%u (high %u), sack_high %u, oldest "
                       "sent %u times, %llu us ago, srtt %llu us, %u probes, peer window %u",
                       dv->vc->rank, dv->snd_una, dv->snd_nxt, dv->snd_high, dv->sack_high,
                       old->xmits, (unsigned long long)(since(now, old->sent_ns) / 1000),
                       (unsigned long long)(dv->srtt_ns / 1000), dv->probes, dv->peer_window);
            if (transmit(dv, dv->snd_una, dv->snd_una + 1, false) == 1) {
                d->stats.timeouts++;
                dv->rto_ns *= 2;
                if (dv->rto_ns > cfg->rto_max_ms * 1000000ull)
                    dv->rto_ns = cfg->rto_max_ms * 1000000ull;
            }
        } else {
            /* a probe or its answer may be lost too (1 % loss each way made
             * one in ~15 messages of 4 MiB wait for the 10 ms timeout): probe
             * again, each time waiting twice as long, while that stays
             * below half the timeout */
            uint64_t wait = (cfg->probe_us * 1000ull) << (dv->probes < 16 ? dv->probes : 16);
            uint32_t last = dv->snd_high - 1;
            tern_dpdk_slot_t *t = slot(dv, last);
            if (wait < dv->rto_ns / 2 && t->xmits > 0 && since(now, t->sent_ns) >= wait &&
                since(now, dv->last_ack_ns) >= wait && transmit(dv, last, last + 1, false) == 1) {
                dv->probes++;
                d->stats.probes++;
            }
        }
    }
    if (dv->ack_now || (dv->ack_due_ns != 0 && now >= dv->ack_due_ns))
        tern_dpdk_send_ctrl(dv, TERN_DPDK_F_ACK, 0);
}

void tern_dpdk_timers(tern_dpdk_t *d)
{
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &d->active)
    {
        tern_dpdk_vc_t *dv = TERN_CONTAINER_OF(pos, tern_dpdk_vc_t, active_link);
        if (dv->conn != DPDK_VC_DEAD && dv->vc->state != TERN_VC_FAILED)
            vc_timers(dv);
        bool busy = dv->conn != DPDK_VC_DEAD && dv->vc->state != TERN_VC_FAILED &&
                    (dv->snd_una != dv->snd_nxt || dv->ack_now || dv->ack_due_ns != 0 ||
                     !tern_pktq_empty(&dv->sendq) || !tern_list_empty(&dv->lmtq) ||
                     dv->snd_high != dv->snd_nxt);
        if (!busy) {
            tern_list_del(&dv->active_link);
            dv->on_active = false;
            if (dv->vc->state == TERN_VC_TERMINATING && tern_dpdk_vc_idle(dv))
                dv->vc->state = TERN_VC_CLOSED;
        }
    }
}

void tern_dpdk_rel_drop(tern_dpdk_vc_t *dv)
{
    uint32_t w = (uint32_t)dv->d->cfg->window;
    if (dv->slots != NULL)
        for (uint32_t q = dv->snd_una; q != dv->snd_nxt; q++) {
            tern_dpdk_slot_t *s = slot(dv, q);
            if (s->m != NULL)
                rte_pktmbuf_free(s->m);
            s->m = NULL;
            s->owner = NULL;
        }
    dv->snd_una = dv->snd_high = dv->snd_nxt;
    if (dv->ooo != NULL)
        for (uint32_t i = 0; i < w; i++)
            if (dv->ooo[i] != NULL) {
                rte_pktmbuf_free(dv->ooo[i]);
                dv->ooo[i] = NULL;
            }
    dv->ooo_count = 0;
    if (dv->on_active) {
        tern_list_del(&dv->active_link);
        dv->on_active = false;
    }
    if (dv->on_live) {
        tern_list_del(&dv->live_link);
        dv->on_live = false;
    }
}
