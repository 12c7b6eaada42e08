/*
 * ibloop: the context's operation tables, and the exported entry points
 * that this device does not support.  Every slot a program can reach
 * through verbs.h (context->ops and struct verbs_context) is filled: what is
 * not emulated fails cleanly with EOPNOTSUPP (or NULL + errno), never a
 * NULL-pointer call.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>
#include <string.h>
#include <time.h>

#include "ibloop.h"

#undef ibv_query_port

/* ---- unsupported verbs_context operations -------------------------------- */
#define NULLOP(type, name, ...)             \
    static type *name(__VA_ARGS__)          \
    {                                       \
        errno = EOPNOTSUPP;                 \
        return NULL;                        \
    }
#define ERROP(name, ...)                    \
    static int name(__VA_ARGS__)            \
    {                                       \
        return EOPNOTSUPP;                  \
    }

ERROP(op_advise_mr, struct ibv_pd *pd, enum ibv_advise_mr_advice a, uint32_t f,
      struct ibv_sge *s, uint32_t n)
NULLOP(struct ibv_mr, op_alloc_null_mr, struct ibv_pd *pd)
ERROP(op_read_counters, struct ibv_counters *c, uint64_t *v, uint32_t n, uint32_t f)
ERROP(op_attach_counters, struct ibv_counters *c, struct ibv_counter_attach_attr *a,
      struct ibv_flow *f)
NULLOP(struct ibv_counters, op_create_counters, struct ibv_context *c, struct ibv_counters_init_attr *a)
ERROP(op_destroy_counters, struct ibv_counters *c)
NULLOP(struct ibv_mr, op_reg_dm_mr, struct ibv_pd *pd, struct ibv_dm *dm, uint64_t o, size_t l,
       unsigned int a)
NULLOP(struct ibv_dm, op_alloc_dm, struct ibv_context *c, struct ibv_alloc_dm_attr *a)
ERROP(op_free_dm, struct ibv_dm *dm)
ERROP(op_modify_flow_action_esp, struct ibv_flow_action *f,
      struct ibv_flow_action_esp_attr *a)
ERROP(op_destroy_flow_action, struct ibv_flow_action *f)
NULLOP(struct ibv_flow_action, op_create_flow_action_esp, struct ibv_context *c, struct ibv_flow_action_esp_attr *a)
ERROP(op_modify_qp_rate_limit, struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *a)
NULLOP(struct ibv_pd, op_alloc_parent_domain, struct ibv_context *c, struct ibv_parent_domain_init_attr *a)
ERROP(op_dealloc_td, struct ibv_td *td)
NULLOP(struct ibv_td, op_alloc_td, struct ibv_context *c, struct ibv_td_init_attr *a)
ERROP(op_modify_cq, struct ibv_cq *cq, struct ibv_modify_cq_attr *a)
ERROP(op_destroy_rwq_ind_table, struct ibv_rwq_ind_table *t)
NULLOP(struct ibv_rwq_ind_table, op_create_rwq_ind_table, struct ibv_context *c, struct ibv_rwq_ind_table_init_attr *a)
ERROP(op_destroy_wq, struct ibv_wq *wq)
ERROP(op_modify_wq, struct ibv_wq *wq, struct ibv_wq_attr *a)
NULLOP(struct ibv_wq, op_create_wq, struct ibv_context *c, struct ibv_wq_init_attr *a)
NULLOP(struct ibv_cq_ex, op_create_cq_ex, struct ibv_context *c, struct ibv_cq_init_attr_ex *a)
ERROP(op_destroy_flow, struct ibv_flow *f)
NULLOP(struct ibv_flow, op_create_flow, struct ibv_qp *qp, struct ibv_flow_attr *a)
NULLOP(struct ibv_qp, op_open_qp, struct ibv_context *c, struct ibv_qp_open_attr *a)
ERROP(op_get_srq_num, struct ibv_srq *srq, uint32_t *n)
NULLOP(struct ibv_srq, op_create_srq_ex, struct ibv_context *c, struct ibv_srq_init_attr_ex *a)
NULLOP(struct ibv_xrcd, op_open_xrcd, struct ibv_context *c, struct ibv_xrcd_init_attr *a)
ERROP(op_close_xrcd, struct ibv_xrcd *x)
NULLOP(struct ibv_mw, op_alloc_mw, struct ibv_pd *pd, enum ibv_mw_type t)
ERROP(op_bind_mw, struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b)
ERROP(op_dealloc_mw, struct ibv_mw *mw)

static void op_placeholder(void)
{
}

static void *op_compat(void)
{
    errno = EOPNOTSUPP;
    return NULL;
}

static int op_post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *op,
                           struct ibv_ops_wr **bad)
{
    *bad = op;
    return EOPNOTSUPP;
}

