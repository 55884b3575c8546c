// runtime_values_test.cpp: numbers known only when a plan runs: scalar inputs (an epsilon),
// a symbolic dim used as a value, and means and rmsnorm over a symbolic dim, each checked
// against plain C++ for several bindings of the variables.
#include <tg/tg.hpp>

#include <cmath>

#include "tests/dsl/reference.hpp"

using tg::test::check_close;
using tg::test::test_device;
using tg::test::random_floats;

namespace {

constexpr auto n = tg::sym<"n", 1, 96>;
constexpr auto rows = tg::sym<"rows", 1, 8>;

TEST_CASE("a scalar input broadcasts against a tensor and is read when the plan runs") {
  constexpr auto x = tg::input<float>("x", tg::dims<3, 5>);
  constexpr auto plan = tg::lower(x * tg::scalar_input<float>("k") + 1.0f);
  static_assert(plan.kernel_count() == 1);
  const auto xs = random_floats(15, 1);
  for (float k : {0.0f, -2.5f, 7.0f}) {
    std::vector<float> want;
    for (float v : xs) want.push_back(v * k + 1);
    check_close(test_device().run(plan, {{"x", xs}, {"k", std::vector<float>{k}}}).to_vector<float>(), want, 1e-6);
  }
}

TEST_CASE("a symbolic dim as a value is its bound variable times its coefficient") {
  constexpr auto x = tg::input<float>("x", tg::dims<n, 2>);
  constexpr auto plan = tg::lower(x + tg::dim_value<float, 3 * n>());
  for (std::int64_t len : {1, 4, 96}) {
    const auto xs = random_floats(std::size_t(len * 2), std::uint32_t(len));
    std::vector<float> want;
    for (float v : xs) want.push_back(v + float(3 * len));
    check_close(test_device().run(plan, {{"x", xs}}, {{"n", len}}).to_vector<float>(), want, 1e-6);
  }
}

TEST_CASE("mean over a symbolic axis divides by the bound length") {
  constexpr auto x = tg::input<float>("x", tg::dims<rows, 2 * n>);
  constexpr auto plan = tg::lower(tg::mean(x, tg::axis<1>));
  for (auto [r, len] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {3, 17}, {8, 96}}) {
    const auto xs = random_floats(std::size_t(r * 2 * len), std::uint32_t(r * 100 + len));
    std::vector<double> want(std::size_t(r), 0.0);
    for (std::int64_t i = 0; i < r; ++i) {
      for (std::int64_t j = 0; j < 2 * len; ++j) want[std::size_t(i)] += xs[std::size_t(i * 2 * len + j)];
      want[std::size_t(i)] /= double(2 * len);
    }
    auto out = test_device().run(plan, {{"x", xs}}, {{"rows", r}, {"n", len}});
    CHECK(out.shape() == std::vector<std::int64_t>{r});
    check_close(out.to_vector<float>(), want, 1e-5);
  }
}

TEST_CASE("mean over a constant and a symbolic axis together counts both") {
  constexpr auto x = tg::input<float>("x", tg::dims<4, n>);
  constexpr auto plan = tg::lower(tg::mean(x));
  for (std::int64_t len : {1, 9, 50}) {
    const auto xs = random_floats(std::size_t(4 * len), std::uint32_t(len + 7));
    double want = 0;
    for (float v : xs) want += v;
    check_close(test_device().run(plan, {{"x", xs}}, {{"n", len}}).to_vector<float>(), std::vector<double>{want / double(4 * len)}, 1e-5);
  }
}

TEST_CASE("rmsnorm over a symbolic width with eps given at run time") {
  constexpr auto x = tg::input<float>("x", tg::dims<rows, n>);
  constexpr auto w = tg::input<float>("w", tg::dims<n>);
  constexpr auto plan = tg::lower(tg::rmsnorm(x, w, tg::scalar_input<float>("eps")));
  static_assert(plan.kernel_count() == 2, "rmsnorm: the per-row scale, then the scaled output");
  for (auto [r, len, eps] : {std::tuple<std::int64_t, std::int64_t, float>{1, 1, 1e-5f}, {3, 64, 1e-6f}, {8, 95, 0.5f}}) {
    const auto xs = random_floats(std::size_t(r * len), std::uint32_t(r + len));
    const auto ws = random_floats(std::size_t(len), std::uint32_t(len + 3));
    std::vector<double> want;
    for (std::int64_t i = 0; i < r; ++i) {
      double ss = 0;
      for (std::int64_t j = 0; j < len; ++j) ss += double(xs[std::size_t(i * len + j)]) * xs[std::size_t(i * len + j)];
      const double scale = 1.0 / std::sqrt(ss / double(len) + double(eps));
      for (std::int64_t j = 0; j < len; ++j) want.push_back(xs[std::size_t(i * len + j)] * scale * ws[std::size_t(j)]);
    }
    auto out = test_device().run(plan, {{"x", xs}, {"w", ws}, {"eps", std::vector<float>{eps}}}, {{"rows", r}, {"n", len}});
    check_close(out.to_vector<float>(), want, 1e-5);
  }
}

TEST_CASE("a missing scalar input is reported by name") {
  constexpr auto x = tg::input<float>("x", tg::dims<2>);
  constexpr auto plan = tg::lower(x + tg::scalar_input<float>("bias"));
  const std::vector<float> xs{1, 2};
  CHECK_THROWS_WITH_AS(test_device().run(plan, {{"x", xs}}), doctest::Contains("'bias'"), tg::usage_error);
  CHECK_THROWS_AS(test_device().run(plan, {{"x", xs}, {"bias", std::vector<float>{1, 2}}}), tg::usage_error);
}

}  // namespace
