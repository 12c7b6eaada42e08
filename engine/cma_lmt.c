/*
 * The same-host copy on a VC (engine/cma.h): rendezvous modes
 * TERN_LMT_CMA_GET and TERN_LMT_CMA_PUT, which the engine runs itself over
 * whatever netmod carries the VC; the netmod's stream carries only the
 * packets.
 *
 *   get   RTS {OFFER: sender's pid, host, segments} -> the receiver reads
 *         with process_vm_readv in steps -> DONE to the sender.
 *   put   RTS {HELLO: sender's pid, host} -> CTS {KEY: the receiver's
 *         buffer} -> the sender writes with process_vm_writev -> DONE to
 *         the receiver (sent once the last write has returned, so the
 *         receiver's DONE orders after the data).
 *
 * Declining and refusal fall back to the netmod's own path for that message:
 *   - the receiver declines an RTS (another host, TERN_CMA here does not
 *     serve the VC, the kernel refused on this VC before, or the first read
 *     is refused) or the kernel refuses its read mid-way: COOKIE {REFUSED,
 *     reason, its request id} to the sender;
 *   - the sender, on REFUSED or when the kernel refuses its write: rewinds
 *     the message, lets the netmod choose and initiate its own mode (the
 *     engine's null mode without LMT ops), and sends COOKIE {FALLBACK, that
 *     mode, the netmod's cookie} to the receive request;
 *   - the receiver rewinds its buffer and starts that mode as if the RTS had
 *     named it (its CTS, the netmod's start_recv).
 * The message then moves from its first byte: what CMA moved is overwritten
 * (a refusal mid-way is the test hook's, or a peer turning non-dumpable).
 * Both sides stop offering CMA on the VC after any refusal or decline: the
 * kernel, the host and the setting do not change; a VC whose peer's
 * address names another host never offers it (tern_cma_vc_host).  A kernel
 * refusal is logged once per process; every decline and refusal is counted
 * (cma.* counters of tern_worker_counters).  Any other error fails the VC
 * naming the cause: a segment array that cannot be read when its cookie
 * arrives is a malformed cookie; in a step, ESRCH is the peer's death,
 * EFAULT its memory gone, short segments a malformed cookie.
 *
 * State while the engine holds a request: its netmod scratch (req->nm) as
 * tern_cma_req_t (the netmod has not touched it yet, or takes it over from
 * scratch at the fallback); the peer's segment array in req->tmpbuf (freed
 * with the request).  Transfers in progress wait on their worker's
 * cma_queue (req->link), one step per tern_progress.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cma.h"
#include "engine/engine_internal.h"
#include "engine/netmod.h"

enum cma_state {
    S_NONE = 0,
    S_GET_OFFERED, /* sender: the RTS offered our data; DONE or REFUSED next */
    S_PUT_OFFERED, /* sender: the RTS said hello; CTS {KEY} or REFUSED next */
    S_PUT_WRITING, /* sender: writing (on the worker's queue) */
    S_GET_READING, /* receiver: reading (on the worker's queue) */
    S_PUT_EXPOSED, /* receiver: our KEY went in the CTS; DONE or FALLBACK next */
    S_REFUSED,     /* receiver: REFUSED sent; FALLBACK next */
};

typedef struct tern_cma_req {
    tern_cma_xfer_t x;
    uint8_t state; /* enum cma_state */
} tern_cma_req_t;

/* the request's netmod scratch, the engine's while the copy holds it */
static inline tern_cma_req_t *cma_req(tern_request_t *r)
{
    return TERN_REQ_NM(r, tern_cma_req_t);
}

static const char *const counter_names[TERN_CMA_NCOUNTERS] = {
    [TERN_CMA_C_GET_BYTES] = "cma.get_bytes", [TERN_CMA_C_PUT_BYTES] = "cma.put_bytes",
    [TERN_CMA_C_GETS] = "cma.gets",           [TERN_CMA_C_PUTS] = "cma.puts",
    [TERN_CMA_C_REFUSED] = "cma.refused",     [TERN_CMA_C_DECLINED] = "cma.declined",
    [TERN_CMA_C_FALLBACKS] = "cma.fallbacks",
};

