// llvm_kernel.cpp: AST -> LLVM IR (llvm_kernel.hpp): the emitter's entry (run) and the public
// functions; the emitter itself is llvm_emitter.hpp, its members by theme in llvm_emitter_*.cpp.
#include "runtime/codegen/llvm_kernel.hpp"

#include <algorithm>
#include <tg/core/error.hpp>

#include "runtime/codegen/llvm_emitter.hpp"

namespace tg::codegen {

void emitter::run() {
  auto* entry = llvm::BasicBlock::Create(ctx_, "entry", f_);
  b_.SetInsertPoint(entry);
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  b_.setFastMathFlags(fmf);
  scopes_.emplace_back();
  // Every store, in the order the kernel gives them, at each output element: a kernel may
  // write several buffers from values it computes once (RoPE of queries and keys, say).
  std::vector<int> stores;
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].o == ast::op::store) stores.push_back(int(i));
  if (stores.empty()) throw usage_error("codegen: the kernel has no store");
  if (frame_.gpu()) {
    emit_thread_element(stores);
  } else {
    auto args = f_->arg_begin();
    bufs_ = &*args++;
    vars_ = &*args++;
    begin_ = &*args++;
    end_ = &*args;
    emit_panels(stores);
  }
  b_.CreateRetVoid();
}

llvm::Function* emit_kernel(llvm::Module& module, const std::string& name, std::span<const ast::node> nodes,
                            int global_ranges, const kernel_opts& opts) {
  llvm::LLVMContext& ctx = module.getContext();
  auto* ptr = llvm::PointerType::getUnqual(ctx);
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr, i64, i64}, false);
  auto* f = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  emit_kernel_body(f, nodes, global_ranges, opts, kernel_frame{});
  return f;
}

void emit_kernel_body(llvm::Function* f, std::span<const ast::node> nodes, int global_ranges, const kernel_opts& opts,
                      const kernel_frame& frame) {
  emitter(*f->getParent(), f, nodes, global_ranges, opts, frame).run();
}

kernel_arguments arguments_of(std::span<const ast::node> nodes) {
  kernel_arguments a;
  for (const ast::node& n : nodes) {
    const bool memory = n.o == ast::op::load || n.o == ast::op::store || n.o == ast::op::prefetch;
    if (memory) a.buffers = std::max(a.buffers, int(n.arg) + 1);
    if (n.o == ast::op::variable) a.vars = std::max(a.vars, int(n.arg) + 1);
  }
  return a;
}

}  // namespace tg::codegen
