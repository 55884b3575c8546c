// node.hpp: the kernel AST: a flat list of nodes in topological order, each an op with a
// dtype, up to three sources (earlier nodes) and an argument. Both tg::lower and the
// hand-written kernel builder produce it; the runtime's codegen consumes it.
#pragma once
#include <cstdint>
#include <string_view>
#include <tg/core/dtype.hpp>

namespace tg::ast {

enum class op : std::uint8_t {
  // leaves
  constant,  // arg: integer value (for integer/bool dtypes), value: float value
  variable,  // arg: index into the schedule's symbolic variables; dtype int64
  range,     // arg: range number (0.. in the kernel); src0: bound (int64); runs 0..bound-1
  // memory
  load,   // arg: buffer slot; src0: element index (int64); src1: valid (bool) or none
  store,  // arg: buffer slot; src0: element index (int64); src1: value
  // A hint with a value: asks for the cache line at byte src0 of buffer `arg` to be fetched
  // ahead of its use, then yields src1 unchanged. The byte may lie past the buffer (a
  // prefetch never faults), and a backend without prefetches just yields src1. It carries a
  // value so that it is emitted where that value is, inside the loop whose stream it leads.
  prefetch,
  // unary
  neg, exp2, log2, sqrt, reciprocal, sin, cast, bitcast,
  // binary
  add, sub, mul, div, idiv, mod, max, min, cmplt, cmpeq, cmpne, bit_and, bit_or, bit_xor, shl, shr,
  // ternary
  where,  // src0 ? src1 : src2
  mul_add,  // src0 * src1 + src2
  // reductions: src0: value, src1: the range reduced over (one range per node); arg: a
  // codegen hint (reduce_in_loop or reduce_as_lanes below), never a change of meaning
  reduce_sum, reduce_max,
};

// Reduce hints. reduce_as_lanes asks the backend to evaluate a short constant range as the
// lanes of one vector with a horizontal reduce at the end, instead of a loop: reduces
// nested inside then carry vector accumulators, so a quantized dot product sums each
// block's products lane-wise and pays for one horizontal sum per output, not per block.
// reduce_long_walk marks a reduce over a symbolic range the kernel is meant for only once that
// range runs long (attention's walk over a context past a thousand positions): a GPU's heuristic
// may then split it over more threads (runtime/opt/gpu_heuristic.cpp: split_tiled_walk).
inline constexpr std::int64_t reduce_in_loop = 0;
inline constexpr std::int64_t reduce_as_lanes = 1;
inline constexpr std::int64_t reduce_long_walk = 2;

inline constexpr int op_count = int(op::reduce_max) + 1;
inline constexpr std::string_view op_names[] = {
    "const", "var", "range", "load", "store", "prefetch", "neg", "exp2", "log2", "sqrt", "recip", "sin",
    "cast", "bitcast", "add", "sub", "mul", "div", "idiv", "mod", "max", "min", "cmplt", "cmpeq",
    "cmpne", "and", "or", "xor", "shl", "shr", "where", "mul_add", "reduce_sum", "reduce_max"};
static_assert(std::size(op_names) == op_count, "op_names must name every ast::op");

constexpr std::string_view name(op o) { return op_names[int(o)]; }

constexpr bool is_unary(op o) { return o >= op::neg && o <= op::bitcast; }
constexpr bool is_binary(op o) { return o >= op::add && o <= op::shr; }
constexpr bool is_ternary(op o) { return o == op::where || o == op::mul_add; }
constexpr bool is_reduce(op o) { return o == op::reduce_sum || o == op::reduce_max; }
constexpr bool is_compare(op o) { return o == op::cmplt || o == op::cmpeq || o == op::cmpne; }
constexpr int source_count(op o) {
  if (o == op::constant || o == op::variable) return 0;
  if (o == op::range || is_unary(o)) return 1;
  if (o == op::load) return 2;  // src1 may be none
  if (o == op::store || o == op::prefetch || is_binary(o) || is_reduce(o)) return 2;
  return 3;
}

inline constexpr std::int16_t none = -1;

struct node {
  op o = op::constant;
  dtype dt = dtype::float32;
  std::int16_t src[3] = {none, none, none};
  std::int64_t arg = 0;
  double value = 0;

  constexpr bool operator==(const node&) const = default;
};

}  // namespace tg::ast
