// lowering_test.cpp: what tg::lower decides, checked at compile time: kernel counts,
// fusion, and that movement ops are views (no copy kernels); then the same plans (and their
// twins over a symbolic row count) run on the CPU against plain C++ loops.
#include <tg/tg.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tests/dsl/reference.hpp"

namespace {

using tg::ast::op;

constexpr auto x = tg::input<float>("x", tg::dims<8, 16>);
constexpr auto y = tg::input<float>("y", tg::dims<8, 16>);
constexpr auto v = tg::input<float>("v", tg::dims<16>);

// An elementwise chain is one kernel, whatever its length.
constexpr auto chain = tg::lower(tg::exp2(x * y + 1.0f) / tg::sqrt(x * x + 2.0f) - v);
static_assert(chain.kernel_count() == 1);
static_assert(chain.count_ops(0, op::store) == 1);
static_assert(chain.count_ops(0, op::load) == 3, "x, y and v are each loaded once (common subexpressions merge)");

// A reduce and its elementwise producers are one kernel: sum(x * y) reads x and y directly.
constexpr auto dot = tg::lower((x * y).sum(tg::axis<1>));
static_assert(dot.kernel_count() == 1);
static_assert(dot.count_ops(0, op::reduce_sum) == 1);

// Elementwise consumers of a reduce fuse after it in the same kernel.
constexpr auto epilogue = tg::lower(tg::relu(x.sum(tg::axis<1>)) * 3.0f);
static_assert(epilogue.kernel_count() == 1);

// A reduce of a reduce is two kernels; the first keeps its elementwise consumer (relu).
constexpr auto twice = tg::lower(tg::relu(tg::matmul(x, tg::transpose(y))).sum(tg::axis<1>));
static_assert(twice.kernel_count() == 2);
static_assert(twice.count_ops(0, op::max) == 1, "relu is computed in the matmul kernel");
static_assert(twice.count_ops(1, op::max) == 0);

// Softmax: max, sum of exp, normalise.
constexpr auto sm = tg::lower(tg::softmax(x));
static_assert(sm.kernel_count() == 3);
static_assert(sm.count_ops(0, op::reduce_max) == 1 && sm.count_ops(1, op::reduce_sum) == 1);

// Movement ops are views: no kernel of their own, only index arithmetic.
constexpr auto views = tg::lower(tg::transpose(x).reshape(tg::dims<4, 32>).shrink(tg::begin<0, 0>, tg::end<2, 32>) + 1.0f);
static_assert(views.kernel_count() == 1);
static_assert(views.count_ops(0, op::load) == 1);
static_assert(views.buffer_count() == 2, "one input, one output: no intermediate copy");

// Lowering an input by itself copies it into the output buffer.
constexpr auto copy = tg::lower(x);
static_assert(copy.kernel_count() == 1 && copy.buffer_count() == 2);

// Plans list their buffers: inputs by name, then intermediates, then the output.
static_assert(twice.buffer_count() == 4);
static_assert(twice.buffers[std::size_t(twice.output)].role == tg::buffer_role::output);

// The same decisions when the row count is a variable bound at run time.
constexpr auto n = tg::sym<"n", 1, 32>;
constexpr auto xn = tg::input<float>("x", tg::dims<n, 16>);
constexpr auto yn = tg::input<float>("y", tg::dims<n, 16>);
constexpr auto chain_n = tg::lower(tg::exp2(xn * yn + 1.0f) / tg::sqrt(xn * xn + 2.0f) - v);
static_assert(chain_n.kernel_count() == 1 && chain_n.var_count() == 1);
static_assert(chain_n.count_ops(0, op::load) == 3);
constexpr auto twice_n = tg::lower(tg::relu(tg::matmul(xn, tg::transpose(yn))).sum(tg::axis<1>));
static_assert(twice_n.kernel_count() == 2 && twice_n.buffer_count() == 4);
constexpr auto sm_n = tg::lower(tg::softmax(xn));
static_assert(sm_n.kernel_count() == 3);

// Plain C++ in double over row-major (rows, 16) arrays x and y and a 16-vector v.
std::vector<double> chain_ref(const std::vector<float>& xs, const std::vector<float>& ys, const std::vector<float>& vs) {
  std::vector<double> out(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double x_ = xs[i], y_ = ys[i];
    out[i] = std::exp2(x_ * y_ + 1.0) / std::sqrt(x_ * x_ + 2.0) - vs[i % 16];
  }
  return out;
}

// sum over j of relu(sum over k of x[i][k] * y[j][k]), for each row i.
std::vector<double> twice_ref(const std::vector<float>& xs, const std::vector<float>& ys, std::size_t rows) {
  std::vector<double> out(rows, 0.0);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < rows; ++j) {
      double dot_ij = 0;
      for (std::size_t k = 0; k < 16; ++k) dot_ij += double(xs[i * 16 + k]) * ys[j * 16 + k];
      out[i] += std::max(dot_ij, 0.0);
    }
  return out;
}

