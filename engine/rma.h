/*
 * One-sided communication inside the engine (public API: tern/rma.h,
 * docs/rma.md): the context's region table, the packed key (a wire
 * format), and the engine's path for every netmod, the target's progress
 * applying what arrives on the VC's stream.
 *
 * Packets (engine/pkt.h), all on the origin -> target stream in the order
 * the operations were started, answered on the target -> origin stream:
 *   RMA_PUT    tag raddr, len bytes of payload, rreq the region id
 *   RMA_GET    tag raddr, len bytes wanted, rreq the region id, sreq the
 *              origin's request id: answered by DATA (rreq = that id, the
 *              bytes) or RMA_RESP (an error)
 *   RMA_AMO    flags the tern_amo, space the size, tag raddr, rreq the
 *              region id, sreq the origin's request id or 0 (no result),
 *              cookie 16 bytes: value, compare; answered (sreq != 0) by
 *              RMA_RESP with the old value as its cookie
 *   RMA_ACC    flags the tern_acc, space the tern_dtype, tag raddr, len the
 *              target bytes (count * element size), rreq the region id,
 *              sreq as RMA_AMO's; a payload of len bytes unless the op is
 *              NO_OP; the result comes back as RMA_RESP's cookie (<= 256
 *              bytes) or a DATA packet
 *   RMA_FLUSH  sreq the origin's request id: answered by RMA_RESP once
 *              everything before it on the stream has been applied
 *   RMA_RESP   rreq the origin's request id, tag the status (a tern_status_t
 *              as a signed 64-bit value); cookie: the result (TERN_OK) or
 *              the target's message (an error)
 * A target refuses an operation whose region id names no live region of
 * its context, whose range leaves the region or whose access the region
 * does not allow: a result-bearing one is answered with the error, the
 * others are recorded on the VC and reported by the next RMA_FLUSH's
 * answer (the first since the previous one).  Either way nothing is
 * touched.
 */
#ifndef TERN_ENGINE_RMA_H
#define TERN_ENGINE_RMA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <tern/rma.h>

#include "engine/address.h"
#include "engine/engine_internal.h"
#include "engine/netmod.h"

/* ---- regions (engine/rma_region.c) --------------------------------------- */

/* The region table: TERN_REGION_CHUNKS chunks of TERN_REGION_CHUNK slots,
 * each chunk allocated once and never moved or freed before the context,
 * so a slot pointer stays valid while another thread looks it up. */
#define TERN_REGION_CHUNK 256
#define TERN_REGION_CHUNKS 256
#define TERN_REGION_MAX (TERN_REGION_CHUNK * TERN_REGION_CHUNKS)

/*
 * A region is a slot of the table; the user's tern_region_t * points at it.
 * Its id on the wire is index | gen << 32.
 *
 * Liveness (who may touch the memory): `state` is gen << 1 | 1 while the
 * region lives, gen << 1 once tern_region_destroy has begun.  A thread that
 * applies an operation enters (users + 1, seq_cst), then reads state
 * (seq_cst): live with the id's gen, it may touch the memory until it
 * leaves (users - 1, release); otherwise it leaves at once and refuses.
 * Destroy stores the dead state (seq_cst), then waits for users to read 0
 * (acquire, pairing with the leave).  Both sides store, then load the
 * other's word, all seq_cst: either the applier sees the region dead, or
 * destroy sees it inside (the store-buffering pattern seq_cst forbids to
 * miss both ways).  An applier holds it only around one copy or one
 * atomic, never across progress, so destroy waits for no peer.
 */