static inline void count(tern_vc_t *vc, int which, uint64_t n)
{
    vc->worker->cma_count[which] += n;
}

/* ---- choosing ------------------------------------------------------------------ */

bool tern_cma_usable(const tern_vc_t *vc)
{
    const tern_context_t *ctx = vc->worker->ctx;
    uint64_t scope = ctx->cfg.cma;
    if (vc->cma_off || scope == TERN_CMA_OFF || vc->nm->desc == &tern_netmod_self)
        return false;
    if (scope == TERN_CMA_OUTSIDE && vc->rank < ctx->size)
        return false;                                          /* a rank of this job */
    return tern_host_same(tern_host_self(), tern_host_self()); /* a boot id: known */
}

uint64_t tern_cma_threshold(const tern_vc_t *vc)
{
    uint64_t t = vc->worker->ctx->cfg.cma_threshold_bytes;
    return t != TERN_CMA_AUTO ? t : vc->nm->desc->cma_threshold;
}

/* Why the receiver of an offer from host h (pid) cannot take it; 0: it can. */
static int decline_reason(const tern_vc_t *vc, const tern_host_id_t *h)
{
    if (vc->cma_off)
        return TERN_CMA_R_REFUSED;
    uint64_t scope = vc->worker->ctx->cfg.cma;
    if (scope == TERN_CMA_OFF || (scope == TERN_CMA_OUTSIDE && vc->rank < vc->worker->ctx->size))
        return TERN_CMA_R_OFF;
    if (!tern_host_same(h, tern_host_self()))
        return TERN_CMA_R_OTHER_HOST;
    return 0;
}

static inline const char *reason_text(int reason) /* for debug lines */
{
    switch (reason) {
    case TERN_CMA_R_KERNEL:
        return "the kernel refused";
    case TERN_CMA_R_OTHER_HOST:
        return "another host";
    case TERN_CMA_R_OFF:
        return "TERN_CMA does not serve it";
    case TERN_CMA_R_REFUSED:
        return "refused on this connection before";
    default:
        return "?";
    }
}

/* The kernel (or the test hook) refused: log once per process, count, and
 * stop offering CMA on vc. */
void tern_cma_kernel_refused(tern_vc_t *vc, pid_t pid, bool write, int err)
{
    static atomic_bool warned; /* once per process, whichever worker sees it */
    if (!atomic_exchange_explicit(&warned, true, memory_order_relaxed))
        tern_warn("CMA (%s) with rank %d (pid %d) refused: %s; its large messages, puts and "
                  "gets now go by the %s netmod's own path (TERN_CMA=off silences this)",
                  write ? "process_vm_writev" : "process_vm_readv", vc->rank, (int)pid,
                  strerror(err), vc->nm->name);
    tern_debug("CMA with rank %d refused: %s", vc->rank, strerror(err));
    vc->cma_off = true;
    count(vc, TERN_CMA_C_REFUSED, 1);
}

/* Fail vc for an error of a CMA syscall other than a refusal. */
/* Fail vc for an error of a CMA step other than a refusal: the peer died
 * (ESRCH), its memory went away (EFAULT), or its segments were shorter
 * than it said (EMSGSIZE: a malformed cookie). */
static void fail_vc(tern_vc_t *vc, const tern_cma_xfer_t *x, ssize_t err)
{
    char why[200];
    if (err == -EMSGSIZE)
        snprintf(why, sizeof(why), "CMA segments of pid %d end before the %llu-byte transfer",
                 (int)x->pid, (unsigned long long)x->want);
    else
        snprintf(why, sizeof(why), "%s of pid %d at byte %llu: %s",
                 x->write ? "process_vm_writev" : "process_vm_readv", (int)x->pid,
                 (unsigned long long)x->done, strerror((int)-err));
    tern_vc_fail(vc,
                 err == -ESRCH      ? TERN_ERR_PEER_FAILED
                 : err == -EMSGSIZE ? TERN_ERR_MALFORMED
                                    : TERN_ERR_REMOTE_ACCESS,
                 why);
}

