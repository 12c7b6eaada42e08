/*
 * The node segment: created by the first local rank, attached by the others
 * (after the wire-up fence; without a launcher as soon as it appears),
 * unlinked by the creator once everyone attached (so nothing is left in
 * /dev/shm even if ranks are killed later; ternrun also removes
 * /dev/shm/tern-<nspace>-* for ranks killed before that).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "netmods/shm/shm_internal.h"

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* Geometry from the configuration, written into the header. */
static void layout(tern_shm_seg_hdr_t *h, const tern_shm_config_t *cfg, uint32_t wait_mode,
                   uint32_t nlocal, uint32_t nworkers)
{
    memset(h, 0, sizeof(*h));
    h->version = TERN_SHM_VERSION;
    h->nlocal = nlocal;
    h->num_workers = nworkers;
    h->fbox_size = (uint32_t)cfg->fbox_size;
    h->num_fbox = (uint32_t)cfg->num_fbox;
    h->cell_size = (uint32_t)cfg->cell_size;
    h->num_cells = (uint32_t)cfg->num_cells;
    h->chunk_size = (uint32_t)cfg->chunk_size; /* resolved: never 0 (shm_chunk.c) */
    h->num_chunks = (uint32_t)cfg->num_chunks;
    h->wait_mode = wait_mode;
    h->off_doorbells = TERN_CACHE_LINE * 2;
    h->off_pairs = align_up(h->off_doorbells +
                                (uint64_t)nworkers * nlocal * sizeof(tern_shm_doorbell_t),
                            TERN_SHM_ALIGN);
    h->pair_off_fbox = sizeof(tern_shm_cons_ctl_t);
    h->pair_off_cells = align_up(h->pair_off_fbox + (uint64_t)h->num_fbox * h->fbox_size,
                                 TERN_CACHE_LINE);
    h->pair_off_copy = align_up(h->pair_off_cells + (uint64_t)h->num_cells * h->cell_size,
                                TERN_CACHE_LINE);
    h->pair_off_copy = align_up(h->pair_off_copy, TERN_SHM_ALIGN);
    h->pair_size = tern_shm_copy_data_off(h) + (uint64_t)h->num_chunks * h->chunk_size;
    h->total_size = h->off_pairs + (uint64_t)nworkers * nlocal * nlocal * h->pair_size;
}

/* Is the header's geometry one this build's configuration allows (ranges,
 * powers of two, the cross-field rules), its chunk size resolved (never the
 * 0 of "by rank count")?  Then layout()'s sums cannot wrap. */
static bool geometry_allowed(const tern_shm_config_t *cfg)
{
    const tern_config_table_t *t = &tern_shm_config_table;
    for (size_t i = 0; i < t->num_entries; i++) {
        const tern_config_entry_t *e = &t->entries[i];
        uint64_t v;
        if (e->type != TERN_CFG_UINT && e->type != TERN_CFG_POW2)
            continue;
        memcpy(&v, (const char *)cfg + e->offset, sizeof(v));
        if (v < e->min || v > e->max || (e->type == TERN_CFG_POW2 && (v & (v - 1))))
            return false;
    }
    return cfg->chunk_size != 0 && (t->validate == NULL || t->validate(cfg) == TERN_OK);
}

/* Check a header read from the segment before trusting any offset in it:
 * its geometry is an allowed configuration and every offset in it is the
 * one layout() derives from that geometry. */
