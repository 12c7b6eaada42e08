/*
 * Memory regions and remote keys (tern/rma.h): the context's region table
 * and the packed key.  Liveness and the memory ordering of enter / leave /
 * destroy: engine/rma.h, struct tern_region.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "engine/rma.h"

/* The name of allocated regions' memfds ("/memfd:" NAME " (deleted)" in
 * /proc/<pid>/fd): key_map opens nothing else. */
#define TERN_REGION_MEMFD "tern-region"

struct tern_region_table {
    pthread_mutex_t lock;          /* creation and destruction (not the lookups) */
    uint64_t nonce;                /* random: allocated regions' headers name it */
    tern_region_t *free_list;      /* destroyed slots, to reuse (with a new gen) */
    uint32_t used;                 /* slots handed out so far, in chunk order */
    tern_regtab_t *tab;            /* the same-host copy's table, or NULL (rma_cma.c) */
    /* chunk i, published with a release store after its slots are set up,
     * read with acquire loads by lookups on any thread */
    _Atomic(tern_region_t *) chunks[TERN_REGION_CHUNKS];
};

static struct tern_region_table *table_of(tern_context_t *ctx)
{
    struct tern_region_table *t = atomic_load_explicit(&ctx->regions, memory_order_acquire);
    if (t != NULL)
        return t;
    t = calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    pthread_mutex_init(&t->lock, NULL);
    if (getrandom(&t->nonce, sizeof(t->nonce), GRND_NONBLOCK) != (ssize_t)sizeof(t->nonce))
        t->nonce = tern_now_ns() ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)t;
    if (ctx->cfg.cma != TERN_CMA_OFF)
        t->tab = tern_regtab_new(t->nonce);
    struct tern_region_table *none = NULL;
    /* release: the table's initialised fields with it; acquire on failure:
     * the winner's */
    if (!atomic_compare_exchange_strong_explicit(&ctx->regions, &none, t, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        tern_regtab_free(t->tab);
        pthread_mutex_destroy(&t->lock);
        free(t);
        return none;
    }
    return t;
}

void tern_regions_nm_release(tern_context_t *ctx)
{
    struct tern_region_table *t = atomic_load_explicit(&ctx->regions, memory_order_acquire);
    if (t == NULL)
        return;
    pthread_mutex_lock(&t->lock);
    /* regions left live: no same-host peer copies into them from now on */
    tern_regtab_retire(t->tab, t->used);
    for (uint32_t i = 0; i < t->used; i++) {
        tern_region_t *r = &atomic_load_explicit(&t->chunks[i / TERN_REGION_CHUNK],
                                                 memory_order_relaxed)[i % TERN_REGION_CHUNK];
        tern_region_nm_dereg(r);
    }
    pthread_mutex_unlock(&t->lock);
}

void tern_regions_free(tern_context_t *ctx)
{
    struct tern_region_table *t = atomic_load_explicit(&ctx->regions, memory_order_acquire);
    if (t == NULL)
        return;
    for (int i = 0; i < TERN_REGION_CHUNKS; i++)
        free(atomic_load_explicit(&t->chunks[i], memory_order_relaxed));
    tern_regtab_free(t->tab);
    pthread_mutex_destroy(&t->lock);
    free(t);
    atomic_store_explicit(&ctx->regions, NULL, memory_order_relaxed);
}

/* A free slot, under the table's lock: a destroyed one, else the next new
 * one (its chunk made when it is the first of it). */
static tern_region_t *slot_take(struct tern_region_table *t)
{
    tern_region_t *r = t->free_list;
    if (r != NULL) {
        t->free_list = r->next_free;
        return r;
    }
    if (t->used >= TERN_REGION_MAX)
        return NULL;
    uint32_t c = t->used / TERN_REGION_CHUNK;
    tern_region_t *chunk = atomic_load_explicit(&t->chunks[c], memory_order_relaxed);
    if (chunk == NULL) {
        chunk = calloc(TERN_REGION_CHUNK, sizeof(*chunk));
        if (chunk == NULL)
            return NULL;
        for (uint32_t i = 0; i < TERN_REGION_CHUNK; i++) {
            chunk[i].index = c * TERN_REGION_CHUNK + i;
            atomic_init(&chunk[i].state, 0); /* gen 0, dead: ids name gen >= 1 */
            atomic_init(&chunk[i].users, 0);
        }
        /* release: a lookup that finds the chunk sees its slots' indexes */
        atomic_store_explicit(&t->chunks[c], chunk, memory_order_release);
    }
    return &chunk[t->used++ % TERN_REGION_CHUNK];
}

