// nvptx_kernel.hpp: a kernel AST as an NVPTX kernel in LLVM IR (nvptx64-nvidia-cuda), the renderer
// of the NV backend. The schedule is the AMDGPU renderer's (amdgpu_kernel.hpp), from the same GPU
// opts: one thread (or a group of group_lanes) per output element, in blocks of `block_size`
// threads along the flattened output, the last block bounds-guarded; a warp is 32 threads, as an
// RDNA wave32. What differs is the frame:
//   define ptx_kernel void @name(ptr addrspace(1) noalias %buf0, ..., i64 %var0, ...)
// marked a kernel with its launch bound in !nvvm.annotations (LLVM NVPTXUsage.rst, "Kernel
// Metadata": "kernel", "maxntidx"), the flat index ctaid.x * block_size + tid.x, and the group's
// partial reduces exchanged with shfl.sync.bfly over the whole warp. exp2, log2 and sin become
// PTX's .approx instructions (CUDA's fast-math forms); sqrt and division stay IEEE (sqrt.rn, div.rn).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>
#include <tg/ast/node.hpp>

#include "runtime/codegen/llvm_kernel.hpp"

namespace llvm {
class Module;
}

namespace tg::codegen {

// Every buffer an NVPTX kernel is launched with starts on this boundary (cuMemAlloc gives 256;
// drivers/nv checks each launch), and the kernel's pointer parameters say so: LLVM then loads
// a Q8_0 block's weight pair as one 16-bit load and two int16 activations as one 32-bit load
// where it would otherwise load each element apart.
inline constexpr unsigned nvptx_buffer_align = 16;

struct nvptx_kernel_shape {
  int buffers = 0;         // pointer parameters, one per buffer slot
  int vars = 0;            // i64 parameters after them, one per variable index
  int block_size = 256;    // threads per block, along x
  int group_lanes = 1;     // threads per output element (kernel_opts::group_lanes)
  std::vector<int> upcast; // kernel_opts::upcast: a thread per register tile of upcast[r] values of range r
};

// Emits @name into `module` (whose triple and data layout are the NVPTX target's).
nvptx_kernel_shape emit_nvptx_kernel(llvm::Module& module, const std::string& name, std::span<const ast::node> nodes,
                                     int global_ranges, int block_size, const kernel_opts& opts = {});

// How many blocks cover the kernel's output at launch (gpu_frame.hpp: gpu_blocks); 0 for an empty output.
std::uint64_t nvptx_blocks(std::span<const ast::node> nodes, int global_ranges, const nvptx_kernel_shape& shape,
                           std::span<const std::int64_t> vars);

}  // namespace tg::codegen
