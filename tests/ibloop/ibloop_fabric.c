/*
 * ibloop: attaching to a fabric, its tables and arena, dead processes.
 *
 * The fabric lock is flock(LOCK_EX) on the fabric file (released by the
 * kernel if its holder dies) plus a process-local mutex (flock does not
 * exclude threads sharing one open file).  It guards table allocation, the
 * arena, attach/detach and reclamation -- never the data path.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ibloop.h"

struct ibloop_fab ibloop_fab = {.fd = -1};
void *ibloop_local_qp[IBLOOP_NQP];
void *ibloop_local_cq[IBLOOP_NCQ];
void *ibloop_local_srq[IBLOOP_NSRQ];

static pthread_mutex_t fab_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t attach_mutex = PTHREAD_MUTEX_INITIALIZER;

static const uint32_t tab_count[8] = {IBLOOP_NPROC, IBLOOP_NHOST, IBLOOP_NCTX,
                                      IBLOOP_NQP,   IBLOOP_NCQ,   IBLOOP_NSRQ,
                                      IBLOOP_NCHAN, IBLOOP_NMR};
static const uint32_t tab_size[8] = {
    sizeof(struct ibloop_wire_proc), sizeof(struct ibloop_wire_host),
    sizeof(struct ibloop_wire_ctx),  sizeof(struct ibloop_wire_qp),
    sizeof(struct ibloop_wire_cq),   sizeof(struct ibloop_wire_srq),
    sizeof(struct ibloop_wire_chan), sizeof(struct ibloop_wire_mr)};

void ibloop_fab_lock(void)
{
    pthread_mutex_lock(&fab_mutex);
    while (flock(ibloop_fab.fd, LOCK_EX) && errno == EINTR)
        ;
}

void ibloop_fab_unlock(void)
{
    flock(ibloop_fab.fd, LOCK_UN);
    pthread_mutex_unlock(&fab_mutex);
}

uint32_t ibloop_new_gen(void)
{
    uint32_t g;

    do
        g = atomic_fetch_add(&ibloop_fab.hdr->gen_counter, 1) + 1;
    while (g == 0);
    return g;
}

/* ---- layout ----------------------------------------------------------- */
static void layout(uint64_t off[9])
{
    uint64_t o = sizeof(struct ibloop_wire_hdr);

    for (int i = 0; i < 8; i++) {
        off[i] = o;
        o += (uint64_t)tab_count[i] * tab_size[i];
        o = (o + 4095) & ~4095ull;
    }
    off[8] = o;
}

static void fab_init(struct ibloop_wire_hdr *h, int roce)
{
    h->version = IBLOOP_WIRE_VERSION;
    h->hdr_size = sizeof(*h);
    h->file_size = IBLOOP_FILE_SIZE;
    h->link_layer = roce ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
    h->uid = (uint32_t)getuid();
    for (int i = 0; i < 8; i++) {
        h->count[i] = tab_count[i];
        h->entry_size[i] = tab_size[i];
    }
    layout(h->off);
    h->next_lid = 1;
    atomic_store(&h->next_pd, 1);
    atomic_store(&h->gen_counter, 1);
    ibloop_lock_init(&h->atomic_lock);
    /* R0: everything above is visible before the magic (A0 on attach). */
    atomic_store_explicit(&h->magic, IBLOOP_WIRE_MAGIC, memory_order_release);
}

int ibloop_fab_check(const struct ibloop_wire_hdr *h)
{
    uint64_t off[9];

    layout(off);
    if (h->version != IBLOOP_WIRE_VERSION || h->hdr_size != sizeof(*h) ||
        h->file_size != IBLOOP_FILE_SIZE || memcmp(h->off, off, sizeof(off)))
        return EPROTO;
    for (int i = 0; i < 8; i++)
        if (h->count[i] != tab_count[i] || h->entry_size[i] != tab_size[i])
            return EPROTO;
    return 0;
}

