// builder.hpp: appends AST nodes with hash-consing (an identical node is made once) and
// local simplification (constant folding, x+0, x*1, ...). Works at compile time and at run
// time; tg::lower and the hand-written kernel builder both build through it.
#pragma once
#include <cstdint>
#include <vector>
#include <tg/ast/hash.hpp>
#include <tg/ast/node.hpp>

namespace tg::ast {

class builder {
 public:
  std::vector<node> nodes;

  constexpr int constant(dtype dt, double v) {
    node n{op::constant, dt};
    if (is_float(dt)) n.value = v;
    else n.arg = dt == dtype::bool_ ? (v != 0) : std::int64_t(v);
    n.value = is_float(dt) ? v : double(n.arg);
    return add(n);
  }
  constexpr int constant_int(dtype dt, std::int64_t v) {
    node n{op::constant, dt};
    n.arg = dt == dtype::bool_ ? (v != 0) : v;
    n.value = double(n.arg);
    return add(n);
  }
  constexpr int index_const(std::int64_t v) { return constant_int(dtype::int64, v); }
  constexpr int variable(int var_index) { return add(node{op::variable, dtype::int64, {none, none, none}, var_index}); }
  // A new loop index 0..bound-1; ranges are numbered in creation order and never merged.
  constexpr int range(int bound) {
    node n{op::range, dtype::int64, {s16(bound), none, none}, range_count_++};
    return append(n);
  }
  constexpr int range_count() const { return range_count_; }

  constexpr int load(int slot, dtype dt, int index, int valid = none) {
    if (valid != none && is_const(valid)) {
      if (nodes[valid].arg != 0) valid = none;
      else return constant(dt, 0);
    }
    return add(node{op::load, dt, {s16(index), s16(valid), none}, slot});
  }
  constexpr int store(int slot, int index, int value) {
    return append(node{op::store, nodes[value].dt, {s16(index), s16(value), none}, slot});
  }
  // value, after a prefetch of byte `byte_index` of buffer `slot` (node.hpp)
  constexpr int prefetch(int slot, int byte_index, int value) {
    return add(node{op::prefetch, nodes[value].dt, {s16(byte_index), s16(value), none}, slot});
  }
  // hint: reduce_in_loop, reduce_as_lanes or reduce_long_walk (node.hpp)
  constexpr int reduce(op o, int value, int over_range, std::int64_t hint = 0) {
    return append(node{o, nodes[value].dt, {s16(value), s16(over_range), none}, hint});
  }

  constexpr int cast(dtype dt, int a) {
    if (nodes[a].dt == dt) return a;
    if (is_const(a)) return constant(dt, is_float(nodes[a].dt) ? nodes[a].value : double(nodes[a].arg));
    return add(node{op::cast, dt, {s16(a), none, none}, 0});
  }
  constexpr int bitcast(dtype dt, int a) { return add(node{op::bitcast, dt, {s16(a), none, none}, 0}); }

  constexpr int unary(op o, int a) {
    const node& x = nodes[a];
    if (o == op::neg && is_const(a)) return is_float(x.dt) ? constant(x.dt, -x.value) : constant_int(x.dt, -x.arg);
    return add(node{o, x.dt, {s16(a), none, none}, 0});
  }

  constexpr int binary(op o, int a, int b) {
    dtype dt = is_compare(o) ? dtype::bool_ : nodes[a].dt;
    if (is_commutative(o) && is_const(a) && !is_const(b)) std::swap(a, b);
    if (int folded = fold_binary(o, a, b); folded != none) return folded;
    return add(node{o, dt, {s16(a), s16(b), none}, 0});
  }
  constexpr int where(int c, int a, int b) {
    if (is_const(c)) return nodes[c].arg ? a : b;
    if (a == b) return a;
    return add(node{op::where, nodes[a].dt, {s16(c), s16(a), s16(b)}, 0});
  }
  constexpr int mul_add(int a, int b, int c) {
    return add(node{op::mul_add, nodes[a].dt, {s16(a), s16(b), s16(c)}, 0});
  }

