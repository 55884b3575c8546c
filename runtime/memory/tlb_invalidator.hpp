// tlb_invalidator.hpp: the callback the page tables call after every change, so the GPU drops stale
// translations.
//
// The driver implements it with the GC and MM hub invalidation sequence (tinygrad/runtime/support/am/
// ip.py: AM_GMC.flush_tlb; gmc_v11_0.c: gmc_v11_0_flush_gpu_tlb); tests count the calls. Unlike the
// reference, which only flushed after map (tinygrad/runtime/support/am/amdev.py:
// AMMemoryManager.on_range_mapped), the page tables call it after unmap and remap too, and before
// the memory of a freed table is handed back to the allocator.
#pragma once
#include <cstdint>

#include "runtime/memory/address.hpp"

namespace tg::memory {

class tlb_invalidator {
 public:
  virtual ~tlb_invalidator() = default;
  // [first, first + size_bytes) changed: the call's range, widened when an unmap or remap also
  // shrank the fragments of leaves next to it. Called once per map, unmap or remap that succeeded,
  // never for one that failed.
  virtual void invalidate_tlb(gpu_va first, std::uint64_t size_bytes) = 0;
};

}  // namespace tg::memory
