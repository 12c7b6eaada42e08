/*
 * Unit test of the worker address format (engine/address.c): what another
 * process hands tern_peer_insert is read without trusting it.
 *  - an address written and read back gives the same fields and cards;
 *  - wrong magic, another version, every truncation, trailing bytes, a
 *    damaged entry: TERN_ERR_MALFORMED with a message naming the cause;
 *  - fuzz-ish: every single-byte change and every length of a valid address,
 *    and random bytes (a fixed seed), are either read or refused, never read
 *    past the buffer (run under ASan by the sanitizer build), and what is read
 *    stays inside it;
 *  - the writer refuses a bad netmod name or an oversized card, and says
 *    how many bytes it needs when the buffer is short.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "engine/address.h"

#include "tests/unit/expect.h"

static tern_addr_t sample(void)
{
    static const char tcp[] = "tcp card: 127.0.0.1:4242";
    static const uint8_t verbs[40] = {1, 2, 3, 4, 5};
    tern_addr_t a;
    memset(&a, 0, sizeof(a));
    a.job = 0x12345678u;
    a.rank = 3;
    a.worker = 1;
    a.host = *tern_host_self();
    a.pid = 4242;
    a.ncards = 3;
    snprintf(a.cards[0].name, sizeof(a.cards[0].name), "shm");
    a.cards[0].card = "";
    a.cards[0].len = 0;
    snprintf(a.cards[1].name, sizeof(a.cards[1].name), "tcp");
    a.cards[1].card = tcp;
    a.cards[1].len = sizeof(tcp);
    snprintf(a.cards[2].name, sizeof(a.cards[2].name), "verbs");
    a.cards[2].card = verbs;
    a.cards[2].len = sizeof(verbs);
    return a;
}

/* a heap copy of exactly len bytes: ASan sees a read past it */
static tern_status_t decode_copy(const void *buf, size_t len, tern_addr_t *out)
{
    void *copy = malloc(len ? len : 1);
    if (len)
        memcpy(copy, buf, len);
    /* a NULL buffer stays NULL: the decoder's own refusal is under test */
    tern_status_t st = tern_addr_decode(buf != NULL ? copy : NULL, len, "test", out);
    if (st == TERN_OK)
        for (int i = 0; i < out->ncards; i++) {
            const uint8_t *c = out->cards[i].card;
            EXPECT(c >= (uint8_t *)copy && c + out->cards[i].len <= (uint8_t *)copy + len,
                   "card %d points outside the buffer", i);
        }
    free(copy);
    return st;
}

static void round_trip(void)
{
    tern_addr_t a = sample(), b;
    uint8_t buf[1024];
    size_t len = 0;
    EXPECT(tern_addr_encode(&a, buf, sizeof(buf), &len) == TERN_OK, "encode: %s",
           tern_last_error());
    EXPECT(len % 8 == 0 && len == 64 + 3 * 24 + 0 + 32 + 40, "encoded %zu bytes", len);
    EXPECT(tern_addr_decode(buf, len, "test", &b) == TERN_OK, "decode: %s", tern_last_error());
    EXPECT(b.job == a.job && b.rank == a.rank && b.worker == a.worker && b.pid == a.pid,
           "header fields: job %#x rank %d worker %d pid %d", b.job, b.rank, b.worker, b.pid);
    EXPECT(tern_host_same(&a.host, &b.host) == tern_host_same(&a.host, tern_host_self()),
           "host identity read back");
    EXPECT(b.ncards == 3, "%d cards", b.ncards);
    size_t clen = 0;
    const void *c = tern_addr_card(&b, "tcp", &clen);
    EXPECT(c != NULL && clen == a.cards[1].len && memcmp(c, a.cards[1].card, clen) == 0,
           "tcp card read back");
    c = tern_addr_card(&b, "verbs", &clen);
    EXPECT(c != NULL && clen == 40 && memcmp(c, a.cards[2].card, 40) == 0, "verbs card");
    EXPECT(tern_addr_card(&b, "shm", &clen) != NULL && clen == 0, "empty shm card");
    EXPECT(tern_addr_card(&b, "dpdk", &clen) == NULL, "no dpdk card");
    char names[64];
    tern_addr_names(&b, names, sizeof(names));
    EXPECT(strcmp(names, "shm tcp verbs") == 0, "names \"%s\"", names);
    /* the wire is little endian whatever the host */
    uint32_t magic;
    memcpy(&magic, buf, 4);
    EXPECT(le32toh(magic) == TERN_ADDR_MAGIC && memcmp(buf, "TADR", 4) == 0, "magic bytes");
}

