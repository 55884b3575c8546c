// symbolic_test.cpp: dims that are variables bound at run time: one compiled plan serves
// every binding within the variable's range.
#include <array>
#include <tg/tg.hpp>

#include "runtime/opt/specialize.hpp"
#include "tests/dsl/reference.hpp"

using tg::test::check_close;
using tg::test::test_device;
using tg::test::random_floats;

namespace {

constexpr auto n = tg::sym<"n", 1, 64>;

TEST_CASE("an elementwise op over a symbolic dim runs for several bindings") {
  constexpr auto x = tg::input<float>("x", tg::dims<n, 16>);
  constexpr auto plan = tg::lower(x * 2.0f + 1.0f);
  static_assert(plan.var_count() == 1);
  for (std::int64_t rows : {1, 5, 64}) {
    const auto xs = random_floats(std::size_t(rows * 16), std::uint32_t(rows));
    auto out = test_device().run(plan, {{"x", xs}}, {{"n", rows}});
    CHECK(out.shape() == std::vector<std::int64_t>{rows, 16});
    std::vector<float> want;
    for (float v : xs) want.push_back(v * 2 + 1);
    check_close(out.to_vector<float>(), want, 1e-6);
  }
}

TEST_CASE("a reduce over a symbolic axis sums exactly the bound length") {
  constexpr auto x = tg::input<float>("x", tg::dims<4, n>);
  constexpr auto plan = tg::lower(x.sum(tg::axis<1>));
  for (std::int64_t len : {1, 7, 64}) {
    const auto xs = random_floats(std::size_t(4 * len), std::uint32_t(len + 50));
    std::vector<double> want(4, 0.0);
    for (std::int64_t i = 0; i < 4; ++i)
      for (std::int64_t j = 0; j < len; ++j) want[std::size_t(i)] += xs[std::size_t(i * len + j)];
    check_close(test_device().run(plan, {{"x", xs}}, {{"n", len}}).to_vector<float>(), want, 1e-5);
  }
}

TEST_CASE("a symbolic shrink reads the first n rows of a fixed buffer (a KV cache)") {
  constexpr auto cache = tg::input<float>("cache", tg::dims<64, 8>);
  constexpr auto plan = tg::lower(cache.shrink(tg::begin<0, 0>, tg::end<n, 8>).sum(tg::axis<0>));
  const auto xs = random_floats(64 * 8, 70);
  for (std::int64_t used : {1, 30, 64}) {
    std::vector<double> want(8, 0.0);
    for (std::int64_t r = 0; r < used; ++r)
      for (int c = 0; c < 8; ++c) want[std::size_t(c)] += xs[std::size_t(r * 8 + c)];
    check_close(test_device().run(plan, {{"cache", xs}}, {{"n", used}}).to_vector<float>(), want, 1e-5);
  }
}

TEST_CASE("matmul with a symbolic row count (a batch of tokens)") {
  constexpr auto a = tg::input<float>("a", tg::dims<n, 12>);
  constexpr auto w = tg::input<float>("w", tg::dims<12, 20>);
  constexpr auto plan = tg::lower(tg::matmul(a, w));
  const auto ws = random_floats(240, 80);
  for (std::int64_t rows : {1, 3, 32}) {
    const auto as = random_floats(std::size_t(rows * 12), std::uint32_t(rows + 90));
    std::vector<double> want;
    for (std::int64_t i = 0; i < rows; ++i)
      for (int j = 0; j < 20; ++j) {
        double s = 0;
        for (int k = 0; k < 12; ++k) s += double(as[std::size_t(i * 12 + k)]) * ws[std::size_t(k * 20 + j)];
        want.push_back(s);
      }
    check_close(test_device().run(plan, {{"a", as}, {"w", ws}}, {{"n", rows}}).to_vector<float>(), want, 1e-4);
  }
}

}  // namespace

namespace {

TEST_CASE("a binding used repeatedly gets a specialized kernel with the same results") {
  tg::device dev("CPU");  // a fresh device: its own cache and counters
  constexpr auto x = tg::input<float>("x", tg::dims<n, 16>);
  constexpr auto plan = tg::lower((x * x).sum(tg::axis<0>));
  const auto xs = random_floats(8 * 16, 99);
  auto first = dev.run(plan, {{"x", xs}}, {{"n", 8}}).to_vector<float>();
  CHECK(dev.stats().specialized == 0);
  // (summation order may differ between the two kernels: equal within rounding)
  for (int i = 0; i < 3; ++i) check_close(dev.run(plan, {{"x", xs}}, {{"n", 8}}).to_vector<float>(), first, 1e-6);
  CHECK(dev.stats().specialized == 1);
  CHECK(dev.stats().compiled == 2);
  // a binding that changes every call keeps using the one generic kernel
  for (std::int64_t v = 1; v <= 6; ++v) dev.run(plan, {{"x", random_floats(std::size_t(v) * 16, 5)}}, {{"n", v}});
  CHECK(dev.stats().compiled == 2);
}

}  // namespace

namespace {

// A hand-built kernel may have an output range nothing reads (of bound 1: the LLM's one-token
// matmuls have one); specialized (device::prepare_fused does it), it keeps that range among its
// output ranges. It was dropped, and the emitter then looked for a range that was not there.
TEST_CASE("a hand-built kernel with an unread output range of bound 1 specializes to the same results") {
  tg::device dev("CPU");
  tg::kernel_builder kb;
  auto rows = kb.output_range(kb.variable(0));
  auto one = kb.output_range(1);
  auto k = kb.reduce_range(8);
  (void)one;
  kb.store(0, rows, kb.sum(kb.load<float>(1, rows * 8 + k), k));
  const tg::ast::kernel generic = kb.finish();
  tg::ast::kernel fixed = generic;
  fixed.nodes = tg::opt::specialize(generic.nodes, std::vector<std::int64_t>{5});
  CHECK(std::count_if(fixed.nodes.begin(), fixed.nodes.end(), [](const tg::ast::node& n) { return n.o == tg::ast::op::range; }) == 3);
  const std::vector<float> xs = random_floats(5 * 8, 7);
  tg::buffer in = dev.allocate(xs.size() * 4), out = dev.allocate(5 * 4);
  in.copy_in(xs.data(), xs.size() * 4);
  std::vector<double> want(5);
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 8; ++c) want[std::size_t(r)] += xs[std::size_t(r * 8 + c)];
  for (const tg::ast::kernel* kernel : std::array<const tg::ast::kernel*, 2>{&generic, &fixed}) {
    const std::vector<float> blank(5, -1.0f);
    out.copy_in(blank.data(), 20);
    dev.launch(*kernel, std::vector<tg::buffer>{out, in}, std::vector<std::int64_t>{5});
    std::vector<float> got(5);
    out.copy_out(got.data(), 20);
    check_close(got, want, 1e-5);
  }
}

}  // namespace
