/*
 * Worker addresses — a wire format (docs/addresses.md).
 *
 * A worker's address is one self-describing blob the engine builds from
 * the cards of the worker's netmods: whoever holds it can reach that
 * worker (tern_peer_insert), whatever carried it there (PMIx, a file, a
 * socket, another runtime's modex).  Netmods only produce their card bytes
 * and take a peer's; the engine alone publishes and reads addresses.
 *
 *   header (64 bytes, tern_addr_hdr_t)
 *   entry x nentries: tern_addr_entry_t (24 bytes: netmod name, card
 *                     length), then the card bytes, padded with zeros to
 *                     a multiple of 8
 *
 * Every multi-byte field is little endian, on every host; sizes and
 * offsets are pinned by the static_asserts below.  A reader refuses a
 * magic or version it does not know: any change to the layout is a new
 * TERN_ADDR_VERSION.  Card bytes are the netmod's own wire format (each
 * checks its own magic and version).
 */
#ifndef TERN_ENGINE_ADDRESS_H
#define TERN_ENGINE_ADDRESS_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tern/status.h>

#define TERN_ADDR_MAGIC 0x52444154u /* bytes "TADR" */
#define TERN_ADDR_VERSION 2u /* 2: the engine packets carry 64-bit tags (issue 23) */
#define TERN_ADDR_NAME_MAX 16   /* a netmod name, NUL-padded */
#define TERN_ADDR_CARDS_MAX 8   /* entries in one address */
#define TERN_ADDR_CARD_MAX 1024 /* bytes of one card */
#define TERN_ADDR_MAX 8192      /* bytes of one address */

/* Which kernel a process runs on, and in which pid and network namespace:
 * two processes with the same identity share /dev/shm, can name each
 * other's pids and reach each other's abstract sockets (shm's needs).  A
 * zero boot id (no /proc) matches nothing. */
typedef struct tern_host_id {
    uint8_t boot_id[16]; /* /proc/sys/kernel/random/boot_id */
    uint64_t pid_ns;     /* inode of /proc/self/ns/pid */
    uint64_t net_ns;     /* inode of /proc/self/ns/net */
} tern_host_id_t;

typedef struct tern_addr_hdr {
    uint32_t magic;      /* TERN_ADDR_MAGIC */
    uint16_t version;    /* TERN_ADDR_VERSION */
    uint16_t hdr_len;    /* sizeof(tern_addr_hdr_t): the first entry's offset */
    uint32_t total_len;  /* bytes of the whole address */
    uint32_t job;        /* tern_job_hash of the job's name */
    int32_t rank;        /* in that job */
    uint16_t worker;     /* the worker's index (it talks to worker `worker` of peers) */
    uint16_t nentries;   /* netmod entries that follow */
    uint8_t boot_id[16]; /* host identity, tern_host_id_t */
    uint64_t pid_ns;
    uint64_t net_ns;
    int32_t pid;
    uint32_t flags; /* 0 (reserved) */
} tern_addr_hdr_t;

typedef struct tern_addr_entry {
    char name[TERN_ADDR_NAME_MAX]; /* netmod name, NUL-padded (at least one NUL) */
    uint32_t len;                  /* card bytes after this entry (before the padding) */
    uint32_t reserved;             /* 0 */
} tern_addr_entry_t;

static_assert(sizeof(tern_addr_hdr_t) == 64, "address header is a wire format");
static_assert(offsetof(tern_addr_hdr_t, total_len) == 8, "address header layout");
static_assert(offsetof(tern_addr_hdr_t, job) == 12, "address header layout");
static_assert(offsetof(tern_addr_hdr_t, rank) == 16, "address header layout");
static_assert(offsetof(tern_addr_hdr_t, worker) == 20, "address header layout");
static_assert(offsetof(tern_addr_hdr_t, nentries) == 22, "address header layout");
static_assert(offsetof(tern_addr_hdr_t, boot_id) == 24, "address header layout");
static_assert(offsetof(tern_addr_hdr_t, pid_ns) == 40, "address header layout");
static_assert(offsetof(tern_addr_hdr_t, net_ns) == 48, "address header layout");
static_assert(offsetof(tern_addr_hdr_t, pid) == 56, "address header layout");
static_assert(offsetof(tern_addr_hdr_t, flags) == 60, "address header layout");
static_assert(sizeof(tern_addr_entry_t) == 24, "address entry is a wire format");
static_assert(offsetof(tern_addr_entry_t, len) == 16, "address entry layout");

/* An address taken apart (host byte order); cards point into the buffer
 * it was parsed from, or to what the builder gave. */
typedef struct tern_addr {
    uint32_t job;
    int rank, worker;
    tern_host_id_t host;
    int pid;
    int ncards;
    struct {
        char name[TERN_ADDR_NAME_MAX];
        const void *card;
        size_t len;
    } cards[TERN_ADDR_CARDS_MAX];
} tern_addr_t;

/* This process's host identity (read once). */
const tern_host_id_t *tern_host_self(void);
/* Same host, as tern_host_id_t says (both known and equal). */
bool tern_host_same(const tern_host_id_t *a, const tern_host_id_t *b);

/* Write a into buf (capacity cap); *len the bytes it takes.  When cap is
 * too small: TERN_ERR_TRUNCATED with *len the size needed, nothing
 * recorded (a caller asking for the size is no error).  TERN_ERR_INVALID_PARAM
 * for a card too large or a name too long. */
tern_status_t tern_addr_encode(const tern_addr_t *a, void *buf, size_t cap, size_t *len);

/* Take apart the len bytes at buf into *a (cards point into buf), or
 * TERN_ERR_MALFORMED naming the cause: not an address (magic), another
 * version, truncated, trailing bytes, an entry out of bounds, a bad or
 * repeated netmod name, non-zero reserved fields.  Never reads past
 * buf + len.  what: who gave it, for the messages ("tern_peer_insert"). */
tern_status_t tern_addr_decode(const void *buf, size_t len, const char *what, tern_addr_t *a);

/* The card a gives for netmod name, or NULL. */
const void *tern_addr_card(const tern_addr_t *a, const char *name, size_t *len);

/* "shm tcp": the netmods a has cards of, for messages. */
void tern_addr_names(const tern_addr_t *a, char *out, size_t len);

/* The value of a lowercase hex digit, -1 for any other character (boot
 * ids, port names). */
static inline int tern_hex_digit(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

#endif
