/*
 * fi_getinfo: one FI_EP_RDM fi_info, the hints checked field by field.
 *
 * A hint tern cannot honour refuses the whole request with -FI_ENODATA and
 * an FI_LOG_INFO line naming the field (FI_LOG_LEVEL=info shows it), as
 * libfabric asks of a provider; a zero hint takes tern's value.  Output
 * values are at least the requested ones.  The same checks run on the
 * fi_info given to fi_domain and fi_endpoint (tfi_check_info).
 *
 * What tern offers, and why (docs/libfabric.md):
 *  - caps FI_TAGGED | FI_MSG | FI_RMA | FI_ATOMIC with FI_SEND | FI_RECV |
 *    FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, FI_DIRECTED_RECV,
 *    FI_SOURCE, FI_LOCAL_COMM | FI_REMOTE_COMM.
 *  - mode 0: no FI_CONTEXT, no prefix (FI_CONTEXT / FI_CONTEXT2 in the
 *    hints are accepted and cleared; FI_PEEK | FI_CLAIM uses the
 *    fi_context the API requires for it whatever the mode).
 *  - FI_FORMAT_UNSPEC: names are fi_getname's opaque bytes (tern worker
 *    addresses, or a compact name inside a PMIx job); node and service are
 *    not resolved; a dest_addr hint that is a tern name is handed back.
 *  - data_progress FI_PROGRESS_MANUAL only: tern moves data when fi_cq_read
 *    or fi_cntr_read is called, so an FI_PROGRESS_AUTO hint is refused;
 *    control operations complete within their call (FI_PROGRESS_AUTO is
 *    reported for them, a MANUAL hint kept).
 *  - threading: FI_THREAD_DOMAIN runs lock-free; every other model is met
 *    with the domain's mutex.
 *  - mr_mode 0 (tern needs no registration; any hint bits are accepted;
 *    one-sided addresses are offsets into the registration, keys the
 *    application's), with FI_MR_VIRT_ADDR, FI_MR_PROV_KEY and
 *    FI_MR_ALLOCATED kept when asked (virtual addresses, the provider's
 *    keys), or the legacy FI_MR_BASIC / FI_MR_SCALABLE when that alone is
 *    asked.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ofi/tern_fi.h"

/* defined in fi_fabric.c / fi_domain.c: is this fid one of ours? */
bool tfi_is_fabric(const struct fid_fabric *f);
bool tfi_is_domain(const struct fid_domain *d);

#define REFUSE(...)                                                                                \
    do {                                                                                           \
        TFI_INFO(FI_LOG_CORE, "hints refused: " __VA_ARGS__);                                      \
        return -FI_ENODATA;                                                                        \
    } while (0)

#define CHECK_MAX(field, have, max)                                                                \
    do {                                                                                           \
        if ((size_t)(have) > (size_t)(max))                                                        \
            REFUSE("%s %zu: tern offers at most %zu\n", field, (size_t)(have), (size_t)(max));     \
    } while (0)

static int check_bits(const char *field, uint64_t have, uint64_t ours, enum fi_type type)
{
    uint64_t extra = have & ~ours;
    if (extra != 0) {
        char a[512], b[512];
        fi_tostr_r(a, sizeof(a), &extra, type);
        fi_tostr_r(b, sizeof(b), &ours, type);
        REFUSE("%s: %s not supported (tern offers %s)\n", field, a, b);
    }
    return 0;
}

/* Endpoints (tern workers) a context will have: the provider's setting,
 * else tern's own, else 1; reported as ep_cnt. */
static size_t workers_configured(void)
{
    struct tfi_settings s;
    tfi_settings(&s);
    if (s.num_workers > 0)
        return (size_t)s.num_workers;
    const char *v = getenv("TERN_NUM_WORKERS");
    long n = v != NULL ? strtol(v, NULL, 10) : 1;
    return n >= 1 && n <= 64 ? (size_t)n : 1;
}

static size_t inject_size(void)
{
    struct tfi_settings s;
    tfi_settings(&s);
    return s.inject_size;
}

static int check_tclass(const char *field, uint32_t tclass)
{
    if (tclass != FI_TC_UNSPEC && tclass != FI_TC_BEST_EFFORT)
        REFUSE("%s 0x%x: tern has no traffic classes (FI_TC_UNSPEC or FI_TC_BEST_EFFORT)\n", field,
               tclass);
    return 0;
}

