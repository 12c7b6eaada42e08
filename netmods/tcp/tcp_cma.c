/*
 * tcp LMT get through CMA: a peer on the same host (same kernel, pid and
 * network namespaces) that the shm netmod does not reach — a port peer such
 * as the iofwd daemon's ranks, or a rank of a connected job — has its large
 * messages pulled with process_vm_readv straight into the receive buffer:
 * one copy, none through the socket.  TERN_TCP_CMA says for which VCs:
 * "outside" (default: peers outside this job), "all", "off".
 *
 * Sender (lmt_initiate): a contiguous message to such a peer offers GET with
 * a cookie {magic, pid, host, address, length}; anything else lowers the
 * mode to the null one (DATA on the stream).
 * Receiver (lmt_start_recv): a cookie from this host is queued and read in
 * steps of CMA_STEP bytes from poll, then DONE completes the send.  Another
 * host, TERN_TCP_CMA=off here, or the kernel refusing the first read
 * (EPERM, ENOSYS: no ptrace permission) answers CTS instead, and the
 * sender streams the message as DATA (lmt_start_send): the null mode, late.
 * A failure after bytes were read fails the VC, naming the cause.
 *
 * The request's scratch: cma_req_t (receiver: bytes read, the sender's
 * address and pid; sender: CMA_OFFERED while the RTS offered the get).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "engine/log.h"
#include "netmods/tcp/tcp_internal.h"

#define CMA_MAGIC 0x414d4354u /* "TCMA" */
#define CMA_STEP (4u << 20)
#define CMA_IOV 64
#define CMA_OFFERED 0x67657421u

/* tcp's scratch in a request (TERN_REQ_NM) */
typedef struct cma_req {
    uint64_t done;    /* receiver: bytes read */
    uint64_t addr;    /*           the sender's address */
    uint64_t pid;     /*           the sender's pid */
    uint64_t offered; /* sender: CMA_OFFERED while the RTS offered the get, else 0 */
} cma_req_t;
#define CMA_REQ(r) TERN_REQ_NM(r, cma_req_t)

typedef struct tcp_cma_cookie {
    uint32_t magic;
    int32_t pid;
    uint64_t host;     /* tern_tcp_host_id() of the sender */
    uint64_t addr, len;
} tcp_cma_cookie_t;

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* This kernel's boot id with the pid and network namespaces' inodes: equal
 * for two processes exactly when process_vm_readv of one by the other can
 * name the right process and the network says they share a host (separate
 * network namespaces stand for separate hosts in the tests). */
uint64_t tern_tcp_host_id(void)
{
    static uint64_t id;
    if (id != 0)
        return id;
    char boot[64] = "", ns[96];
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f != NULL) {
        if (fgets(boot, sizeof(boot), f) == NULL)
            boot[0] = '\0';
        fclose(f);
    }
    struct stat p, n;
    if (boot[0] == '\0' || stat("/proc/self/ns/pid", &p) != 0 || stat("/proc/self/ns/net", &n) != 0)
        return id = 1; /* unknown: no other process's id is 1 (see below) */
    snprintf(ns, sizeof(ns), ":%llu:%llu", (unsigned long long)p.st_ino,
             (unsigned long long)n.st_ino);
    uint64_t h = fnv(fnv(0xcbf29ce484222325ull, boot), ns);
    return id = h <= 1 ? 2 : h;
}

static bool cma_wanted(const tern_tcp_t *t, const tern_tcp_vc_t *tv)
{
    if (tv->cma_refused || t->cfg->cma == TERN_TCP_CMA_OFF)
        return false;
    return t->cfg->cma == TERN_TCP_CMA_ALL || tv->job != t->job;
}

unsigned tern_tcp_lmt_modes(void *state) { return 1u << TERN_LMT_GET; }

int tern_tcp_lmt_choose(tern_vc_t *vc, size_t len)
{
    return cma_wanted(tern_tcp_state(vc), tern_tcp_vc(vc)) ? TERN_LMT_GET : TERN_LMT_NULL;
}

