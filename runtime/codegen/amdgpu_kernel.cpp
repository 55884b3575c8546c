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
                                       int global_ranges, int workgroup_size, const kernel_opts& opts) {
  const int group_lanes = opts.group_lanes;
  if (workgroup_size < 1 || workgroup_size > 1024)
    throw usage_error(str("amdgpu codegen: workgroup size ", workgroup_size, " is outside [1, 1024]"));
  // A group must not straddle two waves (the exchange is within a wave): wave32, so groups of
  // at most 32 in workgroups made of whole waves.
  if (group_lanes < 1 || group_lanes > 32 || (group_lanes & (group_lanes - 1)) != 0 ||
      (group_lanes > 1 && workgroup_size % 32 != 0))
    throw usage_error(str("amdgpu codegen: ", group_lanes, " work-items per element with workgroup size ", workgroup_size,
                          " (give a power of two up to 32, and whole waves of 32 per workgroup)"));
  const kernel_arguments used = arguments_of(nodes);
  if (opts.reduce_unroll < 1 || opts.reduce_unroll > 16)
    throw usage_error(str("amdgpu codegen: reduce unroll ", opts.reduce_unroll, " is outside [1, 16]"));
  if (opts.nested_lanes < 1 || (opts.nested_lanes & (opts.nested_lanes - 1)) != 0 || group_lanes % opts.nested_lanes != 0)
    throw usage_error(str("amdgpu codegen: ", opts.nested_lanes, " nested lanes in groups of ", group_lanes,
                          " (give a power of two dividing the group)"));
  amdgpu_kernel_shape shape{used.buffers, used.vars, workgroup_size, group_lanes, opts.reduce_unroll};
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
  // ds_bpermute_b32 reads `value` from the lane whose byte address (lane * 4) it is given
  // (RDNA3 ISA, "DS_BPERMUTE_B32"); the lane in the wave is mbcnt_lo(~0, 0) in wave32
  // (AMDGPUUsage's llvm.amdgcn.mbcnt.lo).
  frame.lane_swap = [](llvm::IRBuilderBase& b, llvm::Value* value, int xor_mask) -> llvm::Value* {
    llvm::Value* lane = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_lo, {}, {b.getInt32(~0u), b.getInt32(0)});
    llvm::Value* from = b.CreateShl(b.CreateXor(lane, b.getInt32(std::uint32_t(xor_mask))), b.getInt32(2));
    return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_ds_bpermute, {}, {from, value});
  };
  // No register tiles yet (upcast is later work): the GPU opts alone.
  kernel_opts gpu{{}, false};
  gpu.group_lanes = group_lanes;
  gpu.reduce_unroll = opts.reduce_unroll;
  gpu.nested_lanes = opts.nested_lanes;
  emit_kernel_body(f, nodes, global_ranges, gpu, frame);
  return shape;
}

std::uint64_t amdgpu_workgroups(std::span<const ast::node> nodes, int global_ranges, const amdgpu_kernel_shape& shape,
                                std::span<const std::int64_t> vars) {
  const std::uint64_t workgroup_size = std::uint64_t(shape.workgroup_size);
  std::uint64_t total = std::uint64_t(shape.group_lanes);
  for (const ast::node& n : nodes) {
    if (n.o != ast::op::range || n.arg >= global_ranges) continue;
    total *= std::uint64_t(std::max<std::int64_t>(0, ast::eval_index(nodes, n.src[0], vars)));
  }
  const std::uint64_t groups = (total + workgroup_size - 1) / workgroup_size;
  if (groups > 0xFFFFFFFFu)
    throw usage_error(str("amdgpu: ", total, " work-items need more than 2^32 workgroups"));
  return groups;
}

}  // namespace tg::codegen
