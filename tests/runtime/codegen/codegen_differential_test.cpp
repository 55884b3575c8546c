// codegen_differential_test.cpp: every kernel of a set of plans, compiled by the LLVM
// codegen under many loop shapes (no opts, each output range upcast by 2/4/8/16, pairs of
// them, as vectors or as scalar lanes, so vector loads, gathers and gated loads are all
// exercised, and each of those in panels of the last range), run in two slices of the outer
// loop as two threads would, must compute
// what the scalar AST interpreter computes on the same random buffers.
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "drivers/cpu/orc_jit.hpp"
#include <random>
#include "runtime/codegen/llvm_kernel.hpp"
#include "runtime/opt/heuristic.hpp"
#include <tg/tg.hpp>

#include "tests/dsl/reference.hpp"
#include "tests/runtime/codegen/ast_interpreter.hpp"

namespace {

using kernel_fn = void (*)(void* const*, const std::int64_t*, std::int64_t, std::int64_t);

tg::cpu::orc_jit& jit() {
  static tg::cpu::orc_jit j;
  return j;
}

kernel_fn compile(std::span<const tg::ast::node> nodes, int global_ranges, const tg::codegen::kernel_opts& opts) {
  static int counter = 0;
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("differential", *context);
  jit().prepare(*module);
  std::string name = "k" + std::to_string(counter++);
  tg::codegen::emit_kernel(*module, name, nodes, global_ranges, opts);
  return reinterpret_cast<kernel_fn>(jit().compile(std::move(context), std::move(module), name, false));
}

// Candidate loop shapes: none, each output range with a constant bound upcast by every
// factor dividing it, and the last two ranges upcast together.
std::vector<tg::codegen::kernel_opts> candidate_opts(std::span<const tg::ast::node> nodes, int global_ranges) {
  std::vector<std::int64_t> bounds(std::size_t(global_ranges), -1);
  for (const auto& n : nodes)
    if (n.o == tg::ast::op::range && n.arg < global_ranges && nodes[std::size_t(n.src[0])].o == tg::ast::op::constant)
      bounds[std::size_t(n.arg)] = nodes[std::size_t(n.src[0])].arg;
  std::vector<tg::codegen::kernel_opts> out{{}};
  for (int r = 0; r < global_ranges; ++r)
    for (int f : {2, 4, 8, 16})
      if (bounds[std::size_t(r)] > 0 && bounds[std::size_t(r)] % f == 0) {
        tg::codegen::kernel_opts o;
        o.upcast.assign(std::size_t(global_ranges), 1);
        o.upcast[std::size_t(r)] = f;
        out.push_back(o);
        if (r >= 1 && bounds[std::size_t(r - 1)] > 0 && bounds[std::size_t(r - 1)] % 2 == 0) {
          o.upcast[std::size_t(r - 1)] = 2;
          out.push_back(o);
        }
      }
  // the same shapes with every lane scalar (no vector range; the reduce is vectorized)
  const std::size_t vector_shapes = out.size();
  for (std::size_t i = 1; i < vector_shapes; ++i) {
    tg::codegen::kernel_opts o = out[i];
    o.vector_lanes = false;
    out.push_back(o);
  }
  // panels of the last range: two tiles (dividing the bound where the tile does twice) and
  // three (a short last panel)
  const std::size_t lane_shapes = out.size();
  for (std::size_t i = 0; i < lane_shapes && global_ranges >= 2; ++i) {
    const int up = out[i].upcast.empty() ? 1 : out[i].upcast.back();
    const std::int64_t bound = bounds.back();
    for (int tiles : {2, 3}) {
      if (bound > 0 && tiles * up >= bound) continue;  // a symbolic bound: any number of panels
      tg::codegen::kernel_opts o = out[i];
      o.panel = tiles * up;
      out.push_back(o);
    }
  }
  return out;
}

std::vector<std::byte> random_buffer(const tg::buffer_info& b, std::span<const std::int64_t> vars,
                                     std::span<const tg::symbol> syms, std::mt19937& rng) {
  std::int64_t n = 1;
  for (int i = 0; i < b.shape.rank; ++i) n *= b.shape[i].value(syms, vars);
  std::vector<std::byte> bytes(std::size_t(n) * std::size_t(tg::size_bytes(b.dt)) + 64);
  std::normal_distribution<float> normal(0, 2);
  std::uniform_int_distribution<int> small(-50, 50);
  for (std::int64_t i = 0; i < n; ++i) {
    std::byte* p = bytes.data() + i * tg::size_bytes(b.dt);
    switch (b.dt) {
      case tg::dtype::float32: { float f = normal(rng); std::memcpy(p, &f, 4); break; }
      case tg::dtype::float16: { tg::half h(normal(rng)); std::memcpy(p, &h, 2); break; }
      case tg::dtype::bfloat16: { tg::bfloat16 h(normal(rng)); std::memcpy(p, &h, 2); break; }
      case tg::dtype::int32: { std::int32_t v = small(rng); std::memcpy(p, &v, 4); break; }
      case tg::dtype::bool_: { std::uint8_t v = std::uint8_t(small(rng) > 0); std::memcpy(p, &v, 1); break; }
      default: { std::int8_t v = std::int8_t(small(rng)); std::memcpy(p, &v, 1); break; }
    }
  }
  return bytes;
}

// Runs every kernel of the plan under every candidate loop shape against the interpreter.
void check_plan(const tg::plan_view& plan, std::vector<std::int64_t> vars = {}) {
  std::mt19937 rng(1234);
  for (std::size_t k = 0; k < plan.kernels.size(); ++k) {
    const tg::kernel_info& info = plan.kernels[k];
    auto nodes = plan.kernel_nodes(int(k));
    std::vector<std::vector<std::byte>> inputs;
    for (int s = 0; s < info.slot_count; ++s)
      inputs.push_back(random_buffer(plan.buffers[std::size_t(info.slot_buffer[s])], vars, plan.vars, rng));
    std::vector<std::vector<std::byte>> want = inputs;
    std::vector<std::byte*> want_ptrs;
    for (auto& b : want) want_ptrs.push_back(b.data());
    tg::test::ast_interpreter(nodes, want_ptrs, vars).run();
    tg::dtype out_dt = nodes.back().dt;
    for (const auto& opts : candidate_opts(nodes, info.global_ranges)) {
      std::string shape;
      for (int u : opts.upcast) shape += std::to_string(u) + " ";
      if (!opts.vector_lanes) shape += "scalar lanes ";
      if (opts.panel > 0) shape += "panel " + std::to_string(opts.panel) + " ";
      INFO("kernel " << k << " (" << tg::kernel_name(nodes, info.global_ranges) << "), upcast [ " << shape << "]");
      std::vector<std::vector<std::byte>> got = inputs;
      std::vector<void*> ptrs;
      for (auto& b : got) ptrs.push_back(b.data());
      kernel_fn fn = compile(nodes, info.global_ranges, opts);
      std::int64_t trips = info.global_ranges == 0 ? 1 : tg::opt::measure(nodes, info.global_ranges, opts, vars).outer_trips;
      // In two slices of the outer loop, as two threads would run it (each slice sweeps every
      // panel of the last range).
      fn(ptrs.data(), vars.data(), 0, trips / 2);
      fn(ptrs.data(), vars.data(), trips / 2, trips);
      std::size_t n = got[0].size() / std::size_t(tg::size_bytes(out_dt));
      int bad = 0;
      for (std::size_t i = 0; i < n && bad < 3; ++i) {
        double a = 0, b = 0;
        if (out_dt == tg::dtype::float32) {
          float x, y;
          std::memcpy(&x, got[0].data() + i * 4, 4);
          std::memcpy(&y, want[0].data() + i * 4, 4);
          a = x, b = y;
        } else if (out_dt == tg::dtype::int32) {
          std::int32_t x, y;
          std::memcpy(&x, got[0].data() + i * 4, 4);
          std::memcpy(&y, want[0].data() + i * 4, 4);
          a = x, b = y;
        } else {
          a = double(std::to_integer<int>(got[0][i])), b = double(std::to_integer<int>(want[0][i]));
          if (tg::size_bytes(out_dt) == 2 && (i % 2)) continue;
        }
        if (!tg::test::close(a, b, 2e-4)) {
          ++bad;
          FAIL_CHECK("element " << i << ": jit " << a << ", interpreter " << b);
        }
      }
      CHECK(bad == 0);
    }
  }
}

constexpr auto a = tg::input<float>("a", tg::dims<12, 8>);
constexpr auto b = tg::input<float>("b", tg::dims<8, 16>);
constexpr auto wide = tg::input<float>("wide", tg::dims<8, 96>);
constexpr auto m = tg::input<float>("m", tg::dims<8, 16>);

TEST_CASE("matmul kernels agree with the interpreter under every loop shape") {
  check_plan(tg::lower(tg::matmul(a, b)).view());
  check_plan(tg::lower(tg::relu(tg::matmul(a, b)).sum(tg::axis<1>)).view());
  check_plan(tg::lower(tg::matmul(a, wide)).view());  // panels of 32 and 48 columns at upcast 16
}

TEST_CASE("reductions over padded and permuted views agree (gated loads in vector lanes)") {
  check_plan(tg::lower(m.pad(tg::before<1, 2>, tg::after<3, 2>).sum(tg::axis<0>)).view());
  check_plan(tg::lower(tg::transpose(m).reshape(tg::dims<4, 32>).max(tg::axis<1>, tg::keepdim) + 1.0f).view());
  check_plan(tg::lower(tg::softmax(m)).view());
}

TEST_CASE("16-bit floats, integers and bools agree in vector code") {
  constexpr auto h = tg::input<tg::half>("h", tg::dims<8, 16>);
  constexpr auto bf = tg::input<tg::bfloat16>("bf", tg::dims<8, 16>);
  constexpr auto i = tg::input<std::int32_t>("i", tg::dims<8, 16>);
  check_plan(tg::lower(tg::cast<float>((h * h).sum(tg::axis<0>, tg::keepdim) + tg::cast<tg::half>(bf))).view());
  check_plan(tg::lower(tg::cast<float>(bf).max(tg::axis<0>)).view());
  check_plan(tg::lower(i.max(tg::axis<0>) + (i > 3).sum(tg::axis<0>)).view());
  check_plan(tg::lower(tg::where(i < 0, tg::cast<float>(h), tg::cast<float>(bf)).sum(tg::axis<0>)).view());
}

TEST_CASE("kernels with symbolic bounds agree for several bindings") {
  constexpr auto n = tg::sym<"n", 1, 32>;
  constexpr auto x = tg::input<float>("x", tg::dims<n, 16>);
  constexpr auto y = tg::input<float>("y", tg::dims<8, n>);
  for (std::int64_t v : {1, 7, 32}) check_plan(tg::lower((x * x).sum(tg::axis<0>)).view(), {v});
  for (std::int64_t v : {1, 7, 32}) check_plan(tg::lower(tg::matmul(a, y)).view(), {v});  // panels of a symbolic bound
}

}  // namespace
