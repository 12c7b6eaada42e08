/*
 * tcp netmod connections: the checks of a peer's card, HELLO and VERDICT,
 * lazy connect, the HELLO / VERDICT handshake that settles simultaneous
 * connects (the lower rank's connection wins, see tcp_internal.h), and the
 * socket events of established streams.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netmods/tcp/tcp_internal.h"

/* ---- what peers send ------------------------------------------------------ */

tern_status_t tern_tcp_card_check(const void *data, size_t len, int rank, tern_tcp_card_t *out)
{
    tern_tcp_card_t card;
    if (len != sizeof(card))
        return tern_error(TERN_ERR_MALFORMED, "tcp card of rank %d has %zu bytes", rank, len);
    memcpy(&card, data, sizeof(card));
    card.hosts[sizeof(card.hosts) - 1] = '\0';
    if (card.magic != TERN_TCP_MAGIC || card.version != TERN_TCP_VERSION || card.rank != rank)
        return tern_error(TERN_ERR_MALFORMED, "tcp card of rank %d: bad magic/version/rank",
                          rank);
    *out = card;
    return TERN_OK;
}

bool tern_tcp_hello_valid(const tern_tcp_hello_t *h, int size, int me)
{
    return h->magic == TERN_TCP_MAGIC && h->version == TERN_TCP_VERSION && h->rank >= 0 &&
           h->rank < size && h->rank != me;
}

tern_tcp_vc_t *tern_tcp_vc_of_hello(tern_tcp_t *t, const tern_tcp_hello_t *h)
{
    if (h->job == t->job) {
        if (!tern_tcp_hello_valid(h, t->ctx->size, t->ctx->rank) || t->vcs[h->rank].vc == NULL)
            return NULL;
        return &t->vcs[h->rank];
    }
    if (h->magic != TERN_TCP_MAGIC || h->version != TERN_TCP_VERSION || h->rank < 0)
        return NULL;
    for (int i = 0; i < t->nremote; i++)
        if (t->remote[i]->job == h->job && t->remote[i]->peer_rank == h->rank)
            return t->remote[i];
    /* a process that connects to our port: the engine gives it a VC */
    tern_vc_t *vc = tern_port_incoming(t->worker, t, h->job, h->rank);
    if (vc == NULL || tern_tcp_remote_add(t, vc, h->job, h->rank, NULL) != TERN_OK)
        return NULL;
    return tern_tcp_vc(vc);
}

/* Any accept value but 0 accepts (what version 1 peers send is 0 or 1). */
enum tern_tcp_verdict_kind tern_tcp_verdict_decode(const tern_tcp_verdict_t *v)
{
    if (v->magic != TERN_TCP_MAGIC)
        return TCP_VERDICT_INVALID;
    return v->accept ? TCP_VERDICT_ACCEPT : TCP_VERDICT_REJECT;
}

/* ---- connections ------------------------------------------------------------ */

tern_tcp_conn_t *tern_tcp_conn_new(tern_tcp_t *t, enum tern_tcp_conn_kind kind, tern_tcp_vc_t *tv)
{
    tern_tcp_conn_t *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        tern_error(TERN_ERR_NO_MEMORY, "tcp connection state");
        return NULL;
    }
    c->kind = kind;
    c->tv = tv;
    if (kind == TCP_CONN_HELLO || kind == TCP_CONN_VERDICT)
        t->nhandshake++;
    tern_list_push_tail(&t->conns, &c->link);
    return c;
}

static bool handshaking(enum tern_tcp_conn_kind k)
{
    return k == TCP_CONN_HELLO || k == TCP_CONN_VERDICT;
}

static void set_kind(tern_tcp_t *t, tern_tcp_conn_t *c, enum tern_tcp_conn_kind kind)
{
    t->nhandshake += (int)handshaking(kind) - (int)handshaking(c->kind);
    c->kind = kind;
}

void tern_tcp_set_writing(tern_tcp_vc_t *tv, bool writing)
{
    tern_tcp_t *t = tern_tcp_state(tv->vc);
    t->nwriting += (int)writing - (int)tv->writing;
    tv->writing = writing;
}

static void conn_free(tern_tcp_t *t, tern_tcp_conn_t *c)
{
    set_kind(t, c, TCP_CONN_DEAD);
    tern_list_del(&c->link);
    free(c);
}

