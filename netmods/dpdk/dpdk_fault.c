/*
 * dpdk netmod: the fault shim (TERN_DPDK_FAULTS), for tests.  The kernel
 * here has no netem, and the virtual devices lose nothing on their own
 * often enough to test recovery, so the netmod injects faults itself, on
 * a port's TX and RX:
 *   drop=P       the frame is freed
 *   hold=P[:K]   the frame is kept back and released after K (default 3)
 *                more frames in that direction, or after 2 ms (reordering)
 *   dup=P        a copy of the frame follows it
 *   corrupt=P    one byte of a copy of the frame is flipped (a copy: the
 *                original may be the user's pages or a kept frame)
 *   seed=N       the generator's seed (mixed with the rank and port)
 *   dir=tx|rx|both  where (default both)
 * P is a fraction (0.01 = 1 %).  Decisions come from one xorshift64*
 * stream per port, so a seed replays the same decisions for the same
 * traffic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netmods/dpdk/dpdk_internal.h"

#define HOLD_MAX 64
#define HOLD_NS 2000000ull

typedef struct held {
    struct rte_mbuf *m;
    uint32_t after;           /* release once this many more frames passed */
    uint64_t until_ns;
} held_t;

typedef struct side {
    held_t held[HOLD_MAX];
    unsigned nheld;
} side_t;

struct tern_dpdk_fault {
    double drop, hold, dup, corrupt;
    unsigned hold_k;
    bool tx, rx;
    uint64_t rng;
    side_t side[2];           /* 0 tx, 1 rx */
    tern_dpdk_fault_stats_t stats;
};

