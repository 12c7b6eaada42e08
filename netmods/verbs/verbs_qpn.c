/*
 * verbs netmod: which VC an RC queue pair number belongs to (a receive
 * completion names only its QP).  Open addressing with linear probing and
 * backward-shift deletion; the table is at least twice the peer count, and
 * doubles when half full (QPs to other jobs and port peers come on top of
 * the job's ranks, and a retired QP stays mapped until it is reaped), so
 * probes stay short and a probe always ends on an empty slot.  One
 * worker's, used by its thread only.
 */
#include <stdlib.h>

#include "netmods/verbs/verbs_internal.h"

struct qpn_map {
    uint32_t mask;
    uint32_t count;   /* slots in use */
    struct {
        uint32_t qpn; /* 0: empty (QPN 0 is the SMI QP, never an RC QP) */
        tern_verbs_vc_t *tv;
    } slot[];
};

static inline uint32_t home(const struct qpn_map *m, uint32_t qpn)
{
    return (qpn * 2654435761u) & m->mask;
}

struct qpn_map *tern_verbs_qpn_map_new(int capacity)
{
    uint32_t n = 16;
    while (n < 2u * (uint32_t)capacity + 2u)
        n <<= 1;
    struct qpn_map *m = calloc(1, sizeof(*m) + n * sizeof(m->slot[0]));
    if (m != NULL)
        m->mask = n - 1;
    return m;
}

void tern_verbs_qpn_map_free(struct qpn_map *m) { free(m); }

static void put(struct qpn_map *m, uint32_t qpn, tern_verbs_vc_t *tv)
{
    uint32_t i = home(m, qpn);
    while (m->slot[i].qpn != 0 && m->slot[i].qpn != qpn)
        i = (i + 1) & m->mask;
    m->count += m->slot[i].qpn == 0;
    m->slot[i].qpn = qpn;
    m->slot[i].tv = tv;
}

tern_status_t tern_verbs_qpn_put(struct qpn_map **mp, uint32_t qpn, tern_verbs_vc_t *tv)
{
    struct qpn_map *m = *mp;
    if (2 * (m->count + 1) > m->mask + 1) { /* half full: twice the room */
        uint32_t n = 2 * (m->mask + 1);
        struct qpn_map *g = calloc(1, sizeof(*g) + n * sizeof(g->slot[0]));
        if (g == NULL)
            return tern_error(TERN_ERR_NO_MEMORY, "verbs: QP table of %u entries", n);
        g->mask = n - 1;
        for (uint32_t i = 0; i <= m->mask; i++)
            if (m->slot[i].qpn != 0)
                put(g, m->slot[i].qpn, m->slot[i].tv);
        free(m);
        *mp = m = g;
    }
    put(m, qpn, tv);
    return TERN_OK;
}

tern_verbs_vc_t *tern_verbs_qpn_get(const struct qpn_map *m, uint32_t qpn)
{
    if (qpn == 0)
        return NULL;
    for (uint32_t i = home(m, qpn);; i = (i + 1) & m->mask) {
        if (m->slot[i].qpn == qpn)
            return m->slot[i].tv;
        if (m->slot[i].qpn == 0)
            return NULL;
    }
}

void tern_verbs_qpn_del(struct qpn_map *m, uint32_t qpn)
{
    uint32_t i = home(m, qpn);
    while (m->slot[i].qpn != qpn) {
        if (m->slot[i].qpn == 0)
            return;
        i = (i + 1) & m->mask;
    }
    /* backward shift: move later entries of the run into the hole when
     * their home position lies at or before it */
    for (uint32_t j = (i + 1) & m->mask; m->slot[j].qpn != 0; j = (j + 1) & m->mask) {
        uint32_t h = home(m, m->slot[j].qpn);
        if (((j - h) & m->mask) >= ((j - i) & m->mask)) {
            m->slot[i] = m->slot[j];
            i = j;
        }
    }
    m->slot[i].qpn = 0;
    m->slot[i].tv = NULL;
    m->count--;
}
