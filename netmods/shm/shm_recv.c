/*
 * shm eager receive: take the pair's units in sequence order from the
 * fastbox or the ring head and hand their bytes to the engine's stream
 * parser, which copies payload straight into the matched user buffer.
 */
#include "netmods/shm/shm_internal.h"

unsigned tern_shm_poll_recv(tern_shm_t *s, tern_shm_vc_t *v, unsigned budget)
{
    tern_shm_chan_t *c = &v->rx;
    tern_vc_t *vc = v->vc;
    unsigned n = 0;
    while (n < budget) {
        tern_shm_unit_hdr_t *fb = c->fbox;
        /* A3: pairs with the writer's R3; the unit's bytes are visible. */
        if (atomic_load_explicit(&fb->full, memory_order_acquire) && fb->seq == c->seq) {
            tern_status_t st =
                tern_handle_pkt(vc, (const uint8_t *)fb + TERN_SHM_UNIT_HDR, fb->len);
            c->seq++;
            atomic_store_explicit(&fb->full, 0, memory_order_release); /* R3 */
            n++;
            if (st != TERN_OK)
                break;
            continue;
        }
        if (c->idx == c->other_cache) {
            /* A1: pairs with the producer's R1 on tail. */
            c->other_cache = atomic_load_explicit(&c->ring->tail, memory_order_acquire);
            if (c->idx == c->other_cache)
                break;
        }
        tern_shm_unit_hdr_t *cell =
            (tern_shm_unit_hdr_t *)(void *)(c->cells + (size_t)(c->idx & s->cell_mask) *
                                                           s->hdr->cell_size);
        if (cell->seq != c->seq)
            break; /* the next unit is in the fastbox, not yet visible */
        if (TERN_UNLIKELY(cell->len > s->cell_cap)) {
            tern_vc_fail(vc, TERN_ERR_MALFORMED, "shm cell claims more bytes than a cell holds");
            break;
        }
        tern_status_t st = tern_handle_pkt(vc, (const uint8_t *)cell + TERN_SHM_UNIT_HDR, cell->len);
        c->seq++;
        c->idx++;
        atomic_store_explicit(&c->ring->head, c->idx, memory_order_release); /* R2 */
        n++;
        if (st != TERN_OK)
            break;
    }
    return n;
}
