/*
 * Ports: point-to-point connections between processes of different jobs,
 * without a collective (MPI_Open_port / MPI_Comm_accept / MPI_Comm_connect;
 * MPICH's connect_to_root).  A server opens a port and hands its name out
 * (a file, argv, tern_publish); each client connects to it alone and the
 * server takes the clients as they come with tern_port_accept.  Each side
 * then sees the other as a one-rank job (tern_job_peer(job, 0)), reached
 * from worker 0, over the first allowed netmod with ports (tcp), even on
 * one node.  Used by the iofwd daemon (issue 12), which a launcher did not
 * start: it works in a singleton context.
 *
 * Port name: "tern-port:1:<job hash, 8 hex>:<rank>:<the netmod's card, hex>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "engine/log.h"
#include "engine/netmod.h"

#define PORT_PREFIX "tern-port:1:"
#define CARD_MAX ((TERN_PORT_NAME_MAX - 40) / 2)

/* the port netmod, initialised on worker 0 */
static tern_status_t port_netmod(tern_context_t *ctx, int *nm)
{
    if (ctx->port_nm != 0) {
        *nm = ctx->port_nm;
        return TERN_OK;
    }
    tern_status_t st = tern_pick_remote_netmod(ctx, true, nm);
    if (st == TERN_OK)
        st = tern_netmod_ensure(&ctx->workers[0], *nm);
    return st;
}

tern_status_t tern_port_open(tern_context_t *ctx, char port[TERN_PORT_NAME_MAX])
{
    if (ctx == NULL || port == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_port_open: NULL context or name");
    int nm;
    tern_status_t st = port_netmod(ctx, &nm);
    if (st != TERN_OK)
        return st;
    tern_netmod_inst_t *n = &ctx->workers[0].netmods[nm];
    unsigned char card[CARD_MAX];
    size_t len = sizeof(card);
    if ((st = n->conn->port_card(n->state, card, &len)) != TERN_OK)
        return st;
    int off = snprintf(port, TERN_PORT_NAME_MAX, PORT_PREFIX "%08x:%d:",
                       tern_job_hash(ctx->pmix.nspace), ctx->rank);
    for (size_t i = 0; i < len; i++)
        off += snprintf(port + off, TERN_PORT_NAME_MAX - (size_t)off, "%02x", card[i]);
    ctx->port_nm = nm; /* connections naming an unknown job are accepted from now on */
    return TERN_OK;
}

static tern_status_t parse(const char *port, uint32_t *job, int *rank, unsigned char *card,
                           size_t *len)
{
    unsigned j;
    int r, off = 0;
    if (strncmp(port, PORT_PREFIX, strlen(PORT_PREFIX)) != 0 ||
        sscanf(port + strlen(PORT_PREFIX), "%8x:%d:%n", &j, &r, &off) != 2 || off == 0 || r < 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_port_connect: \"%.60s\" is not a port "
                          "name of this version", port);
    const char *hex = port + strlen(PORT_PREFIX) + off;
    size_t n = strlen(hex);
    if (n == 0 || n % 2 != 0 || n / 2 > CARD_MAX)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_port_connect: port name's card has %zu "
                          "hex digits", n);
    for (size_t i = 0; i < n / 2; i++) {
        unsigned b;
        if (sscanf(hex + 2 * i, "%2x", &b) != 1)
            return tern_error(TERN_ERR_INVALID_PARAM, "tern_port_connect: port name's card is "
                              "not hex at digit %zu", 2 * i);
        card[i] = (unsigned char)b;
    }
    *job = j;
    *rank = r;
    *len = n / 2;
    return TERN_OK;
}

/* a one-rank job for a port peer: VC on worker 0, the other workers' failed */
static tern_job_t *peer_new(tern_context_t *ctx, int nm, uint32_t job, int rank)
{
    char name[64];
    snprintf(name, sizeof(name), "port:%08x:%d", job, rank);
    tern_job_t *j = tern_job_new(ctx, name, 1, nm);
    if (j == NULL)
        return NULL;
    j->port = true;
    /* a port peer leaves by closing its connection (there is no collective
     * to tell us first): what is pending on it fails, without a warning */
    j->vcs[0][0].port_peer = true;
    for (int k = 1; k < ctx->num_workers; k++)
        tern_vc_close(&j->vcs[k][0], "a port peer is reached from worker 0 only");
    return j;
}

tern_status_t tern_port_connect(tern_context_t *ctx, const char *port, tern_job_t **out)
{
    if (ctx == NULL || port == NULL || out == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_port_connect: NULL argument");
    *out = NULL;
    unsigned char card[CARD_MAX];
    size_t len = 0;
    uint32_t job = 0;
    int rank = 0, nm = 0;
    tern_status_t st = parse(port, &job, &rank, card, &len);
    if (st == TERN_OK && job == tern_job_hash(ctx->pmix.nspace))
        st = tern_error(TERN_ERR_INVALID_PARAM, "tern_port_connect: the port is this job's");
    if (st == TERN_OK)
        st = port_netmod(ctx, &nm);
    if (st != TERN_OK)
        return st;
    tern_job_t *j = peer_new(ctx, nm, job, rank);
    if (j == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "tern_port_connect: a VC");
    tern_vc_t *vc = &j->vcs[0][0];
    st = vc->nm->conn->vc_init_card(vc->nm_state, vc, card, len, job, rank);
    if (st == TERN_OK)
        st = tern_job_publish(ctx, j);
    if (st != TERN_OK) {
        tern_job_close_vcs(j);
        tern_job_free(j);
        return st;
    }
    *out = j;
    return TERN_OK;
}

tern_vc_t *tern_port_incoming(tern_worker_t *w, void *nm_state, uint32_t job, int rank)
{
    tern_context_t *ctx = w->ctx;
    if (ctx->port_nm == 0 || w->index != 0 || ctx->naccepted == TERN_MAX_JOBS ||
        w->netmods[ctx->port_nm].state != nm_state)
        return NULL;
    tern_job_t *j = peer_new(ctx, ctx->port_nm, job, rank);
    if (j == NULL)
        return NULL;
    if (tern_job_publish(ctx, j) != TERN_OK) {
        tern_job_free(j);
        return NULL;
    }
    ctx->accepted[ctx->naccepted++] = j;
    return &j->vcs[0][0];
}

tern_status_t tern_port_accept(tern_context_t *ctx, tern_job_t **out)
{
    if (ctx == NULL || out == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_port_accept: NULL argument");
    *out = NULL;
    if (ctx->port_nm == 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_port_accept: no port is open");
    tern_progress(&ctx->workers[0]);
    if (ctx->naccepted == 0)
        return TERN_ERR_AGAIN; /* nobody yet: not an error to record */
    *out = ctx->accepted[0];
    memmove(&ctx->accepted[0], &ctx->accepted[1], (size_t)--ctx->naccepted * sizeof(ctx->accepted[0]));
    return TERN_OK;
}
