/* dpdk netmod settings: the TERN_DPDK_* variables, validated by the
 * engine's loader and listed by tern_info. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netmods/dpdk/dpdk_internal.h"

#define T tern_dpdk_config_t

/* "driver[,key=value...]": a vdev name starting net_, no spaces. */
static tern_status_t check_vdev(const char *env, const char *v)
{
    if (strncmp(v, "net_", 4) != 0 || strpbrk(v, " \t\n") != NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "%s=\"%s\": want a virtual device such as "
                          "net_memif_%%w_%%p,role=%%R,socket=/tmp/m-%%j-%%l-%%h.sock,"
                          "socket-abstract=no or net_af_packet%%w,iface=eth1 (no spaces)",
                          env, v);
    for (const char *p = v; (p = strchr(p, '%')) != NULL; p += 2)
        if (p[1] == '\0' || strchr("rwjplhRL%", p[1]) == NULL)
            return tern_error(TERN_ERR_INVALID_PARAM, "%s=\"%s\": unknown placeholder %%%c "
                              "(known: %%r rank, %%w worker, %%j job, %%p peer, %%l / %%h lower "
                              "/ higher rank of the pair, %%R server|client, %%L local rank, "
                              "%%%%)", env, v, p[1] ? p[1] : ' ');
    return TERN_OK;
}

static tern_status_t check_port(const char *env, const char *v)
{
    if (strpbrk(v, " \t\n,") != NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "%s=\"%s\": want one device, e.g. a PCI "
                          "address 0000:3b:00.0", env, v);
    return TERN_OK;
}

