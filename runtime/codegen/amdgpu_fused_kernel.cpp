// amdgpu_fused_kernel.cpp: several kernels in one AMDGPU dispatch (see amdgpu_fused_kernel.hpp).
#include "runtime/codegen/amdgpu_fused_kernel.hpp"

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>

#include <tg/core/error.hpp>

#include "runtime/codegen/gpu_frame.hpp"
#include "runtime/codegen/kernel_frame.hpp"

namespace tg::codegen {

amdgpu_fused_shape emit_amdgpu_fused_kernel(llvm::Module& module, const std::string& name,
                                            std::span<const amdgpu_fused_part> parts, int workgroup_size) {
  if (parts.size() < 2) throw usage_error(str("amdgpu: fused kernel '", name, "' has ", parts.size(), " parts (give 2 or more)"));
  amdgpu_fused_shape fused;
  std::vector<llvm::Function*> bodies;
  bool more_waves = true;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const amdgpu_fused_part& p = parts[i];
    check_gpu_opts("amdgpu", workgroup_size, p.global_ranges, p.opts);
    kernel_frame frame;
    int vars = 0;
    llvm::Function* body = create_gpu_kernel(module, name + ".part" + std::to_string(i), p.nodes,
                                             amdgpu_global_address_space, frame, vars, amdgpu_buffer_align);
    if (vars != 0)
      throw usage_error(str("amdgpu: part ", i, " of fused kernel '", name, "' reads variables (specialize it first: ",
                            "its grid must be fixed)"));
    if (frame.buffer_args > p.slots)
      throw usage_error(str("amdgpu: part ", i, " of fused kernel '", name, "' uses ", frame.buffer_args,
                            " buffer slots but says it has ", p.slots));
    // Called once from the kernel below and inlined there (LLVM's always-inliner runs first in
    // the O3 pipeline), so the workgroup and work-item ids it reads are the kernel's.
    body->setLinkage(llvm::GlobalValue::InternalLinkage);
    body->addFnAttr(llvm::Attribute::AlwaysInline);
    const amdgpu_kernel_shape shape{frame.buffer_args, 0, workgroup_size, p.opts.group_lanes, p.opts.reduce_unroll,
                                    p.opts.upcast};
    const std::uint64_t groups = amdgpu_workgroups(p.nodes, p.global_ranges, shape, {});
    if (std::uint64_t(fused.workgroups) + groups > 0xFFFFFFFFu)
      throw usage_error(str("amdgpu: fused kernel '", name, "' takes more than 2^32 workgroups"));
    emit_amdgpu_body(body, frame, p.nodes, p.global_ranges, workgroup_size, p.opts, fused.workgroups);
    fused.parts.push_back(shape);
    fused.first_workgroup.push_back(fused.workgroups);
    fused.workgroups += std::uint32_t(groups);
    fused.buffers += p.slots;
    more_waves = more_waves && amdgpu_wants_more_waves(p.opts);
    bodies.push_back(groups == 0 ? nullptr : body);
  }

  llvm::LLVMContext& ctx = module.getContext();
  std::vector<llvm::Type*> params(std::size_t(fused.buffers), llvm::PointerType::get(ctx, amdgpu_global_address_space));
  auto* f = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false),
                                   llvm::Function::ExternalLinkage, name, module);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  for (int i = 0; i < fused.buffers; ++i)
    f->addParamAttr(unsigned(i), llvm::Attribute::getWithAlignment(ctx, llvm::Align(amdgpu_buffer_align)));
  set_amdgpu_kernel_attributes(f, workgroup_size, more_waves);

  // entry: the workgroup's number; then a test per part, in order, and a call where it falls.
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
  llvm::Value* group = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_workgroup_id_x, {}, {});
  int first_arg = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const int slots = parts[i].slots;
    if (bodies[i] != nullptr) {
      const std::uint32_t end = i + 1 < parts.size() ? fused.first_workgroup[i + 1] : fused.workgroups;
      auto* run = llvm::BasicBlock::Create(ctx, "part" + std::to_string(i), f);
      auto* next = llvm::BasicBlock::Create(ctx, "after" + std::to_string(i), f);
      b.CreateCondBr(b.CreateICmpULT(group, b.getInt32(end)), run, next);
      b.SetInsertPoint(run);
      std::vector<llvm::Value*> args;
      for (int a = 0; a < fused.parts[i].buffers; ++a) args.push_back(f->getArg(unsigned(first_arg + a)));
      b.CreateCall(bodies[i], args);
      b.CreateRetVoid();
      b.SetInsertPoint(next);
    }
    first_arg += slots;
  }
  b.CreateRetVoid();  // past the last part's workgroups: none are launched
  return fused;
}

}  // namespace tg::codegen