struct tern_region {
    _Atomic uint64_t state; /* gen << 1 | live */
    _Atomic uint32_t users; /* appliers inside the memory now */
    uint32_t index;
    tern_context_t *ctx;
    uintptr_t base;
    size_t len;
    unsigned flags;               /* TERN_REGION_READ / _WRITE */
    struct tern_region *next_free; /* the table's free list (under its lock) */
    /* tern_region_alloc's: the memfd and its mapping (header, then the
     * memory at base); memfd -1 for tern_region_create's */
    int memfd;
    void *map;
    size_t maplen;
    struct tern_region_shared *shared;
    /* the netmod that serves the region itself (tern_nm_rma_ops_t: its
     * registration, nm_h, on worker 0's instance nm), or NULL */
    tern_netmod_inst_t *nm;
    void *nm_h;
    uint32_t nm_key_len; /* its packed bytes, made once at registration */
    uint8_t nm_key[TERN_NM_KEY_MAX];
};

/*
 * The first page of an allocated region's memfd (a layout shared with
 * every process of the host that maps it: a wire format).  state mirrors
 * the region's (written by create, then destroy, seq_cst after the
 * region's own); a peer reads it (acquire) before touching the memory, so
 * an operation after the destroy is refused.  One that read it live just
 * before lands in memory the target no longer uses (it unmapped it), never
 * in memory it reuses.  id and nonce name the region for good (its wire id
 * and its context's random nonce): a key whose memfd number now belongs to
 * another region never maps it.  locks: the stripe locks of accumulate
 * elements no compare-and-swap covers (engine/rma_acc.c), shared by every
 * process applying to the region: 0 free, else the holder's pid (a holder
 * found dead is overtaken).
 */
#define TERN_REGION_SHM_MAGIC 0x4d485352u /* "RSHM" */
#define TERN_REGION_SHM_VERSION 2
#define TERN_ACC_STRIPES 64
typedef struct tern_region_shared {
    uint32_t magic;
    uint32_t version;
    _Atomic uint64_t state;
    uint64_t id;
    uint64_t nonce;
    uint8_t reserved[32];
    _Atomic int32_t locks[TERN_ACC_STRIPES];
} tern_region_shared_t;
static_assert(sizeof(tern_region_shared_t) == 320, "the shared region header is a wire format");

static inline uint64_t tern_region_id(const tern_region_t *r)
{
    return (uint64_t)r->index | (atomic_load_explicit(&r->state, memory_order_relaxed) >> 1)
                                    << 32;
}

/* Enter the region named by wire id (with the bytes [addr, addr + len) and
 * access `need`, TERN_REGION_* bits) to touch its memory: TERN_OK with
 * *out held (leave with tern_region_leave), else TERN_ERR_REMOTE_ACCESS or
 * TERN_ERR_INVALID_PARAM with a message naming the region and the cause
 * (the caller's peer: `rank`). */
tern_status_t tern_region_enter(tern_context_t *ctx, uint64_t id, uint64_t addr, uint64_t len,
                                unsigned need, int rank, tern_region_t **out);
/* Enter a region already found by tern_region_enter (per fragment of a
 * put): false when it has been destroyed since. */
bool tern_region_reenter(tern_region_t *r, uint64_t id);
static inline void tern_region_leave(tern_region_t *r)
{
    atomic_fetch_sub_explicit(&r->users, 1, memory_order_release);
}
/* The context's table, freed at tern_finalize. */
void tern_regions_free(tern_context_t *ctx);

/* An unpacked key (tern_key_unpack): immutable, usable from any worker.
 * Direct access, when the memory is reachable from here without the
 * target's progress: a region of this process (self), or the shared
 * mapping of a peer's allocated region on this host (map, its header
 * `shared`, the region's first byte at data). */
struct tern_key {
    tern_context_t *ctx;
    int peer;
    unsigned flags; /* the region's TERN_REGION_* */
    uint64_t id;    /* the region's wire id */
    uint64_t base, len;
    tern_region_t *self;
    void *map;
    size_t maplen;
    tern_region_shared_t *shared;
    uint8_t *data;
    /* the netmod section (TERN_KEY_SECT_NM): operations go through that
     * netmod's rma table when it carries the key's VC (nm_desc NULL: none) */
    const tern_netmod_desc_t *nm_desc;
    uint32_t nm_len;
    uint8_t nm_key[TERN_NM_KEY_MAX];
    /* the same-host copy (TERN_KEY_SECT_CMA, engine/rma_cma.c): the
     * target's table as this process maps it (shared by the keys of that
     * table), the region's slot in it; cma_slot NULL: none */
    struct tern_regtab_peer *cma_peer;
    struct tern_regtab_slot *cma_slot;
};

