/*
 * The iofwd daemon (tern-iofwd): its clients, their writes, the staging
 * pool, and the writer thread's jobs (docs/iofwd.md).
 *
 * Threads: the main thread drives tern (accepts, control messages, the
 * pulls into staging buffers); TERN_IOFWD_WRITERS writer threads
 * (writer.c) run jobs in the order each was given them: write a piece (to
 * the writers in turn: pieces land at their own offsets, so a rank's
 * records are in order whoever writes them; WRITE_DONE goes in order),
 * drop a dead rank's unheld writes or a failed write, close.  A client's
 * drop and close are queued only when none of its pieces is at a writer.  Jobs go to a writer and come back
 * through queues under one mutex (not the fast path: one lock round per
 * 4 MiB piece); writers wake the main thread with tern_worker_signal.  A
 * job's fields are its writer's from the queueing until it comes back.
 */
#ifndef TERN_IOFWD_DAEMON_H
#define TERN_IOFWD_DAEMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "iofwd/iofwd_internal.h"
#include "iofwd/proto.h"
#include <tern/core.h>

#define TERN_IOFWD_WRITERS_MAX 16

typedef struct iofwd_client iofwd_client_t;

/* One write of a client, from WRITE_REQ to WRITE_DONE. */
typedef struct iofwd_write {
    struct iofwd_write *next;
    uint64_t seq, off, len;
    unsigned npieces, posted, received, written;
    bool held;                     /* HELD sent */
    bool room_wait;                /* no room seen while writers were busy: decided later */
    uint64_t done_bytes;           /* of its pieces, written (main thread's count) */
    tern_status_t status;          /* refused at WRITE_REQ (no room): set before any job */
    tern_status_t wstatus;         /* a piece's failure: the main thread's */
    int werr;
} iofwd_write_t;

enum iofwd_job_kind { JOB_PIECE = 1, JOB_DROP, JOB_CLOSE };

typedef struct iofwd_job {
    struct iofwd_job *next;
    enum iofwd_job_kind kind;
    iofwd_client_t *c;
    iofwd_write_t *wr;             /* PIECE */
    unsigned writer;               /* the writer thread it goes to */
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
    dev_t dev;                     /* the file's filesystem (room is checked per filesystem) */
    uint64_t lo, hi;               /* the file range its writes may use */
    uint64_t next_seq, next_off;
    iofwd_write_t *writes, *wtail; /* not yet WRITE_DONE, in order */
    unsigned at_writer;            /* jobs of this client at the writer */
    uint64_t bytes;                /* written */
    bool drop;                     /* dead: its unheld writes are to be dropped */
    uint64_t drop_off;             /* from here (its first unheld write) */
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
    unsigned next_writer;          /* for the next piece, round robin */
    /* writer threads */
    pthread_mutex_t mu;
    struct iofwd_writer {
        struct iofwd *d;
        pthread_t thread;
        pthread_cond_t cv;
        iofwd_job_t *todo, *todo_tail; /* to this writer, in order */
    } writers[TERN_IOFWD_WRITERS_MAX];
    unsigned nwriters;
    iofwd_job_t *done;             /* back from the writers (any order) */
    bool stop;
} iofwd_t;

/* writer.c: d->nwriters threads; a job goes to its client's writer */
int iofwd_writer_start(iofwd_t *d);
void iofwd_writer_stop(iofwd_t *d);
void iofwd_writer_queue(iofwd_t *d, iofwd_job_t *j);
/* the jobs that came back, as a list (NULL: none) */
iofwd_job_t *iofwd_writer_take(iofwd_t *d);

#endif
