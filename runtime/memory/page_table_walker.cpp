// page_table_walker.cpp: decodes gfx11/gfx12 PDEs and PTEs by field (see page_table_walker.hpp).
#include "runtime/memory/page_table_walker.hpp"

#include <array>

#include <tg/core/error.hpp>

namespace tg::memory {

namespace {

// The documented layout, field by field (Linux 6.12 amdgpu_vm.h). Deliberately not
// taken from pte_format.hpp.
struct field {
  unsigned lo, hi;  // inclusive bit positions
  constexpr std::uint64_t get(std::uint64_t word) const {
    return (word >> lo) & ((hi - lo == 63) ? ~std::uint64_t{0} : (std::uint64_t{1} << (hi - lo + 1)) - 1);
  }
};
constexpr field f_valid{0, 0};          // AMDGPU_PTE_VALID       (1ULL << 0)
constexpr field f_system{1, 1};         // AMDGPU_PTE_SYSTEM      (1ULL << 1)
constexpr field f_snooped{2, 2};        // AMDGPU_PTE_SNOOPED     (1ULL << 2)
constexpr field f_executable{4, 4};     // AMDGPU_PTE_EXECUTABLE  (1ULL << 4)
constexpr field f_readable{5, 5};       // AMDGPU_PTE_READABLE    (1ULL << 5)
constexpr field f_writeable{6, 6};      // AMDGPU_PTE_WRITEABLE   (1ULL << 6)
constexpr field f_fragment{7, 11};      // AMDGPU_PTE_FRAG(x)     ((x & 0x1f) << 7)
constexpr field f_address{12, 47};      // 4 KiB frame number; amdgpu_gmc.c masks 0x0000FFFFFFFFF000
constexpr field f_gfx11_mtype{48, 50};  // AMDGPU_PTE_MTYPE_NV10   (mtype << 48), 3 bits
constexpr field f_gfx11_pde_pte{54, 54};// AMDGPU_PDE_PTE          (1ULL << 54)
constexpr field f_gfx12_mtype{54, 55};  // AMDGPU_PTE_MTYPE_GFX12  (mtype << 54), 2 bits
constexpr field f_gfx12_pte{63, 63};    // AMDGPU_PTE_IS_PTE / AMDGPU_PDE_PTE_GFX12 (1ULL << 63)

constexpr unsigned levels = 4;
constexpr unsigned entries_per_table = 512;
// PDB2, PDB1, PDB0, PTB: the va_shifts of tinygrad/runtime/support/am/amdev.py: AMDev.init_sw.
constexpr std::array<unsigned, levels> va_shift{39, 30, 21, 12};
constexpr std::array<const char*, levels> level_name{"PDB2", "PDB1", "PDB0", "PTB"};
constexpr std::uint64_t gpu_physical_limit = std::uint64_t{1} << 44;  // DMA mask in gmc_v11_0_sw_init

bool is_leaf(gfx_gen gen, unsigned level, std::uint64_t e) {
  if (level == levels - 1) return true;
  return gen == gfx_gen::gfx11 ? f_gfx11_pde_pte.get(e) != 0 : f_gfx12_pte.get(e) != 0;
}

walked_leaf decode_leaf(gfx_gen gen, unsigned level, std::uint64_t va, std::uint64_t e) {
  walked_leaf l;
  l.va = {va};
  l.size_bytes = std::uint64_t{1} << va_shift[level];
  l.pa = {f_address.get(e) << 12};
  l.level = level;
  l.fragment = unsigned(f_fragment.get(e));
  l.mtype = unsigned(gen == gfx_gen::gfx11 ? f_gfx11_mtype.get(e) : f_gfx12_mtype.get(e));
  l.system = f_system.get(e) != 0;
  l.snooped = f_snooped.get(e) != 0;
  l.readable = f_readable.get(e) != 0;
  l.writable = f_writeable.get(e) != 0;
  l.executable = f_executable.get(e) != 0;
  l.raw = e;
  return l;
}

// What a sound entry of this kind must not have.
void check_entry(gfx_gen gen, unsigned level, bool leaf, std::uint64_t va, std::uint64_t e,
                 std::vector<std::string>& problems) {
  auto report = [&](const char* what) {
    problems.push_back(str(level_name[level], " entry for VA ", hex{va}, " = ", hex{e}, ": ", what));
  };
  if (!leaf) {
    // gfx11/12 PDEs carry the table address and VALID only (no translate_further, gmc_v11_0_get_vm_pde).
    if ((e & ~(f_address.get(~std::uint64_t{0}) << 12)) != 1) report("a table pointer with flag bits set (a leaf without its leaf marker?)");
    return;
  }
  if (gen == gfx_gen::gfx12 && f_gfx12_pte.get(e) == 0) report("a gfx12 PTE without IS_PTE (bit 63)");
  if (gen == gfx_gen::gfx11 && level == levels - 1 && f_gfx11_pde_pte.get(e) != 0)
    report("a gfx11 PTE with PDE_PTE (bit 54), which only PDB leaves carry");
  if (gen == gfx_gen::gfx11 && f_gfx12_pte.get(e) != 0) report("bit 63 set in a gfx11 entry (a gfx12 entry?)");
  const std::uint64_t size = std::uint64_t{1} << va_shift[level];
  if ((std::uint64_t{1} << (12 + f_fragment.get(e))) < size) report("a fragment smaller than the leaf itself");
  if ((f_address.get(e) << 12) + size > gpu_physical_limit) report("a physical address beyond 44 bits");
}

void walk_table(gfx_gen gen, vram_access& vram, gpu_pa table, unsigned level, std::uint64_t first_va,
                page_table_walk& out) {
  ++out.table_count;
  std::array<std::uint64_t, entries_per_table> words;
  vram.read_words(table, words);
  for (unsigned i = 0; i < entries_per_table; ++i) {
    const std::uint64_t e = words[i];
    if (f_valid.get(e) == 0) continue;
    const std::uint64_t va = first_va + (std::uint64_t{i} << va_shift[level]);
    const bool leaf = is_leaf(gen, level, e);
    const std::size_t problems = out.problems.size();
    check_entry(gen, level, leaf, va, e, out.problems);
    if (leaf) out.leaves.push_back(decode_leaf(gen, level, va, e));
    else if (out.problems.size() == problems) walk_table(gen, vram, {f_address.get(e) << 12}, level + 1, va, out);
    // else: a malformed PDE (likely a leaf without its marker); following it could leave VRAM
  }
}

}  // namespace

page_table_walk walk_page_tables(gfx_gen gen, vram_access& vram, gpu_pa root_pa, gpu_va va_base) {
  page_table_walk out;
  walk_table(gen, vram, root_pa, 0, va_base.value, out);
  return out;
}

std::optional<walked_leaf> translate(gfx_gen gen, vram_access& vram, gpu_pa root_pa, gpu_va va_base, gpu_va va) {
  if (va < va_base || va.value - va_base.value >= std::uint64_t{1} << 48) return std::nullopt;
  const std::uint64_t rel = va.value - va_base.value;
  gpu_pa table = root_pa;
  for (unsigned level = 0; level < levels; ++level) {
    const std::uint64_t index = (rel >> va_shift[level]) % entries_per_table;
    const std::uint64_t e = vram.read64(table + 8 * index);
    if (f_valid.get(e) == 0) return std::nullopt;
    if (is_leaf(gen, level, e)) {
      const std::uint64_t leaf_va = va_base.value + (rel >> va_shift[level] << va_shift[level]);
      return decode_leaf(gen, level, leaf_va, e);
    }
    table = {f_address.get(e) << 12};
  }
  return std::nullopt;
}

}  // namespace tg::memory
