// fused_kernel_test.cpp: kernels that store into several buffers, and reduces whose bodies hold
// a reduce that does not read their range (a softmax's row maximum inside the sum of its
// exponentials), against the AST interpreter under several loop shapes; the invariant reduce is
// emitted once, before the loop that uses it, not inside it.
#include <algorithm>

#include "tests/runtime/codegen/jit_check.hpp"

namespace {

using tg::test::check;
using tg::test::shapes_for;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// o[i] = sum_c exp(s[i][c] - m) * v[c] / sum_c exp(s[i][c] - m), m = max_c s[i][c]: three
// reduces over the row, the max inside the other two.
tg::ast::kernel softmax_weighted_sum(std::int64_t rows, std::int64_t cols) {
  tg::kernel_builder kb;
  auto i = kb.output_range(rows);
  auto c = kb.reduce_range(cols);
  auto cm = kb.reduce_range(cols);
  auto cs = kb.reduce_range(cols);
  auto m = kb.max(kb.load<float>(1, i * cols + cm), cm);
  auto p = [&](tg::kvalue at) { return kb.exp2((kb.load<float>(1, i * cols + at) - m) * 1.4426950408889634); };
  auto total = kb.sum(p(cs), cs);
  kb.store(0, i, kb.sum(p(c) * kb.load<float>(2, c), c) * kb.unary(tg::ast::op::reciprocal, total));
  return kb.finish();
}

TEST_CASE("a kernel storing into two buffers writes both, under every loop shape") {
  tg::kernel_builder kb;
  auto i = kb.output_range(6);
  auto j = kb.output_range(16);
  auto x = kb.load<float>(2, i * 16 + j);
  auto y = kb.load<float>(3, j);
  kb.store(0, i * 16 + j, x * y);
  // The second store's value reuses the first's load; its index repeats across i (every row
  // writes the same row sum of y into out1[j]: the same value to the same place).
  kb.store(1, j, x * 0.0 + y * 2.0);
  const std::vector<tg::test::slot> slots{
      {tg::dtype::float32, 96}, {tg::dtype::float32, 16}, {tg::dtype::float32, 96}, {tg::dtype::float32, 16}};
  check(kb.finish(), slots, shapes_for(2, 2), {0, 1});
}

TEST_CASE("a reduce holding a reduce that does not read its range agrees, the inner one emitted once") {
  const tg::ast::kernel k = softmax_weighted_sum(5, 40);
  check(k, {{tg::dtype::float32, 5}, {tg::dtype::float32, 200}, {tg::dtype::float32, 40}}, shapes_for(1, 5));
  // One loop each for the max, the sum and the weighted sum; with the max emitted inside each
  // loop that uses it there would be four.
  const std::string ir = tg::test::ir_of(k, {});
  CHECK(count(ir, "\nr.head") == 3);
}

TEST_CASE("an inner reduce that reads the outer range stays inside its loop") {
  // out[i] = sum_c x[i][c] * sum_d y[c][d]: the inner sum depends on c, so it runs per trip.
  tg::kernel_builder kb;
  auto i = kb.output_range(3);
  auto c = kb.reduce_range(7);
  auto d = kb.reduce_range(9);
  kb.store(0, i, kb.sum(kb.load<float>(1, i * 7 + c) * kb.sum(kb.load<float>(2, c * 9 + d), d), c));
  const tg::ast::kernel k = kb.finish();
  check(k, {{tg::dtype::float32, 3}, {tg::dtype::float32, 21}, {tg::dtype::float32, 63}}, shapes_for(1, 3));
  const std::string ir = tg::test::ir_of(k, {});
  CHECK(count(ir, "\nr.head") == 2);
  CHECK(ir.find("\nr.head") < ir.find("\nr.body"));
}

}  // namespace