static void expect_refused(const void *buf, size_t len, const char *needle, const char *what)
{
    tern_addr_t b;
    tern_status_t st = decode_copy(buf, len, &b);
    EXPECT(st == TERN_ERR_MALFORMED, "%s: status %d", what, (int)st);
    EXPECT(strstr(tern_last_error(), needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what,
           tern_last_error(), needle);
}

static void refusals(void)
{
    tern_addr_t a = sample();
    uint8_t buf[1024], bad[1024];
    size_t len = 0;
    tern_addr_encode(&a, buf, sizeof(buf), &len);

    memcpy(bad, buf, len);
    bad[0] ^= 0xff;
    expect_refused(bad, len, "not a tern address", "wrong magic");
    memcpy(bad, buf, len);
    bad[4] = 9;
    expect_refused(bad, len, "a version 9 tern address", "another version");
    expect_refused(buf, 40, "truncated", "a header cut short");
    expect_refused(buf, len - 8, "truncated", "the last card cut short");
    expect_refused(buf, 3, "not a tern address", "3 bytes");
    memcpy(bad, buf, len);
    memset(bad + len, 0, 8);
    expect_refused(bad, len + 8, "trailing bytes", "trailing bytes");
    memcpy(bad, buf, len);
    bad[64] = 'T'; /* first entry's name: upper case is not a netmod name */
    expect_refused(bad, len, "is not named", "a bad netmod name");
    memcpy(bad, buf, len);
    memcpy(bad + 64 + 24, "tcp", 4); /* second entry renamed to the first's... */
    memcpy(bad + 64, "tcp", 4);
    expect_refused(bad, len, "two tcp cards", "a repeated netmod");
    memcpy(bad, buf, len);
    uint32_t huge = htole32(100000);
    memcpy(bad + 64 + 16, &huge, 4); /* first entry's card length */
    expect_refused(bad, len, "are left", "a card longer than the address");
    memcpy(bad, buf, len);
    uint16_t many = htole16(200);
    memcpy(bad + 22, &many, 2);
    expect_refused(bad, len, "netmod cards", "too many entries");
    memcpy(bad, buf, len);
    uint16_t fewer = htole16(2);
    memcpy(bad + 22, &fewer, 2);
    expect_refused(bad, len, "after the last netmod card", "fewer entries than bytes");
    expect_refused(NULL, 0, "not a tern address", "NULL");
    uint8_t *huge_buf = calloc(1, TERN_ADDR_MAX + 8);
    memcpy(huge_buf, buf, 64);
    uint32_t total = htole32(TERN_ADDR_MAX + 8);
    memcpy(huge_buf + 8, &total, 4);
    expect_refused(huge_buf, TERN_ADDR_MAX + 8, "at most", "larger than an address may be");
    free(huge_buf);
}

static void fuzz(void)
{
    tern_addr_t a = sample(), b;
    uint8_t buf[1024], bad[1024];
    size_t len = 0;
    tern_addr_encode(&a, buf, sizeof(buf), &len);
    /* every prefix: only the whole address is an address */
    for (size_t n = 0; n < len; n++)
        EXPECT(decode_copy(buf, n, &b) == TERN_ERR_MALFORMED, "prefix of %zu bytes read", n);
    /* every byte changed to a few values: read or refused, nothing else */
    const uint8_t vals[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
    for (size_t i = 0; i < len; i++)
        for (size_t k = 0; k < sizeof(vals); k++) {
            memcpy(bad, buf, len);
            bad[i] = vals[k];
            tern_status_t st = decode_copy(bad, len, &b);
            EXPECT(st == TERN_OK || st == TERN_ERR_MALFORMED, "byte %zu = %#x: status %d", i,
                   vals[k], (int)st);
            if (st == TERN_OK)
                EXPECT(b.ncards <= TERN_ADDR_CARDS_MAX, "%d cards", b.ncards);
        }
    /* random bytes behind a valid magic and version (fixed seed) */
    unsigned seed = 22;
    for (int round = 0; round < 20000; round++) {
        size_t n = (size_t)(rand_r(&seed) % 400);
        for (size_t i = 0; i < n; i++)
            bad[i] = (uint8_t)rand_r(&seed);
        if (n >= 6 && (round & 1)) {
            memcpy(bad, buf, 6); /* magic + version */
            if (n >= 12 && (round & 2)) {
                uint32_t t = htole32((uint32_t)n);
                memcpy(bad + 8, &t, 4); /* a consistent total length */
                uint16_t hl = htole16(64);
                memcpy(bad + 6, &hl, 2);
            }
        }
        tern_status_t st = decode_copy(bad, n, &b);
        EXPECT(st == TERN_OK || st == TERN_ERR_MALFORMED, "random %zu bytes: status %d", n,
               (int)st);
    }
}

static void writer(void)
{
    tern_addr_t a = sample();
    size_t len = 0, need = 0;
    EXPECT(tern_addr_encode(&a, NULL, 0, &need) == TERN_ERR_TRUNCATED && need > 64,
           "size query: %zu", need);
    uint8_t buf[1024];
    EXPECT(tern_addr_encode(&a, buf, need - 1, &len) == TERN_ERR_TRUNCATED && len == need,
           "one byte short: %zu", len);
    snprintf(a.cards[1].name, sizeof(a.cards[1].name), "TCP");
    EXPECT(tern_addr_encode(&a, buf, sizeof(buf), &len) == TERN_ERR_INVALID_PARAM,
           "an upper-case name written");
    a = sample(); /* eight cards of 1 KiB do not fit one address */
    static const uint8_t big[TERN_ADDR_CARD_MAX];
    a.ncards = TERN_ADDR_CARDS_MAX;
    for (int i = 0; i < a.ncards; i++) {
        snprintf(a.cards[i].name, sizeof(a.cards[i].name), "nm%d", i);
        a.cards[i].card = big;
        a.cards[i].len = sizeof(big);
    }
    EXPECT(tern_addr_encode(&a, NULL, 0, &len) == TERN_ERR_INVALID_PARAM &&
               strstr(tern_last_error(), "at most") != NULL,
           "an address past TERN_ADDR_MAX: %s", tern_last_error());
    a = sample();
    a.cards[2].len = TERN_ADDR_CARD_MAX + 1;
    EXPECT(tern_addr_encode(&a, buf, sizeof(buf), &len) == TERN_ERR_INVALID_PARAM &&
               strstr(tern_last_error(), "verbs card has") != NULL,
           "an oversized card written: %s", tern_last_error());
}

static void hosts(void)
{
    tern_host_id_t me = *tern_host_self(), other = me, none;
    memset(&none, 0, sizeof(none));
    EXPECT(tern_host_same(&me, &me) == (memcmp(me.boot_id, none.boot_id, 16) != 0),
           "this host is this host (when /proc gives a boot id)");
    other.net_ns ^= 1;
    EXPECT(!tern_host_same(&me, &other), "another network namespace is another host");
    other = me;
    other.pid_ns ^= 1;
    EXPECT(!tern_host_same(&me, &other), "another pid namespace is another host");
    other = me;
    other.boot_id[15] ^= 1;
    EXPECT(!tern_host_same(&me, &other), "another boot is another host");
    EXPECT(!tern_host_same(&none, &none), "an unknown host matches nothing");
}

int main(void)
{
    round_trip();
    refusals();
    fuzz();
    writer();
    hosts();
    if (failures)
        fprintf(stderr, "address_test: %d failures\n", failures);
    else
        printf("address_test: ok\n");
    return failures ? 1 : 0;
}
