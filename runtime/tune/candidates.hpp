// candidates.hpp: the loop shapes BEAM tries next from one it has timed: the upcast of the last
// one or two output ranges scaled up or down by 2 or 4 (staying a divisor of the range's constant
// bound), the vector-lanes choice flipped, and the last range's panel halved, doubled or
// dropped (or, without one, a panel of 8 tiles).
#pragma once
#include <cstdint>
#include <span>
#include <vector>
#include <tg/ast/node.hpp>
#include "runtime/codegen/llvm_kernel.hpp"

namespace tg::tune {

// The outputs one tile holds: the product of the upcasts.
int tile_size(const std::vector<int>& upcast);

// Per output range, its bound when it is a constant, else -1 (such a range is never upcast).
std::vector<std::int64_t> output_bounds(std::span<const ast::node> nodes, int global_ranges);

// One form per loop shape, so the search never times the same one twice: an explicit upcast
// per output range, and vector_lanes kept only where some range is upcast.
codegen::kernel_opts normalize(const codegen::kernel_opts& opts, int global_ranges);

// The neighbours of `from` (normalized, `from` itself excluded).
std::vector<codegen::kernel_opts> neighbours(const codegen::kernel_opts& from, std::span<const std::int64_t> bounds);

}  // namespace tg::tune
