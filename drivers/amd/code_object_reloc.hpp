// code_object_reloc.hpp: the R_AMDGPU_* relocations the code-object loader applies at load time.
//
// Types and their calculations: AMDGPUUsage.rst "Relocation Records" (LLVM 19) and
// llvm/BinaryFormat/ELFRelocs/AMDGPU.def. S = symbol address, A = addend, P = patched address,
// B = load address. ld.lld -shared resolves everything PC-relative, and leaves R_AMDGPU_ABS64 and
// R_AMDGPU_RELATIVE64 in .rela.dyn for pointers in data; llc's ET_REL objects carry REL64 (kernel
// descriptor entry offsets), REL32_LO/HI (s_getpc-relative addresses), ABS64 and GOTPCREL*.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

namespace tg::amd {

namespace r_amdgpu {  // AMDGPU.def
inline constexpr std::uint32_t none = 0;
inline constexpr std::uint32_t abs32_lo = 1;     // (S + A) & 0xFFFFFFFF
inline constexpr std::uint32_t abs32_hi = 2;     // (S + A) >> 32
inline constexpr std::uint32_t abs64 = 3;        // S + A
inline constexpr std::uint32_t rel32 = 4;        // S + A - P, 32 bits
inline constexpr std::uint32_t rel64 = 5;        // S + A - P
inline constexpr std::uint32_t abs32 = 6;        // S + A, 32 bits
inline constexpr std::uint32_t gotpcrel = 7;     // needs a GOT: tg has none (link with ld.lld)
inline constexpr std::uint32_t gotpcrel32_lo = 8;
inline constexpr std::uint32_t gotpcrel32_hi = 9;
inline constexpr std::uint32_t rel32_lo = 10;    // (S + A - P) & 0xFFFFFFFF
inline constexpr std::uint32_t rel32_hi = 11;    // (S + A - P) >> 32
inline constexpr std::uint32_t relative64 = 13;  // B + A
inline constexpr std::uint32_t rel16 = 14;       // branch offsets; never left for a loader
}  // namespace r_amdgpu

// "R_AMDGPU_REL64", or "" for a number AMDGPU.def does not define.
std::string_view reloc_name(std::uint32_t type);
// Bytes a relocation of `type` patches (4 or 8); 0 for R_AMDGPU_NONE; throws for the types tg
// does not apply, with `where` ("section .rela.text entry 3") in the message.
std::size_t reloc_width(std::uint32_t type, std::string_view where);

// One relocation resolved to image offsets at parse time, applied for a load address later.
struct fixup {
  std::uint64_t at = 0;             // image offset of the patched bytes: P - B
  std::uint32_t type = 0;           // r_amdgpu::*
  bool symbol_is_absolute = false;  // SHN_ABS (or no symbol): S does not move with B
  std::uint64_t symbol = 0;         // S - B, or S when absolute
  std::int64_t addend = 0;
};

// Patches `image` (which lies at `load_address`); fixups were bounds-checked when made. Throws a
// usage_error when a 32-bit result does not fit.
void apply_fixups(std::span<std::byte> image, std::span<const fixup> fixups, std::uint64_t load_address);

}  // namespace tg::amd