std::vector<double> softmax_ref(const std::vector<float>& xs, std::size_t rows) {
  std::vector<double> out(xs.size());
  for (std::size_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (std::size_t c = 0; c < 16; ++c) m = std::max(m, double(xs[r * 16 + c]));
    for (std::size_t c = 0; c < 16; ++c) s += std::exp(xs[r * 16 + c] - m);
    for (std::size_t c = 0; c < 16; ++c) out[r * 16 + c] = std::exp(xs[r * 16 + c] - m) / s;
  }
  return out;
}

TEST_CASE("the lowered plans compute what their expressions say") {
  auto& dev = tg::test::test_device();
  using tg::test::check_close;
  const auto xs = tg::test::random_floats(128, 1), ys = tg::test::random_floats(128, 2), vs = tg::test::random_floats(16, 3);

  auto c = dev.run(chain, {{"x", xs}, {"y", ys}, {"v", vs}});
  CHECK(c.shape() == std::vector<std::int64_t>{8, 16});
  check_close(c.to_vector<float>(), chain_ref(xs, ys, vs), 1e-4);

  std::vector<double> want_dot(8, 0.0), want_epilogue(8, 0.0);
  for (std::size_t i = 0; i < 8; ++i) {
    double row = 0;
    for (std::size_t k = 0; k < 16; ++k) want_dot[i] += double(xs[i * 16 + k]) * ys[i * 16 + k], row += xs[i * 16 + k];
    want_epilogue[i] = std::max(row, 0.0) * 3.0;
  }
  check_close(dev.run(dot, {{"x", xs}, {"y", ys}}).to_vector<float>(), want_dot, 1e-5);
  check_close(dev.run(epilogue, {{"x", xs}}).to_vector<float>(), want_epilogue, 1e-5);

  auto t = dev.run(twice, {{"x", xs}, {"y", ys}});
  CHECK(t.shape() == std::vector<std::int64_t>{8});
  check_close(t.to_vector<float>(), twice_ref(xs, ys, 8), 1e-4);
  check_close(dev.run(sm, {{"x", xs}}).to_vector<float>(), softmax_ref(xs, 8), 1e-5);

  // views: transpose (16, 8), reshape (4, 32), rows 0..1, plus 1. Element (r, c) of the
  // reshape is element f = r * 32 + c of the transpose, which is x[f % 8][f / 8].
  std::vector<double> want_views;
  for (std::size_t f = 0; f < 64; ++f) want_views.push_back(double(xs[(f % 8) * 16 + f / 8]) + 1.0);
  auto w = dev.run(views, {{"x", xs}});
  CHECK(w.shape() == std::vector<std::int64_t>{2, 32});
  check_close(w.to_vector<float>(), want_views, 1e-6);

  CHECK(dev.run(copy, {{"x", xs}}).to_vector<float>() == xs);
}

TEST_CASE("one plan over a symbolic row count computes the right values for every binding") {
  auto& dev = tg::test::test_device();
  using tg::test::check_close;
  const auto vs = tg::test::random_floats(16, 4);
  for (std::int64_t rows : {1, 7, 8, 32}) {
    CAPTURE(rows);
    const auto r = std::size_t(rows);
    const auto xs = tg::test::random_floats(r * 16, std::uint32_t(10 + rows)),
               ys = tg::test::random_floats(r * 16, std::uint32_t(50 + rows));
    auto c = dev.run(chain_n, {{"x", xs}, {"y", ys}, {"v", vs}}, {{"n", rows}});
    CHECK(c.shape() == std::vector<std::int64_t>{rows, 16});
    check_close(c.to_vector<float>(), chain_ref(xs, ys, vs), 1e-4);
    auto t = dev.run(twice_n, {{"x", xs}, {"y", ys}}, {{"n", rows}});
    CHECK(t.shape() == std::vector<std::int64_t>{rows});
    check_close(t.to_vector<float>(), twice_ref(xs, ys, r), 1e-4);
    check_close(dev.run(sm_n, {{"x", xs}}, {{"n", rows}}).to_vector<float>(), softmax_ref(xs, r), 1e-5);
  }
}

}  // namespace
