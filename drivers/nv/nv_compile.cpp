// nv_compile.cpp: the NV backend's slots of the run-time pipeline (runtime/device/pipeline.hpp lists
// its steps; the opts are the GPU heuristic's, from the traits here, shared with AMD):
//   render:  the kernel AST -> a ptx_kernel function (runtime/codegen/nvptx_kernel.hpp)
//   compile: O3 + the NVPTX backend -> PTX (runtime/codegen/nvptx_compiler.hpp), loaded by the
//            driver's JIT (cuModuleLoadDataEx, its error log in the message when it refuses)
//   launch:  the grid from the variables, the buffers' device addresses and the variables as the
//            kernel's parameters, on the device's stream
#include <chrono>
#include <cstdio>
#include <tg/core/error.hpp>
#include <tg/device.hpp>
#include <tg/log.hpp>
#include <vector>

#include "drivers/nv/nv_backend.hpp"
#include "drivers/nv/nv_program.hpp"
#include "runtime/codegen/gpu_frame.hpp"
#include "runtime/codegen/nvptx_compiler.hpp"
#include "runtime/codegen/nvptx_kernel.hpp"
#include "runtime/device/kernel_compiler.hpp"

namespace tg::nv {

namespace {

constexpr int block_size = 256;  // threads per block: 8 warps, as AMD's 8 waves

// For -v (program::describe): the target, the schedule (threads sharing an output, or the
// register tile of outputs a thread computes) and what the driver's JIT made of it: registers per
// thread (occupancy) and local memory per thread (spills).
std::string resources_of(const cuda_driver& cu, CUfunction f, const std::string& arch, const codegen::nvptx_kernel_shape& shape) {
  const std::string schedule = codegen::gpu_schedule_text(shape.group_lanes, shape.upcast, "thread");
  int registers = 0, local = 0;
  if (cu.cuFuncGetAttribute(&registers, function_num_regs, f) != cuda_success ||
      cu.cuFuncGetAttribute(&local, function_local_size_bytes, f) != cuda_success)
    return str(arch, ", ", schedule);
  return str(arch, ", ", schedule, ", ", registers, " registers, ", local, " local bytes per thread");
}

struct nv_rendered final : rendered_kernel {
  codegen::nvptx_kernel_shape shape;
};

class nv_kernel_compiler final : public kernel_compiler {
 public:
  explicit nv_kernel_compiler(nv_backend& owner) : owner_(owner), nvptx_(owner.info().arch) {
    traits_.of = opt::target_traits::kind::gpu;
    // Threads that fill the GPU: each SM holds 2048 (every architecture from sm_80 on).
    traits_.gpu.busy_threads = std::max(1, owner.info().multiprocessors) * 2048;
    traits_.gpu.max_reduce_unroll = codegen::max_gpu_reduce_unroll;
    traits_.gpu.min_thread_block_bytes = 4;  // these two: opt::gpu_traits, measured on an H200
    traits_.gpu.max_split_trips = 16;
    traits_.gpu.sparse_block_bytes = 16;
  }
  const opt::target_traits& traits() const override { return traits_; }

  std::unique_ptr<rendered_kernel> render(const kernel_source& source, const codegen::kernel_opts& opts) override {
    auto r = std::make_unique<nv_rendered>();
    begin_render(*r, source, opts);
    nvptx_.prepare(*r->module);
    r->symbol = source.name;
    r->shape = codegen::emit_nvptx_kernel(*r->module, source.name, source.nodes, source.global_ranges, block_size, opts);
    return r;
  }

  std::shared_ptr<program> compile(std::unique_ptr<rendered_kernel> kernel) override {
    auto& r = static_cast<nv_rendered&>(*kernel);
    const std::string ptx = nvptx_.compile(*r.module, r.symbol);
    const cuda_driver& cu = owner_.driver();
    owner_.make_current();
    char errors[8192] = {};
    int keys[] = {jit_error_log_buffer, jit_error_log_buffer_size_bytes};
    void* values[] = {errors, reinterpret_cast<void*>(std::uintptr_t(sizeof errors))};
    CUmodule module = nullptr;
    if (const CUresult res = cu.cuModuleLoadDataEx(&module, ptx.c_str(), 2, keys, values); res != cuda_success)
      throw device_error(str(owner_.name(), ": the driver did not load kernel ", r.name, "'s PTX (",
                             describe(cu, res, "cuModuleLoadDataEx"), "): ", errors));
    CUfunction function = nullptr;
    if (const CUresult res = cu.cuModuleGetFunction(&function, module, r.symbol.c_str()); res != cuda_success) {
      cu.cuModuleUnload(module);
      check(cu, res, "cuModuleGetFunction");
    }
    auto program = std::make_shared<nv_program>(owner_, module, function, std::move(r.nodes), r.global_ranges, r.shape, r.name);
    program->set_description(resources_of(cu, function, owner_.info().arch, r.shape));
    return program;
  }

 private:
  nv_backend& owner_;
  codegen::nvptx_compiler nvptx_;
  opt::target_traits traits_;
};

}  // namespace

kernel_compiler* nv_backend::compiler() {
  if (!compiler_) compiler_ = std::make_unique<nv_kernel_compiler>(*this);
  return compiler_.get();
}

}  // namespace tg::nv
