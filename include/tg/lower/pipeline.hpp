// pipeline.hpp: tg::lower, the whole compile-time lowering, one pass per line:
//   1. emit      the expression type becomes a graph (identical subtrees merged)
//   2. realize   choose the nodes that get a buffer: each one ends a kernel
//   3. buffers   inputs (by name), intermediates, the output
//   4. vars      collect the symbolic variables the shapes use
//   5. kernels   one AST per realized node, children first
//   6. compact   drop nodes the store does not reach, and pack into the plan
#pragma once
#include <vector>
#include <tg/ast/plan.hpp>
#include <tg/dsl/expr.hpp>
#include <tg/lower/realize.hpp>
#include <tg/lower/to_ast.hpp>

namespace tg {
namespace lowering {

// An upper bound on the AST nodes lowering can make: every tree node is lowered at most
// once per kernel, each into a few nodes per dim (index arithmetic) plus a few more.
template <class E>
constexpr std::size_t node_budget() {
  return E::tree_size * (E::reduce_count + 1) * (8 + 6 * max_rank) + 64;
}

constexpr void collect_vars(const graph& g, std::vector<symbol>& vars) {
  auto collect = [&](const dim& d) {
    if (!d.symbolic) return;
    bool known = false;
    for (const symbol& s : vars) {
      if (!(s == d.sym)) continue;
      if (s.lo != d.sym.lo || s.hi != d.sym.hi) throw "tg::lower: one symbolic variable name has two ranges";
      known = true;
    }
    if (!known) vars.push_back(d.sym);
  };
  for (const gnode& n : g.nodes) {
    for (int i = 0; i < n.desc.shape.rank; ++i) collect(n.desc.shape[i]);
    if (n.desc.k == kind::dim_value) collect(n.desc.size);  // a count used as a value need not be a dim too
  }
  if (vars.size() > std::size_t(max_plan_vars)) throw "tg::lower: more than 8 symbolic variables";
}

// Keeps only the nodes the store depends on, renumbering sources; with keep_ranges, every range
// too (a hand-built kernel may have an output range nothing reads, of bound 1, that still counts
// among its output ranges: runtime/opt/specialize.cpp).
constexpr std::vector<ast::node> compact(const std::vector<ast::node>& nodes, bool keep_ranges = false) {
  std::vector<unsigned char> live(nodes.size(), 0);
  for (std::size_t i = nodes.size(); i-- > 0;) {
    if (nodes[i].o == ast::op::store || (keep_ranges && nodes[i].o == ast::op::range)) live[i] = 1;
    if (!live[i]) continue;
    for (auto s : nodes[i].src)
      if (s >= 0) live[std::size_t(s)] = 1;
  }
  std::vector<int> new_id(nodes.size(), -1);
  std::vector<ast::node> out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!live[i]) continue;
    ast::node n = nodes[i];
    for (auto& s : n.src)
      if (s >= 0) s = std::int16_t(new_id[std::size_t(s)]);
    new_id[i] = int(out.size());
    out.push_back(n);
  }
  return out;
}

}  // namespace lowering

// Lowers an expression to its kernel plan at compile time:
//   constexpr auto plan = tg::lower(tg::relu(tg::matmul(a, b)));
template <class E>
constexpr auto lower(const tensor<E>& y) {
  plan<lowering::node_budget<E>(), E::reduce_count + 1, E::leaf_count + E::reduce_count + 1> p;
  lowering::graph g;                                              // 1. emit
  const int out = y.e.emit(g);
  const std::vector<unsigned char> realized = lowering::realize_pass(g, out).realized();  // 2. realize

  std::vector<int> buffer_of(g.nodes.size(), -1);              // 3. buffers
  auto add_buffer = [&](int n, buffer_role role) {
    const lowering::gnode& x = g.nodes[std::size_t(n)];
    p.buffers[std::size_t(p.n_buffers)] = {role, x.leaf.name, x.desc.dt, x.desc.shape};
    buffer_of[std::size_t(n)] = p.n_buffers++;
  };
  for (std::size_t n = 0; n < g.nodes.size(); ++n)
    if (g.nodes[n].desc.k == lowering::kind::input) add_buffer(int(n), buffer_role::input);
  for (std::size_t n = 0; n < g.nodes.size(); ++n)
    if (realized[n] && int(n) != out && g.nodes[n].desc.k != lowering::kind::input) add_buffer(int(n), buffer_role::intermediate);
  const int input_buffer = buffer_of[std::size_t(out)];  // y may be an input itself: then copy it
  add_buffer(out, buffer_role::output);
  p.output = buffer_of[std::size_t(out)];
  if (input_buffer >= 0) buffer_of[std::size_t(out)] = input_buffer;

  std::vector<symbol> vars;                                    // 4. vars
  lowering::collect_vars(g, vars);
  for (const symbol& s : vars) p.vars[std::size_t(p.n_vars++)] = s;

  for (std::size_t n = 0; n < g.nodes.size(); ++n) {           // 5. kernels
    if (!realized[n] || (g.nodes[n].desc.k == lowering::kind::input && int(n) != out)) continue;
    lowering::to_ast k(g, buffer_of, vars);
    k.build(int(n), int(n) == out ? p.output : buffer_of[n]);
    const std::vector<ast::node> nodes = lowering::compact(k.b.nodes);   // 6. compact
    if (std::size_t(p.node_count) + nodes.size() > p.nodes.size()) throw "tg::lower: node budget exceeded (a tg bug)";
    kernel_info& info = p.kernels[std::size_t(p.n_kernels++)];
    info.first = p.node_count;
    info.count = int(nodes.size());
    info.global_ranges = k.global_ranges;
    info.slot_count = int(k.slots.size());
    for (std::size_t s = 0; s < k.slots.size(); ++s) info.slot_buffer[s] = k.slots[s];
    for (const ast::node& x : nodes) p.nodes[std::size_t(p.node_count++)] = x;
  }
  return p;
}

}  // namespace tg
