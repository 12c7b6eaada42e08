/*
 * What the provider's tests share (ofi_hints.c, ofi_ops.c): CHECK, the
 * hints tern is asked with, opening a whole endpoint, and a completion
 * reader that keeps what it read but was not asked for (so a test waits for
 * one operation's completion whatever order they come in).  The programs
 * use libfabric's public API only: the provider is loaded by libfabric from
 * FI_PROVIDER_PATH (tests/ofi/lib.sh), never linked.  Test code only.
 */
#ifndef TERN_TEST_OFI_UTIL_H
#define TERN_TEST_OFI_UTIL_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

/* failed checks: defined once per program (ofi_hints.c, ofi_ops.c) */
extern int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            fflush(stdout);                                                                        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* ret == want, printing both as libfabric errors otherwise */
#define CHECK_RET(ret, want, what)                                                                 \
    do {                                                                                           \
        long long r_ = (long long)(ret), w_ = (long long)(want);                                   \
        CHECK(r_ == w_, "%s: %lld (%s), want %lld (%s)", what, r_,                                 \
              r_ < 0 ? fi_strerror((int)-r_) : "ok", w_, w_ < 0 ? fi_strerror((int)-w_) : "ok");   \
    } while (0)

static inline struct fi_info *tern_hints(void)
{
    struct fi_info *h = fi_allocinfo();
    if (h == NULL) {
        printf("FAIL: fi_allocinfo\n");
        exit(1);
    }
    h->fabric_attr->prov_name = strdup("tern");
    h->ep_attr->type = FI_EP_RDM;
    return h;
}

static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A whole endpoint: fabric, domain, AV, one CQ for both directions. */
struct tep {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    enum fi_cq_format format;
    /* completions read but not taken yet */
    struct fi_cq_err_entry stash[256];
    fi_addr_t stash_src[256];
    int nstash;
};

/* Open ep's objects on t->info (fabric and domain only when not open yet). */
static inline int tep_open_ep(struct tep *t, enum fi_cq_format format, uint64_t bind_flags)
{
    int ret;
    if (t->fabric == NULL && (ret = fi_fabric(t->info->fabric_attr, &t->fabric, NULL)) != 0)
        return ret;
    if (t->domain == NULL && (ret = fi_domain(t->fabric, t->info, &t->domain, NULL)) != 0)
        return ret;
    if (t->av == NULL) {
        struct fi_av_attr aa = {.type = FI_AV_TABLE};
        if ((ret = fi_av_open(t->domain, &aa, &t->av, NULL)) != 0)
            return ret;
    }
    struct fi_cq_attr ca = {.format = format, .wait_obj = FI_WAIT_UNSPEC};
    t->format = format;
    t->nstash = 0;
    if ((ret = fi_cq_open(t->domain, &ca, &t->cq, NULL)) != 0)
        return ret;
    if ((ret = fi_endpoint(t->domain, t->info, &t->ep, NULL)) != 0)
        return ret;
    if ((ret = fi_ep_bind(t->ep, &t->av->fid, 0)) != 0 ||
        (ret = fi_ep_bind(t->ep, &t->cq->fid, FI_TRANSMIT | FI_RECV | bind_flags)) != 0)
        return ret;
    return fi_enable(t->ep);
}

static inline void tep_close_ep(struct tep *t)
{
    if (t->ep != NULL)
        CHECK_RET(fi_close(&t->ep->fid), 0, "fi_close(ep)");
    if (t->cq != NULL)
        CHECK_RET(fi_close(&t->cq->fid), 0, "fi_close(cq)");
    t->ep = NULL;
    t->cq = NULL;
}

static inline void tep_close(struct tep *t)
{
    tep_close_ep(t);
    if (t->av != NULL)
        CHECK_RET(fi_close(&t->av->fid), 0, "fi_close(av)");
    if (t->domain != NULL)
        CHECK_RET(fi_close(&t->domain->fid), 0, "fi_close(domain)");
    if (t->fabric != NULL)
        CHECK_RET(fi_close(&t->fabric->fid), 0, "fi_close(fabric)");
    t->av = NULL;
    t->domain = NULL;
    t->fabric = NULL;
}

/* Read what the CQ has into the stash (one call); the number read. */
static inline int tep_poll(struct tep *t)
{
    /* fi_cq_readfrom writes an array of the CQ's own entry type */
    struct fi_cq_tagged_entry raw[8];
    fi_addr_t src[8];
    if (t->nstash + 8 > 256)
        return 0;
    ssize_t n = fi_cq_readfrom(t->cq, raw, 8, src);
    if (n == -FI_EAVAIL) {
        struct fi_cq_err_entry *x = &t->stash[t->nstash];
        memset(x, 0, sizeof(*x));
        if (fi_cq_readerr(t->cq, x, 0) == 1) {
            t->stash_src[t->nstash++] = FI_ADDR_NOTAVAIL;
            return 1;
        }
        return 0;
    }
    for (ssize_t i = 0; i < n; i++) {
        struct fi_cq_err_entry *x = &t->stash[t->nstash];
        memset(x, 0, sizeof(*x));
        switch (t->format) {
        case FI_CQ_FORMAT_CONTEXT:
            x->op_context = ((struct fi_cq_entry *)raw)[i].op_context;
            break;
        case FI_CQ_FORMAT_MSG: {
            const struct fi_cq_msg_entry *m = (struct fi_cq_msg_entry *)raw + i;
            x->op_context = m->op_context;
            x->flags = m->flags;
            x->len = m->len;
            break;
        }
        case FI_CQ_FORMAT_DATA: {
            const struct fi_cq_data_entry *d = (struct fi_cq_data_entry *)raw + i;
            x->op_context = d->op_context;
            x->flags = d->flags;
            x->len = d->len;
            x->buf = d->buf;
            x->data = d->data;
            break;
        }
        default: {
            const struct fi_cq_tagged_entry *g = raw + i;
            x->op_context = g->op_context;
            x->flags = g->flags;
            x->len = g->len;
            x->buf = g->buf;
            x->data = g->data;
            x->tag = g->tag;
            break;
        }
        }
        t->stash_src[t->nstash++] = src[i];
    }
    return n > 0 ? (int)n : 0;
}

/* The completion of the operation with context ctx (success or error),
 * reading the CQ until it comes; false after `secs` seconds (a hang guard,
 * not a timing assertion: the scripts bound the runs with timeout too). */
static inline bool tep_wait(struct tep *t, void *ctx, struct fi_cq_err_entry *out, fi_addr_t *src,
                            double secs)
{
    double end = now_s() + secs;
    for (;;) {
        for (int i = 0; i < t->nstash; i++) {
            if (t->stash[i].op_context == ctx) {
                if (out != NULL)
                    *out = t->stash[i];
                if (src != NULL)
                    *src = t->stash_src[i];
                t->stash[i] = t->stash[t->nstash - 1];
                t->stash_src[i] = t->stash_src[t->nstash - 1];
                t->nstash--;
                return true;
            }
        }
        if (tep_poll(t) == 0 && now_s() > end)
            return false;
    }
}

#endif
