/* verbs netmod settings: the TERN_VERBS_* variables, validated by the
 * engine's loader and listed by tern_info. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "netmods/verbs/verbs_internal.h"

#define KiB 1024ull
#define MiB (1024ull * 1024ull)
#define T tern_verbs_config_t

/* "name" or "name:port": a device name and an optional port number 1..255. */
static tern_status_t check_device(const char *env, const char *v)
{
    const char *colon = strchr(v, ':');
    size_t nlen = colon ? (size_t)(colon - v) : strlen(v);
    if (nlen == 0 || nlen >= 64)
        return tern_error(TERN_ERR_INVALID_PARAM, "%s=\"%s\": want a device name (as ibv_devices "
                          "lists it), optionally :port", env, v);
    if (colon != NULL) {
        unsigned port = 0;
        char extra = 0;
        if (sscanf(colon + 1, "%u%c", &port, &extra) != 1 || port < 1 || port > 255)
            return tern_error(TERN_ERR_INVALID_PARAM, "%s=\"%s\": port \"%s\" is not 1..255",
                              env, v, colon + 1);
    }
    return TERN_OK;
}

static const tern_config_entry_t verbs_entries[] = {
    TERN_CFG_ENTRY_STRING("TERN_VERBS_DEVICE", T, device, "(first-active)", check_device,
                          "verbs device and port, e.g. mlx5_0:1; unset: the first device "
                          "with an active port"),
    TERN_CFG_ENTRY_UINT("TERN_VERBS_GID_INDEX", T, gid_index, 0, 0, 255,
                        "GID table index for RoCE (and IB with a GRH): the address RC uses"),
    TERN_CFG_ENTRY_POW2("TERN_VERBS_SEG_SIZE", T, seg_size, 8 * KiB, 256, 64 * KiB,
                        "bytes of one eager segment and of each shared-receive-queue buffer"),
    TERN_CFG_ENTRY_UINT("TERN_VERBS_CREDITS", T, credits, 32, 4, 4096,
                        "receive buffers granted to each connected peer (flow control)"),
    TERN_CFG_ENTRY_UINT("TERN_VERBS_CREDITS_MAX", T, credits_max, 512, 4, 1048576,
                        "a peer streaming one way has its grant doubled up to this many, from "
                        "shared-receive-queue buffers no other rank's grant can need"),
    TERN_CFG_ENTRY_UINT("TERN_VERBS_SRQ_MAX", T, srq_max, 4096, 64, 1048576,
                        "shared receive queue buffers posted at most per worker; beyond, "
                        "peers get fewer credits and RNR retries absorb the rest"),
    TERN_CFG_ENTRY_POW2("TERN_VERBS_TX_DEPTH", T, tx_depth, 256, 16, 16384,
                        "send queue depth of each RC queue pair"),
    TERN_CFG_ENTRY_UINT("TERN_VERBS_SIGNAL_EVERY", T, signal_every, 32, 1, 4096,
                        "request a send completion every N work requests (selective "
                        "signalling)"),
    TERN_CFG_ENTRY_UINT("TERN_VERBS_INLINE", T, max_inline, 256, 0, 4096,
                        "inline sends up to this many bytes (capped by the device)"),
    TERN_CFG_ENTRY_UINT("TERN_VERBS_PUT_MIN", T, put_min, 1 * MiB, 0, UINT64_MAX,
                        "rendezvous messages of at least this size use put (RDMA write), "
                        "smaller ones get (RDMA read)"),
    TERN_CFG_ENTRY_POW2("TERN_VERBS_RDMA_CHUNK", T, rdma_chunk, 1 * MiB, 4 * KiB, 1024 * MiB,
                        "bytes moved by one RDMA read or write work request at most"),
    TERN_CFG_ENTRY_UINT("TERN_VERBS_REG_WINDOW", T, reg_window, 0, 0, UINT64_MAX,
                        "register a rendezvous buffer in windows of this many bytes, the next "
                        "key sent mid-transfer (0: the whole buffer at once)"),
    TERN_CFG_ENTRY_UINT("TERN_VERBS_CONNECT_MS", T, connect_ms, 30000, 100, 3600000,
                        "a peer that does not answer a connection request within this many "
                        "ms fails its VC"),
    TERN_CFG_ENTRY_UINT("TERN_VERBS_TIMEOUT", T, timeout, 14, 1, 31,
                        "RC local ACK timeout exponent: 4.096 us * 2^N per try"),
    TERN_CFG_ENTRY_UINT("TERN_VERBS_RETRY_COUNT", T, retry_cnt, 7, 0, 7,
                        "RC transport retries before a peer counts as dead"),
    TERN_CFG_ENTRY_UINT("TERN_VERBS_RNR_RETRY", T, rnr_retry, 7, 0, 7,
                        "RC receiver-not-ready retries (7: forever; credits make RNR rare)"),
    TERN_CFG_ENTRY_UINT("TERN_VERBS_KEEPALIVE_MS", T, keepalive_ms, 1000, 0, 3600000,
                        "when idle, probe each connected peer this often (a zero-length RDMA "
                        "write): a dead peer fails its VC even if the launcher says nothing "
                        "(0: off)"),
    TERN_CFG_ENTRY_UINT("TERN_VERBS_RMA", T, rma, 1, 0, 1,
                        "one-sided put / get by RDMA write / read, one work request each, on a "
                        "queue pair of their own (0: as packets the target's progress applies)"),
    TERN_CFG_ENTRY_UINT("TERN_VERBS_AMO", T, amo, 1, 0, 1,
                        "atomics on regions made with TERN_REGION_ATOMIC_DEVICE by the device "
                        "(RDMA fetch-and-add / compare-and-swap, the owner's through a queue "
                        "pair to itself) where it has atomics (0: packets and the target's CPU)"),
};
#undef T

static tern_status_t verbs_config_validate(const void *config)
{
    const tern_verbs_config_t *c = config;
    if (c->reg_window != 0 && c->reg_window < 4 * KiB)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "TERN_VERBS_REG_WINDOW=%" PRIu64 ": 0 (whole buffer) or >= 4096",
                          c->reg_window);
    if (c->credits_max < c->credits)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "TERN_VERBS_CREDITS_MAX=%" PRIu64 " is below TERN_VERBS_CREDITS (%" PRIu64
                          ")", c->credits_max, c->credits);
    if (c->signal_every > c->tx_depth / 2)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "TERN_VERBS_SIGNAL_EVERY=%" PRIu64 " must be at most half of "
                          "TERN_VERBS_TX_DEPTH (%" PRIu64 ")", c->signal_every, c->tx_depth);
    return TERN_OK;
}

const tern_config_table_t tern_verbs_config_table = {
    .owner = "verbs",
    .entries = verbs_entries,
    .num_entries = sizeof(verbs_entries) / sizeof(verbs_entries[0]),
    .struct_size = sizeof(tern_verbs_config_t),
    .validate = verbs_config_validate,
};
