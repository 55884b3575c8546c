// am_beam_test.cpp: BEAM on the user's own AMD device (drivers/amd/am_candidate_runner.hpp), here
// an AMD:EMU device standing in for a card: candidates timed by GPU timestamps around their
// dispatch; candidates planted to fault the GPU, hang it or compute a wrong result skipped, the
// device's queue recovered, and the user's programs and captured graph still running after it.
#include <doctest/doctest.h>

#include <tg/graph.hpp>
#include "drivers/amd/am_candidate_runner.hpp"
#include "drivers/emu/emu_device.hpp"
#include "tests/runtime/jit/graph_checks.hpp"
#include "runtime/tune/opts_text.hpp"
#include "tests/runtime/tune/planted_gpu_candidates.hpp"
#include "tests/runtime/tune/tune_kernels.hpp"

namespace {

tg::kernel_source source_of(const tg::ast::kernel& kernel) {
  return {kernel.nodes, kernel.global_ranges, tg::kernel_name(kernel.nodes, kernel.global_ranges)};
}

}  // namespace

TEST_CASE("BEAM on the user's AMD device times candidates on it, skips bad ones, and leaves its programs and graphs working") {
  constexpr std::int64_t n = 64;
  tg::device dev("AMD:EMU:gfx12");
  auto& amd = dynamic_cast<tg::amd::am_backend&>(dev.impl());

  // The user's work before the search: launches (more than a program's kernarg slots) and a graph.
  tg::prepared_kernel acc = dev.prepare(tg::test::accumulate_kernel());
  tg::buffer sum = dev.allocate(64 * 4);
  std::int64_t expected = 0;
  for (std::int64_t v = 1; v <= 20; ++v) acc.launch(std::vector<tg::buffer>{sum}, std::vector<std::int64_t>{v}), expected += v;
  tg::graph_builder b(dev);
  const tg::graph_var v = b.var("v");
  b.add(acc, {sum}, {v});
  tg::graph g = b.finish();
  g.replay({100});
  expected += 100;

  const tg::ast::kernel kernel = tune_test::matmul(n, n, n);
  const tg::kernel_source source = source_of(kernel);
  tg::amd::am_candidate_runner on_device(amd);
  tune_test::planting_runner runner(on_device);
  const std::uint64_t dispatches_before = dynamic_cast<tg::emu::emu_device&>(amd).emulated_gpu().stats().dispatches;
  const tg::tune::beam_result found = tune_test::search_past_planted(runner, source, kernel.slot_count);
  MESSAGE("default " << found.default_seconds * 1e6 << " us by GPU timestamps (the interpreter's pace), best "
                     << tg::tune::to_text(found.best) << " " << found.best_seconds * 1e6 << " us, " << found.tried
                     << " tried");
  CHECK(found.default_seconds > 0);
  CHECK(amd.device().recoveries() == 2);
  // The candidates ran on this device: the first run and timed_runs timed ones each.
  const std::uint64_t ran = dynamic_cast<tg::emu::emu_device&>(amd).emulated_gpu().stats().dispatches - dispatches_before;
  CHECK(ran >= std::uint64_t(found.tried) * (1 + tg::amd::am_candidate_runner::timed_runs));

  // The winner computes the matmul on the device.
  const auto a = tune_test::pattern(n * n, 1), bm = tune_test::pattern(n * n, 2);
  tg::buffer out = dev.allocate(n * n * 4), ab = dev.allocate(a.size() * 4), bb = dev.allocate(bm.size() * 4);
  ab.copy_in(a.data(), a.size() * 4);
  bb.copy_in(bm.data(), bm.size() * 4);
  auto best = dev.impl().compile(tg::tune::source_with(source, found.best));
  std::vector<void*> buffers{out.data(), ab.data(), bb.data()};
  best->launch(buffers, {});
  std::vector<float> got(n * n);
  out.copy_out(got.data(), got.size() * 4);
  CHECK(got == tune_test::reference_matmul(a, bm, n, n, n));

  // The user's program and graph, made before the two recoveries, run on.
  for (std::int64_t w = 1; w <= 20; ++w) acc.launch(std::vector<tg::buffer>{sum}, std::vector<std::int64_t>{w}), expected += w;
  g.replay({1000});
  expected += 1000;
  std::vector<std::int32_t> sums(64);
  sum.copy_out(sums.data(), 64 * 4);
  for (std::int32_t s : sums) REQUIRE(s == expected);
}

TEST_CASE("a card's tuning target names its processor and its CU count") {
  tg::device dev("AMD:EMU");
  const std::string target = tg::amd::card_tuning_target(dynamic_cast<tg::amd::am_backend&>(dev.impl()));
  MESSAGE(target);
  CHECK(target.rfind("AMD gfx1100 ", 0) == 0);
  CHECK(target.find(" CUs") != std::string::npos);
}
