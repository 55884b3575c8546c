// leaves.hpp: where expressions start: named inputs, run-time scalars, constants, and dims as values.
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

// tg::scalar_input<float>("eps"): one value given when the plan runs (a one-element input,
// shape ()), that broadcasts against any tensor: a run-time number where a literal would be
// compiled into the kernel (an epsilon read from a model file, say).
template <class T>
constexpr auto scalar_input(const char* name) {
  return input<T>(name, dims_t<>{});
}

// tg::dim_value<float, n>(): the value a dim takes at run time (for a symbolic dim, its bound
// variable times its coefficient), as a scalar of type T (shape ()).
template <dtype DT, dim D>
constexpr auto dim_value_as() {
  constexpr lowering::node_desc d = [] {
    lowering::node_desc r = leaf_desc(lowering::kind::dim_value, DT, shape_t{});
    r.size = D;
    return r;
  }();
  return tensor<expr<d>>{};
}
template <class T, auto D>
constexpr auto dim_value() {
  static_assert(has_dtype<T>, "tg::dim_value<T, D>: T must be a tensor element type");
  return dim_value_as<dtype_of<T>, dim(D)>();
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
