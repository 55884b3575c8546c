// memory_bandwidth.hpp: the machine's memory read bandwidth, measured by streaming a buffer
// much larger than the last-level cache, so decode speed can be read as a fraction of it.
//
//   double gbps = tg::bench::measure_read_bandwidth({.threads = 2});
#pragma once
#include <cstddef>

namespace tg::bench {

struct bandwidth_options {
  unsigned threads = 2;             // the thread count the model runs with
  std::size_t bytes = std::size_t(1) << 30;  // 1 GiB: far past any L3, so every pass goes to DRAM
  int runs = 8;                     // best of: noise on a shared machine only ever slows a pass
};

// GB/s (1e9 bytes per second) of the fastest pass, each thread summing its own slice.
double measure_read_bandwidth(const bandwidth_options& options = {});

}  // namespace tg::bench
