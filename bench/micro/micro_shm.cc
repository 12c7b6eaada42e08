// bench/micro: the shm netmod's eager path in one process, producer and
// consumer on the same thread: tern_isend pushes units into a pair of a
// real node segment (netmods/shm/shm_send.c), tern_progress pops them
// (shm_recv.c) into the stream parser and the posted receive.  The VC
// loops back on itself (micro_shim.c: micro_shm_loopback), so there is no
// second core and no cache-line transfer: this is the instruction cost of
// the queues, not a latency (bench/tern_bench measures that).
//
//   shm/fastbox/<len>/<burst>  units in the fastbox ring of stamped slots
//       (len 4096 with 8 KiB slots, as TERN_SHM_FBOX_SIZE=8192).
//   shm/cells/<len>/<burst>    units in the cell ring (8 B: the sender's
//       fastbox turned off; 4 KiB does not fit the default fastbox).
// burst: messages sent before the receiver polls (1: push, pop; 8: the
// reader publishes its consumer index once per batch).  Time per message.
// Receives are posted beforehand with the timer paused (micro::PostedBatch).
#include "bench/micro/micro_common.h"

namespace
{

constexpr int kTag = 0;

void run(benchmark::State &state, bool fastbox)
{
    micro::Engine e;
    if (!e.ok(state))
        return;
    const size_t len = static_cast<size_t>(state.range(0));
    const size_t burst = static_cast<size_t>(state.range(1));
    // a 4 KiB packet fits the fastbox only with 8 KiB slots
    const size_t fbox_size = fastbox && len > 256 ? 8192 : 0;
    tern_status_t st = micro_shm_loopback(e.raw(), fbox_size, fastbox);
    if (st != TERN_OK)
        return micro::skip(state, "shm loopback", st);
    if (fbox_size != 0)
        state.SetLabel("8 KiB fastbox slots");
    tern_worker_t *w = e.worker();
    const micro::PageBuf src(len);
    micro::PostedBatch recvs(w, len, 1, kTag);

    for (auto _ : state) {
        if (!recvs.next(state, burst))
            return;
        for (size_t i = 0; i < burst; i++) {
            tern_request_t *sreq;
            st = tern_isend(w, src.data(), len, 1, kTag, 0, &sreq);
            if (st != TERN_OK) // TERN_INPROGRESS: the ring was full
                return micro::skip(state, "tern_isend did not complete at once", st);
        }
        for (size_t got = 0; got < burst;) {
            unsigned n = tern_progress(w);
            if (n == 0)
                return state.SkipWithError("tern_progress found no unit");
            got += n;
        }
    }
    if (recvs.reap(state)) {
        state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(burst * len));
        micro::per_item(state, burst);
    }
}

void fastbox(benchmark::State &state)
{
    run(state, true);
}
void cells(benchmark::State &state)
{
    run(state, false);
}

void sizes(benchmark::internal::Benchmark *b)
{
    b->ArgNames({"len", "burst"});
    for (int64_t len : {8, 4096})
        for (int64_t burst : {1, 8})
            b->Args({len, burst});
}

} // namespace

BENCHMARK(fastbox)->Name("shm/fastbox")->Apply(sizes);
BENCHMARK(cells)->Name("shm/cells")->Apply(sizes);
