/*
 * tern-iofwd: the node's I/O-forwarding daemon (docs/iofwd.md; daemon.h).
 *
 *   tern-iofwd --dir DIR
 *
 * Started by tern_io_init (iofwd/start.c) with the rendezvous directory;
 * settings from TERN_IOFWD_* (tern_info lists them).  It opens a tern port,
 * publishes it in DIR/port, and serves the ranks that connect: each piece
 * of a write is pulled into a staging buffer by the engine's LMT get (CMA
 * on the node) and queued to the writer thread; HELD when a write's pieces
 * are all here, WRITE_DONE when they are written, FINISHED after BYE.  It
 * exits when it had no client for TERN_IOFWD_LINGER_MS, taking the
 * rendezvous lock first so that no starter is attaching meanwhile.
 * Diagnostics go where tern's go (the job's IOF diagnostics stream when the
 * starter had one, else stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "engine/log.h"
#include "iofwd/daemon.h"

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void client_dead(iofwd_t *d, iofwd_client_t *c, const char *why);
static void retire(iofwd_t *d, iofwd_client_t *c);

static void send_msg(iofwd_t *d, iofwd_client_t *c, const tern_io_msg_t *m)
{
    unsigned char b[TERN_IO_MSG_BYTES];
    size_t n = tern_io_encode(m, b, sizeof(b));
    if (c->dead)
        return;
    if (tern_send(d->w, b, n, c->peer, TERN_IO_TAG_CTRL, TERN_IO_SPACE) != TERN_OK)
        client_dead(d, c, tern_last_error());
}

static void send_error(iofwd_t *d, iofwd_client_t *c, tern_status_t st, const char *msg)
{
    tern_io_msg_t m = {.type = TERN_IO_ERROR, .u.error = {.status = st}};
    snprintf(m.u.error.msg, sizeof(m.u.error.msg), "%s", msg);
    tern_warn("iofwd: %s: %s", c->name, msg);
    send_msg(d, c, &m);
}

static void send_ack(iofwd_t *d, iofwd_client_t *c, enum tern_io_type type, uint64_t seq,
                     tern_status_t st, int err)
{
    tern_io_msg_t m = {.type = type, .u.write_done = {.seq = seq, .status = st, .err = err}};
    send_msg(d, c, &m);
}

/* ---- control messages ---------------------------------------------------- */

static void on_connect(iofwd_t *d, iofwd_client_t *c, const tern_io_connect_t *m)
{
    char path[TERN_IO_PATH_MAX + 32];
    snprintf(c->name, sizeof(c->name), "%s:%u", m->job, m->rank);
    c->mode = m->mode;
    c->flags = m->flags;
    if (m->mode == TERN_IO_PER_RANK) {
        snprintf(path, sizeof(path), "%s/rank.%u", m->path, m->rank);
        c->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        c->lo = 0;
        c->hi = UINT64_MAX;
    } else {
        snprintf(path, sizeof(path), "%s", m->path);
        c->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        c->lo = m->region * m->rank;
        c->hi = c->lo + m->region;
    }
    struct stat st;
    if (c->fd >= 0 && fstat(c->fd, &st) == 0)
        c->dev = st.st_dev;
    if (c->fd < 0) {
        char msg[TERN_IO_MSG_MAX];
        snprintf(msg, sizeof(msg), "open %.80s: %.40s", path, strerror(errno));
        send_error(d, c, TERN_ERR_IO, msg);
        c->closing = true; /* nothing more from it */
        return;
    }
    c->connected = true;
    c->next_off = c->lo;
    tern_io_msg_t r = {.type = TERN_IO_CONNECTED,
                       .u.connected = {.credits = (uint32_t)d->cfg.buffers,
                                       .staging = d->cfg.staging}};
    send_msg(d, c, &r);
}

/* Would len more bytes overflow the client's filesystem, counting what
 * the daemon holds for it and has not written yet?  (A check, not a
 * reservation: fallocate on tmpfs costs as much as the write itself.  Room
 * taken meanwhile by others fails the write later, in WRITE_DONE.)  Pieces
 * a writer has just written but the main thread has not yet heard of are
 * counted twice (on disk and pending): a "no" while any piece for that
 * filesystem is at a writer is only provisional (room_wait, recheck_room). */
