// pte_format.hpp: how the mapper encodes gfx11 and gfx12 page-directory and page-table entries.
//
// Bit positions are Linux 6.12 drivers/gpu/drm/amd/amdgpu/amdgpu_vm.h (lines cited per constant);
// the per-generation choices follow gmc_v11_0.c / gmc_v12_0.c (get_vm_pde, get_vm_pte) and
// amdgpu_vm_pt.c (amdgpu_vm_pte_update_flags). The page-table walker decodes entries with its own
// constants, written separately from the same documentation, so the two check each other.
#pragma once
#include <cstdint>

#include "runtime/memory/address.hpp"
#include "runtime/memory/gfx_gen.hpp"

namespace tg::memory {

// amdgpu_vm.h:190 enum amdgpu_vm_level. gmc_v11_0.c:805 and gmc_v12_0.c:770 call
// amdgpu_vm_adjust_size(adev, 256 * 1024, 9, 3, 48): up to 3 directory levels (root PDB2) over 48
// bits, and amdgpu_vm.c:2272 then sets block_size 9. So every level has 512 entries and resolves 9
// VA bits above the 12-bit page offset (AM programs the same: depth 3, block size 0;
// tinygrad/runtime/support/am/ip.py: AM_GMC.enable_vm_addressing).
enum class pt_level : std::uint8_t { pdb2, pdb1, pdb0, ptb };

inline constexpr std::uint32_t pt_entries = 512;
inline constexpr std::uint64_t pt_table_bytes = pt_entries * 8;  // one 4 KiB page per table
inline constexpr std::uint64_t page_bytes = 4096;
inline constexpr std::uint64_t huge_page_bytes = 2u << 20;       // a PDB0 entry used as a PTE

constexpr unsigned level_shift(pt_level l) { return 39u - 9u * unsigned(l); }
constexpr std::uint64_t level_coverage(pt_level l) { return std::uint64_t{1} << level_shift(l); }
static_assert(level_coverage(pt_level::pdb2) == std::uint64_t{512} << 30);
static_assert(level_coverage(pt_level::pdb0) == huge_page_bytes);
static_assert(level_coverage(pt_level::ptb) == page_bytes);

enum class page_location : std::uint8_t { vram, system };

// What a leaf grants. The reference sets read, write and execute on every leaf
// (tinygrad/runtime/support/am/ip.py: AM_GMC.get_pte_flags).
struct page_flags {
  page_location location = page_location::vram;
  bool snooped = false;   // system memory only: the GPU snoops the CPU caches (coherent host RAM)
  bool uncached = false;  // MTYPE_UC instead of the default MTYPE_NC (0)
  bool readable = true;
  bool writable = true;
  bool executable = true;
  bool operator==(const page_flags&) const = default;
};

namespace pte_bits {
inline constexpr std::uint64_t valid = std::uint64_t{1} << 0;       // amdgpu_vm.h:57 AMDGPU_PTE_VALID
inline constexpr std::uint64_t system = std::uint64_t{1} << 1;      // amdgpu_vm.h:58 AMDGPU_PTE_SYSTEM
inline constexpr std::uint64_t snooped = std::uint64_t{1} << 2;     // amdgpu_vm.h:59 AMDGPU_PTE_SNOOPED
inline constexpr std::uint64_t executable = std::uint64_t{1} << 4;  // amdgpu_vm.h:65 AMDGPU_PTE_EXECUTABLE
inline constexpr std::uint64_t readable = std::uint64_t{1} << 5;    // amdgpu_vm.h:67 AMDGPU_PTE_READABLE
inline constexpr std::uint64_t writeable = std::uint64_t{1} << 6;   // amdgpu_vm.h:68 AMDGPU_PTE_WRITEABLE
inline constexpr unsigned fragment_shift = 7;                       // amdgpu_vm.h:70 AMDGPU_PTE_FRAG(x): (x & 0x1f) << 7
inline constexpr unsigned fragment_max = 31;                        // 5 bits; amdgpu_vm_pt.c:763 max_frag = 31
// amdgpu_gmc.c:165 amdgpu_gmc_set_pte_pde: value = addr & 0x0000FFFFFFFFF000.
inline constexpr std::uint64_t address_mask = 0x0000'FFFF'FFFF'F000ull;
// gfx11 (NV10 layout): amdgpu_vm.h:76 AMDGPU_PDE_PTE (a PDB entry that is a leaf), :114 MTYPE_NV10 << 48.
inline constexpr std::uint64_t gfx11_pde_is_leaf = std::uint64_t{1} << 54;
inline constexpr unsigned gfx11_mtype_shift = 48;
// gfx12: amdgpu_vm.h:139 AMDGPU_PDE_PTE_GFX12 and :132 AMDGPU_PTE_IS_PTE (both bit 63; set on every
// leaf: amdgpu_vm_pt.c:687 for PDB leaves, kfd_svm.c:1333 for PTB leaves), :125 MTYPE_GFX12 << 54.
inline constexpr std::uint64_t gfx12_is_leaf = std::uint64_t{1} << 63;
inline constexpr unsigned gfx12_mtype_shift = 54;
// soc21_enum.h:479 MTYPE_NC = 0 (what gmc_v11_0_map_mtype gives AMDGPU_VM_MTYPE_DEFAULT),
// soc21_enum.h:168 and soc24_enum.h:282 MTYPE_UC = 3 (gmc_v11_0.c:531, gmc_v12_0.c:545 for UNCACHED).
inline constexpr std::uint64_t mtype_nc = 0;
inline constexpr std::uint64_t mtype_uc = 3;
}  // namespace pte_bits

// The GPU accepts physical addresses below 2^44 (gmc_v11_0.c:839, gmc_v12_0.c:804:
// dma_set_mask_and_coherent(DMA_BIT_MASK(44)); the reference rejects larger ones,
// tinygrad/runtime/support/am/amdev.py: AMPageTableEntry.set_entry).
inline constexpr std::uint64_t max_physical_address = std::uint64_t{1} << 44;

// A directory entry pointing at a child table: address | VALID, nothing else on gfx11/gfx12 (no
// translate_further there, so gmc_v1x_0_get_vm_pde adds no BFS/TF bits).
constexpr std::uint64_t encode_pde(gpu_pa child_table) {
  return (child_table.value & pte_bits::address_mask) | pte_bits::valid;
}

// A leaf: a PTE in a PTB, or a PDB0 entry acting as a 2 MiB PTE. fragment = log2(bytes of the
// aligned, physically contiguous run this entry belongs to) - 12 (amdgpu_vm_pt.c:733
// amdgpu_vm_pte_fragment).
constexpr std::uint64_t encode_leaf(gfx_gen gen, pt_level level, gpu_pa page, page_flags flags, unsigned fragment) {
  using namespace pte_bits;
  std::uint64_t e = (page.value & address_mask) | valid;
  if (flags.location == page_location::system) e |= system;
  if (flags.snooped) e |= snooped;
  if (flags.executable) e |= executable;
  if (flags.readable) e |= readable;
  if (flags.writable) e |= writeable;
  e |= std::uint64_t(fragment & fragment_max) << fragment_shift;
  const std::uint64_t mtype = flags.uncached ? mtype_uc : mtype_nc;
  if (gen == gfx_gen::gfx11) {
    e |= mtype << gfx11_mtype_shift;
    if (level != pt_level::ptb) e |= gfx11_pde_is_leaf;
  } else {
    e |= mtype << gfx12_mtype_shift;
    e |= gfx12_is_leaf;
  }
  return e;
}

// The fragment field of a leaf, read and replaced (unmap shrinks the claims of neighbouring leaves).
constexpr unsigned fragment_of(std::uint64_t leaf) {
  return unsigned(leaf >> pte_bits::fragment_shift) & pte_bits::fragment_max;
}
constexpr std::uint64_t with_fragment(std::uint64_t leaf, unsigned fragment) {
  constexpr std::uint64_t field = std::uint64_t{pte_bits::fragment_max} << pte_bits::fragment_shift;
  return (leaf & ~field) | (std::uint64_t(fragment & pte_bits::fragment_max) << pte_bits::fragment_shift);
}

// A worked example: a gfx11 cached VRAM leaf in a PTB with a 2 MiB fragment is
// paddr | 0x4F1; gfx12 adds bit 63.
static_assert(encode_leaf(gfx_gen::gfx11, pt_level::ptb, {0x20'0000}, {}, 9) == 0x2004F1);
static_assert(encode_leaf(gfx_gen::gfx12, pt_level::ptb, {0x20'0000}, {}, 9) == 0x8000'0000'0020'04F1ull);

}  // namespace tg::memory
