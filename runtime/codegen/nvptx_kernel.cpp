// nvptx_kernel.cpp: the NVPTX frame around the shared emitter (see nvptx_kernel.hpp).
#include "runtime/codegen/nvptx_kernel.hpp"

#include <llvm/IR/CallingConv.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>

#include <tg/core/error.hpp>
#include <vector>

#include "runtime/codegen/gpu_frame.hpp"

namespace tg::codegen {

namespace {

// Global memory is address space 1 on NVPTX too (LLVM NVPTXUsage.rst, "Address Spaces"): pointers
// in it load and store with ld.global / st.global.
constexpr unsigned global_address_space = 1;

// One !nvvm.annotations entry for `f`: {f, key, value}.
void annotate(llvm::Module& module, llvm::Function* f, const char* key, int value) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::Metadata* entry[] = {llvm::ValueAsMetadata::get(f), llvm::MDString::get(ctx, key),
                             llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), value))};
  module.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, entry));
}

// The NVVM intrinsic for a transcendental the shared emitter writes as an LLVM intrinsic, which the
// NVPTX backend has no lowering for (it would call exp2f, which PTX lacks): the PTX .approx.f32
// instructions, what CUDA's fast-math __exp2f / __log2f / __sinf compile to (PTX ISA,
// "ex2", "lg2", "sin": relative error about 2^-22 for ex2 and lg2, absolute 2^-20.5 for sin on
// [-pi, pi]). not_intrinsic for any other call.
llvm::Intrinsic::ID nvvm_form(llvm::Intrinsic::ID id) {
  switch (id) {
    case llvm::Intrinsic::exp2: return llvm::Intrinsic::nvvm_ex2_approx_f;
    case llvm::Intrinsic::log2: return llvm::Intrinsic::nvvm_lg2_approx_f;
    case llvm::Intrinsic::sin: return llvm::Intrinsic::nvvm_sin_approx_f;
    default: return llvm::Intrinsic::not_intrinsic;
  }
}

// Rewrites those calls in `f` lane by lane (the NVVM forms are scalar f32); usage_error for one on
// another type (f64), which PTX has no instruction for.
void lower_transcendentals(llvm::Function& f) {
  std::vector<llvm::CallInst*> calls;
  for (llvm::BasicBlock& bb : f)
    for (llvm::Instruction& i : bb)
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(&i))
        if (call->getCalledFunction() && nvvm_form(call->getCalledFunction()->getIntrinsicID()) != llvm::Intrinsic::not_intrinsic)
          calls.push_back(call);
  for (llvm::CallInst* call : calls) {
    const llvm::Intrinsic::ID id = nvvm_form(call->getCalledFunction()->getIntrinsicID());
    llvm::IRBuilder<> b(call);
    llvm::Value* x = call->getArgOperand(0);
    llvm::Type* t = x->getType();
    if (!t->getScalarType()->isFloatTy())
      throw usage_error(str("nvptx codegen: ", call->getCalledFunction()->getName().str(),
                            " on a type other than f32 has no PTX instruction"));
    llvm::Value* result = nullptr;
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t)) {
      result = llvm::PoisonValue::get(vt);
      for (unsigned lane = 0; lane < vt->getNumElements(); ++lane) {
        llvm::Value* y = b.CreateIntrinsic(id, {}, {b.CreateExtractElement(x, lane)});
        result = b.CreateInsertElement(result, y, lane);
      }
    } else {
      result = b.CreateIntrinsic(id, {}, {x});
    }
    call->replaceAllUsesWith(result);
    call->eraseFromParent();
  }
}

}  // namespace

nvptx_kernel_shape emit_nvptx_kernel(llvm::Module& module, const std::string& name, std::span<const ast::node> nodes,
                                     int global_ranges, int block_size, const kernel_opts& opts) {
  check_gpu_opts("nvptx", block_size, global_ranges, opts);
  kernel_frame frame;
  int vars = 0;
  llvm::Function* f = create_gpu_kernel(module, name, nodes, global_address_space, frame, vars, nvptx_buffer_align);
  const nvptx_kernel_shape shape{frame.buffer_args, vars, block_size, opts.group_lanes, opts.upcast};
  f->setCallingConv(llvm::CallingConv::PTX_Kernel);
  annotate(module, f, "kernel", 1);
  annotate(module, f, "maxntidx", block_size);  // every launch uses exactly this block: .maxntid in the PTX
  frame.thread_index = [&]() -> llvm::Value* {
    llvm::IRBuilder<> b(&f->getEntryBlock());
    return flat_thread_index(b, b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {}, {}),
                             b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {}), block_size);
  };
  // shfl.sync.bfly: `value` from lane ^ xor_mask, every lane of the warp taking part (mask all
  // ones); c = 0x1f clamps to the whole warp (PTX ISA, "shfl.sync").
  frame.lane_swap = [](llvm::IRBuilderBase& b, llvm::Value* value, int xor_mask) -> llvm::Value* {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                             {b.getInt32(~0u), value, b.getInt32(std::uint32_t(xor_mask)), b.getInt32(0x1f)});
  };
  // dp4a (PTX ISA, "dp4a"; sm_61 and later): d = c + the four byte products of a and b, each
  // operand's bytes signed (.s32) or unsigned (.u32). LLVM 19 has no intrinsic for it, so it is
  // inline PTX: without side effects, LLVM may still move, merge or drop it like any pure call.
  frame.dot4 = [](llvm::IRBuilderBase& b, llvm::Value* a, bool a_signed, llvm::Value* c, bool c_signed) -> llvm::Value* {
    llvm::Type* i32 = b.getInt32Ty();
    auto* type = llvm::FunctionType::get(i32, {i32, i32, i32}, false);
    const std::string text = str("dp4a", a_signed ? ".s32" : ".u32", c_signed ? ".s32" : ".u32", " $0, $1, $2, $3;");
    return b.CreateCall(llvm::InlineAsm::get(type, text, "=r,r,r,r", false), {a, c, b.getInt32(0)});
  };
  emit_kernel_body(f, nodes, global_ranges, gpu_frame_opts(opts), frame);
  lower_transcendentals(*f);
  return shape;
}

std::uint64_t nvptx_blocks(std::span<const ast::node> nodes, int global_ranges, const nvptx_kernel_shape& shape,
                           std::span<const std::int64_t> vars) {
  const std::uint64_t blocks = gpu_blocks(nodes, global_ranges, shape.group_lanes, shape.upcast, shape.block_size, vars);
  if (blocks > 0x7FFFFFFFu) throw usage_error(str("nvptx: more than 2^31 - 1 blocks of ", shape.block_size, " threads"));
  return blocks;
}

}  // namespace tg::codegen