static bool no_room(iofwd_t *d, iofwd_client_t *c, uint64_t len)
{
    struct statvfs v;
    if (len == 0 || fstatvfs(c->fd, &v) != 0)
        return false;
    uint64_t pending = 0;
    for (iofwd_client_t *o = d->clients; o != NULL; o = o->next)
        if (o->dev == c->dev)
            for (iofwd_write_t *w = o->writes; w != NULL; w = w->next)
                if (w->status == TERN_OK && !w->room_wait)
                    pending += w->len - w->done_bytes;
    return (uint64_t)v.f_bavail * v.f_frsize < pending + len;
}

static bool writers_busy_on(iofwd_t *d, dev_t dev)
{
    for (iofwd_client_t *o = d->clients; o != NULL; o = o->next)
        if (o->dev == dev && o->at_writer > 0)
            return true;
    return false;
}

static void refuse(iofwd_client_t *c, iofwd_write_t *w)
{
    w->status = TERN_ERR_IO;
    w->werr = ENOSPC;
    tern_warn("iofwd: %s: write %llu (%llu bytes at %llu): no room: %s", c->name,
              (unsigned long long)w->seq, (unsigned long long)w->len,
              (unsigned long long)w->off, strerror(ENOSPC));
}

/* Writes waiting for an exact room check: decided once there is room or
 * nothing for their filesystem is at a writer (the figures are exact). */
static void recheck_room(iofwd_t *d)
{
    for (iofwd_client_t *c = d->clients; c != NULL; c = c->next)
        for (iofwd_write_t *w = c->writes; w != NULL; w = w->next) {
            if (!w->room_wait)
                continue;
            if (!no_room(d, c, w->len)) {
                w->room_wait = false;
            } else if (!writers_busy_on(d, c->dev)) {
                w->room_wait = false;
                refuse(c, w);
            }
        }
}

static void on_write_req(iofwd_t *d, iofwd_client_t *c, const tern_io_write_req_t *m)
{
    char msg[TERN_IO_MSG_MAX];
    uint64_t off = c->lo + m->offset;
    if (!c->connected || m->seq != c->next_seq || m->offset != c->next_off - c->lo ||
        off < m->offset || off + m->len < off || off + m->len > c->hi) {
        snprintf(msg, sizeof(msg), "WRITE_REQ seq %llu at %llu of %llu bytes: expected seq %llu "
                 "at %llu%s", (unsigned long long)m->seq, (unsigned long long)m->offset,
                 (unsigned long long)m->len, (unsigned long long)c->next_seq,
                 (unsigned long long)(c->next_off - c->lo),
                 c->hi != UINT64_MAX ? ", within the rank's region" : "");
        send_error(d, c, TERN_ERR_MALFORMED, c->connected ? msg : "WRITE_REQ before CONNECT");
        return;
    }
    iofwd_write_t *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        send_error(d, c, TERN_ERR_NO_MEMORY, "no memory for a write");
        return;
    }
    w->seq = m->seq;
    w->off = off;
    w->len = m->len;
    /* no room: the write fails as a whole, its pieces taken into 0 bytes */
    if (no_room(d, c, m->len)) {
        if (writers_busy_on(d, c->dev))
            w->room_wait = true; /* provisional: decided by recheck_room */
        else
            refuse(c, w);
    }
    w->npieces = (unsigned)((m->len + d->cfg.staging - 1) / d->cfg.staging);
    c->next_seq++;
    c->next_off += m->len;
    if (c->wtail != NULL)
        c->wtail->next = w;
    else
        c->writes = w;
    c->wtail = w;
    if (w->npieces == 0) {
        w->held = true;
        send_ack(d, c, TERN_IO_HELD, w->seq, w->status, w->werr);
        retire(d, c);
    }
}

static void on_ctrl(iofwd_t *d, iofwd_client_t *c, size_t len)
{
    tern_io_msg_t m;
    if (len > TERN_IO_MSG_BYTES) {
        send_error(d, c, TERN_ERR_MALFORMED, "message longer than any iofwd message");
        return;
    }
    if (tern_io_decode(c->ctrl_buf, len, &m) != TERN_OK) {
        send_error(d, c, TERN_ERR_MALFORMED, tern_last_error());
        return;
    }
    switch (m.type) {
    case TERN_IO_CONNECT:
        if (c->connected)
            send_error(d, c, TERN_ERR_MALFORMED, "a second CONNECT");
        else
            on_connect(d, c, &m.u.connect);
        return;
    case TERN_IO_WRITE_REQ:
        on_write_req(d, c, &m.u.write_req);
        return;
    case TERN_IO_BYE:
        c->bye = true;
        return;
    case TERN_IO_PING: {
        tern_io_msg_t p = {.type = TERN_IO_PONG};
        send_msg(d, c, &p);
        return;
    }
    default: {
        char msg[TERN_IO_MSG_MAX];
        snprintf(msg, sizeof(msg), "%s is not a request", tern_io_type_name(m.type));
        send_error(d, c, TERN_ERR_MALFORMED, msg);
        return;
    }
    }
}

