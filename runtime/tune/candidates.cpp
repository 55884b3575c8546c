// candidates.cpp: BEAM's moves through the loop-shape space.
#include "runtime/tune/candidates.hpp"

#include <algorithm>

namespace tg::tune {
namespace {

// Register-tile limits: past these the tile's accumulators spill out of the 16-32 vector
// registers of x86, and the kernel's code grows for no gain.
constexpr int max_last_upcast = 32, max_second_upcast = 16, max_tile = 256;

}  // namespace

int tile_size(const std::vector<int>& upcast) {
  int t = 1;
  for (int u : upcast) t *= u;
  return t;
}

std::vector<std::int64_t> output_bounds(std::span<const ast::node> nodes, int global_ranges) {
  std::vector<std::int64_t> bounds(std::size_t(std::max(global_ranges, 0)), -1);
  for (const ast::node& n : nodes) {
    if (n.o != ast::op::range || n.arg < 0 || n.arg >= global_ranges) continue;
    const ast::node& b = nodes[std::size_t(n.src[0])];
    if (b.o == ast::op::constant) bounds[std::size_t(n.arg)] = b.arg;
  }
  return bounds;
}

codegen::kernel_opts normalize(const codegen::kernel_opts& opts, int global_ranges) {
  codegen::kernel_opts n = opts;
  if (n.upcast.empty()) n.upcast.assign(std::size_t(std::max(global_ranges, 0)), 1);
  // With nothing upcast there are no lanes to make a vector of: both settings are one loop shape.
  if (tile_size(n.upcast) == 1) n.vector_lanes = true;
  if (global_ranges < 2) n.panel = 0;
  n.isa = {};
  return n;
}

std::vector<codegen::kernel_opts> neighbours(const codegen::kernel_opts& from, std::span<const std::int64_t> bounds) {
  const int ranges = int(bounds.size());
  std::vector<codegen::kernel_opts> out;
  auto add = [&](codegen::kernel_opts c) {
    c = normalize(c, ranges);
    if (c == normalize(from, ranges) || std::find(out.begin(), out.end(), c) != out.end()) return;
    out.push_back(std::move(c));
  };
  const codegen::kernel_opts base = normalize(from, ranges);
  for (int r = ranges - 1; r >= 0 && r >= ranges - 2; --r) {
    const std::int64_t bound = bounds[std::size_t(r)];
    if (bound <= 1) continue;
    const int cap = r == ranges - 1 ? max_last_upcast : max_second_upcast;
    const int now = base.upcast[std::size_t(r)];
    for (int f : {2, 4}) {
      codegen::kernel_opts up = base;
      up.upcast[std::size_t(r)] = now * f;
      const bool whole_tiles = !(r == ranges - 1 && up.panel > 0 && up.panel % (now * f) != 0);  // per panel
      if (whole_tiles && now * f <= cap && bound % (now * f) == 0 && tile_size(up.upcast) <= max_tile) add(up);
      if (now % f == 0) {
        codegen::kernel_opts down = base;
        down.upcast[std::size_t(r)] = now / f;
        add(down);
      }
    }
  }
  codegen::kernel_opts flipped = base;
  flipped.vector_lanes = !base.vector_lanes;
  add(flipped);
  // Panels of the last range (kernel_opts::panel): half or twice as wide, none, or from none
  // a panel of 8 tiles.
  if (ranges >= 2) {
    const int up = base.upcast.back();
    std::vector<int> widths = base.panel > 0 ? std::vector<int>{base.panel / 2, base.panel * 2, 0} : std::vector<int>{8 * up};
    for (int w : widths) {
      codegen::kernel_opts p = base;
      p.panel = w;
      const std::int64_t bound = bounds.back();
      if (w != 0 && (w % up != 0 || w < 2 * up || (bound > 0 && w >= bound))) continue;
      add(p);
    }
  }
  return out;
}

}  // namespace tg::tune
