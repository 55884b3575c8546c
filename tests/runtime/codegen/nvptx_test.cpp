// nvptx_test.cpp: PTX from tg kernels without a GPU (runtime/codegen/nvptx_kernel.hpp and
// nvptx_compiler.hpp): DSL plans (elementwise, transcendental, f16 and bf16, reduces split across a
// warp with shfl.sync, movement, matmuls with and without register tiles, an int8 dot) and the LLM's quantized decode matmuls are
// rendered with the GPU heuristic's opts and compiled for sm_80 and sm_90; the PTX must declare the
// target, be a visible entry with the launch bound set, move data through the global state space,
// and call no function it does not define (the driver's JIT could not link one); int8 dots written
// as quads (the LLM's matmuls on a GPU) take one dp4a per quad, unpacked as 32-bit words (no bfe /
// bfi: runtime/codegen/byte_words.hpp). When ptxas is
// installed (a CUDA toolkit), every PTX is also assembled with it; otherwise that check says it
// was skipped.
#include <doctest/doctest.h>

#include <tg/tg.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "runtime/codegen/gpu_frame.hpp"
#include "runtime/codegen/nvptx_compiler.hpp"
#include "runtime/codegen/nvptx_kernel.hpp"
#include "runtime/opt/gpu_heuristic.hpp"

namespace {

struct compiled_ptx {
  std::string text;
  tg::codegen::kernel_opts opts;
};

// The NV device's traits for the heuristic: the renderers' unroll limit (drivers/nv/nv_compile.cpp).
tg::opt::gpu_traits traits() {
  tg::opt::gpu_traits t;
  t.max_reduce_unroll = tg::codegen::max_gpu_reduce_unroll;
  return t;
}

compiled_ptx ptx_of(tg::codegen::nvptx_compiler& c, std::span<const tg::ast::node> nodes, int global_ranges) {
  llvm::LLVMContext context;
  llvm::Module module("k", context);
  c.prepare(module);
  const tg::codegen::kernel_opts opts = tg::opt::choose_gpu_opts(nodes, global_ranges, traits());
  tg::codegen::emit_nvptx_kernel(module, "k", nodes, global_ranges, 256, opts);
  return {c.compile(module, "k"), opts};
}

bool has_ptxas() { return std::system("ptxas --version > /dev/null 2>&1") == 0; }

// ptxas's verdict on the PTX for `arch`; empty when it assembled.
std::string ptxas_errors(const std::string& ptx, const std::string& arch) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto src = dir / ("tg_nvptx_" + std::to_string(std::rand()) + ".ptx");
  std::ofstream(src) << ptx;
  const auto out = src.string() + ".log";
  const int rc = std::system(("ptxas -arch=" + arch + " '" + src.string() + "' -o /dev/null > '" + out + "' 2>&1").c_str());
  std::ifstream log(out);
  std::string text((std::istreambuf_iterator<char>(log)), {});
  std::filesystem::remove(src);
  std::filesystem::remove(out);
  return rc == 0 ? std::string() : text.empty() ? "ptxas failed" : text;
}

void check_ptx(const compiled_ptx& p, const std::string& arch, const std::string& what) {
  CAPTURE(what);
  CAPTURE(arch);
  INFO(p.text);
  CHECK(p.text.find(".target " + arch) != std::string::npos);
  CHECK(p.text.find(".address_size 64") != std::string::npos);
  CHECK(p.text.find(".visible .entry k(") != std::string::npos);
  CHECK(p.text.find(".maxntid 256, 1, 1") != std::string::npos);
  CHECK(std::regex_search(p.text, std::regex("ld\\.global")));
  CHECK(std::regex_search(p.text, std::regex("st\\.global")));
  CHECK(p.text.find(".extern .func") == std::string::npos);  // nothing the JIT would have to link
  if (p.opts.group_lanes > 1) CHECK(p.text.find("shfl.sync.bfly") != std::string::npos);
  if (has_ptxas()) CHECK_MESSAGE(ptxas_errors(p.text, arch).empty(), ptxas_errors(p.text, arch));
}

template <class Plan>
void check_plan(const Plan& plan, const std::string& what) {
  const tg::plan_view view = plan.view();
  for (const char* arch : {"sm_80", "sm_90"}) {
    tg::codegen::nvptx_compiler c(arch);
    for (std::size_t k = 0; k < view.kernels.size(); ++k)
      check_ptx(ptx_of(c, view.kernel_nodes(int(k)), view.kernels[k].global_ranges), arch, what + " kernel " + std::to_string(k));
  }
}

}  // namespace

TEST_CASE("PTX for elementwise, transcendental and 16-bit float kernels") {
  constexpr auto x = tg::input<float>("x", tg::dims<1000>);
  constexpr auto h = tg::input<tg::half>("h", tg::dims<1000>);
  constexpr auto b = tg::input<tg::bfloat16>("b", tg::dims<1000>);
  check_plan(tg::lower(x * 3.0f + 1.0f), "x * 3 + 1");
  check_plan(tg::lower(tg::exp2(x) + tg::log2(x) + tg::sqrt(x) + tg::reciprocal(x)), "exp2 log2 sqrt rcp");
  check_plan(tg::lower(tg::sin(x)), "sin");
  check_plan(tg::lower(h * h + h), "f16");
  check_plan(tg::lower(tg::cast<float>(b) * 2.0f), "bf16 widening");
  check_plan(tg::lower(tg::cast<tg::bfloat16>(x)), "bf16 rounding");
}

