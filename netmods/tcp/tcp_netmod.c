/*
 * tcp netmod: business card, VCs, polling, teardown; the capability tables.  Built
 * on engine/sock.  No LMT of its own: large messages take the engine's
 * null mode (RTS / CTS / DATA over the stream), written straight from the
 * user's buffer and read straight into it, or the engine's same-host copy
 * (engine/cma.h) to a peer on this host.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netmods/tcp/tcp_internal.h"

#define POLL_BUDGET 32

/* ---- settings ---------------------------------------------------------- */

static tern_status_t check_addrs(const char *env, const char *v)
{
    char buf[TERN_CFG_STR_MAX], bin[16];
    snprintf(buf, sizeof(buf), "%s", v);
    for (char *save = NULL, *a = strtok_r(buf, ",", &save); a; a = strtok_r(NULL, ",", &save))
        if (inet_pton(AF_INET, a, bin) != 1 && inet_pton(AF_INET6, a, bin) != 1)
            return tern_error(TERN_ERR_INVALID_PARAM,
                              "%s=\"%s\": \"%s\" is not an IPv4 or IPv6 address", env, v, a);
    return TERN_OK;
}

static tern_status_t check_ports(const char *env, const char *v)
{
    int lo, hi;
    return tern_sock_parse_port_range(v, &lo, &hi);
}

#define T tern_tcp_config_t
static const tern_config_entry_t tcp_entries[] = {
    TERN_CFG_ENTRY_STRING("TERN_TCP_ADDRS", T, addrs, "(interfaces)", check_addrs,
                          "comma list of the addresses a rank's tcp card advertises; unset: "
                          "every interface address but loopback (loopback only when alone)"),
    TERN_CFG_ENTRY_STRING("TERN_PORT_RANGE", T, port_range, "(any)", check_ports,
                          "lo-hi: the ports tcp listeners may bind"),
};
#undef T

static const tern_config_table_t tcp_config_table = {
    .owner = "tcp",
    .entries = tcp_entries,
    .num_entries = sizeof(tcp_entries) / sizeof(tcp_entries[0]),
    .struct_size = sizeof(tern_tcp_config_t),
};

/* ---- wire-up -------------------------------------------------------------- */

static bool tcp_reachable(tern_context_t *ctx, int rank) { return rank != ctx->rank; }

static bool is_loopback(const char *a)
{
    return strncmp(a, "127.", 4) == 0 || strcmp(a, "::1") == 0;
}

/*
 * The addresses a card advertises: TERN_TCP_ADDRS if set (e.g. 127.0.0.1
 * to keep a one-host job on loopback), else every interface address but
 * loopback — a peer on another host must never dial its own 127.0.0.1 —
 * and loopback only when the host has nothing else.
 */
static tern_status_t card_addresses(const tern_tcp_config_t *cfg, char *out, size_t len)
{
    if (cfg->addrs[0] != '\0') {
        if (strlen(cfg->addrs) >= len)
            return tern_error(TERN_ERR_INVALID_PARAM, "TERN_TCP_ADDRS is longer than %zu bytes",
                              len - 1);
        snprintf(out, len, "%s", cfg->addrs);
        return TERN_OK;
    }
    char all[512];
    tern_status_t st = tern_sock_get_host_description(all, sizeof(all));
    if (st != TERN_OK && st != TERN_ERR_TRUNCATED)
        return st;
    size_t n = 0;
    out[0] = '\0';
    for (char *save = NULL, *a = strtok_r(all, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
        if (is_loopback(a) || n + strlen(a) + 2 > len)
            continue;
        n += (size_t)snprintf(out + n, len - n, "%s%s", n ? "," : "", a);
    }
    if (n == 0)
        snprintf(out, len, "127.0.0.1");
    return TERN_OK;
}

/* One listener and card per worker: worker i's connections go to the
 * peers' worker i (each worker's address carries its card). */
static tern_status_t tcp_init(tern_worker_t *w, const void *config, void **shared, void **state)
{
    tern_context_t *ctx = w->ctx;
    tern_tcp_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "tcp netmod state");
    *state = t;
    t->ctx = ctx;
    t->cfg = config;
    t->worker = w;
    tern_list_init(&t->conns);
    t->vcs = calloc((size_t)ctx->size, sizeof(*t->vcs));
    t->live = calloc((size_t)ctx->size, sizeof(*t->live));
    if (t->vcs == NULL || t->live == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "tcp VC table for %d ranks", ctx->size);
    t->live_cap = ctx->size;
    t->job = tern_ctx_job_hash(ctx);
    tern_status_t st = tern_sock_set_create(&t->set);
    if (st != TERN_OK)
        return st;
    t->listener = tern_tcp_conn_new(t, TCP_CONN_LISTENER, NULL);
    if (t->listener == NULL)
        return TERN_ERR_NO_MEMORY;
    st = tern_sock_listen(t->set, t->listener, NULL, &t->port, &t->listener->sock);
    if (st != TERN_OK)
        return st;
    tern_tcp_card_t card = {.magic = TERN_TCP_MAGIC, .version = TERN_TCP_VERSION,
                            .rank = ctx->rank, .port = (uint32_t)t->port};
    st = card_addresses(config, card.hosts, sizeof(card.hosts));
    if (st != TERN_OK)
        return st;
    t->card = card;
    return TERN_OK;
}

