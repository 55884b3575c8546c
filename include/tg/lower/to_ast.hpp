// to_ast.hpp: one kernel's AST from the graph. A value is computed at an index vector (one
// index expression per dim of its shape): movement ops rewrite the index vector, a reduce
// opens new ranges for its reduced axes, and buffers are loaded at the row-major offset.
#pragma once
#include <vector>
#include <tg/ast/builder.hpp>
#include <tg/ast/plan.hpp>
#include <tg/ast/tensor_graph.hpp>

namespace tg::lowering {

struct index_vec {
  int v[max_rank]{};
  int rank = 0;
  constexpr bool operator==(const index_vec&) const = default;
};

class to_ast {
 public:
  ast::builder b;
  std::vector<int> slots;  // slot -> plan buffer id
  int global_ranges = 0;

  constexpr to_ast(const graph& g, const std::vector<int>& buffer_of, const std::vector<symbol>& vars)
      : g_(g), buffer_of_(buffer_of), vars_(vars) {}

  // Builds the kernel that computes node `root` into plan buffer `root_buffer`.
  constexpr void build(int root, int root_buffer) {
    root_ = root;
    const gnode& r = g_.nodes[std::size_t(root)];
    slots.push_back(root_buffer);
    index_vec idx;
    idx.rank = r.desc.shape.rank;
    for (int i = 0; i < idx.rank; ++i)  // size-1 dims need no loop
      idx.v[i] = r.desc.shape[i] == dim(1) ? b.index_const(0) : b.range(bound(r.desc.shape[i]));
    global_ranges = b.range_count();
    int val = value(root, idx, ast::none);
    b.store(0, linear_index(idx, r.desc.shape), val);
  }

 private:
  constexpr int bound(const dim& d) {
    if (!d.symbolic) return b.index_const(d.coef);
    for (std::size_t i = 0; i < vars_.size(); ++i)
      if (vars_[i] == d.sym) return b.imul(b.variable(int(i)), d.coef);
    throw "tg::lower: a symbolic dim names a variable missing from the plan";
  }
  constexpr int slot_of(int buffer) {
    for (std::size_t i = 0; i < slots.size(); ++i)
      if (slots[i] == buffer) return int(i);
    if (slots.size() == max_kernel_slots) throw "tg::lower: a kernel reads more than 16 buffers";
    slots.push_back(buffer);
    return int(slots.size()) - 1;
  }
  // Row-major offset of an index vector in a contiguous buffer of this shape.
  constexpr int linear_index(const index_vec& idx, const shape_t& s) {
    int offset = b.index_const(0), stride = b.index_const(1);
    for (int i = s.rank - 1; i >= 0; --i) {
      offset = b.iadd(offset, b.imul(idx.v[i], stride));
      stride = b.imul(stride, bound(s[i]));
    }
    return offset;
  }

  constexpr int value(int n, const index_vec& idx, int valid) {
    for (const memo_entry& m : memo_)
      if (m.node == n && m.valid == valid && m.idx == idx) return m.result;
    int result = compute(n, idx, valid);
    memo_.push_back({n, valid, idx, result});
    return result;
  }

  constexpr int compute(int n, const index_vec& idx, int valid) {
    const gnode& x = g_.nodes[std::size_t(n)];
    const node_desc& d = x.desc;
    if (buffer_of_[std::size_t(n)] >= 0 && (n != root_ || d.k == kind::input))
      return b.load(slot_of(buffer_of_[std::size_t(n)]), d.dt, linear_index(idx, d.shape), valid);
    switch (d.k) {
      case kind::input: throw "tg::lower: an input without a buffer";
      case kind::constant: return b.constant(d.dt, x.leaf.value);
      case kind::dim_value: return b.cast(d.dt, bound(d.size));
      case kind::cast: return b.cast(d.dt, value(x.src[0], idx, valid));
      case kind::unary: return b.unary(d.alu, value(x.src[0], idx, valid));
      case kind::binary: return b.binary(d.alu, value(x.src[0], idx, valid), value(x.src[1], idx, valid));
      case kind::where:
        return b.where(value(x.src[0], idx, valid), value(x.src[1], idx, valid), value(x.src[2], idx, valid));
      case kind::reduce: return reduce(x, idx, valid);
      case kind::reshape: return value(x.src[0], reshape_index(idx, d.shape, src_shape(x)), valid);
      case kind::permute: {
        index_vec s;
        s.rank = idx.rank;
        for (int i = 0; i < idx.rank; ++i) s.v[d.perm[i]] = idx.v[i];
        return value(x.src[0], s, valid);
      }
      case kind::expand: {
        index_vec s = idx;
        for (int i = 0; i < idx.rank; ++i)
          if (src_shape(x)[i] == dim(1)) s.v[i] = b.index_const(0);
        return value(x.src[0], s, valid);
      }
      case kind::shrink: {
        index_vec s = idx;
        for (int i = 0; i < idx.rank; ++i) s.v[i] = b.iadd(idx.v[i], b.index_const(d.offset[i]));
        return value(x.src[0], s, valid);
      }
      case kind::pad: return pad(x, idx, valid);
    }
    throw "tg::lower: unknown graph node kind";
  }

