// code_object_descriptor.hpp: the 64-byte AMDHSA kernel descriptor (<kernel>.kd) and its fields.
//
// Layout and bit positions: LLVM 19 llvm/Support/AMDHSAKernelDescriptor.h (kernel_descriptor_t,
// *_OFFSET, COMPUTE_PGM_RSRC1/2, KERNEL_CODE_PROPERTY) and AMDGPUUsage.rst "Kernel Descriptor"
// (code object V3 and later; V2's amd_kernel_code_t is a different format). llvm/docs/AMDGPUUsage.rst.
//
//   tg::amd::kernel_descriptor kd = tg::amd::decode_kernel_descriptor(bytes.first<64>());
//   if (kd.uses_dynamic_stack()) ...
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "runtime/queue/pm4.hpp"

namespace tg::amd {

inline constexpr std::size_t kernel_descriptor_bytes = 64;  // static_assert in AMDHSAKernelDescriptor.h

// Byte offsets (AMDHSAKernelDescriptor.h: GROUP_SEGMENT_FIXED_SIZE_OFFSET .. KERNARG_PRELOAD_OFFSET).
namespace kd_offset {
inline constexpr std::size_t group_segment_fixed_size = 0;
inline constexpr std::size_t private_segment_fixed_size = 4;
inline constexpr std::size_t kernarg_size = 8;
inline constexpr std::size_t kernel_code_entry_byte_offset = 16;
inline constexpr std::size_t compute_pgm_rsrc3 = 44;
inline constexpr std::size_t compute_pgm_rsrc1 = 48;
inline constexpr std::size_t compute_pgm_rsrc2 = 52;
inline constexpr std::size_t kernel_code_properties = 56;
inline constexpr std::size_t kernarg_preload = 58;
}  // namespace kd_offset

// A bit field of a descriptor word: `width` bits from `shift` (AMDHSA_BITS_ENUM_ENTRY).
struct kd_field {
  std::uint8_t shift, width;
  constexpr std::uint32_t get(std::uint32_t word) const { return (word >> shift) & ((1u << width) - 1); }
};

// COMPUTE_PGM_RSRC1 / RSRC2 fields tg reads (AMDHSAKernelDescriptor.h; same on GFX11 and GFX12).
namespace rsrc1 {
inline constexpr kd_field granulated_workitem_vgpr_count{0, 6};
inline constexpr kd_field granulated_wavefront_sgpr_count{6, 4};
}  // namespace rsrc1
namespace rsrc2 {
inline constexpr kd_field enable_private_segment{0, 1};
inline constexpr kd_field user_sgpr_count{1, 5};
inline constexpr kd_field enable_sgpr_workgroup_id_x{7, 1};
inline constexpr kd_field enable_sgpr_workgroup_id_y{8, 1};
inline constexpr kd_field enable_sgpr_workgroup_id_z{9, 1};
inline constexpr kd_field enable_sgpr_workgroup_info{10, 1};
inline constexpr kd_field enable_vgpr_workitem_id{11, 2};
inline constexpr kd_field granulated_lds_size{15, 9};
}  // namespace rsrc2

// kernel_code_properties bits; pm4.hpp has bits 0..10 as kcp_*, the rest are only the loader's.
inline constexpr std::uint16_t kcp_uses_dynamic_stack = 1u << 11;  // KERNEL_CODE_PROPERTY_USES_DYNAMIC_STACK

struct kernel_descriptor {
  std::uint32_t group_segment_fixed_size = 0;    // LDS bytes
  std::uint32_t private_segment_fixed_size = 0;  // scratch bytes per work-item
  std::uint32_t kernarg_size = 0;                // bytes of kernel arguments the kernel reads
  std::int64_t kernel_code_entry_byte_offset = 0;  // from the descriptor's address to the first instruction
  std::uint32_t compute_pgm_rsrc1 = 0, compute_pgm_rsrc2 = 0, compute_pgm_rsrc3 = 0;
  std::uint16_t kernel_code_properties = 0;
  std::uint16_t kernarg_preload = 0;

  constexpr bool has(std::uint16_t kcp_bit) const { return (kernel_code_properties & kcp_bit) != 0; }
  constexpr bool wave32() const { return has(queue::pm4::kcp_wavefront_size32); }
  constexpr bool uses_dynamic_stack() const { return has(kcp_uses_dynamic_stack); }
  // User SGPRs the hardware loads (COMPUTE_PGM_RSRC2.USER_SGPR_COUNT); gfx11 LLVM rounds it up.
  constexpr std::uint32_t user_sgpr_count() const { return rsrc2::user_sgpr_count.get(compute_pgm_rsrc2); }
  constexpr bool enables_private_segment() const { return rsrc2::enable_private_segment.get(compute_pgm_rsrc2); }
  // VGPRs per work-item: (granules + 1) * 8 for wave32, * 4 for wave64 on GFX10+ (AMDGPUUsage,
  // compute_pgm_rsrc1 GRANULATED_WORKITEM_VGPR_COUNT; llvm-objdump prints it as .amdhsa_next_free_vgpr).
  constexpr std::uint32_t vgpr_count() const {
    return (rsrc1::granulated_workitem_vgpr_count.get(compute_pgm_rsrc1) + 1) * (wave32() ? 8 : 4);
  }
};

// Reads the fields; no checks (what tg can dispatch is code_object's business).
kernel_descriptor decode_kernel_descriptor(std::span<const std::byte, kernel_descriptor_bytes> bytes);

}  // namespace tg::amd
