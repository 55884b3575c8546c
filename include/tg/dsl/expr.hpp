// expr.hpp: the expression type. Its template arguments record the whole tree: what each
// node computes (a lowering::node_desc value, shape included) and its children's types. The
// object itself only carries leaf payloads (input names, constant values).
#pragma once
#include <cstddef>
#include <tg/ast/tensor_graph.hpp>
#include <tg/meta/children.hpp>
#include <tg/dsl/axes.hpp>

namespace tg {

template <lowering::node_desc Desc, class... Children>
struct expr {
  static constexpr lowering::node_desc desc = Desc;
  static constexpr shape_t shape = Desc.shape;
  static constexpr dtype dt = Desc.dt;
  static constexpr int rank = Desc.shape.rank;
  static constexpr std::size_t tree_size = 1 + (Children::tree_size + ... + 0);
  static constexpr std::size_t reduce_count = (Desc.k == lowering::kind::reduce) + (Children::reduce_count + ... + 0);
  static constexpr std::size_t leaf_count = (sizeof...(Children) == 0) + (Children::leaf_count + ... + 0);

  meta::children<Children...> children{};
  lowering::leaf_payload leaf{};

  constexpr int emit(lowering::graph& g) const {
    auto ids = meta::emit_children(children, g);
    return g.add(desc, leaf, ids.data(), int(ids.size()));
  }
};

// A tensor expression: what users hold. Shape and dtype are compile-time constants.
template <class E>
struct tensor {
  using expr_type = E;
  static constexpr shape_t shape = E::desc.shape;
  static constexpr dtype dt = E::desc.dt;
  static constexpr int rank = shape.rank;
  E e;

  // Members that read well chained; each forwards to the free function of the same name.
  template <class Axes = axes_t<>, class Keep = drop_dims_t>
  constexpr auto sum(Axes axes = {}, Keep keep = {}) const;
  template <class Axes = axes_t<>, class Keep = drop_dims_t>
  constexpr auto max(Axes axes = {}, Keep keep = {}) const;
  template <class Shape> constexpr auto reshape(Shape s) const;
  template <class Shape> constexpr auto expand(Shape s) const;
  template <int... Order> constexpr auto permute() const;
  template <class Before, class After> constexpr auto pad(Before b, After a) const;
  template <class Begin, class End> constexpr auto shrink(Begin b, End e) const;
  template <class T> constexpr auto cast() const;
};

template <class T> inline constexpr bool is_tensor_v = false;
template <class E> inline constexpr bool is_tensor_v<tensor<E>> = true;

template <class T>
concept tensor_expr = is_tensor_v<T>;

// Builds a node of a given description over child tensors.
template <lowering::node_desc Desc, class... Children>
constexpr tensor<expr<Desc, Children...>> make_node(const tensor<Children>&... children) {
  return {expr<Desc, Children...>{meta::children<Children...>{children.e...}, {}}};
}

}  // namespace tg