static int check_tx(const struct fi_tx_attr *tx)
{
    int ret;
    if ((ret = check_bits("tx_attr->caps", tx->caps, TFI_CAPS, FI_TYPE_CAPS)) ||
        (ret = check_bits("tx_attr->op_flags", tx->op_flags, TFI_TX_OP_FLAGS, FI_TYPE_OP_FLAGS)) ||
        (ret = check_bits("tx_attr->msg_order", tx->msg_order, TFI_MSG_ORDER, FI_TYPE_MSG_ORDER)))
        return ret;
    if (tx->comp_order != FI_ORDER_NONE)
        REFUSE("tx_attr->comp_order: completions come as operations complete (FI_ORDER_NONE)\n");
    CHECK_MAX("tx_attr->inject_size", tx->inject_size, inject_size());
    CHECK_MAX("tx_attr->iov_limit", tx->iov_limit, TERN_IOV_MAX);
    CHECK_MAX("tx_attr->rma_iov_limit", tx->rma_iov_limit, 1); /* one remote range per operation */
    return check_tclass("tx_attr->tclass", tx->tclass);
}

static int check_rx(const struct fi_rx_attr *rx)
{
    int ret;
    if ((ret = check_bits("rx_attr->caps", rx->caps, TFI_CAPS, FI_TYPE_CAPS)) ||
        (ret = check_bits("rx_attr->op_flags", rx->op_flags, TFI_RX_OP_FLAGS, FI_TYPE_OP_FLAGS)) ||
        (ret = check_bits("rx_attr->msg_order", rx->msg_order, TFI_MSG_ORDER, FI_TYPE_MSG_ORDER)))
        return ret;
    if (rx->comp_order != FI_ORDER_NONE)
        REFUSE("rx_attr->comp_order: completions come as operations complete (FI_ORDER_NONE)\n");
    CHECK_MAX("rx_attr->iov_limit", rx->iov_limit, TERN_IOV_MAX);
    return 0;
}

static int check_ep(const struct fi_ep_attr *ep)
{
    if (ep->type != FI_EP_UNSPEC && ep->type != FI_EP_RDM)
        REFUSE("ep_attr->type %s: tern offers FI_EP_RDM only\n",
               fi_tostr(&ep->type, FI_TYPE_EP_TYPE));
    if (ep->protocol != FI_PROTO_UNSPEC)
        REFUSE("ep_attr->protocol %s: tern's protocol is its own (FI_PROTO_UNSPEC)\n",
               fi_tostr(&ep->protocol, FI_TYPE_PROTOCOL));
    CHECK_MAX("ep_attr->protocol_version", ep->protocol_version, 1);
    CHECK_MAX("ep_attr->max_msg_size", ep->max_msg_size, SSIZE_MAX);
    CHECK_MAX("ep_attr->msg_prefix_size", ep->msg_prefix_size, 0);
    CHECK_MAX("ep_attr->max_order_raw_size", ep->max_order_raw_size, 0);
    CHECK_MAX("ep_attr->max_order_war_size", ep->max_order_war_size, 0);
    CHECK_MAX("ep_attr->max_order_waw_size", ep->max_order_waw_size, 0);
    if (ep->tx_ctx_cnt == FI_SHARED_CONTEXT || ep->rx_ctx_cnt == FI_SHARED_CONTEXT)
        REFUSE("ep_attr->tx_ctx_cnt / rx_ctx_cnt: no shared contexts\n");
    CHECK_MAX("ep_attr->tx_ctx_cnt", ep->tx_ctx_cnt, 1);
    CHECK_MAX("ep_attr->rx_ctx_cnt", ep->rx_ctx_cnt, 1);
    if (ep->auth_key_size != 0 || ep->auth_key != NULL)
        REFUSE("ep_attr->auth_key: tern has no authorization keys\n");
    return 0;
}

