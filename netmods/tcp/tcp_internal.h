/*
 * tcp netmod: state, wire formats of the card and the connection handshake.
 *
 * Connections are made lazily, on the first send in either direction.  A
 * connector sends HELLO {magic, version, rank, job} and writes no data
 * until the acceptor's VERDICT arrives.  job is a 32-bit FNV-1a hash of
 * the connector's job name (PMIx namespace): the acceptor finds the VC by
 * (job, rank), its own job's or a connected one's (tern_connect).  When
 * both sides connect at once, the connection initiated by the lower
 * (job, rank) wins: the higher one's acceptor says yes to it, the lower
 * one's acceptor says no to the other one, and the rejected connector
 * closes its socket and uses the accepted one.  Every byte of a VC's
 * stream therefore travels on one socket, in order.
 */
#ifndef TERN_TCP_INTERNAL_H
#define TERN_TCP_INTERNAL_H

#include "engine/netmod.h"
#include "engine/pktq.h"
#include "engine/sock/sock.h"

#define TERN_TCP_MAGIC 0x50435454u /* "TTCP" */
#define TERN_TCP_VERSION 1u
#define TERN_TCP_RXBUF (64u * 1024u)
#define TERN_TCP_WIOV 64

/* Business card: the tcp entry of a worker's address (engine/address.h). */
typedef struct tern_tcp_card {
    uint32_t magic;
    uint32_t version;
    int32_t rank;
    uint32_t port;
    char hosts[240];          /* "addr,addr,...": every interface address */
} tern_tcp_card_t;

typedef struct tern_tcp_hello {
    uint32_t magic;
    uint32_t version;
    int32_t rank;
    uint32_t job;             /* tern_job_hash of the connector's job */
} tern_tcp_hello_t;

typedef struct tern_tcp_verdict {
    uint32_t magic;
    uint32_t accept;          /* 1: this socket carries the VC; 0: close it */
} tern_tcp_verdict_t;

enum tern_tcp_conn_kind {
    TCP_CONN_LISTENER = 1,
    TCP_CONN_HELLO,           /* accepted, reading the peer's HELLO */
    TCP_CONN_VERDICT,         /* connected out, HELLO sent, reading the VERDICT */
    TCP_CONN_DATA,            /* carries a VC's stream */
    TCP_CONN_DEAD,            /* closing: events on it are ignored */
};

typedef struct tern_tcp_vc tern_tcp_vc_t;

/* What a socket's user pointer names. */
typedef struct tern_tcp_conn {
    tern_list_t link;         /* tern_tcp_t.conns: every live one, freed at finalize */
    enum tern_tcp_conn_kind kind;
    tern_sock_t *sock;
    tern_tcp_vc_t *tv;        /* known once the peer's rank is */
    union {
        tern_tcp_hello_t hello;
        tern_tcp_verdict_t verdict;
    } hs;
} tern_tcp_conn_t;

enum tern_tcp_vc_state { TCP_VC_IDLE = 0, TCP_VC_CONNECTING, TCP_VC_CONNECTED };

struct tern_tcp_vc {
    tern_vc_t *vc;
    uint32_t job;             /* the peer's job (hash), and its rank there */
    int peer_rank;
    enum tern_tcp_vc_state state;
    tern_tcp_conn_t *data;    /* the socket carrying the stream, once connected */
    tern_tcp_conn_t *out;     /* our connection attempt, while pending */
    tern_tcp_card_t card;
    tern_pktq_t sendq;        /* packets not fully written (engine/pktq.h) */
    bool writing;             /* a posted writev for the head of sendq is pending */
    struct iovec wiov[TERN_TCP_WIOV];
};

/* The tcp netmod's settings (TERN_TCP_ADDRS, TERN_PORT_RANGE). */
typedef struct tern_tcp_config {
    char addrs[TERN_CFG_STR_MAX];
    char port_range[TERN_CFG_STR_MAX]; /* read by engine/sock's listeners */
} tern_tcp_config_t;

