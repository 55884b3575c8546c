// gpu_candidates.hpp: the GPU schedules BEAM tries next from one it has timed (codegen::kernel_opts'
// GPU fields; gpu_heuristic.hpp picks the default): the threads per output halved or doubled
// (within a wave), the reduce unroll halved or doubled (within what the renderer takes), the
// nested lanes of a split block loop halved or doubled (where the kernel has one), and with one
// thread per output or such a nested split, the register tile: the upcast of the last one or two
// output ranges halved or doubled (a divisor of the range's constant bound, at most 16 per range
// and 32 in all).
#pragma once
#include <cstdint>
#include <span>
#include <vector>
#include <tg/ast/node.hpp>
#include <tg/device/backend.hpp>
#include "runtime/codegen/llvm_kernel.hpp"
#include "runtime/opt/target_opts.hpp"

namespace tg::tune {

// What bounds the moves on a target and a kernel.
struct gpu_space {
  int wave_lanes = 32;         // the most threads per output (opt::gpu_traits::wave_lanes)
  int max_reduce_unroll = 16;  // opt::gpu_traits::max_reduce_unroll
  bool nested = false;         // nested lanes change the kernel (opt::splits_nested)
  std::vector<std::int64_t> bounds;  // per output range, its constant bound or -1 (candidates.hpp)
};

gpu_space gpu_space_of(std::span<const ast::node> nodes, int global_ranges, int wave_lanes, int max_reduce_unroll);

// One form per schedule: an explicit upcast per output range (all 1 where none was given), nested
// lanes 1 without a split, and the CPU's settings (vector lanes, panels, ISA) cleared.
codegen::kernel_opts normalize_gpu(const codegen::kernel_opts& opts, int global_ranges);

// The neighbours of `from` (normalized, `from` itself excluded).
std::vector<codegen::kernel_opts> gpu_neighbours(const codegen::kernel_opts& from, const gpu_space& space);

// What a GPU runner's search starts from and moves through (every GPU runner's default_opts and
// neighbours): the target's default schedule for `source` with any schedule it carries dropped,
// and the neighbours within the target's waves and unroll limit.
codegen::kernel_opts gpu_default_opts(const opt::target_traits& target, const kernel_source& source);
std::vector<codegen::kernel_opts> gpu_neighbours_for(const opt::gpu_traits& target, const codegen::kernel_opts& from,
                                                     const kernel_source& source);

}  // namespace tg::tune
