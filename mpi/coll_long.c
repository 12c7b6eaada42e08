/*
 * The long-message algorithms (coll.c chooses them by size; docs/mpi.md):
 * they move each byte across the network about twice instead of log2(p)
 * times, at the price of more messages.
 *
 * Broadcast (van de Geijn): the root's buffer, cut into size pieces, is
 * scattered down a binomial tree (rank rel of the relative numbering gets
 * the pieces of its subtree), then a ring allgather gives every rank the
 * pieces it lacks.
 *
 * Allreduce (Rabenseifner), for commutative ops: a reduce-scatter by
 * recursive halving (each step swaps half of the blocks still held with
 * the partner and reduces the half kept, until each rank holds one block
 * of the result), then an allgather by recursive doubling (the blocks
 * swapped back the other way).  The ranks beyond the largest power of two
 * are folded in first (even ones hand their data to their odd neighbour)
 * and get the result at the end.
 */
#include <string.h>

#include "mpi/coll.h"

/* ---- broadcast ---------------------------------------------------------------- */

bool coll_bcast_is_long(const coll_t *k, size_t len)
{
    return len >= coll_threshold(THR_BCAST_LONG) &&
           (size_t)k->c->size >= coll_threshold(THR_BCAST_MIN_PROCS);
}

size_t coll_bcast_piece(size_t len, int size, int i)
{
    size_t chunk = (len + (size_t)size - 1) / (size_t)size, at = (size_t)i * chunk;
    return at < len ? at : len;
}

int coll_bcast_long(const coll_t *k, void *buffer, size_t len, int root)
{
    int size = k->c->size, rank = k->c->rank, rel = (rank - root + size) % size, e;
    char *buf = buffer;
    /* scatter: my subtree is [rel, rel + mask), mask the lowest bit of rel */
    int mask = 1;
    for (; mask < size; mask <<= 1)
        if (rel & mask) {
            int hi = rel + mask < size ? rel + mask : size;
            size_t from = coll_bcast_piece(len, size, rel), to = coll_bcast_piece(len, size, hi);
            if ((e = coll_recv(k, buf + from, to - from, (rank - mask + size) % size,
                               TAG_BCAST)) != MPI_SUCCESS)
                return e;
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (rel + mask >= size)
            continue;
        int lo = rel + mask, hi = lo + mask < size ? lo + mask : size;
        size_t from = coll_bcast_piece(len, size, lo), to = coll_bcast_piece(len, size, hi);
        if ((e = coll_send(k, buf + from, to - from, (rank + mask) % size, TAG_BCAST)) !=
            MPI_SUCCESS)
            return e;
    }
    /* ring allgather of the pieces: step i passes on piece rel - i */
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    for (int i = 0; i < size - 1; i++) {
        int sp = (rel - i + size) % size, rp = (rel - i - 1 + size) % size;
        size_t s0 = coll_bcast_piece(len, size, sp), s1 = coll_bcast_piece(len, size, sp + 1);
        size_t r0 = coll_bcast_piece(len, size, rp), r1 = coll_bcast_piece(len, size, rp + 1);
        if ((e = coll_sendrecv(k, buf + s0, s1 - s0, right, buf + r0, r1 - r0, left,
                               TAG_BCAST)) != MPI_SUCCESS)
            return e;
    }
    return MPI_SUCCESS;
}

/* ---- allreduce ----------------------------------------------------------------- */

bool coll_allreduce_is_long(const coll_t *k, const coll_red_t *r)
{
    int pof2 = 1;
    while (pof2 * 2 <= k->c->size)
        pof2 *= 2;
    return r->len > coll_threshold(THR_ALLREDUCE_LONG) && mpi_op_commutes(r->op) &&
           r->n >= pof2 && k->c->size > 1;
}

int coll_block_first(int n, int pof2, int blk)
{
    int q = n / pof2, rm = n % pof2;
    return blk * q + (blk < rm ? blk : rm);
}

typedef struct blocks {
    int n, pof2;
} blocks_t;

static int first(const blocks_t *b, int blk) { return coll_block_first(b->n, b->pof2, blk); }

/* elements of blocks [lo, hi) */
static int elems(const blocks_t *b, int lo, int hi) { return first(b, hi) - first(b, lo); }

/* one swap with dst: blocks [slo, shi) of work go, [rlo, rhi) arrive in into */
static int swap(const coll_t *k, const coll_red_t *r, const blocks_t *b, char *work, int slo,
                int shi, int dst, char *into, int rlo, int rhi)
{
    return coll_sendrecv(k, work + (size_t)first(b, slo) * r->ext,
                         (size_t)elems(b, slo, shi) * r->ext, dst,
                         into + (size_t)first(b, rlo) * r->ext,
                         (size_t)elems(b, rlo, rhi) * r->ext, dst, TAG_ALLREDUCE);
}

int coll_allreduce_long(const coll_t *k, const coll_red_t *r, char *work, char *tmp)
{
    int size = k->c->size, rank = k->c->rank, e;
    int pof2 = 1;
    while (pof2 * 2 <= size)
        pof2 *= 2;
    int rem = size - pof2, newrank;
    if (rank < 2 * rem) { /* fold: the odd rank of each pair goes on */
        if (rank % 2 == 0) {
            if ((e = coll_send(k, work, r->len, rank + 1, TAG_ALLREDUCE)) != MPI_SUCCESS)
                return e;
            newrank = -1;
        } else {
            if ((e = coll_recv(k, tmp, r->len, rank - 1, TAG_ALLREDUCE)) != MPI_SUCCESS)
                return e;
            coll_red_apply(r, tmp, work);
            newrank = rank / 2;
        }
    } else {
        newrank = rank - rem;
    }
    if (newrank >= 0) {
        blocks_t b = {r->n, pof2};
        int lo = 0, hi = pof2; /* the blocks this rank still reduces */
        for (int mask = pof2 / 2; mask > 0; mask >>= 1) {
            int newdst = newrank ^ mask, dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            int mid = (lo + hi) / 2;
            bool upper = newrank & mask; /* keeps [mid, hi), gives [lo, mid) */
            int klo = upper ? mid : lo, khi = upper ? hi : mid;
            if ((e = swap(k, r, &b, work, upper ? lo : mid, upper ? mid : hi, dst, tmp, klo,
                          khi)) != MPI_SUCCESS)
                return e;
            coll_red_apply_part(r, tmp, work, first(&b, klo), elems(&b, klo, khi));
            lo = klo;
            hi = khi;
        }
        for (int mask = 1; mask < pof2; mask <<= 1) { /* [lo, hi) is [newrank, +1) grown */
            int newdst = newrank ^ mask, dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            bool upper = newrank & mask; /* the partner holds the mask blocks below */
            int olo = upper ? lo - mask : hi, ohi = upper ? lo : hi + mask;
            if ((e = swap(k, r, &b, work, lo, hi, dst, work, olo, ohi)) != MPI_SUCCESS)
                return e;
            lo = upper ? olo : lo;
            hi = upper ? hi : ohi;
        }
    }
    if (rank < 2 * rem)
        return rank % 2 ? coll_send(k, work, r->len, rank - 1, TAG_ALLREDUCE)
                        : coll_recv(k, work, r->len, rank + 1, TAG_ALLREDUCE);
    return MPI_SUCCESS;
}
