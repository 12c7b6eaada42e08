/*
 * tern — one-sided communication: memory regions, remote keys, put, get,
 * atomics, accumulate and flush (docs/rma.md).
 *
 * A process exposes memory by creating a region over it
 * (tern_region_create) and handing the region's packed key
 * (tern_region_pack, at most TERN_KEY_MAX bytes, by any means: a message,
 * PMIx, a file) to the peers that may reach it.  A peer unpacks the key for
 * the rank that made it (tern_key_unpack) and names remote memory by that
 * key and an absolute address inside the region (the target's virtual
 * address, as ucp_put and fi_write with FI_MR_VIRT_ADDR do).
 *
 * Regions belong to the context: any worker's operations may reach any
 * region, and a key is good on every worker of the process that unpacked
 * it (worker i's operations travel to the target's worker i, whose
 * progress applies them where neither a direct path nor the netmod's own
 * one-sided path, verbs' RDMA write and read, reaches the memory).
 *
 * Completion.  An operation's request (or TERN_OK at once) is its local
 * completion: a put's or an accumulate's buffer may be reused, a get's or a
 * fetching operation's result is in place.  Remote completion, the
 * operation applied at the target and visible there, comes from
 * tern_flush: a flush completes once every operation the worker started
 * before it towards that peer (or every peer) has been applied.  An error
 * the target finds in an operation that has no result (a put into a region
 * destroyed meanwhile) is reported by the next flush to that peer, with the
 * target's message; an operation with a result reports it itself.  An
 * operation on memory reached directly (a region of this process, a peer's
 * allocated region mapped here) or by the same-host copy (a peer's region
 * on this host, copied with Cross Memory Attach) is remote-complete when
 * it returns TERN_OK, and such a refusal is its own status.
 *
 * Atomicity.  tern_atomic and tern_accumulate are atomic per element
 * against every other atomic and accumulate on the same memory, from any
 * peer (MPI's rule for MPI_Accumulate with the same predefined type);
 * atomics and accumulates from one worker on one key are applied in the
 * order they were started (MPI's default accumulate_ordering, a window
 * being a region).  Puts and gets have no atomicity and no order, against
 * each other or against atomics, even on one key and one address (they may
 * take different paths: direct, the netmod's RDMA, packets): a flush
 * between two operations orders them, as MPI asks of conflicting accesses.
 * Operations on different keys have no order either.
 *
 * Errors, all before anything moves: TERN_ERR_INVALID_PARAM for a range
 * outside the key's region (naming it), a misaligned atomic, an unknown op
 * or type; TERN_ERR_REMOTE_ACCESS for a region whose key does not allow
 * the access (read / write); TERN_ERR_PEER_FAILED when the key's peer's
 * connection has failed.  At the target, a key whose region was destroyed
 * (or never existed there) is refused with TERN_ERR_REMOTE_ACCESS and
 * nothing is touched.  A target that dies fails its outstanding operations
 * and flushes with TERN_ERR_PEER_FAILED.
 *
 * Threads: regions and keys may be created, used and destroyed from any
 * thread; the operations follow core.h (one thread at a time per worker).
 */
#ifndef TERN_RMA_H
#define TERN_RMA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <tern/core.h>
#include <tern/tagged.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tern_region tern_region_t;
typedef struct tern_key tern_key_t;

/** Largest packed key tern_region_pack writes. */
#define TERN_KEY_MAX 512

/* tern_region_create flags: what peers may do to the region. */
#define TERN_REGION_READ (1u << 0)  /* get, and the fetching half of atomics */
#define TERN_REGION_WRITE (1u << 1) /* put, atomics, accumulate */
/* Atomics by the NIC (with WRITE): every atomic on the region, from any
 * peer and from its owner, goes through the device of the netmod that
 * serves regions where it has atomics (verbs: one RDMA fetch-and-add or
 * compare-and-swap per operation), so they are atomic against each other
 * even where the device's atomics are not against the CPU's
 * (IBV_ATOMIC_HCA).  Only 8-byte TERN_AMO_ADD and TERN_AMO_CSWAP then:
 * other atomics and tern_accumulate on the region are refused with
 * TERN_ERR_UNSUPPORTED at the call.  Without such a device the CPU applies
 * them as on any region (the same restriction holds: programs stay
 * portable).  MPI's windows, whose accumulates need the CPU, do not use
 * it. */
#define TERN_REGION_ATOMIC_DEVICE (1u << 2)

/**
 * Expose [addr, addr + len) (len > 0) to remote access with flags (READ,
 * WRITE or both).  The memory stays the caller's; it must stay mapped
 * until tern_region_destroy returns.  TERN_ERR_INVALID_PARAM for a NULL
 * address, a zero length, a range that wraps or no access flag;
 * TERN_ERR_NO_RESOURCE when the context has TERN_REGION_MAX regions.
 */
tern_status_t tern_region_create(tern_context_t *ctx, void *addr, size_t len, unsigned flags,
                                 tern_region_t **region);

