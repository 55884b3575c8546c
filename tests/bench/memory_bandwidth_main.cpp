// memory_bandwidth_main.cpp: the memory-bandwidth command: prints the read bandwidth in GB/s.
//
//   memory_bandwidth [threads]
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "tests/bench/memory_bandwidth.hpp"

int main(int argc, char** argv) {
  const unsigned threads = argc > 1 ? unsigned(std::max(1, std::atoi(argv[1]))) : 2u;
  const double gbps = tg::bench::measure_read_bandwidth({.threads = threads});
  std::printf("memory read bandwidth: %.2f GB/s (%u threads, 1 GiB buffer, best of 8)\n", gbps, threads);
  return 0;
}