/* The packed key: a wire format, host byte order (keys stay among hosts of
 * one kind, as the packet header). */
#define TERN_KEY_MAGIC 0x59524b54u /* "TKRY" */
#define TERN_KEY_VERSION 1
typedef struct tern_key_wire {
    uint32_t magic;
    uint16_t version;
    uint16_t flags; /* TERN_REGION_* */
    uint32_t job;   /* tern_job_hash of the owner's job */
    int32_t rank;   /* the owner's rank in it */
    uint64_t id;    /* the region's id */
    uint64_t base;
    uint64_t len;
    uint32_t nsect; /* sections that follow */
    uint32_t reserved;
} tern_key_wire_t;
static_assert(sizeof(tern_key_wire_t) == 48, "the packed key is a wire format");

/* A section of the packed key: type, then len bytes. */
enum { TERN_KEY_SECT_SHM = 1, TERN_KEY_SECT_NM = 2, TERN_KEY_SECT_CMA = 3 };
typedef struct tern_key_sect {
    uint16_t type;
    uint16_t len;
    uint32_t reserved;
} tern_key_sect_t;
/* TERN_KEY_SECT_SHM: an allocated region a process of host `host` maps
 * from /proc/<pid>/fd/<fd> (a memfd named tern-region, inode ino, map_len
 * bytes, the memory at data_off, its header naming the key's id and
 * nonce). */
typedef struct tern_key_shm {
    tern_host_id_t host;
    int32_t pid;
    int32_t fd;
    uint64_t map_len;
    uint64_t data_off;
    uint64_t ino;
    uint64_t nonce;
} tern_key_shm_t;
static_assert(sizeof(tern_key_sect_t) == 8 && sizeof(tern_key_shm_t) == 72,
              "key sections are a wire format");
/* TERN_KEY_SECT_NM: the netmod that serves the region (its name, NUL
 * padded), then its own bytes (tern_nm_rma_pack_fn: len - 16 of them). */
#define TERN_KEY_NM_NAME 16

/* Map the memfd named `name` ("/memfd:<name> (deleted)") that process pid
 * holds as its fd, when it is the file of inode ino, map_len bytes, sealed
 * against shrinking: the shared read-write mapping of its first map_len
 * bytes, or NULL (not that file, or not ours to open; tern_debug says why,
 * naming the peer). */
void *tern_peer_memfd_map(int peer, int32_t pid, int32_t fd, const char *name, uint64_t ino,
                          uint64_t map_len);

/* ---- the same-host copy of regions (engine/rma_cma.c) -------------------- */

/*
 * A peer on this host reaches a region no mapping serves (a created one,
 * or an allocated one not mapped) by Cross Memory Attach: one
 * process_vm_writev / _readv from its buffer into the target's memory,
 * when TERN_CMA serves the VC (engine/cma.h).  Only the target's own
 * memory is at stake, so liveness is shared: each context with regions has
 * a region table in a sealed memfd (TERN_REGTAB_MEMFD) that same-host peers
 * map from /proc/<pid>/fd/<fd>, one slot per region index.  Its layout is
 * a wire format among the processes of a host.
 *
 * A slot's state mirrors the region's (gen << 1 | live).  An origin takes
 * one of the slot's holder words (compare-and-swap 0 -> its pid, seq_cst),
 * then reads state (seq_cst): live with the key's gen, it copies, then
 * lets go (0, release); otherwise it lets go and refuses.  Destroy stores
 * the dead state (seq_cst), then waits for every holder word to read 0
 * (acquire).  The store-buffering pattern again (struct tern_region): the
 * origin sees the region dead, or destroy sees its holder and waits for
 * the copy.  A holder is overtaken once no thread of its pid maps the
 * table (it died, is a zombie, or the pid was reused): it can copy nothing
 * more; an origin frees its word by compare-and-swap from its pid, so an
 * overtaken one never frees a later origin's.  All holder words taken: the
 * operation takes the engine's path.  The origin copies only while its
 * pidfd of the owner says the owner lives (a pid reused after the owner's
 * death is never written to); finalize retires every slot still live.
 */
