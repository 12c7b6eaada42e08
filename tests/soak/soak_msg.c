/* soak: the message streams (what src sends dst, in which order) and the
 * check of every received message against them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/soak/soak.h"

#define KIB 1024u
#define REPORTS_MAX 10

/* splitmix64's finaliser: a good 64-bit mix of x. */
static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

int soak_pattern_init(soak_t *s)
{
    size_t n = s->o.max_size + SOAK_PAT_SLACK;
    s->pattern = malloc(n);
    if (s->pattern == NULL)
        return -1;
    uint64_t x = mix(s->o.seed ^ 0x50A4ull);
    for (size_t i = 0; i < n; i += 8) {
        x = mix(x);
        memcpy(s->pattern + i, &x, n - i < 8 ? n - i : 8);
    }
    return 0;
}

/* The first eight spaces include the edges of uint16; past eight,
 * 0x1000 + the index: no two indices share a space, none is SOAK_CTL_SPACE. */
uint16_t soak_space_value(unsigned i)
{
    static const uint16_t first[8] = {0, 1, 2, 0x100, 0x7fff, 0x8000, 0xfffd, 0xffff};
    static_assert(SOAK_SPACES_MAX <= 0x1000, "space values would collide");
    return i < 8 ? first[i] : (uint16_t)(0x1000 + i);
}

/* Data messages src sends dst: the rank's total split over its peers. */
uint64_t soak_count(const soak_t *s, int src, int dst)
{
    uint64_t peers = (uint64_t)s->size - 1;
    /* dst's place among src's peers */
    uint64_t idx = (uint64_t)((dst - src - 1 + s->size) % s->size);
    return s->o.messages / peers + (idx < s->o.messages % peers ? 1 : 0);
}

static size_t pick(uint64_t h, size_t lo, size_t hi, size_t max)
{
    hi = hi < max ? hi : max;
    lo = lo < hi ? lo : hi;
    return lo + (size_t)(h % ((uint64_t)(hi - lo) + 1));
}

void soak_msg(const soak_t *s, int src, int dst, uint64_t seq, soak_msg_t *m)
{
    uint64_t n = soak_count(s, src, dst);
    memset(m, 0, sizeof(*m));
    if (seq >= n) { /* the end markers, one per space */
        m->marker = true;
        m->tag = SOAK_MARKER_TAG;
        m->space = soak_space_value((unsigned)(seq - n));
        m->wild = (int)(seq - n) == s->wild;
        return;
    }
    uint64_t k = mix(s->o.seed ^ mix(((uint64_t)(uint32_t)src << 32 | (uint32_t)dst) ^ mix(seq)));
    uint64_t h0 = mix(k), h1 = mix(k + 1), h2 = mix(k + 2), h3 = mix(k + 3);
    /* 10% tiny (0-byte included), 60% up to the fastbox-cell-eager sizes,
     * 25% around the eager limit up to 256 KiB, 5% up to max_size */
    unsigned band = (unsigned)(h0 % 100);
    size_t max = s->o.max_size;
    if (band < 10)
        m->len = pick(h1, 0, 63, max);
    else if (band < 70)
        m->len = pick(h1, 64, 4 * KIB - 1, max);
    else if (band < 95)
        m->len = pick(h1, 4 * KIB, 256 * KIB, max);
    else
        m->len = pick(h1, 256 * KIB + 1, max, max);
    uint64_t seq_mask = (1ull << SOAK_SEQ_BITS) - 1;
    m->tag = (int)((h2 % 127) << SOAK_SEQ_BITS | (seq & seq_mask)); /* never the marker's */
    unsigned space = (unsigned)((h2 >> 32) % s->o.spaces);
    m->space = soak_space_value(space);
    m->wild = (int)space == s->wild;
    if (m->wild && m->len > SOAK_WILD_MAX)
        m->len %= SOAK_WILD_MAX + 1;
    m->iov_send = (h3 & 3) == 0;
    m->iov_recv = ((h3 >> 2) & 3) == 0;
    m->exact_tag = ((h3 >> 4) & 3) == 0;
    m->pat_off = (uint32_t)((h3 >> 16) % SOAK_PAT_SLACK);
    m->split = (size_t)((h3 >> 40) % ((uint64_t)m->len + 1));
}

/* The first message of src's stream to this rank at or after from that is
 * in the wildcard space, or the stream's end. */
uint64_t soak_wild_next(const soak_t *s, int src, uint64_t from)
{
    uint64_t total = soak_count(s, src, s->rank) + s->o.spaces;
    soak_msg_t m;
    for (uint64_t q = from; q < total; q++) {
        soak_msg(s, src, s->rank, q, &m);
        if (m.wild)
            return q;
    }
    return total;
}

void soak_hdr(const soak_t *s, int src, int dst, uint64_t seq, size_t len, soak_hdr_t *h)
{
    h->seq = seq;
    h->src = (uint32_t)src;
    h->dst = (uint32_t)dst;
    h->len = len;
    h->seal = mix(s->o.seed ^ mix(seq ^ mix((uint64_t)h->src << 32 | h->dst) ^ mix(len)));
}