/* ---- clients ------------------------------------------------------------- */

/* Keep a control receive posted; a message already here is handled now
 * (tern_irecv completes at once, with no request, when it can). */
static void post_ctrl(iofwd_t *d, iofwd_client_t *c)
{
    while (c->ctrl == NULL && !c->dead && !c->bye && !c->closing) {
        tern_recv_info_t info;
        tern_status_t st = tern_irecv(d->w, c->ctrl_buf, sizeof(c->ctrl_buf), c->peer,
                                      TERN_IO_TAG_CTRL, TERN_IO_SPACE, &info, &c->ctrl);
        if (st == TERN_INPROGRESS)
            return;
        c->ctrl = NULL;
        if (st != TERN_OK && st != TERN_ERR_TRUNCATED)
            client_dead(d, c, tern_last_error());
        else
            on_ctrl(d, c, st == TERN_ERR_TRUNCATED ? SIZE_MAX : info.length);
    }
}

static void accept_clients(iofwd_t *d)
{
    tern_job_t *job;
    while (tern_port_accept(d->ctx, &job) == TERN_OK) {
        iofwd_client_t *c = calloc(1, sizeof(*c));
        if (c == NULL) {
            tern_disconnect(job);
            continue;
        }
        c->job = job;
        c->peer = tern_job_peer(job, 0);
        c->fd = -1;
        snprintf(c->name, sizeof(c->name), "client %d", c->peer);
        c->next = d->clients;
        d->clients = c;
        d->nclients++;
        post_ctrl(d, c);
    }
}

/* The rank is gone: its writes not held leave no record (the writer cuts
 * or punches them after the pieces queued before), then its file closes. */
static void client_dead(iofwd_t *d, iofwd_client_t *c, const char *why)
{
    if (c->dead)
        return;
    c->dead = true;
    iofwd_write_t *first = c->writes;
    while (first != NULL && first->held)
        first = first->next;
    if (first != NULL && !c->bye)
        tern_warn("iofwd: %s is gone (%s): its writes from %llu on, not held, are dropped",
                  c->name, why, (unsigned long long)first->seq);
    if (first != NULL && c->fd >= 0) { /* queued once no piece of it is at a writer */
        c->drop = true;
        c->drop_off = first->off;
    }
}

/* A job for the writer that comes after everything of c there. */
static void queue_job(iofwd_t *d, iofwd_client_t *c, iofwd_job_t *j)
{
    j->c = c;
    j->writer = d->next_writer++ % d->nwriters;
    c->at_writer++;
    iofwd_writer_queue(d, j);
}

static void free_client(iofwd_t *d, iofwd_client_t *c)
{
    iofwd_client_t **p = &d->clients;
    while (*p != c)
        p = &(*p)->next;
    *p = c->next;
    d->nclients--;
    for (iofwd_write_t *w = c->writes, *n; w != NULL; w = n) {
        n = w->next;
        free(w);
    }
    if (c->ctrl != NULL) {
        tern_disconnect(c->job);
        c->job = NULL;
        tern_wait(d->w, c->ctrl, NULL);
    }
    if (c->job != NULL)
        tern_disconnect(c->job);
    free(c);
}