/**
 * Allocate len bytes (len > 0, page-aligned, zeroed) as a region: the
 * library's memory, which the peers on this host map and then reach with
 * plain loads, stores and atomics (put, get, atomics and accumulate from
 * them are copies and atomic instructions, no message; an MPI window of
 * MPI_Win_allocate), the others as any region.  *addr gets the memory,
 * owned by the region: tern_region_destroy frees it.  Errors as
 * tern_region_create, and TERN_ERR_NO_MEMORY / TERN_ERR_SHM naming the
 * system call that refused.
 */
tern_status_t tern_region_alloc(tern_context_t *ctx, size_t len, unsigned flags, void **addr,
                                tern_region_t **region);

/**
 * The region's packed key into buf (room *len, set to the key's size):
 * TERN_ERR_TRUNCATED (nothing written, *len the size needed) when buf is
 * NULL or too small.  The key names this process, the region and its
 * range; it is refused by every target once the region is destroyed (by
 * the netmod's device for operations it carries: see tern_region_destroy).
 */
tern_status_t tern_region_pack(const tern_region_t *region, void *buf, size_t *len);

/** The region's first byte and length. */
void *tern_region_base(const tern_region_t *region);
size_t tern_region_length(const tern_region_t *region);

/**
 * Destroy a region: from the call on, operations arriving with its key are
 * refused (TERN_ERR_REMOTE_ACCESS at their origin); one being applied on
 * another thread's worker finishes first (the call waits for it, never for
 * a peer).  The packed key stays refused for the life of the context, but
 * for one case: an operation the netmod's device carries (verbs' RDMA) is
 * refused by the device's key check alone, and a device may give the same
 * rkey to a later registration (mlx5 and tests/ibloop change its low 8 bits
 * on each registration of an index), so a stale key used after that many
 * re-registrations at an overlapping address would reach the new one;
 * TERN_VERBS_RMA=0 keeps every operation on the checked path.  An
 * allocated region's memory is freed (a peer's mapping of it stays
 * valid, but nothing it writes there reaches this process any more).
 */
tern_status_t tern_region_destroy(tern_region_t *region);

/**
 * Unpack a key that peer (a rank, or a connected job's peer id) packed.
 * TERN_ERR_MALFORMED naming the cause for what is not a key of this
 * version, or a key another process made; TERN_ERR_INVALID_RANK for a
 * peer that is no peer.  Free it with tern_key_destroy once no operation
 * using it is pending.
 */
tern_status_t tern_key_unpack(tern_context_t *ctx, int peer, const void *buf, size_t len,
                              tern_key_t **key);
void tern_key_destroy(tern_key_t *key);

/** The remote region's first address and length, as packed. */
uint64_t tern_key_base(const tern_key_t *key);
uint64_t tern_key_length(const tern_key_t *key);

/**
 * Where the key's region is in this process's memory (its first byte), or
 * NULL when it is not mapped here: a region of this process, or one a
 * peer on this host allocated (tern_region_alloc) while TERN_RMA_MAP=1,
 * are; loads, stores and atomics through the pointer reach the region
 * (MPI_Win_shared_query's).  Valid until tern_key_destroy.
 */
void *tern_key_local(const tern_key_t *key);

/*
 * Every operation below takes op as tagged.h's do (NULL: none):
 * TERN_OP_CQ sends its completion, with op->context, to the worker's
 * completion queue (flags TERN_CQ_WRITE for a put, TERN_CQ_READ for a
 * get, TERN_CQ_ATOMIC with READ (a result) or WRITE for atomics and
 * accumulate, TERN_CQ_FLUSH for a flush), TERN_OP_CQ_ERRORS only when it
 * fails, and req may then be NULL; the call returns TERN_OK (or an error:
 * nothing posted, no entry).  A put's TERN_OP_DATA carries op->data to the
 * target, whose worker's CQ gets an entry (TERN_CQ_REMOTE_WRITE |
 * TERN_CQ_DATA, data, the origin as peer, the length) once the bytes are
 * in its memory (libfabric's fi_writedata); such a put always goes
 * through the target's progress, never the direct path.  Other flags are
 * TERN_ERR_INVALID_PARAM.  Without TERN_OP_CQ: TERN_OK when locally
 * complete within the call (*req NULL), TERN_INPROGRESS with *req for
 * tern_wait / tern_test.
 */

/*
 * Put / get: len bytes between the local buffer (or iovec, as core.h's:
 * copied, 0 .. TERN_IOV_MAX entries) and the contiguous remote range
 * [raddr, raddr + len) of key's region.
 */
tern_status_t tern_put(tern_worker_t *w, const void *buf, size_t len, const tern_key_t *key,
                       uint64_t raddr, const tern_op_t *op, tern_request_t **req);
tern_status_t tern_putv(tern_worker_t *w, const struct iovec *iov, int iovcnt,
                        const tern_key_t *key, uint64_t raddr, const tern_op_t *op,
                        tern_request_t **req);
tern_status_t tern_get(tern_worker_t *w, void *buf, size_t len, const tern_key_t *key,
                       uint64_t raddr, const tern_op_t *op, tern_request_t **req);