#define TERN_REGTAB_MEMFD "tern-regtab"
#define TERN_REGTAB_MAGIC 0x42415452u /* "RTAB" */
#define TERN_REGTAB_VERSION 1
#define TERN_REGTAB_HOLDERS 6
#define TERN_REGTAB_SLOTS_OFF 4096 /* the slots' offset in the memfd */
typedef struct tern_regtab_hdr {
    uint32_t magic;     /* TERN_REGTAB_MAGIC */
    uint32_t version;   /* TERN_REGTAB_VERSION */
    uint64_t nonce;     /* the context's (region table's) random nonce */
    uint32_t slots;     /* TERN_REGION_MAX */
    uint32_t slot_size; /* sizeof(tern_regtab_slot_t) */
} tern_regtab_hdr_t;
typedef struct tern_regtab_slot {
    _Atomic uint64_t state;                       /* the region's, mirrored */
    _Atomic int32_t holders[TERN_REGTAB_HOLDERS]; /* 0, or the pid of an origin copying */
} tern_regtab_slot_t;
static_assert(sizeof(tern_regtab_hdr_t) == 24 && sizeof(tern_regtab_slot_t) == 32,
              "the region table is a wire format");
#define TERN_REGTAB_LEN (TERN_REGTAB_SLOTS_OFF + (uint64_t)TERN_REGION_MAX * 32)

/* TERN_KEY_SECT_CMA: the table of the region's owner (pid, on host
 * `host`), its fd there, inode, size and nonce. */
typedef struct tern_key_cma {
    tern_host_id_t host;
    int32_t pid;
    int32_t fd;
    uint64_t ino;
    uint64_t map_len;
    uint64_t nonce;
} tern_key_cma_t;
static_assert(sizeof(tern_key_cma_t) == 64, "key sections are a wire format");

typedef struct tern_regtab tern_regtab_t;
/* The context's table (nonce: its region table's), or NULL when it cannot
 * be made (the copy then serves none of its regions). */
tern_regtab_t *tern_regtab_new(uint64_t nonce);
void tern_regtab_free(tern_regtab_t *t);
/* Region index's state into its slot: live (release: after the region is
 * set up) or dead (seq_cst, before waiting). */
void tern_regtab_set(tern_regtab_t *t, uint32_t index, uint64_t state);
/* Wait until no origin holds index's slot (after its dead state). */
void tern_regtab_drain(tern_regtab_t *t, uint32_t index);
/* The section (header and tern_key_cma_t) into buf, which has room. */
#define TERN_KEY_CMA_SECT (sizeof(tern_key_sect_t) + sizeof(tern_key_cma_t))
void tern_regtab_pack(const tern_regtab_t *t, void *buf);
/* A peer's section into key (unless a mapping serves it): the table mapped
 * (once per process and table, shared by its keys) when it is on this host
 * and lets us; else nothing.  tern_key_cma_drop undoes it. */
void tern_key_cma_take(tern_key_t *key, const tern_key_cma_t *c);
void tern_key_cma_drop(tern_key_t *key);
/* Finalize, after the peers' fence: every live slot of the context's table
 * dead, then drained (peers' keys outlive it; the memory may not). */
void tern_regtab_retire(tern_regtab_t *t, uint32_t used);
/* Origin: a put (write) or get of iov (len bytes) at raddr by the copy.
 * TERN_ERR_UNSUPPORTED: not served so (nothing done: the kernel refused,
 * or no holder word free); else the operation's status. */
