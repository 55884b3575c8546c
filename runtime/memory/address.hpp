// address.hpp: distinct types for GPU virtual and physical addresses, so one can't be passed as the other.
//
// gpu_va: an address in the GPU's virtual address space (VMID 0), what kernels dereference.
// gpu_pa: a physical address as the GMMU sees it: an offset into VRAM (0 = start of the framebuffer)
//         for VRAM pages, or a bus address for system pages. Which of the two is a property of the
//         mapping (page_location), not of the number.
#pragma once
#include <compare>
#include <cstdint>
#include <ostream>
#include <tg/core/hex.hpp>

namespace tg::memory {

struct gpu_va {
  std::uint64_t value = 0;
  // The halves packets carry in two dwords (PM4, SDMA).
  constexpr std::uint32_t lo() const { return static_cast<std::uint32_t>(value); }
  constexpr std::uint32_t hi() const { return static_cast<std::uint32_t>(value >> 32); }
  constexpr bool is_aligned(std::uint64_t bytes) const { return value % bytes == 0; }
  friend constexpr auto operator<=>(gpu_va, gpu_va) = default;
  friend constexpr gpu_va operator+(gpu_va a, std::uint64_t bytes) { return {a.value + bytes}; }
};

struct gpu_pa {
  std::uint64_t value = 0;
  friend constexpr auto operator<=>(gpu_pa, gpu_pa) = default;
  friend constexpr gpu_pa operator+(gpu_pa a, std::uint64_t bytes) { return {a.value + bytes}; }
};

inline std::ostream& operator<<(std::ostream& out, gpu_va a) { return out << hex{a.value}; }
inline std::ostream& operator<<(std::ostream& out, gpu_pa a) { return out << hex{a.value}; }

// Prints a half-open range "[0x1000, 0x3000)" in messages.
struct va_range_text {
  gpu_va first;
  std::uint64_t size_bytes;
};
inline std::ostream& operator<<(std::ostream& out, va_range_text r) {
  return out << '[' << r.first << ", " << (r.first + r.size_bytes) << ')';
}

}  // namespace tg::memory