tern_status_t tern_tcp_lmt_initiate(tern_vc_t *vc, tern_request_t *sreq, int *mode, void *cookie,
                                    size_t *cookie_len)
{
    CMA_REQ(sreq)->offered = 0;
    *cookie_len = 0;
    if (*mode != TERN_LMT_GET || sreq->cur.iovcnt != 1 ||
        !cma_wanted(tern_tcp_state(vc), tern_tcp_vc(vc))) {
        *mode = TERN_LMT_NULL; /* the stream carries it */
        return TERN_OK;
    }
    tcp_cma_cookie_t c = {.magic = CMA_MAGIC, .pid = (int32_t)getpid(),
                          .host = tern_tcp_host_id(),
                          .addr = (uint64_t)(uintptr_t)sreq->cur.iov[0].iov_base,
                          .len = sreq->msg_len};
    memcpy(cookie, &c, sizeof(c));
    *cookie_len = sizeof(c);
    CMA_REQ(sreq)->offered = CMA_OFFERED;
    return TERN_OK;
}

/* Not this time: CTS, and the sender streams the message. */
static tern_status_t decline(tern_vc_t *vc, tern_request_t *rreq)
{
    return tern_lmt_send_cts(vc, rreq, NULL, 0);
}

tern_status_t tern_tcp_lmt_start_recv(tern_vc_t *vc, tern_request_t *rreq, const void *cookie,
                                      size_t cookie_len)
{
    tern_tcp_t *t = tern_tcp_state(vc);
    tcp_cma_cookie_t c;
    if (cookie_len != sizeof(c))
        return tern_error(TERN_ERR_MALFORMED, "tcp: CMA cookie from rank %d has %zu bytes, not %zu",
                          vc->rank, cookie_len, sizeof(c));
    memcpy(&c, cookie, sizeof(c));
    if (c.magic != CMA_MAGIC || c.pid <= 0 || c.len != rreq->msg_len)
        return tern_error(TERN_ERR_MALFORMED, "tcp: CMA cookie from rank %d is malformed "
                          "(magic %#x, pid %d, %llu bytes where the RTS says %zu)", vc->rank,
                          c.magic, c.pid, (unsigned long long)c.len, rreq->msg_len);
    if (c.host != tern_tcp_host_id() || t->cfg->cma == TERN_TCP_CMA_OFF ||
        tern_tcp_vc(vc)->cma_refused)
        return decline(vc, rreq);
    if (tern_lmt_track(vc, rreq) == 0)
        return TERN_ERR_NO_MEMORY;
    CMA_REQ(rreq)->done = 0;
    CMA_REQ(rreq)->addr = c.addr;
    CMA_REQ(rreq)->pid = (uint64_t)c.pid;
    tern_list_push_tail(&t->cmaq, &rreq->link);
    return TERN_OK;
}

/* The GET was declined: the message goes as DATA on the stream. */
tern_status_t tern_tcp_lmt_start_send(tern_vc_t *vc, tern_request_t *sreq, const void *cookie,
                                      size_t cookie_len)
{
    if (CMA_REQ(sreq)->offered != CMA_OFFERED || cookie_len != 0)
        return tern_error(TERN_ERR_MALFORMED, "tcp: CTS from rank %d for a send that offered "
                          "no CMA get", vc->rank);
    CMA_REQ(sreq)->offered = 0;
    tern_pkt_hdr_t d = {.type = TERN_PKT_DATA, .len = sreq->msg_len, .rreq = sreq->remote_id};
    return tern_send_noncontig(vc, sreq, &d, sizeof(d));
}

tern_status_t tern_tcp_lmt_done_send(tern_vc_t *vc, tern_request_t *sreq)
{
    if (CMA_REQ(sreq)->offered != CMA_OFFERED)
        return tern_error(TERN_ERR_MALFORMED, "tcp: DONE from rank %d for a send that offered "
                          "no CMA get", vc->rank);
    tern_request_complete(sreq, TERN_OK);
    return TERN_OK;
}