/* Our card (the worker's address carries it; a port's name too). */
static tern_status_t tcp_card(void *state, void *buf, size_t *len)
{
    tern_tcp_t *t = state;
    if (*len < sizeof(t->card))
        return tern_error(TERN_ERR_INVALID_PARAM, "tcp: a card needs %zu bytes",
                          sizeof(t->card));
    memcpy(buf, &t->card, sizeof(t->card));
    *len = sizeof(t->card);
    return TERN_OK;
}

static tern_status_t tcp_vc_init(void *state, tern_vc_t *vc, const void *card, size_t len)
{
    tern_tcp_t *t = state;
    tern_tcp_vc_t *tv = &t->vcs[vc->rank];
    tern_status_t st = tern_tcp_card_check(card, len, vc->rank, &tv->card);
    if (st != TERN_OK)
        return st;
    tv->vc = vc;
    tv->job = t->job;
    tv->peer_rank = vc->rank;
    tern_pktq_init(&tv->sendq);
    vc->nm_vc = tv;
    return TERN_OK;
}

tern_status_t tern_tcp_remote_add(tern_tcp_t *t, tern_vc_t *vc, uint32_t job, int rank,
                                  const tern_tcp_card_t *card)
{
    tern_tcp_vc_t **r = tern_remote_table_room(t->remote, t->nremote, &t->remote_cap, sizeof(*r));
    if (r == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "tcp: table of %d VCs to other jobs",
                          t->nremote + 1);
    t->remote = r;
    tern_tcp_vc_t *tv = calloc(1, sizeof(*tv));
    if (tv == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "tcp: VC to job %08x rank %d", job, rank);
    if (card != NULL)
        tv->card = *card;
    else
        snprintf(tv->card.hosts, sizeof(tv->card.hosts), "(it connected to our port)");
    tv->vc = vc;
    tv->job = job;
    tv->peer_rank = rank;
    tern_pktq_init(&tv->sendq);
    vc->nm_vc = tv;
    t->remote[t->nremote++] = tv;
    return TERN_OK;
}

/* Another job's rank (tern_connect, a port, tern_peer_insert): its HELLO
 * names that job's hash, by which on_hello finds this VC. */
static tern_status_t tcp_vc_init_remote(void *state, tern_vc_t *vc, uint32_t job, int rank,
                                        const void *data, size_t len)
{
    tern_tcp_t *t = state;
    tern_tcp_card_t card;
    tern_status_t st = tern_tcp_card_check(data, len, rank, &card);
    return st == TERN_OK ? tern_tcp_remote_add(t, vc, job, rank, &card) : st;
}

/*
 * Connected streams are read directly (one recv per VC, no epoll); socket
 * events (handshakes, posted writes, new connections) are collected when
 * something waits for one, and every 16th poll for new connections.
 *
 * Events first, reads last: collecting events also takes the edge that a
 * stream's arrival left in the set (edge-triggered), and block mode sleeps
 * after this poll on that set's fd (tcp_wait_fd).  An arrival whose edge
 * was taken is read by the reads that follow; one after them leaves a new
 * edge that wakes the sleep.  In the other order an arrival between a VC's
 * read and the collection lost its edge unread: the worker slept until
 * TERN_HEALTH_MS (engine case block_storm).
 */
static unsigned tcp_poll(void *state, int direction)
{
    tern_tcp_t *t = state;
    unsigned n = 0;
    if (t->nhandshake > 0 || t->nwriting > 0 || (t->polls++ & 15u) == 0) {
        tern_sock_event_t ev;
        for (unsigned k = 0; k < POLL_BUDGET && tern_sock_wait(t->set, 0, &ev) == TERN_OK; k++) {
            tern_tcp_handle_event(t, &ev);
            n++;
        }
    }
    for (int i = 0; i < t->nlive; i++) {
        tern_tcp_vc_t *tv = t->live[i];
        for (int k = 0; k < 4 && tv->state == TCP_VC_CONNECTED; k++) {
            size_t nb = 0;
            tern_status_t st = tern_sock_read(tv->data->sock, t->rxbuf, TERN_TCP_RXBUF, &nb);
            if (st != TERN_OK) {
                tern_tcp_vc_lost(tv, st, "read");
                break;
            }
            if (nb == 0)
                break;
            n++;
            if (tern_handle_pkt(tv->vc, t->rxbuf, nb) != TERN_OK || nb < TERN_TCP_RXBUF)
                break;
        }
    }
    return n;
}

/* A VC with a stream (connected, or our connection under way) ends it with
 * BYE behind its pending sends: the peer then takes our close for what it
 * is (engine_internal.h, tern_vc_say_bye).  A VC that never had one says
 * nothing and costs no connection; one made later says BYE at once
 * (tcp_conn.c). */
