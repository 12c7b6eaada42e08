/*
 * The same-host copy of regions: puts and gets into a peer's region on this
 * host that no mapping serves, by Cross Memory Attach, and the region table
 * in shared memory that keeps them out of a destroyed region.  Layout,
 * protocol and memory ordering: engine/rma.h, "the same-host copy of
 * regions".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/* Is the holder pid gone for the table of inode ino: no thread of process
 * pid maps it (exited, a zombie, or the pid now names another process)?
 * Any doubt (a maps file we may not read): not gone. */
static bool holder_gone(int32_t pid, uint64_t ino)
{
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return true;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return errno == ENOENT;
    char want[48];
    snprintf(want, sizeof(want), " %llu ", (unsigned long long)ino);
    bool mapped = false, unreadable = false;
    for (struct dirent *e; !mapped && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char maps[96], line[512];
        /* a thread's: a leader that left by pthread_exit has none of its own */
        snprintf(maps, sizeof(maps), "/proc/%d/task/%.20s/maps", (int)pid, e->d_name);
        FILE *f = fopen(maps, "re");
        if (f == NULL) {
            unreadable |= errno == EACCES || errno == EPERM;
            continue;
        }
        while (!mapped && fgets(line, sizeof(line), f) != NULL)
            mapped = strstr(line, want) != NULL && strstr(line, TERN_REGTAB_MEMFD) != NULL;
        fclose(f);
    }
    closedir(d);
    return !mapped && !unreadable;
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
            if (spins % 1024 == 0 && holder_gone(pid, t->ino) &&
                atomic_compare_exchange_strong(&s->holders[i], &pid, 0))
                break;
            sched_yield(); /* an origin inside one copy */
        }
    }
}

void tern_regtab_retire(tern_regtab_t *t, uint32_t used)
{
    if (t == NULL)
        return;
    for (uint32_t i = 0; i < used; i++) {
        uint64_t st = atomic_load_explicit(&t->slots[i].state, memory_order_relaxed);
        if (st & 1)
            tern_regtab_set(t, i, st & ~(uint64_t)1);
    }
    for (uint32_t i = 0; i < used; i++)
        tern_regtab_drain(t, i);
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

/*
 * The peers' tables this process maps: one entry per table (its owner's
 * pid, inode and nonce), shared by every key of it, with a pidfd of the
 * owner.  A copy goes to the owner's pid only while that pidfd says the
 * owner lives: a pid freed by its death and given to another process is
 * never written to (a put checks it just before its syscall; the pid
 * would have to be reused within that gap).  Under one lock: keys are
 * unpacked and destroyed off the fast path.
 */
struct tern_regtab_peer {
    struct tern_regtab_peer *next;
    int32_t pid;
    uint64_t ino, nonce;
    void *map;
    int pidfd;
    unsigned refs;
};
static pthread_mutex_t peers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tern_regtab_peer *peers;

/* The owner's process as a pidfd, checked to be the one that holds the
 * table (fd, inode) now; -1 when not (or no pidfd here: no copy then). */
static int owner_pidfd(int32_t pid, int32_t fd, uint64_t ino)
{
    int pfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (pfd < 0)
        return -1;
    char path[64];
    struct stat sb;
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, (int)fd);
    /* after the open: the pidfd names the process that holds the table */
    if (stat(path, &sb) != 0 || (uint64_t)sb.st_ino != ino) {
        close(pfd);
        return -1;
    }
    return pfd;
}

static struct tern_regtab_peer *peer_map(int peer, const tern_key_cma_t *c)
{
    pthread_mutex_lock(&peers_lock);
    struct tern_regtab_peer *p = peers;
    while (p != NULL && !(p->pid == c->pid && p->ino == c->ino && p->nonce == c->nonce))
        p = p->next;
    if (p != NULL) {
        p->refs++;
        pthread_mutex_unlock(&peers_lock);
        return p;
    }
    pthread_mutex_unlock(&peers_lock);
    /* mapped outside the lock; two threads racing both map, one keeps its own */
    void *map = tern_peer_memfd_map(peer, c->pid, c->fd, TERN_REGTAB_MEMFD, c->ino, c->map_len);
    if (map == NULL)
        return NULL;
    const tern_regtab_hdr_t *h = map;
    /* the table of the context that packed the key (its nonce): a memfd
     * number and inode reused since name no other context's table */
    int pfd = -1;
    if (h->magic != TERN_REGTAB_MAGIC || h->version != TERN_REGTAB_VERSION ||
        h->nonce != c->nonce || h->slots != TERN_REGION_MAX ||
        h->slot_size != sizeof(tern_regtab_slot_t) ||
        (pfd = owner_pidfd(c->pid, c->fd, c->ino)) < 0 || (p = calloc(1, sizeof(*p))) == NULL) {
        tern_debug("key of peer %d: its region table does not match the key, or its owner "
                   "cannot be watched (pidfd_open): no same-host copy",
                   peer);
        if (pfd >= 0)
            close(pfd);
        munmap(map, c->map_len);
        return NULL;
    }
    *p = (struct tern_regtab_peer){
        .pid = c->pid, .ino = c->ino, .nonce = c->nonce, .map = map, .pidfd = pfd, .refs = 1};
    pthread_mutex_lock(&peers_lock);
    p->next = peers;
    peers = p;
    pthread_mutex_unlock(&peers_lock);
    return p;
}