static tern_status_t check_args(const char *what, tern_context_t *ctx, size_t len,
                                unsigned flags, const void *region)
{
    if (ctx == NULL || region == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "%s: NULL %s", what,
                          ctx == NULL ? "context" : "region pointer");
    if (len == 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "%s: a region of 0 bytes", what);
    unsigned known = TERN_REGION_READ | TERN_REGION_WRITE | TERN_REGION_ATOMIC_DEVICE;
    if (!(flags & (TERN_REGION_READ | TERN_REGION_WRITE)) || (flags & ~known) ||
        ((flags & TERN_REGION_ATOMIC_DEVICE) && !(flags & TERN_REGION_WRITE)))
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "%s: flags %#x (TERN_REGION_READ and/or _WRITE, _ATOMIC_DEVICE with "
                          "_WRITE)",
                          what, flags);
    return TERN_OK;
}

/* A live region over [addr, addr + len) in a slot of ctx's table; shared:
 * the header of an allocated region's mapping (its state mirrored), or
 * NULL. */
static tern_status_t region_new(tern_context_t *ctx, void *addr, size_t len, unsigned flags,
                                tern_region_shared_t *shared, tern_region_t **region)
{
    struct tern_region_table *t = table_of(ctx);
    if (t == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "region table");
    pthread_mutex_lock(&t->lock);
    tern_region_t *r = slot_take(t);
    if (r == NULL) {
        bool full = t->used >= TERN_REGION_MAX;
        pthread_mutex_unlock(&t->lock);
        return full ? tern_error(TERN_ERR_NO_RESOURCE,
                                 "tern_region_create: the context has %d regions, the most "
                                 "it can hold",
                                 TERN_REGION_MAX)
                    : tern_error(TERN_ERR_NO_MEMORY, "region table chunk");
    }
    r->ctx = ctx;
    r->base = (uintptr_t)addr;
    r->len = len;
    r->flags = flags;
    r->next_free = NULL;
    r->memfd = -1;
    r->map = NULL;
    r->maplen = 0;
    r->shared = shared;
    uint32_t gen = (uint32_t)(atomic_load_explicit(&r->state, memory_order_relaxed) >> 1) + 1;
    if (gen == 0)
        gen = 1; /* 2^32 reuses of one slot: gen 0 names nothing */
    /* release: a target that enters with this id sees base, len, flags; a
     * peer that maps the header and reads it live sees the memory */
    if (shared != NULL) {
        shared->id = (uint64_t)r->index | (uint64_t)gen << 32;
        shared->nonce = t->nonce;
        atomic_store_explicit(&shared->state, (uint64_t)gen << 1 | 1, memory_order_release);
    }
    tern_regtab_set(t->tab, r->index, (uint64_t)gen << 1 | 1);
    atomic_store_explicit(&r->state, (uint64_t)gen << 1 | 1, memory_order_release);
    pthread_mutex_unlock(&t->lock);
    *region = r;
    return TERN_OK;
}

tern_status_t tern_region_create(tern_context_t *ctx, void *addr, size_t len, unsigned flags,
                                 tern_region_t **region)
{
    tern_status_t st = check_args("tern_region_create", ctx, len, flags, region);
    if (st != TERN_OK)
        return st;
    if (addr == NULL || (uintptr_t)addr + len < (uintptr_t)addr)
        return tern_error(TERN_ERR_INVALID_PARAM,
                          "tern_region_create: %zu bytes at %p is no memory range", len, addr);
    st = region_new(ctx, addr, len, flags, NULL, region);
    if (st == TERN_OK)
        tern_region_nm_reg(*region);
    return st;
}

