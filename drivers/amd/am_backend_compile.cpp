// am_backend_compile.cpp: tg kernels on the AMD backend (see am_backend.hpp): the run-time
// pipeline for AMD, one line per step:
//   1. render:  the kernel AST -> an amdgpu_kernel function (runtime/codegen/amdgpu_kernel.hpp)
//   2. compile: O3 + the AMDGPU backend -> an ELF object (runtime/codegen/amdgpu_compiler.hpp)
//   3. load:    code_object + am_program: the image in VRAM, kernarg slots (am_backend_program.cpp)
//   4. launch:  the grid from the variables, the kernargs written, one dispatch (compiled_program)
// Opts are not applied yet: the schedule is one work-item per output element.
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstdlib>
#include <string_view>
#include <tg/core/error.hpp>

#include "drivers/amd/am_backend.hpp"
#include "runtime/codegen/amdgpu_compiler.hpp"
#include "runtime/codegen/amdgpu_kernel.hpp"

namespace tg::amd {

namespace {

// Work-items per workgroup: 8 waves of 32.
constexpr int workgroup_size = 256;

bool codegen_enabled() {
  const char* v = std::getenv("TG_AMD_CODEGEN");
  return v != nullptr && std::string_view(v) != "" && std::string_view(v) != "0";
}

// A tg kernel compiled for the device: the loaded program, and what launch needs to size its grid.
class compiled_program final : public program {
 public:
  compiled_program(std::shared_ptr<am_program> loaded, std::span<const ast::node> nodes, int global_ranges,
                   codegen::amdgpu_kernel_shape shape, std::string name)
      : loaded_(std::move(loaded)), nodes_(nodes.begin(), nodes.end()), global_ranges_(global_ranges), shape_(shape),
        name_(std::move(name)) {}

  // The plan passes every buffer slot of the kernel and every variable of the plan; the kernel
  // takes the slots it uses and the variables up to the highest it reads.
  void launch(std::span<void* const> buffers, std::span<const std::int64_t> vars) override {
    if (buffers.size() < std::size_t(shape_.buffers) || vars.size() < std::size_t(shape_.vars))
      throw usage_error(str("AMD: kernel '", name_, "' uses ", shape_.buffers, " buffers and ", shape_.vars,
                            " variables; launch gave ", buffers.size(), " and ", vars.size()));
    const std::uint64_t groups = codegen::amdgpu_workgroups(nodes_, global_ranges_, shape_.workgroup_size, vars);
    if (groups == 0) return;  // an empty output: nothing to dispatch
    loaded_->launch(buffers.first(std::size_t(shape_.buffers)), vars.first(std::size_t(shape_.vars)),
                    {.workgroups = {std::uint32_t(groups), 1, 1},
                     .workgroup_size = {std::uint32_t(shape_.workgroup_size), 1, 1}});
  }

 private:
  std::shared_ptr<am_program> loaded_;
  std::vector<ast::node> nodes_;
  int global_ranges_;
  codegen::amdgpu_kernel_shape shape_;
  std::string name_;
};

}  // namespace

codegen::amdgpu_compiler& am_backend::compiler() {
  if (!compiler_) compiler_ = std::make_unique<codegen::amdgpu_compiler>(device_->info().gfx_target);
  return *compiler_;
}

std::shared_ptr<program> am_backend::compile(const kernel_source& source) {
  if (!codegen_enabled())
    throw usage_error(str(name_, ": cannot compile kernel '", source.name,
                          "': tg has no AMD code generator yet (tg AST -> AMDGPU) turned on by default, so tg kernels ",
                          "cannot run on AMD GPUs; use the CPU device for them, load a code object with ",
                          "am_backend::load_program, or set TG_AMD_CODEGEN=1 for the experimental one"));
  codegen::amdgpu_compiler& c = compiler();
  llvm::LLVMContext context;
  llvm::Module module(source.name, context);
  c.prepare(module);
  const codegen::amdgpu_kernel_shape shape =
      codegen::emit_amdgpu_kernel(module, source.name, source.nodes, source.global_ranges, workgroup_size);
  const std::vector<std::byte> elf = c.compile(module, source.name);
  const code_object co(elf);
  std::vector<kernarg> args(std::size_t(shape.buffers), kernarg_pointer);
  args.insert(args.end(), std::size_t(shape.vars), kernarg_u64);
  std::shared_ptr<am_program> loaded = load_program(co, source.name, args, {});
  return std::make_shared<compiled_program>(std::move(loaded), source.nodes, source.global_ranges, shape, source.name);
}

}  // namespace tg::amd
