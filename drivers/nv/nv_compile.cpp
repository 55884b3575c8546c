// nv_compile.cpp: the NV backend's slots of the run-time pipeline (runtime/device/pipeline.hpp lists
// its steps; the opts are the GPU heuristic's, from the traits in nv_ptx.cpp, shared with AMD):
//   render:  the kernel AST -> a ptx_kernel function (runtime/codegen/nvptx_kernel.hpp), and
//   compile: O3 + the NVPTX backend -> PTX (runtime/codegen/nvptx_compiler.hpp), both nv_ptx.hpp's,
//            then the PTX loaded by the driver's JIT (cuModuleLoadDataEx, its error log in the
//            message when it refuses)
//   launch:  the grid from the variables, the buffers' device addresses and the variables as the
//            kernel's parameters, on the device's stream
#include <cstdint>
#include <tg/core/error.hpp>
#include <vector>

#include "drivers/nv/nv_backend.hpp"
#include "drivers/nv/nv_program.hpp"
#include "drivers/nv/nv_ptx.hpp"
#include "runtime/codegen/gpu_frame.hpp"
#include "runtime/device/kernel_compiler.hpp"

namespace tg::nv {

namespace {

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

class nv_kernel_compiler final : public kernel_compiler {
 public:
  explicit nv_kernel_compiler(nv_backend& owner) : owner_(owner), ptx_(owner.info()) {}
  const opt::target_traits& traits() const override { return ptx_.traits(); }

  std::unique_ptr<rendered_kernel> render(const kernel_source& source, const codegen::kernel_opts& opts) override {
    return ptx_.render(source, opts);
  }

  std::shared_ptr<program> compile(std::unique_ptr<rendered_kernel> kernel) override {
    nv_ptx_kernel k = ptx_.to_ptx(*kernel);
    const cuda_driver& cu = owner_.driver();
    owner_.make_current();
    char errors[8192] = {};
    int keys[] = {jit_error_log_buffer, jit_error_log_buffer_size_bytes};
    void* values[] = {errors, reinterpret_cast<void*>(std::uintptr_t(sizeof errors))};
    CUmodule module = nullptr;
    if (const CUresult res = cu.cuModuleLoadDataEx(&module, k.ptx.c_str(), 2, keys, values); res != cuda_success)
      throw device_error(str(owner_.name(), ": the driver did not load kernel ", k.name, "'s PTX (",
                             describe(cu, res, "cuModuleLoadDataEx"), "): ", errors));
    CUfunction function = nullptr;
    if (const CUresult res = cu.cuModuleGetFunction(&function, module, k.symbol.c_str()); res != cuda_success) {
      cu.cuModuleUnload(module);
      check(cu, res, "cuModuleGetFunction");
    }
    auto program = std::make_shared<nv_program>(owner_, module, function, std::move(k.nodes), k.global_ranges, k.shape, k.name);
    program->set_description(resources_of(cu, function, ptx_.arch(), k.shape));
    return program;
  }

 private:
  nv_backend& owner_;
  nv_ptx_renderer ptx_;
};

}  // namespace

kernel_compiler* nv_backend::compiler() {
  if (!compiler_) compiler_ = std::make_unique<nv_kernel_compiler>(*this);
  return compiler_.get();
}

}  // namespace tg::nv
