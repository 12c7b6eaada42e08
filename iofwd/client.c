/*
 * iofwd client (include/tern/iofwd.h; docs/iofwd.md): one session per
 * process on worker 0 of the process's context.
 *
 * A write: WRITE_REQ {seq, offset, len}, then the bytes as one message per
 * staging buffer (TERN_IO_TAG_DATA; above the eager limit a rendezvous the
 * daemon pulls with the LMT get), then the daemon's HELD {seq} says it holds
 * them all (or why the write failed as a whole) and WRITE_DONE {seq} later
 * that they are written.  The control receive is always posted; a failed
 * one means the daemon is gone: every write not yet HELD fails, and those
 * HELD but not WRITE_DONE are named as lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "engine/log.h"
#include "iofwd/proto.h"
#include "iofwd/start.h"
#include <tern/iofwd.h>

struct tern_io_request {
    tern_io_request_t *next;      /* in io.pending, oldest first */
    uint64_t seq, off, len;
    tern_request_t **sends;       /* the data messages still in flight */
    unsigned nsends;
    bool held, user;
    tern_status_t status;         /* final once held (or failed) */
    char why[512];
};

static struct {
    bool up;
    tern_context_t *ctx;
    bool own_ctx, blocking;
    tern_worker_t *w;
    tern_job_t *job;
    int peer;
    char *buf;
    size_t len;
    int rank;
    uint32_t credits;
    uint64_t staging;
    uint64_t next_seq, next_off;
    uint64_t written;             /* writes 0 .. written-1 are WRITE_DONE */
    uint64_t nheld;               /* writes 0 .. nheld-1 are HELD (or refused) */
    uint64_t refused[8];          /* refused writes whose WRITE_DONE is due */
    unsigned nrefused;
    unsigned inflight;
    tern_io_request_t *pending, *tail;
    tern_request_t *ctrl;
    unsigned char ctrl_buf[TERN_IO_MSG_BYTES];
    tern_status_t late;           /* first failure after a hand-over */
    char late_msg[256];
    tern_status_t dead;           /* the daemon's connection failed */
    char dead_msg[384];
    bool finished;
    tern_io_finished_t fin;
    tern_iofwd_daemon_t d;
    tern_iofwd_config_t cfg;
} io = {.d.lock = -1};

static void handle(const tern_io_msg_t *m);
static void daemon_lost(tern_status_t st, const char *cause);

/* A message that arrived: handled; malformed: the daemon is not usable. */
static void on_ctrl(size_t len)
{
    tern_io_msg_t m;
    if (tern_io_decode(io.ctrl_buf, len, &m) == TERN_OK)
        handle(&m);
    else
        daemon_lost(TERN_ERR_MALFORMED, tern_last_error());
}

/* Keep the control receive posted (until FINISHED); a message already
 * here completes tern_irecv at once, without a request: handled now. */
static void post_ctrl(void)
{
    while (io.ctrl == NULL && io.dead == TERN_OK && !io.finished) {
        tern_recv_info_t info;
        tern_status_t st = tern_irecv(io.w, io.ctrl_buf, sizeof(io.ctrl_buf), io.peer,
                                      TERN_IO_TAG_CTRL, TERN_IO_SPACE, &info, &io.ctrl);
        if (st == TERN_INPROGRESS)
            return;
        io.ctrl = NULL;
        if (st != TERN_OK)
            daemon_lost(st, tern_last_error());
        else
            on_ctrl(info.length);
    }
}

static tern_status_t send_msg(const tern_io_msg_t *m)
{
    unsigned char b[TERN_IO_MSG_BYTES];
    size_t n = tern_io_encode(m, b, sizeof(b));
    return tern_send(io.w, b, n, io.peer, TERN_IO_TAG_CTRL, TERN_IO_SPACE);
}

static tern_io_request_t *find(uint64_t seq)
{
    for (tern_io_request_t *r = io.pending; r != NULL; r = r->next)
        if (r->seq == seq)
            return r;
    return NULL;
}

