// graph_bench.cpp: what a captured graph saves per step: the 4-kernel chain of the graph tests
// (tests/runtime/jit/graph_chain.hpp) five times over, 20 launches, replayed as one graph against
// the same 20 launches made one by one, on the CPU and on the emulated GPU (AMD:EMU, where a
// replay is one submission). Times are per step, measured in the same run; the ratio is what
// counts (machines differ).
//
//   build/tests/bench/graph_bench
#include <tg/device.hpp>
#include <tg/graph.hpp>

#include <chrono>
#include <cstdio>
#include <string>

#include "tests/runtime/jit/graph_chain.hpp"

namespace {

using tg::test::chain;
using tg::test::chain_n;

tg::graph capture(tg::device& dev, chain& c) {
  tg::graph_builder b(dev);
  const tg::graph_var v = b.var("v");
  for (int i = 0; i < 5; ++i) {
    b.add(c.scale, {c.y, c.x0});
    b.add(c.shift, {c.z, c.y}, {v});
    b.add(c.sum, {c.s, c.z});
    b.add(c.head, {c.w, c.z, c.s}, {chain_n});
  }
  return b.finish();
}

// Microseconds per step of `body`, from an idle device to the return of the step's last call
// (the host's cost: on AMD:EMU the emulated GPU's own work is not in it), over `reps` steps.
template <class F>
double host_us(tg::device& dev, int reps, F&& body) {
  double total = 0;
  for (int r = 0; r < reps; ++r) {
    dev.synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    body(r);
    total += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }
  dev.synchronize();
  return total / reps;
}

void measure(const char* name, int reps) {
  tg::device dev(name);
  chain c(dev);
  tg::graph g = capture(dev, c);
  const auto direct = [&](int r) {
    for (int i = 0; i < 5; ++i) c.launch_directly(c.x0, r, chain_n);
  };
  const auto replay = [&](int r) { g.replay({r}); };
  host_us(dev, 3, direct), host_us(dev, 3, replay);  // warm: compiled, caches filled
  // Interleaved rounds, the best of each: the machine may be shared.
  double best_direct = 1e30, best_replay = 1e30;
  for (int round = 0; round < 3; ++round) {
    best_direct = std::min(best_direct, host_us(dev, reps, direct));
    best_replay = std::min(best_replay, host_us(dev, reps, replay));
  }
  std::printf("%-8s 20 launches per step: direct %8.2f us, graph replay %8.2f us, replay/direct %.3f\n", name, best_direct,
              best_replay, best_replay / best_direct);
}

}  // namespace

int main() {
  measure("CPU", 2000);
  measure("AMD:EMU", 20);
  return 0;
}