static double next_unit(tern_dpdk_fault_t *f)
{
    uint64_t x = f->rng; /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    f->rng = x;
    return (double)((x * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static tern_status_t bad(const char *spec, const char *part)
{
    return tern_error(TERN_ERR_INVALID_PARAM, "TERN_DPDK_FAULTS=\"%s\": \"%s\" is not "
                      "drop=P, hold=P[:K], dup=P, corrupt=P (P in 0..1), seed=N or "
                      "dir=tx|rx|both", spec, part);
}

tern_status_t tern_dpdk_fault_parse(const char *spec, unsigned salt, tern_dpdk_fault_t **out)
{
    *out = NULL;
    if (spec == NULL || spec[0] == '\0')
        return TERN_OK;
    tern_dpdk_fault_t *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "dpdk fault shim");
    f->hold_k = 3;
    f->tx = f->rx = true;
    uint64_t seed = 1;
    char buf[TERN_CFG_STR_MAX];
    snprintf(buf, sizeof(buf), "%s", spec);
    for (char *save = NULL, *part = strtok_r(buf, ",", &save); part;
         part = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(part, '=');
        if (eq == NULL) {
            free(f);
            return bad(spec, part);
        }
        *eq = '\0';
        const char *key = part, *val = eq + 1;
        char *end = NULL;
        double p = 0;
        if (strcmp(key, "seed") == 0) {
            seed = strtoull(val, &end, 0);
        } else if (strcmp(key, "dir") == 0) {
            f->tx = strcmp(val, "rx") != 0;
            f->rx = strcmp(val, "tx") != 0;
            end = (strcmp(val, "tx") == 0 || strcmp(val, "rx") == 0 || strcmp(val, "both") == 0)
                      ? (char *)val + strlen(val)
                      : NULL;
        } else {
            p = strtod(val, &end);
            if (end != NULL && strcmp(key, "hold") == 0 && *end == ':') {
                char *e2 = NULL;
                unsigned long k = strtoul(end + 1, &e2, 10);
                end = (k >= 1 && k <= 32) ? e2 : NULL;
                f->hold_k = (unsigned)k;
            }
            if (!(p >= 0 && p <= 1))
                end = NULL;
            if (strcmp(key, "drop") == 0)
                f->drop = p;
            else if (strcmp(key, "hold") == 0)
                f->hold = p;
            else if (strcmp(key, "dup") == 0)
                f->dup = p;
            else if (strcmp(key, "corrupt") == 0)
                f->corrupt = p;
            else
                end = NULL;
        }
        if (end == NULL || end == val || *end != '\0') {
            *eq = '=';
            free(f);
            return bad(spec, part);
        }
    }
    f->rng = (seed ^ ((uint64_t)salt << 32) ^ 0x9E3779B97F4A7C15ull) | 1;
    *out = f;
    return TERN_OK;
}

void tern_dpdk_fault_free(tern_dpdk_fault_t *f)
{
    if (f == NULL)
        return;
    for (int s = 0; s < 2; s++)
        for (unsigned i = 0; i < f->side[s].nheld; i++)
            rte_pktmbuf_free(f->side[s].held[i].m);
    free(f);
}

void tern_dpdk_fault_stats(const tern_dpdk_fault_t *f, tern_dpdk_fault_stats_t *s)
{
    if (f != NULL)
        *s = f->stats;
    else
        memset(s, 0, sizeof(*s));
}

/* Frames whose hold ended: appended to out (up to max). */
static uint16_t release(side_t *s, uint32_t passed, uint64_t now, struct rte_mbuf **out,
                        uint16_t n, uint16_t max)
{
    unsigned keep = 0;
    for (unsigned i = 0; i < s->nheld; i++) {
        held_t *h = &s->held[i];
        h->after = h->after > passed ? h->after - passed : 0;
        if ((h->after == 0 || now >= h->until_ns) && n < max)
            out[n++] = h->m;
        else
            s->held[keep++] = *h;
    }
    s->nheld = keep;
    return n;
}

static uint16_t apply(tern_dpdk_fault_t *f, side_t *s, struct rte_mempool *mp,
                      struct rte_mbuf **m, uint16_t n, uint16_t max)
{
    struct rte_mbuf *in[2 * TERN_DPDK_BURST + 8];
    uint16_t nin = n < RTE_DIM(in) ? n : (uint16_t)RTE_DIM(in);
    memcpy(in, m, nin * sizeof(*m));
    for (uint16_t i = nin; i < n; i++)
        rte_pktmbuf_free(m[i]);
    uint64_t now = tern_now_ns();
    uint16_t k = release(s, nin, now, m, 0, max);
    for (uint16_t i = 0; i < nin; i++) {
        struct rte_mbuf *x = in[i];
        if (next_unit(f) < f->drop) {
            f->stats.dropped++;
            rte_pktmbuf_free(x);
            continue;
        }
        if (next_unit(f) < f->corrupt) {
            struct rte_mbuf *c = rte_pktmbuf_copy(x, mp, 0, UINT32_MAX);
            rte_pktmbuf_free(x);
            if (c == NULL)
                continue;
            uint32_t off = (uint32_t)(next_unit(f) * rte_pktmbuf_data_len(c));
            if (off < rte_pktmbuf_data_len(c))
                rte_pktmbuf_mtod(c, uint8_t *)[off] ^= (uint8_t)(1u << (unsigned)(next_unit(f) * 8));
            f->stats.corrupted++;
            x = c;
        }
        struct rte_mbuf *dup = NULL;
        if (next_unit(f) < f->dup) {
            dup = rte_pktmbuf_copy(x, mp, 0, UINT32_MAX);
            if (dup != NULL)
                f->stats.duplicated++;
        }
        if (next_unit(f) < f->hold && s->nheld < HOLD_MAX) {
            s->held[s->nheld++] = (held_t){.m = x, .after = f->hold_k, .until_ns = now + HOLD_NS};
            f->stats.held++;
        } else if (k < max) {
            m[k++] = x;
        } else {
            rte_pktmbuf_free(x);
        }
        if (dup != NULL) {
            if (k < max)
                m[k++] = dup;
            else
                rte_pktmbuf_free(dup);
        }
    }
    return k;
}

uint16_t tern_dpdk_fault_tx(tern_dpdk_fault_t *f, struct rte_mempool *mp, struct rte_mbuf **m,
                            uint16_t n, uint16_t max)
{
    if (!f->tx)
        return n;
    return apply(f, &f->side[0], mp, m, n, max);
}

uint16_t tern_dpdk_fault_rx(tern_dpdk_fault_t *f, struct rte_mempool *mp, struct rte_mbuf **m,
                            uint16_t n, uint16_t max)
{
    if (!f->rx)
        return n;
    return apply(f, &f->side[1], mp, m, n, max);
}