static int op_query_rt_values(struct ibv_context *c, struct ibv_values_ex *v)
{
    if (v->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
        return EINVAL;
    if (v->comp_mask & IBV_VALUES_MASK_RAW_CLOCK)
        clock_gettime(CLOCK_MONOTONIC, &v->raw_clock);
    return 0;
}

void ibloop_fill_ops(struct ibloop_context *c)
{
    struct verbs_context *v = &c->vctx;
    struct ibv_context_ops *o = &v->context.ops;

    o->_compat_query_device = ibv_query_device;
    o->_compat_query_port = ibv_query_port;
    o->_compat_alloc_pd = op_compat;
    o->_compat_dealloc_pd = op_compat;
    o->_compat_reg_mr = op_compat;
    o->_compat_rereg_mr = op_compat;
    o->_compat_dereg_mr = op_compat;
    o->alloc_mw = op_alloc_mw;
    o->bind_mw = op_bind_mw;
    o->dealloc_mw = op_dealloc_mw;
    o->_compat_create_cq = op_compat;
    o->poll_cq = ibloop_poll_cq;
    o->req_notify_cq = ibloop_req_notify_cq;
    o->_compat_cq_event = op_compat;
    o->_compat_resize_cq = op_compat;
    o->_compat_destroy_cq = op_compat;
    o->_compat_create_srq = op_compat;
    o->_compat_modify_srq = op_compat;
    o->_compat_query_srq = op_compat;
    o->_compat_destroy_srq = op_compat;
    o->post_srq_recv = ibloop_post_srq_recv;
    o->_compat_create_qp = op_compat;
    o->_compat_query_qp = op_compat;
    o->_compat_modify_qp = op_compat;
    o->_compat_destroy_qp = op_compat;
    o->post_send = ibloop_post_send;
    o->post_recv = ibloop_post_recv;
    o->_compat_create_ah = op_compat;
    o->_compat_destroy_ah = op_compat;
    o->_compat_attach_mcast = op_compat;
    o->_compat_detach_mcast = op_compat;
    o->_compat_async_event = op_compat;

    v->query_port = ibloop_query_port;
    v->advise_mr = op_advise_mr;
    v->alloc_null_mr = op_alloc_null_mr;
    v->read_counters = op_read_counters;
    v->attach_counters_point_flow = op_attach_counters;
    v->create_counters = op_create_counters;
    v->destroy_counters = op_destroy_counters;
    v->reg_dm_mr = op_reg_dm_mr;
    v->alloc_dm = op_alloc_dm;
    v->free_dm = op_free_dm;
    v->modify_flow_action_esp = op_modify_flow_action_esp;
    v->destroy_flow_action = op_destroy_flow_action;
    v->create_flow_action_esp = op_create_flow_action_esp;
    v->modify_qp_rate_limit = op_modify_qp_rate_limit;
    v->alloc_parent_domain = op_alloc_parent_domain;
    v->dealloc_td = op_dealloc_td;
    v->alloc_td = op_alloc_td;
    v->modify_cq = op_modify_cq;
    v->post_srq_ops = op_post_srq_ops;
    v->destroy_rwq_ind_table = op_destroy_rwq_ind_table;
    v->create_rwq_ind_table = op_create_rwq_ind_table;
    v->destroy_wq = op_destroy_wq;
    v->modify_wq = op_modify_wq;
    v->create_wq = op_create_wq;
    v->query_rt_values = op_query_rt_values;
    v->create_cq_ex = op_create_cq_ex;
    v->priv = NULL;
    v->query_device_ex = ibloop_query_device_ex;
    v->ibv_destroy_flow = op_destroy_flow;
    v->ABI_placeholder2 = op_placeholder;
    v->ibv_create_flow = op_create_flow;
    v->ABI_placeholder1 = op_placeholder;
    v->open_qp = op_open_qp;
    v->create_qp_ex = ibloop_create_qp_ex;
    v->get_srq_num = op_get_srq_num;
    v->create_srq_ex = op_create_srq_ex;
    v->open_xrcd = op_open_xrcd;
    v->close_xrcd = op_close_xrcd;
}

/* ---- exported but not emulated -------------------------------------------- */
int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
    return EOPNOTSUPP;
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
    return EOPNOTSUPP;
}

int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
                 size_t length, int access)
{
    errno = EOPNOTSUPP;
    return IBV_REREG_MR_ERR_INPUT;
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
                                 uint64_t iova, int fd, int access)
{
    errno = EOPNOTSUPP;
    return NULL;
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
    return NULL; /* no QP is created with send_ops_flags */
}

int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
    return 1; /* data lands in order: one copy, front to back */
}

struct ibv_context *ibv_import_device(int cmd_fd)
{
    errno = EOPNOTSUPP;
    return NULL;
}

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
    errno = EOPNOTSUPP;
    return NULL;
}