TEST_CASE("PTX for reduces split across a warp, movement, a matmul and an int8 dot") {
  constexpr auto m = tg::input<float>("m", tg::dims<64, 4096>);
  constexpr auto v = tg::input<float>("v", tg::dims<4096>);
  check_plan(tg::lower((m * v).sum(tg::axis<1>)), "matvec");
  check_plan(tg::lower(m.max(tg::axis<1>)), "row max");
  constexpr auto a = tg::input<float>("a", tg::dims<33, 45>);
  constexpr auto bm = tg::input<float>("b", tg::dims<45, 17>);
  check_plan(tg::lower(tg::matmul(a, bm)), "matmul");
  constexpr auto big_a = tg::input<float>("a", tg::dims<512, 512>);
  constexpr auto big_b = tg::input<float>("b", tg::dims<512, 512>);
  check_plan(tg::lower(tg::matmul(big_a, big_b)), "matmul 512^3 in register tiles");
  check_plan(tg::lower(a.permute<1, 0>() + 1.0f), "permute");
  constexpr auto p = tg::input<std::int8_t>("p", tg::dims<128, 256>);
  constexpr auto q = tg::input<std::int8_t>("q", tg::dims<256>);
  check_plan(tg::lower((tg::cast<std::int32_t>(p) * tg::cast<std::int32_t>(q)).sum(tg::axis<1>)), "int8 dot");
}

TEST_CASE("int8 dots written as quads compile to one dp4a per quad, unpacked as words") {
  // out[n] = sum over l of the quad sum over e of w[n][4 l + e] * x[4 l + e], three ways: signed
  // bytes (Q8_0), high nibbles of bytes (Q4_K's odd sub-blocks: a byte-wise shift), and activations
  // stored as int16 and narrowed (the LLM's rounded activations).
  constexpr std::int64_t N = 256, K = 1024;
  for (const char* form : {"bytes", "nibbles", "narrowed"}) {
    CAPTURE(form);
    tg::kernel_builder kb;
    auto n = kb.output_range(N);
    auto l = kb.reduce_range(K / 4);
    auto e = kb.reduce_range(4);
    auto j = l * 4 + e;
    const std::string f = form;
    auto w = f == "nibbles" ? kb.cast(tg::dtype::int32, (kb.load<std::uint8_t>(1, n * K + j) >> kb.constant(tg::dtype::uint8, 4)))
                            : kb.cast(tg::dtype::int32, kb.load<std::int8_t>(1, n * K + j));
    auto x = f == "narrowed" ? kb.cast(tg::dtype::int32, kb.cast(tg::dtype::int8, kb.load<std::int16_t>(2, j)))
                             : kb.cast(tg::dtype::int32, kb.load<std::int8_t>(2, j));
    kb.store(0, n, kb.sum(kb.sum_lanes(w * x, e), l));
    const tg::ast::kernel k = kb.finish();
    tg::codegen::nvptx_compiler c("sm_90");
    const compiled_ptx p = ptx_of(c, k.nodes, k.global_ranges);
    REQUIRE(p.opts.group_lanes > 1);  // the quads' lanes split across the warp, as the LLM's matmuls
    check_ptx(p, "sm_90", form);
    CHECK(std::regex_search(p.text, std::regex("dp4a\\.")));
    CHECK(!std::regex_search(p.text, std::regex("bfe\\.|bfi\\.")));  // no byte-by-byte unpacking (runtime/codegen/byte_words.hpp)
    if (f == "narrowed") CHECK(std::regex_search(p.text, std::regex("prmt\\.b32")));
  }
}

TEST_CASE("compute capabilities map to the PTX architectures LLVM knows; unknown ones are refused") {
  CHECK(tg::codegen::nvptx_arch_for(8, 0) == "sm_80");
  CHECK(tg::codegen::nvptx_arch_for(8, 6) == "sm_86");
  CHECK(tg::codegen::nvptx_arch_for(8, 9) == "sm_89");
  CHECK(tg::codegen::nvptx_arch_for(9, 0) == "sm_90");
  CHECK(tg::codegen::nvptx_arch_for(10, 0) == "sm_90");  // newer cards compile sm_90 PTX forward
  CHECK(tg::codegen::nvptx_arch_for(12, 0) == "sm_90");
  CHECK_THROWS_AS(tg::codegen::nvptx_arch_for(6, 1), tg::usage_error);
  CHECK_THROWS_WITH_AS(tg::codegen::nvptx_compiler("sm_1234"), doctest::Contains("not a PTX architecture"), tg::usage_error);
  if (!has_ptxas()) MESSAGE("ptxas not installed: the PTX was checked for its structure, not assembled");
}