  constexpr const shape_t& src_shape(const gnode& x) const { return g_.nodes[std::size_t(x.src[0])].desc.shape; }

  // A reduce opens one range per reduced axis; the innermost loop is the last axis.
  constexpr int reduce(const gnode& x, const index_vec& idx, int valid) {
    const shape_t& in = src_shape(x);
    index_vec s = idx;
    int ranges[max_rank]{}, n_ranges = 0;
    for (int i = 0; i < in.rank; ++i) {
      if (!(x.desc.axes >> i & 1u)) continue;
      if (in[i] == dim(1)) {
        s.v[i] = b.index_const(0);
        continue;
      }
      s.v[i] = ranges[n_ranges++] = b.range(bound(in[i]));
    }
    int v = value(x.src[0], s, valid);
    for (int k = n_ranges - 1; k >= 0; --k) v = b.reduce(x.desc.alu, v, ranges[k]);
    return v;
  }

  // Zeros outside the source; loads inside are gated by the same condition so an index
  // outside the buffer is never read.
  constexpr int pad(const gnode& x, const index_vec& idx, int valid) {
    const shape_t &in = src_shape(x), &out = x.desc.shape;
    index_vec s = idx;
    int cond = ast::none;
    auto both = [&](int c) { cond = cond == ast::none ? c : b.binary(ast::op::bit_and, cond, c); };
    for (int i = 0; i < idx.rank; ++i) {
      std::int64_t before = x.desc.offset[i];
      if (in[i] == out[i]) continue;
      s.v[i] = b.binary(ast::op::sub, idx.v[i], b.index_const(before));
      if (before > 0) both(b.binary(ast::op::cmplt, b.index_const(before - 1), idx.v[i]));
      if (before + in[i].coef < out[i].coef) both(b.binary(ast::op::cmplt, idx.v[i], b.index_const(before + in[i].coef)));
    }
    if (cond == ast::none) return value(x.src[0], s, valid);
    int inner_valid = valid == ast::none ? cond : b.binary(ast::op::bit_and, valid, cond);
    int v = value(x.src[0], s, inner_valid);
    return b.where(cond, v, b.constant(x.desc.dt, 0));
  }

  static constexpr std::int64_t max_of(const dim_product& p) {
    std::int64_t m = p.coef;
    for (int i = 0; i < p.count; ++i) m *= p.syms[i].hi;
    return m;
  }

  // Reshape: match dims of the two shapes in groups with equal products (skipping 1s); a
  // group of one dim on each side passes its index through, others flatten and split.
  constexpr index_vec reshape_index(const index_vec& idx, const shape_t& out, const shape_t& src) {
    index_vec r;
    r.rank = src.rank;
    int i = 0, j = 0;
    while (true) {
      while (i < out.rank && out[i] == dim(1)) ++i;
      while (j < src.rank && src[j] == dim(1)) r.v[j++] = b.index_const(0);
      if (i == out.rank || j == src.rank) break;
      int i0 = i, j0 = j;
      dim_product po, ps;
      po.multiply(out[i++]);
      ps.multiply(src[j++]);
      while (!(po == ps)) {
        if (i < out.rank && (j == src.rank || max_of(po) < max_of(ps))) po.multiply(out[i++]);
        else if (j < src.rank) ps.multiply(src[j++]);
        else throw "tg::lower: reshape between shapes whose dims cannot be grouped";
      }
      if (i - i0 == 1 && j - j0 == 1) {
        r.v[j0] = idx.v[i0];
        continue;
      }
      int flat = b.index_const(0), stride = b.index_const(1);
      for (int k = i - 1; k >= i0; --k) {
        flat = b.iadd(flat, b.imul(idx.v[k], stride));
        stride = b.imul(stride, bound(out[k]));
      }
      stride = b.index_const(1);
      for (int k = j - 1; k >= j0; --k) {
        int v = k == j - 1 ? flat : b.binary(ast::op::idiv, flat, stride);
        r.v[k] = k == j0 ? v : b.binary(ast::op::mod, v, bound(src[k]));
        stride = b.imul(stride, bound(src[k]));
      }
    }
    while (j < src.rank) r.v[j++] = b.index_const(0);
    return r;
  }

  struct memo_entry {
    int node, valid;
    index_vec idx;
    int result;
  };
  const graph& g_;
  const std::vector<int>& buffer_of_;
  const std::vector<symbol>& vars_;
  std::vector<memo_entry> memo_;
  int root_ = -1;
};

}  // namespace tg::lowering
