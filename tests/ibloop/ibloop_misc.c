/*
 * ibloop: strings, rates, fork support, sysfs helpers, and the emulated
 * link state (IBLOOP_FAULT_LINK_DOWN_*).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ibloop.h"

/* ---- strings ------------------------------------------------------------- */
const char *ibv_wc_status_str(enum ibv_wc_status status)
{
    static const char *const s[] = {
        [IBV_WC_SUCCESS] = "success",
        [IBV_WC_LOC_LEN_ERR] = "local length error",
        [IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
        [IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
        [IBV_WC_LOC_PROT_ERR] = "local protection error",
        [IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
        [IBV_WC_MW_BIND_ERR] = "memory management operation error",
        [IBV_WC_BAD_RESP_ERR] = "bad response error",
        [IBV_WC_LOC_ACCESS_ERR] = "local access error",
        [IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
        [IBV_WC_REM_ACCESS_ERR] = "remote access error",
        [IBV_WC_REM_OP_ERR] = "remote operation error",
        [IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
        [IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
        [IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
        [IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
        [IBV_WC_REM_ABORT_ERR] = "aborted error",
        [IBV_WC_INV_EECN_ERR] = "invalid EE context number",
        [IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
        [IBV_WC_FATAL_ERR] = "fatal error",
        [IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
        [IBV_WC_GENERAL_ERR] = "general error",
        [IBV_WC_TM_ERR] = "TM error",
        [IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
    };

    if ((unsigned)status < sizeof(s) / sizeof(s[0]) && s[status])
        return s[status];
    return "unknown";
}

const char *ibv_port_state_str(enum ibv_port_state state)
{
    static const char *const s[] = {"PORT_NOP",   "PORT_DOWN",   "PORT_INIT",
                                    "PORT_ARMED", "PORT_ACTIVE", "PORT_ACTIVE_DEFER"};

    return (unsigned)state < 6 ? s[state] : "unknown";
}

const char *ibv_event_type_str(enum ibv_event_type event)
{
    static const char *const s[] = {
        [IBV_EVENT_CQ_ERR] = "CQ error",
        [IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
        [IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
        [IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
        [IBV_EVENT_COMM_EST] = "communication established",
        [IBV_EVENT_SQ_DRAINED] = "send queue drained",
        [IBV_EVENT_PATH_MIG] = "path migrated",
        [IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
        [IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
        [IBV_EVENT_PORT_ACTIVE] = "port active",
        [IBV_EVENT_PORT_ERR] = "port error",
        [IBV_EVENT_LID_CHANGE] = "LID change",
        [IBV_EVENT_PKEY_CHANGE] = "P_Key change",
        [IBV_EVENT_SM_CHANGE] = "SM change",
        [IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
        [IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
        [IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
        [IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
        [IBV_EVENT_GID_CHANGE] = "GID table change",
        [IBV_EVENT_WQ_FATAL] = "WQ fatal",
    };

    if ((unsigned)event < sizeof(s) / sizeof(s[0]) && s[event])
        return s[event];
    return "unknown";
}

const char *ibv_node_type_str(enum ibv_node_type node_type)
{
    switch (node_type) {
    case IBV_NODE_CA:
        return "InfiniBand channel adapter";
    case IBV_NODE_SWITCH:
        return "InfiniBand switch";
    case IBV_NODE_ROUTER:
        return "InfiniBand router";
    case IBV_NODE_RNIC:
        return "iWARP NIC";
    case IBV_NODE_USNIC:
        return "usNIC";
    case IBV_NODE_USNIC_UDP:
        return "usNIC UDP";
    case IBV_NODE_UNSPECIFIED:
        return "unspecified";
    default:
        return "unknown";
    }
}

/* ---- rates: {enum, multiple of 2.5 Gb/s, Mb/s} ---------------------------- */
static const struct {
    int rate, mult, mbps;
} rates[] = {
    {IBV_RATE_2_5_GBPS, 1, 2500},       {IBV_RATE_5_GBPS, 2, 5000},
    {IBV_RATE_10_GBPS, 4, 10000},       {IBV_RATE_20_GBPS, 8, 20000},
    {IBV_RATE_30_GBPS, 12, 30000},      {IBV_RATE_40_GBPS, 16, 40000},
    {IBV_RATE_60_GBPS, 24, 60000},      {IBV_RATE_80_GBPS, 32, 80000},
    {IBV_RATE_120_GBPS, 48, 120000},    {IBV_RATE_14_GBPS, 5, 14062},
    {IBV_RATE_56_GBPS, 22, 56250},      {IBV_RATE_112_GBPS, 45, 112500},
    {IBV_RATE_168_GBPS, 67, 168750},    {IBV_RATE_25_GBPS, 10, 25781},
    {IBV_RATE_100_GBPS, 40, 103125},    {IBV_RATE_200_GBPS, 80, 206250},
    {IBV_RATE_300_GBPS, 120, 309375},   {IBV_RATE_28_GBPS, 11, 28125},
    {IBV_RATE_50_GBPS, 20, 53125},      {IBV_RATE_400_GBPS, 160, 425000},
    {IBV_RATE_600_GBPS, 240, 637500},   {IBV_RATE_800_GBPS, 320, 850000},
    {IBV_RATE_1200_GBPS, 480, 1275000},
};
#define NRATES (sizeof(rates) / sizeof(rates[0]))

int ibv_rate_to_mult(enum ibv_rate rate)
{
    for (size_t i = 0; i < NRATES; i++)
        if (rates[i].rate == (int)rate)
            return rates[i].mult;
    return -1;
}

enum ibv_rate mult_to_ibv_rate(int mult)
{
    for (size_t i = 0; i < NRATES; i++)
        if (rates[i].mult == mult)
            return (enum ibv_rate)rates[i].rate;
    return IBV_RATE_MAX;
}

int ibv_rate_to_mbps(enum ibv_rate rate)
{
    for (size_t i = 0; i < NRATES; i++)
        if (rates[i].rate == (int)rate)
            return rates[i].mbps;
    return -1;
}

enum ibv_rate mbps_to_ibv_rate(int mbps)
{
    for (size_t i = 0; i < NRATES; i++)
        if (rates[i].mbps == mbps)
            return (enum ibv_rate)rates[i].rate;
    return IBV_RATE_MAX;
}

/* ---- fork: pages are not pinned here, so fork is always safe -------------- */
int ibv_fork_init(void)
{
    return 0;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
    return IBV_FORK_UNNEEDED;
}

int ibv_dontfork_range(void *base, size_t size);
int ibv_dontfork_range(void *base, size_t size)
{
    return 0;
}

int ibv_dofork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size)
{
    return 0;
}

/* ---- sysfs: the device has none; its few attributes are synthesized ------ */
const char *ibv_get_sysfs_path(void);
const char *ibv_get_sysfs_path(void)
{
    return "/sys";
}

int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
    static const char *const synth[][2] = {
        {"board_id", "IBLOOP0000000001"}, {"fw_ver", "1.0.0"},
        {"hca_type", "ibloop"},           {"hw_rev", "1"},
        {"node_desc", "ibloop loopback HCA"},
    };
    char path[512];
    ssize_t n;
    int fd;

    if (!size)
        return -1;
    if (dir && strstr(dir, "ibloop0")) {
        for (size_t i = 0; i < sizeof(synth) / sizeof(synth[0]); i++)
            if (!strcmp(file, synth[i][0]))
                return snprintf(buf, size, "%s", synth[i][1]);
        return -1;
    }
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    n = read(fd, buf, size);
    close(fd);
    if (n <= 0)
        return -1;
    if ((size_t)n == size)
        n--;
    buf[n] = 0;
    if (n > 0 && buf[n - 1] == '\n')
        buf[--n] = 0;
    return (int)n;
}

/* ---- the emulated link --------------------------------------------------- */
static _Atomic int link_state; /* 0 up, 1 down (fault), 2 back up */
static _Atomic uint64_t link_down_at;

static void port_event(uint32_t type)
{
    for (uint32_t i = 0; i < ibloop_fab.hdr->hwm[2]; i++) {
        struct ibloop_wire_ctx *w = ibloop_ctx(i);
        uint32_t gen = atomic_load(&w->gen);
        if (gen && w->proc == ibloop_fab.proc)
            ibloop_async_post(i, gen, type, IBLOOP_OBJ_PORT, 1, 0);
    }
}

/* the link comes back by itself after IBLOOP_FAULT_LINK_DOWN_MS; the
 * thread holds a reference on the fabric while it waits */
static void *link_timer(void *arg)
{
    long ms = ibloop_env()->link_down_ms;
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};

    (void)arg;
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
    ibloop_port_check();
    ibloop_detach();
    return NULL;
}

static void link_timer_start(void)
{
    pthread_attr_t a;
    pthread_t t;

    if (ibloop_env()->link_down_ms < 0 || ibloop_attach())
        return;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, link_timer, NULL))
        ibloop_detach();
    pthread_attr_destroy(&a);
}

void ibloop_port_check(void)
{
    long ms = ibloop_env()->link_down_ms;
    int s = atomic_load(&link_state);

    if (!ibloop_fab.base)
        return;
    if (s == 0 && ibloop_fault_link_should_be_down() &&
        atomic_compare_exchange_strong(&link_state, &s, 1)) {
        atomic_store(&link_down_at, ibloop_now_ns());
        atomic_store(&ibloop_proc(ibloop_fab.proc)->port_down, 1);
        IBLOOP_DBG("fault: port 1 goes down (IBLOOP_FAULT_LINK_DOWN_AFTER)");
        port_event(IBV_EVENT_PORT_ERR);
        link_timer_start();
    } else if (s == 1 && ms >= 0 &&
               ibloop_now_ns() - atomic_load(&link_down_at) >= (uint64_t)ms * 1000000ull &&
               atomic_compare_exchange_strong(&link_state, &s, 2)) {
        atomic_store(&ibloop_proc(ibloop_fab.proc)->port_down, 0);
        IBLOOP_DBG("fault: port 1 is active again (IBLOOP_FAULT_LINK_DOWN_MS)");
        port_event(IBV_EVENT_PORT_ACTIVE);
    }
}

int ibloop_port_wait_ms(void)
{
    long ms = ibloop_env()->link_down_ms;
    uint64_t up, now;

    if (atomic_load(&link_state) != 1 || ms < 0)
        return -1;
    up = atomic_load(&link_down_at) + (uint64_t)ms * 1000000ull;
    now = ibloop_now_ns();
    return now >= up ? 0 : (int)((up - now) / 1000000ull) + 1;
}

void ibloop_port_reset(void)
{
    atomic_store(&link_state, 0);
}
