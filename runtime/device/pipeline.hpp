// pipeline.hpp: the run-time pipeline, one line per step, as include/tg/lower/pipeline.hpp lists
// the compile-time passes. A kernel AST reaches a running program through:
//   1. specialize  device::compile_for: a binding launched specialize_after times gets a kernel
//                  with those values as constants (runtime/opt/specialize.hpp)
//   2. cache       device::compile: one program per AST and loop shape on a device
//   3. tune        tune::compile_tuned: the tuning cache's schedule (a CPU loop shape or a GPU
//                  schedule), or a BEAM search at the first launch with TG_BEAM=n
//                  (runtime/tune/tuned_compile.hpp)
//   4. opts        opt::choose_opts_for: a tuned schedule, else the author's loop shape (CPUs),
//                  else the default for the target's traits (runtime/opt/target_opts.hpp)
//   5. render      kernel_compiler::render: AST + opts -> LLVM IR for the target
//                  (codegen/llvm_kernel.hpp for CPUs, codegen/amdgpu_kernel.hpp for AMD GPUs)
//   6. compile     kernel_compiler::compile: IR -> a program (drivers/cpu: ORC JIT;
//                  drivers/amd: AMDGPU TargetMachine, lld, the code-object loader)
//   7. launch      program::launch: buffers and variables in (on GPUs, the grid from the variables)
// Steps 1-3 are the device's (runtime/device/device.cpp), 4 is here, 5-7 are the backend's slots
// (kernel_compiler.hpp); backend::compile runs 4-6.
#pragma once
#include <memory>
#include <tg/device/backend.hpp>

#include "runtime/device/kernel_compiler.hpp"

namespace tg {

// Steps 4-6 for `source` on `compiler`'s target.
std::shared_ptr<program> compile_through(kernel_compiler& compiler, const kernel_source& source);
// Steps 4-6 for kernels launched as one: each part's opts as its own kernel's would be (a part
// carrying a schedule keeps it: device::prepare_fused gives the parts their tuned schedules,
// runtime/tune/tuned_compile.hpp: tune_fused_parts), then the compiler's render_fused; nullptr
// where the compiler does not fuse.
std::shared_ptr<program> compile_fused_through(kernel_compiler& compiler, const fused_source& source);

}  // namespace tg
