/*
 * fault_shim: failures ternrun cannot be made to meet on this machine,
 * injected by LD_PRELOAD (lib.sh's run_shim).  It acts in a process named
 * ternrun only (the ranks and `timeout` inherit LD_PRELOAD), each knob set
 * by the environment:
 *
 *   TERN_SHIM_NOTIFY_FAIL=CODE     PMIx_Notify_event(CODE, ...) returns
 *                                  PMIX_ERR_OUT_OF_RESOURCE and sends nothing
 *   TERN_SHIM_AFFINITY_BITS=N      sched_getaffinity with a mask smaller
 *                                  than N bits fails with EINVAL, as the
 *                                  kernel of a machine with N CPUs answers
 *                                  (the fixed cpu_set_t holds 1024)
 *
 * Test code only.
 */
#define _GNU_SOURCE 1

#include <dlfcn.h>
#include <errno.h>
#include <pmix.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* the knob's value when this process is ternrun and it is set */
static bool knob(const char *name, long *value)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0' || (strcmp(program_invocation_short_name, "ternrun") != 0 &&
                                    strcmp(program_invocation_short_name, "lt-ternrun") != 0))
        return false;
    char *end;
    *value = strtol(v, &end, 0);
    return *end == '\0';
}

pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                pmix_data_range_t range, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    typedef pmix_status_t (*fn_t)(pmix_status_t, const pmix_proc_t *, pmix_data_range_t,
                                  const pmix_info_t[], size_t, pmix_op_cbfunc_t, void *);
    long code;
    if (knob("TERN_SHIM_NOTIFY_FAIL", &code) && code == status)
        return PMIX_ERR_OUT_OF_RESOURCE;
    fn_t real = (fn_t)dlsym(RTLD_NEXT, "PMIx_Notify_event");
    if (real == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    return real(status, source, range, info, ninfo, cbfunc, cbdata);
}

int sched_getaffinity(pid_t pid, size_t cpusetsize, cpu_set_t *mask)
{
    typedef int (*fn_t)(pid_t, size_t, cpu_set_t *);
    long bits;
    if (knob("TERN_SHIM_AFFINITY_BITS", &bits) && (long)(cpusetsize * 8) < bits) {
        errno = EINVAL;
        return -1;
    }
    fn_t real = (fn_t)dlsym(RTLD_NEXT, "sched_getaffinity");
    if (real == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return real(pid, cpusetsize, mask);
}
