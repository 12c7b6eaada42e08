/*
 * ibloop: the private (IBVERBS_PRIVATE_34) entry points that rdma-core's
 * kernel-driver providers link to, as stubs.
 *
 * rdma-core's provider libraries that programs link directly reference
 * functions (and one variable) of libibverbs' private node: Debian's
 * libfabric.so.1 links libefa.so.1 (21 of them), and UCX's libuct_ib,
 * DPDK's mlx5 drivers and rdma-core's own pyverbs link libmlx5.so.1 (55:
 * ibv_cmd_*, the kernel's uverbs commands; execute_ioctl; the provider
 * framework's verbs_* helpers; verbs_register_driver_34 in the
 * constructor).  Without them the dynamic linker refuses every such program
 * once ibloop is first on the library path ("symbol lookup error:
 * libmlx5.so.1: undefined symbol: verbs_allow_disassociate_destroy"), so no
 * libfabric program (fi_info, Open MPI's mtl ofi, tern's own provider) and
 * no UCX transport on InfiniBand (rc_verbs, ud_verbs) could run beside
 * ibloop.  This file covers the union of what libmlx4, libmlx5, libefa and
 * rdma-core 44's other providers reference (tests/ibloop/run.sh checks).
 *
 * ibloop has no kernel device and registers no driver: no device it lists
 * is an EFA or mlx5 device (its verbs_device carries no provider ops, so
 * efadv_query_device and mlx5dv_is_supported say no and the other mlx5dv_*
 * calls answer EOPNOTSUPP), so these are never reached through a device;
 * each refuses (EOPNOTSUPP, or NULL with errno) if something calls it
 * anyway, and the constructor's registration is a no-op.  Their true
 * prototypes live in rdma-core's private driver.h, which ibloop does not
 * include: a stub takes no arguments, which the callers' ABI tolerates
 * (arguments in registers are ignored, and the return registers are the
 * same).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "ibloop.h"

/* ibv_cmd_* return an errno value (0 on success) */
#define IBLOOP_NO_KERNEL_CMD(name)                                                                 \
    int name(void);                                                                                \
    int name(void)                                                                                 \
    {                                                                                              \
        errno = EOPNOTSUPP;                                                                        \
        return EOPNOTSUPP;                                                                         \
    }

IBLOOP_NO_KERNEL_CMD(ibv_cmd_advise_mr)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_alloc_dm)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_alloc_mw)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_alloc_pd)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_attach_mcast)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_close_xrcd)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_ah)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_counters)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_cq)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_cq_ex)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_flow)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_flow_action_esp)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_qp)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_qp_ex)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_qp_ex2)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_rwq_ind_table)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_srq)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_srq_ex)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_wq)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_dealloc_mw)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_dealloc_pd)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_dereg_mr)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_destroy_ah)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_destroy_counters)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_destroy_cq)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_destroy_flow)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_destroy_flow_action)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_destroy_qp)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_destroy_rwq_ind_table)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_destroy_srq)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_destroy_wq)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_detach_mcast)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_free_dm)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_get_context)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_modify_cq)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_modify_flow_action_esp)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_modify_qp)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_modify_qp_ex)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_modify_srq)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_modify_wq)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_open_qp)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_open_xrcd)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_poll_cq)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_post_recv)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_post_send)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_post_srq_recv)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_query_context)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_query_device_any)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_query_mr)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_query_port)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_query_qp)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_query_srq)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_read_counters)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_reg_dm_mr)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_reg_dmabuf_mr)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_reg_mr)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_req_notify_cq)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_rereg_mr)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_resize_cq)

/* a provider's constructor registers its driver: ibloop probes no kernel
 * device, so the driver is never asked to match one */
void verbs_register_driver_34(void);
void verbs_register_driver_34(void) {}

/* a provider's context allocation (from its alloc_context op, which ibloop
 * never calls): no kernel context */
void *_verbs_init_and_alloc_context(void);
void *_verbs_init_and_alloc_context(void)
{
    errno = EOPNOTSUPP;
    return NULL;
}

void verbs_set_ops(void);
void verbs_set_ops(void) {}

void verbs_uninit_context(void);
void verbs_uninit_context(void) {}

/* the ioctl path of the kernel commands (mlx5's DEVX and DV objects) */
IBLOOP_NO_KERNEL_CMD(execute_ioctl)

/* a provider's device open and CQ initialisation (from its ops, which ibloop
 * never calls) */
IBLOOP_NO_KERNEL_CMD(verbs_open_device)
IBLOOP_NO_KERNEL_CMD(verbs_init_cq)

/* rdma-core's switch letting a provider destroy objects of a disassociated
 * (hot-unplugged) device: a data object, read by libmlx5 */
bool verbs_allow_disassociate_destroy;

/* the providers' debug log (rdma-core prints it only with VERBS_LOG_LEVEL) */
void __verbs_log(void);
void __verbs_log(void) {}