void ibv_unimport_pd(struct ibv_pd *pd)
{
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
    errno = EOPNOTSUPP;
    return NULL;
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
}

struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
    errno = EOPNOTSUPP;
    return NULL;
}

void ibv_unimport_dm(struct ibv_dm *dm)
{
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
    return EOPNOTSUPP;
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
    return EOPNOTSUPP;
}

int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
                                uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
    if (!ibloop_fab.roce || !attr->is_global)
        return EINVAL;
    eth_mac[0] = 0x02;
    eth_mac[1] = 0x1b;
    eth_mac[2] = 0x10;
    eth_mac[3] = 0x00;
    eth_mac[4] = attr->grh.dgid.raw[14];
    eth_mac[5] = attr->grh.dgid.raw[15];
    if (vid)
        *vid = 0xffff; /* no VLAN */
    return 0;
}

/* the pre-2018 provider registration entry: nothing to register here */
void ibv_register_driver(const char *name, void *init_func);
void ibv_register_driver(const char *name, void *init_func)
{
}

/* ---- kernel ABI marshalling helpers, used by other rdma-core libraries ------ */
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src);
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src)
{
    memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid));
    dst->grh.flow_label = src->grh.flow_label;
    dst->grh.sgid_index = src->grh.sgid_index;
    dst->grh.hop_limit = src->grh.hop_limit;
    dst->grh.traffic_class = src->grh.traffic_class;
    dst->dlid = src->dlid;
    dst->sl = src->sl;
    dst->src_path_bits = src->src_path_bits;
    dst->static_rate = src->static_rate;
    dst->is_global = src->is_global;
    dst->port_num = src->port_num;
}

void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src)
{
    dst->cur_qp_state = src->cur_qp_state;
    dst->path_mtu = src->path_mtu;
    dst->path_mig_state = src->path_mig_state;
    dst->qkey = src->qkey;
    dst->rq_psn = src->rq_psn;
    dst->sq_psn = src->sq_psn;
    dst->dest_qp_num = src->dest_qp_num;
    dst->qp_access_flags = src->qp_access_flags;
    dst->cap.max_send_wr = src->max_send_wr;
    dst->cap.max_recv_wr = src->max_recv_wr;
    dst->cap.max_send_sge = src->max_send_sge;
    dst->cap.max_recv_sge = src->max_recv_sge;
    dst->cap.max_inline_data = src->max_inline_data;
    ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
    ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
    dst->pkey_index = src->pkey_index;
    dst->alt_pkey_index = src->alt_pkey_index;
    dst->en_sqd_async_notify = src->en_sqd_async_notify;
    dst->sq_draining = src->sq_draining;
    dst->max_rd_atomic = src->max_rd_atomic;
    dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
    dst->min_rnr_timer = src->min_rnr_timer;
    dst->port_num = src->port_num;
    dst->timeout = src->timeout;
    dst->retry_cnt = src->retry_cnt;
    dst->rnr_retry = src->rnr_retry;
    dst->alt_port_num = src->alt_port_num;
    dst->alt_timeout = src->alt_timeout;
}

void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src)
{
    memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid));
    memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid));
    dst->dlid = src->dlid;
    dst->slid = src->slid;
    dst->raw_traffic = (int)src->raw_traffic;
    dst->flow_label = src->flow_label;
    dst->reversible = (int)src->reversible;
    dst->mtu = (uint8_t)src->mtu;
    dst->pkey = src->pkey;
    dst->hop_limit = src->hop_limit;
    dst->traffic_class = src->traffic_class;
    dst->numb_path = src->numb_path;
    dst->sl = src->sl;
    dst->mtu_selector = src->mtu_selector;
    dst->rate_selector = src->rate_selector;
    dst->rate = src->rate;
    dst->packet_life_time_selector = src->packet_life_time_selector;
    dst->packet_life_time = src->packet_life_time;
    dst->preference = src->preference;
}

void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src)
{
    memcpy(dst->dgid, src->dgid.raw, sizeof(src->dgid));
    memcpy(dst->sgid, src->sgid.raw, sizeof(src->sgid));
    dst->dlid = src->dlid;
    dst->slid = src->slid;
    dst->raw_traffic = (uint32_t)src->raw_traffic;
    dst->flow_label = src->flow_label;
    dst->reversible = (uint32_t)src->reversible;
    dst->mtu = src->mtu;
    dst->pkey = src->pkey;
    dst->hop_limit = src->hop_limit;
    dst->traffic_class = src->traffic_class;
    dst->numb_path = src->numb_path;
    dst->sl = src->sl;
    dst->mtu_selector = src->mtu_selector;
    dst->rate_selector = src->rate_selector;
    dst->rate = src->rate;
    dst->packet_life_time_selector = src->packet_life_time_selector;
    dst->packet_life_time = src->packet_life_time;
    dst->preference = src->preference;
}
