// amd_emu_test.cpp: DSL plans compiled for gfx1100 and gfx1200 by tg's AMDGPU code generator
// and run on the emulated GPU, which interprets the machine code (the only way it runs a kernel),
// against the same plans on the CPU: bit-exact for integers and movement, within a few ULP for
// float arithmetic. Also: a code object for one generation is refused by the other's device.
#include <tg/tg.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <tuple>
#include <type_traits>

#include "drivers/amd/code_object.hpp"
#include "drivers/emu/emu_device.hpp"
#include "runtime/codegen/amdgpu_compiler.hpp"
#include "runtime/codegen/amdgpu_kernel.hpp"
#include "tests/dsl/reference.hpp"

using tg::test::cpu;
using tg::test::random_floats;
using tg::test::random_ints;

namespace {

constexpr const char* gpus[] = {"AMD:EMU:gfx11", "AMD:EMU:gfx12"};

// Opened once per generation: booting the emulated GPU is slow.
tg::device& emulated(const char* name) {
  static std::vector<std::pair<std::string, tg::device>> opened;
  for (auto& [n, d] : opened)
    if (n == name) return d;
  return opened.emplace_back(name, tg::device(name)).second;
}

// What the emulated GPU recorded: a shader fault names the instruction it could not run.
std::string faults_of(tg::device& d) {
  std::string text;
  for (const auto& f : dynamic_cast<tg::emu::emu_device&>(d.impl()).emulated_gpu().faults()) text += f.message + "; ";
  return text;
}

void check_no_faults(tg::device& d) { CHECK_MESSAGE(faults_of(d).empty(), faults_of(d)); }

// The plan's output on an emulated GPU, as a vector; a failed run reports the GPU's faults.
template <class T, class Plan>
std::vector<T> run_on(const char* name, const Plan& plan, std::initializer_list<tg::named_input> inputs,
                      std::initializer_list<tg::var_binding> vars = {}) {
  auto& emu = dynamic_cast<tg::emu::emu_device&>(emulated(name).impl());
  const std::uint64_t dispatches = emu.emulated_gpu().stats().dispatches;
  try {
    std::vector<T> out = emulated(name).run(plan, inputs, vars).template to_vector<T>();
    CHECK(emu.emulated_gpu().stats().dispatches > dispatches);  // computed by the emulated GPU
    return out;
  } catch (const std::exception& e) {
    FAIL(std::string(e.what()) << "\nfaults: " << faults_of(emulated(name)));
  }
  return {};
}

// How many representable floats lie between a and b (0 when equal; NaN matches NaN).
std::int64_t ulps(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  auto key = [](float f) {
    std::int32_t i;
    std::memcpy(&i, &f, 4);
    return i < 0 ? std::int64_t(INT32_MIN) - i : std::int64_t(i);
  };
  return std::llabs(key(a) - key(b));
}

void check_ulps(const std::vector<float>& got, const std::vector<float>& want, std::int64_t max_ulps) {
  REQUIRE(got.size() == want.size());
  int bad = 0;
  for (std::size_t i = 0; i < got.size() && bad < 5; ++i)
    if (ulps(got[i], want[i]) > max_ulps) {
      ++bad;
      FAIL_CHECK("element " << i << ": " << got[i] << " on the GPU, " << want[i] << " on the CPU");
    }
}

template <class T>
void check_exact(const std::vector<T>& got, const std::vector<T>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(want[i])) {  // any NaN: payloads are not compared
        REQUIRE_MESSAGE(std::isnan(got[i]), "element " << i << ": " << got[i]);
        continue;
      }
    }
    REQUIRE_MESSAGE(got[i] == want[i], "element " << i << ": " << got[i] << " on the GPU, " << want[i] << " on the CPU");
  }
}

}  // namespace

