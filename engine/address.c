/*
 * Worker addresses: the wire format of engine/address.h (docs/addresses.md)
 * written and read, and this process's host identity.  What is read comes
 * from another process, possibly another build or a damaged file: every
 * length is checked against the bytes given before anything is used.
 */
#include <endian.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/address.h"
#include "engine/log.h"

/* ---- host identity ------------------------------------------------------ */

static tern_host_id_t host_self;
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

static void host_read(void)
{
    /* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx": 16 bytes in hex with dashes */
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    char text[64] = "";
    if (f != NULL) {
        if (fgets(text, sizeof(text), f) == NULL)
            text[0] = '\0';
        fclose(f);
    }
    uint8_t id[16];
    int n = 0;
    for (const char *p = text; *p && n < 32; p++) {
        int v = tern_hex_digit(*p);
        if (v < 0)
            continue;
        if (n % 2 == 0)
            id[n / 2] = (uint8_t)(v << 4);
        else
            id[n / 2] |= (uint8_t)v;
        n++;
    }
    if (n == 32)
        memcpy(host_self.boot_id, id, sizeof(id));
    struct stat sb;
    if (stat("/proc/self/ns/pid", &sb) == 0)
        host_self.pid_ns = (uint64_t)sb.st_ino;
    if (stat("/proc/self/ns/net", &sb) == 0)
        host_self.net_ns = (uint64_t)sb.st_ino;
}

const tern_host_id_t *tern_host_self(void)
{
    pthread_once(&host_once, host_read);
    return &host_self;
}

bool tern_host_same(const tern_host_id_t *a, const tern_host_id_t *b)
{
    static const uint8_t zero[16];
    return memcmp(a->boot_id, zero, sizeof(zero)) != 0 &&
           memcmp(a->boot_id, b->boot_id, sizeof(a->boot_id)) == 0 && a->pid_ns == b->pid_ns &&
           a->net_ns == b->net_ns;
}

/* ---- writing ---------------------------------------------------------------- */

static size_t pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static bool name_ok(const char *name)
{
    size_t n = strnlen(name, TERN_ADDR_NAME_MAX);
    if (n == 0 || n == TERN_ADDR_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return true;
}

tern_status_t tern_addr_encode(const tern_addr_t *a, void *buf, size_t cap, size_t *len)
{
    if (a->ncards < 0 || a->ncards > TERN_ADDR_CARDS_MAX)
        return tern_error(TERN_ERR_INVALID_PARAM, "address: %d cards (at most %d)", a->ncards,
                          TERN_ADDR_CARDS_MAX);
    size_t need = sizeof(tern_addr_hdr_t);
    for (int i = 0; i < a->ncards; i++) {
        if (!name_ok(a->cards[i].name))
            return tern_error(TERN_ERR_INVALID_PARAM,
                              "address: netmod name \"%.16s\" is not "
                              "1..%d characters of [a-z0-9_]",
                              a->cards[i].name, TERN_ADDR_NAME_MAX - 1);
        if (a->cards[i].len > TERN_ADDR_CARD_MAX)
            return tern_error(TERN_ERR_INVALID_PARAM,
                              "address: the %s card has %zu bytes (at "
                              "most %d)",
                              a->cards[i].name, a->cards[i].len, TERN_ADDR_CARD_MAX);
        need += sizeof(tern_addr_entry_t) + pad8(a->cards[i].len);
    }
    if (need > TERN_ADDR_MAX)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "address: %zu bytes of cards and headers (at "
                          "most %d)",
                          need, TERN_ADDR_MAX);
    *len = need;
    if (buf == NULL || cap < need)
        return TERN_ERR_TRUNCATED;
    uint8_t *p = buf;
    tern_addr_hdr_t h;
    memset(&h, 0, sizeof(h));
    h.magic = htole32(TERN_ADDR_MAGIC);
    h.version = htole16(TERN_ADDR_VERSION);
    h.hdr_len = htole16((uint16_t)sizeof(h));
    h.total_len = htole32((uint32_t)need);
    h.job = htole32(a->job);
    h.rank = (int32_t)htole32((uint32_t)a->rank);
    h.worker = htole16((uint16_t)a->worker);
    h.nentries = htole16((uint16_t)a->ncards);
    memcpy(h.boot_id, a->host.boot_id, sizeof(h.boot_id));
    h.pid_ns = htole64(a->host.pid_ns);
    h.net_ns = htole64(a->host.net_ns);
    h.pid = (int32_t)htole32((uint32_t)a->pid);
    memcpy(p, &h, sizeof(h));
    size_t off = sizeof(h);
    for (int i = 0; i < a->ncards; i++) {
        tern_addr_entry_t e;
        memset(&e, 0, sizeof(e));
        memcpy(e.name, a->cards[i].name, strnlen(a->cards[i].name, TERN_ADDR_NAME_MAX));
        e.len = htole32((uint32_t)a->cards[i].len);
        memcpy(p + off, &e, sizeof(e));
        off += sizeof(e);
        if (a->cards[i].len > 0)
            memcpy(p + off, a->cards[i].card, a->cards[i].len);
        memset(p + off + a->cards[i].len, 0, pad8(a->cards[i].len) - a->cards[i].len);
        off += pad8(a->cards[i].len);
    }
    return TERN_OK;
}

/* ---- reading ------------------------------------------------------------------ */

