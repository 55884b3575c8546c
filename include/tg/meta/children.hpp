// children.hpp: an expression node's children as a Boost.Hana tuple, and emitting them
// into the lowering graph in order. The only place the DSL touches Hana directly.
#pragma once
#include <array>
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

}  // namespace tg::meta