tern_status_t tern_tcp_lmt_done_recv(tern_vc_t *vc, tern_request_t *rreq)
{
    return tern_error(TERN_ERR_MALFORMED, "tcp: DONE from rank %d for a receive: tcp has no "
                      "put", vc->rank);
}

tern_status_t tern_tcp_lmt_handle_cookie(tern_vc_t *vc, tern_request_t *req, const void *cookie,
                                         size_t cookie_len)
{
    return tern_error(TERN_ERR_MALFORMED, "tcp: COOKIE packet from rank %d: tcp sends none",
                      vc->rank);
}

/* One step of the get at the head of the queue; returns work done. */
unsigned tern_tcp_cma_progress(tern_tcp_t *t)
{
    if (tern_list_empty(&t->cmaq))
        return 0;
    tern_request_t *r = TERN_CONTAINER_OF(t->cmaq.next, tern_request_t, link);
    tern_vc_t *vc = r->vc;
    uint64_t want = r->msg_len < r->cur.total ? r->msg_len : r->cur.total;
    uint64_t done = CMA_REQ(r)->done;
    pid_t pid = (pid_t)CMA_REQ(r)->pid;
    if (done < want) {
        struct iovec l[CMA_IOV];
        size_t lbytes, step = want - done < CMA_STEP ? (size_t)(want - done) : CMA_STEP;
        int lc = tern_cursor_slice(&r->cur, l, CMA_IOV, step, &lbytes);
        struct iovec rv = {(void *)(uintptr_t)(CMA_REQ(r)->addr + done), lbytes};
        ssize_t got = t->cfg->fault_cma ? (errno = EPERM, -1)
                                        : process_vm_readv(pid, l, (unsigned long)lc, &rv, 1, 0);
        if (got <= 0) {
            int err = got < 0 ? errno : EFAULT;
            tern_list_del(&r->link);
            if (done == 0 && (err == EPERM || err == EACCES || err == ENOSYS)) {
                tern_warn("tcp: CMA with rank %d (pid %d) refused: %s; its large messages "
                          "now go through the socket (TERN_TCP_CMA=off silences this)",
                          vc->rank, (int)pid, strerror(err));
                tern_tcp_vc(vc)->cma_refused = true;
                tern_status_t st = decline(vc, r);
                if (st != TERN_OK)
                    tern_vc_fail(vc, st, tern_last_error());
                return 1;
            }
            char why[160];
            snprintf(why, sizeof(why), "process_vm_readv of %zu bytes at offset %llu from "
                     "pid %d: %s", lbytes, (unsigned long long)done, (int)pid, strerror(err));
            tern_vc_fail(vc, err == ESRCH ? TERN_ERR_PEER_FAILED : TERN_ERR_REMOTE_ACCESS, why);
            return 1;
        }
        tern_cursor_advance(&r->cur, (size_t)got);
        CMA_REQ(r)->done = done += (uint64_t)got;
        if (done < want)
            return 1;
    }
    tern_list_del(&r->link);
    tern_pkt_hdr_t h = {.type = TERN_PKT_DONE, .sreq = r->remote_id};
    tern_status_t st = tern_send_ctrl(vc, &h, NULL, 0);
    if (st != TERN_OK) {
        tern_vc_fail(vc, st, tern_last_error());
        return 1;
    }
    tern_recv_data_complete(r);
    return 1;
}

/* vc is going away: its gets leave the queue (the engine fails them). */
void tern_tcp_cma_drop(tern_tcp_t *t, tern_vc_t *vc)
{
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &t->cmaq)
    {
        tern_request_t *r = TERN_CONTAINER_OF(pos, tern_request_t, link);
        if (r->vc == vc)
            tern_list_del(pos);
    }
}
