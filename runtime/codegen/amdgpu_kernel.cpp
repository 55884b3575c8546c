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

#include "runtime/codegen/gpu_frame.hpp"

namespace tg::codegen {

bool amdgpu_wants_more_waves(const kernel_opts& opts) {
  // A split dot over a block loop with no register tile (the LLM's quantized decode matmuls:
  // kernel_opts::nested_lanes) may take up to 128 VGPRs, 12 waves a SIMD, rather than the 96 of
  // LLVM's default target of 16: held to 96, its scheduler issued a trip's loads one wait at a
  // time (Q5_0 and Q5_1 4096 x 4096 at decode on gfx1100: 100 and 144 memory waits a wave, 8-12%
  // of bandwidth modeled; allowed 128, 4 and 8 waits, 85% and 77%). Other kernels keep the
  // default: decode attention's weighted sum and a prompt chunk's tiled matmuls, given the same
  // room, took more registers and waited longer (the 1B's chunk of 32: 11956 -> 10158 tok/s).
  const bool tiled = std::any_of(opts.upcast.begin(), opts.upcast.end(), [](int u) { return u > 1; });
  return opts.group_lanes > 1 && opts.nested_lanes > 1 && !tiled;
}

void set_amdgpu_kernel_attributes(llvm::Function* f, int workgroup_size, bool more_waves) {
  f->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
  // The launch always uses exactly this workgroup size: LLVM may rely on it (AMDGPUUsage,
  // "amdgpu-flat-work-group-size").
  const std::string size = std::to_string(workgroup_size);
  f->addFnAttr("amdgpu-flat-work-group-size", size + "," + size);
  if (more_waves) f->addFnAttr("amdgpu-waves-per-eu", "12,12");
}

void emit_amdgpu_body(llvm::Function* f, kernel_frame& frame, std::span<const ast::node> nodes, int global_ranges,
                      int workgroup_size, const kernel_opts& opts, std::uint32_t first_workgroup) {
  frame.thread_index = [&]() -> llvm::Value* {
    llvm::IRBuilder<> b(&f->getEntryBlock());  // the emitter's insertion point: the entry's end
    llvm::Value* group = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_workgroup_id_x, {}, {});
    if (first_workgroup != 0) group = b.CreateSub(group, b.getInt32(first_workgroup), "", true, true);
    return flat_thread_index(b, group, b.CreateIntrinsic(llvm::Intrinsic::amdgcn_workitem_id_x, {}, {}), workgroup_size);
  };
  // ds_bpermute_b32 reads `value` from the lane whose byte address (lane * 4) it is given
  // (RDNA3 ISA, "DS_BPERMUTE_B32"); the lane in the wave is mbcnt_lo(~0, 0) in wave32
  // (AMDGPUUsage's llvm.amdgcn.mbcnt.lo).
  frame.lane_swap = [](llvm::IRBuilderBase& b, llvm::Value* value, int xor_mask) -> llvm::Value* {
    llvm::Value* lane = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_lo, {}, {b.getInt32(~0u), b.getInt32(0)});
    llvm::Value* from = b.CreateShl(b.CreateXor(lane, b.getInt32(std::uint32_t(xor_mask))), b.getInt32(2));
    return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_ds_bpermute, {}, {from, value});
  };
  // v_dot4_i32_iu8 (RDNA3 and RDNA4 ISA, "V_DOT4_I32_IU8"): the four byte products of two words,
  // each word's bytes signed or unsigned, plus an accumulator, as llvm.amdgcn.sudot4 (AMDGPUUsage;
  // gfx11 and gfx12 both have it: dot8-insts).
  frame.dot4 = [](llvm::IRBuilderBase& b, llvm::Value* a, bool a_signed, llvm::Value* c, bool c_signed) -> llvm::Value* {
    return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_sudot4, {},
                             {b.getInt1(a_signed), a, b.getInt1(c_signed), c, b.getInt32(0), b.getInt1(false)});
  };
  emit_kernel_body(f, nodes, global_ranges, gpu_frame_opts(opts), frame);
}

amdgpu_kernel_shape emit_amdgpu_kernel(llvm::Module& module, const std::string& name, std::span<const ast::node> nodes,
                                       int global_ranges, int workgroup_size, const kernel_opts& opts) {
  check_gpu_opts("amdgpu", workgroup_size, global_ranges, opts);
  kernel_frame frame;
  int vars = 0;
  llvm::Function* f = create_gpu_kernel(module, name, nodes, amdgpu_global_address_space, frame, vars, amdgpu_buffer_align);
  const amdgpu_kernel_shape shape{frame.buffer_args, vars, workgroup_size, opts.group_lanes, opts.reduce_unroll, opts.upcast};
  set_amdgpu_kernel_attributes(f, workgroup_size, amdgpu_wants_more_waves(opts));
  emit_amdgpu_body(f, frame, nodes, global_ranges, workgroup_size, opts, 0);
  return shape;
}

std::uint64_t amdgpu_workgroups(std::span<const ast::node> nodes, int global_ranges, const amdgpu_kernel_shape& shape,
                                std::span<const std::int64_t> vars) {
  const std::uint64_t groups =
      gpu_blocks(nodes, global_ranges, shape.group_lanes, shape.upcast, shape.workgroup_size, vars);
  if (groups > 0xFFFFFFFFu)
    throw usage_error(str("amdgpu: more than 2^32 workgroups of ", shape.workgroup_size, " work-items"));
  return groups;
}

}  // namespace tg::codegen