static void settle(tern_io_request_t *r, tern_status_t st, const char *why)
{
    if (r->held)
        return;
    r->held = true;
    r->status = st;
    snprintf(r->why, sizeof(r->why), "%s", why != NULL ? why : "");
    io.inflight--;
}

/* The daemon is gone: every write not yet held fails, naming what is lost. */
static void daemon_lost(tern_status_t st, const char *cause)
{
    if (io.dead != TERN_OK)
        return;
    io.dead = st != TERN_OK ? st : TERN_ERR_PEER_FAILED;
    int n = snprintf(io.dead_msg, sizeof(io.dead_msg), "iofwd: the daemon (pid %d) is gone (%s)",
                     (int)io.d.pid, cause);
    if (io.nheld > io.written && n > 0 && (size_t)n < sizeof(io.dead_msg))
        snprintf(io.dead_msg + n, sizeof(io.dead_msg) - (size_t)n,
                 "; writes %llu..%llu of rank %d were held but not written: lost",
                 (unsigned long long)io.written, (unsigned long long)io.nheld - 1, io.rank);
    for (tern_io_request_t *r = io.pending; r != NULL; r = r->next)
        if (!r->held)
            settle(r, io.dead, io.dead_msg);
    /* closing the connection fails what is still in flight on it */
    if (io.job != NULL) {
        tern_disconnect(io.job);
        io.job = NULL;
    }
}

static void handle(const tern_io_msg_t *m)
{
    const tern_io_write_done_t *wd = &m->u.write_done;
    char why[200];
    switch (m->type) {
    case TERN_IO_HELD: {
        tern_io_request_t *r = find(wd->seq);
        if (r == NULL)
            return;
        if (wd->status != TERN_OK)
            snprintf(why, sizeof(why), "iofwd: write %llu (%llu bytes at offset %llu) failed "
                     "in the daemon: %s%s%s", (unsigned long long)r->seq,
                     (unsigned long long)r->len, (unsigned long long)r->off,
                     tern_strerror(wd->status), wd->err ? ": " : "",
                     wd->err ? strerror(wd->err) : "");
        if (wd->seq == io.nheld)
            io.nheld++;
        if (wd->status != TERN_OK && io.nrefused < 8)
            io.refused[io.nrefused++] = wd->seq;
        settle(r, wd->status, wd->status != TERN_OK ? why : NULL);
        return;
    }
    case TERN_IO_WRITE_DONE:
        if (wd->seq + 1 > io.written)
            io.written = wd->seq + 1;
        for (unsigned i = 0; i < io.nrefused; i++)
            if (io.refused[i] == wd->seq) { /* its failure was tern_io_write's */
                io.refused[i] = io.refused[--io.nrefused];
                return;
            }
        if (wd->status != TERN_OK && io.late == TERN_OK) {
            io.late = wd->status;
            snprintf(io.late_msg, sizeof(io.late_msg), "iofwd: write %llu was handed over but "
                     "not written: %s%s%s", (unsigned long long)wd->seq,
                     tern_strerror(wd->status), wd->err ? ": " : "",
                     wd->err ? strerror(wd->err) : "");
        }
        return;
    case TERN_IO_FINISHED:
        io.finished = true;
        io.fin = m->u.finished;
        return;
    case TERN_IO_ERROR: /* a request of ours refused: the session cannot go on */
        snprintf(why, sizeof(why), "it refused a request: %s", m->u.error.msg);
        daemon_lost(m->u.error.status, why);
        return;
    default:
        return;
    }
}

