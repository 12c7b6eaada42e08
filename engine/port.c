/*
 * Ports: point-to-point connections between processes of different jobs,
 * without a collective (MPI_Open_port / MPI_Comm_accept / MPI_Comm_connect;
 * MPICH's connect_to_root).  A server opens a port and hands its name out
 * (a file, argv, tern_publish); each client connects to it alone and the
 * server takes the clients as they come with tern_port_accept.  Each side
 * then sees the other as a one-rank job (tern_job_peer(job, 0)), reached
 * from worker 0, even on one node.  Used by the iofwd daemon, which a
 * launcher did not start: it works in a singleton context.
 *
 * A port's name is the server's worker-0 address (docs/addresses.md) with
 * the cards of the netmods that take ports (a conn table whose port_unable
 * says nothing: tcp, verbs, dpdk on a shared medium):
 *   "tern-port:2:<the address, hex>"
 * A client inserts it as any other job's address: its VC goes over the
 * highest-priority netmod both have (engine/peer.c) and connects on the
 * first send; the server's netmod, reached by a process it knows nothing
 * of, asks tern_port_incoming for a VC.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/address.h"
#include "engine/engine_internal.h"
#include "engine/log.h"
#include "engine/netmod.h"

#define PORT_PREFIX "tern-port:2:"
#define PORT_ADDR_MAX ((TERN_PORT_NAME_MAX - sizeof(PORT_PREFIX)) / 2)

/* every netmod of worker 0 that may take or make port connections */
static tern_status_t port_netmods(tern_context_t *ctx, const char *what)
{
    int n = 0;
    tern_worker_t *w = &ctx->workers[0];
    tern_status_t st = tern_netmods_ensure_conn(w, true, &n);
    if (st != TERN_OK || n > 0)
        return st;
    char why[512] = ""; /* those that could and will not say why */
    size_t k = 0;
    for (int i = 1; i < w->num_netmods && k < sizeof(why); i++) {
        tern_netmod_inst_t *nm = &w->netmods[i];
        const char *no = nm->initialized && nm->conn != NULL && nm->conn->port_unable != NULL
                             ? nm->conn->port_unable(nm->state)
                             : NULL;
        if (no != NULL)
            k += (size_t)snprintf(why + k, sizeof(why) - k, "; %s", no);
    }
    return tern_error(TERN_ERR_UNSUPPORTED,
                      "%s: no netmod here takes ports (tcp and verbs do, "
                      "dpdk on a shared medium; netmods built: %s%s%s)%s",
                      what, tern_netmod_names(), ctx->cfg.netmods[0] ? ", TERN_NETMODS=" : "",
                      ctx->cfg.netmods, why);
}

tern_status_t tern_port_open(tern_context_t *ctx, char port[TERN_PORT_NAME_MAX])
{
    if (ctx == NULL || port == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_port_open: NULL context or name");
    tern_status_t st = port_netmods(ctx, "tern_port_open");
    void *addr = NULL;
    size_t len = 0;
    if (st == TERN_OK)
        st = tern_worker_make_address(&ctx->workers[0], true, &addr, &len);
    if (st == TERN_OK && len > PORT_ADDR_MAX)
        st = tern_error(TERN_ERR_NO_RESOURCE,
                        "tern_port_open: the address has %zu bytes, a "
                        "port name takes %zu (TERN_PORT_NAME_MAX): fewer TERN_TCP_ADDRS?",
                        len, (size_t)PORT_ADDR_MAX);
    if (st != TERN_OK) {
        free(addr);
        return st;
    }
    int off = snprintf(port, TERN_PORT_NAME_MAX, PORT_PREFIX);
    for (size_t i = 0; i < len; i++)
        off += snprintf(port + off, TERN_PORT_NAME_MAX - (size_t)off, "%02x",
                        ((const unsigned char *)addr)[i]);
    free(addr);
    /* the netmods that take ports poll from now on, even if no VC of the
     * job used them (a wire-up without a launcher left them unpolled) */
    for (int i = 1; i < ctx->workers[0].num_netmods; i++) {
        tern_netmod_inst_t *n = &ctx->workers[0].netmods[i];
        if (n->initialized && n->conn != NULL)
            tern_worker_poll_netmod(&ctx->workers[0], n);
    }
    ctx->port_open = true; /* connections naming an unknown job are accepted from now on */
    return TERN_OK;
}

/* the address bytes a port name carries, into buf (PORT_ADDR_MAX) */
static tern_status_t parse(const char *port, unsigned char *buf, size_t *len)
{
    if (strncmp(port, PORT_PREFIX, strlen(PORT_PREFIX)) != 0)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_port_connect: \"%.60s\" is not a port "
                          "name of this version (\"" PORT_PREFIX "...\")",
                          port);
    const char *hex = port + strlen(PORT_PREFIX);
    size_t n = strnlen(hex, TERN_PORT_NAME_MAX);
    if (n == 0 || n % 2 != 0 || n / 2 > PORT_ADDR_MAX)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_port_connect: the port name's address "
                          "has %zu hex digits",
                          n);
    for (size_t i = 0; i < n / 2; i++) {
        int hi = tern_hex_digit(hex[2 * i]), lo = tern_hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return tern_error(TERN_ERR_INVALID_PARAM,
                              "tern_port_connect: the port name is not "
                              "lower-case hex at digit %zu",
                              2 * i + (hi < 0 ? 0 : 1));
        buf[i] = (unsigned char)(hi << 4 | lo);
    }
    *len = n / 2;
    return TERN_OK;
}

