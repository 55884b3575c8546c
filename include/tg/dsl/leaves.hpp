// leaves.hpp: where expressions start: named inputs and constants.
#pragma once
#include <tg/dsl/expr.hpp>

namespace tg {

constexpr lowering::node_desc leaf_desc(lowering::kind k, dtype dt, const shape_t& s) {
  lowering::node_desc d;
  d.k = k;
  d.dt = dt;
  d.shape = s;
  return d;
}

// tg::input<float>("a", tg::dims<64, 32>): a named input buffer, bound when the plan runs.
template <class T, auto... Dims>
constexpr auto input(const char* name, dims_t<Dims...>) {
  static_assert(has_dtype<T>, "tg::input<T>: T must be one of bool, int8..int64, tg::half, tg::bfloat16, float, double");
  static_assert(sizeof...(Dims) <= max_rank, "tg::input: at most 8 dimensions");
  using node = expr<leaf_desc(lowering::kind::input, dtype_of<T>, dims_t<Dims...>::value)>;
  return tensor<node>{node{{}, {name, 0}}};
}

// A constant of a given dtype broadcast to a shape: tg::full<float>(0.5, tg::dims<4, 4>).
template <dtype DT, shape_t S>
constexpr auto constant(double value) {
  using node = expr<leaf_desc(lowering::kind::constant, DT, S)>;
  return tensor<node>{node{{}, {nullptr, value}}};
}
template <class T, auto... Dims>
constexpr auto full(double value, dims_t<Dims...>) {
  return constant<dtype_of<T>, dims_t<Dims...>::value>(value);
}

}  // namespace tg
