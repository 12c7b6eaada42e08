/* The packet send queue under every netmod: see pktq.h. */
#include <assert.h>
#include <string.h>

#include "engine/pktq.h"

void tern_pktq_push(tern_pktq_t *q, tern_request_t *r, const void *hdr, size_t hdrlen, size_t hsent)
{
    /* every header is an engine packet header, which fits (static_assert
     * next to TERN_PKTQ_HDR_MAX): a longer one is a bug in the caller */
    assert(hdrlen <= TERN_PKTQ_HDR_MAX && hsent <= hdrlen);
    memcpy(r->pq.bytes, hdr, hdrlen);
    r->pq.len = (uint8_t)hdrlen;
    r->pq.sent = (uint8_t)hsent;
    tern_list_push_tail(&q->reqs, &r->link);
}

int tern_pktq_iov(tern_request_t *r, struct iovec *iov, int max, size_t max_bytes, size_t *bytes)
{
    int n = 0;
    size_t h = (size_t)(r->pq.len - r->pq.sent);
    if (h > max_bytes)
        h = max_bytes;
    if (h > 0 && max > 0) {
        iov[n].iov_base = r->pq.bytes + r->pq.sent;
        iov[n].iov_len = h;
        n++;
    } else {
        h = 0;
    }
    size_t payload = 0;
    n += tern_cursor_slice(&r->cur, iov + n, max - n, max_bytes - h, &payload);
    *bytes = h + payload;
    return n;
}

size_t tern_pktq_pack(const tern_request_t *r, void *buf, size_t len)
{
    size_t h = (size_t)(r->pq.len - r->pq.sent);
    if (h > len)
        h = len;
    memcpy(buf, r->pq.bytes + r->pq.sent, h);
    if (h == len)
        return h;
    tern_cursor_t c = r->cur; /* a copy: r does not move */
    return h + tern_cursor_pack(&c, (uint8_t *)buf + h, len - h);
}

void tern_pktq_complete_head(tern_pktq_t *q)
{
    tern_request_t *r = tern_pktq_head(q);
    tern_list_del(&r->link);
    tern_request_complete(r, TERN_OK);
}

void tern_pktq_fail_all(tern_pktq_t *q, tern_status_t status)
{
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &q->reqs)
    {
        tern_request_t *r = TERN_CONTAINER_OF(pos, tern_request_t, link);
        tern_list_del(pos);
        if (!(r->flags & TERN_REQF_VCLIST))
            tern_request_complete(r, status);
    }
}
