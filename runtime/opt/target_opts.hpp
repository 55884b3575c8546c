// target_opts.hpp: the one place a kernel's opts are chosen for a target (step 4 of the run-time
// pipeline, runtime/device/pipeline.hpp). A target is described by its traits, not by a heuristic
// of its own: a CPU by the instruction forms its renderer may use, a GPU by its waves
// (gpu_heuristic.hpp). The kernel author's loop shape (ast::kernel::upcast, kernel_source::upcast)
// is a CPU register tile and is taken there; GPUs schedule every kernel from its AST, unless the
// source carries a GPU schedule from tuning (kernel_source::group_lanes).
#pragma once
#include <cstdint>
#include <tg/device/backend.hpp>

#include "runtime/codegen/llvm_kernel.hpp"
#include "runtime/opt/gpu_heuristic.hpp"

namespace tg::opt {

struct target_traits {
  enum class kind : std::uint8_t { cpu, gpu };
  kind of = kind::cpu;
  codegen::x86_isa isa{};  // CPU: vector width and int8 dot products (drivers/cpu/cpu_target.hpp)
  gpu_traits gpu{};        // GPU: lanes per wave, threads that fill the GPU
};

// The author's loop shape where the target takes one, else the default for the target's kind.
codegen::kernel_opts choose_opts_for(const target_traits& target, const kernel_source& source);

// The GPU schedule a source carries (kernel_source::group_lanes and the rest, with its upcast);
// tune::source_with is the other way.
codegen::kernel_opts gpu_schedule_of(const kernel_source& source);

}  // namespace tg::opt
