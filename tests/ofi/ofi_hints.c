/*
 * The provider's fi_getinfo, hint by hint, and its refusals of bad calls
 * (tests/ofi/ofi_hints.sh runs it with the provider from the build tree,
 * outside any PMIx job, FI_LOG_LEVEL=info so that the script can check
 * that each refusal names its field).
 *
 *  - API 1.17 and 1.5 answered, 1.4 refused;
 *  - every hint accepted or refused as docs/libfabric.md says, one field
 *    changed from the base hints at a time, with what an accepted one
 *    must return; Open MPI 4.1's mtl ofi hints accepted;
 *  - each bad call on fabric, domain, AV, CQ, EQ, counter, MR and
 *    endpoint returns its -FI_E* and leaves the objects usable.
 * Prints "ok NAME" per case, "FAIL ..." per failed check; exit 1 on any.
 */
#include <stdint.h>

#include "tests/ofi/ofi_util.h"

int failures;

/* ---- hints ---------------------------------------------------------------- */

struct hcase {
    const char *name;
    void (*set)(struct fi_info *h);
    int want; /* 0: accepted, else -FI_ENODATA */
};

// clang-format off
/* one hint a line, the table in columns */
#define H(n, stmt)                                                                                 \
    static void set_##n(struct fi_info *h)                                                         \
    {                                                                                              \
        stmt;                                                                                      \
    }
H(base, (void)h)
H(caps_tagged, h->caps = FI_TAGGED)
H(caps_msg, h->caps = FI_MSG | FI_SEND | FI_RECV)
H(caps_all, h->caps = FI_TAGGED | FI_MSG | FI_SEND | FI_RECV | FI_DIRECTED_RECV | FI_SOURCE |
                      FI_LOCAL_COMM | FI_REMOTE_COMM)
H(caps_rma, h->caps = FI_TAGGED | FI_RMA)
H(caps_atomic, h->caps = FI_ATOMIC)
H(caps_multi_recv, h->caps = FI_MSG | FI_MULTI_RECV)
H(caps_fence, h->caps = FI_TAGGED | FI_FENCE)
H(caps_hmem, h->caps = FI_TAGGED | FI_HMEM)
H(caps_shared_av, h->caps = FI_TAGGED | FI_SHARED_AV)
H(mode_context, h->mode = FI_CONTEXT | FI_CONTEXT2)
H(mode_all, h->mode = ~0ull)
H(addr_sockaddr, h->addr_format = FI_SOCKADDR_IN)
H(addr_str, h->addr_format = FI_ADDR_STR)
H(ep_msg, h->ep_attr->type = FI_EP_MSG)
H(ep_dgram, h->ep_attr->type = FI_EP_DGRAM)
H(ep_unspec, h->ep_attr->type = FI_EP_UNSPEC)
H(ep_protocol, h->ep_attr->protocol = FI_PROTO_RXM)
H(ep_prefix, h->ep_attr->msg_prefix_size = 8)
H(ep_raw, h->ep_attr->max_order_raw_size = 64)
H(ep_tx_ctx, h->ep_attr->tx_ctx_cnt = 2)
H(ep_shared_ctx, h->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT)
H(ep_msg_size, h->ep_attr->max_msg_size = SIZE_MAX)
H(ep_tag_format, h->ep_attr->mem_tag_format = 0x0000ffffffffffffull)
H(tx_order_sas, h->tx_attr->msg_order = FI_ORDER_SAS)
H(tx_order_raw, h->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_RAW)
H(tx_comp_order, h->tx_attr->comp_order = FI_ORDER_STRICT)
H(tx_inject_ok, h->tx_attr->inject_size = 4096)
H(tx_inject_big, h->tx_attr->inject_size = 1 << 20)
H(tx_iov, h->tx_attr->iov_limit = (size_t)1 << 21)
H(tx_rma_iov, h->tx_attr->rma_iov_limit = 2)
H(tx_opflags, h->tx_attr->op_flags = FI_COMPLETION | FI_DELIVERY_COMPLETE)
H(tx_opflags_bad, h->tx_attr->op_flags = FI_MULTICAST)
H(tx_tclass, h->tx_attr->tclass = FI_TC_BULK_DATA)
H(tx_size, h->tx_attr->size = 1 << 20)
H(rx_multi_recv, h->rx_attr->op_flags = FI_MULTI_RECV)
H(rx_order_sas, h->rx_attr->msg_order = FI_ORDER_SAS)
H(rx_order_data, h->rx_attr->comp_order = FI_ORDER_DATA)
H(dom_safe, h->domain_attr->threading = FI_THREAD_SAFE)
H(dom_endpoint, h->domain_attr->threading = FI_THREAD_ENDPOINT)
H(dom_data_auto, h->domain_attr->data_progress = FI_PROGRESS_AUTO)
H(dom_data_manual, h->domain_attr->data_progress = FI_PROGRESS_MANUAL)
H(dom_ctrl_auto, h->domain_attr->control_progress = FI_PROGRESS_AUTO)
H(dom_ctrl_manual, h->domain_attr->control_progress = FI_PROGRESS_MANUAL)
H(dom_mr_modern, h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                                            FI_MR_PROV_KEY | FI_MR_ENDPOINT)
H(dom_mr_basic, h->domain_attr->mr_mode = FI_MR_BASIC)
H(dom_av_table, h->domain_attr->av_type = FI_AV_TABLE)
H(dom_cq_data, h->domain_attr->cq_data_size = 8)
H(dom_cq_data_big, h->domain_attr->cq_data_size = 16)
H(dom_key_big, h->domain_attr->mr_key_size = 16)
H(dom_ep_cnt, h->domain_attr->ep_cnt = 2)
H(dom_name, h->domain_attr->name = strdup("eth0"))
H(dom_caps, h->domain_attr->caps = FI_SHARED_AV)
H(dom_srx, h->domain_attr->max_ep_srx_ctx = 1)
H(dom_rm, h->domain_attr->resource_mgmt = FI_RM_ENABLED)
H(dom_tclass, h->domain_attr->tclass = fi_tc_dscp_set(10))
H(fab_name, h->fabric_attr->name = strdup("tcp"))
H(src_addr, h->src_addr = calloc(1, 16); h->src_addrlen = 16)
H(dest_garbage, h->dest_addr = calloc(1, 16); h->dest_addrlen = 16)
/* Open MPI 4.1.4's mtl ofi (../shared/RECIPES.md) */
H(ompi, h->caps = FI_TAGGED | FI_LOCAL_COMM | FI_REMOTE_COMM | FI_DIRECTED_RECV;
  h->mode = FI_CONTEXT | FI_CONTEXT2; h->tx_attr->msg_order = FI_ORDER_SAS;
  h->rx_attr->msg_order = FI_ORDER_SAS; h->domain_attr->threading = FI_THREAD_DOMAIN;
  h->domain_attr->av_type = FI_AV_MAP; h->tx_attr->op_flags = FI_COMPLETION;
  h->rx_attr->op_flags = FI_COMPLETION; h->domain_attr->mr_mode = FI_MR_BASIC | FI_MR_SCALABLE)

