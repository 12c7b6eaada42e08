/*
 * ibloop: the private (IBVERBS_PRIVATE_34) entry points that rdma-core's
 * kernel-driver providers link to, as stubs.
 *
 * Debian's libfabric.so.1 links libefa.so.1, rdma-core's provider for AWS
 * EFA, which references 21 functions of libibverbs' private node
 * (ibv_cmd_*: the kernel's uverbs commands; verbs_register_driver_34 in
 * its constructor).  Without them the dynamic linker refuses every program
 * that loads libfabric once ibloop is first on the library path ("symbol
 * lookup error: libefa.so.1: undefined symbol: ibv_cmd_destroy_cq"), so no
 * libfabric program (fi_info, Open MPI's mtl ofi, tern's own provider) could
 * run beside ibloop.  ibloop has no kernel device and registers no driver:
 * no device it lists is an EFA device (efadv_query_device answers
 * EOPNOTSUPP for it), so these are never reached through a device; each
 * refuses (EOPNOTSUPP, or NULL with errno) if something calls it anyway,
 * and the constructor's registration is a no-op.  Their true prototypes
 * live in rdma-core's private driver.h, which ibloop does not include: a
 * stub takes no arguments, which the callers' ABI tolerates (arguments in
 * registers are ignored, and the return registers are the same).
 */
#include <errno.h>
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

IBLOOP_NO_KERNEL_CMD(ibv_cmd_alloc_pd)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_ah)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_cq_ex)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_create_qp_ex)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_dealloc_pd)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_dereg_mr)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_destroy_ah)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_destroy_cq)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_destroy_qp)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_get_context)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_modify_qp)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_query_device_any)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_query_port)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_query_qp)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_reg_dmabuf_mr)
IBLOOP_NO_KERNEL_CMD(ibv_cmd_reg_mr)

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

/* the providers' debug log (rdma-core prints it only with VERBS_LOG_LEVEL) */
void __verbs_log(void);
void __verbs_log(void) {}
