// amd_emu_processors_test.cpp: the emulated RX 7800 XT (gfx1101) and RX 9070 XT (gfx1201) run DSL
// plans through tg's code generator and the emulated GPU's interpreter, compiled for their own
// processor; gfx1101's kernels differ from gfx1100's (no user-SGPR padding: LLVM's
// FeatureUserSGPRInit16Bug is gfx1100 / gfx1102 only, llvm/docs/AMDGPUUsage.rst "Processors"), and a
// code object is refused by a device of another processor, as ROCm's loader refuses it.
#include <tg/tg.hpp>

#include <string>
#include <tuple>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "drivers/amd/code_object.hpp"
#include "drivers/emu/emu_device.hpp"
#include "runtime/codegen/amdgpu_compiler.hpp"
#include "runtime/codegen/amdgpu_kernel.hpp"
#include "tests/dsl/reference.hpp"

using tg::test::cpu;
using tg::test::random_floats;

namespace {

// Opened once per name: booting the emulated GPU is slow.
tg::device& emulated(const std::string& name) {
  static std::vector<std::pair<std::string, tg::device>> opened;
  for (auto& [n, d] : opened)
    if (n == name) return d;
  return opened.emplace_back(name, tg::device(name)).second;
}

tg::emu::emu_device& emu_of(const std::string& name) { return dynamic_cast<tg::emu::emu_device&>(emulated(name).impl()); }

std::string faults_of(const std::string& name) {
  std::string text;
  for (const auto& f : emu_of(name).emulated_gpu().faults()) text += f.message + "; ";
  return text;
}

// `x + 1` over 64 floats compiled for `processor` by the code generator (a kernarg-pointer-only kernel).
tg::amd::code_object compile_add_one(const std::string& processor) {
  tg::codegen::amdgpu_compiler compiler(processor);
  llvm::LLVMContext context;
  llvm::Module module("k", context);
  compiler.prepare(module);
  constexpr auto x = tg::input<float>("x", tg::dims<64>);
  constexpr auto plan = tg::lower(x + 1.0f);
  const tg::plan_view view = plan.view();
  tg::codegen::emit_amdgpu_kernel(module, "k", view.kernel_nodes(0), view.kernels[0].global_ranges, 64);
  return tg::amd::code_object(compiler.compile(module, "k"));
}

}  // namespace

TEST_CASE("an elementwise add and a reduce run on the emulated gfx1101 and gfx1201, compiled for them") {
  constexpr auto x = tg::input<float>("x", tg::dims<33, 70>);
  constexpr auto y = tg::input<float>("y", tg::dims<70>);
  constexpr auto add = tg::lower(x + y);
  constexpr auto sum = tg::lower(x.sum(tg::axis<1>));
  const auto xs = random_floats(33 * 70, 11), ys = random_floats(70, 12);
  const auto want_add = cpu().run(add, {{"x", xs}, {"y", ys}}).to_vector<float>();
  const auto want_sum = cpu().run(sum, {{"x", xs}}).to_vector<float>();
  for (const auto& [name, processor] : {std::pair<std::string, std::string>{"AMD:EMU:gfx1101", "gfx1101"},
                                        {"AMD:EMU:gfx1201:pci", "gfx1201"}}) {
    CAPTURE(name);
    tg::emu::emu_device& emu = emu_of(name);
    CHECK(emu.device().info().gfx_target == processor);  // what am_backend_compile.cpp compiles for
    CHECK(emu.emulated_gpu().chip().target == processor);
    const std::uint64_t before = emu.emulated_gpu().stats().dispatches;
    try {
      CHECK(emulated(name).run(add, {{"x", xs}, {"y", ys}}).to_vector<float>() == want_add);  // one rounding each
      tg::test::check_close(emulated(name).run(sum, {{"x", xs}}).to_vector<float>(), want_sum, 1e-5);
    } catch (const std::exception& e) {
      FAIL(std::string(e.what()) << "\nfaults: " << faults_of(name));
    }
    CHECK(emu.emulated_gpu().stats().dispatches >= before + 2);  // computed by the emulated GPU
    CHECK_MESSAGE(faults_of(name).empty(), faults_of(name));
  }
}

TEST_CASE("gfx1101 code has no user-SGPR padding, gfx1100 code has; each runs only on its own processor") {
  const tg::amd::code_object co1100 = compile_add_one("gfx1100"), co1101 = compile_add_one("gfx1101");
  CHECK(co1100.processor() == "gfx1100");
  CHECK(co1101.processor() == "gfx1101");
  // Only the kernarg pointer (s[0:1]): gfx1101 says 2; gfx1100 pads to 15 so that the user SGPRs and
  // the workgroup id X add up to 16 (FeatureUserSGPRInit16Bug).
  CHECK(co1101.kernel("k").descriptor.user_sgpr_count() == 2);
  CHECK(co1100.kernel("k").descriptor.user_sgpr_count() == 15);

  const tg::amd::kernarg args[] = {tg::amd::kernarg_pointer, tg::amd::kernarg_pointer};
  tg::emu::emu_device& gfx1100 = emu_of("AMD:EMU:gfx11");
  tg::emu::emu_device& gfx1101 = emu_of("AMD:EMU:gfx1101");
  for (auto [co, device, built, is] : {std::tuple{&co1101, &gfx1100, "gfx1101", "gfx1100"},
                                       std::tuple{&co1100, &gfx1101, "gfx1100", "gfx1101"}}) {
    CAPTURE(std::string(built));
    const std::uint64_t dispatches = device->emulated_gpu().stats().dispatches;
    const std::string refusal = std::string("was built for ") + built + ", this device is " + is;
    CHECK_THROWS_WITH_AS(device->am_backend::load_program(*co, "k", args, {}), doctest::Contains(refusal.c_str()),
                         tg::usage_error);
    CHECK(device->emulated_gpu().stats().dispatches == dispatches);
  }
  CHECK_NOTHROW(gfx1101.am_backend::load_program(co1101, "k", args, {}));
}