#define OK(n) {#n, set_##n, 0}
#define NO(n) {#n, set_##n, -FI_ENODATA}
static const struct hcase hcases[] = {
    OK(base),          OK(caps_tagged),    OK(caps_msg),        OK(caps_all),
    OK(caps_rma),      OK(caps_atomic),    NO(caps_multi_recv), NO(caps_fence),
    NO(caps_hmem),     NO(caps_shared_av), OK(mode_context),    OK(mode_all),
    NO(addr_sockaddr), NO(addr_str),       NO(ep_msg),          NO(ep_dgram),
    OK(ep_unspec),     NO(ep_protocol),    NO(ep_prefix),       NO(ep_raw),
    NO(ep_tx_ctx),     NO(ep_shared_ctx),  NO(ep_msg_size),     OK(ep_tag_format),
    OK(tx_order_sas),  NO(tx_order_raw),   NO(tx_comp_order),   OK(tx_inject_ok),
    NO(tx_inject_big), NO(tx_iov),         NO(tx_rma_iov),      OK(tx_opflags),
    NO(tx_opflags_bad), NO(tx_tclass),     OK(tx_size),         NO(rx_multi_recv),
    OK(rx_order_sas),  NO(rx_order_data),  OK(dom_safe),        OK(dom_endpoint),
    NO(dom_data_auto), OK(dom_data_manual), OK(dom_ctrl_auto),  OK(dom_ctrl_manual),
    OK(dom_mr_modern), OK(dom_mr_basic),   OK(dom_av_table),    OK(dom_cq_data),
    NO(dom_cq_data_big), NO(dom_key_big),  NO(dom_ep_cnt),      NO(dom_name),
    NO(dom_caps),      NO(dom_srx),        OK(dom_rm),          NO(dom_tclass),
    NO(fab_name),      NO(src_addr),       NO(dest_garbage),    OK(ompi),
};
// clang-format on

