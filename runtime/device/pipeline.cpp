// pipeline.cpp: steps 4-6 of the run-time pipeline (see pipeline.hpp), and backend::compile,
// which runs them for every backend that fills the kernel_compiler slots.
#include "runtime/device/pipeline.hpp"

#include <tg/core/error.hpp>
#include <vector>

namespace tg {

void begin_render(rendered_kernel& r, const kernel_source& source, const codegen::kernel_opts& opts) {
  r.context = std::make_unique<llvm::LLVMContext>();
  r.module = std::make_unique<llvm::Module>(source.name, *r.context);
  r.name = source.name;
  r.nodes.assign(source.nodes.begin(), source.nodes.end());
  r.global_ranges = source.global_ranges;
  r.opts = opts;
}

std::shared_ptr<program> compile_through(kernel_compiler& compiler, const kernel_source& source) {
  const codegen::kernel_opts opts = opt::choose_opts_for(compiler.traits(), source);  // 4
  std::unique_ptr<rendered_kernel> rendered = compiler.render(source, opts);           // 5
  return compiler.compile(std::move(rendered));                                         // 6
}

std::shared_ptr<program> backend::compile(const kernel_source& source) {
  kernel_compiler* c = compiler();
  if (c == nullptr) throw usage_error(str("device '", name(), "' compiles no kernels"));
  return compile_through(*c, source);
}

std::shared_ptr<program> compile_fused_through(kernel_compiler& compiler, const fused_source& source) {
  std::vector<codegen::kernel_opts> opts;
  for (const kernel_source& part : source.parts) opts.push_back(opt::choose_opts_for(compiler.traits(), part));  // 4
  std::unique_ptr<rendered_kernel> rendered = compiler.render_fused(source, opts);                            // 5
  if (!rendered) return nullptr;
  return compiler.compile(std::move(rendered));  // 6
}

std::shared_ptr<program> backend::compile_fused(const fused_source& source) {
  kernel_compiler* c = compiler();
  return c == nullptr ? nullptr : compile_fused_through(*c, source);
}

}  // namespace tg