/* ---- table entries and arena (fabric lock held) ----------------------- */
int ibloop_tab_alloc(int table)
{
    static const int slot[] = {2, 3, 4, 5, 6}; /* ctx qp cq srq chan */
    static const size_t gen_off[] = {
        offsetof(struct ibloop_wire_ctx, gen), offsetof(struct ibloop_wire_qp, gen),
        offsetof(struct ibloop_wire_cq, gen), offsetof(struct ibloop_wire_srq, gen),
        offsetof(struct ibloop_wire_chan, gen)};
    int s = slot[table];
    struct ibloop_wire_hdr *h = ibloop_fab.hdr;
    uint8_t *base = ibloop_at(h->off[s]);
    uint32_t i;

    for (i = 0; i < h->hwm[s]; i++) {
        _Atomic uint32_t *gen = (_Atomic uint32_t *)(void *)
            (base + (size_t)i * tab_size[s] + gen_off[table]);
        if (atomic_load(gen) == 0)
            break;
    }
    if (i == tab_count[s])
        return -1;
    if (i == h->hwm[s])
        h->hwm[s]++;
    memset(base + (size_t)i * tab_size[s], 0, tab_size[s]);
    return (int)i;
}

uint64_t ibloop_arena_alloc(uint64_t bytes, uint32_t *order)
{
    struct ibloop_wire_hdr *h = ibloop_fab.hdr;
    uint32_t o = IBLOOP_ARENA_MIN_ORDER;
    uint64_t off;

    while ((1ull << o) < bytes)
        o++;
    if (o > IBLOOP_ARENA_MAX_ORDER)
        return 0;
    *order = o;
    off = h->arena_free[o];
    if (off) {
        h->arena_free[o] = *(uint64_t *)ibloop_at(off);
    } else {
        if (h->off[8] + h->arena_bump + (1ull << o) > IBLOOP_FILE_SIZE)
            return 0;
        off = h->off[8] + h->arena_bump;
        h->arena_bump += 1ull << o;
    }
    memset(ibloop_at(off), 0, 4096);
    return off;
}

void ibloop_arena_free(uint64_t off, uint32_t order)
{
    struct ibloop_wire_hdr *h = ibloop_fab.hdr;
    uint64_t sz = 1ull << order;

    if (!off)
        return;
    /* give the memory back, keep the first page for the free-list link */
    if (sz > 4096)
        fallocate(ibloop_fab.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  (off_t)(off + 4096), (off_t)(sz - 4096));
    *(uint64_t *)ibloop_at(off) = h->arena_free[order];
    h->arena_free[order] = off;
}

/* ---- reclamation (fabric lock held) ------------------------------------ */
/* Free every object of process p (of its context ctx only, unless ALL). */
#define ALL UINT32_MAX
static void reclaim_objects(uint32_t p, uint32_t ctx)
{
    struct ibloop_wire_hdr *h = ibloop_fab.hdr;
    uint32_t i;

    for (i = 0; i < h->hwm[3]; i++) {
        struct ibloop_wire_qp *q = ibloop_qp(i);
        if (atomic_load(&q->gen) && q->proc == p && (ctx == ALL || q->ctx == ctx)) {
            /* take the lock so no requester is half-way through it */
            ibloop_lock(&q->lock);
            atomic_store(&q->state, IBV_QPS_RESET);
            atomic_store(&q->gen, 0);
            ibloop_unlock(&q->lock);
            ibloop_lock(&q->rq.lock);
            ibloop_unlock(&q->rq.lock);
            ibloop_arena_free(q->sq_ring, q->sq_order);
            ibloop_arena_free(q->rq.ring, q->rq.ring_order);
        }
    }
    for (i = 0; i < h->hwm[5]; i++) {
        struct ibloop_wire_srq *s = ibloop_srq(i);
        if (atomic_load(&s->gen) && s->proc == p && (ctx == ALL || s->ctx == ctx)) {
            ibloop_lock(&s->rq.lock);
            atomic_store(&s->gen, 0);
            ibloop_unlock(&s->rq.lock);
            ibloop_arena_free(s->rq.ring, s->rq.ring_order);
        }
    }
    for (i = 0; i < h->hwm[4]; i++) {
        struct ibloop_wire_cq *c = ibloop_cq(i);
        if (atomic_load(&c->gen) && c->proc == p && (ctx == ALL || c->ctx == ctx)) {
            ibloop_lock(&c->lock);
            atomic_store(&c->gen, 0);
            ibloop_unlock(&c->lock);
            /* a resize cut short leaves ring and ring_order apart: leak */
            if (!atomic_load(&c->resizing))
                ibloop_arena_free(c->ring, c->ring_order);
        }
    }
    for (i = 0; i < h->hwm[7]; i++) {
        struct ibloop_wire_mr *m = ibloop_mr(i);
        if (atomic_load(&m->key) && atomic_load(&m->proc) == p &&
            (ctx == ALL || atomic_load(&m->ctx) == ctx))
            atomic_store(&m->key, 0);
    }
    for (i = 0; i < h->hwm[6]; i++)
        if (ibloop_chan(i)->proc == p && (ctx == ALL || ibloop_chan(i)->ctx == ctx))
            atomic_store(&ibloop_chan(i)->gen, 0);
}