/* a one-rank job for a port peer: VC on worker 0, the other workers' closed */
static tern_job_t *peer_new(tern_context_t *ctx, uint32_t job, int rank)
{
    char name[64];
    snprintf(name, sizeof(name), "port:%08x:%d", job, rank);
    tern_job_t *j = tern_job_new(ctx, name, 1);
    if (j == NULL)
        return NULL;
    j->port = true;
    /* a port peer leaves by closing its connection (there is no collective
     * to tell us first): what is pending on it fails, without a warning */
    j->vcs[0][0].port_peer = true;
    for (int k = 1; k < ctx->num_workers; k++)
        tern_vc_unwired(&j->vcs[k][0], "a port peer is reached from worker 0 only");
    return j;
}

tern_status_t tern_port_connect(tern_context_t *ctx, const char *port, tern_job_t **out)
{
    if (ctx == NULL || port == NULL || out == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_port_connect: NULL argument");
    *out = NULL;
    unsigned char buf[PORT_ADDR_MAX];
    size_t len = 0;
    tern_addr_t a;
    tern_status_t st = parse(port, buf, &len);
    if (st == TERN_OK)
        st = tern_addr_decode(buf, len, "tern_port_connect: the port name", &a);
    if (st == TERN_OK && a.job == ctx->job_hash)
        st = tern_error(TERN_ERR_INVALID_PARAM, "tern_port_connect: the port is this job's");
    if (st == TERN_OK)
        st = port_netmods(ctx, "tern_port_connect");
    if (st != TERN_OK)
        return st;
    a.worker = 0; /* ports are worker 0's on both sides */
    tern_job_t *j = peer_new(ctx, a.job, a.rank);
    if (j == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "tern_port_connect: a VC");
    tern_vc_t *vc = &j->vcs[0][0];
    tern_vc_rewire(vc);
    st = tern_remote_vc_init(&ctx->workers[0], vc, &a, true);
    if (st != TERN_OK)
        tern_vc_unwired(vc, "no netmod reaches the port");
    if (st == TERN_OK)
        st = tern_job_publish(ctx, j);
    if (st != TERN_OK) {
        char why[512];
        snprintf(why, sizeof(why), "%s", tern_last_error());
        tern_job_close_vcs(j);
        tern_job_free(j);
        return tern_error(st, "%s", why);
    }
    *out = j;
    return TERN_OK;
}

tern_vc_t *tern_port_incoming(tern_worker_t *w, void *nm_state, uint32_t job, int rank)
{
    tern_context_t *ctx = w->ctx;
    if (!ctx->port_open || w->index != 0 || ctx->naccepted == TERN_MAX_JOBS)
        return NULL;
    tern_netmod_inst_t *n = NULL;
    for (int i = 1; i < w->num_netmods && n == NULL; i++)
        if (w->netmods[i].initialized && w->netmods[i].state == nm_state)
            n = &w->netmods[i];
    if (n == NULL || n->conn == NULL ||
        (n->conn->port_unable != NULL && n->conn->port_unable(n->state) != NULL))
        return NULL;
    tern_job_t *j = peer_new(ctx, job, rank);
    if (j == NULL)
        return NULL;
    tern_vc_t *vc = &j->vcs[0][0];
    tern_vc_rewire(vc);
    vc->nm = n;
    vc->nm_state = n->state;
    if (tern_job_publish(ctx, j) != TERN_OK) {
        tern_job_free(j);
        return NULL;
    }
    ctx->accepted[ctx->naccepted++] = j;
    return vc;
}

tern_status_t tern_port_accept(tern_context_t *ctx, tern_job_t **out)
{
    if (ctx == NULL || out == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_port_accept: NULL argument");
    *out = NULL;
    if (!ctx->port_open)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_port_accept: no port is open");
    tern_progress(&ctx->workers[0]);
    if (ctx->naccepted == 0)
        return TERN_ERR_AGAIN; /* nobody yet: not an error to record */
    *out = ctx->accepted[0];
    memmove(&ctx->accepted[0], &ctx->accepted[1],
            (size_t)--ctx->naccepted * sizeof(ctx->accepted[0]));
    return TERN_OK;
}
