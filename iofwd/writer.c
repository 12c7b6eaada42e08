/*
 * The iofwd daemon's writer threads: each runs the jobs the main thread
 * queues to it, in order; a client's jobs all go to one writer, so each
 * rank's writes reach its file in order (daemon.h).
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
            pthread_cond_wait(&d->writers[j->writer].cv, &d->mu);
        pthread_mutex_unlock(&d->mu);
    }
    int err = 0;
    switch (j->kind) {
    case JOB_PIECE:
        err = write_all(j->fd, j->buf, j->len, j->off);
        if (err == 0 && j->sync && fdatasync(j->fd) != 0)
            err = errno;
        break;
    case JOB_DROP:
        /* a dead rank's writes that were not held, or a write that failed
         * in part: no partial record */
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
    struct iofwd_writer *wr = arg;
    iofwd_t *d = wr->d;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (wr->todo == NULL && !d->stop)
            pthread_cond_wait(&wr->cv, &d->mu);
        if (wr->todo == NULL)
            break;
        iofwd_job_t *j = wr->todo;
        wr->todo = j->next;
        if (wr->todo == NULL)
            wr->todo_tail = NULL;
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
    for (unsigned i = 0; i < d->nwriters; i++) {
        struct iofwd_writer *wr = &d->writers[i];
        wr->d = d;
        pthread_cond_init(&wr->cv, NULL);
        int e = pthread_create(&wr->thread, NULL, writer_main, wr);
        if (e != 0) {
            d->nwriters = i; /* the started ones are stopped as usual */
            return e;
        }
    }
    return 0;
}

void iofwd_writer_stop(iofwd_t *d)
{
    pthread_mutex_lock(&d->mu);
    d->stop = true;
    for (unsigned i = 0; i < d->nwriters; i++)
        pthread_cond_signal(&d->writers[i].cv);
    pthread_mutex_unlock(&d->mu);
    for (unsigned i = 0; i < d->nwriters; i++)
        pthread_join(d->writers[i].thread, NULL);
}

void iofwd_writer_queue(iofwd_t *d, iofwd_job_t *j)
{
    struct iofwd_writer *wr = &d->writers[j->writer];
    j->next = NULL;
    pthread_mutex_lock(&d->mu);
    if (wr->todo_tail != NULL)
        wr->todo_tail->next = j;
    else
        wr->todo = j;
    wr->todo_tail = j;
    pthread_cond_signal(&wr->cv);
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
