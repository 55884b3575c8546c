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

namespace tg::memory {

struct gpu_va {
  std::uint64_t value = 0;
  friend constexpr auto operator<=>(gpu_va, gpu_va) = default;
  friend constexpr gpu_va operator+(gpu_va a, std::uint64_t bytes) { return {a.value + bytes}; }
};

struct gpu_pa {
  std::uint64_t value = 0;
  friend constexpr auto operator<=>(gpu_pa, gpu_pa) = default;
  friend constexpr gpu_pa operator+(gpu_pa a, std::uint64_t bytes) { return {a.value + bytes}; }
};

// Prints a number as 0x... in messages: tg::str("at ", hex{offset}).
struct hex {
  std::uint64_t value;
};

inline std::ostream& operator<<(std::ostream& out, hex h) {
  const auto saved = out.flags();
  out << "0x" << std::hex << h.value;
  out.flags(saved);
  return out;
}
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
