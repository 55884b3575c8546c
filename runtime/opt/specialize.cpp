// specialize.cpp: rebuild the AST through ast::builder, so every fold applies again.
#include "runtime/opt/specialize.hpp"

#include <tg/ast/builder.hpp>
#include <tg/core/error.hpp>
#include <tg/lower/pipeline.hpp>

namespace tg::opt {

bool has_variables(std::span<const ast::node> nodes) {
  for (const ast::node& n : nodes)
    if (n.o == ast::op::variable) return true;
  return false;
}

std::vector<ast::node> specialize(std::span<const ast::node> nodes, std::span<const std::int64_t> vars) {
  ast::builder b;
  std::vector<int> id(nodes.size(), ast::none);
  auto src = [&](const ast::node& n, int i) { return n.src[i] == ast::none ? ast::none : id[std::size_t(n.src[i])]; };
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const ast::node& n = nodes[i];
    switch (n.o) {
      case ast::op::constant: id[i] = is_float(n.dt) ? b.constant(n.dt, n.value) : b.constant_int(n.dt, n.arg); break;
      case ast::op::variable:
        if (n.arg < 0 || std::size_t(n.arg) >= vars.size())
          throw usage_error(str("specialize: the kernel reads variable ", n.arg, " but ", vars.size(), " values were given"));
        id[i] = b.index_const(vars[std::size_t(n.arg)]);
        break;
      case ast::op::range: id[i] = b.range(src(n, 0)); break;
      case ast::op::load: id[i] = b.load(int(n.arg), n.dt, src(n, 0), src(n, 1)); break;
      case ast::op::store: id[i] = b.store(int(n.arg), src(n, 0), src(n, 1)); break;
      case ast::op::prefetch: id[i] = b.prefetch(int(n.arg), src(n, 0), src(n, 1)); break;
      case ast::op::reduce_sum: case ast::op::reduce_max: id[i] = b.reduce(n.o, src(n, 0), src(n, 1), n.arg); break;
      case ast::op::cast: id[i] = b.cast(n.dt, src(n, 0)); break;
      case ast::op::bitcast: id[i] = b.bitcast(n.dt, src(n, 0)); break;
      case ast::op::where: id[i] = b.where(src(n, 0), src(n, 1), src(n, 2)); break;
      case ast::op::mul_add: id[i] = b.mul_add(src(n, 0), src(n, 1), src(n, 2)); break;
      default:
        if (ast::is_unary(n.o)) id[i] = b.unary(n.o, src(n, 0));
        else if (ast::is_binary(n.o)) id[i] = b.binary(n.o, src(n, 0), src(n, 1));
        else TG_UNREACHABLE("specialize: unknown op");
    }
  }
  // Ranges stay, read or not: a kernel's output ranges are its first ones (ast::kernel::global_ranges),
  // and one nothing reads still has its place among them (found missing by the fused decode
  // projections, whose matmuls have an unread output range of bound 1).
  return lowering::compact(b.nodes, true);
}

}  // namespace tg::opt