static int check_domain(const struct fi_domain_attr *d)
{
    int ret;
    if (d->domain != NULL && !tfi_is_domain(d->domain))
        REFUSE("domain_attr->domain: not a tern domain\n");
    if (d->name != NULL && strcmp(d->name, TFI_NAME) != 0)
        REFUSE("domain_attr->name %s: tern's domain is \"%s\"\n", d->name, TFI_NAME);
    if (d->threading > FI_THREAD_ENDPOINT)
        REFUSE("domain_attr->threading %d: unknown\n", (int)d->threading);
    if (d->control_progress > FI_PROGRESS_MANUAL)
        REFUSE("domain_attr->control_progress %d: unknown\n", (int)d->control_progress);
    if (d->data_progress == FI_PROGRESS_AUTO)
        REFUSE("domain_attr->data_progress FI_PROGRESS_AUTO: tern moves data when the "
               "application reads a CQ or counter (FI_PROGRESS_MANUAL)\n");
    if (d->data_progress > FI_PROGRESS_MANUAL)
        REFUSE("domain_attr->data_progress %d: unknown\n", (int)d->data_progress);
    if (d->resource_mgmt > FI_RM_ENABLED)
        REFUSE("domain_attr->resource_mgmt %d: unknown\n", (int)d->resource_mgmt);
    if (d->av_type > FI_AV_TABLE)
        REFUSE("domain_attr->av_type %d: unknown\n", (int)d->av_type);
    CHECK_MAX("domain_attr->mr_key_size", d->mr_key_size, TFI_MR_KEY_SIZE);
    CHECK_MAX("domain_attr->cq_data_size", d->cq_data_size, TFI_CQ_DATA_SIZE);
    size_t workers = workers_configured();
    if (d->ep_cnt > workers)
        REFUSE("domain_attr->ep_cnt %zu: one endpoint per tern worker, %zu configured "
               "(FI_TERN_NUM_WORKERS or TERN_NUM_WORKERS)\n",
               d->ep_cnt, workers);
    CHECK_MAX("domain_attr->tx_ctx_cnt", d->tx_ctx_cnt, workers);
    CHECK_MAX("domain_attr->rx_ctx_cnt", d->rx_ctx_cnt, workers);
    CHECK_MAX("domain_attr->max_ep_tx_ctx", d->max_ep_tx_ctx, 1);
    CHECK_MAX("domain_attr->max_ep_rx_ctx", d->max_ep_rx_ctx, 1);
    CHECK_MAX("domain_attr->max_ep_stx_ctx", d->max_ep_stx_ctx, 0);
    CHECK_MAX("domain_attr->max_ep_srx_ctx", d->max_ep_srx_ctx, 0);
    CHECK_MAX("domain_attr->mr_iov_limit", d->mr_iov_limit, TFI_MR_IOV_LIMIT);
    if ((ret = check_bits("domain_attr->caps", d->caps, TFI_DOMAIN_CAPS, FI_TYPE_CAPS)))
        return ret;
    if (d->auth_key_size != 0 || d->auth_key != NULL)
        REFUSE("domain_attr->auth_key: tern has no authorization keys\n");
    return check_tclass("domain_attr->tclass", d->tclass);
}

static int check_fabric(const struct fi_fabric_attr *f)
{
    if (f->fabric != NULL && !tfi_is_fabric(f->fabric))
        REFUSE("fabric_attr->fabric: not a tern fabric\n");
    if (f->name != NULL && strcmp(f->name, TFI_NAME) != 0)
        REFUSE("fabric_attr->name %s: tern's fabric is \"%s\"\n", f->name, TFI_NAME);
    if (f->prov_name != NULL && strcasecmp(f->prov_name, TFI_NAME) != 0)
        REFUSE("fabric_attr->prov_name %s: this is \"%s\"\n", f->prov_name, TFI_NAME);
    return 0;
}

static int check_hints(uint32_t version, const struct fi_info *h)
{
    int ret;
    if (version < TFI_API_MIN)
        REFUSE("API version %u.%u: tern needs 1.5 or later\n", FI_MAJOR(version),
               FI_MINOR(version));
    if (h == NULL)
        return 0;
    if ((ret = check_bits("caps", h->caps, TFI_CAPS, FI_TYPE_CAPS)))
        return ret;
    /* mode: bits the application can live with; tern needs none */
    if (h->addr_format != FI_FORMAT_UNSPEC)
        REFUSE("addr_format %s: tern's addresses are opaque (FI_FORMAT_UNSPEC)\n",
               fi_tostr(&h->addr_format, FI_TYPE_ADDR_FORMAT));
    if (h->src_addr != NULL || h->src_addrlen != 0)
        REFUSE("src_addr: a tern endpoint's address is made by tern (fi_getname)\n");
    /* a peer's name (fi_pingpong passes the server's so): handed back in
     * the fi_info, for fi_av_insert */
    if ((h->dest_addr != NULL || h->dest_addrlen != 0) &&
        !tfi_name_valid(h->dest_addr, h->dest_addrlen))
        REFUSE("dest_addr: not a tern name (fi_getname's), %zu bytes\n", h->dest_addrlen);
    if (h->nic != NULL)
        REFUSE("nic: tern describes no NIC\n");
    if ((h->tx_attr != NULL && (ret = check_tx(h->tx_attr))) ||
        (h->rx_attr != NULL && (ret = check_rx(h->rx_attr))) ||
        (h->ep_attr != NULL && (ret = check_ep(h->ep_attr))) ||
        (h->domain_attr != NULL && (ret = check_domain(h->domain_attr))) ||
        (h->fabric_attr != NULL && (ret = check_fabric(h->fabric_attr))))
        return ret;
    return 0;
}