static const tern_config_entry_t dpdk_entries[] = {
    TERN_CFG_ENTRY_STRING("TERN_DPDK_VDEV", T, vdev, "(none)", check_vdev,
                          "virtual device template for each worker's port (per peer when it "
                          "names the peer, as memif needs); see docs/dpdk.md"),
    TERN_CFG_ENTRY_STRING("TERN_DPDK_PORT", T, port, "(none)", check_port,
                          "a device EAL probes (a NIC's PCI address), used by worker 0 "
                          "instead of TERN_DPDK_VDEV"),
    TERN_CFG_ENTRY_STRING("TERN_DPDK_EAL_ARGS", T, eal_args, "(none)", NULL,
                          "more EAL arguments, space separated (after tern's own)"),
    TERN_CFG_ENTRY_STRING("TERN_DPDK_FAULTS", T, faults, "(none)", NULL,
                          "test shim: drop=P,hold=P[:K],dup=P,corrupt=P,seed=N,dir=tx|rx|both "
                          "(P a fraction) injected on the port"),
    TERN_CFG_ENTRY_UINT("TERN_DPDK_MTU", T, mtu, 0, 0, 9600,
                        "Ethernet payload bytes per frame (0: the port's MTU)"),
    TERN_CFG_ENTRY_POW2("TERN_DPDK_WINDOW", T, window, 256, 8, TERN_DPDK_WINDOW_MAX,
                        "frames a VC may have unacknowledged (and a receiver holds early)"),
    TERN_CFG_ENTRY_UINT("TERN_DPDK_POOL", T, pool, 8191, 1023, 1048575,
                        "mbufs in each worker's pool"),
    TERN_CFG_ENTRY_POW2("TERN_DPDK_RX_DESC", T, rx_desc, 1024, 64, 16384,
                        "receive descriptors of a port"),
    TERN_CFG_ENTRY_POW2("TERN_DPDK_TX_DESC", T, tx_desc, 1024, 64, 16384,
                        "transmit descriptors of a port"),
    TERN_CFG_ENTRY_UINT("TERN_DPDK_RTO_MIN_US", T, rto_min_us, 10000, 100, 10000000,
                        "retransmission timeout floor (above a VM's ~10 ms stalls)"),
    TERN_CFG_ENTRY_UINT("TERN_DPDK_RTO_MAX_MS", T, rto_max_ms, 1000, 1, 60000,
                        "retransmission timeout ceiling of the back-off"),
    TERN_CFG_ENTRY_UINT("TERN_DPDK_PROBE_US", T, probe_us, 200, 10, 10000000,
                        "unacknowledged tail this long: send its last frame again once (a "
                        "loss probe: the answer's SACK names what is missing)"),
    TERN_CFG_ENTRY_UINT("TERN_DPDK_ACK_DELAY_US", T, ack_delay_us, 50, 0, 1000000,
                        "acknowledge received frames no later than this when nothing goes "
                        "back"),
    TERN_CFG_ENTRY_UINT("TERN_DPDK_SLEEP_US", T, sleep_us, 100, 1, 1000000,
                        "block mode: a worker sleeps at most this long between looks at a "
                        "port without a receive interrupt (memif, af_packet, af_xdp)"),
    TERN_CFG_ENTRY_UINT("TERN_DPDK_TIMEOUT_MS", T, timeout_ms, 30000, 1000, 3600000,
                        "a peer that answers nothing for this long (data unacknowledged, or "
                        "keepalives) fails its VC; a rank must call into tern at least this "
                        "often (no NIC acknowledges for it)"),
    TERN_CFG_ENTRY_UINT("TERN_DPDK_KEEPALIVE_MS", T, keepalive_ms, 1000, 0, 3600000,
                        "when idle, probe each peer heard from this often (0: off)"),
    TERN_CFG_ENTRY_UINT("TERN_DPDK_CONNECT_MS", T, connect_ms, 30000, 1000, 3600000,
                        "a point-to-point port (memif) must come up within this"),
    TERN_CFG_ENTRY_UINT("TERN_DPDK_CSUM", T, csum, 0, 0, 1,
                        "1: CRC32C over each frame, checked on receipt (0: trust the link: "
                        "Ethernet's FCS, memif's shared memory; needed with corrupt= faults)"),
    TERN_CFG_ENTRY_UINT("TERN_DPDK_MEM_MB", T, mem_mb, 256, 64, 8192,
                        "EAL memory when no hugepages are free (--no-huge -m)"),
    TERN_CFG_ENTRY_UINT("TERN_DPDK_ZCOPY", T, zcopy, 1, 0, 1,
                        "LMT put sends the user's pages as external mbufs (0: copy)"),
    TERN_CFG_ENTRY_UINT("TERN_DPDK_RX_INTR", T, rx_intr, 1, 0, 1,
                        "block mode: sleep on the port's receive interrupt where its PMD has "
                        "one (a NIC, net_tap); 0: always the TERN_DPDK_SLEEP_US slices"),
};
#undef T

static tern_status_t dpdk_config_validate(const void *config)
{
    const tern_dpdk_config_t *c = config;
    if (c->mtu != 0 && c->mtu < 256)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "TERN_DPDK_MTU=%" PRIu64 ": 0 (the port's) or at least 256", c->mtu);
    const char *corrupt = strstr(c->faults, "corrupt=");
    if (corrupt != NULL && strtod(corrupt + 8, NULL) > 0 && c->csum == 0)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "TERN_DPDK_FAULTS=\"%s\" corrupts frames: only TERN_DPDK_CSUM=1 "
                          "catches that (the shim acts after the link's own check)", c->faults);
    if (c->pool < 4 * c->window)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "TERN_DPDK_POOL=%" PRIu64 " must be at least 4 x TERN_DPDK_WINDOW (%"
                          PRIu64 ")", c->pool, c->window);
    return TERN_OK;
}

const tern_config_table_t tern_dpdk_config_table = {
    .owner = "dpdk",
    .entries = dpdk_entries,
    .num_entries = sizeof(dpdk_entries) / sizeof(dpdk_entries[0]),
    .struct_size = sizeof(tern_dpdk_config_t),
    .validate = dpdk_config_validate,
};
