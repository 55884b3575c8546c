// reduce.hpp: sum and max over any axes, with or without keepdim.
#pragma once
#include <tg/dsl/elementwise.hpp>

namespace tg {

// Sums of bools and small integers are counted in int32, so they do not overflow.
constexpr dtype sum_dtype(dtype t) {
  switch (t) {
    case dtype::bool_: case dtype::int8: case dtype::uint8: case dtype::int16: case dtype::uint16: return dtype::int32;
    default: return t;
  }
}

template <ast::op O, class Keep, class E, int... Axes>
constexpr auto reduce(const tensor<E>& x, axes_t<Axes...>) {
  static_assert(axes_valid<E::rank, Axes...>(),
                "tg::sum/max: an axis is out of range for this tensor (axes count from 0, or from -1 at the end)");
  constexpr axis_mask mask = axes_mask<E::rank, Axes...>();
  constexpr dtype dt = O == ast::op::reduce_sum ? sum_dtype(E::dt) : E::dt;
  constexpr lowering::node_desc d = [] {
    lowering::node_desc r = alu_desc(lowering::kind::reduce, O, dt, reduce_keepdim_shape(E::shape, mask));
    r.axes = mask;
    return r;
  }();
  auto kept = make_node<d>(cast_to<dt>(x));
  if constexpr (std::is_same_v<Keep, keepdim_t>) return kept;
  else return reshape_to<drop_axes(E::shape, mask)>(kept);
}

// tg::sum(x, tg::axis<1>), tg::sum(x, tg::axis<0, 2>, tg::keepdim), tg::sum(x) for all axes.
template <class E, class Axes = axes_t<>, class Keep = drop_dims_t>
constexpr auto sum(const tensor<E>& x, Axes axes = {}, Keep = {}) { return reduce<ast::op::reduce_sum, Keep>(x, axes); }
template <class E, class Axes = axes_t<>, class Keep = drop_dims_t>
constexpr auto max(const tensor<E>& x, Axes axes = {}, Keep = {}) { return reduce<ast::op::reduce_max, Keep>(x, axes); }

}  // namespace tg
