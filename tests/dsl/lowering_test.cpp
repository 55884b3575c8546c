// lowering_test.cpp: what tg::lower decides, checked at compile time: kernel counts,
// fusion, and that movement ops are views (no copy kernels).
#include <tg/tg.hpp>

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

TEST_CASE("lowering decisions are compile-time facts, and the plans run") {
  // The static_asserts above are the test; running the plans checks they are also valid.
  auto& cpu = tg::test::cpu();
  const auto xs = tg::test::random_floats(128, 1), ys = tg::test::random_floats(128, 2), vs = tg::test::random_floats(16, 3);
  CHECK(cpu.run(chain, {{"x", xs}, {"y", ys}, {"v", vs}}).numel() == 128);
  CHECK(cpu.run(twice, {{"x", xs}, {"y", ys}}).numel() == 8);
  CHECK(cpu.run(copy, {{"x", xs}}).to_vector<float>() == xs);
}

}  // namespace
