// bench/micro: tern_micro, Google Benchmark on libtern's C API.
// Benchmarks are registered by the micro_*.cc files; see README.md.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