void tern_tcp_conn_drop(tern_tcp_t *t, tern_tcp_conn_t *c)
{
    if (c == NULL || c->kind == TCP_CONN_DEAD)
        return;
    set_kind(t, c, TCP_CONN_DEAD);
    tern_sock_post_close(c->sock);
}

tern_status_t tern_tcp_start_connect(tern_tcp_t *t, tern_tcp_vc_t *tv)
{
    tern_tcp_conn_t *c = tern_tcp_conn_new(t, TCP_CONN_VERDICT, tv);
    if (c == NULL)
        return TERN_ERR_NO_MEMORY;
    tern_status_t st = tern_sock_post_connect(t->set, c, tv->card.hosts, (int)tv->card.port, &c->sock);
    if (st != TERN_OK) {
        conn_free(t, c);
        return tern_error_wrap(st, "tcp connect to rank %d at %s port %u", tv->vc->rank,
                               tv->card.hosts, tv->card.port);
    }
    tv->out = c;
    tv->state = TCP_VC_CONNECTING;
    return TERN_OK;
}

void tern_tcp_vc_lost(tern_tcp_vc_t *tv, tern_status_t st, const char *what)
{
    if (tv->vc->state == TERN_VC_FAILED)
        return;
    char why[384];
    snprintf(why, sizeof(why), "tcp %s with rank %d (%s port %u): %s (%s)", what, tv->vc->rank,
             tv->card.hosts, tv->card.port, tern_last_error(), tern_strerror(st));
    tern_vc_fail(tv->vc, TERN_ERR_PEER_FAILED, why); /* calls the netmod's vc_destroy */
}

/* c now carries tv's stream: poll reads it directly from now on. */
static void connected(tern_tcp_t *t, tern_tcp_vc_t *tv, tern_tcp_conn_t *c)
{
    if (t->nlive == t->live_cap) { /* a connected job's VC beyond the table */
        int cap = t->live_cap ? 2 * t->live_cap : 8;
        tern_tcp_vc_t **live = realloc(t->live, (size_t)cap * sizeof(*live));
        if (live == NULL) {
            tern_error(TERN_ERR_NO_MEMORY, "tcp: table of %d connected VCs", cap);
            tern_tcp_conn_drop(t, c);
            tern_tcp_vc_lost(tv, TERN_ERR_NO_MEMORY, "connection");
            return;
        }
        t->live = live;
        t->live_cap = cap;
    }
    set_kind(t, c, TCP_CONN_DATA);
    c->tv = tv;
    tv->data = c;
    if (tv->out != NULL && tv->out != c)
        tern_tcp_conn_drop(t, tv->out); /* our own attempt lost the tie */
    tv->out = NULL;
    tv->state = TCP_VC_CONNECTED;
    t->live[t->nlive++] = tv;
    tern_tcp_flush(tv);
    tern_vc_connection_up(tv->vc); /* BYE at once if we terminated the VC meanwhile */
}

static void on_hello(tern_tcp_t *t, tern_tcp_conn_t *c, const tern_sock_event_t *ev)
{
    const tern_tcp_hello_t *h = &c->hs.hello;
    tern_tcp_vc_t *tv = ev->status == TERN_OK ? tern_tcp_vc_of_hello(t, h) : NULL;
    if (tv == NULL) {
        tern_error(TERN_ERR_MALFORMED, "tcp: a connection sent no valid HELLO (rank %d, job "
                   "%08x)", h->rank, h->job);
        tern_tcp_conn_drop(t, c);
        return;
    }
    /* simultaneous connects: the lower (job, rank) wins */
    bool lower = h->job < t->job || (h->job == t->job && h->rank < t->ctx->rank);
    int accept = tv->state != TCP_VC_CONNECTED && tv->vc->state != TERN_VC_FAILED &&
                 (tv->out == NULL || lower);
    tern_tcp_verdict_t v = {.magic = TERN_TCP_MAGIC, .accept = (uint32_t)accept};
    struct iovec iov = {&v, sizeof(v)};
    size_t nb = 0;
    /* 8 bytes on a fresh socket: the kernel takes them at once */
    if (tern_sock_writev(c->sock, &iov, 1, &nb) != TERN_OK || nb != sizeof(v)) {
        tern_tcp_conn_drop(t, c);
        return;
    }
    if (accept)
        connected(t, tv, c);
    else
        tern_tcp_conn_drop(t, c);
}

