// amdgpu_metadata.hpp: what a compiled kernel uses, from its code object's metadata note.
//
// On GFX10 and later the kernel descriptor cannot say how many SGPRs a kernel uses (its
// GRANULATED_WAVEFRONT_SGPR_COUNT is reserved), and it gives VGPRs only in allocation granules;
// the NT_AMDGPU_METADATA note (name "AMDGPU", a MessagePack map) lists both exactly for each
// kernel in "amdhsa.kernels": .sgpr_count, .vgpr_count, .private_segment_fixed_size,
// .group_segment_fixed_size (llvm/docs/AMDGPUUsage.rst, "Code Object V3 and Above Metadata").
// TG_DEBUG=1's compile report prints them (drivers/amd/am_backend_compile.cpp).
//
//   if (auto r = tg::codegen::read_kernel_resources(elf, "k")) use(r->sgprs, r->vgprs);
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace tg::codegen {

struct amdgpu_kernel_resources {
  unsigned sgprs = 0, vgprs = 0;
  std::uint64_t scratch_bytes = 0;  // per work-item
  std::uint64_t lds_bytes = 0;      // per workgroup
};

// Kernel `kernel`'s entry of the metadata note in the ELF image `elf`; nullopt when the image has
// no such note or no such kernel, or the note does not parse.
std::optional<amdgpu_kernel_resources> read_kernel_resources(std::span<const std::byte> elf, std::string_view kernel);

// Waves of a kernel using `vgprs` VGPRs that one SIMD holds at once in wave32 on RDNA3 / RDNA4's
// 1536-entry register file, in granules of 24 (LLVM AMDGPUBaseInfo.cpp: getVGPRAllocGranule,
// getMaxWavesPerEU with Feature1_5xVGPRs), at most 16.
constexpr unsigned waves_per_simd(unsigned vgprs) {
  const unsigned granules = vgprs == 0 ? 1 : (vgprs + 23) / 24;
  const unsigned waves = 1536 / (granules * 24);
  return waves < 16 ? waves : 16;
}
static_assert(waves_per_simd(24) == 16 && waves_per_simd(136) == 10 && waves_per_simd(256) == 5);

}  // namespace tg::codegen
