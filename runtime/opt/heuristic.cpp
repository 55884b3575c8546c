// heuristic.cpp: default opts and launch-time loop measurements.
#include "runtime/opt/heuristic.hpp"

#include <tg/ast/eval.hpp>

#include "runtime/opt/access_strides.hpp"

namespace tg::opt {
namespace {

int largest_dividing(std::int64_t bound, std::initializer_list<int> factors) {
  for (int f : factors)
    if (bound > 0 && bound % f == 0 && bound >= f) return f;
  return 1;
}

}  // namespace

codegen::kernel_opts choose_opts(std::span<const ast::node> nodes, int global_ranges) {
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
  opts.upcast[std::size_t(last)] = largest_dividing(const_bound(nodes, last), {16, 8, 4});
  if (global_ranges >= 2 && opts.upcast[std::size_t(last)] > 1)
    opts.upcast[std::size_t(last - 1)] = largest_dividing(const_bound(nodes, last - 1), {4, 2});
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