tern_status_t tern_rma_cma_op(tern_worker_t *w, tern_vc_t *vc, const tern_key_t *key,
                              const struct iovec *iov, int iovcnt, size_t len, uint64_t raddr,
                              bool write);

/* The memory [raddr, raddr + len) of key's region reached directly (see
 * struct tern_key) for an access `need`: TERN_OK with *p set (leave with
 * tern_key_leave(key, held) after the access), TERN_ERR_UNSUPPORTED when
 * the key has no direct access (use the engine's path), or the refusal
 * (TERN_ERR_REMOTE_ACCESS: the region is destroyed). */
tern_status_t tern_key_enter(const tern_key_t *key, uint64_t raddr, uint64_t len, unsigned need,
                             void **p, tern_region_t **held);
static inline void tern_key_leave(tern_region_t *held)
{
    if (held != NULL)
        tern_region_leave(held);
}
/* The stripe locks of a region's accumulates: its shared header's, or
 * NULL (the process's own) */
static inline _Atomic int32_t *tern_region_locks(const tern_region_t *r)
{
    return r->shared != NULL ? r->shared->locks : NULL;
}

/* ---- accumulate kernels (engine/rma_acc.c) -------------------------------- */

/* Is acc defined on dtype (MPI's rules)?  Element size in *esize. */
bool tern_acc_valid(int acc, int dtype, size_t *esize);
/* t[i] = t[i] acc in[i] for count elements, each atomically (see the file);
 * old (NULL: not wanted) receives the values before; locks: the region's
 * stripe locks (TERN_ACC_STRIPES), NULL for the process's own. */
void tern_acc_apply(int acc, int dtype, void *t, const void *in, size_t count, void *old,
                    _Atomic int32_t *locks);
/* The atomic op on the size-byte integer at t; returns the old value. */
uint64_t tern_amo_apply(int aop, size_t size, void *t, uint64_t value, uint64_t compare);
/* v's low size bytes into out, as the size-byte integer they are. */
void tern_amo_store(void *out, uint64_t v, size_t size);

/* ---- the engine's path (engine/rma.c: origin, engine/rma_target.c) ------- */

/* A worker's one-sided counters (tern_worker_counters: "rma.direct" ...). */
enum tern_rma_counter {
    TERN_RMA_C_DIRECT = 0, /* operations done on memory reached directly (no message) */
    TERN_RMA_C_SENT,       /* operations sent to their target (the engine's path) */
    TERN_RMA_C_APPLIED,    /* operations of peers this worker applied as their target */
    TERN_RMA_C_FLUSHES,    /* RMA_FLUSH packets sent */
    TERN_RMA_C_NATIVE,     /* operations the VC's netmod posted itself (its rma table) */
    TERN_RMA_C_REPLAYED,   /* of those, handed back and sent on the engine's path */
    TERN_RMA_C_CMA,        /* puts and gets copied by CMA (same host, no mapping) */
};
static_assert(TERN_RMA_C_CMA + 1 == TERN_RMA_NCOUNTERS, "engine_internal.h's count");
int tern_rma_counters(tern_worker_t *w, tern_counter_t *out, int max);

/* Request kinds of the one-sided path (after engine_internal.h's). */
enum {
    TERN_REQ_RMA_FLUSH = 8,  /* a tern_flush: completes when its parts have */
    TERN_REQ_RMA_PART = 9,   /* one RMA_FLUSH on one VC (internal, tracked on it) */
    TERN_REQ_RMA_PUT = 10,   /* target: a put's payload into a region (internal) */
    TERN_REQ_RMA_ACC = 11,   /* target: an accumulate's payload (internal) */
};

/* Packet handlers (handle_pkt.c's table). */
tern_status_t tern_rma_handle_put(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie);
tern_status_t tern_rma_handle_get(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie);
tern_status_t tern_rma_handle_amo(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie);
tern_status_t tern_rma_handle_acc(tern_vc_t *vc, const tern_pkt_hdr_t *hdr, const uint8_t *cookie);
tern_status_t tern_rma_handle_flush(tern_vc_t *vc, const tern_pkt_hdr_t *hdr,
                                    const uint8_t *cookie);