/* A client with nothing left at the writer and no pulls: finish it. */
static void maybe_finish(iofwd_t *d, iofwd_client_t *c)
{
    if (c->at_writer > 0)
        return;
    for (iofwd_job_t *p = d->pulls; p != NULL; p = p->next)
        if (p->c == c)
            return;
    if (c->drop) { /* its unheld writes go: cut (per-rank file) or punched out */
        iofwd_job_t *j = calloc(1, sizeof(*j));
        if (j == NULL)
            return;
        *j = (iofwd_job_t){.kind = JOB_DROP, .fd = c->fd, .off = c->drop_off,
                           .len = c->next_off - c->drop_off,
                           .truncate = c->mode == TERN_IO_PER_RANK};
        c->drop = false;
        queue_job(d, c, j);
        return;
    }
    if (c->fd >= 0 && (c->dead || c->closing || (c->bye && c->writes == NULL))) {
        iofwd_job_t *j = calloc(1, sizeof(*j));
        if (j == NULL)
            return;
        *j = (iofwd_job_t){.kind = JOB_CLOSE, .fd = c->fd,
                           .sync = (c->flags & TERN_IO_FLAG_SYNC) != 0};
        c->fd = -1;
        queue_job(d, c, j);
        return;
    }
    if (c->fd < 0 && (c->dead || c->closing || (c->bye && c->writes == NULL))) {
        if (!c->dead && c->bye) {
            tern_io_msg_t m = {.type = TERN_IO_FINISHED,
                               .u.finished = {.status = c->wstatus, .bytes = c->bytes}};
            send_msg(d, c, &m);
        }
        free_client(d, c);
    }
}

static void poll_ctrl(iofwd_t *d)
{
    for (iofwd_client_t *c = d->clients, *n; c != NULL; c = n) {
        n = c->next;
        while (c->ctrl != NULL && !c->dead) {
            tern_recv_info_t info;
            tern_status_t st = tern_test(d->w, c->ctrl, &info);
            if (st == TERN_INPROGRESS)
                break;
            c->ctrl = NULL;
            if (st != TERN_OK && st != TERN_ERR_TRUNCATED) {
                client_dead(d, c, tern_last_error());
                break;
            }
            on_ctrl(d, c, st == TERN_ERR_TRUNCATED ? SIZE_MAX : info.length);
            post_ctrl(d, c);
        }
        maybe_finish(d, c);
    }
}

/* ---- pulls --------------------------------------------------------------- */

static void pulled(iofwd_t *d, iofwd_job_t *j, tern_status_t st);

/* The next piece to pull: round robin over the clients. */
static void post_pulls(iofwd_t *d)
{
    bool any = true;
    while (d->free_pieces != NULL && any) {
        any = false;
        for (iofwd_client_t *c = d->clients; c != NULL && d->free_pieces != NULL; c = c->next) {
            if (c->dead)
                continue;
            iofwd_write_t *w = c->writes;
            while (w != NULL && w->posted == w->npieces)
                w = w->next;
            if (w == NULL || w->room_wait) /* (its pieces must come in order) */
                continue;
            iofwd_job_t *j = d->free_pieces;
            uint64_t o = (uint64_t)w->posted * d->cfg.staging;
            uint64_t n = w->len - o < d->cfg.staging ? w->len - o : d->cfg.staging;
            tern_recv_info_t info;
            /* a refused write's pieces are taken into 0 bytes: nothing moves */
            tern_status_t st = tern_irecv(d->w, j->buf, w->status == TERN_OK ? n : 0, c->peer,
                                          TERN_IO_TAG_DATA, TERN_IO_SPACE, &info, &j->rq);
            if (st == TERN_ERR_TRUNCATED && w->status != TERN_OK)
                st = TERN_OK;
            if (st != TERN_INPROGRESS && st != TERN_OK) {
                client_dead(d, c, tern_last_error());
                continue;
            }
            d->free_pieces = j->next;
            j->kind = JOB_PIECE;
            j->c = c;
            j->wr = w;
            j->fd = c->fd;
            j->off = w->off + o;
            j->len = n;
            j->sync = (c->flags & TERN_IO_FLAG_SYNC) && w->posted + 1 == w->npieces;
            w->posted++;
            any = true;
            if (st == TERN_OK) { /* it was here already (an eager piece) */
                j->rq = NULL;
                pulled(d, j, TERN_OK);
                continue;
            }
            /* in posting order, the order the engine moves them in: the
             * first one tested is the first one done */
            j->next = NULL;
            iofwd_job_t **t = &d->pulls;
            while (*t != NULL)
                t = &(*t)->next;
            *t = j;
        }
    }
}

static void maybe_held(iofwd_t *d, iofwd_client_t *c, iofwd_write_t *w)
{
    if (w->held || w->received < w->npieces)
        return;
    w->held = true;
    send_ack(d, c, TERN_IO_HELD, w->seq, w->status, w->werr);
}

