// kernel_compiler.hpp: the slots a backend fills so that the run-time pipeline (pipeline.hpp)
// compiles its kernels, as tinygrad's Compiled takes a renderer and a compiler: the target's
// traits (what opts suit it), a renderer (AST + opts -> LLVM IR for the target) and a compiler
// (IR -> a program the backend launches). The allocator and the launches are the backend's own
// (include/tg/device/backend.hpp); a backend adds no step of its own to the pipeline.
//
//   class my_compiler final : public tg::kernel_compiler {
//     const opt::target_traits& traits() const override { return traits_; }
//     std::unique_ptr<rendered_kernel> render(const kernel_source&, const codegen::kernel_opts&) override;
//     std::shared_ptr<program> compile(std::unique_ptr<rendered_kernel>) override;
//   };
//   kernel_compiler* my_backend::compiler() override { return &compiler_; }
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <tg/device/backend.hpp>

#include "runtime/codegen/llvm_kernel.hpp"
#include "runtime/opt/target_opts.hpp"

namespace tg {

// A kernel rendered for a target: its LLVM module and what compiling and launching it need. A
// backend whose compiler needs more from its renderer (a GPU's launch geometry) derives from it.
struct rendered_kernel {
  virtual ~rendered_kernel() = default;
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::string symbol;  // the kernel's function in `module`
  std::string name;    // the kernel's name, for messages
  std::vector<ast::node> nodes;
  int global_ranges = 0;
  codegen::kernel_opts opts;
};

class kernel_compiler {
 public:
  virtual ~kernel_compiler() = default;
  virtual const opt::target_traits& traits() const = 0;
  virtual std::unique_ptr<rendered_kernel> render(const kernel_source& source, const codegen::kernel_opts& opts) = 0;
  virtual std::shared_ptr<program> compile(std::unique_ptr<rendered_kernel> kernel) = 0;
  // Several kernels as one (backend::compile_fused), each with its opts; compile() makes the
  // program. nullptr: this target does not fuse kernels (the default).
  virtual std::unique_ptr<rendered_kernel> render_fused(const fused_source& source,
                                                        std::span<const codegen::kernel_opts> opts) {
    (void)source, (void)opts;
    return nullptr;
  }
};

// Fills the common part of `r` for `source` and `opts`: a fresh context, an empty module named
// after the kernel, the AST and the opts. What every renderer starts with.
void begin_render(rendered_kernel& r, const kernel_source& source, const codegen::kernel_opts& opts);

}  // namespace tg
