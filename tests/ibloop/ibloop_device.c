/*
 * ibloop: the device list, contexts, and device/port/GID/P_Key queries.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ibloop.h"

/* the header turns these names into macros; we define the real symbols */
#undef ibv_query_port
#undef ibv_get_device_list

/*
 * The device, laid out as rdma-core's struct verbs_device (driver.h, not
 * installed): the public struct ibv_device first, then the provider's ops
 * pointer.  Provider libraries loaded beside ibloop (libmlx5 through UCX or
 * DPDK, libefa through libfabric) tell their own devices by that pointer
 * (mlx5dv_is_supported, efadv_query_device): NULL here, so ibloop0 is
 * nobody's, and they answer "not supported" instead of reading past a bare
 * struct ibv_device.  The fields after ops (refcount, list entry, sysfs
 * node, core_support) are only read by libibverbs itself: zero.
 */
static struct {
    struct ibv_device device;
    const void *ops;
    uint64_t rdma_core_private[6];
} ibloop_verbs_device = {
    .device = {
        .node_type = IBV_NODE_CA,
        .transport_type = IBV_TRANSPORT_IB,
        .name = "ibloop0",
        .dev_name = "uverbs0",
        .dev_path = "/sys/class/infiniband_verbs/uverbs0",
        .ibdev_path = "/sys/class/infiniband/ibloop0",
    },
};
#define ibloop_device (ibloop_verbs_device.device)

/* ---- addresses ---------------------------------------------------------- */
/* Node GUID: per host (network namespace), known before attaching. */
static uint64_t host_guid(void)
{
    struct stat st;
    uint64_t h;

    if (stat("/proc/self/ns/net", &st))
        st.st_ino = 1;
    h = (uint64_t)st.st_ino * 0x9e3779b97f4a7c15ull;
    return 0x02000000ff000000ull | ((h >> 40) & 0xffffff);
}

int ibloop_gid_count(void)
{
    return ibloop_fab.roce ? 2 : 1;
}

/* IB: fe80::/64 + an interface id from the LID.  RoCE: [0] link-local
 * from a MAC made of the LID, [1] IPv4-mapped ::ffff:10.77.<lid>. */
void ibloop_gid(uint32_t lid, int index, union ibv_gid *gid)
{
    uint8_t *g = gid->raw;

    memset(g, 0, 16);
    if (!ibloop_fab.roce) {
        static const uint8_t iid[6] = {0x02, 0x00, 0x1b, 0x10, 0x00, 0x00};
        g[0] = 0xfe;
        g[1] = 0x80;
        memcpy(g + 8, iid, 6);
        g[14] = (uint8_t)(lid >> 8);
        g[15] = (uint8_t)lid;
    } else if (index == 0) {
        g[0] = 0xfe;
        g[1] = 0x80;
        g[8] = 0x00; /* MAC 02:1b:10:00:hi:lo, U/L bit flipped */
        g[9] = 0x1b;
        g[10] = 0x10;
        g[11] = 0xff;
        g[12] = 0xfe;
        g[13] = 0x00;
        g[14] = (uint8_t)(lid >> 8);
        g[15] = (uint8_t)lid;
    } else {
        g[10] = 0xff;
        g[11] = 0xff;
        g[12] = 10;
        g[13] = 77;
        g[14] = (uint8_t)(lid >> 8);
        g[15] = (uint8_t)lid;
    }
}

bool ibloop_gid_is_host(const uint8_t dgid[16], uint32_t lid)
{
    union ibv_gid g;

    for (int i = 0; i < ibloop_gid_count(); i++) {
        ibloop_gid(lid, i, &g);
        if (!memcmp(g.raw, dgid, 16))
            return true;
    }
    return false;
}

/* ---- device list -------------------------------------------------------- */
struct ibv_device **ibv_get_device_list(int *num)
{
    struct ibv_device **l = calloc(2, sizeof(*l));

    if (!l) {
        errno = ENOMEM;
        return NULL;
    }
    if (!ibloop_env()->no_device)
        l[0] = &ibloop_device;
    if (num)
        *num = l[0] ? 1 : 0;
    return l;
}

void ibv_free_device_list(struct ibv_device **list)
{
    free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
    return device ? device->name : NULL;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
    return htobe64(host_guid());
}

int ibv_get_device_index(struct ibv_device *device)
{
    return device == &ibloop_device ? 0 : -1;
}