static void on_connect(tern_tcp_conn_t *c, const tern_sock_event_t *ev, int myrank, uint32_t job)
{
    tern_tcp_vc_t *tv = c->tv;
    if (ev->status != TERN_OK) {
        if (tv->out == c)
            tern_tcp_vc_lost(tv, ev->status, "connect");
        return;
    }
    c->hs.hello = (tern_tcp_hello_t){.magic = TERN_TCP_MAGIC, .version = TERN_TCP_VERSION,
                                     .rank = myrank, .job = job};
    struct iovec iov = {&c->hs.hello, sizeof(c->hs.hello)};
    size_t nb = 0;
    tern_status_t st = tern_sock_writev(c->sock, &iov, 1, &nb);
    if (st == TERN_OK && nb != sizeof(c->hs.hello))
        st = TERN_ERR_CONN_RESET;
    if (st == TERN_OK)
        st = tern_sock_post_read(c->sock, &c->hs.verdict, sizeof(c->hs.verdict),
                                 sizeof(c->hs.verdict), NULL);
    if (st != TERN_OK && tv->out == c)
        tern_tcp_vc_lost(tv, st, "handshake");
}

static void on_verdict(tern_tcp_t *t, tern_tcp_conn_t *c, const tern_sock_event_t *ev)
{
    tern_tcp_vc_t *tv = c->tv;
    enum tern_tcp_verdict_kind k =
        ev->status == TERN_OK ? tern_tcp_verdict_decode(&c->hs.verdict) : TCP_VERDICT_INVALID;
    if (k == TCP_VERDICT_ACCEPT && tv->state != TCP_VC_CONNECTED) {
        connected(t, tv, c);
        return;
    }
    /* Rejected (the peer's own connection wins and carries the stream) or
     * broken: drop ours.  A broken handshake with nothing else coming is a
     * lost peer. */
    bool rejected = k != TCP_VERDICT_INVALID;
    if (tv->out == c)
        tv->out = NULL;
    tern_tcp_conn_drop(t, c);
    if (!rejected && tv->state != TCP_VC_CONNECTED)
        tern_tcp_vc_lost(tv, ev->status == TERN_OK ? TERN_ERR_MALFORMED : ev->status, "handshake");
}

static void on_accept(tern_tcp_t *t, tern_tcp_conn_t *l)
{
    tern_tcp_conn_t *c = tern_tcp_conn_new(t, TCP_CONN_HELLO, NULL);
    if (c == NULL)
        return;
    if (tern_sock_accept(l->sock, t->set, c, &c->sock) != TERN_OK) {
        conn_free(t, c);
        return;
    }
    if (tern_sock_post_read(c->sock, &c->hs.hello, sizeof(c->hs.hello), sizeof(c->hs.hello),
                            NULL) != TERN_OK)
        tern_tcp_conn_drop(t, c);
}

void tern_tcp_handle_event(tern_tcp_t *t, const tern_sock_event_t *ev)
{
    tern_tcp_conn_t *c = ev->user_ptr;
    if (ev->op == TERN_SOCK_OP_CLOSE) {
        if (c != NULL)
            conn_free(t, c);
        return;
    }
    if (c == NULL || c->kind == TCP_CONN_DEAD || ev->op == TERN_SOCK_OP_WAKEUP)
        return;
    switch (ev->op) {
    case TERN_SOCK_OP_ACCEPT:
        on_accept(t, c);
        break;
    case TERN_SOCK_OP_CONNECT:
        on_connect(c, ev, t->ctx->rank, t->job);
        break;
    case TERN_SOCK_OP_READ:
        if (c->kind == TCP_CONN_HELLO) {
            on_hello(t, c, ev);
        } else if (c->kind == TCP_CONN_VERDICT) {
            on_verdict(t, c, ev);
        }
        break; /* a connected stream is read directly in poll, never posted */
    case TERN_SOCK_OP_WRITE:
        if (ev->status != TERN_OK)
            tern_tcp_vc_lost(c->tv, ev->status, "write");
        else
            tern_tcp_write_done(c->tv, ev->num_bytes);
        break;
    default:
        break;
    }
}
