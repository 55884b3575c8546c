// errors_test.cpp: bad run-time input gets a clear tg::usage_error that names the problem.
#include <tg/tg.hpp>

#include "tests/dsl/reference.hpp"

namespace {

constexpr auto a = tg::input<float>("a", tg::dims<4, 8>);
constexpr auto b = tg::input<float>("b", tg::dims<8>);
constexpr auto plan = tg::lower(a * b);
constexpr auto n = tg::sym<"n", 1, 16>;
constexpr auto s = tg::input<float>("s", tg::dims<n>);
constexpr auto sym_plan = tg::lower(s + 1.0f);

TEST_CASE("a wrong buffer size names the input, both sizes and the shape") {
  std::vector<float> small(31), ok(8);
  CHECK_THROWS_WITH_AS(tg::test::test_device().run(plan, {{"a", small}, {"b", ok}}),
                       "run: input 'a' has 31 elements, the plan expects 32 (4 x 8 float32)", tg::usage_error);
}

TEST_CASE("an unknown input name lists the plan's inputs") {
  std::vector<float> x(32), y(8);
  CHECK_THROWS_WITH_AS(tg::test::test_device().run(plan, {{"a", x}, {"b", y}, {"c", y}}),
                       "run: the plan has no input named 'c' (inputs: a, b)", tg::usage_error);
}

TEST_CASE("a missing input is named with its shape") {
  std::vector<float> x(32);
  CHECK_THROWS_WITH_AS(tg::test::test_device().run(plan, {{"a", x}}), "run: input 'b' (8 float32) is missing", tg::usage_error);
}

TEST_CASE("a wrong dtype names both dtypes") {
  std::vector<float> x(32);
  std::vector<std::int32_t> y(8);
  CHECK_THROWS_WITH_AS(tg::test::test_device().run(plan, {{"a", x}, {"b", y}}),
                       "run: input 'b' holds int32, the plan expects float32", tg::usage_error);
}

TEST_CASE("variables must be bound, known and within range") {
  std::vector<float> x(4);
  CHECK_THROWS_WITH_AS(tg::test::test_device().run(sym_plan, {{"s", x}}),
                       "run: variable 'n' is not bound; pass {\"n\", value}", tg::usage_error);
  CHECK_THROWS_WITH_AS(tg::test::test_device().run(sym_plan, {{"s", x}}, {{"n", 17}}),
                       "run: variable 'n' = 17 is outside its range [1, 16]", tg::usage_error);
  CHECK_THROWS_WITH_AS(tg::test::test_device().run(sym_plan, {{"s", x}}, {{"n", 4}, {"m", 2}}),
                       "run: the plan has no variable named 'm'", tg::usage_error);
  CHECK_THROWS_WITH_AS(tg::test::test_device().run(sym_plan, {{"s", x}}, {{"n", 5}}),
                       "run: input 's' has 4 elements, the plan expects 5 (5 float32)", tg::usage_error);
}

// The DSL tests link the emulated GPU (AMD:EMU) so that they can run on it too.
TEST_CASE("an unknown device kind lists the known ones") {
  if (tg::test::skip_unless_cpu("device names involve no device under test; the CPU run covers them")) return;
  CHECK_THROWS_WITH_AS(tg::device("TPU"), "device 'TPU': no such device kind (known: AMD, AMD:EMU, CPU, NV)", tg::usage_error);
  CHECK_THROWS_AS(tg::device("CPU:3"), tg::usage_error);
}

TEST_CASE("reading a result as the wrong type is an error") {
  std::vector<float> x(32), y(8);
  auto out = tg::test::test_device().run(plan, {{"a", x}, {"b", y}});
  CHECK_THROWS_WITH_AS(out.to_vector<double>(), "host_tensor::to_vector: the tensor holds float32, not float64",
                       tg::usage_error);
}

}  // namespace
