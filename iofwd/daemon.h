/*
 * The iofwd daemon (tern-iofwd): its clients, their writes, the staging
 * pool, and the writer thread's jobs (docs/iofwd.md).
 *
 * Threads: the main thread drives tern (accepts, control messages, the
 * pulls into staging buffers); the writer thread (writer.c) runs jobs in
 * the order they were queued: reserve a write's range (fallocate: ENOSPC
 * before anything is written), write a piece, drop a dead rank's unheld
 * writes, close.  Jobs go to the writer and come back through two queues
 * under one mutex (not the fast path: one lock round per 4 MiB piece);
 * the writer wakes the main thread with tern_worker_signal.  A job's
 * fields are the writer's from the queueing until it comes back.
 */
#ifndef TERN_IOFWD_DAEMON_H
#define TERN_IOFWD_DAEMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "iofwd/iofwd_internal.h"
#include "iofwd/proto.h"
#include <tern/core.h>

typedef struct iofwd_client iofwd_client_t;

/* One write of a client, from WRITE_REQ to WRITE_DONE. */
typedef struct iofwd_write {
    struct iofwd_write *next;
    uint64_t seq, off, len;
    unsigned npieces, posted, received, written;
    bool reserved_back;            /* the RESERVE job came back */
    bool held;                     /* HELD sent */
    tern_status_t status;          /* the reservation's: the writer's field */
    tern_status_t wstatus;         /* a piece's failure: the main thread's */
    int werr;
} iofwd_write_t;

enum iofwd_job_kind { JOB_RESERVE = 1, JOB_PIECE, JOB_DROP, JOB_CLOSE };

typedef struct iofwd_job {
    struct iofwd_job *next;
    enum iofwd_job_kind kind;
    iofwd_client_t *c;
    iofwd_write_t *wr;             /* RESERVE, PIECE */
    int fd;
    uint64_t off, len;             /* the bytes at file offset off */
    char *buf;                     /* PIECE: its staging buffer */
    tern_request_t *rq;            /* PIECE: the pull while it is posted */
    bool sync;                     /* PIECE: fdatasync after it (the write's last piece) */
    bool truncate;                 /* DROP: per-rank file: cut at off */
    tern_status_t status;          /* the writer's result */
    int err;
} iofwd_job_t;

struct iofwd_client {
    iofwd_client_t *next;
    tern_job_t *job;
    int peer;
    char name[TERN_IO_JOB_MAX + 16];  /* "job:rank" for messages */
    bool connected, bye, dead, closing;
    uint32_t mode, flags;
    int fd;
    uint64_t lo, hi;               /* the file range its writes may use */
    uint64_t next_seq, next_off;
    iofwd_write_t *writes, *wtail; /* not yet WRITE_DONE, in order */
    unsigned at_writer;            /* jobs of this client at the writer */
    uint64_t bytes;                /* written */
    tern_status_t wstatus;         /* first write failure */
    tern_request_t *ctrl;
    unsigned char ctrl_buf[TERN_IO_MSG_BYTES + 64];
};

typedef struct iofwd {
    tern_iofwd_config_t cfg;
    tern_context_t *ctx;
    tern_worker_t *w;
    char dir[256];
    int lock;
    iofwd_client_t *clients;
    unsigned nclients;
    iofwd_job_t *free_pieces;      /* staging buffers not in use */
    iofwd_job_t *pulls;            /* pieces being pulled (posted receives) */
    uint64_t pulled, stored;       /* bytes, for the exit log */
    /* writer thread */
    pthread_t writer;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    iofwd_job_t *todo, *todo_tail; /* to the writer, in order */
    iofwd_job_t *done;             /* back from it (any order) */
    bool stop;
} iofwd_t;

/* writer.c */
int iofwd_writer_start(iofwd_t *d);
void iofwd_writer_stop(iofwd_t *d);
void iofwd_writer_queue(iofwd_t *d, iofwd_job_t *j);
/* the jobs that came back, as a list (NULL: none) */
iofwd_job_t *iofwd_writer_take(iofwd_t *d);

#endif
