/*
 * tern iofwd: hand a buffer to the node's I/O-forwarding daemon, which pulls
 * it with a one-sided read (CMA on the node) and writes it to storage while
 * the rank goes on (docs/iofwd.md).  One session per process, like CCI's
 * io.h: tern_io_init, tern_io_write / tern_io_iwrite, tern_io_finalize.
 *
 * Every call returns TERN_OK or a TERN_ERR_* status whose message
 * (tern_last_error()) names the cause; a failed write failed as a whole.
 * Not thread-safe: one thread of the process makes the calls.
 */
#ifndef TERN_IOFWD_H
#define TERN_IOFWD_H

#include <stddef.h>

#include <tern/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tern_io_request tern_io_request_t;

/**
 * Connect to the node's daemon (one per node and user), starting it if none
 * runs; a second starter attaches to the running one (race-free).  buffer
 * [0, len) is what later writes hand over; rank / ranks name this process
 * in its job.  args: comma-separated key=value, where the data goes and,
 * when this call starts the daemon, its settings:
 *   dir=DIR              one file per rank: DIR/rank.<rank>, created or
 *                        truncated here, each write appended
 *   shared=FILE,region=N one shared file: rank r's writes at r * N onwards,
 *                        within its region of N bytes
 *   sync=1               the daemon fsyncs each write before WRITE_DONE
 *   staging=N,buffers=N,linger_ms=N   the daemon's TERN_IOFWD_* settings
 * blocking: waits sleep (the context's block mode) rather than spin.
 * TERN_ERR_INVALID_PARAM for a len of 0 or past SSIZE_MAX.
 * Uses the process's tern context when it has one (call it after
 * tern_init), else makes a standalone one, freed by tern_io_finalize.
 */
tern_status_t tern_io_init(void *buffer, size_t len, int rank, int ranks, const char *args,
                           int blocking);

/**
 * Write buffer[0, len) as the next record.  Returns once the daemon holds
 * every byte (the buffer may be reused) or fails as a whole: TERN_ERR_IO
 * naming errno (ENOSPC: no room for it), TERN_ERR_PEER_FAILED when the
 * daemon died (naming the writes it held but had not written).
 */
tern_status_t tern_io_write(size_t len);

/**
 * Start writing buffer[offset, offset + len) as the next record; *req
 * completes as tern_io_write returns.  Several may be in flight (up to the
 * daemon's credits; beyond that this call waits for the oldest); the bytes
 * must not change until the request completes.
 */
tern_status_t tern_io_iwrite(size_t offset, size_t len, tern_io_request_t **req);

/** TERN_INPROGRESS while pending, else the write's status (req freed). */
tern_status_t tern_io_test(tern_io_request_t *req);

/** Wait for req; returns its status and frees it. */
tern_status_t tern_io_wait(tern_io_request_t *req);

/**
 * Wait for the writes in flight, say BYE, wait for FINISHED (everything
 * written), and reap the daemon if this process started it.  Returns the
 * first failure of a write after it was handed over (written or not), or
 * TERN_OK.
 */
tern_status_t tern_io_finalize(void);

#ifdef __cplusplus
}
#endif
#endif