/* The segment array a cookie names could not be read (not a refusal): the
 * peer sent it with the RTS or CTS just now, so the cookie is wrong. */
static tern_status_t bad_segments(tern_vc_t *vc, const tern_cma_cookie_t *c, int err)
{
    return tern_error(TERN_ERR_MALFORMED,
                      "CMA cookie from rank %d: its %u segments at %#llx in pid %d cannot be "
                      "read: %s",
                      vc->rank, c->iovcnt, (unsigned long long)c->iov_addr, c->pid, strerror(-err));
}

/* Point r's transfer at the peer's segments from cookie c: inline, or the
 * whole array read from the peer.  0 or -errno (a refusal, or a bad array). */
static int take_segments(tern_vc_t *vc, tern_request_t *r, const tern_cma_cookie_t *c, bool write,
                         uint64_t want)
{
    tern_cma_req_t *q = cma_req(r);
    struct iovec *segs = malloc(sizeof(*segs) * (c->iovcnt ? c->iovcnt : 1));
    if (segs == NULL) {
        tern_error(TERN_ERR_NO_MEMORY, "%u CMA segments of rank %d", c->iovcnt, vc->rank);
        return -ENOMEM;
    }
    free(r->tmpbuf);
    r->tmpbuf = segs;
    q->x = (tern_cma_xfer_t){.pid = c->pid,
                             .write = write,
                             .want = want,
                             .fault_after = vc->worker->ctx->cfg.fault_cma_after_bytes};
    if (c->iovcnt > TERN_CMA_INLINE) {
        int rc = tern_cma_read_iov(c->pid, c->iov_addr, segs, c->iovcnt, q->x.fault_after);
        if (rc != 0)
            return rc;
    } else {
        for (uint32_t i = 0; i < c->iovcnt; i++) {
            segs[i].iov_base = (void *)(uintptr_t)c->seg[i].base;
            segs[i].iov_len = c->seg[i].len;
        }
    }
    tern_cursor_init(&q->x.peer, segs, (int)c->iovcnt); /* at most 2^20 (cookie parse) */
    return 0;
}

static void drop_segments(tern_request_t *r)
{
    free(r->tmpbuf); /* the segment array, not payload: nothing to unpack */
    r->tmpbuf = NULL;
}

static void rewind_cursor(tern_request_t *r)
{
    tern_cursor_init(&r->cur, r->cur.iov, r->cur.iovcnt);
}

static tern_status_t send_note(tern_vc_t *vc, bool to_sender, uint64_t id, const tern_cma_note_t *n,
                               const void *nm_cookie)
{
    uint8_t buf[TERN_COOKIE_MAX];
    memcpy(buf, n, sizeof(*n));
    if (n->nm_len != 0)
        memcpy(buf + sizeof(*n), nm_cookie, n->nm_len);
    tern_pkt_hdr_t h = {.type = TERN_PKT_COOKIE, .cookie_len = (uint32_t)(sizeof(*n) + n->nm_len)};
    if (to_sender)
        h.sreq = id;
    else
        h.rreq = id;
    return tern_send_ctrl(vc, &h, buf, h.cookie_len);
}

/* ---- sender ------------------------------------------------------------------- */

tern_status_t tern_cma_initiate(tern_vc_t *vc, tern_request_t *s, int mode, void *cookie,
                                size_t *cookie_len)
{
    tern_cma_req_t *q = cma_req(s);
    memset(q, 0, sizeof(*q));
    bool get = mode == TERN_LMT_CMA_GET;
    q->state = get ? S_GET_OFFERED : S_PUT_OFFERED;
    *cookie_len =
        tern_cma_cookie_fill(cookie, get ? TERN_CMA_OFFER : TERN_CMA_HELLO, &s->cur, s->msg_len);
    return TERN_OK;
}

/* The message goes the netmod's way after all: from its first byte, in the
 * mode the netmod chooses, announced to the receive request rid. */