TEST_CASE("elementwise float ops on the emulated gfx11 and gfx12 match the CPU within a few ULP") {
  constexpr auto x = tg::input<float>("x", tg::dims<37, 29>);  // not a multiple of the workgroup
  constexpr auto y = tg::input<float>("y", tg::dims<29>);
  constexpr auto plan = tg::lower(x * y + x / (y * y + 1.0f) - tg::sqrt(x * x));
  const auto xs = random_floats(37 * 29, 1), ys = random_floats(29, 2);
  const auto want = cpu().run(plan, {{"x", xs}, {"y", ys}}).to_vector<float>();
  for (const char* name : gpus) {
    CAPTURE(std::string(name));
    check_ulps(run_on<float>(name, plan, {{"x", xs}, {"y", ys}}), want, 2);
    check_no_faults(emulated(name));
  }
}

TEST_CASE("integer elementwise ops are bit-exact on the emulated GPU") {
  constexpr auto a = tg::input<std::int32_t>("a", tg::dims<300>);
  constexpr auto b = tg::input<std::int32_t>("b", tg::dims<300>);
  constexpr auto plan = tg::lower((a * b + a) / (b * b + 1) - tg::maximum(a, b));
  const auto as = random_ints<std::int32_t>(300, 3, -1000, 1000), bs = random_ints<std::int32_t>(300, 4, -1000, 1000);
  const auto want = cpu().run(plan, {{"a", as}, {"b", bs}}).to_vector<std::int32_t>();
  for (const char* name : gpus) {
    CAPTURE(std::string(name));
    check_exact(run_on<std::int32_t>(name, plan, {{"a", as}, {"b", bs}}), want);
    check_no_faults(emulated(name));
  }
}

TEST_CASE("a sum over an axis matches the CPU") {
  constexpr auto x = tg::input<float>("x", tg::dims<12, 70>);
  constexpr auto sum = tg::lower(x.sum(tg::axis<1>));
  const auto xs = random_floats(12 * 70, 5);
  const auto want_sum = cpu().run(sum, {{"x", xs}}).to_vector<float>();
  for (const char* name : gpus) {
    CAPTURE(std::string(name));
    // The CPU may reassociate the sum (vectorized partial sums); the GPU sums in order.
    tg::test::check_close(run_on<float>(name, sum, {{"x", xs}}), want_sum, 1e-5);
    check_no_faults(emulated(name));
  }
}

// A float max is llvm.maximum (NaN in, NaN out): gfx11 has no such instruction and LLVM expands
// it (v_max_f32 and a NaN check), gfx12 has v_maximum_f32 / v_maximum3_f32.
void check_max_reduce(const char* name) {
  constexpr auto x = tg::input<float>("x", tg::dims<12, 70>);
  constexpr auto max = tg::lower(x.max(tg::axis<0>));
  const auto xs = random_floats(12 * 70, 5, true);
  check_exact(run_on<float>(name, max, {{"x", xs}}), cpu().run(max, {{"x", xs}}).to_vector<float>());
  check_no_faults(emulated(name));
}

TEST_CASE("a max over an axis is bit-exact on the emulated gfx11, NaN included") { check_max_reduce("AMD:EMU:gfx11"); }

TEST_CASE("a max over an axis is bit-exact on the emulated gfx12 (v_maximum_f32), NaN included") {
  check_max_reduce("AMD:EMU:gfx12:pci");
}

TEST_CASE("movement ops (permute, pad, shrink) are bit-exact on the emulated GPU") {
  constexpr auto x = tg::input<float>("x", tg::dims<3, 4, 5>);
  constexpr auto plan = tg::lower(x.permute<2, 0, 1>().pad(tg::before<1, 0, 2>, tg::after<0, 2, 1>)
                                      .shrink(tg::begin<0, 1, 1>, tg::end<6, 5, 6>));
  const auto xs = random_floats(60, 6, true);
  const auto want = cpu().run(plan, {{"x", xs}}).to_vector<float>();
  for (const char* name : gpus) {
    CAPTURE(std::string(name));
    check_exact(run_on<float>(name, plan, {{"x", xs}}), want);
    check_no_faults(emulated(name));
  }
}

