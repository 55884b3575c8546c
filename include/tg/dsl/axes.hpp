// axes.hpp: compile-time arguments of the DSL: shapes (tg::dims<64, n>), axes
// (tg::axis<1>, tg::axis<0, 2>), keepdim, and per-axis integer lists for pad and shrink.
#pragma once
#include <tg/core/shape.hpp>
#include <tg/meta/int_list.hpp>

namespace tg {

// tg::dims<64, 32> or tg::dims<tg::sym<"n", 1, 64>, 16>: a shape known at compile time.
template <auto... Dims>
struct dims_t {
  static_assert(sizeof...(Dims) <= max_rank, "tg::dims: at most 8 dimensions");
  static_assert(((dim(Dims).min_value() >= 1) && ... && true), "tg::dims: every dim must be >= 1");
  static constexpr shape_t value{dim(Dims)...};
};
template <auto... Dims>
inline constexpr dims_t<Dims...> dims{};

// tg::axis<1>, tg::axis<-1>, tg::axis<0, 2>; no axes means all axes.
template <int... Axes>
struct axes_t {};
template <int... Axes>
inline constexpr axes_t<Axes...> axis{};

struct keepdim_t {};
struct drop_dims_t {};
inline constexpr keepdim_t keepdim{};

// Per-axis lists: tg::before<0, 1>, tg::after<0, 2> for pad; tg::begin<0, 1>, tg::end<4, n> for shrink.
template <std::int64_t... V> struct before_t {};
template <std::int64_t... V> struct after_t {};
template <std::int64_t... V> struct begin_t {};
template <auto... V> struct end_t { static constexpr shape_t value{dim(V)...}; };
template <std::int64_t... V> inline constexpr before_t<V...> before{};
template <std::int64_t... V> inline constexpr after_t<V...> after{};
template <std::int64_t... V> inline constexpr begin_t<V...> begin{};
template <auto... V> inline constexpr end_t<V...> end{};

// Axis lists -> bit masks, with negative axes counted from the end; no axes means all of them.
template <int Rank, int... Axes>
constexpr bool axes_valid() {
  return meta::all_of(meta::ints<Axes...>, [](std::int64_t a) { return a >= -Rank && a < Rank; });
}
template <int Rank, int... Axes>
constexpr axis_mask axes_mask() {
  if constexpr (sizeof...(Axes) == 0) return Rank >= 32 ? ~axis_mask(0) : (axis_mask(1) << Rank) - 1;
  else return meta::fold(meta::ints<Axes...>, axis_mask(0), [](axis_mask m, std::int64_t a) {
    return m | axis_mask(1) << (a < 0 ? a + Rank : a);
  });
}

}  // namespace tg
