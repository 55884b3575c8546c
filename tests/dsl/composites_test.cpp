// composites_test.cpp: matmul, softmax, mean and rmsnorm against plain C++ in double.
#include <tg/tg.hpp>

#include "tests/dsl/reference.hpp"

using tg::test::check_close;
using tg::test::test_device;
using tg::test::random_floats;

namespace {

std::vector<double> matmul_ref(const std::vector<float>& a, const std::vector<float>& b, int batch, int m, int k, int n,
                               bool batched_b) {
  std::vector<double> c;
  for (int z = 0; z < batch; ++z)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int t = 0; t < k; ++t)
          s += double(a[std::size_t((z * m + i) * k + t)]) * b[std::size_t(((batched_b ? z : 0) * k + t) * n + j)];
        c.push_back(s);
      }
  return c;
}

template <int M, int K, int N>
void check_matmul(std::uint32_t seed) {
  constexpr auto a = tg::input<float>("a", tg::dims<M, K>);
  constexpr auto b = tg::input<float>("b", tg::dims<K, N>);
  const auto as = random_floats(M * K, seed), bs = random_floats(K * N, seed + 1);
  constexpr auto plan = tg::lower(tg::matmul(a, b));
  static_assert(plan.kernel_count() == 1, "a matmul is one kernel: the multiply fuses into the reduce");
  INFO(M << "x" << K << " @ " << K << "x" << N);
  check_close(test_device().run(plan, {{"a", as}, {"b", bs}}).template to_vector<float>(), matmul_ref(as, bs, 1, M, K, N, false), 1e-4);
}

TEST_CASE("matmul of odd, 1-sized and tile-sized shapes") {
  check_matmul<7, 5, 3>(1);
  check_matmul<1, 1, 1>(2);
  check_matmul<1, 9, 17>(3);
  check_matmul<64, 32, 48>(4);
  check_matmul<33, 65, 31>(5);
  check_matmul<128, 128, 128>(6);
}

TEST_CASE("batched matmul broadcasts a shared right-hand matrix or pairs batches") {
  constexpr auto a = tg::input<float>("a", tg::dims<3, 4, 5>);
  constexpr auto b = tg::input<float>("b", tg::dims<5, 6>);
  constexpr auto bb = tg::input<float>("bb", tg::dims<3, 5, 6>);
  const auto as = random_floats(60, 7), bs = random_floats(30, 8), bbs = random_floats(90, 9);
  check_close(test_device().run(tg::lower(tg::matmul(a, b)), {{"a", as}, {"b", bs}}).to_vector<float>(),
              matmul_ref(as, bs, 3, 4, 5, 6, false), 1e-4);
  check_close(test_device().run(tg::lower(tg::matmul(a, bb)), {{"a", as}, {"bb", bbs}}).to_vector<float>(),
              matmul_ref(as, bbs, 3, 4, 5, 6, true), 1e-4);
}

std::vector<double> softmax_rows(const std::vector<float>& x, int rows, int cols) {
  std::vector<double> out;
  for (int r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int c = 0; c < cols; ++c) m = std::max(m, double(x[std::size_t(r * cols + c)]));
    for (int c = 0; c < cols; ++c) s += std::exp(x[std::size_t(r * cols + c)] - m);
    for (int c = 0; c < cols; ++c) out.push_back(std::exp(x[std::size_t(r * cols + c)] - m) / s);
  }
  return out;
}

TEST_CASE("softmax over the last axis sums to one and matches the reference") {
  constexpr auto x = tg::input<float>("x", tg::dims<5, 37>);
  auto xs = random_floats(5 * 37, 10);
  xs[3] = 80.0f;  // a large value: the max subtraction keeps exp finite
  constexpr auto plan = tg::lower(tg::softmax(x));
  static_assert(plan.kernel_count() == 3, "softmax: max, sum of exp, normalise");
  check_close(test_device().run(plan, {{"x", xs}}).to_vector<float>(), softmax_rows(xs, 5, 37), 1e-5);
}

TEST_CASE("softmax over the first axis") {
  constexpr auto x = tg::input<float>("x", tg::dims<6, 3>);
  const auto xs = random_floats(18, 11);
  std::vector<float> transposed(18);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 3; ++j) transposed[std::size_t(j * 6 + i)] = xs[std::size_t(i * 3 + j)];
  auto by_rows = softmax_rows(transposed, 3, 6);
  std::vector<double> want(18);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 3; ++j) want[std::size_t(i * 3 + j)] = by_rows[std::size_t(j * 6 + i)];
  check_close(test_device().run(tg::lower(tg::softmax(x, tg::axis<0>)), {{"x", xs}}).to_vector<float>(), want, 1e-5);
}

TEST_CASE("mean divides the sum by the count of reduced elements") {
  constexpr auto x = tg::input<float>("x", tg::dims<4, 6>);
  const auto xs = random_floats(24, 12);
  std::vector<double> want;
  for (int i = 0; i < 4; ++i) {
    double s = 0;
    for (int j = 0; j < 6; ++j) s += xs[std::size_t(i * 6 + j)];
    want.push_back(s / 6);
  }
  check_close(test_device().run(tg::lower(tg::mean(x, tg::axis<1>)), {{"x", xs}}).to_vector<float>(), want, 1e-5);
}

TEST_CASE("rmsnorm with a weight matches x / sqrt(mean(x^2) + eps) * w") {
  constexpr auto x = tg::input<float>("x", tg::dims<3, 64>);
  constexpr auto w = tg::input<float>("w", tg::dims<64>);
  const auto xs = random_floats(192, 13), ws = random_floats(64, 14);
  std::vector<double> want;
  for (int r = 0; r < 3; ++r) {
    double ss = 0;
    for (int c = 0; c < 64; ++c) ss += double(xs[std::size_t(r * 64 + c)]) * xs[std::size_t(r * 64 + c)];
    double scale = 1.0 / std::sqrt(ss / 64 + 1e-5);
    for (int c = 0; c < 64; ++c) want.push_back(xs[std::size_t(r * 64 + c)] * scale * ws[std::size_t(c)]);
  }
  constexpr auto plan = tg::lower(tg::rmsnorm(x, w, 1e-5));
  static_assert(plan.kernel_count() == 2, "rmsnorm: the sum of squares, then the scaled output");
  check_close(test_device().run(plan, {{"x", xs}, {"w", ws}}).to_vector<float>(), want, 1e-5);
}

}  // namespace
