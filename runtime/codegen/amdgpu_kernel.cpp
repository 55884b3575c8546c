// amdgpu_kernel.cpp: the AMDGPU frame around the shared emitter (see amdgpu_kernel.hpp).
#include "runtime/codegen/amdgpu_kernel.hpp"

#include <llvm/IR/CallingConv.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>
#include <algorithm>
#include <tg/ast/eval.hpp>
#include <tg/core/error.hpp>
#include <vector>

#include "runtime/codegen/kernel_frame.hpp"

namespace tg::codegen {

namespace {
// Global memory is address space 1 on AMDGPU (llvm/docs/AMDGPUUsage.rst, "Address Spaces"):
// pointers in it load and store with global_* instructions, where generic (0) ones would be flat_*.
constexpr unsigned global_address_space = 1;
}  // namespace

amdgpu_kernel_shape emit_amdgpu_kernel(llvm::Module& module, const std::string& name, std::span<const ast::node> nodes,
                                       int global_ranges, int workgroup_size) {
  if (workgroup_size < 1 || workgroup_size > 1024)
    throw usage_error(str("amdgpu codegen: workgroup size ", workgroup_size, " is outside [1, 1024]"));
  const kernel_arguments used = arguments_of(nodes);
  amdgpu_kernel_shape shape{used.buffers, used.vars, workgroup_size};
  llvm::LLVMContext& ctx = module.getContext();
  std::vector<llvm::Type*> params(std::size_t(shape.buffers), llvm::PointerType::get(ctx, global_address_space));
  params.insert(params.end(), std::size_t(shape.vars), llvm::Type::getInt64Ty(ctx));
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false);
  auto* f = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  f->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  // The launch always uses exactly this workgroup size: LLVM may rely on it (AMDGPUUsage,
  // "amdgpu-flat-work-group-size").
  const std::string size = std::to_string(workgroup_size);
  f->addFnAttr("amdgpu-flat-work-group-size", size + "," + size);
  // tg's slots are distinct buffers, as on the CPU (a plan never binds one buffer to two slots of a kernel).
  for (int i = 0; i < shape.buffers; ++i) f->addParamAttr(unsigned(i), llvm::Attribute::NoAlias);

  kernel_frame frame;
  frame.buffer_args = shape.buffers;
  frame.thread_index = [&]() -> llvm::Value* {
    llvm::IRBuilder<> b(&f->getEntryBlock());  // the emitter's insertion point: the entry's end
    llvm::Value* group = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_workgroup_id_x, {}, {});
    llvm::Value* item = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_workitem_id_x, {}, {});
    llvm::Value* base = b.CreateMul(b.CreateZExt(group, b.getInt64Ty()), b.getInt64(std::uint64_t(workgroup_size)), "",
                                    true, true);
    return b.CreateAdd(base, b.CreateZExt(item, b.getInt64Ty()), "flat", true, true);
  };
  // One element per work-item: no register tiles (GPU opts are later work).
  emit_kernel_body(f, nodes, global_ranges, kernel_opts{{}, false}, frame);
  return shape;
}

std::uint64_t amdgpu_workgroups(std::span<const ast::node> nodes, int global_ranges, int workgroup_size,
                                std::span<const std::int64_t> vars) {
  std::uint64_t total = 1;
  for (const ast::node& n : nodes) {
    if (n.o != ast::op::range || n.arg >= global_ranges) continue;
    total *= std::uint64_t(std::max<std::int64_t>(0, ast::eval_index(nodes, n.src[0], vars)));
  }
  const std::uint64_t groups = (total + std::uint64_t(workgroup_size) - 1) / std::uint64_t(workgroup_size);
  if (groups > 0xFFFFFFFFu)
    throw usage_error(str("amdgpu: ", total, " output elements need more than 2^32 workgroups"));
  return groups;
}

}  // namespace tg::codegen
