// movement_test.cpp: reshape, permute, expand, pad and shrink, alone and chained (views
// of views, including reshapes of non-contiguous views), against index arithmetic by hand.
#include <tg/tg.hpp>

#include "tests/dsl/reference.hpp"

using tg::test::check_close;
using tg::test::test_device;
using tg::test::random_floats;

namespace {

std::vector<float> iota(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = float(i) - 7.0f;
  return v;
}

TEST_CASE("reshape keeps row-major order") {
  constexpr auto x = tg::input<float>("x", tg::dims<3, 4>);
  const auto xs = iota(12);
  auto out = test_device().run(tg::lower(x.reshape(tg::dims<2, 1, 6>) + 0.0f), {{"x", xs}});
  CHECK(out.shape() == std::vector<std::int64_t>{2, 1, 6});
  check_close(out.to_vector<float>(), xs, 0);
  check_close(test_device().run(tg::lower(x.reshape(tg::dims<4, 3>)), {{"x", xs}}).to_vector<float>(), xs, 0);
  check_close(test_device().run(tg::lower(x.reshape(tg::dims<12>)), {{"x", xs}}).to_vector<float>(), xs, 0);
}

TEST_CASE("permute reorders axes") {
  constexpr auto x = tg::input<float>("x", tg::dims<2, 3, 4>);
  const auto xs = iota(24);
  auto got = test_device().run(tg::lower(x.permute<2, 0, 1>()), {{"x", xs}});
  CHECK(got.shape() == std::vector<std::int64_t>{4, 2, 3});
  std::vector<float> want;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) want.push_back(xs[std::size_t((i * 3 + j) * 4 + k)]);
  check_close(got.to_vector<float>(), want, 0);
}

TEST_CASE("a reshape of a transposed view reads the right elements") {
  constexpr auto x = tg::input<float>("x", tg::dims<3, 4>);
  const auto xs = iota(12);
  // transpose to (4, 3), then flatten: the order of the transposed matrix
  auto got = test_device().run(tg::lower(tg::transpose(x).reshape(tg::dims<2, 6>)), {{"x", xs}}).to_vector<float>();
  std::vector<float> want;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) want.push_back(xs[std::size_t(i * 4 + j)]);
  check_close(got, want, 0);
}

TEST_CASE("expand repeats size-1 dims") {
  constexpr auto x = tg::input<float>("x", tg::dims<3, 1>);
  const std::vector<float> xs = {1, 2, 3};
  auto got = test_device().run(tg::lower(x.expand(tg::dims<3, 4>)), {{"x", xs}}).to_vector<float>();
  check_close(got, std::vector<float>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}, 0);
}

TEST_CASE("pad fills zeros around, even through ops that map 0 elsewhere") {
  constexpr auto x = tg::input<float>("x", tg::dims<2, 3>);
  const std::vector<float> xs = {1, 2, 3, 4, 5, 6};
  auto got = test_device().run(tg::lower(tg::exp2(x).pad(tg::before<1, 0>, tg::after<0, 2>)), {{"x", xs}});
  CHECK(got.shape() == std::vector<std::int64_t>{3, 5});
  std::vector<float> want = {0, 0, 0, 0, 0, 2, 4, 8, 0, 0, 16, 32, 64, 0, 0};
  check_close(got.to_vector<float>(), want, 1e-6);
}

TEST_CASE("shrink takes a window, and pad then shrink round-trips") {
  constexpr auto x = tg::input<float>("x", tg::dims<4, 5>);
  const auto xs = iota(20);
  auto got = test_device().run(tg::lower(x.shrink(tg::begin<1, 2>, tg::end<3, 5>)), {{"x", xs}}).to_vector<float>();
  check_close(got, std::vector<float>{xs[7], xs[8], xs[9], xs[12], xs[13], xs[14]}, 0);
  constexpr auto round_trip = x.pad(tg::before<2, 1>, tg::after<0, 3>).shrink(tg::begin<2, 1>, tg::end<6, 6>);
  check_close(test_device().run(tg::lower(round_trip), {{"x", xs}}).to_vector<float>(), xs, 0);
}

TEST_CASE("a chain of views feeding a reduce reads each element once") {
  constexpr auto x = tg::input<float>("x", tg::dims<6, 4>);
  const auto xs = random_floats(24, 3);
  // (6,4) -> (4,6) -> (4,2,3) -> sum over the 3 -> (4,2)
  constexpr auto y = tg::transpose(x).reshape(tg::dims<4, 2, 3>).sum(tg::axis<2>);
  auto got = test_device().run(tg::lower(y), {{"x", xs}}).to_vector<float>();
  std::vector<double> want;
  for (int j = 0; j < 4; ++j)
    for (int g = 0; g < 2; ++g) {
      double s = 0;
      for (int t = 0; t < 3; ++t) s += xs[std::size_t((g * 3 + t) * 4 + j)];
      want.push_back(s);
    }
  check_close(got, want, 1e-5);
}

}  // namespace