typedef struct tern_tcp {
    tern_context_t *ctx;
    const tern_tcp_config_t *cfg;
    tern_worker_t *worker;
    tern_sock_set_t *set;
    tern_tcp_conn_t *listener;
    tern_list_t conns;
    int port;
    uint32_t job;             /* hash of this job's name */
    tern_tcp_card_t card;     /* ours (a port's name carries it) */
    tern_tcp_vc_t *vcs;       /* by rank */
    tern_tcp_vc_t **remote;   /* VCs to connected jobs' ranks (own allocations) */
    int nremote, remote_cap;
    tern_tcp_vc_t **live;     /* connected VCs: read directly in poll */
    int nlive, live_cap;
    int nhandshake;           /* connections in HELLO / VERDICT: need socket events */
    int nwriting;             /* posted writevs pending: need socket events */
    unsigned polls;
    /* what poll reads, one VC at a time: tern_handle_pkt copies every byte
     * out (headers into the VC, payload into the receive) before returning */
    uint8_t rxbuf[TERN_TCP_RXBUF];
} tern_tcp_t;

static inline tern_tcp_vc_t *tern_tcp_vc(tern_vc_t *vc) { return (tern_tcp_vc_t *)vc->nm_vc; }
static inline tern_tcp_t *tern_tcp_state(tern_vc_t *vc) { return (tern_tcp_t *)vc->nm_state; }

/* tcp_conn.c: what a peer sends, checked before it is used (fuzzed by
 * tests/fuzz/fuzz_tcp_card.c) */
/* rank's card from the len bytes its address gave: *out (hosts NUL-terminated)
 * only when it is a card of this version for that rank, else
 * TERN_ERR_MALFORMED naming the rank. */
tern_status_t tern_tcp_card_check(const void *data, size_t len, int rank, tern_tcp_card_t *out);
/* Is h a HELLO of this version from another rank of a job of size ranks
 * (me: the receiving rank)? */
bool tern_tcp_hello_valid(const tern_tcp_hello_t *h, int size, int me);
/* a VC to rank of job (hash) with that card (NULL: it connected to our
 * port, we cannot connect back): registered so that its HELLO finds it */
tern_status_t tern_tcp_remote_add(tern_tcp_t *t, tern_vc_t *vc, uint32_t job, int rank,
                                  const tern_tcp_card_t *card);
/* The VC a HELLO names: of this job (h->job == t->job, checked as above) or
 * of a connected job; NULL when none. */
tern_tcp_vc_t *tern_tcp_vc_of_hello(tern_tcp_t *t, const tern_tcp_hello_t *h);
enum tern_tcp_verdict_kind { TCP_VERDICT_INVALID = 0, TCP_VERDICT_ACCEPT, TCP_VERDICT_REJECT };
enum tern_tcp_verdict_kind tern_tcp_verdict_decode(const tern_tcp_verdict_t *v);

/* tcp_conn.c: connections */
/* stop using c (NULL or dead: nothing); its CLOSE event frees it */
void tern_tcp_conn_drop(tern_tcp_t *t, tern_tcp_conn_t *c);
void tern_tcp_set_writing(tern_tcp_vc_t *tv, bool writing);
tern_tcp_conn_t *tern_tcp_conn_new(tern_tcp_t *t, enum tern_tcp_conn_kind kind, tern_tcp_vc_t *tv);
tern_status_t tern_tcp_start_connect(tern_tcp_t *t, tern_tcp_vc_t *tv);
void tern_tcp_handle_event(tern_tcp_t *t, const tern_sock_event_t *ev);
void tern_tcp_vc_lost(tern_tcp_vc_t *tv, tern_status_t st, const char *what);

/* tcp_send.c */
tern_status_t tern_tcp_istart_contig_msg(tern_vc_t *vc, const void *hdr, size_t hdrlen,
                                         const void *data, size_t len, tern_request_t **sreq);
tern_status_t tern_tcp_send_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                      size_t hdrlen);
void tern_tcp_flush(tern_tcp_vc_t *tv);
void tern_tcp_write_done(tern_tcp_vc_t *tv, size_t nbytes);

#endif