TEST_CASE("a symbolic dim runs for several bindings with one compiled kernel") {
  constexpr auto n = tg::sym<"n", 1, 600>;
  constexpr auto x = tg::input<float>("x", tg::dims<n, 3>);
  constexpr auto plan = tg::lower(x * 2.0f + 1.0f);
  // The inner dim symbolic: the flat index is split by a variable (a 64-bit division), and a
  // reduce runs a variable number of steps.
  constexpr auto y = tg::input<float>("y", tg::dims<5, n>);
  constexpr auto z = tg::input<float>("z", tg::dims<n, 5>);
  constexpr auto inner = tg::lower(tg::transpose(z) * 3.0f);  // 5 x n, read down z's columns
  constexpr auto sum = tg::lower(y.sum(tg::axis<1>));
  for (std::int64_t rows : {1, 90, 600}) {
    const auto xs = random_floats(std::size_t(rows * 3), std::uint32_t(rows));
    const auto ys = random_floats(std::size_t(rows * 5), std::uint32_t(rows + 1));
    const auto want = cpu().run(plan, {{"x", xs}}, {{"n", rows}}).to_vector<float>();
    const auto want_inner = cpu().run(inner, {{"z", ys}}, {{"n", rows}}).to_vector<float>();
    const auto want_sum = cpu().run(sum, {{"y", ys}}, {{"n", rows}}).to_vector<float>();
    for (const char* name : gpus) {
      CAPTURE(std::string(name));
      CAPTURE(rows);
      check_exact(run_on<float>(name, plan, {{"x", xs}}, {{"n", rows}}), want);
      check_exact(run_on<float>(name, inner, {{"z", ys}}, {{"n", rows}}), want_inner);
      tg::test::check_close(run_on<float>(name, sum, {{"y", ys}}, {{"n", rows}}), want_sum, 1e-5);
      check_no_faults(emulated(name));
    }
  }
}

TEST_CASE("a kernel compiled for one generation is refused by the other's device, before it runs") {
  tg::device& gfx11 = emulated("AMD:EMU:gfx11");
  tg::device& gfx12 = emulated("AMD:EMU:gfx12");
  auto& emu12 = dynamic_cast<tg::emu::emu_device&>(gfx12.impl());
  auto& emu11 = dynamic_cast<tg::emu::emu_device&>(gfx11.impl());
  for (auto [compiled_for, device, target, other] :
       {std::tuple{"gfx1100", &emu12, "gfx1100", "gfx1200"}, std::tuple{"gfx1200", &emu11, "gfx1200", "gfx1100"}}) {
    CAPTURE(std::string(compiled_for));
    tg::codegen::amdgpu_compiler compiler(compiled_for);
    llvm::LLVMContext context;
    llvm::Module module("k", context);
    compiler.prepare(module);
    constexpr auto x = tg::input<float>("x", tg::dims<64>);
    constexpr auto plan = tg::lower(x + 1.0f);
    const tg::plan_view view = plan.view();
    const auto shape = tg::codegen::emit_amdgpu_kernel(module, "k", view.kernel_nodes(0), view.kernels[0].global_ranges, 64);
    const tg::amd::code_object co(compiler.compile(module, "k"));
    CHECK(shape.buffers == 2);
    const tg::amd::kernarg args[] = {tg::amd::kernarg_pointer, tg::amd::kernarg_pointer};
    const std::uint64_t dispatches = device->emulated_gpu().stats().dispatches;
    const std::string refusal = std::string("was built for ") + target + ", this device is " + other;
    CHECK_THROWS_WITH_AS(device->am_backend::load_program(co, "k", args, {}), doctest::Contains(refusal.c_str()),
                         tg::usage_error);
    CHECK(device->emulated_gpu().stats().dispatches == dispatches);
  }
}

