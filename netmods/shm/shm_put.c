/*
 * shm LMT put through CMA: the receiver answers the RTS with a CTS whose
 * cookie describes its own buffer (pid, segments: the layout of the get
 * cookie, kind PUT); the sender writes the data straight into it with
 * process_vm_writev — one copy, the receiver's core stays free — and sends
 * DONE to the receive request, which completes it.  The sender completes
 * once it has written everything and queued DONE.
 *
 * Ordering: the sender's writes are done (the syscall returned) before it
 * publishes DONE in the pair's ring (R1 release); the receiver reads DONE
 * with A1 acquire before it completes the receive, so the user sees the
 * data.  A receive buffer shorter than the message gets exactly its
 * length written and completes with TERN_ERR_TRUNCATED.
 *
 * Refusal (EPERM, ENOSYS, EACCES: no ptrace permission): the sender logs it
 * once, parks the send and sends RESUME {offset} to the receiver; the
 * receiver queues a copy-buffer receive from offset and answers RESUME,
 * upon which the sender sends the rest through the copy buffer.  Both
 * copy-buffer queues thus follow the receiver-to-sender stream's order,
 * as CTS packets do.  A receiver that cannot take a put (TERN_SHM_CMA=0,
 * refused before) answers with a plain CTS: the copy buffer from the start.
 *
 * sreq->nm: u64[0..4] the step state (tern_shm_cma_step), u64[5] bytes to
 * write; the receiver's segments in sreq->tmpbuf.
 */
#include <errno.h>
#include <stdlib.h>

#include "netmods/shm/shm_internal.h"

tern_status_t tern_shm_put_start_recv(tern_vc_t *vc, tern_request_t *rreq)
{
    tern_shm_t *s = tern_shm_state(vc);
    if (!tern_shm_cma_allowed(s, tern_shm_vc(vc)))
        return tern_shm_lmt_start_coop_recv(vc, rreq);
    uint8_t cookie[TERN_COOKIE_MAX];
    size_t clen = tern_shm_cma_cookie(cookie, TERN_SHM_COOKIE_PUT, &rreq->cur, rreq->cur.total);
    tern_shm_req(rreq)->state = TERN_SHM_LMT_PUT_OFFERED;
    return tern_lmt_send_cts(vc, rreq, cookie, clen); /* registers; DONE names it */
}

tern_status_t tern_shm_put_start_send(tern_vc_t *vc, tern_request_t *sreq, const void *cookie,
                                      size_t cookie_len)
{
    uint64_t room;
    tern_status_t st =
        tern_shm_cma_take_cookie(vc, sreq, cookie, cookie_len, TERN_SHM_COOKIE_PUT, &room);
    if (st != TERN_OK)
        return st;
    tern_shm_req(sreq)->put_len = room < sreq->msg_len ? room : sreq->msg_len;
    tern_shm_req(sreq)->state = TERN_SHM_LMT_PUT_WRITING;
    tern_list_push_tail(&tern_shm_vc(vc)->put_txq, &sreq->link);
    return TERN_OK;
}

/* Receiver: the sender wrote our buffer. */
tern_status_t tern_shm_lmt_done_recv(tern_vc_t *vc, tern_request_t *rreq)
{
    if (tern_shm_req(rreq)->state != TERN_SHM_LMT_PUT_OFFERED)
        return tern_error(TERN_ERR_MALFORMED, "DONE from rank %d for a receive that offered no "
                          "put", vc->rank);
    tern_shm_req(rreq)->state = TERN_SHM_LMT_PLAIN;
    tern_recv_data_complete(rreq); /* TRUNCATED if the message was longer */
    return TERN_OK;
}

/* Sender: the kernel refused; park, and ask the receiver to take the rest
 * through the copy buffer. */
static tern_status_t put_fall_back(tern_vc_t *vc, tern_request_t *r, int err)
{
    tern_shm_cma_refused(vc, "process_vm_writev", err);
    free(r->tmpbuf);
    r->tmpbuf = NULL;
    tern_shm_req(r)->state = TERN_SHM_LMT_PUT_PARKED;
    tern_shm_resume_cookie_t rc = {.kind = TERN_SHM_COOKIE_RESUME, .offset = tern_shm_req(r)->done,
                                   .rreq_id = r->remote_id};
    tern_pkt_hdr_t h = {.type = TERN_PKT_COOKIE, .rreq = r->remote_id,
                        .cookie_len = (uint32_t)sizeof(rc)};
    return tern_send_ctrl(vc, &h, &rc, sizeof(rc));
}

static void put_finish(tern_vc_t *vc, tern_request_t *r)
{
    free(r->tmpbuf);
    r->tmpbuf = NULL;
    tern_shm_req(r)->state = TERN_SHM_LMT_PLAIN;
    tern_pkt_hdr_t h = {.type = TERN_PKT_DONE, .rreq = r->remote_id};
    tern_status_t st = tern_send_ctrl(vc, &h, NULL, 0);
    tern_request_complete(r, st);
}

/* One step of the put at the head of the queue.  Returns work done. */
unsigned tern_shm_put_progress(tern_shm_t *s, tern_shm_vc_t *v)
{
    static const tern_shm_cma_dir_t put = {true, "process_vm_writev", put_fall_back, put_finish};
    tern_request_t *r = TERN_CONTAINER_OF(v->put_txq.next, tern_request_t, link);
    return tern_shm_cma_drive(s, v->vc, r, tern_shm_req(r)->put_len, &put);
}