/* A piece is here (st TERN_OK) or will never be: to the writer, or back
 * to the pool. */
static void pulled(iofwd_t *d, iofwd_job_t *j, tern_status_t st)
{
    iofwd_client_t *c = j->c;
    if (st == TERN_ERR_TRUNCATED && j->wr->status != TERN_OK)
        st = TERN_OK; /* a refused write's piece, taken into 0 bytes */
    if (st != TERN_OK || c->dead) {
        if (st != TERN_OK)
            client_dead(d, c, tern_last_error());
        j->next = d->free_pieces;
        d->free_pieces = j;
        return;
    }
    if (j->wr->status != TERN_OK) { /* nothing to write */
        j->wr->received++;
        j->wr->written++;
        maybe_held(d, c, j->wr);
        retire(d, c);
        j->next = d->free_pieces;
        d->free_pieces = j;
        return;
    }
    d->pulled += j->len;
    j->wr->received++;
    maybe_held(d, c, j->wr);
    queue_job(d, c, j);
}

static void poll_pulls(iofwd_t *d)
{
    for (iofwd_job_t **p = &d->pulls; *p != NULL;) {
        iofwd_job_t *j = *p;
        tern_status_t st = tern_test(d->w, j->rq, NULL);
        if (st == TERN_INPROGRESS) {
            p = &j->next;
            continue;
        }
        *p = j->next;
        j->rq = NULL;
        pulled(d, j, st);
    }
}

/* ---- the writer's results ------------------------------------------------ */

/* WRITE_DONE for the writes at the head that are complete, in order. */
static void retire(iofwd_t *d, iofwd_client_t *c)
{
    iofwd_write_t *w;
    while ((w = c->writes) != NULL && w->held && w->written == w->npieces) {
        tern_status_t st = w->status != TERN_OK ? w->status : w->wstatus;
        if (st == TERN_OK) {
            c->bytes += w->len, d->stored += w->len;
        } else if (w->status == TERN_OK) { /* failed in part: no partial record */
            if (c->wstatus == TERN_OK)
                c->wstatus = st;
            iofwd_job_t *j = calloc(1, sizeof(*j));
            if (j != NULL) {
                *j = (iofwd_job_t){.kind = JOB_DROP, .fd = c->fd, .off = w->off, .len = w->len};
                queue_job(d, c, j);
            }
        }
        send_ack(d, c, TERN_IO_WRITE_DONE, w->seq, st, w->werr);
        c->writes = w->next;
        if (c->writes == NULL)
            c->wtail = NULL;
        free(w);
    }
}

static void on_written(iofwd_t *d, iofwd_job_t *j)
{
    iofwd_client_t *c = j->c;
    iofwd_write_t *w = j->wr;
    c->at_writer--;
    switch (j->kind) {
    case JOB_PIECE:
        if (j->status != TERN_OK && w->wstatus == TERN_OK) {
            w->wstatus = j->status;
            w->werr = j->err;
            tern_warn("iofwd: %s: write %llu: %s", c->name, (unsigned long long)w->seq,
                      strerror(j->err));
        }
        w->written++;
        w->done_bytes += j->len;
        retire(d, c);
        j->next = d->free_pieces;
        d->free_pieces = j;
        break;
    case JOB_DROP:
    case JOB_CLOSE:
        if (j->status != TERN_OK)
            tern_warn("iofwd: %s: %s: %s", c->name, j->kind == JOB_DROP ? "dropping its "
                      "unheld writes" : "closing its file", strerror(j->err));
        free(j);
        break;
    }
}

/* ---- main ---------------------------------------------------------------- */

static int publish_port(iofwd_t *d, const char *port)
{
    char tmp[300], path[300];
    snprintf(tmp, sizeof(tmp), "%s/port.%d", d->dir, (int)getpid());
    snprintf(path, sizeof(path), "%s/port", d->dir);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "%d %s\n", (int)getpid(), port);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        return -1;
    return 0;
}

/* Idle long enough: leave, unless a starter holds the lock (it is
 * attaching) or a connection came meanwhile. */