/* What an accepted hint must come back with (beyond being accepted). */
static void check_out(const char *name, const struct fi_info *h, const struct fi_info *fi)
{
    CHECK(fi->next == NULL, "%s: one fi_info", name);
    CHECK(fi->ep_attr->type == FI_EP_RDM, "%s: FI_EP_RDM", name);
    CHECK(fi->mode == 0, "%s: mode 0x%llx", name, (unsigned long long)fi->mode);
    CHECK(fi->addr_format == FI_FORMAT_UNSPEC, "%s: FI_FORMAT_UNSPEC", name);
    CHECK(fi->domain_attr->data_progress == FI_PROGRESS_MANUAL, "%s: manual progress", name);
    CHECK(fi->domain_attr->cq_data_size == 8, "%s: cq_data_size 8", name);
    CHECK(fi->tx_attr->msg_order & FI_ORDER_SAS, "%s: FI_ORDER_SAS", name);
    CHECK(strcmp(fi->fabric_attr->prov_name, "tern") == 0, "%s: prov_name %s", name,
          fi->fabric_attr->prov_name);
    if (h->caps != 0)
        CHECK((fi->caps & h->caps) == h->caps, "%s: caps 0x%llx lack some of 0x%llx", name,
              (unsigned long long)fi->caps, (unsigned long long)h->caps);
    if (h->caps == FI_TAGGED)
        CHECK(!(fi->caps & (FI_MSG | FI_DIRECTED_RECV | FI_SOURCE)),
              "%s: primary caps not asked for are reported", name);
    if (h->ep_attr->mem_tag_format != 0)
        CHECK(fi->ep_attr->mem_tag_format == h->ep_attr->mem_tag_format, "%s: tag format", name);
    else
        CHECK(fi->ep_attr->mem_tag_format == ~0ull, "%s: 64 tag bits", name);
    enum fi_threading t = h->domain_attr->threading;
    CHECK(fi->domain_attr->threading == (t == FI_THREAD_UNSPEC ? FI_THREAD_DOMAIN : t),
          "%s: threading %d", name, (int)fi->domain_attr->threading);
    /* the legacy basic mode, else the asked modes that change what the
     * application sees (virtual addresses, the provider's keys) */
    int mr = h->domain_attr->mr_mode;
    int want_mr = mr == FI_MR_BASIC ? FI_MR_BASIC
                                    : mr & (FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED |
                                            FI_MR_LOCAL);
    CHECK(fi->domain_attr->mr_mode == want_mr, "%s: mr_mode %d, want %d", name,
          fi->domain_attr->mr_mode, want_mr);
    if (h->caps & (FI_RMA | FI_ATOMIC))
        CHECK((fi->caps & (h->caps & (FI_RMA | FI_ATOMIC))) &&
                  (fi->caps & (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)) ==
                      (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE),
              "%s: one-sided caps %#llx", name, (unsigned long long)fi->caps);
    if (h->domain_attr->av_type != FI_AV_UNSPEC)
        CHECK(fi->domain_attr->av_type == h->domain_attr->av_type, "%s: av_type", name);
    CHECK(fi->tx_attr->inject_size >= h->tx_attr->inject_size && fi->tx_attr->inject_size > 0,
          "%s: inject_size %zu", name, fi->tx_attr->inject_size);
    CHECK(fi->tx_attr->size >= h->tx_attr->size, "%s: tx size", name);
}

static void test_hints(void)
{
    for (size_t i = 0; i < sizeof(hcases) / sizeof(hcases[0]); i++) {
        const struct hcase *c = &hcases[i];
        for (int v = 0; v < 2; v++) {
            uint32_t version = v == 0 ? FI_VERSION(1, 17) : FI_VERSION(1, 5);
            struct fi_info *h = tern_hints(), *fi = NULL;
            c->set(h);
            int ret = fi_getinfo(version, NULL, NULL, 0, h, &fi);
            CHECK_RET(ret, c->want, c->name);
            if (ret == 0 && fi != NULL)
                check_out(c->name, h, fi);
            fi_freeinfo(fi);
            fi_freeinfo(h);
        }
        printf("ok hint %s %s\n", c->name, c->want == 0 ? "accepted" : "refused");
    }
    struct fi_info *h = tern_hints(), *fi = NULL;
    CHECK_RET(fi_getinfo(FI_VERSION(1, 4), NULL, NULL, 0, h, &fi), -FI_ENODATA, "API 1.4");
    fi_freeinfo(fi);
    fi = NULL;
    CHECK_RET(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, FI_PROV_ATTR_ONLY, h, &fi), 0,
              "FI_PROV_ATTR_ONLY");
    fi_freeinfo(fi);
    fi = NULL;
    CHECK_RET(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, NULL, &fi), 0, "no hints");
    bool found = false;
    for (struct fi_info *p = fi; p != NULL; p = p->next)
        found = found || strcmp(p->fabric_attr->prov_name, "tern") == 0;
    CHECK(found, "fi_getinfo without hints lists tern");
    fi_freeinfo(fi);
    fi_freeinfo(h);
    printf("ok api versions\n");
}

/* ---- bad calls ------------------------------------------------------------------ */

static struct fi_info *open_info(enum fi_threading threading)
{
    struct fi_info *h = tern_hints(), *fi = NULL;
    h->domain_attr->threading = threading;
    int ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &fi);
    fi_freeinfo(h);
    if (ret != 0) {
        printf("FAIL: fi_getinfo: %s\n", fi_strerror(-ret));
        exit(1);
    }
    return fi;
}

static void test_fabric_domain(struct tep *t)
{
    struct fid_pep *pep = NULL;
    CHECK_RET(fi_passive_ep(t->fabric, t->info, &pep, NULL), -FI_ENOSYS, "fi_passive_ep");
    /* an fi_info tern cannot honour */
    struct fi_info *bad = fi_dupinfo(t->info);
    bad->ep_attr->type = FI_EP_MSG;
    struct fid_domain *d2 = NULL;
    CHECK_RET(fi_domain(t->fabric, bad, &d2, NULL), -FI_EINVAL, "fi_domain(FI_EP_MSG info)");
    struct fid_ep *e2 = NULL;
    CHECK_RET(fi_endpoint(t->domain, bad, &e2, NULL), -FI_EINVAL, "fi_endpoint(FI_EP_MSG)");
    fi_freeinfo(bad);
    CHECK_RET(fi_endpoint(t->domain, NULL, &e2, NULL), -FI_EINVAL, "fi_endpoint(NULL info)");
    CHECK_RET(fi_scalable_ep(t->domain, t->info, &e2, NULL), -FI_ENOSYS, "fi_scalable_ep");
    /* the one worker belongs to t->ep: no second endpoint */
    CHECK_RET(fi_endpoint(t->domain, t->info, &e2, NULL), -FI_EBUSY, "second endpoint");
    CHECK_RET(fi_close(&t->domain->fid), -FI_EBUSY, "fi_close(domain) with objects open");
    CHECK_RET(fi_close(&t->fabric->fid), -FI_EBUSY, "fi_close(fabric) with a domain");
    printf("ok fabric and domain refusals\n");
}

