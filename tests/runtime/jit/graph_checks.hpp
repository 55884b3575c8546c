// graph_checks.hpp: the check every device's graph test makes (tests/runtime/jit/graph_test.cpp
// on the CPU, tests/drivers/amd/am_graph_test.cpp on AMD:EMU): a replay of the captured chain
// writes what the same launches made one by one write, and what the host reference computes.
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

}  // namespace tg::test