int tfi_check_info(uint32_t version, const struct fi_info *info)
{
    return check_hints(version, info);
}

static uint64_t out_caps(uint64_t hint)
{
    if (hint == 0)
        return TFI_CAPS;
    uint64_t primary = hint & TFI_CAPS_PRIMARY;
    if ((primary & (FI_TAGGED | FI_MSG | FI_RMA | FI_ATOMIC)) == 0) /* none asked: messages */
        primary |= FI_TAGGED | FI_MSG;
    uint64_t mod = hint & TFI_CAPS_MODIFIERS;
    if (mod == 0) /* none: every modifier of the primary capabilities */
        mod = ((primary & (FI_TAGGED | FI_MSG)) ? FI_SEND | FI_RECV : 0) |
              ((primary & (FI_RMA | FI_ATOMIC)) ? TFI_CAPS_RMA_MODIFIERS : 0);
    /* local and remote communication cost nothing to report */
    return primary | mod | (hint & TFI_CAPS_SECONDARY) | FI_LOCAL_COMM | FI_REMOTE_COMM;
}

static int out_mr_mode(int hint)
{
    int legacy = hint & (FI_MR_BASIC | FI_MR_SCALABLE);
    if (legacy == FI_MR_BASIC || legacy == FI_MR_SCALABLE)
        return legacy;
    /* the modes tern can honour that change what the application sees */
    return hint & (FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED | FI_MR_LOCAL);
}

static size_t at_least(size_t hint, size_t ours)
{
    return hint > ours ? hint : ours;
}

static struct fi_info *make_info(const struct fi_info *h)
{
    struct fi_info *fi = fi_allocinfo();
    if (fi == NULL)
        return NULL;
    const struct fi_tx_attr *htx = h != NULL ? h->tx_attr : NULL;
    const struct fi_rx_attr *hrx = h != NULL ? h->rx_attr : NULL;
    const struct fi_ep_attr *hep = h != NULL ? h->ep_attr : NULL;
    const struct fi_domain_attr *hd = h != NULL ? h->domain_attr : NULL;
    const struct fi_fabric_attr *hf = h != NULL ? h->fabric_attr : NULL;

    fi->caps = out_caps(h != NULL ? h->caps : 0);
    fi->mode = 0;
    fi->addr_format = FI_FORMAT_UNSPEC;

    struct fi_tx_attr *tx = fi->tx_attr;
    tx->caps = fi->caps & TFI_TX_CAPS;
    tx->mode = 0;
    tx->op_flags = htx != NULL ? htx->op_flags : 0;
    tx->msg_order = TFI_MSG_ORDER;
    tx->comp_order = FI_ORDER_NONE;
    tx->inject_size = inject_size();
    tx->size = at_least(htx != NULL ? htx->size : 0, TFI_QUEUE_SIZE);
    tx->iov_limit = at_least(htx != NULL ? htx->iov_limit : 0, TFI_IOV_LIMIT);
    tx->rma_iov_limit = 1;
    tx->tclass = htx != NULL ? htx->tclass : FI_TC_UNSPEC;

    struct fi_rx_attr *rx = fi->rx_attr;
    rx->caps = fi->caps & TFI_RX_CAPS;
    rx->mode = 0;
    rx->op_flags = hrx != NULL ? hrx->op_flags : 0;
    rx->msg_order = TFI_MSG_ORDER;
    rx->comp_order = FI_ORDER_NONE;
    rx->total_buffered_recv = hrx != NULL ? hrx->total_buffered_recv : 0;
    rx->size = at_least(hrx != NULL ? hrx->size : 0, TFI_QUEUE_SIZE);
    rx->iov_limit = at_least(hrx != NULL ? hrx->iov_limit : 0, TFI_IOV_LIMIT);

