/* The capturing engine (see tap.h). */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "tests/conform/tap.h"

tern_status_t __real_tern_handle_pkt(tern_vc_t *vc, const void *buf, size_t len);
tern_status_t __wrap_tern_handle_pkt(tern_vc_t *vc, const void *buf, size_t len);

static tap_stream_t stream;
static int tap_from = -1;

void tap_start(int from)
{
    free(stream.buf);
    memset(&stream, 0, sizeof(stream));
    stream.min_frag = SIZE_MAX;
    tap_from = from;
}

void tap_stop(void) { tap_from = -1; }

tap_stream_t *tap_stream(void) { return &stream; }

tern_status_t __wrap_tern_handle_pkt(tern_vc_t *vc, const void *buf, size_t len)
{
    if (vc->rank == tap_from && len > 0) {
        if (stream.len + len > stream.cap) {
            size_t cap = stream.cap ? stream.cap : 1 << 20;
            while (cap < stream.len + len)
                cap *= 2;
            uint8_t *b = realloc(stream.buf, cap);
            if (b == NULL)
                abort();
            stream.buf = b;
            stream.cap = cap;
        }
        memcpy(stream.buf + stream.len, buf, len);
        stream.len += len;
        stream.fragments++;
        stream.min_frag = len < stream.min_frag ? len : stream.min_frag;
        stream.max_frag = len > stream.max_frag ? len : stream.max_frag;
    }
    return __real_tern_handle_pkt(vc, buf, len);
}

size_t tap_packets(const tap_stream_t *s,
                   void (*fn)(const tern_pkt_hdr_t *h, const uint8_t *body, void *arg), void *arg)
{
    size_t off = 0;
    while (s->len - off >= TERN_PKT_HDR_SIZE) {
        tern_pkt_hdr_t h;
        memcpy(&h, s->buf + off, sizeof(h));
        size_t body = (h.type == TERN_PKT_EAGER || h.type == TERN_PKT_DATA) ? h.len : h.cookie_len;
        if (s->len - off - TERN_PKT_HDR_SIZE < body)
            break;
        fn(&h, s->buf + off + TERN_PKT_HDR_SIZE, arg);
        off += TERN_PKT_HDR_SIZE + body;
    }
    return s->len - off;
}
