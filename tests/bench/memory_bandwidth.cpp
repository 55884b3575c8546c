// memory_bandwidth.cpp: a streaming read-bandwidth probe: threads summing slices of one buffer.
#include "tests/bench/memory_bandwidth.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace tg::bench {
namespace {

// Vector extensions rather than a plain loop: integer sums vectorize either way, but this does
// not depend on the optimizer's cost model, and four accumulators keep several loads in flight.
typedef std::uint64_t lanes __attribute__((vector_size(16)));

// Each 64-byte line asks for the one 2 KiB ahead, as tg's decode matmuls do
// (llm/model/linear_kernels.cpp: prefetch_distance): without it this probe read 46 GB/s on a
// 2-vCPU Zen 5 VM where the Q8_0 decode kernel streamed 50-66 GB/s, so "% of read bandwidth"
// passed 100%.
std::uint64_t sum_slice(const lanes* p, std::size_t n) {
  lanes a = {0, 0}, b = a, c = a, d = a;
  for (std::size_t i = 0; i + 4 <= n; i += 4) {
    __builtin_prefetch(p + i + 128);
    a += p[i];
    b += p[i + 1];
    c += p[i + 2];
    d += p[i + 3];
  }
  lanes s = a + b + c + d;
  return s[0] + s[1];
}

}  // namespace

double measure_read_bandwidth(const bandwidth_options& options) {
  const unsigned threads = std::max(1u, options.threads);
  const std::size_t count = options.bytes / sizeof(lanes) / (4 * threads) * (4 * threads);
  std::unique_ptr<lanes[]> buffer(new lanes[count]);
  // Written first so every page is backed: untouched pages all map the zero page and read from cache.
  std::memset(static_cast<void*>(buffer.get()), 1, count * sizeof(lanes));
  const std::size_t slice = count / threads;
  std::vector<std::uint64_t> sums(threads);
  double best = 0;
  for (int r = 0; r < std::max(1, options.runs); ++r) {
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { sums[t] = sum_slice(buffer.get() + t * slice, slice); });
    for (auto& th : pool) th.join();
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, double(count * sizeof(lanes)) / sec / 1e9);
  }
  // The sums must be used, or the reads could be dropped.
  volatile std::uint64_t sink = 0;
  for (auto s : sums) sink = sink + s;
  return best;
}

}  // namespace tg::bench
