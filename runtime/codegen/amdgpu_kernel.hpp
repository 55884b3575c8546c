// amdgpu_kernel.hpp: a kernel AST as an AMDGPU kernel in LLVM IR (amdgcn-amd-amdhsa, wave32), the
// renderer of the AMD backend. The schedule: one work-item (or a group of them) per output
// element or per register tile of them, in workgroups of `workgroup_size` along the flattened output, the last workgroup
// bounds-guarded.
// The ops are the CPU renderer's (llvm_emitter.hpp, through kernel_frame.hpp); what differs is the
// frame:
//   define amdgpu_kernel void @name(ptr addrspace(1) noalias %buf0, ..., i64 %var0, ...)
// the buffers in slot order, then the variable values, which is how drivers/amd's kernarg
// writer (am_program::write_kernargs: kernarg_pointer per buffer, kernarg_u64 per variable)
// lays them out, and the flat index is workgroup.id.x * workgroup_size + workitem.id.x.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>
#include <tg/ast/node.hpp>

#include "runtime/codegen/llvm_kernel.hpp"

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace tg::codegen {

struct kernel_frame;  // kernel_frame.hpp

struct amdgpu_kernel_shape {
  int buffers = 0;             // pointer arguments, one per buffer slot
  int vars = 0;                // i64 arguments after them, one per variable index
  int workgroup_size = 256;    // work-items per workgroup, along x
  int group_lanes = 1;         // work-items per output element (kernel_opts::group_lanes)
  int reduce_unroll = 1;       // kernel_opts::reduce_unroll
  std::vector<int> upcast;     // kernel_opts::upcast: a work-item per tile of upcast[r] values of range r
};

// Every buffer an AMDGPU kernel is launched with starts on this boundary (the AM driver's
// allocations are 4 KiB aligned; drivers/amd checks each launch and graph replay), and the
// kernel's pointer parameters say so: LLVM then loads a quad's four weight bytes as one dword
// where, not knowing the base's alignment, it loaded each byte apart (global_load_u8).
inline constexpr unsigned amdgpu_buffer_align = 16;

// Global memory is address space 1 on AMDGPU (llvm/docs/AMDGPUUsage.rst, "Address Spaces"):
// pointers in it load and store with global_* instructions, where generic (0) ones would be flat_*.
inline constexpr unsigned amdgpu_global_address_space = 1;

// Emits @name into `module` (whose triple and data layout are the AMDGPU target's), shaped by
// the GPU opts of `opts` (runtime/opt/gpu_heuristic.hpp): with group_lanes G > 1 (a power of
// two up to 32; the workgroup a multiple of 32), G consecutive work-items of a wave share each
// output element, exchanging partial reduces with ds_bpermute_b32; reduce_unroll; upcast U_r (at
// most 16): a work-item computes a register tile of U_r neighbouring values of each output range
// r (a matmul's rows and columns), ceil(bound / U_r) work-items along the range, the last tile
// pulled back to end at the bound (overlapping the one before) where U_r does not divide it.
amdgpu_kernel_shape emit_amdgpu_kernel(llvm::Module& module, const std::string& name, std::span<const ast::node> nodes,
                                       int global_ranges, int workgroup_size, const kernel_opts& opts = {});

// How many workgroups cover the kernel's output at launch: ceil(product over the output ranges
// of ceil(bound / upcast), the bounds evaluated with `vars`, times group_lanes / workgroup_size);
// 0 for an empty output.
// The parts emit_amdgpu_kernel is made of, for kernels that hold several (amdgpu_fused_kernel.hpp):
// whether a kernel with `opts` asks for 12 waves a SIMD ("amdgpu-waves-per-eu"); a function made
// an AMDGPU kernel launched in workgroups of exactly `workgroup_size`; and the body of `f` (made by
// create_gpu_kernel, its frame in `frame`) for workgroups numbered from `first_workgroup` on.
bool amdgpu_wants_more_waves(const kernel_opts& opts);
void set_amdgpu_kernel_attributes(llvm::Function* f, int workgroup_size, bool more_waves);
void emit_amdgpu_body(llvm::Function* f, kernel_frame& frame, std::span<const ast::node> nodes, int global_ranges,
                      int workgroup_size, const kernel_opts& opts, std::uint32_t first_workgroup);

std::uint64_t amdgpu_workgroups(std::span<const ast::node> nodes, int global_ranges, const amdgpu_kernel_shape& shape,
                                std::span<const std::int64_t> vars);

}  // namespace tg::codegen
