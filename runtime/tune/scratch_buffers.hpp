// scratch_buffers.hpp: stand-in buffers for timing a kernel away from the caller's data: one per
// slot, as large as the kernel can index at the given variable values, filled with deterministic
// pseudo-random values of the slot's dtype.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>
#include <tg/ast/node.hpp>

namespace tg::tune {

struct slot_info {
  dtype dt = dtype::uint8;   // of the first load or store of the slot
  std::size_t size_bytes = 0;
  bool written = false;      // the kernel stores to it: what candidates are compared on
};

// Largest integer a filled integer slot holds: integer data read as an index (a gather's row
// number, a quantized block's nibbles) then stays within the smallest table a kernel indexes.
inline constexpr std::int64_t integer_fill_max = 3;

// Every slot's dtype and size, from the element indexes' value ranges over the loops (interval
// arithmetic, with integer loads in [0, integer_fill_max]); nullopt when an index cannot be
// bounded (it depends on a loaded float, say), so the kernel cannot be timed on stand-ins.
std::optional<std::vector<slot_info>> measure_slots(std::span<const ast::node> nodes, int slot_count,
                                                    std::span<const std::int64_t> vars);

// The data: floats uniform in [-1, 1], integers in [0, integer_fill_max], the same on every run.
std::vector<std::vector<std::byte>> fill_slots(std::span<const slot_info> slots);

}  // namespace tg::tune
