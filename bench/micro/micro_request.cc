// bench/micro: the request pool and the rendezvous id table
// (engine/request.c).
//
//   request/alloc_release          tern_request_alloc + tern_request_release
//       of one request on a warm pool (the slab free list).
//   request/alloc_release_burst/<n> n allocations, then n releases (a
//       window of n requests in flight); time per request.
//   request/id/<live>               tern_request_register, tern_request_lookup
//       and tern_request_unregister of one request while <live> other ids
//       are registered.
//   request/lookup/<live>           tern_request_lookup of registered ids, in
//       turn (what every CTS / DATA / DONE packet pays).
#include "bench/micro/micro_common.h"

namespace
{

void alloc_release(benchmark::State &state)
{
    micro::Engine e;
    if (!e.ok(state))
        return;
    tern_worker_t *w = e.worker();
    micro_request_release(micro_request_alloc(w, MICRO_REQ_RECV)); // warm the pool
    for (auto _ : state) {
        tern_request_t *r = micro_request_alloc(w, MICRO_REQ_RECV);
        benchmark::DoNotOptimize(r);
        micro_request_release(r);
    }
}

void alloc_release_burst(benchmark::State &state)
{
    micro::Engine e;
    if (!e.ok(state))
        return;
    tern_worker_t *w = e.worker();
    const size_t n = static_cast<size_t>(state.range(0));
    std::vector<tern_request_t *> reqs(n);
    for (size_t i = 0; i < n; i++) // warm the pool to n
        reqs[i] = micro_request_alloc(w, MICRO_REQ_SEND);
    for (size_t i = 0; i < n; i++)
        micro_request_release(reqs[i]);

    for (auto _ : state) {
        for (size_t i = 0; i < n; i++)
            reqs[i] = micro_request_alloc(w, MICRO_REQ_SEND);
        benchmark::DoNotOptimize(reqs.data());
        for (size_t i = 0; i < n; i++)
            micro_request_release(reqs[i]);
    }
    micro::per_item(state, n);
}

// <live> registered requests; their ids in ids.  false: skipped.
bool register_live(benchmark::State &state, tern_worker_t *w, size_t live,
                   std::vector<uint64_t> &ids)
{
    for (size_t i = 0; i < live; i++) {
        tern_request_t *r = micro_request_alloc(w, MICRO_REQ_RECV);
        uint64_t id = r ? tern_request_register(r) : 0;
        if (id == 0) {
            micro::skip(state, "tern_request_register", TERN_ERR_NO_MEMORY);
            return false;
        }
        ids.push_back(id);
    }
    return true;
}

void id(benchmark::State &state)
{
    micro::Engine e;
    if (!e.ok(state))
        return;
    tern_worker_t *w = e.worker();
    std::vector<uint64_t> ids;
    if (!register_live(state, w, static_cast<size_t>(state.range(0)), ids))
        return;
    tern_request_t *r = micro_request_alloc(w, MICRO_REQ_SEND);

    for (auto _ : state) {
        uint64_t rid = tern_request_register(r);
        tern_request_t *found = tern_request_lookup(w, rid);
        if (found != r)
            return state.SkipWithError("lookup of a registered id failed");
        tern_request_unregister(r);
    }
}

void lookup(benchmark::State &state)
{
    micro::Engine e;
    if (!e.ok(state))
        return;
    tern_worker_t *w = e.worker();
    std::vector<uint64_t> ids;
    if (!register_live(state, w, static_cast<size_t>(state.range(0)), ids))
        return;
    size_t i = 0;
    for (auto _ : state) {
        tern_request_t *r = tern_request_lookup(w, ids[i]);
        if (r == nullptr)
            return state.SkipWithError("lookup of a registered id failed");
        benchmark::DoNotOptimize(r);
        if (++i == ids.size())
            i = 0;
    }
}

} // namespace

BENCHMARK(alloc_release)->Name("request/alloc_release");
BENCHMARK(alloc_release_burst)
    ->Name("request/alloc_release_burst")
    ->ArgName("n")
    ->Arg(64)
    ->Arg(1024);
BENCHMARK(id)->Name("request/id")->ArgName("live")->Arg(0)->Arg(256);
BENCHMARK(lookup)->Name("request/lookup")->ArgName("live")->Arg(1)->Arg(256);