static tern_status_t tcp_vc_terminate(tern_vc_t *vc)
{
    tern_tcp_vc_t *tv = tern_tcp_vc(vc);
    if (vc->state != TERN_VC_ACTIVE)
        return TERN_OK;
    vc->state = TERN_VC_TERMINATING;
    if (tv != NULL && tv->state != TCP_VC_IDLE)
        tern_vc_say_bye(vc); /* a failure fails the VC, with its message */
    if (vc->state == TERN_VC_TERMINATING &&
        (tv == NULL || (tern_pktq_empty(&tv->sendq) && !tv->writing)))
        vc->state = TERN_VC_CLOSED;
    return TERN_OK;
}

/* Drop the VC's queue and sockets; requests only this netmod holds fail
 * here, rendezvous ones (on the engine's VC list) in the engine. */
static tern_status_t tcp_vc_destroy(tern_vc_t *vc)
{
    tern_tcp_vc_t *tv = tern_tcp_vc(vc);
    if (tv == NULL)
        return TERN_OK;
    tern_pktq_fail_all(&tv->sendq, vc->fail_status);
    tern_tcp_t *t = tern_tcp_state(vc);
    tern_tcp_set_writing(tv, false);
    for (int i = 0; i < t->nlive; i++)
        if (t->live[i] == tv) {
            t->live[i] = t->live[--t->nlive];
            break;
        }
    tern_tcp_conn_drop(t, tv->data);
    tern_tcp_conn_drop(t, tv->out);
    tv->data = tv->out = NULL;
    tv->state = TCP_VC_IDLE;
    if (tv->job != t->job) { /* a connected job's: its own allocation, forgotten */
        for (int i = 0; i < t->nremote; i++)
            if (t->remote[i] == tv) {
                t->remote[i] = t->remote[--t->nremote];
                break;
            }
        /* the dropped connections' CLOSE events still name tv: they only
         * free the connection (tern_tcp_handle_event) */
        vc->nm_vc = NULL;
        free(tv);
    }
    return TERN_OK;
}

static tern_status_t tcp_finalize(void *state)
{
    tern_tcp_t *t = state;
    if (t == NULL)
        return TERN_OK;
    /* The set closes every socket still open; no more events are read, so
     * the connection states still listed are freed here. */
    if (t->set != NULL)
        tern_sock_set_destroy(t->set);
    tern_list_t *c;
    while (t->conns.next != NULL && (c = tern_list_pop_head(&t->conns)) != NULL)
        free(TERN_CONTAINER_OF(c, tern_tcp_conn_t, link));
    free(t->vcs);
    for (int i = 0; i < t->nremote; i++)
        free(t->remote[i]);
    free(t->remote);
    free(t->live);
    free(t);
    return TERN_OK;
}

/* Block mode: the socket set's epoll fd.  Arming collects what the set has
 * (handshakes, accepts, write completions): anything there cancels the
 * sleep.  Data on a connected stream needs no arming: the engine re-polls
 * after arm, and that poll reads every live socket after its last
 * collection (tcp_poll), so data arriving later makes the set's fd
 * readable (edge-triggered inside, level outside). */
static int tcp_wait_fd(void *state)
{
    tern_tcp_t *t = state;
    return t->set != NULL ? tern_sock_set_fd(t->set) : -1;
}

static bool tcp_arm(void *state)
{
    tern_tcp_t *t = state;
    tern_sock_event_t ev;
    unsigned n = 0;
    while (n < POLL_BUDGET && tern_sock_wait(t->set, 0, &ev) == TERN_OK) {
        tern_tcp_handle_event(t, &ev);
        n++;
    }
    return n == 0;
}

static void tcp_disarm(void *state) {} /* arming changed nothing to undo */

static const tern_nm_core_ops_t tcp_core = {
    .reachable = tcp_reachable,
    .init = tcp_init,
    .finalize = tcp_finalize,
    .card = tcp_card,
    .vc_init = tcp_vc_init,
    .vc_destroy = tcp_vc_destroy,
    .vc_terminate = tcp_vc_terminate,
    .poll = tcp_poll,
    .istart_contig_msg = tern_tcp_istart_contig_msg,
    .send_noncontig = tern_tcp_send_noncontig,
};

static const tern_nm_wait_ops_t tcp_wait = {
    .wait_fd = tcp_wait_fd,
    .arm = tcp_arm,
    .disarm = tcp_disarm,
};

static const tern_nm_conn_ops_t tcp_conn = {
    .vc_init_remote = tcp_vc_init_remote,
};

static const tern_netmod_desc_t tcp_netmod = {
    .abi = TERN_NETMOD_ABI,
    .name = "tcp",
    .priority = 10,
    .reach = "any rank (TCP/IP)",
    /* two copies through the kernel's socket buffers against one: the
     * same-host copy for every rendezvous message */
    .cma_threshold = 0,
    .config = &tcp_config_table,
    .core = &tcp_core,
    .wait = &tcp_wait,
    .conn = &tcp_conn,
};
TERN_NETMOD_DEFINE(tcp_netmod)