void ibloop_reclaim_ctx(uint32_t ctx)
{
    reclaim_objects(ibloop_fab.proc, ctx);
}

static void reclaim_proc(uint32_t p)
{
    struct ibloop_wire_hdr *h = ibloop_fab.hdr;
    uint32_t i, host;

    reclaim_objects(p, ALL);
    for (i = 0; i < h->hwm[2]; i++)
        if (ibloop_ctx(i)->proc == p)
            atomic_store(&ibloop_ctx(i)->gen, 0);
    host = ibloop_proc(p)->host;
    atomic_store(&ibloop_proc(p)->gen, 0);
    for (i = 0; i < h->hwm[0]; i++)
        if (atomic_load(&ibloop_proc(i)->gen) && ibloop_proc(i)->host == host)
            return;
    atomic_store(&ibloop_host(host)->gen, 0);
}

/* returns the number of live processes other than us */
static int reclaim_dead_locked(void)
{
    int live = 0;

    for (uint32_t i = 0; i < ibloop_fab.hdr->hwm[0]; i++) {
        struct ibloop_wire_proc *w = ibloop_proc(i);
        if (!atomic_load(&w->gen) || w->pid == ibloop_fab.pid)
            continue;
        if (ibloop_proc_alive(i)) {
            live++;
        } else {
            IBLOOP_DBG("reclaiming dead pid %d", (int)w->pid);
            reclaim_proc(i);
        }
    }
    return live;
}

void ibloop_reclaim_dead(void)
{
    ibloop_fab_lock();
    reclaim_dead_locked();
    ibloop_fab_unlock();
}

/* ---- attach / detach --------------------------------------------------- */
static int join(void)
{
    struct ibloop_wire_hdr *h = ibloop_fab.hdr;
    struct stat st;
    uint32_t i, host = UINT32_MAX, p = UINT32_MAX;

    if (stat("/proc/self/ns/net", &st))
        st.st_ino = 1;
    ibloop_fab.netns = st.st_ino;
    for (i = 0; i < h->hwm[1]; i++)
        if (atomic_load(&ibloop_host(i)->gen) &&
            ibloop_host(i)->netns_ino == ibloop_fab.netns)
            host = i;
    if (host == UINT32_MAX) {
        for (i = 0; i < IBLOOP_NHOST && atomic_load(&ibloop_host(i)->gen); i++)
            ;
        if (i == IBLOOP_NHOST)
            return EAGAIN;
        host = i;
        if (i == h->hwm[1])
            h->hwm[1]++;
        ibloop_host(i)->netns_ino = ibloop_fab.netns;
        ibloop_host(i)->lid = h->next_lid;
        h->next_lid = h->next_lid >= 0xbfff ? 1 : h->next_lid + 1;
        atomic_store(&ibloop_host(i)->gen, ibloop_new_gen());
    }
    for (i = 0; i < IBLOOP_NPROC; i++)
        if (!atomic_load(&ibloop_proc(i)->gen)) {
            p = i;
            break;
        }
    if (p == UINT32_MAX)
        return EAGAIN;
    if (p == h->hwm[0])
        h->hwm[0]++;
    memset(ibloop_proc(p), 0, sizeof(struct ibloop_wire_proc));
    ibloop_proc(p)->pid = ibloop_fab.pid;
    ibloop_proc(p)->start_time = ibloop_start_time(ibloop_fab.pid);
    ibloop_proc(p)->netns_ino = ibloop_fab.netns;
    ibloop_proc(p)->host = host;
    ibloop_proc(p)->lid = ibloop_host(host)->lid;
    ibloop_fab.lid = ibloop_host(host)->lid;
    ibloop_fab.proc = p;
    ibloop_fab.proc_gen = ibloop_new_gen();
    atomic_store(&ibloop_proc(p)->gen, ibloop_fab.proc_gen);
    return 0;
}

