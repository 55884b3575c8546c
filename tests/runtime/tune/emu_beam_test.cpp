// emu_beam_test.cpp: BEAM on AMD:EMU (drivers/emu/emu_candidate_runner.hpp): GPU schedules as
// candidates, ranked by the modeled cost of their dispatch, the winner computing what a reference
// computes; and candidates planted to fault the GPU, hang it or compute a wrong result are each
// skipped, the GPU recovered after the first two, while the search finishes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include "drivers/emu/emu_candidate_runner.hpp"
#include "runtime/opt/target_opts.hpp"
#include "runtime/tune/beam_search.hpp"
#include "runtime/tune/gpu_candidates.hpp"
#include "runtime/tune/opts_text.hpp"
#include "tests/runtime/tune/planted_gpu_candidates.hpp"
#include "tests/runtime/tune/tune_kernels.hpp"

namespace {

constexpr std::int64_t rows = 512, cols = 1024;

// out[i] = sum_k w[i, k] * x[k]: slots 0 out, 1 w, 2 x. Few outputs, long rows: the GPU
// heuristic splits each row over a group of threads.
tg::ast::kernel matvec() {
  tg::kernel_builder kb;
  auto i = kb.output_range(rows);
  auto r = kb.reduce_range(cols);
  kb.store(0, i, kb.sum(kb.load<float>(1, i * cols + r) * kb.load<float>(2, r), r));
  return kb.finish();
}

tg::kernel_source source_of(const tg::ast::kernel& kernel) {
  return {kernel.nodes, kernel.global_ranges, tg::kernel_name(kernel.nodes, kernel.global_ranges)};
}

// out = a x b (slots 0, 1, 2) for a kernel with `opts`, on an ordinary AMD:EMU device of the same processor.
std::vector<float> run_with(const tg::ast::kernel& kernel, const tg::codegen::kernel_opts& opts, std::size_t outputs,
                            const std::vector<float>& a, const std::vector<float>& b) {
  tg::device dev("AMD:EMU:gfx1100");
  tg::buffer out = dev.allocate(outputs * 4), ab = dev.allocate(a.size() * 4), bb = dev.allocate(b.size() * 4);
  ab.copy_in(a.data(), a.size() * 4);
  bb.copy_in(b.data(), b.size() * 4);
  auto program = dev.impl().compile(tg::tune::source_with(source_of(kernel), opts));
  std::vector<void*> buffers{out.data(), ab.data(), bb.data()};
  program->launch(buffers, {});
  std::vector<float> got(outputs);
  out.copy_out(got.data(), outputs * 4);
  return got;
}

// Small integers over 8 (tune_kernels.hpp): sums of their products are exact in any order.
void check_computes_matvec(const tg::ast::kernel& kernel, const tg::codegen::kernel_opts& opts) {
  const auto w = tune_test::pattern(rows * cols, 1), x = tune_test::pattern(cols, 2);
  CHECK(run_with(kernel, opts, rows, w, x) == tune_test::reference_matmul(w, x, rows, 1, cols));
}

void check_computes_matmul(const tg::ast::kernel& kernel, const tg::codegen::kernel_opts& opts, std::int64_t n) {
  const auto a = tune_test::pattern(std::size_t(n * n), 1), b = tune_test::pattern(std::size_t(n * n), 2);
  CHECK(run_with(kernel, opts, std::size_t(n * n), a, b) == tune_test::reference_matmul(a, b, n, n, n));
}

}  // namespace

TEST_CASE("GPU candidates stay valid schedules: a power-of-two group within a wave, nested lanes dividing it") {
  const tg::ast::kernel kernel = matvec();
  const tg::tune::gpu_space space = tg::tune::gpu_space_of(kernel.nodes, kernel.global_ranges, 32, 32);
  CHECK_FALSE(space.nested);  // a plain reduce: nested lanes would not change it
  std::set<std::string> seen;
  std::vector<tg::codegen::kernel_opts> frontier{tg::tune::normalize_gpu({}, kernel.global_ranges)};
  while (!frontier.empty() && seen.size() < 400) {
    const tg::codegen::kernel_opts from = frontier.back();
    frontier.pop_back();
    if (!seen.insert(tg::tune::to_text(from)).second) continue;
    for (const auto& c : tg::tune::gpu_neighbours(from, space)) {
      CAPTURE(tg::tune::to_text(c));
      CHECK(c != from);
      CHECK(c.group_lanes >= 1);
      CHECK(c.group_lanes <= 32);
      CHECK((c.group_lanes & (c.group_lanes - 1)) == 0);
      CHECK(c.nested_lanes == 1);
      CHECK(c.reduce_unroll >= 1);
      CHECK(c.reduce_unroll <= 32);
      REQUIRE(c.upcast.size() == 1);
      CHECK(rows % c.upcast[0] == 0);
      CHECK((c.group_lanes == 1 || c.upcast[0] == 1));
      CHECK(tg::tune::normalize_gpu(c, 1) == c);
      frontier.push_back(c);
    }
  }
  CHECK(seen.size() > 20);  // groups 1..32 x unrolls 1..32, and tiles for one thread per output
  MESSAGE(seen.size() << " schedules reachable for r_512_1024");
}

TEST_CASE("BEAM on AMD:EMU ranks a matvec's GPU schedules by the modeled cost and keeps one that computes it") {
  const tg::ast::kernel kernel = matvec();
  tg::emu::emu_candidate_runner runner("gfx1100");
  CHECK(tg::emu::emulated_tuning_target("gfx1100") == "AMD:EMU gfx1100 modeled RX 7900 XTX");
  CHECK(tg::emu::emulated_tuning_target("gfx1201") == "AMD:EMU gfx1201 modeled RX 9070 XT");
  auto found = tg::tune::beam_search(runner, source_of(kernel), kernel.slot_count, {}, {.width = 2});
  REQUIRE(found.has_value());
  MESSAGE("default " << found->default_seconds * 1e6 << " us modeled, best " << tg::tune::to_text(found->best) << " "
                     << found->best_seconds * 1e6 << " us, " << found->tried << " tried");
  CHECK(found->tried >= 4);  // the default and its first round at least
  CHECK(found->skipped == 0);
  CHECK(found->default_seconds >= tg::emu::shader::dispatch_seconds);  // a modeled time, not the interpreter's
  CHECK(found->best_seconds <= found->default_seconds);
  CHECK(runner.device().device().recoveries() == 0);
  check_computes_matvec(kernel, found->best);
  SUBCASE("the same candidate models the same time: the ranking is deterministic") {
    auto again = tg::tune::beam_search(runner, source_of(kernel), kernel.slot_count, {}, {.width = 2});
    REQUIRE(again.has_value());
    CHECK(again->best == found->best);
    CHECK(again->best_seconds == found->best_seconds);
  }
}

TEST_CASE("candidates that fault or hang the GPU or compute a wrong result are skipped, the GPU recovered") {
  constexpr std::int64_t n = 64;
  const tg::ast::kernel kernel = tune_test::matmul(n, n, n);  // one thread per output: tiles, unrolls, groups
  const tg::kernel_source source = source_of(kernel);
  tg::emu::emu_candidate_runner emulated("gfx1100");
  tune_test::planting_runner runner(emulated);
  const tg::tune::beam_result found = tune_test::search_past_planted(runner, source, kernel.slot_count);
  CHECK(emulated.device().device().recoveries() == 2);
  check_computes_matmul(kernel, found.best, n);
}
