// heuristic.cpp: default opts and launch-time loop measurements.
#include "runtime/opt/heuristic.hpp"

#include <tg/ast/eval.hpp>

#include <algorithm>

#include "runtime/opt/access_strides.hpp"

namespace tg::opt {
namespace {

int largest_dividing(std::int64_t bound, std::initializer_list<int> factors) {
  for (int f : factors)
    if (bound > 0 && bound % f == 0 && bound >= f) return f;
  return 1;
}

// The bytes of the operand a panel keeps in cache (kernel_opts::panel): a matmul's B columns,
// panel x reduce length x element size. About a core's L2: on Zen 5 (1 MiB L2, 2048 x 2048
// f32) panels of 64 to 256 columns ran within 3% of each other, 1024 columns 6% slower and no
// panels 40% slower; without them every row tile streams all of B from L3 or memory.
constexpr std::int64_t panel_bytes = 1 << 20;

// The product of the reduce ranges' bounds, or -1 when one is symbolic.
std::int64_t reduce_length(std::span<const ast::node> nodes, int global_ranges) {
  std::int64_t length = 1;
  for (const ast::node& n : nodes) {
    if (n.o != ast::op::range || n.arg < global_ranges) continue;
    const ast::node& bound = nodes[std::size_t(n.src[0])];
    if (bound.o != ast::op::constant) return -1;
    length *= bound.arg;
  }
  return length;
}

int widest_load_bytes(std::span<const ast::node> nodes) {
  int bytes = 1;
  for (const ast::node& n : nodes)
    if (n.o == ast::op::load) bytes = std::max(bytes, size_bytes(n.dt));
  return bytes;
}

}  // namespace

codegen::kernel_opts choose_opts(std::span<const ast::node> nodes, int global_ranges, int vector_bits) {
  bool reduces = false;
  for (const ast::node& n : nodes) reduces = reduces || ast::is_reduce(n.o);
  codegen::kernel_opts opts;
  if (!reduces || global_ranges == 0) return opts;
  // A register tile over the last two output dims when the last one is contiguous in
  // memory: each loaded element feeds several accumulators (matmul: per reduce step, a
  // vector of b's row and a few of a's elements). When it is not contiguous (a matvec
  // over rows), leave the loops alone: LLVM vectorizes the reduce itself.
  int last = global_ranges - 1;
  if (!is_unit_stride(nodes, last)) return opts;
  opts.upcast.assign(std::size_t(global_ranges), 1);
  // 32 values of the last range (two 512-bit or four 256-bit f32 vectors) by 8 rows with 32
  // vector registers (AVX-512), 4 rows with 16 (AVX2): accumulators for most of the register
  // file, leaving room for the B vectors and the broadcast A values of a reduce step. Measured
  // on Zen 5 at 1024 and 2048 (f32, no panels): 8 x 32 ran over 2x faster than 4 x 16, and
  // 16 x 32 and 8 x 64 slower than 8 x 32; at the AVX2 level 4 x 32 was best.
  const int rows = vector_bits >= 512 ? 8 : 4;
  opts.upcast[std::size_t(last)] = largest_dividing(const_bound(nodes, last), {32, 16, 8, 4});
  if (global_ranges >= 2 && opts.upcast[std::size_t(last)] > 1) {
    opts.upcast[std::size_t(last - 1)] = rows == 8 ? largest_dividing(const_bound(nodes, last - 1), {8, 4, 2})
                                                   : largest_dividing(const_bound(nodes, last - 1), {4, 2});
    // Panels of the last range, when the rows' tiles would otherwise stream more than a panel's
    // bytes each (kernel_opts::panel).
    const std::int64_t reduce = reduce_length(nodes, global_ranges), bound = const_bound(nodes, last);
    const int up = opts.upcast[std::size_t(last)];
    const std::int64_t column_bytes = reduce * widest_load_bytes(nodes);
    if (reduce > 0 && bound > 0 && bound * column_bytes > panel_bytes) {
      std::int64_t panel = up;
      while (panel * 2 * column_bytes <= panel_bytes) panel *= 2;
      if (panel < bound) opts.panel = int(panel);
    }
  }
  return opts;
}

launch_shape measure(std::span<const ast::node> nodes, int global_ranges, const codegen::kernel_opts& opts,
                     std::span<const std::int64_t> vars) {
  launch_shape s;
  for (const ast::node& n : nodes) {
    if (n.o != ast::op::range) continue;
    std::int64_t bound = ast::eval_index(nodes, n.src[0], vars);
    s.total_work *= bound;
    if (n.arg == 0 && global_ranges > 0) {
      int up = opts.upcast.empty() ? 1 : opts.upcast[0];
      s.outer_trips = bound / up;
    }
  }
  return s;
}

}  // namespace tg::opt