static tern_status_t sender_fall_back(tern_vc_t *vc, tern_request_t *s, uint64_t rid, int reason,
                                      int err)
{
    drop_segments(s);
    rewind_cursor(s);
    cma_req(s)->state = S_NONE;
    count(vc, TERN_CMA_C_FALLBACKS, 1);
    uint8_t nm_cookie[TERN_CMA_FALLBACK_NM_MAX];
    size_t nm_len = sizeof(nm_cookie);
    int mode = TERN_LMT_NULL;
    tern_status_t st = tern_lmt_netmod_initiate(vc, s, &mode, nm_cookie, &nm_len);
    if (st != TERN_OK)
        return st;
    s->lmt_mode = (uint8_t)mode;
    s->remote_id = 0; /* the netmod's CTS, if any, names the receive again */
    tern_cma_note_t n = {.magic = TERN_CMA_MAGIC,
                         .kind = TERN_CMA_FALLBACK,
                         .version = TERN_CMA_VERSION,
                         .mode = (uint8_t)mode,
                         .reason = (uint8_t)reason,
                         .err = err,
                         .nm_len = (uint32_t)nm_len};
    return send_note(vc, false, rid, &n, nm_cookie);
}

static tern_status_t decline(tern_vc_t *vc, tern_request_t *r, uint64_t id, int reason, int err);

/* How a transfer that cannot use the copy hands its message back to the
 * netmod: the sender's fall-back, the receiver's decline (id: the other
 * side's request). */
typedef tern_status_t cma_fall_back_fn(tern_vc_t *vc, tern_request_t *r, uint64_t id, int reason,
                                       int err);

/* Take the peer's segments from c for r and queue r for the copy in state;
 * when the kernel refuses even the segment array, fall_back. */
static tern_status_t queue_copy(tern_vc_t *vc, tern_request_t *r, const tern_cma_cookie_t *c,
                                bool write, uint64_t want, uint64_t id, uint8_t state,
                                cma_fall_back_fn *fall_back)
{
    int rc = take_segments(vc, r, c, write, want);
    if (rc == -ENOMEM)
        return TERN_ERR_NO_MEMORY;
    if (rc != 0) {
        if (!tern_cma_refusal(rc))
            return bad_segments(vc, c, rc);
        tern_cma_kernel_refused(vc, c->pid, false, -rc); /* the segment array is read */
        return fall_back(vc, r, id, TERN_CMA_R_KERNEL, -rc);
    }
    cma_req(r)->state = state;
    tern_list_push_tail(&vc->worker->cma_queue, &r->link);
    return TERN_OK;
}

tern_status_t tern_cma_start_send(tern_vc_t *vc, tern_request_t *s, const void *cookie,
                                  size_t cookie_len)
{
    tern_cma_req_t *q = cma_req(s);
    char who[48];
    snprintf(who, sizeof(who), "rank %d", vc->rank);
    tern_cma_cookie_t c;
    if (q->state != S_PUT_OFFERED)
        return tern_error(TERN_ERR_MALFORMED,
                          "CTS from rank %d for a CMA send that offered no "
                          "put (state %u)",
                          vc->rank, q->state);
    tern_status_t st = tern_cma_cookie_parse(cookie, cookie_len, TERN_CMA_KEY, &c, who);
    if (st != TERN_OK)
        return st;
    if (!tern_host_same(&c.host, tern_host_self()))
        return tern_error(TERN_ERR_MALFORMED,
                          "CMA key from rank %d names another host: it "
                          "took our put offer although it is not on this host",
                          vc->rank);
    uint64_t want = c.len < s->msg_len ? c.len : s->msg_len;
    return queue_copy(vc, s, &c, true, want, s->remote_id, S_PUT_WRITING, sender_fall_back);
}

static void put_finish(tern_vc_t *vc, tern_request_t *s)
{
    drop_segments(s);
    cma_req(s)->state = S_NONE;
    count(vc, TERN_CMA_C_PUTS, 1);
    tern_pkt_hdr_t h = {.type = TERN_PKT_DONE, .rreq = s->remote_id};
    tern_request_complete(s, tern_send_ctrl(vc, &h, NULL, 0));
}

/* ---- receiver ---------------------------------------------------------------- */

