// elementwise_test.cpp: every unary and binary op, where and casts, on random inputs of
// several shapes (odd and 1-sized dims, broadcasting), against plain C++.
#include <tg/tg.hpp>

#include "tests/dsl/reference.hpp"

using tg::test::check_close;
using tg::test::test_device;
using tg::test::random_floats;

namespace {

std::vector<std::int64_t> dims_of(const tg::shape_t& s) {
  std::vector<std::int64_t> v;
  for (int i = 0; i < s.rank; ++i) v.push_back(s[i].coef);
  return v;
}
std::size_t numel(const std::vector<std::int64_t>& s) {
  std::size_t n = 1;
  for (auto d : s) n *= std::size_t(d);
  return n;
}
template <class F>
std::vector<float> map(const std::vector<float>& xs, F f) {
  std::vector<float> out;
  for (float x : xs) out.push_back(float(f(x)));
  return out;
}

template <class Dims>
void check_unary_ops(std::uint32_t seed) {
  constexpr auto x = tg::input<float>("x", Dims{});
  const std::vector<float> xs = random_floats(numel(dims_of(Dims::value)), seed, true);
  auto run = [&](const auto& plan) { return test_device().run(plan, {{"x", xs}}).template to_vector<float>(); };
  INFO("shape rank " << Dims::value.rank << ", seed " << seed);
  { constexpr auto p = tg::lower(-x);                check_close(run(p), map(xs, [](float v) { return -v; })); }
  { constexpr auto p = tg::lower(tg::exp2(x));       check_close(run(p), map(xs, [](float v) { return std::exp2(v); })); }
  { constexpr auto p = tg::lower(tg::log2(x));       check_close(run(p), map(xs, [](float v) { return std::log2(v); })); }
  { constexpr auto p = tg::lower(tg::sqrt(x));       check_close(run(p), map(xs, [](float v) { return std::sqrt(v); })); }
  { constexpr auto p = tg::lower(tg::reciprocal(x)); check_close(run(p), map(xs, [](float v) { return 1.0f / v; })); }
  { constexpr auto p = tg::lower(tg::sin(x));        check_close(run(p), map(xs, [](float v) { return std::sin(v); })); }
  { constexpr auto p = tg::lower(tg::relu(x));
    check_close(run(p), map(xs, [](float v) { return std::isnan(v) ? v : (v > 0 ? v : 0.0f); })); }
  { constexpr auto p = tg::lower(tg::exp(x));        check_close(run(p), map(xs, [](float v) { return std::exp(v); }), 1e-5); }
  { constexpr auto p = tg::lower(tg::log(x));        check_close(run(p), map(xs, [](float v) { return std::log(v); }), 1e-5); }
  { constexpr auto p = tg::lower(tg::silu(x));
    check_close(run(p), map(xs, [](float v) { return v / (1.0f + std::exp(-v)); }), 1e-5); }
}

TEST_CASE("unary ops match the C++ library on random values with NaN, inf and zeros") {
  check_unary_ops<tg::dims_t<7>>(1);
  check_unary_ops<tg::dims_t<3, 5>>(2);
  check_unary_ops<tg::dims_t<1, 1>>(3);
  check_unary_ops<tg::dims_t<4, 1, 3>>(4);
  check_unary_ops<tg::dims_t<2, 3, 2, 5>>(5);
  check_unary_ops<tg::dims_t<1000>>(6);
}

template <class DA, class DB, class Op>
std::vector<double> reference_binary(const std::vector<float>& a, const std::vector<float>& b, Op op) {
  auto sa = dims_of(DA::value), sb = dims_of(DB::value);
  auto so = dims_of(tg::broadcast_shape(DA::value, DB::value));
  std::vector<double> out;
  tg::test::for_each_index(so, [&](const std::vector<std::int64_t>& at) {
    out.push_back(double(op(a[tg::test::broadcast_index(sa, at)], b[tg::test::broadcast_index(sb, at)])));
  });
  return out;
}

template <class DA, class DB>
void check_binary_ops(std::uint32_t seed) {
  constexpr auto a = tg::input<float>("a", DA{});
  constexpr auto b = tg::input<float>("b", DB{});
  const auto as = random_floats(numel(dims_of(DA::value)), seed, true);
  auto bs = random_floats(numel(dims_of(DB::value)), seed + 100, true);
  if (!bs.empty()) bs[0] = as.empty() ? 1.0f : as[0];  // so cmpeq sees equal values
  auto run = [&](const auto& plan) { return test_device().run(plan, {{"a", as}, {"b", bs}}); };
  INFO("ranks " << DA::value.rank << " and " << DB::value.rank << ", seed " << seed);
  auto ref = [&](auto op) { return reference_binary<DA, DB>(as, bs, op); };
  { constexpr auto p = tg::lower(a + b); check_close(run(p).template to_vector<float>(), ref([](float x, float y) { return x + y; })); }
  { constexpr auto p = tg::lower(a - b); check_close(run(p).template to_vector<float>(), ref([](float x, float y) { return x - y; })); }
  { constexpr auto p = tg::lower(a * b); check_close(run(p).template to_vector<float>(), ref([](float x, float y) { return x * y; })); }
  { constexpr auto p = tg::lower(a / b); check_close(run(p).template to_vector<float>(), ref([](float x, float y) { return x / y; })); }
  { constexpr auto p = tg::lower(tg::maximum(a, b));
    check_close(run(p).template to_vector<float>(), ref([](float x, float y) {
      return std::isnan(x) || std::isnan(y) ? std::nanf("") : std::max(x, y); })); }
  { constexpr auto p = tg::lower(a < b); check_close(run(p).template to_vector<bool>(), ref([](float x, float y) { return x < y; })); }
  { constexpr auto p = tg::lower(tg::cmpeq(a, b));
    check_close(run(p).template to_vector<bool>(), ref([](float x, float y) { return x == y; })); }
  { constexpr auto p = tg::lower(tg::where(a < b, a, b * 2.0f));
    check_close(run(p).template to_vector<float>(), ref([](float x, float y) { return x < y ? x : y * 2.0f; })); }
}

TEST_CASE("binary ops and where broadcast like numpy and match plain C++") {
  check_binary_ops<tg::dims_t<3, 5>, tg::dims_t<3, 5>>(10);
  check_binary_ops<tg::dims_t<3, 5>, tg::dims_t<5>>(11);
  check_binary_ops<tg::dims_t<3, 1>, tg::dims_t<1, 5>>(12);
  check_binary_ops<tg::dims_t<4, 1, 3>, tg::dims_t<2, 1>>(13);
  check_binary_ops<tg::dims_t<1>, tg::dims_t<7, 1>>(14);
  check_binary_ops<tg::dims_t<1, 1>, tg::dims_t<1, 1>>(15);
  check_binary_ops<tg::dims_t<17, 33>, tg::dims_t<33>>(16);
}

TEST_CASE("scalars take the tensor's dtype on either side of an operator") {
  constexpr auto x = tg::input<float>("x", tg::dims<6>);
  constexpr auto p = tg::lower(2.0f * x - 1 + x / 4.0);
  const auto xs = random_floats(6, 20);
  check_close(test_device().run(p, {{"x", xs}}).to_vector<float>(), map(xs, [](float v) { return 2.0f * v - 1 + v / 4.0f; }));
}

TEST_CASE("integer tensors compute in integer arithmetic") {
  constexpr auto a = tg::input<std::int32_t>("a", tg::dims<5, 4>);
  constexpr auto b = tg::input<std::int32_t>("b", tg::dims<4>);
  const auto as = tg::test::random_ints<std::int32_t>(20, 21, -100, 100);
  auto bs = tg::test::random_ints<std::int32_t>(4, 22, 1, 9);
  std::vector<double> sum, quot, max, neg;
  for (std::size_t i = 0; i < 20; ++i) {
    std::int32_t x = as[i], y = bs[i % 4];
    sum.push_back(x + y);
    quot.push_back(x / y);  // rounds toward zero, like C++
    max.push_back(std::max(x, y));
    neg.push_back(-x);
  }
  { constexpr auto p = tg::lower(a + b); check_close(test_device().run(p, {{"a", as}, {"b", bs}}).to_vector<std::int32_t>(), sum, 0); }
  { constexpr auto p = tg::lower(a / b); check_close(test_device().run(p, {{"a", as}, {"b", bs}}).to_vector<std::int32_t>(), quot, 0); }
  { constexpr auto p = tg::lower(tg::maximum(a, b)); check_close(test_device().run(p, {{"a", as}, {"b", bs}}).to_vector<std::int32_t>(), max, 0); }
  { constexpr auto p = tg::lower(-a); check_close(test_device().run(p, {{"a", as}}).to_vector<std::int32_t>(), neg, 0); }
}

TEST_CASE("casts convert between every dtype family") {
  constexpr auto x = tg::input<float>("x", tg::dims<9>);
  const std::vector<float> xs = {-2.75f, -1.5f, -0.25f, 0.0f, 0.5f, 1.25f, 3.0f, 100.5f, 65504.0f};
  SUBCASE("float to int32 truncates toward zero") {
    constexpr auto p = tg::lower(tg::cast<std::int32_t>(x));
    check_close(test_device().run(p, {{"x", xs}}).to_vector<std::int32_t>(), map(xs, [](float v) { return std::trunc(v); }), 0);
  }
  SUBCASE("float to bool is x != 0") {
    constexpr auto p = tg::lower(tg::cast<bool>(x));
    check_close(test_device().run(p, {{"x", xs}}).to_vector<bool>(), map(xs, [](float v) { return v != 0; }), 0);
  }
  SUBCASE("float to float16 and bfloat16 round to nearest even") {
    constexpr auto ph = tg::lower(tg::cast<tg::half>(x));
    constexpr auto pb = tg::lower(tg::cast<tg::bfloat16>(x));
    auto h = test_device().run(ph, {{"x", xs}}).to_vector<tg::half>();
    auto bf = test_device().run(pb, {{"x", xs}}).to_vector<tg::bfloat16>();
    for (std::size_t i = 0; i < xs.size(); ++i) {
      CHECK(h[i].bits == tg::half(xs[i]).bits);
      CHECK(bf[i].bits == tg::bfloat16(xs[i]).bits);
    }
  }
  SUBCASE("int8 and uint8 widen with and without sign") {
    constexpr auto i8 = tg::input<std::int8_t>("i8", tg::dims<4>);
    constexpr auto u8 = tg::input<std::uint8_t>("u8", tg::dims<4>);
    constexpr auto p = tg::lower(tg::cast<std::int64_t>(i8) * 1000 + tg::cast<std::int64_t>(u8));
    std::vector<std::int8_t> a = {-128, -1, 0, 127};
    std::vector<std::uint8_t> b = {255, 1, 0, 128};
    check_close(test_device().run(p, {{"i8", a}, {"u8", b}}).to_vector<std::int64_t>(),
                std::vector<double>{-128000 + 255, -1000 + 1, 0, 127000 + 128}, 0);
  }
}

TEST_CASE("float16 and bfloat16 tensors compute and store in their precision") {
  constexpr auto a = tg::input<tg::half>("a", tg::dims<8>);
  constexpr auto b = tg::input<tg::bfloat16>("b", tg::dims<8>);
  const auto fs = random_floats(8, 30);
  std::vector<tg::half> hs;
  std::vector<tg::bfloat16> bs;
  for (float f : fs) hs.emplace_back(f), bs.emplace_back(f * 3);
  constexpr auto p = tg::lower(a * a);
  auto got = test_device().run(p, {{"a", hs}}).to_vector<tg::half>();
  for (std::size_t i = 0; i < 8; ++i) CHECK(got[i].bits == tg::half(float(hs[i]) * float(hs[i])).bits);
  constexpr auto q = tg::lower(tg::cast<float>(a) + tg::cast<float>(b));  // mixed: computed in float32
  auto sum = test_device().run(q, {{"a", hs}, {"b", bs}}).to_vector<float>();
  for (std::size_t i = 0; i < 8; ++i) CHECK(sum[i] == float(hs[i]) + float(bs[i]));
}

}  // namespace
