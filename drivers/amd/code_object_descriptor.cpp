// code_object_descriptor.cpp: reads the kernel descriptor's fields at their AMDHSA offsets.
#include "drivers/amd/code_object_descriptor.hpp"

#include "drivers/amd/elf_reader.hpp"

namespace tg::amd {

kernel_descriptor decode_kernel_descriptor(std::span<const std::byte, kernel_descriptor_bytes> bytes) {
  using elf::load_le;
  kernel_descriptor kd;
  kd.group_segment_fixed_size = load_le<std::uint32_t>(bytes, kd_offset::group_segment_fixed_size);
  kd.private_segment_fixed_size = load_le<std::uint32_t>(bytes, kd_offset::private_segment_fixed_size);
  kd.kernarg_size = load_le<std::uint32_t>(bytes, kd_offset::kernarg_size);
  kd.kernel_code_entry_byte_offset = load_le<std::int64_t>(bytes, kd_offset::kernel_code_entry_byte_offset);
  kd.compute_pgm_rsrc3 = load_le<std::uint32_t>(bytes, kd_offset::compute_pgm_rsrc3);
  kd.compute_pgm_rsrc1 = load_le<std::uint32_t>(bytes, kd_offset::compute_pgm_rsrc1);
  kd.compute_pgm_rsrc2 = load_le<std::uint32_t>(bytes, kd_offset::compute_pgm_rsrc2);
  kd.kernel_code_properties = load_le<std::uint16_t>(bytes, kd_offset::kernel_code_properties);
  kd.kernarg_preload = load_le<std::uint16_t>(bytes, kd_offset::kernarg_preload);
  return kd;
}

}  // namespace tg::amd
