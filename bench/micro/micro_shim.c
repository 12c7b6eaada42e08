/*
 * bench/micro: builds the scene the C++ benchmarks measure (see
 * micro_shim.h).  Nothing here is timed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "engine/match.h"
#include "engine/netmod.h"
#include "netmods/shm/shm_internal.h"

/* After the engine's headers: a drifting prototype fails to compile here. */
#include "bench/micro/micro_shim.h"

static_assert(MICRO_REQ_SEND == TERN_REQ_SEND && MICRO_REQ_RECV == TERN_REQ_RECV,
              "request kinds as in engine_internal.h");
static_assert(MICRO_PKT_HDR_SIZE == TERN_PKT_HDR_SIZE, "packet header size as in pkt.h");

#define MICRO_RANKS 2

struct micro_engine {
    tern_context_t ctx;
    tern_worker_t worker;
    tern_vc_t vcs[MICRO_RANKS];
    tern_netmod_inst_t nm[2];   /* [0] the sink, [1] shm (loopback) */
};

/* The netmod of the fed VCs: control packets (CTS ...) go nowhere. */
static tern_status_t sink_istart(tern_vc_t *vc, const void *hdr, size_t hdrlen, const void *data,
                                 size_t len, tern_request_t **sreq)
{
    *sreq = NULL;
    return TERN_OK;
}

static tern_status_t sink_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                    size_t hdrlen)
{
    return tern_error(TERN_ERR_UNSUPPORTED, "micro sink: no payload sends");
}

/* self's lifecycle ops, the sink's data ops */
static tern_nm_core_ops_t sink_core;
static const tern_netmod_desc_t sink_desc = {
    .abi = TERN_NETMOD_ABI, .name = "micro-sink", .core = &sink_core};

micro_engine_t *micro_engine_new(void)
{
    micro_engine_t *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        tern_error(TERN_ERR_NO_MEMORY, "micro engine");
        return NULL;
    }
    tern_context_t *ctx = &e->ctx;
    if (tern_config_load(&ctx->cfg) != TERN_OK) {
        free(e);
        return NULL;
    }
    ctx->rank = 0;
    ctx->size = MICRO_RANKS;
    ctx->workers = &e->worker;
    ctx->num_workers = 1;
    sink_core = *tern_netmod_self.core;
    sink_core.istart_contig_msg = sink_istart;
    sink_core.send_noncontig = sink_noncontig;
    if (tern_netmod_instantiate(&e->nm[0], &sink_desc) != TERN_OK ||
        tern_worker_init(&e->worker, ctx, 0) != TERN_OK) {
        free(e);
        return NULL;
    }
    e->worker.vcs = e->vcs;
    e->worker.netmods = e->nm;
    for (int r = 0; r < MICRO_RANKS; r++) {
        tern_vc_t *vc = &e->vcs[r];
        vc->rank = r;
        vc->worker = &e->worker;
        vc->nm = &e->nm[0];
        vc->eager_limit = ctx->cfg.eager_limit;
        tern_list_init(&vc->lmt_wait);
    }
    return e;
}

void micro_engine_free(micro_engine_t *e)
{
    if (e == NULL)
        return;
    /* shm loopback: the netmod's own teardown (VC queues, segment, state) */
    tern_worker_t *w = &e->worker;
    for (int i = w->num_netmods - 1; i >= 0; i--) {
        for (int r = 0; r < MICRO_RANKS; r++)
            if (e->vcs[r].nm == &w->netmods[i])
                w->netmods[i].core.vc_destroy(&e->vcs[r]);
        if (w->netmods[i].initialized)
            w->netmods[i].core.finalize(w->netmods[i].state);
        tern_netmod_inst_release(&w->netmods[i]);
    }
    /* every request, queued or pooled, lives in the worker's slabs */
    tern_worker_fini(w);
    free(e);
}