/*
 * Fabrics whose processes all died without detaching (killed, _exit) are
 * removed by the next process of the same user that attaches to any fabric.
 * A fabric is only judged while we hold its flock, so nobody is attaching
 * or detaching; one that is being created (no magic yet) is left alone.
 */
static bool fabric_dead(int fd)
{
    struct ibloop_wire_hdr h;
    struct ibloop_wire_proc p[IBLOOP_NPROC];
    uint32_t n;

    if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
        atomic_load(&h.magic) != IBLOOP_WIRE_MAGIC) {
        /* never initialized: a creator that died (or is just starting) */
        struct stat st;
        return !fstat(fd, &st) && st.st_mtime + 60 < time(NULL);
    }
    if (ibloop_fab_check(&h))
        return false; /* another version's: not ours to judge */
    n = h.hwm[0] < IBLOOP_NPROC ? h.hwm[0] : IBLOOP_NPROC;
    if (pread(fd, p, n * sizeof(p[0]), (off_t)h.off[0]) != (ssize_t)(n * sizeof(p[0])))
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (atomic_load(&p[i].gen) && p[i].pid > 0 &&
            ibloop_start_time(p[i].pid) == p[i].start_time)
            return false;
    return true;
}

static void gc_dead_fabrics(const char *keep)
{
    char prefix[64], path[320];
    struct dirent *d;
    DIR *dir = opendir("/dev/shm");
    int fd;

    if (!dir)
        return;
    snprintf(prefix, sizeof(prefix), "ibloop-%u-", (unsigned)getuid());
    while ((d = readdir(dir))) {
        if (strncmp(d->d_name, prefix, strlen(prefix)) || !strcmp(d->d_name, keep))
            continue;
        snprintf(path, sizeof(path), "/dev/shm/%s", d->d_name);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            continue;
        if (!flock(fd, LOCK_EX | LOCK_NB)) {
            if (fabric_dead(fd)) {
                IBLOOP_DBG("removing %s: every process of it is dead", path);
                unlink(path);
            }
            flock(fd, LOCK_UN);
        }
        close(fd);
    }
    closedir(dir);
}

