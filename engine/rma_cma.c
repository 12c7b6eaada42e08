/*
 * The same-host copy of regions: puts and gets into a peer's region on this
 * host that no mapping serves, by Cross Memory Attach, and the region table
 * in shared memory that keeps them out of a destroyed region.  Layout,
 * protocol and memory ordering: engine/rma.h, "the same-host copy of
 * regions".
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/cma.h"
#include "engine/engine_internal.h"
#include "engine/rma.h"

struct tern_regtab {
    int fd;
    uint64_t ino;
    uint64_t nonce;
    void *map;
    tern_regtab_slot_t *slots;
};

/* ---- the target: its table ------------------------------------------------------ */

tern_regtab_t *tern_regtab_new(uint64_t nonce)
{
    tern_regtab_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    t->fd = memfd_create(TERN_REGTAB_MEMFD, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    struct stat sb;
    /* sealed at its size: a mapping peer never sees it shrink (SIGBUS);
     * untouched slots' pages are never allocated */
    if (t->fd < 0 || ftruncate(t->fd, (off_t)TERN_REGTAB_LEN) != 0 ||
        fcntl(t->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
        fstat(t->fd, &sb) != 0 ||
        (t->map = mmap(NULL, TERN_REGTAB_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0)) ==
            MAP_FAILED) {
        tern_debug("region table for the same-host copy: %s: peers' puts and gets take the "
                   "engine's path",
                   strerror(errno));
        if (t->fd >= 0)
            close(t->fd);
        free(t);
        return NULL;
    }
    t->ino = (uint64_t)sb.st_ino;
    t->nonce = nonce;
    t->slots = (tern_regtab_slot_t *)((uint8_t *)t->map + TERN_REGTAB_SLOTS_OFF);
    tern_regtab_hdr_t *h = t->map;
    *h = (tern_regtab_hdr_t){.magic = TERN_REGTAB_MAGIC, .version = TERN_REGTAB_VERSION,
                             .nonce = nonce, .slots = TERN_REGION_MAX,
                             .slot_size = sizeof(tern_regtab_slot_t)};
    return t;
}

void tern_regtab_free(tern_regtab_t *t)
{
    if (t == NULL)
        return;
    munmap(t->map, TERN_REGTAB_LEN);
    close(t->fd);
    free(t);
}

void tern_regtab_set(tern_regtab_t *t, uint32_t index, uint64_t state)
{
    if (t == NULL)
        return;
    if (state & 1) /* release: a peer that reads it live sees the region set up */
        atomic_store_explicit(&t->slots[index].state, state, memory_order_release);
    else /* seq_cst, before drain's loads of the holder words */
        atomic_store(&t->slots[index].state, state);
}

/* Is the process pid gone: no such process, or a zombie (which runs no
 * more code: it can copy nothing)? */
static bool holder_gone(int32_t pid)
{
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return true;
    char path[48], buf[256];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* "pid (comm) S ...": comm may hold anything */
    return p != NULL && (p[1] == ' ') && (p[2] == 'Z' || p[2] == 'X');
}

void tern_regtab_drain(tern_regtab_t *t, uint32_t index)
{
    if (t == NULL)
        return;
    tern_regtab_slot_t *s = &t->slots[index];
    for (int i = 0; i < TERN_REGTAB_HOLDERS; i++) {
        for (unsigned spins = 1;; spins++) {
            /* seq_cst: after the dead state's store (see engine/rma.h);
             * it acquires the holder's release of the word */
            int32_t pid = atomic_load(&s->holders[i]);
            if (pid == 0)
                break;
            if (spins % 1024 == 0 && holder_gone(pid) &&
                atomic_compare_exchange_strong(&s->holders[i], &pid, 0))
                break;
            sched_yield(); /* an origin inside one copy */
        }
    }
}

void tern_regtab_pack(const tern_regtab_t *t, void *buf)
{
    tern_key_sect_t s = {.type = TERN_KEY_SECT_CMA, .len = sizeof(tern_key_cma_t)};
    tern_key_cma_t c = {.host = *tern_host_self(),
                        .pid = (int32_t)getpid(),
                        .fd = t->fd,
                        .ino = t->ino,
                        .map_len = TERN_REGTAB_LEN,
                        .nonce = t->nonce};
    memcpy(buf, &s, sizeof(s));
    memcpy((uint8_t *)buf + sizeof(s), &c, sizeof(c));
}

/* ---- the origin ---------------------------------------------------------------- */

void tern_key_cma_take(tern_key_t *key, const tern_key_cma_t *c)
{
    if (key->ctx->cfg.cma == TERN_CMA_OFF || !tern_host_same(&c->host, tern_host_self()) ||
        c->pid <= 0 || c->fd < 0 || c->map_len != TERN_REGTAB_LEN)
        return;
    void *map =
        tern_peer_memfd_map(key->peer, c->pid, c->fd, TERN_REGTAB_MEMFD, c->ino, c->map_len);
    if (map == NULL)
        return;
    const tern_regtab_hdr_t *h = map;
    /* the table of the context that packed the key (its nonce): a memfd
     * number and inode reused since name no other context's table */
    if (h->magic != TERN_REGTAB_MAGIC || h->version != TERN_REGTAB_VERSION ||
        h->nonce != c->nonce || h->slots != TERN_REGION_MAX ||
        h->slot_size != sizeof(tern_regtab_slot_t) || (uint32_t)key->id >= TERN_REGION_MAX) {
        tern_debug("key of peer %d: its region table does not match the key", key->peer);
        munmap(map, c->map_len);
        return;
    }
    key->cma_map = map;
    key->cma_maplen = c->map_len;
    key->cma_slot =
        (tern_regtab_slot_t *)((uint8_t *)map + TERN_REGTAB_SLOTS_OFF) + (uint32_t)key->id;
    key->cma_pid = c->pid;
}

/* A free holder word of slot s taken for this process (pid me), from a
 * place that spreads the workers: its index, or -1 when all are taken. */
static int hold(tern_regtab_slot_t *s, int32_t me, int from)
{
    for (int k = 0; k < TERN_REGTAB_HOLDERS; k++) {
        int i = (from + k) % TERN_REGTAB_HOLDERS;
        int32_t free_word = 0;
        /* seq_cst: before the state's load (see engine/rma.h) */
        if (atomic_compare_exchange_strong(&s->holders[i], &free_word, me))
            return i;
    }
    return -1;
}

tern_status_t tern_rma_cma_op(tern_worker_t *w, tern_vc_t *vc, const tern_key_t *key,
                              const struct iovec *iov, int iovcnt, size_t len, uint64_t raddr,
                              bool write)
{
    if (key->cma_slot == NULL || !tern_cma_usable(vc))
        return TERN_ERR_UNSUPPORTED;
    uint64_t min = w->ctx->cfg.rma_cma_threshold_bytes;
    if (len < (min != TERN_CMA_AUTO ? min : vc->nm->desc->rma_cma_threshold))
        return TERN_ERR_UNSUPPORTED; /* small: the engine's packets are faster */
    tern_regtab_slot_t *s = key->cma_slot;
    int h = hold(s, (int32_t)getpid(), w->index);
    if (h < 0)
        return TERN_ERR_UNSUPPORTED; /* six copies into it now: the engine's path */
    const char *what = write ? "put" : "get";
    tern_status_t st = TERN_OK;
    if (atomic_load(&s->state) != ((key->id >> 32) << 1 | 1)) {
        st = tern_error(TERN_ERR_REMOTE_ACCESS, "%s: region %u (generation %u) of rank %d was "
                                                "destroyed",
                        what, (uint32_t)key->id, (uint32_t)(key->id >> 32), key->peer);
    } else {
        struct iovec seg = {.iov_base = (void *)(uintptr_t)raddr, .iov_len = len};
        tern_cma_xfer_t x = {.pid = key->cma_pid,
                             .write = write,
                             .want = len,
                             .fault_after = w->ctx->cfg.fault_cma_after_bytes};
        tern_cursor_init(&x.peer, &seg, 1);
        tern_cursor_t c;
        tern_cursor_init(&c, iov, iovcnt);
        ssize_t got;
        while ((got = tern_cma_step(&x, &c)) > 0)
            ;
        if (tern_cma_refusal(got)) {
            /* nothing lost: the whole operation goes again by the engine's
             * path (a put rewrites what was copied, a get rereads) */
            tern_cma_kernel_refused(vc, key->cma_pid, write, (int)-got);
            st = TERN_ERR_UNSUPPORTED;
        } else if (got == -ESRCH) {
            /* the peer is gone for good: its VC fails (its outstanding
             * operations and flushes with it), as the netmod would see */
            char why[96];
            snprintf(why, sizeof(why), "%s by CMA: rank %d (pid %d) is gone", what, key->peer,
                     (int)key->cma_pid);
            tern_vc_fail(vc, TERN_ERR_PEER_FAILED, why);
            st = tern_error(TERN_ERR_PEER_FAILED, "%s", why);
        } else if (got < 0) {
            st = tern_error(TERN_ERR_REMOTE_ACCESS,
                            "%s: %zu bytes at %#llx in rank %d's region: %s (the local buffer, or "
                            "the region's memory unmapped under the live region)",
                            what, len, (unsigned long long)raddr, key->peer, strerror((int)-got));
        }
    }
    /* release: the copy (done by the kernel within the syscall) before the
     * word is free; drain's load acquires it */
    atomic_store_explicit(&s->holders[h], 0, memory_order_release);
    if (st == TERN_OK)
        w->rma_count[TERN_RMA_C_CMA]++;
    return st;
}
