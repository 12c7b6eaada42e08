/*
 * shm eager receive: take the pair's units in sequence order from the
 * fastbox ring or the cell ring and hand their bytes to the engine's stream
 * parser, which copies payload straight into the matched user buffer.
 */
#include "netmods/shm/shm_internal.h"

/* The slot at idx if its stamp says it is filled (A1: pairs with R1). */
static inline const tern_shm_unit_hdr_t *filled(const uint8_t *base, uint32_t idx, uint32_t mask,
                                                uint32_t size)
{
    const tern_shm_unit_hdr_t *u =
        (const tern_shm_unit_hdr_t *)(const void *)(base + (size_t)(idx & mask) * size);
    return atomic_load_explicit(&((tern_shm_unit_hdr_t *)u)->stamp, memory_order_acquire) ==
                   idx + 1
               ? u
               : NULL;
}

unsigned tern_shm_poll_recv(tern_shm_t *s, tern_shm_vc_t *v, unsigned budget)
{
    tern_shm_chan_t *c = &v->rx;
    tern_vc_t *vc = v->vc;
    unsigned n = 0;
    while (n < budget) {
        const tern_shm_unit_hdr_t *u = filled(c->fbox, c->fb_idx, s->fbox_mask, s->fbox_size);
        uint32_t cap;
        if (u != NULL && u->seq == c->seq) {
            c->fb_idx++;
            cap = s->fbox_cap;
        } else {
            u = filled(c->cells, c->cell_idx, s->cell_mask, s->cell_size);
            if (u == NULL || u->seq != c->seq)
                break; /* nothing, or the next unit's stamp is not visible yet */
            c->cell_idx++;
            cap = s->cell_cap;
        }
        c->seq++;
        n++;
        if (TERN_UNLIKELY(u->pad >= 64 || u->len > cap - u->pad)) {
            tern_vc_fail(vc, TERN_ERR_MALFORMED, "shm unit claims more bytes than its slot holds");
            break;
        }
        if (tern_handle_pkt(vc, (const uint8_t *)u + TERN_SHM_UNIT_HDR + u->pad, u->len) !=
            TERN_OK)
            break;
    }
    /* Publish consumption once per batch, on our own line (R2). */
    if (c->fb_idx != c->fb_head) {
        c->fb_head = c->fb_idx;
        atomic_store_explicit(&c->ctl->fbox_head, c->fb_idx, memory_order_release);
    }
    if (c->cell_idx != c->cell_head) {
        c->cell_head = c->cell_idx;
        atomic_store_explicit(&c->ctl->cell_head, c->cell_idx, memory_order_release);
    }
    return n;
}
