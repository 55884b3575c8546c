// composites.hpp: matmul, softmax, mean and rmsnorm, written with the primitive ops.
#pragma once
#include <tg/dsl/reduce.hpp>

namespace tg {

// The product of a's last two dims (M, K) with b's (K, N); leading dims broadcast.
template <class A, class B>
constexpr auto matmul(const tensor<A>& a, const tensor<B>& b) {
  static_assert(A::rank >= 1 && B::rank >= 2 && A::rank < max_rank && B::rank < max_rank,
                "tg::matmul(a, b): a needs 1 to 7 dims and b 2 to 7 (matmul adds a dim internally)");
  static_assert(A::shape[A::rank - 1] == B::shape[B::rank - 2],
                "tg::matmul(a, b): a's last dim must equal b's second-to-last dim");
  // a: (..., M, K) -> (..., M, K, 1); b: (..., K, N) -> (..., 1, K, N); multiply, sum over K.
  constexpr shape_t a3 = [] {
    shape_t s = A::shape;
    s[s.rank++] = dim(1);
    return s;
  }();
  constexpr shape_t b3 = [] {
    shape_t s = B::shape;
    s.rank++;
    for (int i = s.rank - 1; i >= s.rank - 2; --i) s[i] = s[i - 1];
    s[s.rank - 3] = dim(1);
    return s;
  }();
  return sum(reshape_to<a3>(a) * reshape_to<b3>(b), axis<-2>);
}

// exp(x - max) / sum(exp(x - max)) along one axis: three kernels at most.
template <class E, int Axis = -1>
constexpr auto softmax(const tensor<E>& x, axes_t<Axis> = {}) {
  auto e = exp(x - max(x, axis<Axis>, keepdim));
  return e / sum(e, axis<Axis>, keepdim);
}

template <class E> constexpr std::int64_t reduced_count(axis_mask mask) {
  std::int64_t n = 1;
  for (int i = 0; i < E::rank; ++i)
    if (mask >> i & 1u) n *= E::shape[i].coef;
  return n;
}
template <class E> constexpr int reduced_symbolic_dims(axis_mask mask) {
  int n = 0;
  for (int i = 0; i < E::rank; ++i) n += (mask >> i & 1u) && E::shape[i].symbolic;
  return n;
}
// The element count of the reduced axes as one dim: constant, or coef * the one symbol.
template <class E> constexpr dim reduced_dim(axis_mask mask) {
  dim d(reduced_count<E>(mask));
  for (int i = 0; i < E::rank; ++i)
    if ((mask >> i & 1u) && E::shape[i].symbolic) d = dim(d.coef, E::shape[i].sym);
  return d;
}

template <class E, class Axes = axes_t<>, class Keep = drop_dims_t>
constexpr auto mean(const tensor<E>& x, Axes axes = {}, Keep keep = {}) {
  constexpr axis_mask mask = [](auto a) {
    return []<int... Ax>(axes_t<Ax...>) { return axes_mask<E::rank, Ax...>(); }(a);
  }(Axes{});
  static_assert(float_operand<E>, "tg::mean(x): x must be a float tensor; cast<float>(x) first");
  static_assert(reduced_symbolic_dims<E>(mask) <= 1,
                "tg::mean: at most one of the reduced dims may be symbolic (their count must be coef * one variable)");
  if constexpr (reduced_symbolic_dims<E>(mask) == 0) return sum(x, axes, keep) * (1.0 / double(reduced_count<E>(mask)));
  else return sum(x, axes, keep) / dim_value_as<E::dt, reduced_dim<E>(mask)>();
}

// x / sqrt(mean(x^2) + eps) over the last axis, times an optional weight. eps is a number
// compiled in, or a tensor (tg::scalar_input<float>("eps")) given when the plan runs.
// rms_scale is the per-row factor alone (keepdim), for code that shares it between readers.
template <class E, class Eps> requires(scalar<Eps> || tensor_expr<Eps>)
constexpr auto rms_scale(const tensor<E>& x, const Eps& eps) {
  return rsqrt(mean(x * x, axis<-1>, keepdim) + eps);
}
template <class E, class Eps> requires(scalar<Eps> || tensor_expr<Eps>)
constexpr auto rmsnorm(const tensor<E>& x, const Eps& eps) {
  return x * rms_scale(x, eps);
}
template <class E, class W, class Eps> requires(scalar<Eps> || tensor_expr<Eps>)
constexpr auto rmsnorm(const tensor<E>& x, const tensor<W>& weight, const Eps& eps) {
  return rmsnorm(x, eps) * weight;
}

}  // namespace tg
