// graph.hpp: the tensor-level graph an expression type emits before lowering: one node per
// distinct operation (identical subexpressions are merged), children before parents.
#pragma once
#include <string_view>
#include <vector>
#include <tg/ast/node.hpp>
#include <tg/core/shape.hpp>

namespace tg::lowering {

// dim_value: a leaf holding a dim's bound value (a symbolic count as a number, e.g. for a mean).
enum class kind : std::uint8_t { input, constant, unary, binary, where, cast, reduce, dim_value, reshape, permute, expand, pad, shrink };

constexpr bool is_movement(kind k) { return k >= kind::reshape; }

// What a node computes, apart from its children: everything here is a compile-time value
// and can be a template argument of the expression type.
struct node_desc {
  kind k = kind::input;
  ast::op alu = ast::op::add;  // unary/binary op, or reduce_sum/reduce_max
  dtype dt = dtype::float32;
  shape_t shape{};             // the node's result shape
  axis_mask axes = 0;          // reduce: the reduced axes (result keeps them as 1)
  int perm[max_rank]{};        // permute: result axis i is source axis perm[i]
  std::int64_t offset[max_rank]{};  // pad: zeros before; shrink: first element kept
  dim size{};                  // dim_value: the dim whose run-time value the leaf is

  constexpr bool operator==(const node_desc&) const = default;
};

// What a leaf holds at run time: an input's name or a constant's value.
struct leaf_payload {
  const char* name = nullptr;
  double value = 0;
};

struct gnode {
  node_desc desc;
  leaf_payload leaf;
  int src[3] = {-1, -1, -1};
};

constexpr bool same_name(const char* a, const char* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return std::string_view(a) == std::string_view(b);
}

class graph {
 public:
  std::vector<gnode> nodes;

  constexpr int add(const node_desc& d, const leaf_payload& leaf, const int* src, int n_src) {
    gnode n{d, leaf, {-1, -1, -1}};
    for (int i = 0; i < n_src; ++i) n.src[i] = src[i];
    if (d.k == kind::input) return add_input(n);
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (same(nodes[i], n)) return int(i);
    nodes.push_back(n);
    return int(nodes.size()) - 1;
  }

 private:
  static constexpr bool same(const gnode& a, const gnode& b) {
    return a.desc == b.desc && a.src[0] == b.src[0] && a.src[1] == b.src[1] && a.src[2] == b.src[2] &&
           same_name(a.leaf.name, b.leaf.name) && (a.leaf.value == b.leaf.value ||
           (a.leaf.value != a.leaf.value && b.leaf.value != b.leaf.value));
  }
  // Inputs are identified by name; one name with two shapes or dtypes is a user error.
  constexpr int add_input(const gnode& n) {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].desc.k != kind::input || !same_name(nodes[i].leaf.name, n.leaf.name)) continue;
      if (!(nodes[i].desc == n.desc)) throw "tg::lower: one input name is used with two shapes or dtypes";
      return int(i);
    }
    nodes.push_back(n);
    return int(nodes.size()) - 1;
  }
};

}  // namespace tg::lowering