static void test_mr(struct tep *t)
{
    static char buf[64];
    struct fid_mr *a = NULL, *b = NULL, *c = NULL;
    CHECK_RET(fi_mr_reg(t->domain, buf, sizeof(buf), FI_SEND | FI_RECV, 0, 42, 0, &a, NULL), 0,
              "fi_mr_reg key 42");
    CHECK(a != NULL && fi_mr_key(a) == 42, "key 42 kept");
    CHECK(a != NULL && fi_mr_desc(a) != NULL, "a descriptor");
    CHECK_RET(fi_mr_reg(t->domain, buf, sizeof(buf), FI_SEND, 0, 42, 0, &b, NULL), -FI_ENOKEY,
              "fi_mr_reg duplicate key");
    CHECK_RET(fi_mr_reg(t->domain, buf, sizeof(buf), FI_SEND, 0, 43, FI_RMA_EVENT, &b, NULL),
              -FI_EBADFLAGS, "fi_mr_reg unknown flags");
    CHECK_RET(fi_mr_reg(t->domain, NULL, 8, FI_SEND, 0, 43, 0, &b, NULL), -FI_EINVAL,
              "fi_mr_reg NULL buffer with a length");
    struct iovec iov = {buf, sizeof(buf)};
    struct fi_mr_attr ma = {.mr_iov = &iov,
                            .iov_count = 1,
                            .access = FI_SEND,
                            .requested_key = 44,
                            .iface = FI_HMEM_CUDA};
    CHECK_RET(fi_mr_regattr(t->domain, &ma, 0, &c), -FI_ENOSYS, "fi_mr_regattr CUDA memory");
    ma.iface = FI_HMEM_SYSTEM;
    CHECK_RET(fi_mr_regattr(t->domain, &ma, 0, &c), 0, "fi_mr_regattr host memory");
    CHECK_RET(fi_close(&a->fid), 0, "fi_close(mr)");
    CHECK_RET(fi_mr_reg(t->domain, buf, sizeof(buf), FI_SEND, 0, 42, 0, &a, NULL), 0,
              "key 42 free again after close");
    CHECK_RET(fi_close(&a->fid), 0, "fi_close(mr)");
    if (c != NULL)
        CHECK_RET(fi_close(&c->fid), 0, "fi_close(mr)");
    printf("ok memory regions\n");
}