tern_worker_t *micro_worker(micro_engine_t *e)
{
    return &e->worker;
}

tern_vc_t *micro_vc(micro_engine_t *e, int rank)
{
    return &e->vcs[rank];
}

size_t micro_eager_pkt(void *out, int tag, size_t len)
{
    tern_pkt_hdr_t h = {.type = TERN_PKT_EAGER, .tag = tag, .len = len};
    memcpy(out, &h, sizeof(h));
    memset((uint8_t *)out + sizeof(h), 0x5a, len);
    return sizeof(h) + len;
}

/*
 * Single-process shm loopback.  The segment is made by the real
 * tern_shm_segment_create (no addresses involved); what shm_init, attach()
 * and shm_vc_init() in netmods/shm/shm_netmod.c would then do is done here
 * by hand — keep this in step with attach() when the shm state
 * grows.  Both directions of VC 1 are bound to the pair "rank 0 writes,
 * local rank 1 reads", so the receive side polls what the send side wrote.
 */
tern_status_t micro_shm_loopback(micro_engine_t *e, size_t fbox_size, bool fastbox)
{
    tern_context_t *ctx = &e->ctx;
    if (e->worker.num_netmods > 1)
        return tern_error(TERN_ERR_INVALID_PARAM, "micro: shm loopback set up twice");
    const tern_netmod_desc_t *d = tern_netmod_find("shm");
    if (d == NULL)
        return tern_error(TERN_ERR_UNSUPPORTED, "micro: no shm netmod registered");
    tern_netmod_inst_t *n = &e->nm[1];
    tern_status_t st = tern_netmod_instantiate(n, d);
    if (st != TERN_OK)
        return st;
    tern_shm_config_t *cfg = n->config;
    if (fbox_size != 0)
        cfg->fbox_size = fbox_size;
    snprintf(ctx->pmix.nspace, sizeof(ctx->pmix.nspace), "micro.%d", (int)getpid());

    tern_shm_t *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "shm netmod state");
    s->ctx = ctx;
    s->worker = &e->worker;
    s->cfg = cfg;
    s->wake_fd = -1;
    s->nlocal = MICRO_RANKS;
    s->my_idx = 0;
    s->numa_node = -1; /* not placed: attach()'s tern_shm_place_inbox is left out */
    tern_shm_segment_name(s, s->seg_name, sizeof(s->seg_name));
    st = tern_shm_segment_create(s);
    if (st != TERN_OK) {
        free(s);
        return st;
    }
    tern_shm_segment_unlink(s); /* nobody else attaches: the name can go now */

    /* the netmod's own setup (attach's tail and shm_vc_init's core) */
    st = tern_shm_use_segment(s);
    tern_vc_t *vc = &e->vcs[1];
    if (st == TERN_OK)
        st = tern_shm_vc_setup(s, vc, 1, (int)getpid());
    if (st != TERN_OK) {
        free(s->vcs);
        tern_shm_segment_detach(s);
        free(s);
        return st;
    }
    /* Loopback: we read our own writes (pair 0 -> 1 in both directions). */
    tern_shm_vc_t *v = &s->vcs[1];
    tern_shm_chan_bind(s, &v->rx, 1, 0);
    /* Writer-side only: no unit fits the fastbox, so every unit takes a
     * cell (the reader still checks the fastbox ring first, as always). */
    if (!fastbox)
        s->fbox_cap = 0;

    vc->nm = n;
    vc->nm_state = s;
    /* as setup_netmods() in engine/context.c: shm polls */
    n->state = s;
    n->initialized = true;
    e->worker.num_netmods = 2;
    e->worker.pollers[0] = n;
    e->worker.num_pollers = 1;
    return TERN_OK;
}

tern_request_t *micro_request_alloc(tern_worker_t *w, int kind)
{
    return tern_request_alloc(w, kind);
}

void micro_request_release(tern_request_t *req)
{
    tern_request_release(req);
}