tern_status_t tern_shm_segment_validate(const tern_shm_seg_hdr_t *h, size_t mapped,
                                        uint32_t nlocal, const char *name)
{
    tern_shm_seg_hdr_t want;
    tern_shm_config_t cfg = {.fbox_size = h->fbox_size, .num_fbox = h->num_fbox,
                             .cell_size = h->cell_size, .num_cells = h->num_cells,
                             .chunk_size = h->chunk_size, /* the header's value, never auto */
                             .num_chunks = h->num_chunks};
    if (h->magic != TERN_SHM_MAGIC || h->version != TERN_SHM_VERSION)
        return tern_error(TERN_ERR_MALFORMED,
                          "shm segment %s: magic %#" PRIx64 " version %u (expected version %u)",
                          name, h->magic, h->version, TERN_SHM_VERSION);
    if (h->nlocal != nlocal || h->total_size != mapped || (h->num_cells & (h->num_cells - 1)) ||
        h->num_fbox == 0 || (h->num_fbox & (h->num_fbox - 1)) || h->num_cells == 0 ||
        h->num_chunks == 0 ||
        (h->num_chunks & (h->num_chunks - 1)) || h->fbox_size < 128 || h->cell_size < 128 ||
        h->wait_mode > TERN_WAIT_BLOCK || h->num_workers == 0 || h->num_workers > 64 ||
        !geometry_allowed(&cfg))
        return tern_error(TERN_ERR_MALFORMED,
                          "shm segment %s: header inconsistent (nlocal %u vs %u, size %" PRIu64
                          " vs %zu)",
                          name, h->nlocal, nlocal, h->total_size, mapped);
    layout(&want, &cfg, h->wait_mode, nlocal, h->num_workers);
    /* nworkers * nlocal^2 pairs must not wrap the 64-bit total either */
    uint64_t pairs, bytes, total;
    if (__builtin_mul_overflow((uint64_t)h->num_workers * nlocal, (uint64_t)nlocal, &pairs) ||
        __builtin_mul_overflow(pairs, want.pair_size, &bytes) ||
        __builtin_add_overflow(bytes, want.off_pairs, &total) || total != h->total_size ||
        want.chunk_size != h->chunk_size || want.off_doorbells != h->off_doorbells ||
        want.off_pairs != h->off_pairs || want.pair_size != h->pair_size ||
        want.pair_off_fbox != h->pair_off_fbox || want.pair_off_cells != h->pair_off_cells ||
        want.pair_off_copy != h->pair_off_copy)
        return tern_error(TERN_ERR_MALFORMED, "shm segment %s: layout offsets do not match", name);
    return TERN_OK;
}

void tern_shm_segment_name(tern_shm_t *s, char *out, size_t len)
{
    /* /tern-<nspace>-<creator's global rank>.<nonce>; nspace chars outside
     * [A-Za-z0-9._-] become '_' (ternrun removes the same pattern). */
    char ns[64];
    size_t i = 0;
    for (const char *p = tern_ctx_job(s->ctx); *p && i < sizeof(ns) - 1; p++, i++)
        ns[i] = (char)(((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                        (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_')
                           ? *p : '_');
    ns[i] = '\0';
    uint32_t nonce = 0;
    if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce))
        nonce = (uint32_t)getpid() * 2654435761u ^ (uint32_t)tern_now_ns();
    snprintf(out, len, "/tern-%s-%d.%08x", ns, s->ctx->rank, nonce);
}

tern_status_t tern_shm_segment_create(tern_shm_t *s)
{
    tern_shm_seg_hdr_t h;
    tern_shm_config_t cfg = *s->cfg;
    if (cfg.chunk_size == 0) { /* unset: from the cache hierarchy */
        tern_shm_chunk_choice_t ch;
        uint64_t pairs = (uint64_t)s->ctx->num_workers * (uint64_t)s->nlocal * (uint64_t)s->nlocal;
        tern_shm_chunk_auto(&ch, pairs, cfg.num_chunks);
        cfg.chunk_size = ch.bytes;
        tern_debug("TERN_SHM_COPY_CHUNK unset: %" PRIu64 " bytes: %s", ch.bytes, ch.why);
    }
    layout(&h, &cfg, (uint32_t)s->ctx->cfg.wait_mode, (uint32_t)s->nlocal,
           (uint32_t)s->ctx->num_workers);

    int fd = shm_open(s->seg_name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 && errno == EEXIST) { /* stale, from a killed job with our nspace */
        shm_unlink(s->seg_name);
        fd = shm_open(s->seg_name, O_CREAT | O_EXCL | O_RDWR, 0600);
    }
    if (fd < 0)
        return tern_error(TERN_ERR_SHM, "shm_open(/dev/shm%s): %s", s->seg_name, strerror(errno));
    s->creator = true;
    tern_status_t st;
    int rc = ftruncate(fd, (off_t)h.total_size);
    /* Reserve the pages now: tmpfs would otherwise fail later with SIGBUS. */
    if (rc == 0)
        rc = posix_fallocate(fd, 0, (off_t)h.total_size);
    else
        rc = errno;
    if (rc != 0) {
        struct statvfs sv;
        unsigned long long avail = statvfs("/dev/shm", &sv) == 0
                                       ? (unsigned long long)sv.f_bavail * sv.f_frsize : 0;
        st = tern_error(rc == ENOSPC ? TERN_ERR_NO_SHM_SPACE : TERN_ERR_SHM,
                        "/dev/shm too small: the shm segment for %d local ranks needs %" PRIu64
                        " bytes, /dev/shm has %llu bytes free (%s); enlarge /dev/shm or lower "
                        "TERN_SHM_NUM_CELLS / TERN_SHM_COPY_CHUNKS",
                        s->nlocal, h.total_size, avail, strerror(rc));
        goto err_unlink;
    }
    s->base = mmap(NULL, h.total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s->base == MAP_FAILED) {
        s->base = NULL;
        st = tern_error(TERN_ERR_SHM, "mmap of %" PRIu64 " bytes of /dev/shm%s: %s", h.total_size,
                        s->seg_name, strerror(errno));
        goto err_unlink;
    }
    close(fd);
    s->size = h.total_size;
    /* The file is zero-filled: every fastbox empty, every index 0, every
     * chunk free.  R5: the magic last, with a release store: an attacher
     * that sees it (A5, attach) sees the header whole. */
    memcpy(s->base, &h, sizeof(h));
    __atomic_store_n(&((tern_shm_seg_hdr_t *)(void *)s->base)->magic, TERN_SHM_MAGIC,
                     __ATOMIC_RELEASE);
    s->hdr = (const tern_shm_seg_hdr_t *)(const void *)s->base;
    return TERN_OK;

err_unlink:
    close(fd);
    shm_unlink(s->seg_name);
    s->creator = false;
    return st;
}

/* One try at the creator's segment: TERN_ERR_AGAIN while it is not there
 * or not whole yet (no file, no size, no magic). */
static tern_status_t try_attach(tern_shm_t *s)
{
    int fd = shm_open(s->seg_name, O_RDWR, 0);
    if (fd < 0)
        return errno == ENOENT ? TERN_ERR_AGAIN
                               : tern_error(TERN_ERR_SHM, "shm_open(/dev/shm%s) to attach: %s",
                                            s->seg_name, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || sb.st_size < (off_t)sizeof(tern_shm_seg_hdr_t)) {
        close(fd);
        return TERN_ERR_AGAIN; /* created, not sized yet */
    }
    size_t size = (size_t)sb.st_size;
    uint8_t *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd);
    if (base == MAP_FAILED)
        return tern_error(TERN_ERR_SHM, "mmap of /dev/shm%s: %s", s->seg_name, strerror(err));
    /* A5: pairs with R5 in create */
    if (__atomic_load_n(&((tern_shm_seg_hdr_t *)(void *)base)->magic, __ATOMIC_ACQUIRE) !=
        TERN_SHM_MAGIC) {
        munmap(base, size);
        return TERN_ERR_AGAIN;
    }
    s->base = base;
    s->size = size;
    s->hdr = (const tern_shm_seg_hdr_t *)(const void *)s->base;
    return tern_shm_segment_validate(s->hdr, s->size, (uint32_t)s->nlocal, s->seg_name);
}

