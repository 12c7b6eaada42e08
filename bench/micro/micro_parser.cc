// bench/micro: the engine's stream parser (engine/handle_pkt.c), i.e. the
// per-message engine cost on the receive side once a netmod has the bytes.
// The receives are posted beforehand, 256 at a time with the timer paused
// (micro::PostedBatch), so only tern_handle_pkt is timed; each message
// matches the head of the posted queue and is copied into its buffer.
//
//   parser/eager/<len>/<frag>/<dst_off>   one eager packet of len payload
//       bytes per iteration, fed whole (frag 0) or in frag-byte pieces (the
//       header is then gathered in the VC, the payload streamed piece by
//       piece).  The packet is page aligned, so its payload sits at page
//       offset 40; the receive buffer at page offset dst_off.  dst_off 48
//       puts the destination 8 bytes past the source modulo 4 KiB, the
//       placement that makes glibc's 4 KiB memcpy (`rep movsb`) many times
//       slower on some x86 cores (README.md).
//   parser/stream/<n>           n 8-byte eager packets back to back in one
//       buffer, one tern_handle_pkt call (a socket read's worth).
#include <algorithm>

#include "bench/micro/micro_common.h"

namespace
{

constexpr int kTag = 0;

void eager(benchmark::State &state)
{
    micro::Engine e;
    if (!e.ok(state))
        return;
    const size_t len = static_cast<size_t>(state.range(0));
    const size_t frag = static_cast<size_t>(state.range(1));
    const micro::EagerPkt pkt(kTag, len);
    micro::PostedBatch recvs(e.worker(), len, 1, kTag, static_cast<size_t>(state.range(2)));
    tern_vc_t *vc = e.peer();

    for (auto _ : state) {
        if (!recvs.next(state))
            return;
        tern_status_t st = TERN_OK;
        if (frag == 0) {
            st = tern_handle_pkt(vc, pkt.data(), pkt.size());
        } else {
            for (size_t off = 0; off < pkt.size() && st == TERN_OK; off += frag)
                st = tern_handle_pkt(vc, pkt.data() + off, std::min(frag, pkt.size() - off));
        }
        if (st != TERN_OK)
            return micro::skip(state, "tern_handle_pkt", st);
    }
    if (recvs.reap(state)) {
        state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(len));
    }
}

void stream(benchmark::State &state)
{
    micro::Engine e;
    if (!e.ok(state))
        return;
    const size_t n = static_cast<size_t>(state.range(0));
    const size_t len = 8;
    const micro::PageBuf buf(n * (MICRO_PKT_HDR_SIZE + len));
    for (size_t i = 0; i < n; i++)
        micro_eager_pkt(buf.data() + i * (MICRO_PKT_HDR_SIZE + len), kTag, len);
    micro::PostedBatch recvs(e.worker(), len, 1, kTag);
    tern_vc_t *vc = e.peer();

    for (auto _ : state) {
        if (!recvs.next(state, n))
            return;
        tern_status_t st = tern_handle_pkt(vc, buf.data(), buf.size());
        if (st != TERN_OK)
            return micro::skip(state, "tern_handle_pkt", st);
    }
    if (recvs.reap(state))
        micro::per_item(state, n);
}

} // namespace

BENCHMARK(eager)
    ->Name("parser/eager")
    ->ArgNames({"len", "frag", "dst_off"})
    ->Args({8, 0, 0})
    ->Args({8, 16, 0})
    ->Args({4096, 0, 0})
    ->Args({4096, 16, 0})
    ->Args({4096, 1500, 0})
    ->Args({4096, 0, 48});
BENCHMARK(stream)->Name("parser/stream")->ArgName("n")->Arg(16);
