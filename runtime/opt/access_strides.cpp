// access_strides.cpp: see access_strides.hpp.
#include "runtime/opt/access_strides.hpp"

#include <tg/ast/eval.hpp>

namespace tg::opt {
namespace {

// An index with range `number` at `value`, the other ranges at 0 and variables at a typical
// value: enough to read off how far an index moves when one range steps by 1. A loaded value
// (a gather's index) counts as 0, so it moves nothing.
std::int64_t eval_at(std::span<const ast::node> nodes, int id, int number, std::int64_t value) {
  return ast::eval_index(nodes, id, [&](const ast::node& n) -> std::int64_t {
    if (n.o == ast::op::variable) return 61;  // any value > 1 that is not a tile size
    if (n.o == ast::op::range) return n.arg == number ? value : 0;
    return 0;
  });
}

}  // namespace

const ast::node* range_node(std::span<const ast::node> nodes, int number) {
  for (const ast::node& n : nodes)
    if (n.o == ast::op::range && n.arg == number) return &n;
  return nullptr;
}

std::int64_t const_bound(std::span<const ast::node> nodes, int number) {
  const ast::node* r = range_node(nodes, number);
  if (r == nullptr) return -1;
  const ast::node& b = nodes[std::size_t(r->src[0])];
  return b.o == ast::op::constant ? b.arg : -1;
}

std::int64_t element_stride(std::span<const ast::node> nodes, const ast::node& n, int number) {
  return eval_at(nodes, n.src[0], number, 1) - eval_at(nodes, n.src[0], number, 0);
}

bool is_unit_stride(std::span<const ast::node> nodes, int number) {
  bool any_unit = false;
  for (const ast::node& n : nodes) {
    if (n.o != ast::op::load && n.o != ast::op::store) continue;
    std::int64_t stride = element_stride(nodes, n, number);
    if (stride != 0 && stride != 1) return false;
    any_unit = any_unit || stride == 1;
  }
  return any_unit;
}

}  // namespace tg::opt
