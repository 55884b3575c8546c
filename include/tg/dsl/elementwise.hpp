// elementwise.hpp: unary, binary (with numpy broadcasting) and ternary ops, the casts
// between dtypes, and the arithmetic operators. Scalars next to a tensor take its dtype.
#pragma once
#include <numbers>
#include <type_traits>
#include <tg/dsl/movement.hpp>

namespace tg {

constexpr lowering::node_desc alu_desc(lowering::kind k, ast::op o, dtype dt, const shape_t& s) {
  lowering::node_desc d = leaf_desc(k, dt, s);
  d.alu = o;
  return d;
}

template <class T>
concept scalar = std::is_arithmetic_v<T>;

// --- casts ---
template <dtype DT, class E>
constexpr auto cast_to(const tensor<E>& x) {
  if constexpr (DT == E::dt) return x;
  else return make_node<alu_desc(lowering::kind::cast, ast::op::cast, DT, E::shape)>(x);
}
template <class T, class E>
constexpr auto cast(const tensor<E>& x) {
  static_assert(has_dtype<T>, "tg::cast<T>: T must be a tensor element type");
  return cast_to<dtype_of<T>>(x);
}

// --- unary ---
template <ast::op O, class E>
constexpr auto unary(const tensor<E>& x) {
  return make_node<alu_desc(lowering::kind::unary, O, E::dt, E::shape)>(x);
}
// One check for every op that only makes sense on floats.
template <class E>
inline constexpr bool float_operand = is_float(E::dt);

template <class E> constexpr auto neg(const tensor<E>& x) { return unary<ast::op::neg>(x); }
template <class E> constexpr auto exp2(const tensor<E>& x) {
  static_assert(float_operand<E>, "tg::exp2(x): x must be a float tensor; cast<float>(x) first");
  return unary<ast::op::exp2>(x);
}
template <class E> constexpr auto log2(const tensor<E>& x) {
  static_assert(float_operand<E>, "tg::log2(x): x must be a float tensor; cast<float>(x) first");
  return unary<ast::op::log2>(x);
}
template <class E> constexpr auto sqrt(const tensor<E>& x) {
  static_assert(float_operand<E>, "tg::sqrt(x): x must be a float tensor; cast<float>(x) first");
  return unary<ast::op::sqrt>(x);
}
template <class E> constexpr auto reciprocal(const tensor<E>& x) {
  static_assert(float_operand<E>, "tg::reciprocal(x): x must be a float tensor; cast<float>(x) first");
  return unary<ast::op::reciprocal>(x);
}
template <class E> constexpr auto sin(const tensor<E>& x) {
  static_assert(float_operand<E>, "tg::sin(x): x must be a float tensor; cast<float>(x) first");
  return unary<ast::op::sin>(x);
}

// --- binary with broadcasting ---
template <ast::op O, class A, class B>
constexpr auto binary(const tensor<A>& a, const tensor<B>& b) {
  static_assert(can_broadcast(A::shape, B::shape),
                "tg: elementwise op on tensors whose shapes do not broadcast "
                "(aligned from the right, each pair of dims must be equal or one of them 1)");
  constexpr shape_t out = broadcast_shape(A::shape, B::shape);
  constexpr dtype dt = promote(A::dt, B::dt);
  constexpr dtype result = is_compare(O) ? dtype::bool_ : dt;
  return make_node<alu_desc(lowering::kind::binary, O, result, out)>(broadcast_to<out>(cast_to<dt>(a)),
                                                                   broadcast_to<out>(cast_to<dt>(b)));
}
template <ast::op O, class A, scalar S>
constexpr auto binary(const tensor<A>& a, S s) { return binary<O>(a, constant<A::dt, A::shape>(double(s))); }
template <ast::op O, scalar S, class B>
constexpr auto binary(S s, const tensor<B>& b) { return binary<O>(constant<B::dt, B::shape>(double(s)), b); }

template <class A, class B> constexpr auto add(const A& a, const B& b) { return binary<ast::op::add>(a, b); }
template <class A, class B> constexpr auto sub(const A& a, const B& b) { return binary<ast::op::sub>(a, b); }
template <class A, class B> constexpr auto mul(const A& a, const B& b) { return binary<ast::op::mul>(a, b); }
template <class A, class B> constexpr auto div(const A& a, const B& b) { return binary<ast::op::div>(a, b); }
template <class A, class B> constexpr auto maximum(const A& a, const B& b) { return binary<ast::op::max>(a, b); }
template <class A, class B> constexpr auto cmplt(const A& a, const B& b) { return binary<ast::op::cmplt>(a, b); }
template <class A, class B> constexpr auto cmpeq(const A& a, const B& b) { return binary<ast::op::cmpeq>(a, b); }

template <class A, class B>
concept tensor_operands = (tensor_expr<A> && (tensor_expr<B> || scalar<B>)) || (scalar<A> && tensor_expr<B>);

template <class A, class B> requires tensor_operands<A, B>
constexpr auto operator+(const A& a, const B& b) { return add(a, b); }
template <class A, class B> requires tensor_operands<A, B>
constexpr auto operator-(const A& a, const B& b) { return sub(a, b); }
template <class A, class B> requires tensor_operands<A, B>
constexpr auto operator*(const A& a, const B& b) { return mul(a, b); }
template <class A, class B> requires tensor_operands<A, B>
constexpr auto operator/(const A& a, const B& b) { return div(a, b); }
template <class A, class B> requires tensor_operands<A, B>
constexpr auto operator<(const A& a, const B& b) { return cmplt(a, b); }
template <class A, class B> requires tensor_operands<A, B>
constexpr auto operator>(const A& a, const B& b) { return cmplt(b, a); }
template <class E>
constexpr auto operator-(const tensor<E>& x) { return neg(x); }

// --- where(cond, a, b): all three broadcast together ---
template <class C, class A, class B>
constexpr auto where(const tensor<C>& c, const tensor<A>& a, const tensor<B>& b) {
  static_assert(can_broadcast(C::shape, A::shape) && can_broadcast(C::shape, B::shape) &&
                    can_broadcast(A::shape, B::shape),
                "tg::where(cond, a, b): the three shapes do not broadcast together");
  constexpr shape_t out = broadcast_shape(broadcast_shape(C::shape, A::shape), B::shape);
  constexpr dtype dt = promote(A::dt, B::dt);
  return make_node<alu_desc(lowering::kind::where, ast::op::where, dt, out)>(
      broadcast_to<out>(cast_to<dtype::bool_>(c)), broadcast_to<out>(cast_to<dt>(a)), broadcast_to<out>(cast_to<dt>(b)));
}
template <class C, class A, scalar S>
constexpr auto where(const tensor<C>& c, const tensor<A>& a, S s) { return where(c, a, constant<A::dt, A::shape>(double(s))); }
template <class C, scalar S, class B>
constexpr auto where(const tensor<C>& c, S s, const tensor<B>& b) { return where(c, constant<B::dt, B::shape>(double(s)), b); }

// --- composites of the above ---
// Each composite checks its operand itself, so an error names the function the user called.
template <class E> constexpr auto relu(const tensor<E>& x) { return maximum(x, 0); }
template <class E> constexpr auto exp(const tensor<E>& x) {
  static_assert(float_operand<E>, "tg::exp(x): x must be a float tensor; cast<float>(x) first");
  return exp2(x * std::numbers::log2e);
}
template <class E> constexpr auto log(const tensor<E>& x) {
  static_assert(float_operand<E>, "tg::log(x): x must be a float tensor; cast<float>(x) first");
  return log2(x) * std::numbers::ln2;
}
template <class E> constexpr auto cos(const tensor<E>& x) {
  static_assert(float_operand<E>, "tg::cos(x): x must be a float tensor; cast<float>(x) first");
  return sin(x + std::numbers::pi / 2);
}
template <class E> constexpr auto rsqrt(const tensor<E>& x) {
  static_assert(float_operand<E>, "tg::rsqrt(x): x must be a float tensor; cast<float>(x) first");
  return reciprocal(sqrt(x));
}
template <class E> constexpr auto sigmoid(const tensor<E>& x) {
  static_assert(float_operand<E>, "tg::sigmoid(x): x must be a float tensor; cast<float>(x) first");
  return reciprocal(exp(-x) + 1);
}
template <class E> constexpr auto silu(const tensor<E>& x) {
  static_assert(float_operand<E>, "tg::silu(x): x must be a float tensor; cast<float>(x) first");
  return x * sigmoid(x);
}
template <class A, class B> constexpr auto minimum(const A& a, const B& b) { return -maximum(-a, -b); }

}  // namespace tg