tern_status_t tern_rma_handle_resp(tern_vc_t *vc, const tern_pkt_hdr_t *hdr,
                                   const uint8_t *cookie);
/* Payload bytes of an RMA_PUT / RMA_ACC (a sink of kind TERN_REQ_RMA_PUT /
 * _ACC), last: they end it. */
void tern_rma_feed(tern_vc_t *vc, tern_request_t *r, const uint8_t *p, size_t n, bool last);
/* The netmod's own path (engine/rma_native.c): a put (write) or get of
 * iov (len bytes) with key's VC netmod when it serves the key.
 * TERN_ERR_UNSUPPORTED: not so (nothing done); TERN_INPROGRESS with *req. */
tern_status_t tern_rma_native_op(tern_worker_t *w, tern_vc_t *vc, const tern_key_t *key,
                                 const struct iovec *iov, int iovcnt, size_t len, uint64_t raddr,
                                 bool write, tern_request_t **req);
/* Atomics by the device (TERN_REGION_ATOMIC_DEVICE; rma_native.c).  The
 * origin's, on key's VC when its netmod has device atomics (8-byte ADD or
 * CSWAP; result NULL or 8 bytes): TERN_INPROGRESS with *req, or
 * TERN_ERR_UNSUPPORTED (nothing done: packets, which the target applies
 * through its device).  A request of one is marked in its space field
 * (TERN_RMA_NATIVE_AMO | the operation, engine/netmod.h) for the replay. */
tern_status_t tern_rma_native_amo(tern_worker_t *w, tern_vc_t *vc, const tern_key_t *key,
                                  int aop, uint64_t value, uint64_t compare, void *result,
                                  uint64_t raddr, tern_request_t **req);
/* The owner's (or the target applying a packet): the atomic on its region
 * r through worker w's instance of the netmod that registered it, done at
 * return; TERN_ERR_UNSUPPORTED: no device atomics (the CPU applies it). */
tern_status_t tern_rma_amo_local(tern_worker_t *w, const tern_region_t *r, uint64_t addr,
                                 int aop, uint64_t value, uint64_t compare, uint64_t *old);
/* Flush part of the netmod's operations on vc, for flush f (rma.c's
 * parts).  Counts itself in f like a packet part.  True while it waits
 * (operations of the netmod outstanding). */
bool tern_rma_native_flush(tern_worker_t *w, tern_request_t *f, tern_vc_t *vc);
/* Send RMA_FLUSH on vc for the part p (tracked; rma.c). */
void tern_rma_flush_send(tern_worker_t *w, tern_vc_t *vc, tern_request_t *p);
/* An operation goes to vc: tern_flush(TERN_ANY_SOURCE) will flush it. */
tern_status_t tern_rma_mark_dirty(tern_worker_t *w, tern_vc_t *vc, int peer);
/* A region's registration with the netmod that serves regions (rma_native.c):
 * made at create / alloc (none when it fails: the engine's path), undone at
 * destroy; tern_regions_nm_release (rma_region.c) undoes every live one
 * before the netmods finalize, and retires the same-host copy's table. */
void tern_region_nm_reg(tern_region_t *r);
void tern_region_nm_dereg(tern_region_t *r);
void tern_regions_nm_release(tern_context_t *ctx);
/* The region's TERN_KEY_SECT_NM section into buf (room bytes): its length
 * (written only when it fits), 0 when the region has none. */
size_t tern_region_nm_pack(const tern_region_t *r, void *buf, size_t room);
/* A peer's TERN_KEY_SECT_NM section (len bytes) into key: taken when this
 * process has that netmod (else ignored: the engine's path). */
void tern_key_nm_take(tern_key_t *key, const void *sect, size_t len);

/* A request of one of the kinds above completed (tern_request_complete's
 * slow part): a flush part counts towards its flush, a sink is dropped. */
void tern_rma_request_done(tern_request_t *r);

#endif
