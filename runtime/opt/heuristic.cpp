// heuristic.cpp: default opts and launch-time loop measurements.
#include "runtime/opt/heuristic.hpp"

#include <tg/ast/eval.hpp>

namespace tg::opt {
namespace {

const ast::node* range_node(std::span<const ast::node> nodes, int number) {
  for (const ast::node& n : nodes)
    if (n.o == ast::op::range && n.arg == number) return &n;
  return nullptr;
}

std::int64_t const_bound(std::span<const ast::node> nodes, int range) {
  const ast::node* r = range_node(nodes, range);
  if (r == nullptr) return -1;
  const ast::node& b = nodes[std::size_t(r->src[0])];
  return b.o == ast::op::constant ? b.arg : -1;
}

int largest_dividing(std::int64_t bound, std::initializer_list<int> factors) {
  for (int f : factors)
    if (bound > 0 && bound % f == 0 && bound >= f) return f;
  return 1;
}

// An index with range `range` at `value`, the other ranges at 0 and variables at a typical
// value: enough to read off how far an index moves when one range steps by 1. A loaded value
// (a gather's index) counts as 0, so it moves nothing.
std::int64_t eval_at(std::span<const ast::node> nodes, int id, int range, std::int64_t value) {
  return ast::eval_index(nodes, id, [&](const ast::node& n) -> std::int64_t {
    if (n.o == ast::op::variable) return 61;  // any value > 1 that is not a tile size
    if (n.o == ast::op::range) return n.arg == range ? value : 0;
    return 0;
  });
}

// True when every load and store moves by 0 or 1 element as `range` steps (so lanes along
// it are one vector access), with at least one access moving by 1.
bool is_unit_stride(std::span<const ast::node> nodes, int range) {
  bool any_unit = false;
  for (const ast::node& n : nodes) {
    if (n.o != ast::op::load && n.o != ast::op::store) continue;
    std::int64_t stride = eval_at(nodes, n.src[0], range, 1) - eval_at(nodes, n.src[0], range, 0);
    if (stride != 0 && stride != 1) return false;
    any_unit = any_unit || stride == 1;
  }
  return any_unit;
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
