// cmd_buffer.hpp: the dword buffer that PM4 and SDMA emitters append to, and GPU addresses.
#pragma once
#include <cstdint>
#include <vector>

namespace tg::queue {

// Packets are little-endian dwords; emitters append to the end and never reorder.
using cmd_buffer = std::vector<std::uint32_t>;

// A GPU virtual address (VMID 0). A distinct type so a size or an offset can't be passed as one.
struct gpu_va {
  std::uint64_t value = 0;

  constexpr std::uint32_t lo() const { return static_cast<std::uint32_t>(value); }
  constexpr std::uint32_t hi() const { return static_cast<std::uint32_t>(value >> 32); }
  constexpr bool is_aligned(std::uint64_t bytes) const { return value % bytes == 0; }
  constexpr gpu_va operator+(std::uint64_t bytes) const { return gpu_va{value + bytes}; }
  friend constexpr bool operator==(gpu_va, gpu_va) = default;
};

}  // namespace tg::queue