/* One round: progress, the control messages that arrived, the sends. */
static void progress(void)
{
    while (io.ctrl != NULL && io.dead == TERN_OK) {
        tern_recv_info_t info;
        tern_status_t st = tern_test(io.w, io.ctrl, &info);
        if (st == TERN_INPROGRESS)
            break;
        io.ctrl = NULL;
        if (st != TERN_OK) {
            daemon_lost(st, tern_last_error());
            break;
        }
        on_ctrl(info.length);
        post_ctrl(); /* not after FINISHED: the daemon closes the connection next */
    }
    for (tern_io_request_t *r = io.pending; r != NULL; r = r->next)
        for (unsigned i = 0; i < r->nsends; i++) {
            if (r->sends[i] == NULL)
                continue;
            tern_status_t st = tern_test(io.w, r->sends[i], NULL);
            if (st == TERN_INPROGRESS)
                continue;
            r->sends[i] = NULL;
            if (st != TERN_OK)
                daemon_lost(st, tern_last_error());
        }
}

static bool sends_done(const tern_io_request_t *r)
{
    for (unsigned i = 0; i < r->nsends; i++)
        if (r->sends[i] != NULL)
            return false;
    return true;
}

/* Progress until done(arg); blocking sessions sleep between rounds. */
static void wait_until(bool (*done)(const void *), const void *arg)
{
    for (;;) {
        progress();
        if (done(arg))
            return;
        if (io.blocking)
            tern_worker_wait(io.w, 100);
    }
}

static bool req_done(const void *arg)
{
    const tern_io_request_t *r = arg;
    return r->held && (sends_done(r) || io.dead != TERN_OK);
}

static bool credit_free(const void *arg) { return io.inflight < io.credits || io.dead != TERN_OK; }

static void unlink_req(tern_io_request_t *r)
{
    tern_io_request_t **p = &io.pending;
    while (*p != r)
        p = &(*p)->next;
    *p = r->next;
    if (io.tail == r) {
        io.tail = NULL;
        for (tern_io_request_t *q = io.pending; q != NULL; q = q->next)
            io.tail = q;
    }
}

/* A settled request's status (its message made the last error), freed. */
static tern_status_t release(tern_io_request_t *r)
{
    tern_status_t st = r->status;
    if (st != TERN_OK)
        tern_error(st, "%s", r->why);
    unlink_req(r);
    for (unsigned i = 0; i < r->nsends; i++)
        if (r->sends[i] != NULL) /* the daemon is gone: they fail (or did) */
            tern_wait(io.w, r->sends[i], NULL);
    free(r->sends);
    free(r);
    return st;
}

static tern_status_t not_up(const char *call)
{
    return tern_error(TERN_ERR_INVALID_PARAM, "%s: no iofwd session (tern_io_init first)", call);
}

tern_status_t tern_io_iwrite(size_t offset, size_t len, tern_io_request_t **out)
{
    if (!io.up)
        return not_up("tern_io_iwrite");
    if (out == NULL || offset > io.len || len > io.len - offset)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_io_iwrite: [%zu, +%zu) is not inside the "
                          "%zu-byte buffer given to tern_io_init (or req is NULL)", offset, len,
                          io.len);
    if (io.dead != TERN_OK)
        return tern_error(io.dead, "%s", io.dead_msg);
    wait_until(credit_free, NULL);
    if (io.dead != TERN_OK)
        return tern_error(io.dead, "%s", io.dead_msg);
    unsigned nsends = (unsigned)((len + io.staging - 1) / io.staging);
    tern_io_request_t *r = calloc(1, sizeof(*r));
    if (r == NULL || (nsends && (r->sends = calloc(nsends, sizeof(*r->sends))) == NULL)) {
        free(r);
        return tern_error(TERN_ERR_NO_MEMORY, "tern_io_iwrite: request of %u pieces", nsends);
    }
    r->seq = io.next_seq;
    r->off = io.next_off;
    r->len = len;
    tern_io_msg_t m = {.type = TERN_IO_WRITE_REQ,
                       .u.write_req = {.seq = r->seq, .offset = r->off, .len = len}};
    tern_status_t st = send_msg(&m);
    for (unsigned i = 0; st == TERN_OK && i < nsends; i++) {
        size_t o = (size_t)i * io.staging, n = len - o < io.staging ? len - o : io.staging;
        st = tern_isend(io.w, io.buf + offset + o, n, io.peer, TERN_IO_TAG_DATA, TERN_IO_SPACE,
                        &r->sends[r->nsends]);
        if (st == TERN_OK || st == TERN_INPROGRESS)
            r->nsends++, st = TERN_OK;
    }
    io.next_seq++;
    io.next_off += len;
    io.inflight++;
    if (io.tail != NULL)
        io.tail->next = r;
    else
        io.pending = r;
    io.tail = r;
    r->user = true;
    if (st != TERN_OK) { /* the connection failed under us: the daemon is gone */
        daemon_lost(st, tern_last_error());
    }
    *out = r;
    return TERN_OK;
}

