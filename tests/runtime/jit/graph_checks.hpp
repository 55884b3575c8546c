// graph_checks.hpp: the check every device's graph test makes (tests/runtime/jit/graph_test.cpp
// on the CPU, tests/drivers/amd/am_graph_test.cpp on AMD:EMU): a replay of the captured chain
// writes what the same launches made one by one write, and what the host reference computes;
// and a one-kernel graph's kernel that shows a replay run twice or not at all.
#pragma once
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "tests/runtime/jit/graph_chain.hpp"

namespace tg::test {

inline void check_replay_equals_direct(chain& c, graph& g, std::int64_t v, std::int64_t rows) {
  CAPTURE(v);
  CAPTURE(rows);
  c.clear_w();
  c.launch_directly(c.x0, v, rows);
  const std::vector<float> direct = c.read_w();
  c.clear_w();
  g.replay({v, rows});
  const std::vector<float> replayed = c.read_w();
  CHECK(replayed == direct);
  CHECK(replayed == chain_reference(chain_input(1), v, rows, std::vector<float>(chain_n, -100.0f)));
}

// acc[i] += variable 0, for 64 int32s: a launch or replay that ran twice or not at all shows in
// the sum.
inline ast::kernel accumulate_kernel() {
  kernel_builder kb;
  auto i = kb.output_range(64);
  kb.store(0, i, kb.load<std::int32_t>(0, i) + kb.cast(dtype::int32, kb.variable(0)));
  return kb.finish();
}

}  // namespace tg::test