tern_status_t tern_region_alloc(tern_context_t *ctx, size_t len, unsigned flags, void **addr,
                                tern_region_t **region)
{
    tern_status_t st = check_args("tern_region_alloc", ctx, len, flags, region);
    if (st != TERN_OK)
        return st;
    if (addr == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_region_alloc: NULL address pointer");
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (len > SIZE_MAX - 2 * page)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_region_alloc: %zu bytes", len);
    size_t maplen = page + (len + page - 1) / page * page; /* the header's page, the memory */
    int fd = memfd_create(TERN_REGION_MEMFD, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return tern_error(errno == ENOMEM ? TERN_ERR_NO_MEMORY : TERN_ERR_SHM,
                          "tern_region_alloc: memfd_create: %s", strerror(errno));
    /* sealed at its size: a mapping peer can never see it shrink (SIGBUS) */
    if (ftruncate(fd, (off_t)maplen) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        int e = errno;
        close(fd);
        return tern_error(TERN_ERR_NO_MEMORY, "tern_region_alloc: %zu bytes: ftruncate / seal: %s",
                          maplen, strerror(e));
    }
    void *map = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        int e = errno;
        close(fd);
        return tern_error(TERN_ERR_NO_MEMORY, "tern_region_alloc: mmap of %zu bytes: %s", maplen,
                          strerror(e));
    }
    tern_region_shared_t *h = map;
    h->magic = TERN_REGION_SHM_MAGIC;
    h->version = TERN_REGION_SHM_VERSION;
    st = region_new(ctx, (uint8_t *)map + page, len, flags, h, region);
    if (st != TERN_OK) {
        munmap(map, maplen);
        close(fd);
        return st;
    }
    (*region)->memfd = fd;
    (*region)->map = map;
    (*region)->maplen = maplen;
    *addr = (uint8_t *)map + page;
    tern_region_nm_reg(*region); /* peers on other hosts reach it through the netmod */
    return TERN_OK;
}

void *tern_region_base(const tern_region_t *region)
{
    return region == NULL ? NULL : (void *)region->base;
}

size_t tern_region_length(const tern_region_t *region)
{
    return region == NULL ? 0 : region->len;
}

tern_status_t tern_region_pack(const tern_region_t *region, void *buf, size_t *len)
{
    if (region == NULL || len == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_region_pack: NULL %s",
                          region == NULL ? "region" : "length pointer");
    bool shm = region->memfd >= 0;
    size_t shm_len = shm ? sizeof(tern_key_sect_t) + sizeof(tern_key_shm_t) : 0;
    const struct tern_region_table *t =
        atomic_load_explicit(&region->ctx->regions, memory_order_acquire);
    size_t cma_len = t->tab != NULL ? TERN_KEY_CMA_SECT : 0;
    size_t nm_len = tern_region_nm_pack(region, NULL, 0);
    size_t need = sizeof(tern_key_wire_t) + shm_len + cma_len + nm_len;
    if (buf == NULL || *len < need) {
        *len = need;
        return tern_error(TERN_ERR_TRUNCATED, "tern_region_pack: the key takes %zu bytes", need);
    }
    const tern_context_t *ctx = region->ctx;
    tern_key_wire_t k = {.magic = TERN_KEY_MAGIC,
                         .version = TERN_KEY_VERSION,
                         .flags = (uint16_t)region->flags,
                         .job = ctx->job_hash,
                         .rank = ctx->rank,
                         .id = tern_region_id(region),
                         .base = region->base,
                         .len = region->len,
                         .nsect = (shm ? 1u : 0u) + (cma_len ? 1u : 0u) + (nm_len ? 1u : 0u)};
    memcpy(buf, &k, sizeof(k));
    if (shm) {
        tern_key_sect_t s = {.type = TERN_KEY_SECT_SHM, .len = sizeof(tern_key_shm_t)};
        struct stat sb;
        tern_key_shm_t m = {.host = *tern_host_self(),
                            .pid = (int32_t)getpid(),
                            .fd = region->memfd,
                            .map_len = region->maplen,
                            .data_off = region->base - (uintptr_t)region->map,
                            .ino = fstat(region->memfd, &sb) == 0 ? (uint64_t)sb.st_ino : 0,
                            .nonce = region->shared->nonce};
        memcpy((uint8_t *)buf + sizeof(k), &s, sizeof(s));
        memcpy((uint8_t *)buf + sizeof(k) + sizeof(s), &m, sizeof(m));
    }
    if (cma_len != 0)
        tern_regtab_pack(t->tab, (uint8_t *)buf + sizeof(k) + shm_len);
    if (nm_len != 0)
        (void)tern_region_nm_pack(region, (uint8_t *)buf + sizeof(k) + shm_len + cma_len, nm_len);
    *len = need;
    return TERN_OK;
}

tern_status_t tern_region_destroy(tern_region_t *r)
{
    if (r == NULL)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_region_destroy: NULL region");
    uint64_t s = atomic_load_explicit(&r->state, memory_order_relaxed);
    if (!(s & 1))
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_region_destroy: region %u is not live",
                          r->index);
    /* seq_cst store, then seq_cst loads of users: see struct tern_region;
     * the mapped header after it (peers that map the region check it) */
    struct tern_region_table *t = atomic_load_explicit(&r->ctx->regions, memory_order_acquire);
    atomic_store(&r->state, s & ~(uint64_t)1);
    if (r->shared != NULL)
        atomic_store(&r->shared->state, s & ~(uint64_t)1);
    tern_regtab_set(t->tab, r->index, s & ~(uint64_t)1);
    while (atomic_load(&r->users) != 0)
        sched_yield(); /* an applier inside: one copy or one atomic */
    tern_regtab_drain(t->tab, r->index); /* same-host origins copying: one copy each */
    tern_region_nm_dereg(r); /* the netmod's device refuses what comes now */
    if (r->map != NULL) {
        munmap(r->map, r->maplen);
        close(r->memfd);
        r->map = NULL;
        r->memfd = -1;
        r->shared = NULL;
    }
    pthread_mutex_lock(&t->lock);
    r->next_free = t->free_list;
    t->free_list = r;
    pthread_mutex_unlock(&t->lock);
    return TERN_OK;
}

