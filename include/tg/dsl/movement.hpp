// movement.hpp: reshape, permute, expand, pad and shrink. They are views: lowering turns
// them into index arithmetic on the loads, never into copies.
#pragma once
#include <tg/dsl/leaves.hpp>

namespace tg {

constexpr lowering::node_desc view_desc(lowering::kind k, dtype dt, const shape_t& s) { return leaf_desc(k, dt, s); }

// --- reshape ---
template <shape_t To, class E>
constexpr auto reshape_to(const tensor<E>& x) {
  static_assert(To.numel() == E::desc.shape.numel(),
                "tg::reshape: the new shape must have as many elements as the old one");
  if constexpr (To == E::desc.shape) {
    return x;
  } else if constexpr (E::desc.k == lowering::kind::reshape) {  // reshape(reshape(y)) is reshape(y)
    using source = meta::child_type<0, decltype(x.e.children)>;
    return reshape_to<To>(tensor<source>{meta::child<0>(x.e.children)});
  } else {
    return make_node<view_desc(lowering::kind::reshape, E::desc.dt, To)>(x);
  }
}
template <class E, auto... Dims>
constexpr auto reshape(const tensor<E>& x, dims_t<Dims...>) {
  return reshape_to<dims_t<Dims...>::value>(x);
}

// --- permute: result axis i is source axis Order[i] ---
template <int... Order, class E>
constexpr auto permute(const tensor<E>& x) {
  constexpr auto order = meta::to_array(meta::ints<Order...>);
  static_assert(sizeof...(Order) == E::rank && is_permutation(order.data(), E::rank),
                "tg::permute<...>: give each axis of the tensor exactly once, e.g. permute<1, 0>() for a matrix");
  constexpr lowering::node_desc d = [&] {
    lowering::node_desc r = view_desc(lowering::kind::permute, E::desc.dt, {});
    r.shape.rank = E::rank;
    for (int i = 0; i < E::rank; ++i) {
      r.perm[i] = int(order[i]);
      r.shape[i] = E::desc.shape[order[i]];
    }
    return r;
  }();
  return make_node<d>(x);
}
template <class E>
constexpr auto transpose(const tensor<E>& x) {
  static_assert(E::rank == 2, "tg::transpose: the tensor must be a matrix; use permute<...>() otherwise");
  return permute<1, 0>(x);
}

// --- expand: dims of size 1 are repeated ---
template <shape_t To, class E>
constexpr auto expand_to(const tensor<E>& x) {
  static_assert(can_expand(E::desc.shape, To),
                "tg::expand: the ranks must match, and only dims of size 1 can grow");
  if constexpr (To == E::desc.shape) return x;
  else return make_node<view_desc(lowering::kind::expand, E::desc.dt, To)>(x);
}
template <class E, auto... Dims>
constexpr auto expand(const tensor<E>& x, dims_t<Dims...>) {
  return expand_to<dims_t<Dims...>::value>(x);
}

// Reshape to the target rank (1s in front), then expand: numpy broadcasting.
template <shape_t To, class E>
constexpr auto broadcast_to(const tensor<E>& x) {
  static_assert(E::rank <= To.rank && can_broadcast(E::desc.shape, To) && broadcast_shape(E::desc.shape, To) == To,
                "tg::broadcast_to: the shape does not broadcast to the target");
  return expand_to<To>(reshape_to<left_pad_ones(E::desc.shape, To.rank)>(x));
}

// --- pad with zeros: tg::pad(x, tg::before<0, 1>, tg::after<0, 2>) ---
template <class E, std::int64_t... B, std::int64_t... A>
constexpr auto pad(const tensor<E>& x, before_t<B...>, after_t<A...>) {
  constexpr auto b = meta::to_array(meta::ints<B...>), a = meta::to_array(meta::ints<A...>);
  static_assert(sizeof...(B) == E::rank && sizeof...(A) == E::rank,
                "tg::pad: give one 'before' and one 'after' count per axis");
  constexpr auto non_negative = [](std::int64_t v) { return v >= 0; };
  static_assert(meta::all_of(meta::ints<B..., A...>, non_negative), "tg::pad: pad counts must be >= 0");
  constexpr lowering::node_desc d = [&] {
    lowering::node_desc r = view_desc(lowering::kind::pad, E::desc.dt, E::desc.shape);
    for (int i = 0; i < E::rank; ++i) {
      r.offset[i] = b[i];
      if (b[i] + a[i] == 0) continue;
      if (E::desc.shape[i].symbolic) throw "tg::pad: a symbolic dim cannot be padded";
      r.shape[i] = dim(E::desc.shape[i].coef + b[i] + a[i]);
    }
    return r;
  }();
  return make_node<d>(x);
}

// --- shrink to [begin, end) per axis: tg::shrink(x, tg::begin<0, 1>, tg::end<4, 3>) ---
template <class E, std::int64_t... B, auto... End>
constexpr auto shrink(const tensor<E>& x, begin_t<B...>, end_t<End...>) {
  constexpr auto b = meta::to_array(meta::ints<B...>);
  constexpr shape_t e = end_t<End...>::value;
  static_assert(sizeof...(B) == E::rank && sizeof...(End) == E::rank,
                "tg::shrink: give one begin and one end per axis");
  constexpr auto valid = [&] {
    for (int i = 0; i < E::rank; ++i) {
      if (b[i] < 0 || (e[i].symbolic && b[i] != 0)) return false;
      if (!e[i].symbolic && (e[i].coef < b[i] || (!E::desc.shape[i].symbolic && e[i].coef > E::desc.shape[i].coef)))
        return false;
      if (e[i].symbolic && e[i].max_value() > E::desc.shape[i].max_value()) return false;
    }
    return true;
  }();
  static_assert(valid, "tg::shrink: need 0 <= begin <= end <= dim on each axis (a symbolic end needs begin 0)");
  constexpr lowering::node_desc d = [&] {
    lowering::node_desc r = view_desc(lowering::kind::shrink, E::desc.dt, e);
    for (int i = 0; i < E::rank; ++i) {
      r.offset[i] = b[i];
      if (!e[i].symbolic) r.shape[i] = dim(e[i].coef - b[i]);
    }
    return r;
  }();
  if constexpr (d.shape == E::desc.shape) return x;
  else return make_node<d>(x);
}

}  // namespace tg