static tern_status_t decline(tern_vc_t *vc, tern_request_t *r, uint64_t id, int reason, int err)
{
    drop_segments(r);
    rewind_cursor(r);
    cma_req(r)->state = S_REFUSED;
    if (reason != TERN_CMA_R_KERNEL)
        count(vc, TERN_CMA_C_DECLINED, 1);
    tern_debug("CMA from rank %d declined: %s", vc->rank, reason_text(reason));
    vc->cma_off = true;
    tern_cma_note_t n = {.magic = TERN_CMA_MAGIC,
                         .kind = TERN_CMA_REFUSED,
                         .version = TERN_CMA_VERSION,
                         .reason = (uint8_t)reason,
                         .err = err,
                         .id = id};
    return send_note(vc, true, r->remote_id, &n, NULL);
}

tern_status_t tern_cma_start_recv(tern_vc_t *vc, tern_request_t *r, const void *cookie,
                                  size_t cookie_len)
{
    tern_cma_req_t *q = cma_req(r);
    memset(q, 0, sizeof(*q));
    bool get = r->lmt_mode == TERN_LMT_CMA_GET;
    char who[48];
    snprintf(who, sizeof(who), "rank %d", vc->rank);
    tern_cma_cookie_t c;
    tern_status_t st =
        tern_cma_cookie_parse(cookie, cookie_len, get ? TERN_CMA_OFFER : TERN_CMA_HELLO, &c, who);
    if (st != TERN_OK)
        return st;
    if (c.len != r->msg_len)
        return tern_error(TERN_ERR_MALFORMED,
                          "CMA cookie from rank %d: %llu bytes, its RTS "
                          "says %zu",
                          vc->rank, (unsigned long long)c.len, r->msg_len);
    uint64_t id = tern_lmt_track(vc, r);
    if (id == 0)
        return TERN_ERR_NO_MEMORY;
    int reason = decline_reason(vc, &c.host);
    if (reason != 0)
        return decline(vc, r, id, reason, 0);
    if (!get) { /* put: our buffer in the CTS */
        tern_cma_cookie_t key;
        size_t klen = tern_cma_cookie_fill(&key, TERN_CMA_KEY, &r->cur, r->cur.total);
        q->state = S_PUT_EXPOSED;
        return tern_lmt_send_cts(vc, r, &key, klen);
    }
    uint64_t want = r->msg_len < r->cur.total ? r->msg_len : r->cur.total;
    return queue_copy(vc, r, &c, false, want, id, S_GET_READING, decline);
}

static void get_finish(tern_vc_t *vc, tern_request_t *r)
{
    drop_segments(r);
    cma_req(r)->state = S_NONE;
    count(vc, TERN_CMA_C_GETS, 1);
    tern_pkt_hdr_t h = {.type = TERN_PKT_DONE, .sreq = r->remote_id};
    tern_status_t st = tern_send_ctrl(vc, &h, NULL, 0);
    if (st != TERN_OK) {
        tern_request_complete(r, st);
        return;
    }
    tern_recv_data_complete(r); /* TRUNCATED when the message was longer */
}

/* ---- packets to a request in a CMA mode ------------------------------------------ */

tern_status_t tern_cma_done(tern_vc_t *vc, tern_request_t *r)
{
    tern_cma_req_t *q = cma_req(r);
    bool send = r->kind == TERN_REQ_SEND;
    if (q->state != (send ? S_GET_OFFERED : S_PUT_EXPOSED))
        return tern_error(TERN_ERR_MALFORMED, "DONE from rank %d for a CMA %s in state %u",
                          vc->rank, send ? "send" : "receive", q->state);
    q->state = S_NONE;
    if (send)
        tern_request_complete(r, TERN_OK); /* the receiver has read it all */
    else
        tern_recv_data_complete(r); /* the sender has written it all */
    return TERN_OK;
}

