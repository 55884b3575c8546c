// hash.hpp: FNV-1a, the one hash tg mixes its keys with (AST nodes, kernel caches, code bytes,
// token texts). Constants: the 64-bit offset basis and prime of the FNV definition
// (draft-eastlake-fnv, "FNV-1a").
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

namespace tg {

inline constexpr std::uint64_t fnv_offset = 0xcbf29ce484222325ull;

// One FNV-1a step. Over a byte it is the textbook step; tg also feeds whole 64-bit words
// (AST fields): enough spread for hash tables and caches that compare the keys anyway.
constexpr std::uint64_t fnv_mix(std::uint64_t h, std::uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

// FNV-1a over bytes, byte by byte.
constexpr std::uint64_t fnv_bytes(std::string_view bytes, std::uint64_t h = fnv_offset) {
  for (const char c : bytes) h = fnv_mix(h, static_cast<unsigned char>(c));
  return h;
}
inline std::uint64_t fnv_bytes(std::span<const std::byte> bytes, std::uint64_t h = fnv_offset) {
  for (const std::byte b : bytes) h = fnv_mix(h, std::to_integer<unsigned>(b));
  return h;
}

}  // namespace tg
