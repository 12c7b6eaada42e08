/*
 * iofwd wire format (issue 12; docs/iofwd.md): the messages between a rank
 * and the node's I/O-forwarding daemon.  Little-endian, fixed layouts, every
 * field checked by tern_io_decode before it is used: what a peer sends is
 * never trusted (a malformed or oversized message is TERN_ERR_MALFORMED
 * naming the field; the daemon answers it with an ERROR and goes on).
 *
 *   header   {magic "TRIO", version, type, body length, reserved 0}
 *   CONNECT    rank -> daemon  {job, rank, ranks, pid, buffer address, length,
 *                               destination: mode, flags, region, path}
 *   CONNECTED  daemon -> rank  {credits, staging buffer size}
 *   WRITE_REQ  rank -> daemon  {seq, offset in the file, length}
 *                              (then the data: one message per staging buffer)
 *   HELD       daemon -> rank  {seq, status, errno}: the daemon holds every
 *                              byte (the rank's buffer is free), or the
 *                              write failed as a whole (ENOSPC: no room)
 *   WRITE_DONE daemon -> rank  {seq, status, errno}: written to the file
 *   BYE        rank -> daemon  {}
 *   FINISHED   daemon -> rank  {status, bytes written}
 *   ERROR      either way      {status, field, message}
 *   PING/PONG  starter <-> daemon: is it alive  {}
 */
#ifndef TERN_IOFWD_PROTO_H
#define TERN_IOFWD_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include <tern/status.h>

#define TERN_IO_MAGIC 0x4f495254u /* "TRIO" little-endian */
#define TERN_IO_VERSION 1u
#define TERN_IO_JOB_MAX 256        /* a PMIx namespace, NUL included */
#define TERN_IO_MSG_MAX 128        /* ERROR's text, NUL included */
#define TERN_IO_PATH_MAX 1024      /* CONNECT's destination, NUL included */

/* Where a rank's writes go (CONNECT's mode). */
enum tern_io_dest {
    TERN_IO_PER_RANK = 1,  /* path is a directory: <path>/rank.<rank>, appended */
    TERN_IO_SHARED = 2,    /* path is one file: rank r's region at r * region */
};
#define TERN_IO_FLAG_SYNC 1u      /* fsync each write before WRITE_DONE */

/* The matching space and tags of iofwd messages on the rank <-> daemon
 * port connection (a space of their own: a program's receives from any
 * source in its spaces never take them). */
#define TERN_IO_SPACE 0xffe0u
#define TERN_IO_TAG_CTRL 1
#define TERN_IO_TAG_DATA 2
enum tern_io_type {
    TERN_IO_CONNECT = 1,
    TERN_IO_CONNECTED,
    TERN_IO_WRITE_REQ,
    TERN_IO_WRITE_DONE,
    TERN_IO_BYE,
    TERN_IO_FINISHED,
    TERN_IO_ERROR,
    TERN_IO_PING,
    TERN_IO_PONG,
    TERN_IO_HELD,
    TERN_IO_NTYPES
};

typedef struct tern_io_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    uint32_t len;      /* bytes of the body that follows */
    uint32_t reserved; /* 0 */
} tern_io_hdr_t;

typedef struct tern_io_connect {
    char job[TERN_IO_JOB_MAX];
    uint32_t rank, ranks;
    int32_t pid;
    uint32_t reserved;
    uint64_t buf_addr, buf_len;
    uint32_t mode;     /* enum tern_io_dest */
    uint32_t flags;    /* TERN_IO_FLAG_* */
    uint64_t region;   /* TERN_IO_SHARED: bytes of each rank's region; else 0 */
    char path[TERN_IO_PATH_MAX];
} tern_io_connect_t;

typedef struct tern_io_connected {
    uint32_t credits;  /* writes in flight the rank may have */
    uint32_t reserved;
    uint64_t staging;  /* bytes of one staging buffer (a write is split into these) */
} tern_io_connected_t;

typedef struct tern_io_write_req {
    uint64_t seq, offset, len;
} tern_io_write_req_t;

/* WRITE_DONE and HELD */
typedef struct tern_io_write_done {
    uint64_t seq;
    int32_t status;    /* tern_status_t */
    int32_t err;       /* errno of a failed write(2), else 0 */
} tern_io_write_done_t;

typedef struct tern_io_finished {
    int32_t status;
    uint32_t reserved;
    uint64_t bytes;
} tern_io_finished_t;

typedef struct tern_io_error {
    int32_t status;
    uint32_t field;    /* offset of the bad field in the message, or 0 */
    char msg[TERN_IO_MSG_MAX];
} tern_io_error_t;

/* A decoded message. */
typedef struct tern_io_msg {
    enum tern_io_type type;
    union {
        tern_io_connect_t connect;
        tern_io_connected_t connected;
        tern_io_write_req_t write_req;
        tern_io_write_done_t write_done;
        tern_io_finished_t finished;
        tern_io_error_t error;
    } u;
} tern_io_msg_t;

/* The longest encoded message. */
#define TERN_IO_MSG_BYTES (sizeof(tern_io_hdr_t) + sizeof(tern_io_connect_t))

/* Bytes the encoding of a message of type takes (header included); 0 for an
 * unknown type. */
size_t tern_io_size(enum tern_io_type type);

/* Write msg into buf[cap]; returns the bytes written, 0 if cap is too
 * small or the type unknown. */
size_t tern_io_encode(const tern_io_msg_t *msg, void *buf, size_t cap);

/* Check and decode the len bytes at buf.  TERN_ERR_MALFORMED (message
 * naming the field) for anything but one whole, valid message of this
 * version; nothing is read beyond buf + len. */
tern_status_t tern_io_decode(const void *buf, size_t len, tern_io_msg_t *out);

const char *tern_io_type_name(enum tern_io_type type);

#endif /* TERN_IOFWD_PROTO_H */
