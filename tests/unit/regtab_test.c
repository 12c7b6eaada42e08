/*
 * Unit test of the region table that keeps the same-host copy out of
 * destroyed regions (engine/rma_cma.c, layout in engine/rma.h), in this
 * process and forked children, no job:
 *   - the table: its header, a slot's state as set, the key section
 *     (this pid, the memfd's fd, inode and length, the nonce);
 *   - tern_peer_memfd_map: the table's memfd found through /proc as a peer
 *     finds it (here: this process's), the slots shared with the mapping;
 *     refused for another name, inode or length;
 *   - drain: returns at once with no holder; waits for a live holder
 *     until it lets go (never before); overtakes a holder whose process
 *     has exited and been reaped, and one that is a zombie (no thread of
 *     it maps the table any more);
 *   - retire (finalize): every live slot dead.
 * Every wait is bounded by alarm().
 */
#define _GNU_SOURCE 1

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/rma.h"

#include "tests/unit/expect.h"

struct holder {
    tern_regtab_slot_t *slot;
    _Atomic int let_go;
};

static void *hold_then_let_go(void *arg)
{
    struct holder *h = arg;
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    atomic_store(&h->let_go, 1);
    atomic_store_explicit(&h->slot->holders[1], 0, memory_order_release);
    return NULL;
}

int main(void)
{
    alarm(60);
    uint64_t nonce = 0x1234567890abcdefull;
    tern_regtab_t *t = tern_regtab_new(nonce);
    EXPECT(t != NULL, "%s", "");
    if (t == NULL)
        return 1;

    /* the key section names this process's table */
    uint8_t sect[TERN_KEY_CMA_SECT];
    tern_regtab_pack(t, sect);
    tern_key_sect_t s;
    tern_key_cma_t c;
    memcpy(&s, sect, sizeof(s));
    memcpy(&c, sect + sizeof(s), sizeof(c));
    EXPECT(s.type == TERN_KEY_SECT_CMA && s.len == sizeof(c), "%s", "");
    EXPECT(c.pid == (int32_t)getpid() && c.fd >= 0 && c.map_len == TERN_REGTAB_LEN &&
           c.nonce == nonce && c.ino != 0, "%s", "");

    /* mapped as a peer maps it: the same slots */
    void *map = tern_peer_memfd_map(1, c.pid, c.fd, TERN_REGTAB_MEMFD, c.ino, c.map_len);
    EXPECT(map != NULL, "%s", "");
    if (map == NULL)
        return 1;
    const tern_regtab_hdr_t *h = map;
    EXPECT(h->magic == TERN_REGTAB_MAGIC && h->version == TERN_REGTAB_VERSION &&
           h->nonce == nonce && h->slots == TERN_REGION_MAX &&
           h->slot_size == sizeof(tern_regtab_slot_t), "%s", "");
    tern_regtab_slot_t *slots = (tern_regtab_slot_t *)((uint8_t *)map + TERN_REGTAB_SLOTS_OFF);
    tern_regtab_set(t, 7, 3u << 1 | 1);
    EXPECT(atomic_load(&slots[7].state) == (3u << 1 | 1), "%s", "");
    tern_regtab_set(t, TERN_REGION_MAX - 1, 9u << 1 | 1);
    EXPECT(atomic_load(&slots[TERN_REGION_MAX - 1].state) == (9u << 1 | 1), "%s", "");
    /* refused: another name, inode or length */
    EXPECT(tern_peer_memfd_map(1, c.pid, c.fd, "tern-region", c.ino, c.map_len) == NULL, "%s", "");
    EXPECT(tern_peer_memfd_map(1, c.pid, c.fd, TERN_REGTAB_MEMFD, c.ino + 1, c.map_len) == NULL, "%s", "");
    EXPECT(tern_peer_memfd_map(1, c.pid, c.fd, TERN_REGTAB_MEMFD, c.ino, c.map_len - 4096) ==
           NULL, "%s", "");
    EXPECT(tern_peer_memfd_map(1, c.pid, 9999, TERN_REGTAB_MEMFD, c.ino, c.map_len) == NULL, "%s", "");

    /* drain: nobody holds slot 7 */
    tern_regtab_set(t, 7, 3u << 1);
    tern_regtab_drain(t, 7);

    /* a live holder (another thread of this process, through the peer's
     * mapping): drain returns only once it has let go */
    struct holder hd = {.slot = &slots[7]};
    atomic_store(&slots[7].holders[1], (int32_t)getpid());
    pthread_t th;
    EXPECT(pthread_create(&th, NULL, hold_then_let_go, &hd) == 0, "%s", "");
    tern_regtab_drain(t, 7);
    EXPECT(atomic_load(&hd.let_go) == 1, "%s", "");
    pthread_join(th, NULL);

    /* a holder that exited (reaped), and one that is a zombie */
    pid_t gone = fork();
    if (gone == 0)
        _exit(0);
    EXPECT(waitpid(gone, NULL, 0) == gone, "%s", "");
    pid_t zombie = fork();
    if (zombie == 0)
        _exit(0);
    /* let it become a zombie: it has exited once waitid sees it (not reaped) */
    siginfo_t si;
    EXPECT(waitid(P_PID, (id_t)zombie, &si, WEXITED | WNOWAIT) == 0, "%s", "");
    atomic_store(&slots[7].holders[0], (int32_t)gone);
    atomic_store(&slots[7].holders[5], (int32_t)zombie);
    tern_regtab_drain(t, 7);
    EXPECT(atomic_load(&slots[7].holders[0]) == 0 && atomic_load(&slots[7].holders[5]) == 0, "%s", "");
    EXPECT(waitpid(zombie, NULL, 0) == zombie, "%s", "");

    /* finalize's retire: every live slot dead */
    tern_regtab_set(t, 9, 4u << 1 | 1);
    tern_regtab_retire(t, TERN_REGION_MAX);
    EXPECT(atomic_load(&slots[9].state) == 4u << 1, "%s", "");
    EXPECT(atomic_load(&slots[TERN_REGION_MAX - 1].state) == 9u << 1, "%s", "");

    munmap(map, TERN_REGTAB_LEN);
    tern_regtab_free(t);
    return failures ? 1 : 0;
}
