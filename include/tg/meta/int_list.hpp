// int_list.hpp: compile-time lists of integers (a tensor's axes, per-axis pad counts) as
// Boost.Hana sequences, and the few algorithms the DSL asks of them. The DSL names
// meta::ints, meta::all_of, meta::fold and meta::to_array; only this file and children.hpp
// name Hana, so the DSL reads as plain C++ on top.
//
//   meta::all_of(meta::ints<0, -1>, [](auto a) { return a >= -2 && a < 2; })  // true
//   meta::to_array(meta::ints<1, 2>)                                          // std::array{1, 2}
#pragma once
#include <array>
#include <cstdint>
#include <boost/hana/all_of.hpp>
#include <boost/hana/fold_left.hpp>
#include <boost/hana/integral_constant.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>

namespace tg::meta {

// The list of V...: each element is an integral constant, so a lambda that takes one may use
// it in a constant expression; an empty list is fine everywhere (no {V..., 0} tricks).
template <std::int64_t... V>
inline constexpr auto ints = boost::hana::tuple_c<std::int64_t, V...>;

template <class List, class Pred>
constexpr bool all_of(const List& list, Pred pred) {
  return boost::hana::all_of(list, [&](auto v) { return bool(pred(std::int64_t(v))); });
}

// fold(list, init, f) = f(...f(f(init, v0), v1)..., vN-1).
template <class List, class T, class F>
constexpr T fold(const List& list, T init, F f) {
  return boost::hana::fold_left(list, init, [&](T acc, auto v) { return T(f(acc, std::int64_t(v))); });
}

template <class List>
constexpr auto to_array(const List& list) {
  return boost::hana::unpack(list, [](auto... v) { return std::array<std::int64_t, sizeof...(v)>{std::int64_t(v)...}; });
}

}  // namespace tg::meta
