// nv_compile.cpp: the NV backend's slots of the run-time pipeline (runtime/device/pipeline.hpp lists
// its steps; the opts are the GPU heuristic's, from the traits here, shared with AMD):
//   render:  the kernel AST -> a ptx_kernel function (runtime/codegen/nvptx_kernel.hpp)
//   compile: O3 + the NVPTX backend -> PTX (runtime/codegen/nvptx_compiler.hpp), loaded by the
//            driver's JIT (cuModuleLoadDataEx, its error log in the message when it refuses)
//   launch:  the grid from the variables, the buffers' device addresses and the variables as the
//            kernel's parameters, on the device's stream
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <tg/core/error.hpp>
#include <tg/device.hpp>
#include <tg/log.hpp>
#include <vector>

#include "drivers/nv/nv_backend.hpp"
#include "runtime/codegen/gpu_frame.hpp"
#include "runtime/codegen/nvptx_compiler.hpp"
#include "runtime/codegen/nvptx_kernel.hpp"
#include "runtime/device/kernel_compiler.hpp"

namespace tg::nv {

namespace {

constexpr int block_size = 256;  // threads per block: 8 warps, as AMD's 8 waves

class nv_program final : public program {
 public:
  nv_program(nv_backend& owner, CUmodule module, CUfunction function, std::vector<ast::node> nodes, int global_ranges,
             codegen::nvptx_kernel_shape shape, std::string name)
      : owner_(owner), module_(module), function_(function), nodes_(std::move(nodes)), global_ranges_(global_ranges),
        shape_(shape), name_(std::move(name)) {}
  ~nv_program() override {  // may not throw: errors are ignored here
    owner_.driver().cuCtxSetCurrent(owner_.context());
    owner_.driver().cuModuleUnload(module_);
  }

  std::string describe() const override { return description_; }
  void set_description(std::string text) { description_ = std::move(text); }

  void launch(std::span<void* const> buffers, std::span<const std::int64_t> vars) override {
    if (buffers.size() < std::size_t(shape_.buffers) || vars.size() < std::size_t(shape_.vars))
      throw usage_error(str(owner_.name(), ": kernel '", name_, "' uses ", shape_.buffers, " buffers and ", shape_.vars,
                            " variables; launch gave ", buffers.size(), " and ", vars.size()));
    for (int i = 0; i < shape_.buffers; ++i)  // the kernel's loads rely on it (codegen::nvptx_buffer_align)
      if (reinterpret_cast<std::uintptr_t>(buffers[std::size_t(i)]) % codegen::nvptx_buffer_align != 0)
        throw usage_error(str(owner_.name(), ": kernel '", name_, "': buffer slot ", i, " at ",
                              buffers[std::size_t(i)], " is not ", codegen::nvptx_buffer_align,
                              "-byte aligned (NV kernels take whole allocations)"));
    const std::uint64_t blocks = codegen::nvptx_blocks(nodes_, global_ranges_, shape_, vars);
    if (blocks == 0) return;  // an empty output
    // cuLaunchKernel takes a pointer to each parameter's value.
    std::vector<std::uint64_t> values(std::size_t(shape_.buffers + shape_.vars));
    std::vector<void*> params(values.size());
    for (int i = 0; i < shape_.buffers; ++i) values[std::size_t(i)] = std::uint64_t(reinterpret_cast<std::uintptr_t>(buffers[std::size_t(i)]));
    for (int i = 0; i < shape_.vars; ++i) values[std::size_t(shape_.buffers + i)] = std::uint64_t(vars[std::size_t(i)]);
    for (std::size_t i = 0; i < values.size(); ++i) params[i] = &values[i];
    owner_.make_current();
    check(owner_.driver(), owner_.driver().cuLaunchKernel(function_, unsigned(blocks), 1, 1, unsigned(shape_.block_size), 1,
                                                          1, 0, owner_.stream(), params.data(), nullptr),
          "cuLaunchKernel");
  }

 private:
  nv_backend& owner_;
  CUmodule module_;
  CUfunction function_;
  std::vector<ast::node> nodes_;
  int global_ranges_;
  codegen::nvptx_kernel_shape shape_;
  std::string name_;
  std::string description_;
};

// For -v (program::describe): the target, the schedule (threads sharing an output, or the
// register tile of outputs a thread computes) and what the driver's JIT made of it: registers per
// thread (occupancy) and local memory per thread (spills).
std::string resources_of(const cuda_driver& cu, CUfunction f, const std::string& arch, const codegen::nvptx_kernel_shape& shape) {
  std::string schedule = str(shape.group_lanes, " threads per output");
  if (std::any_of(shape.upcast.begin(), shape.upcast.end(), [](int u) { return u > 1; })) {
    schedule = "a tile of ";
    for (std::size_t i = 0; i < shape.upcast.size(); ++i) schedule += str(i ? "x" : "", shape.upcast[i]);
    schedule += " outputs per thread";
  }
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
