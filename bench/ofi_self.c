/*
 * ofi_self — the software cost of one message, with no transport: a process
 * sends 8 bytes to itself (the self netmod) N times, each time posting the
 * receive, sending, and reaping the completion, through
 *   core    tern_irecv + tern_isend + tern_wait        (include/tern/core.h)
 *   tagged  tern_trecv + tern_tsend(INJECT) + tern_cq_read  (tern/tagged.h)
 *   ofi     fi_trecv + fi_tinject + fi_cq_read through libtern-fi.so
 * so the difference between two modes is what a layer costs per message
 * (the provider over the tagged API over the core).  One mode per process
 * (one tern context per process); bench/ofi_compare.sh runs them in turn.
 * Prints "MODE ns-per-message".  No PMIx: a job of one wired by its own
 * address (the provider does the same outside a PMIx job).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tern/tern.h>

#ifdef HAVE_LIBFABRIC_BENCH
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>
#include <rdma/fabric.h>
#endif

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define DIE(...)                                                                         \
    do {                                                                                 \
        fprintf(stderr, "ofi_self: " __VA_ARGS__);                                       \
        fprintf(stderr, "\n");                                                           \
        exit(1);                                                                         \
    } while (0)

static tern_worker_t *tern_self(tern_context_t **ctx)
{
    tern_init_params_t p = {.struct_size = sizeof(p), .fields = TERN_INIT_F_WIREUP,
                            .wireup = TERN_WIREUP_ADDRESS, .rank = 0, .size = 1,
                            .job = "ofi-self"};
    if (tern_init_ex(&p, ctx) != TERN_OK)
        DIE("tern_init_ex: %s", tern_last_error());
    tern_worker_t *w = tern_context_worker(*ctx);
    unsigned char a[TERN_ADDRESS_MAX];
    size_t len = sizeof(a);
    int peer;
    if (tern_worker_address(w, a, &len) != TERN_OK || tern_peer_insert(*ctx, a, len, &peer) != TERN_OK)
        DIE("own address: %s", tern_last_error());
    return w;
}

static double run_core(tern_worker_t *w, long n)
{
    uint64_t out = 1, in = 0;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        tern_request_t *r, *s;
        tern_status_t st = tern_irecv(w, &in, sizeof(in), 0, 1, 1, NULL, &r);
        tern_status_t ss = tern_isend(w, &out, sizeof(out), 0, 1, 1, &s);
        if (ss == TERN_INPROGRESS)
            ss = tern_wait(w, s, NULL);
        if (st == TERN_INPROGRESS)
            st = tern_wait(w, r, NULL);
        if (st != TERN_OK || ss != TERN_OK)
            DIE("core: %s", tern_last_error());
    }
    return (now_ns() - t0) / (double)n;
}

static double run_tagged(tern_worker_t *w, long n)
{
    uint64_t out = 1, in = 0;
    tern_op_t rop = {.flags = TERN_OP_CQ, .context = &in};
    tern_op_t sop = {.flags = TERN_OP_INJECT};
    tern_cq_entry_t e[16];
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        if (tern_trecv(w, &in, sizeof(in), 0, 1, 0, 1, &rop, NULL) != TERN_OK ||
            tern_tsend(w, &out, sizeof(out), 0, 1, 1, &sop, NULL) != TERN_OK)
            DIE("tagged: %s", tern_last_error());
        int k;
        while ((k = tern_cq_read(w, e, 16)) == 0)
            ;
        if (k != 1 || e[0].status != TERN_OK)
            DIE("tagged: %d entries", k);
    }
    return (now_ns() - t0) / (double)n;
}

#ifdef HAVE_LIBFABRIC_BENCH
static double run_ofi(long n)
{
    struct fi_info *hints = fi_allocinfo(), *info;
    hints->caps = FI_TAGGED;
    hints->ep_attr->type = FI_EP_RDM;
    hints->mode = FI_CONTEXT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->fabric_attr->prov_name = strdup("tern");
    if (fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, hints, &info) != 0)
        DIE("fi_getinfo: no tern provider (FI_PROVIDER_PATH?)");
    struct fid_fabric *fab;
    struct fid_domain *dom;
    struct fid_ep *ep;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fi_av_attr aa = {.type = FI_AV_TABLE};
    struct fi_cq_attr ca = {.format = FI_CQ_FORMAT_TAGGED};
    if (fi_fabric(info->fabric_attr, &fab, NULL) || fi_domain(fab, info, &dom, NULL) ||
        fi_endpoint(dom, info, &ep, NULL) || fi_av_open(dom, &aa, &av, NULL) ||
        fi_cq_open(dom, &ca, &cq, NULL) || fi_ep_bind(ep, &av->fid, 0) ||
        fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) || fi_enable(ep))
        DIE("opening the endpoint");
    char name[8192];
    size_t len = sizeof(name);
    fi_addr_t self;
    if (fi_getname(&ep->fid, name, &len) || fi_av_insert(av, name, 1, &self, 0, NULL) != 1)
        DIE("own name");
    uint64_t out = 1, in = 0;
    struct fi_context ctx;
    struct fi_cq_tagged_entry e[16];
    double t0 = 0;
    for (long i = -n / 10; i < n; i++) { /* a tenth more first: warm-up */
        if (i == 0)
            t0 = now_ns();
        if (fi_trecv(ep, &in, sizeof(in), NULL, self, 1, 0, &ctx) ||
            fi_tinject(ep, &out, sizeof(out), self, 1))
            DIE("ofi: post");
        ssize_t k;
        while ((k = fi_cq_read(cq, e, 16)) == -FI_EAGAIN)
            ;
        if (k != 1)
            DIE("ofi: fi_cq_read %zd", k);
    }
    double t = (now_ns() - t0) / (double)n;
    fi_close(&ep->fid);
    fi_close(&cq->fid);
    fi_close(&av->fid);
    fi_close(&dom->fid);
    fi_close(&fab->fid);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    return t;
}
#endif

int main(int argc, char **argv)
{
    if (argc < 2)
        DIE("usage: ofi_self core|tagged|ofi [messages]");
    long n = argc > 2 ? atol(argv[2]) : 1000000;
    double t;
    if (strcmp(argv[1], "ofi") == 0) {
#ifdef HAVE_LIBFABRIC_BENCH
        t = run_ofi(n);
#else
        DIE("built without libfabric");
#endif
    } else {
        tern_context_t *ctx;
        tern_worker_t *w = tern_self(&ctx);
        bool core = strcmp(argv[1], "core") == 0;
        if (!core && strcmp(argv[1], "tagged") != 0)
            DIE("no mode %s", argv[1]);
        (core ? run_core : run_tagged)(w, n / 10);
        t = (core ? run_core : run_tagged)(w, n);
        tern_finalize(ctx);
    }
    printf("%s %.1f\n", argv[1], t);
    return 0;
}
