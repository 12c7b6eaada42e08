/*
 * soak: every rank sends to every other rank at once, through the public API
 * only, and checks every message it receives.
 *
 * What rank s sends to rank d is a pure function of (seed, s, d, seq):
 * length, tag, space, how it is sent (contiguous or iovec) and its bytes.
 * The receiver regenerates the same stream per source and posts exactly one
 * receive per expected message, in stream order, so it knows what each
 * receive must get.  Most receives use TERN_ANY_TAG: order is kept per
 * (source, space), so the k-th receive posted for (s, space) must get the
 * k-th message s sent in that space, and a message that arrives in another
 * one's place is caught.  A quarter use the exact tag (the tag-matching path).
 *
 * Every message carries the low 24 bits of its per-(sender, dest) sequence
 * number in its tag, and starts with a soak_hdr_t (sender, dest, sequence,
 * length, a seal over them) followed by a slice of a seeded random pattern;
 * a message shorter than the header carries the header's first bytes, so a
 * 0-byte message is still identified by its tag, source and length.  The
 * whole payload is compared with the bytes expected, which is stronger than
 * a checksum.  After its data each sender sends one 0-byte marker per space
 * (tag SOAK_MARKER_TAG): a duplicate or extra message takes its place.
 *
 * The last space (with two or more) is the wildcard space: its messages are
 * at most SOAK_WILD_MAX bytes and are received with TERN_ANY_SOURCE and
 * TERN_ANY_TAG into buffers of that size, checked in posting order; the
 * source the engine reports says whose stream a message must be next in.
 */
#ifndef TERN_SOAK_H
#define TERN_SOAK_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <tern/tern.h>

#define SOAK_MARKER_TAG TERN_TAG_MAX /* end of a (source, space) stream */
#define SOAK_CTL_SPACE 0xfffe        /* seed broadcast and the done exchange */
#define SOAK_SPACES_MAX 1024
#define SOAK_PAT_SLACK 65536 /* a message's pattern starts at one of these offsets */
#define SOAK_CANARY 16       /* bytes after each receive buffer that must stay */
#define SOAK_CANARY_BYTE 0xA5
#define SOAK_SEQ_BITS 24          /* low bits of the sequence number carried in the tag */
#define SOAK_DONE_GRACE 10        /* seconds past the timeout the done exchange may take */
#define SOAK_WILD_MAX (64 * 1024) /* largest message of the wildcard space */

typedef struct soak_opts {
    uint64_t messages; /* sent per rank, over all its peers */
    size_t max_size;
    uint64_t seed;
    bool seed_given;
    bool counters;  /* --counters: print the netmod counters of each rank at the end */
    double timeout;          /* seconds the data phase may take */
    unsigned window;         /* operations outstanding per peer and direction */
    unsigned spaces;         /* matching spaces used */
    size_t inflight;         /* bytes in flight per peer and direction */
    uint64_t inject_corrupt; /* rank 0 damages its K-th received message */
    uint64_t inject_drop;    /* the last rank never sends its K-th message to rank 0 */
    double progress;         /* seconds between progress lines, 0: none */
} soak_opts_t;

/* One message of a stream, derived from (seed, src, dst, seq). */
typedef struct soak_msg {
    size_t len;
    int tag;
    uint16_t space;
    bool marker;    /* the 0-byte end-of-stream message of its space */
    bool iov_send;  /* tern_isendv of header + two pattern pieces */
    bool iov_recv;  /* tern_irecvv into two pieces cut at split */
    bool exact_tag; /* received with its tag rather than TERN_ANY_TAG */
    bool wild;      /* in the wildcard space: received with TERN_ANY_SOURCE */
    uint32_t pat_off;
    size_t split;
} soak_msg_t;

/* The first bytes of every message (host byte order: one host, or alike). */
typedef struct soak_hdr {
    uint64_t seq;
    uint32_t src, dst;
    uint64_t len;
    uint64_t seal; /* hash of the seed and the fields above */
} soak_hdr_t;
#define SOAK_HDR_SIZE 32
static_assert(sizeof(soak_hdr_t) == SOAK_HDR_SIZE, "soak_hdr_t is a wire format");