/* The message's bytes: the header's first bytes, then the pattern slice. */
void soak_fill(const soak_t *s, uint8_t *buf, const soak_hdr_t *h, const soak_msg_t *m)
{
    size_t hl = m->len < SOAK_HDR_SIZE ? m->len : SOAK_HDR_SIZE;
    memcpy(buf, h, hl);
    if (m->len > hl)
        memcpy(buf + hl, s->pattern + m->pat_off, m->len - hl);
}

void soak_report(soak_t *s, const char *fmt, ...)
{
    if (s->reports++ >= REPORTS_MAX) {
        if (s->reports == REPORTS_MAX + 1)
            fprintf(stderr, "soak: rank %d: more problems, not shown\n", s->rank);
        return;
    }
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "soak: rank %d: %s\n", s->rank, line);
}

/* Index of the first byte of buf[0..len) that differs from message seq's
 * expected bytes (*want: the byte expected there), or len when none does. */
static size_t first_bad(const soak_t *s, int src, uint64_t seq, const soak_msg_t *m,
                        const uint8_t *buf, uint8_t *want)
{
    soak_hdr_t h;
    soak_hdr(s, src, s->rank, seq, m->len, &h);
    size_t hl = m->len < SOAK_HDR_SIZE ? m->len : SOAK_HDR_SIZE;
    const uint8_t *pat = s->pattern + m->pat_off; /* buf[hl + i] is pat[i] */
    if (memcmp(buf, &h, hl) == 0 && memcmp(buf + hl, pat, m->len - hl) == 0)
        return m->len;
    for (size_t i = 0; i < m->len; i++) {
        *want = i < hl ? ((const uint8_t *)&h)[i] : pat[i - hl];
        if (buf[i] != *want)
            return i;
    }
    return m->len;
}

/* Which message of src's stream a wrong arrival is: by its tag's sequence
 * bits (nearest to the expected one) or by being a marker. */
static uint64_t identify(const soak_t *s, int src, uint64_t seq, const soak_msg_t *m, int tag)
{
    if (tag == SOAK_MARKER_TAG) {
        uint64_t n = soak_count(s, src, s->rank);
        for (unsigned i = 0; i < s->o.spaces; i++)
            if (soak_space_value(i) == m->space)
                return n + i;
    }
    uint64_t span = 1ull << SOAK_SEQ_BITS, low = (uint64_t)tag & (span - 1);
    uint64_t got = (seq & ~(span - 1)) | low;
    if (got > seq + span / 2 && got >= span)
        got -= span;
    else if (got + span / 2 < seq)
        got += span;
    return got;
}

void soak_check(soak_t *s, int src, uint64_t seq, const soak_msg_t *m, tern_status_t st,
                tern_recv_info_t *info, uint8_t *buf, size_t cap)
{
    s->completions++;
    if (s->o.inject_corrupt != 0 && s->rank == 0 && s->completions == s->o.inject_corrupt) {
        if (st == TERN_OK && info->length > 0 && m->len > 0)
            buf[m->len / 2] ^= 0x40;
        else
            info->tag ^= 1; /* nothing to flip in a 0-byte message: its tag */
        soak_report(s, "injected corruption into receive %llu (from %d seq %llu, %zu bytes)",
                    (unsigned long long)s->completions, src, (unsigned long long)seq, m->len);
    }
    if (st != TERN_OK && st != TERN_ERR_TRUNCATED) {
        s->c.errors++;
        soak_report(s, "receive from %d seq %llu space %u failed: %s (%s)", src,
                    (unsigned long long)seq, m->space, tern_strerror(st), tern_last_error());
        return;
    }
    for (size_t i = 0; i < SOAK_CANARY; i++)
        if (buf[cap + i] != SOAK_CANARY_BYTE) {
            s->c.corrupt++;
            soak_report(s, "receive from %d seq %llu: byte %zu past its %zu-byte buffer written",
                        src, (unsigned long long)seq, i, cap);
            return;
        }
    size_t bad = m->len;
    uint8_t want = 0;
    if (st == TERN_OK && info->tag == m->tag && info->source == src && info->length == m->len) {
        bad = first_bad(s, src, seq, m, buf, &want);
        if (bad == m->len) {
            if (!m->marker) {
                s->c.received++;
                s->c.bytes += m->len;
            }
            return;
        }
    }
    uint64_t got = identify(s, src, seq, m, info->tag);
    soak_msg_t g;
    if (info->source == src && got != seq && got < soak_count(s, src, s->rank) + s->o.spaces) {
        soak_msg(s, src, s->rank, got, &g);
        if (g.space == m->space && g.tag == info->tag && g.len == info->length) {
            s->c.reordered++;
            soak_report(s,
                        "from %d space %u: seq %llu (tag %d, %zu bytes) arrived in place of "
                        "seq %llu (re-run with the same --seed)",
                        src, m->space, (unsigned long long)got, info->tag, info->length,
                        (unsigned long long)seq);
            return;
        }
    }
    s->c.corrupt++;
    if (bad < m->len)
        soak_report(s, "from %d seq %llu space %u (%zu bytes): byte %zu is 0x%02x, not 0x%02x", src,
                    (unsigned long long)seq, m->space, m->len, bad, buf[bad], want);
    else
        soak_report(s,
                    "from %d seq %llu space %u: completed (%s) with source %d tag %d "
                    "length %zu, expected tag %d length %zu",
                    src, (unsigned long long)seq, m->space, tern_strerror(st), info->source,
                    info->tag, info->length, m->tag, m->len);
}
