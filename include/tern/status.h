/*
 * tern — status codes.
 *
 * One enum for the whole library: TERN_OK is zero, TERN_INPROGRESS is the
 * only positive value, every error is negative.  Errors are programmatic (the
 * code) and descriptive (tern_last_error() holds the message written where
 * the error was first decided, naming the errno, the peer and the cause).
 *
 * The range of an error says what the caller has to recover; each range has
 * room for later codes, and the tern_status_is_*() helpers below classify:
 *
 *   -1 .. -19   argument: the caller's mistake (a NULL handle or buffer, a
 *               bad rank, tag, count or length, a receive buffer shorter
 *               than the message).  A refused call changed nothing; a
 *               truncated receive holds the message's first bytes.  The
 *               library and the peers are fine: fix the call.
 *   -20 .. -39  resource: something ran short (memory, /dev/shm, NIC queues
 *               or registrations).  Nothing was lost; TERN_ERR_AGAIN is the
 *               back-pressure contract: queue the work and retry the same
 *               call.  The others need memory freed, or a larger allowance.
 *   -40 .. -59  peer: one peer, or the way to it, failed, cannot be reached,
 *               refused remote access or broke the protocol.  The requests
 *               that depend on it complete with the code; the other peers
 *               keep working.
 *   -60 .. -79  local: this process's environment or a component failed
 *               (PMIx, shared memory, a system call, no usable device, a
 *               port already taken, an operation not supported).  The
 *               context usually cannot go on.
 *   -80 .. -99  no result: a wait or lookup ended without what it asked for
 *               (time ran out, woken by tern_worker_signal, nothing
 *               published).  Nothing is broken; ask again when it suits.
 *
 * No call of the API returns a value at or below TERN_ERR_LAST: the library's
 * internal layers number their private statuses from -1000 down.
 */
#ifndef TERN_STATUS_H
#define TERN_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tern_status {
    TERN_OK = 0,
    TERN_INPROGRESS = 1,

    /* argument: -1 .. -19 */
    TERN_ERR_INVALID_PARAM = -1, /* NULL handle or buffer, bad length, count or flag */
    TERN_ERR_INVALID_RANK = -2,  /* rank outside [0, size) */
    TERN_ERR_INVALID_TAG = -3,   /* tag outside [0, TERN_TAG_MAX] or wildcard on send */
    TERN_ERR_TRUNCATED = -4,     /* message longer than the receive buffer */

    /* resource: -20 .. -39 */
    TERN_ERR_AGAIN = -20, /* back-pressure: queue the work and retry */
    TERN_ERR_NO_MEMORY = -21,
    TERN_ERR_NO_SHM_SPACE = -22, /* /dev/shm too small for the segment */
    TERN_ERR_NO_RESOURCE = -23,  /* a device or system limit: NIC queues, registrations */

    /* peer: -40 .. -59 */
    TERN_ERR_PEER_FAILED = -40,   /* peer process died or its channel broke */
    TERN_ERR_UNREACHABLE = -41,   /* no netmod can reach the peer or its address */
    TERN_ERR_CONN_REFUSED = -42,  /* nothing listens at the peer address:port */
    TERN_ERR_CONN_RESET = -43,    /* connection reset by the peer */
    TERN_ERR_CONN_CLOSED = -44,   /* peer closed the connection (EOF) */
    TERN_ERR_HOST_UNREACH = -45,  /* host or network unreachable */
    TERN_ERR_REMOTE_ACCESS = -46, /* remote memory access refused (bad key, protection) */
    TERN_ERR_MALFORMED = -47,     /* a peer's packet, cookie, card or segment failed validation */

    /* local: -60 .. -79 */
    TERN_ERR_PMIX = -60,        /* PMIx call failed or key missing */
    TERN_ERR_SHM = -61,         /* shared-memory setup failure other than space */
    TERN_ERR_IO = -62,          /* system call failure not covered above */
    TERN_ERR_NO_DEVICE = -63,   /* no usable NIC, device, port or interface address */
    TERN_ERR_ADDR_IN_USE = -64, /* address:port (or every port of the allowed range) taken */
    TERN_ERR_UNSUPPORTED = -65, /* operation not supported by this component */

    /* no result: -80 .. -99 */
    TERN_ERR_TIMED_OUT = -80,
    TERN_ERR_INTERRUPTED = -81, /* wait woken by tern_worker_signal() */
    TERN_ERR_NOT_FOUND = -82,   /* lookup of a key/name that does not exist */
    TERN_ERR_CANCELED = -83,    /* a receive cancelled (tern_cancel) before it matched */

    TERN_ERR_LAST = -100 /* below every public code */
} tern_status_t;

/* Classification by range (see above); each is false for TERN_OK and
 * TERN_INPROGRESS. */
static inline int tern_status_is_arg_error(tern_status_t s)
{
    return s <= -1 && s >= -19;
}
static inline int tern_status_is_resource_error(tern_status_t s)
{
    return s <= -20 && s >= -39;
}
static inline int tern_status_is_peer_error(tern_status_t s)
{
    return s <= -40 && s >= -59;
}
static inline int tern_status_is_local_error(tern_status_t s)
{
    return s <= -60 && s >= -79;
}
static inline int tern_status_is_no_result(tern_status_t s)
{
    return s <= -80 && s >= -99;
}

/** Fixed text for a status code; never NULL, never freed.  "unknown status"
 *  for a value that is no code. */
const char *tern_strerror(tern_status_t status);

/**
 * Message of the last error decided in the calling thread (names the cause,
 * the errno text and the peer where one is involved).  Owned by the library,
 * valid until the next failing call in this thread.
 */
const char *tern_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