static tern_region_t *slot_of(struct tern_region_table *t, uint32_t index)
{
    if (t == NULL || index >= TERN_REGION_MAX)
        return NULL;
    tern_region_t *chunk =
        atomic_load_explicit(&t->chunks[index / TERN_REGION_CHUNK], memory_order_acquire);
    return chunk == NULL ? NULL : &chunk[index % TERN_REGION_CHUNK];
}

bool tern_region_reenter(tern_region_t *r, uint64_t id)
{
    /* seq_cst increment, then seq_cst load: see struct tern_region */
    atomic_fetch_add(&r->users, 1);
    if (atomic_load(&r->state) == ((id >> 32) << 1 | 1))
        return true;
    tern_region_leave(r);
    return false;
}

static const char *access_name(unsigned a)
{
    return a == (TERN_REGION_READ | TERN_REGION_WRITE) ? "read and write"
           : a == TERN_REGION_READ                     ? "read"
                                                       : "write";
}

tern_status_t tern_region_enter(tern_context_t *ctx, uint64_t id, uint64_t addr, uint64_t len,
                                unsigned need, int rank, tern_region_t **out)
{
    tern_region_t *r =
        slot_of(atomic_load_explicit(&ctx->regions, memory_order_acquire), (uint32_t)id);
    if (r == NULL || (id >> 32) == 0 || !tern_region_reenter(r, id))
        return tern_error(TERN_ERR_REMOTE_ACCESS,
                          "rank %d: region %u (generation %u) of rank %d does not exist (never "
                          "created, or destroyed)",
                          rank, (uint32_t)id, (uint32_t)(id >> 32), ctx->rank);
    tern_status_t st = TERN_OK;
    if ((r->flags & need) != need)
        st = tern_error(TERN_ERR_REMOTE_ACCESS,
                        "rank %d: region %u of rank %d allows %s access, not %s", rank,
                        r->index, ctx->rank, access_name(r->flags & (TERN_REGION_READ | TERN_REGION_WRITE)),
                        access_name(need));
    else if (addr < r->base || addr - r->base > r->len || len > r->len - (addr - r->base))
        st = tern_error(TERN_ERR_INVALID_PARAM,
                        "rank %d: %llu bytes at %#llx leave region %u of rank %d [%#lx, +%zu)",
                        rank, (unsigned long long)len, (unsigned long long)addr, r->index,
                        ctx->rank, (unsigned long)r->base, r->len);
    if (st != TERN_OK) {
        tern_region_leave(r);
        return st;
    }
    *out = r;
    return TERN_OK;
}

/* ---- keys ------------------------------------------------------------------ */
static void key_map(tern_key_t *key, const tern_key_shm_t *m);