tern_status_t tern_cma_handle_cookie(tern_vc_t *vc, tern_request_t *r, const void *cookie,
                                     size_t cookie_len)
{
    tern_cma_req_t *q = cma_req(r);
    tern_cma_note_t n;
    bool send = r->kind == TERN_REQ_SEND;
    memset(&n, 0, sizeof(n));
    memcpy(&n, cookie, cookie_len < sizeof(n) ? cookie_len : sizeof(n));
    bool ok = cookie_len >= sizeof(n) && n.magic == TERN_CMA_MAGIC &&
              n.version == TERN_CMA_VERSION &&
              n.kind == (send ? TERN_CMA_REFUSED : TERN_CMA_FALLBACK) &&
              cookie_len == sizeof(n) + n.nm_len &&
              (send ? (q->state == S_GET_OFFERED || q->state == S_PUT_OFFERED) && n.id != 0
                    : q->state == S_REFUSED || q->state == S_PUT_EXPOSED);
    if (ok && !send)
        ok = n.mode == TERN_LMT_NULL || (n.mode < TERN_LMT_CMA_GET && vc->nm->lmt != NULL &&
                                         (vc->nm->lmt->modes(vc->nm_state) & (1u << n.mode)));
    if (!ok)
        return tern_error(TERN_ERR_MALFORMED,
                          "CMA note from rank %d (%zu bytes, kind %u, mode "
                          "%u) does not fit its %s in state %u",
                          vc->rank, cookie_len, n.kind, n.mode, send ? "send" : "receive",
                          q->state);
    vc->cma_off = true; /* whoever decided, neither side offers CMA on vc again */
    if (send) {
        if (n.reason != TERN_CMA_R_KERNEL)
            tern_debug("CMA to rank %d declined: %s", vc->rank, reason_text(n.reason));
        return sender_fall_back(vc, r, n.id, n.reason, n.err);
    }
    /* the netmod's way from the first byte, as if the RTS had named its mode */
    drop_segments(r);
    rewind_cursor(r);
    q->state = S_NONE;
    r->lmt_mode = n.mode;
    return tern_lmt_recv_start(r, (const uint8_t *)cookie + sizeof(n), n.nm_len);
}

/* ---- progress --------------------------------------------------------------------- */

unsigned tern_cma_progress(tern_worker_t *w)
{
    tern_request_t *r = TERN_CONTAINER_OF(w->cma_queue.next, tern_request_t, link);
    tern_cma_req_t *q = cma_req(r);
    tern_vc_t *vc = r->vc;
    ssize_t got = tern_cma_step(&q->x, &r->cur);
    if (got > 0) {
        count(vc, q->x.write ? TERN_CMA_C_PUT_BYTES : TERN_CMA_C_GET_BYTES, (uint64_t)got);
        if (q->x.done < q->x.want)
            return 1;
    }
    tern_list_del(&r->link);
    if (got >= 0) {
        if (q->x.write)
            put_finish(vc, r);
        else
            get_finish(vc, r);
        return 1;
    }
    if (!tern_cma_refusal(got)) {
        fail_vc(vc, &q->x, got);
        return 1;
    }
    tern_cma_kernel_refused(vc, q->x.pid, q->x.write, (int)-got);
    tern_status_t st = q->x.write
                           ? sender_fall_back(vc, r, r->remote_id, TERN_CMA_R_KERNEL, (int)-got)
                           : decline(vc, r, tern_request_id(r), TERN_CMA_R_KERNEL, (int)-got);
    if (st != TERN_OK)
        tern_vc_fail(vc, st, tern_last_error());
    return 1;
}

void tern_cma_vc_host(tern_vc_t *vc, const tern_host_id_t *peer)
{
    if (peer != NULL && !tern_host_same(peer, tern_host_self()))
        vc->cma_off = true;
}

void tern_cma_vc_drop(tern_vc_t *vc)
{
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &vc->worker->cma_queue)
    {
        tern_request_t *r = TERN_CONTAINER_OF(pos, tern_request_t, link);
        if (r->vc == vc)
            tern_list_del(pos); /* on vc's rendezvous list: the engine fails it */
    }
}

int tern_cma_counters(tern_worker_t *w, tern_counter_t *out, int max)
{
    for (int i = 0; i < TERN_CMA_NCOUNTERS && i < max; i++)
        out[i] = (tern_counter_t){counter_names[i], w->cma_count[i]};
    return TERN_CMA_NCOUNTERS;
}
