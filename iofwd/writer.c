/*
 * The iofwd daemon's writer thread: runs the jobs the main thread queues,
 * in order, so each rank's writes reach its file in order (daemon.h).
 *
 * Memory ordering: a job is handed over and back under d->mu; the mutex's
 * release (unlock) and acquire (lock) make everything the sending thread
 * wrote into the job visible to the receiving one.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iofwd/daemon.h"

static int write_all(int fd, const char *buf, uint64_t len, uint64_t off)
{
    while (len > 0) {
        ssize_t n = pwrite(fd, buf, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : ENOSPC;
        buf += n;
        off += (uint64_t)n;
        len -= (uint64_t)n;
    }
    return 0;
}

static void run(iofwd_t *d, iofwd_job_t *j)
{
    if (j->kind == JOB_PIECE && d->cfg.fault_stall) { /* the test hook: stuck for good */
        pthread_mutex_lock(&d->mu);
        while (!d->stop)
            pthread_cond_wait(&d->cv, &d->mu);
        pthread_mutex_unlock(&d->mu);
    }
    int err = 0;
    switch (j->kind) {
    case JOB_RESERVE:
        /* room for the whole write now, so a full disk fails it before a
         * byte is written; KEEP_SIZE: the file grows only as it is written */
        if (j->len > 0 && fallocate(j->fd, FALLOC_FL_KEEP_SIZE, (off_t)j->off, (off_t)j->len) != 0 &&
            errno != EOPNOTSUPP) {
            err = errno;
            (void)fallocate(j->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)j->off,
                            (off_t)j->len);
        }
        j->wr->status = err ? TERN_ERR_IO : TERN_OK;
        break;
    case JOB_PIECE:
        if (j->wr->status != TERN_OK)
            break; /* the write failed as a whole: nothing of it is written */
        err = write_all(j->fd, j->buf, j->len, j->off);
        if (err == 0 && j->sync && fdatasync(j->fd) != 0)
            err = errno;
        break;
    case JOB_DROP:
        /* a dead rank's writes that were not held: no partial record */
        if (j->truncate) {
            if (ftruncate(j->fd, (off_t)j->off) != 0)
                err = errno;
        } else if (j->len > 0 && fallocate(j->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                           (off_t)j->off, (off_t)j->len) != 0) {
            err = errno;
        }
        break;
    case JOB_CLOSE:
        if (j->sync && fsync(j->fd) != 0)
            err = errno;
        if (close(j->fd) != 0 && err == 0)
            err = errno;
        break;
    }
    j->err = err;
    j->status = err ? TERN_ERR_IO : TERN_OK;
}

static void *writer_main(void *arg)
{
    iofwd_t *d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (d->todo == NULL && !d->stop)
            pthread_cond_wait(&d->cv, &d->mu);
        if (d->todo == NULL)
            break;
        iofwd_job_t *j = d->todo;
        d->todo = j->next;
        if (d->todo == NULL)
            d->todo_tail = NULL;
        pthread_mutex_unlock(&d->mu);
        run(d, j);
        pthread_mutex_lock(&d->mu);
        j->next = d->done;
        d->done = j;
        tern_worker_signal(d->w);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

int iofwd_writer_start(iofwd_t *d)
{
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    return pthread_create(&d->writer, NULL, writer_main, d);
}

void iofwd_writer_stop(iofwd_t *d)
{
    pthread_mutex_lock(&d->mu);
    d->stop = true;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->writer, NULL);
}

void iofwd_writer_queue(iofwd_t *d, iofwd_job_t *j)
{
    j->next = NULL;
    pthread_mutex_lock(&d->mu);
    if (d->todo_tail != NULL)
        d->todo_tail->next = j;
    else
        d->todo = j;
    d->todo_tail = j;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

iofwd_job_t *iofwd_writer_take(iofwd_t *d)
{
    pthread_mutex_lock(&d->mu);
    iofwd_job_t *j = d->done;
    d->done = NULL;
    pthread_mutex_unlock(&d->mu);
    return j;
}