/* ---- contexts ------------------------------------------------------------ */
static int ctx_wire_create(struct ibloop_context *c, int efd, uint64_t id)
{
    struct ibloop_wire_ctx *w;
    int i;

    ibloop_fab_lock();
    i = ibloop_tab_alloc(IBLOOP_T_CTX);
    if (i < 0) {
        ibloop_fab_unlock();
        return ENOMEM;
    }
    w = ibloop_ctx((uint32_t)i);
    ibloop_lock_init(&w->lock);
    w->proc = ibloop_fab.proc;
    w->efd = efd;
    w->efd_id = id;
    c->idx = (uint32_t)i;
    c->gen = ibloop_new_gen();
    atomic_store(&w->gen, c->gen);
    ibloop_fab_unlock();
    return 0;
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
    struct ibloop_context *c;
    struct ibv_context *ctx;
    uint64_t id = 0;
    int rc, efd;

    if (device != &ibloop_device) {
        errno = ENODEV;
        return NULL;
    }
    rc = ibloop_attach();
    if (rc) {
        errno = rc;
        return NULL;
    }
    c = calloc(1, sizeof(*c));
    efd = ibloop_efd_create(&id);
    if (!c || efd < 0 || (rc = ctx_wire_create(c, efd, id))) {
        rc = c && efd >= 0 ? rc : ENOMEM;
        if (efd >= 0)
            close(efd);
        free(c);
        ibloop_detach();
        errno = rc;
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->async_lock, NULL);
    pthread_mutex_init(&c->thr_lock, NULL);
    {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&c->thr_cond, &ca);
        pthread_condattr_destroy(&ca);
    }
    ctx = &c->vctx.context;
    ctx->device = device;
    ctx->cmd_fd = -1;
    ctx->async_fd = efd;
    ctx->num_comp_vectors = 1;
    pthread_mutex_init(&ctx->mutex, NULL);
    ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
    c->vctx.sz = sizeof(struct verbs_context);
    ibloop_fill_ops(c);
    IBLOOP_DBG("opened context %u", c->idx);
    return ctx;
}

int ibv_close_device(struct ibv_context *context)
{
    struct ibloop_context *c = ibloop_ctx_of(context);
    struct ibloop_wire_ctx *w = ibloop_ctx(c->idx);

    ibloop_helper_stop(c);
    if (atomic_load(&c->nobjs))
        IBLOOP_DBG("closing a context with %d objects still alive",
                   atomic_load(&c->nobjs));
    ibloop_fab_lock();
    ibloop_reclaim_ctx(c->idx);
    ibloop_lock(&w->lock);
    atomic_store(&w->gen, 0);
    ibloop_unlock(&w->lock);
    ibloop_fab_unlock();
    close(context->async_fd);
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->async_lock);
    pthread_mutex_destroy(&c->thr_lock);
    pthread_cond_destroy(&c->thr_cond);
    pthread_mutex_destroy(&context->mutex);
    free(c);
    ibloop_detach();
    return 0;
}

/* ---- queries ------------------------------------------------------------- */
static void fill_device_attr(struct ibv_device_attr *a)
{
    const struct ibloop_env *e = ibloop_env();
    bool rxe = e->mode == IBLOOP_MODE_RXE;

    memset(a, 0, sizeof(*a));
    /* the vendor of the mode it follows (UCX, for one, reads vendor ids to
     * pick device quirks), the firmware version saying what it really is */
    snprintf(a->fw_ver, sizeof(a->fw_ver), "1.0.0 (ibloop %s)", rxe ? "rxe" : "mlx5");
    a->node_guid = htobe64(host_guid());
    a->sys_image_guid = a->node_guid;
    a->max_mr_size = 1ull << 46;
    a->page_size_cap = 0xfffff000u;
    a->vendor_id = rxe ? IBLOOP_RXE_VENDOR_ID : IBLOOP_MLX5_VENDOR_ID;
    a->vendor_part_id = rxe ? 0 : IBLOOP_MLX5_VENDOR_PART;
    a->hw_ver = 1;
    a->max_qp = (int)IBLOOP_NQP - 2;
    a->max_qp_wr = (int)e->max_qp_wr;
    a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
                          IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_CURR_QP_STATE_MOD;
    a->max_sge = (int)e->max_sge;
    a->max_sge_rd = (int)e->max_sge;
    a->max_cq = (int)IBLOOP_NCQ;
    a->max_cqe = (int)e->max_cqe;
    a->max_mr = (int)IBLOOP_NMR - 1;
    a->max_pd = 1 << 20;
    a->max_qp_rd_atom = (int)IBLOOP_MAX_RD_ATOM;
    a->max_res_rd_atom = (int)(IBLOOP_MAX_RD_ATOM * IBLOOP_NQP);
    a->max_qp_init_rd_atom = (int)IBLOOP_MAX_RD_ATOM;
    a->atomic_cap = IBV_ATOMIC_HCA;
    a->max_ah = 1 << 20;
    a->max_srq = (int)IBLOOP_NSRQ;
    a->max_srq_wr = (int)e->max_qp_wr;
    a->max_srq_sge = (int)e->max_sge;
    a->max_pkeys = 1;
    a->local_ca_ack_delay = 16;
    a->phys_port_cnt = 1;
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *a)
{
    fill_device_attr(a);
    return 0;
}

