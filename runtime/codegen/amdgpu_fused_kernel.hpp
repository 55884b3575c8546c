// amdgpu_fused_kernel.hpp: several independent kernel ASTs as one AMDGPU kernel, launched as one
// dispatch (horizontal fusion). Each part keeps its own schedule (its GPU opts) and its own
// workgroups: the grid is the parts' workgroups one after another, and a workgroup runs the part
// its number falls in, numbered from that part's first workgroup.
//
// Why: a dispatch costs time its work does not pay for (the command processor's launch, the
// ramp of waves up and down), and a small kernel pays it in full. The LLM's decode step has such
// pairs: a layer's attention projections whose weight types differ (Q4_K attn_q and attn_k, Q6_K
// attn_v in Q4_K_M files) cannot share one matmul, but read the same input and are independent.
//
//   define amdgpu_kernel void @name(ptr addrspace(1) %a0, ..., ptr addrspace(1) %b0, ...)
//     if (workgroup.id.x < A's workgroups) call @name.part0(%a0, ...)      ; inlined
//     else                                call @name.part1(%b0, ...)      ; its workgroups from 0
// Every slot of every part is an argument, in order (a part takes all its kernel's slots, used or
// not, so that a launch passes the parts' slot lists one after another). The arguments are not
// noalias: parts may share a buffer (the input they read); within a part its slots stay distinct.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>
#include <tg/ast/node.hpp>

#include "runtime/codegen/amdgpu_kernel.hpp"

namespace tg::codegen {

struct amdgpu_fused_part {
  std::span<const ast::node> nodes;  // reads no variables: its grid is fixed when it is emitted
  int global_ranges = 0;
  kernel_opts opts;
  int slots = 0;  // the kernel's buffer slots: at least those its nodes use
};

struct amdgpu_fused_shape {
  std::vector<amdgpu_kernel_shape> parts;
  std::vector<std::uint32_t> first_workgroup;  // of each part; a part with no work has none
  std::uint32_t workgroups = 0;                // the whole grid
  int buffers = 0;                             // pointer arguments: the parts' slots
};

// Emits @name, and @name.partN as internal always-inline functions, into `module`; usage_error for
// fewer than two parts, a part that reads a variable, uses more slots than it says, or whose opts
// do not fit `workgroup_size` (check_gpu_opts). The kernel asks for 12 waves a SIMD only when every
// part would on its own (amdgpu_wants_more_waves).
amdgpu_fused_shape emit_amdgpu_fused_kernel(llvm::Module& module, const std::string& name,
                                            std::span<const amdgpu_fused_part> parts, int workgroup_size);

}  // namespace tg::codegen