tern_status_t tern_key_unpack(tern_context_t *ctx, int peer, const void *buf, size_t len,
                              tern_key_t **key)
{
    if (ctx == NULL || key == NULL || (buf == NULL && len > 0))
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_key_unpack: NULL %s",
                          ctx == NULL ? "context" : key == NULL ? "key pointer" : "buffer");
    if (tern_vc_of(&ctx->workers[0], peer) == NULL)
        return tern_error(TERN_ERR_INVALID_RANK, "tern_key_unpack: peer %d is no peer", peer);
    tern_key_wire_t k;
    if (len < sizeof(k))
        return tern_error(TERN_ERR_MALFORMED,
                          "tern_key_unpack: %zu bytes from peer %d are no key (%zu or more)", len,
                          peer, sizeof(k));
    memcpy(&k, buf, sizeof(k));
    if (k.magic != TERN_KEY_MAGIC || k.version != TERN_KEY_VERSION)
        return tern_error(TERN_ERR_MALFORMED,
                          "tern_key_unpack: no key of version %d from peer %d (magic %#x, "
                          "version %u)",
                          TERN_KEY_VERSION, peer, k.magic, k.version);
    tern_key_shm_t shm;
    tern_key_cma_t cma;
    bool has_shm = false, has_cma = false;
    const uint8_t *nm_sect = NULL;
    size_t nm_sect_len = 0;
    size_t off = sizeof(k);
    for (uint32_t i = 0; i < k.nsect && i < 8; i++) {
        tern_key_sect_t s;
        if (len - off < sizeof(s))
            break;
        memcpy(&s, (const uint8_t *)buf + off, sizeof(s));
        if (len - off - sizeof(s) < s.len)
            break;
        if (s.type == TERN_KEY_SECT_SHM && s.len == sizeof(shm)) {
            memcpy(&shm, (const uint8_t *)buf + off + sizeof(s), sizeof(shm));
            has_shm = true;
        } else if (s.type == TERN_KEY_SECT_CMA && s.len == sizeof(cma)) {
            memcpy(&cma, (const uint8_t *)buf + off + sizeof(s), sizeof(cma));
            has_cma = true;
        } else if (s.type == TERN_KEY_SECT_NM) {
            nm_sect = (const uint8_t *)buf + off + sizeof(s);
            nm_sect_len = s.len;
        } /* a section of a later version: skipped */
        off += sizeof(s) + s.len;
    }
    if (k.nsect > 8 || off != len || !(k.flags & (TERN_REGION_READ | TERN_REGION_WRITE)) ||
        (k.flags & ~(unsigned)(TERN_REGION_READ | TERN_REGION_WRITE | TERN_REGION_ATOMIC_DEVICE)) ||
        k.len == 0 ||
        k.base + k.len < k.base || (k.id >> 32) == 0)
        return tern_error(TERN_ERR_MALFORMED,
                          "tern_key_unpack: damaged key from peer %d (%zu bytes, flags %#x, "
                          "%llu bytes at %#llx)",
                          peer, len, k.flags, (unsigned long long)k.len,
                          (unsigned long long)k.base);
    /* a rank of this job packs its own rank and job; another job's peer
     * names its job (not ours) */
    bool own = peer < ctx->size;
    if (own ? (k.job != ctx->job_hash || k.rank != peer) : k.job == ctx->job_hash)
        return tern_error(TERN_ERR_MALFORMED,
                          "tern_key_unpack: the key was packed by rank %d of job %#x, not by "
                          "peer %d",
                          k.rank, k.job, peer);
    tern_key_t *out = malloc(sizeof(*out));
    if (out == NULL)
        return tern_error(TERN_ERR_NO_MEMORY, "key");
    *out = (tern_key_t){.ctx = ctx, .peer = peer, .flags = k.flags, .id = k.id,
                        .base = k.base, .len = k.len};
    if (own && peer == ctx->rank)
        out->self = slot_of(atomic_load_explicit(&ctx->regions, memory_order_acquire),
                            (uint32_t)k.id);
    else if (has_shm)
        key_map(out, &shm);
    if (has_cma && out->self == NULL && out->data == NULL)
        tern_key_cma_take(out, &cma);
    if (nm_sect != NULL && !(own && peer == ctx->rank))
        tern_key_nm_take(out, nm_sect, nm_sect_len);
    *key = out;
    return TERN_OK;
}

void tern_key_destroy(tern_key_t *key)
{
    if (key != NULL && key->map != NULL)
        munmap(key->map, key->maplen);
    if (key != NULL)
        tern_key_cma_drop(key);
    free(key);
}