static void test_eq_cntr(struct tep *t)
{
    struct fi_eq_attr ea = {.wait_obj = FI_WAIT_FD};
    struct fid_eq *eq = NULL;
    CHECK_RET(fi_eq_open(t->fabric, &ea, &eq, NULL), -FI_ENOSYS, "fi_eq_open(FI_WAIT_FD)");
    ea.wait_obj = FI_WAIT_UNSPEC;
    CHECK_RET(fi_eq_open(t->fabric, &ea, &eq, NULL), 0, "fi_eq_open");
    uint32_t ev = 0;
    struct fi_eq_entry ent = {.context = (void *)0x1234, .data = 7}, got;
    CHECK_RET(fi_eq_read(eq, &ev, &got, sizeof(got), 0), -FI_EAGAIN, "fi_eq_read empty");
    CHECK_RET(fi_eq_sread(eq, &ev, &got, sizeof(got), 10, 0), -FI_EAGAIN, "fi_eq_sread timeout");
    CHECK_RET(fi_eq_write(eq, FI_NOTIFY, &ent, sizeof(ent), 0), (ssize_t)sizeof(ent),
              "fi_eq_write");
    CHECK_RET(fi_eq_read(eq, &ev, &got, 4, 0), -FI_ETOOSMALL, "fi_eq_read short buffer");
    CHECK_RET(fi_eq_read(eq, &ev, &got, sizeof(got), FI_PEEK), (ssize_t)sizeof(got),
              "fi_eq_read FI_PEEK");
    CHECK_RET(fi_eq_read(eq, &ev, &got, sizeof(got), 0), (ssize_t)sizeof(got), "fi_eq_read");
    CHECK(ev == FI_NOTIFY && got.data == 7 && got.context == (void *)0x1234, "the event written");
    struct fi_eq_err_entry ee;
    CHECK_RET(fi_eq_readerr(eq, &ee, 0), -FI_EAGAIN, "fi_eq_readerr empty");
    /* an AV reporting on the EQ: FI_EVENT */
    struct fi_av_attr aa = {.type = FI_AV_MAP, .flags = FI_EVENT};
    struct fid_av *av = NULL;
    CHECK_RET(fi_av_open(t->domain, &aa, &av, NULL), 0, "fi_av_open(FI_EVENT)");
    char junk[32] = "not a tern name at all........";
    fi_addr_t a;
    CHECK_RET(fi_av_insert(av, junk, 1, &a, 0, NULL), -FI_ENOEQ, "FI_EVENT insert before an EQ");
    CHECK_RET(fi_av_bind(av, &eq->fid, 0), 0, "fi_av_bind(eq)");
    CHECK_RET(fi_av_insert(av, junk, 1, &a, 0, (void *)0x77), 0, "FI_EVENT insert");
    CHECK_RET(fi_eq_read(eq, &ev, &got, sizeof(got), 0), -FI_EAVAIL, "its error first");
    CHECK_RET(fi_eq_readerr(eq, &ee, 0), (ssize_t)sizeof(ee), "fi_eq_readerr");
    CHECK(ee.err == FI_EINVAL && ee.data == 0 && ee.context == (void *)0x77, "the failed index");
    CHECK_RET(fi_eq_read(eq, &ev, &got, sizeof(got), 0), (ssize_t)sizeof(got), "FI_AV_COMPLETE");
    CHECK(ev == FI_AV_COMPLETE && got.data == 0 && got.context == (void *)0x77,
          "FI_AV_COMPLETE with 0 inserted");
    CHECK_RET(fi_close(&eq->fid), -FI_EBUSY, "fi_close(eq) bound to an AV");
    CHECK_RET(fi_close(&av->fid), 0, "fi_close(av)");
    CHECK_RET(fi_close(&eq->fid), 0, "fi_close(eq)");

    struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_FD};
    struct fid_cntr *cn = NULL;
    CHECK_RET(fi_cntr_open(t->domain, &ca, &cn, NULL), -FI_ENOSYS, "fi_cntr_open(FI_WAIT_FD)");
    ca.wait_obj = FI_WAIT_UNSPEC;
    CHECK_RET(fi_cntr_open(t->domain, &ca, &cn, NULL), 0, "fi_cntr_open");
    CHECK_RET(fi_cntr_wait(cn, 1, 10), -FI_ETIMEDOUT, "fi_cntr_wait timeout");
    CHECK_RET(fi_cntr_add(cn, 3), 0, "fi_cntr_add");
    CHECK(fi_cntr_read(cn) == 3, "fi_cntr_read");
    CHECK_RET(fi_cntr_wait(cn, 3, 10), 0, "fi_cntr_wait reached");
    CHECK_RET(fi_cntr_seterr(cn, 2), 0, "fi_cntr_seterr");
    CHECK(fi_cntr_readerr(cn) == 2, "fi_cntr_readerr");
    CHECK_RET(fi_close(&cn->fid), 0, "fi_close(cntr)");
    printf("ok event queues and counters\n");
}

static void test_av(struct tep *t)
{
    char name[8192];
    size_t len = 4;
    CHECK_RET(fi_getname(&t->ep->fid, name, &len), -FI_ETOOSMALL, "fi_getname short buffer");
    CHECK(len > 16 && len <= sizeof(name), "fi_getname says the size it needs (%zu)", len);
    size_t need = len;
    CHECK_RET(fi_getname(&t->ep->fid, name, &len), 0, "fi_getname");
    CHECK(len == need, "fi_getname length");
    struct fi_av_attr bad = {.type = FI_AV_TABLE, .rx_ctx_bits = 4};
    struct fid_av *av2 = NULL;
    CHECK_RET(fi_av_open(t->domain, &bad, &av2, NULL), -FI_EINVAL, "fi_av_open rx_ctx_bits");
    bad = (struct fi_av_attr){.type = FI_AV_TABLE, .name = "shared"};
    CHECK_RET(fi_av_open(t->domain, &bad, &av2, NULL), -FI_ENOSYS, "fi_av_open named");
    /* two names laid end to end: junk first loses the rest (its length is
     * unknown); ours alone is inserted at index 0 */
    char two[8192 + 32];
    memcpy(two, "junkjunkjunkjunk", 16);
    memcpy(two + 16, name, len);
    fi_addr_t a[2] = {7, 7};
    int errs[2] = {-1, -1};
    CHECK_RET(fi_av_insert(t->av, two, 2, a, FI_SYNC_ERR, errs), 0, "insert junk + name");
    CHECK(a[0] == FI_ADDR_NOTAVAIL && a[1] == FI_ADDR_NOTAVAIL && errs[0] == FI_EINVAL &&
              errs[1] == FI_EINVAL,
          "junk refused, FI_SYNC_ERR filled (%d %d)", errs[0], errs[1]);
    CHECK_RET(fi_av_insert(t->av, two, 1, a, FI_AV_USER_ID, NULL), -FI_EBADFLAGS,
              "fi_av_insert FI_AV_USER_ID");
    CHECK_RET(fi_av_insert(t->av, name, 1, a, 0, NULL), 1, "insert our own name");
    CHECK(a[0] == 0, "FI_AV_TABLE index 0 (%llu)", (unsigned long long)a[0]);
    char back[8192];
    size_t blen = sizeof(back);
    CHECK_RET(fi_av_lookup(t->av, a[0], back, &blen), 0, "fi_av_lookup");
    CHECK(blen == len && memcmp(back, name, len) == 0, "fi_av_lookup gives the name back");
    blen = 4;
    CHECK_RET(fi_av_lookup(t->av, a[0], back, &blen), 0, "fi_av_lookup short buffer");
    CHECK(blen == len, "fi_av_lookup says the whole length");
    blen = 0; /* the size alone: no buffer at all */
    CHECK_RET(fi_av_lookup(t->av, a[0], NULL, &blen), 0, "fi_av_lookup(NULL, 0)");
    CHECK(blen == len, "fi_av_lookup(NULL, 0) says the length");
    CHECK_RET(fi_av_lookup(t->av, 99, back, &blen), -FI_EINVAL, "fi_av_lookup bad fi_addr");
    char s[128];
    size_t slen = sizeof(s);
    CHECK(fi_av_straddr(t->av, name, s, &slen) == s && strncmp(s, "tern://", 7) == 0,
          "fi_av_straddr");
    CHECK(fi_av_insertsvc(t->av, "localhost", "7", a, 0, NULL) == -FI_ENOSYS, "fi_av_insertsvc");
    fi_addr_t gone = 99;
    CHECK_RET(fi_av_remove(t->av, &gone, 1, 0), -FI_EINVAL, "fi_av_remove bad fi_addr");
    CHECK_RET(fi_av_remove(t->av, a, 1, 1), -FI_EINVAL, "fi_av_remove flags");
    CHECK_RET(fi_close(&t->av->fid), -FI_EBUSY, "fi_close(av) bound to an endpoint");
    printf("ok address vector and names\n");
}

