// beam_search_test.cpp: BEAM on the CPU's forked runner: the buffers of a matmul are sized from
// its indexes, the search picks a loop shape that computes the right result, and candidates
// planted to crash, hang or compute a wrong result are each skipped while the search finishes.
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include "runtime/opt/heuristic.hpp"
#include "runtime/tune/beam_search.hpp"
#include "runtime/tune/candidates.hpp"
#include "runtime/tune/fork_runner.hpp"
#include "runtime/tune/opts_text.hpp"
#include "tests/runtime/tune/tune_kernels.hpp"

namespace {

constexpr std::int64_t m = 64, n = 64, k = 64;

tg::kernel_source source_of(const tg::ast::kernel& kernel) {
  return {kernel.nodes, kernel.global_ranges, tg::kernel_name(kernel.nodes, kernel.global_ranges)};
}

tg::tune::fork_runner cpu_runner() {
  return tg::tune::fork_runner(tg::device("CPU", {.threads = 1}), [](const tg::kernel_source& s) {
    return tg::opt::choose_opts(s.nodes, s.global_ranges, 512);
  });
}

// The best shape compiled on the ordinary (threaded) CPU device computes the matmul.
void check_computes_matmul(const tg::ast::kernel& kernel, const tg::codegen::kernel_opts& best) {
  tg::ast::kernel tuned = kernel;
  tuned.upcast = best.upcast;
  tuned.vector_lanes = best.vector_lanes;
  tuned.panel = best.panel;
  tg::device dev("CPU");
  CHECK(tune_test::run_matmul(dev, tuned, m, n, k) ==
        tune_test::reference_matmul(tune_test::pattern(m * k, 1), tune_test::pattern(k * n, 2), m, n, k));
}

}  // namespace

TEST_CASE("a matmul's stand-in buffers have the sizes its indexes reach") {
  const tg::ast::kernel kernel = tune_test::matmul(48, 32, 16);
  auto slots = tg::tune::measure_slots(kernel.nodes, kernel.slot_count, {});
  REQUIRE(slots.has_value());
  REQUIRE(slots->size() == 3);
  CHECK((*slots)[0].size_bytes == 48 * 32 * 4);
  CHECK((*slots)[1].size_bytes == 48 * 16 * 4);
  CHECK((*slots)[2].size_bytes == 16 * 32 * 4);
  CHECK((*slots)[0].written);
  CHECK_FALSE((*slots)[1].written);
  CHECK((*slots)[1].dt == tg::dtype::float32);
  SUBCASE("a bound from a variable takes the launch's value") {
    tg::kernel_builder kb;
    auto i = kb.output_range(kb.variable(0));
    kb.store(0, i, kb.load<float>(1, i * 2 + 1));
    tg::ast::kernel v = kb.finish();
    auto sized = tg::tune::measure_slots(v.nodes, v.slot_count, std::vector<std::int64_t>{10});
    REQUIRE(sized.has_value());
    CHECK((*sized)[0].size_bytes == 40);
    CHECK((*sized)[1].size_bytes == 20 * 4);
  }
  SUBCASE("an index read from a float cannot be bounded") {
    tg::kernel_builder kb;
    auto i = kb.output_range(8);
    kb.store(0, i, kb.load<float>(1, kb.cast(tg::dtype::int64, kb.load<float>(2, i))));
    tg::ast::kernel g = kb.finish();
    CHECK_FALSE(tg::tune::measure_slots(g.nodes, g.slot_count, {}).has_value());
  }
}

TEST_CASE("the default for a matmul: a register tile for the vector width, panels once B outgrows a cache") {
  const tg::ast::kernel big = tune_test::matmul(1024, 1024, 1024), small = tune_test::matmul(64, 64, 64);
  const tg::ast::kernel deep = tune_test::matmul(64, 2048, 2048);
  auto opts = [](const tg::ast::kernel& k, int bits) { return tg::opt::choose_opts(k.nodes, k.global_ranges, bits); };
  CHECK(opts(big, 512).upcast == std::vector<int>{8, 32});
  CHECK(opts(big, 256).upcast == std::vector<int>{4, 32});
  CHECK(opts(big, 512).panel == 256);   // 256 columns x 1024 x 4 bytes: 1 MiB
  CHECK(opts(deep, 512).panel == 128);  // half as wide for twice the depth
  CHECK(opts(small, 512).panel == 0);   // all of B is 16 KiB
  CHECK(opts(small, 512).upcast == std::vector<int>{8, 32});
}

