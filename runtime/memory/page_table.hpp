// page_table.hpp: the GMMU page tables of one GPU (VMID 0): map, unmap and remap ranges of GPU VA.
//
// Four levels, PDB2 -> PDB1 -> PDB0 -> PTB, 512 entries each (amdgpu_vm.h: enum amdgpu_vm_level;
// tinygrad/runtime/support/am/amdev.py: AMDev.init_sw). Leaves are 4 KiB PTEs or 2 MiB PDB0 entries
// acting as PTEs, with fragments, chosen from alignment and size (map_plan.hpp).
// Tables are 4 KiB pages taken from a vram_allocator on demand and written through vram_access;
// a host copy of every table answers "is this mapped" without reading VRAM back.
//
// Leaves next to an unmapped or remapped range whose fragment claims reached into it get smaller
// claims (page_table.cpp, shrink_fragments_around), so partial unmaps are safe.
//
// Every change is all-or-nothing. Before touching anything, map and remap check the range, count
// the tables the change will create and take all of them from the allocator; if that fails they
// throw device_error and nothing has changed (allocator included). Unmap checks that the whole
// range is mapped first (usage_error naming the first hole otherwise), clears it, and frees tables
// that became empty. The reference instead left half-built mappings behind on OOM and asserted on
// a bad unmap (tinygrad/runtime/support/memory.py: MemoryManager.map_range, unmap_range). After each
// change the TLB callback runs once; tables freed by the change go back to the allocator only
// after it, so the GPU never walks a reused page.
//
//   tg::memory::page_table pt(gfx_gen::gfx11, va_base, va_size, pool, vram, tlb);
//   pt.map(va, phys_chunk{pa, 64 << 10}, page_flags{});
//   pt.unmap(va, 64 << 10);
//
// Not thread-safe: the driver serialises calls.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "runtime/memory/address.hpp"
#include "runtime/memory/map_plan.hpp"
#include "runtime/memory/pte_format.hpp"
#include "runtime/memory/tlb_invalidator.hpp"
#include "runtime/memory/vram_access.hpp"
#include "runtime/memory/vram_allocator.hpp"

namespace tg::memory {

class page_table {
 public:
  // Covers [va_base, va_base + va_size_bytes): index 0 of the root is va_base, as the hub's
  // VM_CONTEXT0_PAGE_TABLE_START makes it (tinygrad/runtime/support/am/ip.py:
  // AM_GMC.enable_vm_addressing). va_size_bytes <= 2^48. Allocates the root.
  page_table(gfx_gen gen, gpu_va va_base, std::uint64_t va_size_bytes, vram_allocator& tables, vram_access& vram,
             tlb_invalidator& tlb);
  ~page_table();  // returns every table to the allocator; writes nothing
  page_table(const page_table&) = delete;
  page_table& operator=(const page_table&) = delete;

  // Maps the chunks one after another from va. The range must be unmapped (usage_error).
  void map(gpu_va va, std::span<const phys_chunk> chunks, page_flags flags);
  void map(gpu_va va, phys_chunk chunk, page_flags flags) { map(va, std::span(&chunk, 1), flags); }
  // The range must be fully mapped and must not cut a 2 MiB leaf (usage_error otherwise).
  void unmap(gpu_va va, std::uint64_t size_bytes);
  // Points an already fully mapped range at new memory and/or flags, in one step.
  void remap(gpu_va va, std::span<const phys_chunk> chunks, page_flags flags);
  void remap(gpu_va va, phys_chunk chunk, page_flags flags) { remap(va, std::span(&chunk, 1), flags); }

  // The VRAM that map(va, chunks, ...) would take for new tables right now.
  std::uint64_t new_table_bytes(gpu_va va, std::span<const phys_chunk> chunks) const;

  gfx_gen gen() const { return gen_; }
  gpu_pa root_table() const;  // for VM_CONTEXT0_PAGE_TABLE_BASE_ADDR (AM_GMC.enable_vm_addressing)
  gpu_va va_base() const { return va_base_; }
  std::uint64_t va_size_bytes() const { return va_size_; }
  std::size_t table_count() const { return table_count_; }  // including the root

 private:
  struct table;
  struct edit;

  struct range {  // relative to va_base, half-open
    std::uint64_t first, end;
  };

  range checked_range(const char* op, gpu_va va, std::uint64_t size_bytes) const;
  std::vector<phys_chunk> checked_chunks(const char* op, gpu_va va, std::span<const phys_chunk> chunks,
                                         page_flags flags, std::uint64_t& total) const;
  void require_unmapped(const char* op, gpu_va va, std::uint64_t size_bytes, range r) const;
  void require_mapped(const char* op, gpu_va va, std::uint64_t size_bytes, range r) const;
  std::size_t count_new_tables(const std::vector<leaf_block>& plan) const;
  const table* find_table(pt_level level, std::uint64_t rel) const;

  void reserve_tables(edit& e, std::size_t count, const char* op, gpu_va va, std::uint64_t size_bytes);
  void write_leaves(edit& e, const std::vector<leaf_block>& plan, page_flags flags);
  void clear(edit& e, table& t, range r, bool free_empty);
  void free_empty(edit& e, table& t, range r);
  void set_entry(table& t, std::uint32_t i, std::uint64_t value);
  table& child_or_new(edit& e, table& parent, std::uint32_t i);
  void detach(edit& e, table& parent, std::uint32_t i);
  range shrink_fragments_around(range r);
  struct leaf_ref;
  std::optional<leaf_ref> leaf_containing(std::uint64_t rel);
  void commit(edit& e, range touched);
  void write_dirty(table& t, range r);
  void release(std::unique_ptr<table> t);
  void require_usable() const;

  gfx_gen gen_;
  gpu_va va_base_;
  std::uint64_t va_size_;
  vram_allocator& allocator_;
  vram_access& vram_;
  tlb_invalidator& tlb_;
  std::unique_ptr<table> root_;
  std::size_t table_count_ = 0;
  bool broken_ = false;  // a VRAM write failed half-way: the GPU's copy is unknown
};

}  // namespace tg::memory