tern_status_t tern_getv(tern_worker_t *w, const struct iovec *iov, int iovcnt,
                        const tern_key_t *key, uint64_t raddr, const tern_op_t *op,
                        tern_request_t **req);

/* tern_atomic operations on an unsigned integer of 1, 2, 4 or 8 bytes. */
enum tern_amo {
    TERN_AMO_ADD = 0,   /* *r += value */
    TERN_AMO_SWAP = 1,  /* *r = value */
    TERN_AMO_CSWAP = 2, /* if (*r == compare) *r = value */
    TERN_AMO_AND = 3,
    TERN_AMO_OR = 4,
    TERN_AMO_XOR = 5,
    TERN_AMO_NOPS = 6
};

/**
 * Atomic op on the size-byte (1, 2, 4, 8) integer at raddr (aligned to
 * size), in the target's byte order, with value (and compare for CSWAP)
 * given in their low size bytes.  result: NULL, or room for size bytes
 * that receive the value before the operation (a fetching atomic; needs a
 * region that allows reading too).
 */
tern_status_t tern_atomic(tern_worker_t *w, int aop, size_t size, uint64_t value,
                          uint64_t compare, void *result, const tern_key_t *key, uint64_t raddr,
                          const tern_op_t *op, tern_request_t **req);

/* Element types of tern_accumulate (the target's representation). */
enum tern_dtype {
    TERN_DT_INT8 = 1,
    TERN_DT_UINT8,
    TERN_DT_INT16,
    TERN_DT_UINT16,
    TERN_DT_INT32,
    TERN_DT_UINT32,
    TERN_DT_INT64,
    TERN_DT_UINT64,
    TERN_DT_FLOAT,
    TERN_DT_DOUBLE,
    TERN_DT_LONG_DOUBLE,
    TERN_DT_FLOAT_COMPLEX,
    TERN_DT_DOUBLE_COMPLEX,
    TERN_DT_LONG_DOUBLE_COMPLEX,
    /* value-and-index pairs of MINLOC / MAXLOC, laid out as C structs
     * {value; int index;} (MPI_FLOAT_INT ... MPI_LONG_DOUBLE_INT) */
    TERN_DT_FLOAT_INT,
    TERN_DT_DOUBLE_INT,
    TERN_DT_LONG_INT,
    TERN_DT_2INT,
    TERN_DT_SHORT_INT,
    TERN_DT_LONG_DOUBLE_INT,
    TERN_DT_NTYPES
};

/* Reduction operations of tern_accumulate (MPI's predefined ones that apply
 * to plain numbers, MPI-3's REPLACE and NO_OP): target = target OP origin. */
enum tern_acc {
    TERN_ACC_SUM = 0,
    TERN_ACC_PROD,
    TERN_ACC_MIN,
    TERN_ACC_MAX,
    TERN_ACC_LAND,
    TERN_ACC_LOR,
    TERN_ACC_LXOR,
    TERN_ACC_BAND,
    TERN_ACC_BOR,
    TERN_ACC_BXOR,
    TERN_ACC_REPLACE, /* target = origin */
    TERN_ACC_NO_OP,   /* target unchanged (with result: an atomic read) */
    TERN_ACC_MAXLOC,  /* the pairs: the larger value, the smaller index on a tie */
    TERN_ACC_MINLOC,  /* the pairs: the smaller value, the smaller index on a tie */
    TERN_ACC_NOPS
};

/** Size in bytes of one element of dtype; 0 for no type. */
size_t tern_dtype_size(int dtype);

/**
 * target[i] = target[i] acc buf[i] for the count elements of dtype at
 * raddr, each element atomically.  buf may be NULL for TERN_ACC_NO_OP.
 * result: NULL, or room for count elements receiving the target's values
 * before the operation (MPI_Get_accumulate, MPI_Fetch_and_op).  MIN / MAX
 * are refused for the complex types, the logical and bit operations for
 * anything but the integers, MAXLOC / MINLOC for anything but the pairs,
 * and the pairs take nothing else but REPLACE and NO_OP
 * (TERN_ERR_INVALID_PARAM, as MPI).
 */
tern_status_t tern_accumulate(tern_worker_t *w, int acc, int dtype, const void *buf,
                              size_t count, void *result, const tern_key_t *key, uint64_t raddr,
                              const tern_op_t *op, tern_request_t **req);

/**
 * Remote completion: complete once every operation this worker started
 * before the call towards peer (TERN_ANY_SOURCE: every peer) has been
 * applied at the target (and, for a get or fetching operation, its data
 * has arrived).  Its status is the first error a target reported for
 * those operations (TERN_ERR_REMOTE_ACCESS with the target's message), or
 * TERN_ERR_PEER_FAILED when a target's connection fails first.  With
 * nothing outstanding: TERN_OK at once, or TERN_ERR_PEER_FAILED for a peer
 * whose connection has failed.
 */
tern_status_t tern_flush(tern_worker_t *w, int peer, const tern_op_t *op, tern_request_t **req);

#ifdef __cplusplus
}
#endif
#endif
