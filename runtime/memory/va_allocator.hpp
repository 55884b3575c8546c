// va_allocator.hpp: the GPU virtual-address allocator: TLSF over a VA window, in 4 KiB granules.
//
// The reference keeps one window for the whole process, base 2^45, size 2^44 (16 TiB), so a VA is
// unique across GPUs (tinygrad/runtime/support/am/amdev.py: AMMemoryManager.va_allocator). Running
// out is a device_error that names the request.
#pragma once
#include <bit>
#include <cstdint>
#include <optional>

#include "runtime/memory/address.hpp"
#include "runtime/memory/tlsf.hpp"

namespace tg::memory {

inline constexpr std::uint64_t va_granule_bytes = 4096;

class va_allocator {
 public:
  // Manages [base, base + size_bytes); both multiples of 4 KiB.
  va_allocator(gpu_va base, std::uint64_t size_bytes) : tlsf_("gpu va", base.value, size_bytes, va_granule_bytes) {}

  // align_bytes 0 means the natural alignment: the largest power of two <= size_bytes, at least
  // 4 KiB (tinygrad/runtime/support/memory.py: MemoryManager.alloc_vaddr). Big buffers then start
  // on 2 MiB (and larger) boundaries, which lets the page tables use 2 MiB leaves and large
  // fragments for them.
  gpu_va allocate(std::uint64_t size_bytes, std::uint64_t align_bytes = 0) {
    return {tlsf_.allocate(size_bytes, effective_align(size_bytes, align_bytes))};
  }
  std::optional<gpu_va> try_allocate(std::uint64_t size_bytes, std::uint64_t align_bytes = 0) {
    if (auto at = tlsf_.try_allocate(size_bytes, effective_align(size_bytes, align_bytes))) return gpu_va{*at};
    return std::nullopt;
  }
  void free(gpu_va at) { tlsf_.free(at.value); }

  std::uint64_t free_bytes() const { return tlsf_.free_bytes(); }
  const tlsf& state() const { return tlsf_; }

  static std::uint64_t effective_align(std::uint64_t size_bytes, std::uint64_t align_bytes) {
    if (align_bytes != 0 || size_bytes == 0) return align_bytes;
    const std::uint64_t natural = std::bit_floor(size_bytes);
    return natural < va_granule_bytes ? va_granule_bytes : natural;
  }

 private:
  tlsf tlsf_;
};

}  // namespace tg::memory