TEST_CASE("transcendental ops and 16-bit floats on the emulated GPU agree with the CPU") {
  constexpr auto x = tg::input<float>("x", tg::dims<500>);
  constexpr auto h = tg::input<tg::half>("h", tg::dims<500>);
  const auto xs = random_floats(500, 8, true);
  std::vector<tg::half> hs;
  for (float v : random_floats(500, 9)) hs.push_back(tg::half(v));
  constexpr auto exp2 = tg::lower(tg::exp2(x));
  constexpr auto log2 = tg::lower(tg::log2(x));
  constexpr auto sqrt = tg::lower(tg::sqrt(x));
  constexpr auto rcp = tg::lower(tg::reciprocal(x));
  constexpr auto sin = tg::lower(tg::sin(x * 0.1f));
  constexpr auto half_math = tg::lower(h * h + h);
  for (const char* name : gpus) {
    CAPTURE(std::string(name));
    // LLVM's expansions of exp2, log2, sqrt and 1/x are correctly rounded or within 1 ULP.
    check_ulps(run_on<float>(name, exp2, {{"x", xs}}), cpu().run(exp2, {{"x", xs}}).to_vector<float>(), 2);
    check_ulps(run_on<float>(name, log2, {{"x", xs}}), cpu().run(log2, {{"x", xs}}).to_vector<float>(), 2);
    check_ulps(run_on<float>(name, sqrt, {{"x", xs}}), cpu().run(sqrt, {{"x", xs}}).to_vector<float>(), 1);
    check_ulps(run_on<float>(name, rcp, {{"x", xs}}), cpu().run(rcp, {{"x", xs}}).to_vector<float>(), 1);
    // sin is the hardware's approximation (v_sin_f32 after range reduction): an absolute bound.
    tg::test::check_close(run_on<float>(name, sin, {{"x", xs}}), cpu().run(sin, {{"x", xs}}).to_vector<float>(), 1e-5);
    const auto got = run_on<tg::half>(name, half_math, {{"h", hs}});
    const auto want = cpu().run(half_math, {{"h", hs}}).to_vector<tg::half>();
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) REQUIRE_MESSAGE(got[i].bits == want[i].bits, "element " << i);
    check_no_faults(emulated(name));
  }
}

TEST_CASE("composites: a matmul, an rmsnorm and an int8 dot product on the emulated GPU") {
  constexpr auto a = tg::input<float>("a", tg::dims<33, 45>);
  constexpr auto b = tg::input<float>("b", tg::dims<45, 17>);
  constexpr auto matmul = tg::lower(tg::matmul(a, b));
  constexpr auto x = tg::input<float>("x", tg::dims<3, 64>);
  constexpr auto w = tg::input<float>("w", tg::dims<64>);
  constexpr auto rmsnorm = tg::lower(tg::rmsnorm(x, w, 1e-5));
  constexpr auto p = tg::input<std::int8_t>("p", tg::dims<9, 32>);
  constexpr auto q = tg::input<std::int8_t>("q", tg::dims<32>);
  constexpr auto dot = tg::lower((tg::cast<std::int32_t>(p) * tg::cast<std::int32_t>(q)).sum(tg::axis<1>));
  const auto as = random_floats(33 * 45, 10), bs = random_floats(45 * 17, 11);
  const auto xs = random_floats(3 * 64, 12), ws = random_floats(64, 13);
  const auto ps = random_ints<std::int8_t>(9 * 32, 14, -128, 127), qs = random_ints<std::int8_t>(32, 15, -128, 127);
  for (const char* name : gpus) {
    CAPTURE(std::string(name));
    tg::test::check_close(run_on<float>(name, matmul, {{"a", as}, {"b", bs}}),
                          cpu().run(matmul, {{"a", as}, {"b", bs}}).to_vector<float>(), 1e-5);
    tg::test::check_close(run_on<float>(name, rmsnorm, {{"x", xs}, {"w", ws}}),
                          cpu().run(rmsnorm, {{"x", xs}, {"w", ws}}).to_vector<float>(), 1e-5);
    check_exact(run_on<std::int32_t>(name, dot, {{"p", ps}, {"q", qs}}),
                cpu().run(dot, {{"p", ps}, {"q", qs}}).to_vector<std::int32_t>());
    check_no_faults(emulated(name));
  }
}