tern_status_t tern_io_test(tern_io_request_t *r)
{
    if (!io.up || r == NULL)
        return not_up("tern_io_test");
    progress();
    return req_done(r) ? release(r) : TERN_INPROGRESS;
}

tern_status_t tern_io_wait(tern_io_request_t *r)
{
    if (!io.up || r == NULL)
        return not_up("tern_io_wait");
    wait_until(req_done, r);
    return release(r);
}

tern_status_t tern_io_write(size_t len)
{
    tern_io_request_t *r;
    tern_status_t st = tern_io_iwrite(0, len, &r);
    return st != TERN_OK ? st : tern_io_wait(r);
}

/* ---- session ------------------------------------------------------------ */

/* args -> CONNECT's destination, and the daemon's settings as NAME=value */
static tern_status_t parse_args(const char *args, tern_io_connect_t *c, char **env, int max)
{
    static const struct { const char *key, *var; } daemon_keys[] = {
        {"staging", "TERN_IOFWD_STAGING"}, {"buffers", "TERN_IOFWD_BUFFERS"},
        {"linger_ms", "TERN_IOFWD_LINGER_MS"}};
    char copy[2048];
    int nenv = 0;
    if (args == NULL || strlen(args) >= sizeof(copy))
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_io_init: args missing or too long "
                          "(dir=DIR or shared=FILE,region=BYTES)");
    strcpy(copy, args);
    for (char *save = NULL, *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *v = strchr(kv, '=');
        if (v == NULL)
            return tern_error(TERN_ERR_INVALID_PARAM, "tern_io_init: \"%s\" is not key=value", kv);
        *v++ = '\0';
        char *end;
        if (strcmp(kv, "dir") == 0 || strcmp(kv, "shared") == 0) {
            if (v[0] != '/' || strlen(v) >= sizeof(c->path))
                return tern_error(TERN_ERR_INVALID_PARAM, "tern_io_init: %s=%s is not an "
                                  "absolute path shorter than %zu", kv, v, sizeof(c->path));
            strcpy(c->path, v);
            c->mode = kv[0] == 'd' ? TERN_IO_PER_RANK : TERN_IO_SHARED;
        } else if (strcmp(kv, "region") == 0) {
            c->region = strtoull(v, &end, 0);
            if (*end == 'k' || *end == 'K')
                c->region <<= 10, end++;
            else if (*end == 'm' || *end == 'M')
                c->region <<= 20, end++;
            else if (*end == 'g' || *end == 'G')
                c->region <<= 30, end++;
            if (*end != '\0' || c->region == 0)
                return tern_error(TERN_ERR_INVALID_PARAM, "tern_io_init: region=%s is not a "
                                  "byte count", v);
        } else if (strcmp(kv, "sync") == 0) {
            if (strcmp(v, "1") == 0)
                c->flags |= TERN_IO_FLAG_SYNC;
        } else {
            size_t k = 0;
            while (k < sizeof(daemon_keys) / sizeof(daemon_keys[0]) &&
                   strcmp(kv, daemon_keys[k].key) != 0)
                k++;
            if (k == sizeof(daemon_keys) / sizeof(daemon_keys[0]))
                return tern_error(TERN_ERR_INVALID_PARAM, "tern_io_init: unknown key \"%s\" (dir, "
                                  "shared, region, sync, staging, buffers, linger_ms)", kv);
            if (nenv + 1 >= max || asprintf(&env[nenv], "%s=%s", daemon_keys[k].var, v) < 0)
                return tern_error(TERN_ERR_NO_MEMORY, "tern_io_init: daemon settings");
            nenv++;
        }
    }
    if (c->mode == 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_io_init: args name no destination "
                          "(dir=DIR or shared=FILE,region=BYTES)");
    if ((c->mode == TERN_IO_SHARED) != (c->region != 0))
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_io_init: region= goes with shared= "
                          "(and shared= needs it)");
    return TERN_OK;
}

