// gpu_frame.cpp: the GPU renderers' shared parts (see gpu_frame.hpp).
#include "runtime/codegen/gpu_frame.hpp"

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <tg/ast/eval.hpp>
#include <tg/core/error.hpp>
#include <vector>

namespace tg::codegen {

void check_gpu_opts(const char* target, int block_size, int global_ranges, const kernel_opts& opts) {
  const int g = opts.group_lanes;
  if (block_size < 1 || block_size > 1024)
    throw usage_error(str(target, " codegen: block size ", block_size, " is outside [1, 1024]"));
  if (g < 1 || g > 32 || (g & (g - 1)) != 0 || (g > 1 && block_size % 32 != 0))
    throw usage_error(str(target, " codegen: ", g, " threads per element with block size ", block_size,
                          " (give a power of two up to 32, and whole waves of 32 per block)"));
  if (opts.reduce_unroll < 1 || opts.reduce_unroll > max_gpu_reduce_unroll)
    throw usage_error(str(target, " codegen: reduce unroll ", opts.reduce_unroll, " is outside [1, ", max_gpu_reduce_unroll, "]"));
  if (!opts.upcast.empty() && int(opts.upcast.size()) != global_ranges)
    throw usage_error(str(target, " codegen: ", opts.upcast.size(), " upcasts for ", global_ranges, " output ranges"));
  for (int u : opts.upcast)
    if (u < 1 || u > 16) throw usage_error(str(target, " codegen: upcast ", u, " is outside [1, 16]"));
  const int n = opts.nested_lanes;
  if (n < 1 || (n & (n - 1)) != 0 || g % n != 0)
    throw usage_error(str(target, " codegen: ", n, " nested lanes in groups of ", g,
                          " (give a power of two dividing the group)"));
}

llvm::Function* create_gpu_kernel(llvm::Module& module, const std::string& name, std::span<const ast::node> nodes,
                                  unsigned global_space, kernel_frame& frame, int& vars, unsigned buffer_align) {
  const kernel_arguments used = arguments_of(nodes);
  llvm::LLVMContext& ctx = module.getContext();
  std::vector<llvm::Type*> params(std::size_t(used.buffers), llvm::PointerType::get(ctx, global_space));
  params.insert(params.end(), std::size_t(used.vars), llvm::Type::getInt64Ty(ctx));
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false);
  auto* f = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  // tg's slots are distinct buffers, as on the CPU (a plan never binds one buffer to two slots of a kernel).
  for (int i = 0; i < used.buffers; ++i) {
    f->addParamAttr(unsigned(i), llvm::Attribute::NoAlias);
    if (buffer_align > 0) f->addParamAttr(unsigned(i), llvm::Attribute::getWithAlignment(ctx, llvm::Align(buffer_align)));
  }
  frame.buffer_args = used.buffers;
  vars = used.vars;
  return f;
}

llvm::Value* flat_thread_index(llvm::IRBuilderBase& b, llvm::Value* block, llvm::Value* thread, int block_size) {
  llvm::Value* base = b.CreateMul(b.CreateZExt(block, b.getInt64Ty()), b.getInt64(std::uint64_t(block_size)), "", true, true);
  return b.CreateAdd(base, b.CreateZExt(thread, b.getInt64Ty()), "flat", true, true);
}

std::string gpu_schedule_text(int group_lanes, std::span<const int> upcast, const char* thread) {
  if (std::none_of(upcast.begin(), upcast.end(), [](int u) { return u > 1; }))
    return str(group_lanes, " ", thread, "s per output");
  std::string tile = "a tile of ";
  for (std::size_t i = 0; i < upcast.size(); ++i) tile += str(i ? "x" : "", upcast[i]);
  return tile + " outputs per " + thread;
}

kernel_opts gpu_frame_opts(const kernel_opts& opts) {
  kernel_opts gpu{opts.upcast, false};
  gpu.group_lanes = opts.group_lanes;
  gpu.reduce_unroll = opts.reduce_unroll;
  gpu.nested_lanes = opts.nested_lanes;
  return gpu;
}

std::uint64_t gpu_blocks(std::span<const ast::node> nodes, int global_ranges, int group_lanes,
                         std::span<const int> upcast, int block_size, std::span<const std::int64_t> vars) {
  std::uint64_t total = std::uint64_t(group_lanes);
  for (const ast::node& n : nodes) {
    if (n.o != ast::op::range || n.arg >= global_ranges) continue;
    const std::uint64_t bound = std::uint64_t(std::max<std::int64_t>(0, ast::eval_index(nodes, n.src[0], vars)));
    const std::size_t r = std::size_t(n.arg);
    const std::uint64_t up = r < upcast.size() ? std::uint64_t(std::max(1, upcast[r])) : 1;
    total *= (bound + up - 1) / up;
  }
  return (total + std::uint64_t(block_size) - 1) / std::uint64_t(block_size);
}

}  // namespace tg::codegen
