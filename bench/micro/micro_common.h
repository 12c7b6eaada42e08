// bench/micro: C++ helpers shared by the benchmark files.  They set up and
// check; the measured calls stay visible in each benchmark loop.
#ifndef TERN_MICRO_COMMON_H
#define TERN_MICRO_COMMON_H

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "bench/micro/micro_shim.h"

namespace micro
{

// A job-less engine for one benchmark run (micro_engine_new/free).
class Engine
{
  public:
    Engine() : e_(micro_engine_new()) {}
    ~Engine()
    {
        micro_engine_free(e_);
    }
    Engine(const Engine &) = delete;
    Engine &operator=(const Engine &) = delete;

    // false (and the benchmark skipped with the reason) if set-up failed
    bool ok(benchmark::State &state) const
    {
        if (e_ == nullptr)
            state.SkipWithError(tern_last_error());
        return e_ != nullptr;
    }
    tern_worker_t *worker() const
    {
        return micro_worker(e_);
    }
    // the VC whose bytes the benchmarks feed ("from rank 1")
    tern_vc_t *peer() const
    {
        return micro_vc(e_, 1);
    }
    micro_engine_t *raw() const
    {
        return e_;
    }

  private:
    micro_engine_t *e_;
};

// Bytes at a fixed offset from a page boundary.  Where a copy's source and
// destination sit relative to each other can change its speed many times
// over (README.md: x86 `rep movsb` with the destination a few bytes past
// the source modulo 4 KiB), so buffers are placed, not left to malloc.
class PageBuf
{
  public:
    explicit PageBuf(size_t len, size_t page_off = 0)
        : base_(static_cast<uint8_t *>(std::aligned_alloc(kPage, round(page_off + len)))),
          p_(base_ + page_off), len_(len)
    {
        if (base_ == nullptr)
            throw std::bad_alloc();
        std::memset(p_, 0, len);
    }
    ~PageBuf()
    {
        std::free(base_);
    }
    PageBuf(const PageBuf &) = delete;
    PageBuf &operator=(const PageBuf &) = delete;

    uint8_t *data() const
    {
        return p_;
    }
    size_t size() const
    {
        return len_;
    }

  private:
    static constexpr size_t kPage = 4096;
    // whole pages, at least one more than n bytes need (never 0)
    static size_t round(size_t n)
    {
        return (n + kPage) / kPage * kPage;
    }
    uint8_t *base_, *p_;
    size_t len_;
};

// An eager packet from rank 1 (header + len payload bytes), page aligned:
// its payload starts at page offset MICRO_PKT_HDR_SIZE.
class EagerPkt : public PageBuf
{
  public:
    EagerPkt(int tag, size_t len) : PageBuf(MICRO_PKT_HDR_SIZE + len)
    {
        micro_eager_pkt(data(), tag, len);
    }
};

// Report the time per item when an iteration handles n of them (shown as
// per_item, in seconds with an SI prefix: 48.2n is 48.2 ns).
inline void per_item(benchmark::State &state, size_t n)
{
    state.counters["per_item"] =
        benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                                       benchmark::Counter::kInvert);
}

inline void skip(benchmark::State &state, const char *what, tern_status_t st)
{
    std::string msg = std::string(what) + ": " + tern_strerror(st) + " (" + tern_last_error() + ")";
    state.SkipWithError(msg.c_str());
}

// Receives of (src, tag) posted kBatch at a time with the timer paused, so a
// benchmark can time the delivery of each message alone.  Posted in order,
// each message matches the head of the posted queue.
class PostedBatch
{
  public:
    static constexpr size_t kBatch = 256;

    // All receives share one buffer of len bytes at page offset buf_off.
    PostedBatch(tern_worker_t *w, size_t len, int src, int tag, size_t buf_off = 0)
        : w_(w), buf_(len, buf_off), len_(len), src_(src), tag_(tag), reqs_(kBatch)
    {
    }

    // Before each n messages (n divides kBatch, so every posted receive is
    // used before a refill): refill when the batch is used up.  Returns false
    // (benchmark skipped) if a receive did not complete as expected.
    bool next(benchmark::State &state, size_t n = 1)
    {
        if (used_ + n <= filled_) {
            used_ += n;
            return true;
        }
        state.PauseTiming();
        if (used_ != filled_) { // receives left posted would match the next messages
            state.SkipWithError("PostedBatch: n must divide kBatch");
            return false;
        }
        if (!reap(state) || !post(state))
            return false; // skipped: the timer stays stopped
        state.ResumeTiming();
        used_ = n;
        return true;
    }

    // Reap the receives that got their message; false (skipped) on a wrong
    // status or length.
    bool reap(benchmark::State &state)
    {
        for (size_t i = 0; i < used_; i++) {
            tern_recv_info_t info;
            tern_status_t st = tern_test(w_, reqs_[i], &info);
            if (st != TERN_OK) {
                skip(state, "posted receive", st);
                return false;
            }
            if (info.length != len_ || info.source != 1) {
                state.SkipWithError("posted receive: wrong length or source");
                return false;
            }
        }
        used_ = filled_ = 0;
        return true;
    }

  private:
    bool post(benchmark::State &state)
    {
        for (size_t i = 0; i < kBatch; i++) {
            tern_status_t st = tern_irecv(w_, buf_.data(), len_, src_, tag_, 0, nullptr, &reqs_[i]);
            if (st != TERN_INPROGRESS) {
                skip(state, "tern_irecv", st);
                return false;
            }
        }
        filled_ = kBatch;
        return true;
    }

    tern_worker_t *w_;
    PageBuf buf_;
    size_t len_;
    int src_, tag_;
    std::vector<tern_request_t *> reqs_;
    size_t filled_ = 0, used_ = 0;
};

} // namespace micro

#endif