static bool may_exit(iofwd_t *d)
{
    char path[300];
    snprintf(path, sizeof(path), "%s/lock", d->dir);
    d->lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (d->lock < 0 || flock(d->lock, LOCK_EX | LOCK_NB) != 0) {
        if (d->lock >= 0)
            close(d->lock);
        return false;
    }
    accept_clients(d);
    if (d->nclients > 0) {
        close(d->lock);
        return false;
    }
    pid_t pid;
    char port[TERN_PORT_NAME_MAX];
    snprintf(path, sizeof(path), "%s/port", d->dir);
    if (tern_iofwd_read_port(d->dir, &pid, port, sizeof(port)) == TERN_OK && pid == getpid())
        unlink(path);
    return true; /* the lock goes with the process */
}

static int usage(void)
{
    fprintf(stderr, "usage: tern-iofwd --dir DIR\n"
                    "  the node's I/O-forwarding daemon; tern_io_init starts it (docs/iofwd.md)\n");
    return 2;
}

int main(int argc, char **argv)
{
    static iofwd_t d;
    if (argc != 3 || strcmp(argv[1], "--dir") != 0)
        return usage();
    snprintf(d.dir, sizeof(d.dir), "%s", argv[2]);
    signal(SIGPIPE, SIG_IGN);
    /* a rank bound to a core started us: its binding is not ours (the pulls
     * and the writers want every core the node lets us use) */
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int i = 0; i < CPU_SETSIZE; i++)
        CPU_SET(i, &all);
    (void)sched_setaffinity(0, sizeof(all), &all);
    /* A context of its own, whose idle waits sleep whatever TERN_WAIT_MODE
     * the rank that started us has: a daemon beside the job must not take
     * a core from its ranks when it has nothing to do. */
    const tern_init_params_t params = {.struct_size = sizeof(params),
                                       .fields = TERN_INIT_F_WAIT_MODE | TERN_INIT_F_WIREUP,
                                       .wait_mode = TERN_WAIT_BLOCK,
                                       .wireup = TERN_WIREUP_STANDALONE};
    if (tern_iofwd_config_load(&d.cfg) != TERN_OK ||
        tern_init_ex(&params, &d.ctx) != TERN_OK) {
        tern_warn("iofwd daemon: %s", tern_last_error());
        return 1;
    }
    d.w = tern_context_worker(d.ctx);
    d.nwriters = (unsigned)d.cfg.writers;
    char port[TERN_PORT_NAME_MAX];
    if (tern_port_open(d.ctx, port) != TERN_OK) {
        tern_warn("iofwd daemon: %s", tern_last_error());
        return 1;
    }
    /* the staging pool, touched now so that no pull waits for a page fault */
    size_t pool = (size_t)(d.cfg.staging * d.cfg.buffers);
    char *mem = mmap(NULL, pool, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        tern_warn("iofwd daemon: staging pool of %zu bytes: %s", pool, strerror(errno));
        return 1;
    }
    (void)madvise(mem, pool, MADV_HUGEPAGE);
    memset(mem, 0, pool);
    for (uint64_t i = 0; i < d.cfg.buffers; i++) {
        iofwd_job_t *j = calloc(1, sizeof(*j));
        if (j == NULL)
            return 1;
        j->buf = mem + i * d.cfg.staging;
        j->next = d.free_pieces;
        d.free_pieces = j;
    }
    if (iofwd_writer_start(&d) != 0 || publish_port(&d, port) != 0) {
        tern_warn("iofwd daemon: writer threads or port file in %s: %s", d.dir, strerror(errno));
        return 1;
    }
    long idle_since = now_ms();
    for (;;) {
        accept_clients(&d);
        for (iofwd_job_t *j = iofwd_writer_take(&d), *n; j != NULL; j = n) {
            n = j->next;
            on_written(&d, j);
        }
        recheck_room(&d);
        poll_pulls(&d);
        /* requests first, then pulls for them: the pieces' RTS may be here
         * already (taken off the socket while the request was read), and
         * nothing would wake a wait for them */
        poll_ctrl(&d);
        post_pulls(&d);
        if (d.nclients > 0) {
            idle_since = now_ms();
        } else if (now_ms() - idle_since >= (long)d.cfg.linger_ms && may_exit(&d)) {
            break;
        }
        tern_worker_wait(d.w, d.nclients > 0 ? 100 : 50);
    }
    iofwd_writer_stop(&d);
    if (d.cfg.report)
        tern_warn("iofwd daemon: exiting; %llu bytes pulled, %llu written",
                  (unsigned long long)d.pulled, (unsigned long long)d.stored);
    tern_finalize(d.ctx);
    munmap(mem, pool);
    return 0;
}