/* CONNECT, and the daemon's CONNECTED (or ERROR) */
static tern_status_t connect_daemon(const tern_io_connect_t *c)
{
    tern_status_t st = tern_port_connect(io.ctx, io.d.port, &io.job);
    if (st != TERN_OK)
        return st;
    io.peer = tern_job_peer(io.job, 0);
    /* with Yama's ptrace_scope 1 the daemon may only read this process
     * (CMA) when told so; without Yama the call fails and changes nothing */
    (void)prctl(PR_SET_PTRACER, (unsigned long)io.d.pid, 0, 0, 0);
    tern_io_msg_t m = {.type = TERN_IO_CONNECT, .u.connect = *c};
    if ((st = send_msg(&m)) != TERN_OK)
        return st;
    unsigned char b[TERN_IO_MSG_BYTES];
    tern_recv_info_t info;
    if ((st = tern_recv(io.w, b, sizeof(b), io.peer, TERN_IO_TAG_CTRL, TERN_IO_SPACE, &info)) !=
        TERN_OK)
        return tern_error_wrap(st, "iofwd: no answer to CONNECT from the daemon (pid %d)",
                               (int)io.d.pid);
    if ((st = tern_io_decode(b, info.length, &m)) != TERN_OK)
        return st;
    if (m.type == TERN_IO_ERROR)
        return tern_error(m.u.error.status, "iofwd: the daemon refused CONNECT: %s",
                          m.u.error.msg);
    if (m.type != TERN_IO_CONNECTED)
        return tern_error(TERN_ERR_MALFORMED, "iofwd: the daemon answered CONNECT with %s",
                          tern_io_type_name(m.type));
    io.credits = m.u.connected.credits;
    io.staging = m.u.connected.staging;
    return TERN_OK;
}

static void reset(void)
{
    if (io.job != NULL)
        tern_disconnect(io.job);
    if (io.own_ctx && io.ctx != NULL)
        tern_finalize(io.ctx);
    tern_iofwd_unlock(&io.d);
    memset(&io, 0, sizeof(io));
    io.d.lock = -1;
}