  // Index arithmetic helpers (int64).
  constexpr int iadd(int a, int b) { return binary(op::add, a, b); }
  constexpr int imul(int a, int b) { return binary(op::mul, a, b); }
  constexpr int imul(int a, std::int64_t c) { return binary(op::mul, a, index_const(c)); }
  constexpr int iand(int a, int b) { return binary(op::bit_and, a, b); }

  constexpr bool is_const(int i) const { return nodes[i].o == op::constant; }
  constexpr bool is_const(int i, std::int64_t v) const {
    return is_const(i) && !is_float(nodes[i].dt) && nodes[i].arg == v;
  }

 private:
  static constexpr bool is_commutative(op o) {
    return o == op::add || o == op::mul || o == op::max || o == op::min || o == op::cmpeq ||
           o == op::cmpne || o == op::bit_and || o == op::bit_or || o == op::bit_xor;
  }
  static constexpr std::int16_t s16(int i) { return std::int16_t(i); }

  // Folds integer constants and removes identities; floats fold only where exact.
  constexpr int fold_binary(op o, int a, int b) {
    const node &x = nodes[a], &y = nodes[b];
    bool ints = !is_float(x.dt);
    if (ints && is_const(a) && is_const(b)) {
      std::int64_t p = x.arg, q = y.arg;
      switch (o) {
        case op::add: return constant_int(x.dt, p + q);
        case op::sub: return constant_int(x.dt, p - q);
        case op::mul: return constant_int(x.dt, p * q);
        case op::idiv: if (q != 0) return constant_int(x.dt, p / q); break;
        case op::mod: if (q != 0) return constant_int(x.dt, p % q); break;
        case op::max: return constant_int(x.dt, p > q ? p : q);
        case op::min: return constant_int(x.dt, p < q ? p : q);
        case op::cmplt: return constant_int(dtype::bool_, p < q);
        case op::cmpeq: return constant_int(dtype::bool_, p == q);
        case op::cmpne: return constant_int(dtype::bool_, p != q);
        case op::bit_and: return constant_int(x.dt, p & q);
        case op::bit_or: return constant_int(x.dt, p | q);
        default: break;
      }
    }
    if (ints) {
      if ((o == op::add || o == op::sub || o == op::bit_or || o == op::shl || o == op::shr) && is_const(b, 0)) return a;
      if ((o == op::mul || o == op::idiv) && is_const(b, 1)) return a;
      if (o == op::mul && is_const(b, 0)) return b;
      if (o == op::mod && is_const(b, 1)) return constant_int(x.dt, 0);
      if (o == op::bit_and && x.dt == dtype::bool_ && is_const(b)) return y.arg ? a : b;
      if (o == op::bit_or && x.dt == dtype::bool_ && is_const(b)) return y.arg ? b : a;
    } else {
      if (o == op::mul && is_const(b) && y.value == 1.0) return a;  // exact for every x, NaN and -0 too
    }
    return none;
  }

  constexpr int append(const node& n) {
    nodes.push_back(n);
    return int(nodes.size()) - 1;
  }

  // Hash-consing: open addressing over node indices, rebuilt when half full.
  constexpr int add(const node& n) {
    if (table_.size() < 2 * (nodes.size() + 1)) rehash(4 * (nodes.size() + 16));
    std::size_t mask = table_.size() - 1, h = std::size_t(ast::hash(n)) & mask;
    while (table_[h] != none) {
      if (nodes[table_[h]] == n) return table_[h];
      h = (h + 1) & mask;
    }
    table_[h] = int(nodes.size());
    return append(n);
  }
  constexpr void rehash(std::size_t want) {
    std::size_t size = 1;
    while (size < want) size <<= 1;
    table_.assign(size, none);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const node& n = nodes[i];
      if (n.o == op::range || n.o == op::store || is_reduce(n.o)) continue;  // never shared
      std::size_t h = std::size_t(ast::hash(n)) & (size - 1);
      while (table_[h] != none) h = (h + 1) & (size - 1);
      table_[h] = int(i);
    }
  }

  std::vector<int> table_;
  int range_count_ = 0;
};

}  // namespace tg::ast
