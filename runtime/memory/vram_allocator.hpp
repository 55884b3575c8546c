// vram_allocator.hpp: the VRAM physical allocator: TLSF over VRAM offsets, in 4 KiB granules.
//
// Page tables, data buffers, rings: everything in VRAM comes from one of these (the driver may
// keep several: boot, page-table pool, general, as tinygrad/runtime/support/memory.py:
// MemoryManager does). Running out is a device_error that names the request and the free space.
#pragma once
#include <cstdint>
#include <optional>

#include "runtime/memory/address.hpp"
#include "runtime/memory/tlsf.hpp"

namespace tg::memory {

inline constexpr std::uint64_t vram_granule_bytes = 4096;  // the GPU page; callers round to it (MemoryManager.palloc)

class vram_allocator {
 public:
  // Manages [base, base + size_bytes) of VRAM; both multiples of 4 KiB.
  vram_allocator(gpu_pa base, std::uint64_t size_bytes) : tlsf_("vram", base.value, size_bytes, vram_granule_bytes) {}

  gpu_pa allocate(std::uint64_t size_bytes, std::uint64_t align_bytes = vram_granule_bytes) {
    return {tlsf_.allocate(size_bytes, align_bytes)};
  }
  std::optional<gpu_pa> try_allocate(std::uint64_t size_bytes, std::uint64_t align_bytes = vram_granule_bytes) {
    if (auto at = tlsf_.try_allocate(size_bytes, align_bytes)) return gpu_pa{*at};
    return std::nullopt;
  }
  void free(gpu_pa at) { tlsf_.free(at.value); }

  std::uint64_t free_bytes() const { return tlsf_.free_bytes(); }
  // Sizes, block lists and the consistency check.
  const tlsf& state() const { return tlsf_; }

 private:
  tlsf tlsf_;
};

}  // namespace tg::memory
