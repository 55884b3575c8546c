// jit_check.hpp: codegen tests' common part: compile a kernel_builder kernel with the CPU
// JIT under a given loop shape, run it on seeded random inputs and compare its output with
// the scalar AST interpreter's.
#pragma once
#include <doctest/doctest.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>
#include <cstring>
#include <string>
#include "drivers/cpu/orc_jit.hpp"
#include <random>
#include "runtime/codegen/llvm_kernel.hpp"
#include "runtime/opt/heuristic.hpp"
#include <tg/tg.hpp>

#include "tests/runtime/codegen/ast_interpreter.hpp"

namespace tg::test {

using kernel_fn = void (*)(void* const*, const std::int64_t*, std::int64_t, std::int64_t);

inline kernel_fn compile(const tg::ast::kernel& k, const tg::codegen::kernel_opts& opts) {
  static tg::cpu::orc_jit jit;
  static int counter = 0;
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("lanes", *context);
  jit.prepare(*module);
  std::string name = "lanes" + std::to_string(counter++);
  tg::codegen::emit_kernel(*module, name, k.nodes, k.global_ranges, opts);
  return reinterpret_cast<kernel_fn>(jit.compile(std::move(context), std::move(module), name, false));
}

// The LLVM IR the codegen emits for k under opts, as text (before any optimization).
inline std::string ir_of(const tg::ast::kernel& k, const tg::codegen::kernel_opts& opts) {
  llvm::LLVMContext context;
  llvm::Module module("ir", context);
  tg::codegen::emit_kernel(module, "k", k.nodes, k.global_ranges, opts);
  std::string text;
  llvm::raw_string_ostream out(text);
  module.print(out, nullptr);
  return out.str();
}

struct slot {
  tg::dtype dt;
  std::size_t count;
};

inline std::vector<std::byte> random_bytes(slot s, std::mt19937& rng) {
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

// Runs k under every shape; the slots in `outputs` (float32 or int32) are compared, the others are inputs.
inline void check(const tg::ast::kernel& k, std::vector<slot> slots, std::vector<tg::codegen::kernel_opts> shapes,
                  std::vector<int> outputs = {0}) {
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
    for (int o : outputs) {
      const std::size_t at = std::size_t(o);
      int bad = 0;
      for (std::size_t i = 0; i < slots[at].count && bad < 3; ++i) {
        double a, b;
        if (slots[at].dt == tg::dtype::float32) {
          float x, y;
          std::memcpy(&x, got[at].data() + i * 4, 4);
          std::memcpy(&y, want[at].data() + i * 4, 4);
          a = x, b = y;
        } else {
          std::int32_t x, y;
          std::memcpy(&x, got[at].data() + i * 4, 4);
          std::memcpy(&y, want[at].data() + i * 4, 4);
          a = x, b = y;
        }
        if (std::fabs(a - b) > 1e-4 * (1 + std::fabs(b))) {
          ++bad;
          FAIL_CHECK("slot " << o << " element " << i << ": jit " << a << ", interpreter " << b);
        }
      }
      CHECK(bad == 0);
    }
  }
}

// The default shape, then the first output range tiled by first_factor as scalar lanes and
// as a vector range.
inline std::vector<tg::codegen::kernel_opts> shapes_for(int ranges, int first_factor) {
  std::vector<tg::codegen::kernel_opts> out{{}};
  std::vector<int> tile(std::size_t(ranges), 1);
  tile[0] = first_factor;
  out.push_back({tile, false});  // scalar lanes: each carries its own lane vectors
  out.push_back({tile, true});   // a vector output range: lane sums become loops
  return out;
}

}  // namespace tg::test
