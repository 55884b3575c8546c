// lane_reduce_test.cpp: sums hinted ast::reduce_as_lanes (kernel_builder::sum_lanes), alone,
// nested (pairs summed inside lanes, as the int8 matmul does), around loops, with values
// from the enclosing lanes used inside, under several loop shapes (scalar-lane tiles, and a
// vector output range, where the hint falls back to a loop), against the AST interpreter.
#include <doctest/doctest.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstring>
#include <drivers/cpu/orc_jit.hpp>
#include <random>
#include <runtime/codegen/llvm_kernel.hpp>
#include <runtime/opt/heuristic.hpp>
#include <tg/tg.hpp>

#include "ast_interpreter.hpp"

namespace {

using kernel_fn = void (*)(void* const*, const std::int64_t*, std::int64_t, std::int64_t);

kernel_fn compile(const tg::ast::kernel& k, const tg::codegen::kernel_opts& opts) {
  static tg::cpu::orc_jit jit;
  static int counter = 0;
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("lanes", *context);
  jit.prepare(*module);
  std::string name = "lanes" + std::to_string(counter++);
  tg::codegen::emit_kernel(*module, name, k.nodes, k.global_ranges, opts);
  return reinterpret_cast<kernel_fn>(jit.compile(std::move(context), std::move(module), name, false));
}

struct slot {
  tg::dtype dt;
  std::size_t count;
};

std::vector<std::byte> random_bytes(slot s, std::mt19937& rng) {
  std::vector<std::byte> bytes(s.count * std::size_t(tg::size_bytes(s.dt)));
  std::normal_distribution<float> normal(0, 2);
  std::uniform_int_distribution<int> small(-128, 127);
  for (std::size_t i = 0; i < s.count; ++i) {
    std::byte* p = bytes.data() + i * std::size_t(tg::size_bytes(s.dt));
    if (s.dt == tg::dtype::float32) {
      float f = normal(rng);
      std::memcpy(p, &f, 4);
    } else if (s.dt == tg::dtype::int16) {
      std::int16_t v = std::int16_t(small(rng));
      std::memcpy(p, &v, 2);
    } else if (s.dt == tg::dtype::int32) {
      std::int32_t v = small(rng);
      std::memcpy(p, &v, 4);
    } else {
      std::int8_t v = std::int8_t(small(rng));
      std::memcpy(p, &v, 1);
    }
  }
  return bytes;
}

// Slot 0 is the float32 or int32 output of `outputs` elements; the others are inputs.
void check(const tg::ast::kernel& k, std::vector<slot> slots, std::vector<tg::codegen::kernel_opts> shapes) {
  std::mt19937 rng(77);
  std::vector<std::vector<std::byte>> inputs;
  for (const slot& s : slots) inputs.push_back(random_bytes(s, rng));
  auto want = inputs;
  std::vector<std::byte*> want_ptrs;
  for (auto& b : want) want_ptrs.push_back(b.data());
  tg::test::ast_interpreter(k.nodes, want_ptrs, {}).run();
  for (const auto& opts : shapes) {
    std::string shape;
    for (int u : opts.upcast) shape += std::to_string(u) + " ";
    INFO("upcast [ " << shape << "]" << (opts.vector_lanes ? "" : " scalar lanes"));
    auto got = inputs;
    std::vector<void*> ptrs;
    for (auto& b : got) ptrs.push_back(b.data());
    compile(k, opts)(ptrs.data(), nullptr, 0, tg::opt::measure(k.nodes, k.global_ranges, opts, {}).outer_trips);
    int bad = 0;
    for (std::size_t i = 0; i < slots[0].count && bad < 3; ++i) {
      double a, b;
      if (slots[0].dt == tg::dtype::float32) {
        float x, y;
        std::memcpy(&x, got[0].data() + i * 4, 4);
        std::memcpy(&y, want[0].data() + i * 4, 4);
        a = x, b = y;
      } else {
        std::int32_t x, y;
        std::memcpy(&x, got[0].data() + i * 4, 4);
        std::memcpy(&y, want[0].data() + i * 4, 4);
        a = x, b = y;
      }
      if (std::fabs(a - b) > 1e-4 * (1 + std::fabs(b))) {
        ++bad;
        FAIL_CHECK("element " << i << ": jit " << a << ", interpreter " << b);
      }
    }
    CHECK(bad == 0);
  }
}

std::vector<tg::codegen::kernel_opts> shapes_for(int ranges, int first_factor) {
  std::vector<tg::codegen::kernel_opts> out{{}};
  std::vector<int> tile(std::size_t(ranges), 1);
  tile[0] = first_factor;
  out.push_back({tile, false});  // scalar lanes: each carries its own lane vectors
  out.push_back({tile, true});   // a vector output range: lane sums become loops
  return out;
}

TEST_CASE("a lane sum around a loop keeps vector accumulators and sums them once") {
  tg::kernel_builder kb;
  auto n = kb.output_range(6);
  auto g = kb.reduce_range(5);
  auto l = kb.reduce_range(8);
  auto at = g * 8 + l;
  kb.store(0, n, kb.sum_lanes(kb.sum(kb.load<float>(1, n * 40 + at) * kb.load<float>(2, at), g), l));
  check(kb.finish(), {{tg::dtype::float32, 6}, {tg::dtype::float32, 240}, {tg::dtype::float32, 40}}, shapes_for(1, 2));
}

TEST_CASE("pairs summed inside lanes (the int8 dot product) agree") {
  tg::kernel_builder kb;
  auto n = kb.output_range(4);
  auto t = kb.output_range(2);
  auto g = kb.reduce_range(3);
  auto l = kb.reduce_range(16);
  auto e = kb.reduce_range(2);
  auto j = l * 2 + e;
  auto a = kb.cast(tg::dtype::int32, kb.load<std::int8_t>(1, n * 96 + g * 32 + j));
  auto b = kb.cast(tg::dtype::int32, kb.load<std::int16_t>(2, t * 96 + g * 32 + j));
  auto dot = kb.cast(tg::dtype::float32, kb.sum_lanes(a * b, e));
  auto acc = kb.sum_lanes(kb.sum(dot * kb.load<float>(3, t * 3 + g), g), l);
  kb.store(0, t * 4 + n, acc);
  check(kb.finish(), {{tg::dtype::float32, 8}, {tg::dtype::int8, 384}, {tg::dtype::int16, 192}, {tg::dtype::float32, 6}},
        shapes_for(2, 2));
}

TEST_CASE("integer lane sums, three levels deep, with enclosing lanes used inside, agree") {
  tg::kernel_builder kb;
  auto n = kb.output_range(3);
  auto l = kb.reduce_range(4);
  auto m = kb.reduce_range(2);
  auto e = kb.reduce_range(2);
  auto j = (l * 2 + m) * 2 + e;
  // l * 3 is made first in l's 4 lanes (the left operand is emitted first), then used inside
  // m's 8 and e's 16 lanes, where the codegen spreads the 4-lane value over them.
  auto weight = kb.cast(tg::dtype::int32, l * 3);
  auto inner = kb.sum_lanes(weight * kb.cast(tg::dtype::int32, kb.load<std::int8_t>(1, n * 16 + j)), e);
  auto mid = kb.sum_lanes(weight + inner, m);
  kb.store(0, n, kb.sum_lanes(weight * mid, l));
  check(kb.finish(), {{tg::dtype::int32, 3}, {tg::dtype::int8, 48}}, shapes_for(1, 3));
}

TEST_CASE("a lane sum with a loop inside and a gated load agrees") {
  tg::kernel_builder kb;
  auto n = kb.output_range(5);
  auto l = kb.reduce_range(8);
  auto k = kb.reduce_range(7);
  auto at = k * 8 + l;
  auto valid = at < kb.index(50);
  auto x = kb.load(1, tg::dtype::float32, n * 56 + at, valid);
  kb.store(0, n, kb.sum_lanes(kb.sum(x * x, k), l));
  check(kb.finish(), {{tg::dtype::float32, 5}, {tg::dtype::float32, 280}}, shapes_for(1, 5));
}

}  // namespace
