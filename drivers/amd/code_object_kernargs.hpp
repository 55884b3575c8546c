// code_object_kernargs.hpp: where each kernel argument goes in the kernarg segment.
//
// LLVM lays the explicit arguments out in signature order, each at the next multiple of its ABI
// alignment (AMDGPUUsage "Kernel Argument Layout"; the .offset of each entry in the amdhsa.kernels
// .args metadata). The descriptor's kernarg_size is what the kernel may read; with code object v5
// and no "amdgpu-no-implicitarg-ptr" it includes hidden arguments after the explicit ones, which
// tg leaves zero as the reference does (llvm/docs/AMDGPUUsage.rst: it allocates kernarg_size and writes only its
// own arguments). When the kernel asks for the dispatch pointer, a 64-byte HSA dispatch packet
// follows at kernarg_size (llvm/docs/AMDGPUUsage.rst; pm4::user_sgprs points there).
//
//   const tg::amd::kernarg args[] = {tg::amd::kernarg_pointer, tg::amd::kernarg_pointer, tg::amd::kernarg_u32};
//   tg::amd::kernarg_layout l = tg::amd::layout_kernargs(co.kernel("add"), args);
//   // l.offsets == {0, 8, 16}; allocate l.alloc_bytes (8-byte aligned), zero it, write the args
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "drivers/amd/code_object.hpp"

namespace tg::amd {

struct kernarg {
  std::uint32_t size_bytes;
  std::uint32_t align_bytes;  // a power of two, at most 16
};
inline constexpr kernarg kernarg_pointer{8, 8};  // global (addrspace 1) pointers are 64-bit
inline constexpr kernarg kernarg_u32{4, 4};
inline constexpr kernarg kernarg_u64{8, 8};

// The packet llvm/docs/AMDGPUUsage.rst places after the arguments (hsa_kernel_dispatch_packet_t).
inline constexpr std::uint32_t dispatch_packet_bytes = 64;

struct kernarg_layout {
  std::vector<std::uint32_t> offsets;  // byte offset of each argument, in order
  std::uint32_t explicit_bytes = 0;    // end of the last argument
  std::uint32_t kernarg_bytes = 0;     // what the kernel may read: max(explicit_bytes, kernarg_size)
  std::uint32_t hidden_bytes = 0;      // kernarg_bytes - explicit_bytes: hidden arguments, left zero
  std::optional<std::uint32_t> dispatch_packet_offset;  // kernarg_bytes, when the dispatch pointer is on
  std::uint32_t alloc_bytes = 0;       // kernarg_bytes (+ the dispatch packet)
};

// The C-like layout of `args` alone (no descriptor: no hidden arguments, no dispatch packet).
kernarg_layout layout_kernargs(std::span<const kernarg> args);
// The layout for kernel `k`: the descriptor's kernarg_size must cover the arguments.
kernarg_layout layout_kernargs(const code_object_kernel& k, std::span<const kernarg> args);

}  // namespace tg::amd