static void test_ep(struct tep *t, struct fi_info *fi)
{
    /* a second endpoint cannot be had (one worker), so the not-enabled
     * refusals are checked on a fresh domain's endpoint after t's closes */
    char buf[8192];
    struct fi_context ctx;
    fi_addr_t self = 0; /* test_av inserted our own name */
    CHECK_RET(fi_tsend(t->ep, buf, 8, NULL, 12345, 1, &ctx), -FI_EINVAL, "fi_tsend bad fi_addr");
    CHECK_RET(fi_tinject(t->ep, buf, fi->tx_attr->inject_size + 1, self, 1), -FI_EINVAL,
              "fi_tinject above inject_size");
    CHECK_RET(fi_inject(t->ep, buf, fi->tx_attr->inject_size + 1, self), -FI_EINVAL,
              "fi_inject above inject_size");
    CHECK_RET(fi_tsend(t->ep, NULL, 8, NULL, self, 1, &ctx), -FI_EINVAL, "fi_tsend NULL buffer");
    struct iovec iov = {buf, 8};
    struct fi_msg_tagged m = {
        .msg_iov = &iov, .iov_count = 1, .addr = self, .tag = 5, .context = &ctx};
    CHECK_RET(fi_tsendmsg(t->ep, &m, FI_FENCE), -FI_EBADFLAGS, "fi_tsendmsg FI_FENCE");
    CHECK_RET(fi_tsendmsg(t->ep, NULL, 0), -FI_EINVAL, "fi_tsendmsg NULL msg");
    CHECK_RET(fi_trecvmsg(t->ep, &m, FI_MULTI_RECV), -FI_EBADFLAGS, "fi_trecvmsg FI_MULTI_RECV");
    CHECK_RET(fi_trecvmsg(t->ep, &m, FI_CLAIM), -FI_EINVAL, "FI_CLAIM of nothing claimed");
    CHECK_RET(fi_trecvmsg(t->ep, &m, FI_PEEK | FI_CLAIM | FI_DISCARD), -FI_EINVAL,
              "FI_PEEK | FI_CLAIM | FI_DISCARD");
    CHECK_RET(fi_trecvmsg(t->ep, &m, FI_DISCARD), -FI_EINVAL, "FI_DISCARD alone");
    struct fi_msg mm = {.msg_iov = &iov, .iov_count = 1, .addr = self, .context = &ctx};
    CHECK_RET(fi_recvmsg(t->ep, &mm, FI_PEEK), -FI_EBADFLAGS, "fi_recvmsg FI_PEEK (tagged only)");
    CHECK_RET(fi_cancel(&t->ep->fid, &ctx), -FI_ENOENT, "fi_cancel of nothing");
    CHECK_RET(fi_cancel(&t->ep->fid, NULL), -FI_EINVAL, "fi_cancel(NULL)");
    /* a key nobody registered: asked of the target (here itself) while the
     * caller progresses, then refused */
    ssize_t r;
    double end = now_s() + 30;
    struct fi_cq_tagged_entry ce;
    while ((r = fi_read(t->ep, buf, 8, NULL, self, 0, 0xdead, &ctx)) == -FI_EAGAIN &&
           now_s() < end)
        (void)fi_cq_read(t->cq, &ce, 1);
    CHECK_RET(r, -FI_EKEYREJECTED, "fi_read with a key nobody registered");
    while ((r = fi_write(t->ep, buf, 8, NULL, self, 0, 0xdead, &ctx)) == -FI_EAGAIN &&
           now_s() < end)
        (void)fi_cq_read(t->cq, &ce, 1);
    CHECK_RET(r, -FI_EKEYREJECTED, "fi_write with a key nobody registered");
    size_t v = 0, vl = sizeof(v);
    CHECK_RET(fi_getopt(&t->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &v, &vl),
              -FI_ENOPROTOOPT, "fi_getopt FI_OPT_MIN_MULTI_RECV");
    CHECK_RET(fi_setopt(&t->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &v, sizeof(v)),
              -FI_ENOPROTOOPT, "fi_setopt FI_OPT_MIN_MULTI_RECV");
    CHECK_RET(fi_getopt(&t->ep->fid, 99, FI_OPT_MIN_MULTI_RECV, &v, &vl), -FI_ENOPROTOOPT,
              "fi_getopt unknown level");
    uint64_t f = FI_TRANSMIT | FI_RECV;
    CHECK_RET(fi_control(&t->ep->fid, FI_GETOPSFLAG, &f), -FI_EINVAL, "FI_GETOPSFLAG both ways");
    f = FI_TRANSMIT | FI_MULTI_RECV;
    CHECK_RET(fi_control(&t->ep->fid, FI_SETOPSFLAG, &f), -FI_EBADFLAGS, "FI_SETOPSFLAG bad flag");
    CHECK_RET(fi_ep_bind(t->ep, &t->cq->fid, FI_RECV), -FI_EOPBADSTATE, "bind after fi_enable");
    /* a peek that finds nothing: an FI_ENOMSG error entry */
    m.tag = 0x5eed;
    CHECK_RET(fi_trecvmsg(t->ep, &m, FI_PEEK | FI_COMPLETION), 0, "FI_PEEK");
    struct fi_cq_tagged_entry te;
    CHECK_RET(fi_cq_read(t->cq, &te, 1), -FI_EAVAIL, "fi_cq_read at an error entry");
    struct fi_cq_err_entry ee = {0};
    CHECK_RET(fi_cq_readerr(t->cq, &ee, 0), 1, "fi_cq_readerr");
    CHECK(ee.err == FI_ENOMSG && ee.op_context == &ctx, "peek miss: FI_ENOMSG (%d)", ee.err);
    CHECK(fi_cq_strerror(t->cq, ee.prov_errno, ee.err_data, NULL, 0) != NULL, "fi_cq_strerror");
    CHECK_RET(fi_cq_readerr(t->cq, &ee, 0), -FI_EAGAIN, "fi_cq_readerr empty");
    CHECK_RET(fi_cq_read(t->cq, &te, 1), -FI_EAGAIN, "fi_cq_read empty");
    CHECK_RET(fi_cq_read(t->cq, NULL, 1), -FI_EINVAL, "fi_cq_read NULL buffer");
    CHECK_RET(fi_cq_sread(t->cq, &te, 1, NULL, 10), -FI_EAGAIN, "fi_cq_sread timeout");
    CHECK_RET(fi_close(&t->cq->fid), -FI_EBUSY, "fi_close(cq) bound to an endpoint");
    struct fi_cq_attr ca = {.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_FD};
    struct fid_cq *cq2 = NULL;
    CHECK_RET(fi_cq_open(t->domain, &ca, &cq2, NULL), -FI_ENOSYS, "fi_cq_open(FI_WAIT_FD)");
    ca = (struct fi_cq_attr){.format = (enum fi_cq_format)99};
    CHECK_RET(fi_cq_open(t->domain, &ca, &cq2, NULL), -FI_EINVAL, "fi_cq_open bad format");
    ca = (struct fi_cq_attr){.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE};
    CHECK_RET(fi_cq_open(t->domain, &ca, &cq2, NULL), 0, "fi_cq_open(FI_WAIT_NONE)");
    CHECK_RET(fi_cq_sread(cq2, &te, 1, NULL, 10), -FI_EINVAL, "fi_cq_sread without wait object");
    CHECK_RET(fi_close(&cq2->fid), 0, "fi_close(cq)");
    printf("ok endpoint refusals\n");
}

