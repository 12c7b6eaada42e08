/*
 * The conformance test's capturing engine: the program is linked with
 * -Wl,--wrap=tern_handle_pkt, so every byte a netmod hands the engine goes
 * through tap_handle_pkt first, which keeps a copy of the stream per peer
 * (and the fragment sizes) before the real parser sees it.
 */
#ifndef TERN_TEST_CONFORM_TAP_H
#define TERN_TEST_CONFORM_TAP_H

#include <stddef.h>
#include <stdint.h>

#include "engine/pkt.h"

typedef struct tap_stream {
    uint8_t *buf;
    size_t len, cap;
    size_t fragments, min_frag, max_frag;
} tap_stream_t;

/* Start (or restart) capturing what rank `from` sends us. */
void tap_start(int from);
void tap_stop(void);
tap_stream_t *tap_stream(void);

/* Walk the captured stream: calls fn for every whole packet (header, then
 * the payload or cookie that follows); returns the bytes left over (a
 * packet cut short). */
size_t tap_packets(const tap_stream_t *s,
                   void (*fn)(const tern_pkt_hdr_t *h, const uint8_t *body, void *arg),
                   void *arg);

#endif
