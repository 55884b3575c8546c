// map_plan.cpp: the greedy aligned power-of-two split of a mapping (see map_plan.hpp).
#include "runtime/memory/map_plan.hpp"

#include <algorithm>
#include <bit>

namespace tg::memory {

namespace {

// The alignment an address offers; 0 offers any (Linux's ffs wraps the same way for start 0).
std::uint64_t alignment_of(std::uint64_t x) { return x == 0 ? std::uint64_t{1} << 63 : x & (~x + 1); }

// Fragments are 5 bits (amdgpu_vm.h:70), so no block claims more than 2^(12 + 31) bytes.
constexpr std::uint64_t max_block_bytes = std::uint64_t{1} << (12 + pte_bits::fragment_max);

}  // namespace

std::vector<phys_chunk> merge_contiguous(std::span<const phys_chunk> chunks) {
  std::vector<phys_chunk> out;
  for (const phys_chunk& c : chunks) {
    if (!out.empty() && out.back().pa + out.back().size_bytes == c.pa) out.back().size_bytes += c.size_bytes;
    else out.push_back(c);
  }
  return out;
}

std::vector<leaf_block> plan_leaf_blocks(gpu_va va_base, gpu_va va, std::span<const phys_chunk> chunks) {
  std::vector<leaf_block> out;
  for (const phys_chunk& c : chunks) {
    gpu_pa pa = c.pa;
    for (std::uint64_t left = c.size_bytes; left != 0;) {
      const std::uint64_t block = std::min({alignment_of(va.value), alignment_of(va.value - va_base.value),
                                            alignment_of(pa.value), std::bit_floor(left), max_block_bytes});
      const pt_level level = block >= huge_page_bytes ? pt_level::pdb0 : pt_level::ptb;
      out.push_back({va, pa, block, level, unsigned(std::countr_zero(block)) - 12u});
      va = va + block;
      pa = pa + block;
      left -= block;
    }
  }
  return out;
}

}  // namespace tg::memory
