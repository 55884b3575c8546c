// heuristic.hpp: the default opts for a kernel (no search, no timing): register tiles and
// cache panels for kernels with a reduce, nothing for elementwise ones (LLVM's loop vectorizer does those).
#pragma once
#include <cstdint>
#include <span>
#include "runtime/codegen/llvm_kernel.hpp"

namespace tg::opt {

// vector_bits: the CPU's vector width (512: AVX-512 and its 32 registers; else 256-bit AVX2
// with 16), which sizes the register tile.
codegen::kernel_opts choose_opts(std::span<const ast::node> nodes, int global_ranges, int vector_bits);

// Loop bounds of a kernel at launch (ast::eval_index): trip counts of the output ranges and the product of
// all reduce ranges (an estimate of the work per output element).
struct launch_shape {
  std::int64_t outer_trips = 1;   // iterations of the outermost output loop (after upcast)
  std::int64_t total_work = 1;    // product of every range's bound
};
launch_shape measure(std::span<const ast::node> nodes, int global_ranges, const codegen::kernel_opts& opts,
                     std::span<const std::int64_t> vars);

}  // namespace tg::opt
