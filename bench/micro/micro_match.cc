// bench/micro: tag matching (engine/match.c through tern_irecv and
// tern_handle_pkt).  One iteration is one 8-byte message received:
//
//   posted/<depth>/<exact|any>      tern_irecv posts a receive behind
//       depth-1 receives it does not match, tern_handle_pkt delivers an
//       eager packet that searches the posted queue down to it, tern_test
//       reaps it.
//   unexpected/<depth>/<exact|any>  tern_handle_pkt queues an unexpected
//       message behind depth-1 others, tern_irecv searches the unexpected
//       queue down to it and completes at once.
//
// exact: receives name rank 1; any: TERN_ANY_SOURCE.  The other entries
// differ by tag only, so the search compares every field of each.
#include "bench/micro/micro_common.h"

namespace
{

constexpr size_t kLen = 8;
constexpr int kTag = 0;
constexpr int kOtherTag = 1000; // tags of the entries searched past

int source_of(const benchmark::State &state)
{
    return state.range(1) ? TERN_ANY_SOURCE : 1;
}

void posted(benchmark::State &state)
{
    micro::Engine e;
    if (!e.ok(state))
        return;
    tern_worker_t *w = e.worker();
    const size_t depth = static_cast<size_t>(state.range(0));
    const int src = source_of(state);
    std::vector<uint8_t> buf(kLen), other(kLen);
    for (size_t i = 0; i + 1 < depth; i++) {
        tern_request_t *r;
        tern_status_t st =
            tern_irecv(w, other.data(), kLen, src, kOtherTag + static_cast<int>(i), 0, nullptr, &r);
        if (st != TERN_INPROGRESS)
            return micro::skip(state, "posting the queue", st);
    }
    const micro::EagerPkt pkt(kTag, kLen);

    for (auto _ : state) {
        tern_request_t *r;
        tern_status_t st = tern_irecv(w, buf.data(), kLen, src, kTag, 0, nullptr, &r);
        tern_status_t st2 = tern_handle_pkt(e.peer(), pkt.data(), pkt.size());
        tern_status_t st3 = tern_test(w, r, nullptr);
        if (st != TERN_INPROGRESS || st2 != TERN_OK || st3 != TERN_OK)
            return micro::skip(state, "posted receive", st3);
    }
}

void unexpected(benchmark::State &state)
{
    micro::Engine e;
    if (!e.ok(state))
        return;
    tern_worker_t *w = e.worker();
    const size_t depth = static_cast<size_t>(state.range(0));
    const int src = source_of(state);
    std::vector<uint8_t> buf(kLen);
    for (size_t i = 0; i + 1 < depth; i++) {
        const micro::EagerPkt p(kOtherTag + static_cast<int>(i), kLen);
        tern_status_t st = tern_handle_pkt(e.peer(), p.data(), p.size());
        if (st != TERN_OK)
            return micro::skip(state, "filling the unexpected queue", st);
    }
    const micro::EagerPkt pkt(kTag, kLen);

    for (auto _ : state) {
        tern_status_t st = tern_handle_pkt(e.peer(), pkt.data(), pkt.size());
        tern_request_t *r;
        tern_recv_info_t info;
        tern_status_t st2 = tern_irecv(w, buf.data(), kLen, src, kTag, 0, &info, &r);
        if (st != TERN_OK || st2 != TERN_OK || info.tag != kTag)
            return micro::skip(state, "unexpected receive", st2);
    }
}

void depths(benchmark::internal::Benchmark *b)
{
    b->ArgNames({"depth", "any"});
    for (int64_t any : {0, 1})
        for (int64_t depth : {1, 16, 256})
            b->Args({depth, any});
}

} // namespace

BENCHMARK(posted)->Name("match/posted")->Apply(depths);
BENCHMARK(unexpected)->Name("match/unexpected")->Apply(depths);