typedef struct soak_counts {
    uint64_t sent;      /* data messages whose send completed with TERN_OK */
    uint64_t received;  /* data messages received intact */
    uint64_t bytes;     /* their payload bytes */
    uint64_t lost;      /* expected receives not completed when the run ended */
    uint64_t corrupt;   /* wrong bytes, length, tag or source */
    uint64_t reordered; /* another message of the (source, space) in this one's place */
    uint64_t errors;    /* operations that failed, sends that never completed */
} soak_counts_t;

/* An operation of a window (soak_window.c). */
typedef struct soak_slot {
    tern_request_t *req;
    uint64_t seq;
    soak_msg_t m; /* a wildcard receive's: only len, the buffer's capacity */
    uint8_t *buf;
    soak_hdr_t hdr; /* tern_isendv's first piece */
    tern_recv_info_t info;
    tern_status_t st; /* its final status, once complete */
    bool complete;    /* the engine is done with it */
    bool done;        /* and so is the soak: checked, buffer freed */
} soak_slot_t;

/* Operations outstanding, posted in stream order, retired in that order. */
typedef struct soak_window {
    soak_slot_t *ring; /* soak_opts_t.window entries */
    unsigned head, count;
    uint64_t next, total; /* next sequence number to post; data + markers */
    size_t bytes;         /* buffer bytes of the outstanding operations */
} soak_window_t;

typedef enum soak_kind { SOAK_TX, SOAK_RX, SOAK_WILD } soak_kind_t;

typedef struct soak_peer {
    soak_window_t tx, rx; /* rx: every space but the wildcard one */
    uint64_t wild_next;   /* next sequence number of its wildcard-space stream */
} soak_peer_t;

typedef struct soak {
    soak_opts_t o;
    tern_context_t *ctx;
    tern_worker_t *w;
    int rank, size;
    uint8_t *pattern; /* max_size + SOAK_PAT_SLACK seeded random bytes */
    soak_counts_t c;
    uint64_t completions; /* receives completed: what --inject-corrupt counts */
    unsigned reports;     /* problem lines printed (bounded) */
    soak_peer_t *peers;
    int wild;              /* index of the wildcard space, -1 when none */
    soak_window_t wild_rx; /* its receives, any source */
    double elapsed;        /* seconds of the data phase */
    bool pending;          /* operations left in the engine: their memory stays */
    int *done_in;          /* the done exchange's receive buffers, when left pending */
} soak_t;

/* soak_msg.c: the streams and the checks */
int soak_pattern_init(soak_t *s);
uint16_t soak_space_value(unsigned i);
uint64_t soak_count(const soak_t *s, int src, int dst);
void soak_msg(const soak_t *s, int src, int dst, uint64_t seq, soak_msg_t *m);
void soak_hdr(const soak_t *s, int src, int dst, uint64_t seq, size_t len, soak_hdr_t *h);
void soak_fill(const soak_t *s, uint8_t *buf, const soak_hdr_t *h, const soak_msg_t *m);
uint64_t soak_wild_next(const soak_t *s, int src, uint64_t from);
void soak_check(soak_t *s, int src, uint64_t seq, const soak_msg_t *m, tern_status_t st,
                tern_recv_info_t *info, uint8_t *buf, size_t cap);
void soak_report(soak_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* soak_window.c: posting and reaping one window */
bool soak_post(soak_t *s, int p, soak_window_t *win, soak_kind_t kind);
bool soak_reap(soak_t *s, int p, soak_window_t *win, soak_kind_t kind);
uint64_t soak_unfinished(const soak_t *s, int p, const soak_window_t *win, soak_kind_t kind,
                         uint64_t *pending);

/* soak_run.c: the progress loop, the done exchange */
int soak_run(soak_t *s);
void soak_free(soak_t *s);

#endif
