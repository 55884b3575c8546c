// eval.hpp: the one evaluator of int64 index expressions in a kernel AST (loop bounds, element
// indexes), for the launch-time loop measurements, the heuristic's stride probes and tests.
#pragma once
#include <concepts>
#include <cstdint>
#include <span>
#include <tg/ast/node.hpp>
#include <tg/core/error.hpp>

namespace tg::ast {

// The value of node `id`: constants and integer arithmetic are computed here, every other node
// (a variable, a range, a load) is what `leaf(node)` says. Division and modulo by zero give 0
// rather than trap: the heuristic evaluates indexes at made-up values.
template <class Leaf>
  requires std::invocable<Leaf&, const node&>
constexpr std::int64_t eval_index(std::span<const node> nodes, int id, Leaf&& leaf) {
  const node& n = nodes[std::size_t(id)];
  switch (n.o) {
    case op::constant: return n.arg;
    case op::add: case op::sub: case op::mul: case op::idiv: case op::mod: case op::max: case op::min:
    case op::bit_and: case op::shl: case op::shr: {
      const std::int64_t a = eval_index(nodes, n.src[0], leaf), b = eval_index(nodes, n.src[1], leaf);
      switch (n.o) {
        case op::add: return a + b;
        case op::sub: return a - b;
        case op::mul: return a * b;
        case op::idiv: return b ? a / b : 0;
        case op::mod: return b ? a % b : 0;
        case op::max: return a > b ? a : b;
        case op::min: return a < b ? a : b;
        case op::bit_and: return a & b;
        case op::shl: return a << b;
        default: return a >> b;
      }
    }
    default: return std::int64_t(leaf(n));
  }
}

// With variable k at vars[k]: what a loop bound is at launch. A bound reads nothing else.
inline std::int64_t eval_index(std::span<const node> nodes, int id, std::span<const std::int64_t> vars) {
  return eval_index(nodes, id, [&](const node& n) -> std::int64_t {
    if (n.o == op::variable && n.arg >= 0 && std::size_t(n.arg) < vars.size()) return vars[std::size_t(n.arg)];
    if (n.o == op::variable)
      throw usage_error(str("eval_index: the kernel reads variable ", n.arg, " but ", vars.size(),
                            " values were given"));
    throw usage_error(str("eval_index: a loop bound uses ", name(n.o), ", which is not index arithmetic"));
  });
}

}  // namespace tg::ast