void *tern_peer_memfd_map(int peer, int32_t pid, int32_t fd, const char *name, uint64_t ino,
                          uint64_t map_len)
{
    /* Only a memfd of ours, the one the key names (its inode), sealed at
     * its size: a stale key (the pid or the fd number reused) opens no
     * other file, and a mapped file can never shrink under us. */
    char path[64], link[64], want[48];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, (int)fd);
    int wl = snprintf(want, sizeof(want), "/memfd:%s ", name);
    ssize_t n = readlink(path, link, sizeof(link) - 1);
    if (n < 0 || (link[n] = '\0', strncmp(link, want, (size_t)wl) != 0)) {
        tern_debug("key of peer %d: no direct access: %s is no %s memfd", peer, path, name);
        return NULL;
    }
    /* O_PATH first (opens nothing for I/O: no device's open has a side
     * effect), the file checked, then that same file reopened for the
     * mapping: the fd number may have changed hands since the readlink */
    int pfd = open(path, O_PATH | O_CLOEXEC);
    struct stat sb;
    if (pfd < 0 || fstat(pfd, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_ino != ino ||
        (uint64_t)sb.st_size != map_len) {
        tern_debug("key of peer %d: no direct access: %s is not the key's memfd", peer, path);
        if (pfd >= 0)
            close(pfd);
        return NULL;
    }
    char self[64];
    snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
    int rfd = open(self, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    close(pfd);
    if (rfd < 0) {
        tern_debug("key of peer %d: no direct access: %s: %s", peer, path, strerror(errno));
        return NULL;
    }
    void *map = MAP_FAILED;
    int seals = fcntl(rfd, F_GET_SEALS);
    if (fstat(rfd, &sb) == 0 && (uint64_t)sb.st_ino == ino && seals >= 0 &&
        (seals & F_SEAL_SHRINK))
        map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
    close(rfd);
    return map == MAP_FAILED ? NULL : map;
}

/* Map a peer's allocated region (its key's shared-mapping section) when
 * it is on this host and lets us: key->data set; else nothing (the
 * engine's path serves the key). */
static void key_map(tern_key_t *key, const tern_key_shm_t *m)
{
    /* writable regions only: the mapping is written (stripe locks), and a
     * read-only region's key hands out no writable pointer */
    if (!key->ctx->cfg.rma_map || !(key->flags & TERN_REGION_WRITE) ||
        !tern_host_same(&m->host, tern_host_self()) || m->pid <= 0 || m->fd < 0 ||
        m->map_len < sizeof(tern_region_shared_t) || m->data_off > m->map_len ||
        key->len > m->map_len - m->data_off)
        return;
    void *map = tern_peer_memfd_map(key->peer, m->pid, m->fd, TERN_REGION_MEMFD, m->ino,
                                    m->map_len);
    if (map == NULL)
        return;
    tern_region_shared_t *h = map;
    /* the region the key names (id and nonce, written before its state's
     * release), still live */
    uint64_t state = atomic_load_explicit(&h->state, memory_order_acquire);
    if (h->magic != TERN_REGION_SHM_MAGIC || h->version != TERN_REGION_SHM_VERSION ||
        state != ((key->id >> 32) << 1 | 1) || h->id != key->id || h->nonce != m->nonce) {
        munmap(map, m->map_len);
        return;
    }
    key->map = map;
    key->maplen = m->map_len;
    key->shared = h;
    key->data = (uint8_t *)map + m->data_off;
}

tern_status_t tern_key_enter(const tern_key_t *key, uint64_t raddr, uint64_t len, unsigned need,
                             void **p, tern_region_t **held)
{
    *held = NULL;
    if (key->self != NULL) {
        tern_status_t st = tern_region_enter(key->ctx, key->id, raddr, len, need,
                                             key->ctx->rank, held);
        if (st == TERN_OK)
            *p = (void *)(uintptr_t)raddr;
        return st;
    }
    if (key->data == NULL)
        return TERN_ERR_UNSUPPORTED;
    /* acquire: what the target wrote before it (and earlier operations of
     * other peers, released by their own stores) is seen */
    if (atomic_load_explicit(&key->shared->state, memory_order_acquire) !=
        ((key->id >> 32) << 1 | 1))
        return tern_error(TERN_ERR_REMOTE_ACCESS,
                          "region %u (generation %u) of rank %d was destroyed", (uint32_t)key->id,
                          (uint32_t)(key->id >> 32), key->peer);
    *p = key->data + (raddr - key->base);
    return TERN_OK;
}

uint64_t tern_key_base(const tern_key_t *key)
{
    return key == NULL ? 0 : key->base;
}

uint64_t tern_key_length(const tern_key_t *key)
{
    return key == NULL ? 0 : key->len;
}

void *tern_key_local(const tern_key_t *key)
{
    if (key == NULL)
        return NULL;
    if (key->self != NULL)
        return (void *)(uintptr_t)key->base;
    return key->data;
}