/* an endpoint before its bindings: not enabled, nothing bound */
static void test_unbound(struct fi_info *fi)
{
    struct tep t = {.info = fi};
    CHECK_RET(fi_fabric(fi->fabric_attr, &t.fabric, NULL), 0, "fi_fabric");
    CHECK_RET(fi_domain(t.fabric, fi, &t.domain, NULL), 0, "fi_domain");
    struct fi_av_attr aa = {.type = FI_AV_MAP};
    CHECK_RET(fi_av_open(t.domain, &aa, &t.av, NULL), 0, "fi_av_open");
    struct fi_cq_attr ca = {.format = FI_CQ_FORMAT_CONTEXT};
    CHECK_RET(fi_cq_open(t.domain, &ca, &t.cq, NULL), 0, "fi_cq_open");
    CHECK_RET(fi_endpoint(t.domain, fi, &t.ep, NULL), 0, "fi_endpoint");
    char buf[8];
    struct fi_context ctx;
    CHECK_RET(fi_tsend(t.ep, buf, 8, NULL, 0, 1, &ctx), -FI_EOPBADSTATE, "fi_tsend not enabled");
    CHECK_RET(fi_trecv(t.ep, buf, 8, NULL, 0, 1, 0, &ctx), -FI_EOPBADSTATE, "fi_trecv not enabled");
    CHECK_RET(fi_enable(t.ep), -FI_ENOAV, "fi_enable without an AV");
    CHECK_RET(fi_ep_bind(t.ep, &t.av->fid, 0), 0, "fi_ep_bind(av)");
    CHECK_RET(fi_ep_bind(t.ep, &t.av->fid, 0), -FI_EINVAL, "a second AV");
    CHECK_RET(fi_enable(t.ep), -FI_ENOCQ, "fi_enable without a CQ");
    CHECK_RET(fi_ep_bind(t.ep, &t.cq->fid, 0), -FI_EBADFLAGS, "fi_ep_bind(cq) no direction");
    CHECK_RET(fi_ep_bind(t.ep, &t.cq->fid, FI_TRANSMIT), 0, "fi_ep_bind(cq, FI_TRANSMIT)");
    CHECK_RET(fi_ep_bind(t.ep, &t.cq->fid, FI_TRANSMIT), -FI_EINVAL, "a second transmit CQ");
    CHECK_RET(fi_enable(t.ep), -FI_ENOCQ, "fi_enable without a receive CQ");
    CHECK_RET(fi_ep_bind(t.ep, &t.cq->fid, FI_RECV | FI_SELECTIVE_COMPLETION), 0,
              "fi_ep_bind(cq, FI_RECV)");
    struct fi_cntr_attr cta = {.events = FI_CNTR_EVENTS_COMP};
    struct fid_cntr *cn = NULL;
    CHECK_RET(fi_cntr_open(t.domain, &cta, &cn, NULL), 0, "fi_cntr_open");
    CHECK_RET(fi_ep_bind(t.ep, &cn->fid, FI_REMOTE_WRITE), -FI_EINVAL,
              "counter FI_REMOTE_WRITE (no FI_RMA_EVENT)");
    CHECK_RET(fi_ep_bind(t.ep, &cn->fid, 0), -FI_EBADFLAGS, "counter without flags");
    CHECK_RET(fi_ep_bind(t.ep, NULL, FI_SEND), -FI_EINVAL, "fi_ep_bind(NULL)");
    CHECK_RET(fi_enable(t.ep), 0, "fi_enable");
    CHECK_RET(fi_close(&cn->fid), 0, "fi_close(cntr)");
    tep_close(&t);
    printf("ok endpoint states\n");
}

