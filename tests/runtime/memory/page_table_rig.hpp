// page_table_rig.hpp: a page table over host VRAM full of garbage, with its allocator, TLB counter
// and the independent walker at hand.
#pragma once
#include <cstdint>

#include "tests/runtime/memory/mapping_model.hpp"
#include "runtime/memory/host_vram.hpp"
#include "runtime/memory/page_table.hpp"
#include "runtime/memory/page_table_walker.hpp"
#include "runtime/memory/vram_allocator.hpp"

namespace tg::memory::test {

inline constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;
inline constexpr gpu_va va_base{std::uint64_t{1} << 45};  // the reference's window (AMMemoryManager.va_allocator)
inline constexpr std::uint64_t va_size = std::uint64_t{1} << 44;

struct page_table_rig {
  explicit page_table_rig(gfx_gen gen, std::uint64_t vram_bytes = 64 * MiB)
      : vram(vram_bytes, vram_garbage), pool(gpu_pa{0}, vram_bytes), pt(gen, va_base, va_size, pool, vram, tlb) {}

  page_table_walk walk() { return walk_page_tables(pt.gen(), vram, pt.root_table(), pt.va_base()); }

  host_vram vram;
  vram_allocator pool;
  counting_tlb tlb;
  page_table pt;
};

}  // namespace tg::memory::test