tern_status_t tern_shm_segment_attach(tern_shm_t *s, const tern_shm_card_t *c, int rank)
{
    snprintf(s->seg_name, sizeof(s->seg_name), "%s", c->seg_name);
    uint64_t deadline = tern_now_ns() + TERN_SHM_ATTACH_S * 1000000000ull;
    for (;;) {
        tern_status_t st = try_attach(s);
        if (st != TERN_ERR_AGAIN)
            return st;
        if (kill(c->pid, 0) != 0 && errno == ESRCH)
            return tern_error(TERN_ERR_PEER_FAILED, "shm: the node's first rank (rank %d, pid "
                              "%d) exited before it created the segment /dev/shm%s", rank,
                              c->pid, s->seg_name);
        if (tern_now_ns() > deadline)
            return tern_error(TERN_ERR_TIMED_OUT, "shm: the node's first rank (rank %d, pid %d) "
                              "did not create the segment /dev/shm%s within %d s (has it "
                              "inserted every rank's address?)", rank, c->pid, s->seg_name,
                              TERN_SHM_ATTACH_S);
        usleep(1000); /* it is being made by another process: nothing to poll */
    }
}

void tern_shm_segment_unlink(tern_shm_t *s)
{
    if (s->creator) {
        shm_unlink(s->seg_name);
        s->creator = false;
    }
}

void tern_shm_segment_detach(tern_shm_t *s)
{
    tern_shm_segment_unlink(s);
    if (s->base != NULL)
        munmap(s->base, s->size);
    s->base = NULL;
    s->hdr = NULL;
}

void tern_shm_chan_bind(tern_shm_t *s, tern_shm_chan_t *c, int reader, int writer)
{
    const tern_shm_seg_hdr_t *h = s->hdr;
    uint64_t set = (uint64_t)s->widx * (uint64_t)s->nlocal;
    uint8_t *pair = s->base + h->off_pairs +
                    ((set + (uint64_t)reader) * (uint64_t)s->nlocal + (uint64_t)writer) *
                        h->pair_size;
    memset(c, 0, sizeof(*c));
    c->ctl = (tern_shm_cons_ctl_t *)(void *)pair;
    c->fbox = pair + h->pair_off_fbox;
    c->cells = pair + h->pair_off_cells;
    c->copy = pair + h->pair_off_copy;
    c->copy_data = pair + tern_shm_copy_data_off(h);
}