    struct fi_ep_attr *ep = fi->ep_attr;
    ep->type = FI_EP_RDM;
    ep->protocol = FI_PROTO_UNSPEC;
    ep->protocol_version = 1;
    ep->max_msg_size = SSIZE_MAX;
    ep->msg_prefix_size = 0;
    /* 64 significant tag bits, or the layout the application asked for
     * (every layout fits in 64 bits) */
    ep->mem_tag_format = hep != NULL && hep->mem_tag_format != 0 ? hep->mem_tag_format : ~0ull;
    ep->tx_ctx_cnt = 1;
    ep->rx_ctx_cnt = 1;

    size_t workers = workers_configured();
    struct fi_domain_attr *d = fi->domain_attr;
    d->domain = hd != NULL ? hd->domain : NULL;
    d->name = strdup(TFI_NAME);
    d->threading =
        hd != NULL && hd->threading != FI_THREAD_UNSPEC ? hd->threading : FI_THREAD_DOMAIN;
    d->control_progress = hd != NULL && hd->control_progress != FI_PROGRESS_UNSPEC
                              ? hd->control_progress
                              : FI_PROGRESS_AUTO;
    d->data_progress = FI_PROGRESS_MANUAL;
    d->resource_mgmt =
        hd != NULL && hd->resource_mgmt != FI_RM_UNSPEC ? hd->resource_mgmt : FI_RM_ENABLED;
    d->av_type = hd != NULL ? hd->av_type : FI_AV_UNSPEC;
    d->mr_mode = out_mr_mode(hd != NULL ? hd->mr_mode : 0);
    d->mr_key_size = TFI_MR_KEY_SIZE;
    d->cq_data_size = TFI_CQ_DATA_SIZE;
    d->cq_cnt = at_least(hd != NULL ? hd->cq_cnt : 0, 1024);
    d->ep_cnt = workers;
    d->tx_ctx_cnt = workers;
    d->rx_ctx_cnt = workers;
    d->max_ep_tx_ctx = 1;
    d->max_ep_rx_ctx = 1;
    d->max_ep_stx_ctx = 0;
    d->max_ep_srx_ctx = 0;
    d->cntr_cnt = at_least(hd != NULL ? hd->cntr_cnt : 0, 1024);
    d->mr_iov_limit = TFI_MR_IOV_LIMIT;
    d->caps = fi->caps & TFI_DOMAIN_CAPS;
    d->mode = 0;
    d->max_err_data = 0;
    d->mr_cnt = at_least(hd != NULL ? hd->mr_cnt : 0, 65536);
    d->tclass = hd != NULL ? hd->tclass : FI_TC_UNSPEC;

    if (h != NULL && h->dest_addr != NULL) {
        fi->dest_addr = malloc(h->dest_addrlen);
        if (fi->dest_addr == NULL) {
            fi_freeinfo(fi);
            return NULL;
        }
        memcpy(fi->dest_addr, h->dest_addr, h->dest_addrlen);
        fi->dest_addrlen = h->dest_addrlen;
    }

    struct fi_fabric_attr *f = fi->fabric_attr;
    f->fabric = hf != NULL ? hf->fabric : NULL;
    f->name = strdup(TFI_NAME);
    f->prov_name = NULL; /* the core fills it in */
    f->prov_version = tfi_prov.version;
    if (d->name == NULL || f->name == NULL) {
        fi_freeinfo(fi);
        return NULL;
    }
    return fi;
}

int tfi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                const struct fi_info *hints, struct fi_info **info)
{
    if (info == NULL)
        return -FI_EINVAL;
    *info = NULL;
    /* The top bits are libfabric's own (its utility providers ask core
     * providers with them, e.g. bit 59 for "core providers only"): not the
     * application's, so not refused. */
    uint64_t known = FI_NUMERICHOST | FI_SOURCE | FI_PROV_ATTR_ONLY | ~((1ull << 59) - 1);
    if (flags & ~known) {
        TFI_INFO(FI_LOG_CORE, "fi_getinfo flags 0x%llx: unknown to tern\n",
                 (unsigned long long)(flags & ~known));
        return -FI_EBADFLAGS;
    }
    if (flags & FI_PROV_ATTR_ONLY) { /* what the provider is, whatever the hints */
        *info = make_info(NULL);
        return *info != NULL ? 0 : -FI_ENOMEM;
    }
    int ret = check_hints(version, hints);
    if (ret != 0)
        return ret;
    if (node != NULL || service != NULL)
        TFI_INFO(FI_LOG_CORE, "node / service ignored: tern addresses come from fi_getname\n");
    *info = make_info(hints);
    return *info != NULL ? 0 : -FI_ENOMEM;
}
