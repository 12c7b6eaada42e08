/*
 * dpdk netmod: starting DPDK's EAL, once per process.
 *
 * Arguments, in this order (TERN_DPDK_EAL_ARGS comes last, so it can
 * override): --file-prefix=tern-<job hash>-<rank>, -l <core>, --no-pci
 * (unless TERN_DPDK_PORT names a device: -a <it>), --no-telemetry,
 * --log-level=error, and for memory --in-memory when hugepages are free
 * and hugetlbfs is mounted (nothing is left behind, even after SIGKILL),
 * else --no-huge --no-shconf -m TERN_DPDK_MEM_MB (anonymous memory: enough
 * for the virtual devices; a NIC doing DMA wants hugepages).
 *
 * <core> is the first CPU the calling thread may run on: a bound rank's
 * core.  rte_eal_init pins the calling thread to it; the thread's previous
 * affinity is put back afterwards (a rank bound to a socket stays so).
 * EAL leaves an empty runtime directory (/var/run/dpdk/<prefix>) even in
 * these modes: it is removed as soon as rte_eal_init returns.  EAL loads
 * every driver of Debian's plugin directory; one that fails to load (the
 * mlx drivers need the real libibverbs' private symbols: not with
 * tests/ibloop on LD_LIBRARY_PATH) fails rte_eal_init ("Cannot init
 * plugins"), named in the error.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>

#include "netmods/dpdk/dpdk_internal.h"

#define MAX_ARGS 48

static pthread_mutex_t eal_lock = PTHREAD_MUTEX_INITIALIZER;
static int eal_state;           /* 0 not tried, 1 up, -1 failed */
static tern_status_t eal_status;
static char eal_msg[512];

/* Free hugepages and a hugetlbfs mount: what --in-memory needs. */
static bool hugepages_usable(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    long free_pages = 0;
    char line[256];
    if (f == NULL)
        return false;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "HugePages_Free: %ld", &free_pages) == 1)
            break;
    fclose(f);
    if (free_pages <= 0)
        return false;
    bool mounted = false;
    f = fopen("/proc/mounts", "r");
    if (f == NULL)
        return false;
    while (!mounted && fgets(line, sizeof(line), f))
        mounted = strstr(line, " hugetlbfs ") != NULL;
    fclose(f);
    return mounted;
}

static int first_cpu(const cpu_set_t *set)
{
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set))
            return c;
    return 0;
}

static tern_status_t start(const tern_dpdk_config_t *cfg, const char *job, int rank)
{
    static char storage[MAX_ARGS][TERN_CFG_STR_MAX];
    char *argv[MAX_ARGS + 1];
    int argc = 0;
#define ARG(...) snprintf(argv[argc] = storage[argc], TERN_CFG_STR_MAX, __VA_ARGS__), argc++
    cpu_set_t saved;
    CPU_ZERO(&saved);
    if (pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved) != 0)
        CPU_SET(0, &saved);
    ARG("tern");
    ARG("--file-prefix=tern-%08x-%d", tern_job_hash(job), rank);
    ARG("-l");
    ARG("%d", first_cpu(&saved));
    if (cfg->port[0] != '\0') {
        ARG("-a");
        ARG("%s", cfg->port);
    } else {
        ARG("--no-pci");
    }
    ARG("--no-telemetry");
    ARG("--log-level=error");
    if (hugepages_usable()) {
        ARG("--in-memory");
    } else {
        ARG("--no-huge");
        ARG("--no-shconf");
        ARG("-m");
        ARG("%llu", (unsigned long long)cfg->mem_mb);
    }
    char extra[TERN_CFG_STR_MAX];
    snprintf(extra, sizeof(extra), "%s", cfg->eal_args);
    for (char *save = NULL, *a = strtok_r(extra, " \t", &save); a;
         a = strtok_r(NULL, " \t", &save)) {
        if (argc >= MAX_ARGS)
            return tern_error(TERN_ERR_INVALID_PARAM, "TERN_DPDK_EAL_ARGS: more than %d "
                              "arguments", MAX_ARGS - 16);
        ARG("%s", a);
    }
#undef ARG
    argv[argc] = NULL;
    char line[1024];
    size_t n = 0;
    for (int i = 0; i < argc && n < sizeof(line); i++)
        n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s", i ? " " : "", argv[i]);
    tern_debug("dpdk: rte_eal_init %s", line);
    int rc = rte_eal_init(argc, argv);
    int err = rte_errno;
    /* EAL pinned this thread to the one core: give back what it had */
    pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
    /* made early in rte_eal_init, empty in these modes, kept by EAL even
     * when it fails (e.g. a driver of the plugin directory did not load):
     * removed now, so a killed rank leaves nothing in /var/run/dpdk */
    const char *dir = rte_eal_get_runtime_dir();
    if (dir != NULL && dir[0] != '\0' && rmdir(dir) != 0 && errno != ENOENT)
        tern_debug("dpdk: runtime directory %s stays: %s", dir, strerror(errno));
    if (rc < 0)
        return tern_error(err == EALREADY ? TERN_ERR_INVALID_PARAM : TERN_ERR_UNSUPPORTED,
                          "dpdk: rte_eal_init failed (%s) with: %s (TERN_DPDK_EAL_ARGS, "
                          "TERN_DPDK_MEM_MB=%llu)", rte_strerror(err), line,
                          (unsigned long long)cfg->mem_mb);
    return TERN_OK;
}

tern_status_t tern_dpdk_eal_start(const tern_dpdk_config_t *cfg, const char *job, int rank)
{
    pthread_mutex_lock(&eal_lock);
    if (eal_state == 0) {
        eal_status = start(cfg, job, rank);
        eal_state = eal_status == TERN_OK ? 1 : -1;
        if (eal_status != TERN_OK)
            snprintf(eal_msg, sizeof(eal_msg), "%s", tern_last_error());
    }
    tern_status_t st = eal_status;
    pthread_mutex_unlock(&eal_lock);
    if (st != TERN_OK)
        return tern_error(st, "%s", eal_msg);
    return TERN_OK;
}

const char *tern_dpdk_eal_unavailable(void)
{
    const char *vdev = getenv("TERN_DPDK_VDEV"), *port = getenv("TERN_DPDK_PORT");
    if ((vdev == NULL || vdev[0] == '\0') && (port == NULL || port[0] == '\0'))
        return "no port: set TERN_DPDK_VDEV (a virtual device) or TERN_DPDK_PORT (a NIC)";
    pthread_mutex_lock(&eal_lock);
    int s = eal_state;
    pthread_mutex_unlock(&eal_lock);
    return s < 0 ? eal_msg : NULL;
}
