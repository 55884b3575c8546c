// hash.hpp: the one hash of AST nodes: builder.hpp's hash-consing table and the device's kernel cache.
#pragma once
#include <bit>
#include <cstdint>
#include <span>
#include <tg/ast/node.hpp>
#include <tg/core/hash.hpp>

namespace tg::ast {

// Every field that node::operator== compares, so equal nodes hash alike (for value, except
// 0.0 and -0.0, which only costs a cache miss).
constexpr std::uint64_t hash(const node& n, std::uint64_t h = fnv_offset) {
  h = fnv_mix(h, std::uint64_t(n.o) | std::uint64_t(n.dt) << 8);
  for (std::int16_t s : n.src) h = fnv_mix(h, std::uint64_t(std::uint16_t(s)));
  h = fnv_mix(h, std::uint64_t(n.arg));
  return fnv_mix(h, std::bit_cast<std::uint64_t>(n.value));
}

// A node list in order; `seed` carries whatever else keys it (a kernel's loop shape).
constexpr std::uint64_t hash(std::span<const node> nodes, std::uint64_t seed = fnv_offset) {
  for (const node& n : nodes) seed = hash(n, seed);
  return seed;
}

}  // namespace tg::ast