TEST_CASE("candidates keep each upcast a divisor of its range's bound") {
  const tg::ast::kernel kernel = tune_test::matmul(12, 48, 16);
  const auto bounds = tg::tune::output_bounds(kernel.nodes, kernel.global_ranges);
  CHECK(bounds == std::vector<std::int64_t>{12, 48});
  const auto from = tg::tune::normalize({}, kernel.global_ranges);
  const auto next = tg::tune::neighbours(from, bounds);
  CHECK_FALSE(next.empty());
  for (const auto& c : next) {
    CAPTURE(tg::tune::to_text(c));
    CHECK(c != from);
    CHECK(12 % c.upcast[0] == 0);
    CHECK(48 % c.upcast[1] == 0);
    CHECK(c.panel % c.upcast[1] == 0);  // a panel holds whole tiles
    CHECK(c.panel < 48);
  }
  // From no panels, one of 8 tiles (here 8 columns: tiles of 1); from one, half, twice and none.
  CHECK(std::count_if(next.begin(), next.end(), [](const auto& c) { return c.panel == 8; }) == 1);
  auto with_panel = from;
  with_panel.upcast = {1, 4};
  with_panel.panel = 16;
  const auto around = tg::tune::neighbours(with_panel, bounds);
  for (int w : {8, 32, 0})
    CHECK(std::count_if(around.begin(), around.end(), [&](const auto& c) { return c.upcast[1] == 4 && c.panel == w; }) == 1);
  // A tile that would not fit the panel whole is not tried, a smaller one is.
  with_panel.upcast = {1, 8};
  with_panel.panel = 16;
  const auto from_eight = tg::tune::neighbours(with_panel, std::vector<std::int64_t>{12, 96});  // 32 divides 96
  CHECK(std::none_of(from_eight.begin(), from_eight.end(), [](const auto& c) { return c.upcast[1] == 32; }));
  CHECK(std::count_if(from_eight.begin(), from_eight.end(), [](const auto& c) { return c.upcast[1] == 2 && c.panel == 16; }) == 1);
}

TEST_CASE("BEAM on a matmul picks a loop shape that computes the right result") {
  const tg::ast::kernel kernel = tune_test::matmul(m, n, k);
  tg::tune::fork_runner runner = cpu_runner();
  auto found = tg::tune::beam_search(runner, source_of(kernel), kernel.slot_count, {}, {.width = 2});
  REQUIRE(found.has_value());
  CHECK(found->tried > 1);
  CHECK(found->skipped == 0);
  CHECK(found->best_seconds > 0);
  CHECK(found->best_seconds <= found->default_seconds);
  check_computes_matmul(kernel, found->best);
}

TEST_CASE("candidates that crash, hang or compute a wrong result are skipped and the search finishes") {
  const tg::ast::kernel kernel = tune_test::matmul(m, n, k);
  const tg::kernel_source source = source_of(kernel);
  tg::tune::fork_runner runner = cpu_runner();
  // Plant a failure on three of the first round's candidates.
  const auto first = tg::tune::normalize(runner.default_opts(source), kernel.global_ranges);
  const auto round_one = tg::tune::neighbours(first, tg::tune::output_bounds(kernel.nodes, kernel.global_ranges));
  REQUIRE(round_one.size() >= 3);
  const auto crashes = round_one[0], hangs = round_one[1], wrong = round_one[2];
  tg::tune::beam_options options{.width = 2, .timeout = std::chrono::milliseconds(1500)};
  options.in_worker = [&](const tg::codegen::kernel_opts& c, std::span<void* const> buffers) {
    if (c == crashes) raise(SIGSEGV);
    if (c == hangs) sleep(30);
    if (c == wrong) static_cast<float*>(buffers[0])[5] += 1.0f;
  };
  tune_test::log_capture logged;
  auto found = tune_test::search_logging_skips(runner, source, kernel.slot_count, options);
  REQUIRE(found.has_value());
  CHECK(found->skipped == 3);
  CHECK(found->tried >= 2);
  CHECK(found->best != crashes);
  CHECK(found->best != hangs);
  CHECK(found->best != wrong);
  CHECK(logged.count(tg::tune::to_text(crashes) + " skipped: signal 11") == 1);
  CHECK(logged.count(tg::tune::to_text(hangs) + " skipped: no answer after 1500 ms") == 1);
  CHECK(logged.count(tg::tune::to_text(wrong) + " skipped: wrong result: slot 0 element 5") == 1);
  CHECK(logged.count("beam: r_64_64_64: round 1, ") == 1);  // the progress line
  check_computes_matmul(kernel, found->best);
}

TEST_CASE("a kernel whose default fails is left unsearched, and the process goes on") {
  const tg::ast::kernel kernel = tune_test::matmul(m, n, k);
  tg::tune::fork_runner runner = cpu_runner();
  tg::tune::beam_options options;
  options.in_worker = [](const tg::codegen::kernel_opts&, std::span<void* const>) { raise(SIGBUS); };
  CHECK_FALSE(tg::tune::beam_search(runner, source_of(kernel), kernel.slot_count, {}, options).has_value());
}

TEST_CASE("outputs match within a reordered sum's error, relative to the slot's largest values too") {
  const std::vector<tg::tune::slot_info> slots{{tg::dtype::float32, 8, true}};
  auto bytes = [](std::vector<float> v) {
    std::vector<std::byte> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return std::vector<std::vector<std::byte>>{b};
  };
  std::string why;
  // A small result next to a large one (a K-quant's cancelling terms): off by 1e-3 of the large.
  CHECK(tg::tune::outputs_match(slots, bytes({100.0f, 0.01f}), bytes({100.0f, 0.02f}), why));
  CHECK_FALSE(tg::tune::outputs_match(slots, bytes({100.0f, 0.01f}), bytes({100.0f, 0.5f}), why));
  CHECK(why == "slot 0 element 1 is 0.5, the default gives 0.01");
  CHECK_FALSE(tg::tune::outputs_match(slots, bytes({1.0f, 2.0f}), bytes({1.0f, 2.01f}), why));
}