static int attach_locked(void)
{
    const struct ibloop_env *e = ibloop_env();
    struct stat st;
    void *base;
    int fd, rc;

    snprintf(ibloop_fab.path, sizeof(ibloop_fab.path), "/dev/shm/ibloop-%u-%s",
             (unsigned)getuid(), e->fabric);
    gc_dead_fabrics(ibloop_fab.path + strlen("/dev/shm/"));
    for (int tries = 0;; tries++) {
        fd = open(ibloop_fab.path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
            return errno;
        while (flock(fd, LOCK_EX) && errno == EINTR)
            ;
        if (fstat(fd, &st)) {
            rc = errno;
            close(fd);
            return rc;
        }
        if (st.st_nlink > 0)
            break;
        close(fd); /* removed by its last user while we waited: retry */
        if (tries > 100)
            return EAGAIN;
    }
    if (st.st_size == 0 && ftruncate(fd, (off_t)IBLOOP_FILE_SIZE)) {
        rc = errno;
        goto fail;
    }
    if (st.st_size != 0 && st.st_size != (off_t)IBLOOP_FILE_SIZE) {
        ibloop_log("%s: not a fabric of this ibloop version; remove it or use "
                   "another IBLOOP_FABRIC", ibloop_fab.path);
        rc = EPROTO;
        goto fail;
    }
    base = mmap(NULL, IBLOOP_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        rc = errno;
        goto fail;
    }
    ibloop_fab.fd = fd;
    ibloop_fab.base = base;
    ibloop_fab.hdr = base;
    ibloop_fab.pid = getpid();
    /* A0: pairs with R0 of the creator */
    if (atomic_load_explicit(&ibloop_fab.hdr->magic, memory_order_acquire) !=
        IBLOOP_WIRE_MAGIC) {
        fab_init(ibloop_fab.hdr, e->roce); /* new, or its creator died */
    } else if ((rc = ibloop_fab_check(ibloop_fab.hdr))) {
        ibloop_log("%s: incompatible fabric layout; remove it or use "
                   "another IBLOOP_FABRIC", ibloop_fab.path);
        goto fail_unmap;
    } else if (reclaim_dead_locked() == 0) {
        /* every attached process is dead: start afresh */
        memset(ibloop_fab.hdr, 0, 4096);
        if (ftruncate(fd, 0) || ftruncate(fd, (off_t)IBLOOP_FILE_SIZE)) {
            rc = errno;
            goto fail_unmap;
        }
        fab_init(ibloop_fab.hdr, e->roce);
    }
    if (ibloop_fab.hdr->link_layer !=
        (uint32_t)(e->roce ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND)) {
        ibloop_log("fabric %s has another link layer than IBLOOP_LINK_LAYER "
                   "says", e->fabric);
        rc = EINVAL;
        goto fail_unmap;
    }
    ibloop_fab.roce = e->roce;
    if ((rc = join()))
        goto fail_unmap;
    /* Let peers' process_vm_writev reach us under Yama ptrace_scope=1
     * (the emulated HCA does DMA into this process). */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    flock(fd, LOCK_UN);
    IBLOOP_DBG("attached to %s as proc %u lid %u", ibloop_fab.path,
               ibloop_fab.proc, ibloop_fab.lid);
    return 0;
fail_unmap:
    munmap(base, IBLOOP_FILE_SIZE);
fail:
    ibloop_fab.base = NULL;
    ibloop_fab.hdr = NULL;
    ibloop_fab.fd = -1;
    flock(fd, LOCK_UN);
    close(fd);
    return rc;
}

static void forget_local(void)
{
    memset(ibloop_local_qp, 0, sizeof(ibloop_local_qp));
    memset(ibloop_local_cq, 0, sizeof(ibloop_local_cq));
    memset(ibloop_local_srq, 0, sizeof(ibloop_local_srq));
}

static void atfork_child(void)
{
    /* The child is a new process: it must not act as its parent's port.
     * Drop the inherited attachment (the parent still owns it). */
    if (ibloop_fab.base) {
        munmap(ibloop_fab.base, IBLOOP_FILE_SIZE);
        close(ibloop_fab.fd);
    }
    ibloop_fab.base = NULL;
    ibloop_fab.hdr = NULL;
    ibloop_fab.fd = -1;
    ibloop_fab.users = 0;
    ibloop_pidfds_forget();
    ibloop_notify_forget();
    forget_local();
    pthread_mutex_init(&fab_mutex, NULL);
    pthread_mutex_init(&attach_mutex, NULL);
    ibloop_fault_reset();
    ibloop_port_reset();
}

static void atfork_register(void)
{
    pthread_atfork(NULL, NULL, atfork_child);
}

int ibloop_attach(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    int rc = 0;

    pthread_once(&once, atfork_register);
    pthread_mutex_lock(&attach_mutex);
    if (!ibloop_fab.base)
        rc = attach_locked();
    if (!rc)
        ibloop_fab.users++;
    pthread_mutex_unlock(&attach_mutex);
    return rc;
}

static void detach_locked(void)
{
    ibloop_fab_lock();
    reclaim_proc(ibloop_fab.proc);
    if (reclaim_dead_locked() == 0) {
        unlink(ibloop_fab.path);
        IBLOOP_DBG("last user: removed %s", ibloop_fab.path);
    }
    ibloop_fab_unlock();
    munmap(ibloop_fab.base, IBLOOP_FILE_SIZE);
    close(ibloop_fab.fd);
    ibloop_fab.base = NULL;
    ibloop_fab.hdr = NULL;
    ibloop_fab.fd = -1;
    ibloop_pidfds_forget();
    ibloop_notify_forget();
    forget_local();
}

void ibloop_detach(void)
{
    pthread_mutex_lock(&attach_mutex);
    if (ibloop_fab.base && --ibloop_fab.users == 0)
        detach_locked();
    pthread_mutex_unlock(&attach_mutex);
}

/*
 * A process that exits with contexts open still leaves the fabric clean.
 * Other threads may still run, so the mapping stays: only our entries are
 * freed and the file is removed if we were its last user.
 */
__attribute__((destructor)) static void ibloop_at_exit(void)
{
    pthread_mutex_lock(&attach_mutex);
    if (ibloop_fab.base && ibloop_fab.pid == getpid() && ibloop_fab.users) {
        ibloop_fab.users = 0;
        ibloop_fab_lock();
        reclaim_proc(ibloop_fab.proc);
        if (reclaim_dead_locked() == 0)
            unlink(ibloop_fab.path);
        ibloop_fab_unlock();
    }
    pthread_mutex_unlock(&attach_mutex);
}