/* FI_TERN_NUM_WORKERS=2 (the script sets it): two endpoints, a third refused */
static void test_workers(void)
{
    struct fi_info *h = tern_hints(), *fi = NULL;
    h->domain_attr->ep_cnt = 2;
    CHECK_RET(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &fi), 0, "ep_cnt 2 with 2 workers");
    fi_freeinfo(h);
    if (fi == NULL)
        return;
    CHECK(fi->domain_attr->ep_cnt == 2, "ep_cnt %zu", fi->domain_attr->ep_cnt);
    struct tep t = {.info = fi};
    CHECK_RET(tep_open_ep(&t, FI_CQ_FORMAT_TAGGED, 0), 0, "the first endpoint");
    struct fid_ep *e2 = NULL, *e3 = NULL;
    CHECK_RET(fi_endpoint(t.domain, fi, &e2, NULL), 0, "a second endpoint (worker 1)");
    CHECK_RET(fi_endpoint(t.domain, fi, &e3, NULL), -FI_EBUSY, "a third endpoint");
    if (e2 != NULL) {
        char a[8192], b[8192];
        size_t la = sizeof(a), lb = sizeof(b);
        CHECK_RET(fi_getname(&t.ep->fid, a, &la), 0, "fi_getname");
        CHECK_RET(fi_getname(&e2->fid, b, &lb), 0, "fi_getname");
        CHECK(la != lb || memcmp(a, b, la) != 0, "two endpoints, two names");
        CHECK_RET(fi_close(&e2->fid), 0, "fi_close(second endpoint)");
        CHECK_RET(fi_endpoint(t.domain, fi, &e2, NULL), 0, "its worker handed out again");
        CHECK_RET(fi_close(&e2->fid), 0, "fi_close");
    }
    tep_close(&t);
    fi_freeinfo(fi);
    printf("ok two workers, two endpoints\n");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && strcmp(argv[1], "workers") == 0) {
        test_workers();
        printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
        return failures ? 1 : 0;
    }
    test_hints();
    struct fi_info *fi = open_info(FI_THREAD_DOMAIN);
    struct tep t = {.info = fi};
    int ret = tep_open_ep(&t, FI_CQ_FORMAT_TAGGED, 0);
    CHECK_RET(ret, 0, "open an endpoint (TERN_NETMODS, a job of one)");
    if (ret == 0) {
        test_fabric_domain(&t);
        test_mr(&t);
        test_eq_cntr(&t);
        test_av(&t);
        test_ep(&t, fi);
    }
    tep_close(&t);
    /* the last domain closed, the context is finalized; a new one is made */
    test_unbound(fi);
    fi_freeinfo(fi);
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