tern_status_t tern_addr_decode(const void *buf, size_t len, const char *what, tern_addr_t *a)
{
    tern_addr_hdr_t h;
    if (buf == NULL || len < 8)
        return tern_error(TERN_ERR_MALFORMED,
                          "%s: %zu bytes are not a tern address (a header "
                          "has %zu)",
                          what, buf == NULL ? (size_t)0 : len, sizeof(h));
    /* magic and version first: another format or version says so, whatever its length */
    uint32_t magic;
    uint16_t version;
    memcpy(&magic, buf, sizeof(magic));
    memcpy(&version, (const uint8_t *)buf + 4, sizeof(version));
    if (le32toh(magic) != TERN_ADDR_MAGIC)
        return tern_error(TERN_ERR_MALFORMED,
                          "%s: not a tern address (magic %#010x, expected "
                          "%#010x)",
                          what, le32toh(magic), TERN_ADDR_MAGIC);
    if (le16toh(version) != TERN_ADDR_VERSION)
        return tern_error(TERN_ERR_MALFORMED,
                          "%s: a version %u tern address; this tern reads "
                          "version %u",
                          what, le16toh(version), TERN_ADDR_VERSION);
    if (len < sizeof(h))
        return tern_error(TERN_ERR_MALFORMED,
                          "%s: address truncated: %zu bytes, its header "
                          "alone has %zu",
                          what, len, sizeof(h));
    memcpy(&h, buf, sizeof(h));
    uint32_t total = le32toh(h.total_len);
    if (total > TERN_ADDR_MAX)
        return tern_error(TERN_ERR_MALFORMED, "%s: an address of %u bytes (at most %d)", what,
                          total, TERN_ADDR_MAX);
    if (le16toh(h.hdr_len) != sizeof(h))
        return tern_error(TERN_ERR_MALFORMED,
                          "%s: address header of %u bytes (version %u has "
                          "%zu)",
                          what, le16toh(h.hdr_len), TERN_ADDR_VERSION, sizeof(h));
    if (total > len)
        return tern_error(TERN_ERR_MALFORMED,
                          "%s: address truncated: %zu bytes of the %u its "
                          "header gives",
                          what, len, total);
    if (total < len)
        return tern_error(TERN_ERR_MALFORMED,
                          "%s: %zu bytes given, the address has %u (%zu "
                          "trailing bytes)",
                          what, len, total, len - total);
    memset(a, 0, sizeof(*a));
    a->job = le32toh(h.job);
    a->rank = (int32_t)le32toh((uint32_t)h.rank);
    a->worker = le16toh(h.worker);
    memcpy(a->host.boot_id, h.boot_id, sizeof(h.boot_id));
    a->host.pid_ns = le64toh(h.pid_ns);
    a->host.net_ns = le64toh(h.net_ns);
    a->pid = (int32_t)le32toh((uint32_t)h.pid);
    int n = le16toh(h.nentries);
    if (a->rank < 0 || h.flags != 0 || n > TERN_ADDR_CARDS_MAX)
        return tern_error(TERN_ERR_MALFORMED,
                          "%s: address of rank %d, flags %#x, %d netmod "
                          "cards (at most %d)",
                          what, a->rank, le32toh(h.flags), n, TERN_ADDR_CARDS_MAX);
    const uint8_t *p = buf;
    size_t off = sizeof(h);
    for (int i = 0; i < n; i++) {
        tern_addr_entry_t e;
        if (total - off < sizeof(e))
            return tern_error(TERN_ERR_MALFORMED,
                              "%s: address truncated in netmod entry %d of "
                              "%d",
                              what, i + 1, n);
        memcpy(&e, p + off, sizeof(e));
        off += sizeof(e);
        size_t clen = le32toh(e.len);
        if (clen > TERN_ADDR_CARD_MAX || pad8(clen) > total - off)
            return tern_error(TERN_ERR_MALFORMED,
                              "%s: the card of netmod entry %d has %zu "
                              "bytes, %zu are left",
                              what, i + 1, clen, total - off);
        if (!name_ok(e.name) || e.reserved != 0)
            return tern_error(TERN_ERR_MALFORMED,
                              "%s: netmod entry %d is not named by 1..%d "
                              "characters of [a-z0-9_]",
                              what, i + 1, TERN_ADDR_NAME_MAX - 1);
        for (int k = 0; k < i; k++)
            if (strcmp(a->cards[k].name, e.name) == 0)
                return tern_error(TERN_ERR_MALFORMED, "%s: two %s cards in one address", what,
                                  e.name);
        memcpy(a->cards[i].name, e.name, sizeof(e.name));
        a->cards[i].card = p + off;
        a->cards[i].len = clen;
        off += pad8(clen);
    }
    if (off != total)
        return tern_error(TERN_ERR_MALFORMED, "%s: %zu bytes after the last netmod card", what,
                          (size_t)total - off);
    a->ncards = n;
    return TERN_OK;
}

const void *tern_addr_card(const tern_addr_t *a, const char *name, size_t *len)
{
    for (int i = 0; i < a->ncards; i++)
        if (strcmp(a->cards[i].name, name) == 0) {
            *len = a->cards[i].len;
            return a->cards[i].card;
        }
    return NULL;
}

void tern_addr_names(const tern_addr_t *a, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < a->ncards && n < len; i++)
        n += (size_t)snprintf(out + n, len - n, "%s%s", i ? " " : "", a->cards[i].name);
    if (a->ncards == 0)
        snprintf(out, len, "(none)");
}