int ibloop_query_device_ex(struct ibv_context *context,
                           const struct ibv_query_device_ex_input *input,
                           struct ibv_device_attr_ex *attr, size_t size)
{
    struct ibv_device_attr_ex a;

    if (input && input->comp_mask)
        return EINVAL;
    if (size < sizeof(struct ibv_device_attr))
        return EINVAL;
    memset(&a, 0, sizeof(a));
    fill_device_attr(&a.orig_attr);
    a.phys_port_cnt_ex = 1;
    memset(attr, 0, size);
    memcpy(attr, &a, size < sizeof(a) ? size : sizeof(a));
    return 0;
}

int ibloop_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *out,
                      size_t len)
{
    struct ibv_port_attr a;
    bool down;

    if (port != 1)
        return EINVAL;
    ibloop_port_check();
    down = atomic_load(&ibloop_proc(ibloop_fab.proc)->port_down) != 0;
    memset(&a, 0, sizeof(a));
    a.state = down ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
    a.max_mtu = IBLOOP_MTU;
    a.active_mtu = (enum ibv_mtu)ibloop_env()->mtu;
    a.gid_tbl_len = ibloop_gid_count();
    a.port_cap_flags = ibloop_fab.roce ? 0x04010000u /* CM, IP based GIDs */
                                       : 0x00010000u;  /* CM */
    a.max_msg_sz = IBLOOP_MAX_MSG;
    a.pkey_tbl_len = 1;
    a.lid = ibloop_fab.roce ? 0 : (uint16_t)ibloop_fab.lid;
    a.sm_lid = ibloop_fab.roce ? 0 : 1;
    a.max_vl_num = 1;
    a.subnet_timeout = 18;
    a.active_width = 2;  /* 4x */
    a.active_speed = 32; /* EDR */
    a.phys_state = down ? 3 /* disabled */ : 5 /* link up */;
    a.link_layer = ibloop_fab.roce ? IBV_LINK_LAYER_ETHERNET
                                   : IBV_LINK_LAYER_INFINIBAND;
    memcpy(out, &a, len < sizeof(a) ? len : sizeof(a));
    return 0;
}

int ibv_query_port(struct ibv_context *context, uint8_t port_num,
                   struct _compat_ibv_port_attr *port_attr)
{
    return ibloop_query_port(context, port_num, (struct ibv_port_attr *)port_attr,
                             offsetof(struct ibv_port_attr, port_cap_flags2));
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
                  union ibv_gid *gid)
{
    if (port_num != 1 || index < 0 || index >= ibloop_gid_count()) {
        errno = EINVAL;
        return -1;
    }
    ibloop_gid(ibloop_fab.lid, index, gid);
    return 0;
}

static void gid_entry(uint32_t index, struct ibv_gid_entry *e)
{
    memset(e, 0, sizeof(*e));
    ibloop_gid(ibloop_fab.lid, (int)index, &e->gid);
    e->gid_index = index;
    e->port_num = 1;
    e->gid_type = !ibloop_fab.roce ? IBV_GID_TYPE_IB
                  : index == 0     ? IBV_GID_TYPE_ROCE_V1
                                   : IBV_GID_TYPE_ROCE_V2;
    e->ndev_ifindex = ibloop_fab.roce ? 1 : 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
                      uint32_t gid_index, struct ibv_gid_entry *entry,
                      uint32_t flags, size_t entry_size)
{
    struct ibv_gid_entry e;

    if (port_num != 1 || flags || gid_index >= (uint32_t)ibloop_gid_count())
        return EINVAL;
    if (entry_size < sizeof(e))
        return EINVAL;
    gid_entry(gid_index, &e);
    memcpy(entry, &e, sizeof(e));
    return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context,
                             struct ibv_gid_entry *entries, size_t max_entries,
                             uint32_t flags, size_t entry_size)
{
    size_t n = (size_t)ibloop_gid_count();

    if (flags || entry_size < sizeof(struct ibv_gid_entry))
        return -EINVAL;
    if (max_entries < n)
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        gid_entry((uint32_t)i, (struct ibv_gid_entry *)(void *)
                                   ((char *)entries + i * entry_size));
    return (ssize_t)n;
}

/* enum ibv_gid_type_sysfs of driver.h: 0 IB/RoCE v1, 1 RoCE v2 */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
                       unsigned int index, int *type);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
                       unsigned int index, int *type)
{
    if (port_num != 1 || index >= (unsigned)ibloop_gid_count()) {
        errno = EINVAL;
        return -1;
    }
    *type = ibloop_fab.roce && index == 1 ? 1 : 0;
    return 0;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
                   __be16 *pkey)
{
    if (port_num != 1 || index != 0) {
        errno = EINVAL;
        return -1;
    }
    *pkey = htobe16(IBLOOP_PKEY);
    return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num,
                       __be16 pkey)
{
    if (port_num != 1 || (be16toh(pkey) & 0x7fff) != 0x7fff) {
        errno = ENOENT;
        return -1;
    }
    return 0;
}
