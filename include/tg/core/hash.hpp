// hash.hpp: FNV-1a, the one hash step tg mixes its keys with (AST nodes, kernel caches, code bytes).
#pragma once
#include <cstdint>

namespace tg {

inline constexpr std::uint64_t fnv_offset = 1469598103934665603ull;

// One FNV-1a step over a whole 64-bit word (not byte by byte): enough spread for hash tables
// and caches that compare the keys anyway.
constexpr std::uint64_t fnv_mix(std::uint64_t h, std::uint64_t v) { return (h ^ v) * 1099511628211ull; }

}  // namespace tg
