// reduce_test.cpp: sum and max over every axis combination, with and without keepdim,
// against plain C++; NaN and inf propagate.
#include <tg/tg.hpp>

#include "tests/dsl/reference.hpp"

using tg::test::check_close;
using tg::test::test_device;
using tg::test::random_floats;

namespace {

// Reference reduce of a row-major (d0, d1, d2) array over a mask of axes.
std::vector<double> reduce3(const std::vector<float>& x, std::int64_t d0, std::int64_t d1, std::int64_t d2,
                            unsigned mask, bool is_max) {
  std::int64_t o0 = mask & 1 ? 1 : d0, o1 = mask & 2 ? 1 : d1, o2 = mask & 4 ? 1 : d2;
  std::vector<double> out(std::size_t(o0 * o1 * o2), is_max ? -INFINITY : 0.0);
  std::vector<bool> nan(out.size(), false);
  for (std::int64_t i = 0; i < d0; ++i)
    for (std::int64_t j = 0; j < d1; ++j)
      for (std::int64_t k = 0; k < d2; ++k) {
        std::size_t o = std::size_t(((mask & 1 ? 0 : i) * o1 + (mask & 2 ? 0 : j)) * o2 + (mask & 4 ? 0 : k));
        double v = x[std::size_t((i * d1 + j) * d2 + k)];
        if (std::isnan(v)) nan[o] = true;
        out[o] = is_max ? std::max(out[o], v) : out[o] + v;
      }
  for (std::size_t o = 0; o < out.size(); ++o)
    if (nan[o]) out[o] = NAN;
  return out;
}

template <std::int64_t D0, std::int64_t D1, std::int64_t D2>
void check_reductions(std::uint32_t seed, bool specials) {
  constexpr auto x = tg::input<float>("x", tg::dims<D0, D1, D2>);
  const auto xs = random_floats(std::size_t(D0 * D1 * D2), seed, specials);
  auto run = [&](const auto& plan) { return test_device().run(plan, {{"x", xs}}).template to_vector<float>(); };
  INFO("shape " << D0 << "x" << D1 << "x" << D2 << ", seed " << seed);
  check_close(run(tg::lower(x.sum(tg::axis<0>))), reduce3(xs, D0, D1, D2, 1, false), 1e-5);
  check_close(run(tg::lower(x.sum(tg::axis<1>))), reduce3(xs, D0, D1, D2, 2, false), 1e-5);
  check_close(run(tg::lower(x.sum(tg::axis<-1>))), reduce3(xs, D0, D1, D2, 4, false), 1e-5);
  check_close(run(tg::lower(x.sum(tg::axis<0, 2>, tg::keepdim))), reduce3(xs, D0, D1, D2, 5, false), 1e-5);
  check_close(run(tg::lower(x.sum())), reduce3(xs, D0, D1, D2, 7, false), 1e-5);
  check_close(run(tg::lower(x.max(tg::axis<1>))), reduce3(xs, D0, D1, D2, 2, true), 0);
  check_close(run(tg::lower(x.max(tg::axis<0, 1>, tg::keepdim))), reduce3(xs, D0, D1, D2, 3, true), 0);
  check_close(run(tg::lower(x.max())), reduce3(xs, D0, D1, D2, 7, true), 0);
}

TEST_CASE("sum and max reduce any set of axes like plain loops") {
  check_reductions<3, 5, 7>(1, false);
  check_reductions<1, 4, 1>(2, false);
  check_reductions<2, 1, 9>(3, false);
  check_reductions<6, 33, 65>(4, false);
}

TEST_CASE("NaN and infinity propagate through sum and max") {
  check_reductions<3, 5, 7>(5, true);
  check_reductions<4, 8, 16>(6, true);
}

TEST_CASE("keepdim keeps reduced axes as 1 and the result shape says so") {
  constexpr auto x = tg::input<float>("x", tg::dims<3, 4>);
  constexpr auto kept = x.sum(tg::axis<1>, tg::keepdim);
  constexpr auto dropped = x.sum(tg::axis<1>);
  static_assert(kept.shape == tg::shape_t{3, 1});
  static_assert(dropped.shape == tg::shape_t{3});
  auto out = test_device().run(tg::lower(kept), {{"x", random_floats(12, 7)}});
  CHECK(out.shape() == std::vector<std::int64_t>{3, 1});
}

TEST_CASE("sums of bools and small integers count in int32") {
  constexpr auto x = tg::input<std::int8_t>("x", tg::dims<200>);
  constexpr auto s = tg::sum(x);
  static_assert(s.dt == tg::dtype::int32);
  std::vector<std::int8_t> xs(200, 100);
  CHECK(test_device().run(tg::lower(s), {{"x", xs}}).to_vector<std::int32_t>()[0] == 20000);
  constexpr auto b = tg::input<float>("b", tg::dims<10>);
  constexpr auto count = tg::sum(b > 0.0f);
  std::vector<float> bs = {1, -1, 2, -2, 3, -3, 0, 0, 5, 6};
  CHECK(test_device().run(tg::lower(count), {{"b", bs}}).to_vector<std::int32_t>()[0] == 5);
}

TEST_CASE("integer max starts from the lowest value, not zero") {
  constexpr auto x = tg::input<std::int32_t>("x", tg::dims<2, 3>);
  std::vector<std::int32_t> xs = {-5, -3, -9, -1, -7, -2};
  auto got = test_device().run(tg::lower(x.max(tg::axis<1>)), {{"x", xs}}).to_vector<std::int32_t>();
  CHECK(got == std::vector<std::int32_t>{-3, -1});
}

}  // namespace
