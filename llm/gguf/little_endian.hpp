// little_endian.hpp: reads GGUF's little-endian integers from unaligned bytes on any host.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tg::gguf {

// The `n_bytes` (at most 8) bytes at `p` as a little-endian unsigned integer.
inline std::uint64_t load_le(const std::byte* p, std::size_t n_bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n_bytes; ++i) v |= std::uint64_t(std::to_integer<std::uint8_t>(p[i])) << (8 * i);
  return v;
}

}  // namespace tg::gguf
