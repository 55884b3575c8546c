// lane_reduce_test.cpp: sums hinted ast::reduce_as_lanes (kernel_builder::sum_lanes), alone,
// nested (pairs summed inside lanes, as the int8 matmul does), around loops, with values
// from the enclosing lanes used inside, under several loop shapes (scalar-lane tiles, and a
// vector output range, where the hint falls back to a loop), against the AST interpreter.
#include "tests/runtime/codegen/jit_check.hpp"

namespace {

using tg::test::check;
using tg::test::shapes_for;

TEST_CASE("a lane sum around a loop keeps vector accumulators and sums them once") {
  tg::kernel_builder kb;
  auto n = kb.output_range(6);
  auto g = kb.reduce_range(5);
  auto l = kb.reduce_range(8);
  auto at = g * 8 + l;
  kb.store(0, n, kb.sum_lanes(kb.sum(kb.load<float>(1, n * 40 + at) * kb.load<float>(2, at), g), l));
  check(kb.finish(), {{tg::dtype::float32, 6}, {tg::dtype::float32, 240}, {tg::dtype::float32, 40}}, shapes_for(1, 2));
}

TEST_CASE("pairs summed inside lanes (the int8 dot product) agree") {
  tg::kernel_builder kb;
  auto n = kb.output_range(4);
  auto t = kb.output_range(2);
  auto g = kb.reduce_range(3);
  auto l = kb.reduce_range(16);
  auto e = kb.reduce_range(2);
  auto j = l * 2 + e;
  auto a = kb.cast(tg::dtype::int32, kb.load<std::int8_t>(1, n * 96 + g * 32 + j));
  auto b = kb.cast(tg::dtype::int32, kb.load<std::int16_t>(2, t * 96 + g * 32 + j));
  auto dot = kb.cast(tg::dtype::float32, kb.sum_lanes(a * b, e));
  auto acc = kb.sum_lanes(kb.sum(dot * kb.load<float>(3, t * 3 + g), g), l);
  kb.store(0, t * 4 + n, acc);
  check(kb.finish(), {{tg::dtype::float32, 8}, {tg::dtype::int8, 384}, {tg::dtype::int16, 192}, {tg::dtype::float32, 6}},
        shapes_for(2, 2));
}

TEST_CASE("integer lane sums, three levels deep, with enclosing lanes used inside, agree") {
  tg::kernel_builder kb;
  auto n = kb.output_range(3);
  auto l = kb.reduce_range(4);
  auto m = kb.reduce_range(2);
  auto e = kb.reduce_range(2);
  auto j = (l * 2 + m) * 2 + e;
  // l * 3 is made first in l's 4 lanes (the left operand is emitted first), then used inside
  // m's 8 and e's 16 lanes, where the codegen spreads the 4-lane value over them.
  auto weight = kb.cast(tg::dtype::int32, l * 3);
  auto inner = kb.sum_lanes(weight * kb.cast(tg::dtype::int32, kb.load<std::int8_t>(1, n * 16 + j)), e);
  auto mid = kb.sum_lanes(weight + inner, m);
  kb.store(0, n, kb.sum_lanes(weight * mid, l));
  check(kb.finish(), {{tg::dtype::int32, 3}, {tg::dtype::int8, 48}}, shapes_for(1, 3));
}

TEST_CASE("a lane sum with a loop inside and a gated load agrees") {
  tg::kernel_builder kb;
  auto n = kb.output_range(5);
  auto l = kb.reduce_range(8);
  auto k = kb.reduce_range(7);
  auto at = k * 8 + l;
  auto valid = at < kb.index(50);
  auto x = kb.load(1, tg::dtype::float32, n * 56 + at, valid);
  kb.store(0, n, kb.sum_lanes(kb.sum(x * x, k), l));
  check(kb.finish(), {{tg::dtype::float32, 5}, {tg::dtype::float32, 280}}, shapes_for(1, 5));
}

}  // namespace
