// map_plan.hpp: splits a mapping into runs of leaves: which level (4 KiB PTE or 2 MiB PDB0 leaf)
// and which fragment each part gets.
//
// Each physical chunk is cut greedily into the largest power-of-two blocks that are aligned in VA
// (absolute and relative to the page-table base) and in PA and fit in what is left: the rule of
// Linux amdgpu_vm_pte_fragment (amdgpu_vm_pt.c:773, frag = min(ffs(start), fls(end - start)) - 1)
// with the physical address added. Blocks of 2 MiB and more become PDB0 leaves, smaller ones 4 KiB
// PTEs; every entry of a block carries fragment = log2(block bytes) - 12. Requiring PA alignment is
// the conservative choice (tinygrad/runtime/support/memory.py: PageTableTraverseContext.next checks
// VA alignment only): it is right whether the hardware adds the in-page offset to an unaligned leaf
// address or not, and it keeps the fragment promise of amdgpu_vm_pt.c:742 (all PTEs in a fragment
// map physically contiguous memory).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/memory/address.hpp"
#include "runtime/memory/pte_format.hpp"

namespace tg::memory {

// A physically contiguous piece of the memory being mapped.
struct phys_chunk {
  gpu_pa pa;
  std::uint64_t size_bytes = 0;
};

// size_bytes / level_coverage(level) consecutive leaves from va -> pa, all with one fragment.
struct leaf_block {
  gpu_va va;
  gpu_pa pa;
  std::uint64_t size_bytes = 0;
  pt_level level = pt_level::ptb;
  unsigned fragment = 0;
};

// Joins neighbouring chunks that continue each other physically (bigger blocks, bigger fragments).
std::vector<phys_chunk> merge_contiguous(std::span<const phys_chunk> chunks);

// The blocks for mapping chunks one after another from va; all addresses and sizes 4 KiB-aligned
// (the caller checks). va_base is where the page table's index 0 starts.
std::vector<leaf_block> plan_leaf_blocks(gpu_va va_base, gpu_va va, std::span<const phys_chunk> chunks);

}  // namespace tg::memory
