// gpu_candidates.cpp: BEAM's moves through GPU schedules (see gpu_candidates.hpp).
#include "runtime/tune/gpu_candidates.hpp"

#include <algorithm>

#include "runtime/opt/gpu_heuristic.hpp"
#include "runtime/tune/candidates.hpp"

namespace tg::tune {
namespace {

// The renderer's limit per range (codegen::check_gpu_opts), and the most outputs one thread holds:
// past 32 accumulators (and their operands) a tile spills out of the VGPRs it has at 8 waves per SIMD.
constexpr int max_upcast = 16, max_tile = 32;

}  // namespace

gpu_space gpu_space_of(std::span<const ast::node> nodes, int global_ranges, int wave_lanes, int max_reduce_unroll) {
  return {wave_lanes, max_reduce_unroll, opt::splits_nested(nodes), output_bounds(nodes, global_ranges)};
}

codegen::kernel_opts normalize_gpu(const codegen::kernel_opts& opts, int global_ranges) {
  codegen::kernel_opts n;
  n.upcast = opts.upcast;
  if (n.upcast.empty()) n.upcast.assign(std::size_t(std::max(global_ranges, 0)), 1);
  n.vector_lanes = false;
  n.group_lanes = std::max(opts.group_lanes, 1);
  n.reduce_unroll = std::max(opts.reduce_unroll, 1);
  n.nested_lanes = n.group_lanes > 1 ? std::clamp(opts.nested_lanes, 1, n.group_lanes) : 1;
  return n;
}

std::vector<codegen::kernel_opts> gpu_neighbours(const codegen::kernel_opts& from, const gpu_space& space) {
  const int ranges = int(space.bounds.size());
  const codegen::kernel_opts base = normalize_gpu(from, ranges);
  std::vector<codegen::kernel_opts> out;
  auto add = [&](const codegen::kernel_opts& c) {
    codegen::kernel_opts n = normalize_gpu(c, ranges);
    // Threads that share an output keep a register tile only over a nested split (below).
    if (n.group_lanes > 1 && !space.nested) n.upcast.assign(std::size_t(ranges), 1);
    if (n == base || std::find(out.begin(), out.end(), n) != out.end()) return;
    out.push_back(n);
  };
  // The threads per output, the reduce unroll and the nested lanes each doubled and halved
  // within their limits. A smaller group clamps its nested lanes (normalize_gpu); a larger one
  // keeps them (they divide it).
  auto scale = [&](int codegen::kernel_opts::*field, int most) {
    for (int v : {base.*field * 2, base.*field / 2}) {
      if (v < 1 || v > most) continue;
      codegen::kernel_opts c = base;
      c.*field = v;
      add(c);
    }
  };
  const int g = base.group_lanes;
  scale(&codegen::kernel_opts::group_lanes, space.wave_lanes);
  scale(&codegen::kernel_opts::reduce_unroll, space.max_reduce_unroll);
  if (space.nested && g > 1) scale(&codegen::kernel_opts::nested_lanes, g);
  // A register tile where each thread has outputs of its own, or where the group splits a nested
  // block loop (a full chunk's int8 matmul: each thread's blocks feed a tile of tokens).
  if (g == 1 || space.nested) {
    for (int r = ranges - 1; r >= 0 && r >= ranges - 2; --r) {
      const std::int64_t bound = space.bounds[std::size_t(r)];
      if (bound <= 1) continue;
      const int now = base.upcast[std::size_t(r)];
      codegen::kernel_opts up = base;
      up.upcast[std::size_t(r)] = now * 2;
      if (now * 2 <= max_upcast && bound % (now * 2) == 0 && tile_size(up.upcast) <= max_tile) add(up);
      if (now > 1) {
        codegen::kernel_opts down = base;
        down.upcast[std::size_t(r)] = now / 2;
        add(down);
      }
    }
  }
  return out;
}

codegen::kernel_opts gpu_default_opts(const opt::target_traits& target, const kernel_source& source) {
  kernel_source untuned = source;
  untuned.group_lanes = 0;
  return opt::choose_opts_for(target, untuned);
}

std::vector<codegen::kernel_opts> gpu_neighbours_for(const opt::gpu_traits& target, const codegen::kernel_opts& from,
                                                     const kernel_source& source) {
  return gpu_neighbours(from, gpu_space_of(source.nodes, source.global_ranges, target.wave_lanes, target.max_reduce_unroll));
}

}  // namespace tg::tune
