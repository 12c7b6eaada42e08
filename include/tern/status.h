/*
 * tern — status codes.
 *
 * One enum for the whole library: TERN_OK is zero, TERN_INPROGRESS is the
 * only positive value, every error is negative.  Errors are programmatic (the
 * code) and descriptive (tern_last_error() holds the message written where
 * the error was first decided, naming the errno, the peer and the cause).
 */
#ifndef TERN_STATUS_H
#define TERN_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tern_status {
    TERN_OK = 0,
    TERN_INPROGRESS = 1,

    TERN_ERR_AGAIN = -1,          /* back-pressure: queue the work and retry */
    TERN_ERR_INVALID_PARAM = -2,  /* NULL buffer, bad length, bad flag ... */
    TERN_ERR_INVALID_RANK = -3,   /* rank outside [0, size) */
    TERN_ERR_INVALID_TAG = -4,    /* tag outside [0, TERN_TAG_MAX] or wildcard on send */
    TERN_ERR_NO_MEMORY = -5,
    TERN_ERR_TRUNCATED = -6,      /* message longer than the receive buffer */
    TERN_ERR_PEER_FAILED = -7,    /* peer process died or its channel broke */
    TERN_ERR_NO_SHM_SPACE = -8,   /* /dev/shm too small for the segment */
    TERN_ERR_SHM = -9,            /* other shared-memory setup failure */
    TERN_ERR_PMIX = -10,          /* PMIx call failed or key missing */
    TERN_ERR_MALFORMED = -11,     /* packet or segment failed validation */
    TERN_ERR_UNSUPPORTED = -12,   /* operation not supported by this component */
    TERN_ERR_TIMED_OUT = -13,
    TERN_ERR_CANCELED = -14,
    TERN_ERR_NOT_FOUND = -15,     /* lookup of a key/name that does not exist */
    TERN_ERR_IO = -16,            /* system call failure not covered above */
    TERN_ERR_CMA_REFUSED = -17,   /* process_vm_readv/writev refused (EPERM) */
    TERN_ERR_BUSY = -18,          /* resource in use (e.g. finalize with requests) */
    TERN_ERR_INTERRUPTED = -19,   /* wait woken by tern_worker_signal() */
    TERN_ERR_CONN_REFUSED = -20,  /* nothing listens at the peer address:port */
    TERN_ERR_CONN_RESET = -21,    /* connection reset by the peer */
    TERN_ERR_CONN_CLOSED = -22,   /* peer closed the connection (EOF) */
    TERN_ERR_ADDR_IN_USE = -23,   /* address:port already bound */
    TERN_ERR_SOCK_CLOSED = -24,   /* op interrupted by a close of its socket */
    TERN_ERR_NO_PORT = -25,       /* every port of the allowed range is taken */
    TERN_ERR_HOST_UNREACH = -26,  /* host or network unreachable */

    TERN_ERR_LAST = -27
} tern_status_t;

/** Fixed text for a status code; never NULL, never freed. */
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