void tern_key_cma_take(tern_key_t *key, const tern_key_cma_t *c)
{
    const tern_context_t *ctx = key->ctx;
    /* TERN_CMA off, or only for other jobs' peers and this is a rank of ours */
    if (ctx->cfg.cma == TERN_CMA_OFF || (ctx->cfg.cma == TERN_CMA_OUTSIDE && key->peer < ctx->size) ||
        !tern_host_same(&c->host, tern_host_self()) || c->pid <= 0 || c->fd < 0 ||
        c->map_len != TERN_REGTAB_LEN || (uint32_t)key->id >= TERN_REGION_MAX)
        return;
    struct tern_regtab_peer *p = peer_map(key->peer, c);
    if (p == NULL)
        return;
    key->cma_peer = p;
    key->cma_slot =
        (tern_regtab_slot_t *)((uint8_t *)p->map + TERN_REGTAB_SLOTS_OFF) + (uint32_t)key->id;
}

void tern_key_cma_drop(tern_key_t *key)
{
    struct tern_regtab_peer *p = key->cma_peer;
    if (p == NULL)
        return;
    key->cma_peer = NULL;
    key->cma_slot = NULL;
    pthread_mutex_lock(&peers_lock);
    bool last = --p->refs == 0;
    if (last)
        for (struct tern_regtab_peer **pp = &peers; *pp != NULL; pp = &(*pp)->next)
            if (*pp == p) {
                *pp = p->next;
                break;
            }
    pthread_mutex_unlock(&peers_lock);
    if (last) {
        munmap(p->map, TERN_REGTAB_LEN);
        close(p->pidfd);
        free(p);
    }
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
    const struct tern_regtab_peer *pe = key->cma_peer;
    tern_regtab_slot_t *s = key->cma_slot;
    const char *what = write ? "put" : "get";
    int32_t me = (int32_t)getpid();
    int h = hold(s, me, w->index);
    if (h < 0)
        return TERN_ERR_UNSUPPORTED; /* six copies into it now: the engine's path */
    tern_status_t st = TERN_OK;
    ssize_t got = 0;
    if (atomic_load(&s->state) != ((key->id >> 32) << 1 | 1)) {
        st = tern_error(TERN_ERR_REMOTE_ACCESS, "%s: region %u (generation %u) of rank %d was "
                                                "destroyed",
                        what, (uint32_t)key->id, (uint32_t)(key->id >> 32), key->peer);
    } else if (syscall(SYS_pidfd_send_signal, pe->pidfd, 0, NULL, 0) != 0) {
        got = -ESRCH; /* the owner died: its pid may name another process by now */
    } else {
        struct iovec seg = {.iov_base = (void *)(uintptr_t)raddr, .iov_len = len};
        tern_cma_xfer_t x = {.pid = pe->pid,
                             .write = write,
                             .want = len,
                             .fault_after = w->ctx->cfg.fault_cma_after_bytes};
        tern_cursor_init(&x.peer, &seg, 1);
        tern_cursor_t c;
        tern_cursor_init(&c, iov, iovcnt);
        while ((got = tern_cma_step(&x, &c)) > 0)
            ;
    }
    /* release: the copy (done by the kernel within the syscall) before the
     * word is free; drain's load acquires it.  Our own word only: one that
     * destroy overtook (it took us for dead) may be another origin's now. */
    int32_t mine = me;
    atomic_compare_exchange_strong_explicit(&s->holders[h], &mine, 0, memory_order_release,
                                            memory_order_relaxed);
    if (got == -ESRCH) {
        /* the peer is gone for good: its VC fails (its outstanding
         * operations and flushes with it), as the netmod would see */
        char why[96];
        snprintf(why, sizeof(why), "%s by CMA: rank %d (pid %d) is gone", what, key->peer,
                 (int)pe->pid);
        tern_vc_fail(vc, TERN_ERR_PEER_FAILED, why);
        return tern_error(TERN_ERR_PEER_FAILED, "%s", why);
    }
    if (tern_cma_refusal(got)) {
        /* nothing lost: the whole operation goes again by the engine's
         * path (a put rewrites what was copied, a get rereads) */
        tern_cma_kernel_refused(vc, pe->pid, write, (int)-got);
        return TERN_ERR_UNSUPPORTED;
    }
    if (got == -EFAULT)
        return tern_error(TERN_ERR_REMOTE_ACCESS,
                          "%s: %zu bytes at %#llx in rank %d's region: %s (the local buffer, or "
                          "the region's memory unmapped under the live region)",
                          what, len, (unsigned long long)raddr, key->peer, strerror(EFAULT));
    if (got < 0) { /* ENOMEM and the like: the engine's path instead */
        tern_debug("%s by CMA to rank %d: %s: by the engine's path", what, key->peer,
                   strerror((int)-got));
        return TERN_ERR_UNSUPPORTED;
    }
    if (st == TERN_OK)
        w->rma_count[TERN_RMA_C_CMA]++;
    return st;
}
