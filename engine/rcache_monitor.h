/*
 * The memory monitor behind the registration cache (engine/rcache.h says
 * what it catches and misses, and why userfaultfd in write-protect mode).
 * One per process: a userfaultfd and a thread that reads its events and
 * publishes every unmapped range in a broadcast ring.  Each cache reads the
 * ring with a cursor of its own, from its owning thread, on its next get /
 * put; nothing here takes a lock.
 *
 * The ring has one writer (the monitor thread) and any number of readers,
 * who never write to it.  The writer never waits for a reader: a reader
 * that falls more than TERN_MEMMON_RING events behind learns it (from
 * `reserve`) and drops everything it caches, which is always safe.
 *
 * Memory ordering.  Each label is repeated at its access in
 * rcache_monitor.c.
 *   S0     monitor: state |= READING (seq_cst) and a full fence, then read()
 *          on the userfaultfd.  The kernel releases a thread blocked in
 *          munmap / madvise / mremap inside that read(), through a wake-up
 *          that is a full barrier, so once munmap has returned, that thread
 *          (and whoever synchronises with it later) sees READING set, or a
 *          later value of state.
 *   R1/A1  monitor: fills slots, then stores head (release); reader: loads
 *          head (acquire), then reads the slots below it.
 *   R2/A2  monitor: clears READING (release) after storing head of the
 *          batch it read; reader: loads state (acquire).  Seeing READING
 *          clear makes the batch's head visible (R1 precedes R2); seeing it
 *          set, the reader waits.  With S0: a drain that starts after munmap
 *          returned sees the unmapped range.
 *   R3/A3  monitor: stores reserve = index + 1, then a release fence, then
 *          overwrites the slot; reader: reads a slot, an acquire fence, then
 *          reserve.  If the slot read saw the overwrite, reserve shows it
 *          (the seqlock pattern) and the reader treats it as an overflow.
 */
#ifndef TERN_ENGINE_RCACHE_MONITOR_H
#define TERN_ENGINE_RCACHE_MONITOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <tern/status.h>

#define TERN_MEMMON_RING 4096u /* events; a power of two */

enum {
    TERN_MEMMON_READING = 1u << 0, /* events read, not all published yet */
    TERN_MEMMON_LOST = 1u << 1,    /* fork child: no monitor thread here */
    TERN_MEMMON_DEAD = 1u << 2,    /* the monitor thread stopped on an error */
};

typedef struct tern_memmon_slot {
    _Atomic uintptr_t start, end; /* an unmapped range [start, end) */
} tern_memmon_slot_t;

struct tern_memmon {
    /* what every get / put reads: written once per batch of events */
    _Alignas(64) _Atomic uint64_t head;    /* events published: [0, head) */
    _Atomic uint32_t state;                /* TERN_MEMMON_* */
    _Alignas(64) _Atomic uint64_t reserve; /* events the monitor began to write */
    _Alignas(64) tern_memmon_slot_t ring[TERN_MEMMON_RING];
};

extern struct tern_memmon tern_memmon;

/* Start the monitor once per process (later calls return the first
 * answer).  TERN_OK, or TERN_ERR_UNSUPPORTED with the reason recorded. */
tern_status_t tern_memmon_start(void);

/* Ask for events about [start, end) (page-aligned).  False when the range
 * cannot be watched (not fully mapped, a memory type userfaultfd refuses,
 * another userfaultfd owns it, no monitor): do not cache it. */
bool tern_memmon_watch(uintptr_t start, uintptr_t end);

/* A new reader's cursor: the events published so far. */
static inline uint64_t tern_memmon_cursor(void)
{
    return atomic_load_explicit(&tern_memmon.head, memory_order_acquire); /* A1 */
}

/* The fast-path test: could there be events past cursor?  Two loads of a
 * line the monitor writes only when memory is unmapped. */
static inline bool tern_memmon_pending(uint64_t cursor)
{
    /* both loads always made, no branch between them (locals: clang's
     * -Wbitwise-instead-of-logical otherwise reads `|` as a typo) */
    bool busy = atomic_load_explicit(&tern_memmon.state, memory_order_acquire) != 0; /* A2 */
    bool moved = atomic_load_explicit(&tern_memmon.head, memory_order_acquire) != cursor; /* A1 */
    return busy | moved;
}

typedef enum {
    TERN_MEMMON_DRAINED = 0, /* every event up to now handed to fn */
    TERN_MEMMON_OVERFLOW,    /* fell behind (or the monitor stalled): drop everything */
    TERN_MEMMON_STOPPED,     /* the monitor died: drop everything, cache no more */
    TERN_MEMMON_FORKED,      /* fork child: nothing here is this process's to drop */
} tern_memmon_drain_t;

/* Hand fn every range unmapped since *cursor, once the events of every
 * munmap that has returned are published; advance *cursor. */
tern_memmon_drain_t tern_memmon_drain(uint64_t *cursor,
                                      void (*fn)(void *arg, uintptr_t start, uintptr_t end),
                                      void *arg);

#endif
