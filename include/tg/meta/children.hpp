// children.hpp: an expression node's children as a Boost.Hana tuple: emitting them into the
// lowering graph in order, and reaching one of them. With int_list.hpp, the only place the DSL
// touches Hana directly.
#pragma once
#include <array>
#include <cstddef>
#include <type_traits>
#include <boost/hana/at.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>

namespace tg::meta {

template <class... Children>
using children = boost::hana::tuple<Children...>;

// Emits each child (left to right, so node ids are deterministic) and returns their ids.
template <class Graph, class... Children>
constexpr std::array<int, sizeof...(Children)> emit_children(const children<Children...>& cs, Graph& g) {
  return boost::hana::unpack(cs, [&g](const auto&... child) {
    return std::array<int, sizeof...(Children)>{child.emit(g)...};
  });
}

// The I-th child, and its type.
template <std::size_t I, class... Children>
constexpr const auto& child(const children<Children...>& cs) {
  static_assert(I < sizeof...(Children), "meta::child: the node has fewer children");
  return boost::hana::at_c<I>(cs);
}
template <std::size_t I, class Children>
using child_type = std::remove_cvref_t<decltype(child<I>(std::declval<const Children&>()))>;

}  // namespace tg::meta
