// code_object.hpp: loads an AMDGPU ELF code object (LLVM 19, gfx1100 / gfx1200) for dispatch.
//
// Input is what `llc -mtriple=amdgcn-amd-amdhsa -filetype=obj` writes (ET_REL) or that object after
// `ld.lld -shared` (ET_DYN, the usual form). The loader builds the image to copy to GPU memory:
// for ET_DYN the PT_LOAD segments at their p_vaddr (p_memsz, the tail zero-filled); for ET_REL the
// SHF_ALLOC PROGBITS/NOBITS sections appended in section order at their sh_addralign (llvm/docs/AMDGPUUsage.rst).
// Relocations are applied for a load address; each kernel is found by its `<name>.kd` symbol
// (AMDGPUUsage "Symbols": the kernel descriptor symbol) and its descriptor read (llvm/docs/AMDGPUUsage.rst).
// Corrupt files and what tg cannot dispatch throw tg::usage_error naming the kernel and field.
//
//   tg::amd::code_object co(elf_bytes);
//   std::vector<std::byte> image = co.image_at(vram_va);   // copy to vram_va (co.image_bytes())
//   tg::queue::pm4::kernel_summary k = co.summary("add", vram_va);
//   tg::queue::pm4::emit_dispatch(cb, k, {.gfx = co.gfx(), ...});
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/amd/code_object_descriptor.hpp"
#include "drivers/amd/code_object_reloc.hpp"
#include "runtime/queue/cmd_buffer.hpp"
#include "runtime/queue/pm4.hpp"

namespace tg::amd::elf {
class file;
}

namespace tg::amd {

using memory::gpu_va;

// AMDGPU ELF header values (LLVM 19 llvm/BinaryFormat/ELF.h).
inline constexpr std::uint8_t elfosabi_amdgpu_hsa = 64;          // ELFOSABI_AMDGPU_HSA
inline constexpr std::uint8_t elfabiversion_amdgpu_hsa_v3 = 1;   // code object V3: first with .kd descriptors
inline constexpr std::uint8_t elfabiversion_amdgpu_hsa_v6 = 4;   // newest LLVM 19 writes
inline constexpr std::uint32_t ef_amdgpu_mach = 0x0FF;           // EF_AMDGPU_MACH (e_flags mask)
inline constexpr std::uint32_t ef_amdgpu_mach_gfx1100 = 0x041;   // EF_AMDGPU_MACH_AMDGCN_GFX1100
inline constexpr std::uint32_t ef_amdgpu_mach_gfx1200 = 0x048;   // EF_AMDGPU_MACH_AMDGCN_GFX1200

enum class gfx_target : std::uint8_t { gfx1100, gfx1200 };

// "gfx1103" for an EF_AMDGPU_MACH value of the gfx9-gfx12 families, "" for others (for messages).
std::string_view mach_name(std::uint32_t mach);

struct code_object_kernel {
  std::string name;                  // the function's name (the symbol without ".kd")
  std::uint64_t descriptor_offset;   // image offset of the 64-byte descriptor (AQL kernel_object)
  std::uint64_t entry_offset;        // image offset of the first instruction: descriptor + entry byte offset
  kernel_descriptor descriptor;      // as read after relocation (the entry offset is PC-relative)
};

class code_object {
 public:
  // Parses `elf_bytes`, lays out the image and reads every kernel descriptor; the bytes need not
  // outlive the object.
  explicit code_object(std::span<const std::byte> elf_bytes);

  gfx_target target() const { return target_; }  // the ISA family (gfx1101 and gfx1102 run gfx1100's)
  // The processor it was compiled for, from e_flags: "gfx1101". The loader (am_program) refuses a
  // code object for another processor than the device's, as ROCm's loader does: the same ISA
  // family is not enough, since gfx1100's kernels pad USER_SGPR_COUNT for its UserSGPRInit16Bug
  // and gfx1101's do not (llvm/docs/AMDGPUUsage.rst, "Processors"; AMDGPU.td FeatureUserSGPRInit16Bug).
  std::string_view processor() const { return mach_name(mach_); }
  queue::pm4::gfx_version gfx() const;
  // Bytes to allocate and copy; the load address must be a multiple of load_alignment() (>= 256,
  // since COMPUTE_PGM_LO holds the entry address >> 8).
  std::uint64_t image_bytes() const { return image_.size(); }
  std::uint64_t load_alignment() const { return alignment_; }
  // The image with every relocation applied for `load_address`.
  std::vector<std::byte> image_at(gpu_va load_address) const;

  std::span<const code_object_kernel> kernels() const { return kernels_; }
  // The kernel called `name`; the error lists the kernels there are.
  const code_object_kernel& kernel(std::string_view name) const;
  // What pm4::emit_dispatch needs for `name` loaded at `load_address`. Throws for descriptors tg
  // cannot dispatch: queue pointer, dispatch id, flat scratch init or private segment size user
  // SGPRs, a dynamic stack, or preloaded kernargs.
  queue::pm4::kernel_summary summary(std::string_view name, gpu_va load_address) const;

 private:
  void load_segments(const elf::file& f);
  void load_sections(const elf::file& f);
  void find_kernels(const elf::file& f);

  gfx_target target_ = gfx_target::gfx1100;
  std::uint32_t mach_ = ef_amdgpu_mach_gfx1100;  // EF_AMDGPU_MACH of e_flags
  std::vector<std::byte> image_;  // unrelocated
  std::uint64_t alignment_ = 256;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> code_ranges_;  // executable [begin, end) image offsets
  std::vector<std::uint64_t> section_offsets_;  // image offset of each section (ET_REL), or no_offset
  std::vector<fixup> fixups_;
  std::vector<code_object_kernel> kernels_;
};

}  // namespace tg::amd