tern_status_t tern_io_init(void *buffer, size_t len, int rank, int ranks, const char *args,
                           int blocking)
{
    if (io.up)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_io_init: a session is open "
                          "(tern_io_finalize it first)");
    if (buffer == NULL || len == 0 || ranks <= 0 || rank < 0 || rank >= ranks)
        return tern_error(TERN_ERR_INVALID_PARAM, "tern_io_init: buffer %p of %zu bytes, rank %d "
                          "of %d: need a buffer and 0 <= rank < ranks", buffer, len, rank, ranks);
    /* the daemon reads it with process_vm_readv, whose lengths are ssize_t,
     * and tern_io_iwrite's piece count must not wrap */
    tern_status_t st = tern_len_check(len, "tern_io_init: buffer");
    if (st != TERN_OK)
        return st;
    tern_io_connect_t c = {.rank = (uint32_t)rank, .ranks = (uint32_t)ranks,
                           .pid = (int32_t)getpid(), .buf_addr = (uint64_t)(uintptr_t)buffer,
                           .buf_len = len};
    char *env[8] = {NULL};
    st = parse_args(args, &c, env, 8);
    if (st == TERN_OK)
        st = tern_iofwd_config_load(&io.cfg);
    if (st == TERN_OK) {
        io.ctx = tern_context_live();
        if (io.ctx == NULL) { /* a context of our own; blocking: sleep in tern_worker_wait */
            const tern_init_params_t params = {
                .struct_size = sizeof(params),
                .fields = TERN_INIT_F_WIREUP | (blocking ? TERN_INIT_F_WAIT_MODE : 0),
                .wireup = TERN_WIREUP_STANDALONE,
                .wait_mode = TERN_WAIT_BLOCK};
            st = tern_init_ex(&params, &io.ctx);
            io.own_ctx = st == TERN_OK;
        }
    }
    if (st == TERN_OK) {
        io.w = &io.ctx->workers[0];
        io.buf = buffer;
        io.len = len;
        io.rank = rank;
        io.blocking = blocking != 0;
        snprintf(c.job, sizeof(c.job), "%s", io.ctx->pmix.nspace);
        st = tern_iofwd_attach(&io.cfg, env, &io.d);
    }
    for (int i = 0; env[i] != NULL; i++)
        free(env[i]);
    if (st == TERN_OK)
        st = connect_daemon(&c);
    if (st == TERN_OK) {
        post_ctrl();
        if (io.dead != TERN_OK)
            st = tern_error(io.dead, "%s", io.dead_msg);
    }
    tern_iofwd_unlock(&io.d); /* connected (or failed): the daemon may decide to exit */
    if (st != TERN_OK) {
        char why[512];
        snprintf(why, sizeof(why), "%s", tern_last_error());
        bool started = io.d.started;
        pid_t pid = io.d.pid;
        reset();
        if (started) { /* ours, and useless to us: it exits alone after its linger time */
            waitpid(pid, NULL, WNOHANG);
        }
        return tern_error(st, "%s", why);
    }
    io.up = true;
    return TERN_OK;
}

static bool finished(const void *arg) { return io.finished || io.dead != TERN_OK; }

tern_status_t tern_io_finalize(void)
{
    if (!io.up)
        return not_up("tern_io_finalize");
    /* internal writes the caller never waited for cannot exist (tern_io_write
     * waits); the user's requests are waited for and freed here */
    while (io.pending != NULL) {
        tern_io_request_t *r = io.pending;
        wait_until(req_done, r);
        tern_status_t st = release(r);
        if (st != TERN_OK && io.late == TERN_OK) {
            io.late = st;
            snprintf(io.late_msg, sizeof(io.late_msg), "%s", tern_last_error());
        }
    }
    tern_status_t st = TERN_OK;
    if (io.dead != TERN_OK) {
        st = tern_error(io.dead, "%s", io.dead_msg);
    } else {
        tern_io_msg_t m = {.type = TERN_IO_BYE};
        st = send_msg(&m);
        if (st == TERN_OK)
            wait_until(finished, NULL);
    }
    if (st == TERN_OK && !io.finished)
        st = tern_error(io.dead, "%s", io.dead_msg);
    else if (st == TERN_OK && io.fin.status != TERN_OK)
        st = tern_error(io.fin.status, "iofwd: the daemon could not write everything of rank %d "
                        "(%llu bytes written)", io.rank, (unsigned long long)io.fin.bytes);
    else if (st == TERN_OK && io.late != TERN_OK)
        st = tern_error(io.late, "%s", io.late_msg);
    if (io.job != NULL) {
        tern_disconnect(io.job);
        io.job = NULL;
    }
    if (io.ctrl != NULL) { /* the last control receive: failed with the connection */
        tern_wait(io.w, io.ctrl, NULL);
        io.ctrl = NULL;
    }
    char why[512];
    snprintf(why, sizeof(why), "%s", tern_last_error());
    bool started = io.d.started;
    pid_t pid = io.d.pid;
    reset();
    if (started) /* ours: it exits once its last client is gone and its linger time passed */
        waitpid(pid, NULL, 0);
    if (st != TERN_OK)
        tern_error(st, "%s", why);
    return st;
}
